//! The inference rules of the operators, by family: each takes the types of a node's
//! inputs (and small integer constants among them) and gives the types of its outputs,
//! as the operator's `onnx` inference function does.

use super::broadcast::broadcast;
use super::kit::*;
use super::types::{shape_of, tensor_type, Constant};
use crate::onnx::{AttributeType, DataType, Dimension, NodeProto, TensorShapeProto};
use crate::ProtoEnum;

/// The rule's outcome: `Ok(None)` when no rule knows the operator.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let op = n.node.op_type();
    let outputs = match op {
        // Same type and shape as the first input.
        "Abs"
        | "Acos"
        | "Acosh"
        | "Asin"
        | "Asinh"
        | "Atan"
        | "Atanh"
        | "Ceil"
        | "Celu"
        | "Cos"
        | "Cosh"
        | "Elu"
        | "Erf"
        | "Exp"
        | "Floor"
        | "Gelu"
        | "HardSigmoid"
        | "HardSwish"
        | "LeakyRelu"
        | "Log"
        | "Mish"
        | "Neg"
        | "Reciprocal"
        | "Relu"
        | "Round"
        | "Selu"
        | "Shrink"
        | "Sigmoid"
        | "Sign"
        | "Sin"
        | "Sinh"
        | "Softplus"
        | "Softsign"
        | "Sqrt"
        | "Tan"
        | "Tanh"
        | "ThresholdedRelu"
        | "BitwiseNot"
        | "Clip"
        | "CumSum"
        | "Trilu"
        | "LRN"
        | "InstanceNormalization"
        | "LpNormalization"
        | "ReverseSequence" => same_as_input(n, 0)?,
        "Softmax" | "LogSoftmax" | "Hardmax" => softmax_family(n)?,
        "SwiGLU" => swiglu(n)?,
        "EyeLike" => eye_like(n)?,
        "GatherElements" => elem_of_shape_of(n, 0, 1)?,
        "ScatterElements" | "ScatterND" | "Scatter" => elem_of_shape_of(n, 0, 0)?,
        "DepthToSpace" => depth_space(n, true)?,
        "SpaceToDepth" => depth_space(n, false)?,
        "TopK" => top_k(n)?,
        "NonZero" => non_zero(n),
        "Expand" => expand(n)?,
        "Tile" => tile(n)?,
        "Slice" if n.version >= 10 => slice(n)?,
        "Slice" => slice_1(n)?,
        // Boolean whatever the input's type (known or not), its shape.
        "IsNaN" | "IsInf" | "Not" => bool_like(n, 0..1)?,
        // Any type (tensor, sequence, optional, map), with its shape.
        "Identity" => propagate_first_input(n)?,
        // Versions before broadcasting: the first input's type and shape.
        "Add" | "Sub" | "Mul" | "Div" | "Pow" if n.version < 7 => same_as_input(n, 0)?,
        "Max" | "Min" | "Sum" | "Mean" if n.version < 8 => same_as_input(n, 0)?,
        "PRelu" if n.version < 16 => same_as_input(n, 0)?,
        // Broadcast, the element type of the first input.
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "BitShift" | "BitwiseAnd" | "BitwiseOr"
        | "BitwiseXor" | "PRelu" | "Max" | "Min" | "Sum" | "Mean" => {
            broadcast_inputs(n, 0..n.inputs.len(), 0)?
        }
        // Before broadcasting: boolean, the first input's shape.
        "Equal" | "Greater" | "Less" | "And" | "Or" | "Xor" if n.version < 7 => bool_like(n, 0..1)?,
        // Broadcast, a boolean result whatever the inputs' types.
        "Equal" | "Greater" | "GreaterOrEqual" | "Less" | "LessOrEqual" | "And" | "Or" | "Xor" => {
            bool_like(n, 0..n.inputs.len())?
        }
        "Where" => broadcast_inputs(n, 0..n.inputs.len(), 1)?,
        "Cast" => cast(n),
        "CastLike" => cast_like(n)?,
        "Shape" => shape_op(n),
        "Size" => vec![Some(tensor_type(
            DataType::Int64.to_i32(),
            Some(shape_of(vec![])),
        ))],
        "Transpose" => transpose(n)?,
        "MatMul" => matmul(n)?,
        "Constant" => constant(n)?,
        "Reshape" => reshape(n)?,
        "Flatten" => flatten(n)?,
        "Unsqueeze" => unsqueeze(n)?,
        "Squeeze" => squeeze(n)?,
        "Concat" => concat(n)?,
        "Gemm" => gemm(n)?,
        "Gather" => gather(n)?,
        "ConstantOfShape" => constant_of_shape(n)?,
        "Dropout" => dropout(n)?,
        "ArgMax" | "ArgMin" => arg_reduce(n)?,
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => global_pool(n)?,
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

/// The constant a `Constant` node makes, as `onnx` records it for the rules downstream
/// (a sparse or string value is not recorded). As `onnx`, every attribute is looked at
/// by its type (the last one with values wins), after the node's inference succeeded.
pub(super) fn constant_values(node: &NodeProto<'_>, _version: i64) -> Option<Constant> {
    let onnx_domain = matches!(node.domain(), "" | "ai.onnx");
    if node.op_type() != "Constant" || !onnx_domain || node.output.len() != 1 {
        return None;
    }
    let mut values = None;
    for a in &node.attribute {
        let found = match (a.name(), a.r#type().get()) {
            ("value", Some(AttributeType::Tensor)) => a.t.as_deref().map(Constant::of),
            ("value", _) => None,
            (_, Some(AttributeType::Ints)) => {
                Some(Constant::int64s(vec![a.ints.len() as i64], a.ints.clone()))
            }
            (_, Some(AttributeType::Int)) => Some(Constant::int64s(vec![], vec![a.i.unwrap_or(0)])),
            (_, Some(AttributeType::Floats)) => {
                Some(Constant::float32s(vec![a.floats.len() as i64], &a.floats))
            }
            (_, Some(AttributeType::Float)) => {
                Some(Constant::float32s(vec![], &[a.f.unwrap_or(0.0)]))
            }
            _ => None,
        };
        values = found.or(values);
    }
    values
}

fn cast(n: &Node<'_, '_>) -> Outputs {
    let Some(to) = attribute(n, "to").and_then(|a| a.i) else {
        return vec![None];
    };
    let shape = shape_in(n, 0).map(owned);
    let known = n.inputs.first().is_some_and(|t| t.is_some());
    vec![Some(tensor_type(
        to as i32,
        if known { shape } else { None },
    ))]
}

/// The element type of input 1 (the target), the shape of input 0 when it is known.
fn cast_like(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let mut out = propagate_elem_type(n, 1)?;
    if let Some(t) = n.inputs.first().copied().flatten() {
        if has_shape(t) {
            propagate_shape(t, &mut out)?;
        }
    }
    Ok(vec![Some(out)])
}

fn shape_op(n: &Node<'_, '_>) -> Outputs {
    let Some(shape) = shape_in(n, 0) else {
        return vec![Some(tensor_type(
            DataType::Int64.to_i32(),
            Some(shape_of(vec![Dimension::unknown()])),
        ))];
    };
    let rank = shape.dim.len() as i64;
    let clamp = |v: i64| {
        let v = if v < 0 { v + rank } else { v };
        v.clamp(0, rank)
    };
    let (start, end) = if n.version >= 15 {
        let start = attribute(n, "start").and_then(|a| a.i).unwrap_or(0);
        let end = attribute(n, "end").and_then(|a| a.i).unwrap_or(rank);
        (clamp(start), clamp(end))
    } else {
        (0, rank)
    };
    let len = (end - start).max(0);
    vec![Some(tensor_type(
        DataType::Int64.to_i32(),
        Some(shape_of(vec![Dimension::value(len)])),
    ))]
}

/// As in `onnx`, `perm` is not checked against the rank: each of its entries must name
/// an input dimension once (negative ones do not), and gives one output dimension.
fn transpose(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(shape) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = shape.dim.len();
    let perm: Vec<i64> = match attribute(n, "perm") {
        Some(a) => a.ints.clone(),
        None => (0..rank as i64).rev().collect(),
    };
    let mut seen = vec![false; rank];
    let mut dims = Vec::with_capacity(perm.len());
    for &p in &perm {
        let Some(i) = usize::try_from(p).ok().filter(|&i| i < rank) else {
            let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(", ");
            let sizes = list(
                &mut shape
                    .dim
                    .iter()
                    .map(|d| d.as_value().unwrap_or(0).to_string()),
            );
            let shown = if rank > 0 {
                format!("{sizes}}}")
            } else {
                String::new()
            };
            return Err(format!(
                "Invalid attribute perm {{{}}}, input shape = {{{shown}",
                list(&mut perm.iter().map(i64::to_string))
            ));
        };
        if seen[i] {
            return Err(format!(
                "Attribute perm for Transpose has repeated value: {p}"
            ));
        }
        seen[i] = true;
        dims.push(owned_dim(&shape.dim[i]));
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn matmul(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(a), Some(b)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    if a.dim.is_empty() || b.dim.is_empty() {
        return Err("Input tensors of wrong rank (0).".to_string());
    }
    // 1-D operands are promoted (a row for the first, a column for the second) and the
    // added dimension removed from the result.
    let mut a_dims: Vec<Dimension<'static>> = a.dim.iter().map(owned_dim).collect();
    let mut b_dims: Vec<Dimension<'static>> = b.dim.iter().map(owned_dim).collect();
    if a_dims.len() == 1 {
        a_dims.insert(0, Dimension::value(1));
    }
    if b_dims.len() == 1 {
        b_dims.push(Dimension::value(1));
    }
    let (k_a, k_b) = (&a_dims[a_dims.len() - 1], &b_dims[b_dims.len() - 2]);
    if let (Some(x), Some(y)) = (k_a.as_value(), k_b.as_value()) {
        if x != y {
            return Err("Incompatible dimensions for matrix multiplication".to_string());
        }
    }
    let batch_a = shape_of(a_dims[..a_dims.len() - 2].to_vec());
    let batch_b = shape_of(b_dims[..b_dims.len() - 2].to_vec());
    let mut dims = broadcast(&[&batch_a, &batch_b])?.dim;
    if a.dim.len() != 1 {
        dims.push(crate::IntoOwned::into_owned(crate::Reborrow::reborrow(
            &a_dims[a_dims.len() - 2],
        )));
    }
    if b.dim.len() != 1 {
        dims.push(crate::IntoOwned::into_owned(crate::Reborrow::reborrow(
            &b_dims[b_dims.len() - 1],
        )));
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn constant(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let tensor = |t: Option<&crate::onnx::TensorProto<'_>>| {
        let (elem, dims) = t.map_or((0, &[][..]), |t| (t.data_type(), &t.dims[..]));
        Some(tensor_type(elem, Some(TensorShapeProto::from_dims(dims))))
    };
    let sparse = |a: &crate::onnx::AttributeProto<'_>| {
        let t = a.sparse_tensor.as_deref();
        let elem = t
            .and_then(|t| t.values.as_ref())
            .map_or(0, |v| v.data_type());
        let dims = t.map_or(&[][..], |t| &t.dims[..]);
        Some(tensor_type(elem, Some(TensorShapeProto::from_dims(dims))))
    };
    let value = attribute(n, "value");
    let sparse_value = attribute(n, "sparse_value");
    // Each version accepts other attributes and words its refusals its own way.
    let t = match n.version {
        ..=8 => match value.and_then(|a| a.t.as_deref()) {
            Some(t) => tensor(Some(t)),
            None => return Ok(vec![None]),
        },
        9..=10 => match value.and_then(|a| a.t.as_deref()) {
            Some(t) => tensor(Some(t)),
            None => {
                return Err(
                    "Attribute 'value' of Constant node must exist with 'Tensor' data.".into(),
                )
            }
        },
        11 => match (value, sparse_value) {
            (Some(_), Some(_)) => {
                return Err(
                    "Only one of the attributes 'value' or 'sparse_value' must be specified for a Constant node.".into(),
                )
            }
            (Some(v), None) => tensor(v.t.as_deref()),
            (None, Some(s)) => sparse(s),
            (None, None) => {
                return Err(
                    "One of the attributes 'value' or 'sparse_value' must be specified for a Constant node.".into(),
                )
            }
        },
        _ => {
            let scalar = |elem: DataType| Some(tensor_type(elem.to_i32(), Some(shape_of(vec![]))));
            let vector = |elem: DataType, len: usize| {
                Some(tensor_type(
                    elem.to_i32(),
                    Some(shape_of(vec![Dimension::value(len as i64)])),
                ))
            };
            const NAMES: [&str; 8] = [
                "value",
                "sparse_value",
                "value_int",
                "value_ints",
                "value_float",
                "value_floats",
                "value_string",
                "value_strings",
            ];
            let set: Vec<&str> = NAMES
                .into_iter()
                .filter(|name| attribute(n, name).is_some())
                .collect();
            let [name] = set[..] else {
                return Err("One and only one of the attributes 'value', 'value_*' or 'sparse_value' must be specified for a Constant node.".into());
            };
            let a = attribute(n, name).expect("listed as set");
            match name {
                "value" => tensor(a.t.as_deref()),
                "sparse_value" => sparse(a),
                "value_int" if a.i.is_none() => {
                    return Err("Attribute 'value_int' expect an integer.".into())
                }
                "value_int" => scalar(DataType::Int64),
                "value_ints" => vector(DataType::Int64, a.ints.len()),
                "value_float" if a.f.is_none() => {
                    return Err("Attribute 'value_float' expect a float.".into())
                }
                "value_float" => scalar(DataType::Float),
                "value_floats" => vector(DataType::Float, a.floats.len()),
                "value_string" if a.s.is_none() => {
                    return Err("Attribute 'value_string' expect a string.".into())
                }
                "value_string" => scalar(DataType::String),
                _ => vector(DataType::String, a.strings.len()),
            }
        }
    };
    Ok(vec![t])
}

fn reshape(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    // From opset 14 the target may be propagated values or only a length; before, it is
    // an int64 constant.
    let target = if n.version >= 14 {
        shape_input(n, 1, false)?
    } else {
        int64_values(n, 1)?.map(|v| shape_of(v.iter().map(|&x| Dimension::value(x)).collect()))
    };
    let Some(target) = target else {
        return Ok(one(elem, None));
    };
    // The messages of opsets 5 and 13 lack the full stop and the explanation.
    let old = n.version < 14;
    let allow_zero = attr_int(n, "allowzero", 0) as i32 != 0;
    let input = shape_in(n, 0);
    let overflow = || "Dimension product overflow in Reshape".to_string();
    let mut dims = Vec::with_capacity(target.dim.len());
    let mut minus_one = None;
    // The zeros copying an input dimension whose size is not known.
    let mut unresolved = vec![false; target.dim.len()];
    let mut product: i64 = 1;
    // Whether every size but the one of `-1` is known (a name or an unknown is not).
    let mut product_valid = true;
    for (i, t) in target.dim.iter().enumerate() {
        if let Some(p) = t.as_param() {
            dims.push(Dimension::param(p.to_string()));
            product_valid = false;
            continue;
        }
        let Some(v) = t.as_value() else {
            dims.push(Dimension::unknown());
            product_valid = false;
            continue;
        };
        if v == -1 {
            if minus_one.is_some() {
                let stop = if old { "" } else { "." };
                return Err(format!(
                    "Target shape may not have multiple -1 dimensions{stop}"
                ));
            }
            minus_one = Some(i);
            dims.push(Dimension::unknown());
        } else if v == 0 && !allow_zero {
            unresolved[i] = true;
            let mut d = Dimension::unknown();
            if let Some(s) = input {
                let Some(from) = s.dim.get(i) else {
                    let stop = if old { "" } else { "." };
                    return Err(format!("Invalid position of 0{stop}"));
                };
                if let Some(x) = from.as_value() {
                    d = Dimension::value(x);
                    product = product.checked_mul(x).ok_or_else(overflow)?;
                    unresolved[i] = false;
                } else if let Some(p) = from.as_param() {
                    d = Dimension::param(p.to_string());
                }
            }
            dims.push(d);
        } else if v >= 0 {
            dims.push(Dimension::value(v));
            product = product.checked_mul(v).ok_or_else(overflow)?;
        } else {
            return Err(format!("Invalid dimension value: {v}"));
        }
    }
    if let (Some(at), true) = (minus_one, product_valid) {
        if product == 0 {
            return Err(if old {
                "Invalid Target shape product of 0".to_string()
            } else {
                "Invalid Target shape product of 0. Product cannot be 0 in combination with -1"
                    .to_string()
            });
        }
        // The input's size, when every dimension's is known but those a zero copies.
        let mut total = input.map(|_| 1i64);
        for (i, d) in input
            .map(|s| s.dim.as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            match d.as_value() {
                Some(x) => {
                    total = total
                        .map(|t| t.checked_mul(x).ok_or_else(overflow))
                        .transpose()?
                }
                None if unresolved.get(i) == Some(&true) => {}
                None => {
                    total = None;
                    break;
                }
            }
        }
        if let Some(total) = total {
            if total % product != 0 {
                return Err("Dimension could not be inferred: incompatible shapes".to_string());
            }
            dims[at] = Dimension::value(total / product);
        }
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn flatten(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = s.dim.len() as i64;
    let mut axis = attribute(n, "axis").and_then(|a| a.i).unwrap_or(1);
    // Negative axes count from the end from opset 11.
    if axis < 0 && n.version >= 11 {
        axis += rank;
    }
    if axis < 0 || axis > rank {
        return Err(format!("Invalid value({axis}) for attribute 'axis'"));
    }
    let axis = axis as usize;
    let dims = vec![
        multiply_dims(s, 0, axis)?,
        multiply_dims(s, axis, s.dim.len())?,
    ];
    Ok(vec![Some(tensor_type(elem, Some(shape_of(dims))))])
}

/// The axes of an `Unsqueeze`/`Squeeze`: the attribute before opset 13, the constant
/// second input from 13 on (`None` when not known).
fn axes(n: &Node<'_, '_>) -> Result<Option<Vec<i64>>, String> {
    if n.version < 13 {
        Ok(attribute(n, "axes").map(|a| a.ints.clone()))
    } else {
        Ok(int64_values(n, 1)?.map(<[i64]>::to_vec))
    }
}

fn unsqueeze(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let Some(axes) = axes(n)? else {
        return Ok(one(elem, None));
    };
    let rank = (s.dim.len() + axes.len()) as i64;
    let mut normalized = Vec::with_capacity(axes.len());
    for &a in &axes {
        let a = if a < 0 { a + rank } else { a };
        if a < 0 || a >= rank {
            return Err(
                "values in 'axes' are beyond the bounds of the computed output shape".to_string(),
            );
        }
        if normalized.contains(&a) {
            return Err("'axes' attribute must not contain any duplicates".to_string());
        }
        normalized.push(a);
    }
    let mut input = s.dim.iter();
    let dims = (0..rank)
        .map(|i| match normalized.contains(&i) {
            true => Dimension::value(1),
            false => input.next().map(owned_dim).unwrap_or_default(),
        })
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

fn squeeze(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = s.dim.len() as i64;
    let given = n.version < 13 && attribute(n, "axes").is_some()
        || n.version >= 13 && n.node.input.get(1).is_some_and(|i| !i.is_empty());
    let axes: Vec<i64> = match (given, axes(n)?) {
        (true, Some(axes)) => axes
            .iter()
            .map(|&a| if a < 0 { a + rank } else { a })
            .collect(),
        (true, None) => return Ok(one(elem, None)),
        (false, _) => {
            // Every dimension of size 1; unknown when a dimension's size is unknown.
            if s.dim.iter().any(|d| d.as_value().is_none()) {
                return Ok(one(elem, None));
            }
            (0..rank)
                .filter(|&i| s.dim[i as usize].as_value() == Some(1))
                .collect()
        }
    };
    for &a in &axes {
        if a < 0 || a >= rank {
            return Err("Squeeze axis is out of bounds".to_string());
        }
        if let Some(v) = s.dim[a as usize].as_value() {
            if v != 1 {
                return Err(format!("Dimension of input {a} must be 1 instead of {v}"));
            }
        }
    }
    let dims = s
        .dim
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(&(*i as i64)))
        .map(|(_, d)| owned_dim(d))
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

/// Concat (opset 4 on): the lengths along `axis` add up, the other dimensions merge.
/// Opset 4 leaves a negative axis alone; from opset 11 it counts from the back and a
/// single input passes its shape through.
fn concat(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let shapes: Option<Vec<&TensorShapeProto<'_>>> =
        (0..n.inputs.len()).map(|i| shape_in(n, i)).collect();
    let Some(shapes) = shapes.filter(|s| !s.is_empty()) else {
        return Ok(one(elem, None));
    };
    let rank = shapes[0].dim.len() as i64;
    let Some(axis) = attribute(n, "axis").map(|a| a.i.unwrap_or(0)) else {
        return Err("Required attribute axis is missing".to_string());
    };
    // onnx reads the attribute as a 32-bit int.
    let axis = axis as i32 as i64;
    let axis = if n.version < 11 {
        if rank <= axis {
            return Err("rank must be greater than axis".to_string());
        }
        if axis < 0 {
            return Ok(one(elem, None));
        }
        axis as usize
    } else {
        if axis < -rank || axis >= rank {
            return Err("axis must be in [-rank, rank-1].".to_string());
        }
        if shapes.len() == 1 {
            return Ok(one(elem, Some(owned(shapes[0]))));
        }
        (if axis < 0 { axis + rank } else { axis }) as usize
    };
    let mut dims: Vec<Dimension<'static>> = vec![Dimension::default(); rank as usize];
    let (mut total, mut all_known) = (0i64, true);
    for (k, s) in shapes.iter().enumerate() {
        if s.dim.len() as i64 != rank {
            return Err(if n.version < 11 {
                "All inputs to Concat must have same rank".to_string()
            } else {
                format!(
                    "All inputs to Concat must have same rank. Input {k} has rank {} != {rank}",
                    s.dim.len()
                )
            });
        }
        for (j, d) in s.dim.iter().enumerate() {
            if j != axis {
                merge_in_dim(d, &mut dims[j], j)?;
                continue;
            }
            match d.as_value() {
                Some(v) if v < 0 => {
                    return Err("Negative dimension value on Concat axis".to_string())
                }
                Some(v) => {
                    total = total.checked_add(v).ok_or_else(|| {
                        "Integer overflow computing Concat output length".to_string()
                    })?;
                }
                None => all_known = false,
            }
        }
    }
    if all_known {
        dims[axis] = Dimension::value(total);
    }
    Ok(one(elem, Some(shape_of(dims))))
}

fn gemm(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(a), Some(b)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    if a.dim.len() != 2 {
        return Err("First input does not have rank 2".to_string());
    }
    if b.dim.len() != 2 {
        return Err("Second input does not have rank 2".to_string());
    }
    let trans = |name: &str| attribute(n, name).and_then(|a| a.i).unwrap_or(0) != 0;
    let m = owned_dim(&a.dim[usize::from(trans("transA"))]);
    let k = owned_dim(&b.dim[usize::from(!trans("transB"))]);
    Ok(vec![Some(tensor_type(elem, Some(shape_of(vec![m, k]))))])
}

fn gather(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(data), Some(indices)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let r = data.dim.len() as i64;
    if r < 1 {
        return Err("data tensor must have rank >= 1".to_string());
    }
    let axis = attribute(n, "axis").and_then(|a| a.i).unwrap_or(0);
    if axis < -r || axis >= r {
        return Err("axis must be in [-r, r-1]".to_string());
    }
    let axis = if axis < 0 { axis + r } else { axis } as usize;
    let dims = data.dim[..axis]
        .iter()
        .chain(&indices.dim)
        .chain(&data.dim[axis + 1..])
        .map(owned_dim)
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

fn constant_of_shape(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match attribute(n, "value").and_then(|a| a.t.as_deref()) {
        Some(t) => t.data_type(),
        None => DataType::Float.to_i32(),
    };
    Ok(vec![Some(tensor_type(elem, shape_input(n, 0, true)?))])
}

fn dropout(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    if n.version >= 12 {
        for (i, what) in [(1, "Ratio"), (2, "training_mode")] {
            if let Some(s) = shape_in(n, i) {
                if !s.dim.is_empty() {
                    return Err(format!("{what} of Dropout must be a scalar."));
                }
            }
        }
    }
    let shape = shape_in(n, 0).map(owned);
    let mut outputs = vec![Some(tensor_type(elem, shape.clone()))];
    // The mask (boolean) is inferred from opset 10; before, nothing is.
    if n.node.output.len() > 1 && n.version >= 10 {
        outputs.push(Some(tensor_type(DataType::Bool.to_i32(), shape)));
    }
    Ok(outputs)
}

fn arg_reduce(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let int64 = DataType::Int64.to_i32();
    let Some(s) = shape_in(n, 0) else {
        return Ok(vec![Some(tensor_type(int64, None))]);
    };
    let r = s.dim.len() as i64;
    let axis = attribute(n, "axis").and_then(|a| a.i).unwrap_or(0);
    if axis < -r || axis >= r {
        return Err("'axis' must be in [-rank(indices), rank(indices)-1]".to_string());
    }
    let axis = if axis < 0 { axis + r } else { axis } as usize;
    let keep = attribute(n, "keepdims").and_then(|a| a.i).unwrap_or(1) != 0;
    let dims = s
        .dim
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match (i == axis, keep) {
            (false, _) => Some(owned_dim(d)),
            (true, true) => Some(Dimension::value(1)),
            (true, false) => None,
        })
        .collect();
    Ok(vec![Some(tensor_type(int64, Some(shape_of(dims))))])
}

fn global_pool(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    if s.dim.len() < 2 {
        return Ok(one(elem, None));
    }
    let dims = s.dim[..2]
        .iter()
        .map(owned_dim)
        .chain(std::iter::repeat_n(Dimension::value(1), s.dim.len() - 2))
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

/// The opset version from which a reduction takes its axes as an input.
fn reduce(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let keep = attribute(n, "keepdims").and_then(|a| a.i).unwrap_or(1) == 1;
    let rank = s.dim.len() as i64;
    // From opset 13 every reduction reads `axes` from its second input when it is
    // given (even the versions whose schema has the attribute), as `onnx`'s rule does.
    let given = n.node.input.get(1).is_some_and(|i| !i.is_empty());
    let axes: Vec<i64> = if n.version >= 13 && given {
        if attribute(n, "axes").is_some() {
            return Err(
                "axes as an input and attribute cannot be specified at the same time.".into(),
            );
        }
        match int64_values(n, 1)? {
            Some(v) => v.to_vec(),
            // Which axes is not known: neither is the shape.
            None => return Ok(one(elem, None)),
        }
    } else {
        attribute(n, "axes")
            .map(|a| a.ints.clone())
            .unwrap_or_default()
    };
    // `noop_with_empty_axes` exists from opset 13.
    let noop = n.version >= 13
        && attribute(n, "noop_with_empty_axes")
            .and_then(|a| a.i)
            .unwrap_or(0)
            != 0;
    if axes.is_empty() && noop {
        return Ok(vec![Some(tensor_type(elem, Some(owned(s))))]);
    }
    let mut normalized = Vec::with_capacity(axes.len());
    for &a in &axes {
        if a < -rank || a >= rank {
            return Err(format!(
                "axis must be in [-rank, rank-1]. input rank was {rank}"
            ));
        }
        normalized.push(if a < 0 { a + rank } else { a });
    }
    let dims = s
        .dim
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let reduced = normalized.is_empty() || normalized.contains(&(i as i64));
            match (reduced, keep) {
                (false, _) => Some(owned_dim(d)),
                (true, true) => Some(Dimension::value(1)),
                (true, false) => None,
            }
        })
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

fn eye_like(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match attribute(n, "dtype").and_then(|a| a.i) {
        Some(d) => d as i32,
        None => required_elem(n, 0)?,
    };
    let shape = shape_in(n, 0).map(owned);
    if let Some(s) = &shape {
        if s.dim.len() != 2 {
            return Err("Input tensor must be 2-dimensional".to_string());
        }
    }
    Ok(vec![Some(tensor_type(elem, shape))])
}

fn non_zero(n: &Node<'_, '_>) -> Outputs {
    let rank = match shape_in(n, 0) {
        Some(s) => Dimension::value(s.dim.len() as i64),
        None => Dimension::unknown(),
    };
    vec![Some(tensor_type(
        DataType::Int64.to_i32(),
        Some(shape_of(vec![rank, Dimension::unknown()])),
    ))]
}

fn expand(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(input), Some(shape)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let target = if n.version >= 13 {
        shape_input(n, 1, false)?
    } else {
        // Opset 8: an int64 constant, else only the length.
        if shape.dim.len() != 1 {
            return Err("'shape' input must be 1D tensor".to_string());
        }
        match int64_values(n, 1)? {
            Some(v) => Some(shape_of(v.iter().map(|&x| Dimension::value(x)).collect())),
            None => match shape.dim[0].as_value() {
                Some(len) if (0..=1024).contains(&len) => {
                    Some(shape_of(vec![Dimension::unknown(); len as usize]))
                }
                _ => None,
            },
        }
    };
    let Some(target) = target else {
        return Ok(one(elem, None));
    };
    Ok(vec![Some(tensor_type(
        elem,
        Some(broadcast(&[input, &target])?),
    ))])
}

fn tile(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    // The sizes need `repeats` as a constant of known shape; else only the rank.
    let (Some(c), Some(repeats_shape)) = (input_constant(n, 1), shape_in(n, 1)) else {
        let dims = vec![Dimension::unknown(); input.dim.len()];
        return Ok(one(elem, Some(shape_of(dims))));
    };
    if repeats_shape.dim.len() != 1 || !c.is(DataType::Int64) {
        return Err("'Repeats' input must be 1D tensor of type int64".into());
    }
    let Some(repeats) = c.ints() else {
        let dims = vec![Dimension::unknown(); input.dim.len()];
        return Ok(one(elem, Some(shape_of(dims))));
    };
    if repeats.len() != input.dim.len() {
        return Err("'Repeats' input has incorrect number of values. The number of values in 'repeats' must be equal to the number of input dimensions.".into());
    }
    let mut dims = Vec::with_capacity(repeats.len());
    for (d, &r) in input.dim.iter().zip(repeats) {
        if r < 0 {
            return Err("'Repeats' input must not contain negative values".into());
        }
        dims.push(match d.as_value() {
            Some(v) => Dimension::value(
                v.checked_mul(r)
                    .ok_or_else(|| format!("Integer overflow in multiplication: {v} * {r}"))?,
            ),
            None => Dimension::unknown(),
        });
    }
    Ok(one(elem, Some(shape_of(dims))))
}
/// Slice (opset 10 on): sizes from constant `starts`, `ends`, `axes` and `steps`; an
/// `axes` or `steps` input without a shape counts as absent, as in `onnx`. Without the
/// constants only the rank is known. The checks and messages follow each version.
fn slice(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if !(3..=5).contains(&n.node.input.len()) {
        return Err("Slice op must have either three, four or five inputs.".to_string());
    }
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len() as i64;
    let optional = |i: usize| match shape_in(n, i) {
        Some(_) => input_constant(n, i).map(Some),
        None => Some(None),
    };
    let (Some(starts), Some(ends), Some(axes), Some(steps)) = (
        input_constant(n, 1),
        input_constant(n, 2),
        optional(3),
        optional(4),
    ) else {
        let dims = vec![Dimension::unknown(); rank as usize];
        return Ok(one(elem, Some(shape_of(dims))));
    };
    if starts.elem == 0 {
        return Ok(one(elem, None));
    }
    // `onnx` parses int32 and int64 data; other types are refused.
    let data = |c: &Constant| -> Result<Option<Vec<i64>>, String> {
        if !c.is(DataType::Int64) && !c.is(DataType::Int32) {
            return Err(
                "Only supports `int32_t` or `int64_t` inputs for starts/ends/axes/steps"
                    .to_string(),
            );
        }
        match c.problem() {
            Some(reason) => Err(reason.to_string()),
            None => Ok(c.ints().map(<[i64]>::to_vec)),
        }
    };
    let rank_only = || {
        let dims = vec![Dimension::unknown(); rank as usize];
        Ok(one(elem, Some(shape_of(dims))))
    };
    let (Some(starts), Some(ends)) = (data(starts)?, data(ends)?) else {
        return rank_only();
    };
    if starts.len() != ends.len() {
        return Err("Incorrect or missing input value for starts and ends".to_string());
    }
    let axes = match axes {
        None => (0..starts.len() as i64).collect(),
        Some(c) => {
            let Some(axes) = data(c)? else {
                return rank_only();
            };
            if axes.len() != starts.len() {
                return Err("Input axes has incorrect length".to_string());
            }
            axes
        }
    };
    if n.version >= 13 {
        if let Some(a) = axes.iter().find(|&&a| a < -rank || a > rank - 1) {
            return Err(format!(
                "Unexpected axis value: {a}. Expected range [{}, {rank})",
                -rank
            ));
        }
        let mut seen = vec![false; rank as usize];
        for &a in &axes {
            let k = (if a < 0 { a + rank } else { a }) as usize;
            if seen[k] {
                return Err(format!(
                    "Axis {} is referred to more than once.",
                    a + rank * i64::from(a < 0)
                ));
            }
            seen[k] = true;
        }
    }
    let steps = match steps {
        None => vec![1; starts.len()],
        Some(c) => {
            let Some(steps) = data(c)? else {
                return rank_only();
            };
            if steps.len() != axes.len() {
                return Err("Input steps has incorrect length".to_string());
            }
            steps
        }
    };
    let mut dims: Vec<Dimension<'static>> = input.dim.iter().map(owned_dim).collect();
    let mut seen = Vec::new();
    for (k, &axis) in axes.iter().enumerate() {
        let a = if axis < 0 { axis + rank } else { axis };
        if n.version < 13 {
            if a < 0 || a >= rank {
                return Err("Input axes has invalid data".to_string());
            }
            if seen.contains(&a) {
                return Err("'axes' has duplicates".to_string());
            }
            seen.push(a);
        }
        let Some(dim) = input.dim[a as usize].as_value() else {
            dims[a as usize] = Dimension::unknown();
            continue;
        };
        let step = steps[k];
        if n.version >= 13 && step == 0 {
            return Err("'step' cannot be 0 for Slice".to_string());
        }
        if dim == 0 {
            dims[a as usize] = Dimension::value(0);
            continue;
        }
        if step == 0 {
            return Err("'step' cannot be 0".to_string());
        }
        let mut start = starts[k];
        if start < 0 {
            start = start.wrapping_add(dim);
        }
        start = if step < 0 {
            start.clamp(0, dim - 1)
        } else {
            start.clamp(0, dim)
        };
        let mut end = ends[k];
        if end < 0 {
            end = end.wrapping_add(dim);
        }
        // Opset 13 keeps a backward end below the dimension; earlier ones allow it.
        let top = if n.version >= 13 { dim - 1 } else { dim };
        end = if step < 0 {
            end.clamp(-1, top)
        } else {
            end.clamp(0, dim)
        };
        let len = ceil_to_i64((end - start) as f64 / step as f64).max(0);
        dims[a as usize] = Dimension::value(len);
    }
    Ok(one(elem, Some(shape_of(dims))))
}

/// The output of input `data`'s element type with input `shape_from`'s shape.
fn elem_of_shape_of(n: &Node<'_, '_>, data: usize, shape_from: usize) -> Result<Outputs, String> {
    let elem = required_elem(n, data)?;
    Ok(vec![Some(tensor_type(
        elem,
        shape_in(n, shape_from).map(owned),
    ))])
}

/// Softmax, LogSoftmax and Hardmax: the input's type and shape; from opset 11 the
/// input must have a rank and `axis` must be within it.
fn softmax_family(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.version < 11 {
        return propagate_first_input(n);
    }
    let outputs = same_as_input(n, 0)?;
    if let Some(s) = shape_in(n, 0) {
        let r = s.dim.len() as i64;
        if r == 0 {
            let name = match (n.version >= 13, n.node.op_type()) {
                (true, op) => op.to_string(),
                (false, op) => op.to_ascii_lowercase(),
            };
            return Err(format!("Input rank must be >= 1 for {name}."));
        }
        let default = if n.version >= 13 { -1 } else { 1 };
        // onnx reads the attribute as a 32-bit int.
        let axis = attr_int(n, "axis", default) as i32 as i64;
        if axis < -r || axis >= r {
            return Err(format!(
                "'axis' must be in [{} , {}]. Its actual value is: {axis}",
                -r,
                r - 1
            ));
        }
    }
    Ok(outputs)
}

/// SwiGLU: both inputs must have the same shape; the output is A's shape with B's
/// merged into it.
fn swiglu(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let (Some(a), Some(b)) = (shape_in(n, 0), shape_in(n, 1)) else {
        return Ok(one(elem, None));
    };
    let mut out = Some(owned(a));
    merge_in_shape(b, &mut out)?;
    Ok(one(elem, out))
}

fn depth_space(n: &Node<'_, '_>, to_space: bool) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let b = attr_int(n, "blocksize", 0);
    if b <= 0 {
        return Err("Blocksize must be positive".to_string());
    }
    let area = checked_mul(b, b)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    if s.dim.len() != 4 {
        return Err("Input tensor must be 4-dimensional".to_string());
    }
    let dims = if to_space {
        vec![
            owned_dim(&s.dim[0]),
            dim_div_by(&s.dim[1], area)?,
            dim_mul_by(&s.dim[2], b)?,
            dim_mul_by(&s.dim[3], b)?,
        ]
    } else {
        vec![
            owned_dim(&s.dim[0]),
            dim_mul_by(&s.dim[1], area)?,
            dim_div_by(&s.dim[2], b)?,
            dim_div_by(&s.dim[3], b)?,
        ]
    };
    Ok(one(elem, Some(shape_of(dims))))
}

/// `Slice` of opset 1: `starts`, `ends` and `axes` are attributes; sizes are computed
/// for known dimensions only, negative axes give the rank alone.
fn slice_1(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let (starts, ends) = match (attr_ints(n, "starts"), attr_ints(n, "ends")) {
        (Some(a), Some(b)) if a.len() == b.len() => (a, b),
        _ => return Err("Incorrect or missing attribute value for starts and ends".into()),
    };
    let axes = match attr_ints(n, "axes") {
        None => (0..starts.len() as i64).collect(),
        Some(a) if a.len() != starts.len() => {
            return Err("Attribute axes has incorrect length".into())
        }
        // Unsorted axes: onnx infers nothing more than the type.
        Some(a) if !a.is_sorted() => return Ok(one(elem, None)),
        Some(a) => a,
    };
    if axes.iter().any(|&a| a < 0) {
        return Ok(one(
            elem,
            Some(shape_of(vec![Dimension::unknown(); s.dim.len()])),
        ));
    }
    let mut j = 0;
    let dims = s
        .dim
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if axes.get(j).is_none_or(|&a| a != i as i64) {
                return owned_dim(d);
            }
            let (mut start, mut end) = (starts[j], ends[j]);
            j += 1;
            let Some(size) = d.as_value() else {
                return Dimension::unknown();
            };
            if start < 0 {
                start = start.saturating_add(size);
            }
            if end < 0 {
                end = end.saturating_add(size);
            }
            match (start >= 0 && end >= 0).then(|| size.min(end).saturating_sub(start)) {
                Some(v) if v >= 0 => Dimension::value(v),
                _ => Dimension::unknown(),
            }
        })
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

fn top_k(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let int64 = DataType::Int64.to_i32();
    let Some(s) = shape_in(n, 0) else {
        return Ok(vec![
            Some(tensor_type(elem, None)),
            Some(tensor_type(int64, None)),
        ]);
    };
    let r = s.dim.len() as i64;
    let axis = attribute(n, "axis").and_then(|a| a.i).unwrap_or(-1);
    if axis < -r || axis >= r {
        return Err("Invalid value for attribute axis".to_string());
    }
    let axis = if axis < 0 { axis + r } else { axis } as usize;
    let k = if n.version >= 10 {
        // `k` counts only when the axis has a size, as in `onnx`: a one-value int64
        // constant no larger than it.
        match (input_constant(n, 1), s.dim[axis].as_value()) {
            (Some(c), Some(size)) => {
                if c.dims != [1] {
                    return Err("K input must be a one-dimensional tensor of size 1.".into());
                }
                let Some(&k) = int64_values(n, 1)
                    .map_err(|_| "K input must be of type int64.".to_string())?
                    .and_then(|v| v.first())
                else {
                    return Ok(vec![
                        Some(tensor_type(
                            elem,
                            Some(shape_of(vec![Dimension::unknown(); s.dim.len()])),
                        )),
                        Some(tensor_type(
                            int64,
                            Some(shape_of(vec![Dimension::unknown(); s.dim.len()])),
                        )),
                    ]);
                };
                if size < k {
                    return Err("Axis has less than the requested k elements.".into());
                }
                Some(k)
            }
            _ => None,
        }
    } else {
        match attribute(n, "k").and_then(|a| a.i).unwrap_or(-1) {
            k if k <= 0 => return Err("Invalid value for attribute k".into()),
            k => Some(k),
        }
    };
    // Without `k`, only the rank is known (as in `onnx`).
    let dims: Vec<Dimension<'static>> = match k {
        Some(k) => {
            let mut dims: Vec<Dimension<'static>> = s.dim.iter().map(owned_dim).collect();
            dims[axis] = Dimension::value(k);
            dims
        }
        None => vec![Dimension::unknown(); s.dim.len()],
    };
    let shape = shape_of(dims);
    Ok(vec![
        Some(tensor_type(elem, Some(shape.clone()))),
        Some(tensor_type(int64, Some(shape))),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{float_inputs, node, strict_types};
    use crate::onnx::{AttributeProto, DataType, TensorProto, TypeProto, ValueInfoProto};

    fn int64s(name: &str, values: &[i64]) -> TensorProto<'static> {
        TensorProto::from_slice(name.to_string(), [values.len() as i64], values).unwrap()
    }

    #[test]
    fn a_single_input_concat_keeps_its_shape_and_names() {
        let concat = node("Concat", &["x"], &["z"]).with_attribute(AttributeProto::int("axis", 0));
        let got = strict_types(
            13,
            vec![concat],
            float_inputs(&[("x", &["a", "2"])]),
            vec![],
        );
        assert_eq!(got.unwrap(), ["z: float[a,2]"]);
    }

    #[test]
    fn concat_lengths_add_up_checked_and_other_dimensions_merge() {
        let concat =
            || node("Concat", &["x", "y"], &["z"]).with_attribute(AttributeProto::int("axis", 1));
        let inputs = float_inputs(&[("x", &["n", "2"]), ("y", &["3", "5"])]);
        assert_eq!(
            strict_types(13, vec![concat()], inputs, vec![]).unwrap(),
            ["z: float[3,7]"]
        );
        let huge = i64::MAX.to_string();
        let inputs = float_inputs(&[("x", &["1", &huge]), ("y", &["1", "1"])]);
        let e = strict_types(13, vec![concat()], inputs, vec![]).unwrap_err();
        assert!(
            e.contains("Integer overflow computing Concat output length"),
            "{e}"
        );
        let inputs = float_inputs(&[("x", &["1", "2"]), ("y", &["2", "2"])]);
        let e = strict_types(13, vec![concat()], inputs, vec![]).unwrap_err();
        assert!(e.contains("Can't merge shape info"), "{e}");
    }

    #[test]
    fn slice_treats_an_unshaped_axes_input_as_absent() {
        let slice = node("Slice", &["x", "starts", "ends", "axes", "steps"], &["y"]);
        let inputs = vec![
            ValueInfoProto::tensor("x", DataType::Float, [5, 6, 7]),
            ValueInfoProto {
                name: Some("axes".into()),
                r#type: Some(TypeProto::tensor(DataType::Int64, None)),
                ..ValueInfoProto::default()
            },
        ];
        let inits = vec![
            int64s("starts", &[1, 0, 0]),
            int64s("ends", &[2, 6, 6]),
            int64s("steps", &[1, 4, 3]),
        ];
        assert_eq!(
            strict_types(13, vec![slice], inputs, inits).unwrap(),
            ["y: float[1,2,2]"]
        );
    }

    #[test]
    fn slice_axes_are_checked_in_each_versions_words() {
        let slice = || node("Slice", &["x", "starts", "ends", "axes"], &["y"]);
        let inits = || {
            vec![
                int64s("starts", &[0]),
                int64s("ends", &[1]),
                int64s("axes", &[3]),
            ]
        };
        let x = || float_inputs(&[("x", &["2", "2"])]);
        let e = strict_types(13, vec![slice()], x(), inits()).unwrap_err();
        assert!(
            e.contains("Unexpected axis value: 3. Expected range [-2, 2)"),
            "{e}"
        );
        let e = strict_types(11, vec![slice()], x(), inits()).unwrap_err();
        assert!(e.contains("Input axes has invalid data"), "{e}");
    }

    #[test]
    fn the_softmax_family_needs_a_rank_from_opset_11() {
        for op in ["Softmax", "LogSoftmax", "Hardmax"] {
            let n = || node(op, &["x"], &["y"]);
            let e = strict_types(13, vec![n()], float_inputs(&[("x", &[])]), vec![]).unwrap_err();
            assert!(
                e.contains(&format!("Input rank must be >= 1 for {op}.")),
                "{e}"
            );
            let e = strict_types(11, vec![n()], float_inputs(&[("x", &[])]), vec![]).unwrap_err();
            let lower = op.to_ascii_lowercase();
            assert!(
                e.contains(&format!("Input rank must be >= 1 for {lower}.")),
                "{e}"
            );
            let got = strict_types(9, vec![n()], float_inputs(&[("x", &[])]), vec![]).unwrap();
            assert_eq!(got, ["y: float"]);
            let axis = n().with_attribute(AttributeProto::int("axis", 2));
            let e = strict_types(13, vec![axis], float_inputs(&[("x", &["3", "4"])]), vec![]);
            assert!(e
                .unwrap_err()
                .contains("'axis' must be in [-2 , 1]. Its actual value is: 2"));
        }
    }

    #[test]
    fn swiglu_merges_equal_shapes_and_refuses_others() {
        let n = || node("SwiGLU", &["a", "b"], &["y"]);
        let inputs = float_inputs(&[("a", &["n", "3", "8"]), ("b", &["2", "3", "8"])]);
        assert_eq!(
            strict_types(28, vec![n()], inputs, vec![]).unwrap(),
            ["y: float[2,3,8]"]
        );
        let inputs = float_inputs(&[("a", &["2", "3", "8"]), ("b", &["1", "3", "8"])]);
        assert!(strict_types(28, vec![n()], inputs, vec![]).is_err());
        let inputs = float_inputs(&[("a", &["3", "8"]), ("b", &["2", "3", "8"])]);
        assert!(strict_types(28, vec![n()], inputs, vec![]).is_err());
    }

    #[test]
    fn depth_to_space_refuses_a_block_area_that_overflows() {
        for op in ["DepthToSpace", "SpaceToDepth"] {
            let n =
                node(op, &["x"], &["y"]).with_attribute(AttributeProto::int("blocksize", 1 << 32));
            let e = strict_types(
                13,
                vec![n],
                float_inputs(&[("x", &["1", "1", "1", "1"])]),
                vec![],
            );
            let e = e.unwrap_err();
            assert!(
                e.contains("Integer overflow while multiplying dimension values"),
                "{e}"
            );
        }
        let n = node("DepthToSpace", &["x"], &["y"])
            .with_attribute(AttributeProto::int("blocksize", 2));
        let got = strict_types(
            13,
            vec![n],
            float_inputs(&[("x", &["n", "8", "h", "3"])]),
            vec![],
        );
        assert_eq!(got.unwrap(), ["y: float[n,2,unk__0,6]"]);
    }

    #[test]
    fn flatten_keeps_a_lone_name_and_refuses_an_overflowing_product() {
        let n = || node("Flatten", &["x"], &["y"]);
        let got = strict_types(
            13,
            vec![n()],
            float_inputs(&[("x", &["n", "3", "4"])]),
            vec![],
        );
        assert_eq!(got.unwrap(), ["y: float[n,12]"]);
        let huge = (1i64 << 62).to_string();
        let e = strict_types(
            13,
            vec![n()],
            float_inputs(&[("x", &["1", &huge, "4"])]),
            vec![],
        );
        assert!(e
            .unwrap_err()
            .contains("Integer overflow while multiplying"));
    }
}
