//! Type and shape inference: the types of the values a graph computes, from the types
//! of its inputs and initializers and the rules of each operator, as
//! `onnx.shape_inference.infer_shapes` gives them.
//!
//! [`infer_shapes`] walks the nodes of the main graph in order. Each node's output types
//! come from its operator's rule (`rules`); each is merged into what the graph already
//! declares for that name (a `value_info` entry or a graph output), or appended to
//! `value_info` in the order the nodes produce them, exactly as `onnx` merges and orders
//! them: a declared dimension with no value and no name takes the inferred one, an
//! inferred size replaces a declared name, conflicting sizes, ranks or element types are
//! errors. An inferred dimension that is neither a size nor a name gets a fresh name
//! (`unk__0`, `unk__1`, ...) that no dimension of the graph uses, as in `onnx`.
//!
//! Operators without a rule here (yet) infer nothing, as an operator `onnx` has no
//! schema for: their outputs stay without a type. Weights are not needed: a rule reads
//! the values of small constants (the `shape` of a `Reshape`, the `axes` of an
//! `Unsqueeze`, the `scales` of a `Resize`, the bounds of a `Range`) from initializers
//! and `Constant` nodes, and nothing else; a structure-only load fetches just those.
//!
//! With [`InferOptions::data_prop`] (`onnx`'s `data_prop=True`), the values of the small
//! integer tensors computed from shapes are worked out too, node by node: `Shape`,
//! `Size`, `Gather`, `Slice` and `Concat` (along the first axis), `Squeeze`, `Unsqueeze`,
//! `Cast`, `Add`, `Sub` and `Mul` propagate them, each value a size, a symbolic name or
//! unknown. `Reshape`, `Expand`, `ConstantOfShape`, `Resize` (its `sizes`) and
//! `AffineGrid` then take their shape from them when it is not a constant, so a
//! `Reshape` to `Concat(Shape(x)[0:1], [-1])` keeps `x`'s batch name. The values cross
//! into the graphs of control-flow nodes and through calls of functions, as in `onnx`.
//!
//! ```
//! use onnx_light::onnx::*;
//! use onnx_light::shape::{infer_shapes, InferOptions};
//!
//! let mut g = GraphProto::named("g");
//! g.input.push(ValueInfoProto::tensor("x", DataType::Float, [Dimension::param("n"), 3.into()]));
//! g.input.push(ValueInfoProto::tensor("b", DataType::Float, [3]));
//! g.node.push(NodeProto::new("Add", ["x", "b"], ["y"]));
//! g.node.push(NodeProto::new("Relu", ["y"], ["z"]));
//! g.output.push(ValueInfoProto { name: Some("z".into()), ..Default::default() });
//! let mut model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
//! infer_shapes(&mut model, &InferOptions::default())?;
//! let g = model.graph.as_ref().unwrap();
//! assert_eq!(g.value_info[0].name(), "y");
//! assert_eq!(g.value_info[0].r#type.as_ref().unwrap().to_string(), "float[n,3]");
//! assert_eq!(g.output[0].r#type.as_ref().unwrap().to_string(), "float[n,3]");
//! # Ok::<(), onnx_light::Error>(())
//! ```

mod broadcast;
mod check_type;
mod controlflow;
mod conv;
mod data_prop;
mod function;
mod kit;
mod ml;
mod models;
mod resize;
mod rules;
mod sequence;
mod tensor;
#[cfg(test)]
mod test_support;
mod types;

use types::{with_raw_elem_type, Constant, Constants};

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault};

use crate::checker::hash::NameHasher;

use crate::error::{Error, ErrorKind, Result};
use crate::onnx::{
    AttributeProto, DataType, DimensionValue, FunctionProto, GraphProto, ModelProto,
    TensorShapeProto, TypeProto, TypeValue, ValueInfoProto,
};

/// What [`infer_shapes`] checks and how it reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InferOptions {
    /// An inference error fails the call (`onnx`'s `strict_mode`); without, the node
    /// whose inference failed is skipped and the walk goes on.
    pub strict_mode: bool,
    /// Each node's input types are checked against its operator's schema first (the
    /// types its formal parameters allow; one type per type parameter), as `onnx`'s
    /// `check_type`. A mismatch fails the call in either mode, as in `onnx`.
    pub check_type: bool,
    /// The values of small integer tensors computed from shapes (`Shape`, `Gather`,
    /// `Concat`, `Slice`, arithmetic, ...) are propagated, and the rules that take a
    /// shape as input (`Reshape`, `Expand`, `ConstantOfShape`, ...) use them, symbolic
    /// dimensions included: `onnx`'s `data_prop`.
    pub data_prop: bool,
}

impl InferOptions {
    /// Sets [`strict_mode`](Self::strict_mode).
    pub fn strict_mode(mut self, yes: bool) -> Self {
        self.strict_mode = yes;
        self
    }

    /// Sets [`check_type`](Self::check_type).
    pub fn check_type(mut self, yes: bool) -> Self {
        self.check_type = yes;
        self
    }

    /// Sets [`data_prop`](Self::data_prop).
    pub fn data_prop(mut self, yes: bool) -> Self {
        self.data_prop = yes;
        self
    }
}

/// Why the types of one node could not be inferred or merged.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InferenceError {
    node_index: usize,
    node_name: String,
    op_type: String,
    reason: String,
    /// An error of the graph itself, before its nodes: the node fields are unused and
    /// `reason` carries `onnx`'s category.
    of_graph: bool,
}

impl From<InferenceError> for Error {
    fn from(e: InferenceError) -> Self {
        if e.of_graph {
            return Error::new(ErrorKind::GraphInference { reason: e.reason });
        }
        Error::new(ErrorKind::Inference {
            node_index: e.node_index,
            node_name: e.node_name,
            op_type: e.op_type,
            reason: e.reason,
        })
    }
}

