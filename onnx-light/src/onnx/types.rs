//! `TypeProto` and `TensorShapeProto`: the types and shapes of graph values, and their
//! ONNX text notation (`float[batch,3,224,224]`, `seq(int64[?])`), as `onnx.printer`
//! writes it.

use std::fmt;

use crate::field::{Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage, ProtoOneof};

use super::DataType;

/// One dimension of a shape: a number, a symbolic name, or unknown.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TensorShapeProto.Dimension")]
pub struct Dimension<'a> {
    #[proto(oneof(1, 2))]
    pub value: Option<DimensionValue<'a>>,
    #[proto(3)]
    pub denotation: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// The `value` oneof of [`Dimension`].
#[derive(ProtoOneof, Debug, Clone, PartialEq)]
pub enum DimensionValue<'a> {
    #[proto(1)]
    DimValue(i64),
    #[proto(2)]
    DimParam(Str<'a>),
}

impl<'a> Dimension<'a> {
    /// A fixed size.
    pub fn value(n: i64) -> Self {
        Dimension {
            value: Some(DimensionValue::DimValue(n)),
            ..Dimension::default()
        }
    }

    /// A symbolic size, e.g. `"batch"`.
    pub fn param(name: impl Into<Str<'a>>) -> Self {
        Dimension {
            value: Some(DimensionValue::DimParam(name.into())),
            ..Dimension::default()
        }
    }

    /// An unknown size (neither value nor name), printed `?`.
    pub fn unknown() -> Self {
        Dimension::default()
    }

    /// The fixed size, if this dimension has one.
    pub fn as_value(&self) -> Option<i64> {
        match self.value {
            Some(DimensionValue::DimValue(n)) => Some(n),
            _ => None,
        }
    }

    /// The symbolic name, if this dimension has one.
    pub fn as_param(&self) -> Option<&str> {
        match &self.value {
            Some(DimensionValue::DimParam(s)) => Some(s),
            _ => None,
        }
    }
}

/// A fixed size: `Dimension::from(3)`.
impl From<i64> for Dimension<'_> {
    fn from(n: i64) -> Self {
        Dimension::value(n)
    }
}

/// A fixed size, so that `&[i64]` and `&Vec<i64>` give dimensions.
impl From<&i64> for Dimension<'_> {
    fn from(n: &i64) -> Self {
        Dimension::value(*n)
    }
}

/// A fixed size; integer literals without a suffix are `i32`, so `[1, 3]` gives dimensions.
impl From<i32> for Dimension<'_> {
    fn from(n: i32) -> Self {
        Dimension::value(i64::from(n))
    }
}

/// A fixed size (see `From<i32>`).
impl From<&i32> for Dimension<'_> {
    fn from(n: &i32) -> Self {
        Dimension::value(i64::from(*n))
    }
}

/// A symbolic size: `Dimension::from("batch")`.
impl<'a> From<&'a str> for Dimension<'a> {
    fn from(name: &'a str) -> Self {
        Dimension::param(name)
    }
}

/// A symbolic size.
impl From<String> for Dimension<'_> {
    fn from(name: String) -> Self {
        Dimension::param(name)
    }
}

/// A symbolic size.
impl<'a> From<Str<'a>> for Dimension<'a> {
    fn from(name: Str<'a>) -> Self {
        Dimension::param(name)
    }
}

/// A fixed size for `Some`, unknown (`?`) for `None`, as `onnx.helper` reads `None`.
impl<'a, D: Into<Dimension<'a>>> From<Option<D>> for Dimension<'a> {
    fn from(d: Option<D>) -> Self {
        d.map_or_else(Dimension::unknown, Into::into)
    }
}

