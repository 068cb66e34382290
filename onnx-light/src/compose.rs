//! Combining graphs and models, as `onnx.compose` does: [`merge_graphs`] and
//! [`merge_models`] connect outputs of one graph to inputs of another,
//! [`add_prefix_graph`] / [`add_prefix`] rename everything in a graph so that two can be
//! merged without clashes, and [`expand_out_dim_graph`] / [`expand_out_dim`] give every
//! output one more dimension.
//!
//! The results are those of `onnx.compose` 1.23, field for field: the same order of
//! nodes, inputs, outputs, initializers and value infos, the same default names and doc
//! strings, and the same refusals with `onnx`'s messages ([`ErrorKind::GraphEdit`]).
//! Where `onnx` uses `set`s, the order of names in a message follows the first graph.
//!
//! Weights are never read: tensors are moved or cloned as they are, so a model loaded
//! structure-only (weights left on disk) stays so, and a merged model saved with
//! [`io::save`](crate::io::save) copies its weights from the source files. Checking the
//! merged model (`onnx.compose.merge_models` runs the checker) is the caller's:
//! [`checker::check_model`](crate::checker::check_model).
//!
//! ```
//! use onnx_light::compose::{merge_models, MergeOptions};
//! use onnx_light::onnx::*;
//!
//! fn model(x: &'static str, y: &'static str) -> Model {
//!     let mut g = GraphProto::named("g");
//!     g.input.push(ValueInfoProto::tensor(x, DataType::Float, [2]));
//!     g.output.push(ValueInfoProto::tensor(y, DataType::Float, [2]));
//!     g.node.push(NodeProto::new("Relu", [x], [y]));
//!     ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
//! }
//! let merged = merge_models(&model("a", "b"), &model("c", "d"), &[("b", "c")], &MergeOptions::default())?;
//! let g = merged.graph.as_ref().unwrap();
//! assert_eq!(g.node[1].input[0], "b"); // the second graph now reads the first's output
//! assert_eq!((g.input[0].name(), g.output[0].name()), ("a", "d"));
//! assert_eq!(g.name(), "g_g");
//! # Ok::<(), onnx_light::Error>(())
//! ```

use std::collections::{HashMap, HashSet};

use crate::error::{Error, ErrorKind, Result};
use crate::extract::Extractor;
use crate::field::Str;
use crate::onnx::{
    AttributeProto, AttributeType, DataType, Dimension, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto,
    TypeValue, ValueInfoProto,
};

fn refuse(reason: impl Into<String>) -> Error {
    Error::new(ErrorKind::GraphEdit {
        reason: reason.into(),
    })
}

/// The kinds of names [`check_overlapping_names`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameCategory {
    /// Names nodes read or write (graph inputs and outputs among them).
    Edge,
    /// Names of `value_info` entries.
    ValueInfo,
    /// Names of initializers.
    Initializer,
    /// Names of the values and indices of sparse initializers.
    SparseInitializer,
}

impl NameCategory {
    /// The category as `onnx.compose.check_overlapping_names` names it (`"edge"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            NameCategory::Edge => "edge",
            NameCategory::ValueInfo => "value_info",
            NameCategory::Initializer => "initializer",
            NameCategory::SparseInitializer => "sparse_initializer",
        }
    }
}

/// The names of `first` that `second` holds too, each once, in `first`'s order.
fn overlap<'s>(
    first: impl IntoIterator<Item = &'s str>,
    second: impl IntoIterator<Item = &'s str>,
) -> Vec<String> {
    let second: HashSet<&str> = second.into_iter().collect();
    let mut seen = HashSet::new();
    first
        .into_iter()
        .filter(|n| second.contains(n) && seen.insert(*n))
        .map(str::to_string)
        .collect()
}

/// The non-empty names the nodes of `graph` read and write, except those in `exclude`.
fn edge_names<'g>(graph: &'g GraphProto<'_>, exclude: &HashSet<&str>) -> Vec<&'g str> {
    graph
        .node
        .iter()
        .flat_map(|n| n.input.iter().chain(&n.output))
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty() && !exclude.contains(s))
        .collect()
}

