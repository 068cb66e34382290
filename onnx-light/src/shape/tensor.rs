//! Inference rules of the tensor-making and tensor-splitting operators (`Range`,
//! `Split`, `Pad`, `OneHot`, `Compress`, `Unique`, `GatherND`, `Einsum`, `BitCast`,
//! `CumProd`, `Det`, ...), of quantization (`QuantizeLinear`, `DequantizeLinear`,
//! `DynamicQuantizeLinear`, `QLinearMatMul`, `MatMulInteger`), of the random generators
//! and of the string operators, as `onnx`'s inference functions give them.

use super::broadcast::broadcast;
use super::kit::*;
use super::types::{shape_of, tensor_type, Constant};
use std::collections::{BTreeMap, HashSet};

use crate::onnx::{AttributeType, DataType, Dimension, TensorShapeProto, TypeValue};
use crate::ProtoEnum;

/// The rule's outcome: `Ok(None)` when this family does not know the operator.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let outputs = match n.node.op_type() {
        "Range" => range(n)?,
        "Split" if n.version >= 2 => split(n)?,
        "Pad" if n.version >= 2 => pad(n)?,
        "QuantizeLinear" => quantize(n)?,
        "DequantizeLinear" => dequantize(n)?,
        "DynamicQuantizeLinear" => dynamic_quantize(n)?,
        "CumProd" => same_as_input(n, 0)?,
        "BitCast" => bit_cast(n)?,
        "NonMaxSuppression" => non_max_suppression(n),
        "ImageDecoder" => image_decoder(n)?,
        "Det" => det(n)?,
        "QLinearMatMul" => qlinear_matmul(n)?,
        "MatMulInteger" => matmul_integer(n)?,
        "TfIdfVectorizer" => tfidf_vectorizer(n)?,
        "Unique" => unique(n)?,
        "StringSplit" => string_split(n)?,
        "StringNormalizer" => string_normalizer(n)?,
        "DFT" => dft(n)?,
        "Einsum" => einsum(n)?,
        "Compress" if n.version >= 11 => compress(n)?,
        "OneHot" => one_hot(n)?,
        "GatherND" => gather_nd(n)?,
        "TensorScatter" => tensor_scatter(n)?,
        "StringConcat" => broadcast_inputs(n, 0..2, 0)?,
        "RegexFullMatch" => regex_full_match(n)?,
        "Swish" => same_as_input(n, 0)?,
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => window(n)?,
        "MelWeightMatrix" => mel_weight_matrix(n)?,
        "STFT" => stft(n)?,
        "RandomUniform" | "RandomNormal" => random(n)?,
        "RandomUniformLike" | "RandomNormalLike" | "Bernoulli" => random_like(n)?,
        "Multinomial" => multinomial(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

const INT64: DataType = DataType::Int64;

fn attr_int(n: &Node<'_, '_>, name: &str) -> Option<i64> {
    attribute(n, name).and_then(|a| a.i)
}

/// Whether input `i` is given (present with a non-empty name).
fn has_input(n: &Node<'_, '_>, i: usize) -> bool {
    n.node.input.get(i).is_some_and(|s| !s.is_empty())
}

/// The element type an attribute names (`output_dtype`, `dtype`, ...), checked as
/// `onnx` checks it; `None` when the attribute is absent.
fn attr_dtype(n: &Node<'_, '_>, name: &str) -> Result<Option<i32>, String> {
    let Some(a) = attribute(n, name) else {
        return Ok(None);
    };
    let Some(v) = a.i else {
        return Err(format!(
            "Attribute {name} should be of integer type and specify a type"
        ));
    };
    if !(0..=28).contains(&v) {
        return Err(format!("Attribute {name} does not specify a valid type"));
    }
    Ok(Some(v as i32))
}

fn range(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    // The output is 1-D whatever the inputs; its length is known only from constants.
    let unknown = || Ok(one(elem, Some(shape_of(vec![Dimension::unknown()]))));
    let (Some(start), Some(limit), Some(delta)) = (
        input_constant(n, 0),
        input_constant(n, 1),
        input_constant(n, 2),
    ) else {
        return unknown();
    };
    if start.elem != limit.elem || start.elem != delta.elem {
        return Err("All inputs to 'Range' op must be of the same type".to_string());
    }
    let t = DataType::from_i32(start.elem);
    // `onnx` computes the length for these types only.
    if !matches!(
        t,
        Some(DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64)
    ) {
        return unknown();
    }
    if [start, limit, delta].iter().any(|c| !c.dims.is_empty()) {
        return Err(
            "Input to 'Range' op should be scalars (Tensor with only one element and shape empty)"
                .to_string(),
        );
    }
    if let Some(reason) = [start, limit, delta].iter().find_map(|c| c.problem()) {
        return Err(reason.to_string());
    }
    // The difference is taken in the element type (wrapping as C++ does for integers),
    // then divided by the step as doubles.
    let quotient = match t {
        Some(DataType::Float | DataType::Double) => {
            let first = |c: &Constant| c.floats().and_then(|v| v.first().copied());
            let (Some(s), Some(l), Some(d)) = (first(start), first(limit), first(delta)) else {
                return unknown();
            };
            let diff = if t == Some(DataType::Float) {
                f64::from(l as f32 - s as f32)
            } else {
                l - s
            };
            diff / d
        }
        _ => {
            let first = |c: &Constant| c.ints().and_then(|v| v.first().copied());
            let (Some(s), Some(l), Some(d)) = (first(start), first(limit), first(delta)) else {
                return unknown();
            };
            let diff = if t == Some(DataType::Int32) {
                f64::from((l as i32).wrapping_sub(s as i32))
            } else {
                l.wrapping_sub(s) as f64
            };
            diff / d as f64
        }
    };
    let len = ceil_to_i64(quotient).max(0);
    Ok(one(elem, Some(shape_of(vec![Dimension::value(len)]))))
}

fn split(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let count = n.node.output.len();
    if count == 0 {
        if n.version < 18 {
            return Err("Split must have at least one output".to_string());
        }
        return Ok(Vec::new());
    }
    let elem = required_elem(n, 0)?;
    let elem_only = vec![Some(tensor_type(elem, None)); count];
    let Some(shape) = shape_in(n, 0) else {
        return Ok(elem_only);
    };
    let rank = shape.dim.len() as i64;
    // `onnx` holds the axis in an `int`.
    let axis = i64::from(attr_int(n, "axis").unwrap_or(0) as i32);
    if axis < -rank || axis >= rank {
        return Err(format!(
            "Invalid value of attribute 'axis'. Rank={rank} Value={axis}"
        ));
    }
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    let with_dim = |d: Dimension<'static>| {
        let mut s = owned(shape);
        s.dim[axis] = d;
        Some(tensor_type(elem, Some(s)))
    };
    let Some(total) = shape.dim[axis].as_value() else {
        return Ok((0..count).map(|_| with_dim(Dimension::unknown())).collect());
    };
    // `onnx` holds the split dimension in an `int`.
    let total = i64::from(total as i32);
    let equal = |parts: i64| -> Result<Vec<i64>, String> {
        if total % parts != 0 {
            return Err("The input is not evenly splittable".to_string());
        }
        Ok(vec![total / parts; count])
    };
    let split: Vec<i64> = if n.version < 13 {
        match attribute(n, "split") {
            Some(a) => a.ints.clone(),
            None => equal(count as i64)?,
        }
    } else if n.version < 18 {
        if n.node.input.len() == 2 && n.inputs.get(1).is_some_and(Option::is_some) {
            match int64_values(n, 1)? {
                Some(v) => v.to_vec(),
                None => return Ok(elem_only),
            }
        } else {
            equal(count as i64)?
        }
    } else {
        let num_outputs = attr_int(n, "num_outputs");
        if has_input(n, 1) && attribute(n, "num_outputs").is_some() {
            return Err("Both 'split' input and 'num_outputs' attribute were given".to_string());
        }
        if has_input(n, 1) {
            match int64_values(n, 1)? {
                Some(v) => v.to_vec(),
                None => return Ok(elem_only),
            }
        } else if let Some(parts) = num_outputs {
            if parts < 1 {
                return Err("Attribute `num_outputs` value cannot be lower than 1".to_string());
            }
            if parts < count as i64 {
                // `onnx` would read past its list of sizes.
                return Err(format!(
                    "Attribute `num_outputs` ({parts}) is less than the number of outputs ({count})"
                ));
            }
            // Extra parts beyond the node's outputs are dropped.
            let mut v = if total % parts == 0 {
                vec![total / parts; count]
            } else {
                // Equal chunks rounded up, the last one what remains (negative when
                // nothing does, as `onnx` computes it).
                let chunk = total / parts + 1;
                let mut v = vec![chunk; count];
                if parts == count as i64 {
                    v[count - 1] = total.wrapping_sub(chunk.wrapping_mul(parts - 1));
                }
                v
            };
            v.truncate(count);
            v
        } else {
            return Err(
                "Neither 'split' input nor 'num_outputs' attribute has been given".to_string(),
            );
        }
    };
    if n.version < 18 || has_input(n, 1) {
        if split.len() != count {
            return Err(format!(
                "Mismatch between number of splits ({}) and outputs ({count})",
                split.len()
            ));
        }
        let sum = split.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        if sum != total {
            return Err(format!(
                "Mismatch between the sum of 'split' ({sum}) and the split dimension of the input ({total})"
            ));
        }
    }
    Ok(split
        .into_iter()
        .map(|v| with_dim(Dimension::value(v)))
        .collect())
}