/// The dimension as `onnx.printer` writes it: the size, the name (in double quotes, `\`
/// and `"` escaped, unless it is an identifier: `batch`, `"batch size"`), or `?`.
impl fmt::Display for Dimension<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(DimensionValue::DimValue(n)) => write!(f, "{n}"),
            Some(DimensionValue::DimParam(s)) if is_identifier(s) => f.write_str(s),
            Some(DimensionValue::DimParam(s)) => {
                f.write_str("\"")?;
                for c in s.chars() {
                    if c == '\\' || c == '"' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")
            }
            None => f.write_str("?"),
        }
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what the text format writes without quotes.
fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A tensor shape: a list of dimensions.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TensorShapeProto")]
pub struct TensorShapeProto<'a> {
    #[proto(1)]
    pub dim: Vec<Dimension<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> TensorShapeProto<'a> {
    /// A shape of fixed sizes.
    pub fn from_dims(dims: &[i64]) -> Self {
        Self::new(dims)
    }

    /// A shape of fixed, symbolic or unknown dimensions: anything that converts into a
    /// [`Dimension`] (`i64`, `&str`, `Option<i64>`, a `Dimension`...).
    ///
    /// ```
    /// use onnx_light::onnx::{Dimension, TensorShapeProto};
    ///
    /// let shape = TensorShapeProto::new([Dimension::param("batch"), 3.into(), Dimension::unknown()]);
    /// assert_eq!(shape.to_string(), "[batch,3,?]");
    /// assert_eq!(TensorShapeProto::new(["n", "m"]).to_string(), "[n,m]");
    /// ```
    pub fn new<D: Into<Dimension<'a>>>(dims: impl IntoIterator<Item = D>) -> Self {
        TensorShapeProto {
            dim: dims.into_iter().map(Into::into).collect(),
            ..TensorShapeProto::default()
        }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.dim.len()
    }

    /// The fixed sizes, `None` for each symbolic or unknown dimension.
    pub fn dim_values(&self) -> Vec<Option<i64>> {
        self.dim.iter().map(Dimension::as_value).collect()
    }
}

/// The shape in ONNX notation: `[batch,3,224,224]`, `?` for an unknown dimension,
/// `[]` for a scalar.
impl fmt::Display for TensorShapeProto<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.dim.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// The type of a value in a graph (`TypeProto`).
#[derive(ProtoMessage, Default)]
#[proto(name = "onnx.TypeProto", nests)]
pub struct TypeProto<'a> {
    #[proto(oneof(1, 4, 5, 7, 8, 9))]
    pub value: Option<TypeValue<'a>>,
    #[proto(6)]
    pub denotation: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

super::deep::stack_guarded!(TypeProto {
    value,
    denotation,
    unknown_fields
});

/// The `value` oneof of [`TypeProto`].
#[derive(ProtoOneof, Debug, Clone, PartialEq)]
pub enum TypeValue<'a> {
    #[proto(1)]
    TensorType(TypeProtoTensor<'a>),
    #[proto(4)]
    SequenceType(Box<TypeProtoSequence<'a>>),
    #[proto(5)]
    MapType(Box<TypeProtoMap<'a>>),
    #[proto(7)]
    OpaqueType(TypeProtoOpaque<'a>),
    #[proto(8)]
    SparseTensorType(TypeProtoSparseTensor<'a>),
    #[proto(9)]
    OptionalType(Box<TypeProtoOptional<'a>>),
}

impl<'a> TypeProto<'a> {
    /// A tensor type with element type `elem_type` and `shape` (`None`: unknown rank).
    pub fn tensor(elem_type: DataType, shape: Option<TensorShapeProto<'a>>) -> Self {
        TypeProto {
            value: Some(TypeValue::TensorType(TypeProtoTensor {
                elem_type_raw: Some(elem_type.to_i32()),
                shape,
                ..TypeProtoTensor::default()
            })),
            ..TypeProto::default()
        }
    }

    /// The tensor type, if this is one.
    pub fn tensor_type(&self) -> Option<&TypeProtoTensor<'a>> {
        match &self.value {
            Some(TypeValue::TensorType(t)) => Some(t),
            _ => None,
        }
    }

    /// The element type of a tensor or sparse tensor type.
    pub fn elem_type(&self) -> Option<DataType> {
        match &self.value {
            Some(TypeValue::TensorType(t)) => t.elem_type(),
            Some(TypeValue::SparseTensorType(t)) => t.elem_type(),
            _ => None,
        }
    }

    /// The shape of a tensor or sparse tensor type, when it is known.
    pub fn shape(&self) -> Option<&TensorShapeProto<'a>> {
        match &self.value {
            Some(TypeValue::TensorType(t)) => t.shape.as_ref(),
            Some(TypeValue::SparseTensorType(t)) => t.shape.as_ref(),
            _ => None,
        }
    }
}

/// The type in ONNX notation, exactly as `onnx.printer` writes it: `float[batch,3]`,
/// `int64` (a scalar), `float[]` (unknown rank), `seq(float[?])`, `map(int64, float)`,
/// `optional(...)`, `sparse_tensor(...)`, `opaque(domain,name)`; an unset type is empty.
impl fmt::Display for TypeProto<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::deep::guarded(|| self.write_notation(f))
    }
}

impl TypeProto<'_> {
    fn write_notation(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            None => Ok(()),
            Some(TypeValue::TensorType(t)) => write_tensor(f, t.elem_type_raw(), &t.shape),
            Some(TypeValue::SparseTensorType(t)) => {
                f.write_str("sparse_tensor(")?;
                write_tensor(f, t.elem_type_raw(), &t.shape)?;
                f.write_str(")")
            }
            Some(TypeValue::SequenceType(s)) => write_nested(f, "seq", s.elem_type.as_deref()),
            Some(TypeValue::OptionalType(o)) => write_nested(f, "optional", o.elem_type.as_deref()),
            Some(TypeValue::MapType(m)) => {
                write!(f, "map({}, ", ElemName(m.key_type_raw()))?;
                write_nested(f, "", m.value_type.as_deref())
            }
            Some(TypeValue::OpaqueType(o)) => {
                f.write_str("opaque(")?;
                if !o.domain().is_empty() {
                    write!(f, "{},", o.domain())?;
                }
                write!(f, "{})", o.name())
            }
        }
    }
}

