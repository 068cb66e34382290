//! The inference rules of convolutions, poolings and normalizations: `Conv`,
//! `ConvTranspose`, `ConvInteger`, `QLinearConv`, `DeformConv`, `AveragePool`, `MaxPool`,
//! `LpPool`, `MaxUnpool`, `MaxRoiPool`, `RoiAlign`, and the normalizations
//! (`BatchNormalization`, `LayerNormalization`, `RMSNormalization`,
//! `GroupNormalization`, `MeanVarianceNormalization`), as `onnx` infers them.

use super::kit::*;
use super::types::{shape_of, tensor_type};
use crate::onnx::{DataType, Dimension, TensorShapeProto};
use crate::ProtoEnum;

/// The rule's outcome: `Ok(None)` for an operator this family does not know.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let v = n.version;
    let outputs = match n.node.op_type() {
        "Conv" => {
            let elem = required_elem(n, 0)?;
            one(elem, conv_pool(n, &conv_spec(v >= 22, 1))?)
        }
        "DeformConv" => {
            let elem = required_elem(n, 0)?;
            one(elem, conv_pool(n, &conv_spec(v >= 22, 1))?)
        }
        // ConvInteger-10 and QLinearConv-10 use the rounding of the latest Conv.
        "ConvInteger" => {
            tensor_input(n, 0)?;
            tensor_input(n, 1)?;
            one(DataType::Int32.to_i32(), conv_pool(n, &conv_spec(true, 1))?)
        }
        "QLinearConv" => qlinear_conv(n)?,
        "AveragePool" => pool(n, v >= 11, v >= 22)?,
        "MaxPool" => pool(n, v >= 10, v >= 22)?,
        // LpPool-1 has no inference function.
        "LpPool" if v < 2 => vec![None; n.node.output.len()],
        "LpPool" => pool(n, v >= 18, v >= 22)?,
        "ConvTranspose" => conv_transpose(n)?,
        "MaxUnpool" => max_unpool(n)?,
        "RoiAlign" => roi_align(n)?,
        "MaxRoiPool" => max_roi_pool(n)?,
        "BatchNormalization" => batch_norm(n)?,
        "LayerNormalization" => layer_norm(n)?,
        "RMSNormalization" => {
            let outputs = same_as_input(n, 0)?;
            if let Some(s) = shape_in(n, 0) {
                normalized_axis(n, s.dim.len())?;
            }
            outputs
        }
        // Inferred by `onnx` through its function body, which gives nothing.
        "GroupNormalization" => vec![None; n.node.output.len()],
        "MeanVarianceNormalization" => mean_variance_norm(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

/// The string of attribute `name`, when it is given.
fn string<'n>(n: &'n Node<'_, '_>, name: &str) -> Option<&'n [u8]> {
    attribute(n, name).map(|a| a.s.as_deref().unwrap_or_default())
}

fn overflow() -> String {
    "Integer overflow while inferring a dimension".to_string()
}

fn add(a: i64, b: i64) -> Result<i64, String> {
    a.checked_add(b).ok_or_else(overflow)
}

fn sub(a: i64, b: i64) -> Result<i64, String> {
    a.checked_sub(b).ok_or_else(overflow)
}

fn mul(a: i64, b: i64) -> Result<i64, String> {
    a.checked_mul(b).ok_or_else(overflow)
}

fn div(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("Division by zero while inferring a dimension".to_string());
    }
    a.checked_div(b).ok_or_else(overflow)
}

/// Input `i` must have a tensor type (rules that read it raise otherwise).
fn tensor_input(n: &Node<'_, '_>, i: usize) -> Result<(), String> {
    match n.inputs.get(i).copied().flatten().map(|t| t.value.as_ref()) {
        Some(Some(crate::onnx::TypeValue::TensorType(_))) => Ok(()),
        _ => Err(format!("Input {i} is expected to have a tensor type")),
    }
}

