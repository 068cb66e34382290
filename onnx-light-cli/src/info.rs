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

use std::collections::BTreeMap;
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
        Some(TypeValue::TensorType(t)) => Some((t.elem_type(), t.shape.as_ref())),
        Some(TypeValue::SparseTensorType(t)) => Some((t.elem_type(), t.shape.as_ref())),
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

/// The facts `info` reports, as JSON.
pub fn describe(model: &Model) -> Value {
    let graph = model.graph.as_ref();
    let mut ops: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut weight_bytes = 0u64;
    if let Some(g) = graph {
        for n in &g.node {
            let op = if n.domain().is_empty() {
                n.op_type().to_string()
            } else {
                format!("{}::{}", n.domain(), n.op_type())
            };
            *ops.entry(op).or_default() += 1;
        }
        for t in &g.initializer {
            let len = payload_len(t);
            weight_bytes += len;
            *by_type.entry(type_name(t.data_type())).or_default() += len;
        }
    }
    let mut files: Vec<String> = Vec::new();
    model.visit_tensors(|_, t| {
        if let Some(loc) = t.external_data_value("location") {
            if !files.iter().any(|f| f == loc) {
                files.push(loc.to_string());
            }
        }
    });
    files.sort();
    json!({
        "ir_version": model.ir_version(),
        "producer_name": model.producer_name(),
        "producer_version": model.producer_version(),
        "opset_import": model.opset_import.iter().map(|o| json!({"domain": o.domain(), "version": o.version()})).collect::<Vec<_>>(),
        "nodes": graph.map_or(0, |g| g.node.len()),
        "op_types": ops,
        "initializers": graph.map_or(0, |g| g.initializer.len()),
        "weight_bytes": weight_bytes,
        "weight_bytes_by_type": by_type,
        "inputs": graph.map(|g| g.input.iter().map(value_info).collect::<Vec<_>>()).unwrap_or_default(),
        "outputs": graph.map(|g| g.output.iter().map(value_info).collect::<Vec<_>>()).unwrap_or_default(),
        "external_files": files,
        "functions": model.functions.iter().map(|f| json!({"domain": f.domain(), "name": f.name()})).collect::<Vec<_>>(),
        "metadata": model.metadata_props.iter().map(|p| (p.key().to_string(), Value::String(p.value().to_string()))).collect::<serde_json::Map<_, _>>(),
    })
}

/// Loads the structure (weights stay on disk) and prints the report.
pub fn run(path: &Path, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    // Structure only, external references not followed: `info` describes even a model
    // whose data files are missing or refused (`check` reports those).
    let model = io::load_with(
        path,
        &ParseOptions::default()
            .structure_only(true)
            .load_external_data(false),
    )?;
    let facts = describe(&model);
    if as_json {
        println!("{}", serde_json::to_string_pretty(&facts)?);
        return Ok(());
    }
    let s = |k: &str| facts[k].as_str().unwrap_or("").to_string();
    println!("model         {}", path.display());
    println!("ir_version    {}", facts["ir_version"]);
    println!(
        "producer      {} {}",
        s("producer_name"),
        s("producer_version")
    );
    let opsets: Vec<String> = model
        .opset_import
        .iter()
        .map(|o| {
            format!(
                "{}:{}",
                if o.domain().is_empty() {
                    "ai.onnx"
                } else {
                    o.domain()
                },
                o.version()
            )
        })
        .collect();
    println!("opsets        {}", opsets.join(", "));
    for (label, key) in [("inputs", "inputs"), ("outputs", "outputs")] {
        for v in facts[key].as_array().into_iter().flatten() {
            println!(
                "{label:<13} {} {} {}",
                v["name"].as_str().unwrap_or(""),
                v["elem_type"].as_str().unwrap_or("?"),
                v["shape"]
            );
        }
    }
    println!("nodes         {}", facts["nodes"]);
    println!(
        "initializers  {} ({})",
        facts["initializers"],
        table::bytes(facts["weight_bytes"].as_u64().unwrap_or(0))
    );
    let mut t = Table::new(&["data type", "bytes"]);
    for (ty, bytes) in facts["weight_bytes_by_type"]
        .as_object()
        .into_iter()
        .flatten()
    {
        t.row(vec![ty.clone(), table::bytes(bytes.as_u64().unwrap_or(0))]);
    }
    println!();
    print!("{}", t.render());
    let mut ops = Table::new(&["op type", "count"]);
    let mut hist: Vec<_> = facts["op_types"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    hist.sort_by(|a, b| b.1.as_u64().cmp(&a.1.as_u64()).then(a.0.cmp(b.0)));
    for (op, n) in hist {
        ops.row(vec![op.clone(), n.to_string()]);
    }
    println!();
    print!("{}", ops.render());
    let files = facts["external_files"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !files.is_empty() {
        println!();
        println!(
            "external data {}",
            files
                .iter()
                .filter_map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !model.functions.is_empty() {
        println!(
            "functions     {}",
            model
                .functions
                .iter()
                .map(|f| format!("{}:{}", f.domain(), f.name()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for p in &model.metadata_props {
        println!("metadata      {} = {}", p.key(), p.value());
    }
    Ok(())
}