/// Infers the types of the values `model`'s main graph computes and records them in the
/// graph (see the module documentation).
///
/// # Errors
/// With [`InferOptions::strict_mode`], the first node whose types conflict with the
/// declared ones or break its operator's rules: [`ErrorKind::Inference`] with the
/// node's index, name, operator and the reason. In either mode, as `onnx`:
/// [`ErrorKind::InvalidModel`] when local functions call each other in a cycle or share
/// an identifier, and [`ErrorKind::GraphInference`] when an initializer's type
/// conflicts with the type declared for it.
pub fn infer_shapes(model: &mut ModelProto<'_>, options: &InferOptions) -> Result<()> {
    let opsets: HashMap<String, i64> = model
        .opset_import
        .iter()
        .map(|o| (o.domain().to_string(), o.version()))
        .collect();
    // As `onnx`, local functions that call each other in a cycle are refused first.
    if let Some((_, reason)) = crate::checker::function_call_problems(model)
        .into_iter()
        .next()
    {
        return Err(Error::new(ErrorKind::InvalidModel { reason }));
    }
    let ir_version = model.ir_version();
    let ModelProto {
        graph, functions, ..
    } = model;
    let Some(graph) = graph.as_mut() else {
        return Ok(());
    };
    let functions: HashMap<String, &FunctionProto<'_>> = functions
        .iter()
        .map(|f| (function_id(f.domain(), f.name(), f.overload()), f))
        .collect();
    let mut symbols = Symbols::of(graph);
    let mut propagation = data_prop::Propagation::default();
    let mut walk = Walk {
        opsets: &opsets,
        options,
        symbols: &mut symbols,
        functions: &functions,
        active: &mut Vec::new(),
        propagation: options.data_prop.then_some(&mut propagation),
    };
    let errors = infer_graph(graph, &mut walk, None, ir_version, Constants::default())?;
    match errors.into_iter().next() {
        Some(e) if options.strict_mode => Err(e.into()),
        _ => Ok(()),
    }
}

/// The types of `function`'s outputs for a call with inputs of `input_types` and the
/// caller's `attributes`, inferred through its body (attribute references bound to
/// `attributes`, else to the function's defaults), as
/// `onnx.shape_inference.infer_function_output_types` gives them: an output not
/// inferred is an empty type. Inputs past `input_types` are untyped.
///
/// # Errors
/// The first node of the body whose types conflict or break its operator's rules or
/// schema ([`ErrorKind::Inference`]): the body is checked as in strict mode with
/// [`InferOptions::check_type`].
pub fn infer_function_output_types(
    function: &FunctionProto<'_>,
    input_types: &[TypeProto<'_>],
    attributes: &[AttributeProto<'_>],
) -> Result<Vec<TypeProto<'static>>> {
    let opsets: HashMap<String, i64> = function
        .opset_import
        .iter()
        .map(|o| (o.domain().to_string(), o.version()))
        .collect();
    let actuals = input_types
        .iter()
        .map(|t| match is_unset(t) {
            true => function::Actual::Absent,
            false => function::Actual::Given(Some(kit::owned_type(t))),
        })
        .collect();
    let mut graph = function::instantiate(function, actuals, attributes);
    let options = InferOptions::default().strict_mode(true).check_type(true);
    // As in `onnx`, unknown dimensions of a function's values stay unnamed.
    let mut symbols = Symbols::disabled();
    let mut walk = Walk {
        opsets: &opsets,
        options: &options,
        symbols: &mut symbols,
        functions: &HashMap::new(),
        active: &mut Vec::new(),
        propagation: None,
    };
    // Bodies have no initializers: the IR version (which decides whether initializers
    // are typed) plays no part.
    let errors = infer_graph(&mut graph, &mut walk, None, i64::MAX, Constants::default())?;
    if let Some(e) = errors.into_iter().next() {
        return Err(e.into());
    }
    Ok(graph
        .output
        .into_iter()
        .map(|o| o.r#type.unwrap_or_default())
        .collect())
}

/// A type with nothing in it (no tensor, sequence, ... set).
fn is_unset(t: &TypeProto<'_>) -> bool {
    t.value.is_none()
}

/// A table by value name. Its names come from the model and it lives for one walk: a
/// fast hash (as the checker's name sets use) serves it; a crafted model can only slow
/// it down.
type Names<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

/// Where the known type of a value lives while a graph is walked.
#[derive(Clone, Copy)]
enum Home {
    ValueInfo(usize),
    Input(usize),
    Output(usize),
    /// An initializer that is not a graph input: its type is kept aside.
    Initializer(usize),
}

/// Homes by value name without a copy of the names: keyed by the name's hash, each hit
/// confirmed against the name the graph holds at the home. A name whose hash an earlier,
/// different name already has goes to a side table by name (empty in practice).
#[derive(Default)]
struct Homes {
    by_hash: HashMap<u64, Home, BuildHasherDefault<NameHasher>>,
    collided: Names<Home>,
}

impl Homes {
    fn with_capacity(n: usize) -> Self {
        Homes {
            by_hash: HashMap::with_capacity_and_hasher(n, Default::default()),
            collided: Names::default(),
        }
    }

    fn hash(name: &str) -> u64 {
        BuildHasherDefault::<NameHasher>::default().hash_one(name)
    }

    /// The home of `name`; `at` gives the name held at a home.
    fn get<'n>(&self, name: &str, at: impl Fn(Home) -> &'n str) -> Option<Home> {
        self.get_hashed(Self::hash(name), name, at)
    }

    /// Makes `home` the home of `name` (replacing its earlier one); `at` gives the name
    /// held at a home.
    fn insert<'n>(&mut self, name: &str, home: Home, at: impl Fn(Home) -> &'n str) {
        self.insert_hashed(Self::hash(name), name, home, at)
    }

    /// [`get`](Self::get) of a name whose hash is `hash`.
    fn get_hashed<'n>(&self, hash: u64, name: &str, at: impl Fn(Home) -> &'n str) -> Option<Home> {
        // A collided name's hash is always in `by_hash` too: a miss there is final.
        let &home = self.by_hash.get(&hash)?;
        if at(home) == name {
            Some(home)
        } else if self.collided.is_empty() {
            None
        } else {
            self.collided.get(name).copied()
        }
    }

    /// [`insert`](Self::insert) of a name whose hash is `hash`.
    fn insert_hashed<'n>(
        &mut self,
        hash: u64,
        name: &str,
        home: Home,
        at: impl Fn(Home) -> &'n str,
    ) {
        use std::collections::hash_map::Entry;
        match self.by_hash.entry(hash) {
            Entry::Vacant(e) => {
                e.insert(home);
            }
            Entry::Occupied(mut e) if at(*e.get()) == name => {
                e.insert(home);
            }
            Entry::Occupied(_) => {
                self.collided.insert(name.to_string(), home);
            }
        }
    }
}

/// The types known by value name, and the constants rules may read.
struct Known {
    homes: Homes,
    initializer_types: Vec<TypeProto<'static>>,
    /// For each of `initializer_types`, the index of its initializer in the graph.
    initializer_at: Vec<usize>,
    /// Entries (`value_info`, inputs, outputs) declared without a type: each is given
    /// an empty type, and the inferred one when its value's type is inferred (the type
    /// also goes to a new `value_info` entry), as `onnx` does.
    untyped: Homes,
    constants: Constants,
}

