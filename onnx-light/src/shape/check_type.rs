//! `check_type`: the types of a node's inputs and outputs against its operator's
//! schema, as `onnx` checks them after inferring (`OpSchema::CheckInputOutputType`): the
//! numbers of inputs and outputs must be allowed, each typed value must have a type its
//! formal parameter allows, and the values bound to the same type parameter (`T`) must
//! have the same type. An output the rule left untyped takes its parameter's type when
//! that is a single one, or the type its parameter's inputs bound.

use std::borrow::Cow;
use std::collections::HashMap;

use super::types::data_type_string;

use crate::checker::schema::{FormalParameter, OpSchema};
use crate::onnx::{
    DataType, TypeProto, TypeProtoMap, TypeProtoOptional, TypeProtoSequence, TypeProtoSparseTensor,
    TypeValue,
};
use crate::ProtoEnum;

/// Checks a node's known input types and inferred output types against `schema`,
/// filling in untyped outputs as `onnx` does; the reason in `onnx`'s words when one does
/// not fit. `outputs` has one entry per output of the node.
pub(super) fn check_node(
    schema: &OpSchema<'_>,
    inputs: &[Option<&TypeProto<'_>>],
    outputs: &mut [Option<TypeProto<'static>>],
) -> Result<(), String> {
    check_count(schema, "input", inputs.len())?;
    check_count(schema, "output", outputs.len())?;
    let mut bound: HashMap<&str, String> = HashMap::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(param) = parameter(&schema.inputs, i) else {
            break;
        };
        let Some(t) = input.filter(|t| t.value.is_some()) else {
            continue;
        };
        let written = type_string(t)?;
        let type_str = param.type_str();
        let allowed = allowed_types(schema, param);
        if !allowed.is_empty() && !allowed.iter().any(|a| *a == written) {
            return Err(format!(
                "{} typestr: {type_str}, has unsupported type: {written}",
                param.name()
            ));
        }
        bind(&mut bound, param, type_str, written)?;
    }
    for (o, output) in outputs.iter_mut().enumerate() {
        let Some(param) = parameter(&schema.outputs, o) else {
            break;
        };
        let type_str = param.type_str();
        let allowed = allowed_types(schema, param);
        if output.as_ref().is_none_or(|t| t.value.is_none()) {
            let implied = match allowed.as_slice() {
                [only] => Some(only.as_ref()),
                _ => bound.get(type_str).map(String::as_str),
            };
            match implied.and_then(type_from_string) {
                Some(t) => *output = Some(t),
                None => continue,
            }
        }
        let Some(t) = output.as_ref() else {
            continue;
        };
        let written = type_string(t)?;
        if !allowed.is_empty() && !allowed.iter().any(|a| *a == written) {
            return Err(format!("{} has unsupported type {written}", param.name()));
        }
        bind(&mut bound, param, type_str, written)?;
    }
    Ok(())
}

/// `onnx`'s check of the number of a node's inputs (or outputs) against the schema's.
fn check_count(schema: &OpSchema<'_>, what: &str, count: usize) -> Result<(), String> {
    let (min, max, allowed) = if what == "input" {
        let (min, max) = (schema.min_input, schema.max_input);
        (min, max, schema.input_count_allowed(count))
    } else {
        let (min, max) = (schema.min_output, schema.max_output);
        (min, max, schema.output_count_allowed(count))
    };
    let prefix = format!(
        "Node with schema({}::{}:{})",
        schema.domain(),
        schema.name(),
        schema.since_version
    );
    let in_range = i64::try_from(count).is_ok_and(|c| c >= i64::from(min) && c <= i64::from(max));
    if !in_range {
        return Err(format!(
            "{prefix} has {what} size {count} not in range [min={min}, max={max}]."
        ));
    }
    if !allowed {
        return Err(format!(
            "{prefix} has {what} size {count} not in allowed {what} sizes."
        ));
    }
    Ok(())
}

/// The formal parameter of the `i`th value: past the declared ones, the last one (a
/// variadic one, as the count check made sure).
fn parameter<'s, 'a>(
    params: &'s [FormalParameter<'a>],
    i: usize,
) -> Option<&'s FormalParameter<'a>> {
    params.get(i).or(params.last())
}