/// An element type number as the printer names it; unknown numbers are `undefined`.
struct ElemName(i32);

impl fmt::Display for ElemName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match DataType::from_i32(self.0) {
            Some(dt) => write!(f, "{dt}"),
            None => f.write_str("undefined"),
        }
    }
}

/// `elem[dims]`; a scalar shape prints no brackets and an unknown shape prints `[]`
/// (the printer's rule, which its parser reads back).
fn write_tensor(
    f: &mut fmt::Formatter<'_>,
    elem_type: i32,
    shape: &Option<TensorShapeProto<'_>>,
) -> fmt::Result {
    write!(f, "{}", ElemName(elem_type))?;
    match shape {
        None => f.write_str("[]"),
        Some(s) if s.dim.is_empty() => Ok(()),
        Some(s) => write!(f, "{s}"),
    }
}

/// `name(inner)` (an empty name writes only `inner)`, for a map's value).
fn write_nested(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    inner: Option<&TypeProto<'_>>,
) -> fmt::Result {
    if !name.is_empty() {
        write!(f, "{name}(")?;
    }
    if let Some(t) = inner {
        write!(f, "{t}")?;
    }
    f.write_str(")")
}

/// `TypeProto.Tensor`: a dense tensor's element type and shape.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Tensor")]
pub struct TypeProtoTensor<'a> {
    /// The [`DataType`] number as stored; [`elem_type`](Self::elem_type) gives the enum.
    #[proto(1, name = "elem_type")]
    pub elem_type_raw: Option<i32>,
    #[proto(2)]
    pub shape: Option<TensorShapeProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl TypeProtoTensor<'_> {
    /// The element type: `None` for a number this schema does not know; the raw
    /// number is [`elem_type_raw`](Self::elem_type_raw).
    pub fn elem_type(&self) -> Option<DataType> {
        DataType::from_i32(self.elem_type_raw())
    }
}

/// `TypeProto.Sequence`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Sequence")]
pub struct TypeProtoSequence<'a> {
    #[proto(1)]
    pub elem_type: Option<Box<TypeProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// `TypeProto.Map`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Map")]
pub struct TypeProtoMap<'a> {
    /// The [`DataType`] number as stored; [`key_type`](Self::key_type) gives the enum.
    #[proto(1, name = "key_type")]
    pub key_type_raw: Option<i32>,
    #[proto(2)]
    pub value_type: Option<Box<TypeProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl TypeProtoMap<'_> {
    /// The key type: `None` for a number this schema does not know; the raw
    /// number is [`key_type_raw`](Self::key_type_raw).
    pub fn key_type(&self) -> Option<DataType> {
        DataType::from_i32(self.key_type_raw())
    }
}

/// `TypeProto.Optional`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Optional")]
pub struct TypeProtoOptional<'a> {
    #[proto(1)]
    pub elem_type: Option<Box<TypeProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// `TypeProto.SparseTensor`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.SparseTensor")]
pub struct TypeProtoSparseTensor<'a> {
    /// The [`DataType`] number as stored; [`elem_type`](Self::elem_type) gives the enum.
    #[proto(1, name = "elem_type")]
    pub elem_type_raw: Option<i32>,
    #[proto(2)]
    pub shape: Option<TensorShapeProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl TypeProtoSparseTensor<'_> {
    /// The element type: `None` for a number this schema does not know; the raw
    /// number is [`elem_type_raw`](Self::elem_type_raw).
    pub fn elem_type(&self) -> Option<DataType> {
        DataType::from_i32(self.elem_type_raw())
    }
}

