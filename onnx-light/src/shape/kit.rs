//! What every inference rule works with: the node as a rule sees it (its inputs' known
//! types, the constants in reach, the values data propagation found) and small readers
//! and constructors of types, shared by the rule families.

use std::collections::HashMap;

use super::broadcast::broadcast;
use super::types::{data_type_string, shape_of, tensor_type, Constant, Constants};
use crate::onnx::{
    AttributeProto, DataType, Dimension, DimensionValue, NodeProto, TensorShapeProto, TypeProto,
    TypeProtoMap, TypeProtoOptional, TypeProtoSequence, TypeProtoSparseTensor, TypeProtoTensor,
    TypeValue,
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
    /// The constants (initializers and `Constant` nodes' outputs), by name.
    pub constants: &'n Constants,
    /// The values data propagation found, by name (`onnx`'s symbolic inputs); `None`
    /// without data propagation.
    pub propagated: Option<&'n Propagated>,
}

/// The values data propagation finds for integer tensors of rank 0 or 1 (shapes and
/// the like), by name: each value a size, a name or unknown, as dimensions.
pub(super) type Propagated = HashMap<String, TensorShapeProto<'static>>;

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

/// The constant input `i` is (an initializer or a `Constant` node's output), whether
/// its values were read or not.
pub(super) fn input_constant<'n>(n: &'n Node<'_, '_>, i: usize) -> Option<&'n Constant> {
    let name = n.node.input.get(i)?;
    if name.is_empty() {
        return None;
    }
    n.constants.get(name.as_ref() as &str)
}

/// The values of input `i` when it is an integer constant (int32 or int64) whose values
/// were read.
pub(super) fn input_values<'n>(n: &'n Node<'_, '_>, i: usize) -> Option<&'n [i64]> {
    input_constant(n, i)?.ints()
}

/// `onnx`'s refusal to parse constant input `i` as `expected`.
pub(super) fn parse_mismatch(n: &Node<'_, '_>, i: usize, expected: DataType) -> String {
    let actual = input_constant(n, i).map_or(0, |c| c.elem);
    if actual == 0 {
        return format!(
            "The type of tensor: {} is undefined so it cannot be parsed.",
            n.node.input[i]
        );
    }
    let actual = DataType::from_i32(actual).map_or_else(|| actual.to_string(), |d| d.to_string());
    format!(
        "ParseData type mismatch for tensor: {}. Expected:{expected} Actual:{actual}",
        n.node.input[i]
    )
}

/// The values of constant input `i` read as int64 data, as `onnx` parses them: an error
/// when the constant is of another type; `None` when the input is not a constant (or
/// its values were not read).
pub(super) fn int64_values<'n>(n: &'n Node<'_, '_>, i: usize) -> Result<Option<&'n [i64]>, String> {
    match input_constant(n, i) {
        None => Ok(None),
        Some(c) if c.is(DataType::Int64) => match c.problem() {
            Some(reason) => Err(reason.to_string()),
            None => Ok(c.ints()),
        },
        Some(_) => Err(parse_mismatch(n, i, DataType::Int64)),
    }
}

/// The values of constant input `i` read as float data, as `onnx` parses them: an error
/// when the constant is of another type; `None` when the input is not a constant (or
/// its values were not read).
pub(super) fn float_values<'n>(n: &'n Node<'_, '_>, i: usize) -> Result<Option<&'n [f64]>, String> {
    match input_constant(n, i) {
        None => Ok(None),
        Some(c) if c.is(DataType::Float) => match c.problem() {
            Some(reason) => Err(reason.to_string()),
            None => Ok(c.floats()),
        },
        Some(_) => Err(parse_mismatch(n, i, DataType::Float)),
    }
}

/// The values data propagation found for input `i`, which `onnx` offers a rule only
/// when the input is not a constant.
pub(super) fn symbolic_input<'n>(
    n: &'n Node<'_, '_>,
    i: usize,
) -> Option<&'n TensorShapeProto<'static>> {
    let name = n.node.input.get(i)?;
    if n.constants.contains_key(name.as_ref() as &str) {
        return None;
    }
    n.propagated?.get(name.as_ref() as &str)
}

