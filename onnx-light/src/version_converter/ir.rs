//! The graph form a conversion works on, and the two translations around it.
//!
//! `onnx` converts through its in-memory graph IR: the model is imported into it, the
//! adapters edit it, and it is exported back. That round trip decides much of what the
//! converted model looks like (which `value_info` entries survive and in which order,
//! what is dropped, how new values are named), so this module imports and exports by
//! the same rules: values are shared by name, a value's type is merged from the graph
//! inputs, outputs and `value_info` that name it, new values are named `_v_N` from the
//! graph's running count of values, and the export writes the fields that IR keeps.

use std::collections::{HashMap, HashSet};

use crate::field::{Bytes, Str};
use crate::onnx::{
    AttributeProto, AttributeType, Dimension, DimensionValue, GraphProto, Segment,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, TypeProtoTensor, TypeValue,
    ValueInfoProto,
};

/// Index of a value in its graph's value table.
pub(super) type ValId = usize;

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// The value that stands for an omitted optional input (the empty name).
    Undefined,
    /// A graph input.
    Input,
    /// An initializer that is not also a graph input.
    Initializer,
    /// A node output.
    Node,
    /// A name a nested graph uses from an enclosing scope.
    Captured,
}

/// One dimension of a tensor value's shape.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Dim<'a> {
    Unknown,
    Value(i64),
    Param(Str<'a>),
}

/// A value: its name and what is known of its type.
#[derive(Clone, Debug)]
pub(super) struct Value<'a> {
    pub name: Str<'a>,
    /// The tensor element type; 0 when unknown or not a tensor.
    pub elem: i32,
    /// The tensor shape, when known (an empty list is a scalar).
    pub sizes: Option<Vec<Dim<'a>>>,
    /// The whole type of a value whose declared type is not a tensor type.
    pub ty: Option<TypeProto<'a>>,
    pub doc: Option<Str<'a>>,
    pub origin: Origin,
}

