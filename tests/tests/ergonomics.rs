//! The API as a small application uses it: find nodes by operator, read value types,
//! convert enum numbers, edit and replace weights, print types and shapes, declare
//! inputs with symbolic dimensions. Each test is written the way an app would write it,
//! so that friction shows up here first.
//!
//! `types_print_as_onnx_printer_prints_them` checks the `Display` text against the
//! official `onnx` package's printer (`onnx.printer.to_text`) on the same model.

use std::error::Error;
use std::ffi::OsStr;
use std::fs;
use std::sync::Arc;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ByteOwner, ErrorKind};
use onnx_light_tests::python::run_python;
use onnx_light_tests::scratch::Scratch;

type AppResult<T = ()> = Result<T, Box<dyn Error>>;

/// A small convolutional model: an input with a symbolic batch, two Conv nodes, a Relu,
/// their weights, and a map/sequence-typed output for the non-tensor accessors.
fn app_model() -> Model {
    let mut g = GraphProto::named("app");
    g.input.push(ValueInfoProto::tensor(
        "x",
        DataType::Float,
        [Dimension::from("batch"), 3.into(), 224.into(), 224.into()],
    ));
    g.input
        .push(ValueInfoProto::tensor("scale", DataType::Float, ["n"]));
    g.input.push(ValueInfoProto::scalar("flag", DataType::Bool));
    g.node
        .push(NodeProto::new("Conv", ["x", "w1"], ["h"]).with_name("conv1"));
    g.node.push(NodeProto::new("Relu", ["h"], ["r"]));
    g.node
        .push(NodeProto::new("Conv", ["r", "w2"], ["y"]).with_name("conv2"));
    let w1: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    g.initializer
        .push(TensorProto::from_slice("w1", [16, 256], &w1).unwrap());
    g.initializer
        .push(TensorProto::from_slice("w2", [4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap());
    g.initializer
        .push(TensorProto::from_slice_typed("b", [2], &[10i64, 20]).unwrap());
    g.output.push(ValueInfoProto {
        name: Some("scores".into()),
        r#type: Some(TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
                elem_type: Some(Box::new(TypeProto {
                    value: Some(TypeValue::MapType(Box::new(TypeProtoMap {
                        key_type_raw: Some(DataType::Int64.into()),
                        value_type: Some(Box::new(TypeProto::tensor(
                            DataType::Float,
                            Some(TensorShapeProto::default()),
                        ))),
                        ..TypeProtoMap::default()
                    }))),
                    ..TypeProto::default()
                })),
                ..TypeProtoSequence::default()
            }))),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    });
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn graph<'m, 'a>(m: &'m ModelProto<'a>) -> &'m GraphProto<'a> {
    m.graph.as_ref().expect("the model has a graph")
}

#[test]
fn nodes_are_found_by_comparing_string_fields_with_str() {
    let bytes = app_model().encode_to_vec().unwrap();
    let model = ModelProto::decode(&bytes).unwrap(); // strings borrow `bytes`
    let g = graph(&model);

    let convs: Vec<&str> = g
        .node
        .iter()
        .filter(|n| n.op_type() == "Conv")
        .map(|n| n.name())
        .collect();
    assert_eq!(convs, ["conv1", "conv2"]);

    // Repeated string fields compare with &str, str and String, both ways.
    let readers_of_x = g.node.iter().filter(|n| n.input.iter().any(|i| i == "x"));
    assert_eq!(readers_of_x.count(), 1);
    let wanted = String::from("w2");
    assert!(g
        .node
        .iter()
        .any(|n| n.input.contains(&wanted.as_str().into())));
    assert_eq!(g.node[2].input[1], wanted);
    assert_eq!(wanted, g.node[2].input[1]);
    assert!(*"r" == g.node[1].output[0]);

    // Presence-aware comparisons on the Option<Str> fields themselves.
    assert_eq!(g.node[0].name.as_deref(), Some("conv1"));
    assert_eq!(g.node[1].name.as_deref(), None);
    assert_eq!(g.node[1].name(), "");
    assert!(g.node[0].op_type == Some("Conv".into()));
}

