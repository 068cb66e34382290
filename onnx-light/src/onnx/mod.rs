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
#![allow(missing_docs)] // field and enum value names are the ONNX schema's own

mod attribute;
mod data;
mod enums;
mod graph;
mod model;
mod tensor;
mod types;
mod walk;

pub use attribute::{AttributeProto, AttributeType};
pub use data::{
    MapProto, OperatorProto, OperatorSetProto, OptionalDataType, OptionalProto, SequenceDataType,
    SequenceProto,
};
pub use enums::UnknownEnumValue;
pub use graph::{
    GraphProto, IntIntListEntryProto, NodeDeviceConfigurationProto, NodeProto, ShardedDimProto,
    ShardingSpecProto, SimpleShardedDim, SimpleShardedDimProto, TensorAnnotation, ValueInfoProto,
};
pub use model::{
    DeviceConfigurationProto, FunctionProto, ModelProto, OperatorSetIdProto, OperatorStatus,
    StringStringEntryProto, TrainingInfoProto, Version, IR_VERSION,
};
pub use tensor::{DataLocation, DataType, Segment, SparseTensorProto, TensorProto};
pub use types::{
    Dimension, DimensionValue, TensorShapeProto, TypeProto, TypeProtoMap, TypeProtoOpaque,
    TypeProtoOptional, TypeProtoSequence, TypeProtoSparseTensor, TypeProtoTensor, TypeValue,
};
pub use walk::TensorSite;

use crate::descriptor::MessageDescriptor;
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