/// The name of the entry at `home` in `graph`.
fn name_at<'g>(graph: &'g GraphProto<'_>, initializer_at: &[usize], home: Home) -> &'g str {
    match home {
        Home::ValueInfo(i) => graph.value_info[i].name(),
        Home::Input(i) => graph.input[i].name(),
        Home::Output(i) => graph.output[i].name(),
        Home::Initializer(i) => graph.initializer[initializer_at[i]].name(),
    }
}

/// What the walk of a graph and of the graphs in its nodes share.
struct Walk<'w> {
    opsets: &'w HashMap<String, i64>,
    options: &'w InferOptions,
    /// One table of dimension names for the whole model, subgraphs included.
    symbols: &'w mut Symbols,
    /// The model-local functions, by [`function_id`].
    functions: &'w HashMap<String, &'w FunctionProto<'w>>,
    /// The functions whose bodies are being inferred, outermost first.
    active: &'w mut Vec<String>,
    /// The values data propagation found (with [`InferOptions::data_prop`]): one table
    /// for the graph and the graphs in its nodes, as in `onnx`; a function's body has
    /// its own.
    propagation: Option<&'w mut data_prop::Propagation>,
}

/// How `onnx` names a function for calls: `domain:name`, `:overload` when it has one.
fn function_id(domain: &str, name: &str, overload: &str) -> String {
    match overload {
        "" => format!("{domain}:{name}"),
        o => format!("{domain}:{name}:{o}"),
    }
}

/// The values of the graphs enclosing a graph attribute: their types are visible to
/// its nodes (their constants are not, as in `onnx`).
struct Scope<'s, 'a> {
    graph: &'s GraphProto<'a>,
    known: &'s Known,
    outer: Option<&'s Scope<'s, 'a>>,
}

