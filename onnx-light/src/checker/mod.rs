//! A model checker with the rules of `onnx.checker.check_model(model, full_check=False)`:
//! it accepts what that checker accepts and rejects what it rejects, but reports every
//! problem it finds (not only the first), each with where it is, in model order. Past
//! [`CheckOptions::max_problems_per_kind`] problems of one kind (100 by default), the
//! rest are counted, not kept ([`Problem::more`]), and checking takes time linear in the
//! model's size: a hostile model cannot make the report, or the time to make it, grow
//! faster than the model.
//!
//! ```
//! use onnx_light::checker;
//! use onnx_light::onnx::*;
//!
//! let mut graph = GraphProto::named("g");
//! graph.input.push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]));
//! graph.output.push(ValueInfoProto::tensor("y", DataType::Float, [1, 4]));
//! graph.node.push(NodeProto::new("Relu", ["x"], ["y"]).with_name("relu"));
//! let model = ModelProto::new(graph, vec![OperatorSetIdProto::new("", 21)]);
//! assert!(checker::check_model(&model).is_ok());
//!
//! // An attribute of the wrong type and an input nothing defines: two problems.
//! let mut bad = model.clone();
//! let g = bad.graph.as_mut().unwrap();
//! g.node.push(
//!     NodeProto::new("Softmax", ["y", "z"], ["s"])
//!         .with_name("sm")
//!         .with_attribute(AttributeProto::float("axis", 1.0)),
//! );
//! let problems = checker::check_model(&bad).unwrap_err();
//! assert_eq!(problems.len(), 3, "{problems}");
//! assert_eq!(
//!     problems[0].to_string(),
//!     r#"graph.node[1] "sm": input 'z' is not defined before the node (not a graph input, initializer, or output of an earlier node)"#
//! );
//! ```
//!
//! What is checked, as `onnx` checks it: the IR version (set, not newer than the
//! schemas'); unique metadata keys; opset imports (required from IR version 3, absent
//! before; versions within `int32`); every graph and subgraph (a name, typed inputs and
//! outputs in the main graph, single assignment of every value, nodes in topological
//! order with inputs defined in the graph or an enclosing one, outputs produced by the
//! graph, initializers named uniquely and, before IR version 4, listed as inputs);
//! every node (an operator of an imported opset that exists at that version and is not
//! deprecated, input and output counts, no empty name for a required input or output,
//! attribute names known, types as declared, required ones present, each attribute
//! holding at most one value of its declared type); every tensor (a data type, exactly
//! one data field holding enough values for the dims, raw data size, external data with
//! a safe relative location); sparse tensors (rank, positive dims, INT64 indices in
//! range and sorted); model-local functions (names, opset compatibility with the model,
//! single assignment, no recursion). `onnx` does not check training information or the
//! `value_info` list, so neither does this.
//!
//! An input not defined before its node is told apart by what produces it: a node listed
//! later (the nodes are out of topological order, which onnxruntime sorts out as it loads
//! a model but `onnx` rejects) gives the problem a [`Detail::ProducedLater`] naming that
//! node; an input nothing produces has no detail.
//!
//! External data files are looked for only when [`CheckOptions::model_dir`] is set (as
//! `onnx.checker.check_model(path)` does); without it, locations are checked as text.
//! Those are `onnx.checker`'s rules, not a load's: `onnx` accepts a `..` that stays in
//! the directory once normalized and a link among the directories that stays inside,
//! which a load refuses, and refuses a hard-linked data file, which a load accepts.
//! [`io::external::verify`](crate::io::external::verify) checks a model's external data
//! with the rules of a load (ranges, lengths and checksums too); `onnx-light check` runs
//! both.

pub(crate) mod hash;
mod node;
mod parts;
pub mod schema;
mod tensor;

/// The work of the checker's loops over a model's lists, counted in unit tests only, so
/// that they can assert that checking is linear in the model's size without timing it.
#[cfg(test)]
mod steps {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn add(n: u64) {
        STEPS.with(|s| s.set(s.get() + n));
    }

    /// The steps counted on this thread since the last call.
    pub(super) fn take() -> u64 {
        STEPS.with(|s| s.replace(0))
    }
}

#[cfg(not(test))]
mod steps {
    #[inline(always)]
    pub(super) fn add(_: u64) {}
}

use std::collections::{HashMap, HashSet};

use hash::{NameMap, NameSet};
pub use parts::{
    check_attribute, check_function, check_graph, check_node, check_sparse_tensor, check_tensor,
    check_value_info, PartContext,
};
use std::fmt;
use std::path::PathBuf;

use crate::onnx::{FunctionProto, GraphProto, ModelProto, NodeProto};

/// Graphs nested deeper than this (a subgraph of a node of a subgraph ...) are
/// reported, not descended into, so that no model can exhaust the stack.
pub const MAX_GRAPH_NESTING: usize = 100;

/// How many model-local functions `onnx` accepts, and how deep a chain of calls
/// between them may go.
const MAX_LOCAL_FUNCTIONS: usize = 10_000;
const MAX_FUNCTION_CALL_DEPTH: usize = 100;

/// Options of [`check_model_with`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckOptions {
    /// The directory external data locations are relative to (the model file's
    /// directory). `None`: locations are checked as text only, no file is looked at.
    pub model_dir: Option<PathBuf>,
    /// Skip the check that a function's opset imports are compatible with the
    /// model's (`onnx`'s `skip_opset_compatibility_check`).
    pub skip_opset_compatibility_check: bool,
    /// Reject operators without a schema in every domain, not only in the built-in
    /// ones (`onnx`'s `check_custom_domain`).
    pub check_custom_domain: bool,
    /// How many problems of each kind are kept (default
    /// [`DEFAULT_MAX_PROBLEMS_PER_KIND`]; at least 1): past it, problems of that kind
    /// are counted, not kept, so that the problems of a hostile model take bounded
    /// memory. A kind is one rule of the checker (a repeated metadata key, an input
    /// not defined before its node, ...); [`Problem::more`] holds the count.
    pub max_problems_per_kind: usize,
}

/// The default of [`CheckOptions::max_problems_per_kind`].
pub const DEFAULT_MAX_PROBLEMS_PER_KIND: usize = 100;

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            model_dir: None,
            skip_opset_compatibility_check: false,
            check_custom_domain: false,
            max_problems_per_kind: DEFAULT_MAX_PROBLEMS_PER_KIND,
        }
    }
}

impl CheckOptions {
    /// Look for external data files in `dir`.
    pub fn model_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.model_dir = Some(dir.into());
        self
    }

    /// Set [`skip_opset_compatibility_check`](Self::skip_opset_compatibility_check).
    pub fn skip_opset_compatibility_check(mut self, skip: bool) -> Self {
        self.skip_opset_compatibility_check = skip;
        self
    }

    /// Set [`check_custom_domain`](Self::check_custom_domain).
    pub fn check_custom_domain(mut self, check: bool) -> Self {
        self.check_custom_domain = check;
        self
    }

    /// Set [`max_problems_per_kind`](Self::max_problems_per_kind).
    pub fn max_problems_per_kind(mut self, max: usize) -> Self {
        self.max_problems_per_kind = max;
        self
    }
}

