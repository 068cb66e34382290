//! The function bodies `onnx` builds per node (context-dependent functions) from the
//! node's attributes, inputs and input types, for the operators of the ONNX domain
//! listed in [`BUILT`]. Each body is what `onnx`'s builder writes, node for node: the
//! texts below are read by this crate's parser, which reads them as `onnx`'s does.

use crate::checker::schema::{FormalParameter, OpSchema};
use crate::onnx::{
    AttributeProto, AttributeType, DataType, FunctionProto, NodeProto, TensorProto, TypeProto,
    TypeValue,
};
use crate::{text, Str};

/// Why a body could not be built.
#[derive(Debug)]
pub(super) enum BuildError {
    /// A text of the body did not parse (the parser's reason).
    Parse(String),
    /// The operator's body is not built here.
    NotBuilt,
}

/// The nodes of one of the body texts below, joined by lines.
fn parse<'a>(texts: &[&str]) -> Result<Vec<NodeProto<'a>>, BuildError> {
    parse_nodes(&texts.join("\n")).map_err(BuildError::Parse)
}

/// Appends the nodes of `text` to `nodes`, `attr` given to the last of them (the
/// attributes onnx's builder passes as values rather than in the text).
fn add<'a>(
    nodes: &mut Vec<NodeProto<'a>>,
    text: &str,
    attr: Option<AttributeProto<'a>>,
) -> Result<(), BuildError> {
    let mut parsed = parse(&[text])?;
    if let (Some(attr), Some(last)) = (attr, parsed.last_mut()) {
        last.attribute.push(attr);
    }
    nodes.extend(parsed);
    Ok(())
}

/// The operators (of domain `""`) whose bodies are built here.
pub(super) const BUILT: &[&str] = &[
    "CastLike",
    "Clip",
    "Gelu",
    "LayerNormalization",
    "LogSoftmax",
    "RMSNormalization",
    "Range",
    "Softmax",
];

