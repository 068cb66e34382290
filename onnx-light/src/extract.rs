//! Cutting a sub-model out of a model, as `onnx.utils` does: [`Extractor`] keeps the
//! nodes that the chosen outputs depend on, back to the chosen inputs, with the
//! initializers, value infos and local functions they use; [`extract_model_file`] does
//! it file to file.
//!
//! The result is `onnx.utils.Extractor.extract_model`'s, field for field (nodes in their
//! original order, `"Extracted from {<graph name>}"`, producer
//! `onnx.utils.extract_model`), and so are the refusals ([`ErrorKind::GraphEdit`], with
//! `onnx`'s messages). As in `onnx`, the walk does not look into the graphs of control-flow
//! nodes: a sub-model boundary must not cut through them.
//!
//! Weights are never read: the kept initializers are cloned as they are, so on a model
//! loaded structure-only they stay on disk, and [`extract_model_file`] copies only the
//! kept ones from the source file (or its data files) into the new model.
//!
//! ```
//! use onnx_light::extract::Extractor;
//! use onnx_light::onnx::*;
//!
//! let mut g = GraphProto::named("g");
//! g.input.push(ValueInfoProto::tensor("x", DataType::Float, [2]));
//! g.value_info.push(ValueInfoProto::tensor("h", DataType::Float, [2]));
//! g.output.push(ValueInfoProto::tensor("y", DataType::Float, [2]));
//! g.node.push(NodeProto::new("Relu", ["x"], ["h"]));
//! g.node.push(NodeProto::new("Neg", ["h"], ["y"]));
//! let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
//!
//! let part = Extractor::new(&model)?.extract_model(&["h"], &["y"])?;
//! let g = part.graph.as_ref().unwrap();
//! assert_eq!(g.node.len(), 1);
//! assert_eq!(g.node[0].op_type(), "Neg");
//! assert_eq!(g.name(), "Extracted from {g}");
//! assert_eq!(part.producer_name(), "onnx.utils.extract_model");
//! # Ok::<(), onnx_light::Error>(())
//! ```

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind, Result};
use crate::field::Str;
use crate::io::external::ExternalDataOptions;
use crate::io::{self, ParseOptions, Saved, SerializeOptions};
use crate::onnx::{
    DataLocation, FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto,
};
use crate::shape::{self, InferOptions};

/// The largest model `onnx` writes in one file (protobuf's limit): a larger extracted
/// model goes to external data, as `onnx.utils.extract_model` saves it.
pub const MAXIMUM_PROTOBUF: u64 = 2_147_483_647;

fn refuse(reason: impl Into<String>) -> Error {
    Error::new(ErrorKind::GraphEdit {
        reason: reason.into(),
    })
}

/// Values by name, in the order each name first appears, each with the last value given
/// for it (a Python dictionary built from a list).
struct ByName<'m, T> {
    order: Vec<(&'m str, &'m T)>,
    index: HashMap<&'m str, usize>,
}

impl<'m, T> ByName<'m, T> {
    fn new() -> Self {
        ByName {
            order: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn insert(&mut self, name: &'m str, value: &'m T) {
        match self.index.get(name) {
            Some(&i) => self.order[i].1 = value,
            None => {
                self.index.insert(name, self.order.len());
                self.order.push((name, value));
            }
        }
    }

    fn get(&self, name: &str) -> Option<&'m T> {
        self.index.get(name).map(|&i| self.order[i].1)
    }
}

/// The graph of a model without one: `onnx` reads an unset graph as an empty one.
fn empty_graph() -> &'static GraphProto<'static> {
    static EMPTY: OnceLock<GraphProto<'static>> = OnceLock::new();
    EMPTY.get_or_init(GraphProto::default)
}

/// Selects sub-models of a model (`onnx.utils.Extractor`). Built once per model; each
/// [`extract_model`](Self::extract_model) call copies the part it keeps.
pub struct Extractor<'m, 'a> {
    model: Option<&'m ModelProto<'a>>,
    graph: &'m GraphProto<'a>,
    functions: &'m [FunctionProto<'a>],
    /// The node writing each name.
    producers: HashMap<&'m str, usize>,
    initializers: ByName<'m, TensorProto<'a>>,
    /// Value infos, then graph inputs, then graph outputs (a later one replacing the
    /// type of an earlier one of the same name).
    value_infos: ByName<'m, ValueInfoProto<'a>>,
}