/// Infers the types of `graph`'s nodes; returns the errors met, in node order, or the
/// first fatal error (a `check_type` mismatch, a domain not imported), which ends the
/// walk in either mode. `ir_version` decides whether initializers are typed and how a
/// graph attribute's inputs are matched; `constants` are values known from a caller.
fn infer_graph<'a>(
    graph: &mut GraphProto<'a>,
    walk: &mut Walk<'_>,
    outer: Option<&Scope<'_, 'a>>,
    ir_version: i64,
    constants: Constants,
) -> std::result::Result<Vec<InferenceError>, InferenceError> {
    // Every declared entry, initializer and node output may get a home: sized once, the
    // table is never rehashed during the walk.
    let values = graph.value_info.len()
        + graph.input.len()
        + graph.output.len()
        + graph.initializer.len()
        + graph.node.iter().map(|n| n.output.len()).sum::<usize>();
    let mut known = Known {
        homes: Homes::with_capacity(values),
        initializer_types: Vec::new(),
        initializer_at: Vec::new(),
        untyped: Homes::default(),
        constants,
    };
    let entries = [
        (Home::ValueInfo as fn(usize) -> Home, graph.value_info.len()),
        (Home::Input, graph.input.len()),
        (Home::Output, graph.output.len()),
    ];
    for (home, len) in entries {
        for i in 0..len {
            let home = home(i);
            let at = |h| name_at(graph, &[], h);
            if slot_at_ref(graph, home).is_some() {
                known.homes.insert(at(home), home, at);
            } else {
                known.untyped.insert(at(home), home, at);
            }
        }
    }
    for vi in graph
        .value_info
        .iter_mut()
        .chain(&mut graph.input)
        .chain(&mut graph.output)
    {
        vi.r#type.get_or_insert_with(TypeProto::default);
    }
    for (index, t) in graph.initializer.iter().enumerate() {
        known
            .constants
            .insert(t.name().to_string(), Constant::of(t));
        let ty = TypeProto::tensor(
            DataType::Undefined,
            Some(TensorShapeProto::from_dims(&t.dims)),
        );
        let ty = with_raw_elem_type(ty, t.data_type());
        let at = |h| name_at(graph, &known.initializer_at, h);
        if let Some(home) = known.homes.get(t.name(), at) {
            // A declared type for an initializer must agree with the initializer's.
            if let Some(declared) = slot_at_ref(graph, home) {
                if let Err(reason) = check_types(&ty, declared) {
                    return Err(InferenceError {
                        node_index: 0,
                        node_name: String::new(),
                        op_type: String::new(),
                        reason: format!("[{}] {reason}", check_category(&reason)),
                        of_graph: true,
                    });
                }
            }
            continue;
        }
        if ir_version < 4 {
            continue;
        }
        let home = Home::Initializer(known.initializer_types.len());
        known.initializer_at.push(index);
        let at = |h| name_at(graph, &known.initializer_at, h);
        known.homes.insert(t.name(), home, at);
        known.initializer_types.push(ty);
    }

    let mut errors = Vec::new();
    // Only strict mode reports the errors of a graph's nodes (every caller drops them
    // otherwise): in lax mode they are not built.
    let keep_errors = walk.options.strict_mode;
    let mut unsupported = false;
    // The default domain, which most nodes use, looked up once.
    let default_version = walk
        .opsets
        .get("")
        .or_else(|| walk.opsets.get("ai.onnx"))
        .copied();
    // The schemas of the operators of domain `""`, looked up once per operator (the
    // domain's version is the same for every node of the graph).
    let mut schemas: Names<Option<&'static crate::checker::schema::OpSchema<'static>>> =
        Names::default();
    for index in 0..graph.node.len() {
        // The node's name and operator are copied only when an error names them.
        let error = |graph: &GraphProto<'_>, reason: String| InferenceError {
            node_index: index,
            node_name: graph.node[index].name().to_string(),
            op_type: graph.node[index].op_type().to_string(),
            reason,
            of_graph: false,
        };
        let node = &graph.node[index];
        // A node's domain must be imported (`""` also as `"ai.onnx"`): `onnx` refuses the
        // model otherwise, in either mode.
        let imported = match node.domain() {
            "" => default_version,
            d => walk.opsets.get(d).copied(),
        };
        let Some(version) = imported else {
            return Err(error(graph, format!(
                "Cannot infer type and shape for node name {}. No opset import for domain {} optype {}",
                node.name(),
                node.domain(),
                node.op_type()
            )));
        };
        let domain: std::borrow::Cow<'static, str> = match node.domain() {
            "" | "ai.onnx" => "".into(),
            d => d.to_string().into(),
        };
        let domain = &*domain;
        let schema = match node.domain() {
            "" => match schemas.get(node.op_type()) {
                Some(&s) => s,
                None => {
                    let s = crate::checker::schema::lookup("", node.op_type(), version);
                    schemas.insert(node.op_type().to_string(), s);
                    s
                }
            },
            _ => crate::checker::schema::lookup(domain, node.op_type(), version),
        };
        // A version `onnx` has no inference function for is inferred through its
        // function body if it has one, else gives nothing; an operator without a schema
        // may be a model-local function.
        let body = match schema {
            Some(s) if s.without_inference => s.functions.last().and_then(|f| f.function.as_ref()),
            Some(_) => None,
            None => walk
                .functions
                .get(&function_id(node.domain(), node.op_type(), node.overload()))
                .copied(),
        };
        // An operator without a schema (and not a local function) gives nothing.
        let no_rule = schema.is_none_or(|s| s.without_inference);
        // After an operator `onnx` knows no schema or function for, it records no more
        // errors.
        unsupported |= schema.is_none() && body.is_none();
        // The graphs of a control-flow node are taken out while it is inferred: its
        // rule has them inferred in this graph's scope.
        let runs_graphs = domain.is_empty()
            && schema.is_some()
            && controlflow::RUNS_GRAPHS.contains(&node.op_type());
        let mut taken = if runs_graphs {
            take_graphs(&mut graph.node[index])
        } else {
            Vec::new()
        };
        let outcome = {
            let graph: &GraphProto<'_> = graph;
            let node = &graph.node[index];
            let inputs: smallvec::SmallVec<[Option<&TypeProto<'_>>; 4]> = node
                .input
                .iter()
                .map(|name| {
                    (!name.is_empty())
                        .then(|| type_of(graph, &known, outer, name))
                        .flatten()
                        .filter(|t| !is_unset(t))
                })
                .collect();
            let n = kit::Node {
                node,
                domain,
                version,
                inputs: &inputs,
                constants: &known.constants,
                propagated: None,
            };
            let outcome = if runs_graphs {
                let mut nested = Nested {
                    taken: &mut taken,
                    scope: Scope {
                        graph,
                        known: &known,
                        outer,
                    },
                    walk,
                    ir_version,
                };
                Ok(controlflow::infer(&n, &mut nested))
            } else if let Some(body) = body {
                infer_call(&n, body, walk)
            } else if no_rule {
                Ok(Ok(None))
            } else {
                let propagated = walk
                    .propagation
                    .as_deref()
                    .map(data_prop::Propagation::values);
                Ok(apply_rule(&kit::Node { propagated, ..n }))
            };
            // With `check_type`, the types are checked against the schema after an
            // inference that did not fail; untyped outputs take the types it implies.
            match (outcome, schema) {
                (Ok(Ok(outputs)), Some(schema)) if walk.options.check_type => {
                    let mut outputs = outputs.unwrap_or_default();
                    outputs.resize(node.output.len(), None);
                    check_type::check_node(schema, &inputs, &mut outputs)
                        .map(|()| Ok(Some(outputs)))
                }
                (outcome, _) => outcome,
            }
        };
        restore_graphs(&mut graph.node[index], taken);
        let outputs = match outcome.map_err(|reason| error(graph, reason))? {
            // A rule typing an output the node does not have: `onnx`'s rule asked for
            // it, which fails the call in either mode.
            Ok(Some(outputs)) if outputs.len() > graph.node[index].output.len() => {
                let extra = outputs
                    .iter()
                    .skip(graph.node[index].output.len())
                    .position(Option::is_some);
                if let Some(k) = extra {
                    let at = graph.node[index].output.len() + k;
                    return Err(error(graph, format!("Output {at} is out of bounds.")));
                }
                outputs
            }
            Ok(Some(outputs)) => outputs,
            Ok(None) => continue,
            Err(reason) if out_of_bounds(&reason) => return Err(error(graph, reason)),
            Err(reason) => {
                if keep_errors && !unsupported {
                    errors.push(error(graph, reason));
                }
                continue;
            }
        };
        // The output names are taken out of the node while their types are recorded
        // (which changes the graph), and put back after.
        let names = std::mem::take(&mut graph.node[index].output);
        // Data propagation follows a node whose outputs all merged (`onnx` stops at the
        // first conflict).
        let mut propagate = true;
        for (name, inferred) in names.iter().zip(outputs) {
            let Some(mut inferred) = inferred else {
                continue;
            };
            if name.is_empty() || is_unset(&inferred) {
                continue;
            }
            walk.symbols.materialize(&mut inferred);
            // As in `onnx`, a conflict ends the node: its later outputs are not merged.
            if let Err(reason) = update_type(graph, &mut known, name, inferred) {
                if keep_errors && !unsupported {
                    errors.push(error(graph, reason));
                }
                propagate = false;
                break;
            }
        }
        graph.node[index].output = names;
        // As in `onnx`, a constant's values are recorded only once its output's type
        // merged: a `Constant` redefining a name with another shape leaves the earlier
        // values in place.
        if propagate {
            let node = &graph.node[index];
            if let Some(constant) = rules::constant_values(node, version) {
                if let Some(out) = node.output.first() {
                    known.constants.insert(out.to_string(), constant);
                }
            }
        }
        if let (Some(propagation), true) = (walk.propagation.as_deref_mut(), propagate) {
            let node = &graph.node[index];
            let input_types: Vec<_> = node
                .input
                .iter()
                .map(|name| type_of(graph, &known, outer, name).filter(|t| !is_unset(t)))
                .collect();
            match propagation.run(node, version, &input_types, &known.constants) {
                Err(data_prop::Failure::Node(reason)) if keep_errors && !unsupported => {
                    errors.push(error(graph, reason))
                }
                Err(data_prop::Failure::Model(reason)) => return Err(error(graph, reason)),
                _ => {}
            }
        }
    }
    Ok(errors)
}

/// The graphs of `node`'s attributes, taken out (by attribute name).
fn take_graphs<'a>(node: &mut crate::onnx::NodeProto<'a>) -> Vec<(String, Box<GraphProto<'a>>)> {
    node.attribute
        .iter_mut()
        .filter_map(|a| Some((a.name().to_string(), a.g.take()?)))
        .collect()
}