/// How a convolution or pooling reads its kernel and rounds its output sizes.
struct ConvSpec {
    /// Whether the `dilations` attribute counts (pooling before it existed ignores it).
    dilation: bool,
    /// The input holding the weights when the kernel shape may come from them; `None`
    /// when the `kernel_shape` attribute is required.
    weights: Option<usize>,
    /// The rounding of `ceil_mode` from opset 22: windows starting in the end padding
    /// are dropped (before, an exact ceiling division).
    drop_padded_windows: bool,
}

fn conv_spec(drop_padded_windows: bool, weights: usize) -> ConvSpec {
    ConvSpec {
        dilation: true,
        weights: Some(weights),
        drop_padded_windows,
    }
}

/// Spatial attributes that must have one value per spatial axis.
fn per_axis(
    n: &Node<'_, '_>,
    name: &str,
    count: usize,
    positive: bool,
) -> Result<Option<Vec<i64>>, String> {
    let Some(values) = attr_ints(n, name) else {
        return Ok(None);
    };
    if values.len() != count {
        return Err(format!("Attribute {name} has incorrect size"));
    }
    if positive && values.iter().any(|&v| v <= 0) {
        return Err(format!(
            "Attribute {name} must only contain positive values"
        ));
    }
    Ok(Some(values))
}

/// The `pads` attribute: twice the spatial rank, none negative.
fn explicit_pads(n: &Node<'_, '_>, count: usize) -> Result<Option<Vec<i64>>, String> {
    let Some(pads) = attr_ints(n, "pads") else {
        return Ok(None);
    };
    if pads.len() != count * 2 {
        return Err("Attribute pads has incorrect size".to_string());
    }
    if pads.iter().any(|&p| p < 0) {
        return Err("Attribute pads must not contain negative values".to_string());
    }
    Ok(Some(pads))
}

/// The output shape of a convolution or pooling over input 0 (`None` when not known):
/// `onnx`'s `convPoolShapeInference`.
fn conv_pool(
    n: &Node<'_, '_>,
    spec: &ConvSpec,
) -> Result<Option<TensorShapeProto<'static>>, String> {
    let Some(input) = shape_in(n, 0) else {
        return Ok(None);
    };
    let weights = match spec.weights {
        Some(w) => match shape_in(n, w) {
            Some(s) => Some(s),
            None => return Ok(None),
        },
        None => None,
    };
    if input.dim.len() < 3 {
        return Err("Input tensor must have at least 3 dimensions".to_string());
    }
    let rank = input.dim.len() - 2;
    let dilations = if spec.dilation {
        per_axis(n, "dilations", rank, true)?
    } else {
        None
    }
    .unwrap_or_else(|| vec![1; rank]);
    let strides = per_axis(n, "strides", rank, true)?.unwrap_or_else(|| vec![1; rank]);
    let kernel = match (attr_ints(n, "kernel_shape"), weights) {
        (Some(k), _) => {
            if k.len() != rank {
                return Err("Attribute kernel_shape has incorrect size".to_string());
            }
            k
        }
        (None, None) => return Err("Attribute kernel_shape must be specified".to_string()),
        (None, Some(w)) => {
            let mut k = Vec::new();
            for d in w.dim.iter().skip(2) {
                match d.as_value() {
                    Some(v) => k.push(v),
                    None => return Ok(None),
                }
            }
            if k.len() != rank {
                return Err(format!(
                    "Number of spatial dimensions in the weight tensor ({}) does not match the number of spatial dimensions in the input tensor ({rank}).",
                    k.len()
                ));
            }
            k
        }
    };
    if kernel.iter().any(|&k| k <= 0) {
        return Err("Attribute kernel_shape must only contain positive values".to_string());
    }
    let mut effective = Vec::with_capacity(rank);
    for (k, d) in kernel.iter().zip(&dilations) {
        effective.push(add(mul(sub(*k, 1)?, *d)?, 1)?);
    }
    let pads = match explicit_pads(n, rank)? {
        Some(p) => p,
        None => {
            let mut pads = vec![0; rank * 2];
            match string(n, "auto_pad") {
                Some(mode) if mode != b"VALID" => {
                    for i in 0..rank {
                        let stride = strides[i];
                        let mut residual = 0;
                        if stride > 1 {
                            let Some(size) = input.dim[2 + i].as_value() else {
                                continue;
                            };
                            if size < 0 {
                                continue;
                            }
                            residual = size % stride;
                        }
                        let total =
                            sub(effective[i], if residual == 0 { stride } else { residual })?
                                .max(0);
                        split_pad(&mut pads, i, rank, total, mode);
                    }
                }
                _ => {}
            }
            pads
        }
    };
    let mut dims = vec![owned_dim(&input.dim[0])];
    match weights {
        None => dims.push(owned_dim(&input.dim[1])),
        Some(w) => match w.dim.first() {
            Some(d) => dims.push(owned_dim(d)),
            None => return Err("Second input tensor has wrong dimension".to_string()),
        },
    }
    let ceil_mode = attr_int(n, "ceil_mode", 0);
    for i in 0..rank {
        let Some(size) = input.dim[2 + i].as_value() else {
            dims.push(Dimension::unknown());
            continue;
        };
        let padded = add(add(size, pads[i])?, pads[i + rank])?;
        let gap = sub(padded, effective[i])?;
        let s = strides[i];
        let out = if spec.drop_padded_windows {
            let numerator = if ceil_mode != 0 {
                add(gap, s - 1)?
            } else {
                gap
            };
            let mut out = add(div(numerator, s)?, 1)?;
            // As PyTorch: a last window starting in the end padding is dropped.
            if ceil_mode == 1 && mul(out - 1, s)? >= add(size, pads[i])? {
                out -= 1;
            }
            out
        } else {
            let mut positions = div(gap, s)?;
            if ceil_mode == 1 && gap % s > 0 {
                positions = add(positions, 1)?;
            }
            add(positions, 1)?
        };
        dims.push(Dimension::value(out));
    }
    Ok(Some(shape_of(dims)))
}