/// The body the builder of version `builder` of `schema` makes for `node`, whose input
/// types are `types`; `None` when the builder declines (as `onnx`'s `CastLike` does for
/// a second input that is not a tensor).
pub(super) fn build<'a>(
    schema: &OpSchema<'_>,
    builder: i64,
    node: &NodeProto<'_>,
    types: &[TypeProto<'_>],
) -> Result<Option<FunctionProto<'a>>, BuildError> {
    let op_type = schema.name();
    let nodes = match op_type {
        "CastLike" => {
            let Some(TypeValue::TensorType(target)) = types.get(1).and_then(|t| t.value.as_ref())
            else {
                return Ok(None);
            };
            let to = target.elem_type_raw.unwrap_or(0);
            if builder >= 19 {
                parse(&[&format!(
                    "output = Cast <to= {to}, saturate: int = @saturate> (input)"
                )])?
            } else {
                let mut nodes = parse(&["output = Cast (input)"])?;
                nodes[0].attribute.push(int_attribute("to", i64::from(to)));
                nodes
            }
        }
        "Clip" => {
            let has = |i: usize| node.input.get(i).is_some_and(|n| !n.is_empty());
            parse(&[match (has(1), has(2)) {
                (false, false) => "output = Identity (input)",
                (true, false) => {
                    "input_less_than_min = Less (input, min)
                    output = Where (input_less_than_min, min, input)"
                }
                (false, true) => {
                    "input_large_than_max = Less (max, input)
                    output = Where (input_large_than_max, max, input)"
                }
                (true, true) => {
                    "input_less_than_min = Less (input, min)
                    tmp = Where (input_less_than_min, min, input)
                    output_large_than_max = Less (max, tmp)
                    output = Where (output_large_than_max, max, tmp)"
                }
            }])?
        }
        "Gelu" => {
            let approximate = node
                .attribute
                .iter()
                .find(|a| a.name() == "approximate")
                .and_then(|a| a.s.as_deref());
            parse(&[if approximate == Some(b"tanh".as_slice()) {
                GELU_TANH
            } else {
                GELU_ERF
            }])?
        }
        "LayerNormalization" => {
            let Some(TypeValue::TensorType(x)) = types.first().and_then(|t| t.value.as_ref())
            else {
                return Ok(None);
            };
            let t = i64::from(x.elem_type_raw.unwrap_or(0));
            let attribute = |name: &str| node.attribute.iter().find(|a| a.name() == name);
            let u = attribute("stash_type").map_or(DataType::Float as i64, |a| a.i.unwrap_or(0));
            if u != DataType::Float as i64 && u != DataType::Bfloat16 as i64 {
                return Ok(None);
            }
            let axis = attribute("axis").map_or(-1, |a| a.i.unwrap_or(0));
            let epsilon = attribute("epsilon").map_or(1e-5, |a| a.f.unwrap_or(0.0));
            let has = |list: &[Str<'_>], i: usize| list.get(i).is_some_and(|n| !n.is_empty());
            let mut epsilon_tensor = TensorProto {
                data_type: Some(DataType::Float.into()),
                ..TensorProto::default()
            };
            epsilon_tensor.float_data.push(epsilon);
            let mut nodes = Vec::new();
            add(
                &mut nodes,
                "FloatEpsilon = Constant()",
                Some(tensor_attribute("value", epsilon_tensor)),
            )?;
            add(
                &mut nodes,
                "Epsilon = Cast (FloatEpsilon)",
                Some(int_attribute("to", u)),
            )?;
            add(&mut nodes, "XShape = Shape (X)", None)?;
            add(&mut nodes, "Rank = Size (XShape)", None)?;
            add(
                &mut nodes,
                "Zero1D = Constant()",
                Some(tensor_attribute("value", int64_1d(0))),
            )?;
            add(
                &mut nodes,
                "Axis1D = Constant()",
                Some(tensor_attribute("value", int64_1d(axis))),
            )?;
            add(
                &mut nodes,
                "PrefixShape = Slice (XShape, Zero1D, Axis1D)",
                None,
            )?;
            if axis >= 0 {
                add(&mut nodes, "NumReducedAxes = Sub (Rank, Axis1D)", None)?;
            } else {
                add(&mut nodes, "NumReducedAxes = Neg (Axis1D)", None)?;
            }
            let one = tensor_attribute("value", int64_1d(1));
            add(
                &mut nodes,
                "SuffixShape = ConstantOfShape (NumReducedAxes)",
                Some(one),
            )?;
            add(
                &mut nodes,
                "ReducedShape = Concat <axis = 0> (PrefixShape, SuffixShape)",
                None,
            )?;
            add(
                &mut nodes,
                "X2D = Flatten (X)",
                Some(int_attribute("axis", axis)),
            )?;
            add(&mut nodes, "XU = Cast (X2D)", Some(int_attribute("to", u)))?;
            if builder == 17 {
                add(&mut nodes, "Mean2D = ReduceMean <axes = [1]> (XU)", None)?;
                add(&mut nodes, "Square = Mul (XU, XU)", None)?;
                add(
                    &mut nodes,
                    "MeanOfSquare = ReduceMean <axes = [1]> (Square)",
                    None,
                )?;
            } else {
                add(
                    &mut nodes,
                    "Axes_1 = Constant()",
                    Some(tensor_attribute("value", int64_1d(1))),
                )?;
                add(&mut nodes, "Mean2D = ReduceMean (XU, Axes_1)", None)?;
                add(&mut nodes, "Square = Mul (XU, XU)", None)?;
                add(
                    &mut nodes,
                    "MeanOfSquare = ReduceMean (Square, Axes_1)",
                    None,
                )?;
            }
            for text in [
                "SquareOfMean = Mul (Mean2D, Mean2D)",
                "Var = Sub (MeanOfSquare, SquareOfMean)",
                "VarPlusEpsilon = Add (Var, Epsilon)",
                "StdDev = Sqrt (VarPlusEpsilon)",
                "Deviation = Sub (XU, Mean2D)",
                "Normalized = Div (Deviation, StdDev)",
            ] {
                add(&mut nodes, text, None)?;
            }
            add(
                &mut nodes,
                "NormalizedT = Cast (Normalized)",
                Some(int_attribute("to", t)),
            )?;
            add(&mut nodes, "Scale2D = Flatten <axis = 0> (Scale)", None)?;
            add(&mut nodes, "Scaled = Mul (NormalizedT, Scale2D)", None)?;
            if has(&node.input, 2) {
                add(&mut nodes, "B2D = Flatten <axis=0> (B)", None)?;
                add(&mut nodes, "Biased = Add (Scaled, B2D)", None)?;
            } else {
                add(&mut nodes, "Biased = Identity (Scaled)", None)?;
            }
            add(&mut nodes, "Y = Reshape (Biased, XShape)", None)?;
            add(&mut nodes, "InvStdDev2D = Reciprocal (StdDev)", None)?;
            if has(&node.output, 1) {
                add(&mut nodes, "Mean = Reshape (Mean2D, ReducedShape)", None)?;
            }
            if has(&node.output, 2) {
                add(
                    &mut nodes,
                    "InvStdDev = Reshape (InvStdDev2D, ReducedShape)",
                    None,
                )?;
            }
            nodes
        }
        "RMSNormalization" => {
            let Some(TypeValue::TensorType(x)) = types.first().and_then(|t| t.value.as_ref())
            else {
                return Ok(None);
            };
            let t = i64::from(x.elem_type_raw.unwrap_or(0));
            let attribute = |name: &str| node.attribute.iter().find(|a| a.name() == name);
            let u = attribute("stash_type").map_or(DataType::Float as i64, |a| a.i.unwrap_or(0));
            let stash = [
                DataType::Float,
                DataType::Bfloat16,
                DataType::Float16,
                DataType::Double,
            ];
            if !stash.iter().any(|&d| d as i64 == u) {
                return Ok(None);
            }
            let axis = attribute("axis").map_or(-1, |a| a.i.unwrap_or(0));
            let epsilon = attribute("epsilon").map_or(1e-5, |a| a.f.unwrap_or(0.0));
            let mut epsilon_tensor = TensorProto {
                data_type: Some(DataType::Float.into()),
                ..TensorProto::default()
            };
            epsilon_tensor.float_data.push(epsilon);
            let mut nodes = Vec::new();
            add(
                &mut nodes,
                "FloatEpsilon = Constant()",
                Some(tensor_attribute("value", epsilon_tensor)),
            )?;
            add(
                &mut nodes,
                "Epsilon = Cast (FloatEpsilon)",
                Some(int_attribute("to", u)),
            )?;
            add(&mut nodes, "XShape = Shape (X)", None)?;
            add(&mut nodes, "Rank = Size (XShape)", None)?;
            add(
                &mut nodes,
                "Axis = Constant()",
                Some(tensor_attribute("value", int64_scalar(axis))),
            )?;
            if axis >= 0 {
                add(&mut nodes, "PosAxis = Identity (Axis)", None)?;
            } else {
                add(&mut nodes, "PosAxis = Add (Rank, Axis)", None)?;
            }
            add(
                &mut nodes,
                "One = Constant()",
                Some(tensor_attribute("value", int64_scalar(1))),
            )?;
            add(&mut nodes, "ReduceAxes = Range(PosAxis, Rank, One)", None)?;
            add(&mut nodes, "XU = Cast (X)", Some(int_attribute("to", u)))?;
            add(&mut nodes, "XSquared = Mul (XU, XU)", None)?;
            add(
                &mut nodes,
                "XSquaredMean = ReduceMean (XSquared, ReduceAxes)",
                None,
            )?;
            add(
                &mut nodes,
                "MeanSquareEpsilon = Add (XSquaredMean, Epsilon)",
                None,
            )?;
            add(&mut nodes, "RMS = Sqrt (MeanSquareEpsilon)", None)?;
            add(&mut nodes, "Normalized = Div (XU, RMS)", None)?;
            add(
                &mut nodes,
                "NormalizedT = Cast (Normalized)",
                Some(int_attribute("to", t)),
            )?;
            add(&mut nodes, "Y = Mul (NormalizedT, scale)", None)?;
            nodes
        }
        "Range" => {
            // onnx reads the element type without checking that the input is a tensor.
            let Some(start) = types.first() else {
                return Ok(None);
            };
            let t = match &start.value {
                Some(TypeValue::TensorType(x)) => i64::from(x.elem_type_raw.unwrap_or(0)),
                _ => 0,
            };
            let needs_stash = t == DataType::Float16 as i64 || t == DataType::Bfloat16 as i64;
            let mut stash = t;
            if needs_stash {
                let attr = node.attribute.iter().find(|a| a.name() == "stash_type");
                stash = attr.map_or(DataType::Float as i64, |a| a.i.unwrap_or(0));
                if stash != DataType::Float as i64 && stash != DataType::Double as i64 {
                    return Ok(None);
                }
            }
            let mut nodes = Vec::new();
            let (int64, bool_) = (DataType::Int64 as i64, DataType::Bool as i64);
            if needs_stash && stash != t {
                add(
                    &mut nodes,
                    "start_s = Cast (start)",
                    Some(int_attribute("to", stash)),
                )?;
                add(
                    &mut nodes,
                    "limit_s = Cast (limit)",
                    Some(int_attribute("to", stash)),
                )?;
                add(
                    &mut nodes,
                    "delta_s = Cast (delta)",
                    Some(int_attribute("to", stash)),
                )?;
                add(&mut nodes, "sub_result = Sub (limit_s, start_s)", None)?;
                add(&mut nodes, "div_result = Div (sub_result, delta_s)", None)?;
                add(&mut nodes, "ceil_result = Ceil (div_result)", None)?;
                add(&mut nodes, "ceil_relu = Relu (ceil_result)", None)?;
                add(
                    &mut nodes,
                    "n = Cast (ceil_relu)",
                    Some(int_attribute("to", int64)),
                )?;
                add(
                    &mut nodes,
                    "loop_cond = Cast (ceil_relu)",
                    Some(int_attribute("to", bool_)),
                )?;
                add(&mut nodes, RANGE_STASH_LOOP, None)?;
                add(
                    &mut nodes,
                    "output = Cast (output_s)",
                    Some(int_attribute("to", t)),
                )?;
            } else {
                let float = DataType::Float as i64;
                add(&mut nodes, "sub_result = Sub (limit, start)", None)?;
                add(
                    &mut nodes,
                    "sub_result_casted = Cast (sub_result)",
                    Some(int_attribute("to", float)),
                )?;
                add(
                    &mut nodes,
                    "delta_casted = Cast (delta)",
                    Some(int_attribute("to", float)),
                )?;
                add(
                    &mut nodes,
                    "div_result = Div (sub_result_casted, delta_casted)",
                    None,
                )?;
                add(&mut nodes, "ceil_result = Ceil (div_result)", None)?;
                add(&mut nodes, "ceil_result_relu = Relu (ceil_result)", None)?;
                let to_int = Some(int_attribute("to", int64));
                add(
                    &mut nodes,
                    "ceil_result_relu_int = Cast (ceil_result_relu)",
                    to_int,
                )?;
                let to_bool = Some(int_attribute("to", bool_));
                add(
                    &mut nodes,
                    "ceil_result_relu_bool = Cast (ceil_result_relu)",
                    to_bool,
                )?;
                add(&mut nodes, RANGE_LOOP, None)?;
            }
            nodes
        }
        "Softmax" | "LogSoftmax" => {
            let axis = node
                .attribute
                .iter()
                .find(|a| a.name() == "axis")
                .map_or(-1, |a| a.i.unwrap_or(0));
            let mut nodes = parse(&["axes = Constant()"])?;
            nodes[0]
                .attribute
                .push(tensor_attribute("value", int64_1d(axis)));
            if builder >= 18 {
                nodes.extend(parse(&[
                    "X_ReduceMax = ReduceMax <keepdims = 1> (input, axes)",
                ])?);
            } else {
                let mut max = parse(&["X_ReduceMax = ReduceMax <keepdims = 1> (input)"])?;
                max[0].attribute.push(AttributeProto {
                    name: Some("axes".into()),
                    ints: vec![axis],
                    r#type: Some(AttributeType::Ints.into()),
                    ..AttributeProto::default()
                });
                nodes.extend(max);
            }
            nodes.extend(parse(&[if op_type == "Softmax" {
                SOFTMAX_TAIL
            } else {
                LOG_SOFTMAX_TAIL
            }])?);
            nodes
        }
        _ => return Err(BuildError::NotBuilt),
    };
    let names = |params: &[FormalParameter<'_>]| -> Vec<Str<'a>> {
        params
            .iter()
            .map(|p| Str::from(p.name().to_owned()))
            .collect()
    };
    Ok(Some(FunctionProto {
        name: Some(op_type.to_owned().into()),
        domain: Some(schema.domain().to_owned().into()),
        input: names(&schema.inputs),
        output: names(&schema.outputs),
        node: nodes,
        ..FunctionProto::default()
    }))
}

/// The nodes written in `nodes` (one or more, in the ONNX text syntax), read as a
/// graph's nodes.
fn parse_nodes<'a>(nodes: &str) -> Result<Vec<NodeProto<'a>>, String> {
    let graph =
        text::parse_graph(&format!("body () => () {{\n{nodes}\n}}")).map_err(|e| e.to_string())?;
    Ok(graph.node)
}

/// A scalar (rank 0) tensor of one `int64`, as `onnx`'s `ToTensor` makes it.
fn int64_scalar<'a>(value: i64) -> TensorProto<'a> {
    TensorProto {
        data_type: Some(DataType::Int64.into()),
        int64_data: vec![value],
        ..TensorProto::default()
    }
}

/// A `TENSOR` attribute as `onnx`'s `MakeAttribute` makes it.
fn tensor_attribute<'a>(name: &'static str, tensor: TensorProto<'a>) -> AttributeProto<'a> {
    AttributeProto {
        name: Some(name.into()),
        t: Some(Box::new(tensor)),
        r#type: Some(AttributeType::Tensor.into()),
        ..AttributeProto::default()
    }
}

/// The one-element `int64` tensor of shape `[1]` `onnx`'s builders make.
fn int64_1d<'a>(value: i64) -> TensorProto<'a> {
    let mut t = TensorProto {
        data_type: Some(DataType::Int64.into()),
        int64_data: vec![value],
        ..TensorProto::default()
    };
    t.dims.push(1);
    t
}

/// An `INT` attribute as `onnx`'s `MakeAttribute` makes it.
fn int_attribute<'a>(name: &'static str, value: i64) -> AttributeProto<'a> {
    AttributeProto {
        name: Some(name.into()),
        i: Some(value),
        r#type: Some(AttributeType::Int.into()),
        ..AttributeProto::default()
    }
}

