//! Small constructors and readers the inference rules share: tensor types, shapes, and
//! the values of small integer constants.

use crate::onnx::{DataType, Dimension, TensorProto, TensorShapeProto, TypeProto, TypeValue};
use crate::ProtoEnum;

/// A tensor type with the element type number as stored (also numbers this schema does
/// not know).
pub(super) fn with_raw_elem_type(mut t: TypeProto<'static>, raw: i32) -> TypeProto<'static> {
    if let Some(TypeValue::TensorType(tt)) = t.value.as_mut() {
        tt.elem_type_raw = Some(raw);
    }
    t
}

/// The values of an integer tensor small enough to be a shape, axes or the like (a
/// payload not loaded yet, as in a structure-only load, is fetched: it is small).
pub(super) fn small_ints(t: &TensorProto<'_>) -> Option<Vec<i64>> {
    const MAX: i64 = 1024;
    let count: i64 = t.dims.iter().product();
    if t.dims.len() > 1 || !(0..=MAX).contains(&count) {
        return None;
    }
    match t.elem_type()? {
        DataType::Int64 => t.values::<i64>().ok().map(|v| v.into_owned()),
        DataType::Int32 => t
            .values::<i32>()
            .ok()
            .map(|v| v.iter().map(|&x| i64::from(x)).collect()),
        _ => None,
    }
}

/// A shape of the given dimensions (helper for rules).
pub(super) fn shape_of(dims: Vec<Dimension<'static>>) -> TensorShapeProto<'static> {
    TensorShapeProto {
        dim: dims,
        ..TensorShapeProto::default()
    }
}

/// A tensor type with element type number `elem` and an optional shape.
pub(super) fn tensor_type(
    elem: i32,
    shape: Option<TensorShapeProto<'static>>,
) -> TypeProto<'static> {
    with_raw_elem_type(TypeProto::tensor(DataType::Undefined, shape), elem)
}

/// The name of an element type in `onnx`'s type strings (`float`, `int64`); an error
/// for a number `onnx` does not know (0 included), as its `ToDataTypeString` raises one.
pub(super) fn data_type_string(raw: i32) -> Result<String, String> {
    match DataType::from_i32(raw) {
        Some(dt) if raw != 0 => Ok(dt.to_string()),
        _ => Err(format!("Invalid tensor data type {raw}.")),
    }
}
