//! Merging two graphs or two models into one (`onnx.compose.merge_graphs`,
//! `merge_models`).

use std::collections::{HashMap, HashSet};

use super::prefix::{add_prefix, add_prefix_graph, PrefixOptions};
use super::{check_overlapping_names, overlap, refuse};
use crate::error::Result;
use crate::extract::Extractor;
use crate::field::Str;
use crate::onnx::{
    AttributeType, GraphProto, ModelProto, OperatorSetIdProto, StringStringEntryProto,
    ValueInfoProto,
};

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
/// [`ErrorKind::GraphEdit`](crate::ErrorKind::GraphEdit), with `onnx`'s messages: an
/// `io_map` name that is not an output of `g1` or an input of `g2`; names both graphs
/// use (see
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
/// [`ErrorKind::GraphEdit`](crate::ErrorKind::GraphEdit), with `onnx`'s messages:
/// different IR versions, different versions of one operator set, a metadata key with
/// two values, a local function name in both models, and the refusals of
/// [`merge_graphs`].
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
