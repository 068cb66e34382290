//! `onnx-light info`: what a model contains, without reading its weights. Weights are
//! every tensor of the model: initializers, sparse initializers and the tensors held in
//! attributes (`Constant` values and the like), in subgraphs, training graphs and
//! functions too.
//!
//! `--json` prints one object with these keys (stable; more may be added):
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `ir_version` | integer | `ModelProto.ir_version` |
//! | `producer_name`, `producer_version` | string | who wrote the model |
//! | `opset_import` | list of `{domain, version}` | operator sets |
//! | `nodes` | integer | nodes of the top-level graph |
//! | `op_types` | object op type -> count | histogram of the top-level graph |
//! | `initializers` | integer | initializers of the top-level graph |
//! | `tensors` | integer | every tensor of the model (initializers, sparse initializers' values and indices, attribute tensors, at any depth) |
//! | `attribute_tensors` | integer | those held in attributes (`Constant` values and the like) |
//! | `weight_bytes` | integer | payload bytes of every tensor, external ones included |
//! | `weight_bytes_by_type` | object data type -> bytes | the same, per element type |
//! | `file_bytes` | integer | size of the model file on disk |
//! | `inputs`, `outputs` | list of `{name, type, elem_type, shape}` | graph inputs and outputs; `type` in ONNX notation (`float[batch,3]`, `seq(map(int64, float))`); `elem_type` and `shape` for tensors (null otherwise): `shape` entries are integers, strings (symbolic) or null (unknown); `shape` is null when unknown |
//! | `external_files` | list of strings | relative paths of external data files |
//! | `functions` | list of `{domain, name}` | model-local functions |
//! | `metadata` | object | `metadata_props` |

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self as stdio, BufWriter, Write};
use std::path::Path;

use onnx_light::io::ParseOptions;
use onnx_light::onnx::{
    DataType, DimensionValue, Model, TensorProto, TensorSite, TypeValue, ValueInfoProto,
};
use onnx_light::ProtoEnum;
use serde_json::{json, Value};

use crate::table::{self, Table};

fn payload_len(t: &TensorProto<'_>) -> u64 {
    if let Some(lazy) = &t.lazy_data {
        return lazy.len();
    }
    if t.is_external() {
        if let Some(len) = t.external_data_value("length").and_then(|v| v.parse().ok()) {
            return len;
        }
        return t.expected_raw_len().unwrap_or(0);
    }
    t.inline_data_len()
}

fn type_name(elem_type: i32) -> String {
    DataType::from_i32(elem_type)
        .map_or_else(|| elem_type.to_string(), |d| d.proto_name().to_string())
}

fn value_info(v: &ValueInfoProto<'_>) -> Value {
    let tensor = v.r#type.as_ref().and_then(|t| match &t.value {
        Some(TypeValue::TensorType(t)) => Some((t.elem_type_raw(), t.shape.as_ref())),
        Some(TypeValue::SparseTensorType(t)) => Some((t.elem_type_raw(), t.shape.as_ref())),
        _ => None,
    });
    let (elem, shape) = match tensor {
        Some((e, s)) => (Value::String(type_name(e)), s),
        None => (Value::Null, None),
    };
    let shape = shape.map_or(Value::Null, |s| {
        Value::Array(
            s.dim
                .iter()
                .map(|d| match &d.value {
                    Some(DimensionValue::DimValue(n)) => json!(n),
                    Some(DimensionValue::DimParam(p)) => json!(p.as_str()),
                    None => Value::Null,
                })
                .collect(),
        )
    });
    let ty = v.r#type.as_ref().map_or(String::new(), |t| t.to_string());
    json!({ "name": v.name(), "type": ty, "elem_type": elem, "shape": shape })
}

/// `1234567` -> `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1,234,567 B (1.2 MiB)`; small sizes without the second form.
fn size(n: u64) -> String {
    if n < 1024 {
        format!("{} B", thousands(n))
    } else {
        format!("{} B ({})", thousands(n), table::bytes(n))
    }
}

