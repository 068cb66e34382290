//! `ModelProto` and the messages only models hold: opset imports, metadata, training
//! information, functions, device configurations; the `Version` and `OperatorStatus`
//! enums.

use crate::field::{Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage};

use super::{AttributeProto, GraphProto, NodeProto, StringStringEntryProto, ValueInfoProto};

/// IR versions of the ONNX format (`onnx.Version`).
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.Version")]
pub enum Version {
    #[proto(name = "_START_VERSION")]
    StartVersion = 0,
    #[proto(name = "IR_VERSION_2017_10_10")]
    IrVersion2017_10_10 = 1,
    #[proto(name = "IR_VERSION_2017_10_30")]
    IrVersion2017_10_30 = 2,
    #[proto(name = "IR_VERSION_2017_11_3")]
    IrVersion2017_11_3 = 3,
    #[proto(name = "IR_VERSION_2019_1_22")]
    IrVersion2019_1_22 = 4,
    #[proto(name = "IR_VERSION_2019_3_18")]
    IrVersion2019_3_18 = 5,
    #[proto(name = "IR_VERSION_2019_9_19")]
    IrVersion2019_9_19 = 6,
    #[proto(name = "IR_VERSION_2020_5_8")]
    IrVersion2020_5_8 = 7,
    #[proto(name = "IR_VERSION_2021_7_30")]
    IrVersion2021_7_30 = 8,
    #[proto(name = "IR_VERSION_2023_5_5")]
    IrVersion2023_5_5 = 9,
    #[proto(name = "IR_VERSION_2024_3_25")]
    IrVersion2024_3_25 = 10,
    #[proto(name = "IR_VERSION_2025_05_12")]
    IrVersion2025_05_12 = 11,
    #[proto(name = "IR_VERSION_2025_08_26")]
    IrVersion2025_08_26 = 12,
    #[proto(name = "IR_VERSION_2025_11_06")]
    IrVersion2025_11_06 = 13,
    #[proto(name = "IR_VERSION")]
    IrVersion = 14,
}

/// The IR version this crate's types follow (onnx 1.23).
pub const IR_VERSION: i64 = 14;

/// Maturity of an operator in an operator set.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.OperatorStatus")]
pub enum OperatorStatus {
    Experimental = 0,
    Stable = 1,
}

/// An operator set a model or function uses: a domain (empty = `ai.onnx`) and version.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.OperatorSetIdProto")]
pub struct OperatorSetIdProto<'a> {
    #[proto(1)]
    pub domain: Option<Str<'a>>,
    #[proto(2)]
    pub version: Option<i64>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> OperatorSetIdProto<'a> {
    /// An opset import.
    pub fn new(domain: impl Into<Str<'a>>, version: i64) -> Self {
        OperatorSetIdProto {
            domain: Some(domain.into()),
            version: Some(version),
            ..OperatorSetIdProto::default()
        }
    }
}

/// Training information: an initialization graph and an update algorithm.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TrainingInfoProto")]
pub struct TrainingInfoProto<'a> {
    #[proto(1)]
    pub initialization: Option<GraphProto<'a>>,
    #[proto(2)]
    pub algorithm: Option<GraphProto<'a>>,
    #[proto(3)]
    pub initialization_binding: Vec<StringStringEntryProto<'a>>,
    #[proto(4)]
    pub update_binding: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A model-local function: a named subgraph usable as an operator.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.FunctionProto")]
pub struct FunctionProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(4)]
    pub input: Vec<Str<'a>>,
    #[proto(5)]
    pub output: Vec<Str<'a>>,
    #[proto(6)]
    pub attribute: Vec<Str<'a>>,
    #[proto(7, parallel)]
    pub node: Vec<NodeProto<'a>>,
    #[proto(8)]
    pub doc_string: Option<Str<'a>>,
    #[proto(9)]
    pub opset_import: Vec<OperatorSetIdProto<'a>>,
    #[proto(10)]
    pub domain: Option<Str<'a>>,
    #[proto(11)]
    pub attribute_proto: Vec<AttributeProto<'a>>,
    #[proto(12)]
    pub value_info: Vec<ValueInfoProto<'a>>,
    #[proto(13)]
    pub overload: Option<Str<'a>>,
    #[proto(14)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A named set of devices a model may be distributed over.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.DeviceConfigurationProto")]
pub struct DeviceConfigurationProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(2)]
    pub num_devices: Option<i32>,
    #[proto(3)]
    pub device: Vec<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// An ONNX model: the top-level message of a `.onnx` file.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.ModelProto")]
pub struct ModelProto<'a> {
    #[proto(1)]
    pub ir_version: Option<i64>,
    #[proto(2)]
    pub producer_name: Option<Str<'a>>,
    #[proto(3)]
    pub producer_version: Option<Str<'a>>,
    #[proto(4)]
    pub domain: Option<Str<'a>>,
    #[proto(5)]
    pub model_version: Option<i64>,
    #[proto(6)]
    pub doc_string: Option<Str<'a>>,
    #[proto(7)]
    pub graph: Option<GraphProto<'a>>,
    #[proto(8)]
    pub opset_import: Vec<OperatorSetIdProto<'a>>,
    #[proto(14)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(20)]
    pub training_info: Vec<TrainingInfoProto<'a>>,
    #[proto(25)]
    pub functions: Vec<FunctionProto<'a>>,
    #[proto(26)]
    pub configuration: Vec<DeviceConfigurationProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> ModelProto<'a> {
    /// A model of the current IR version holding `graph`, importing `opsets`.
    pub fn new(graph: GraphProto<'a>, opsets: Vec<OperatorSetIdProto<'a>>) -> Self {
        ModelProto {
            ir_version: Some(IR_VERSION),
            graph: Some(graph),
            opset_import: opsets,
            ..ModelProto::default()
        }
    }
}
