//! What the rule families' unit tests share: dimensions written in short notation, and
//! strict inference of a model reported as `name: type` lines.

use crate::onnx::{
    DataType, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    ValueInfoProto,
};
use crate::shape::{infer_shapes, InferOptions};

/// A dimension from its notation: a number, `?` for unknown, else a name.
pub(super) fn dims(spec: &[&str]) -> Vec<Dimension<'static>> {
    spec.iter()
        .map(|d| match d.parse::<i64>() {
            Ok(v) => Dimension::value(v),
            Err(_) if *d == "?" => Dimension::unknown(),
            Err(_) => Dimension::param(d.to_string()),
        })
        .collect()
}

/// Infers `m` in strict mode; its `value_info` entries as `name: type`.
pub(super) fn strict_value_types(mut m: ModelProto<'_>) -> crate::Result<Vec<String>> {
    infer_shapes(&mut m, &InferOptions::default().strict_mode(true))?;
    Ok(m.graph
        .as_ref()
        .map(|g| {
            g.value_info
                .iter()
                .map(|vi| format!("{}: {}", vi.name(), vi.r#type.as_ref().unwrap()))
                .collect()
        })
        .unwrap_or_default())
}

/// A model of `nodes` over `inputs` and `initializers`, importing `ai.onnx` at `opset`.
pub(super) fn model(
    opset: i64,
    nodes: Vec<NodeProto<'static>>,
    inputs: Vec<ValueInfoProto<'static>>,
    initializers: Vec<TensorProto<'static>>,
) -> ModelProto<'static> {
    let mut g = GraphProto::named("g");
    g.input = inputs;
    g.node = nodes;
    g.initializer = initializers;
    ModelProto::new(g, vec![OperatorSetIdProto::new("", opset)])
}

/// The inferred types (strict mode) of the values `nodes` compute, or the error.
pub(super) fn strict_types(
    opset: i64,
    nodes: Vec<NodeProto<'static>>,
    inputs: Vec<ValueInfoProto<'static>>,
    initializers: Vec<TensorProto<'static>>,
) -> Result<Vec<String>, String> {
    strict_value_types(model(opset, nodes, inputs, initializers)).map_err(|e| e.to_string())
}

/// Float graph inputs of the given names and shapes (in [`dims`] notation).
pub(super) fn float_inputs(inputs: &[(&str, &[&str])]) -> Vec<ValueInfoProto<'static>> {
    inputs
        .iter()
        .map(|(name, shape)| ValueInfoProto::tensor(name.to_string(), DataType::Float, dims(shape)))
        .collect()
}

/// A node of `ai.onnx` operator `op`.
pub(super) fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto<'static> {
    NodeProto::new(
        op.to_string(),
        inputs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        outputs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    )
}