/// What `info` reports besides the model's own lists: counts and histograms, each
/// bounded by the model's size (one entry per distinct op type, data type, file or
/// metadata key).
struct Facts<'m> {
    op_types: BTreeMap<String, u64>,
    tensors: u64,
    attribute_tensors: u64,
    weight_bytes: u64,
    /// Data type -> (tensors, bytes).
    weight_bytes_by_type: BTreeMap<String, (u64, u64)>,
    external_files: BTreeSet<String>,
    metadata: BTreeMap<&'m str, &'m str>,
}

fn facts(model: &Model) -> Facts<'_> {
    let mut f = Facts {
        op_types: BTreeMap::new(),
        tensors: 0,
        attribute_tensors: 0,
        weight_bytes: 0,
        weight_bytes_by_type: BTreeMap::new(),
        external_files: BTreeSet::new(),
        // A later entry with the same key wins, as it did in the JSON object.
        metadata: model
            .metadata_props
            .iter()
            .map(|p| (p.key(), p.value()))
            .collect(),
    };
    if let Some(g) = &model.graph {
        for n in &g.node {
            let op = if n.domain().is_empty() {
                n.op_type().to_string()
            } else {
                format!("{}::{}", n.domain(), n.op_type())
            };
            *f.op_types.entry(op).or_default() += 1;
        }
    }
    model.visit_tensors(|site, t| {
        let len = payload_len(t);
        f.tensors += 1;
        if matches!(site, TensorSite::Attribute | TensorSite::SparseAttribute) {
            f.attribute_tensors += 1;
        }
        f.weight_bytes += len;
        let entry = f
            .weight_bytes_by_type
            .entry(type_name(t.data_type()))
            .or_default();
        entry.0 += 1;
        entry.1 += len;
        if let Some(loc) = t.external_data_value("location") {
            if !f.external_files.contains(loc) {
                f.external_files.insert(loc.to_string());
            }
        }
    });
    f
}

/// Writes one JSON object a member at a time, and a list a value at a time: the
/// output of a model listing millions of opsets or functions is never held in memory.
struct JsonObject<'w> {
    out: &'w mut dyn Write,
    members: usize,
}

impl<'w> JsonObject<'w> {
    fn begin(out: &'w mut dyn Write) -> stdio::Result<Self> {
        out.write_all(b"{")?;
        Ok(JsonObject { out, members: 0 })
    }

    fn key(&mut self, key: &str) -> stdio::Result<()> {
        self.out
            .write_all(if self.members == 0 { b"\n  " } else { b",\n  " })?;
        self.members += 1;
        serde_json::to_writer(&mut *self.out, key)?;
        self.out.write_all(b": ")
    }

    fn value(&mut self, key: &str, value: &Value) -> stdio::Result<()> {
        self.key(key)?;
        serde_json::to_writer(&mut *self.out, value).map_err(Into::into)
    }

    fn list(&mut self, key: &str, values: impl Iterator<Item = Value>) -> stdio::Result<()> {
        self.key(key)?;
        self.out.write_all(b"[")?;
        let mut any = false;
        for v in values {
            self.out
                .write_all(if any { b",\n    " } else { b"\n    " })?;
            serde_json::to_writer(&mut *self.out, &v)?;
            any = true;
        }
        self.out.write_all(if any { b"\n  ]" } else { b"]" })
    }

    fn map<'k>(
        &mut self,
        key: &str,
        entries: impl Iterator<Item = (&'k str, Value)>,
    ) -> stdio::Result<()> {
        self.key(key)?;
        self.out.write_all(b"{")?;
        let mut any = false;
        for (k, v) in entries {
            self.out
                .write_all(if any { b",\n    " } else { b"\n    " })?;
            serde_json::to_writer(&mut *self.out, k)?;
            self.out.write_all(b": ")?;
            serde_json::to_writer(&mut *self.out, &v)?;
            any = true;
        }
        self.out.write_all(if any { b"\n  }" } else { b"}" })
    }

