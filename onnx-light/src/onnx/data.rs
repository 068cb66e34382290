//! The data schema (`onnx-data.proto`): sequences, maps and optionals of tensors, as
//! used by test data and by non-tensor graph values.

use crate::field::{Bytes, Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage};

use super::{DataType, SparseTensorProto, TensorProto};

/// What a [`SequenceProto`] holds.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.SequenceProto.DataType")]
pub enum SequenceDataType {
    Undefined = 0,
    Tensor = 1,
    SparseTensor = 2,
    Sequence = 3,
    Map = 4,
    Optional = 5,
}

/// What an [`OptionalProto`] holds.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.OptionalProto.DataType")]
pub enum OptionalDataType {
    Undefined = 0,
    Tensor = 1,
    SparseTensor = 2,
    Sequence = 3,
    Map = 4,
    Optional = 5,
}

/// A sequence of values of one kind.
#[derive(ProtoMessage, Default)]
#[proto(name = "onnx.SequenceProto", nests)]
pub struct SequenceProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// The [`SequenceDataType`] number as stored (declared `int32` in the schema);
    /// [`elem_type`](Self::elem_type) gives the enum.
    #[proto(2, name = "elem_type")]
    pub elem_type_raw: Option<i32>,
    #[proto(3)]
    pub tensor_values: Vec<TensorProto<'a>>,
    #[proto(4)]
    pub sparse_tensor_values: Vec<SparseTensorProto<'a>>,
    #[proto(5)]
    pub sequence_values: Vec<SequenceProto<'a>>,
    #[proto(6)]
    pub map_values: Vec<MapProto<'a>>,
    #[proto(7)]
    pub optional_values: Vec<OptionalProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

super::deep::stack_guarded!(SequenceProto {
    name,
    elem_type_raw,
    tensor_values,
    sparse_tensor_values,
    sequence_values,
    map_values,
    optional_values,
    unknown_fields
});

/// A map from integer or string keys to a sequence of values.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.MapProto")]
pub struct MapProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// The [`DataType`] number of the keys as stored (declared `int32` in the
    /// schema); [`key_type`](Self::key_type) gives the enum.
    #[proto(2, name = "key_type")]
    pub key_type_raw: Option<i32>,
    #[proto(3)]
    pub keys: Vec<i64>,
    #[proto(4)]
    pub string_keys: Vec<Bytes<'a>>,
    #[proto(5)]
    pub values: Option<Box<SequenceProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl SequenceProto<'_> {
    /// What the sequence holds: `None` for a number this schema does not know; the raw
    /// number is [`elem_type_raw`](Self::elem_type_raw).
    pub fn elem_type(&self) -> Option<SequenceDataType> {
        SequenceDataType::from_i32(self.elem_type_raw())
    }
}

impl MapProto<'_> {
    /// The type of the keys: `None` for a number this schema does not know; the raw
    /// number is [`key_type_raw`](Self::key_type_raw).
    pub fn key_type(&self) -> Option<DataType> {
        DataType::from_i32(self.key_type_raw())
    }
}

/// A value that may be absent.
#[derive(ProtoMessage, Default)]
#[proto(name = "onnx.OptionalProto", nests)]
pub struct OptionalProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// The [`OptionalDataType`] number as stored (declared `int32` in the schema);
    /// [`elem_type`](Self::elem_type) gives the enum.
    #[proto(2, name = "elem_type")]
    pub elem_type_raw: Option<i32>,
    #[proto(3)]
    pub tensor_value: Option<TensorProto<'a>>,
    #[proto(4)]
    pub sparse_tensor_value: Option<SparseTensorProto<'a>>,
    #[proto(5)]
    pub sequence_value: Option<Box<SequenceProto<'a>>>,
    #[proto(6)]
    pub map_value: Option<Box<MapProto<'a>>>,
    #[proto(7)]
    pub optional_value: Option<Box<OptionalProto<'a>>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

super::deep::stack_guarded!(OptionalProto {
    name,
    elem_type_raw,
    tensor_value,
    sparse_tensor_value,
    sequence_value,
    map_value,
    optional_value,
    unknown_fields
});

impl OptionalProto<'_> {
    /// What the optional holds: `None` for a number this schema does not know; the raw
    /// number is [`elem_type_raw`](Self::elem_type_raw).
    pub fn elem_type(&self) -> Option<OptionalDataType> {
        OptionalDataType::from_i32(self.elem_type_raw())
    }
}

/// The operator schema (`onnx-operators.proto`): operator sets as published by ONNX.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.OperatorProto")]
pub struct OperatorProto<'a> {
    #[proto(1)]
    pub op_type: Option<Str<'a>>,
    #[proto(2)]
    pub since_version: Option<i64>,
    #[proto(3)]
    pub status: Option<crate::field::EnumValue<super::OperatorStatus>>,
    #[proto(10)]
    pub doc_string: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A published operator set.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.OperatorSetProto")]
pub struct OperatorSetProto<'a> {
    #[proto(1)]
    pub magic: Option<Str<'a>>,
    #[proto(2)]
    pub ir_version: Option<i64>,
    #[proto(3)]
    pub ir_version_prerelease: Option<Str<'a>>,
    #[proto(4)]
    pub domain: Option<Str<'a>>,
    #[proto(5)]
    pub opset_version: Option<i64>,
    #[proto(6)]
    pub doc_string: Option<Str<'a>>,
    #[proto(7)]
    pub ir_build_metadata: Option<Str<'a>>,
    #[proto(8)]
    pub operator: Vec<OperatorProto<'a>>,
    #[proto(9)]
    pub functions: Vec<super::FunctionProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}
