//! A function's body as a graph to infer, for a call: its inputs typed as the caller's
//! actual inputs, each attribute reference (`ref_attr_name`) replaced by the caller's
//! attribute of that name, else the function's default for it, else dropped, as `onnx`
//! instantiates a function for inference.

use std::collections::HashSet;

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

/// What a call gives for one formal input.
pub(super) enum Actual {
    /// No input: the body's uses of it are absent inputs.
    Absent,
    /// An input, of this type if known.
    Given(Option<TypeProto<'static>>),
}

/// The graph of `function`'s body for a call with `actuals` (formal inputs past them
/// are absent) and the caller's `attributes`; outputs untyped. The function's
/// `value_info` plays no part, as in `onnx`.
pub(super) fn instantiate(
    function: &FunctionProto<'_>,
    actuals: Vec<Actual>,
    attributes: &[AttributeProto<'_>],
) -> GraphProto<'static> {
    let mut graph = GraphProto::named(function.name().to_string());
    let mut actuals = actuals.into_iter();
    let mut absent = HashSet::new();
    for name in &function.input {
        let r#type = match actuals.next().unwrap_or(Actual::Absent) {
            Actual::Absent => {
                absent.insert(name.to_string());
                None
            }
            Actual::Given(t) => t,
        };
        graph.input.push(ValueInfoProto {
            name: Some(name.to_string().into()),
            r#type,
            ..ValueInfoProto::default()
        });
    }
    for name in &function.output {
        graph.output.push(ValueInfoProto {
            name: Some(name.to_string().into()),
            ..ValueInfoProto::default()
        });
    }
    graph.node = function
        .node
        .iter()
        .map(|n| {
            let mut n = bind(n, function, attributes);
            for input in &mut n.input {
                if absent.contains(&**input) {
                    *input = "".into();
                }
            }
            n
        })
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
        // The caller's value counts only for an attribute the function declares.
        let declared = function.attribute.iter().any(|d| d == reference)
            || function
                .attribute_proto
                .iter()
                .any(|d| d.name() == reference);
        let value = attributes
            .iter()
            .find(|c| declared && c.name() == reference)
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
