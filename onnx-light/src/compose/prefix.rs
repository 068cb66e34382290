//! Prefixing the names in a graph or model (`onnx.compose.add_prefix_graph`,
//! `add_prefix`).

use std::collections::{HashMap, HashSet};

use crate::field::Str;
use crate::onnx::{GraphProto, ModelProto, TensorProto};

/// What [`add_prefix_graph`] and [`add_prefix`] rename (all, by default), as the
/// `rename_*` arguments of `onnx.compose.add_prefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrefixOptions {
    /// Node names; and, with them, every name in the graphs of node attributes.
    pub nodes: bool,
    /// Names nodes write (those that are not graph outputs) and read.
    pub edges: bool,
    /// Graph inputs.
    pub inputs: bool,
    /// Graph outputs.
    pub outputs: bool,
    /// Initializers and sparse initializers.
    pub initializers: bool,
    /// Value infos.
    pub value_infos: bool,
    /// [`add_prefix`] only: local functions, and the nodes that call them.
    pub functions: bool,
}

impl Default for PrefixOptions {
    fn default() -> Self {
        PrefixOptions {
            nodes: true,
            edges: true,
            inputs: true,
            outputs: true,
            initializers: true,
            value_infos: true,
            functions: true,
        }
    }
}

impl PrefixOptions {
    /// Sets `nodes`.
    pub fn nodes(mut self, yes: bool) -> Self {
        self.nodes = yes;
        self
    }
    /// Sets `edges`.
    pub fn edges(mut self, yes: bool) -> Self {
        self.edges = yes;
        self
    }
    /// Sets `inputs`.
    pub fn inputs(mut self, yes: bool) -> Self {
        self.inputs = yes;
        self
    }
    /// Sets `outputs`.
    pub fn outputs(mut self, yes: bool) -> Self {
        self.outputs = yes;
        self
    }
    /// Sets `initializers`.
    pub fn initializers(mut self, yes: bool) -> Self {
        self.initializers = yes;
        self
    }
    /// Sets `value_infos`.
    pub fn value_infos(mut self, yes: bool) -> Self {
        self.value_infos = yes;
        self
    }
    /// Sets `functions`.
    pub fn functions(mut self, yes: bool) -> Self {
        self.functions = yes;
        self
    }
}

/// Old name to new name, in the order the names were first given (`onnx`'s `name_map`
/// dictionary, shared between a graph and the graphs of its nodes' attributes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    order: Vec<(String, String)>,
    index: HashMap<String, usize>,
}

impl NameMap {
    /// An empty map.
    pub fn new() -> Self {
        NameMap::default()
    }

    /// Maps `from` to `to` (replacing an earlier mapping of `from`, which keeps its place).
    pub fn insert(&mut self, from: impl Into<String>, to: impl Into<String>) {
        let from = from.into();
        let to = to.into();
        match self.index.get(&from) {
            Some(&i) => self.order[i].1 = to,
            None => {
                self.index.insert(from.clone(), self.order.len());
                self.order.push((from, to));
            }
        }
    }

    /// The new name of `from`, if it has one.
    pub fn get(&self, from: &str) -> Option<&str> {
        self.index.get(from).map(|&i| self.order[i].1.as_str())
    }

    /// The mappings, in the order their names were first given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.order.iter().map(|(a, b)| (a.as_str(), b.as_str()))
    }

    /// How many names are mapped.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when no name is mapped.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Sets `field` to its new name when its value (`""` when unset) has one: a field
    /// that reads as a mapped name is written, as `onnx`'s assignments write it.
    fn rename_field(&self, field: &mut Option<Str<'_>>) {
        if let Some(new) = self.get(field.as_deref().unwrap_or("")) {
            *field = Some(Str::from(new.to_string()));
        }
    }

    fn rename_all(&self, names: &mut [Str<'_>]) {
        for name in names {
            if let Some(new) = self.get(name) {
                *name = Str::from(new.to_string());
            }
        }
    }
}

impl<A: Into<String>, B: Into<String>> FromIterator<(A, B)> for NameMap {
    fn from_iter<I: IntoIterator<Item = (A, B)>>(iter: I) -> Self {
        let mut map = NameMap::new();
        for (a, b) in iter {
            map.insert(a, b);
        }
        map
    }
}

/// `prefix` + `name`, or the empty name as it is.
fn prefixed(prefix: &str, name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{prefix}{name}")
    }
}

/// Prefixes the names in `graph` that `options` selects (empty names stay empty), and
/// every use of them: `onnx.compose.add_prefix_graph` with `inplace=True`. With
/// `options.nodes`, the graphs in node attributes are prefixed whole, sharing the
/// renames (a subgraph's use of an outer name follows it).
pub fn add_prefix_graph(graph: &mut GraphProto<'_>, prefix: &str, options: &PrefixOptions) {
    add_prefix_graph_with(graph, prefix, options, &mut NameMap::new());
}

