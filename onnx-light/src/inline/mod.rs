//! Function inlining: replaces calls to functions (the model's local functions, and
//! optionally the function bodies of operator schemas) by the nodes of their bodies, as
//! `onnx.inliner` does, to the same result.
//!
//! ```
//! use onnx_light::inline;
//! use onnx_light::onnx::*;
//!
//! // y = local.square(x), where square(a) => (b) { b = Mul(a, a) }
//! let mut square = FunctionProto::default();
//! square.name = Some("square".into());
//! square.domain = Some("local".into());
//! square.input = vec!["a".into()];
//! square.output = vec!["b".into()];
//! square.node = vec![NodeProto::new("Mul", ["a", "a"], ["b"])];
//! square.opset_import = vec![OperatorSetIdProto::new("", 21)];
//! let mut g = GraphProto::named("g");
//! let mut call = NodeProto::new("square", ["x"], ["y"]);
//! call.domain = Some("local".into());
//! g.node.push(call);
//! let imports = vec![OperatorSetIdProto::new("", 21), OperatorSetIdProto::new("local", 1)];
//! let mut model = ModelProto::new(g, imports);
//! model.functions.push(square);
//!
//! inline::inline_local_functions(&mut model, false)?;
//! let node = &model.graph.as_ref().unwrap().node[0];
//! assert_eq!((node.op_type(), node.input.as_slice(), node.output.as_slice()), ("Mul", &["x".into(), "x".into()][..], &["y".into()][..]));
//! assert!(model.functions.is_empty()); // inlined functions are removed
//! # Ok::<(), inline::InlineError>(())
//! ```
//!
//! # What inlining does
//!
//! A call node is replaced by the nodes of the callee's body, in order; calls among
//! those nodes are inlined in turn, and so are calls inside the subgraphs (`If`, `Loop`,
//! `Scan` bodies) of the nodes that stay. For each call site:
//!
//! * The callee's formal inputs and outputs become the call's actual names. A formal
//!   input the call leaves out becomes `""` (a missing optional input); a formal output
//!   it leaves out (or names `""`) gets a fresh name.
//! * Every other name the body defines (node outputs, node names, the inputs,
//!   initializers and outputs of its subgraphs) is renamed with the suffix `__N`, `N`
//!   counting the call sites inlined so far (`t` becomes `t__1`), then, if that name
//!   is taken in the main graph, `t__1_K` with a counter `K`. A name the body reads
//!   without defining it is left as it is.
//! * Attribute references (`ref_attr_name`) take the call's attribute of that name
//!   (keeping their own name); a reference the call does not satisfy is removed. As in
//!   `onnx`, the function's default attribute values (`attribute_proto`) are not used.
//! * The callee's `value_info` entries are appended to the graph's (or function's),
//!   except those naming one of the call's actual parameters.
//!
//! The model's `opset_import` is left as it is (`onnx` does not merge the functions'
//! imports into it), and so are its other fields.
//!
//! [`inline_local_functions`] inlines every local function whose opset imports agree
//! with the model's and removes it from `functions`; the others stay (not inlined, and
//! not changed). [`inline_selected_functions`] inlines the local functions a
//! [`FunctionSelection`] picks, in the main graph and in the functions that stay (which
//! are kept, with the calls inside them inlined); it refuses a model whose functions'
//! imports disagree with each other or with the model's.
//!
//! # Context-dependent functions
//!
//! Some operators have no fixed body: `onnx` builds one per node from its attributes
//! and input types (`CastLike`, `Softmax`, `Clip`, `LayerNormalization`, ...). For
//! those, as `onnx` does, shape inference runs over the main graph as built so far
//! (its findings stay in the graph's `value_info` and its subgraphs) and the node's
//! input types are read from the main graph's `value_info`, inputs and outputs
//! ([`InlineError::TypeUnknown`] when one is not there). The bodies of `CastLike`,
//! `Clip`, `Gelu`, `LayerNormalization`, `RMSNormalization`, `Range`, `Softmax` and
//! `LogSoftmax` are built here, as `onnx` builds them; the others are not, and a
//! selected call of one fails with [`InlineError::ContextDependentFunction`]. Each
//! such call clones the model to run inference on it.
//!
//! # Converting a function to the model's opset version
//!
//! With `convert_version`, [`inline_local_functions`] also inlines a function whose
//! imports differ from the model's only in the version of the ONNX domain, converting
//! its nodes at each call as `onnx` does. After the call's attributes are bound and its
//! names renamed, shape inference runs over the main graph as built so far (its
//! findings stay, as for context-dependent functions), and a model is made of: as
//! inputs, the values the call reads (its inputs, then what its subgraphs read from
//! outside, repeats kept), typed from the main graph's `value_info`, inputs or outputs;
//! copies of the main graph's `Constant` nodes that make those values; the function's
//! nodes; and the call's outputs, typed the same way. A value with no type there is
//! refused with [`InlineError::TypeUnknown`], as `onnx` refuses it (a call output that
//! is neither a graph output nor in `value_info` is one). The model, with the function's
//! `opset_import` and the main model's `ir_version`, goes through
//! [`crate::version_converter::convert_version_owned`]; its nodes (the copied constants
//! included, as the converter leaves them) replace the function's, and the initializers
//! the converter added are appended to the main graph's, even when the call sits in a
//! subgraph. Nested calls are converted when they are reached. The converter's refusal
//! is [`InlineError::VersionConversion`].
//!
//! On any error the model is left unchanged.

use std::collections::{HashMap, HashSet};

use crate::checker::schema;
use crate::onnx::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto,
    ValueInfoProto,
};
use crate::shape;

mod context;
use crate::Str;

/// How deep graphs may nest while inlining (a subgraph of a node of a graph, ...).
/// Inlining a function whose body has subgraphs nests graphs further; beyond this the
/// model is refused rather than the stack risked.
pub const MAX_GRAPH_DEPTH: usize = 256;