/// The most dimensions a shape is given when only the length of a shape input is known.
const MAX_RANK: i64 = 1024;

/// A shape given by input `i` (`onnx`'s `getShapeInput`): the values of an int64
/// constant, else the values data propagation found, else as many unknown dimensions
/// as the input's length when that is known. `fail_if_negative` refuses a negative size.
pub(super) fn shape_input(
    n: &Node<'_, '_>,
    i: usize,
    fail_if_negative: bool,
) -> Result<Option<TensorShapeProto<'static>>, String> {
    let mut found = None;
    if let Some(values) = int64_values(n, i)? {
        found = Some(shape_of(
            values.iter().map(|&v| Dimension::value(v)).collect(),
        ));
    } else if let Some(s) = symbolic_input(n, i) {
        found = Some(owned(s));
    } else if let Some(s) = shape_in(n, i) {
        if s.dim.len() != 1 {
            return Err("shape input must be 1D tensor".to_string());
        }
        match s.dim[0].as_value() {
            Some(len) if (0..=MAX_RANK).contains(&len) => {
                found = Some(shape_of(vec![Dimension::unknown(); len as usize]));
            }
            _ => {}
        }
    }
    if fail_if_negative
        && found
            .as_ref()
            .is_some_and(|s| s.dim.iter().any(|d| d.as_value().is_some_and(|v| v < 0)))
    {
        return Err("shape input tensor must have non-negative elements".to_string());
    }
    Ok(found)
}

/// A copy of a type that owns its strings.
pub(super) fn owned_type(t: &TypeProto<'_>) -> TypeProto<'static> {
    crate::IntoOwned::into_owned(crate::Reborrow::reborrow(t))
}

/// A copy of a shape that owns its strings.
pub(super) fn owned(s: &TensorShapeProto<'_>) -> TensorShapeProto<'static> {
    if !s.unknown_fields.is_empty() {
        return crate::IntoOwned::into_owned(crate::Reborrow::reborrow(s));
    }
    // Copied in one pass, into one allocation: rules copy a shape for most nodes.
    TensorShapeProto {
        dim: s.dim.iter().map(owned_dim).collect(),
        ..TensorShapeProto::default()
    }
}

pub(super) fn owned_dim(d: &Dimension<'_>) -> Dimension<'static> {
    if !d.unknown_fields.is_empty() {
        return crate::IntoOwned::into_owned(crate::Reborrow::reborrow(d));
    }
    Dimension {
        value: match &d.value {
            Some(DimensionValue::DimValue(v)) => Some(DimensionValue::DimValue(*v)),
            Some(DimensionValue::DimParam(p)) => {
                Some(DimensionValue::DimParam(crate::Str::copied(p)))
            }
            None => None,
        },
        denotation: d.denotation.as_deref().map(crate::Str::copied),
        ..Dimension::default()
    }
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

/// `onnx`'s number for the kind of a type (its `value_case`), as its messages print it:
/// 0 unset, 1 tensor, 4 sequence, 5 map, 7 opaque, 8 sparse tensor, 9 optional.
pub(super) fn value_case(t: &TypeProto<'_>) -> u32 {
    match &t.value {
        None => 0,
        Some(TypeValue::TensorType(_)) => 1,
        Some(TypeValue::SequenceType(_)) => 4,
        Some(TypeValue::MapType(_)) => 5,
        Some(TypeValue::OpaqueType(_)) => 7,
        Some(TypeValue::SparseTensorType(_)) => 8,
        Some(TypeValue::OptionalType(_)) => 9,
    }
}

/// The element type and shape of a type read as a dense tensor, as `onnx`'s rules read
/// `tensor_type()` of any type: element type 0 and no shape for a type of another kind.
pub(super) fn as_tensor<'t, 'a>(t: &'t TypeProto<'a>) -> (i32, Option<&'t TensorShapeProto<'a>>) {
    match &t.value {
        Some(TypeValue::TensorType(tt)) => (tt.elem_type_raw(), tt.shape.as_ref()),
        _ => (0, None),
    }
}

/// `onnx`'s `hasShape`: a (sparse) tensor with a shape, or a sequence or optional whose
/// element type has one.
pub(super) fn has_shape(t: &TypeProto<'_>) -> bool {
    match &t.value {
        Some(TypeValue::TensorType(tt)) => tt.shape.is_some(),
        Some(TypeValue::SparseTensorType(tt)) => tt.shape.is_some(),
        Some(TypeValue::SequenceType(s)) => s.elem_type.as_deref().is_some_and(has_shape),
        Some(TypeValue::OptionalType(o)) => o.elem_type.as_deref().is_some_and(has_shape),
        _ => false,
    }
}

/// A sequence of `elem`.
pub(super) fn sequence_of(elem: TypeProto<'static>) -> TypeProto<'static> {
    TypeProto {
        value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(elem)),
            ..TypeProtoSequence::default()
        }))),
        ..TypeProto::default()
    }
}

