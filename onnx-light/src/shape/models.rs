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
        ("", "RotaryEmbedding") => rotary_embedding(n)?,
        ("", "LinearAttention") => linear_attention(n)?,
        ("", "CausalConvWithState") => causal_conv_with_state(n)?,
        ("ai.onnx.preview", "FlexAttention") => flex_attention(n)?,
        ("ai.onnx.preview.training", "Adagrad") => optimizer(n, 2)?,
        ("ai.onnx.preview.training", "Momentum") => optimizer(n, 2)?,
        ("ai.onnx.preview.training", "Adam") => optimizer(n, 3)?,
        // `onnx` has no inference for `Gradient`.
        ("ai.onnx.preview.training", "Gradient") => no_outputs(n),
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
/// From opset 25 the attributes and the cache inputs and outputs are checked after
/// the types are inferred.
fn attention(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let outputs = attention_types(n)?;
    if n.version >= 25 {
        check_attention_25(n)?;
    }
    Ok(outputs)
}

/// `Attention`-25's checks, in `onnx`'s order.
fn check_attention_25(n: &Node<'_, '_>) -> Result<(), String> {
    for name in ["left_window_size", "right_window_size"] {
        let size = int_attr(n, name).unwrap_or(-1);
        if size < -1 {
            return Err(format!("{name} must be -1 or nonnegative, got {size}"));
        }
    }
    let q_rank = shape_in(n, 0).map(|s| s.dim.len());
    let (q_heads, kv_heads) = (int_attr(n, "q_num_heads"), int_attr(n, "kv_num_heads"));
    if q_rank == Some(3) {
        if let (Some(q), Some(kv)) = (q_heads, kv_heads) {
            if q <= 0 || kv <= 0 {
                return Err("q_num_heads and kv_num_heads must be positive for 3D inputs.".into());
            }
        }
    }
    if has_input(n, 4) != has_input(n, 5) {
        return Err("past_key and past_value must be provided together.".to_string());
    }
    if has_output(n, 1) != has_output(n, 2) {
        return Err("present_key and present_value must be requested together.".to_string());
    }
    if has_input(n, 6) && (has_input(n, 4) || has_output(n, 1)) {
        return Err(
            "nonpad_kv_seqlen cannot be combined with past or present cache tensors.".to_string(),
        );
    }
    if q_rank == Some(4)
        && (attribute(n, "q_num_heads").is_some() || attribute(n, "kv_num_heads").is_some())
    {
        return Err("q_num_heads and kv_num_heads must not be specified for 4D inputs.".into());
    }
    Ok(())
}

/// The head counts 3D inputs must have as attributes.
fn heads_3d(q_heads: Option<i64>, kv_heads: Option<i64>) -> Result<(i64, i64), String> {
    let Some(q) = q_heads else {
        return Err("3D inputs expected to have q_num_heads attribute.".to_string());
    };
    let Some(kv) = kv_heads else {
        return Err("3D inputs expected to have kv_num_heads attribute.".to_string());
    };
    Ok((q, kv))
}