/// Why a model could not be inlined. The model is left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InlineError {
    /// The model's local functions break a rule `onnx`'s checker enforces before
    /// inlining: they call each other in a cycle (at any subgraph depth) or too deep,
    /// two share an identifier, or there are more than `onnx` accepts. The message is
    /// `onnx`'s.
    #[error("{reason}")]
    InvalidFunctions {
        /// What is wrong, in `onnx`'s words.
        reason: String,
    },
    /// The local functions import versions of a domain that disagree with each other or
    /// with the model (refused by [`inline_selected_functions`]).
    #[error("Model has functions with incompatible opset versions.")]
    IncompatibleOpsets,
    /// A call passes more inputs or outputs than its callee declares.
    #[error("a call of '{callee}' passes {actual} {what}, but the function declares only {formal}: Number of actual parameters cannot exceed number of formal parameters")]
    TooManyActuals {
        /// The callee's id.
        callee: String,
        /// `"inputs"` or `"outputs"`.
        what: &'static str,
        /// How many the call passes.
        actual: usize,
        /// How many the function declares.
        formal: usize,
    },
    /// Inlining this call needs the function's nodes converted from its opset version
    /// of the ONNX domain to the model's (`convert_version`), and the version converter
    /// refused them (`onnx` refuses the same call).
    #[error("converting the nodes of '{callee}' from opset version {from} of the ONNX domain to the model's version {to} failed: {source}")]
    VersionConversion {
        /// The callee's id.
        callee: String,
        /// The version the function imports.
        from: i64,
        /// The version the model imports.
        to: i64,
        /// The converter's error.
        source: Box<crate::version_converter::VersionConvertError>,
    },
    /// The operator's function body is built per node (a context-dependent function)
    /// by code not implemented here (see the module documentation for those that are).
    #[error("inlining '{op_type}' (domain '{domain}', opset version {version}) needs the function body its schema builds from the node's attributes and input types (a context-dependent function); building those bodies is not implemented")]
    ContextDependentFunction {
        /// The node's operator.
        op_type: String,
        /// Its domain.
        domain: String,
        /// The model's opset version of that domain.
        version: i64,
    },
    /// A context-dependent function, or a call whose nodes are converted to the model's
    /// opset version, needs the type of a value that shape inference of the main graph
    /// does not give (`onnx` fails the same way).
    #[error("Type unknown for {name}")]
    TypeUnknown {
        /// The value.
        name: String,
    },
    /// Shape inference, run to build a context-dependent function or to convert a
    /// call's nodes, failed.
    #[error("shape inference of the main graph while inlining failed: {reason}")]
    Inference {
        /// Its error.
        reason: String,
    },
    /// The text of a built function body did not parse (a bug of this crate).
    #[error("building the body of '{op_type}' failed: {reason}")]
    Builder {
        /// The operator.
        op_type: String,
        /// The parser's error.
        reason: String,
    },
    /// Graphs nested deeper than [`MAX_GRAPH_DEPTH`].
    #[error("graphs nest deeper than {MAX_GRAPH_DEPTH} levels while inlining")]
    TooDeep,
}

/// Which functions to inline, by `(domain, name)`: all overloads of a name are chosen
/// together. The domain is compared as written (`"ai.onnx"` is not `""`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionSelection {
    ids: HashSet<(String, String)>,
    exclude: bool,
}

impl FunctionSelection {
    /// Only the functions listed.
    pub fn only<D: Into<String>, N: Into<String>>(ids: impl IntoIterator<Item = (D, N)>) -> Self {
        let ids = ids.into_iter().map(|(d, n)| (d.into(), n.into())).collect();
        FunctionSelection {
            ids,
            exclude: false,
        }
    }

    /// Every function except those listed.
    pub fn all_except<D: Into<String>, N: Into<String>>(
        ids: impl IntoIterator<Item = (D, N)>,
    ) -> Self {
        FunctionSelection {
            exclude: true,
            ..FunctionSelection::only(ids)
        }
    }

    /// Every function.
    pub fn all() -> Self {
        FunctionSelection {
            ids: HashSet::new(),
            exclude: true,
        }
    }

    /// Whether a function (or operator) `name` of `domain` is selected.
    pub fn contains(&self, domain: &str, name: &str) -> bool {
        // Looking up a pair of `String`s needs owned keys; selections are short.
        let listed = self.ids.iter().any(|(d, n)| d == domain && n == name);
        listed != self.exclude
    }
}

/// Inlines every call of a local function whose opset imports agree with the model's
/// (recursively), and removes those functions from the model; the others stay as they
/// are. `convert_version`: a function that disagrees with the model only in its
/// version of the ONNX domain is inlined too, its nodes converted to the model's
/// version at each call (as `onnx.inliner.inline_local_functions(model,
/// convert_version=True)` does; see the module documentation).
///
/// # Errors
///
/// [`InlineError`]: a cycle of calls or a duplicated function id, a call with more
/// actual parameters than formal ones, a conversion the version converter refuses or
/// a value of a converted call with no known type, graphs nested deeper than
/// [`MAX_GRAPH_DEPTH`]. The model is unchanged on error.
pub fn inline_local_functions(
    model: &mut ModelProto<'_>,
    convert_version: bool,
) -> Result<(), InlineError> {
    check_call_cycles(model)?;
    let model_imports = OpsetMap::of_model(model);
    let mut callees = HashMap::new();
    for f in &model.functions {
        let mut mismatches = model_imports.mismatches(f);
        let mut target = None;
        if convert_version {
            if let Some(i) = mismatches.iter().position(|(d, _)| d.is_empty()) {
                target = Some(mismatches.swap_remove(i).1);
            }
        }
        if mismatches.is_empty() {
            let source = f
                .opset_import
                .iter()
                .find(|o| normalize_domain(o.domain()).is_empty())
                .map_or(0, |o| o.version());
            let conversion = target.map(|to| (source, to));
            callees.insert(
                function_id(f.domain(), f.name(), f.overload()),
                (f.clone(), conversion),
            );
        }
    }
    let selection = FunctionSelection::all();
    let mut inliner = Inliner::new(model, &selection, callees, false);
    inliner.main_graph()?;
    let (main, inlined) = inliner.finish();
    main.store(model);
    model
        .functions
        .retain(|f| !inlined.contains_key(&function_id(f.domain(), f.name(), f.overload())));
    Ok(())
}