/// The longest path or message a problem holds, in bytes: longer text (a name of a
/// megabyte) is cut and ends with `…`, so that no problem is larger than this.
pub const MAX_PROBLEM_TEXT: usize = 4096;

/// One problem: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// Where, e.g. `graph.node[12] "Conv_3".attribute kernel_shape` (`model` for
    /// model-level fields).
    pub path: String,
    /// What is wrong, in a sentence without a final period.
    pub message: String,
    /// How many more problems of this kind were found after this one and not kept
    /// (past [`CheckOptions::max_problems_per_kind`]): set on the last kept problem of
    /// such a kind, 0 on every other.
    pub more: u64,
    /// What the problem is about, for a caller that groups or acts on problems
    /// without reading their messages; `None` for most problems.
    pub detail: Option<Detail>,
}

/// The facts behind a problem, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// A node uses a value that a node listed after it produces: the nodes are not in
    /// topological order. (An input that nothing produces has no detail.)
    ProducedLater(ProducedLater),
}

/// A value used before the node that produces it, in the node list of one graph or
/// function. `onnx.checker` rejects such a model, though onnxruntime sorts the nodes
/// itself as it loads one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProducedLater {
    /// The path of the graph or function whose node list is out of order (`graph` for
    /// the main graph). It is an enclosing graph of the problem's node when that
    /// node is in a subgraph and uses a value of the enclosing graph.
    pub graph: String,
    /// The value used too early.
    pub value: String,
    /// The node of that list that uses the value: the problem's node, or the node
    /// whose subgraph holds it.
    pub user: NodeRef,
    /// The node of that list that produces the value, listed after the user.
    pub producer: NodeRef,
    /// Whether the problem's node is in a subgraph of the user, which uses the value
    /// through it (the value is the enclosing graph's).
    pub in_subgraph: bool,
    /// Whether this is the first value the user uses before it is produced (directly or
    /// through its subgraphs). The first ones and the others are counted as two kinds,
    /// so that the first ones, kept and counted ([`Problem::more`]), number the nodes
    /// out of order.
    pub first_for_user: bool,
}

/// A node named by its place in its node list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeRef {
    /// The index in the node list.
    pub index: usize,
    /// The node's name (often empty).
    pub name: String,
}

impl Problem {
    /// `... and 1,999,900 more of this kind` for a problem whose [`more`](Self::more)
    /// is not 0: the line that follows it in a report.
    pub fn more_of_this_kind(&self) -> Option<String> {
        (self.more > 0).then(|| format!("... and {} more of this kind", thousands(self.more)))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem [`check_model`] found, in model order (never empty): the first
/// [`CheckOptions::max_problems_per_kind`] of each kind, the rest counted in
/// [`Problem::more`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// How many problems were found: those kept and those only counted.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|p| 1 + p.more).sum()
    }
}

impl std::ops::Deref for Problems {
    type Target = [Problem];
    fn deref(&self) -> &[Problem] {
        &self.0
    }
}

/// The header line, then one line per problem kept, each problem past which more of
/// its kind were found followed by `... and N more of this kind`.
impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problem(s) found", thousands(self.total()))?;
        for p in &self.0 {
            write!(f, "\n{p}")?;
            if let Some(more) = p.more_of_this_kind() {
                write!(f, "\n{more}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}

/// `1999900` as `1,999,900`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `value` as text of at most [`MAX_PROBLEM_TEXT`] bytes (cut at a character boundary,
/// then `…`). Formatting stops where the text is cut, so a long name costs no more than
/// the bytes kept.
fn capped(value: impl fmt::Display) -> String {
    struct Capped {
        text: String,
        cut: bool,
    }
    impl fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let room = MAX_PROBLEM_TEXT - self.text.len();
            if s.len() <= room {
                self.text.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&s[..end]);
            self.cut = true;
            Err(fmt::Error)
        }
    }
    let mut out = Capped {
        text: String::new(),
        cut: false,
    };
    let _ = fmt::write(&mut out, format_args!("{value}"));
    if out.cut {
        out.text.push('…');
    }
    out.text
}

/// Checks `model` by `onnx.checker`'s rules (see the module docs); external data files
/// are not looked at.
///
/// # Errors
/// Every problem found, with its path.
pub fn check_model(model: &ModelProto<'_>) -> Result<(), Problems> {
    check_model_with(model, &CheckOptions::default())
}

/// [`check_model`] with options.
///
/// # Errors
/// Every problem found, with its path.
pub fn check_model_with(model: &ModelProto<'_>, options: &CheckOptions) -> Result<(), Problems> {
    let mut c = Checker::new(options);
    c.check_model(model);
    c.finish()
}

/// Opset version by domain, as imported by the model or a function (a later import of
/// a domain replaces an earlier one, as in `onnx`).
#[derive(Clone, Default)]
pub(crate) struct Opsets {
    by_domain: HashMap<String, i64>,
    /// The version a node of domain `""` uses: the `""` import, else the `ai.onnx` one
    /// (kept apart because nearly every node asks for it).
    default_domain: Option<i64>,
}

impl Opsets {
    fn new() -> Self {
        Opsets::default()
    }

    fn insert(&mut self, domain: &str, version: i64) {
        self.by_domain.insert(domain.to_string(), version);
        self.default_domain = self
            .by_domain
            .get("")
            .or_else(|| self.by_domain.get("ai.onnx"))
            .copied();
    }

    fn is_empty(&self) -> bool {
        self.by_domain.is_empty()
    }

    /// The version imported for exactly this domain.
    fn get(&self, domain: &str) -> Option<i64> {
        self.by_domain.get(domain).copied()
    }

    /// The version a node of `domain` uses (`""` falls back to an `ai.onnx` import).
    fn for_node(&self, domain: &str) -> Option<i64> {
        if domain.is_empty() {
            self.default_domain
        } else {
            self.get(domain)
        }
    }
}

/// Where a problem is: a chain of path segments, formatted only when reported.
pub(crate) struct Loc<'p> {
    parent: Option<&'p Loc<'p>>,
    seg: Seg<'p>,
}

enum Seg<'p> {
    Root(&'static str),
    RootIndexed(&'static str, usize, &'p str),
    Field(&'static str),
    Indexed(&'static str, usize, &'p str),
    Attribute(&'p str),
}

impl<'p> Loc<'p> {
    fn root(name: &'static str) -> Loc<'static> {
        Loc {
            parent: None,
            seg: Seg::Root(name),
        }
    }

    fn root_indexed(field: &'static str, i: usize, name: &'p str) -> Loc<'p> {
        Loc {
            parent: None,
            seg: Seg::RootIndexed(field, i, name),
        }
    }

    pub(crate) fn field<'s>(&'s self, field: &'static str) -> Loc<'s> {
        Loc {
            parent: Some(self),
            seg: Seg::Field(field),
        }
    }

    pub(crate) fn indexed<'s>(&'s self, field: &'static str, i: usize, name: &'s str) -> Loc<'s> {
        Loc {
            parent: Some(self),
            seg: Seg::Indexed(field, i, name),
        }
    }

    pub(crate) fn attribute<'s>(&'s self, name: &'s str) -> Loc<'s> {
        Loc {
            parent: Some(self),
            seg: Seg::Attribute(name),
        }
    }
}

