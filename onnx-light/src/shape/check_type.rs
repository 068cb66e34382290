//! `check_type`: the types of a node's inputs and outputs against its operator's schema,
//! as `onnx` checks them after inferring (`OpSchema::CheckInputOutputType`): each typed
//! value must have a type its formal parameter allows, and the values bound to the same
//! type parameter (`T`) must have the same type. An output nothing was inferred for
//! takes the one type its parameter allows, or the type its inputs bound.

use std::collections::HashMap;

use crate::checker::schema::{FormalParameter, FormalParameterOption, OpSchema};
use crate::onnx::{
    DataType, TypeProto, TypeProtoMap, TypeProtoOptional, TypeProtoSequence, TypeProtoSparseTensor,
    TypeValue,
};
use crate::ProtoEnum;

/// Checks a node's known input types and its inferred `outputs` against `schema`,
/// giving untyped outputs the type the schema implies; the reason in `onnx`'s words
/// when one does not fit.
pub(super) fn check(
    schema: &OpSchema<'_>,
    inputs: &[Option<&TypeProto<'_>>],
    outputs: &mut [Option<TypeProto<'static>>],
) -> Result<(), String> {
    let node = format!(
        "Node with schema(::{}:{})",
        schema.name(),
        schema.since_version
    );
    for (side, count, min, max, allowed) in [
        (
            "input",
            inputs.len(),
            schema.min_input,
            schema.max_input,
            schema.input_count_allowed(inputs.len()),
        ),
        (
            "output",
            outputs.len(),
            schema.min_output,
            schema.max_output,
            schema.output_count_allowed(outputs.len()),
        ),
    ] {
        if (count as i64) < i64::from(min) || (count as i64) > i64::from(max) {
            return Err(format!(
                "{node} has {side} size {count} not in range [min={min}, max={max}]."
            ));
        }
        if !allowed {
            return Err(format!(
                "{node} has {side} size {count} not in allowed {side} sizes."
            ));
        }
    }
    let mut bound: HashMap<&str, String> = HashMap::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(param) = parameter(&schema.inputs, i) else {
            break;
        };
        let Some(written) = input.filter(|t| t.value.is_some()).and_then(type_string) else {
            continue;
        };
        let allowed = allowed(schema, param);
        if !allowed.is_empty() && !allowed.contains(&written.as_str()) {
            return Err(format!(
                "{} typestr: {}, has unsupported type: {written}",
                param.name(),
                param.type_str()
            ));
        }
        bind(&mut bound, param, written)?;
    }
    for (i, output) in outputs.iter_mut().enumerate() {
        let Some(param) = parameter(&schema.outputs, i) else {
            break;
        };
        let allowed = allowed(schema, param);
        if output.as_ref().is_none_or(|t| t.value.is_none()) {
            let implied = match allowed.as_slice() {
                [one] => Some(one.to_string()),
                _ => bound.get(param.type_str()).cloned(),
            };
            let Some(implied) = implied.and_then(|s| parse_type(&s)) else {
                continue;
            };
            *output = Some(implied);
        }
        let Some(written) = output.as_ref().and_then(type_string) else {
            continue;
        };
        if !allowed.is_empty() && !allowed.contains(&written.as_str()) {
            return Err(format!("{} has unsupported type {written}", param.name()));
        }
        bind(&mut bound, param, written)?;
    }
    Ok(())
}

/// The formal parameter of value `i` (the last one when it is variadic).
fn parameter<'s>(params: &'s [FormalParameter<'s>], i: usize) -> Option<&'s FormalParameter<'s>> {
    match params.get(i) {
        Some(p) => Some(p),
        None => params
            .last()
            .filter(|p| p.option() == FormalParameterOption::Variadic),
    }
}

/// The types `param` allows: its type parameter's, or the one type it names.
fn allowed<'s>(schema: &'s OpSchema<'_>, param: &'s FormalParameter<'_>) -> Vec<&'s str> {
    let type_str = param.type_str();
    match schema
        .type_constraints
        .iter()
        .find(|c| c.type_param() == type_str)
    {
        Some(c) => c.allowed_types.iter().map(|s| s.as_ref()).collect(),
        None => vec![type_str],
    }
}

/// Binds `param`'s type parameter to `written` when it is homogeneous; an error when it
/// is bound to another type already.
fn bind<'s>(
    bound: &mut HashMap<&'s str, String>,
    param: &'s FormalParameter<'_>,
    written: String,
) -> Result<(), String> {
    if !param.is_homogeneous {
        return Ok(());
    }
    match bound.get(param.type_str()) {
        Some(first) if *first != written => {
            Err(format!("{} has inconsistent type {written}", param.name()))
        }
        Some(_) => Ok(()),
        None => {
            bound.insert(param.type_str(), written);
            Ok(())
        }
    }
}

/// A type from the notation of [`type_string`] (no shape).
fn parse_type(s: &str) -> Option<TypeProto<'static>> {
    let inner = |prefix: &str| s.strip_prefix(prefix)?.strip_suffix(')');
    let elem = |name: &str| {
        (0..64).find(|&raw| DataType::from_i32(raw).is_some_and(|d| d.to_string() == name))
    };
    let boxed = |t: TypeProto<'static>| Some(Box::new(t));
    let value = if let Some(e) = inner("tensor(") {
        return Some(TypeProto::tensor(DataType::from_i32(elem(e)?)?, None));
    } else if let Some(e) = inner("sparse_tensor(") {
        TypeValue::SparseTensorType(TypeProtoSparseTensor {
            elem_type_raw: Some(elem(e)?),
            ..Default::default()
        })
    } else if let Some(e) = inner("seq(") {
        TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: boxed(parse_type(e)?),
            ..Default::default()
        }))
    } else if let Some(e) = inner("optional(") {
        TypeValue::OptionalType(Box::new(TypeProtoOptional {
            elem_type: boxed(parse_type(e)?),
            ..Default::default()
        }))
    } else if let Some(e) = inner("map(") {
        let (key, value) = e.split_once(',')?;
        TypeValue::MapType(Box::new(TypeProtoMap {
            key_type_raw: Some(elem(key)?),
            value_type: boxed(parse_type(value)?),
            ..Default::default()
        }))
    } else {
        return None;
    };
    Some(TypeProto {
        value: Some(value),
        ..Default::default()
    })
}