/// One attribute value, by kind.
#[derive(Clone, Debug)]
pub(super) enum AttrValue<'a> {
    F(f32),
    Fs(Vec<f32>),
    I(i64),
    Is(Vec<i64>),
    S(Bytes<'a>),
    Ss(Vec<Bytes<'a>>),
    T(Box<TensorProto<'a>>),
    Ts(Vec<TensorProto<'a>>),
    G(Box<Graph<'a>>),
    Gs(Vec<Graph<'a>>),
    Tp(Box<TypeProto<'a>>),
    Tps(Vec<TypeProto<'a>>),
}

#[derive(Clone, Debug)]
pub(super) struct Attr<'a> {
    pub name: Str<'a>,
    pub value: AttrValue<'a>,
}

/// A node: operator, attributes in order, and its inputs and outputs as values.
#[derive(Clone, Debug)]
pub(super) struct Node<'a> {
    pub op_type: Str<'a>,
    pub domain: Option<Str<'a>>,
    pub name: Option<Str<'a>>,
    pub doc: Option<Str<'a>>,
    pub overload: Option<Str<'a>>,
    pub attrs: Vec<Attr<'a>>,
    pub inputs: Vec<ValId>,
    pub outputs: Vec<ValId>,
}

impl<'a> Node<'a> {
    /// A node of the ONNX domain with no name, as the adapters create them.
    pub fn new(op_type: &'static str) -> Self {
        Node {
            op_type: Str::from(op_type),
            domain: None,
            name: None,
            doc: None,
            overload: None,
            attrs: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    pub fn attr(&self, name: &str) -> Option<&AttrValue<'a>> {
        self.attrs
            .iter()
            .find(|a| a.name.as_str() == name)
            .map(|a| &a.value)
    }

    pub fn has_attr(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }

    /// Sets an attribute: in place when the name exists, else appended (as the IR does).
    pub fn set_attr(&mut self, name: &str, value: AttrValue<'a>) {
        match self.attrs.iter_mut().find(|a| a.name.as_str() == name) {
            Some(a) => a.value = value,
            None => self.attrs.push(Attr {
                name: Str::from(name.to_owned()),
                value,
            }),
        }
    }

    pub fn remove_attr(&mut self, name: &str) {
        self.attrs.retain(|a| a.name.as_str() != name);
    }
}

/// A graph in the converter's form.
#[derive(Clone, Debug, Default)]
pub(super) struct Graph<'a> {
    pub name: Option<Str<'a>>,
    pub doc: Option<Str<'a>>,
    pub values: Vec<Value<'a>>,
    pub inputs: Vec<ValId>,
    pub outputs: Vec<ValId>,
    pub nodes: Vec<Node<'a>>,
    pub initializers: Vec<TensorProto<'a>>,
    /// How many values the graph has numbered: the next generated name is `_v_{n+1}`
    /// (or the first free one after it).
    pub unique: usize,
    /// Every name the graph and its nested graphs use, filled on the first generated
    /// name (most conversions generate none).
    pub used_names: Option<HashSet<String>>,
}

/// Why a model cannot be imported (the IR's conversion errors).
pub(super) type ImportError = String;

fn dims_of<'a>(shape: &TensorShapeProto<'a>) -> Vec<Dim<'a>> {
    shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(DimensionValue::DimValue(v)) => Dim::Value(*v),
            Some(DimensionValue::DimParam(p)) => Dim::Param(p.clone()),
            None => Dim::Unknown,
        })
        .collect()
}

/// Merges a declared type into a value: a tensor type's element type and shape where
/// present, any other type (or none) as a whole.
fn merge_type<'a>(v: &mut Value<'a>, ty: Option<&TypeProto<'a>>) {
    match ty.and_then(|t| t.value.as_ref()) {
        Some(TypeValue::TensorType(tt)) => {
            if let Some(e) = tt.elem_type_raw {
                v.elem = e;
            }
            if let Some(shape) = &tt.shape {
                v.sizes = Some(dims_of(shape));
            }
        }
        _ => v.ty = Some(ty.cloned().unwrap_or_default()),
    }
}

/// Whether `data_type` is an element type the IR knows.
fn known_data_type(data_type: i32) -> bool {
    (1..=28).contains(&data_type)
}

/// A tensor as the IR keeps it: name, segment, dims, type, the data field of its
/// element type, raw bytes, external-data entries and location. Weights are moved,
/// never copied or read.
pub(super) fn normalize_tensor(t: TensorProto<'_>) -> Result<TensorProto<'_>, ImportError> {
    let data_type = t.data_type.unwrap_or(0);
    if !known_data_type(data_type) {
        return Err("Unknown tensor data type".into());
    }
    let mut out = TensorProto {
        name: t.name,
        dims: t.dims,
        data_type: Some(data_type),
        raw_data: t.raw_data,
        lazy_data: t.lazy_data,
        data_location: t.data_location,
        ..TensorProto::default()
    };
    if let Some(s) = t.segment {
        out.segment = Some(Segment {
            begin: Some(s.begin.unwrap_or(0)),
            end: Some(s.end.unwrap_or(0)),
            ..Segment::default()
        });
    }
    out.external_data = t
        .external_data
        .into_iter()
        .map(|e| StringStringEntryProto {
            key: Some(e.key.unwrap_or_default()),
            value: Some(e.value.unwrap_or_default()),
            ..StringStringEntryProto::default()
        })
        .collect();
    match data_type {
        1 | 14 => out.float_data = t.float_data,
        7 => out.int64_data = t.int64_data,
        12 | 13 => out.uint64_data = t.uint64_data,
        11 | 15 => out.double_data = t.double_data,
        8 => out.string_data = t.string_data,
        _ => out.int32_data = t.int32_data,
    }
    Ok(out)
}

fn import_attribute<'a>(a: AttributeProto<'a>, ir_version: i64) -> Result<Attr<'a>, ImportError> {
    let name = a.name.clone().unwrap_or_default();
    let value = match a.r#type.and_then(|t| t.get()) {
        Some(AttributeType::Float) => AttrValue::F(a.f.unwrap_or(0.0)),
        Some(AttributeType::Floats) => AttrValue::Fs(a.floats),
        Some(AttributeType::Int) => AttrValue::I(a.i.unwrap_or(0)),
        Some(AttributeType::Ints) => AttrValue::Is(a.ints),
        Some(AttributeType::String) => AttrValue::S(a.s.unwrap_or_default()),
        Some(AttributeType::Strings) => AttrValue::Ss(a.strings),
        Some(AttributeType::Tensor) => AttrValue::T(Box::new(normalize_tensor(
            a.t.map(|t| *t).unwrap_or_default(),
        )?)),
        Some(AttributeType::Tensors) => AttrValue::Ts(
            a.tensors
                .into_iter()
                .map(normalize_tensor)
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeType::Graph) => AttrValue::G(Box::new(import_graph(
            a.g.map(|g| *g).unwrap_or_default(),
            true,
            ir_version,
        )?)),
        Some(AttributeType::Graphs) => AttrValue::Gs(
            a.graphs
                .into_iter()
                .map(|g| import_graph(g, true, ir_version))
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeType::TypeProto) => AttrValue::Tp(a.tp.unwrap_or_default()),
        Some(AttributeType::TypeProtos) => AttrValue::Tps(a.type_protos),
        Some(AttributeType::SparseTensor) | Some(AttributeType::SparseTensors) => {
            return Err("Sparse tensors not supported.".into())
        }
        _ => return Err("Unknown tensor data type".into()),
    };
    Ok(Attr { name, value })
}

