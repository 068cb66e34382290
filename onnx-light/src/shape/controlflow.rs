//! Inference rules of the operators that run graphs: `If`, `Loop`, `Scan` and
//! `SequenceMap`, at each opset version as `onnx`'s give them.
//!
//! A rule derives the types of a graph attribute's inputs from the node's, asks the
//! driver (through [`Subgraphs`]) to infer that graph in the node's scope, and builds
//! the node's output types from the types the graph's outputs end with.

use super::kit::*;
use super::types::shape_of;
use crate::onnx::{DataType, Dimension, TensorShapeProto, TypeProto, TypeProtoTensor, TypeValue};

/// The driver's side: infers the graph held by a node's attribute.
pub(super) trait Subgraphs {
    /// Infers the graph of attribute `name` with inputs of `inputs` (`None`: unknown)
    /// and gives the types of its outputs (an empty type for one with none). An error
    /// when the attribute holds no graph, the graph's inputs do not match, or, in strict
    /// mode, the graph's own inference failed.
    fn infer(
        &mut self,
        name: &str,
        inputs: Vec<Option<TypeProto<'static>>>,
    ) -> Result<Vec<TypeProto<'static>>, String>;
}

/// The operators whose rules infer their graph attributes.
pub(super) const RUNS_GRAPHS: &[&str] = &["If", "Loop", "Scan", "SequenceMap"];

/// The rule's outcome: `Ok(None)` for an operator that runs no graph.
pub(super) fn infer(
    n: &Node<'_, '_>,
    graphs: &mut dyn Subgraphs,
) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let outputs = match n.node.op_type() {
        "If" => if_(n, graphs)?,
        "Loop" => loop_(n, graphs)?,
        "Scan" if n.version < 9 => scan_8(n, graphs)?,
        "Scan" => scan(n, graphs)?,
        "SequenceMap" => sequence_map(n, graphs)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs.into_iter().map(Some).collect()))
}

/// The tensor part of `t`, which becomes a tensor type (dropping any other kind) as a
/// protobuf `mutable_tensor_type` does.
fn tensor_mut<'t>(t: &'t mut TypeProto<'static>) -> &'t mut TypeProtoTensor<'static> {
    if !matches!(t.value, Some(TypeValue::TensorType(_))) {
        t.value = Some(TypeValue::TensorType(TypeProtoTensor::default()));
    }
    match t.value.as_mut() {
        Some(TypeValue::TensorType(tt)) => tt,
        _ => unreachable!("just made a tensor type"),
    }
}

/// The types of the node's inputs, copied.
fn input_type(n: &Node<'_, '_>, i: usize) -> Option<TypeProto<'static>> {
    n.inputs.get(i).copied().flatten().map(owned_type)
}

fn if_(n: &Node<'_, '_>, graphs: &mut dyn Subgraphs) -> Result<Vec<TypeProto<'static>>, String> {
    let then = graphs.infer("then_branch", Vec::new())?;
    let other = graphs.infer("else_branch", Vec::new())?;
    if then.len() != other.len() {
        return Err(format!(
            "then_branch and else_branch produce different number of outputs. {} != {}",
            then.len(),
            other.len()
        ));
    }
    let count = n.node.output.len();
    if then.len() != count {
        return Err(format!(
            "If node has {count} but subgraphs produce {}",
            then.len()
        ));
    }
    let mut outputs = Vec::with_capacity(count);
    for (i, (t, e)) in then.into_iter().zip(&other).enumerate() {
        let mut out = t;
        if n.version >= 13 {
            union_types(e, &mut out)?;
        } else {
            if value_case(&out) != value_case(e) {
                return Err(format!(
                    "Mismatched type for output {i} then={} else={}",
                    value_case(&out),
                    value_case(e)
                ));
            }
            if let (Some(e), Some(TypeValue::TensorType(o))) = (e.tensor_type(), out.value.as_mut())
            {
                let (te, ee) = (o.elem_type_raw.unwrap_or(0), e.elem_type_raw.unwrap_or(0));
                if te != ee {
                    return Err(format!(
                        "Mismatched tensor element type for output {i} then={te} else={ee}"
                    ));
                }
                if n.version >= 11 {
                    // A missing shape counts as a scalar's here, as in `onnx`.
                    let empty = TensorShapeProto::default();
                    union_shape(e.shape.as_ref().unwrap_or(&empty), &mut o.shape);
                } else if let Some(s) = &e.shape {
                    merge_in_shape(s, &mut o.shape)?;
                }
            }
        }
        outputs.push(out);
    }
    Ok(outputs)
}

