//! Dependencies between modules point one way: the module import graph of `onnx-light`
//! and `onnx-light-derive` has no cycles.
//!
//! The graph is read from the source: every path written in a `.rs` file under the
//! crate's `src/` (`use` trees and paths in code, starting at `crate::`, `super::`,
//! `self::`, a child module, or a name the module imported) is resolved through the
//! modules and their `use` re-exports to the module that defines the item. The crate
//! root is `crate`. Not edges: a module's `pub use` of its own descendants (its table of
//! contents), `#[cfg(test)]` items, doc comments, and the code derives generate.
//!
//! Cycles are checked at three levels: between modules at any depth
//! (`io::external::load` <-> `io::external::overlap`), between nodes (a module directly
//! under `src/` or one of its direct submodules, into which deeper modules fold:
//! `io::external::save` is `io::external`), and between the top-level modules the nodes
//! belong to (`codec::message` -> `message` -> `codec::context` is a cycle between
//! `codec` and `message`).
//!
//! Run with `cargo test -p onnx-light-tests --test architecture -- --nocapture` to see
//! the graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// Module path, from the crate root (empty for the root itself).
type ModPath = Vec<String>;

/// Where an edge was seen: the first place that makes one node depend on another.
type Evidence = String;

/// The cycles known in `onnx-light`, each the set of modules in one strongly connected
/// component, per level. Shrink these lists as the cycles are removed; a cycle that is
/// not listed fails the test, and so does a listed one that no longer exists.
#[test]
fn derive_module_graph_has_no_cycles() {
    let graph = Graph::of_crate(
        "onnx-light-derive",
        &workspace().join("onnx-light-derive/src"),
    );
    println!("{}", graph.render());
    graph.assert_cycles(&[], &[], &[]);
}

#[test]
fn runtime_module_graph_has_no_cycles() {
    let graph = Graph::of_crate("onnx-light", &workspace().join("onnx-light/src"));
    println!("{}", graph.render());
    graph.assert_cycles(&[], &[], &[]);
}