const RANGE_STASH_LOOP: &str = "variadic_output, output_s = Loop (n, loop_cond, start_s)
    <body = loop_body (int64 i, bool cond_in, prev) => (cond_out, current, range) {
        cond_out = Identity (cond_in)
        current = Add (prev, delta_s)
        range = Identity (prev)
    }>";

const RANGE_LOOP: &str =
    "variadic_output, output = Loop (ceil_result_relu_int, ceil_result_relu_bool, start)
    <body = loop_body_attribute (int64 i, bool cond, prev) => (cond_out, current, range) {
        cond_out = Identity (cond)
        current = Add (prev, delta)
        range = Identity (prev)
    }>";

const SOFTMAX_TAIL: &str = "
    X_Sub = Sub (input, X_ReduceMax)
    X_Exp = Exp (X_Sub)
    X_ReduceSum = ReduceSum <keepdims = 1> (X_Exp, axes)
    output = Div (X_Exp, X_ReduceSum)";

const LOG_SOFTMAX_TAIL: &str = "
    X_Sub = Sub (input, X_ReduceMax)
    X_Exp = Exp (X_Sub)
    X_ReduceSum = ReduceSum <keepdims = 1> (X_Exp, axes)
    X_Log = Log (X_ReduceSum)
    output = Sub (X_Sub, X_Log)";

