//! `check_type`: the types of a node's inputs against its operator's schema, as `onnx`
//! checks them before inferring (`OpSchema::CheckInputOutputType`): each typed input
//! must have a type its formal parameter allows, and the inputs bound to the same type
//! parameter (`T`) must have the same type.

use std::collections::HashMap;

use crate::checker::schema::{FormalParameterOption, OpSchema};
use crate::onnx::{DataType, TypeProto, TypeValue};
use crate::ProtoEnum;

/// Checks the known input types of a node against `schema`; the reason in `onnx`'s
/// words when one does not fit.
pub(super) fn check_inputs(
    schema: &OpSchema<'_>,
    inputs: &[Option<&TypeProto<'_>>],
) -> Result<(), String> {
    let mut bound: HashMap<&str, String> = HashMap::new();
    for (i, input) in inputs.iter().enumerate() {
        let param = match schema.inputs.get(i) {
            Some(p) => p,
            None => match schema.inputs.last() {
                Some(p) if p.option() == FormalParameterOption::Variadic => p,
                // Too many inputs is the checker's to report, not inference's.
                _ => break,
            },
        };
        let Some(t) = input.filter(|t| t.value.is_some()) else {
            continue;
        };
        let Some(written) = type_string(t) else {
            continue;
        };
        let type_str = param.type_str();
        let allowed: Vec<&str> = match schema
            .type_constraints
            .iter()
            .find(|c| c.type_param() == type_str)
        {
            Some(c) => c.allowed_types.iter().map(|s| s.as_ref()).collect(),
            None => vec![type_str],
        };
        if !allowed.is_empty() && !allowed.contains(&written.as_str()) {
            return Err(format!(
                "{} typestr: {type_str}, has unsupported type: {written}",
                param.name()
            ));
        }
        if param.is_homogeneous {
            match bound.get(type_str) {
                Some(first) if *first != written => {
                    return Err(format!("{} has inconsistent type {written}", param.name()));
                }
                Some(_) => {}
                None => {
                    bound.insert(type_str, written);
                }
            }
        }
    }
    Ok(())
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
            check_inputs(relu, &[Some(&s)]),
            Err("X typestr: T, has unsupported type: tensor(string)".into())
        );
        // Relu accepts int32 from opset 14 on.
        let i = tensor(DataType::Int32);
        assert!(check_inputs(relu, &[Some(&i)]).is_err());
        assert!(check_inputs(lookup("", "Relu", 14).unwrap(), &[Some(&i)]).is_ok());
    }

    #[test]
    fn inputs_of_one_type_parameter_must_agree_and_unknown_ones_are_skipped() {
        let add = lookup("", "Add", 21).unwrap();
        let (f, i) = (tensor(DataType::Float), tensor(DataType::Int32));
        assert_eq!(
            check_inputs(add, &[Some(&i), Some(&f)]),
            Err("B has inconsistent type tensor(float)".into())
        );
        assert!(check_inputs(add, &[None, Some(&f)]).is_ok());
        // Variadic inputs are checked against the last formal parameter.
        let sum = lookup("", "Sum", 13).unwrap();
        assert_eq!(
            check_inputs(sum, &[Some(&f), Some(&f), Some(&i)]),
            Err("data_0 typestr: T, has unsupported type: tensor(int32)".into())
        );
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
        assert_eq!(type_string(&TypeProto::default()), None);
    }
}