impl<'a> Graph<'a> {
    fn new_value(&mut self, name: Str<'a>, origin: Origin) -> ValId {
        self.unique += 1;
        self.values.push(Value {
            name,
            elem: 0,
            sizes: None,
            ty: None,
            doc: None,
            origin,
        });
        self.values.len() - 1
    }

    /// A fresh `_v_N` name, as the IR numbers values it creates.
    pub fn fresh_name(&mut self) -> String {
        if self.used_names.is_none() {
            let mut used = HashSet::new();
            self.collect_names(&mut used);
            self.used_names = Some(used);
        }
        let used = self.used_names.as_mut().expect("filled above");
        loop {
            self.unique += 1;
            let name = format!("_v_{}", self.unique);
            if used.insert(name.clone()) {
                return name;
            }
        }
    }

    fn collect_names(&self, used: &mut HashSet<String>) {
        for v in &self.values {
            used.insert(v.name.as_str().to_owned());
        }
        for t in &self.initializers {
            used.insert(t.name().to_owned());
        }
        for n in &self.nodes {
            for a in &n.attrs {
                match &a.value {
                    AttrValue::G(g) => g.collect_names(used),
                    AttrValue::Gs(gs) => gs.iter().for_each(|g| g.collect_names(used)),
                    _ => {}
                }
            }
        }
    }

    /// A new value without a type, named as the IR names the values adapters create.
    pub fn add_value(&mut self, origin: Origin) -> ValId {
        let name = self.fresh_name();
        self.values.push(Value {
            name: Str::from(name),
            elem: 0,
            sizes: None,
            ty: None,
            doc: None,
            origin,
        });
        self.values.len() - 1
    }
}