/// The types a formal parameter allows: its type parameter's, or the one it names (a
/// bare element type, as a schema made at run time may write it, names a tensor:
/// `int32` is `tensor(int32)`, as `onnx` reads it).
fn allowed_types<'s>(
    schema: &'s OpSchema<'_>,
    param: &'s FormalParameter<'_>,
) -> Vec<Cow<'s, str>> {
    let type_str = param.type_str();
    match schema
        .type_constraints
        .iter()
        .find(|c| c.type_param() == type_str)
    {
        Some(c) => c.allowed_types.iter().map(|s| canonical(s)).collect(),
        None => vec![canonical(type_str)],
    }
}

/// A schema's type string as onnx compares it: parsed and printed again, so
/// `map(int64, float)` reads `map(int64,tensor(float))` and a bare `int32` (as a schema
/// made at run time may write it) `tensor(int32)`.
fn canonical(s: &str) -> Cow<'_, str> {
    if s.contains('(') && !s.contains(' ') && !s.contains("map(") {
        return Cow::Borrowed(s);
    }
    match type_from_string(s).and_then(|t| type_string(&t).ok()) {
        Some(c) => Cow::Owned(c),
        None => Cow::Borrowed(s),
    }
}

/// Binds `param`'s type parameter to `written` when the parameter is homogeneous; an
/// error when it is bound to another type already.
fn bind<'s>(
    bound: &mut HashMap<&'s str, String>,
    param: &FormalParameter<'_>,
    type_str: &'s str,
    written: String,
) -> Result<(), String> {
    if !param.is_homogeneous {
        return Ok(());
    }
    match bound.get(type_str) {
        Some(first) if *first != written => {
            Err(format!("{} has inconsistent type {written}", param.name()))
        }
        Some(_) => Ok(()),
        None => {
            bound.insert(type_str, written);
            Ok(())
        }
    }
}

/// A type in the notation of schemas' type constraints: `tensor(float)`,
/// `seq(tensor(int64))`, `optional(...)`, `sparse_tensor(...)`, `map(int64,...)`,
/// `opaque(domain,name)`. An error, as `onnx` raises one, for a type with nothing set
/// (nested in a sequence, optional or map) or an element type `onnx` does not know.
pub(super) fn type_string(t: &TypeProto<'_>) -> Result<String, String> {
    let nested = |t: Option<&TypeProto<'_>>| match t {
        Some(t) => crate::onnx::deep::guarded(|| type_string(t)),
        None => Err("Unsupported type proto value case:0".to_string()),
    };
    Ok(match &t.value {
        None => return Err("Unsupported type proto value case:0".into()),
        Some(TypeValue::TensorType(tt)) => {
            format!("tensor({})", data_type_string(tt.elem_type_raw())?)
        }
        Some(TypeValue::SparseTensorType(tt)) => {
            format!("sparse_tensor({})", data_type_string(tt.elem_type_raw())?)
        }
        Some(TypeValue::SequenceType(s)) => format!("seq({})", nested(s.elem_type.as_deref())?),
        Some(TypeValue::OptionalType(s)) => {
            format!("optional({})", nested(s.elem_type.as_deref())?)
        }
        Some(TypeValue::MapType(m)) => format!(
            "map({},{})",
            data_type_string(m.key_type_raw())?,
            nested(m.value_type.as_deref())?
        ),
        Some(TypeValue::OpaqueType(o)) => {
            let domain = if o.domain().is_empty() {
                String::new()
            } else {
                format!("{},", o.domain())
            };
            format!("opaque({domain}{})", o.name())
        }
    })
}

/// The type a type string of a schema names (no shape), for the kinds schemas use.
fn type_from_string(s: &str) -> Option<TypeProto<'static>> {
    let s = s.trim();
    let inner = |prefix: &str| {
        s.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('('))
            .and_then(|r| r.strip_suffix(')'))
    };
    let value = if let Some(e) = inner("seq") {
        TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(type_from_string(e)?)),
            ..Default::default()
        }))
    } else if let Some(e) = inner("optional") {
        TypeValue::OptionalType(Box::new(TypeProtoOptional {
            elem_type: Some(Box::new(type_from_string(e)?)),
            ..Default::default()
        }))
    } else if let Some(kv) = inner("map") {
        let (k, v) = kv.split_once(',')?;
        TypeValue::MapType(Box::new(TypeProtoMap {
            key_type_raw: Some(elem_from_name(k)?),
            value_type: Some(Box::new(type_from_string(v)?)),
            ..Default::default()
        }))
    } else if let Some(e) = inner("sparse_tensor") {
        TypeValue::SparseTensorType(TypeProtoSparseTensor {
            elem_type_raw: Some(elem_from_name(e)?),
            ..Default::default()
        })
    } else if let Some(e) = inner("tensor") {
        return Some(TypeProto::tensor(
            DataType::from_i32(elem_from_name(e)?)?,
            None,
        ));
    } else {
        // A bare element type names a tensor of it, as in `map(int64, float)`.
        return Some(TypeProto::tensor(
            DataType::from_i32(elem_from_name(s)?)?,
            None,
        ));
    };
    Some(TypeProto {
        value: Some(value),
        ..TypeProto::default()
    })
}