/// The padded dimension: known sizes grow by the pads, an unknown one stays only when
/// the pads add nothing.
fn padded(d: &Dimension<'_>, before: i64, after: i64) -> Result<Dimension<'static>, String> {
    let total = checked_add(before, after)?;
    Ok(match d.as_value() {
        Some(v) => Dimension::value(checked_add(v, total)?),
        None if total == 0 => owned_dim(d),
        None => Dimension::unknown(),
    })
}

fn pad(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len();
    if n.version < 11 {
        let Some(pads) = attribute(n, "pads").map(|a| &a.ints) else {
            return Err("Attribute value for pads is required".to_string());
        };
        if pads.len() != rank * 2 {
            return Err("Attribute pads has incorrect length".to_string());
        }
        let dims = (0..rank)
            .map(|i| padded(&input.dim[i], pads[i], pads[rank + i]))
            .collect::<Result<_, _>>()?;
        return Ok(one(elem, Some(shape_of(dims))));
    }
    // The axes the pads apply to (from opset 18): all unless an `axes` input with a
    // shape is given, whose values are then needed.
    let axes: Vec<usize> = if n.version >= 18 && shape_in(n, 3).is_some() {
        let Some(values) = int64_values(n, 3)? else {
            return Ok(one(elem, None));
        };
        let r = rank as i64;
        let mut axes = Vec::with_capacity(values.len());
        for &a in values {
            if a < -r || a >= r {
                return Err(format!(
                    "Unexpected axis value: {a}. Expected range [{}, {r})",
                    -r
                ));
            }
            let a = if a < 0 { a + r } else { a } as usize;
            if axes.contains(&a) {
                return Err(format!("Axis {a} is referred to more than once."));
            }
            axes.push(a);
        }
        axes
    } else {
        (0..rank).collect()
    };
    let unknown = || one(elem, Some(shape_of(vec![Dimension::unknown(); rank])));
    let Some(pads) = input_constant(n, 1) else {
        return Ok(unknown());
    };
    if n.version >= 18 && axes.is_empty() {
        return Ok(unknown());
    }
    if pads.dims.len() != 1 || !pads.is(INT64) {
        return Err(
            "'pads' input must be a 1D (shape: [2 * num_axes]) tensor of type int64".into(),
        );
    }
    let Some(pads) = pads.ints() else {
        return Ok(unknown());
    };
    let k = axes.len();
    if pads.len() != 2 * k {
        return Err(format!(
            "Pads has incorrect number of values. Expected 2 * {k} values. Got {} values.",
            pads.len()
        ));
    }
    let mut dims: Vec<Dimension<'static>> = if n.version >= 18 {
        // Dimensions not padded keep their size, not their name.
        input
            .dim
            .iter()
            .map(|d| {
                d.as_value()
                    .map_or_else(Dimension::unknown, Dimension::value)
            })
            .collect()
    } else {
        vec![Dimension::unknown(); rank]
    };
    for (i, &a) in axes.iter().enumerate() {
        dims[a] = padded(&input.dim[a], pads[i], pads[k + i])?;
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// The shape of input `i`, if known, for an output of the same shape.
fn shape_copy(n: &Node<'_, '_>, i: usize) -> Option<TensorShapeProto<'static>> {
    shape_in(n, i).map(owned)
}

fn quantize(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let zero_point = if has_input(n, 2) {
        n.inputs.get(2).copied().flatten()
    } else {
        None
    };
    if zero_point.is_some() && !is_tensor(n, 2) {
        return Err("Output 0 expected to have tensor type in node QuantizeLinear.".to_string());
    }
    let elem = if n.version >= 21 {
        let dtype = attr_dtype(n, "output_dtype")?.filter(|&d| d != 0);
        if zero_point.is_some() {
            let zp = elem_of(n.inputs.get(2));
            if let (Some(d), Some(z)) = (dtype, zp) {
                if d != z {
                    return Err(format!(
                        "output_dtype {d} does not match y_zero_point type {z}."
                    ));
                }
            }
            zp
        } else if dtype.is_some() {
            dtype
        } else if !has_input(n, 2) {
            Some(DataType::Uint8.to_i32())
        } else {
            None
        }
    } else if has_input(n, 2) {
        zero_point.and_then(|_| elem_of(n.inputs.get(2)))
    } else {
        Some(DataType::Uint8.to_i32())
    };
    let shape = shape_copy(n, 0);
    match elem {
        Some(e) => Ok(one(e, shape)),
        // A shape without an element type.
        None if shape.is_some() => Ok(set_elem_unset(one(0, shape))),
        None => Ok(vec![None]),
    }
}

fn dequantize(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = if n.version < 19 {
        DataType::Float.to_i32()
    } else {
        let dtype = if n.version >= 23 {
            attr_dtype(n, "output_dtype")?.filter(|&d| d != 0)
        } else {
            None
        };
        match dtype {
            Some(d) => d,
            None => required_elem(n, 1)?,
        }
    };
    Ok(one(elem, shape_copy(n, 0)))
}

fn dynamic_quantize(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let scalar = |e: DataType| Some(tensor_type(e.to_i32(), Some(shape_of(vec![]))));
    if n.node.output.len() < 3 {
        // `onnx` fails the whole inference here, even in lax mode.
        return Err(format!("Output {} is out of bounds.", n.node.output.len()));
    }
    Ok(vec![
        Some(tensor_type(DataType::Uint8.to_i32(), shape_copy(n, 0))),
        scalar(DataType::Float),
        scalar(DataType::Uint8),
    ])
}

/// The outputs with their element type left unset (not even `UNDEFINED`).
fn set_elem_unset(mut outputs: Outputs) -> Outputs {
    for t in outputs.iter_mut().flatten() {
        if let Some(TypeValue::TensorType(tt)) = t.value.as_mut() {
            tt.elem_type_raw = None;
        }
    }
    outputs
}

/// The number of bits of an element type; 0 for one without a fixed width.
fn bit_width(elem: i32) -> u32 {
    // By `TensorProto.DataType` number.
    match elem {
        1 | 6 | 12 => 32,
        7 | 11 | 13 | 14 => 64,
        15 => 128,
        4 | 5 | 10 | 16 => 16,
        2 | 3 | 9 | 17..=20 | 24 => 8,
        21..=23 => 4,
        25 | 26 => 2,
        _ => 0,
    }
}

fn bit_cast(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let to = attr_dtype(n, "to")?;
    if let (Some(from), Some(to)) = (elem_of(n.inputs.first()), to) {
        let (a, b) = (bit_width(from), bit_width(to));
        if a != 0 && b != 0 && a != b {
            return Err(format!(
                "BitCast requires input and output types to have the same bit-width, but input type has {a} bits and output type has {b} bits."
            ));
        }
    }
    let Some(to) = to else {
        return Err("Value of attribute to not specified".to_string());
    };
    Ok(one(to, shape_copy(n, 0)))
}

fn non_max_suppression(n: &Node<'_, '_>) -> Outputs {
    // Before opset 11 only the element type is given.
    let shape =
        (n.version >= 11).then(|| shape_of(vec![Dimension::unknown(), Dimension::value(3)]));
    one(INT64.to_i32(), shape)
}

fn image_decoder(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if shape_in(n, 0).is_some_and(|s| s.dim.len() != 1) {
        return Err("Input tensor must be 1-dimensional".to_string());
    }
    Ok(one(
        DataType::Uint8.to_i32(),
        Some(shape_of(vec![Dimension::unknown(); 3])),
    ))
}

fn det(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = s.dim.len();
    if rank < 2 {
        return Err("Input rank must be >= 2.".to_string());
    }
    if let (Some(h), Some(w)) = (s.dim[rank - 2].as_value(), s.dim[rank - 1].as_value()) {
        if h != w {
            return Err(format!(
                "The inner-most 2 dimensions must have the same size (mat_w:{w} != mat_h:{h})."
            ));
        }
    }
    let dims = s.dim[..rank - 2].iter().map(owned_dim).collect();
    Ok(one(elem, Some(shape_of(dims))))
}

/// The shape of a matrix product (numpy `matmul`) of inputs `a` and `b`; `None` unless
/// both shapes are known.
fn matmul_shape(
    n: &Node<'_, '_>,
    a: usize,
    b: usize,
) -> Result<Option<TensorShapeProto<'static>>, String> {
    let (Some(sa), Some(sb)) = (shape_in(n, a), shape_in(n, b)) else {
        return Ok(None);
    };
    if sa.dim.is_empty() || sb.dim.is_empty() {
        return Err("Input tensors of wrong rank (0).".to_string());
    }
    // 1-D operands become a row (left) or a column (right), the added dimension
    // dropped from the result.
    let mut left: Vec<Dimension<'static>> = sa.dim.iter().map(owned_dim).collect();
    let mut right: Vec<Dimension<'static>> = sb.dim.iter().map(owned_dim).collect();
    if left.len() == 1 {
        left.insert(0, Dimension::value(1));
    }
    if right.len() == 1 {
        right.push(Dimension::value(1));
    }
    let (l, r) = (left.len(), right.len());
    if let (Some(x), Some(y)) = (left[l - 1].as_value(), right[r - 2].as_value()) {
        if x != y {
            return Err("Incompatible dimensions for matrix multiplication".to_string());
        }
    }
    let prefix_l = shape_of(left[..l - 2].to_vec());
    let prefix_r = shape_of(right[..r - 2].to_vec());
    let mut dims = broadcast(&[&prefix_l, &prefix_r])?.dim;
    if sa.dim.len() != 1 {
        dims.push(left[l - 2].clone());
    }
    if sb.dim.len() != 1 {
        dims.push(right[r - 1].clone());
    }
    Ok(Some(shape_of(dims)))
}