/// The output types of `Attention`, without `Attention`-25's extra checks.
fn attention_types(n: &Node<'_, '_>) -> Result<Outputs, String> {
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
            heads_3d(q_heads, kv_heads)?;
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
                let (qh, kh) = heads_3d(q_heads, kv_heads)?;
                if qh <= 0 || kh <= 0 {
                    return Err("q_num_heads and kv_num_heads must be positive.".to_string());
                }
                let v_head_size = checked_div(v.dim[2].as_value().unwrap_or(0), kh)?;
                y = Some(vec![
                    owned_dim(&q.dim[0]),
                    owned_dim(&q.dim[1]),
                    Dimension::value(checked_mul(v_head_size, qh)?),
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
                let total = Dimension::value(checked_add(kv_length, past)?);
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

fn rotary_embedding(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let outputs = same_as_input(n, 0)?;
    if let Some(x) = shape_in(n, 0) {
        let rank = x.dim.len();
        if !(3..=4).contains(&rank) {
            return Err("Input tensor must have at least 3 and at most 4 dimensions".to_string());
        }
        if rank == 3 && attribute(n, "num_heads").is_none() {
            return Err("Input shape is 3D, num_heads attribute must be provided".to_string());
        }
    }
    Ok(outputs)
}

/// Checks that input `i`, when its shape is known, has rank `rank`, and gives its shape.
fn ranked<'n, 'a>(
    n: &Node<'n, 'a>,
    i: usize,
    rank: usize,
) -> Result<Option<&'n TensorShapeProto<'a>>, String> {
    match shape_in(n, i) {
        Some(s) if s.dim.len() != rank => Err(format!(
            "Input {i} expected to have rank {rank} but has rank {}",
            s.dim.len()
        )),
        s => Ok(s),
    }
}

/// `d / heads` when `d` is a known size, which `heads` must divide.
fn per_head(d: &Dimension<'_>, heads: i64, what: &str) -> Result<Dimension<'static>, String> {
    match d.as_value() {
        Some(v) if heads != 0 && v % heads == 0 => Ok(Dimension::value(v / heads)),
        Some(v) => Err(format!(
            "Packed {what} last dim ({v}) must be divisible by the number of heads ({heads})"
        )),
        None => Ok(Dimension::unknown()),
    }
}

/// `LinearAttention`: packed 3D query/key/value `(B, T, H * d)`, the 4D state
/// `(B, H_kv, d_k, d_v)`. Batch, sequence and head sizes are unified across the inputs
/// that have them; the output is `(B, T, H_q * d_v)`.
fn linear_attention(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let rule = string_attr(n, "update_rule").unwrap_or(b"gated_delta");
    let (decay, beta) = match rule {
        b"linear" => (false, false),
        b"gated" => (true, false),
        b"delta" => (false, true),
        b"gated_delta" => (true, true),
        _ => {
            return Err(
                "update_rule must be one of: 'linear', 'gated', 'delta', 'gated_delta'".to_string(),
            )
        }
    };
    let q_heads = int_attr(n, "q_num_heads").unwrap_or(0);
    let kv_heads = int_attr(n, "kv_num_heads").unwrap_or(0);
    if q_heads <= 0 {
        return Err(format!("q_num_heads must be > 0, got {q_heads}"));
    }
    if kv_heads <= 0 {
        return Err(format!("kv_num_heads must be > 0, got {kv_heads}"));
    }
    if q_heads % kv_heads != 0 {
        return Err(format!(
            "q_num_heads ({q_heads}) must be a multiple of kv_num_heads ({kv_heads})"
        ));
    }
    for (i, needed, what) in [(4, decay, "decay"), (5, beta, "beta")] {
        match (needed, has_input(n, i)) {
            (true, false) => return Err(format!("this update_rule requires {what} input")),
            (false, true) => return Err(format!("this update_rule forbids {what} input")),
            _ => {}
        }
    }
    let elem = required_elem(n, 0)?;
    if n.node.output.len() < 2 {
        return Err("Output 1 is out of bounds.".to_string());
    }
    let state_elem = elem_of(n.inputs.get(3)).unwrap_or(elem);
    let (mut batch, mut time) = (Dimension::unknown(), Dimension::unknown());
    let (mut d_k, mut d_v) = (Dimension::unknown(), Dimension::unknown());
    let mut kv = Dimension::value(kv_heads);
    for (i, heads, what) in [
        (0, q_heads, "query"),
        (1, kv_heads, "key"),
        (2, kv_heads, "value"),
    ] {
        if let Some(s) = ranked(n, i, 3)? {
            unify(&s.dim[0], &mut batch)?;
            unify(&s.dim[1], &mut time)?;
            let d = per_head(&s.dim[2], heads, what)?;
            unify(&d, if i == 2 { &mut d_v } else { &mut d_k })?;
        }
    }
    if let Some(s) = ranked(n, 3, 4)? {
        unify(&s.dim[0], &mut batch)?;
        unify(&s.dim[1], &mut kv)?;
        unify(&s.dim[2], &mut d_k)?;
        unify(&s.dim[3], &mut d_v)?;
    }
    for i in [4, 5] {
        let Some(s) = ranked(n, i, 3)? else {
            continue;
        };
        unify(&s.dim[0], &mut batch)?;
        unify(&s.dim[1], &mut time)?;
        let Some(last) = s.dim[2].as_value() else {
            continue;
        };
        let fits = if i == 4 {
            // Per head, or per key dimension of each head.
            last == kv_heads
                || match d_k.as_value() {
                    Some(d) => Some(last) == kv_heads.checked_mul(d),
                    None => last % kv_heads == 0,
                }
        } else {
            last == 1 || last == kv_heads
        };
        if !fits {
            return Err(format!(
                "input {i} last dim ({last}) does not fit the heads"
            ));
        }
    }
    let hidden = match d_v.as_value() {
        Some(d) => Dimension::value(d.wrapping_mul(q_heads)),
        None => Dimension::unknown(),
    };
    let mut outputs = no_outputs(n);
    set(
        &mut outputs,
        0,
        elem,
        Some(shape_of(vec![batch.clone(), time, hidden])),
    );
    set(
        &mut outputs,
        1,
        state_elem,
        Some(shape_of(vec![batch, kv, d_k, d_v])),
    );
    Ok(outputs)
}

/// `CausalConvWithState`: the output is the input's type; the state is
/// `(batch, channels, k - 1)` for a kernel of size `k`, unified with the past state.
fn causal_conv_with_state(n: &Node<'_, '_>) -> Result<Outputs, String> {
    match string_attr(n, "activation").unwrap_or(b"none") {
        b"none" | b"silu" | b"swish" => {}
        _ => return Err("CausalConvWithState: unsupported activation value".to_string()),
    }
    let elem = required_elem(n, 0)?;
    if n.node.output.len() < 2 {
        return Err("Output 1 is out of bounds.".to_string());
    }
    let x = ranked(n, 0, 3)?;
    let (mut batch, mut channels, mut carry) = (
        Dimension::unknown(),
        Dimension::unknown(),
        Dimension::unknown(),
    );
    if let Some(x) = x {
        batch = owned_dim(&x.dim[0]);
        channels = owned_dim(&x.dim[1]);
    }
    if let Some(w) = ranked(n, 1, 3)? {
        unify(&w.dim[0], &mut channels)?;
        unify(&w.dim[1], &mut Dimension::value(1))?;
        if let Some(k) = w.dim[2].as_value() {
            if k < 1 {
                return Err(format!("Kernel size k must be >= 1, got {k}"));
            }
            carry = Dimension::value(k - 1);
        }
    }
    if let Some(b) = ranked(n, 2, 1)? {
        unify(&b.dim[0], &mut channels)?;
    }
    if let Some(p) = ranked(n, 3, 3)? {
        unify(&p.dim[0], &mut batch)?;
        unify(&p.dim[1], &mut channels)?;
        unify(&p.dim[2], &mut carry)?;
    }
    let mut outputs = no_outputs(n);
    set(&mut outputs, 0, elem, x.map(owned));
    set(
        &mut outputs,
        1,
        elem,
        Some(shape_of(vec![batch, channels, carry])),
    );
    Ok(outputs)
}

/// `FlexAttention` (preview): rank-4 query, key and value of one element type give
/// `(batch, q_heads, q_length, v_head_size)`, the batch merged across the three. Nothing
/// is inferred while an input's type is unknown.
fn flex_attention(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elems: Option<Vec<i32>> = (0..3).map(|i| elem_of(n.inputs.get(i))).collect();
    let Some(elems) = elems else {
        return Ok(no_outputs(n));
    };
    if elems[1] != elems[0] || elems[2] != elems[0] {
        return Err("Inputs query, key, and value must have the same element type.".to_string());
    }
    if let Some(p) = int_attr(n, "softmax_precision") {
        if ![1, 10, 11, 16].contains(&p) {
            return Err("softmax_precision must be float/float16/bfloat16/double.".to_string());
        }
    }
    let shapes: Option<Vec<&TensorShapeProto<'_>>> = (0..3).map(|i| shape_in(n, i)).collect();
    let Some([q, k, v]) = shapes
        .filter(|s| s.iter().all(|s| s.dim.len() == 4))
        .and_then(|s| <[_; 3]>::try_from(s).ok())
    else {
        return Err("FlexAttention requires rank-4 inputs.".to_string());
    };
    let same = |a: &Dimension<'_>, b: &Dimension<'_>| match (a.as_value(), b.as_value()) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    };
    if !same(&q.dim[3], &k.dim[3]) {
        return Err("Query and key must share the same embedding dimension.".to_string());
    }
    if !same(&k.dim[1], &v.dim[1]) {
        return Err("Key and value must share the same head dimension.".to_string());
    }
    if !same(&k.dim[2], &v.dim[2]) {
        return Err("Key and value must share the same sequence length.".to_string());
    }
    if let (Some(hq), Some(hkv)) = (q.dim[1].as_value(), k.dim[1].as_value()) {
        if hq != hkv && hq.checked_rem(hkv).is_none_or(|r| r != 0) {
            return Err(
                "q_num_heads must be a multiple of kv_num_heads when they differ.".to_string(),
            );
        }
    }
    let mut batch = owned_dim(&q.dim[0]);
    unify(&k.dim[0], &mut batch)?;
    unify(&v.dim[0], &mut batch)?;
    let dims = vec![
        batch,
        owned_dim(&q.dim[1]),
        owned_dim(&q.dim[2]),
        owned_dim(&v.dim[3]),
    ];
    let mut outputs = no_outputs(n);
    set(&mut outputs, 0, elems[0], Some(shape_of(dims)));
    Ok(outputs)
}

/// The training optimizers: inputs `R, T`, then `groups` lists of `n` tensors after
/// the tensors to optimize and their gradients (`Adagrad`, `Momentum`: one list,
/// `Adam`: two); each new tensor and each new state takes the type of the one it
/// replaces.
fn optimizer(n: &Node<'_, '_>, states: usize) -> Result<Outputs, String> {
    let count = n.node.input.len();
    let lists = states + 1;
    let Some(tensors) = count.checked_sub(2) else {
        return Err("Input 2 is out of bounds.".to_string());
    };
    // `Adagrad` does not check that the inputs divide evenly.
    if n.node.op_type() != "Adagrad" && tensors % lists != 0 {
        return Err(format!(
            "The inputs of {} should be R, T and {lists} lists of tensors",
            n.node.op_type()
        ));
    }
    let k = tensors / lists;
    let mut outputs = no_outputs(n);
    // Output `i` of list `l` (0: the tensors, then the states) from its input.
    for l in 0..states {
        let source = if l == 0 { 2 } else { 2 + (l + 1) * k };
        for i in 0..k {
            let at = l * k + i;
            let elem = required_elem(n, source + i)?;
            if at >= outputs.len() {
                return Err(format!("Output {at} is out of bounds."));
            }
            set(&mut outputs, at, elem, shape_in(n, source + i).map(owned));
        }
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::node;
    use crate::onnx::{
        AttributeProto, DataType, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
        TypeProto, ValueInfoProto,
    };

    /// An input: name, element type, dimensions (`"?"` unknown, a number a size,
    /// anything else a name; `None` for an unknown shape).
    type Input<'t> = (&'t str, DataType, Option<&'t [&'t str]>);

    /// The types strict inference gives a one-node model's values (`name: type`), or
    /// its error.
    fn run(
        node: NodeProto<'static>,
        opset: (&str, i64),
        inputs: &[Input<'_>],
    ) -> Result<Vec<String>, String> {
        let mut g = GraphProto::named("g");
        for &(name, elem, dims) in inputs {
            let dims = dims.map(|ds| {
                ds.iter()
                    .map(|d| match d.parse::<i64>() {
                        Ok(v) => Dimension::value(v),
                        Err(_) if *d == "?" => Dimension::unknown(),
                        Err(_) => Dimension::param(d.to_string()),
                    })
                    .collect::<Vec<_>>()
            });
            g.input.push(ValueInfoProto {
                name: Some(name.to_string().into()),
                r#type: Some(TypeProto::tensor(
                    elem,
                    dims.map(crate::onnx::TensorShapeProto::new),
                )),
                ..ValueInfoProto::default()
            });
        }
        g.node.push(node);
        let mut opsets = vec![OperatorSetIdProto::new("", 25)];
        if opset.0.is_empty() {
            opsets[0] = OperatorSetIdProto::new("", opset.1);
        } else {
            opsets.push(OperatorSetIdProto::new(opset.0.to_string(), opset.1));
        }
        let m = ModelProto::new(g, opsets);
        crate::shape::test_support::strict_value_types(m).map_err(|e| e.to_string())
    }

    fn in_domain(mut n: NodeProto<'static>, domain: &str) -> NodeProto<'static> {
        n.domain = Some(domain.to_string().into());
        n
    }

    const F: DataType = DataType::Float;
    const I: DataType = DataType::Int64;

    #[test]
    fn losses_reduce_to_a_scalar_or_keep_the_target_shape() {
        let nll = |reduction: &str| {
            node("NegativeLogLikelihoodLoss", &["x", "t"], &["y"]).with_attribute(
                AttributeProto::string("reduction", reduction.as_bytes().to_vec()),
            )
        };
        let x: Input<'_> = ("x", F, Some(&["n", "5", "d"]));
        let t: Input<'_> = ("t", I, Some(&["m", "?"]));
        assert_eq!(run(nll("mean"), ("", 22), &[x, t]).unwrap(), ["y: float"]);
        // Opset 22 unifies the target's dimensions with the input's; 13 takes the input's.
        assert_eq!(
            run(nll("none"), ("", 22), &[x, t]).unwrap(),
            ["y: float[m,d]"]
        );
        assert_eq!(
            run(nll("none"), ("", 13), &[x, t]).unwrap(),
            ["y: float[n,d]"]
        );
        let bad: Input<'_> = ("t", I, Some(&["4", "6", "1"]));
        assert!(run(nll("none"), ("", 22), &[x, bad]).is_err());
        // Without both shapes, only the element type.
        let t_unknown: Input<'_> = ("t", I, None);
        assert_eq!(
            run(nll("mean"), ("", 22), &[x, t_unknown]).unwrap(),
            ["y: float[]"]
        );

        let sce = node("SoftmaxCrossEntropyLoss", &["x", "t"], &["y", "log_prob"])
            .with_attribute(AttributeProto::string("reduction", b"none".to_vec()));
        assert_eq!(
            run(sce, ("", 13), &[x, t]).unwrap(),
            ["y: float[m,unk__0]", "log_prob: float[n,5,d]"]
        );
    }

    #[test]
    fn attention_in_4d_and_3d_with_past_and_qk_output() {
        let q: Input<'_> = ("q", F, Some(&["b", "3", "4", "8"]));
        let k: Input<'_> = ("k", F, Some(&["b", "3", "6", "8"]));
        let v: Input<'_> = ("v", F, Some(&["b", "3", "6", "5"]));
        let pk: Input<'_> = ("pk", F, Some(&["b", "3", "7", "8"]));
        let pv: Input<'_> = ("pv", F, Some(&["b", "3", "7", "5"]));
        let full = node(
            "Attention",
            &["q", "k", "v", "", "pk", "pv"],
            &["y", "ck", "cv", "qk"],
        );
        assert_eq!(
            run(full, ("", 23), &[q, k, v, pk, pv]).unwrap(),
            [
                "y: float[b,3,4,5]",
                "ck: float[b,3,13,8]",
                "cv: float[b,3,13,5]",
                "qk: float[b,3,4,13]"
            ]
        );
        // A symbolic key/value length counts as 0 in the qk output, as in onnx.
        let v_sym: Input<'_> = ("v", F, Some(&["b", "3", "s", "5"]));
        let qk = node("Attention", &["q", "k", "v"], &["y", "", "", "qk"]);
        assert_eq!(
            run(qk.clone(), ("", 23), &[q, k, v_sym]).unwrap(),
            ["y: float[b,3,4,5]", "qk: float[b,3,4,0]"]
        );
        let q3: Input<'_> = ("q", F, Some(&["b", "4", "24"]));
        let k3: Input<'_> = ("k", F, Some(&["b", "6", "16"]));
        let v3: Input<'_> = ("v", F, Some(&["b", "6", "10"]));
        let heads = |n: NodeProto<'static>, q: i64, kv: i64| {
            n.with_attribute(AttributeProto::int("q_num_heads", q))
                .with_attribute(AttributeProto::int("kv_num_heads", kv))
        };
        assert_eq!(
            run(heads(qk.clone(), 3, 2), ("", 24), &[q3, k3, v3]).unwrap(),
            ["y: float[b,4,15]", "qk: float[b,3,4,6]"]
        );
        // 3D inputs need positive head counts; opset 25 refuses them on 4D inputs.
        assert!(run(heads(qk.clone(), 3, 0), ("", 24), &[q3, k3, v3]).is_err());
        assert!(run(qk.clone(), ("", 24), &[q3, k3, v3]).is_err());
        assert!(run(heads(qk.clone(), 3, 2), ("", 25), &[q, k, v]).is_err());
        assert!(run(heads(qk, 3, 2), ("", 24), &[q, k, v]).is_ok());
    }

    #[test]
    fn recurrent_layers_by_layout_and_version() {
        let x: Input<'_> = ("x", F, Some(&["s", "b", "4"]));
        let lstm = || {
            node("LSTM", &["x"], &["y", "yh", "yc"])
                .with_attribute(AttributeProto::int("hidden_size", 3))
                .with_attribute(AttributeProto::string(
                    "direction",
                    b"bidirectional".to_vec(),
                ))
        };
        assert_eq!(
            run(lstm(), ("", 22), &[x]).unwrap(),
            ["y: float[s,2,b,3]", "yh: float[2,b,3]", "yc: float[2,b,3]"]
        );
        // Batch first: `x` is read as `[batch, seq, input]`.
        let batch_first = lstm().with_attribute(AttributeProto::int("layout", 1));
        assert_eq!(
            run(batch_first.clone(), ("", 14), &[x]).unwrap(),
            ["y: float[s,b,2,3]", "yh: float[s,2,3]", "yc: float[s,2,3]"]
        );
        // Before opset 14 there is no layout; opset 1 gives shapes only with
        // output_sequence.
        assert_eq!(
            run(batch_first, ("", 7), &[x]).unwrap(),
            ["y: float[s,2,b,3]", "yh: float[2,b,3]", "yc: float[2,b,3]"]
        );
        assert_eq!(
            run(lstm(), ("", 1), &[x]).unwrap(),
            ["y: float[]", "yh: float[]", "yc: float[]"]
        );
        let gru = node("GRU", &["x"], &["y"]);
        assert!(run(gru.clone(), ("", 1), &[x]).unwrap().is_empty());
        let flat: Input<'_> = ("x", F, Some(&["s", "4"]));
        assert!(run(gru, ("", 22), &[flat]).is_err());
    }

    #[test]
    fn linear_attention_and_causal_conv_unify_their_inputs() {
        let la = node("LinearAttention", &["q", "k", "v"], &["y", "state"])
            .with_attribute(AttributeProto::int("q_num_heads", 4))
            .with_attribute(AttributeProto::int("kv_num_heads", 2))
            .with_attribute(AttributeProto::string("update_rule", b"linear".to_vec()));
        let q: Input<'_> = ("q", F, Some(&["b", "t", "32"]));
        let k: Input<'_> = ("k", F, Some(&["2", "5", "16"]));
        let v: Input<'_> = ("v", F, Some(&["?", "?", "12"]));
        assert_eq!(
            run(la.clone(), ("", 27), &[q, k, v]).unwrap(),
            ["y: float[2,5,24]", "state: float[2,2,8,6]"]
        );
        let odd: Input<'_> = ("k", F, Some(&["2", "5", "15"]));
        assert!(run(la, ("", 27), &[q, odd, v]).is_err());
        // The default rule needs decay and beta.
        let gated = node("LinearAttention", &["q", "k", "v"], &["y", "state"])
            .with_attribute(AttributeProto::int("q_num_heads", 4))
            .with_attribute(AttributeProto::int("kv_num_heads", 2));
        assert!(run(gated, ("", 27), &[q, k, v]).is_err());

        let conv = node("CausalConvWithState", &["x", "w"], &["y", "state"]);
        let x: Input<'_> = ("x", F, Some(&["b", "c", "l"]));
        let w: Input<'_> = ("w", F, Some(&["m", "1", "4"]));
        assert_eq!(
            run(conv.clone(), ("", 27), &[x, w]).unwrap(),
            ["y: float[b,c,l]", "state: float[b,c,3]"]
        );
        let not_depthwise: Input<'_> = ("w", F, Some(&["4", "2", "4"]));
        assert!(run(conv, ("", 27), &[x, not_depthwise]).is_err());

        let rope = node("RotaryEmbedding", &["x", "cos", "sin"], &["y"]);
        let x3: Input<'_> = ("x", F, Some(&["b", "s", "32"]));
        assert!(run(rope.clone(), ("", 23), &[x3]).is_err());
        let rope = rope.with_attribute(AttributeProto::int("num_heads", 4));
        assert_eq!(run(rope, ("", 23), &[x3]).unwrap(), ["y: float[b,s,32]"]);
    }

    #[test]
    fn flex_attention_and_the_training_optimizers() {
        let flex = in_domain(
            node("FlexAttention", &["q", "k", "v"], &["y"]),
            "ai.onnx.preview",
        );
        let q: Input<'_> = ("q", F, Some(&["?", "8", "l", "16"]));
        let k: Input<'_> = ("k", F, Some(&["2", "4", "6", "16"]));
        let v: Input<'_> = ("v", F, Some(&["2", "4", "6", "32"]));
        let preview = ("ai.onnx.preview", 1);
        assert_eq!(
            run(flex.clone(), preview, &[q, k, v]).unwrap(),
            ["y: float[2,8,l,32]"]
        );
        // Three query heads cannot share four key/value heads.
        let q3: Input<'_> = ("q", F, Some(&["2", "3", "8", "16"]));
        assert!(run(flex.clone(), preview, &[q3, k, v]).is_err());
        let v_unknown: Input<'_> = ("v", F, None);
        assert!(run(flex, preview, &[q, k, v_unknown]).is_err());

        let training = ("ai.onnx.preview.training", 1);
        let r: Input<'_> = ("r", F, Some(&[]));
        let t: Input<'_> = ("t", I, Some(&[]));
        let x: Input<'_> = ("x", DataType::Double, Some(&["n", "3"]));
        let g: Input<'_> = ("g", DataType::Double, Some(&["n", "3"]));
        let v1: Input<'_> = ("v1", F, Some(&["7"]));
        let h1: Input<'_> = ("h1", DataType::Float16, Some(&["9"]));
        let adam = node(
            "Adam",
            &["r", "t", "x", "g", "v1", "h1"],
            &["nx", "nv", "nh"],
        );
        let adam = in_domain(adam, "ai.onnx.preview.training");
        assert_eq!(
            run(adam, training, &[r, t, x, g, v1, h1]).unwrap(),
            ["nx: double[n,3]", "nv: float[7]", "nh: float16[9]"]
        );
        // Momentum's inputs must come in threes after R and T.
        let momentum = node("Momentum", &["r", "t", "x", "g"], &["nx", "nv"]);
        let momentum = in_domain(momentum, "ai.onnx.preview.training");
        assert!(run(momentum, training, &[r, t, x, g]).is_err());
    }

    #[test]
    fn extreme_sizes_and_head_counts_do_not_panic() {
        let huge = i64::MAX.to_string();
        let min = i64::MIN.to_string();
        let q: Input<'_> = ("q", F, Some(&["2", "4", &huge]));
        let k: Input<'_> = ("k", F, Some(&["2", "6", &min]));
        let v: Input<'_> = ("v", F, Some(&["2", "6", &huge]));
        for (qh, kvh) in [(i64::MAX, 1), (3, i64::MAX), (i64::MIN, -1), (1, 1)] {
            let attention = node("Attention", &["q", "k", "v"], &["y", "", "", "qk"])
                .with_attribute(AttributeProto::int("q_num_heads", qh))
                .with_attribute(AttributeProto::int("kv_num_heads", kvh));
            let _ = run(attention, ("", 24), &[q, k, v]);
            let la = node("LinearAttention", &["q", "k", "v"], &["y", "s"])
                .with_attribute(AttributeProto::int("q_num_heads", qh))
                .with_attribute(AttributeProto::int("kv_num_heads", kvh))
                .with_attribute(AttributeProto::string("update_rule", b"linear".to_vec()));
            let _ = run(la, ("", 27), &[q, k, v]);
        }
        let q4: Input<'_> = ("q", F, Some(&["2", &min, "8", "16"]));
        let k4: Input<'_> = ("k", F, Some(&["2", "-1", "6", "16"]));
        let v4: Input<'_> = ("v", F, Some(&["2", "-1", "6", &huge]));
        let flex = in_domain(
            node("FlexAttention", &["q", "k", "v"], &["y"]),
            "ai.onnx.preview",
        );
        assert!(run(flex, ("ai.onnx.preview", 1), &[q4, k4, v4]).is_err());
        let w: Input<'_> = ("w", F, Some(&["4", "1", &min]));
        let x: Input<'_> = ("x", F, Some(&["2", "4", "8"]));
        let conv = node("CausalConvWithState", &["x", "w"], &["y", "s"]);
        assert!(run(conv, ("", 27), &[x, w]).is_err());
    }
}