impl std::fmt::Debug for Extractor<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extractor")
            .field("graph", &self.graph.name())
            .field("nodes", &self.graph.node.len())
            .field("functions", &self.functions.len())
            .finish_non_exhaustive()
    }
}

impl<'m, 'a> Extractor<'m, 'a> {
    /// An extractor of `model`'s graph.
    ///
    /// # Errors
    /// [`ErrorKind::GraphEdit`] when two nodes write the same name (the graph is not in
    /// single assignment form; `onnx` asserts it).
    pub fn new(model: &'m ModelProto<'a>) -> Result<Self> {
        let graph = model.graph.as_ref().unwrap_or(empty_graph());
        let mut e = Self::for_graph(graph, &model.functions)?;
        e.model = Some(model);
        Ok(e)
    }

    /// An extractor of `graph` alone, with the local functions `functions` (the model
    /// `onnx` makes around a graph while merging has none).
    pub(crate) fn for_graph(
        graph: &'m GraphProto<'a>,
        functions: &'m [FunctionProto<'a>],
    ) -> Result<Self> {
        let mut producers = HashMap::new();
        for (i, node) in graph.node.iter().enumerate() {
            for name in &node.output {
                if name.is_empty() {
                    continue;
                }
                if let Some(first) = producers.insert(name.as_str(), i) {
                    return Err(refuse(format!(
                        "the name {:?} is written by node {first} and node {i}: a graph writes each name once",
                        name.as_str()
                    )));
                }
            }
        }
        let mut initializers = ByName::new();
        for t in &graph.initializer {
            initializers.insert(t.name(), t);
        }
        let mut value_infos = ByName::new();
        for v in graph
            .value_info
            .iter()
            .chain(&graph.input)
            .chain(&graph.output)
        {
            value_infos.insert(v.name(), v);
        }
        Ok(Extractor {
            model: None,
            graph,
            functions,
            producers,
            initializers,
            value_infos,
        })
    }

    /// The value infos (declared, input or output) of `names`, in that order.
    ///
    /// # Errors
    /// [`ErrorKind::GraphEdit`] listing every name that has none.
    pub fn value_infos_of<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<&'m ValueInfoProto<'a>>> {
        let missing: Vec<&str> = names
            .iter()
            .map(AsRef::as_ref)
            .filter(|n| self.value_infos.get(n).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(refuse(format!(
                "The following names were not found in value_infos: {}",
                missing.join(", ")
            )));
        }
        Ok(names
            .iter()
            .filter_map(|n| self.value_infos.get(n.as_ref()))
            .collect())
    }

    /// The indices of the nodes that `outputs` depend on, walking back from them through
    /// the nodes that write each name read, and stopping at `inputs`; in graph order.
    pub fn reachable_nodes<I: AsRef<str>, O: AsRef<str>>(
        &self,
        inputs: &[I],
        outputs: &[O],
    ) -> Vec<usize> {
        let stop: HashSet<&str> = inputs.iter().map(AsRef::as_ref).collect();
        let mut reached = vec![false; self.graph.node.len()];
        let mut stack: Vec<&str> = Vec::new();
        for out in outputs {
            stack.push(out.as_ref());
            while let Some(name) = stack.pop() {
                if stop.contains(name) {
                    continue;
                }
                let Some(&i) = self.producers.get(name) else {
                    continue;
                };
                if !reached[i] {
                    reached[i] = true;
                    stack.extend(
                        self.graph.node[i]
                            .input
                            .iter()
                            .map(|s| s.as_str())
                            .filter(|s| !s.is_empty()),
                    );
                }
            }
        }
        (0..reached.len()).filter(|&i| reached[i]).collect()
    }

    /// The indices (in the model's list) of the local functions `nodes` call, directly or
    /// through other functions, in the order they are found (breadth first); a function
    /// is matched by name and domain.
    pub fn referred_functions<'n>(
        &self,
        nodes: impl IntoIterator<Item = &'n NodeProto<'n>>,
    ) -> Vec<usize>
    where
        'm: 'n,
    {
        // The last function of a name and domain is the one called, as in a dictionary.
        let mut by_key: HashMap<(&str, &str), usize> = HashMap::new();
        for (i, f) in self.functions.iter().enumerate() {
            by_key.insert((f.name(), f.domain()), i);
        }
        let mut found = Vec::new();
        let mut queue: VecDeque<&'n NodeProto<'n>> = nodes.into_iter().collect();
        while let Some(node) = queue.pop_front() {
            if let Some(i) = by_key.remove(&(node.op_type(), node.domain())) {
                found.push(i);
                queue.extend(self.functions[i].node.iter());
            }
        }
        found
    }

    /// The initializers and value infos whose names `nodes` read or write, in the order
    /// of the graph's lists.
    ///
    /// # Errors
    /// [`ErrorKind::GraphEdit`] for a graph with sparse initializers or quantization
    /// annotations, which `onnx` does not extract.
    pub fn reachable_tensors<'n>(
        &self,
        nodes: impl IntoIterator<Item = &'n NodeProto<'n>>,
    ) -> Result<(Vec<&'m TensorProto<'a>>, Vec<&'m ValueInfoProto<'a>>)>
    where
        'm: 'n,
    {
        let mut used: HashSet<&str> = HashSet::new();
        for node in nodes {
            used.extend(node.input.iter().chain(&node.output).map(|s| s.as_str()));
        }
        let initializers = self
            .initializers
            .order
            .iter()
            .filter(|(n, _)| used.contains(n))
            .map(|&(_, t)| t)
            .collect();
        let value_infos = self
            .value_infos
            .order
            .iter()
            .filter(|(n, _)| used.contains(n))
            .map(|&(_, v)| v)
            .collect();
        let sparse = self.graph.sparse_initializer.len();
        if sparse != 0 {
            return Err(refuse(format!(
                "len_sparse_initializer is {sparse}, it must be 0."
            )));
        }
        let annotations = self.graph.quantization_annotation.len();
        if annotations != 0 {
            return Err(refuse(format!(
                "len_quantization_annotation is {annotations}, it must be 0."
            )));
        }
        Ok((initializers, value_infos))
    }

    /// The graph of the sub-model between `inputs` and `outputs`.
    pub(crate) fn extract_graph<I: AsRef<str>, O: AsRef<str>>(
        &self,
        inputs: &[I],
        outputs: &[O],
    ) -> Result<GraphProto<'a>> {
        Ok(self.extract_parts(inputs, outputs)?.0)
    }

    /// The extracted graph and the indices of the local functions it calls.
    fn extract_parts<I: AsRef<str>, O: AsRef<str>>(
        &self,
        inputs: &[I],
        outputs: &[O],
    ) -> Result<(GraphProto<'a>, Vec<usize>)> {
        let input_infos = self.value_infos_of(inputs)?;
        let output_infos = self.value_infos_of(outputs)?;
        let nodes: Vec<&'m NodeProto<'a>> = self
            .reachable_nodes(inputs, outputs)
            .into_iter()
            .map(|i| &self.graph.node[i])
            .collect();
        let (initializers, value_infos) = self.reachable_tensors(nodes.iter().copied())?;
        let functions = self.referred_functions(nodes.iter().copied());
        let graph = GraphProto {
            node: nodes.into_iter().cloned().collect(),
            name: Some(Str::from(format!(
                "Extracted from {{{}}}",
                self.graph.name()
            ))),
            input: input_infos.into_iter().cloned().collect(),
            output: output_infos.into_iter().cloned().collect(),
            initializer: initializers.into_iter().cloned().collect(),
            value_info: value_infos.into_iter().cloned().collect(),
            ..GraphProto::default()
        };
        Ok((graph, functions))
    }

    /// The sub-model computing `outputs` from `inputs` (`onnx`'s
    /// `Extractor.extract_model`): the nodes between them in graph order, the
    /// initializers, value infos and local functions those use, the model's IR version
    /// and opset imports, producer `onnx.utils.extract_model`.
    ///
    /// # Errors
    /// [`ErrorKind::GraphEdit`] for an input or output name that is not a value info, an
    /// input or an output of the graph (all such names are listed), and the refusals
    /// of [`reachable_tensors`](Self::reachable_tensors).
    pub fn extract_model<I: AsRef<str>, O: AsRef<str>>(
        &self,
        inputs: &[I],
        outputs: &[O],
    ) -> Result<ModelProto<'a>> {
        let (graph, functions) = self.extract_parts(inputs, outputs)?;
        let (ir_version, opset_import) = match self.model {
            Some(m) => (m.ir_version(), m.opset_import.clone()),
            None => (crate::onnx::IR_VERSION, Vec::new()),
        };
        Ok(ModelProto {
            ir_version: Some(ir_version),
            producer_name: Some(Str::from("onnx.utils.extract_model")),
            graph: Some(graph),
            opset_import,
            functions: functions
                .into_iter()
                .map(|i| self.functions[i].clone())
                .collect(),
            ..ModelProto::default()
        })
    }
}