/// Puts back the graphs [`take_graphs`] took.
fn restore_graphs<'a>(
    node: &mut crate::onnx::NodeProto<'a>,
    taken: Vec<(String, Box<GraphProto<'a>>)>,
) {
    for (name, g) in taken {
        if let Some(a) = node
            .attribute
            .iter_mut()
            .find(|a| a.name() == name && a.g.is_none())
        {
            a.g = Some(g);
        }
    }
}

/// Infers a control-flow node's graphs in the scope of the graph holding the node, as
/// `onnx`'s graph inferencer: the graph's inputs take the types the rule gives (merged
/// into the declared ones), its nodes see the enclosing graphs' types, and its errors
/// fail the node in strict mode.
struct Nested<'n, 's, 'a, 'w> {
    taken: &'n mut Vec<(String, Box<GraphProto<'a>>)>,
    scope: Scope<'s, 'a>,
    walk: &'n mut Walk<'w>,
    ir_version: i64,
}

impl controlflow::Subgraphs for Nested<'_, '_, '_, '_> {
    fn infer(
        &mut self,
        name: &str,
        inputs: Vec<Option<TypeProto<'static>>>,
    ) -> std::result::Result<Vec<TypeProto<'static>>, String> {
        let Some((_, g)) = self.taken.iter_mut().find(|(n, _)| n == name) else {
            return Err(format!("Attribute {name} does not contain a graph."));
        };
        let initializers: HashSet<&str> = g.initializer.iter().map(|t| t.name()).collect();
        let given = inputs.len();
        if self.ir_version >= 4 {
            if g.input.len() != given {
                return Err(format!(
                    "Graph has {} inputs but {given} were provided",
                    g.input.len()
                ));
            }
            if let Some(i) = g.input.iter().find(|i| initializers.contains(i.name())) {
                return Err(format!(
                    "Cannot use the same name as both a subgraph initializer and subgraph input: {}",
                    i.name()
                ));
            }
        } else if given > g.input.len() {
            return Err(format!(
                "Graph has {} inputs but {given} were provided.The number of graph input cannot be smaller than the number of node input",
                g.input.len()
            ));
        } else {
            for (i, input) in g.input.iter().enumerate() {
                let initializer = initializers.contains(input.name());
                if i < given && initializer {
                    return Err(format!(
                        "Graph initializer names must appear after the actual inputs: {}",
                        input.name()
                    ));
                }
                if i >= given && !initializer {
                    return Err(format!(
                        "Cannot find missing input: {}in initializers. ",
                        input.name()
                    ));
                }
            }
        }
        for (input, inferred) in g.input.iter_mut().zip(inputs) {
            let Some(inferred) = inferred else {
                continue;
            };
            let declared = input.r#type.get_or_insert_with(Default::default);
            check_types(&inferred, declared)?;
            merge_types(&inferred, declared);
            self.walk.symbols.materialize(declared);
        }
        // Graphs inside graphs type their initializers and match their inputs as the
        // latest IR version does, as in `onnx`.
        // Graphs nest as deep as the model does: each level makes sure of its stack.
        let errors = crate::onnx::deep::guarded(|| {
            infer_graph(
                g,
                self.walk,
                Some(&self.scope),
                i64::MAX,
                Constants::default(),
            )
        })
        .map_err(|e| node_error(&e))?;
        if self.walk.options.strict_mode && !errors.is_empty() {
            let all: Vec<String> = errors.iter().map(node_error).collect();
            return Err(format!("Inference error(s): {}", all.join("\n")));
        }
        Ok(g.output
            .iter()
            .map(|o| o.r#type.as_ref().map(kit::owned_type).unwrap_or_default())
            .collect())
    }
}

