//! `GraphProto`, `NodeProto`, `AttributeProto`, `ValueInfoProto` and the node-placement
//! messages. They are one module because they are one recursion: a graph's nodes hold
//! attributes, and an attribute can hold graphs.

use crate::field::{Bytes, EnumValue, Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage, ProtoOneof};

use super::{
    DataType, Dimension, SparseTensorProto, StringStringEntryProto, TensorProto, TensorShapeProto,
    TypeProto,
};

/// A computation graph: nodes in topological order, its inputs and outputs, and the
/// constant tensors (initializers) it uses.
#[derive(ProtoMessage, Default)]
#[proto(name = "onnx.GraphProto", nests)]
pub struct GraphProto<'a> {
    #[proto(1, parallel)]
    pub node: Vec<NodeProto<'a>>,
    #[proto(2)]
    pub name: Option<Str<'a>>,
    #[proto(5, parallel)]
    pub initializer: Vec<TensorProto<'a>>,
    #[proto(10)]
    pub doc_string: Option<Str<'a>>,
    #[proto(11, parallel)]
    pub input: Vec<ValueInfoProto<'a>>,
    #[proto(12, parallel)]
    pub output: Vec<ValueInfoProto<'a>>,
    #[proto(13, parallel)]
    pub value_info: Vec<ValueInfoProto<'a>>,
    #[proto(14)]
    pub quantization_annotation: Vec<TensorAnnotation<'a>>,
    #[proto(15, parallel)]
    pub sparse_initializer: Vec<SparseTensorProto<'a>>,
    #[proto(16)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

super::deep::stack_guarded!(GraphProto {
    node,
    name,
    initializer,
    doc_string,
    input,
    output,
    value_info,
    quantization_annotation,
    sparse_initializer,
    metadata_props,
    unknown_fields
});

impl<'a> GraphProto<'a> {
    /// An empty graph with a name.
    pub fn named(name: impl Into<Str<'a>>) -> Self {
        GraphProto {
            name: Some(name.into()),
            ..GraphProto::default()
        }
    }

    /// The initializer called `name` (the first, if several are), by a scan of the
    /// list: build a map once for many lookups.
    ///
    /// ```
    /// use onnx_light::onnx::{GraphProto, TensorProto};
    ///
    /// let mut g = GraphProto::named("g");
    /// g.initializer.push(TensorProto::from_vec("w", [2], vec![1.0f32, 2.0])?);
    /// assert_eq!(g.initializer_by_name("w").map(|t| t.dims.clone()), Some(vec![2]));
    /// assert!(g.initializer_by_name("b").is_none());
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    pub fn initializer_by_name(&self, name: &str) -> Option<&TensorProto<'a>> {
        self.initializer.iter().find(|t| t.name() == name)
    }

    /// The initializer called `name`, to change it (see
    /// [`initializer_by_name`](Self::initializer_by_name)).
    pub fn initializer_by_name_mut(&mut self, name: &str) -> Option<&mut TensorProto<'a>> {
        self.initializer.iter_mut().find(|t| t.name() == name)
    }
}

/// One operator invocation.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.NodeProto")]
pub struct NodeProto<'a> {
    #[proto(1)]
    pub input: Vec<Str<'a>>,
    #[proto(2)]
    pub output: Vec<Str<'a>>,
    #[proto(3)]
    pub name: Option<Str<'a>>,
    #[proto(4)]
    pub op_type: Option<Str<'a>>,
    #[proto(5)]
    pub attribute: Vec<AttributeProto<'a>>,
    #[proto(6)]
    pub doc_string: Option<Str<'a>>,
    #[proto(7)]
    pub domain: Option<Str<'a>>,
    #[proto(8)]
    pub overload: Option<Str<'a>>,
    #[proto(9)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(10)]
    pub device_configurations: Vec<NodeDeviceConfigurationProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> NodeProto<'a> {
    /// A node of operator `op_type` reading `inputs` and writing `outputs`.
    pub fn new<I, O>(op_type: impl Into<Str<'a>>, inputs: I, outputs: O) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Str<'a>>,
        O: IntoIterator,
        O::Item: Into<Str<'a>>,
    {
        NodeProto {
            op_type: Some(op_type.into()),
            input: inputs.into_iter().map(Into::into).collect(),
            output: outputs.into_iter().map(Into::into).collect(),
            ..NodeProto::default()
        }
    }

    /// The same node with a name.
    pub fn with_name(mut self, name: impl Into<Str<'a>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The same node with one more attribute.
    pub fn with_attribute(mut self, attribute: AttributeProto<'a>) -> Self {
        self.attribute.push(attribute);
        self
    }

    /// The attribute with this name.
    pub fn attribute(&self, name: &str) -> Option<&AttributeProto<'a>> {
        self.attribute.iter().find(|a| a.name() == name)
    }
}