#[test]
fn enum_typed_accessors_return_the_enum_and_keep_the_raw_number() {
    let model = app_model();
    let g = graph(&model);

    // ValueInfoProto -> TypeProto -> TypeProto.Tensor, all typed the same way.
    let x = &g.input[0];
    assert_eq!(x.elem_type(), Some(DataType::Float));
    let tensor_type = x.r#type.as_ref().unwrap().tensor_type().unwrap();
    assert_eq!(tensor_type.elem_type(), Some(DataType::Float));
    assert_eq!(tensor_type.elem_type_raw(), 1);
    assert_eq!(tensor_type.elem_type_raw, Some(1));

    // A TensorProto answers with the same name and the same type.
    let w1 = &g.initializer[0];
    assert_eq!(w1.elem_type(), Some(DataType::Float));
    assert_eq!(w1.elem_type_raw(), w1.data_type());

    // Map keys and sequence/optional payload kinds.
    let Some(TypeValue::SequenceType(seq)) = &g.output[0].r#type.as_ref().unwrap().value else {
        panic!("scores is a sequence");
    };
    let Some(TypeValue::MapType(map)) = &seq.elem_type.as_ref().unwrap().value else {
        panic!("of maps");
    };
    assert_eq!(map.key_type(), Some(DataType::Int64));
    assert_eq!(map.key_type_raw(), 7);
    let seq_value = SequenceProto {
        elem_type_raw: Some(SequenceDataType::Map.into()),
        ..SequenceProto::default()
    };
    assert_eq!(seq_value.elem_type(), Some(SequenceDataType::Map));
    let opt = OptionalProto {
        elem_type_raw: Some(42),
        ..OptionalProto::default()
    };
    assert_eq!(opt.elem_type(), None); // unknown to this schema: the number is kept
    assert_eq!(opt.elem_type_raw(), 42);
}

/// An app converting numbers with `?`, no trait import needed.
fn describe(data_type: i32) -> AppResult<String> {
    let dt = DataType::try_from(data_type)?;
    Ok(format!("{dt} ({} bits)", dt.bit_width().unwrap_or(0)))
}

#[test]
fn enum_numbers_convert_with_try_from() {
    assert_eq!(describe(1).unwrap(), "float (32 bits)");
    assert_eq!(describe(16).unwrap(), "bfloat16 (16 bits)");
    let err = describe(1000).unwrap_err();
    assert_eq!(
        err.to_string(),
        "1000 is not a value of onnx.TensorProto.DataType"
    );
    let unknown = err.downcast_ref::<UnknownEnumValue>().unwrap();
    assert_eq!(unknown.value, 1000);
    assert_eq!(AttributeType::try_from(7), Ok(AttributeType::Ints));
    assert_eq!(i32::from(DataLocation::External), 1);
}

#[test]
fn weights_are_edited_in_place_and_the_source_buffer_never_changes() {
    let bytes = app_model().encode_to_vec().unwrap();
    let original = bytes.clone();

    // Borrowed payloads: the edit copies, the input stays as it was.
    let mut model = io::load_from_slice(&bytes, &ParseOptions::default()).unwrap();
    let g = model.graph.as_mut().unwrap();
    for t in &mut g.initializer {
        if t.elem_type() == Some(DataType::Float) {
            for v in t.values_mut::<f32>().unwrap() {
                *v *= 2.0;
            }
        }
    }
    let edited = model.encode_to_vec().unwrap();
    assert_eq!(bytes, original);

    // Shared payloads (slices of a reference-counted owner): copied, owner untouched.
    let owner: ByteOwner = Arc::new(original.clone());
    let mut shared = io::load_from_owner(owner.clone(), &ParseOptions::default()).unwrap();
    let w1 = &mut shared.graph.as_mut().unwrap().initializer[0];
    assert!(w1.raw_data.as_ref().unwrap().is_shared());
    w1.values_mut::<f32>().unwrap()[1] = -1.0;
    assert!(w1.raw_data.as_ref().unwrap().is_owned());
    assert_eq!(owner.bytes(), original.as_slice());

    // Reading the edited model back gives the doubled values.
    let reread = Model::decode_owned(&edited).unwrap();
    let g = graph(&reread);
    assert_eq!(
        &g.initializer[0].values::<f32>().unwrap()[..3],
        &[0.0, 2.0, 4.0]
    );
    assert_eq!(
        &*g.initializer[1].values::<f32>().unwrap(),
        &[2.0, 4.0, 6.0, 8.0]
    );

    // A typed field holding the element type itself is edited where it is.
    let mut model = app_model();
    let b = &mut model.graph.as_mut().unwrap().initializer[2];
    b.values_mut::<i64>().unwrap()[0] += 1;
    assert_eq!(b.int64_data, [11, 20]);
}

#[test]
fn weights_are_replaced_with_set_values() {
    let mut model = app_model();
    let g = model.graph.as_mut().unwrap();
    let w2 = g.initializer.iter_mut().find(|t| t.name() == "w2").unwrap();
    w2.set_values([0.5f32; 4]).unwrap();
    assert_eq!(&*w2.values::<f32>().unwrap(), &[0.5; 4]);
    w2.set_values_with_dims([2, 3], vec![1.0f32; 6]).unwrap();
    assert_eq!(w2.dims, [2, 3]);

    // The typed field is cleared: the new values are the only payload.
    let b = &mut g.initializer[2];
    b.set_values(&[1i64, 2][..]).unwrap();
    assert!(b.int64_data.is_empty() && b.raw_data.is_some());

    // Wrong element type, wrong count: typed errors naming the tensor, nothing changed.
    let before = b.clone();
    let e = b.set_values([1.0f32, 2.0]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::ElementTypeMismatch { .. }));
    assert_eq!(e.tensor(), Some("b"));
    let e = b.set_values([1i64, 2, 3]).unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::TensorDataMismatch {
            expected: 2,
            actual: 3,
            ..
        }
    ));
    assert_eq!(*b, before);
}