/// `onnx`'s `propagateElemTypeWithValidation`: the element type of `input` into
/// `output`, which must agree with one `output` already has.
fn elem_type_with_validation(
    input: &TypeProto<'_>,
    output: &mut TypeProto<'static>,
) -> Result<(), String> {
    match &input.value {
        Some(TypeValue::TensorType(_)) | Some(TypeValue::SparseTensorType(_)) => {
            let (elem, sparse) = match &input.value {
                Some(TypeValue::TensorType(t)) => (t.elem_type_raw.unwrap_or(0), false),
                Some(TypeValue::SparseTensorType(t)) => (t.elem_type_raw.unwrap_or(0), true),
                _ => unreachable!("matched above"),
            };
            if elem == 0 {
                return Err("Element type of tensor or sparse tensor input was unknown".into());
            }
            let existing = match output.value.as_mut() {
                None if sparse => {
                    output.value = Some(TypeValue::SparseTensorType(Default::default()));
                    return elem_type_with_validation(input, output);
                }
                None => &mut tensor_mut(output).elem_type_raw,
                Some(TypeValue::TensorType(t)) => &mut t.elem_type_raw,
                Some(TypeValue::SparseTensorType(t)) => &mut t.elem_type_raw,
                Some(_) => {
                    return Err(format!(
                        "Output was expected to have tensor type. Got {}",
                        value_case(output)
                    ))
                }
            };
            match existing.unwrap_or(0) {
                0 => *existing = Some(elem),
                e if e != elem => {
                    return Err(format!(
                        "Input element type of {elem} does not match existing output type of {e}"
                    ))
                }
                _ => {}
            }
            Ok(())
        }
        Some(TypeValue::SequenceType(s)) => {
            let Some(e) = s.elem_type.as_deref() else {
                return Err("Element type of sequence input was unknown".into());
            };
            let slot = element_slot(output, true);
            crate::onnx::deep::guarded(|| elem_type_with_validation(e, slot))
        }
        Some(TypeValue::OptionalType(s)) => {
            let Some(e) = s.elem_type.as_deref() else {
                return Err("Element type of optional input was unknown".into());
            };
            let slot = element_slot(output, false);
            crate::onnx::deep::guarded(|| elem_type_with_validation(e, slot))
        }
        Some(TypeValue::MapType(m)) => {
            let Some(key) = m.key_type_raw else {
                return Err("Key type of map input was unknown".into());
            };
            let Some(v) = m.value_type.as_deref() else {
                return Err("Value type of map input was unknown".into());
            };
            if !matches!(output.value, Some(TypeValue::MapType(_))) {
                output.value = Some(TypeValue::MapType(Default::default()));
            }
            let Some(TypeValue::MapType(o)) = output.value.as_mut() else {
                unreachable!("just made a map type")
            };
            o.key_type_raw = Some(key);
            crate::onnx::deep::guarded(|| {
                elem_type_with_validation(v, o.value_type.get_or_insert_with(Default::default))
            })
        }
        _ => Err(format!(
            "Input was expected to have either tensor, sequence, optional or map type. Got {}",
            value_case(input)
        )),
    }
}

/// The element type of `output` as a sequence (else an optional), which it becomes
/// (dropping any other kind) as a protobuf `mutable_sequence_type` does.
fn element_slot<'o>(
    output: &'o mut TypeProto<'static>,
    sequence: bool,
) -> &'o mut TypeProto<'static> {
    let kept = match &output.value {
        Some(TypeValue::SequenceType(_)) => sequence,
        Some(TypeValue::OptionalType(_)) => !sequence,
        _ => false,
    };
    if !kept {
        output.value = Some(if sequence {
            TypeValue::SequenceType(Default::default())
        } else {
            TypeValue::OptionalType(Default::default())
        });
    }
    let elem = match output.value.as_mut() {
        Some(TypeValue::SequenceType(s)) => &mut s.elem_type,
        Some(TypeValue::OptionalType(o)) => &mut o.elem_type,
        _ => unreachable!("just made a sequence or optional type"),
    };
    elem.get_or_insert_with(Default::default)
}