/// An optional of `elem`.
pub(super) fn optional_of(elem: TypeProto<'static>) -> TypeProto<'static> {
    TypeProto {
        value: Some(TypeValue::OptionalType(Box::new(TypeProtoOptional {
            elem_type: Some(Box::new(elem)),
            ..TypeProtoOptional::default()
        }))),
        ..TypeProto::default()
    }
}

/// `onnx`'s `propagateElemTypeFromInputToOutput` into an output with no type yet: a
/// (sparse) tensor of input `i`'s element type, or a sequence, optional or map of its
/// element (or value) type; nothing for an opaque or unset type. An error when the
/// input's type or its element type is unknown.
pub(super) fn propagate_elem_type(
    n: &Node<'_, '_>,
    i: usize,
) -> Result<TypeProto<'static>, String> {
    let Some(t) = n.inputs.get(i).copied().flatten() else {
        return Err(format!(
            "Input {i} expected to have type but instead is null"
        ));
    };
    let value = match &t.value {
        Some(TypeValue::TensorType(tt)) => {
            if tt.elem_type_raw() == 0 {
                return Err(format!("Element type of input {i} unknown"));
            }
            TypeValue::TensorType(TypeProtoTensor {
                elem_type_raw: Some(tt.elem_type_raw()),
                ..TypeProtoTensor::default()
            })
        }
        Some(TypeValue::SparseTensorType(tt)) => {
            if tt.elem_type_raw() == 0 {
                return Err(format!("Element type of input {i} unknown"));
            }
            TypeValue::SparseTensorType(TypeProtoSparseTensor {
                elem_type_raw: Some(tt.elem_type_raw()),
                ..TypeProtoSparseTensor::default()
            })
        }
        Some(TypeValue::SequenceType(s)) => match s.elem_type.as_deref() {
            Some(e) => return Ok(sequence_of(owned_type(e))),
            None => return Err(format!("Element type of sequence input {i} unknown")),
        },
        Some(TypeValue::OptionalType(o)) => match o.elem_type.as_deref() {
            Some(e) => return Ok(optional_of(owned_type(e))),
            None => return Err(format!("Element type of optional input {i} unknown")),
        },
        Some(TypeValue::MapType(m)) => {
            let Some(key) = m.key_type_raw else {
                return Err(format!("Key type of map input {i} unknown"));
            };
            let Some(v) = m.value_type.as_deref() else {
                return Err(format!("Value type of map input {i} unknown"));
            };
            TypeValue::MapType(Box::new(TypeProtoMap {
                key_type_raw: Some(key),
                value_type: Some(Box::new(owned_type(v))),
                ..TypeProtoMap::default()
            }))
        }
        Some(TypeValue::OpaqueType(_)) | None => return Ok(TypeProto::default()),
    };
    Ok(TypeProto {
        value: Some(value),
        ..TypeProto::default()
    })
}