#[test]
fn types_and_shapes_print_in_onnx_notation() {
    let model = app_model();
    let g = graph(&model);
    let signature: Vec<String> = g
        .input
        .iter()
        .chain(&g.output)
        .map(|v| format!("{}: {}", v.name(), v.r#type.as_ref().unwrap()))
        .collect();
    assert_eq!(
        signature,
        [
            "x: float[batch,3,224,224]",
            "scale: float[n]",
            "flag: bool",
            "scores: seq(map(int64, float))",
        ]
    );
    assert_eq!(g.input[0].shape().unwrap().to_string(), "[batch,3,224,224]");
    assert_eq!(g.input[0].shape().unwrap().rank(), 4);
    assert_eq!(format!("{:<8}|", DataType::Float16), "float16 |");
}

#[test]
fn inputs_take_fixed_symbolic_and_unknown_dims() {
    let dims: Vec<i64> = vec![1, 3];
    let fixed = ValueInfoProto::tensor("a", DataType::Int64, &dims); // &Vec<i64>
    let slice = ValueInfoProto::tensor("b", DataType::Int64, dims.as_slice()); // &[i64]
    let literal = ValueInfoProto::tensor("c", DataType::Int64, [1, 3]);
    assert_eq!(fixed.r#type, slice.r#type);
    assert_eq!(fixed.r#type, literal.r#type);

    let names = ValueInfoProto::tensor("d", DataType::Float, ["batch", "seq"]);
    let mixed = ValueInfoProto::tensor(
        "e",
        DataType::Float,
        [Dimension::param("batch"), Dimension::unknown(), 768.into()],
    );
    let from_helper_style = ValueInfoProto::tensor("f", DataType::Float, [None, Some(3)]);
    assert_eq!(names.shape().unwrap().to_string(), "[batch,seq]");
    assert_eq!(mixed.shape().unwrap().to_string(), "[batch,?,768]");
    assert_eq!(
        from_helper_style.shape().unwrap().dim_values(),
        [None, Some(3)]
    );
}

#[test]
fn types_print_as_onnx_printer_prints_them() {
    let model = app_model();
    let dir = Scratch::new("ergonomics-printer");
    let path = dir.path("app.onnx");
    fs::write(&path, model.encode_to_vec().unwrap()).unwrap();
    let script = dir.path("print_types.py");
    fs::write(
        &script,
        "import sys, onnx\n\
         from onnx import printer\n\
         g = onnx.load(sys.argv[1]).graph\n\
         for v in list(g.input) + list(g.output):\n\
         \x20   text = printer.to_text(onnx.helper.make_graph([], 'g', [v], []))\n\
         \x20   print(text[text.index('(') + 1:text.rindex(' ' + v.name)])\n",
    )
    .unwrap();
    let out = run_python(&script, &[OsStr::new(&path)]);
    let printed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let g = graph(&model);
    let ours: Vec<String> = g
        .input
        .iter()
        .chain(&g.output)
        .map(|v| v.r#type.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(ours, printed);
}

#[test]
fn a_fallible_walk_stops_at_the_first_error_and_returns_it() {
    let m = app_model();
    // Find the first tensor with more than 100 elements, the way a validator would.
    let mut visited = Vec::new();
    let found = m.try_visit_tensors(|_, t| {
        visited.push(t.name().to_string());
        if t.dims.iter().product::<i64>() > 100 {
            return Err(format!("{} is too large", t.name()));
        }
        Ok(())
    });
    assert_eq!(found, Err("w1 is too large".to_string()));
    assert_eq!(visited, ["w1"], "the walk went on after the error");

    // Without an error every tensor is visited, in the order of `visit_tensors`.
    let mut all = Vec::new();
    m.visit_tensors(|_, t| all.push(t.name().to_string()));
    let mut again = Vec::new();
    let ok: Result<(), ()> = m.try_visit_tensors(|_, t| {
        again.push(t.name().to_string());
        Ok(())
    });
    assert_eq!(ok, Ok(()));
    assert_eq!(again, all);
    assert_eq!(all, ["w1", "w2", "b"]);

    // The mutable walk: mark every tensor it passes and stop at `w2`; nothing after the
    // refusal is touched.
    let mut m = app_model();
    let refused = m.try_visit_tensors_mut(|_, t| {
        if t.elem_type() == Some(DataType::Float) && t.name() == "w2" {
            return Err(t.name().to_string());
        }
        t.doc_string = Some("seen".into());
        Ok(())
    });
    assert_eq!(refused, Err("w2".to_string()));
    let docs: Vec<_> = graph(&m)
        .initializer
        .iter()
        .map(|t| t.doc_string().to_string())
        .collect();
    assert_eq!(docs, ["seen", "", ""]);
}