/// The names both graphs use, by category (only categories with a clash are listed, in
/// the order edge, value_info, initializer, sparse_initializer). The inputs of `g2`
/// that `io_map` connects (its second names) are not counted as edges of `g2`.
pub fn check_overlapping_names<A: AsRef<str>, B: AsRef<str>>(
    g1: &GraphProto<'_>,
    g2: &GraphProto<'_>,
    io_map: &[(A, B)],
) -> Vec<(NameCategory, Vec<String>)> {
    let connected: HashSet<&str> = io_map.iter().map(|(_, i)| i.as_ref()).collect();
    let mut found = Vec::new();
    let mut add = |category, names: Vec<String>| {
        if !names.is_empty() {
            found.push((category, names));
        }
    };
    add(
        NameCategory::Edge,
        overlap(edge_names(g1, &HashSet::new()), edge_names(g2, &connected)),
    );
    add(
        NameCategory::ValueInfo,
        overlap(
            g1.value_info.iter().map(|v| v.name()),
            g2.value_info.iter().map(|v| v.name()),
        ),
    );
    add(
        NameCategory::Initializer,
        overlap(
            g1.initializer.iter().map(|t| t.name()),
            g2.initializer.iter().map(|t| t.name()),
        ),
    );
    let sparse_names = |g: &'_ GraphProto<'_>, values: bool| -> Vec<String> {
        g.sparse_initializer
            .iter()
            .map(|s| {
                let t = if values { &s.values } else { &s.indices };
                t.as_ref().map_or("", |t| t.name()).to_string()
            })
            .collect()
    };
    let (v1, v2) = (sparse_names(g1, true), sparse_names(g2, true));
    let (i1, i2) = (sparse_names(g1, false), sparse_names(g2, false));
    let mut sparse = overlap(v1.iter().map(String::as_str), v2.iter().map(String::as_str));
    sparse.extend(overlap(
        i1.iter().map(String::as_str),
        i2.iter().map(String::as_str),
    ));
    add(NameCategory::SparseInitializer, sparse);
    found
}

/// How [`merge_graphs`] and [`merge_models`] combine: the arguments of
/// `onnx.compose.merge_graphs` after `io_map`, with its defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeOptions {
    /// The inputs the combined graph keeps (empty: every input `io_map` does not connect).
    pub inputs: Vec<String>,
    /// The outputs the combined graph keeps (empty: every output `io_map` does not connect).
    pub outputs: Vec<String>,
    /// Prefixed to every name of the first graph (empty: none), `io_map` following.
    pub prefix1: String,
    /// Prefixed to every name of the second graph (empty: none), `io_map` following.
    pub prefix2: String,
    /// The combined graph's name (default: the two names joined by `_`).
    pub name: Option<String>,
    /// The combined graph's doc string (default: one naming both graphs, with their doc
    /// strings).
    pub doc_string: Option<String>,
    /// [`merge_models`] only: the model's `producer_name` (default
    /// `"onnx.compose.merge_models"`; `None`: unset).
    pub producer_name: Option<String>,
    /// [`merge_models`] only: `producer_version` (default `"1.0"`; `None`: unset).
    pub producer_version: Option<String>,
    /// [`merge_models`] only: `domain` (default `""`, set; `None`: unset).
    pub domain: Option<String>,
    /// [`merge_models`] only: `model_version` (default 1; `None`: unset).
    pub model_version: Option<i64>,
}

impl MergeOptions {
    /// `onnx`'s defaults: all inputs and outputs not connected, no prefixes, default name
    /// and doc string, produced by `onnx.compose.merge_models` version `1.0`.
    pub fn new() -> Self {
        MergeOptions {
            producer_name: Some("onnx.compose.merge_models".into()),
            producer_version: Some("1.0".into()),
            domain: Some(String::new()),
            model_version: Some(1),
            ..MergeOptions::empty()
        }
    }

    fn empty() -> Self {
        MergeOptions {
            inputs: Vec::new(),
            outputs: Vec::new(),
            prefix1: String::new(),
            prefix2: String::new(),
            name: None,
            doc_string: None,
            producer_name: None,
            producer_version: None,
            domain: None,
            model_version: None,
        }
    }