/// Inlines the calls of the local functions `selection` picks, in the main graph and in
/// the local functions that stay (recursively), and removes the inlined functions from
/// the model, as `onnx.inliner.inline_selected_functions` does.
/// `inline_schema_functions`: calls of operators (of a domain the model imports) whose
/// schema defines a function body for the model's opset version are inlined too, when
/// selected.
///
/// # Errors
///
/// [`InlineError`]: the model's and the functions' opset imports disagree, a cycle of
/// calls or a duplicated function id, a call with more actual parameters than formal
/// ones, a selected operator whose body is built per node, graphs nested deeper than
/// [`MAX_GRAPH_DEPTH`]. The model is unchanged on error.
pub fn inline_selected_functions(
    model: &mut ModelProto<'_>,
    selection: &FunctionSelection,
    inline_schema_functions: bool,
) -> Result<(), InlineError> {
    check_call_cycles(model)?;
    let mut imports = OpsetMap::of_model(model);
    let mut callees = HashMap::new();
    let mut kept = Vec::new();
    for (i, f) in model.functions.iter().enumerate() {
        if !imports.add(f.opset_import.iter().map(|o| (o.domain(), o.version()))) {
            return Err(InlineError::IncompatibleOpsets);
        }
        if selection.contains(f.domain(), f.name()) {
            callees.insert(
                function_id(f.domain(), f.name(), f.overload()),
                (f.clone(), None),
            );
        } else {
            kept.push(i);
        }
    }
    let mut inliner = Inliner::new(model, selection, callees, inline_schema_functions);
    // As in onnx, the functions kept are rewritten after the main graph (their
    // context-dependent calls see the main graph as rewritten).
    inliner.main_graph()?;
    let mut processed = Vec::with_capacity(kept.len());
    for &i in &kept {
        let f = &model.functions[i];
        let mut body = Body {
            value_info: f.value_info.clone(),
            ..Body::default()
        };
        let target = Target::Other(&mut body.node, &mut body.value_info);
        inliner.process(target, f.node.clone(), 0)?;
        processed.push((i, body));
    }
    let (main, inlined) = inliner.finish();
    main.store(model);
    for (i, body) in processed {
        let f = &mut model.functions[i];
        f.node = body.node;
        f.value_info = body.value_info;
    }
    model
        .functions
        .retain(|f| !inlined.contains_key(&function_id(f.domain(), f.name(), f.overload())));
    Ok(())
}

/// `""` for `"ai.onnx"`, as `onnx` keys functions and opset maps.
fn normalize_domain(domain: &str) -> &str {
    if domain == "ai.onnx" {
        ""
    } else {
        domain
    }
}

/// A function's id as `onnx` writes it: `domain::name`, then `::overload` if any.
fn function_id(domain: &str, name: &str, overload: &str) -> String {
    let domain = normalize_domain(domain);
    if overload.is_empty() {
        format!("{domain}::{name}")
    } else {
        format!("{domain}::{name}::{overload}")
    }
}

/// The opset version of each domain a model (and then its functions) imports.
struct OpsetMap(HashMap<String, i64>);

impl OpsetMap {
    fn of_model(model: &ModelProto<'_>) -> Self {
        let mut map = OpsetMap(HashMap::new());
        map.add(model.opset_import.iter().map(|o| (o.domain(), o.version())));
        map
    }

    /// Adds the imports a domain does not have yet; false (and the rest not added) at
    /// the first that disagrees with the version already recorded.
    fn add<'s>(&mut self, imports: impl IntoIterator<Item = (&'s str, i64)>) -> bool {
        for (domain, version) in imports {
            match self.0.get(normalize_domain(domain)) {
                Some(&v) if v != version => return false,
                Some(_) => {}
                None => {
                    self.0.insert(normalize_domain(domain).to_owned(), version);
                }
            }
        }
        true
    }

    /// The recorded `(domain, version)` of each domain `f` imports at another version.
    fn mismatches(&self, f: &FunctionProto<'_>) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = Vec::new();
        for o in &f.opset_import {
            let domain = normalize_domain(o.domain());
            if let Some(&v) = self.0.get(domain) {
                if v != o.version() && !out.iter().any(|(d, _)| d == domain) {
                    out.push((domain.to_owned(), v));
                }
            }
        }
        out
    }
}

/// Refuses local functions that call each other in a cycle, share an id, or are more
/// than `onnx` accepts (the checker's rules, in `onnx`'s words).
fn check_call_cycles(model: &ModelProto<'_>) -> Result<(), InlineError> {
    match crate::checker::function_call_problems(model)
        .into_iter()
        .next()
    {
        Some((_, reason)) => Err(InlineError::InvalidFunctions { reason }),
        None => Ok(()),
    }
}

/// Fresh names that clash with no name of the main graph (nor with one made before).
struct NameGenerator {
    taken: HashSet<String>,
    counter: u64,
}

impl NameGenerator {
    /// Every name the main graph uses: its inputs, initializers and outputs, every
    /// node's name, inputs and outputs, and those of its subgraphs.
    fn of_graph(graph: &GraphProto<'_>) -> Self {
        let mut taken = HashSet::new();
        let mut graphs = vec![graph];
        while let Some(g) = graphs.pop() {
            let values = g.input.iter().chain(&g.output).map(|v| v.name());
            taken.extend(
                values
                    .chain(g.initializer.iter().map(|t| t.name()))
                    .map(str::to_owned),
            );
            for n in &g.node {
                taken.insert(n.name().to_owned());
                taken.extend(
                    n.input
                        .iter()
                        .chain(&n.output)
                        .map(|s| s.as_str().to_owned()),
                );
                for a in &n.attribute {
                    graphs.extend(a.g.as_deref());
                    graphs.extend(&a.graphs);
                }
            }
        }
        NameGenerator { taken, counter: 0 }
    }