impl fmt::Display for Loc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.parent {
            p.fmt(f)?;
        }
        match self.seg {
            Seg::Root(name) => f.write_str(name),
            Seg::RootIndexed(field, i, name) => write!(f, "{field}[{i}] {name:?}"),
            Seg::Field(field) => write!(f, ".{field}"),
            Seg::Indexed(field, i, "") => write!(f, ".{field}[{i}]"),
            Seg::Indexed(field, i, name) => write!(f, ".{field}[{i}] {name:?}"),
            Seg::Attribute(name) => write!(f, ".attribute {name}"),
        }
    }
}

/// The values defined so far, one set per graph level (the innermost last).
pub(crate) struct Scope<'m> {
    levels: Vec<Level<'m>>,
    /// Recently defined names, by hash: a node's inputs are mostly the outputs of the
    /// nodes just before it, and this small table answers those from cache where a probe
    /// of a large level set would miss it. Only ever answers "defined".
    recent: Vec<Option<Recent<'m>>>,
    generations: u64,
}

struct Level<'m> {
    names: NameSet<'m>,
    /// Distinguishes this level from an earlier one at the same depth.
    generation: u64,
    /// The level's node list and the index of the node being checked (for an
    /// enclosing level: the node whose subgraph is being checked).
    nodes: &'m [NodeProto<'m>],
    at: usize,
    /// The first node producing each name, built on the first input found undefined:
    /// it tells a value produced later from one produced nowhere, and only a model with
    /// such an input pays for it.
    producers: Option<NameMap<'m, usize>>,
    /// The last node of this level found using a value produced later.
    last_user: Option<usize>,
    /// Problems kept whose [`ProducedLater::graph`] is this level's graph, found while
    /// checking one of its subgraphs: the path is filled in when the level is done.
    pending_graph_path: Vec<usize>,
}

/// An input used before the node producing it, as [`Scope::produced_later`] finds it.
struct Later<'m> {
    /// How many graphs out the producer's node list is (0: the input's own graph).
    levels_up: usize,
    user: usize,
    user_name: &'m str,
    /// Whether the user is found using a value produced later for the first time.
    first_for_user: bool,
    producer: usize,
    producer_name: &'m str,
}

#[derive(Clone, Copy)]
struct Recent<'m> {
    name: &'m str,
    depth: usize,
    generation: u64,
}

const RECENT_SLOTS: usize = 1024;

fn name_hash(name: &str) -> u64 {
    std::hash::BuildHasher::hash_one(
        &std::hash::BuildHasherDefault::<hash::NameHasher>::default(),
        name,
    )
}

impl<'m> Scope<'m> {
    fn new() -> Self {
        Scope {
            levels: Vec::new(),
            recent: vec![None; RECENT_SLOTS],
            generations: 0,
        }
    }

    /// A new innermost level, for a graph or function whose nodes are `nodes`.
    fn push(&mut self, capacity: usize, nodes: &'m [NodeProto<'m>]) {
        self.generations += 1;
        self.levels.push(Level {
            names: NameSet::with_capacity_and_hasher(capacity, Default::default()),
            generation: self.generations,
            nodes,
            at: 0,
            producers: None,
            last_user: None,
            pending_graph_path: Vec::new(),
        });
    }

    /// Records that the innermost level's node `index` is being checked.
    fn at_node(&mut self, index: usize) {
        if let Some(l) = self.levels.last_mut() {
            l.at = index;
        }
    }

    /// Where `name`, not defined so far, is produced by a node listed after the node
    /// using it (in this graph, or after the node holding this subgraph in an
    /// enclosing one); `None` when no node produces it, or only the user itself.
    fn produced_later(&mut self, name: &str) -> Option<Later<'m>> {
        for (levels_up, level) in self.levels.iter_mut().rev().enumerate() {
            let nodes = level.nodes;
            let producers = level.producers.get_or_insert_with(|| {
                let mut first = NameMap::default();
                for (i, n) in nodes.iter().enumerate() {
                    steps::add(1 + n.output.len() as u64);
                    for o in n.output.iter().filter(|o| !o.is_empty()) {
                        first.entry(o.as_str()).or_insert(i);
                    }
                }
                first
            });
            if let Some(&producer) = producers.get(name) {
                if producer <= level.at {
                    return None;
                }
                // Nodes are checked in order, so a user seen before is the last one.
                let first_for_user = level.last_user != Some(level.at);
                level.last_user = Some(level.at);
                return Some(Later {
                    levels_up,
                    user: level.at,
                    user_name: nodes.get(level.at).map_or("", |n| n.name()),
                    first_for_user,
                    producer,
                    producer_name: nodes.get(producer).map_or("", |n| n.name()),
                });
            }
        }
        None
    }

    /// Asks for the path of the graph `levels_up` out to be filled into the
    /// [`ProducedLater`] of the kept problem `index` when that graph is done.
    fn defer_graph_path(&mut self, levels_up: usize, index: usize) {
        let depth = self.levels.len().saturating_sub(1 + levels_up);
        if let Some(l) = self.levels.get_mut(depth) {
            l.pending_graph_path.push(index);
        }
    }

    /// The kept problems waiting for the innermost graph's path.
    fn take_pending_graph_paths(&mut self) -> Vec<usize> {
        self.levels
            .last_mut()
            .map(|l| std::mem::take(&mut l.pending_graph_path))
            .unwrap_or_default()
    }

    fn pop(&mut self) {
        self.levels.pop();
    }

    fn this_graph_has(&self, name: &str) -> bool {
        self.levels.last().is_some_and(|l| l.names.contains(name))
    }

    fn any_graph_has(&self, name: &str) -> bool {
        let slot = self.recent[name_hash(name) as usize % RECENT_SLOTS];
        if let Some(r) = slot {
            let live = self
                .levels
                .get(r.depth)
                .is_some_and(|l| l.generation == r.generation);
            if live && r.name == name {
                return true;
            }
        }
        self.levels.iter().rev().any(|l| l.names.contains(name))
    }

    fn remember(&mut self, name: &'m str) {
        let depth = self.levels.len() - 1;
        let generation = self.levels[depth].generation;
        self.recent[name_hash(name) as usize % RECENT_SLOTS] = Some(Recent {
            name,
            depth,
            generation,
        });
    }

    fn add(&mut self, name: &'m str) {
        if let Some(l) = self.levels.last_mut() {
            if l.names.insert(name) {
                self.remember(name);
            }
        }
    }

    /// Adds `name` to this graph; false when it was defined already, here or in an
    /// enclosing graph (one hash of the innermost set instead of a lookup and an insert).
    fn define(&mut self, name: &'m str) -> bool {
        let Some((this, outer)) = self.levels.split_last_mut() else {
            return true;
        };
        let fresh = this.names.insert(name);
        let outer_has = fresh && outer.iter().any(|l| l.names.contains(name));
        if fresh {
            self.remember(name);
        }
        fresh && !outer_has
    }
}