    /// Sets `inputs`.
    pub fn inputs<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.inputs = names.into_iter().map(Into::into).collect();
        self
    }
    /// Sets `outputs`.
    pub fn outputs<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.outputs = names.into_iter().map(Into::into).collect();
        self
    }
    /// Sets `prefix1`.
    pub fn prefix1(mut self, prefix: impl Into<String>) -> Self {
        self.prefix1 = prefix.into();
        self
    }
    /// Sets `prefix2`.
    pub fn prefix2(mut self, prefix: impl Into<String>) -> Self {
        self.prefix2 = prefix.into();
        self
    }
    /// Sets `name`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets `doc_string`.
    pub fn doc_string(mut self, doc: impl Into<String>) -> Self {
        self.doc_string = Some(doc.into());
        self
    }
    /// Sets `producer_name` (`None`: unset).
    pub fn producer_name(mut self, name: Option<String>) -> Self {
        self.producer_name = name;
        self
    }
    /// Sets `producer_version` (`None`: unset).
    pub fn producer_version(mut self, version: Option<String>) -> Self {
        self.producer_version = version;
        self
    }
    /// Sets `domain` (`None`: unset).
    pub fn domain(mut self, domain: Option<String>) -> Self {
        self.domain = domain;
        self
    }
    /// Sets `model_version` (`None`: unset).
    pub fn model_version(mut self, version: Option<i64>) -> Self {
        self.model_version = version;
        self
    }
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions::new()
    }
}

/// `io_map` as owned pairs, with the prefixes applied to its names.
fn prefixed_io_map<A: AsRef<str>, B: AsRef<str>>(
    io_map: &[(A, B)],
    prefix1: &str,
    prefix2: &str,
) -> Vec<(String, String)> {
    io_map
        .iter()
        .map(|(o, i)| {
            (
                format!("{prefix1}{}", o.as_ref()),
                format!("{prefix2}{}", i.as_ref()),
            )
        })
        .collect()
}

/// Renames the inputs of the nodes of `graph` from `start` on (and of every node in
/// their subgraphs) that `connect` maps, the way `onnx` connects the second graph.
fn connect_inputs(graph: &mut GraphProto<'_>, start: usize, connect: &HashMap<&str, &str>) {
    for node in graph.node.iter_mut().skip(start) {
        for attr in &mut node.attribute {
            match attr.r#type.and_then(|t| t.get()) {
                // Each level of subgraphs first makes sure enough stack is left: a
                // graph built by hand may nest without bound.
                Some(AttributeType::Graph) => {
                    if let Some(g) = attr.g.as_deref_mut() {
                        crate::onnx::deep::guarded(|| connect_inputs(g, 0, connect));
                    }
                }
                Some(AttributeType::Graphs) => {
                    for g in &mut attr.graphs {
                        crate::onnx::deep::guarded(|| connect_inputs(g, 0, connect));
                    }
                }
                _ => {}
            }
        }
        for name in &mut node.input {
            if let Some(out) = connect.get(name.as_str()) {
                *name = Str::from(out.to_string());
            }
        }
    }
}

fn refs(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

/// The part of `graph` between `inputs` and `outputs`, as `onnx` extracts it while
/// merging (the graph of `Extractor(make_model(graph)).extract_model(...)`).
fn extract_graph<'a>(
    graph: &GraphProto<'a>,
    inputs: &[&str],
    outputs: &[&str],
) -> Result<GraphProto<'a>> {
    let extracted = Extractor::for_graph(graph, &[])?.extract_graph(inputs, outputs)?;
    Ok(extracted)
}

