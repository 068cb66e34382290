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
        | "Hardmax"
        | "LeakyRelu"
        | "Log"
        | "LogSoftmax"
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
        | "Softmax"
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
    let product = |ds: &[Dimension<'_>]| -> Dimension<'static> {
        match ds.iter().map(Dimension::as_value).product::<Option<i64>>() {
            Some(v) => Dimension::value(v),
            None => Dimension::unknown(),
        }
    };
    let (a, b) = s.dim.split_at(axis as usize);
    Ok(vec![Some(tensor_type(
        elem,
        Some(shape_of(vec![product(a), product(b)])),
    ))])
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

fn concat(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let shapes: Option<Vec<&TensorShapeProto<'_>>> =
        (0..n.inputs.len()).map(|i| shape_in(n, i)).collect();
    let Some(shapes) = shapes else {
        return Ok(one(elem, None));
    };
    let rank = shapes[0].dim.len();
    let Some(axis) = attribute(n, "axis").and_then(|a| a.i) else {
        return Err("Required attribute axis is missing".to_string());
    };
    let axis = if axis < 0 { axis + rank as i64 } else { axis };
    if axis < 0 || axis >= rank as i64 {
        return Err("axis must be in [-rank, rank-1].".to_string());
    }
    let axis = axis as usize;
    let mut dims: Vec<Dimension<'static>> = Vec::with_capacity(rank);
    let mut along: Option<i64> = Some(0);
    for (k, s) in shapes.iter().enumerate() {
        if s.dim.len() != rank {
            return Err("All inputs to Concat must have same rank".to_string());
        }
        along = along.zip(s.dim[axis].as_value()).map(|(a, b)| a + b);
        for (i, d) in s.dim.iter().enumerate() {
            if i == axis {
                continue;
            }
            if k == 0 {
                dims.push(owned_dim(d));
                continue;
            }
            let slot = &mut dims[if i < axis { i } else { i - 1 }];
            match (slot.as_value(), d.as_value()) {
                (Some(a), Some(b)) if a != b => {
                    return Err(format!("Dimension mismatch in Concat: {a} vs {b}"))
                }
                (None, Some(_)) => *slot = owned_dim(d),
                (None, None) if slot.value.is_none() => *slot = owned_dim(d),
                _ => {}
            }
        }
    }
    dims.insert(
        axis,
        along.map_or_else(Dimension::unknown, Dimension::value),
    );
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

fn slice(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(input) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    let rank = input.dim.len() as i64;
    let given = |i: usize| n.node.input.get(i).is_some_and(|x| !x.is_empty());
    let starts = input_values(n, 1);
    let ends = input_values(n, 2);
    let axes: Option<Vec<i64>> = if given(3) {
        input_values(n, 3).map(<[i64]>::to_vec)
    } else {
        starts.map(|s| (0..s.len() as i64).collect())
    };
    let steps: Option<Vec<i64>> = if given(4) {
        input_values(n, 4).map(<[i64]>::to_vec)
    } else {
        starts.map(|s| vec![1; s.len()])
    };
    let (Some(starts), Some(ends), Some(axes), Some(steps)) = (starts, ends, axes, steps) else {
        // The values are not known: the rank is.
        let dims = vec![Dimension::unknown(); rank as usize];
        return Ok(one(elem, Some(shape_of(dims))));
    };
    if starts.len() != ends.len() {
        return Err("Incorrect or missing input value for starts and ends".to_string());
    }
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("Input axes and steps have incorrect length".to_string());
    }
    let mut dims: Vec<Dimension<'static>> = input.dim.iter().map(owned_dim).collect();
    let mut seen = Vec::new();
    for (k, &axis) in axes.iter().enumerate() {
        let a = if axis < 0 { axis + rank } else { axis };
        if a < 0 || a >= rank {
            return Err("Input axes has invalid data".to_string());
        }
        if seen.contains(&a) {
            return Err("'axes' has duplicates".to_string());
        }
        seen.push(a);
        let step = steps[k];
        if step == 0 {
            return Err("'step' cannot be 0".to_string());
        }
        let Some(dim) = input.dim[a as usize].as_value() else {
            dims[a as usize] = Dimension::unknown();
            continue;
        };
        let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
        let mut start = starts[k];
        let mut end = ends[k];
        if start < 0 {
            start = start.saturating_add(dim);
        }
        if end < 0 {
            end = end.saturating_add(dim);
        }
        let len = if step > 0 {
            let (start, end) = (clamp(start, 0, dim), clamp(end, 0, dim));
            if end > start {
                (end - start + step - 1) / step
            } else {
                0
            }
        } else {
            let (start, end) = (clamp(start, 0, dim - 1), clamp(end, -1, dim - 1));
            if start > end {
                (start - end - step - 1) / -step
            } else {
                0
            }
        };
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

fn depth_space(n: &Node<'_, '_>, to_space: bool) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(b) = attribute(n, "blocksize").and_then(|a| a.i) else {
        return Err("Blocksize must be specified".to_string());
    };
    let Some(s) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    if s.dim.len() != 4 {
        return Err("Input tensor must be 4-dimensional".to_string());
    }
    let scaled = |d: &Dimension<'_>, f: &dyn Fn(i64) -> i64| match d.as_value() {
        Some(v) => Dimension::value(f(v)),
        None => Dimension::unknown(),
    };
    let dims = if to_space {
        vec![
            owned_dim(&s.dim[0]),
            scaled(&s.dim[1], &|c| c / (b * b)),
            scaled(&s.dim[2], &|h| h * b),
            scaled(&s.dim[3], &|w| w * b),
        ]
    } else {
        vec![
            owned_dim(&s.dim[0]),
            scaled(&s.dim[1], &|c| c * b * b),
            scaled(&s.dim[2], &|h| h / b),
            scaled(&s.dim[3], &|w| w / b),
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