/// The number of types a graph gave must be the one the rule expects.
fn check_count(body: &[TypeProto<'static>], expected: usize) -> Result<(), String> {
    if body.len() != expected {
        return Err(format!(
            "Graph attribute inferencing returned type information for {} outputs. Expected {expected}",
            body.len()
        ));
    }
    Ok(())
}

/// `onnx`'s `ClearShape`: a tensor's shape removed, also inside sequences and optionals.
fn clear_shape(t: &mut TypeProto<'_>) {
    match t.value.as_mut() {
        Some(TypeValue::TensorType(tt)) => tt.shape = None,
        Some(TypeValue::SequenceType(s)) => {
            if let Some(e) = s.elem_type.as_deref_mut() {
                crate::onnx::deep::guarded(|| clear_shape(e))
            }
        }
        Some(TypeValue::OptionalType(s)) => {
            if let Some(e) = s.elem_type.as_deref_mut() {
                crate::onnx::deep::guarded(|| clear_shape(e))
            }
        }
        _ => {}
    }
}

fn loop_(n: &Node<'_, '_>, graphs: &mut dyn Subgraphs) -> Result<Vec<TypeProto<'static>>, String> {
    let num_inputs = n.node.input.len();
    let num_outputs = n.node.output.len();
    if num_inputs < 2 {
        return Err(format!("Input {num_inputs} is out of bounds."));
    }
    let state_vars = num_inputs - 2;
    let mut outputs = vec![TypeProto::default(); num_outputs];
    let mut body_inputs = vec![
        Some(crate::onnx::TypeProto::tensor(DataType::Int64, None)),
        input_type(n, 1),
    ];
    for i in 2..num_inputs {
        let elem = propagate_elem_type(n, i)?;
        let Some(slot) = outputs.get_mut(i - 2) else {
            return Err(format!("Output {} is out of bounds.", i - 2));
        };
        *slot = elem;
        let mut t = input_type(n, i).expect("typed: checked by propagate_elem_type");
        match n.version {
            // Before opset 13 a state variable is taken as a tensor.
            ..=12 => tensor_mut(&mut t).shape = None,
            13..=15 => match t.value.as_mut() {
                Some(TypeValue::TensorType(tt)) => tt.shape = None,
                Some(TypeValue::SequenceType(s)) => {
                    if let Some(TypeValue::TensorType(tt)) =
                        s.elem_type.as_deref_mut().and_then(|e| e.value.as_mut())
                    {
                        tt.shape = None;
                    }
                }
                _ => {}
            },
            _ => clear_shape(&mut t),
        }
        body_inputs.push(Some(t));
    }
    let body = graphs.infer("body", body_inputs)?;
    if body.is_empty() {
        return Ok(outputs);
    }
    check_count(&body, num_outputs + 1)?;
    for (i, (sub, out)) in body[1..].iter().zip(outputs.iter_mut()).enumerate() {
        let is_state = i < state_vars;
        let c = value_case(sub);
        let allowed = match n.version {
            ..=12 => c == 1,
            13..=15 => c == 1 || c == 4,
            _ => c == 1 || c == 4 || c == 9,
        };
        if !allowed {
            return Err(match n.version {
                ..=12 => format!(
                    "Loop 'body' subgraph outputs should all be tensors but output {i} was {c}"
                ),
                13..=15 => format!(
                    "Loop 'body' subgraph outputs should all be tensors or sequences but output {i} was {c}"
                ),
                _ => format!(
                    "Loop 'body' subgraph outputs should all be tensors or sequences or optionals, but output {i} was {c}"
                ),
            });
        }
        if !is_state && c != 1 {
            return Err(format!(
                "Loop 'body' subgraph scan outputs should all be tensors but output {i} was {c}"
            ));
        }
        elem_type_with_validation(sub, out)?;
        // A scan output gains a first dimension (the iteration count, unknown); a state
        // variable's shape may change across iterations and is left out.
        if let (false, Some(shape)) = (is_state, sub.tensor_type().and_then(|t| t.shape.as_ref())) {
            let mut dims = vec![Dimension::default()];
            dims.extend(shape.dim.iter().map(owned_dim));
            merge_in_shape(&shape_of(dims), &mut tensor_mut(out).shape)?;
        }
    }
    Ok(outputs)
}