    /// `suggested` if it is free, else `suggested_K` for the first free `K` of a
    /// counter that only grows; the name is then taken.
    fn fresh(&mut self, suggested: &str) -> String {
        let mut name = suggested.to_owned();
        while self.taken.contains(&name) {
            name = format!("{suggested}_{}", self.counter);
            self.counter += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// Renames the names a callee's body defines for one call site.
struct Renamer<'n> {
    suffix: String,
    names: &'n mut NameGenerator,
    /// One map per graph level, innermost last: a name as written to its new name.
    scopes: Vec<HashMap<String, String>>,
}

impl Renamer<'_> {
    fn fresh(&mut self, name: &str) -> String {
        let suggested = format!("{name}{}", self.suffix);
        self.names.fresh(&suggested)
    }

    fn bind(&mut self, formal: &str, actual: String) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(formal.to_owned(), actual);
        }
    }

    /// Gives `name` a fresh name, recorded in the innermost scope.
    fn rename(&mut self, name: &mut Option<Str<'_>>) {
        let old = name.as_deref().unwrap_or("").to_owned();
        let new = self.fresh(&old);
        self.bind(&old, new.clone());
        *name = Some(new.into());
    }

    /// The name `name` is bound to in the innermost scope that binds it; a name no
    /// scope binds is renamed when the node defines it, else left (an outer name).
    fn lookup_or_rename(&mut self, name: &str, defines: bool) -> Option<String> {
        if name.is_empty() {
            return None;
        }
        if let Some(new) = self.scopes.iter().rev().find_map(|s| s.get(name)) {
            return Some(new.clone());
        }
        if defines {
            let new = self.fresh(name);
            self.bind(name, new.clone());
            return Some(new);
        }
        None
    }

    fn node(&mut self, node: &mut NodeProto<'_>) {
        if !node.name().is_empty() {
            let new = self.fresh(node.name());
            node.name = Some(new.into());
        }
        for (names, defines) in [(&mut node.input, false), (&mut node.output, true)] {
            for name in names.iter_mut() {
                if let Some(new) = self.lookup_or_rename(name, defines) {
                    *name = new.into();
                }
            }
        }
        // Subgraphs nest without bound in a model built in memory: the recursion moves
        // to a new stack segment when the thread's runs low.
        for a in &mut node.attribute {
            if let Some(g) = a.g.as_deref_mut() {
                crate::onnx::deep::guarded(|| self.graph(g));
            }
            for g in &mut a.graphs {
                crate::onnx::deep::guarded(|| self.graph(g));
            }
        }
    }

    fn graph(&mut self, graph: &mut GraphProto<'_>) {
        self.scopes.push(HashMap::new());
        for v in &mut graph.input {
            self.rename(&mut v.name);
        }
        for t in &mut graph.initializer {
            self.rename(&mut t.name);
        }
        for v in &mut graph.output {
            self.rename(&mut v.name);
        }
        for n in &mut graph.node {
            self.node(n);
        }
        self.scopes.pop();
    }
}

/// Binds a call's actual parameters and renames the body of `callee` for call site
/// number `count`.
fn rename_callee(
    call: &NodeProto<'_>,
    callee: &mut FunctionProto<'_>,
    count: u64,
    names: &mut NameGenerator,
    id: &str,
) -> Result<(), InlineError> {
    let mut r = Renamer {
        suffix: format!("__{count}"),
        names,
        scopes: vec![HashMap::new()],
    };
    for (what, actuals, formals) in [
        ("inputs", &call.input, &callee.input),
        ("outputs", &call.output, &callee.output),
    ] {
        if actuals.len() > formals.len() {
            return Err(InlineError::TooManyActuals {
                callee: id.to_owned(),
                what,
                actual: actuals.len(),
                formal: formals.len(),
            });
        }
        let outputs = what == "outputs";
        for (i, formal) in formals.iter().enumerate() {
            let actual = actuals.get(i).map_or("", |a| a.as_str());
            let bound = if outputs && actual.is_empty() {
                r.fresh(formal)
            } else {
                actual.to_owned()
            };
            r.bind(formal, bound);
        }
    }
    for n in &mut callee.node {
        r.node(n);
    }
    for v in &mut callee.value_info {
        let new = r.lookup_or_rename(v.name(), false);
        v.name = Some(new.unwrap_or_else(|| v.name().to_owned()).into());
    }
    Ok(())
}

/// Replaces each attribute reference in `callee` (at any subgraph depth) by the call's
/// attribute of that name, keeping the reference's name, or removes it when the call
/// has none. A bound attribute's value is not visited again.
fn bind_attributes<'a>(call: &NodeProto<'a>, callee: &mut FunctionProto<'a>) {
    let values: HashMap<&str, &AttributeProto<'a>> =
        call.attribute.iter().map(|a| (a.name(), a)).collect();
    let bind = |node: &mut NodeProto<'a>| {
        node.attribute.retain_mut(|a| {
            if a.ref_attr_name().is_empty() {
                return true;
            }
            let Some(&value) = values.get(a.ref_attr_name()) else {
                return false;
            };
            let name = a.name().to_owned();
            *a = value.clone();
            a.name = Some(name.into());
            true
        });
    };
    let mut graphs: Vec<&mut GraphProto<'a>> = Vec::new();
    for n in &mut callee.node {
        bind(n);
        graphs.extend(subgraphs(n));
        while let Some(g) = graphs.pop() {
            for n in &mut g.node {
                bind(n);
                graphs.extend(subgraphs(n));
            }
        }
    }
}