/// Imports a graph as `onnx`'s IR does (see the module documentation). `nested`: a
/// graph of an attribute, whose unknown names are values of an enclosing scope.
pub(super) fn import_graph<'a>(
    gp: GraphProto<'a>,
    nested: bool,
    ir_version: i64,
) -> Result<Graph<'a>, ImportError> {
    let mut g = Graph {
        name: gp.name,
        doc: gp.doc_string,
        ..Graph::default()
    };
    let mut by_name: HashMap<Str<'a>, ValId> = HashMap::new();
    let undefined = g.new_value(Str::from(""), Origin::Undefined);
    by_name.insert(Str::from(""), undefined);
    for vi in gp.input {
        let name = vi.name.clone().unwrap_or_default();
        let id = g.new_value(name.clone(), Origin::Input);
        merge_type(&mut g.values[id], vi.r#type.as_ref());
        g.values[id].doc = vi.doc_string;
        g.inputs.push(id);
        by_name.insert(name, id);
    }
    for t in gp.initializer {
        let mut t = normalize_tensor(t)?;
        if t.name().is_empty() {
            let name = format!("_v_{}", g.unique + 1);
            g.unique += 1;
            t.name = Some(Str::from(name));
        }
        let name = t.name.clone().unwrap_or_default();
        if ir_version >= 4 && !by_name.contains_key(name.as_str()) {
            let id = g.new_value(name.clone(), Origin::Initializer);
            g.values[id].elem = t.data_type.unwrap_or(0);
            g.values[id].sizes = Some(t.dims.iter().map(|&d| Dim::Value(d)).collect());
            by_name.insert(name, id);
        }
        g.initializers.push(t);
    }
    let mut node_inputs = Vec::with_capacity(gp.node.len());
    for np in gp.node {
        let op_type = np.op_type.unwrap_or_default();
        if op_type.as_str() == "Captured" && np.output.len() != 1 {
            return Err("Captured node must have exactly one output.".into());
        }
        let mut node = Node {
            op_type,
            domain: np.domain,
            name: np.name,
            doc: np.doc_string,
            overload: np.overload,
            attrs: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::with_capacity(np.output.len()),
        };
        for out in np.output {
            let id = g.new_value(out.clone(), Origin::Node);
            node.outputs.push(id);
            by_name.insert(out, id);
        }
        for a in np.attribute {
            let attr = import_attribute(a, ir_version)?;
            node.set_attr(attr.name.clone().as_str(), attr.value);
        }
        node_inputs.push(np.input);
        g.nodes.push(node);
    }
    for (i, names) in node_inputs.into_iter().enumerate() {
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            let id = match by_name.get(name.as_str()) {
                Some(&id) => id,
                None if nested => {
                    let id = g.new_value(name.clone(), Origin::Captured);
                    by_name.insert(name, id);
                    id
                }
                None => return Err(format!("Input {} is undefined!", name.as_str())),
            };
            ids.push(id);
        }
        g.nodes[i].inputs = ids;
    }
    for vi in gp.output {
        let name = vi.name.clone().unwrap_or_default();
        let id = match by_name.get(name.as_str()) {
            Some(&id) => id,
            None if nested => {
                let id = g.new_value(name.clone(), Origin::Captured);
                by_name.insert(name, id);
                id
            }
            None => return Err(format!("Output {} is undefined!", name.as_str())),
        };
        merge_type(&mut g.values[id], vi.r#type.as_ref());
        if vi.doc_string.is_some() {
            g.values[id].doc = vi.doc_string;
        }
        g.outputs.push(id);
    }
    for vi in gp.value_info {
        let Some(&id) = by_name.get(vi.name()) else {
            continue;
        };
        merge_type(&mut g.values[id], vi.r#type.as_ref());
        if vi.doc_string.is_some() {
            g.values[id].doc = vi.doc_string;
        }
    }
    Ok(g)
}

fn export_dims<'a>(sizes: &[Dim<'a>]) -> TensorShapeProto<'a> {
    TensorShapeProto {
        dim: sizes
            .iter()
            .map(|d| Dimension {
                value: match d {
                    Dim::Unknown => None,
                    Dim::Value(v) => Some(DimensionValue::DimValue(*v)),
                    Dim::Param(p) => Some(DimensionValue::DimParam(p.clone())),
                },
                ..Dimension::default()
            })
            .collect(),
        ..TensorShapeProto::default()
    }
}

