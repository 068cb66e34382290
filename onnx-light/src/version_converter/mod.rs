//! Converting a model between opset versions of the ONNX domain, as
//! `onnx.version_converter.convert_version` does it: the same adapters for the same
//! operator changes, the same refusals, and the same resulting model.
//!
//! The conversion walks one opset version at a time from the model's version of the
//! ONNX domain (`""` or `"ai.onnx"`) to the target. At each step, a node whose operator
//! has a schema change there (a schema `since` the next version going up, or `since`
//! the current one going down) goes through the adapter `onnx` registers for that step:
//! relabelled when the change is compatible, rewritten when an attribute became an input
//! (the `axes` of the reductions, `Squeeze` and `Unsqueeze`, `Split`'s `split`, `Clip`'s
//! bounds, ...) or the other way, refused when the node uses what the other version
//! lacks (an element type, an attribute value) or when no adapter exists. Nodes of other
//! domains are left as they are; the graphs of `If`, `Loop` and `Scan` are converted
//! with their node.
//!
//! As in `onnx`, the model's types are inferred first (`onnx_light::shape`), and the
//! result is the model as `onnx`'s graph IR writes it back: `value_info` holds the
//! types of node outputs in node order, local functions, training information, sparse
//! initializers, and the documentation of attributes and tensors are dropped, and the
//! values an adapter adds are named `_v_N`. Weights are moved, never read or copied,
//! except where an adapter needs a constant's values (an `axes` input going back to an
//! attribute); structure-only models convert as long as no such constant is lazy.
//!
//! ```
//! use onnx_light::onnx::*;
//! use onnx_light::version_converter::convert_version;
//!
//! let mut g = GraphProto::named("g");
//! g.input.push(ValueInfoProto::tensor("x", DataType::Float, [1, 3]));
//! g.node.push(NodeProto::new("Squeeze", ["x"], ["y"]).with_attribute(AttributeProto::ints("axes", [0])));
//! g.output.push(ValueInfoProto::tensor("y", DataType::Float, [3]));
//! let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 11)]);
//!
//! let converted = convert_version(&model, 13)?;
//! let g = converted.graph.as_ref().unwrap();
//! assert_eq!(g.node[0].op_type(), "Constant"); // the axes, now an input
//! assert_eq!(g.node[1].input.len(), 2);
//! assert_eq!(converted.opset_import[0].version(), 13);
//!
//! // What onnx cannot convert is refused, naming the operator and the versions.
//! let err = convert_version(&converted, 0).unwrap_err();
//! assert!(err.to_string().contains("invalid version"));
//! # Ok::<(), onnx_light::version_converter::VersionConvertError>(())
//! ```

mod adapters;
mod ir;
mod table;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::sync::OnceLock;

use crate::checker::schema;
use crate::onnx::{ModelProto, OperatorSetIdProto, StringStringEntryProto};
use crate::shape::{infer_shapes, InferOptions};

use adapters::{Adapter, Around};
use ir::{AttrValue, Graph};

/// Why a model could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionConvertError {
    /// The source or target version is outside the versions of the ONNX domain.
    #[error("invalid version {version} (must be between {min} and {max})")]
    InvalidVersion {
        /// The version asked for or found.
        version: i64,
        /// The first version of the ONNX domain.
        min: i64,
        /// The newest version this build knows.
        max: i64,
    },
    /// The model imports the ONNX domain twice with different versions.
    #[error("the model imports the ONNX domain at version {first} and {other}: initial_version does not reflect current state of model")]
    AmbiguousOpset {
        /// The version of the first import.
        first: i64,
        /// The conflicting one.
        other: i64,
    },
    /// The model has no `ir_version`, or one below 2.
    #[error("onnx version converter is unable to parse input model (ir_version {0} is missing or too old)")]
    IrVersion(i64),
    /// The model cannot be read as a graph (an undefined input, a tensor without a
    /// known element type, a sparse tensor attribute).
    #[error("the model cannot be converted: {0}")]
    Import(String),
    /// Type inference refused the model.
    #[error("type inference failed: {0}")]
    Inference(String),
    /// A node's operator has no schema in any domain.
    #[error("operator '{op_type}' (node {node}) has no registered schema; cannot convert it from version {from} to {to}")]
    UnknownOperator {
        /// The operator.
        op_type: String,
        /// The node's name, or its index when unnamed.
        node: String,
        /// The version converted from.
        from: i64,
        /// The version converted to.
        to: i64,
    },
    /// An operator changed between two versions and no adapter carries it across, or
    /// the adapter refuses this node.
    #[error("cannot convert operator '{op_type}' of domain '{domain}' (node {node}) from version {from} to {to}: {reason}")]
    Refused {
        /// The operator.
        op_type: String,
        /// Its domain as the node writes it.
        domain: String,
        /// The node's name, or its index when unnamed.
        node: String,
        /// The step's version converted from.
        from: i64,
        /// The step's version converted to.
        to: i64,
        /// Why.
        reason: String,
    },
}