/// A type in the notation of schemas' type constraints: `tensor(float)`,
/// `seq(tensor(int64))`, `optional(...)`, `sparse_tensor(...)`, `map(int64,...)`.
/// `None` for a type with nothing set or an element type this crate does not know.
pub(super) fn type_string(t: &TypeProto<'_>) -> Option<String> {
    let elem = |raw: i32| DataType::from_i32(raw).map(|d| d.to_string());
    Some(match t.value.as_ref()? {
        TypeValue::TensorType(tt) => format!("tensor({})", elem(tt.elem_type_raw())?),
        TypeValue::SparseTensorType(tt) => {
            format!("sparse_tensor({})", elem(tt.elem_type_raw())?)
        }
        TypeValue::SequenceType(s) => format!("seq({})", type_string(s.elem_type.as_deref()?)?),
        TypeValue::OptionalType(s) => {
            format!("optional({})", type_string(s.elem_type.as_deref()?)?)
        }
        TypeValue::MapType(m) => format!(
            "map({},{})",
            elem(m.key_type_raw())?,
            type_string(m.value_type.as_deref()?)?
        ),
        TypeValue::OpaqueType(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::schema::lookup;
    use crate::onnx::TensorShapeProto;

    fn tensor(dt: DataType) -> TypeProto<'static> {
        TypeProto::tensor(dt, Some(TensorShapeProto::default()))
    }

    #[test]
    fn an_input_type_the_schema_does_not_allow_is_named() {
        let relu = lookup("", "Relu", 13).unwrap();
        let s = tensor(DataType::String);
        assert_eq!(
            check(relu, &[Some(&s)], &mut [None]),
            Err("X typestr: T, has unsupported type: tensor(string)".into())
        );
        // Relu accepts int32 from opset 14 on.
        let i = tensor(DataType::Int32);
        assert!(check(relu, &[Some(&i)], &mut [None]).is_err());
        assert!(check(lookup("", "Relu", 14).unwrap(), &[Some(&i)], &mut [None]).is_ok());
    }

    #[test]
    fn inputs_of_one_type_parameter_must_agree_and_unknown_ones_are_skipped() {
        let add = lookup("", "Add", 21).unwrap();
        let (f, i) = (tensor(DataType::Float), tensor(DataType::Int32));
        assert_eq!(
            check(add, &[Some(&i), Some(&f)], &mut [None]),
            Err("B has inconsistent type tensor(float)".into())
        );
        assert!(check(add, &[None, Some(&f)], &mut [None]).is_ok());
        // Variadic inputs are checked against the last formal parameter.
        let sum = lookup("", "Sum", 13).unwrap();
        assert_eq!(
            check(sum, &[Some(&f), Some(&f), Some(&i)], &mut [None]),
            Err("data_0 typestr: T, has unsupported type: tensor(int32)".into())
        );
    }

    #[test]
    fn counts_outside_the_schemas_are_refused() {
        let f = tensor(DataType::Float);
        assert_eq!(
            check(
                lookup("", "Relu", 14).unwrap(),
                &[Some(&f), None],
                &mut [None]
            ),
            Err("Node with schema(::Relu:14) has input size 2 not in range [min=1, max=1].".into())
        );
        let bn = lookup("", "BatchNormalization", 9).unwrap();
        assert_eq!(
            check(bn, &[None; 5], &mut [None, None, None]),
            Err("Node with schema(::BatchNormalization:9) has output size 3 not in allowed output sizes.".into())
        );
    }

    #[test]
    fn untyped_outputs_take_the_type_the_schema_implies_and_typed_ones_are_checked() {
        let add = lookup("", "Add", 21).unwrap();
        let f = tensor(DataType::Float);
        let mut outputs = [None];
        check(add, &[Some(&f), None], &mut outputs).unwrap();
        assert_eq!(outputs[0], Some(TypeProto::tensor(DataType::Float, None)));
        let mut outputs = [Some(tensor(DataType::Int32))];
        assert_eq!(
            check(add, &[Some(&f), None], &mut outputs),
            Err("C has inconsistent type tensor(int32)".into())
        );
        // Shape has one output type whatever the input.
        let mut outputs = [None];
        check(lookup("", "Shape", 21).unwrap(), &[None], &mut outputs).unwrap();
        assert_eq!(outputs[0], Some(TypeProto::tensor(DataType::Int64, None)));
    }

    #[test]
    fn nested_types_are_written_as_schemas_write_them() {
        let seq = TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(
                crate::onnx::TypeProtoSequence {
                    elem_type: Some(Box::new(tensor(DataType::Float))),
                    ..Default::default()
                },
            ))),
            ..Default::default()
        };
        assert_eq!(type_string(&seq).unwrap(), "seq(tensor(float))");
        let mut unshaped = seq.clone();
        if let Some(TypeValue::SequenceType(s)) = unshaped.value.as_mut() {
            **s.elem_type.as_mut().unwrap() = TypeProto::tensor(DataType::Float, None);
        }
        assert_eq!(parse_type("seq(tensor(float))"), Some(unshaped));
        assert_eq!(type_string(&TypeProto::default()), None);
    }
}