/// `onnx`'s `propagateShape`: the shape of `from` copied into `to`, through sequences,
/// optionals and maps; the two must be of one kind.
pub(super) fn propagate_shape(
    from: &TypeProto<'_>,
    to: &mut TypeProto<'static>,
) -> Result<(), String> {
    let (from_case, to_case) = (value_case(from), value_case(to));
    if from_case != to_case {
        return Err(format!(
            "Mismatch between inferred and declared type. Inferred={from_case} Declared={to_case}"
        ));
    }
    let unset = TypeProto::default();
    match (&from.value, to.value.as_mut()) {
        (Some(TypeValue::TensorType(f)), Some(TypeValue::TensorType(t))) => {
            if let Some(s) = &f.shape {
                t.shape = Some(owned(s));
            }
        }
        (Some(TypeValue::SparseTensorType(f)), Some(TypeValue::SparseTensorType(t))) => {
            if let Some(s) = &f.shape {
                t.shape = Some(owned(s));
            }
        }
        (Some(TypeValue::SequenceType(f)), Some(TypeValue::SequenceType(t))) => {
            let target = t.elem_type.get_or_insert_with(Default::default);
            propagate_shape(f.elem_type.as_deref().unwrap_or(&unset), target)?;
        }
        (Some(TypeValue::OptionalType(f)), Some(TypeValue::OptionalType(t))) => {
            let target = t.elem_type.get_or_insert_with(Default::default);
            propagate_shape(f.elem_type.as_deref().unwrap_or(&unset), target)?;
        }
        (Some(TypeValue::MapType(f)), Some(TypeValue::MapType(t))) => {
            let target = t.value_type.get_or_insert_with(Default::default);
            propagate_shape(f.value_type.as_deref().unwrap_or(&unset), target)?;
        }
        _ => return Err(format!("Unsupported Source/Target type={from_case}")),
    }
    Ok(())
}

/// `onnx`'s `propagateShapeAndTypeFromFirstInput`: one output of input 0's type (of any
/// kind), with its shape when it has one.
pub(super) fn propagate_first_input(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let mut out = propagate_elem_type(n, 0)?;
    if let Some(t) = n.inputs.first().copied().flatten() {
        if has_shape(t) {
            propagate_shape(t, &mut out)?;
        }
    }
    Ok(vec![Some(out)])
}

/// `onnx`'s `UnionShapeInfo` of a shape into a (sparse) tensor type's shape: a target
/// of unknown shape stays unknown, one of another rank becomes unknown, and each
/// dimension on which the two differ (size, name, or known against unknown) becomes
/// unknown.
pub(super) fn union_shape(
    source: &TensorShapeProto<'_>,
    target: &mut Option<TensorShapeProto<'static>>,
) {
    let Some(shape) = target else {
        return;
    };
    if shape.dim.len() != source.dim.len() {
        *target = None;
        return;
    }
    for (s, t) in source.dim.iter().zip(shape.dim.iter_mut()) {
        let same = match (&s.value, &t.value) {
            (Some(DimensionValue::DimValue(a)), Some(DimensionValue::DimValue(b))) => a == b,
            (Some(DimensionValue::DimParam(a)), Some(DimensionValue::DimParam(b))) => a == b,
            (None, None) => true,
            _ => false,
        };
        if !same {
            // Only the value is cleared: the dimension keeps its denotation.
            t.value = None;
        }
    }
}