/// The names `call` reads from the scope it is in, in order and with repeats, as `onnx`
/// lists them for version conversion: its inputs, then the names its subgraphs read
/// without defining them.
fn used_values(call: &NodeProto<'_>) -> Vec<String> {
    fn node(n: &NodeProto<'_>, scopes: &mut Vec<HashSet<String>>, out: &mut Vec<String>) {
        for input in &n.input {
            let local = scopes.iter().any(|s| s.contains(input.as_str()));
            if !input.is_empty() && !local {
                out.push(input.to_string());
            }
        }
        if let Some(scope) = scopes.last_mut() {
            scope.extend(
                n.output
                    .iter()
                    .filter(|o| !o.is_empty())
                    .map(|o| o.to_string()),
            );
        }
        for a in &n.attribute {
            for g in a.g.as_deref().into_iter().chain(&a.graphs) {
                let mut scope: HashSet<String> =
                    g.input.iter().map(|v| v.name().to_owned()).collect();
                scope.extend(g.initializer.iter().map(|t| t.name().to_owned()));
                scopes.push(scope);
                for inner in &g.node {
                    crate::onnx::deep::guarded(|| node(inner, scopes, out));
                }
                scopes.pop();
            }
        }
    }
    let mut out = Vec::new();
    node(call, &mut Vec::new(), &mut out);
    out
}

/// The graphs in `node`'s attributes.
fn subgraphs<'x, 'a>(node: &'x mut NodeProto<'a>) -> impl Iterator<Item = &'x mut GraphProto<'a>> {
    node.attribute
        .iter_mut()
        .flat_map(|a| a.g.as_deref_mut().into_iter().chain(a.graphs.iter_mut()))
}

/// The parts of a graph or function that inlining rewrites.
#[derive(Default)]
struct Body<'a> {
    node: Vec<NodeProto<'a>>,
    value_info: Vec<ValueInfoProto<'a>>,
    /// The main graph's outputs, once shape inference has run on it (it may type
    /// outputs declared without one).
    output: Option<Vec<ValueInfoProto<'a>>>,
    /// Initializers the version converter added, to append to the main graph's.
    added_initializer: Vec<TensorProto<'a>>,
}

impl<'a> Body<'a> {
    /// Puts the rewritten parts into the model's graph (made if it has none, as `onnx`
    /// makes it).
    fn store(self, model: &mut ModelProto<'a>) {
        let graph = model.graph.get_or_insert_with(GraphProto::default);
        graph.node = self.node;
        graph.value_info = self.value_info;
        if let Some(output) = self.output {
            graph.output = output;
        }
        graph.initializer.extend(self.added_initializer);
    }
}

/// Where [`Inliner::process`] writes: the main graph (kept in the inliner, where shape
/// inference for context-dependent functions reads it), or another list of nodes.
enum Target<'t, 'a> {
    Main,
    Other(&'t mut Vec<NodeProto<'a>>, &'t mut Vec<ValueInfoProto<'a>>),
}

/// The callee of a call site and, when its nodes need conversion, `(from, to)`
/// versions of the ONNX domain.
type Callee<'a> = (FunctionProto<'a>, Option<(i64, i64)>);

struct Inliner<'a, 's, 'm> {
    model: &'m ModelProto<'a>,
    selection: &'s FunctionSelection,
    /// Local functions to inline, by id.
    callees: HashMap<String, Callee<'a>>,
    /// Operators' function bodies are inlined too.
    schemas: bool,
    names: NameGenerator,
    count: u64,
    /// The main graph as built so far.
    main: Body<'a>,
}

impl<'a, 's, 'm> Inliner<'a, 's, 'm> {
    /// An inliner for `model`'s graph; `schemas`: operators' function bodies are
    /// inlined too.
    fn new(
        model: &'m ModelProto<'a>,
        selection: &'s FunctionSelection,
        callees: HashMap<String, Callee<'a>>,
        schemas: bool,
    ) -> Self {
        let names = match &model.graph {
            Some(g) => NameGenerator::of_graph(g),
            None => NameGenerator::of_graph(&GraphProto::default()),
        };
        Inliner {
            model,
            selection,
            callees,
            schemas,
            names,
            count: 0,
            main: Body::default(),
        }
    }

    /// Inlines the calls in the main graph, into copies of its nodes and value_info
    /// (the model changes only once everything has succeeded; [`Self::finish`] gives
    /// them).
    fn main_graph(&mut self) -> Result<(), InlineError> {
        if let Some(g) = &self.model.graph {
            self.main.value_info = g.value_info.clone();
            self.process(Target::Main, g.node.clone(), 0)?;
        }
        Ok(())
    }

    /// The main graph as rewritten, and the local functions inlined, by id.
    fn finish(self) -> (Body<'a>, HashMap<String, Callee<'a>>) {
        (self.main, self.callees)
    }