/// The first and newest versions of the ONNX domain.
fn version_range() -> (i64, i64) {
    static RANGE: OnceLock<i64> = OnceLock::new();
    let max = *RANGE.get_or_init(|| {
        schema::all()
            .schema
            .iter()
            .filter(|s| s.domain().is_empty())
            .map(|s| s.since_version)
            .max()
            .unwrap_or(1)
    });
    (1, max)
}

/// For every operator name of any domain: the versions at which its schema of the
/// ONNX domain changed (empty for an operator of other domains only).
fn schema_versions(op_type: &str) -> Option<&'static [i64]> {
    static INDEX: OnceLock<HashMap<&'static str, Vec<i64>>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index: HashMap<&'static str, Vec<i64>> = HashMap::new();
            for s in &schema::all().schema {
                let versions = index.entry(s.name()).or_default();
                if s.domain().is_empty() {
                    versions.push(s.since_version);
                }
            }
            index
        })
        .get(op_type)
        .map(Vec::as_slice)
}

/// (from, to, adapter) by operator.
type AdapterIndex = HashMap<&'static str, Vec<(i64, i64, Adapter)>>;

/// The registered adapters by operator: (from, to, adapter), plus the refusal of an
/// operator's first version going down.
fn adapters_of(op_type: &str) -> Option<&'static [(i64, i64, Adapter)]> {
    static INDEX: OnceLock<AdapterIndex> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index: HashMap<&'static str, Vec<(i64, i64, Adapter)>> = HashMap::new();
            for s in &schema::all().schema {
                if !s.domain().is_empty() {
                    continue;
                }
                index.entry(s.name()).or_default();
            }
            for (name, versions) in index.iter_mut() {
                let first = schema_versions(name)
                    .and_then(|v| v.iter().copied().min())
                    .unwrap_or(1);
                if first > 1 {
                    versions.push((first, first - 1, Adapter::NoPreviousVersion));
                }
            }
            // Explicit entries replace the first-version refusal of the same step.
            let mut explicit: HashMap<&'static str, Vec<(i64, i64, Adapter)>> = HashMap::new();
            for &(op, from, to, adapter) in table::ADAPTERS {
                explicit.entry(op).or_default().push((from, to, adapter));
            }
            for (op, list) in explicit {
                let entry = index.entry(op).or_default();
                entry.retain(|(f, t, _)| !list.iter().any(|(lf, lt, _)| lf == f && lt == t));
                entry.extend(list);
            }
            index.retain(|_, v| !v.is_empty());
            index
        })
        .get(op_type)
        .map(Vec::as_slice)
}

/// Converts `model` to version `target_version` of the ONNX domain (see the module
/// documentation). The model itself is not changed; tensors are cloned (cheaply for
/// borrowed, shared and lazy weights). [`convert_version_owned`] moves them instead.
///
/// # Errors
/// What `onnx` refuses, as a [`VersionConvertError`] naming the operator, its domain,
/// the versions and the node.
pub fn convert_version<'a>(
    model: &ModelProto<'a>,
    target_version: i64,
) -> Result<ModelProto<'a>, VersionConvertError> {
    convert_version_owned(model.clone(), target_version)
}