fn is_tensor(n: &Node<'_, '_>, i: usize) -> bool {
    matches!(
        n.inputs
            .get(i)
            .copied()
            .flatten()
            .and_then(|t| t.value.as_ref()),
        Some(TypeValue::TensorType(_))
    )
}

fn qlinear_matmul(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if !is_tensor(n, 0) || !is_tensor(n, 3) {
        return Err("inputs are expected to have tensor type.".to_string());
    }
    for (input, zero_point) in [(0, 2), (3, 5)] {
        let zp = n.inputs.get(zero_point).copied().flatten();
        let zp_elem = elem_of(n.inputs.get(zero_point)).unwrap_or(0);
        if zp.is_none() || zp_elem != elem_of(n.inputs.get(input)).unwrap_or(0) {
            return Err("input and zero_point pair is expected to have same type.".to_string());
        }
    }
    let elem = required_elem(n, 7)?;
    Ok(one(elem, matmul_shape(n, 0, 3)?))
}

fn matmul_integer(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if !is_tensor(n, 0) || !is_tensor(n, 1) {
        return Err(
            "inputs are expected to have tensor type and output type should not be null."
                .to_string(),
        );
    }
    Ok(one(DataType::Int32.to_i32(), matmul_shape(n, 0, 1)?))
}

fn tfidf_vectorizer(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let float = DataType::Float.to_i32();
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(float, None));
    };
    let indexes = attribute(n, "ngram_indexes").map(|a| a.ints.as_slice());
    let indexes = indexes.unwrap_or_default();
    if indexes.is_empty() || indexes.iter().any(|&i| i < 0) {
        return Err("ngram_indexes must be non-empty with no negative values".to_string());
    }
    let width = indexes.iter().max().map_or(0, |&m| m.wrapping_add(1));
    let dims = match s.dim.len() {
        1 => vec![Dimension::value(width)],
        2 => vec![owned_dim(&s.dim[0]), Dimension::value(width)],
        _ => return Err("Input tensor must have rank 1 or 2".to_string()),
    };
    Ok(one(float, Some(shape_of(dims))))
}

fn unique(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let count = n.node.output.len();
    let vector = || {
        Some(tensor_type(
            INT64.to_i32(),
            Some(shape_of(vec![Dimension::unknown()])),
        ))
    };
    let y = match attr_int(n, "axis") {
        // Without an axis the input is flattened.
        None => Some(shape_of(vec![Dimension::unknown()])),
        Some(axis) => match shape_in(n, 0) {
            None => None,
            Some(s) => {
                let rank = s.dim.len() as i64;
                // `onnx` holds the axis in an `int`.
                let axis = i64::from(axis as i32);
                let axis = if axis < 0 { axis + rank } else { axis };
                if axis < 0 || axis >= rank {
                    return Err("Invalid value for attribute axis".to_string());
                }
                let dims = s
                    .dim
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        if i as i64 == axis {
                            Dimension::unknown()
                        } else {
                            owned_dim(d)
                        }
                    })
                    .collect();
                Some(shape_of(dims))
            }
        },
    };
    let mut outputs = vec![Some(tensor_type(elem, y))];
    outputs.extend((1..count.min(4)).map(|_| vector()));
    Ok(outputs)
}

fn string_split(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let string = DataType::String.to_i32();
    let (Some(s), Some(string_in)) = (shape_in(n, 0), elem_of(n.inputs.first())) else {
        return Ok(vec![None; n.node.output.len()]);
    };
    if string_in != string {
        return Ok(vec![None; n.node.output.len()]);
    }
    if n.node.output.len() < 2 {
        // `onnx` fails the whole inference here, even in lax mode.
        return Err("Output 1 is out of bounds.".to_string());
    }
    let mut split = owned(s);
    split.dim.push(Dimension::unknown());
    Ok(vec![
        Some(tensor_type(string, Some(split))),
        Some(tensor_type(INT64.to_i32(), Some(owned(s)))),
    ])
}

fn string_normalizer(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let string = DataType::String.to_i32();
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(string, None));
    };
    // The last dimension is unknown: stop words may be dropped.
    let dims = match s.dim.len() {
        1 => vec![Dimension::unknown()],
        2 if s.dim[0].as_value() == Some(1) => vec![owned_dim(&s.dim[0]), Dimension::unknown()],
        _ => {
            return Err(
                "Input shape must have either [C] or [1,C] dimensions where C > 0".to_string(),
            )
        }
    };
    Ok(one(string, Some(shape_of(dims))))
}

