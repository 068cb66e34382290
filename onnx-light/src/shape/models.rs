//! The inference rules of model-level operators: losses (`NegativeLogLikelihoodLoss`,
//! `SoftmaxCrossEntropyLoss`), attention (`Attention`, `RotaryEmbedding`,
//! `LinearAttention`, `CausalConvWithState`, the preview `FlexAttention`), recurrent
//! layers (`RNN`, `GRU`, `LSTM`) and the preview training operators (`Adagrad`,
//! `Momentum`, `Adam`, `Gradient`), as their `onnx` inference functions give them,
//! quirks included.

use super::kit::*;
use super::types::{shape_of, tensor_type};
use crate::onnx::{Dimension, TensorShapeProto};

/// The rule's outcome: `Ok(None)` when the operator is not of this family.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    let op = n.node.op_type();
    let outputs = match (n.domain, op) {
        ("", "NegativeLogLikelihoodLoss") => nll_loss(n)?,
        ("", "SoftmaxCrossEntropyLoss") => softmax_cross_entropy(n)?,
        ("", "Attention") => attention(n)?,
        ("", "RNN" | "GRU" | "LSTM") => recurrent(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

/// Whether input `i` is given (present and named).
fn has_input(n: &Node<'_, '_>, i: usize) -> bool {
    n.node.input.get(i).is_some_and(|s| !s.is_empty())
}

/// Whether output `i` is asked for (present and named).
fn has_output(n: &Node<'_, '_>, i: usize) -> bool {
    n.node.output.get(i).is_some_and(|s| !s.is_empty())
}

fn int_attr(n: &Node<'_, '_>, name: &str) -> Option<i64> {
    attribute(n, name).and_then(|a| a.i)
}

fn string_attr<'n>(n: &'n Node<'_, '_>, name: &str) -> Option<&'n [u8]> {
    attribute(n, name).and_then(|a| a.s.as_ref().map(|s| s.as_slice()))
}

/// One `None` per node output, for rules that fill some of them.
fn no_outputs(n: &Node<'_, '_>) -> Outputs {
    vec![None; n.node.output.len()]
}

fn set(outputs: &mut Outputs, i: usize, elem: i32, shape: Option<TensorShapeProto<'static>>) {
    if let Some(slot) = outputs.get_mut(i) {
        *slot = Some(tensor_type(elem, shape));
    }
}

/// `onnx`'s unification of a dimension `into` with `from`: a size fills or must match,
/// a name fills a dimension with neither.
fn unify(from: &Dimension<'_>, into: &mut Dimension<'static>) -> Result<(), String> {
    if let Some(v) = from.as_value() {
        match into.as_value() {
            Some(w) if w != v => {
                return Err(format!(
                    "Dimension mismatch in unification between {v} and {w}"
                ))
            }
            Some(_) => {}
            None => *into = Dimension::value(v),
        }
    } else if from.as_param().is_some() && into.value.is_none() {
        *into = owned_dim(from);
    }
    Ok(())
}

fn nll_loss(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(x), Some(t)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let rank = x.dim.len();
    if rank < 2 {
        return Err(format!("Input rank must be >= 2. input_rank={rank}"));
    }
    if t.dim.len() != rank - 1 {
        return Err("Target rank must be 1 less than the input rank.".to_string());
    }
    // The input's dimension matching target dimension `i` (the classes axis skipped).
    let x_dim = |i: usize| &x.dim[if i == 0 { 0 } else { i + 1 }];
    let mut dims: Vec<Dimension<'static>> = Vec::with_capacity(rank - 1);
    if n.version >= 22 {
        // The target's dimensions, unified with the input's.
        for (i, d) in t.dim.iter().enumerate() {
            let mut d = owned_dim(d);
            unify(x_dim(i), &mut d)?;
            dims.push(d);
        }
    } else {
        for (i, d) in t.dim.iter().enumerate() {
            if let (Some(a), Some(b)) = (x_dim(i).as_value(), d.as_value()) {
                if a != b {
                    return Err(format!(
                        "Input and target dimension value mismatch. input_dim_value={a} target_dim_value={b}"
                    ));
                }
            }
            dims.push(owned_dim(x_dim(i)));
        }
    }
    if let Some(w) = shape_in(n, 2) {
        if w.dim.len() != 1 {
            return Err("Weight rank must be 1.".to_string());
        }
    }
    let shape = if string_attr(n, "reduction") == Some(b"none") {
        dims
    } else {
        Vec::new()
    };
    Ok(one(elem, Some(shape_of(shape))))
}