/// [`add_prefix_graph`] starting from the renames in `names` (applied too), which it
/// extends with those it makes (`onnx`'s `name_map` argument).
pub fn add_prefix_graph_with(
    graph: &mut GraphProto<'_>,
    prefix: &str,
    options: &PrefixOptions,
    names: &mut NameMap,
) {
    if options.edges {
        // Only values that are not graph outputs: those follow `options.outputs`.
        let outputs: HashSet<String> = graph.output.iter().map(|o| o.name().to_string()).collect();
        for node in &graph.node {
            for e in &node.output {
                if !outputs.contains(e.as_str()) {
                    names.insert(e.as_str(), prefixed(prefix, e));
                }
            }
        }
    }
    if options.inputs {
        for v in &graph.input {
            names.insert(v.name(), prefixed(prefix, v.name()));
        }
    }
    if options.outputs {
        for v in &graph.output {
            names.insert(v.name(), prefixed(prefix, v.name()));
        }
    }
    if options.nodes {
        for node in &mut graph.node {
            node.name = Some(Str::from(prefixed(prefix, node.name())));
            for attr in &mut node.attribute {
                // Subgraphs are renamed whole, whatever `options` says, as in `onnx`.
                if let Some(g) = attr.g.as_deref_mut() {
                    crate::onnx::deep::guarded(|| {
                        add_prefix_graph_with(g, prefix, &PrefixOptions::default(), names)
                    });
                }
                for g in &mut attr.graphs {
                    crate::onnx::deep::guarded(|| {
                        add_prefix_graph_with(g, prefix, &PrefixOptions::default(), names)
                    });
                }
            }
        }
    }
    if options.initializers {
        for t in &graph.initializer {
            names.insert(t.name(), prefixed(prefix, t.name()));
        }
        for s in &graph.sparse_initializer {
            let values = s.values.as_ref().map_or("", |t| t.name());
            names.insert(values, prefixed(prefix, values));
            let indices = s.indices.as_ref().map_or("", |t| t.name());
            names.insert(indices, prefixed(prefix, indices));
        }
    }
    if options.value_infos {
        for v in &graph.value_info {
            names.insert(v.name(), prefixed(prefix, v.name()));
        }
    }

    for node in &mut graph.node {
        names.rename_all(&mut node.output);
        names.rename_all(&mut node.input);
    }
    for v in graph.input.iter_mut().chain(&mut graph.output) {
        names.rename_field(&mut v.name);
    }
    for t in &mut graph.initializer {
        names.rename_field(&mut t.name);
    }
    for s in &mut graph.sparse_initializer {
        rename_sparse_part(&mut s.values, names);
        rename_sparse_part(&mut s.indices, names);
    }
    for v in &mut graph.value_info {
        names.rename_field(&mut v.name);
    }
}

/// Renames the values or indices of a sparse tensor; an unset one is created when the
/// empty name is mapped, as `onnx`'s assignment through it creates it.
fn rename_sparse_part(part: &mut Option<TensorProto<'_>>, names: &NameMap) {
    match part {
        Some(t) => names.rename_field(&mut t.name),
        None => {
            if let Some(new) = names.get("") {
                *part = Some(TensorProto {
                    name: Some(Str::from(new.to_string())),
                    ..TensorProto::default()
                });
            }
        }
    }
}

/// Prefixes the names in `model`'s graph as [`add_prefix_graph`] does, and (with
/// `options.functions`) the names of its local functions and the nodes that call them,
/// in the graph and in the functions (`onnx.compose.add_prefix` with `inplace=True`).
pub fn add_prefix(model: &mut ModelProto<'_>, prefix: &str, options: &PrefixOptions) {
    if let Some(graph) = model.graph.as_mut() {
        add_prefix_graph(graph, prefix, options);
    }
    if options.functions {
        // Every function is renamed, an unnamed one too (to the prefix).
        let mut renamed = NameMap::new();
        for f in &mut model.functions {
            let new = format!("{prefix}{}", f.name());
            renamed.insert(f.name(), new.clone());
            f.name = Some(Str::from(new));
        }
        let graph_nodes = model.graph.iter_mut().flat_map(|g| g.node.iter_mut());
        let function_nodes = model.functions.iter_mut().flat_map(|f| f.node.iter_mut());
        for node in function_nodes.chain(graph_nodes) {
            if renamed.get(node.op_type()).is_some() {
                renamed.rename_field(&mut node.op_type);
            }
        }
    }
}