/// The message of an input produced later: `onnx`'s words for an input not defined
/// before its node, then the node that produces it.
struct LaterMessage<'a, 'm> {
    input: &'a str,
    later: &'a Later<'m>,
}

impl fmt::Display for LaterMessage<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.later;
        write!(f, "input '{}' is not defined before the node: ", self.input)?;
        if l.levels_up > 0 {
            f.write_str("in an enclosing graph, ")?;
        }
        write!(f, "{} produces it ", NodeText(l.producer, l.producer_name))?;
        if l.levels_up > 0 {
            write!(f, "after {}", NodeText(l.user, l.user_name))?;
        } else {
            f.write_str("later")?;
        }
        f.write_str(" (the nodes are not in topological order)")
    }
}

/// A node as paths name it: `node[7] "a"`, or `node[7]` without a name.
struct NodeText<'a>(usize, &'a str);

impl fmt::Display for NodeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            "" => write!(f, "node[{}]", self.0),
            name => write!(f, "node[{}] {name:?}", self.0),
        }
    }
}

pub(crate) struct Checker<'o> {
    /// The problems kept, in model order.
    problems: Vec<Problem>,
    /// The problems of each kind: a kind is one rule, the place in the checker that
    /// reports it.
    kinds: HashMap<Kind, KindCount>,
    options: &'o CheckOptions,
    /// The model's IR version truncated to `int32`, as `onnx` keeps it.
    ir_version: i32,
    /// The opsets in effect: the model's, or a function's while checking it.
    opsets: Opsets,
    /// How many graphs enclose the one being checked.
    depth: usize,
}

/// A kind of problem: the place in the checker that reports it, or a name where one
/// place reports problems of two kinds.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Site(&'static std::panic::Location<'static>),
    /// The first value a node uses before a later node produces it.
    FirstProducedLater,
    /// Another value the same node uses before a later node produces it.
    MoreProducedLater,
}

/// How many problems of one kind were found.
#[derive(Default)]
struct KindCount {
    kept: usize,
    /// Found past the limit, not kept.
    more: u64,
    /// The index of the last one kept.
    last: usize,
}

impl<'o> Checker<'o> {
    fn new(options: &'o CheckOptions) -> Self {
        Checker {
            problems: Vec::new(),
            kinds: HashMap::new(),
            options,
            ir_version: 0,
            opsets: Opsets::new(),
            depth: 0,
        }
    }

    /// The problems found, each last one kept of a kind that had more carrying their
    /// count.
    fn finish(mut self) -> Result<(), Problems> {
        if self.problems.is_empty() {
            return Ok(());
        }
        for kind in self.kinds.values().filter(|k| k.more > 0) {
            self.problems[kind.last].more = kind.more;
        }
        Err(Problems(self.problems))
    }

    /// Records a problem, or only counts it once its kind has as many as the options
    /// keep. The message is formatted only when kept (callers pass `format_args!`), so
    /// that a counted problem costs no formatting.
    #[track_caller]
    pub(crate) fn report(&mut self, loc: &Loc<'_>, message: impl fmt::Display) {
        let kind = Kind::Site(std::panic::Location::caller());
        self.record(kind, loc, message, || None);
    }

    /// [`report`](Self::report) for a problem of `kind`, with its [`Detail`] (made
    /// only when the problem is kept); returns the kept problem's index.
    fn record(
        &mut self,
        kind: Kind,
        loc: &Loc<'_>,
        message: impl fmt::Display,
        detail: impl FnOnce() -> Option<Detail>,
    ) -> Option<usize> {
        let kind = self.kinds.entry(kind).or_default();
        if kind.kept >= self.options.max_problems_per_kind.max(1) {
            kind.more += 1;
            return None;
        }
        kind.kept += 1;
        kind.last = self.problems.len();
        self.problems.push(Problem {
            path: capped(loc),
            message: capped(message),
            more: 0,
            detail: detail(),
        });
        Some(self.problems.len() - 1)
    }

