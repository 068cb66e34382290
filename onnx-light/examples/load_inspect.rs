//! Load a model and print what it holds: operators, inputs with their types, weights.
//!
//!     cargo run --example load_inspect -- model.onnx
//!
//! Without an argument it writes and inspects a small sample model.

use std::collections::BTreeMap;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = match std::env::args_os().nth(1) {
        Some(p) => p.into(),
        None => sample()?,
    };
    // Structure only: the weights stay on disk (nothing to copy, nothing mapped); each
    // large tensor knows where its bytes are.
    let model = io::load_with(&path, &ParseOptions::default().structure_only(true))?;
    let graph = model.graph.as_ref().ok_or("the model has no graph")?;

    let mut ops: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &graph.node {
        *ops.entry(n.op_type()).or_default() += 1;
    }
    println!("{} nodes: {ops:?}", graph.node.len());
    for input in &graph.input {
        match &input.r#type {
            Some(t) => println!("input {}: {t}", input.name()),
            None => println!("input {}: (no type)", input.name()),
        }
    }
    let mut bytes = 0;
    for w in &graph.initializer {
        bytes += w.inline_data_len() + w.lazy_data.as_ref().map_or(0, |l| l.len());
        let dtype = w
            .elem_type()
            .map_or("unknown".to_string(), |d| d.to_string());
        println!("weight {}: {dtype}{:?}", w.name(), w.dims);
    }
    println!("{bytes} bytes of weights");
    Ok(())
}

/// Writes a small model to a temporary directory and returns its path.
fn sample() -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("onnx-light-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut g = GraphProto::named("sample");
    g.input.push(ValueInfoProto::tensor(
        "x",
        DataType::Float,
        [Dimension::from("batch"), 4.into()],
    ));
    g.node.push(NodeProto::new("MatMul", ["x", "w"], ["h"]));
    g.node.push(NodeProto::new("Relu", ["h"], ["y"]));
    let w: Vec<f32> = (0..16).map(|i| i as f32).collect();
    g.initializer
        .push(TensorProto::from_slice("w", [4, 4], &w)?);
    let path = dir.join("sample.onnx");
    let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    io::save(&model, &path, &io::SerializeOptions::default())?;
    Ok(path)
}