/// How [`extract_model_file`] reads the source model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExtractOptions {
    /// Infer the types of the source model's values first (default true), so that the
    /// sub-model's inputs and outputs can be any value, not only declared ones.
    pub infer_shapes: bool,
    /// How the source is loaded (default: structure-only, external data left in its
    /// files, so that only the kept weights are ever read).
    pub parse: ParseOptions,
    /// How the sub-model is saved (default: atomically, synced).
    pub serialize: SerializeOptions,
    /// A sub-model larger than this many bytes puts its tensors of 1024 bytes and more
    /// in the data file [`external_data_location`] (default [`MAXIMUM_PROTOBUF`], where
    /// `onnx` does).
    pub max_single_file: u64,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            infer_shapes: true,
            parse: ParseOptions::default().structure_only(true),
            serialize: SerializeOptions::default(),
            max_single_file: MAXIMUM_PROTOBUF,
        }
    }
}

impl ExtractOptions {
    /// Sets `infer_shapes`.
    pub fn infer_shapes(mut self, yes: bool) -> Self {
        self.infer_shapes = yes;
        self
    }
    /// Sets `parse`.
    pub fn parse(mut self, options: ParseOptions) -> Self {
        self.parse = options;
        self
    }
    /// Sets `serialize`.
    pub fn serialize(mut self, options: SerializeOptions) -> Self {
        self.serialize = options;
        self
    }
    /// Sets `max_single_file`.
    pub fn max_single_file(mut self, bytes: u64) -> Self {
        self.max_single_file = bytes;
        self
    }
}