/// Infers a call of `function` by node `n` through the function's body, as `onnx` does
/// for a model-local function or an operator version defined by a function without an
/// inference function: the body sees the caller's input types, constants and
/// attributes, names unknown dimensions from the model's table, and its errors fail
/// the call in strict mode. The outer error is fatal (a type found for an output the
/// caller does not have).
fn infer_call(
    n: &kit::Node<'_, '_>,
    function: &FunctionProto<'_>,
    walk: &mut Walk<'_>,
) -> std::result::Result<std::result::Result<Option<kit::Outputs>, String>, String> {
    let id = function_id(function.domain(), function.name(), function.overload());
    if walk.active.contains(&id) {
        return Ok(Err(format!(
            "Cycle detected in model-local function references: function '{id}' is already being expanded in the current call chain."
        )));
    }
    let actuals = (0..function.input.len())
        .map(|i| match n.node.input.get(i) {
            Some(name) if !name.is_empty() => {
                function::Actual::Given(n.inputs[i].map(kit::owned_type))
            }
            _ => function::Actual::Absent,
        })
        .collect();
    let mut graph = function::instantiate(function, actuals, &n.node.attribute);
    let constants = function
        .input
        .iter()
        .zip(&n.node.input)
        .filter_map(|(formal, actual)| {
            let values = n.constants.get(&**actual)?;
            Some((formal.to_string(), values.clone()))
        })
        .collect();
    let opsets: HashMap<String, i64> = function
        .opset_import
        .iter()
        .map(|o| (o.domain().to_string(), o.version()))
        .collect();
    // The body starts with the values of the caller's inputs, under their formal names.
    let mut values = walk
        .propagation
        .as_deref()
        .map(|p| p.for_call(&n.node.input, &function.input));
    walk.active.push(id);
    let mut inner = Walk {
        opsets: &opsets,
        options: walk.options,
        symbols: walk.symbols,
        functions: walk.functions,
        active: walk.active,
        propagation: values.as_mut(),
    };
    let result = crate::onnx::deep::guarded(|| {
        infer_graph(&mut graph, &mut inner, None, i64::MAX, constants)
    });
    walk.active.pop();
    let errors = match result {
        Ok(errors) => errors,
        Err(e) => return Ok(Err(node_error(&e))),
    };
    if walk.options.strict_mode && !errors.is_empty() {
        let all: Vec<String> = errors.iter().map(node_error).collect();
        return Ok(Err(format!("Inference error(s): {}", all.join("\n"))));
    }
    // The values of the body's outputs go to the caller's.
    if let (Some(caller), Some(values)) = (walk.propagation.as_deref_mut(), &values) {
        caller.returned(values, &function.output, &n.node.output);
    }
    let mut outputs = vec![None; n.node.output.len()];
    for (i, name) in function.output.iter().enumerate() {
        let found = graph
            .value_info
            .iter()
            .chain(&graph.input)
            .find(|v| v.name() == &**name)
            .and_then(|v| v.r#type.as_ref())
            .filter(|t| !is_unset(t));
        let Some(t) = found else {
            continue;
        };
        let Some(slot) = outputs.get_mut(i) else {
            return Err(format!("Output {i} is out of bounds."));
        };
        *slot = Some(kit::owned_type(t));
    }
    Ok(Ok(Some(outputs)))
}

/// An error of a graph attribute's node as `onnx` words it for the enclosing node. A
/// reason past 4 KiB (errors of graphs nested many levels deep, each quoting the next) is
/// cut, so that the message grows linearly with the depth.
fn node_error(e: &InferenceError) -> String {
    const MAX: usize = 4096;
    if e.of_graph {
        return e.reason.clone();
    }
    let name = if e.node_name.is_empty() {
        String::new()
    } else {
        format!(", node name: {}", e.node_name)
    };
    let mut reason = e.reason.as_str();
    if reason.len() > MAX {
        let mut end = MAX;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason = &reason[..end];
    }
    let cut = if reason.len() < e.reason.len() {
        "..."
    } else {
        ""
    };
    format!("(op_type:{}{name}): {reason}{cut}", e.op_type)
}

/// Whether a rule's error is `onnx`'s for an input or output index the node does not
/// have: raised outside its inference errors, it fails the call in either mode.
fn out_of_bounds(reason: &str) -> bool {
    let index = ["Input ", "Output "]
        .iter()
        .find_map(|p| reason.strip_prefix(p))
        .and_then(|r| r.strip_suffix(" is out of bounds."));
    index.is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
}

/// The rule families, each a function giving a node's output types, or `Ok(None)` for
/// an operator the family does not know.
type Family = fn(&kit::Node<'_, '_>) -> std::result::Result<Option<kit::Outputs>, String>;
const FAMILIES: &[Family] = &[
    rules::infer,
    models::infer,
    ml::infer,
    conv::infer,
    resize::infer,
    tensor::infer,
    sequence::infer,
];

/// The output types the rule of `n`'s operator gives; `Ok(None)` when no family has one.
fn apply_rule(n: &kit::Node<'_, '_>) -> std::result::Result<Option<kit::Outputs>, String> {
    for family in FAMILIES {
        if let Some(outputs) = family(n)? {
            return Ok(Some(outputs));
        }
    }
    Ok(None)
}

/// The known type of `name`: in this graph, else in the enclosing ones.
fn type_of<'g, 'a>(
    graph: &'g GraphProto<'a>,
    known: &'g Known,
    outer: Option<&'g Scope<'g, 'a>>,
    name: &str,
) -> Option<&'g TypeProto<'a>> {
    let (mut graph, mut known, mut outer) = (graph, known, outer);
    loop {
        if let Some(home) = known
            .homes
            .get(name, |h| name_at(graph, &known.initializer_at, h))
        {
            return match home {
                Home::ValueInfo(i) => graph.value_info[i].r#type.as_ref(),
                Home::Input(i) => graph.input[i].r#type.as_ref(),
                Home::Output(i) => graph.output[i].r#type.as_ref(),
                Home::Initializer(i) => Some(&known.initializer_types[i]),
            };
        }
        let s = outer?;
        (graph, known, outer) = (s.graph, s.known, s.outer);
    }
}

/// The type slot of the entry at `home`.
fn slot_at<'g, 'a>(
    graph: &'g mut GraphProto<'a>,
    home: Home,
) -> Option<&'g mut Option<TypeProto<'a>>> {
    match home {
        Home::ValueInfo(i) => Some(&mut graph.value_info[i].r#type),
        Home::Input(i) => Some(&mut graph.input[i].r#type),
        Home::Output(i) => Some(&mut graph.output[i].r#type),
        Home::Initializer(_) => None,
    }
}

/// The declared type at `home` (`None` for an initializer's).
fn slot_at_ref<'g, 'a>(graph: &'g GraphProto<'a>, home: Home) -> Option<&'g TypeProto<'a>> {
    match home {
        Home::ValueInfo(i) => graph.value_info[i].r#type.as_ref(),
        Home::Input(i) => graph.input[i].r#type.as_ref(),
        Home::Output(i) => graph.output[i].r#type.as_ref(),
        Home::Initializer(_) => None,
    }
}

/// The category `onnx` raises a [`check_types`] failure under: element types and kinds
/// of type are type errors, ranks and dimensions shape errors.
fn check_category(reason: &str) -> &'static str {
    const TYPE_ERRORS: [&str; 3] = [
        "Inferred elem type differs",
        "type case mismatch",
        "key type mismatch",
    ];
    if TYPE_ERRORS.iter().any(|p| reason.starts_with(p)) {
        "TypeInferenceError"
    } else {
        "ShapeInferenceError"
    }
}

/// Records `inferred` for `name`: merged into its known type, or as a new `value_info`.
fn update_type(
    graph: &mut GraphProto<'_>,
    known: &mut Known,
    name: &str,
    inferred: TypeProto<'static>,
) -> std::result::Result<(), String> {
    fn check_and_merge<'a>(
        inferred: TypeProto<'static>,
        existing: &mut TypeProto<'a>,
    ) -> std::result::Result<(), String> {
        check_types(&inferred, existing)?;
        let tensors = matches!(
            (&inferred.value, &existing.value),
            (
                Some(TypeValue::TensorType(_)),
                Some(TypeValue::TensorType(_))
            )
        );
        if !tensors {
            merge_types(&inferred, existing);
            return Ok(());
        }
        // A tensor's inferred dimensions are moved into the declared type, not copied.
        if let (Some(TypeValue::TensorType(i)), Some(TypeValue::TensorType(e))) =
            (inferred.value, existing.value.as_mut())
        {
            merge_tensor_owned(
                i.elem_type_raw(),
                i.shape,
                &mut e.elem_type_raw,
                &mut e.shape,
            );
        }
        Ok(())
    }
    let slot = |t: &mut Option<TypeProto<'_>>, inferred| {
        let existing = t.get_or_insert_with(Default::default);
        check_and_merge(inferred, existing)
    };
    let found = known
        .homes
        .get(name, |h| name_at(graph, &known.initializer_at, h));
    match found {
        Some(Home::Initializer(i)) => check_and_merge(inferred, &mut known.initializer_types[i]),
        Some(home) => slot(slot_at(graph, home).expect("not an initializer"), inferred),
        None => {
            let untyped = known
                .untyped
                .get(name, |h| name_at(graph, &known.initializer_at, h));
            if let Some(home) = untyped {
                if let Some(t) = slot_at(graph, home) {
                    *t = Some(inferred.clone());
                }
            }
            // Merged into an empty type, the inferred one is recorded as it is: moved,
            // not copied.
            let i = graph.value_info.len();
            graph.value_info.push(ValueInfoProto {
                name: Some(crate::field::Str::copied(name)),
                r#type: Some(inferred),
                ..ValueInfoProto::default()
            });
            let at = |h| name_at(graph, &known.initializer_at, h);
            known.homes.insert(name, Home::ValueInfo(i), at);
            Ok(())
        }
    }
}

/// `onnx`'s compatibility check of an inferred type against a declared one.
fn check_types(
    inferred: &TypeProto<'_>,
    existing: &TypeProto<'_>,
) -> std::result::Result<(), String> {
    match (&inferred.value, &existing.value) {
        (_, None) | (None, _) => Ok(()),
        (Some(TypeValue::TensorType(i)), Some(TypeValue::TensorType(e))) => check_tensor(
            i.elem_type_raw(),
            i.shape.as_ref(),
            e.elem_type_raw(),
            e.shape.as_ref(),
        ),
        (Some(TypeValue::SparseTensorType(i)), Some(TypeValue::SparseTensorType(e))) => {
            check_tensor(
                i.elem_type_raw(),
                i.shape.as_ref(),
                e.elem_type_raw(),
                e.shape.as_ref(),
            )
        }
        (Some(TypeValue::SequenceType(i)), Some(TypeValue::SequenceType(e))) => {
            match (i.elem_type.as_deref(), e.elem_type.as_deref()) {
                (Some(i), Some(e)) => crate::onnx::deep::guarded(|| check_types(i, e)),
                _ => Ok(()),
            }
        }
        (Some(TypeValue::OptionalType(i)), Some(TypeValue::OptionalType(e))) => {
            match (i.elem_type.as_deref(), e.elem_type.as_deref()) {
                (Some(i), Some(e)) => crate::onnx::deep::guarded(|| check_types(i, e)),
                _ => Ok(()),
            }
        }
        (Some(TypeValue::MapType(i)), Some(TypeValue::MapType(e))) => {
            if i.key_type_raw() != e.key_type_raw() {
                return Err(format!(
                    "key type mismatch from MapProto. existing={} inferred={}",
                    e.key_type_raw(),
                    i.key_type_raw()
                ));
            }
            match (i.value_type.as_deref(), e.value_type.as_deref()) {
                (Some(i), Some(e)) => crate::onnx::deep::guarded(|| check_types(i, e)),
                _ => Ok(()),
            }
        }
        _ => Err(format!(
            "type case mismatch. existing={} inferred={}",
            type_case(existing),
            type_case(inferred)
        )),
    }
}

/// The name `onnx` gives the kind of a type in messages.
fn type_case(t: &TypeProto<'_>) -> &'static str {
    match &t.value {
        None => "NOT_SET",
        Some(TypeValue::TensorType(_)) => "tensor_type",
        Some(TypeValue::SequenceType(_)) => "sequence_type",
        Some(TypeValue::MapType(_)) => "map_type",
        Some(TypeValue::OpaqueType(_)) => "opaque_type",
        Some(TypeValue::SparseTensorType(_)) => "sparse_tensor_type",
        Some(TypeValue::OptionalType(_)) => "optional_type",
    }
}

fn check_tensor(
    inferred_elem: i32,
    inferred_shape: Option<&TensorShapeProto<'_>>,
    existing_elem: i32,
    existing_shape: Option<&TensorShapeProto<'_>>,
) -> std::result::Result<(), String> {
    if inferred_elem != 0 && existing_elem != 0 && inferred_elem != existing_elem {
        // `onnx`'s build prints the element type numbers.
        return Err(format!(
            "Inferred elem type differs from existing elem type: ({inferred_elem}) vs ({existing_elem})"
        ));
    }
    let (Some(i), Some(e)) = (inferred_shape, existing_shape) else {
        return Ok(());
    };
    if i.dim.len() != e.dim.len() {
        return Err(format!(
            "Inferred shape and existing shape differ in rank: ({}) vs ({})",
            i.dim.len(),
            e.dim.len()
        ));
    }
    for (k, (a, b)) in i.dim.iter().zip(&e.dim).enumerate() {
        if let (Some(a), Some(b)) = (a.as_value(), b.as_value()) {
            if a != b {
                return Err(format!(
                    "Inferred shape and existing shape differ in dimension {k}: ({a}) vs ({b})"
                ));
            }
        }
    }
    Ok(())
}

/// `onnx`'s merge of an inferred type into a declared one (after [`check_types`]).
fn merge_types(inferred: &TypeProto<'_>, existing: &mut TypeProto<'_>) {
    let Some(value) = &inferred.value else {
        return;
    };
    if existing.value.is_none() {
        *existing = crate::IntoOwned::into_owned(crate::Reborrow::reborrow(inferred));
        return;
    }
    match (value, existing.value.as_mut()) {
        (TypeValue::TensorType(i), Some(TypeValue::TensorType(e))) => merge_tensor(
            i.elem_type_raw(),
            i.shape.as_ref(),
            &mut e.elem_type_raw,
            &mut e.shape,
        ),
        (TypeValue::SparseTensorType(i), Some(TypeValue::SparseTensorType(e))) => merge_tensor(
            i.elem_type_raw(),
            i.shape.as_ref(),
            &mut e.elem_type_raw,
            &mut e.shape,
        ),
        (TypeValue::SequenceType(i), Some(TypeValue::SequenceType(e))) => {
            if let Some(i) = i.elem_type.as_deref() {
                crate::onnx::deep::guarded(|| {
                    merge_types(i, e.elem_type.get_or_insert_with(Default::default))
                });
            }
        }
        (TypeValue::OptionalType(i), Some(TypeValue::OptionalType(e))) => {
            if let Some(i) = i.elem_type.as_deref() {
                crate::onnx::deep::guarded(|| {
                    merge_types(i, e.elem_type.get_or_insert_with(Default::default))
                });
            }
        }
        (TypeValue::MapType(i), Some(TypeValue::MapType(e))) => {
            if let Some(i) = i.value_type.as_deref() {
                crate::onnx::deep::guarded(|| {
                    merge_types(i, e.value_type.get_or_insert_with(Default::default))
                });
            }
        }
        _ => {}
    }
}

fn merge_tensor(
    inferred_elem: i32,
    inferred_shape: Option<&TensorShapeProto<'_>>,
    existing_elem: &mut Option<i32>,
    existing_shape: &mut Option<TensorShapeProto<'_>>,
) {
    if existing_elem.unwrap_or(0) == 0 {
        *existing_elem = Some(inferred_elem);
    }
    let Some(inferred) = inferred_shape else {
        return;
    };
    let Some(existing) = existing_shape else {
        *existing_shape = Some(crate::IntoOwned::into_owned(crate::Reborrow::reborrow(
            inferred,
        )));
        return;
    };
    for (i, e) in inferred.dim.iter().zip(existing.dim.iter_mut()) {
        if e.value.is_none() || i.as_value().is_some() {
            *e = crate::IntoOwned::into_owned(crate::Reborrow::reborrow(i));
        }
    }
}

/// [`merge_tensor`] of an inferred tensor type that is not needed after: its shape and
/// dimensions are moved.
fn merge_tensor_owned<'a>(
    inferred_elem: i32,
    inferred_shape: Option<TensorShapeProto<'a>>,
    existing_elem: &mut Option<i32>,
    existing_shape: &mut Option<TensorShapeProto<'a>>,
) {
    if existing_elem.unwrap_or(0) == 0 {
        *existing_elem = Some(inferred_elem);
    }
    let Some(inferred) = inferred_shape else {
        return;
    };
    let Some(existing) = existing_shape else {
        *existing_shape = Some(inferred);
        return;
    };
    for (i, e) in inferred.dim.into_iter().zip(existing.dim.iter_mut()) {
        if e.value.is_none() || i.as_value().is_some() {
            *e = i;
        }
    }
}

/// The symbolic dimension names a graph uses, and fresh ones for unknown dimensions.
struct Symbols {
    used: NameSet,
    next: u64,
    /// Whether unknown dimensions are named at all.
    enabled: bool,
}

impl Symbols {
    /// The names `graph` and the graphs of its nodes' attributes use.
    fn of(graph: &GraphProto<'_>) -> Self {
        fn collect(graph: &GraphProto<'_>, used: &mut NameSet) {
            for vi in graph
                .input
                .iter()
                .chain(&graph.output)
                .chain(&graph.value_info)
            {
                if let Some(t) = &vi.r#type {
                    collect_params(t, used);
                }
            }
            for a in graph.node.iter().flat_map(|n| &n.attribute) {
                if let Some(g) = &a.g {
                    crate::onnx::deep::guarded(|| collect(g, used));
                }
            }
        }
        let mut used = NameSet::default();
        collect(graph, &mut used);
        Symbols {
            used,
            next: 0,
            enabled: true,
        }
    }

    /// A table that names nothing.
    fn disabled() -> Self {
        Symbols {
            used: NameSet::default(),
            next: 0,
            enabled: false,
        }
    }

    /// Names every dimension of `t` that has neither a size nor a name.
    fn materialize(&mut self, t: &mut TypeProto<'_>) {
        if !self.enabled {
            return;
        }
        match t.value.as_mut() {
            Some(TypeValue::TensorType(tt)) => self.materialize_shape(tt.shape.as_mut()),
            Some(TypeValue::SparseTensorType(tt)) => self.materialize_shape(tt.shape.as_mut()),
            // As in `onnx`, walking into a missing element type makes an empty one.
            Some(TypeValue::SequenceType(s)) => crate::onnx::deep::guarded(|| {
                self.materialize(s.elem_type.get_or_insert_with(Default::default))
            }),
            Some(TypeValue::OptionalType(s)) => crate::onnx::deep::guarded(|| {
                self.materialize(s.elem_type.get_or_insert_with(Default::default))
            }),
            Some(TypeValue::MapType(m)) => crate::onnx::deep::guarded(|| {
                self.materialize(m.value_type.get_or_insert_with(Default::default))
            }),
            _ => {}
        }
    }

    fn materialize_shape(&mut self, shape: Option<&mut TensorShapeProto<'_>>) {
        let Some(shape) = shape else {
            return;
        };
        for d in &mut shape.dim {
            if d.value.is_none() {
                // `next` only grows, so a fresh name is never made twice: only the
                // `unk__N` names the model uses need checking.
                let mut text = FreshName::default();
                let n = loop {
                    let n = self.next;
                    self.next += 1;
                    if !self.used.contains(&n) {
                        break n;
                    }
                };
                d.value = Some(DimensionValue::DimParam(crate::Str::copied(text.of(n))));
            }
        }
    }
}

