//! `onnx-light info`: what a model contains, without reading its weights.
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
//! | `weight_bytes` | integer | payload bytes of those initializers, external ones included |
//! | `weight_bytes_by_type` | object data type -> bytes | the same, per element type |
//! | `inputs`, `outputs` | list of `{name, elem_type, shape}` | graph inputs and outputs; `shape` entries are integers, strings (symbolic) or null (unknown); `shape` is null when unknown |
//! | `external_files` | list of strings | relative paths of external data files |
//! | `functions` | list of `{domain, name}` | model-local functions |
//! | `metadata` | object | `metadata_props` |

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self as stdio, BufWriter, Write};
use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::{DataType, DimensionValue, Model, TensorProto, TypeValue, ValueInfoProto};
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
    json!({ "name": v.name(), "elem_type": elem, "shape": shape })
}

/// What `info` reports besides the model's own lists: counts and histograms, each
/// bounded by the model's size (one entry per distinct op type, data type, file or
/// metadata key).
struct Facts<'m> {
    op_types: BTreeMap<String, u64>,
    weight_bytes: u64,
    weight_bytes_by_type: BTreeMap<String, u64>,
    external_files: BTreeSet<String>,
    metadata: BTreeMap<&'m str, &'m str>,
}

fn facts(model: &Model) -> Facts<'_> {
    let mut f = Facts {
        op_types: BTreeMap::new(),
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
        for t in &g.initializer {
            let len = payload_len(t);
            f.weight_bytes += len;
            *f.weight_bytes_by_type
                .entry(type_name(t.data_type()))
                .or_default() += len;
        }
    }
    model.visit_tensors(|_, t| {
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
fn write_json(model: &Model, f: &Facts<'_>, out: &mut dyn Write) -> stdio::Result<()> {
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
    o.value("weight_bytes", &json!(f.weight_bytes))?;
    o.map(
        "weight_bytes_by_type",
        f.weight_bytes_by_type
            .iter()
            .map(|(k, &n)| (k.as_str(), json!(n))),
    )?;
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

/// Writes the human-readable report.
fn write_text(path: &Path, model: &Model, f: &Facts<'_>, out: &mut dyn Write) -> stdio::Result<()> {
    let graph = model.graph.as_ref();
    writeln!(out, "model         {}", path.display())?;
    writeln!(out, "ir_version    {}", model.ir_version())?;
    writeln!(
        out,
        "producer      {} {}",
        model.producer_name(),
        model.producer_version()
    )?;
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
        for (label, list) in [("inputs", &g.input), ("outputs", &g.output)] {
            for v in list {
                let v = value_info(v);
                writeln!(
                    out,
                    "{label:<13} {} {} {}",
                    v["name"].as_str().unwrap_or(""),
                    v["elem_type"].as_str().unwrap_or("?"),
                    v["shape"]
                )?;
            }
        }
    }
    writeln!(out, "nodes         {}", graph.map_or(0, |g| g.node.len()))?;
    writeln!(
        out,
        "initializers  {} ({})",
        graph.map_or(0, |g| g.initializer.len()),
        table::bytes(f.weight_bytes)
    )?;
    let mut t = Table::new(&["data type", "bytes"]);
    for (ty, &bytes) in &f.weight_bytes_by_type {
        t.row(vec![ty.clone(), table::bytes(bytes)]);
    }
    writeln!(out)?;
    write!(out, "{}", t.render())?;
    let mut ops = Table::new(&["op type", "count"]);
    let mut hist: Vec<_> = f.op_types.iter().collect();
    hist.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (op, n) in hist {
        ops.row(vec![op.clone(), n.to_string()]);
    }
    writeln!(out)?;
    write!(out, "{}", ops.render())?;
    if !f.external_files.is_empty() {
        writeln!(out)?;
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
    Ok(())
}

/// Loads the structure (weights stay on disk) and prints the report, streaming it:
/// nothing is held in memory per opset, function or input beyond the model itself.
pub fn run(
    path: &Path,
    as_json: bool,
    load: &ParseOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    // Structure only, external references not followed: `info` describes even a model
    // whose data files are missing or refused (`check` reports those).
    let model = io::load_with(
        path,
        &load.clone().structure_only(true).load_external_data(false),
    )?;
    let f = facts(&model);
    let stdout = stdio::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if as_json {
        write_json(&model, &f, &mut out)?;
    } else {
        write_text(path, &model, &f, &mut out)?;
    }
    out.flush()?;
    Ok(())
}