/// The element type number of a name in type strings (`float` is 1).
fn elem_from_name(name: &str) -> Option<i32> {
    (1..=64).find(|&raw| DataType::from_i32(raw).is_some_and(|d| d.to_string() == name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::schema::lookup;
    use crate::onnx::TensorShapeProto;

    fn tensor(dt: DataType) -> TypeProto<'static> {
        TypeProto::tensor(dt, Some(TensorShapeProto::default()))
    }

    fn seq(elem: Option<TypeProto<'static>>) -> TypeProto<'static> {
        TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
                elem_type: elem.map(Box::new),
                ..Default::default()
            }))),
            ..Default::default()
        }
    }

    /// The check of a node with these inputs and one output its rule left untyped.
    fn check_inputs(
        schema: &OpSchema<'_>,
        inputs: &[Option<&TypeProto<'_>>],
    ) -> Result<(), String> {
        check_node(schema, inputs, &mut [None])
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
    fn the_numbers_of_inputs_and_outputs_must_be_allowed() {
        let at = lookup("", "SequenceAt", 11).unwrap();
        let s = seq(Some(tensor(DataType::Float)));
        assert_eq!(
            check_inputs(at, &[Some(&s)]),
            Err(
                "Node with schema(::SequenceAt:11) has input size 1 not in range [min=2, max=2]."
                    .into()
            )
        );
        assert_eq!(
            check_node(at, &[Some(&s), None], &mut [None, None]),
            Err(
                "Node with schema(::SequenceAt:11) has output size 2 not in range [min=1, max=1]."
                    .into()
            )
        );
    }

    #[test]
    fn an_untyped_output_takes_its_only_type_or_the_one_its_inputs_bound() {
        let length = lookup("", "SequenceLength", 11).unwrap();
        let mut outputs = [None];
        check_node(length, &[None], &mut outputs).unwrap();
        assert_eq!(outputs[0].as_ref().unwrap().to_string(), "int64[]");
        let relu = lookup("", "Relu", 14).unwrap();
        let f = tensor(DataType::Float);
        let mut outputs = [None];
        check_node(relu, &[Some(&f)], &mut outputs).unwrap();
        assert_eq!(outputs[0].as_ref().unwrap().to_string(), "float[]");
        // Nothing binds SequenceAt's output: it stays untyped.
        let at = lookup("", "SequenceAt", 11).unwrap();
        let mut outputs = [None];
        check_node(at, &[None, None], &mut outputs).unwrap();
        assert_eq!(outputs[0], None);
    }

    #[test]
    fn an_output_type_the_schema_does_not_allow_is_named() {
        let empty = lookup("", "SequenceEmpty", 11).unwrap();
        let mut outputs = [Some(seq(Some(tensor(DataType::Float8E4M3FN))))];
        assert_eq!(
            check_node(empty, &[], &mut outputs),
            Err("output has unsupported type seq(tensor(float8e4m3fn))".into())
        );
    }

    #[test]
    fn nested_types_are_written_as_schemas_write_them() {
        let s = seq(Some(tensor(DataType::Float)));
        assert_eq!(type_string(&s).unwrap(), "seq(tensor(float))");
        assert_eq!(
            type_from_string("seq(tensor(float))"),
            Some(seq(Some(TypeProto::tensor(DataType::Float, None))))
        );
        // What onnx cannot name, it refuses.
        assert_eq!(
            type_string(&seq(None)),
            Err("Unsupported type proto value case:0".into())
        );
        assert_eq!(
            type_string(&seq(Some(TypeProto::tensor(DataType::Undefined, None)))),
            Err("Invalid tensor data type 0.".into())
        );
    }
}