/// The data file [`extract_model_file`] writes next to `output` for a sub-model larger
/// than [`MAXIMUM_PROTOBUF`]: its file name with `.data` appended.
pub fn external_data_location(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".data");
    PathBuf::from(name)
}

/// Extracts the sub-model of the model at `input` that computes `outputs` from
/// `inputs` and saves it to `output` (`onnx.utils.extract_model` without its checks).
/// The source is read structure-only, its types inferred (with
/// [`ExtractOptions::infer_shapes`]; before its external data is attached, so that, as
/// in `onnx`, values stored in data files are not read), and the kept weights are
/// copied file to file into
/// the new model: inline, or, when the sub-model would exceed
/// [`ExtractOptions::max_single_file`] bytes ([`MAXIMUM_PROTOBUF`]), into the data file
/// [`external_data_location`] beside `output`, as `onnx` saves it. Weights the sub-model does not keep are never read.
///
/// # Errors
/// Loading and saving errors naming the files; inference errors; the refusals of
/// [`Extractor::extract_model`].
pub fn extract_model_file<I: AsRef<str>, O: AsRef<str>>(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    inputs: &[I],
    outputs: &[O],
    options: &ExtractOptions,
) -> Result<Saved> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let external = options.parse.load_external_data;
    // As in `onnx`, types are inferred before the external data is loaded: inference
    // does not read values stored in data files (a `Reshape` shape among them).
    let first = options
        .parse
        .clone()
        .load_external_data(external && !options.infer_shapes);
    let mut model = io::load_with(input, &first)?;
    if options.infer_shapes {
        shape::infer_shapes(&mut model, &InferOptions::default())?;
        if external {
            let dir = match &options.parse.external_data_dir {
                Some(dir) => dir.clone(),
                None => io::model_directory(input)?,
            };
            io::load_external_data_for_model(&mut model, dir, &options.parse)?;
        }
    }
    // The external tensors were loaded (left in their files, lazily): as `onnx` loads
    // them, they become inline tensors with `data_location = DEFAULT`.
    if external {
        model.visit_tensors_mut(|_, t| {
            if t.is_external() && t.lazy_data.is_some() {
                t.data_location = Some(DataLocation::Default.into());
                t.external_data.clear();
            }
        });
    }
    let extracted = Extractor::new(&model)?.extract_model(inputs, outputs)?;
    drop(model);
    let mut serialize = options.serialize.clone();
    if io::encoded_len_with_lazy(&extracted)? > options.max_single_file {
        let location = external_data_location(output);
        // One file, tensors back to back (no alignment), as `onnx.save` writes them.
        serialize = serialize.external_data(
            ExternalDataOptions::new(location.to_string_lossy().into_owned()).alignment(1),
        );
    }
    io::save(&extracted, output, &serialize)
}

#[cfg(test)]
mod tests;