/// `TypeProto.Opaque`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Opaque")]
pub struct TypeProtoOpaque<'a> {
    #[proto(1)]
    pub domain: Option<Str<'a>>,
    #[proto(2)]
    pub name: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(elem: i32, shape: Option<TensorShapeProto<'static>>) -> TypeProto<'static> {
        TypeProto {
            value: Some(TypeValue::TensorType(TypeProtoTensor {
                elem_type_raw: Some(elem),
                shape,
                ..TypeProtoTensor::default()
            })),
            ..TypeProto::default()
        }
    }

    fn wrap(value: TypeValue<'static>) -> TypeProto<'static> {
        TypeProto {
            value: Some(value),
            ..TypeProto::default()
        }
    }

    /// Expected strings are `onnx.printer`'s output (onnx 1.23) for the same types.
    #[test]
    fn types_print_as_onnx_printer_prints_them() {
        let float_unknown = tensor(1, Some(TensorShapeProto::new([None::<i64>])));
        let seq = wrap(TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(float_unknown.clone())),
            ..TypeProtoSequence::default()
        })));
        let cases = [
            (
                TypeProto::tensor(
                    DataType::Float,
                    Some(TensorShapeProto::new([
                        Dimension::param("batch"),
                        3.into(),
                        224.into(),
                        224.into(),
                    ])),
                ),
                "float[batch,3,224,224]",
            ),
            (tensor(7, None), "int64[]"),
            (tensor(16, Some(TensorShapeProto::default())), "bfloat16"),
            (tensor(1, Some(TensorShapeProto::new([-1]))), "float[-1]"),
            (
                tensor(
                    1,
                    Some(TensorShapeProto::new(["batch size", "3", "a\"b", "_x1"])),
                ),
                r#"float["batch size","3","a\"b",_x1]"#,
            ),
            (
                tensor(99, Some(TensorShapeProto::new([None::<i64>]))),
                "undefined[?]",
            ),
            (tensor(0, None), "undefined[]"),
            (seq.clone(), "seq(float[?])"),
            (
                wrap(TypeValue::MapType(Box::new(TypeProtoMap {
                    key_type_raw: Some(7),
                    value_type: Some(Box::new(tensor(1, Some(TensorShapeProto::default())))),
                    ..TypeProtoMap::default()
                }))),
                "map(int64, float)",
            ),
            (wrap(TypeValue::MapType(Box::default())), "map(undefined, )"),
            (
                wrap(TypeValue::OptionalType(Box::new(TypeProtoOptional {
                    elem_type: Some(Box::new(seq)),
                    ..TypeProtoOptional::default()
                }))),
                "optional(seq(float[?]))",
            ),
            (wrap(TypeValue::SequenceType(Box::default())), "seq()"),
            (
                wrap(TypeValue::SparseTensorType(TypeProtoSparseTensor {
                    elem_type_raw: Some(17),
                    shape: Some(TensorShapeProto::new([Dimension::value(10), "n".into()])),
                    ..TypeProtoSparseTensor::default()
                })),
                "sparse_tensor(float8e4m3fn[10,n])",
            ),
            (
                wrap(TypeValue::OpaqueType(TypeProtoOpaque {
                    domain: Some("dom".into()),
                    name: Some("nm".into()),
                    ..TypeProtoOpaque::default()
                })),
                "opaque(dom,nm)",
            ),
            (
                wrap(TypeValue::OpaqueType(TypeProtoOpaque {
                    name: Some("nm".into()),
                    ..TypeProtoOpaque::default()
                })),
                "opaque(nm)",
            ),
            (TypeProto::default(), ""),
        ];
        for (t, expected) in cases {
            assert_eq!(t.to_string(), expected, "{t:?}");
        }
    }

    #[test]
    fn every_data_type_prints_its_lowercase_protobuf_name() {
        for &(name, n) in <DataType as ProtoEnum>::VALUES {
            let dt = DataType::from_i32(n).unwrap();
            assert_eq!(dt.to_string(), name.to_ascii_lowercase());
        }
        assert_eq!(format!("{:>7}", DataType::Int8), "   int8");
    }

    #[test]
    fn dimensions_convert_from_sizes_names_and_none() {
        let shape = TensorShapeProto::new([Dimension::from(2i64), "n".into(), None::<i64>.into()]);
        assert_eq!(shape.to_string(), "[2,n,?]");
        assert_eq!(shape.rank(), 3);
        assert_eq!(shape.dim_values(), [Some(2), None, None]);
        assert_eq!(shape.dim[1].as_param(), Some("n"));
        assert_eq!(
            TensorShapeProto::from_dims(&[1, 3]),
            TensorShapeProto::new([1, 3])
        );
        assert_eq!(TensorShapeProto::default().to_string(), "[]");
    }
}
