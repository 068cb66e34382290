//! One more dimension for every output of a graph (`onnx.compose.expand_out_dim_graph`,
//! `expand_out_dim`).

use std::collections::HashSet;

use crate::field::Str;
use crate::onnx::{
    AttributeProto, DataType, Dimension, GraphProto, ModelProto, NodeProto, TensorProto,
    TensorShapeProto, TypeProto, TypeProtoTensor, TypeValue, ValueInfoProto,
};

/// Python's `list.insert` position: `index` counted from the end when negative, clamped
/// to the list.
pub(super) fn insert_position(index: i64, len: usize) -> usize {
    let len = len as i64;
    let i = if index < 0 { index + len } else { index };
    i.clamp(0, len) as usize
}

/// Gives every output of `graph` one more dimension, of size 1, at `dim_idx` (negative:
/// from the back), as `onnx.compose.expand_out_dim_graph` does with `inplace=True`: the
/// values the outputs were are renamed `<name>_collapsed_dim_<dim_idx>`, and one
/// `Unsqueeze` per output (after one `Constant` holding the axis) produces the output.
/// The outputs are declared anew as tensors of their element type and sizes (a
/// symbolic dimension becomes 0, as there).
pub fn expand_out_dim_graph(graph: &mut GraphProto<'_>, dim_idx: i64) {
    let suffix = format!("_collapsed_dim_{dim_idx}");
    let outputs: HashSet<String> = graph.output.iter().map(|o| o.name().to_string()).collect();
    for node in &mut graph.node {
        for name in node.output.iter_mut().chain(node.input.iter_mut()) {
            if outputs.contains(name.as_str()) {
                *name = Str::from(format!("{name}{suffix}"));
            }
        }
    }
    let axis = format!("{}_expand_out_dim_idx", graph.name());
    let value = TensorProto {
        name: Some(Str::from(format!("{axis}-value"))),
        data_type: Some(i32::from(DataType::Int64)),
        dims: vec![1],
        int64_data: vec![dim_idx],
        ..TensorProto::default()
    };
    let mut constant = NodeProto::new("Constant", Vec::<&str>::new(), [axis.clone()])
        .with_name(format!("{axis}-constant"));
    constant
        .attribute
        .push(AttributeProto::tensor("value", value));
    graph.node.push(constant);

    for o in std::mem::take(&mut graph.output) {
        let name = o.name().to_string();
        let collapsed = format!("{name}{suffix}");
        graph.node.push(
            NodeProto::new("Unsqueeze", [collapsed, axis.clone()], [name.clone()])
                .with_name(format!("unsqueeze-{name}")),
        );
        let tensor = match o.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(TypeValue::TensorType(t)) => Some(t),
            _ => None,
        };
        let mut sizes: Vec<i64> = tensor
            .and_then(|t| t.shape.as_ref())
            .map_or_else(Vec::new, |s| {
                s.dim.iter().map(|d| d.as_value().unwrap_or(0)).collect()
            });
        sizes.insert(insert_position(dim_idx, sizes.len()), 1);
        let elem_type = tensor.and_then(|t| t.elem_type_raw).unwrap_or(0);
        graph.output.push(ValueInfoProto {
            name: Some(Str::from(name)),
            r#type: Some(TypeProto {
                value: Some(TypeValue::TensorType(TypeProtoTensor {
                    elem_type_raw: Some(elem_type),
                    shape: Some(TensorShapeProto::new(
                        sizes.into_iter().map(Dimension::value),
                    )),
                    ..Default::default()
                })),
                ..TypeProto::default()
            }),
            ..ValueInfoProto::default()
        });
    }
}

/// [`expand_out_dim_graph`] on `model`'s graph (`onnx.compose.expand_out_dim`).
pub fn expand_out_dim(model: &mut ModelProto<'_>, dim_idx: i64) {
    let graph = model.graph.get_or_insert_with(GraphProto::default);
    expand_out_dim_graph(graph, dim_idx);
}