/// `AveragePool`, `MaxPool`, `LpPool`: the input's element type, and for `MaxPool`'s
/// second output the indices (int64) of the same shape.
fn pool(n: &Node<'_, '_>, dilation: bool, drop_padded_windows: bool) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let shape = conv_pool(
        n,
        &ConvSpec {
            dilation,
            weights: None,
            drop_padded_windows,
        },
    )?;
    let mut outputs = vec![Some(tensor_type(elem, shape.clone()))];
    if n.node.output.len() > 1 {
        outputs.push(Some(tensor_type(DataType::Int64.to_i32(), shape)));
    }
    Ok(outputs)
}

fn qlinear_conv(n: &Node<'_, '_>) -> Result<Outputs, String> {
    tensor_input(n, 0)?;
    tensor_input(n, 3)?;
    // Each zero point has its tensor's element type.
    for (zero, of) in [(2, 0), (5, 3)] {
        let z = n.inputs.get(zero).copied().flatten();
        let z_elem = z.and_then(|_| elem_of(n.inputs.get(zero))).unwrap_or(0);
        if z.is_none() || z_elem != elem_of(n.inputs.get(of)).unwrap_or(0) {
            return Err(format!(
                "input and zero_point pair is expected to have same type (inputs {of} and {zero})"
            ));
        }
    }
    let elem = required_elem(n, 7)?;
    Ok(one(elem, conv_pool(n, &conv_spec(true, 3))?))
}

