//! The ONNX schema as Rust types (onnx 1.23, IR version 14), declared with
//! `#[derive(ProtoMessage)]`: every message of `onnx-ml.proto`, `onnx-data.proto` and
//! `onnx-operators-ml.proto`, and every enum.
//!
//! Each message is one type with a lifetime: `ModelProto<'a>` decoded in borrow mode
//! borrows strings and weights from the input; [`Model`] (`ModelProto<'static>`) owns
//! or shares them. Every message keeps unknown fields and writes them back, so a model
//! written by a newer ONNX survives a round trip. Nested messages of the schema are named
//! after their parent (`TensorProto.Segment` is [`Segment`], `TypeProto.Tensor` is
//! [`TypeProtoTensor`]).
//!
//! The field names and meanings are ONNX's; see the ONNX IR specification. This module
//! knows nothing of files: loading and saving live elsewhere.
//!
//! ```
//! use onnx_light::onnx::*;
//! use onnx_light::prelude::*;
//!
//! let weights = TensorProto::from_raw("w", DataType::Float, [2, 2], vec![0u8; 16]);
//! let mut graph = GraphProto::named("g");
//! graph.node.push(NodeProto::new("MatMul", ["x", "w"], ["y"]).with_name("mm"));
//! graph.initializer.push(weights);
//! graph.input.push(ValueInfoProto::tensor("x", DataType::Float, [1, 2]));
//! graph.output.push(ValueInfoProto::tensor("y", DataType::Float, [1, 2]));
//! let model = ModelProto::new(graph, vec![OperatorSetIdProto::new("", 21)]);
//!
//! let bytes = model.encode_to_vec()?;
//! let view = ModelProto::decode(&bytes)?;       // borrows `bytes`
//! assert_eq!(view.tensors().len(), 1);
//! assert_eq!(view, model);
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! # Comparing strings
//!
//! A string field is an `Option<Str>` (set or unset, as in protobuf), so
//! `node.op_type == "Conv"` does not compile: Rust's coherence rules forbid comparing
//! `Option<Str>` with `&str`. Every such field has an accessor of the same name that
//! returns `&str` (the protobuf default, `""`, when unset) — compare that. A [`Str`]
//! compares with `str`, `&str`, `String` and `Cow<str>` both ways, which covers repeated
//! fields; `as_deref()` tells "unset" from "empty" when that matters.
//!
//! ```
//! use onnx_light::onnx::NodeProto;
//!
//! let node = NodeProto::new("Conv", ["x", "w"], ["y"]);
//! assert!(node.op_type() == "Conv");                // the idiom
//! assert!(node.input[1] == "w" && "y" == node.output[0]);
//! assert_eq!(node.op_type.as_deref(), Some("Conv")); // presence-aware
//! assert_eq!(node.domain(), "");                     // unset reads as ""
//! assert_eq!(node.domain, None);
//! ```
//!
//! # Enum values
//!
//! Fields the schema declares as enums hold an [`EnumValue`](crate::EnumValue) (any
//! number survives a round trip). Fields the schema declares as `int32` but that carry
//! an enum's numbers (`TensorProto.data_type`, `TypeProto.Tensor.elem_type`,
//! `TypeProto.Map.key_type`, ...) keep the raw number in the public field
//! (`data_type`, `elem_type_raw`, `key_type_raw`) and have a typed accessor,
//! `elem_type()` / `key_type()`, returning `Option<DataType>` (or the
//! [`SequenceDataType`] / [`OptionalDataType`]): `None` for a number this schema does
//! not know. Every enum converts with `TryFrom<i32>` and `i32::from`.
//!
//! # Types and shapes as text
//!
//! [`DataType`], [`TensorShapeProto`] and [`TypeProto`] display in the notation of
//! `onnx.printer`:
//!
//! ```
//! use onnx_light::onnx::{DataType, Dimension, ValueInfoProto};
//!
//! let dims = [Dimension::from("batch"), 3.into(), 224.into(), 224.into()];
//! let x = ValueInfoProto::tensor("x", DataType::Float, dims);
//! assert_eq!(x.r#type.as_ref().unwrap().to_string(), "float[batch,3,224,224]");
//! assert_eq!(x.shape().unwrap().to_string(), "[batch,3,224,224]");
//! assert_eq!(DataType::try_from(16).map(|t| t.to_string()), Ok("bfloat16".into()));
//! ```
//!
//! Weights are read with [`TensorProto::values`] and edited with
//! [`TensorProto::values_mut`] or replaced with [`TensorProto::set_values`] (see
//! [`crate::tensor`]).
#![allow(missing_docs)] // field and enum value names are the ONNX schema's own