/// The name and type of a graph input, output or intermediate value.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.ValueInfoProto")]
pub struct ValueInfoProto<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(2)]
    pub r#type: Option<TypeProto<'a>>,
    #[proto(3)]
    pub doc_string: Option<Str<'a>>,
    #[proto(4)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> ValueInfoProto<'a> {
    /// A tensor value of element type `elem_type` and shape `dims`: fixed sizes
    /// (`&[1, 3]`, a `Vec<i64>`), symbolic names (`["batch", "seq"]`), or any mix of
    /// [`Dimension`]s.
    ///
    /// ```
    /// use onnx_light::onnx::{DataType, Dimension, ValueInfoProto};
    ///
    /// let x = ValueInfoProto::tensor("x", DataType::Float, [Dimension::param("batch"), 3.into()]);
    /// assert_eq!(x.r#type.as_ref().unwrap().to_string(), "float[batch,3]");
    /// let y = ValueInfoProto::tensor("y", DataType::Int64, [2, 2]);
    /// assert_eq!(y.shape().unwrap().dim_values(), [Some(2), Some(2)]);
    /// ```
    pub fn tensor<D: Into<Dimension<'a>>>(
        name: impl Into<Str<'a>>,
        elem_type: DataType,
        dims: impl IntoIterator<Item = D>,
    ) -> Self {
        ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto::tensor(
                elem_type,
                Some(TensorShapeProto::new(dims)),
            )),
            ..ValueInfoProto::default()
        }
    }

    /// A scalar (rank 0) tensor value: `tensor(name, elem_type, [])` would leave the
    /// dimension type to infer.
    pub fn scalar(name: impl Into<Str<'a>>, elem_type: DataType) -> Self {
        Self::tensor::<i64>(name, elem_type, [])
    }

    /// The element type, for a tensor or sparse tensor value.
    pub fn elem_type(&self) -> Option<DataType> {
        self.r#type.as_ref()?.elem_type()
    }

    /// The shape, for a tensor or sparse tensor value whose shape is known.
    pub fn shape(&self) -> Option<&TensorShapeProto<'a>> {
        self.r#type.as_ref()?.shape()
    }
}

/// Quantization parameters attached to a tensor.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TensorAnnotation")]
pub struct TensorAnnotation<'a> {
    #[proto(1)]
    pub tensor_name: Option<Str<'a>>,
    #[proto(2)]
    pub quant_parameter_tensor_names: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A key with a list of values (used by sharding specs).
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.IntIntListEntryProto")]
pub struct IntIntListEntryProto<'a> {
    #[proto(1)]
    pub key: Option<i64>,
    #[proto(2)]
    pub value: Vec<i64>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// How a node is placed on the devices of a configuration.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.NodeDeviceConfigurationProto")]
pub struct NodeDeviceConfigurationProto<'a> {
    #[proto(1)]
    pub configuration_id: Option<Str<'a>>,
    #[proto(2)]
    pub sharding_spec: Vec<ShardingSpecProto<'a>>,
    #[proto(3)]
    pub pipeline_stage: Option<i32>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// How one tensor is sharded over devices.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.ShardingSpecProto")]
pub struct ShardingSpecProto<'a> {
    #[proto(1)]
    pub tensor_name: Option<Str<'a>>,
    #[proto(2)]
    pub device: Vec<i64>,
    #[proto(3)]
    pub index_to_device_group_map: Vec<IntIntListEntryProto<'a>>,
    #[proto(4)]
    pub sharded_dim: Vec<ShardedDimProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// The sharding of one axis.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.ShardedDimProto")]
pub struct ShardedDimProto<'a> {
    #[proto(1)]
    pub axis: Option<i64>,
    #[proto(2)]
    pub simple_sharding: Vec<SimpleShardedDimProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// An axis split evenly into `num_shards` parts.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.SimpleShardedDimProto")]
pub struct SimpleShardedDimProto<'a> {
    #[proto(oneof(1, 2))]
    pub dim: Option<SimpleShardedDim<'a>>,
    #[proto(3)]
    pub num_shards: Option<i64>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// The `dim` oneof of [`SimpleShardedDimProto`].
#[derive(ProtoOneof, Debug, Clone, PartialEq)]
pub enum SimpleShardedDim<'a> {
    #[proto(1)]
    DimValue(i64),
    #[proto(2)]
    DimParam(Str<'a>),
}

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