/// `v` truncated to an int64 as C++ converts a floating-point value on x86: `i64::MIN`
/// when out of range (or NaN).
fn trunc_f64_to_i64(v: f64) -> i64 {
    // 2^63: the first double past the int64 range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if (-LIMIT..LIMIT).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// The first value of constant input `i` as an integer (`onnx`'s
/// `GetScalarValueFromTensor`): a float or double truncated, an int32 or int64 as is,
/// an error for another type. `None` when the input is not a constant (or its values
/// were not read).
fn scalar_value(n: &Node<'_, '_>, i: usize) -> Result<Option<i64>, String> {
    let Some(c) = input_constant(n, i) else {
        return Ok(None);
    };
    let first = match DataType::from_i32(c.elem) {
        Some(DataType::Float | DataType::Double) => {
            c.floats().map(|v| v.first().map(|&x| trunc_f64_to_i64(x)))
        }
        Some(DataType::Int32 | DataType::Int64) => c.ints().map(|v| v.first().copied()),
        _ => return Err(format!("Unsupported input data type of {}", c.elem)),
    };
    match first {
        None => Ok(None),
        Some(None) => Err(format!("Input {} holds no value", n.node.input[i])),
        Some(Some(v)) => Ok(Some(v)),
    }
}

/// The value of a constant scalar input `i` (as [`scalar_value`]): `not_scalar` is the
/// error when the constant has dimensions.
fn scalar_const(n: &Node<'_, '_>, i: usize, not_scalar: &str) -> Result<Option<i64>, String> {
    match input_constant(n, i) {
        Some(c) if !c.dims.is_empty() => Err(not_scalar.to_string()),
        _ => scalar_value(n, i),
    }
}

/// Whether the input's type is known (whatever its shape).
fn typed(n: &Node<'_, '_>, i: usize) -> bool {
    n.inputs.get(i).is_some_and(Option::is_some)
}

fn dft(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let flag = |name: &str| attr_int(n, name).unwrap_or(0) != 0;
    let (onesided, inverse) = (flag("onesided"), flag("inverse"));
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = s.dim.len() as i64;
    if rank < 2 {
        return Err(
            "input tensor must have rank >= 2, including the complex dimension.".to_string(),
        );
    }
    if onesided {
        let last = s.dim[s.dim.len() - 1].as_value();
        if inverse && last.is_some_and(|v| v != 2) {
            return Err(
                "inverse one-sided DFT requires complex input (last dimension must be 2)".into(),
            );
        }
        if !inverse && last.is_some_and(|v| v != 1) {
            return Err("one-sided DFT requires real input (last dimension must be 1)".into());
        }
    }
    // The last dimension holds the real and imaginary parts: 1 for a real output.
    let complex = Dimension::value(if onesided && inverse { 1 } else { 2 });
    let mut dims: Vec<Dimension<'static>> = s.dim.iter().map(owned_dim).collect();
    let last = dims.len() - 1;
    let axis = if n.version >= 20 {
        if !has_input(n, 2) {
            -2
        } else {
            match scalar_const(n, 2, "axis input must be a scalar.")? {
                Some(a) => a,
                None => {
                    // The signal axis is not known: neither is its length when it changes.
                    if onesided || has_input(n, 1) {
                        dims = vec![Dimension::unknown(); dims.len()];
                    }
                    dims[last] = complex;
                    return Ok(one(elem, Some(shape_of(dims))));
                }
            }
        }
    } else {
        i64::from(attr_int(n, "axis").unwrap_or(1) as i32)
    };
    if !(-rank <= axis && axis != -1 && axis < rank - 1) {
        return Err(format!(
            "axis attribute value {axis} is invalid for a tensor of rank {rank}. Valid values are '-rank <= axis && axis != -1 && axis < rank - 1'"
        ));
    }
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    if has_input(n, 1) {
        match scalar_const(n, 1, "dft_length input must be a scalar.")? {
            Some(length) => {
                let len = if onesided && !inverse {
                    (length >> 1).wrapping_add(1)
                } else {
                    length
                };
                dims[axis] = Dimension::value(len);
            }
            // Opset 17 gives up on the shape; later ones only on the size (a name stays).
            None if n.version < 20 => return Ok(one(elem, None)),
            None => {
                if dims[axis].as_value().is_some() {
                    dims[axis] = Dimension::unknown();
                }
            }
        }
    } else if onesided {
        dims[axis] = match dims[axis].as_value() {
            Some(v) if inverse => {
                let v = v.checked_sub(1).and_then(|v| v.checked_mul(2));
                Dimension::value(v.ok_or("Integer overflow in DFT output length")?)
            }
            Some(v) => Dimension::value((v >> 1) + 1),
            None => Dimension::unknown(),
        };
    }
    dims[last] = complex;
    Ok(one(elem, Some(shape_of(dims))))
}

fn einsum(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let equation: Vec<u8> = attribute(n, "equation")
        .and_then(|a| a.s.as_ref())
        .map(|s| s.iter().copied().filter(|&c| c != b' ').collect())
        .unwrap_or_default();
    let count = n.node.input.len();
    let shapes: Option<Vec<&TensorShapeProto<'_>>> = (0..count).map(|i| shape_in(n, i)).collect();
    let (Some(shapes), false) = (shapes, equation.is_empty() || count == 0) else {
        return Ok(one(elem, None));
    };
    let find = |s: &[u8], pat: &[u8]| s.windows(pat.len()).position(|w| w == pat);
    let (left, right) = match find(&equation, b"->") {
        Some(p) => (&equation[..p], Some(&equation[p + 2..])),
        None => (&equation[..], None),
    };
    // Each label's dimension (from its first occurrence), and the labels repeated.
    let mut labels: BTreeMap<u8, Dimension<'static>> = BTreeMap::new();
    let mut repeated = HashSet::new();
    let mut ellipsis: Option<Vec<Dimension<'static>>> = None;
    // The dimensions the first ellipsis covers, and its operand.
    let mut ellipsis_rank: Option<(usize, usize)> = None;
    let mut operands = 0;
    for term in left.split(|&c| c == b',') {
        let Some(shape) = shapes.get(operands) else {
            return Err(
                "Number of input tensors does not match the operands in the equation.".into(),
            );
        };
        let rank = shape.dim.len();
        let at = find(term, b"...");
        let letters = term.iter().filter(|c| c.is_ascii_alphabetic()).count();
        if at.is_some() {
            if rank < letters {
                return Err(format!(
                    "Ellipsis represents incompatible dimensions for input {operands}. Rank {rank} is less than term size {letters}."
                ));
            }
            match ellipsis_rank {
                None => ellipsis_rank = Some((rank - letters, operands)),
                Some((k, first)) if k != rank - letters => {
                    return Err(format!(
                        "Ellipsis for input {operands} represents {} dimensions, but ellipsis for input {first} represents {k} dimensions.",
                        rank - letters
                    ))
                }
                Some(_) => {}
            }
        } else if rank != letters {
            return Err(format!(
                "Rank of input {operands} ({rank}) does not match the equation indices ({letters})."
            ));
        }
        // The position in the shape of the next label.
        let mut pos = 0;
        let mut index = 0;
        while index < term.len() {
            if Some(index) == at {
                let k = rank - letters;
                let dims = &shape.dim[pos..pos + k];
                match ellipsis.as_mut() {
                    None => ellipsis = Some(dims.iter().map(owned_dim).collect()),
                    // A later ellipsis widens the sizes of 1 it meets (broadcast).
                    Some(known) => {
                        for (cur, d) in known.iter_mut().zip(dims) {
                            if let (Some(c), Some(v)) = (cur.as_value(), d.as_value()) {
                                if c == 1 && v > c {
                                    *cur = Dimension::value(v);
                                }
                            }
                        }
                    }
                }
                pos += k;
                index += 3;
                continue;
            }
            let c = term[index];
            if !c.is_ascii_alphabetic() {
                // `onnx` never returns on such an equation.
                return Err(format!(
                    "Invalid character in Einsum equation: {}",
                    c as char
                ));
            }
            if let std::collections::btree_map::Entry::Vacant(e) = labels.entry(c) {
                e.insert(owned_dim(&shape.dim[pos]));
            } else {
                repeated.insert(c);
            }
            pos += 1;
            index += 1;
        }
        operands += 1;
    }
    if operands != count {
        return Err("Number of input tensors does not match the operands in the equation.".into());
    }
    let ellipsis = ellipsis.unwrap_or_default();
    let mut dims = Vec::new();
    match right {
        Some(right) => {
            let at = find(right, b"...");
            let mut index = 0;
            while index < right.len() {
                if Some(index) == at {
                    dims.extend(ellipsis.iter().cloned());
                    index += 3;
                    continue;
                }
                let c = right[index];
                if c.is_ascii_alphabetic() {
                    let Some(d) = labels.get(&c) else {
                        return Err(
                            "Equation output contains a label missing from the inputs".into()
                        );
                    };
                    dims.push(d.clone());
                }
                index += 1;
            }
        }
        None => {
            // Implicit output: the ellipsis, then the labels seen once in ASCII order.
            dims.extend(ellipsis.iter().cloned());
            dims.extend(
                labels
                    .iter()
                    .filter(|(c, _)| !repeated.contains(*c))
                    .map(|(_, d)| d.clone()),
            );
        }
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn compress(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let axis = attr_int(n, "axis");
    let Some(axis) = axis else {
        // Without an axis the input is flattened.
        return Ok(one(elem, Some(shape_of(vec![Dimension::unknown()]))));
    };
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let r = s.dim.len() as i64;
    if r < 1 {
        return Err("Indices tensor must have rank >= 1".to_string());
    }
    let axis = i64::from(axis as i32);
    if axis < -r || axis >= r {
        return Err("'axis' must be in [-rank(indices), rank(indices)-1]".to_string());
    }
    let axis = if axis < 0 { axis + r } else { axis } as usize;
    Ok(one(elem, Some(shape_of(except_axis(s, axis)))))
}

/// The dimensions of `s`, the one at `axis` unknown.
fn except_axis(s: &TensorShapeProto<'_>, axis: usize) -> Vec<Dimension<'static>> {
    s.dim
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i == axis {
                Dimension::unknown()
            } else {
                owned_dim(d)
            }
        })
        .collect()
}

/// A copy of a dimension's size or name only.
fn plain_dim(d: &Dimension<'_>) -> Dimension<'static> {
    match (d.as_value(), d.as_param()) {
        (Some(v), _) => Dimension::value(v),
        (None, Some(p)) => Dimension::param(p.to_string()),
        _ => Dimension::unknown(),
    }
}

fn one_hot(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.node.input.len() != 3 {
        return Err("OneHot node must have three inputs.".to_string());
    }
    if n.version < 11 {
        // Constant indices of the types `onnx` reads must not be negative.
        let negative = match input_constant(n, 0) {
            Some(c) if c.is(INT64) || c.is(DataType::Int32) => {
                c.ints().is_some_and(|v| v.iter().any(|&x| x < 0))
            }
            Some(c) if c.is(DataType::Float) || c.is(DataType::Double) => {
                c.floats().is_some_and(|v| v.iter().any(|&x| x < 0.0))
            }
            _ => false,
        };
        if negative {
            return Err("Input 'indices' must be non-negative for OneHot opset < 11.".to_string());
        }
    }
    let mut depth = None;
    if let Some(ds) = shape_in(n, 1) {
        if ds.dim.len() > 1 {
            return Err("Input 'depth' must be a scalar or rank 1 tensor.".to_string());
        }
        if ds.dim.len() == 1 && ds.dim[0].as_value().is_some_and(|v| v > 1) {
            return Err("Input 'depth' must have at most one element.".to_string());
        }
        // An int64, int32 or float constant (a float truncated).
        depth = match input_constant(n, 1) {
            Some(c) if c.is(INT64) || c.is(DataType::Int32) => {
                c.ints().and_then(|v| v.first().copied())
            }
            Some(c) if c.is(DataType::Float) => c
                .floats()
                .and_then(|v| v.first().map(|&x| trunc_f64_to_i64(x))),
            _ => None,
        };
        if depth.is_some_and(|d| d < 0) {
            return Err("Input 'depth' must be non-negative.".to_string());
        }
    }
    if let Some(vs) = shape_in(n, 2) {
        if vs.dim.len() != 1 {
            return Err("Input 'values' must be rank 1 tensor.".to_string());
        }
        if vs.dim[0].as_value().is_some_and(|v| v != 2) {
            return Err("Input 'values' must have exactly two elements.".to_string());
        }
    }
    let elem = required_elem(n, 2)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let r = s.dim.len() as i64;
    if r < 1 {
        return Err("Indices tensor must have rank >= 1".to_string());
    }
    let out_rank = r + 1;
    let axis = i64::from(attr_int(n, "axis").unwrap_or(-1) as i32);
    if axis < -out_rank || axis >= out_rank {
        return Err("'axis' must be in [-rank(indices)-1, rank(indices)]".to_string());
    }
    let axis = if axis < 0 { axis + out_rank } else { axis } as usize;
    let mut dims: Vec<Dimension<'static>> = s.dim.iter().map(plain_dim).collect();
    dims.insert(
        axis,
        depth.map_or_else(Dimension::unknown, Dimension::value),
    );
    Ok(one(elem, Some(shape_of(dims))))
}

fn gather_nd(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(data), Some(indices)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let (r, q) = (data.dim.len(), indices.dim.len());
    if r < 1 || q < 1 {
        return Err(
            "Both `data` and `indices` input tensors in GatherND op need to have rank larger than 0."
                .to_string(),
        );
    }
    let Some(last) = indices.dim[q - 1].as_value() else {
        return Ok(one(elem, None));
    };
    let batch_dims = if n.version >= 12 {
        attr_int(n, "batch_dims").unwrap_or(0)
    } else {
        0
    };
    let last = checked_add(last, batch_dims)?;
    if last > r as i64 {
        return Err("Last dimension of `indices` input tensor in GatherND op must not be larger than the rank of `data` tensor".to_string());
    }
    if last < 0 {
        return Err("Last dimension of `indices` plus batch_dims is negative".to_string());
    }
    let dims: Vec<Dimension<'static>> = indices.dim[..q - 1]
        .iter()
        .chain(&data.dim[last as usize..])
        .map(owned_dim)
        .collect();
    // `onnx` makes the shape only when it adds a dimension to it.
    let shape = (!dims.is_empty()).then(|| shape_of(dims));
    Ok(one(elem, shape))
}

/// `onnx`'s check that two known sizes agree.
fn same_size(a: &Dimension<'_>, b: &Dimension<'_>) -> Result<(), String> {
    match (a.as_value(), b.as_value()) {
        (Some(x), Some(y)) if x != y => Err(format!(
            "Dimension mismatch in unification between {x} and {y}"
        )),
        _ => Ok(()),
    }
}

fn tensor_scatter(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let cache = shape_in(n, 0);
    if let (Some(c), Some(u)) = (cache, shape_in(n, 1)) {
        let rank = c.dim.len() as i64;
        if u.dim.len() as i64 != rank {
            return Err(format!(
                "past_cache and update must have the same rank. past_cache_rank={rank}, update_rank={}",
                u.dim.len()
            ));
        }
        let axis = attr_int(n, "axis").unwrap_or(-2);
        let axis = if axis < 0 { axis + rank } else { axis };
        if axis <= 0 || axis >= rank {
            return Err(format!("axis {axis} is out of range for rank {rank}"));
        }
        for (i, (a, b)) in c.dim.iter().zip(&u.dim).enumerate() {
            if i as i64 != axis {
                same_size(a, b)?;
            }
        }
    }
    if let Some(w) = shape_in(n, 2) {
        if w.dim.len() != 1 {
            return Err(format!(
                "Input 2 expected to have rank 1 but has rank {}",
                w.dim.len()
            ));
        }
        if let Some(c) = cache {
            let Some(d) = c.dim.first() else {
                return Err("Input 0 expected to have rank >0 but has rank 0".to_string());
            };
            same_size(d, &w.dim[0])?;
        }
    }
    Ok(one(elem, shape_copy(n, 0)))
}

fn regex_full_match(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let t = n.inputs.first().copied().flatten();
    if t.is_some() && !is_tensor(n, 0) {
        return Err("Mismatch between inferred and declared type.".to_string());
    }
    Ok(one(DataType::Bool.to_i32(), shape_copy(n, 0)))
}

/// The element type an `output_datatype` attribute gives (float by default).
fn output_datatype(n: &Node<'_, '_>) -> Result<i32, String> {
    let v = attr_int(n, "output_datatype").unwrap_or(i64::from(DataType::Float.to_i32()));
    i32::try_from(v).map_err(|_| format!("output_datatype {v} out of range"))
}

fn window(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = output_datatype(n)?;
    if shape_in(n, 0).is_none() {
        return Ok(one(elem, None));
    }
    let Some(size) = scalar_const(n, 0, "size input must be a scalar.")? else {
        return Ok(one(elem, None));
    };
    if size <= 0 {
        return Err("size input must be greater than 0.".to_string());
    }
    Ok(one(elem, Some(shape_of(vec![Dimension::value(size)]))))
}

fn mel_weight_matrix(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = output_datatype(n)?;
    if shape_in(n, 0).is_none() || shape_in(n, 1).is_none() {
        return Ok(one(elem, None));
    }
    if input_constant(n, 0).is_none() || input_constant(n, 1).is_none() {
        return Ok(one(elem, None));
    }
    let bins = scalar_const(n, 0, "num_mel_bins input must be scalar.")?.unwrap_or(-1);
    let length = scalar_const(n, 1, "dft_length input must be scalar.")?.unwrap_or(-1);
    if bins > 0 && length > 0 {
        let dims = vec![Dimension::value((length >> 1) + 1), Dimension::value(bins)];
        return Ok(one(elem, Some(shape_of(dims))));
    }
    Ok(one(elem, None))
}

/// `v` converted as C++ converts a float to int64 on x86: truncated, and `i64::MIN`
/// when out of range (or NaN).
fn trunc_to_i64(v: f32) -> i64 {
    const LIMIT: f32 = 9_223_372_036_854_775_808.0;
    if (-LIMIT..LIMIT).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

fn stft(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let none = || Ok(one(elem, None));
    let Some(s) = shape_in(n, 0) else {
        return none();
    };
    if s.dim.len() < 2 {
        return Err("First input should have at least 2 dimensions.".to_string());
    }
    let Some(signal) = s.dim[1].as_value() else {
        return none();
    };
    let Some(step) = scalar_value(n, 1)? else {
        return none();
    };
    let frame_length = if has_input(n, 3) {
        match scalar_const(n, 3, "frame_length input must be scalar.")? {
            Some(length) => Some(length),
            None => return none(),
        }
    } else {
        None
    };
    // A window of known type counts, shape or not (no shape is rank 0).
    let window = if n.node.input.len() >= 3 && typed(n, 2) {
        if !is_tensor(n, 2) {
            return Err("Input 2 expected to be a tensor or a sparse tensor type.".to_string());
        }
        Some(shape_in(n, 2).map_or(0, |w| w.dim.len()))
    } else {
        None
    };
    let window_len = || shape_in(n, 2).and_then(|w| w.dim.first()?.as_value());
    let dft_size = match (window, frame_length) {
        (None, None) => return none(),
        (Some(rank), Some(length)) => {
            if rank != 1 {
                return Err("window input must have rank = 1.".to_string());
            }
            if window_len().is_some_and(|w| w != length) {
                return Err("If STFT has both a window input and frame_length specified, the dimension of the window must match the frame_length specified!".to_string());
            }
            length
        }
        (Some(rank), None) => {
            if rank != 1 {
                return Err("window input must have rank = 1.".to_string());
            }
            match window_len() {
                Some(w) => w,
                None => return none(),
            }
        }
        (None, Some(length)) => length,
    };
    let onesided = attr_int(n, "onesided").unwrap_or(0) != 0;
    let bins = if onesided {
        (dft_size >> 1).wrapping_add(1)
    } else {
        dft_size
    };
    // `onnx` divides in single precision.
    let frames = trunc_to_i64(signal.wrapping_sub(dft_size) as f32 / step as f32).wrapping_add(1);
    let batch = s.dim[0]
        .as_value()
        .map_or_else(Dimension::unknown, Dimension::value);
    let dims = vec![
        batch,
        Dimension::value(frames),
        Dimension::value(bins),
        Dimension::value(2),
    ];
    Ok(one(elem, Some(shape_of(dims))))
}

fn random(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = attr_dtype(n, "dtype")?.unwrap_or(DataType::Float.to_i32());
    let Some(a) = attribute(n, "shape")
        .filter(|a| a.r#type.map(|t| t.raw()) == Some(AttributeType::Ints as i32))
    else {
        return Err("Attribute shape should specify a shape".to_string());
    };
    let mut dims = Vec::with_capacity(a.ints.len());
    for &d in &a.ints {
        if d < 0 {
            return Err("Negative values are not allowed in a shape specification".to_string());
        }
        dims.push(Dimension::value(d));
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn random_like(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match attr_dtype(n, "dtype")? {
        Some(d) => d,
        None => required_elem(n, 0)?,
    };
    Ok(one(elem, shape_copy(n, 0)))
}

fn multinomial(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match attr_int(n, "dtype") {
        None => DataType::Int32.to_i32(),
        Some(d) if d == 6 || d == 7 => d as i32,
        Some(_) => return Err("Output type must be int32 or int64".to_string()),
    };
    let batch = match shape_in(n, 0) {
        Some(s) if s.dim.len() != 2 => return Err("Input tensor must have rank 2".to_string()),
        Some(s) => owned_dim(&s.dim[0]),
        None => Dimension::unknown(),
    };
    let samples = Dimension::value(attr_int(n, "sample_size").unwrap_or(1));
    Ok(one(elem, Some(shape_of(vec![batch, samples]))))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::node;
    use crate::onnx::{
        AttributeProto, DataType, Dimension, NodeProto, TensorProto, ValueInfoProto,
    };

    /// A symbolic or sized dimension from its text.
    fn dim(d: &str) -> Dimension<'static> {
        d.parse::<i64>()
            .map_or_else(|_| Dimension::param(d.to_string()), Dimension::value)
    }

    fn input(name: &str, elem: DataType, dims: &[&str]) -> ValueInfoProto<'static> {
        ValueInfoProto::tensor(
            name.to_string(),
            elem,
            dims.iter().map(|d| dim(d)).collect::<Vec<_>>(),
        )
    }

    /// The inferred types (strict mode) of the values the nodes compute, or the error.
    fn infer(
        opset: i64,
        nodes: Vec<NodeProto<'static>>,
        inputs: Vec<ValueInfoProto<'static>>,
        initializers: Vec<TensorProto<'static>>,
    ) -> Result<Vec<String>, String> {
        crate::shape::test_support::strict_types(opset, nodes, inputs, initializers)
    }

    fn ints(name: &str, dims: &[i64], values: Vec<i64>) -> TensorProto<'static> {
        TensorProto::from_vec(name.to_string(), dims.to_vec(), values).unwrap()
    }

    #[test]
    fn range_has_a_length_only_from_constant_scalars_of_one_type() {
        let consts = || {
            vec![
                ints("s", &[], vec![1]),
                ints("l", &[], vec![10]),
                ints("d", &[], vec![3]),
            ]
        };
        let range = node("Range", &["s", "l", "d"], &["y"]);
        assert_eq!(
            infer(21, vec![range.clone()], vec![], consts()),
            Ok(vec!["y: int64[3]".into()])
        );
        // A start given at run time: the output is 1-D of unknown length.
        let x = input("s", DataType::Int64, &[]);
        assert_eq!(
            infer(21, vec![range.clone()], vec![x], consts()[1..].to_vec()),
            Ok(vec!["y: int64[unk__0]".into()])
        );
        // A negative step counts down; an empty range has length 0.
        let down = vec![
            ints("s", &[], vec![10]),
            ints("l", &[], vec![1]),
            ints("d", &[], vec![-4]),
        ];
        assert_eq!(
            infer(21, vec![range.clone()], vec![], down),
            Ok(vec!["y: int64[3]".into()])
        );
        let vector = vec![
            ints("s", &[1], vec![1]),
            ints("l", &[], vec![10]),
            ints("d", &[], vec![3]),
        ];
        assert!(infer(21, vec![range.clone()], vec![], vector).is_err());
        let mixed = vec![
            TensorProto::from_vec("s", [], vec![1i32]).unwrap(),
            ints("l", &[], vec![10]),
            ints("d", &[], vec![3]),
        ];
        assert!(infer(21, vec![range], vec![], mixed).is_err());
    }

    fn floats(name: &str, dims: &[i64], values: Vec<f32>) -> TensorProto<'static> {
        TensorProto::from_vec(name.to_string(), dims.to_vec(), values).unwrap()
    }

    fn doubles(name: &str, dims: &[i64], values: Vec<f64>) -> TensorProto<'static> {
        TensorProto::from_vec(name.to_string(), dims.to_vec(), values).unwrap()
    }

    #[test]
    fn range_of_float_constants_takes_the_difference_in_their_own_precision() {
        let range = || vec![node("Range", &["s", "l", "d"], &["y"])];
        let bounds = |s: f32, l: f32, d: f32| {
            vec![
                floats("s", &[], vec![s]),
                floats("l", &[], vec![l]),
                floats("d", &[], vec![d]),
            ]
        };
        // 0.3f - 0.1f is a little over 0.2 in single precision: 3 values, not 2.
        assert_eq!(
            infer(11, range(), vec![], bounds(0.1, 0.3, 0.1)),
            Ok(vec!["y: float[3]".into()])
        );
        let bounds64 = vec![
            doubles("s", &[], vec![0.1]),
            doubles("l", &[], vec![0.3]),
            doubles("d", &[], vec![0.1]),
        ];
        assert_eq!(
            infer(11, range(), vec![], bounds64),
            Ok(vec!["y: double[2]".into()])
        );
        assert_eq!(
            infer(11, range(), vec![], bounds(0.5, 3.0, 0.7)),
            Ok(vec!["y: float[4]".into()])
        );
        assert_eq!(
            infer(11, range(), vec![], bounds(3.0, 1.0, 0.5)),
            Ok(vec!["y: float[0]".into()])
        );
        // float16 bounds give no length; a bound of another type or with a dimension is
        // refused.
        let halves = ["s", "l", "d"].map(|n| {
            TensorProto::from_vec(n, Vec::<i64>::new(), vec![half::f16::from_f32(1.0)]).unwrap()
        });
        assert_eq!(
            infer(11, range(), vec![], halves.to_vec()),
            Ok(vec!["y: float16[unk__0]".into()])
        );
        let mut mixed = bounds(3.0, 1.0, 0.5);
        mixed[1] = doubles("l", &[], vec![1.0]);
        let e = infer(11, range(), vec![], mixed).unwrap_err();
        assert!(e.contains("must be of the same type"), "{e}");
        let mut vector = bounds(3.0, 1.0, 0.5);
        vector[0] = floats("s", &[1], vec![3.0]);
        let e = infer(11, range(), vec![], vector).unwrap_err();
        assert!(e.contains("should be scalars"), "{e}");
    }

    #[test]
    fn one_hot_and_signal_sizes_read_float_constants_truncated() {
        let one_hot = || vec![node("OneHot", &["i", "d", "v"], &["y"])];
        let iv = || {
            vec![
                input("i", DataType::Int64, &["2", "3"]),
                input("v", DataType::Float, &["2"]),
            ]
        };
        let depth = |t: TensorProto<'static>| infer(11, one_hot(), iv(), vec![t]);
        assert_eq!(
            depth(floats("d", &[], vec![5.7])),
            Ok(vec!["y: float[2,3,5]".into()])
        );
        // `-0.5` truncates to 0; a double depth is not read.
        assert_eq!(
            depth(floats("d", &[1], vec![-0.5])),
            Ok(vec!["y: float[2,3,0]".into()])
        );
        assert_eq!(
            depth(doubles("d", &[], vec![5.7])),
            Ok(vec!["y: float[2,3,unk__0]".into()])
        );
        // Before opset 11, constant float indices must not be negative.
        let e = infer(
            9,
            one_hot(),
            vec![input("v", DataType::Float, &["2"])],
            vec![floats("i", &[2], vec![1.0, -2.0]), ints("d", &[], vec![4])],
        )
        .unwrap_err();
        assert!(e.contains("must be non-negative"), "{e}");

        let hann = || vec![node("HannWindow", &["s"], &["y"])];
        assert_eq!(
            infer(17, hann(), vec![], vec![floats("s", &[], vec![10.9])]),
            Ok(vec!["y: float[10]".into()])
        );
        let int16 = TensorProto::from_vec("s", Vec::<i64>::new(), vec![10i16]).unwrap();
        let e = infer(17, hann(), vec![], vec![int16]).unwrap_err();
        assert!(e.contains("Unsupported input data type of 5"), "{e}");
        let e = infer(17, hann(), vec![], vec![ints("s", &[1], vec![10])]).unwrap_err();
        assert!(e.contains("size input must be a scalar."), "{e}");

        let stft = vec![node("STFT", &["x", "st", "", "fl"], &["y"])];
        let x = vec![input("x", DataType::Float, &["1", "128", "1"])];
        let sizes = vec![floats("st", &[], vec![8.5]), doubles("fl", &[], vec![16.2])];
        assert_eq!(
            infer(17, stft, x, sizes),
            Ok(vec!["y: float[1,15,16,2]".into()])
        );
        let dft = vec![node("DFT", &["x", "l", "a"], &["y"])];
        let x = vec![input("x", DataType::Float, &["1", "10", "2"])];
        let length = vec![doubles("l", &[], vec![7.9]), ints("a", &[], vec![1])];
        assert_eq!(
            infer(20, dft, x, length),
            Ok(vec!["y: float[1,7,2]".into()])
        );
    }

    #[test]
    fn pads_of_another_type_than_int64_are_refused() {
        let pad = vec![node("Pad", &["x", "p"], &["y"])];
        let x = vec![input("x", DataType::Float, &["5", "5"])];
        let e = infer(18, pad, x, vec![floats("p", &[4], vec![1.0; 4])]).unwrap_err();
        assert!(e.contains("tensor of type int64"), "{e}");
    }

    #[test]
    fn split_by_count_sizes_or_input_in_each_version() {
        let x = || vec![input("x", DataType::Float, &["N", "7"])];
        let three = node("Split", &["x"], &["a", "b", "c"])
            .with_attribute(AttributeProto::int("axis", 1))
            .with_attribute(AttributeProto::int("num_outputs", 3));
        assert_eq!(
            infer(18, vec![three], x(), vec![]),
            Ok(vec![
                "a: float[N,3]".into(),
                "b: float[N,3]".into(),
                "c: float[N,1]".into()
            ])
        );
        let sizes =
            node("Split", &["x", "s"], &["a", "b"]).with_attribute(AttributeProto::int("axis", -1));
        assert_eq!(
            infer(
                13,
                vec![sizes.clone()],
                x(),
                vec![ints("s", &[2], vec![2, 5])]
            ),
            Ok(vec!["a: float[N,2]".into(), "b: float[N,5]".into()])
        );
        assert!(infer(13, vec![sizes], x(), vec![ints("s", &[2], vec![2, 2])]).is_err());
        // Opset 11 splits evenly without sizes, and refuses an uneven split.
        let halves =
            node("Split", &["x"], &["a", "b"]).with_attribute(AttributeProto::int("axis", 1));
        assert!(infer(11, vec![halves.clone()], x(), vec![]).is_err());
        // A symbolic split axis leaves each part's size unknown.
        assert_eq!(
            infer(11, vec![node("Split", &["x"], &["a", "b"])], x(), vec![]),
            Ok(vec![
                "a: float[unk__0,7]".into(),
                "b: float[unk__1,7]".into()
            ])
        );
        let huge = node("Split", &["x"], &["a", "b"])
            .with_attribute(AttributeProto::int("axis", i64::MAX));
        assert!(infer(18, vec![huge], x(), vec![]).is_err());
    }

    #[test]
    fn pad_grows_known_sizes_and_keeps_names_only_when_unpadded() {
        let x = || vec![input("x", DataType::Float, &["N", "3", "M"])];
        let pads = ints("p", &[6], vec![0, 1, 0, 0, 2, -1]);
        assert_eq!(
            infer(13, vec![node("Pad", &["x", "p"], &["y"])], x(), vec![pads]),
            Ok(vec!["y: float[N,6,unk__0]".into()])
        );
        // From opset 18 the pads may apply to some axes only; the others keep their
        // size but not their name.
        let some = vec![
            ints("p", &[4], vec![0, 1, 0, 2]),
            ints("a", &[2], vec![1, -1]),
        ];
        assert_eq!(
            infer(
                18,
                vec![node("Pad", &["x", "p", "", "a"], &["y"])],
                x(),
                some
            ),
            Ok(vec!["y: float[unk__0,3,unk__1]".into()])
        );
        let short = ints("p", &[4], vec![0, 1, 0, 0]);
        assert!(infer(13, vec![node("Pad", &["x", "p"], &["y"])], x(), vec![short]).is_err());
        let big = vec![input("x", DataType::Float, &[&i64::MAX.to_string()])];
        let grow = ints("p", &[2], vec![1, 0]);
        assert!(infer(13, vec![node("Pad", &["x", "p"], &["y"])], big, vec![grow]).is_err());
        // Opset 2 reads the pads from an attribute.
        let attr = node("Pad", &["x"], &["y"])
            .with_attribute(AttributeProto::ints("pads", vec![0, 0, 1, 0, 0, 1]));
        assert_eq!(
            infer(2, vec![attr], x(), vec![]),
            Ok(vec!["y: float[N,3,unk__0]".into()])
        );
    }

    #[test]
    fn quantization_types_follow_the_zero_point_or_the_attribute() {
        let x = || {
            vec![
                input("x", DataType::Float, &["N", "3"]),
                input("s", DataType::Float, &[]),
            ]
        };
        let q = node("QuantizeLinear", &["x", "s"], &["y"]);
        assert_eq!(
            infer(21, vec![q.clone()], x(), vec![]),
            Ok(vec!["y: uint8[N,3]".into()])
        );
        let int8 = q
            .clone()
            .with_attribute(AttributeProto::int("output_dtype", 3));
        assert_eq!(
            infer(21, vec![int8], x(), vec![]),
            Ok(vec!["y: int8[N,3]".into()])
        );
        let mut with_zp = x();
        with_zp.push(input("z", DataType::Int8, &[]));
        let clash = node("QuantizeLinear", &["x", "s", "z"], &["y"])
            .with_attribute(AttributeProto::int("output_dtype", 2));
        assert!(infer(21, vec![clash], with_zp, vec![]).is_err());
        let dq = |opset| {
            let inputs = vec![
                input("x", DataType::Int8, &["N"]),
                input("s", DataType::Float16, &[]),
            ];
            infer(
                opset,
                vec![node("DequantizeLinear", &["x", "s"], &["y"])],
                inputs,
                vec![],
            )
        };
        assert_eq!(dq(13), Ok(vec!["y: float[N]".into()]));
        assert_eq!(dq(19), Ok(vec!["y: float16[N]".into()]));
    }

    #[test]
    fn einsum_labels_take_the_dimensions_of_their_first_operand() {
        let inputs = || {
            vec![
                input("a", DataType::Float, &["2", "N", "3"]),
                input("b", DataType::Float, &["1", "3", "M"]),
            ]
        };
        let einsum = |eq: &str| {
            node("Einsum", &["a", "b"], &["y"]).with_attribute(AttributeProto::string(
                "equation",
                eq.to_string().into_bytes(),
            ))
        };
        assert_eq!(
            infer(12, vec![einsum("...ij,...jk->...ik")], inputs(), vec![]),
            Ok(vec!["y: float[2,N,M]".into()])
        );
        // Without an output the labels seen once come in ASCII order.
        assert_eq!(
            infer(12, vec![einsum("bij,bjk")], inputs(), vec![]),
            Ok(vec!["y: float[N,M]".into()])
        );
        assert!(infer(12, vec![einsum("ij,jk")], inputs(), vec![]).is_err());
        assert!(infer(12, vec![einsum("bij,bjk->bq")], inputs(), vec![]).is_err());
        // `onnx` never returns on a stray character; this is an error here.
        assert!(infer(12, vec![einsum("b.j,bjk")], inputs(), vec![]).is_err());
    }

    #[test]
    fn signal_operators_size_their_frequency_axis() {
        let x = vec![input("x", DataType::Float, &["B", "9", "1"])];
        let rfft = node("DFT", &["x"], &["y"]).with_attribute(AttributeProto::int("onesided", 1));
        assert_eq!(
            infer(20, vec![rfft], x.clone(), vec![]),
            Ok(vec!["y: float[B,5,2]".into()])
        );
        let complex_in = node("DFT", &["x"], &["y"])
            .with_attribute(AttributeProto::int("onesided", 1))
            .with_attribute(AttributeProto::int("inverse", 1));
        assert!(infer(20, vec![complex_in], x, vec![]).is_err());
        let signal = vec![
            input("x", DataType::Float, &["B", "128", "1"]),
            input("w", DataType::Float, &["16"]),
        ];
        let stft = node("STFT", &["x", "s", "w"], &["y"]);
        assert_eq!(
            infer(17, vec![stft], signal, vec![ints("s", &[], vec![8])]),
            Ok(vec!["y: float[unk__0,15,16,2]".into()])
        );
        let hann = node("HannWindow", &["n"], &["y"]);
        assert_eq!(
            infer(
                17,
                vec![hann.clone()],
                vec![],
                vec![ints("n", &[], vec![10])]
            ),
            Ok(vec!["y: float[10]".into()])
        );
        assert!(infer(17, vec![hann], vec![], vec![ints("n", &[], vec![0])]).is_err());
    }

    #[test]
    fn indexing_operators_place_their_new_dimensions() {
        let one_hot =
            node("OneHot", &["i", "d", "v"], &["y"]).with_attribute(AttributeProto::int("axis", 1));
        let inputs = vec![
            input("i", DataType::Int64, &["N", "3"]),
            input("v", DataType::Float, &["2"]),
        ];
        assert_eq!(
            infer(11, vec![one_hot], inputs, vec![ints("d", &[], vec![5])]),
            Ok(vec!["y: float[N,5,3]".into()])
        );
        let gather = vec![
            input("x", DataType::Float, &["N", "3", "4"]),
            input("i", DataType::Int64, &["K", "2"]),
        ];
        assert_eq!(
            infer(
                13,
                vec![node("GatherND", &["x", "i"], &["y"])],
                gather,
                vec![]
            ),
            Ok(vec!["y: float[K,4]".into()])
        );
        let unique = node("Unique", &["x"], &["y", "i", "v", "c"])
            .with_attribute(AttributeProto::int("axis", -1));
        assert_eq!(
            infer(
                11,
                vec![unique],
                vec![input("x", DataType::Float, &["N", "3"])],
                vec![]
            ),
            Ok(vec![
                "y: float[N,unk__0]".into(),
                "i: int64[unk__1]".into(),
                "v: int64[unk__2]".into(),
                "c: int64[unk__3]".into()
            ])
        );
        let compress =
            node("Compress", &["x", "c"], &["y"]).with_attribute(AttributeProto::int("axis", 2));
        let inputs = vec![
            input("x", DataType::Float, &["N", "3"]),
            input("c", DataType::Bool, &["2"]),
        ];
        assert!(infer(11, vec![compress], inputs, vec![]).is_err());
    }

    #[test]
    fn bit_cast_keeps_the_width() {
        let x = vec![input("x", DataType::Float, &["N", "3"])];
        let cast = |to: DataType| {
            node("BitCast", &["x"], &["y"])
                .with_attribute(AttributeProto::int("to", i64::from(to as i32)))
        };
        assert_eq!(
            infer(26, vec![cast(DataType::Int32)], x.clone(), vec![]),
            Ok(vec!["y: int32[N,3]".into()])
        );
        assert!(infer(26, vec![cast(DataType::Int64)], x, vec![]).is_err());
    }
}