    /// Reports `input` of the node at `loc`, which a node listed later produces.
    /// `graph` is the path of the input's own graph or function.
    fn report_produced_later<'m>(
        &mut self,
        loc: &Loc<'_>,
        graph: &Loc<'_>,
        input: &str,
        later: &Later<'m>,
        scope: &mut Scope<'m>,
    ) {
        let message = LaterMessage { input, later };
        let detail = || {
            Some(Detail::ProducedLater(ProducedLater {
                // An enclosing graph's path is filled in once that graph is done.
                graph: if later.levels_up == 0 {
                    capped(graph)
                } else {
                    String::new()
                },
                value: capped(input),
                user: NodeRef {
                    index: later.user,
                    name: capped(later.user_name),
                },
                producer: NodeRef {
                    index: later.producer,
                    name: capped(later.producer_name),
                },
                in_subgraph: later.levels_up > 0,
                first_for_user: later.first_for_user,
            }))
        };
        let kind = if later.first_for_user {
            Kind::FirstProducedLater
        } else {
            Kind::MoreProducedLater
        };
        let kept = self.record(kind, loc, message, detail);
        if let (Some(index), 1..) = (kept, later.levels_up) {
            scope.defer_graph_path(later.levels_up, index);
        }
    }

    /// Fills the path of the graph at `loc`, now done, into the problems that wait for it.
    fn fill_graph_paths(&mut self, loc: &Loc<'_>, scope: &mut Scope<'_>) {
        let pending = scope.take_pending_graph_paths();
        if pending.is_empty() {
            return;
        }
        let path = capped(loc);
        for i in pending {
            if let Some(Some(Detail::ProducedLater(p))) =
                self.problems.get_mut(i).map(|p| p.detail.as_mut())
            {
                p.graph.clone_from(&path);
            }
        }
    }

    /// The imported version of `domain` for a node (`""` falls back to an
    /// `ai.onnx` import, as in `onnx`).
    fn opset_version(&self, domain: &str) -> Option<i64> {
        self.opsets.for_node(domain)
    }

    fn check_model(&mut self, model: &ModelProto<'_>) {
        let loc = Loc::root("model");
        let ir = model.ir_version();
        let max_ir = schema::all().ir_version;
        if ir == 0 {
            self.report(&loc, "ir_version is missing (or 0)");
        }
        if ir > max_ir {
            self.report(
                &loc,
                format_args!("ir_version {ir} is newer than the checker's ({max_ir})"),
            );
        }
        let mut keys = HashSet::new();
        for (i, e) in model.metadata_props.iter().enumerate() {
            if !keys.insert(e.key()) {
                self.report(
                    &loc.indexed("metadata_props", i, e.key()),
                    "the key appears more than once",
                );
            }
        }
        // onnx keeps the IR version as an `int` (modular truncation).
        self.ir_version = ir as i32;
        let mut opsets = Opsets::new();
        for (i, o) in model.opset_import.iter().enumerate() {
            self.checked_opset(o.version(), &loc.indexed("opset_import", i, o.domain()));
            opsets.insert(o.domain(), o.version());
        }
        if ir >= 3 {
            if opsets.is_empty() {
                self.report(&loc, "opset_import is empty (required from IR version 3)");
            }
        } else if opsets.is_empty() {
            opsets.insert("", 1);
        } else {
            self.report(
                &loc,
                format_args!("opset_import must be empty for IR version {ir} (< 3)"),
            );
        }
        self.opsets = opsets;
        let mut scope = Scope::new();
        let empty = GraphProto::default();
        let graph = model.graph.as_ref().unwrap_or(&empty);
        self.check_graph(graph, true, &mut scope, &Loc::root("graph"));
        if self.ir_version >= 8 {
            self.check_local_functions(model);
        }
    }

    /// A version `onnx` can hold (an `int`).
    fn checked_opset(&mut self, version: i64, loc: &Loc<'_>) {
        if i32::try_from(version).is_err() {
            self.report(
                loc,
                format_args!("opset version {version} is out of the int32 range"),
            );
        }
    }

    pub(crate) fn check_graph<'m>(
        &mut self,
        g: &'m GraphProto<'m>,
        main_graph: bool,
        scope: &mut Scope<'m>,
        loc: &Loc<'_>,
    ) {
        if self.depth >= MAX_GRAPH_NESTING {
            self.report(
                loc,
                format_args!("graphs are nested more than {MAX_GRAPH_NESTING} deep"),
            );
            return;
        }
        self.depth += 1;
        if g.name().is_empty() {
            self.report(loc, "the graph name is empty");
        }
        for (i, v) in g.input.iter().enumerate() {
            self.check_value_info(v, main_graph, &loc.indexed("input", i, v.name()));
        }
        for (i, v) in g.output.iter().enumerate() {
            self.check_value_info(v, main_graph, &loc.indexed("output", i, v.name()));
        }
        // Room for every name this graph defines, so that the set never grows mid-check.
        let outputs: usize = g.node.iter().map(|n| n.output.len()).sum();
        scope.push(
            g.input.len() + g.initializer.len() + g.sparse_initializer.len() + outputs,
            &g.node,
        );
        for (i, v) in g.input.iter().enumerate() {
            if scope.this_graph_has(v.name()) {
                self.report(
                    &loc.indexed("input", i, v.name()),
                    format_args!("'{}' is a graph input more than once", v.name()),
                );
            }
            scope.add(v.name());
        }
        let mut initializers =
            NameSet::with_capacity_and_hasher(g.initializer.len(), Default::default());
        for (i, t) in g.initializer.iter().enumerate() {
            let tloc = loc.indexed("initializer", i, t.name());
            if t.name().is_empty() {
                self.report(&tloc, "the initializer has no name");
            } else if !initializers.insert(t.name()) {
                self.report(
                    &tloc,
                    format_args!("initializer name '{}' is not unique", t.name()),
                );
            }
            self.check_tensor(t, &tloc);
            if self.ir_version <= 3 {
                if !scope.this_graph_has(t.name()) {
                    self.report(
                        &tloc,
                        format_args!("'{}' is an initializer but not a graph input (required before IR version 4)", t.name()),
                    );
                }
            } else {
                scope.add(t.name());
            }
        }
        for (i, s) in g.sparse_initializer.iter().enumerate() {
            let name = s.values.as_ref().map_or("", |v| v.name());
            let sloc = loc.indexed("sparse_initializer", i, name);
            if name.is_empty() {
                self.report(&sloc, "the sparse initializer has no name (values.name)");
            } else if !initializers.insert(name) {
                self.report(
                    &sloc,
                    format_args!(
                        "sparse initializer name '{name}' is not unique among initializers"
                    ),
                );
            }
            self.check_sparse_tensor(s, &sloc);
            scope.add(name);
        }
        for (i, node) in g.node.iter().enumerate() {
            let nloc = loc.indexed("node", i, node.name());
            scope.at_node(i);
            for input in &node.input {
                if input.is_empty() || scope.any_graph_has(input) {
                    continue;
                }
                match scope.produced_later(input) {
                    Some(later) => self.report_produced_later(&nloc, loc, input, &later, scope),
                    None => self.report(
                        &nloc,
                        format_args!("input '{input}' is not defined before the node (not a graph input, initializer, or output of an earlier node)"),
                    ),
                }
            }
            self.check_node(node, main_graph, scope, &nloc);
            self.add_outputs(node, scope, &nloc);
        }
        for (i, v) in g.output.iter().enumerate() {
            if !scope.this_graph_has(v.name()) {
                self.report(
                    &loc.indexed("output", i, v.name()),
                    format_args!("graph output '{}' is not produced in this graph", v.name()),
                );
            }
        }
        self.fill_graph_paths(loc, scope);
        scope.pop();
        self.depth -= 1;
    }

    /// Single assignment: a node's outputs must not be defined already, here or in an
    /// enclosing graph.
    fn add_outputs<'m>(&mut self, node: &'m NodeProto<'m>, scope: &mut Scope<'m>, loc: &Loc<'_>) {
        for output in &node.output {
            if output.is_empty() {
                continue;
            }
            if !scope.define(output) {
                self.report(
                    loc,
                    format_args!(
                        "'{output}' is assigned more than once (the graph must be in SSA form)"
                    ),
                );
            }
        }
    }

    fn check_local_functions(&mut self, model: &ModelProto<'_>) {
        let model_opsets = std::mem::take(&mut self.opsets);
        let mut merged = model_opsets.clone();
        for (fi, f) in model.functions.iter().enumerate() {
            for (i, o) in f.opset_import.iter().enumerate() {
                if merged.get(o.domain()).is_none() {
                    let floc = Loc::root_indexed("functions", fi, f.name());
                    self.checked_opset(o.version(), &floc.indexed("opset_import", i, o.domain()));
                    merged.insert(o.domain(), o.version());
                }
            }
        }
        self.check_call_cycles(model);
        for (i, f) in model.functions.iter().enumerate() {
            let floc = Loc::root_indexed("functions", i, f.name());
            self.check_function(f, &merged, &mut Scope::new(), &floc);
        }
        self.opsets = model_opsets;
    }

    /// Checks `f` in a level of its own pushed on `scope` (empty for a model's
    /// function; holding the names of the enclosing scope for a function checked on its
    /// own), popped when done.
    fn check_function<'m>(
        &mut self,
        f: &'m FunctionProto<'m>,
        model_opsets: &Opsets,
        scope: &mut Scope<'m>,
        loc: &Loc<'_>,
    ) {
        if f.name().is_empty() {
            self.report(loc, "the function name is empty");
        }
        if self.ir_version >= 8 && f.domain.is_none() {
            self.report(
                loc,
                "the function domain is missing (required from IR version 8)",
            );
        }
        let mut opsets = Opsets::new();
        for (i, o) in f.opset_import.iter().enumerate() {
            self.checked_opset(o.version(), &loc.indexed("opset_import", i, o.domain()));
            opsets.insert(o.domain(), o.version());
        }
        scope.push(f.input.len() + f.node.len(), &f.node);
        for input in &f.input {
            if scope.this_graph_has(input) {
                self.report(
                    loc,
                    format_args!("input '{input}' is listed more than once"),
                );
            }
            scope.add(input);
        }
        let mut outputs = HashSet::new();
        for output in &f.output {
            if !outputs.insert(output.as_str()) {
                self.report(
                    loc,
                    format_args!("output '{output}' is listed more than once"),
                );
            }
        }
        let mut attributes = HashSet::new();
        for a in &f.attribute {
            if !attributes.insert(a.as_str()) {
                self.report(
                    loc,
                    format_args!("attribute '{a}' is listed more than once"),
                );
            }
        }
        let outer = std::mem::replace(&mut self.opsets, opsets);
        for (i, node) in f.node.iter().enumerate() {
            let nloc = loc.indexed("node", i, node.name());
            scope.at_node(i);
            for input in &node.input {
                if input.is_empty() || scope.this_graph_has(input) {
                    continue;
                }
                match scope.produced_later(input) {
                    Some(later) => self.report_produced_later(&nloc, loc, input, &later, scope),
                    None => self.report(
                        &nloc,
                        format_args!("input '{input}' is neither a function input nor an output of an earlier node"),
                    ),
                }
            }
            if !self.options.skip_opset_compatibility_check {
                self.check_opset_compatibility(node, model_opsets, &nloc);
            }
            self.check_node(node, true, scope, &nloc);
            self.add_outputs(node, scope, &nloc);
        }
        scope.pop();
        self.opsets = outer;
    }

    /// A function node's operator must resolve to the same schema under the
    /// function's opset import as under the model's.
    fn check_opset_compatibility(
        &mut self,
        node: &NodeProto<'_>,
        model_opsets: &Opsets,
        loc: &Loc<'_>,
    ) {
        let domain = node.domain();
        let Some(fv) = self.opsets.get(domain) else {
            self.report(
                loc,
                format_args!("the function imports no opset for domain '{domain}'"),
            );
            return;
        };
        let Some(mv) = model_opsets.get(domain) else {
            return;
        };
        if fv == mv {
            return;
        }
        let by_model = schema::lookup_exact_domain(domain, node.op_type(), mv);
        let by_function = schema::lookup_exact_domain(domain, node.op_type(), fv);
        let compatible = match (by_model, by_function) {
            (None, None) => true,
            (Some(m), Some(f)) => m.since_version == f.since_version,
            _ => false,
        };
        if !compatible {
            self.report(
                loc,
                format_args!(
                    "{} resolves differently under the function's import of '{domain}' (version {fv}) and the model's (version {mv})",
                    node.op_type()
                ),
            );
        }
    }

    /// Model-local functions must not call each other in a cycle (at any subgraph
    /// depth), nor share an identifier.
    fn check_call_cycles(&mut self, model: &ModelProto<'_>) {
        let loc = Loc::root("model");
        for (function, message) in function_call_problems(model) {
            match function {
                Some(i) => self.report(
                    &loc.indexed("functions", i, model.functions[i].name()),
                    message,
                ),
                None => self.report(&loc, message),
            }
        }
    }
}