fn softmax_cross_entropy(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let mut outputs = no_outputs(n);
    let loss = if string_attr(n, "reduction") == Some(b"none") {
        shape_in(n, 1).map(owned)
    } else {
        Some(shape_of(Vec::new()))
    };
    set(&mut outputs, 0, elem, loss);
    if has_output(n, 1) {
        set(&mut outputs, 1, elem, shape_in(n, 0).map(owned));
    }
    Ok(outputs)
}

/// `Attention` (opsets 23 to 25): 3D inputs (heads folded into the hidden size, with
/// the `q_num_heads`/`kv_num_heads` attributes) or 4D ones; the present key and value
/// grow by the new sequence when the past is given; the optional `qk_matmul_output`.
/// As in `onnx`, a key/value sequence length that is not a known size counts as 0, and
/// the `qk_matmul_output` of a query of unknown shape gets an empty (scalar) shape.
fn attention(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let validates = n.version >= 25;
    if validates {
        if has_input(n, 4) != has_input(n, 5) {
            return Err("past_key and past_value must be provided together.".to_string());
        }
        if has_output(n, 1) != has_output(n, 2) {
            return Err("present_key and present_value must be requested together.".to_string());
        }
        if has_input(n, 6)
            && (has_input(n, 4) || has_input(n, 5) || has_output(n, 1) || has_output(n, 2))
        {
            return Err(
                "nonpad_kv_seqlen cannot be combined with past or present cache tensors."
                    .to_string(),
            );
        }
    }
    let elem = required_elem(n, 0)?;
    let mut outputs = no_outputs(n);
    let q_heads = int_attr(n, "q_num_heads");
    let kv_heads = int_attr(n, "kv_num_heads");
    let mut y: Option<Vec<Dimension<'static>>> = None;
    let mut qk: Vec<Dimension<'static>> = Vec::new();
    let mut kv_length: i64 = -1;
    if let Some(q) = shape_in(n, 0) {
        let rank = q.dim.len();
        if rank != 3 && rank != 4 {
            return Err("Inputs 0 (query) shall be 3 or 4 dimensions".to_string());
        }
        if rank == 3 {
            let (Some(qh), Some(kh)) = (q_heads, kv_heads) else {
                return Err(
                    "3D inputs expected to have q_num_heads and kv_num_heads attributes."
                        .to_string(),
                );
            };
            if validates && (qh <= 0 || kh <= 0) {
                return Err(
                    "q_num_heads and kv_num_heads must be positive for 3D inputs.".to_string(),
                );
            }
        } else if validates && (q_heads.is_some() || kv_heads.is_some()) {
            return Err(
                "q_num_heads and kv_num_heads must not be specified for 4D inputs.".to_string(),
            );
        }
        qk.push(owned_dim(&q.dim[0]));
        if let Some(k) = shape_in(n, 1) {
            if k.dim.len() != 3 && k.dim.len() != 4 {
                return Err("Inputs 1 (key) shall be 3 or 4 dimensions".to_string());
            }
        }
        if let Some(v) = shape_in(n, 2) {
            let v_rank = v.dim.len();
            if v_rank != 3 && v_rank != 4 {
                return Err("Inputs 2 (value) shall be 3 or 4 dimensions".to_string());
            }
            if rank == 4 && v_rank == 4 {
                kv_length = v.dim[2].as_value().unwrap_or(0);
                y = Some(vec![
                    owned_dim(&q.dim[0]),
                    owned_dim(&q.dim[1]),
                    owned_dim(&q.dim[2]),
                    owned_dim(&v.dim[3]),
                ]);
                qk.extend([
                    owned_dim(&q.dim[1]),
                    owned_dim(&q.dim[2]),
                    Dimension::value(kv_length),
                ]);
            }
            if rank == 3 && v_rank == 3 {
                kv_length = v.dim[1].as_value().unwrap_or(0);
                let (Some(qh), Some(kh)) = (q_heads, kv_heads) else {
                    return Err("3D inputs expected to have kv_num_heads attribute.".to_string());
                };
                if qh <= 0 || kh <= 0 {
                    return Err("q_num_heads and kv_num_heads must be positive.".to_string());
                }
                let v_head_size = v.dim[2].as_value().unwrap_or(0) / kh;
                y = Some(vec![
                    owned_dim(&q.dim[0]),
                    owned_dim(&q.dim[1]),
                    Dimension::value(v_head_size.wrapping_mul(qh)),
                ]);
                qk.extend([
                    Dimension::value(qh),
                    owned_dim(&q.dim[1]),
                    Dimension::value(kv_length),
                ]);
            }
        }
    }
    set(&mut outputs, 0, elem, y.map(shape_of));
    if has_output(n, 1) && has_output(n, 2) && has_input(n, 4) && has_input(n, 5) {
        let (key_elem, value_elem) = (required_elem(n, 4)?, required_elem(n, 5)?);
        let mut present = (None, None);
        if let (Some(pk), Some(pv)) = (shape_in(n, 4), shape_in(n, 5)) {
            if pk.dim.len() != 4 {
                return Err("The past_key input shall be 4 dimensions".to_string());
            }
            if pv.dim.len() != 4 {
                return Err("The past_value input shall be 4 dimensions".to_string());
            }
            if let (true, Some(past)) = (kv_length > 0, pk.dim[2].as_value()) {
                let total = Dimension::value(kv_length.wrapping_add(past));
                let grown = |s: &TensorShapeProto<'_>| {
                    let mut s = owned(s);
                    s.dim[2] = total.clone();
                    s
                };
                present = (Some(grown(pk)), Some(grown(pv)));
                // `kv_length` is set only where the qk shape was given four dimensions.
                if let Some(d) = qk.get_mut(3) {
                    *d = total.clone();
                }
            }
        }
        set(&mut outputs, 1, key_elem, present.0);
        set(&mut outputs, 2, value_elem, present.1);
    }
    if has_output(n, 3) {
        set(&mut outputs, 3, elem, Some(shape_of(qk)));
    }
    Ok(outputs)
}

