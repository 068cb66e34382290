//! The inference rules of resizing and sampling: `Resize`, `Upsample`, `GridSample`,
//! `Col2Im`, `CenterCropPad` and `AffineGrid`, as `onnx` infers them.
//!
//! `scales` given as a float constant scale the known sizes (floored); otherwise the
//! output keeps the input's rank with unknown sizes. An empty constant `scales` counts
//! as not given (exporters write one for "not given"); a graph input of length 0 counts
//! as given, as in `onnx`.

use super::kit::*;
use super::types::shape_of;
use crate::onnx::{AttributeType, DataType, Dimension, TensorShapeProto};

/// The rule's outcome: `Ok(None)` for an operator this family does not know.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let v = n.version;
    let outputs = match n.node.op_type() {
        "Resize" if v >= 11 => resize(n)?,
        "Resize" => scales_input(n)?,
        // Upsample-1 is experimental and has no inference function.
        "Upsample" if v < 7 => vec![None; n.node.output.len()],
        "Upsample" if v < 9 => upsample_7(n)?,
        "Upsample" => scales_input(n)?,
        "GridSample" => grid_sample(n)?,
        "Col2Im" => col2im(n)?,
        "CenterCropPad" => center_crop_pad(n)?,
        "AffineGrid" => affine_grid(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

/// Whether input `i` is given (a name, not the empty name of a skipped input).
fn has_input(n: &Node<'_, '_>, i: usize) -> bool {
    n.node.input.get(i).is_some_and(|s| !s.is_empty())
}

/// `v.floor()` converted as C++ converts a double to int64 on x86: a value out of range
/// (or NaN) becomes `i64::MIN`.
fn floor_to_i64(v: f64) -> i64 {
    // 2^63: the first double past the int64 range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let f = v.floor();
    if (-LIMIT..LIMIT).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// The output sizes of scaling `input` by `scales` (floats, held as doubles): the floor
/// of each known size times its scale; unknown sizes stay unknown.
fn scaled(input: &TensorShapeProto<'_>, scales: &[f64]) -> TensorShapeProto<'static> {
    let dims = input
        .dim
        .iter()
        .zip(scales)
        .map(|(d, &s)| match d.as_value() {
            Some(v) => Dimension::value(floor_to_i64(v as f64 * s)),
            None => Dimension::unknown(),
        })
        .collect();
    shape_of(dims)
}

/// `Upsample-7`: the scales are an attribute.
fn upsample_7(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let Some(input) = shape_in(n, 0) else {
        return Ok(vec![None; n.node.output.len()]);
    };
    let elem = required_elem(n, 0)?;
    let Some(scales) = attribute(n, "scales") else {
        return Err("Attribute 'scales' is required.".to_string());
    };
    if scales.r#type.and_then(|t| t.get()) != Some(AttributeType::Floats) {
        return Err("Attribute 'scales' must have floats type.".to_string());
    }
    if scales.floats.len() != input.dim.len() {
        return Err(
            "Number of elements of attribute 'scales' must be same as rank of input 'X'"
                .to_string(),
        );
    }
    let scales: Vec<f64> = scales.floats.iter().map(|&s| f64::from(s)).collect();
    Ok(one(elem, Some(scaled(input, &scales))))
}

/// `Upsample-9`, `Upsample-10`, `Resize-10`: the scales are input 1; the sizes are known
/// when it is a float constant, the rank in any case.
fn scales_input(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len();
    if let Some(c) = input_constant(n, 1) {
        if !c.is(DataType::Float) {
            return Err("Input 'scales' must have float element type.".to_string());
        }
        if let Some(scales) = c.floats() {
            if scales.len() != rank {
                return Err(
                    "Number of elements of input 'scales' must be same as rank of input 'X'"
                        .to_string(),
                );
            }
            return Ok(one(elem, Some(scaled(input, scales))));
        }
    }
    Ok(one(elem, Some(shape_of(vec![Dimension::unknown(); rank]))))
}

/// The policies of `keep_aspect_ratio_policy`.
#[derive(PartialEq, Clone, Copy)]
enum Policy {
    Stretch,
    NotLarger,
    NotSmaller,
}

/// `Resize` from opset 11: `scales` (input 2) or `sizes` (input 3), optionally for the
/// `axes` only, and the aspect ratio policy.
fn resize(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len();
    let mut has_scales = has_input(n, 2);
    let mut has_sizes = has_input(n, 3);
    // The sizes: the constant's values, the propagated ones, or as many unknown values
    // as its length (an unknown or symbolic size reads as 0: not known).
    let mut sizes: Vec<i64> = Vec::new();
    if n.node.input.len() > 3 {
        if let Some(s) = shape_input(n, 3, false)? {
            if s.dim.is_empty() {
                has_sizes = false;
            }
            sizes = s.dim.iter().map(|d| d.as_value().unwrap_or(0)).collect();
        }
    }
    // An empty constant `scales` counts as not given.
    let mut scales = None;
    if n.node.input.len() > 2 && input_constant(n, 2).is_some() {
        scales = float_values(n, 2)?;
        if scales.is_some_and(<[f64]>::is_empty) {
            has_scales = false;
            scales = None;
        }
    }
    if n.version >= 13 && usize::from(has_scales) + usize::from(has_sizes) != 1 {
        return Err(
            "Either `sizes` or `scales` must be provided, but not both of them".to_string(),
        );
    }
    let policy = match attribute(n, "keep_aspect_ratio_policy").and_then(|a| a.s.as_deref()) {
        None | Some(b"stretch") => Policy::Stretch,
        Some(b"not_larger") => Policy::NotLarger,
        Some(b"not_smaller") => Policy::NotSmaller,
        Some(other) => {
            return Err(format!(
                "Unknown value for `keep_aspect_ratio_policy`: {}.",
                String::from_utf8_lossy(other)
            ))
        }
    };
    if has_scales && policy != Policy::Stretch {
        return Err("Providing `scales` is incompatible with a `keep_aspect_ratio_policy` other than \"stretch\".".to_string());
    }
    let mut dims = vec![Dimension::unknown(); rank];
    let axes = match attr_ints(n, "axes") {
        Some(given) => distinct_axes(&given, rank)?,
        None => Vec::new(),
    };
    if has_sizes {
        if !axes.is_empty() && sizes.len() != axes.len() {
            return Err(format!(
                "Number of elements of input 'sizes' ({}) does not match the number of axes ({}).",
                sizes.len(),
                axes.len()
            ));
        }
        if axes.is_empty() && sizes.len() != rank {
            return Err(format!(
                "Number of elements of input 'sizes' ({}) must be same as rank of input 'X' ({rank}).",
                sizes.len()
            ));
        }
        keep_aspect_ratio(policy, input, &axes, &mut sizes);
        if !axes.is_empty() {
            // The other axes keep their known sizes (a name is not kept).
            let mut all: Vec<i64> = input
                .dim
                .iter()
                .map(|d| d.as_value().unwrap_or(-1))
                .collect();
            for (&a, &s) in axes.iter().zip(&sizes) {
                all[a] = s;
            }
            sizes = all;
        }
        for (d, &s) in dims.iter_mut().zip(&sizes) {
            if s > 0 {
                *d = Dimension::value(s);
            }
        }
        return Ok(one(elem, Some(shape_of(dims))));
    }
    let Some(scales) = scales else {
        return Ok(one(elem, Some(shape_of(dims))));
    };
    let scales = if axes.is_empty() {
        if scales.len() != rank {
            return Err(
                "Number of elements of input 'scales' must be same as rank of input 'X'"
                    .to_string(),
            );
        }
        scales.to_vec()
    } else {
        // The other axes keep their sizes.
        if scales.len() != axes.len() {
            return Err(format!(
                "Number of elements of input 'scales' ({}) does not match the number of axes ({}).",
                scales.len(),
                axes.len()
            ));
        }
        let mut all = vec![1.0; rank];
        for (&a, &s) in axes.iter().zip(scales) {
            all[a] = s;
        }
        all
    };
    Ok(one(elem, Some(scaled(input, &scales))))
}

/// The sizes under a `not_larger`/`not_smaller` policy: one scale for all the axes (the
/// smallest or largest of the requested ones), unknown when an input size is.
fn keep_aspect_ratio(
    policy: Policy,
    input: &TensorShapeProto<'_>,
    axes: &[usize],
    sizes: &mut [i64],
) {
    if policy == Policy::Stretch {
        return;
    }
    let axis = |i: usize| if axes.is_empty() { i } else { axes[i] };
    let mut known = Vec::with_capacity(sizes.len());
    for i in 0..sizes.len() {
        match input.dim[axis(i)].as_value() {
            Some(v) => known.push(v),
            None => {
                sizes.iter_mut().for_each(|s| *s = -1);
                return;
            }
        }
    }
    let ratios = sizes.iter().zip(&known).map(|(&s, &d)| s as f64 / d as f64);
    let scale = if policy == Policy::NotLarger {
        ratios.fold(f64::MAX, f64::min)
    } else {
        ratios.fold(f64::MIN, f64::max)
    };
    for (s, &d) in sizes.iter_mut().zip(&known) {
        *s = (scale * d as f64).round() as i64;
    }
}

/// `GridSample`: the batch and channels of the input, the spatial sizes of the grid.
fn grid_sample(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(input), Some(grid)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    if input.dim.len() != grid.dim.len() {
        return Err(format!(
            "The input tensor and grid tensor must have the same rank for GridSample. Got input tensor rank: {}. Got grid tensor rank: {}. ",
            input.dim.len(),
            grid.dim.len()
        ));
    }
    let rank = input.dim.len();
    if rank < 3 {
        return Err(format!(
            "The input tensor and grid tensor ranks must be >= 3. Got input tensor and grid tensor ranks: {rank}. "
        ));
    }
    if let Some(last) = grid.dim[rank - 1].as_value() {
        if last != rank as i64 - 2 {
            return Err(format!(
                "The last dimension of the grid tensor must be the rank of the grid tensor - 2. Got grid tensor rank: {rank}Got the last dimension of the grid tensor: {last}. "
            ));
        }
    }
    let mut batch = Dimension::unknown();
    unify_dim(&input.dim[0], &mut batch)?;
    unify_dim(&grid.dim[0], &mut batch)?;
    let mut channels = Dimension::unknown();
    unify_dim(&input.dim[1], &mut channels)?;
    let mut dims = vec![batch, channels];
    for d in &grid.dim[1..rank - 1] {
        let mut out = Dimension::unknown();
        unify_dim(d, &mut out)?;
        dims.push(out);
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// `Col2Im`: (N, C / prod(block_shape), *image_shape), as far as the constants tell.
fn col2im(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(input), Some(image), Some(block)) = (shape_in(n, 0), shape_in(n, 1), shape_in(n, 2))
    else {
        return Ok(one(elem, None));
    };
    // The number of spatial dimensions, from every source that tells it.
    let mut spatial = Dimension::unknown();
    let first = |s: &TensorShapeProto<'_>| -> Result<Dimension<'static>, String> {
        match s.dim.first() {
            Some(d) => Ok(owned_dim(d)),
            None => Err("Input 1 expected to have rank >= 1".to_string()),
        }
    };
    unify_dim(&first(image)?, &mut spatial)?;
    unify_dim(&first(block)?, &mut spatial)?;
    for (i, s) in [(1, image), (2, block)] {
        if s.dim.len() != 1 {
            return Err(format!(
                "Input {i} expected to have rank 1 but has rank {}",
                s.dim.len()
            ));
        }
    }
    let count = |len: usize| Dimension::value(len as i64);
    let image_shape = int64_values(n, 1)?.map(<[i64]>::to_vec);
    let known_image = image_shape.is_some();
    let image_shape = image_shape.unwrap_or_default();
    if known_image {
        unify_dim(&count(image_shape.len()), &mut spatial)?;
    }
    if let Some(pads) = attr_ints(n, "pads") {
        if pads.len() % 2 != 0 {
            return Err("Attribute pads must have an even size".to_string());
        }
        unify_dim(&count(pads.len() / 2), &mut spatial)?;
    }
    for name in ["dilations", "strides"] {
        if let Some(v) = attr_ints(n, name) {
            unify_dim(&count(v.len()), &mut spatial)?;
        }
    }
    if input.dim.len() != 3 {
        return Err("input must have rank 3.".to_string());
    }
    let block_shape = int64_values(n, 2)?.map(<[i64]>::to_vec);
    let known_block = block_shape.is_some();
    let block_shape = block_shape.unwrap_or_default();
    if known_block {
        unify_dim(&count(block_shape.len()), &mut spatial)?;
    }
    let mut block_size: i64 = 0;
    if !block_shape.is_empty() {
        block_size = 1;
        for &b in &block_shape {
            if b <= 0 {
                return Err("'block_shape' input must contain only positive values".to_string());
            }
            block_size = block_size
                .checked_mul(b)
                .ok_or_else(|| "Integer overflow while inferring a dimension".to_string())?;
        }
    }
    let Some(spatial) = spatial.as_value().filter(|s| (0..=1024).contains(s)) else {
        return Ok(one(elem, None));
    };
    let batch = match input.dim[0].as_value() {
        Some(_) => owned_dim(&input.dim[0]),
        None => Dimension::unknown(),
    };
    // `C` is the input's second dimension divided by the block size.
    let channels = if block_size > 0 {
        match input.dim[1].as_value() {
            Some(c) => Dimension::value(c / block_size),
            None if block_size == 1 => owned_dim(&input.dim[1]),
            None => Dimension::unknown(),
        }
    } else {
        Dimension::unknown()
    };
    let mut dims = vec![batch, channels];
    for i in 0..spatial as usize {
        dims.push(match image_shape.get(i) {
            Some(&v) => Dimension::value(v),
            None => Dimension::unknown(),
        });
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// `CenterCropPad`: the input's shape with the cropped or padded axes at their sizes.
fn center_crop_pad(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.node.input.len() != 2 {
        return Err("CenterCropPad op must have 2 inputs.".to_string());
    }
    let elem = required_elem(n, 0)?;
    let (Some(input), Some(c)) = (shape_in(n, 0), input_constant(n, 1)) else {
        return Ok(one(elem, None));
    };
    if c.elem == 0 {
        return Ok(one(elem, None));
    }
    if !(c.is(DataType::Int64) || c.is(DataType::Int32)) {
        return Err("`shape` only supports `int32_t` or `int64_t` inputs".to_string());
    }
    let Some(shape) = c.ints() else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len();
    let axes: Vec<usize> = match attr_ints(n, "axes") {
        Some(given) => distinct_axes(&given, rank)?,
        None => (0..rank).collect(),
    };
    if shape.len() != axes.len() {
        return Err(format!(
            "Number of elements of input 'shape' ({}) does not match the number of axes ({}).",
            shape.len(),
            axes.len()
        ));
    }
    let mut dims: Vec<Dimension<'static>> = input
        .dim
        .iter()
        .map(|d| match (d.as_value(), d.as_param()) {
            (Some(v), _) => Dimension::value(v),
            (None, Some(p)) => Dimension::param(p.to_string()),
            (None, None) => Dimension::unknown(),
        })
        .collect();
    for (&a, &s) in axes.iter().zip(shape) {
        dims[a] = Dimension::value(s);
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// `AffineGrid`: (N, H, W, 2) or (N, D, H, W, 3) from the `size` input's values, or
/// unknown sizes when only its length is known.
fn affine_grid(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    if shape_in(n, 0).is_none() {
        return Ok(one(elem, None));
    }
    if let Some(s) = shape_in(n, 1).filter(|s| s.dim.len() != 1) {
        return Err(format!(
            "Input 1 expected to have rank 1 but has rank {}",
            s.dim.len()
        ));
    }
    // The size: constant or propagated values, or only its length.
    let Some(size) = shape_input(n, 1, false)? else {
        return Ok(one(elem, None));
    };
    let size = size.dim;
    let mut dims = match size.len() {
        4 => vec![size[0].clone(), size[2].clone(), size[3].clone()],
        5 => vec![
            size[0].clone(),
            size[2].clone(),
            size[3].clone(),
            size[4].clone(),
        ],
        len => {
            return Err(format!(
                "Length of input 'size' is {len}. It must be 4 for 2D or 5 for 5D."
            ))
        }
    };
    dims.push(Dimension::value(size.len() as i64 - 2));
    Ok(one(elem, Some(shape_of(dims))))
}

/// The `axes` attribute of a tensor of rank `rank`, made non-negative: each in range
/// and named once, or `onnx`'s reason.
fn distinct_axes(given: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let r = rank as i64;
    let mut seen = vec![false; rank];
    let mut axes = Vec::with_capacity(given.len());
    for &a in given {
        if a < -r || a >= r {
            return Err(format!(
                "Unexpected axis value: {a}. Expected range [{}, {r})",
                -r
            ));
        }
        let a = if a < 0 { a + r } else { a } as usize;
        if seen[a] {
            return Err(format!("Axis {a} is referred to more than once."));
        }
        seen[a] = true;
        axes.push(a);
    }
    Ok(axes)
}

#[cfg(test)]
mod tests {
    use crate::onnx::*;
    use crate::shape::test_support::{float_inputs, model, strict_types, strict_value_types};

    /// The inferred types of `node`'s outputs: its float inputs of the given shapes,
    /// its int64 constants, in opset `opset`; an error in strict mode.
    fn infer(
        node: NodeProto<'static>,
        inputs: &[(&str, &[&str])],
        constants: &[(&str, &[i64])],
        opset: i64,
    ) -> crate::Result<Vec<String>> {
        let constants = constants
            .iter()
            .map(|(name, values)| {
                TensorProto::from_vec(name.to_string(), [values.len() as i64], values.to_vec())
                    .unwrap()
            })
            .collect();
        strict_value_types(model(opset, vec![node], float_inputs(inputs), constants))
    }

    #[test]
    fn resize_takes_constant_sizes_for_its_axes_and_keeps_only_known_other_sizes() {
        let node = NodeProto::new("Resize", ["x", "", "", "sizes"], ["y"])
            .with_attribute(AttributeProto::ints("axes", [2, 3]));
        let got = infer(
            node,
            &[("x", &["N", "3", "8", "W"])],
            &[("sizes", &[16, 12])],
            19,
        );
        assert_eq!(got.unwrap(), ["y: float[unk__0,3,16,12]"]);
        // `not_larger`: one scale for all axes, the smallest asked (8/8 here).
        let node = NodeProto::new("Resize", ["x", "", "", "sizes"], ["y"]).with_attribute(
            AttributeProto::string("keep_aspect_ratio_policy", b"not_larger".to_vec()),
        );
        let got = infer(
            node,
            &[("x", &["1", "3", "8", "6"])],
            &[("sizes", &[1, 3, 16, 16])],
            19,
        );
        assert_eq!(got.unwrap(), ["y: float[1,3,8,6]"]);
    }

    #[test]
    fn resize_with_unknown_scales_keeps_the_rank_and_refuses_both_scales_and_sizes() {
        let node = NodeProto::new("Resize", ["x", "", "scales"], ["y"]);
        let got = infer(
            node,
            &[("x", &["N", "3", "8", "6"]), ("scales", &["4"])],
            &[],
            13,
        );
        assert_eq!(got.unwrap(), ["y: float[unk__0,unk__1,unk__2,unk__3]"]);
        let both = NodeProto::new("Resize", ["x", "", "scales", "sizes"], ["y"]);
        let inputs: &[(&str, &[&str])] = &[("x", &["1", "3", "8", "6"]), ("scales", &["4"])];
        assert!(infer(both, inputs, &[("sizes", &[1, 3, 4, 4])], 13).is_err());
    }

    /// The inferred types of `node` with float inputs of the given shapes and the given
    /// initializers, in opset `opset`; the error's text in strict mode.
    fn infer_with(
        node: NodeProto<'static>,
        inputs: &[(&str, &[&str])],
        initializers: Vec<TensorProto<'static>>,
        opset: i64,
    ) -> Result<Vec<String>, String> {
        strict_types(opset, vec![node], float_inputs(inputs), initializers)
    }

    fn floats(name: &str, values: &[f32]) -> TensorProto<'static> {
        TensorProto::from_vec(name.to_string(), [values.len() as i64], values.to_vec()).unwrap()
    }

    #[test]
    fn constant_scales_floor_the_known_sizes() {
        let x: &[(&str, &[&str])] = &[("x", &["N", "3", "8", "6"])];
        let node = NodeProto::new("Resize", ["x", "", "s"], ["y"]);
        let got = infer_with(node, x, vec![floats("s", &[1.0, 1.0, 2.0, 1.5])], 13);
        assert_eq!(got.unwrap(), ["y: float[unk__0,3,16,9]"]);
        // Scales for some axes: the others keep their sizes.
        let node = NodeProto::new("Resize", ["x", "", "s"], ["y"])
            .with_attribute(AttributeProto::ints("axes", [2, 3]));
        let got = infer_with(node, x, vec![floats("s", &[2.0, 0.5])], 19);
        assert_eq!(got.unwrap(), ["y: float[unk__0,3,16,3]"]);
        // An empty constant counts as not given: the sizes decide.
        let node = NodeProto::new("Resize", ["x", "", "s", "z"], ["y"]);
        let sizes = TensorProto::from_vec("z", [4], vec![1i64, 3, 4, 4]).unwrap();
        let got = infer_with(node, x, vec![floats("s", &[]), sizes], 13);
        assert_eq!(got.unwrap(), ["y: float[1,3,4,4]"]);
        // Scales of another type or count are refused.
        let node = NodeProto::new("Resize", ["x", "", "s"], ["y"]);
        let int_scales = TensorProto::from_vec("s", [4], vec![1i64, 1, 2, 2]).unwrap();
        let e = infer_with(node.clone(), x, vec![int_scales], 13).unwrap_err();
        assert!(
            e.contains("ParseData type mismatch for tensor: s. Expected:float Actual:int64"),
            "{e}"
        );
        let e = infer_with(node, x, vec![floats("s", &[1.0, 2.0, 2.0])], 13).unwrap_err();
        assert!(e.contains("must be same as rank of input 'X'"), "{e}");
        // Opsets 9 and 10 take the scales as input 1.
        let node = NodeProto::new("Upsample", ["x", "s"], ["y"]);
        let got = infer_with(node.clone(), x, vec![floats("s", &[1.0, 1.0, 2.5, 1.5])], 9);
        assert_eq!(got.unwrap(), ["y: float[unk__0,3,20,9]"]);
        let doubles = TensorProto::from_vec("s", [4], vec![1.0f64, 1.0, 2.5, 1.5]).unwrap();
        let e = infer_with(node, x, vec![doubles], 9).unwrap_err();
        assert!(
            e.contains("Input 'scales' must have float element type."),
            "{e}"
        );
        let node = NodeProto::new("Resize", ["x", "s"], ["y"]);
        let x: &[(&str, &[&str])] = &[("x", &["2", "3", "5", "5"])];
        let got = infer_with(node, x, vec![floats("s", &[1.0, 1.0, 0.6, 1.9])], 10);
        assert_eq!(got.unwrap(), ["y: float[2,3,3,9]"]);
    }

    #[test]
    fn center_crop_pad_refuses_a_float_shape() {
        let node = NodeProto::new("CenterCropPad", ["x", "s"], ["y"]);
        let x: &[(&str, &[&str])] = &[("x", &["5", "5"])];
        let e = infer_with(node, x, vec![floats("s", &[3.0, 3.0])], 18).unwrap_err();
        assert!(
            e.contains("only supports `int32_t` or `int64_t` inputs"),
            "{e}"
        );
    }

    #[test]
    fn grid_sample_and_crops_take_their_sizes_from_grid_and_constants() {
        let node = NodeProto::new("GridSample", ["x", "g"], ["y"]);
        let inputs: &[(&str, &[&str])] =
            &[("x", &["N", "3", "8", "8"]), ("g", &["M", "h", "5", "2"])];
        assert_eq!(infer(node, inputs, &[], 20).unwrap(), ["y: float[N,3,h,5]"]);
        // The grid's last dimension must be the spatial rank.
        let node = NodeProto::new("GridSample", ["x", "g"], ["y"]);
        let inputs: &[(&str, &[&str])] =
            &[("x", &["2", "3", "8", "8"]), ("g", &["2", "4", "5", "3"])];
        assert!(infer(node, inputs, &[], 20).is_err());
        let node = NodeProto::new("CenterCropPad", ["x", "s"], ["y"])
            .with_attribute(AttributeProto::ints("axes", [-1, 2]));
        let got = infer(node, &[("x", &["N", "3", "8", "W"])], &[("s", &[4, 9])], 18);
        assert_eq!(got.unwrap(), ["y: float[N,3,9,4]"]);
        let node = NodeProto::new("Col2Im", ["x", "i", "b"], ["y"]);
        let got = infer(
            node,
            &[("x", &["N", "12", "L"])],
            &[("i", &[5, 5]), ("b", &[2, 2])],
            18,
        );
        assert_eq!(got.unwrap(), ["y: float[unk__0,3,5,5]"]);
    }
}