/// `onnx`'s `UnionTypeInfo`: merges `source` into `target` as the type of a value that
/// is either of them (the branches of an `If`, the tensors of a sequence). The two must
/// be of one kind, with the same element (and map key) types; shapes are united by
/// [`union_shape`], and a source of unknown shape makes the target's unknown. Nested
/// sequences, optionals and maps are united element by element.
pub(super) fn union_types(
    source: &TypeProto<'_>,
    target: &mut TypeProto<'static>,
) -> Result<(), String> {
    let (source_case, target_case) = (value_case(source), value_case(target));
    if source_case != target_case {
        return Err(format!(
            "Mismatched type: inferred={source_case} declared={target_case}"
        ));
    }
    let elem_mismatch = |what: &str, s: i32, t: i32| -> String {
        match (data_type_string(s), data_type_string(t)) {
            (Ok(s), Ok(t)) => {
                format!("Mismatched {what} element type: inferred={s} declared={t}")
            }
            (Err(e), _) | (_, Err(e)) => e,
        }
    };
    match (&source.value, target.value.as_mut()) {
        (Some(TypeValue::TensorType(s)), Some(TypeValue::TensorType(t))) => {
            if s.elem_type_raw() != t.elem_type_raw() {
                return Err(elem_mismatch(
                    "tensor",
                    s.elem_type_raw(),
                    t.elem_type_raw(),
                ));
            }
            match &s.shape {
                Some(shape) => union_shape(shape, &mut t.shape),
                None => t.shape = None,
            }
        }
        (Some(TypeValue::SparseTensorType(s)), Some(TypeValue::SparseTensorType(t))) => {
            if s.elem_type_raw() != t.elem_type_raw() {
                return Err(elem_mismatch(
                    "sparse tensor",
                    s.elem_type_raw(),
                    t.elem_type_raw(),
                ));
            }
            match &s.shape {
                Some(shape) => union_shape(shape, &mut t.shape),
                None => t.shape = None,
            }
        }
        (Some(TypeValue::SequenceType(s)), Some(TypeValue::SequenceType(t))) => {
            let Some(s) = s.elem_type.as_deref() else {
                return Err("source sequence type missing element type.".into());
            };
            let Some(t) = t.elem_type.as_deref_mut() else {
                return Err("target sequence type missing element type.".into());
            };
            crate::onnx::deep::guarded(|| union_types(s, t))?;
        }
        (Some(TypeValue::OptionalType(s)), Some(TypeValue::OptionalType(t))) => {
            let Some(s) = s.elem_type.as_deref() else {
                return Err("source optional type missing element type.".into());
            };
            let Some(t) = t.elem_type.as_deref_mut() else {
                return Err("target optional type missing element type.".into());
            };
            crate::onnx::deep::guarded(|| union_types(s, t))?;
        }
        (Some(TypeValue::MapType(s)), Some(TypeValue::MapType(t))) => {
            let Some(source_key) = s.key_type_raw else {
                return Err("source map type missing key type.".into());
            };
            let Some(target_key) = t.key_type_raw else {
                return Err("target map type missing key type.".into());
            };
            if source_key != target_key {
                return Err(
                    match (data_type_string(source_key), data_type_string(target_key)) {
                        (Ok(s), Ok(t)) => {
                            format!("Mismatched map tensor key type: inferred={s} declared={t}")
                        }
                        (Err(e), _) | (_, Err(e)) => e,
                    },
                );
            }
            let Some(s) = s.value_type.as_deref() else {
                return Err("source map type missing value type.".into());
            };
            let Some(t) = t.value_type.as_deref_mut() else {
                return Err("target map type missing value type.".into());
            };
            crate::onnx::deep::guarded(|| union_types(s, t))?;
        }
        // Opaque or unset types of one kind: nothing to unite.
        _ => {}
    }
    Ok(())
}

/// `onnx`'s `mergeInDimensionInfo`: a size wins, sizes must agree, a name already there
/// stays.
pub(super) fn merge_in_dim(
    source: &Dimension<'_>,
    target: &mut Dimension<'static>,
    index: usize,
) -> Result<(), String> {
    if let Some(s) = source.as_value() {
        match target.as_value() {
            Some(t) if t != s => Err(format!(
                "Can't merge shape info. Both inferred and declared dimension have values but they differ. Inferred={s} Declared={t} Dimension={index}"
            )),
            Some(_) => Ok(()),
            None => {
                target.value = Some(crate::onnx::DimensionValue::DimValue(s));
                Ok(())
            }
        }
    } else {
        if target.value.is_none() {
            if let Some(p) = source.as_param() {
                *target = Dimension::param(p.to_string());
            }
        }
        Ok(())
    }
}