/// One graph made of `g1` and `g2`, the outputs of `g1` named first in `io_map` feeding
/// the inputs of `g2` named second (`onnx.compose.merge_graphs`). Inputs and outputs not
/// connected stay inputs and outputs (or only those `options` lists); the initializers
/// and value infos of connected inputs of `g2` are dropped; the first graph's connected
/// outputs are kept as value infos.
///
/// # Errors
/// [`ErrorKind::GraphEdit`], with `onnx`'s messages: an `io_map` name that is not an
/// output of `g1` or an input of `g2`; names both graphs use (see
/// [`check_overlapping_names`]; a prefix avoids them); a graph to cut down to `inputs`
/// and `outputs` that holds sparse initializers or quantization annotations, or whose
/// names are produced twice.
pub fn merge_graphs<'a, A: AsRef<str>, B: AsRef<str>>(
    g1: &GraphProto<'a>,
    g2: &GraphProto<'a>,
    io_map: &[(A, B)],
    options: &MergeOptions,
) -> Result<GraphProto<'a>> {
    let mut first = None;
    let mut second = None;
    if !options.prefix1.is_empty() {
        let mut g = g1.clone();
        add_prefix_graph(&mut g, &options.prefix1, &PrefixOptions::default());
        first = Some(g);
    }
    if !options.prefix2.is_empty() {
        let mut g = g2.clone();
        add_prefix_graph(&mut g, &options.prefix2, &PrefixOptions::default());
        second = Some(g);
    }
    let io_map = prefixed_io_map(io_map, &options.prefix1, &options.prefix2);
    merge_prefixed(
        first.as_ref().unwrap_or(g1),
        second.as_ref().unwrap_or(g2),
        &io_map,
        options,
    )
}