fn scan_axes(n: &Node<'_, '_>, name: &str, count: usize, what: &str) -> Result<Vec<i64>, String> {
    match attr_ints(n, name) {
        Some(axes) if axes.len() != count => Err(format!(
            "Number of {what} axes specified ({}) is not equal to number of {what}s ({count}).",
            axes.len()
        )),
        Some(axes) => Ok(axes),
        None => Ok(vec![0; count]),
    }
}

fn axis_in(attr: &str, axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(format!(
            "{attr} axis value {axis} is invalid for a tensor of rank {rank}"
        ));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

fn tensor_input<'n, 'a>(n: &Node<'n, 'a>, i: usize) -> Result<&'n TypeProtoTensor<'a>, String> {
    n.inputs
        .get(i)
        .copied()
        .flatten()
        .and_then(TypeProto::tensor_type)
        .ok_or_else(|| format!("Scan input {i} was not a tensor."))
}

fn num_scan_inputs(n: &Node<'_, '_>) -> Result<usize, String> {
    let Some(a) = attribute(n, "num_scan_inputs") else {
        return Err("Required attribute 'num_scan_inputs' is missing".into());
    };
    let Some(v) = a.i else {
        return Err("Required attribute 'num_scan_inputs' must be an integer".into());
    };
    usize::try_from(v)
        .map_err(|_| format!("narrow: value {v} cannot be represented in target type"))
}

/// `Scan` from opset 9: scan inputs lose their scan axis in the body; scan outputs gain
/// the sequence length at their output axis.
fn scan(n: &Node<'_, '_>, graphs: &mut dyn Subgraphs) -> Result<Vec<TypeProto<'static>>, String> {
    let num_inputs = n.node.input.len();
    let num_outputs = n.node.output.len();
    let num_scan = num_scan_inputs(n)?;
    if num_scan > num_inputs {
        return Err(format!(
            "num_scan_inputs ({num_scan}) cannot exceed the number of Scan inputs ({num_inputs})."
        ));
    }
    let state_vars = num_inputs - num_scan;
    if state_vars > num_outputs {
        return Err(format!(
            "The number of outputs of the Scan ({num_outputs}) should equal the sum of the number of loop state variables ({state_vars}) and the number of scan-outputs."
        ));
    }
    let num_scan_outputs = num_outputs - state_vars;
    let axes = scan_axes(n, "scan_input_axes", num_scan, "scan input")?;
    let output_axes = scan_axes(n, "scan_output_axes", num_scan_outputs, "scan output")?;
    let mut outputs = vec![TypeProto::default(); num_outputs];
    let mut body_inputs = Vec::with_capacity(num_inputs);
    let mut sequence_len = Dimension::default();
    for i in 0..num_inputs {
        let t = tensor_input(n, i)?;
        if i < state_vars {
            outputs[i] = propagate_elem_type(n, i)?;
            if let Some(s) = &t.shape {
                tensor_mut(&mut outputs[i]).shape = Some(owned(s));
            }
            body_inputs.push(input_type(n, i));
        } else if let Some(shape) = &t.shape {
            let axis = axis_in("scan_input_axes", axes[i - state_vars], shape.dim.len())?;
            merge_in_dim(&shape.dim[axis], &mut sequence_len, 1)?;
            let mut inner = input_type(n, i).expect("a tensor input");
            if let Some(s) = tensor_mut(&mut inner).shape.as_mut() {
                s.dim.remove(axis);
            }
            body_inputs.push(Some(inner));
        } else {
            body_inputs.push(input_type(n, i));
        }
    }
    let body = graphs.infer("body", body_inputs)?;
    if body.is_empty() {
        return Ok(outputs);
    }
    check_count(&body, num_outputs)?;
    for (i, (sub, out)) in body.iter().zip(outputs.iter_mut()).enumerate() {
        let target = tensor_mut(out);
        let Some(sub) = sub.tensor_type() else {
            return Err(format!(
                "Scan 'body' subgraph outputs should all be tensors but output {i} was not"
            ));
        };
        if i < state_vars {
            if let Some(s) = &sub.shape {
                merge_in_shape(s, &mut target.shape)?;
            }
            continue;
        }
        target.elem_type_raw = Some(sub.elem_type_raw.unwrap_or(0));
        if let Some(s) = &sub.shape {
            let axis = axis_in(
                "scan_output_axes",
                output_axes[i - state_vars],
                s.dim.len() + 1,
            )?;
            let mut dims: Vec<Dimension<'static>> = s.dim.iter().map(owned_dim).collect();
            dims.insert(axis, sequence_len.clone());
            merge_in_shape(&shape_of(dims), &mut target.shape)?;
        }
    }
    Ok(outputs)
}