/// The problems of `model`'s local functions as callers, in `onnx`'s words: too many
/// functions, two with one identifier (with the second's index), a call chain too deep
/// or a cycle. `onnx` stops at the first; so do shape inference and the inliner.
pub(crate) fn function_call_problems(model: &ModelProto<'_>) -> Vec<(Option<usize>, String)> {
    let mut problems = Vec::new();
    if model.functions.len() > MAX_LOCAL_FUNCTIONS {
        problems.push((
            None,
            format!(
                "Model contains {} local functions, exceeding the limit of {MAX_LOCAL_FUNCTIONS}. The model may be malformed or malicious.",
                model.functions.len()
            ),
        ));
        return problems;
    }
    // A function's identifier as onnx writes it: `domain::name[::overload]`.
    let id = |domain: &str, name: &str, overload: &str| {
        let domain = if domain == "ai.onnx" { "" } else { domain };
        match overload {
            "" => format!("{domain}::{name}"),
            _ => format!("{domain}::{name}::{overload}"),
        }
    };
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (i, f) in model.functions.iter().enumerate() {
        let key = id(f.domain(), f.name(), f.overload());
        if by_id.insert(key.clone(), i).is_some() {
            problems.push((
                Some(i),
                format!("Model contains multiple local functions with the same implementation id '{key}'."),
            ));
        }
    }
    // Callees of each function, through subgraphs too (walked with an explicit
    // stack, as deep as the graphs are nested).
    let callees: Vec<Vec<usize>> = model
        .functions
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            let mut stack: Vec<&NodeProto<'_>> = f.node.iter().collect();
            while let Some(n) = stack.pop() {
                if let Some(&j) = by_id.get(&id(n.domain(), n.op_type(), n.overload())) {
                    out.push(j);
                }
                for a in &n.attribute {
                    if let Some(g) = &a.g {
                        stack.extend(g.node.iter());
                    }
                    for g in &a.graphs {
                        stack.extend(g.node.iter());
                    }
                }
            }
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    // Iterative depth-first search: 0 unvisited, 1 on the path, 2 done.
    let mut state = vec![0u8; callees.len()];
    for root in 0..callees.len() {
        if state[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&(f, next)) = path.last() {
            if path.len() > MAX_FUNCTION_CALL_DEPTH {
                problems.push((
                    None,
                    format!("Function call chain depth exceeds limit ({MAX_FUNCTION_CALL_DEPTH}). The model may be malformed or malicious."),
                ));
                return problems;
            }
            let Some(&callee) = callees[f].get(next) else {
                state[f] = 2;
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match state[callee] {
                0 => {
                    state[callee] = 1;
                    path.push((callee, 0));
                }
                1 => {
                    let names: Vec<String> = path
                        .iter()
                        .skip_while(|(g, _)| *g != callee)
                        .map(|(g, _)| *g)
                        .chain([callee])
                        .map(|g| {
                            let f = &model.functions[g];
                            id(f.domain(), f.name(), f.overload())
                        })
                        .collect();
                    problems.push((
                        None,
                        format!(
                            "Cycle detected in model-local function references: {}. Model-local functions must not be recursive.",
                            names.join(" -> ")
                        ),
                    ));
                    return problems;
                }
                _ => {}
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::*;
    use crate::ProtoEnum;

    /// `x -> Op -> y` with `node` as the one node, in a custom domain (no schema).
    fn model_with(node: NodeProto<'static>) -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        g.input
            .push(ValueInfoProto::tensor("x", DataType::Float, [1]));
        g.output
            .push(ValueInfoProto::tensor("y", DataType::Float, [1]));
        g.node.push(node);
        ModelProto::new(
            g,
            vec![
                OperatorSetIdProto::new("", 21),
                OperatorSetIdProto::new("com.example", 1),
            ],
        )
    }

    fn custom_node(attributes: impl IntoIterator<Item = String>) -> NodeProto<'static> {
        let mut node = NodeProto::new("Op", ["x"], ["y"]);
        node.domain = Some("com.example".into());
        for name in attributes {
            node.attribute.push(AttributeProto::int(name, 1));
        }
        node
    }

    #[test]
    fn repeated_attribute_names_are_found_in_steps_linear_in_their_count() {
        for n in [5usize, 16, 17, 20_000] {
            // Every name once, then the first three again.
            let names = (0..n).chain(0..3).map(|i| format!("a{i}"));
            let model = model_with(custom_node(names));
            steps::take();
            let problems = check_model(&model).unwrap_err();
            let steps = steps::take();
            assert!(steps <= 120 + 2 * n as u64, "{n} attributes: {steps} steps");
            let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
            let expected: Vec<String> = (0..3)
                .map(|i| {
                    format!("graph.node[0].attribute a{i}: the attribute appears more than once")
                })
                .collect();
            assert_eq!(text, expected, "{n} attributes");
        }
    }

    #[test]
    fn sparse_indices_are_checked_in_steps_linear_in_the_rank_and_count() {
        // Dense shape [n, 1, 1, ..., 1] (rank n) and n linear indices 0 .. n: valid.
        let n = 20_000usize;
        let mut dims = vec![1i64; n];
        dims[0] = n as i64;
        let values = TensorProto::from_raw("sp", DataType::Float, vec![n as i64], vec![0u8; 4 * n]);
        let indices = TensorProto {
            name: Some("sp_idx".into()),
            data_type: Some(DataType::Int64.to_i32()),
            dims: vec![n as i64],
            int64_data: (0..n as i64).collect(),
            ..TensorProto::default()
        };
        let mut model = model_with(custom_node([]));
        let sparse = SparseTensorProto {
            values: Some(values),
            indices: Some(indices),
            dims,
            ..SparseTensorProto::default()
        };
        model
            .graph
            .as_mut()
            .unwrap()
            .sparse_initializer
            .push(sparse);
        steps::take();
        check_model(&model).unwrap();
        let steps = steps::take();
        assert!(steps <= 4 * n as u64, "{steps} steps");

        // The last index out of range is still found.
        let g = model.graph.as_mut().unwrap();
        g.sparse_initializer[0].indices.as_mut().unwrap().int64_data[n - 1] = n as i64;
        let problems = check_model(&model).unwrap_err();
        assert_eq!(
            problems[0].to_string(),
            format!(
                r#"graph.sparse_initializer[0] "sp".indices: index {n} at position {} is out of range [0, {n})"#,
                n - 1
            )
        );
    }

    fn with_metadata_key_repeated(model: &mut ModelProto<'static>, key: &str, times: usize) {
        for _ in 0..times {
            model
                .metadata_props
                .push(StringStringEntryProto::new(key.to_string(), ""));
        }
    }

    #[test]
    fn past_the_limit_problems_of_a_kind_are_counted_not_kept() {
        let mut model = model_with(custom_node([]));
        with_metadata_key_repeated(&mut model, "k", 1000);
        with_metadata_key_repeated(&mut model, "j", 3);
        model.graph.as_mut().unwrap().name = Some("".into());
        let problems = check_model(&model).unwrap_err();
        // One kind, a repeated key: 1001 found, 100 kept. Another: the graph name.
        assert_eq!(problems.len(), 101);
        assert_eq!(problems.total(), 1002);
        assert_eq!(
            problems[0].to_string(),
            r#"model.metadata_props[1] "k": the key appears more than once"#
        );
        let last = &problems[99];
        assert_eq!(last.path, r#"model.metadata_props[100] "k""#);
        assert_eq!(last.more, 901);
        assert_eq!(
            last.more_of_this_kind().as_deref(),
            Some("... and 901 more of this kind")
        );
        assert_eq!(problems[100].message, "the graph name is empty");
        assert_eq!(problems[100].more, 0);
        let text = problems.to_string();
        assert!(text.starts_with("1,002 problem(s) found\n"), "{text}");
        assert!(
            text.ends_with(
                "model.metadata_props[100] \"k\": the key appears more than once\n\
                 ... and 901 more of this kind\n\
                 graph: the graph name is empty"
            ),
            "{text}"
        );

        let one = CheckOptions::default().max_problems_per_kind(0);
        let problems = check_model_with(&model, &one).unwrap_err();
        assert_eq!(problems.len(), 2);
        assert_eq!(problems[0].more, 1000);
        assert_eq!(problems.total(), 1002);

        let all = CheckOptions::default().max_problems_per_kind(usize::MAX);
        let problems = check_model_with(&model, &all).unwrap_err();
        assert_eq!(problems.len(), 1002);
        assert!(problems.iter().all(|p| p.more == 0));
        assert_eq!(problems[1000].path, r#"model.metadata_props[1002] "j""#);
    }

    #[test]
    fn problems_past_the_limit_are_not_formatted() {
        struct Counted<'a>(&'a std::cell::Cell<usize>);
        impl fmt::Display for Counted<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.set(self.0.get() + 1);
                f.write_str("counted")
            }
        }
        let options = CheckOptions::default();
        let mut c = Checker {
            problems: Vec::new(),
            kinds: HashMap::new(),
            options: &options,
            ir_version: 0,
            opsets: Opsets::new(),
            depth: 0,
        };
        let formatted = std::cell::Cell::new(0);
        for _ in 0..1000 {
            c.report(&Loc::root("model"), Counted(&formatted));
        }
        assert_eq!(formatted.get(), DEFAULT_MAX_PROBLEMS_PER_KIND);
        assert_eq!(c.problems.len(), DEFAULT_MAX_PROBLEMS_PER_KIND);
    }

    #[test]
    fn long_names_are_cut_in_paths_and_messages() {
        let long = "é".repeat(1 << 20);
        let mut node = custom_node([]);
        node.name = Some(long.clone().into());
        node.input[0] = long.clone().into();
        let problems = check_model(&model_with(node)).unwrap_err();
        let p = &problems[0];
        assert!(
            p.path.len() <= MAX_PROBLEM_TEXT + '…'.len_utf8(),
            "{}",
            p.path.len()
        );
        assert!(p.path.starts_with(r#"graph.node[0] "éé"#) && p.path.ends_with("é…"));
        assert!(p.message.len() <= MAX_PROBLEM_TEXT + '…'.len_utf8());
        assert!(p.message.starts_with("input 'éé") && p.message.ends_with('…'));
        assert_eq!(capped("short"), "short");
        assert_eq!(capped("x".repeat(MAX_PROBLEM_TEXT)).len(), MAX_PROBLEM_TEXT);
    }

    /// `x -> Relu r1 -> Relu r2 -> ... -> y` (`n` nodes), listed last first.
    fn reversed_chain(n: usize) -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        g.input
            .push(ValueInfoProto::tensor("x", DataType::Float, [1]));
        g.output
            .push(ValueInfoProto::tensor("y", DataType::Float, [1]));
        for i in (0..n).rev() {
            let input = if i == 0 {
                "x".to_string()
            } else {
                format!("v{i}")
            };
            let output = if i + 1 == n {
                "y".to_string()
            } else {
                format!("v{}", i + 1)
            };
            g.node
                .push(NodeProto::new("Relu", [input], [output]).with_name(format!("r{i}")));
        }
        ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
    }

    fn produced_later(p: &Problem) -> Option<&ProducedLater> {
        match &p.detail {
            Some(Detail::ProducedLater(later)) => Some(later),
            None => None,
        }
    }

    #[test]
    fn an_input_produced_later_names_its_producer() {
        let problems = check_model(&reversed_chain(3)).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert_eq!(
            problems[0].to_string(),
            r#"graph.node[0] "r2": input 'v2' is not defined before the node: node[1] "r1" produces it later (the nodes are not in topological order)"#
        );
        let later = produced_later(&problems[0]).unwrap();
        assert_eq!(later.graph, "graph");
        assert_eq!(later.value, "v2");
        assert_eq!((later.user.index, later.user.name.as_str()), (0, "r2"));
        assert_eq!(
            (later.producer.index, later.producer.name.as_str()),
            (1, "r1")
        );
        assert!(later.first_for_user && !later.in_subgraph);
        assert_eq!(produced_later(&problems[1]).unwrap().producer.index, 2);
    }

    #[test]
    fn an_input_produced_nowhere_has_no_detail() {
        let mut model = reversed_chain(2);
        let g = model.graph.as_mut().unwrap();
        g.node.reverse();
        g.node[1].input.push("nowhere".into());
        g.node[1].op_type = Some("Add".into());
        // A node using its own output is not out of order either: no order fixes it.
        g.node[0].input[0] = "v1".into();
        let problems = check_model(&model).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert!(problems.iter().all(|p| p.detail.is_none()), "{problems}");
        assert_eq!(
            problems[1].message,
            "input 'nowhere' is not defined before the node (not a graph input, initializer, or output of an earlier node)"
        );
    }

    #[test]
    fn the_first_input_produced_later_of_each_node_is_a_kind_of_its_own() {
        // 300 nodes out of order, each with two inputs produced later.
        let mut model = reversed_chain(301);
        for n in &mut model.graph.as_mut().unwrap().node {
            if n.input[0] != "x" {
                let again = n.input[0].clone();
                n.input.push(again);
                n.op_type = Some("Add".into());
            }
        }
        let problems = check_model(&model).unwrap_err();
        assert_eq!(problems.total(), 600);
        let nodes: u64 = problems
            .iter()
            .filter(|p| produced_later(p).is_some_and(|l| l.first_for_user))
            .map(|p| 1 + p.more)
            .sum();
        assert_eq!(nodes, 300);
    }

    #[test]
    fn a_subgraph_using_a_value_produced_later_names_the_enclosing_graph() {
        // `If` uses `t` in its branches; `t` is produced after it.
        let branch = |name: &str| {
            let mut b = GraphProto::named(name.to_string());
            b.node
                .push(NodeProto::new("Identity", ["t"], [format!("{name}_out")]));
            b.output.push(ValueInfoProto::tensor(
                format!("{name}_out"),
                DataType::Float,
                [1],
            ));
            b
        };
        let mut g = GraphProto::named("g");
        g.input
            .push(ValueInfoProto::tensor("x", DataType::Float, [1]));
        g.input
            .push(ValueInfoProto::tensor("c", DataType::Bool, [1]));
        g.output
            .push(ValueInfoProto::tensor("y", DataType::Float, [1]));
        g.node.push(
            NodeProto::new("If", ["c"], ["y"])
                .with_name("if")
                .with_attribute(AttributeProto::graph("then_branch", branch("then")))
                .with_attribute(AttributeProto::graph("else_branch", branch("else"))),
        );
        g.node
            .push(NodeProto::new("Relu", ["x"], ["t"]).with_name("relu"));
        let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
        let problems = check_model(&model).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert_eq!(
            problems[0].to_string(),
            r#"graph.node[0] "if".attribute then_branch.g.node[0]: input 't' is not defined before the node: in an enclosing graph, node[1] "relu" produces it after node[0] "if" (the nodes are not in topological order)"#
        );
        // Both branches use `t`: `if` is one node out of order.
        let firsts: Vec<bool> = problems
            .iter()
            .map(|p| produced_later(p).unwrap().first_for_user)
            .collect();
        assert_eq!(firsts, [true, false]);
        for p in problems.iter() {
            let later = produced_later(p).unwrap();
            assert_eq!(later.graph, "graph");
            assert_eq!(later.user.name, "if");
            assert_eq!(later.producer.name, "relu");
            assert!(later.in_subgraph);
        }
    }

    #[test]
    fn a_function_node_using_a_value_produced_later_names_its_producer() {
        let mut f = FunctionProto {
            name: Some("F".into()),
            domain: Some("local".into()),
            ..FunctionProto::default()
        };
        f.input.push("a".into());
        f.output.push("c".into());
        f.opset_import.push(OperatorSetIdProto::new("", 21));
        f.node.push(NodeProto::new("Relu", ["b"], ["c"]));
        f.node.push(NodeProto::new("Relu", ["a"], ["b"]));
        let mut model = reversed_chain(1);
        model.functions.push(f);
        let problems = check_model(&model).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems}");
        let later = produced_later(&problems[0]).unwrap();
        assert_eq!(later.graph, r#"functions[0] "F""#);
        assert_eq!((later.user.index, later.producer.index), (0, 1));
    }

    #[test]
    fn a_structure_only_model_gets_the_verdict_of_the_loaded_one() {
        use crate::io::{self, ParseOptions, SerializeOptions};
        let dir = std::env::temp_dir().join(format!("checker-lazy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut g = GraphProto::named("g");
        // Large enough to stay on disk: one short raw_data, one FLOAT6 tensor whose
        // last byte has padding bits set, one valid tensor.
        g.initializer.push(TensorProto::from_raw(
            "short",
            DataType::Float,
            [1024],
            vec![0u8; 2048],
        ));
        let mut f6 = vec![0u8; 1500];
        *f6.last_mut().unwrap() = 0xF0;
        g.initializer.push(TensorProto::from_raw(
            "f6",
            DataType::Float6E2M3,
            [1999],
            f6,
        ));
        g.initializer.push(TensorProto::from_raw(
            "ok",
            DataType::Float,
            [512],
            vec![0u8; 2048],
        ));
        let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
        let path = dir.join("m.onnx");
        io::save(&model, &path, &SerializeOptions::default()).unwrap();
        let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
        assert!(lazy
            .graph
            .as_ref()
            .unwrap()
            .initializer
            .iter()
            .all(|t| t.lazy_data.is_some()));
        let want = check_model(&model).unwrap_err().to_string();
        assert!(want.contains("raw_data holds 2048 bytes"), "{want}");
        assert!(want.contains("padding bits"), "{want}");
        assert_eq!(check_model(&lazy).unwrap_err().to_string(), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
