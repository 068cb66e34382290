//! `AttributeProto`: named constants attached to nodes (and defaults in functions).

use crate::field::{Bytes, EnumValue, Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage};

use super::{GraphProto, SparseTensorProto, TensorProto, TypeProto};

/// Which field of an [`AttributeProto`] holds its value.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.AttributeProto.AttributeType")]
pub enum AttributeType {
    Undefined = 0,
    Float = 1,
    Int = 2,
    String = 3,
    Tensor = 4,
    Graph = 5,
    SparseTensor = 11,
    TypeProto = 13,
    Floats = 6,
    Ints = 7,
    Strings = 8,
    Tensors = 9,
    Graphs = 10,
    SparseTensors = 12,
    TypeProtos = 14,
}

/// A named attribute value of a node.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.AttributeProto")]
pub struct AttributeProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(2)]
    pub f: Option<f32>,
    #[proto(3)]
    pub i: Option<i64>,
    #[proto(4)]
    pub s: Option<Bytes<'a>>,
    // The three large, rarely set message fields are boxed so that an attribute holding
    // an int costs a few hundred bytes, not two kilobytes.
    #[proto(5)]
    pub t: Option<Box<TensorProto<'a>>>,
    #[proto(6)]
    pub g: Option<Box<GraphProto<'a>>>,
    #[proto(7)]
    pub floats: Vec<f32>,
    #[proto(8)]
    pub ints: Vec<i64>,
    #[proto(9)]
    pub strings: Vec<Bytes<'a>>,
    #[proto(10)]
    pub tensors: Vec<TensorProto<'a>>,
    #[proto(11)]
    pub graphs: Vec<GraphProto<'a>>,
    #[proto(13)]
    pub doc_string: Option<Str<'a>>,
    #[proto(14)]
    pub tp: Option<Box<TypeProto<'a>>>,
    #[proto(15)]
    pub type_protos: Vec<TypeProto<'a>>,
    #[proto(20)]
    pub r#type: Option<EnumValue<AttributeType>>,
    #[proto(21)]
    pub ref_attr_name: Option<Str<'a>>,
    #[proto(22)]
    pub sparse_tensor: Option<Box<SparseTensorProto<'a>>>,
    #[proto(23)]
    pub sparse_tensors: Vec<SparseTensorProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> AttributeProto<'a> {
    fn named(name: impl Into<Str<'a>>, ty: AttributeType) -> Self {
        AttributeProto {
            name: Some(name.into()),
            r#type: Some(ty.into()),
            ..AttributeProto::default()
        }
    }

    /// A `FLOAT` attribute.
    pub fn float(name: impl Into<Str<'a>>, value: f32) -> Self {
        AttributeProto {
            f: Some(value),
            ..Self::named(name, AttributeType::Float)
        }
    }

    /// An `INT` attribute.
    pub fn int(name: impl Into<Str<'a>>, value: i64) -> Self {
        AttributeProto {
            i: Some(value),
            ..Self::named(name, AttributeType::Int)
        }
    }

    /// A `STRING` attribute.
    pub fn string(name: impl Into<Str<'a>>, value: impl Into<Bytes<'a>>) -> Self {
        AttributeProto {
            s: Some(value.into()),
            ..Self::named(name, AttributeType::String)
        }
    }

    /// A `TENSOR` attribute (e.g. the value of a `Constant` node).
    pub fn tensor(name: impl Into<Str<'a>>, value: TensorProto<'a>) -> Self {
        AttributeProto {
            t: Some(Box::new(value)),
            ..Self::named(name, AttributeType::Tensor)
        }
    }

    /// A `GRAPH` attribute (e.g. a branch of `If`).
    pub fn graph(name: impl Into<Str<'a>>, value: GraphProto<'a>) -> Self {
        AttributeProto {
            g: Some(Box::new(value)),
            ..Self::named(name, AttributeType::Graph)
        }
    }

    /// A `FLOATS` attribute.
    pub fn floats(name: impl Into<Str<'a>>, values: impl Into<Vec<f32>>) -> Self {
        AttributeProto {
            floats: values.into(),
            ..Self::named(name, AttributeType::Floats)
        }
    }

    /// An `INTS` attribute.
    pub fn ints(name: impl Into<Str<'a>>, values: impl Into<Vec<i64>>) -> Self {
        AttributeProto {
            ints: values.into(),
            ..Self::named(name, AttributeType::Ints)
        }
    }

    /// A `STRINGS` attribute.
    pub fn strings(name: impl Into<Str<'a>>, values: Vec<Bytes<'a>>) -> Self {
        AttributeProto {
            strings: values,
            ..Self::named(name, AttributeType::Strings)
        }
    }
}