const GELU_TANH: &str = "
    Half = Constant <value = float {0.5}>()
    HalfCast = CastLike (Half, X)
    One = Constant <value = float {1.0}>()
    OneCast = CastLike (One, X)
    TwoOverPi = Constant <value = float {0.63661977236}>()
    TwoOverPiCast = CastLike (TwoOverPi, X)
    C0 = Constant <value = float {0.044715}>()
    C0Cast = CastLike (C0, X)
    SqrtTwoOverPi = Sqrt (TwoOverPiCast)
    Three = Constant <value = float {3.0}>()
    ThreeCast = CastLike (Three, X)
    XCubed = Pow (X, ThreeCast)
    XCubedC0 = Mul (C0Cast, XCubed)
    XC0XCubed = Sum (X, XCubedC0)
    TanhInput = Mul (SqrtTwoOverPi, XC0XCubed)
    ErfApprox = Tanh (TanhInput)
    PhiApprox = Sum (OneCast, ErfApprox)
    MultX = Mul (HalfCast, X)
    Y = Mul (MultX, PhiApprox)";

const GELU_ERF: &str = "
    Half = Constant <value = float {0.5}>()
    HalfCast = CastLike (Half, X)
    One = Constant <value = float {1.0}>()
    OneCast = CastLike (One, X)
    Two = Constant <value = float {2.0}>()
    TwoCast = CastLike (Two, X)
    SqrtTwo = Sqrt (TwoCast)
    XSqrt = Div (X, SqrtTwo)
    ErfXSqrt = Erf(XSqrt)
    Phi = Sum (OneCast, ErfXSqrt)
    MultX = Mul (HalfCast, X)
    Y = Mul (MultX, Phi)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_body_text_parses() {
        for text in [SOFTMAX_TAIL, LOG_SOFTMAX_TAIL, GELU_TANH, GELU_ERF] {
            assert_eq!(
                parse_nodes(text).unwrap().len(),
                text.trim().lines().count()
            );
        }
        for text in [RANGE_LOOP, RANGE_STASH_LOOP] {
            let nodes = parse_nodes(text).unwrap();
            assert_eq!(nodes.len(), 1);
            assert_eq!(nodes[0].attribute[0].g.as_ref().unwrap().node.len(), 3);
        }
    }
}