    /// The body to inline for `node`, if it is a selected call.
    fn callee(&mut self, node: &NodeProto<'_>) -> Result<Option<Callee<'a>>, InlineError> {
        let (domain, op_type) = (node.domain(), node.op_type());
        if !self.selection.contains(domain, op_type) {
            return Ok(None);
        }
        if let Some(c) = self
            .callees
            .get(&function_id(domain, op_type, node.overload()))
        {
            return Ok(Some(c.clone()));
        }
        if !self.schemas {
            return Ok(None);
        }
        // The model's version of the domain as written (0 when not imported), cut to
        // the C `int` onnx passes on.
        let imports = &self.model.opset_import;
        let version = imports
            .iter()
            .find(|o| o.domain() == domain)
            .map_or(0, |o| o.version());
        let version = i64::from(version as i32);
        let Some(schema) = schema::lookup_exact_domain(domain, op_type, version) else {
            return Ok(None);
        };
        if let Some(body) = schema
            .functions
            .iter()
            .rfind(|f| f.opset_version <= version)
        {
            let f: FunctionProto<'a> = body.function.clone().unwrap_or_default();
            return Ok(Some((f, None)));
        }
        let builders = &schema.context_dependent_function_versions;
        if builders.is_empty() {
            return Ok(None);
        }
        let not_built = || InlineError::ContextDependentFunction {
            op_type: op_type.to_owned(),
            domain: domain.to_owned(),
            version,
        };
        let Some(&builder) = builders.iter().filter(|&&v| v <= version).max() else {
            return Err(not_built());
        };
        if !(domain.is_empty() && context::BUILT.contains(&op_type)) {
            return Err(not_built());
        }
        // As onnx does, the types of the node's inputs come from shape inference over
        // the main graph as built so far, whose findings stay in its value_info.
        self.infer_main()?;
        let types = node
            .input
            .iter()
            .map(|name| {
                self.main_type(name)
                    .ok_or_else(|| InlineError::TypeUnknown {
                        name: name.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let body = context::build(schema, builder, node, &types).map_err(|e| match e {
            context::BuildError::Parse(reason) => InlineError::Builder {
                op_type: op_type.to_owned(),
                reason,
            },
            context::BuildError::NotBuilt => not_built(),
        })?;
        Ok(body.map(|f| (f, None)))
    }

    /// Runs shape inference over the model with the main graph as built so far.
    fn infer_main(&mut self) -> Result<(), InlineError> {
        let mut model = self.model.clone();
        let graph = model.graph.get_or_insert_with(GraphProto::default);
        graph.node = std::mem::take(&mut self.main.node);
        graph.value_info = std::mem::take(&mut self.main.value_info);
        if let Some(output) = self.main.output.take() {
            graph.output = output;
        }
        graph
            .initializer
            .extend(self.main.added_initializer.iter().cloned());
        let result = shape::infer_shapes(&mut model, &shape::InferOptions::default());
        // What inference records stays, in the graph and in its nodes' subgraphs.
        let graph = model.graph.unwrap_or_default();
        self.main.node = graph.node;
        self.main.value_info = graph.value_info;
        self.main.output = Some(graph.output);
        result.map_err(|e| InlineError::Inference {
            reason: e.to_string(),
        })
    }

    /// The type the main graph gives `name`: in its value_info, inputs or outputs.
    fn main_type(&self, name: &str) -> Option<TypeProto<'a>> {
        let graph = self.model.graph.as_ref();
        let inputs = graph.map_or(&[][..], |g| &g.input[..]);
        let outputs = match &self.main.output {
            Some(o) => &o[..],
            None => graph.map_or(&[][..], |g| &g.output[..]),
        };
        let found = self
            .main
            .value_info
            .iter()
            .chain(inputs)
            .chain(outputs)
            .find(|v| v.name() == name)?;
        Some(found.r#type.clone().unwrap_or_default())
    }

    /// Converts the nodes of `callee` (renamed for `call`) from version `from` of the
    /// ONNX domain to `to`, as `onnx` does: shape inference runs over the main graph as
    /// built so far, then a model is made of the call's used values as typed inputs,
    /// copies of the main graph's `Constant` nodes that make them, the callee's nodes
    /// and the call's outputs as typed outputs. Its converted nodes become the callee's
    /// (the copied constants with them), and the initializers the converter added go to
    /// the main graph.
    fn convert_callee(
        &mut self,
        call: &NodeProto<'a>,
        callee: &mut FunctionProto<'a>,
        id: &str,
        (from, to): (i64, i64),
    ) -> Result<(), InlineError> {
        self.infer_main()?;
        let typed = |name: &str, ty: Option<TypeProto<'a>>| match ty {
            Some(ty) => Ok(ValueInfoProto {
                name: Some(name.to_owned().into()),
                r#type: Some(ty),
                ..ValueInfoProto::default()
            }),
            None => Err(InlineError::TypeUnknown {
                name: name.to_owned(),
            }),
        };
        let mut graph = GraphProto::default();
        for var in used_values(call) {
            graph.input.push(typed(&var, self.main_type(&var))?);
            // The last Constant node of the main graph (so far) that makes `var`.
            let constant = self.main.node.iter().rev().find(|n| {
                normalize_domain(n.domain()).is_empty()
                    && n.op_type() == "Constant"
                    && n.output.first().is_some_and(|o| o.as_str() == var)
            });
            graph.node.extend(constant.cloned());
        }
        for var in call.output.iter().filter(|o| !o.is_empty()) {
            graph.output.push(typed(var, self.main_type(var))?);
        }
        graph.node.append(&mut callee.node);
        let function_as_model = ModelProto {
            ir_version: Some(self.model.ir_version.unwrap_or(0)),
            opset_import: callee.opset_import.clone(),
            graph: Some(graph),
            ..ModelProto::default()
        };
        let converted = crate::version_converter::convert_version_owned(function_as_model, to)
            .map_err(|source| InlineError::VersionConversion {
                callee: id.to_owned(),
                from,
                to,
                source: Box::new(source),
            })?;
        let graph = converted.graph.unwrap_or_default();
        callee.node = graph.node;
        self.main.added_initializer.extend(graph.initializer);
        Ok(())
    }

    fn process_graph(
        &mut self,
        graph: &mut GraphProto<'a>,
        depth: usize,
    ) -> Result<(), InlineError> {
        if depth > MAX_GRAPH_DEPTH {
            return Err(InlineError::TooDeep);
        }
        let nodes = std::mem::take(&mut graph.node);
        self.process(
            Target::Other(&mut graph.node, &mut graph.value_info),
            nodes,
            depth,
        )
    }

    /// Inlines the selected calls among `original` (and in their subgraphs) into
    /// `target`, appending the callees' value_info to the target's.
    fn process(
        &mut self,
        mut target: Target<'_, 'a>,
        original: Vec<NodeProto<'a>>,
        depth: usize,
    ) -> Result<(), InlineError> {
        // The node lists still to go through, innermost call last: a callee's nodes
        // are taken before the nodes after its call.
        let mut pending = vec![original.into_iter()];
        while let Some(list) = pending.last_mut() {
            let Some(mut node) = list.next() else {
                pending.pop();
                continue;
            };
            let Some((mut callee, conversion)) = self.callee(&node)? else {
                for a in &mut node.attribute {
                    if let Some(g) = a.g.as_deref_mut() {
                        crate::onnx::deep::guarded(|| self.process_graph(g, depth + 1))?;
                    }
                    for g in &mut a.graphs {
                        crate::onnx::deep::guarded(|| self.process_graph(g, depth + 1))?;
                    }
                }
                match &mut target {
                    Target::Main => self.main.node.push(node),
                    Target::Other(nodes, _) => nodes.push(node),
                }
                continue;
            };
            let id = function_id(node.domain(), node.op_type(), node.overload());
            bind_attributes(&node, &mut callee);
            self.count += 1;
            rename_callee(&node, &mut callee, self.count, &mut self.names, &id)?;
            if let Some((from, to)) = conversion {
                self.convert_callee(&node, &mut callee, &id, (from, to))?;
            }
            let actuals: HashSet<&str> = node
                .input
                .iter()
                .chain(&node.output)
                .map(|s| s.as_str())
                .collect();
            let value_info = match &mut target {
                Target::Main => &mut self.main.value_info,
                Target::Other(_, value_info) => &mut **value_info,
            };
            value_info.extend(
                callee
                    .value_info
                    .iter()
                    .filter(|v| !actuals.contains(v.name()))
                    .cloned(),
            );
            pending.push(std::mem::take(&mut callee.node).into_iter());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::{AttributeType, OperatorSetIdProto};

    fn function(name: &str, nodes: Vec<NodeProto<'static>>) -> FunctionProto<'static> {
        FunctionProto {
            name: Some(name.to_owned().into()),
            domain: Some("local".into()),
            input: vec!["x".into()],
            output: vec!["y".into()],
            node: nodes,
            opset_import: vec![OperatorSetIdProto::new("", 18)],
            ..FunctionProto::default()
        }
    }

    fn call(name: &str, input: &str, output: &str) -> NodeProto<'static> {
        let mut n = NodeProto::new(name.to_owned(), [input.to_owned()], [output.to_owned()]);
        n.domain = Some("local".into());
        n
    }

    fn model(
        nodes: Vec<NodeProto<'static>>,
        functions: Vec<FunctionProto<'static>>,
    ) -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        g.node = nodes;
        let imports = vec![
            OperatorSetIdProto::new("", 18),
            OperatorSetIdProto::new("local", 1),
        ];
        let mut m = ModelProto::new(g, imports);
        m.functions = functions;
        m
    }

    fn outputs(m: &ModelProto<'_>) -> Vec<String> {
        let g = m.graph.as_ref().unwrap();
        g.node
            .iter()
            .flat_map(|n| n.output.iter().map(|o| o.to_string()))
            .collect()
    }

    #[test]
    fn inner_names_get_the_call_site_suffix_and_a_counter_when_taken() {
        let f = function(
            "f",
            vec![
                NodeProto::new("Relu", ["x"], ["t"]),
                NodeProto::new("Abs", ["t"], ["y"]),
            ],
        );
        let mut m = model(
            vec![
                NodeProto::new("Neg", ["X"], ["t__2"]),
                call("f", "X", "A"),
                call("f", "A", "B"),
            ],
            vec![f],
        );
        inline_local_functions(&mut m, false).unwrap();
        assert_eq!(outputs(&m), ["t__2", "t__1", "A", "t__2_0", "B"]);
        assert!(m.functions.is_empty());
    }

    #[test]
    fn attribute_references_are_bound_or_dropped() {
        let mut node = NodeProto::new("LeakyRelu", ["x"], ["y"]);
        node.attribute.push(AttributeProto {
            name: Some("alpha".into()),
            ref_attr_name: Some("a".into()),
            r#type: Some(AttributeType::Float.into()),
            ..AttributeProto::default()
        });
        let mut with = call("f", "X", "A");
        with.attribute.push(AttributeProto {
            name: Some("a".into()),
            f: Some(0.5),
            r#type: Some(AttributeType::Float.into()),
            ..AttributeProto::default()
        });
        let mut m = model(
            vec![with, call("f", "A", "B")],
            vec![function("f", vec![node])],
        );
        inline_local_functions(&mut m, false).unwrap();
        let g = m.graph.as_ref().unwrap();
        assert_eq!(g.node[0].attribute[0].name(), "alpha");
        assert_eq!(g.node[0].attribute[0].f, Some(0.5));
        assert!(g.node[1].attribute.is_empty());
    }

    #[test]
    fn cycles_and_mismatched_imports_are_refused_and_the_model_kept() {
        let f = function("f", vec![call("f", "x", "y")]);
        let mut m = model(vec![call("f", "X", "Y")], vec![f]);
        let before = m.clone();
        let err = inline_local_functions(&mut m, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cycle detected in model-local function references: local::f -> local::f. \
             Model-local functions must not be recursive."
        );
        assert_eq!(m, before);

        let mut f = function("f", vec![NodeProto::new("Relu", ["x"], ["y"])]);
        f.opset_import[0] = OperatorSetIdProto::new("", 17);
        let mut m = model(vec![call("f", "X", "Y")], vec![f]);
        let err = inline_selected_functions(&mut m, &FunctionSelection::all(), false).unwrap_err();
        assert_eq!(err, InlineError::IncompatibleOpsets);
        inline_local_functions(&mut m, false).unwrap();
        assert_eq!(m.functions.len(), 1, "a function with other imports stays");
    }

    #[test]
    fn graphs_nested_too_deep_are_refused() {
        let mut node = call("f", "X", "Y");
        for _ in 0..=MAX_GRAPH_DEPTH {
            let mut g = GraphProto::named("body");
            g.node.push(node);
            let mut wrapper = NodeProto::new("If", ["c"], ["Y"]);
            wrapper.attribute.push(AttributeProto {
                name: Some("then_branch".into()),
                g: Some(Box::new(g)),
                r#type: Some(AttributeType::Graph.into()),
                ..AttributeProto::default()
            });
            node = wrapper;
        }
        let f = function("f", vec![NodeProto::new("Relu", ["x"], ["y"])]);
        let mut m = model(vec![node], vec![f]);
        assert_eq!(
            inline_local_functions(&mut m, false),
            Err(InlineError::TooDeep)
        );
        assert_eq!(m.functions.len(), 1);
    }

    #[test]
    fn selected_functions_are_inlined_inside_the_functions_kept() {
        let square = function("square", vec![NodeProto::new("Mul", ["x", "x"], ["y"])]);
        let outer = function("outer", vec![call("square", "x", "y")]);
        let mut m = model(vec![call("outer", "X", "Y")], vec![outer, square]);
        inline_selected_functions(
            &mut m,
            &FunctionSelection::only([("local", "square")]),
            false,
        )
        .unwrap();
        assert_eq!(m.functions.len(), 1);
        assert_eq!(m.functions[0].node[0].op_type(), "Mul");
        assert_eq!(m.graph.as_ref().unwrap().node[0].op_type(), "outer");
    }

    fn parsed(text: &str) -> ModelProto<'static> {
        crate::text::parse_model(text).unwrap()
    }

    #[test]
    fn converted_calls_take_the_adapters_nodes_and_constants() {
        // ReduceSum's axes go from attribute (opset 11) to input (opset 18).
        let mut m = parsed(
            r#"<ir_version: 8, opset_import: [ "" : 18, "local" : 1 ]>
            g (float[N, 3] X) => (float[N] Y) { T = Relu (X) Y = local.f (T) }
            <opset_import: [ "" : 11], domain: "local">
            f (x) => (y) { y = ReduceSum <axes = [1], keepdims = 0> (x) }"#,
        );
        inline_local_functions(&mut m, true).unwrap();
        assert!(m.functions.is_empty());
        let g = m.graph.as_ref().unwrap();
        let ops: Vec<&str> = g.node.iter().map(|n| n.op_type()).collect();
        assert_eq!(ops, ["Relu", "Constant", "ReduceSum"]);
        let reduce = &g.node[2];
        assert_eq!(reduce.input[0].as_str(), "T");
        assert_eq!(reduce.input[1].as_str(), g.node[1].output[0].as_str());
        assert!(reduce.attribute.iter().all(|a| a.name() != "axes"));
        // Shape inference ran over the main graph before converting: T is typed.
        assert_eq!(g.value_info[0].name(), "T");
    }

    #[test]
    fn initializers_the_converter_adds_go_to_the_main_graph() {
        // Pad's pads become an initializer going from opset 10 to 11.
        let mut m = parsed(
            r#"<ir_version: 8, opset_import: [ "" : 11, "local" : 1 ]>
            g (float[2, 3] X) => (float[4, 7] Y) { Y = local.f (X) }
            <opset_import: [ "" : 10], domain: "local">
            f (x) => (y) { y = Pad <pads = [1, 2, 1, 2]> (x) }"#,
        );
        inline_local_functions(&mut m, true).unwrap();
        let g = m.graph.as_ref().unwrap();
        assert_eq!(g.initializer.len(), 1);
        let pad = g.node.iter().find(|n| n.op_type() == "Pad").unwrap();
        assert_eq!(pad.input[1].as_str(), g.initializer[0].name());
        assert_eq!(g.initializer[0].int64_data, [1, 2, 1, 2]);
    }

    #[test]
    fn constants_feeding_the_call_are_seen_by_the_converter() {
        // Going down from 18 to 11 the axes input must be a constant to become an
        // attribute: a Constant node of the main graph is, a graph input is not.
        let with_constant = r#"<ir_version: 8, opset_import: [ "" : 11, "local" : 1 ]>
            g (float[N, 3] X) => (float[N] Y) {
                A = Constant <value = int64[1] {1}> () Y = local.f (X, A) }
            <opset_import: [ "" : 18], domain: "local">
            f (x, a) => (y) { y = ReduceSum <keepdims = 0> (x, a) }"#;
        let mut m = parsed(with_constant);
        inline_local_functions(&mut m, true).unwrap();
        let g = m.graph.as_ref().unwrap();
        let reduce = g.node.last().unwrap();
        assert_eq!(reduce.input.len(), 1);
        let axes = reduce.attribute.iter().find(|a| a.name() == "axes");
        assert_eq!(axes.unwrap().ints, [1]);

        let mut m = parsed(
            r#"<ir_version: 8, opset_import: [ "" : 11, "local" : 1 ]>
            g (float[N, 3] X, int64[1] A) => (float[N] Y) { Y = local.f (X, A) }
            <opset_import: [ "" : 18], domain: "local">
            f (x, a) => (y) { y = ReduceSum <keepdims = 0> (x, a) }"#,
        );
        let before = m.clone();
        let err = inline_local_functions(&mut m, true).unwrap_err();
        assert!(
            matches!(
                &err,
                InlineError::VersionConversion {
                    from: 18,
                    to: 11,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("No initializer or constant input"));
        assert_eq!(m, before);
        inline_local_functions(&mut m, false).unwrap();
        assert_eq!(m.functions.len(), 1, "a function with other imports stays");
    }

    #[test]
    fn call_values_without_a_type_are_refused_as_onnx_refuses_them() {
        // The call's output T is typed nowhere before the call is inlined.
        let mut m = parsed(
            r#"<ir_version: 8, opset_import: [ "" : 18, "local" : 1 ]>
            g (float[N, 3] X) => (float[N] Y) { T = local.f (X) Y = Relu (T) }
            <opset_import: [ "" : 11], domain: "local">
            f (x) => (y) { y = ReduceSum <axes = [1], keepdims = 0> (x) }"#,
        );
        assert_eq!(
            inline_local_functions(&mut m, true),
            Err(InlineError::TypeUnknown { name: "T".into() })
        );
    }

    #[test]
    fn used_values_include_what_subgraphs_read_from_outside() {
        let mut body = GraphProto::named("body");
        body.input.push(ValueInfoProto {
            name: Some("i".into()),
            ..ValueInfoProto::default()
        });
        body.node.push(NodeProto::new("Add", ["i", "outer"], ["s"]));
        body.node.push(NodeProto::new("Mul", ["s", "X"], ["o"]));
        let mut call = NodeProto::new("f", ["X", "", "X"], ["Y"]);
        call.attribute.push(AttributeProto {
            name: Some("g".into()),
            g: Some(Box::new(body)),
            r#type: Some(AttributeType::Graph.into()),
            ..AttributeProto::default()
        });
        assert_eq!(used_values(&call), ["X", "X", "outer", "X"]);
    }
}
