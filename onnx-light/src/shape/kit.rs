//! What every inference rule works with: the node as a rule sees it (its inputs' known
//! types, the small integer constants in reach) and small readers and constructors of
//! types, shared by the rule families.

use std::collections::HashMap;

use super::broadcast::broadcast;
use super::types::tensor_type;
use crate::onnx::{
    AttributeProto, DataType, Dimension, NodeProto, TensorShapeProto, TypeProto, TypeValue,
};
use crate::ProtoEnum;

/// A node as its rule sees it.
pub(super) struct Node<'n, 'a> {
    pub node: &'n NodeProto<'a>,
    /// `""` for `ai.onnx`.
    pub domain: &'n str,
    /// The opset version of the node's domain the model imports.
    pub version: i64,
    /// The known type of each input; `None` for an absent input or an unknown type.
    pub inputs: &'n [Option<&'n TypeProto<'a>>],
    /// The values of small integer constants, by name.
    pub constants: &'n HashMap<String, Vec<i64>>,
}

/// The types of each output (`None` for one not inferred).
pub(super) type Outputs = Vec<Option<TypeProto<'static>>>;

pub(super) fn attribute<'n, 'a>(n: &'n Node<'_, 'a>, name: &str) -> Option<&'n AttributeProto<'a>> {
    n.node.attribute.iter().find(|a| a.name() == name)
}

pub(super) fn elem_of(t: Option<&Option<&TypeProto<'_>>>) -> Option<i32> {
    match t?.as_ref()?.value.as_ref()? {
        TypeValue::TensorType(tt) => tt.elem_type_raw,
        _ => None,
    }
}

pub(super) fn shape_in<'n, 'a>(n: &Node<'n, 'a>, i: usize) -> Option<&'n TensorShapeProto<'a>> {
    match n.inputs.get(i)?.as_ref()?.value.as_ref()? {
        TypeValue::TensorType(tt) => tt.shape.as_ref(),
        _ => None,
    }
}

/// One output: a tensor of element type `elem` and `shape` (unknown when `None`).
pub(super) fn one(elem: i32, shape: Option<TensorShapeProto<'static>>) -> Outputs {
    vec![Some(tensor_type(elem, shape))]
}

/// The element type of input `i`, which the rule needs: an error when it is unknown,
/// as `onnx`'s rules raise one.
pub(super) fn required_elem(n: &Node<'_, '_>, i: usize) -> Result<i32, String> {
    elem_of(n.inputs.get(i))
        .ok_or_else(|| format!("Input {i} expected to have type but instead is null"))
}

/// One output of the same type as input `i`: its element type, and its shape if known.
pub(super) fn same_as_input(n: &Node<'_, '_>, i: usize) -> Result<Outputs, String> {
    let elem = required_elem(n, i)?;
    Ok(vec![Some(tensor_type(elem, shape_in(n, i).map(owned)))])
}

/// The inputs' shapes broadcast; `None` unless every one is known.
pub(super) fn broadcast_shapes(
    n: &Node<'_, '_>,
    inputs: std::ops::Range<usize>,
) -> Result<Option<TensorShapeProto<'static>>, String> {
    let shapes: Option<Vec<&TensorShapeProto<'_>>> = inputs.map(|i| shape_in(n, i)).collect();
    match shapes {
        Some(shapes) if !shapes.is_empty() => Ok(Some(broadcast(&shapes)?)),
        _ => Ok(None),
    }
}

/// One output: the element type of input `elem_from`, the inputs' shapes broadcast.
pub(super) fn broadcast_inputs(
    n: &Node<'_, '_>,
    inputs: std::ops::Range<usize>,
    elem_from: usize,
) -> Result<Outputs, String> {
    let elem = required_elem(n, elem_from)?;
    Ok(vec![Some(tensor_type(elem, broadcast_shapes(n, inputs)?))])
}

/// One boolean output whatever the inputs' types, their shapes broadcast.
pub(super) fn bool_like(
    n: &Node<'_, '_>,
    inputs: std::ops::Range<usize>,
) -> Result<Outputs, String> {
    let shape = broadcast_shapes(n, inputs)?;
    Ok(vec![Some(tensor_type(DataType::Bool.to_i32(), shape))])
}

/// The values of input `i` when it is a small integer constant (an initializer or a
/// `Constant` node's output).
pub(super) fn input_values<'n>(n: &'n Node<'_, '_>, i: usize) -> Option<&'n [i64]> {
    let name = n.node.input.get(i)?;
    if name.is_empty() {
        return None;
    }
    n.constants.get(name.as_ref() as &str).map(Vec::as_slice)
}

/// A copy of a type that owns its strings.
pub(super) fn owned_type(t: &TypeProto<'_>) -> TypeProto<'static> {
    crate::IntoOwned::into_owned(crate::Reborrow::reborrow(t))
}

/// A copy of a shape that owns its strings.
pub(super) fn owned(s: &TensorShapeProto<'_>) -> TensorShapeProto<'static> {
    crate::IntoOwned::into_owned(crate::Reborrow::reborrow(s))
}

pub(super) fn owned_dim(d: &Dimension<'_>) -> Dimension<'static> {
    crate::IntoOwned::into_owned(crate::Reborrow::reborrow(d))
}

/// The integers of attribute `name`, when it is given (even empty).
pub(super) fn attr_ints(n: &Node<'_, '_>, name: &str) -> Option<Vec<i64>> {
    attribute(n, name).map(|a| a.ints.clone())
}

/// The integer of attribute `name`, or `default` when it is not given.
pub(super) fn attr_int(n: &Node<'_, '_>, name: &str, default: i64) -> i64 {
    attribute(n, name).and_then(|a| a.i).unwrap_or(default)
}

/// `onnx`'s `unifyDim`: merges `source` into `target`. A size wins over a name, a name
/// already there over a later one; two different sizes are an error.
pub(super) fn unify_dim(
    source: &Dimension<'_>,
    target: &mut Dimension<'static>,
) -> Result<(), String> {
    match (source.as_value(), target.as_value()) {
        (Some(s), Some(t)) if s != t => Err(format!(
            "Dimension mismatch in unification between {s} and {t}"
        )),
        (Some(s), _) => {
            *target = Dimension::value(s);
            Ok(())
        }
        (None, Some(_)) => Ok(()),
        (None, None) => {
            if target.as_param().is_none() {
                if let Some(p) = source.as_param() {
                    *target = Dimension::param(p.to_string());
                }
            }
            Ok(())
        }
    }
}