/// `ConvTranspose`: `onnx`'s `convTransposeShapeInference`.
fn conv_transpose(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(input), Some(weights)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let group = attr_int(n, "group", 1);
    if group <= 0 {
        return Err(format!(
            "Attribute group must be > 0 for ConvTranspose. group={group}."
        ));
    }
    if input.dim.len() < 3 {
        return Err(format!(
            "Input tensor must have at least 3 dimensions (N x C x D1...Dn). Got: {}",
            input.dim.len()
        ));
    }
    if let Some(c) = input.dim[1].as_value() {
        if c % group != 0 {
            return Err(format!(
                "Input channels C must be divisible by group for ConvTranspose. C={c} group={group}."
            ));
        }
    }
    if weights.dim.len() < 3 {
        return Err("Weight tensor must have at least 3 dimensions".to_string());
    }
    let rank = input.dim.len() - 2;
    let dilations = per_axis(n, "dilations", rank, true)?.unwrap_or_else(|| vec![1; rank]);
    let strides = per_axis(n, "strides", rank, true)?.unwrap_or_else(|| vec![1; rank]);
    let kernel = match attr_ints(n, "kernel_shape") {
        Some(k) => {
            if k.len() != rank {
                return Err("Attribute kernel_shape has incorrect size".to_string());
            }
            k
        }
        None => {
            let mut k = Vec::new();
            for d in weights.dim.iter().skip(2) {
                match d.as_value() {
                    Some(v) => k.push(v),
                    None => return Ok(one(elem, None)),
                }
            }
            if k.len() != rank {
                return Err(
                    "Weight tensor spatial rank does not match input tensor spatial rank"
                        .to_string(),
                );
            }
            k
        }
    };
    if kernel.iter().any(|&k| k <= 0) {
        return Err("Attribute kernel_shape must only contain positive values".to_string());
    }
    let mut effective = Vec::with_capacity(rank);
    for (k, d) in kernel.iter().zip(&dilations) {
        effective.push(add(mul(sub(*k, 1)?, *d)?, 1)?);
    }
    let auto_pad = string(n, "auto_pad");
    let pads = match explicit_pads(n, rank)? {
        Some(p) => {
            // The check came with opset 11.
            if n.version >= 11 && auto_pad.is_some_and(|m| m != b"NOTSET") {
                return Err(
                    "The pads attribute cannot be used simultaneously with auto_pad attribute"
                        .to_string(),
                );
            }
            p
        }
        None => {
            let mut pads = vec![0; rank * 2];
            if let Some(mode) = auto_pad.filter(|m| *m != b"VALID") {
                for i in 0..rank {
                    let total = sub(effective[i], strides[i])?.max(0);
                    split_pad(&mut pads, i, rank, total, mode);
                }
            }
            pads
        }
    };
    let output_shape = attr_ints(n, "output_shape");
    if let Some(o) = &output_shape {
        if o.len() != rank {
            return Err("Attribute output_shape has incorrect size".to_string());
        }
        if o.iter().any(|&s| s < 0) {
            return Err("Attribute output_shape must not contain negative values".to_string());
        }
    }
    let output_padding = match attr_ints(n, "output_padding") {
        Some(p) => {
            if p.len() != rank {
                return Err("Attribute output_padding has incorrect size".to_string());
            }
            if p.iter().any(|&v| v < 0) {
                return Err("Attribute output_padding must not contain negative values".to_string());
            }
            p
        }
        None => vec![0; rank],
    };
    let channels = match weights.dim[1].as_value() {
        Some(c) => Dimension::value(mul(c, group)?),
        None if group == 1 => owned_dim(&weights.dim[1]),
        None => Dimension::unknown(),
    };
    let mut dims = vec![owned_dim(&input.dim[0]), channels];
    if let Some(o) = output_shape {
        for (i, &size) in o.iter().enumerate() {
            // A requested size below the input's ends the inference, the shape as
            // far as it got.
            if input.dim[i + 2].as_value().is_some_and(|x| size < x) {
                break;
            }
            dims.push(Dimension::value(size));
        }
        return Ok(one(elem, Some(shape_of(dims))));
    }
    for i in 0..rank {
        let Some(size) = input.dim[i + 2].as_value() else {
            dims.push(Dimension::unknown());
            continue;
        };
        let mut out = mul(strides[i], sub(size, 1)?)?;
        out = add(out, output_padding[i])?;
        out = add(out, effective[i])?;
        out = sub(out, pads[i])?;
        out = sub(out, pads[i + rank])?;
        dims.push(Dimension::value(out));
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// `MaxUnpool`: from the input's spatial sizes, unless an `output_shape` input says.
fn max_unpool(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let count = n.node.input.len();
    if count != 2 && count != 3 {
        return Err("MaxUnpool op must have either two or three inputs.".to_string());
    }
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    if input.dim.len() < 2 {
        return Err("Input tensor X must have at least 2 dimensions.".to_string());
    }
    let rank = input.dim.len() - 2;
    let pads = match attr_ints(n, "pads") {
        Some(p) if p.len() != rank * 2 => {
            return Err("Attribute pads has incorrect size.".to_string())
        }
        Some(p) => p,
        None => vec![0; rank * 2],
    };
    let strides = match attr_ints(n, "strides") {
        Some(s) if s.len() != rank => {
            return Err("Attribute strides has incorrect size.".to_string())
        }
        Some(s) => s,
        None => vec![1; rank],
    };
    let kernel = match attr_ints(n, "kernel_shape") {
        Some(k) if k.len() != rank => {
            return Err("Attribute kernel_shape has incorrect size.".to_string())
        }
        Some(k) => k,
        None => return Err("Attribute kernel_shape must be specified.".to_string()),
    };
    if count == 3 {
        // The output shape is given as an input: its values decide at run time.
        if let Some(s) = shape_in(n, 2) {
            if s.dim.len() != 1 {
                return Err("'output_shape' must be rank 1 tensor.".to_string());
            }
            if let Some(len) = s.dim[0].as_value() {
                if len as i32 as i64 != input.dim.len() as i64 {
                    return Err("'output_shape' must have same number of elements as the shape of input tensor X.".to_string());
                }
            }
        }
        return Ok(one(elem, None));
    }
    let Some(indices) = shape_in(n, 1) else {
        return Ok(one(elem, None));
    };
    if indices.dim.len() < 2 {
        return Err("Indices tensor I must have at least 2 dimensions.".to_string());
    }
    let mut dims = vec![owned_dim(&input.dim[0]), owned_dim(&indices.dim[1])];
    for i in 0..rank {
        let Some(size) = input.dim[2 + i].as_value() else {
            dims.push(Dimension::unknown());
            continue;
        };
        let mut out = mul(strides[i], sub(size, 1)?)?;
        out = add(out, kernel[i])?;
        out = sub(out, pads[i])?;
        out = sub(out, pads[i + rank])?;
        dims.push(Dimension::value(out));
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// The `axis` of `LayerNormalization` and `RMSNormalization` made non-negative; an
/// error below `-rank` (one beyond the rank is let through, as in `onnx`).
fn normalized_axis(n: &Node<'_, '_>, rank: usize) -> Result<i64, String> {
    let mut axis = attr_int(n, "axis", -1);
    if axis < 0 {
        axis = axis.saturating_add(rank as i64);
    }
    if axis < 0 {
        return Err(format!(
            "Unexpected axis value ({axis}). Rank of input is {rank}."
        ));
    }
    Ok(axis)
}

fn layer_norm(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let mut outputs = same_as_input(n, 0)?;
    let stash = attr_int(n, "stash_type", DataType::Float.to_i32().into()) as i32;
    let count = n.node.output.len();
    let shape = match shape_in(n, 0) {
        Some(s) => {
            let axis = normalized_axis(n, s.dim.len())?;
            let mut reduced = owned(s);
            for d in reduced
                .dim
                .iter_mut()
                .skip(axis.min(i64::from(u32::MAX)) as usize)
            {
                d.value = Some(crate::onnx::DimensionValue::DimValue(1));
            }
            Some(reduced)
        }
        None => None,
    };
    // The mean and the inverse standard deviation, in the stash type.
    for _ in 1..count.min(3) {
        outputs.push(Some(tensor_type(stash, shape.clone())));
    }
    Ok(outputs)
}

fn batch_norm(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let count = n.node.output.len();
    if n.version < 6 {
        return Ok(vec![None; count]);
    }
    let mut outputs = same_as_input(n, 0)?;
    if n.version < 14 {
        outputs.resize(count, None);
        return Ok(outputs);
    }
    for i in 1..=4 {
        if let Some(s) = shape_in(n, i) {
            if s.dim.len() != 1 {
                return Err(format!(
                    "Input {i} expected to have rank 1 but has rank {}",
                    s.dim.len()
                ));
            }
        }
    }
    let mut channels = Dimension::unknown();
    if let Some(s) = shape_in(n, 0) {
        match s.dim.get(1) {
            Some(d) => unify_dim(d, &mut channels)?,
            None => channels = Dimension::value(1),
        }
    }
    for i in 1..=4 {
        if let Some(s) = shape_in(n, i) {
            unify_dim(&s.dim[0], &mut channels)?;
        }
    }
    let training = attribute(n, "training_mode").is_some_and(|a| a.i.unwrap_or(0) as i32 != 0);
    match (training, count) {
        (true, 3) | (false, 1) => {}
        (true, _) => {
            return Err(
                "This number of op outputs should be 3 when Training_mode = True, but it is not."
                    .to_string(),
            )
        }
        (false, _) => {
            return Err(
                "This number of op outputs should be 1 when Training_mode = False, but it is not."
                    .to_string(),
            )
        }
    }
    if count > 1 {
        // The running mean and variance, one value per channel.
        let shape = shape_of(vec![channels]);
        for i in [3, 4] {
            outputs.push(Some(tensor_type(required_elem(n, i)?, Some(shape.clone()))));
        }
    }
    Ok(outputs)
}

/// `MeanVarianceNormalization`: the input's type; from opset 13 `onnx` infers it through
/// the function body, which fails without an explicit `axes` or with one out of range.
fn mean_variance_norm(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let outputs = same_as_input(n, 0)?;
    if n.version < 13 {
        return Ok(outputs);
    }
    let Some(axes) = attr_ints(n, "axes") else {
        return Err("Attribute 'axes' of the function body is not set".to_string());
    };
    if let Some(s) = shape_in(n, 0) {
        let rank = s.dim.len() as i64;
        if axes.iter().any(|&a| a < -rank || a >= rank) {
            return Err(format!(
                "axis must be in [-rank, rank-1]. Input rank was {rank}"
            ));
        }
    }
    Ok(outputs)
}

/// Input `i`'s rank must be `rank` when its shape is known.
fn check_rank(n: &Node<'_, '_>, i: usize, rank: usize) -> Result<(), String> {
    match shape_in(n, i) {
        Some(s) if s.dim.len() != rank => Err(format!(
            "Input {i} expected to have rank {rank} but has rank {}",
            s.dim.len()
        )),
        _ => Ok(()),
    }
}

/// `RoiAlign`: (num_rois, C, output_height, output_width), whatever is known of the
/// inputs; from opset 22 the rois must have 4 columns.
fn roi_align(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    for (i, rank) in [(0, 4), (1, 2), (2, 1)] {
        check_rank(n, i, rank)?;
    }
    let mut channels = Dimension::unknown();
    let mut rois = Dimension::unknown();
    if let Some(x) = shape_in(n, 0) {
        unify_dim(&x.dim[1], &mut channels)?;
    }
    if let Some(r) = shape_in(n, 1) {
        unify_dim(&r.dim[0], &mut rois)?;
        if n.version >= 22 {
            let mut four = Dimension::value(4);
            unify_dim(&r.dim[1], &mut four)?;
        }
    }
    if let Some(b) = shape_in(n, 2) {
        unify_dim(&b.dim[0], &mut rois)?;
    }
    let height = Dimension::value(attr_int(n, "output_height", 1));
    let width = Dimension::value(attr_int(n, "output_width", 1));
    Ok(one(
        elem,
        Some(shape_of(vec![rois, channels, height, width])),
    ))
}

/// `MaxRoiPool`: (num_rois, C, pooled_shape[0], pooled_shape[1]).
fn max_roi_pool(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(x), Some(rois)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let pooled_len = if n.version >= 22 {
        if x.dim.len() != 4 {
            return Err(format!(
                "Input 0 expected to have rank 4 but has rank {}",
                x.dim.len()
            ));
        }
        if rois.dim.len() != 2 {
            return Err(format!(
                "Input 1 expected to have rank 2 but has rank {}",
                rois.dim.len()
            ));
        }
        let mut five = Dimension::value(5);
        unify_dim(&rois.dim[1], &mut five)?;
        2
    } else {
        if x.dim.len() < 4 {
            return Err("Input tensor must have at least 4 dimensions".to_string());
        }
        if rois.dim.len() != 2 {
            return Err("RoIs tensor must have 2 dimensions".to_string());
        }
        x.dim.len() - 2
    };
    let Some(pooled) = attr_ints(n, "pooled_shape") else {
        return Err("Attribute pooled_shape must be specified".to_string());
    };
    if pooled.len() != pooled_len {
        return Err("Attribute pooled_shape has incorrect length".to_string());
    }
    if pooled.iter().any(|&p| p <= 0) {
        return Err("Attribute pooled_shape must only contain positive values".to_string());
    }
    let (num_rois, channels) = if n.version >= 22 {
        let (mut r, mut c) = (Dimension::unknown(), Dimension::unknown());
        unify_dim(&rois.dim[0], &mut r)?;
        unify_dim(&x.dim[1], &mut c)?;
        (r, c)
    } else {
        (owned_dim(&rois.dim[0]), owned_dim(&x.dim[1]))
    };
    let dims = vec![
        num_rois,
        channels,
        Dimension::value(pooled[0]),
        Dimension::value(pooled[1]),
    ];
    Ok(one(elem, Some(shape_of(dims))))
}

/// Splits axis `i`'s `total` padding between its start and end as `auto_pad` `mode`
/// says: the odd one at the end for `SAME_UPPER`, at the start for `SAME_LOWER`.
fn split_pad(pads: &mut [i64], i: usize, rank: usize, total: i64, mode: &[u8]) {
    let small = total >> 1;
    let big = total - small;
    if mode == b"SAME_UPPER" {
        (pads[i], pads[i + rank]) = (small, big);
    } else if mode == b"SAME_LOWER" {
        (pads[i], pads[i + rank]) = (big, small);
    }
}

#[cfg(test)]
mod tests {
    use crate::onnx::*;
    use crate::shape::test_support::{float_inputs, model};

    /// The inferred types of `node`'s outputs (`name: type`), its float inputs of the
    /// given shapes, in opset `opset`; an error in strict mode.
    fn infer(
        node: NodeProto<'static>,
        inputs: &[(&str, &[&str])],
        opset: i64,
    ) -> crate::Result<Vec<String>> {
        let m = model(opset, vec![node], float_inputs(inputs), Vec::new());
        crate::shape::test_support::strict_value_types(m)
    }

    #[test]
    fn conv_takes_its_kernel_and_channels_from_the_weights() {
        let conv = NodeProto::new("Conv", ["x", "w"], ["y"])
            .with_attribute(AttributeProto::ints("strides", [2, 2]))
            .with_attribute(AttributeProto::ints("pads", [1, 1, 1, 1]));
        let got = infer(
            conv,
            &[("x", &["N", "3", "H", "9"]), ("w", &["M", "3", "3", "3"])],
            22,
        );
        assert_eq!(got.unwrap(), ["y: float[N,M,unk__0,5]"]);
    }

    #[test]
    fn pooling_in_ceil_mode_drops_a_last_window_in_the_padding_from_opset_22() {
        let pool = || {
            NodeProto::new("MaxPool", ["x"], ["y", "i"])
                .with_attribute(AttributeProto::ints("kernel_shape", [2, 2]))
                .with_attribute(AttributeProto::ints("strides", [2, 2]))
                .with_attribute(AttributeProto::ints("pads", [1, 1, 1, 1]))
                .with_attribute(AttributeProto::int("ceil_mode", 1))
        };
        let x: &[(&str, &[&str])] = &[("x", &["1", "1", "5", "5"])];
        assert_eq!(
            infer(pool(), x, 19).unwrap(),
            ["y: float[1,1,4,4]", "i: int64[1,1,4,4]"]
        );
        assert_eq!(
            infer(pool(), x, 22).unwrap(),
            ["y: float[1,1,3,3]", "i: int64[1,1,3,3]"]
        );
        // Without a kernel shape the pooling is refused.
        assert!(infer(NodeProto::new("AveragePool", ["x"], ["y"]), x, 22).is_err());
    }

    #[test]
    fn conv_transpose_grows_by_the_strides_and_stops_at_a_too_small_output_shape() {
        let x: &[(&str, &[&str])] = &[("x", &["N", "4", "5", "5"]), ("w", &["4", "G", "3", "3"])];
        let strided = NodeProto::new("ConvTranspose", ["x", "w"], ["y"])
            .with_attribute(AttributeProto::ints("strides", [2, 2]))
            .with_attribute(AttributeProto::ints("output_padding", [1, 1]));
        assert_eq!(infer(strided, x, 22).unwrap(), ["y: float[N,G,12,12]"]);
        // As in `onnx`: the shape as far as it got (3 is below the input's 5).
        let short = NodeProto::new("ConvTranspose", ["x", "w"], ["y"])
            .with_attribute(AttributeProto::int("group", 2))
            .with_attribute(AttributeProto::ints("output_shape", [10, 3]));
        assert_eq!(infer(short, x, 22).unwrap(), ["y: float[N,unk__0,10]"]);
    }

    #[test]
    fn normalizations_give_their_statistics_shapes() {
        let ln = NodeProto::new("LayerNormalization", ["x", "s"], ["y", "m", "d"]);
        assert_eq!(
            infer(ln, &[("x", &["N", "S", "8"]), ("s", &["8"])], 17).unwrap(),
            ["y: float[N,S,8]", "m: float[N,S,1]", "d: float[N,S,1]"]
        );
        let inputs: &[(&str, &[&str])] = &[
            ("x", &["N", "C", "4"]),
            ("s", &["3"]),
            ("b", &["c"]),
            ("m", &["3"]),
            ("v", &["3"]),
        ];
        let bn = || {
            NodeProto::new(
                "BatchNormalization",
                ["x", "s", "b", "m", "v"],
                ["y", "rm", "rv"],
            )
        };
        assert_eq!(
            infer(
                bn().with_attribute(AttributeProto::int("training_mode", 1)),
                inputs,
                15
            )
            .unwrap(),
            ["y: float[N,C,4]", "rm: float[3]", "rv: float[3]"]
        );
        // Three outputs need the training mode.
        assert!(infer(bn(), inputs, 15).is_err());
    }

    #[test]
    fn roi_align_takes_the_rois_count_and_refuses_rois_of_five_columns_from_opset_22() {
        let roi = || NodeProto::new("RoiAlign", ["x", "r", "b"], ["y"]);
        let inputs = |cols| -> Vec<(&str, &[&str])> {
            vec![
                ("x", &["N", "C", "8", "8"]),
                ("r", if cols == 4 { &["R", "4"] } else { &["R", "5"] }),
                ("b", &["R"]),
            ]
        };
        let node = roi().with_attribute(AttributeProto::int("output_height", 3));
        assert_eq!(infer(node, &inputs(4), 22).unwrap(), ["y: float[R,C,3,1]"]);
        assert!(infer(roi(), &inputs(5), 22).is_err());
        assert_eq!(infer(roi(), &inputs(5), 16).unwrap(), ["y: float[R,C,1,1]"]);
    }
}