/// `RNN`, `GRU`, `LSTM`: `Y` is `[seq, directions, batch, hidden]` and `Y_h`/`Y_c`
/// `[directions, batch, hidden]` (batch first with `layout` 1, from opset 14). The
/// first versions (`RNN`/`LSTM` 1, `GRU` 3) give shapes only with `output_sequence`;
/// `GRU` 1 infers nothing.
fn recurrent(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let op = n.node.op_type();
    let mut outputs = no_outputs(n);
    if op == "GRU" && n.version < 3 {
        return Ok(outputs);
    }
    let first = n.version < 7;
    let directions = match string_attr(n, "direction").unwrap_or(b"forward") {
        b"forward" | b"reverse" => Dimension::value(1),
        b"bidirectional" => Dimension::value(2),
        _ => Dimension::unknown(),
    };
    let hidden = match int_attr(n, "hidden_size") {
        Some(h) if h > 0 => Dimension::value(h),
        _ => Dimension::unknown(),
    };
    let batch_first = n.version >= 14 && int_attr(n, "layout").unwrap_or(0) != 0;
    let (mut seq, mut batch) = (Dimension::unknown(), Dimension::unknown());
    if let Some(x) = shape_in(n, 0) {
        if x.dim.len() != 3 {
            return Err("First input tensor must have rank 3".to_string());
        }
        let (s, b) = if batch_first { (1, 0) } else { (0, 1) };
        seq = owned_dim(&x.dim[s]);
        batch = owned_dim(&x.dim[b]);
    }
    let count = n.node.output.len().min(3);
    if count == 0 {
        return Ok(outputs);
    }
    let elem = required_elem(n, 0)?;
    let shapes = !first || int_attr(n, "output_sequence").unwrap_or(0) != 0;
    for i in 0..count {
        let dims = match (i, batch_first) {
            (0, false) => vec![
                seq.clone(),
                directions.clone(),
                batch.clone(),
                hidden.clone(),
            ],
            (0, true) => vec![
                batch.clone(),
                seq.clone(),
                directions.clone(),
                hidden.clone(),
            ],
            (_, false) => vec![directions.clone(), batch.clone(), hidden.clone()],
            (_, true) => vec![batch.clone(), directions.clone(), hidden.clone()],
        };
        set(&mut outputs, i, elem, shapes.then(|| shape_of(dims)));
    }
    Ok(outputs)
}