/// The numbers `N` of the names `unk__N` a graph already uses: the only names a fresh
/// one can collide with.
type NameSet = HashSet<u64, BuildHasherDefault<NameHasher>>;

/// `N` when `name` is exactly what [`FreshName::of`] writes for `N` (no sign, no leading
/// zero).
fn fresh_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("unk__")?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The text of a fresh dimension name, written in place: `unk__` and a number.
struct FreshName {
    buf: [u8; 25],
}

impl Default for FreshName {
    fn default() -> Self {
        let mut buf = [0; 25];
        buf[..5].copy_from_slice(b"unk__");
        FreshName { buf }
    }
}

impl FreshName {
    /// `unk__{n}`.
    fn of(&mut self, n: u64) -> &str {
        let mut digits = [0u8; 20];
        let (mut k, mut n) = (digits.len(), n);
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let len = digits.len() - k;
        self.buf[5..5 + len].copy_from_slice(&digits[k..]);
        std::str::from_utf8(&self.buf[..5 + len]).expect("ASCII digits")
    }
}

fn collect_params(t: &TypeProto<'_>, used: &mut NameSet) {
    let shape = match &t.value {
        Some(TypeValue::TensorType(tt)) => tt.shape.as_ref(),
        Some(TypeValue::SparseTensorType(tt)) => tt.shape.as_ref(),
        Some(TypeValue::SequenceType(s)) => {
            if let Some(e) = s.elem_type.as_deref() {
                crate::onnx::deep::guarded(|| collect_params(e, used));
            }
            None
        }
        Some(TypeValue::OptionalType(s)) => {
            if let Some(e) = s.elem_type.as_deref() {
                crate::onnx::deep::guarded(|| collect_params(e, used));
            }
            None
        }
        Some(TypeValue::MapType(m)) => {
            if let Some(e) = m.value_type.as_deref() {
                crate::onnx::deep::guarded(|| collect_params(e, used));
            }
            None
        }
        _ => None,
    };
    for d in shape.map(|s| s.dim.as_slice()).unwrap_or_default() {
        if let Some(n) = d.as_param().and_then(fresh_number) {
            used.insert(n);
        }
    }
}

#[cfg(test)]
mod tests;