/// [`merge_graphs`] once the prefixes are applied.
fn merge_prefixed<'a>(
    g1: &GraphProto<'a>,
    g2: &GraphProto<'a>,
    io_map: &[(String, String)],
    options: &MergeOptions,
) -> Result<GraphProto<'a>> {
    let g1_outs: HashSet<&str> = g1.output.iter().map(|o| o.name()).collect();
    let g2_ins: HashSet<&str> = g2.input.iter().map(|i| i.name()).collect();
    let mapped_outs: HashSet<&str> = io_map.iter().map(|(o, _)| o.as_str()).collect();
    let mapped_ins: HashSet<&str> = io_map.iter().map(|(_, i)| i.as_str()).collect();

    // Cut the graphs down to the inputs and outputs kept, when fewer are kept.
    let mut cut1 = None;
    let mut cut2 = None;
    if !options.inputs.is_empty() || !options.outputs.is_empty() {
        let keep_in: HashSet<&str> = options.inputs.iter().map(String::as_str).collect();
        let keep_out: HashSet<&str> = options.outputs.iter().map(String::as_str).collect();
        let names = |list: &'_ [ValueInfoProto<'a>], keep: &dyn Fn(&str) -> bool| -> Vec<String> {
            list.iter()
                .map(|v| v.name())
                .filter(|n| keep(n))
                .map(str::to_string)
                .collect()
        };
        let all = |_: &str| true;
        let (g1_inputs, g2_inputs) = if options.inputs.is_empty() {
            (names(&g1.input, &all), names(&g2.input, &all))
        } else {
            (
                names(&g1.input, &|n| keep_in.contains(n)),
                names(&g2.input, &|n| {
                    keep_in.contains(n) || mapped_ins.contains(n)
                }),
            )
        };
        let (g1_outputs, g2_outputs) = if options.outputs.is_empty() {
            (names(&g1.output, &all), names(&g2.output, &all))
        } else {
            (
                names(&g1.output, &|n| {
                    keep_out.contains(n) || mapped_outs.contains(n)
                }),
                names(&g2.output, &|n| keep_out.contains(n)),
            )
        };
        if g1_inputs.len() < g1.input.len() || g1_outputs.len() < g1.output.len() {
            cut1 = Some(extract_graph(g1, &refs(&g1_inputs), &refs(&g1_outputs))?);
        }
        if g2_inputs.len() < g2.input.len() || g2_outputs.len() < g2.output.len() {
            cut2 = Some(extract_graph(g2, &refs(&g2_inputs), &refs(&g2_outputs))?);
        }
    }
    let g1 = cut1.as_ref().unwrap_or(g1);
    let g2 = cut2.as_ref().unwrap_or(g2);

    // The names are checked against the graphs as given, before any cut.
    for (out, inp) in io_map {
        if !g1_outs.contains(out.as_str()) {
            return Err(refuse(format!("Output {out} is not present in g1")));
        }
        if !g2_ins.contains(inp.as_str()) {
            return Err(refuse(format!("Input {inp} is not present in g2")));
        }
    }
    if let Some((category, names)) = check_overlapping_names(g1, g2, io_map).into_iter().next() {
        return Err(refuse(format!(
            "Cant merge two graphs with overlapping names. Found repeated {} names: {}\n\
             Consider using ``onnx.compose.add_prefix`` to add a prefix to names in one of the graphs.",
            category.as_str(),
            names.join(", ")
        )));
    }

    // The last pair connecting an input wins, as in the dictionary `onnx` builds.
    let mut connect: HashMap<&str, &str> = HashMap::new();
    for (out, inp) in io_map {
        connect.insert(inp.as_str(), out.as_str());
    }
    let mut g = GraphProto::default();
    g.node.reserve(g1.node.len() + g2.node.len());
    g.node.extend(g1.node.iter().cloned());
    let second_start = g.node.len();
    g.node.extend(g2.node.iter().cloned());
    connect_inputs(&mut g, second_start, &connect);

    if options.inputs.is_empty() {
        g.input.extend(g1.input.iter().cloned());
        g.input.extend(
            g2.input
                .iter()
                .filter(|i| !mapped_ins.contains(i.name()))
                .cloned(),
        );
    } else {
        let keep: HashSet<&str> = options.inputs.iter().map(String::as_str).collect();
        for list in [&g1.input, &g2.input] {
            g.input
                .extend(list.iter().filter(|i| keep.contains(i.name())).cloned());
        }
    }
    if options.outputs.is_empty() {
        g.output.extend(
            g1.output
                .iter()
                .filter(|o| !mapped_outs.contains(o.name()))
                .cloned(),
        );
        g.output.extend(g2.output.iter().cloned());
    } else {
        let keep: HashSet<&str> = options.outputs.iter().map(String::as_str).collect();
        for list in [&g1.output, &g2.output] {
            g.output
                .extend(list.iter().filter(|o| keep.contains(o.name())).cloned());
        }
    }

    g.initializer.extend(g1.initializer.iter().cloned());
    g.initializer.extend(
        g2.initializer
            .iter()
            .filter(|t| !mapped_ins.contains(t.name()))
            .cloned(),
    );
    g.sparse_initializer
        .extend(g1.sparse_initializer.iter().cloned());
    g.sparse_initializer.extend(
        g2.sparse_initializer
            .iter()
            .filter(|s| !mapped_ins.contains(s.values.as_ref().map_or("", |v| v.name())))
            .cloned(),
    );

    g.value_info.extend(g1.value_info.iter().cloned());
    g.value_info.extend(
        g2.value_info
            .iter()
            .filter(|v| !mapped_ins.contains(v.name()))
            .cloned(),
    );
    // The connected outputs of the first graph keep their types as value infos.
    let declared: HashSet<String> = g.value_info.iter().map(|v| v.name().to_string()).collect();
    let outputs: HashSet<String> = g.output.iter().map(|o| o.name().to_string()).collect();
    let kept: Vec<ValueInfoProto<'a>> = g1
        .output
        .iter()
        .filter(|o| {
            mapped_outs.contains(o.name())
                && !declared.contains(o.name())
                && !outputs.contains(o.name())
        })
        .cloned()
        .collect();
    g.value_info.extend(kept);

    g.name = Some(Str::from(match &options.name {
        Some(name) => name.clone(),
        None => format!("{}_{}", g1.name(), g2.name()),
    }));
    g.doc_string = Some(Str::from(match &options.doc_string {
        Some(doc) => doc.clone(),
        None => format!(
            "Graph combining {n1} and {n2}\n{n1}\n\n{d1}\n\n{n2}\n\n{d2}",
            n1 = g1.name(),
            n2 = g2.name(),
            d1 = g1.doc_string(),
            d2 = g2.doc_string()
        ),
    }));
    Ok(g)
}