/// `Scan` of opset 8: a batch axis first, the sequence axis second, and an optional
/// `sequence_lens` input before the state variables.
fn scan_8(n: &Node<'_, '_>, graphs: &mut dyn Subgraphs) -> Result<Vec<TypeProto<'static>>, String> {
    let num_inputs = n.node.input.len();
    let num_outputs = n.node.output.len();
    let num_scan = num_scan_inputs(n)?;
    if num_scan + 1 > num_inputs {
        return Err(format!(
            "num_scan_inputs ({num_scan}) plus the sequence_lens input cannot exceed the number of Scan inputs ({num_inputs})."
        ));
    }
    let state_vars = num_inputs - 1 - num_scan;
    let mut outputs = vec![TypeProto::default(); num_outputs];
    let mut body_inputs = Vec::with_capacity(num_inputs);
    let (mut batch, mut sequence_len) = (Dimension::default(), Dimension::default());
    for i in 1..num_inputs {
        let t = tensor_input(n, i)?;
        let drop = if i - 1 < state_vars {
            let elem = propagate_elem_type(n, i)?;
            let Some(out) = outputs.get_mut(i - 1) else {
                return Err(format!("Output {} is out of bounds.", i - 1));
            };
            *out = elem;
            if let Some(s) = &t.shape {
                tensor_mut(out).shape = Some(owned(s));
            }
            1
        } else {
            if let Some(s) = t.shape.as_ref().filter(|s| s.dim.len() > 2) {
                merge_in_dim(&s.dim[0], &mut batch, 0)?;
                merge_in_dim(&s.dim[1], &mut sequence_len, 1)?;
            }
            2
        };
        let mut inner = input_type(n, i).expect("a tensor input");
        if let Some(s) = tensor_mut(&mut inner).shape.as_mut() {
            s.dim.drain(..drop.min(s.dim.len()));
        }
        body_inputs.push(Some(inner));
    }
    let body = graphs.infer("body", body_inputs)?;
    if body.is_empty() {
        return Ok(outputs);
    }
    check_count(&body, num_outputs)?;
    for (i, (sub, out)) in body.iter().zip(outputs.iter_mut()).enumerate() {
        let is_state = i < state_vars;
        let Some(sub) = sub.tensor_type() else {
            return Err(format!(
                "Scan 'body' subgraph outputs should all be tensors but output {i} was not"
            ));
        };
        if !is_state {
            tensor_mut(out).elem_type_raw = Some(sub.elem_type_raw.unwrap_or(0));
        }
        if let Some(s) = &sub.shape {
            let mut dims = vec![batch.clone()];
            if !is_state {
                dims.push(sequence_len.clone());
            }
            dims.extend(s.dim.iter().map(owned_dim));
            merge_in_shape(&shape_of(dims), &mut tensor_mut(out).shape)?;
        }
    }
    Ok(outputs)
}

fn sequence_map(
    n: &Node<'_, '_>,
    graphs: &mut dyn Subgraphs,
) -> Result<Vec<TypeProto<'static>>, String> {
    let mut body_inputs = Vec::with_capacity(n.node.input.len());
    for i in 0..n.node.input.len() {
        let Some(t) = n.inputs.get(i).copied().flatten() else {
            return Err(format!("Input {i} expected to have type info"));
        };
        match &t.value {
            Some(TypeValue::SequenceType(s)) => body_inputs.push(Some(
                s.elem_type.as_deref().map(owned_type).unwrap_or_default(),
            )),
            _ if i == 0 => return Err(format!("Input {i} expected to be a sequence type")),
            _ => body_inputs.push(Some(owned_type(t))),
        }
    }
    let body = graphs.infer("body", body_inputs)?;
    let num_outputs = n.node.output.len();
    if body.is_empty() {
        return Ok(vec![TypeProto::default(); num_outputs]);
    }
    check_count(&body, num_outputs)?;
    Ok(body.into_iter().map(sequence_of).collect())
}