mod data;
pub(crate) mod deep;
mod entry;
mod enums;
mod graph;
mod model;
mod tensor;
mod types;
mod walk;

pub use data::{
    MapProto, OperatorProto, OperatorSetProto, OptionalDataType, OptionalProto, SequenceDataType,
    SequenceProto,
};
#[doc(hidden)]
pub use deep::guarded;
pub use entry::StringStringEntryProto;
pub use enums::UnknownEnumValue;
pub use graph::{
    AttributeProto, AttributeType, GraphProto, IntIntListEntryProto, NodeDeviceConfigurationProto,
    NodeProto, ShardedDimProto, ShardingSpecProto, SimpleShardedDim, SimpleShardedDimProto,
    TensorAnnotation, ValueInfoProto,
};
pub use model::{
    DeviceConfigurationProto, FunctionProto, ModelProto, OperatorSetIdProto, OperatorStatus,
    TrainingInfoProto, Version, IR_VERSION,
};
pub use tensor::{DataLocation, DataType, Segment, SparseTensorProto, TensorProto};
pub use types::{
    Dimension, DimensionValue, TensorShapeProto, TypeProto, TypeProtoMap, TypeProtoOpaque,
    TypeProtoOptional, TypeProtoSequence, TypeProtoSparseTensor, TypeProtoTensor, TypeValue,
};
pub use walk::TensorSite;

use crate::descriptor::MessageDescriptor;
#[cfg(doc)]
use crate::field::Str;
use crate::message::Message;
use crate::ProtoEnum;

/// An owned model: every string and payload owned or shared, no borrow.
pub type Model = ModelProto<'static>;
/// An owned tensor.
pub type Tensor = TensorProto<'static>;
/// An owned graph.
pub type Graph = GraphProto<'static>;

/// The descriptor of every message type of the schema (for schema checks and tools).
pub fn message_descriptors() -> Vec<&'static MessageDescriptor> {
    vec![
        AttributeProto::DESCRIPTOR,
        ValueInfoProto::DESCRIPTOR,
        NodeProto::DESCRIPTOR,
        IntIntListEntryProto::DESCRIPTOR,
        NodeDeviceConfigurationProto::DESCRIPTOR,
        ShardingSpecProto::DESCRIPTOR,
        ShardedDimProto::DESCRIPTOR,
        SimpleShardedDimProto::DESCRIPTOR,
        TrainingInfoProto::DESCRIPTOR,
        ModelProto::DESCRIPTOR,
        DeviceConfigurationProto::DESCRIPTOR,
        StringStringEntryProto::DESCRIPTOR,
        TensorAnnotation::DESCRIPTOR,
        GraphProto::DESCRIPTOR,
        TensorProto::DESCRIPTOR,
        Segment::DESCRIPTOR,
        SparseTensorProto::DESCRIPTOR,
        TensorShapeProto::DESCRIPTOR,
        Dimension::DESCRIPTOR,
        TypeProto::DESCRIPTOR,
        TypeProtoTensor::DESCRIPTOR,
        TypeProtoSequence::DESCRIPTOR,
        TypeProtoMap::DESCRIPTOR,
        TypeProtoOptional::DESCRIPTOR,
        TypeProtoSparseTensor::DESCRIPTOR,
        TypeProtoOpaque::DESCRIPTOR,
        OperatorSetIdProto::DESCRIPTOR,
        FunctionProto::DESCRIPTOR,
        SequenceProto::DESCRIPTOR,
        MapProto::DESCRIPTOR,
        OptionalProto::DESCRIPTOR,
        OperatorProto::DESCRIPTOR,
        OperatorSetProto::DESCRIPTOR,
    ]
}

/// An enum of the schema: its full name and `(value name, number)` pairs.
pub type EnumDescriptor = (&'static str, &'static [(&'static str, i32)]);

/// Every enum of the schema.
pub fn enum_descriptors() -> Vec<EnumDescriptor> {
    fn d<E: ProtoEnum>() -> EnumDescriptor {
        (E::NAME, E::VALUES)
    }
    vec![
        d::<Version>(),
        d::<OperatorStatus>(),
        d::<AttributeType>(),
        d::<DataType>(),
        d::<DataLocation>(),
        d::<SequenceDataType>(),
        d::<OptionalDataType>(),
    ]
}
