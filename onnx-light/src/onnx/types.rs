//! `TypeProto` and `TensorShapeProto`: the types and shapes of graph values.

use crate::field::{Str, UnknownFields};
use crate::{ProtoMessage, ProtoOneof};

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
        TensorShapeProto {
            dim: dims.iter().map(|&d| Dimension::value(d)).collect(),
            ..TensorShapeProto::default()
        }
    }
}

/// The type of a value in a graph (`TypeProto`).
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto")]
pub struct TypeProto<'a> {
    #[proto(oneof(1, 4, 5, 7, 8, 9))]
    pub value: Option<TypeValue<'a>>,
    #[proto(6)]
    pub denotation: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

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
    /// A tensor type with element type `elem_type` (a `DataType` value) and `shape`.
    pub fn tensor(elem_type: super::DataType, shape: Option<TensorShapeProto<'a>>) -> Self {
        use crate::ProtoEnum;
        TypeProto {
            value: Some(TypeValue::TensorType(TypeProtoTensor {
                elem_type: Some(elem_type.to_i32()),
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
}

/// `TypeProto.Tensor`: a dense tensor's element type and shape.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TypeProto.Tensor")]
pub struct TypeProtoTensor<'a> {
    #[proto(1)]
    pub elem_type: Option<i32>,
    #[proto(2)]
    pub shape: Option<TensorShapeProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
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
    #[proto(1)]
    pub key_type: Option<i32>,
    #[proto(2)]
    pub value_type: Option<Box<TypeProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
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
    #[proto(1)]
    pub elem_type: Option<i32>,
    #[proto(2)]
    pub shape: Option<TensorShapeProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
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
