//! A function's body as a graph to infer: its nodes with each attribute reference
//! (`ref_attr_name`) replaced by the caller's attribute of that name, else the
//! function's default for it, else dropped, as `onnx` instantiates a function for
//! inference.

use crate::onnx::{
    AttributeProto, FunctionProto, GraphProto, NodeProto, TypeProto, ValueInfoProto,
};
use crate::{IntoOwned, Reborrow};

/// A copy that owns its strings.
macro_rules! owned {
    ($x:expr) => {
        $x.reborrow().into_owned()
    };
}

/// The graph of `function`'s body with inputs of `input_types` (inputs past them stay
/// untyped) and untyped outputs, attributes bound to `attributes`.
pub(super) fn instantiate(
    function: &FunctionProto<'_>,
    input_types: &[TypeProto<'_>],
    attributes: &[AttributeProto<'_>],
) -> GraphProto<'static> {
    let mut graph = GraphProto::named(function.name().to_string());
    for (i, name) in function.input.iter().enumerate() {
        graph.input.push(ValueInfoProto {
            name: Some(name.to_string().into()),
            r#type: input_types.get(i).map(|t| owned!(t)),
            ..ValueInfoProto::default()
        });
    }
    for name in &function.output {
        graph.output.push(ValueInfoProto {
            name: Some(name.to_string().into()),
            ..ValueInfoProto::default()
        });
    }
    graph.value_info = function.value_info.iter().map(|v| owned!(v)).collect();
    graph.node = function
        .node
        .iter()
        .map(|n| bind(n, function, attributes))
        .collect();
    graph
}

/// `node` with its attribute references resolved.
fn bind(
    node: &NodeProto<'_>,
    function: &FunctionProto<'_>,
    attributes: &[AttributeProto<'_>],
) -> NodeProto<'static> {
    let mut out: NodeProto<'static> = owned!(node);
    out.attribute.clear();
    for a in &node.attribute {
        let Some(reference) = a.ref_attr_name.as_deref() else {
            out.attribute.push(owned!(a));
            continue;
        };
        let value = attributes
            .iter()
            .find(|c| c.name() == reference)
            .or_else(|| {
                function
                    .attribute_proto
                    .iter()
                    .find(|d| d.name() == reference)
            });
        if let Some(value) = value {
            let mut bound: AttributeProto<'static> = owned!(value);
            bound.name = Some(a.name().to_string().into());
            out.attribute.push(bound);
        }
    }
    out
}
