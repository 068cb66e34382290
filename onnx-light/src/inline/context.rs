//! The function bodies `onnx` builds per node (context-dependent functions) from the
//! node's attributes, inputs and input types, for the operators of the ONNX domain
//! listed in [`BUILT`]. Each body is what `onnx`'s builder writes, node for node: the
//! texts below are read by this crate's parser, which reads them as `onnx`'s does.

use super::InlineError;
use crate::checker::schema::{FormalParameter, OpSchema};
use crate::onnx::{
    AttributeProto, AttributeType, FunctionProto, NodeProto, TensorProto, TypeProto, TypeValue,
};
use crate::{text, Str};

/// The operators (of domain `""`) whose bodies are built here.
pub(super) const BUILT: &[&str] = &["CastLike", "Clip", "Gelu", "LogSoftmax", "Softmax"];

/// The body the builder of version `builder` of `schema` makes for `node`, whose input
/// types are `types`; `None` when the builder declines (as `onnx`'s `CastLike` does for
/// a second input that is not a tensor).
pub(super) fn build<'a>(
    schema: &OpSchema<'_>,
    builder: i64,
    node: &NodeProto<'_>,
    types: &[TypeProto<'_>],
) -> Result<Option<FunctionProto<'a>>, InlineError> {
    let op_type = schema.name();
    let parse = |texts: &[&str]| -> Result<Vec<NodeProto<'a>>, InlineError> {
        texts
            .iter()
            .flat_map(|t| t.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                text::parse_node(l).map_err(|e| InlineError::Builder {
                    op_type: op_type.to_owned(),
                    reason: e.to_string(),
                })
            })
            .collect()
    };
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
        "Softmax" | "LogSoftmax" => {
            let axis = node
                .attribute
                .iter()
                .find(|a| a.name() == "axis")
                .map_or(-1, |a| a.i.unwrap_or(0));
            let mut nodes = parse(&["axes = Constant()"])?;
            let mut axes = TensorProto {
                data_type: Some(crate::onnx::DataType::Int64.into()),
                int64_data: vec![axis],
                ..TensorProto::default()
            };
            axes.dims.push(1);
            nodes[0].attribute.push(AttributeProto {
                name: Some("value".into()),
                t: Some(Box::new(axes)),
                r#type: Some(AttributeType::Tensor.into()),
                ..AttributeProto::default()
            });
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
        _ => {
            return Err(InlineError::ContextDependentFunction {
                op_type: op_type.to_owned(),
                domain: schema.domain().to_owned(),
                version: builder,
            })
        }
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

/// An `INT` attribute as `onnx`'s `MakeAttribute` makes it.
fn int_attribute<'a>(name: &'static str, value: i64) -> AttributeProto<'a> {
    AttributeProto {
        name: Some(name.into()),
        i: Some(value),
        r#type: Some(AttributeType::Int.into()),
        ..AttributeProto::default()
    }
}

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
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                text::parse_node(line).unwrap();
            }
        }
    }
}