/// Protobuf's text form of a list of opset imports, as `onnx` puts it in a message.
fn opsets_text(opsets: &[OperatorSetIdProto<'_>]) -> String {
    let items: Vec<String> = opsets
        .iter()
        .map(|o| {
            let mut s = String::new();
            if let Some(d) = &o.domain {
                s.push_str(&format!("domain: \"{}\"\n", c_escape(d)));
            }
            if let Some(v) = o.version {
                s.push_str(&format!("version: {v}\n"));
            }
            s
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// A string escaped as protobuf's text format writes it: C escapes, and octal for
/// bytes outside printable ASCII.
fn c_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// One model made of `m1` and `m2` (`onnx.compose.merge_models`): their graphs merged as
/// [`merge_graphs`] merges them (the prefixes renaming local functions too), the opset
/// imports of both (as listed, duplicates kept), their metadata and local functions; IR
/// version, producer and model version as `options` says. `onnx` then runs its checker
/// on the result: run [`checker::check_model`](crate::checker::check_model) for that.
///
/// # Errors
/// [`ErrorKind::GraphEdit`], with `onnx`'s messages: different IR versions, different
/// versions of one operator set, a metadata key with two values, a local function name
/// in both models, and the refusals of [`merge_graphs`].
pub fn merge_models<'a, A: AsRef<str>, B: AsRef<str>>(
    m1: &ModelProto<'a>,
    m2: &ModelProto<'a>,
    io_map: &[(A, B)],
    options: &MergeOptions,
) -> Result<ModelProto<'a>> {
    if m1.ir_version() != m2.ir_version() {
        return Err(refuse(format!(
            "IR version mismatch {} != {}. Both models should have the same IR version",
            m1.ir_version(),
            m2.ir_version()
        )));
    }
    let mut versions: HashMap<&str, i64> = HashMap::new();
    for entry in m1.opset_import.iter().chain(&m2.opset_import) {
        match versions.get(entry.domain()) {
            Some(&v) if v != entry.version() => {
                return Err(refuse(format!(
                    "Can't merge two models with different operator set ids for a given domain. Got: {} and {}",
                    opsets_text(&m1.opset_import),
                    opsets_text(&m2.opset_import)
                )))
            }
            Some(_) => {}
            None => {
                versions.insert(entry.domain(), entry.version());
            }
        }
    }

    let mut first = None;
    let mut second = None;
    if !options.prefix1.is_empty() {
        let mut m = m1.clone();
        add_prefix(&mut m, &options.prefix1, &PrefixOptions::default());
        first = Some(m);
    }
    if !options.prefix2.is_empty() {
        let mut m = m2.clone();
        add_prefix(&mut m, &options.prefix2, &PrefixOptions::default());
        second = Some(m);
    }
    let m1 = first.as_ref().unwrap_or(m1);
    let m2 = second.as_ref().unwrap_or(m2);
    let io_map = prefixed_io_map(io_map, &options.prefix1, &options.prefix2);
    let empty = GraphProto::default();
    let graph = merge_prefixed(
        m1.graph.as_ref().unwrap_or(&empty),
        m2.graph.as_ref().unwrap_or(&empty),
        &io_map,
        &MergeOptions {
            prefix1: String::new(),
            prefix2: String::new(),
            ..options.clone()
        },
    )?;

    let mut model = ModelProto {
        ir_version: Some(m1.ir_version()),
        graph: Some(graph),
        opset_import: m1
            .opset_import
            .iter()
            .chain(&m2.opset_import)
            .cloned()
            .collect(),
        producer_name: options.producer_name.clone().map(Str::from),
        producer_version: options.producer_version.clone().map(Str::from),
        domain: options.domain.clone().map(Str::from),
        model_version: options.model_version,
        ..ModelProto::default()
    };

    // Metadata: every key once, in order of first appearance, with its last value in the
    // first model; the second model may repeat a key only with the same value.
    let mut keys: Vec<&str> = Vec::new();
    let mut values: HashMap<&str, &str> = HashMap::new();
    for entry in &m1.metadata_props {
        if values.insert(entry.key(), entry.value()).is_none() {
            keys.push(entry.key());
        }
    }
    for entry in &m2.metadata_props {
        match values.get(entry.key()) {
            Some(&v) if v != entry.value() => {
                return Err(refuse(format!(
                "Can't merge models with different values for the same model metadata property. \
                     Found: property = {}, with values {v} and {}.",
                entry.key(),
                entry.value()
            )))
            }
            Some(_) => {}
            None => {
                values.insert(entry.key(), entry.value());
                keys.push(entry.key());
            }
        }
    }
    model.metadata_props = keys
        .iter()
        .map(|k| StringStringEntryProto {
            key: Some(Str::from(k.to_string())),
            value: Some(Str::from(values[k].to_string())),
            ..StringStringEntryProto::default()
        })
        .collect();

    let second_names: HashSet<&str> = m2.functions.iter().map(|f| f.name()).collect();
    let both = overlap(m1.functions.iter().map(|f| f.name()), second_names);
    if !both.is_empty() {
        return Err(refuse(format!(
            "Can't merge models with overlapping local function names. Found in both graphs: {}",
            both.join(", ")
        )));
    }
    model.functions = m1.functions.iter().chain(&m2.functions).cloned().collect();
    Ok(model)
}

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

/// Python's `list.insert` position: `index` counted from the end when negative, clamped
/// to the list.
fn insert_position(index: i64, len: usize) -> usize {
    let len = len as i64;
    let i = if index < 0 { index + len } else { index };
    i.clamp(0, len) as usize
}

/// Gives every output of `graph` one more dimension, of size 1, at `dim_idx` (negative:
/// from the back), as `onnx.compose.expand_out_dim_graph` does with `inplace=True`: the
/// values the outputs were are renamed `<name>_collapsed_dim_<dim_idx>`, and one
/// `Unsqueeze` per output (after one `Constant` holding the axis) produces the output.
/// The outputs are declared anew as tensors of their element type and sizes (a
/// symbolic dimension becomes 0, as there).
pub fn expand_out_dim_graph(graph: &mut GraphProto<'_>, dim_idx: i64) {
    let suffix = format!("_collapsed_dim_{dim_idx}");
    let outputs: HashSet<String> = graph.output.iter().map(|o| o.name().to_string()).collect();
    for node in &mut graph.node {
        for name in node.output.iter_mut().chain(node.input.iter_mut()) {
            if outputs.contains(name.as_str()) {
                *name = Str::from(format!("{name}{suffix}"));
            }
        }
    }
    let axis = format!("{}_expand_out_dim_idx", graph.name());
    let value = TensorProto {
        name: Some(Str::from(format!("{axis}-value"))),
        data_type: Some(i32::from(DataType::Int64)),
        dims: vec![1],
        int64_data: vec![dim_idx],
        ..TensorProto::default()
    };
    let mut constant = NodeProto::new("Constant", Vec::<&str>::new(), [axis.clone()])
        .with_name(format!("{axis}-constant"));
    constant
        .attribute
        .push(AttributeProto::tensor("value", value));
    graph.node.push(constant);

    for o in std::mem::take(&mut graph.output) {
        let name = o.name().to_string();
        let collapsed = format!("{name}{suffix}");
        graph.node.push(
            NodeProto::new("Unsqueeze", [collapsed, axis.clone()], [name.clone()])
                .with_name(format!("unsqueeze-{name}")),
        );
        let tensor = match o.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(TypeValue::TensorType(t)) => Some(t),
            _ => None,
        };
        let mut sizes: Vec<i64> = tensor
            .and_then(|t| t.shape.as_ref())
            .map_or_else(Vec::new, |s| {
                s.dim.iter().map(|d| d.as_value().unwrap_or(0)).collect()
            });
        sizes.insert(insert_position(dim_idx, sizes.len()), 1);
        let elem_type = tensor.and_then(|t| t.elem_type_raw).unwrap_or(0);
        graph.output.push(ValueInfoProto {
            name: Some(Str::from(name)),
            r#type: Some(TypeProto {
                value: Some(TypeValue::TensorType(crate::onnx::TypeProtoTensor {
                    elem_type_raw: Some(elem_type),
                    shape: Some(TensorShapeProto::new(
                        sizes.into_iter().map(Dimension::value),
                    )),
                    ..Default::default()
                })),
                ..TypeProto::default()
            }),
            ..ValueInfoProto::default()
        });
    }
}

/// [`expand_out_dim_graph`] on `model`'s graph (`onnx.compose.expand_out_dim`).
pub fn expand_out_dim(model: &mut ModelProto<'_>, dim_idx: i64) {
    let graph = model.graph.get_or_insert_with(GraphProto::default);
    expand_out_dim_graph(graph, dim_idx);
}

#[cfg(test)]
mod tests;