#[cfg(test)]
mod tests {
    use crate::onnx::*;
    use crate::shape::test_support::dims;
    use crate::shape::{infer_shapes, InferOptions};

    fn tensor(name: &str, elem: DataType, shape: &[&str]) -> ValueInfoProto<'static> {
        ValueInfoProto::tensor(name.to_string(), elem, dims(shape))
    }

    fn untyped(name: &str) -> ValueInfoProto<'static> {
        ValueInfoProto {
            name: Some(name.to_string().into()),
            ..Default::default()
        }
    }

    fn graph(
        name: &str,
        inputs: Vec<ValueInfoProto<'static>>,
        nodes: Vec<NodeProto<'static>>,
        outputs: &[&str],
    ) -> GraphProto<'static> {
        let mut g = GraphProto::named(name.to_string());
        g.input = inputs;
        g.node = nodes;
        g.output = outputs.iter().map(|o| untyped(o)).collect();
        g
    }

    fn model(g: GraphProto<'static>, opset: i64) -> ModelProto<'static> {
        ModelProto::new(g, vec![OperatorSetIdProto::new("", opset)])
    }

    fn type_of(vis: &[ValueInfoProto<'_>], name: &str) -> String {
        let vi = vis.iter().find(|v| v.name() == name).unwrap();
        vi.r#type.as_ref().unwrap().to_string()
    }

    /// The main graph's outputs as `name: type`, after inference in `strict` mode.
    fn outputs(m: &mut ModelProto<'_>, strict: bool) -> crate::Result<Vec<String>> {
        infer_shapes(m, &InferOptions::default().strict_mode(strict))?;
        let g = m.graph.as_ref().unwrap();
        Ok(g.output
            .iter()
            .map(|o| format!("{}: {}", o.name(), o.r#type.as_ref().unwrap()))
            .collect())
    }

    /// `If` whose branches give `x` (outer) through Identity and `Relu(y)`.
    fn if_model(x: &[&str], y: &[&str], opset: i64) -> ModelProto<'static> {
        let then = graph(
            "then",
            vec![],
            vec![NodeProto::new("Identity", ["x"], ["a"])],
            &["a"],
        );
        let other = graph(
            "else",
            vec![],
            vec![NodeProto::new("Identity", ["y"], ["b"])],
            &["b"],
        );
        let node = NodeProto::new("If", ["c"], ["z"])
            .with_attribute(AttributeProto::graph("then_branch", then))
            .with_attribute(AttributeProto::graph("else_branch", other));
        let g = graph(
            "main",
            vec![
                tensor("c", DataType::Bool, &[]),
                tensor("x", DataType::Float, x),
                tensor("y", DataType::Float, y),
            ],
            vec![node],
            &["z"],
        );
        model(g, opset)
    }

    #[test]
    fn if_gives_what_both_branches_agree_on_and_its_branches_see_the_outer_types() {
        let mut m = if_model(&["N", "3"], &["N", "4"], 21);
        assert_eq!(outputs(&mut m, true).unwrap(), ["z: float[N,unk__0]"]);
        let g = m.graph.as_ref().unwrap();
        let then = g.node[0].attribute[0].g.as_ref().unwrap();
        assert_eq!(type_of(&then.output, "a"), "float[N,3]");
        assert_eq!(type_of(&then.value_info, "a"), "float[N,3]");
        // Ranks that differ leave the rank unknown.
        let mut m = if_model(&["N", "3"], &["N"], 21);
        assert_eq!(outputs(&mut m, true).unwrap(), ["z: float[]"]);
    }

    #[test]
    fn if_before_opset_11_merges_its_branches_and_refuses_conflicts() {
        let mut m = if_model(&["N", "?"], &["?", "4"], 1);
        assert_eq!(outputs(&mut m, true).unwrap(), ["z: float[N,4]"]);
        let mut m = if_model(&["2", "3"], &["2", "4"], 1);
        let e = outputs(&mut m, true).unwrap_err().to_string();
        assert!(e.contains("Inferred=4 Declared=3"), "{e}");
        // Lax mode skips the node and keeps the model whole.
        let mut m = if_model(&["2", "3"], &["2", "4"], 1);
        assert_eq!(outputs(&mut m, false).unwrap(), ["z: "]);
        assert!(m.graph.as_ref().unwrap().node[0].attribute[1].g.is_some());
    }

    #[test]
    fn errors_in_a_branch_fail_the_if_node_only_in_strict_mode() {
        let then = graph(
            "then",
            vec![],
            vec![NodeProto::new("Add", ["x", "y"], ["a"])],
            &["a"],
        );
        let other = graph(
            "else",
            vec![],
            vec![NodeProto::new("Identity", ["x"], ["b"])],
            &["b"],
        );
        let node = NodeProto::new("If", ["c"], ["z"])
            .with_name("branch")
            .with_attribute(AttributeProto::graph("then_branch", then))
            .with_attribute(AttributeProto::graph("else_branch", other));
        let g = graph(
            "main",
            vec![
                tensor("c", DataType::Bool, &[]),
                tensor("x", DataType::Float, &["2"]),
                tensor("y", DataType::Float, &["3"]),
            ],
            vec![node],
            &["z"],
        );
        let e = outputs(&mut model(g.clone(), 21), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("branch") && e.contains("op_type:Add"), "{e}");
        // In lax mode the failed Add gives nothing: the branches disagree in kind.
        let mut m = model(g, 21);
        assert_eq!(outputs(&mut m, false).unwrap(), ["z: "]);
    }

    /// A `Loop` with state variable `s` and a scan output, its body adding `x` (outer).
    fn loop_model(opset: i64) -> ModelProto<'static> {
        let body = graph(
            "body",
            vec![
                tensor("i", DataType::Int64, &[]),
                tensor("cond_in", DataType::Bool, &[]),
                untyped("s_in"),
            ],
            vec![
                NodeProto::new("Identity", ["cond_in"], ["cond_out"]),
                NodeProto::new("Add", ["s_in", "x"], ["s_out"]),
                NodeProto::new("Unsqueeze", ["x", "zero"], ["scan_out"]),
            ],
            &["cond_out", "s_out", "scan_out"],
        );
        let mut body = body;
        body.initializer
            .push(TensorProto::from_vec("zero", [1], vec![0i64]).unwrap());
        let node = NodeProto::new("Loop", ["m", "c", "s"], ["s_final", "scans"])
            .with_attribute(AttributeProto::graph("body", body));
        let g = graph(
            "main",
            vec![
                tensor("m", DataType::Int64, &[]),
                tensor("c", DataType::Bool, &[]),
                tensor("s", DataType::Float, &["3"]),
                tensor("x", DataType::Float, &["3"]),
            ],
            vec![node],
            &["s_final", "scans"],
        );
        model(g, opset)
    }

    #[test]
    fn loop_keeps_its_state_types_and_stacks_its_scan_outputs() {
        let mut m = loop_model(21);
        assert_eq!(
            outputs(&mut m, true).unwrap(),
            ["s_final: float[]", "scans: float[unk__0,1,3]"]
        );
        let g = m.graph.as_ref().unwrap();
        let body = g.node[0].attribute[0].g.as_ref().unwrap();
        // The state variable enters the body without its shape; its rank is unknown,
        // so the sum's shape is too (broadcasting needs ranks).
        assert_eq!(type_of(&body.input, "s_in"), "float[]");
        assert_eq!(type_of(&body.output, "scan_out"), "float[1,3]");
        assert_eq!(type_of(&body.output, "s_out"), "float[]");
        assert_eq!(type_of(&body.value_info, "s_out"), "float[]");
        // The cond input of the body gets the outer one's type.
        assert_eq!(type_of(&body.output, "cond_out"), "bool");
    }

    #[test]
    fn a_body_with_the_wrong_number_of_inputs_fails_the_loop() {
        let mut m = loop_model(21);
        let g = m.graph.as_mut().unwrap();
        g.node[0].attribute[0].g.as_mut().unwrap().input.pop();
        let e = outputs(&mut m, true).unwrap_err().to_string();
        assert!(e.contains("Graph has 2 inputs but 3 were provided"), "{e}");
    }

    #[test]
    fn scan_drops_the_scan_axis_in_its_body_and_stacks_outputs_on_theirs() {
        let body = graph(
            "body",
            vec![untyped("acc_in"), untyped("row")],
            vec![
                NodeProto::new("Add", ["acc_in", "row"], ["acc_out"]),
                NodeProto::new("Identity", ["row"], ["row_out"]),
            ],
            &["acc_out", "row_out"],
        );
        let node = NodeProto::new("Scan", ["acc", "xs"], ["acc_final", "ys"])
            .with_attribute(AttributeProto::int("num_scan_inputs", 1))
            .with_attribute(AttributeProto::ints("scan_input_axes", [1]))
            .with_attribute(AttributeProto::ints("scan_output_axes", [-1]))
            .with_attribute(AttributeProto::graph("body", body));
        let g = graph(
            "main",
            vec![
                tensor("acc", DataType::Float, &["4"]),
                tensor("xs", DataType::Float, &["4", "T"]),
            ],
            vec![node],
            &["acc_final", "ys"],
        );
        let mut m = model(g, 21);
        assert_eq!(
            outputs(&mut m, true).unwrap(),
            ["acc_final: float[4]", "ys: float[4,T]"]
        );
        let g = m.graph.as_ref().unwrap();
        let body = g.node[0].attribute[3].g.as_ref().unwrap();
        assert_eq!(type_of(&body.input, "row"), "float[4]");
    }

    #[test]
    fn a_graph_sees_the_outer_types_but_not_the_outer_constants_and_shares_the_names() {
        // `shape` is a constant of the main graph: the body's Reshape cannot read it.
        let then = graph(
            "then",
            vec![],
            vec![NodeProto::new("Reshape", ["x", "shape"], ["a"])],
            &["a"],
        );
        let node = NodeProto::new("If", ["c"], ["z"])
            .with_attribute(AttributeProto::graph("then_branch", then.clone()))
            .with_attribute(AttributeProto::graph("else_branch", then));
        let mut g = graph(
            "main",
            vec![
                tensor("c", DataType::Bool, &[]),
                tensor("x", DataType::Float, &["2", "3"]),
            ],
            vec![NodeProto::new("Reshape", ["x", "shape"], ["direct"]), node],
            &["direct", "z"],
        );
        g.initializer
            .push(TensorProto::from_vec("shape", [1], vec![6i64]).unwrap());
        let mut m = model(g, 21);
        assert_eq!(
            outputs(&mut m, true).unwrap(),
            // The branches' unknown sizes were named `unk__0` and `unk__1`.
            ["direct: float[6]", "z: float[unk__2]"]
        );
    }

    #[test]
    fn outputs_nothing_is_inferred_for_get_an_empty_type() {
        // An operator without a schema: nothing is inferred for `y`.
        let mut g = graph(
            "main",
            vec![tensor("x", DataType::Float, &["2"])],
            vec![NodeProto::new("NoSuchOp", ["x"], ["y"])],
            &["y"],
        );
        g.value_info.push(untyped("x"));
        let mut m = model(g, 21);
        infer_shapes(&mut m, &InferOptions::default()).unwrap();
        let g = m.graph.as_ref().unwrap();
        assert_eq!(g.output[0].r#type, Some(TypeProto::default()));
        assert_eq!(g.value_info.len(), 1);
    }

    #[test]
    fn sequence_map_runs_its_body_on_the_elements() {
        let body = graph(
            "body",
            vec![untyped("e")],
            vec![NodeProto::new("Shape", ["e"], ["s"])],
            &["s"],
        );
        let node = NodeProto::new("SequenceMap", ["seq"], ["shapes"])
            .with_attribute(AttributeProto::graph("body", body));
        let mut seq = untyped("seq");
        seq.r#type = Some(TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
                elem_type: Some(Box::new(TypeProto::tensor(
                    DataType::Float,
                    Some(TensorShapeProto::from_dims(&[2, 5])),
                ))),
                ..Default::default()
            }))),
            ..Default::default()
        });
        let g = graph("main", vec![seq], vec![node], &["shapes"]);
        let mut m = model(g, 21);
        assert_eq!(outputs(&mut m, true).unwrap(), ["shapes: seq(int64[2])"]);
    }
}