#[test]
fn a_cycle_through_a_re_export_is_found() {
    let dir = scratch_crate(
        "re-export",
        &[
            ("lib.rs", "mod a; mod b; pub use a::A;"),
            ("a/mod.rs", "mod inner; pub use inner::A;"),
            ("a/inner.rs", "pub struct A(crate::b::B);"),
            (
                "b.rs",
                "pub struct B; fn f(_: super::A) {}\n#[cfg(test)] mod tests { use crate::a::A; }",
            ),
        ],
    );
    let graph = Graph::of_crate("fixture", &dir);
    let cycles = graph.cycles(Level::Node);
    assert_eq!(cycles, vec![set(&["a::inner", "b"])], "{}", graph.render());
    assert_eq!(graph.cycles(Level::Top), vec![set(&["a", "b"])]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cycle_between_sibling_submodules_is_found() {
    // Both modules fold into the node `a::b`: only the module level sees the cycle.
    let dir = scratch_crate(
        "siblings",
        &[
            ("lib.rs", "mod a;"),
            ("a/mod.rs", "mod b;"),
            ("a/b/mod.rs", "mod load; mod overlap;"),
            (
                "a/b/load.rs",
                "pub(crate) fn load() { super::overlap::check(); }",
            ),
            (
                "a/b/overlap.rs",
                "use super::load::load;\npub(crate) fn check() {}\nfn f() { load(); }",
            ),
        ],
    );
    let graph = Graph::of_crate("fixture", &dir);
    assert!(graph.cycles(Level::Node).is_empty(), "{}", graph.render());
    assert_eq!(
        graph.cycles(Level::Module),
        vec![set(&["a::b::load", "a::b::overlap"])],
        "{}",
        graph.render()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_way_imports_have_no_cycle() {
    let dir = scratch_crate(
        "one-way",
        &[
            ("lib.rs", "mod low; mod high; pub use high::run;"),
            ("low.rs", "pub fn put() {}"),
            (
                "high/mod.rs",
                "mod run; pub use run::run; pub(crate) fn helper() {}",
            ),
            (
                "high/run.rs",
                "use crate::low; pub fn run() { low::put(); super::helper(); }",
            ),
        ],
    );
    let graph = Graph::of_crate("fixture", &dir);
    assert!(graph.cycles(Level::Node).is_empty(), "{}", graph.render());
    assert!(graph.cycles(Level::Module).is_empty(), "{}", graph.render());
    assert!(graph.edges[&"high::run".to_string()].contains_key("low"));
    assert!(graph.edges[&"high::run".to_string()].contains_key("high"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn scratch_crate(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "onnx-light-architecture-{}-{name}",
        std::process::id()
    ));
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[derive(Clone, Copy, Debug)]
enum Level {
    /// Every module, at any depth.
    Module,
    /// Modules directly under `src/` and their direct submodules.
    Node,
    /// Modules directly under `src/`.
    Top,
}

/// A path written in a module, before resolution.
struct Written {
    module: ModPath,
    segments: Vec<String>,
    /// `Some(name)` for a `use` item: the name it brings into scope.
    imports: Option<String>,
    public: bool,
    at: Evidence,
}

struct Graph {
    name: String,
    nodes: BTreeSet<String>,
    /// from -> to -> where, between modules at any depth.
    edges: BTreeMap<String, BTreeMap<String, Evidence>>,
}

impl Graph {
    fn of_crate(name: &str, src: &Path) -> Graph {
        let mut modules: BTreeSet<ModPath> = BTreeSet::new();
        let mut written = Vec::new();
        for file in rust_files(src) {
            let module = module_of(src, &file);
            modules.insert(module.clone());
            let text = std::fs::read_to_string(&file).unwrap();
            let tokens: TokenStream = text
                .parse()
                .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
            let shown = file.strip_prefix(src).unwrap().display().to_string();
            let mut reader = Reader {
                file: &shown,
                crate_name: name.replace('-', "_"),
                modules: &mut modules,
                written: &mut written,
            };
            reader.items(tokens, &module);
        }
        let resolver = Resolver::new(&modules, &written);
        let mut graph = Graph {
            name: name.to_string(),
            nodes: modules.iter().map(|m| node(m, Level::Module)).collect(),
            edges: BTreeMap::new(),
        };
        for w in &written {
            let Some(absolute) = resolver.absolute(&w.module, &w.segments) else {
                continue;
            };
            // A module's `pub use` of its own descendants is its table of contents.
            if w.imports.is_some() && w.public && absolute.starts_with(&w.module) {
                continue;
            }
            let Some(target) = resolver.defining_module(&absolute, 0) else {
                continue;
            };
            let (from, to) = (node(&w.module, Level::Module), node(&target, Level::Module));
            if from != to {
                graph
                    .edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| w.at.clone());
            }
        }
        graph
    }

    fn edges_at(&self, level: Level) -> BTreeMap<String, BTreeMap<String, Evidence>> {
        let mut out: BTreeMap<String, BTreeMap<String, Evidence>> = BTreeMap::new();
        for n in &self.nodes {
            out.entry(fold(n, level)).or_default();
        }
        for (from, tos) in &self.edges {
            for (to, at) in tos {
                let (f, t) = (fold(from, level), fold(to, level));
                if f != t {
                    out.entry(f)
                        .or_default()
                        .entry(t)
                        .or_insert_with(|| at.clone());
                }
            }
        }
        out
    }

    /// The strongly connected components with more than one module (Tarjan).
    fn cycles(&self, level: Level) -> Vec<BTreeSet<String>> {
        let edges = self.edges_at(level);
        let names: Vec<&String> = edges.keys().collect();
        let index_of: BTreeMap<&String, usize> =
            names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let succ: Vec<Vec<usize>> = names
            .iter()
            .map(|n| edges[*n].keys().map(|t| index_of[t]).collect())
            .collect();
        let mut t = Tarjan {
            succ: &succ,
            index: vec![None; names.len()],
            low: vec![0; names.len()],
            on_stack: vec![false; names.len()],
            stack: Vec::new(),
            next: 0,
            components: Vec::new(),
        };
        for v in 0..names.len() {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        let mut out: Vec<BTreeSet<String>> = t
            .components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| c.into_iter().map(|i| names[i].clone()).collect())
            .collect();
        out.sort();
        out
    }

    /// One concrete cycle through a component, with the place each edge is written.
    fn explain(&self, level: Level, component: &BTreeSet<String>) -> String {
        let edges = self.edges_at(level);
        let start = component.iter().next().unwrap().clone();
        // Breadth-first from `start` back to itself inside the component.
        let mut prev: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        let mut closing = None;
        'search: while let Some(n) = queue.pop_front() {
            for to in edges[&n].keys().filter(|t| component.contains(*t)) {
                if *to == start {
                    closing = Some(n.clone());
                    break 'search;
                }
                if !prev.contains_key(to) {
                    prev.insert(to.clone(), n.clone());
                    queue.push_back(to.clone());
                }
            }
        }
        let mut path = vec![start.clone()];
        let mut n = closing.unwrap();
        while n != start {
            path.push(n.clone());
            n = prev[&n].clone();
        }
        path[1..].reverse();
        path.push(start);
        let mut out = String::new();
        for pair in path.windows(2) {
            let _ = writeln!(
                out,
                "      {} -> {}   ({})",
                pair[0], pair[1], edges[&pair[0]][&pair[1]]
            );
        }
        out
    }

    fn assert_cycles(
        &self,
        known_modules: &[&[&str]],
        known_nodes: &[&[&str]],
        known_top: &[&[&str]],
    ) {
        let mut problems = String::new();
        for (level, known) in [
            (Level::Module, known_modules),
            (Level::Node, known_nodes),
            (Level::Top, known_top),
        ] {
            let found = self.cycles(level);
            let known: Vec<BTreeSet<String>> = known.iter().map(|c| set(c)).collect();
            for c in found.iter().filter(|c| !known.contains(c)) {
                let _ = writeln!(
                    problems,
                    "  new cycle between {level:?} modules {c:?}:\n{}",
                    self.explain(level, c)
                );
            }
            for c in known.iter().filter(|c| !found.contains(c)) {
                let _ = writeln!(
                    problems,
                    "  the known cycle between {level:?} modules {c:?} is gone: remove it from the allow-list in tests/tests/architecture.rs"
                );
            }
        }
        assert!(
            problems.is_empty(),
            "module graph of {} (dependencies must point one way):\n{problems}",
            self.name
        );
    }

    /// The graph as text: the top-level modules in dependency order (each depends only
    /// on modules listed before it, unless a cycle is marked), then every node's edges.
    fn render(&self) -> String {
        let mut out = String::new();
        for level in [Level::Top, Level::Node, Level::Module] {
            let edges = self.edges_at(level);
            let title = match level {
                Level::Top => "top-level modules",
                Level::Node => "modules and their direct submodules",
                Level::Module => "every module",
            };
            let _ = writeln!(out, "{} — {title}, in dependency order:", self.name);
            for n in layered(&edges) {
                let deps: Vec<&str> = edges[&n].keys().map(String::as_str).collect();
                if deps.is_empty() {
                    let _ = writeln!(out, "  {n}");
                } else {
                    let _ = writeln!(out, "  {n} -> {}", deps.join(", "));
                }
            }
            let cycles = self.cycles(level);
            if !cycles.is_empty() {
                let _ = writeln!(out, "  cycles: {cycles:?}");
            }
        }
        out
    }
}

/// Nodes ordered so that each comes after what it depends on (ties by name; members of
/// a cycle in name order once nothing else can go).
fn layered(edges: &BTreeMap<String, BTreeMap<String, Evidence>>) -> Vec<String> {
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while placed.len() < edges.len() {
        let ready: Vec<String> = edges
            .iter()
            .filter(|(n, deps)| {
                !placed.contains(*n) && deps.keys().all(|d| placed.contains(d) || *d == **n)
            })
            .map(|(n, _)| n.clone())
            .collect();
        let next = if ready.is_empty() {
            // A cycle: place its first unplaced member and go on.
            vec![edges.keys().find(|n| !placed.contains(*n)).unwrap().clone()]
        } else {
            ready
        };
        for n in next {
            placed.insert(n.clone());
            out.push(n);
        }
    }
    out
}

struct Tarjan<'a> {
    succ: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.succ[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// How many leading segments of a module path name its node at `level`.
fn depth(level: Level) -> usize {
    match level {
        Level::Module => usize::MAX,
        Level::Node => 2,
        Level::Top => 1,
    }
}

fn node(module: &[String], level: Level) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module[..module.len().min(depth(level))].join("::")
    }
}

/// A module's name (as in `Graph::nodes`) folded into its node at `level`.
fn fold(module: &str, level: Level) -> String {
    module
        .split("::")
        .take(depth(level))
        .collect::<Vec<_>>()
        .join("::")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `lib.rs` is the root, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Collects the paths written in one file.
struct Reader<'a> {
    file: &'a str,
    crate_name: String,
    modules: &'a mut BTreeSet<ModPath>,
    written: &'a mut Vec<Written>,
}

impl Reader<'_> {
    fn items(&mut self, tokens: TokenStream, module: &ModPath) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        let mut public = false;
        while i < tts.len() {
            match &tts[i] {
                // `#[cfg(test)]`: skip the item it annotates.
                TokenTree::Punct(p) if p.as_char() == '#' => {
                    if let Some(TokenTree::Group(g)) = tts.get(i + 1) {
                        if g.delimiter() == Delimiter::Bracket && is_cfg_test(&g.stream()) {
                            i = skip_item(&tts, i + 2);
                            continue;
                        }
                    }
                    i += 1;
                }
                TokenTree::Ident(id) if id == "pub" => {
                    public = true;
                    i += 1;
                    // `pub(crate)`, `pub(super)`: still a re-export.
                    if matches!(tts.get(i), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
                    {
                        i += 1;
                    }
                    continue;
                }
                TokenTree::Ident(id) if id == "use" => {
                    let end = (i + 1..tts.len())
                        .find(|&j| is_punct(&tts[j], ';'))
                        .unwrap_or(tts.len());
                    let line = line_of(&tts[i]);
                    let mut found = Vec::new();
                    use_tree(&tts[i + 1..end], &mut Vec::new(), &mut found);
                    for (segments, name) in found {
                        self.written.push(Written {
                            module: module.clone(),
                            segments,
                            imports: Some(name),
                            public,
                            at: format!("{}:{line}", self.file),
                        });
                    }
                    i = end + 1;
                }
                // An inline module: its own scope.
                TokenTree::Ident(id) if id == "mod" => {
                    if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) =
                        (tts.get(i + 1), tts.get(i + 2))
                    {
                        if g.delimiter() == Delimiter::Brace {
                            let mut inner = module.clone();
                            inner.push(name.to_string());
                            self.modules.insert(inner.clone());
                            self.items(g.stream(), &inner);
                            i += 3;
                            continue;
                        }
                    }
                    i += 1;
                }
                TokenTree::Group(g) => {
                    self.items(g.stream(), module);
                    i += 1;
                }
                TokenTree::Ident(_) if !continues_path(&tts, i) => {
                    let (mut segments, end) = path_at(&tts, i);
                    if segments.len() > 1 {
                        // `::onnx_light::...` inside `onnx-light` (`extern crate self`).
                        if segments[0] == self.crate_name {
                            segments[0] = "crate".to_string();
                        }
                        self.written.push(Written {
                            module: module.clone(),
                            segments,
                            imports: None,
                            public: false,
                            at: format!("{}:{}", self.file, line_of(&tts[i])),
                        });
                    }
                    i = end;
                }
                _ => i += 1,
            }
            public = false;
        }
    }
}

fn line_of(tt: &TokenTree) -> usize {
    tt.span().start().line
}

fn is_punct(tt: &TokenTree, c: char) -> bool {
    matches!(tt, TokenTree::Punct(p) if p.as_char() == c)
}

/// `::` starting at `i`.
fn is_path_separator(tts: &[TokenTree], i: usize) -> bool {
    matches!((tts.get(i), tts.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

/// The identifier at `i` is a later segment of a path (`b` in `a::b`, `<T>::b`), not
/// the first one (`a` in `::a::b`).
fn continues_path(tts: &[TokenTree], i: usize) -> bool {
    i >= 3
        && is_path_separator(tts, i - 2)
        && (matches!(tts[i - 3], TokenTree::Ident(_)) || is_punct(&tts[i - 3], '>'))
}

/// The `a::b::c` path starting at `i` (generic arguments end it) and the index after it.
fn path_at(tts: &[TokenTree], mut i: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    while let Some(TokenTree::Ident(id)) = tts.get(i) {
        segments.push(id.to_string());
        if is_path_separator(tts, i + 1) {
            i += 3;
        } else {
            i += 1;
            break;
        }
    }
    (segments, i)
}

/// Expands a use tree into (path, name brought into scope) pairs.
fn use_tree(tts: &[TokenTree], prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let depth = prefix.len();
    let mut i = 0;
    // A leading `::` (extern crate path) adds nothing.
    if is_path_separator(tts, 0) {
        i = 2;
    }
    while i < tts.len() {
        match &tts[i] {
            TokenTree::Ident(id) => {
                prefix.push(id.to_string());
                i += 1;
                if is_path_separator(tts, i) {
                    i += 2;
                    continue;
                }
                // The end of one path: `as name`, or the last segment is the name.
                let mut name = prefix.last().unwrap().clone();
                if matches!(tts.get(i), Some(TokenTree::Ident(a)) if a == "as") {
                    if let Some(TokenTree::Ident(alias)) = tts.get(i + 1) {
                        name = alias.to_string();
                    }
                    i += 2;
                }
                let mut path = prefix.clone();
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                    if name == "self" {
                        name = path.last().cloned().unwrap_or_default();
                    }
                }
                out.push((path, name));
                prefix.truncate(depth);
            }
            TokenTree::Punct(p) if p.as_char() == '*' => {
                out.push((prefix.clone(), "*".to_string()));
                prefix.truncate(depth);
                i += 1;
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for part in inner.split(|t| is_punct(t, ',')) {
                    use_tree(part, prefix, out);
                }
                prefix.truncate(depth);
                i += 1;
            }
            _ => {
                prefix.truncate(depth);
                i += 1;
            }
        }
    }
    prefix.truncate(depth);
}

fn is_cfg_test(attr: &TokenStream) -> bool {
    let tts: Vec<TokenTree> = attr.clone().into_iter().collect();
    matches!(tts.as_slice(), [TokenTree::Ident(cfg), TokenTree::Group(g)]
        if cfg == "cfg" && g.stream().to_string() == "test")
}

/// The index after the item starting at `i`: after its `;` or its body.
fn skip_item(tts: &[TokenTree], mut i: usize) -> usize {
    while i < tts.len() {
        match &tts[i] {
            // Further attributes of the same item.
            TokenTree::Punct(p) if p.as_char() == '#' => i += 2,
            TokenTree::Punct(p) if p.as_char() == ';' => return i + 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// Resolves written paths to the modules that define what they name.
struct Resolver<'a> {
    modules: &'a BTreeSet<ModPath>,
    /// module -> name -> absolute path, from its `use` items; `None` for a name
    /// imported from another crate.
    imports: BTreeMap<ModPath, BTreeMap<String, Option<Vec<String>>>>,
}

impl<'a> Resolver<'a> {
    fn new(modules: &'a BTreeSet<ModPath>, written: &[Written]) -> Self {
        let mut r = Resolver {
            modules,
            imports: BTreeMap::new(),
        };
        for w in written {
            let Some(name) = &w.imports else { continue };
            if name == "*" {
                continue;
            }
            let abs = r.absolute_start(&w.module, &w.segments);
            r.imports
                .entry(w.module.clone())
                .or_default()
                .insert(name.clone(), abs);
        }
        r
    }

    /// `crate::`, `self::`, `super::` or a child module: an absolute path.
    fn absolute_start(&self, module: &ModPath, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "self" => Some([module.as_slice(), &segments[1..]].concat()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let base = &module[..module.len().checked_sub(ups)?];
                Some([base, &segments[ups..]].concat())
            }
            _ => {
                let mut child = module.clone();
                child.push(first.clone());
                self.modules.contains(&child).then(|| {
                    let mut abs = module.clone();
                    abs.extend(segments.iter().cloned());
                    abs
                })
            }
        }
    }

    /// As `absolute_start`, or through a name the module imported (`use crate::wire;`
    /// then `wire::put_varint`).
    fn absolute(&self, module: &ModPath, segments: &[String]) -> Option<Vec<String>> {
        if let Some(abs) = self.absolute_start(module, segments) {
            return Some(abs);
        }
        let imported = self.imports.get(module)?.get(segments.first()?)?.as_ref()?;
        Some([imported.as_slice(), &segments[1..]].concat())
    }

    /// The module that defines what an absolute path names, through re-exports; `None`
    /// when that is another crate.
    fn defining_module(&self, path: &[String], depth: usize) -> Option<ModPath> {
        let mut base: ModPath = Vec::new();
        let mut i = 0;
        while i < path.len() {
            let mut next = base.clone();
            next.push(path[i].clone());
            if !self.modules.contains(&next) {
                break;
            }
            base = next;
            i += 1;
        }
        if i < path.len() && depth < 16 {
            if let Some(target) = self.imports.get(&base).and_then(|m| m.get(&path[i])) {
                let rest = [target.as_ref()?.as_slice(), &path[i + 1..]].concat();
                return self.defining_module(&rest, depth + 1);
            }
        }
        Some(base)
    }
}
