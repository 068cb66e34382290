//! Edit a model and save it: rename a node, scale a weight in place, add an output.
//!
//!     cargo run --example edit_and_save -- in.onnx out.onnx
//!
//! Without arguments it edits a small sample model in a temporary directory.

use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let (input, output) = match args.as_slice() {
        [i, o] => (i.clone(), o.clone()),
        [] => {
            let dir = std::env::temp_dir().join(format!("onnx-light-edit-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let input = dir.join("in.onnx");
            io::save(&sample()?, &input, &SerializeOptions::default())?;
            (input, dir.join("out.onnx"))
        }
        _ => return Err("usage: edit_and_save IN OUT".into()),
    };

    let mut model: Model = io::load(&input)?;
    let graph = model.graph.as_mut().ok_or("the model has no graph")?;
    for node in graph.node.iter_mut().filter(|n| n.op_type() == "Relu") {
        node.name = Some(format!("{}_renamed", node.name()).into());
    }
    for w in graph.initializer.iter_mut() {
        if w.elem_type() == Some(DataType::Float) {
            // In place when the model owns the bytes; copies once otherwise.
            w.values_mut::<f32>()?.iter_mut().for_each(|v| *v *= 0.5);
        }
    }
    graph.output.push(ValueInfoProto::tensor(
        "h",
        DataType::Float,
        [Dimension::from("batch"), 4.into()],
    ));
    // Atomic: a crash leaves the old file or the new one, never a mix.
    io::save(&model, &output, &SerializeOptions::default())?;
    println!("wrote {}", output.display());
    Ok(())
}

fn sample() -> Result<Model, Box<dyn std::error::Error>> {
    let mut g = GraphProto::named("sample");
    g.node
        .push(NodeProto::new("MatMul", ["x", "w"], ["h"]).with_name("mm"));
    g.node
        .push(NodeProto::new("Relu", ["h"], ["y"]).with_name("act"));
    g.initializer.push(TensorProto::from_slice(
        "w",
        [2, 2],
        &[1.0f32, 2.0, 3.0, 4.0],
    )?);
    Ok(ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]))
}
