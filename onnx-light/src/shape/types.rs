//! Small constructors and readers the inference rules share: tensor types, shapes, and
//! the constants rules read.

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

/// The constants in reach, by value name (a fast hash, as for the walk's tables).
pub(super) type Constants = std::collections::HashMap<
    String,
    Constant,
    std::hash::BuildHasherDefault<crate::checker::hash::NameHasher>,
>;

/// A constant rules may read: an initializer or the output of a `Constant` node, with
/// its element type and dimensions. Its values are read when they are few (a payload not
/// loaded yet, as in a structure-only load, is fetched then: it is small) and of a type
/// `onnx`'s rules parse; weights stay unread.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Constant {
    /// The element type number, as stored.
    pub elem: i32,
    pub dims: Vec<i64>,
    pub values: Values,
}

/// The values of a [`Constant`], as far as they were read.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Values {
    /// The values of an int32 or int64 tensor.
    Ints(Vec<i64>),
    /// The values of a float or double tensor (a float held exactly as a double).
    Floats(Vec<f64>),
    /// Not read: too many, of another type, or not readable.
    Unread,
    /// Data `onnx` refuses to parse (external, or not as many values as the dims
    /// say): its reason.
    Invalid(String),
}

/// The most values of a constant that are read.
const MAX_READ: u64 = 1024;

impl Constant {
    /// The constant `t` holds.
    pub(super) fn of(t: &TensorProto<'_>) -> Constant {
        let parsed = matches!(
            t.elem_type(),
            Some(DataType::Int64 | DataType::Int32 | DataType::Float | DataType::Double)
        );
        if let Some(reason) = parsed.then(|| parse_problem(t)).flatten() {
            return Constant {
                elem: t.elem_type_raw(),
                dims: t.dims.clone(),
                values: Values::Invalid(reason),
            };
        }
        let few = t.element_count().is_some_and(|c| c <= MAX_READ);
        let values = match t.elem_type() {
            _ if !few => None,
            Some(DataType::Int64) => t.values::<i64>().ok().map(|v| Values::Ints(v.into_owned())),
            Some(DataType::Int32) => t
                .values::<i32>()
                .ok()
                .map(|v| Values::Ints(v.iter().map(|&x| i64::from(x)).collect())),
            Some(DataType::Float) => t
                .values::<f32>()
                .ok()
                .map(|v| Values::Floats(v.iter().map(|&x| f64::from(x)).collect())),
            Some(DataType::Double) => t
                .values::<f64>()
                .ok()
                .map(|v| Values::Floats(v.into_owned())),
            _ => None,
        };
        Constant {
            elem: t.elem_type_raw(),
            dims: t.dims.clone(),
            values: values.unwrap_or(Values::Unread),
        }
    }

    /// An int64 constant of `dims` (a `Constant` node's `value_int` or `value_ints`).
    pub(super) fn int64s(dims: Vec<i64>, values: Vec<i64>) -> Constant {
        Constant {
            elem: DataType::Int64.to_i32(),
            dims,
            values: Values::Ints(values),
        }
    }

    /// A float constant of `dims` (a `Constant` node's `value_float` or `value_floats`).
    pub(super) fn float32s(dims: Vec<i64>, values: &[f32]) -> Constant {
        Constant {
            elem: DataType::Float.to_i32(),
            dims,
            values: Values::Floats(values.iter().map(|&x| f64::from(x)).collect()),
        }
    }

    /// The integer values, when it is an int32 or int64 constant that was read.
    pub(super) fn ints(&self) -> Option<&[i64]> {
        match &self.values {
            Values::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// The float values, when it is a float or double constant that was read.
    pub(super) fn floats(&self) -> Option<&[f64]> {
        match &self.values {
            Values::Floats(v) => Some(v),
            _ => None,
        }
    }

    /// Why `onnx` cannot parse its data, when it cannot.
    pub(super) fn problem(&self) -> Option<&str> {
        match &self.values {
            Values::Invalid(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether it is of element type `dt`.
    pub(super) fn is(&self, dt: DataType) -> bool {
        self.elem == dt.to_i32()
    }
}

/// Why `onnx`'s `ParseData` refuses the data of `t` (of a type it parses), past the
/// element type check: external data, a dimension product it cannot take, or not as
/// many values as the dims say. Payloads a lazy load left on disk are not judged.
fn parse_problem(t: &TensorProto<'_>) -> Option<String> {
    let name = t.name();
    if t.is_external() {
        return Some(format!(
            "Cannot parse data from external tensors. Please load external data into raw data for tensor: {name}"
        ));
    }
    if t.raw_data.is_none() && t.lazy_data.is_some() {
        return None;
    }
    let mut count: i64 = 1;
    for &d in &t.dims {
        if d < 0 {
            return Some(format!("Negative dimension value for tensor: {name}"));
        }
        count = match count.checked_mul(d) {
            Some(c) => c,
            None => {
                return Some(format!(
                    "Tensor dimension product overflow for tensor: {name}"
                ))
            }
        };
    }
    let (held, size) = match t.elem_type() {
        Some(DataType::Int64) => (t.int64_data.len(), 8),
        Some(DataType::Int32) => (t.int32_data.len(), 4),
        Some(DataType::Float) => (t.float_data.len(), 4),
        _ => (t.double_data.len(), 8),
    };
    match &t.raw_data {
        None if held as i64 != count => Some(format!(
            "Data size mismatch. Tensor: {name} expected num elements {count} does not match the actual num elements {held}"
        )),
        None => None,
        Some(raw) => {
            let len = raw.len();
            (len % size != 0 || (len / size) as i64 != count).then(|| {
                format!(
                    "Data size mismatch. Tensor: {name} has {len} bytes of raw_data for {count} elements of size {size}"
                )
            })
        }
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