    fn end(self) -> stdio::Result<()> {
        self.out.write_all(b"\n}\n")
    }
}

/// Writes the facts `info --json` reports (schema above).
fn write_json(
    model: &Model,
    file_bytes: u64,
    f: &Facts<'_>,
    out: &mut dyn Write,
) -> stdio::Result<()> {
    let graph = model.graph.as_ref();
    let mut o = JsonObject::begin(out)?;
    o.value("ir_version", &json!(model.ir_version()))?;
    o.value("producer_name", &json!(model.producer_name()))?;
    o.value("producer_version", &json!(model.producer_version()))?;
    o.list(
        "opset_import",
        model
            .opset_import
            .iter()
            .map(|op| json!({"domain": op.domain(), "version": op.version()})),
    )?;
    o.value("nodes", &json!(graph.map_or(0, |g| g.node.len())))?;
    o.map(
        "op_types",
        f.op_types.iter().map(|(k, &n)| (k.as_str(), json!(n))),
    )?;
    o.value(
        "initializers",
        &json!(graph.map_or(0, |g| g.initializer.len())),
    )?;
    o.value("tensors", &json!(f.tensors))?;
    o.value("attribute_tensors", &json!(f.attribute_tensors))?;
    o.value("weight_bytes", &json!(f.weight_bytes))?;
    o.map(
        "weight_bytes_by_type",
        f.weight_bytes_by_type
            .iter()
            .map(|(k, &(_, n))| (k.as_str(), json!(n))),
    )?;
    o.value("file_bytes", &json!(file_bytes))?;
    let no_values: &[ValueInfoProto<'static>] = &[];
    let inputs = graph.map_or(no_values, |g| &g.input);
    let outputs = graph.map_or(no_values, |g| &g.output);
    o.list("inputs", inputs.iter().map(value_info))?;
    o.list("outputs", outputs.iter().map(value_info))?;
    o.list("external_files", f.external_files.iter().map(|s| json!(s)))?;
    o.list(
        "functions",
        model
            .functions
            .iter()
            .map(|func| json!({"domain": func.domain(), "name": func.name()})),
    )?;
    o.map("metadata", f.metadata.iter().map(|(&k, &v)| (k, json!(v))))?;
    o.end()
}

/// Writes `items` separated by `", "`, one at a time.
fn write_joined<T: std::fmt::Display>(
    out: &mut dyn Write,
    items: impl Iterator<Item = T>,
) -> stdio::Result<()> {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        write!(out, "{item}")?;
    }
    Ok(())
}

/// The ONNX name of an element type for the text report (`float`, `int64`, ...); the
/// number for one this schema does not know.
fn text_type_name(proto_name: &str) -> String {
    proto_name.to_ascii_lowercase()
}

