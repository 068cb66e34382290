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

mod expand;
mod merge;
mod prefix;

use std::collections::HashSet;

use crate::error::{Error, ErrorKind};
use crate::onnx::GraphProto;

pub use expand::{expand_out_dim, expand_out_dim_graph};
pub use merge::{merge_graphs, merge_models, MergeOptions};
pub use prefix::{add_prefix, add_prefix_graph, add_prefix_graph_with, NameMap, PrefixOptions};

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

#[cfg(test)]
mod tests;