/// [`convert_version`] taking the model by value: its tensors move into the result.
///
/// # Errors
/// As [`convert_version`].
pub fn convert_version_owned(
    mut model: ModelProto<'_>,
    target_version: i64,
) -> Result<ModelProto<'_>, VersionConvertError> {
    infer_shapes(&mut model, &InferOptions::default())
        .map_err(|e| VersionConvertError::Inference(e.to_string()))?;
    let initial = model
        .opset_import
        .iter()
        .find(|o| o.domain().is_empty() || o.domain() == "ai.onnx")
        .map_or(0, |o| o.version());
    for o in &model.opset_import {
        if o.domain().is_empty() && o.version() != initial {
            return Err(VersionConvertError::AmbiguousOpset {
                first: initial,
                other: o.version(),
            });
        }
    }
    let ir_version = model.ir_version.unwrap_or(0);
    if ir_version <= 1 {
        return Err(VersionConvertError::IrVersion(ir_version));
    }
    let graph = model.graph.take().unwrap_or_default();
    let mut g = ir::import_graph(graph, false, ir_version).map_err(VersionConvertError::Import)?;
    let (min, max) = version_range();
    for version in [initial, target_version] {
        if version < min || version > max {
            return Err(VersionConvertError::InvalidVersion { version, min, max });
        }
    }
    let step = if target_version > initial { 1 } else { -1 };
    let mut curr = initial;
    while curr != target_version {
        convert_step(&mut g, curr, step)?;
        curr += step;
    }
    let mut opset_import: Vec<OperatorSetIdProto<'_>> = model
        .opset_import
        .iter()
        .map(|o| OperatorSetIdProto {
            domain: Some(o.domain.clone().unwrap_or_default()),
            version: Some(o.version()),
            ..OperatorSetIdProto::default()
        })
        .collect();
    if let Some(o) = opset_import
        .iter_mut()
        .find(|o| o.domain().is_empty() || o.domain() == "ai.onnx")
    {
        o.version = Some(target_version);
    }
    Ok(ModelProto {
        ir_version: model.ir_version,
        producer_name: model.producer_name,
        producer_version: model.producer_version,
        domain: model.domain,
        model_version: model.model_version,
        doc_string: model.doc_string,
        graph: Some(ir::export_graph(g)),
        opset_import,
        metadata_props: model
            .metadata_props
            .into_iter()
            .map(|p| StringStringEntryProto {
                key: p.key,
                value: p.value,
                ..StringStringEntryProto::default()
            })
            .collect(),
        ..ModelProto::default()
    })
}

fn node_label(node: &ir::Node<'_>, index: usize) -> String {
    match &node.name {
        Some(n) if !n.as_str().is_empty() => format!("'{}'", n.as_str()),
        _ => format!("#{index}"),
    }
}

/// Carries the nodes of `g` (and of the graphs their attributes hold) from version
/// `curr` to `curr + step`.
fn convert_step(g: &mut Graph<'_>, curr: i64, step: i64) -> Result<(), VersionConvertError> {
    let next = curr + step;
    let mut after: VecDeque<_> = std::mem::take(&mut g.nodes).into();
    let mut before = Vec::with_capacity(after.len());
    while let Some(mut node) = after.pop_front() {
        let op = node.op_type.as_str();
        let domain = node.domain.as_ref().map_or("", |d| d.as_str());
        if op == "ConstantFill"
            || !(domain.is_empty() || domain == "ai.onnx")
            || op == "Undefined"
            || op == "Captured"
        {
            before.push(node);
            continue;
        }
        let label = || node_label(&node, before.len());
        let Some(versions) = schema_versions(op) else {
            return Err(VersionConvertError::UnknownOperator {
                op_type: op.to_owned(),
                node: label(),
                from: curr,
                to: next,
            });
        };
        let changes = if step > 0 {
            versions.contains(&next)
        } else {
            versions.contains(&curr)
        };
        if changes {
            let (op, domain, label) = (op.to_owned(), domain.to_owned(), label());
            let refused = |reason: String| VersionConvertError::Refused {
                op_type: op.clone(),
                domain: domain.clone(),
                node: label.clone(),
                from: curr,
                to: next,
                reason,
            };
            let adapter = match adapters_of(&op) {
                None => return Err(refused(format!("No Adapter For {op}"))),
                Some(list) => {
                    if !list.iter().any(|(f, _, _)| *f == curr) {
                        return Err(refused(format!("No Adapter From Version ${curr} for {op}")));
                    }
                    match list.iter().find(|(f, t, _)| *f == curr && *t == next) {
                        None => {
                            return Err(refused(format!("No Adapter To Version ${next} for {op}")))
                        }
                        Some((_, _, a)) => *a,
                    }
                }
            };
            let mut around = Around {
                before: &mut before,
                after: &mut after,
            };
            adapters::adapt(adapter, g, &mut around, &mut node, next).map_err(refused)?;
        }
        for a in node.attrs.iter_mut() {
            if let AttrValue::G(sub) = &mut a.value {
                convert_step(sub, curr, step)?;
            }
        }
        before.push(node);
    }
    g.nodes = before;
    Ok(())
}