/// Writes the human-readable report: one fact per line, then the tables that have rows.
fn write_text(
    path: &Path,
    file_bytes: u64,
    model: &Model,
    f: &Facts<'_>,
    out: &mut dyn Write,
) -> stdio::Result<()> {
    let graph = model.graph.as_ref();
    writeln!(out, "model         {}", path.display())?;
    writeln!(out, "file size     {}", size(file_bytes))?;
    writeln!(out, "ir_version    {}", model.ir_version())?;
    if !model.producer_name().is_empty() || !model.producer_version().is_empty() {
        writeln!(
            out,
            "producer      {}",
            format!("{} {}", model.producer_name(), model.producer_version()).trim()
        )?;
    }
    write!(out, "opsets        ")?;
    write_joined(
        out,
        model.opset_import.iter().map(|o| {
            let domain = if o.domain().is_empty() {
                "ai.onnx"
            } else {
                o.domain()
            };
            format!("{domain}:{}", o.version())
        }),
    )?;
    writeln!(out)?;
    if let Some(g) = graph {
        // Names padded to the longest, so that the types line up.
        let width = g
            .input
            .iter()
            .chain(&g.output)
            .map(|v| v.name().chars().count())
            .max()
            .unwrap_or(0);
        for (label, list) in [("input", &g.input), ("output", &g.output)] {
            for v in list {
                let ty = v.r#type.as_ref().map_or(String::new(), |t| t.to_string());
                let ty = if ty.is_empty() {
                    "(no type)".into()
                } else {
                    ty
                };
                writeln!(out, "{label:<13} {:<width$}  {ty}", v.name())?;
            }
        }
    }
    writeln!(
        out,
        "nodes         {}",
        thousands(graph.map_or(0, |g| g.node.len()) as u64)
    )?;
    let initializers = graph.map_or(0, |g| g.initializer.len()) as u64;
    write!(out, "weights       {}", size(f.weight_bytes))?;
    if f.tensors > 0 {
        write!(
            out,
            " in {} tensor{}: {} initializer{}, {} in attributes",
            thousands(f.tensors),
            if f.tensors == 1 { "" } else { "s" },
            thousands(initializers),
            if initializers == 1 { "" } else { "s" },
            thousands(f.attribute_tensors)
        )?;
        let other = f.tensors - f.attribute_tensors;
        if other > initializers {
            write!(out, ", {} elsewhere", thousands(other - initializers))?;
        }
    }
    writeln!(out)?;
    if !f.external_files.is_empty() {
        write!(out, "external data ")?;
        write_joined(out, f.external_files.iter())?;
        writeln!(out)?;
    }
    if !model.functions.is_empty() {
        write!(out, "functions     ")?;
        write_joined(
            out,
            model
                .functions
                .iter()
                .map(|func| format!("{}:{}", func.domain(), func.name())),
        )?;
        writeln!(out)?;
    }
    for p in &model.metadata_props {
        writeln!(out, "metadata      {} = {}", p.key(), p.value())?;
    }
    if !f.weight_bytes_by_type.is_empty() {
        let mut t = Table::new(&["data type", "tensors", "bytes"]);
        let mut rows: Vec<_> = f.weight_bytes_by_type.iter().collect();
        rows.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
        for (ty, &(count, bytes)) in rows {
            t.row(vec![text_type_name(ty), thousands(count), size(bytes)]);
        }
        writeln!(out)?;
        write!(out, "{}", t.render())?;
    }
    if !f.op_types.is_empty() {
        let mut ops = Table::new(&["op type", "count"]);
        let mut hist: Vec<_> = f.op_types.iter().collect();
        hist.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (op, &n) in hist {
            ops.row(vec![op.clone(), thousands(n)]);
        }
        writeln!(out)?;
        write!(out, "{}", ops.render())?;
    }
    Ok(())
}

/// Loads the structure (weights stay on disk) and prints the report on stdout.
pub fn run(
    path: &Path,
    as_json: bool,
    load: &ParseOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = stdio::stdout();
    let mut out = BufWriter::new(stdout.lock());
    write(path, as_json, load, &mut out)?;
    out.flush()?;
    Ok(())
}

/// Loads the structure (weights stay on disk) and writes the report to `out`, streaming
/// it: nothing is held in memory per opset, function or input beyond the model itself.
pub fn write(
    path: &Path,
    as_json: bool,
    load: &ParseOptions,
    out: &mut dyn Write,
) -> Result<(), Box<dyn std::error::Error>> {
    // Structure only, external references not followed: `info` describes even a model
    // whose data files are missing or refused (`check` reports those).
    let model = crate::source::load_with(
        path,
        &load.clone().structure_only(true).load_external_data(false),
    )?;
    let file_bytes = crate::source::size(path);
    let f = facts(&model);
    if as_json {
        write_json(&model, file_bytes, &f, out)?;
    } else {
        write_text(path, file_bytes, &model, &f, out)?;
    }
    Ok(())
}