fn export_value<'a>(v: &Value<'a>) -> ValueInfoProto<'a> {
    let r#type = if v.elem != 0 || v.sizes.is_some() {
        Some(TypeProto {
            value: Some(TypeValue::TensorType(TypeProtoTensor {
                elem_type_raw: (v.elem != 0).then_some(v.elem),
                shape: v.sizes.as_deref().map(export_dims),
                ..TypeProtoTensor::default()
            })),
            ..TypeProto::default()
        })
    } else {
        v.ty.clone()
    };
    ValueInfoProto {
        name: Some(v.name.clone()),
        r#type,
        doc_string: v.doc.clone(),
        ..ValueInfoProto::default()
    }
}

fn export_attribute<'a>(a: Attr<'a>) -> AttributeProto<'a> {
    let mut p = AttributeProto {
        name: Some(a.name),
        ..AttributeProto::default()
    };
    let kind = match a.value {
        AttrValue::F(f) => {
            p.f = Some(f);
            AttributeType::Float
        }
        AttrValue::Fs(fs) => {
            p.floats = fs;
            AttributeType::Floats
        }
        AttrValue::I(i) => {
            p.i = Some(i);
            AttributeType::Int
        }
        AttrValue::Is(is) => {
            p.ints = is;
            AttributeType::Ints
        }
        AttrValue::S(s) => {
            p.s = Some(s);
            AttributeType::String
        }
        AttrValue::Ss(ss) => {
            p.strings = ss;
            AttributeType::Strings
        }
        AttrValue::T(t) => {
            p.t = Some(t);
            AttributeType::Tensor
        }
        AttrValue::Ts(ts) => {
            p.tensors = ts;
            AttributeType::Tensors
        }
        AttrValue::G(g) => {
            p.g = Some(Box::new(export_graph(*g)));
            AttributeType::Graph
        }
        AttrValue::Gs(gs) => {
            p.graphs = gs.into_iter().map(export_graph).collect();
            AttributeType::Graphs
        }
        AttrValue::Tp(tp) => {
            p.tp = Some(tp);
            AttributeType::TypeProto
        }
        AttrValue::Tps(tps) => {
            p.type_protos = tps;
            AttributeType::TypeProtos
        }
    };
    p.r#type = Some(kind.into());
    p
}

/// Exports a graph as `onnx`'s IR does: inputs, outputs, nodes (each output with a
/// known type gets a `value_info` entry unless it is a graph output), initializers.
pub(super) fn export_graph(g: Graph<'_>) -> GraphProto<'_> {
    let mut p = GraphProto {
        name: g.name,
        doc_string: g.doc,
        ..GraphProto::default()
    };
    p.input = g
        .inputs
        .iter()
        .map(|&i| export_value(&g.values[i]))
        .collect();
    p.output = g
        .outputs
        .iter()
        .map(|&i| export_value(&g.values[i]))
        .collect();
    let outputs: HashSet<ValId> = g.outputs.iter().copied().collect();
    p.node.reserve(g.nodes.len());
    for n in g.nodes {
        // The IR's placeholder nodes are not written (nor is any node of that name).
        if matches!(n.op_type.as_str(), "Undefined" | "Captured") {
            continue;
        }
        let mut np = crate::onnx::NodeProto {
            op_type: Some(n.op_type),
            name: n.name,
            doc_string: n.doc,
            domain: n.domain,
            overload: n.overload,
            ..Default::default()
        };
        np.input = n
            .inputs
            .iter()
            .map(|&i| {
                let v = &g.values[i];
                if v.origin == Origin::Undefined {
                    Str::from("")
                } else {
                    v.name.clone()
                }
            })
            .collect();
        for &o in &n.outputs {
            let v = &g.values[o];
            np.output.push(v.name.clone());
            if outputs.contains(&o) {
                continue;
            }
            if v.elem == 0 && v.sizes.as_ref().is_none_or(|s| s.is_empty()) {
                continue;
            }
            p.value_info.push(export_value(v));
        }
        np.attribute = n.attrs.into_iter().map(export_attribute).collect();
        p.node.push(np);
    }
    p.initializer = g.initializers;
    p
}