/// `onnx`'s `mergeInShapeInfo` into a tensor's shape (copied when it has none).
pub(super) fn merge_in_shape(
    source: &TensorShapeProto<'_>,
    target: &mut Option<TensorShapeProto<'static>>,
) -> Result<(), String> {
    let Some(t) = target.as_mut() else {
        *target = Some(owned(source));
        return Ok(());
    };
    if t.dim.len() != source.dim.len() {
        return Err(format!(
            "Mismatch between number of inferred and declared dimensions. inferred={} declared={}",
            source.dim.len(),
            t.dim.len()
        ));
    }
    for (i, (s, t)) in source.dim.iter().zip(t.dim.iter_mut()).enumerate() {
        merge_in_dim(s, t, i)?;
    }
    Ok(())
}

/// `onnx`'s `checkedMultiply`: the product, or the overflow error `onnx` raises.
pub(super) fn checked_mul(a: i64, b: i64) -> Result<i64, String> {
    a.checked_mul(b)
        .ok_or_else(|| format!("Integer overflow while multiplying dimension values {a} and {b}"))
}

/// `onnx`'s `checkedAdd`.
pub(super) fn checked_add(a: i64, b: i64) -> Result<i64, String> {
    a.checked_add(b)
        .ok_or_else(|| format!("Integer overflow while adding dimension values {a} and {b}"))
}

/// `onnx`'s `checkedDivide` (truncating, as C++ divides).
pub(super) fn checked_div(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("Division by zero while inferring a dimension".to_string());
    }
    a.checked_div(b)
        .ok_or_else(|| format!("Integer overflow while dividing dimension values {a} and {b}"))
}

/// `onnx`'s `Dimension * Dimension`: sizes multiply; a size of 1 keeps the other
/// dimension (its name too); anything else is unknown.
pub(super) fn dim_mul(a: &Dimension<'_>, b: &Dimension<'_>) -> Result<Dimension<'static>, String> {
    Ok(match (a.as_value(), b.as_value()) {
        (Some(x), Some(y)) => Dimension::value(checked_mul(x, y)?),
        (Some(1), None) => owned_dim(b),
        (None, Some(1)) => owned_dim(a),
        _ => Dimension::unknown(),
    })
}

/// `onnx`'s `Dimension * int64`: a size multiplies; `* 1` keeps the dimension.
pub(super) fn dim_mul_by(d: &Dimension<'_>, k: i64) -> Result<Dimension<'static>, String> {
    match d.as_value() {
        Some(v) => Ok(Dimension::value(checked_mul(v, k)?)),
        None if k == 1 => Ok(owned_dim(d)),
        None => Ok(Dimension::unknown()),
    }
}

/// `onnx`'s `Dimension / int64`: a size divides; `/ 1` keeps the dimension.
pub(super) fn dim_div_by(d: &Dimension<'_>, k: i64) -> Result<Dimension<'static>, String> {
    match d.as_value() {
        Some(v) => Ok(Dimension::value(checked_div(v, k)?)),
        None if k == 1 => Ok(owned_dim(d)),
        None => Ok(Dimension::unknown()),
    }
}

/// `onnx`'s `multiplyDims`: the product of `shape`'s dimensions `from..upto`, starting
/// from a size of 1.
pub(super) fn multiply_dims(
    shape: &TensorShapeProto<'_>,
    from: usize,
    upto: usize,
) -> Result<Dimension<'static>, String> {
    let mut d = Dimension::value(1);
    for x in &shape.dim[from.min(upto)..upto] {
        d = dim_mul(&d, x)?;
    }
    Ok(d)
}

/// `(v as f64).ceil()` converted as C++ converts a double to int64 on x86: a value out
/// of range (or NaN) becomes `i64::MIN`.
pub(super) fn ceil_to_i64(v: f64) -> i64 {
    // 2^63: the first double past the int64 range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let c = v.ceil();
    if (-LIMIT..LIMIT).contains(&c) {
        c as i64
    } else {
        i64::MIN
    }
}
