//! The checker and its operator schemas, against the official `onnx` package:
//!
//! * `schema_file_is_what_onnx_generates`: `schema/gen_operators.py`, run with the test
//!   venv's `onnx`, writes exactly the committed `operators.pb`.
//! * `broken_models_get_onnx_checkers_verdict`: a valid model broken in many ways (and
//!   several valid variants), each written to its own directory; every file gets the
//!   same verdict (accept or reject) from `onnx_light::checker` as from
//!   `onnx.checker.check_model(path)`.
//! * The corpus pass is in `onnx_corpus.rs` (it shares that file's corpus fetch).

use std::fs;
use std::path::{Path, PathBuf};

use onnx_light::checker::{self, schema};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light_tests::checker_oracle::{onnx_verdicts, our_verdict};
use onnx_light_tests::python::{run_python, workspace_root};

fn scratch(name: &str) -> PathBuf {
    let dir = workspace_root()
        .join("target")
        .join("checker-tests")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn schema_file_is_what_onnx_generates() {
    let dir = scratch("schema");
    let fresh = dir.join("operators.pb");
    run_python(
        &workspace_root().join("schema").join("gen_operators.py"),
        &[fresh.as_os_str()],
    );
    let committed_path = workspace_root().join("onnx-light/src/checker/operators.pb");
    let committed = fs::read(&committed_path).expect("read the committed schemas");
    let generated = fs::read(&fresh).expect("read the generated schemas");
    assert!(
        committed == generated,
        "{} differs from what the installed onnx generates ({} vs {} bytes): run \
         `python schema/gen_operators.py onnx-light/src/checker/operators.pb` with the test venv",
        committed_path.display(),
        committed.len(),
        generated.len()
    );
}

#[test]
fn schemas_decode_and_resolve_by_opset() {
    let all = schema::all();
    assert!(all.schema.len() > 600, "{} schemas", all.schema.len());
    assert!(all.ir_version >= 10);
    // Conv: versions 1, 11, 22.
    assert_eq!(schema::lookup("", "Conv", 10).unwrap().since_version, 1);
    assert_eq!(schema::lookup("", "Conv", 11).unwrap().since_version, 11);
    assert_eq!(
        schema::lookup("ai.onnx", "Conv", 21).unwrap().since_version,
        11
    );
    assert!(schema::lookup_exact_domain("ai.onnx", "Conv", 21).is_none());
    assert!(schema::lookup("", "NoSuchOp", 21).is_none());
    let conv = schema::lookup("", "Conv", 22).unwrap();
    let ks = conv.attribute("kernel_shape").unwrap();
    assert_eq!(ks.attribute_type(), Some(AttributeType::Ints));
    assert!(!ks.required);
    assert_eq!(
        conv.attribute("auto_pad")
            .unwrap()
            .default_value
            .as_ref()
            .unwrap()
            .s
            .as_deref(),
        Some(&b"NOTSET"[..])
    );
    assert!(schema::lookup("ai.onnx.ml", "TreeEnsembleClassifier", 3).is_some());
    let bn = schema::lookup("", "BatchNormalization", 9).unwrap();
    assert!(bn.output_count_allowed(1) && bn.output_count_allowed(5));
    assert!(!bn.output_count_allowed(3));
    // Function bodies are kept.
    let ln = schema::lookup("", "Softsign", 22).unwrap();
    assert!(ln
        .functions
        .iter()
        .any(|f| f.function.as_ref().is_some_and(|f| !f.node.is_empty())));
}

// ---------------------------------------------------------------------------------------
// Models.

fn f32_raw(name: &str, dims: &[i64], n: usize) -> TensorProto<'static> {
    TensorProto::from_raw(
        name.to_string(),
        DataType::Float,
        dims.to_vec(),
        vec![0u8; 4 * n],
    )
}

/// x[1,4] + w[4] -> a; Relu(a) -> y.
fn base() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 4]));
    g.initializer.push(f32_raw("w", &[4], 4));
    g.node
        .push(NodeProto::new("Add", ["x", "w"], ["a"]).with_name("add"));
    g.node
        .push(NodeProto::new("Relu", ["a"], ["y"]).with_name("relu"));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 17)])
}

fn graph(m: &mut Model) -> &mut Graph {
    m.graph.as_mut().unwrap()
}

fn with(f: impl FnOnce(&mut Model)) -> Model {
    let mut m = base();
    f(&mut m);
    m
}

fn with_initializer(t: TensorProto<'static>) -> Model {
    with(|m| graph(m).initializer.push(t))
}

/// The base model with one more graph input, named `name`, of the type `value`.
fn with_input_type(name: &str, value: TypeValue<'static>) -> Model {
    with(|m| {
        graph(m).input.push(ValueInfoProto {
            name: Some(name.to_string().into()),
            r#type: Some(TypeProto {
                value: Some(value),
                ..TypeProto::default()
            }),
            ..ValueInfoProto::default()
        })
    })
}

fn i64_tensor(name: &str, dims: &[i64], values: &[i64]) -> TensorProto<'static> {
    TensorProto {
        name: Some(name.to_string().into()),
        data_type: Some(DataType::Int64.to_i32()),
        dims: dims.to_vec(),
        int64_data: values.to_vec(),
        ..TensorProto::default()
    }
}

fn sparse(
    dims: &[i64],
    indices_dims: &[i64],
    indices: &[i64],
    nnz: i64,
) -> SparseTensorProto<'static> {
    SparseTensorProto {
        values: Some(f32_raw("sp", &[nnz], nnz as usize)),
        indices: Some(i64_tensor("sp_idx", indices_dims, indices)),
        dims: dims.to_vec(),
        ..SparseTensorProto::default()
    }
}

/// `[n, 1, 1, ..., 1]`: 300 dims, `n` elements.
fn high_rank(n: i64) -> Vec<i64> {
    let mut dims = vec![1; 300];
    dims[0] = n;
    dims
}

fn with_sparse(s: SparseTensorProto<'static>) -> Model {
    with(|m| graph(m).sparse_initializer.push(s))
}

fn external(location: Option<&str>) -> TensorProto<'static> {
    let mut t = TensorProto {
        name: Some("w".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![4],
        data_location: Some(DataLocation::External.into()),
        ..TensorProto::default()
    };
    if let Some(l) = location {
        t.external_data
            .push(StringStringEntryProto::new("location", l.to_string()));
    }
    t.external_data
        .push(StringStringEntryProto::new("offset", "0"));
    t.external_data
        .push(StringStringEntryProto::new("length", "16"));
    t
}

fn with_external(location: Option<&str>) -> Model {
    with(|m| graph(m).initializer[0] = external(location))
}

/// `If(cond)` whose branches compute `t_out`/`e_out` from `inner_input` and declare
/// that value, or `output` when given, as their output.
fn with_if(inner_input: &str, branch_name: &str, output: Option<&str>) -> Model {
    with(|m| {
        let g = graph(m);
        g.initializer.push(TensorProto {
            name: Some("cond".into()),
            data_type: Some(DataType::Bool.to_i32()),
            int32_data: vec![1],
            ..TensorProto::default()
        });
        let branch = |out: &str| {
            let mut b = GraphProto::named(branch_name.to_string());
            b.node.push(NodeProto::new(
                "Relu",
                [inner_input.to_string()],
                [out.to_string()],
            ));
            b.output.push(ValueInfoProto::tensor(
                output.unwrap_or(out).to_string(),
                DataType::Float,
                [1, 4],
            ));
            b
        };
        g.node.push(
            NodeProto::new("If", ["cond"], ["z"])
                .with_name("if")
                .with_attribute(AttributeProto::graph("then_branch", branch("t_out")))
                .with_attribute(AttributeProto::graph("else_branch", branch("e_out"))),
        );
    })
}

fn local_function(
    name: &str,
    body_op: &str,
    body_domain: &str,
    opsets: Vec<OperatorSetIdProto<'static>>,
) -> FunctionProto<'static> {
    FunctionProto {
        name: Some(name.to_string().into()),
        domain: Some("local".into()),
        input: vec!["i".into()],
        output: vec!["o".into()],
        node: vec![NodeProto {
            domain: Some(body_domain.to_string().into()),
            ..NodeProto::new(body_op.to_string(), ["i"], ["o"])
        }],
        opset_import: opsets,
        ..FunctionProto::default()
    }
}

fn with_function(f: FunctionProto<'static>) -> Model {
    with(|m| {
        m.opset_import.push(OperatorSetIdProto::new("local", 1));
        let g = graph(m);
        g.node[1] = NodeProto {
            domain: Some("local".into()),
            ..NodeProto::new(f.name().to_string(), ["a"], ["y"]).with_name("call")
        };
        m.functions.push(f);
    })
}

/// Node 1 as an operator of a custom domain with 40 attributes `a0` .. `a39`, then
/// `extra`.
fn with_many_attributes(extra: &[&str]) -> Model {
    with(|m| {
        m.opset_import
            .push(OperatorSetIdProto::new("com.example", 1));
        let node = &mut graph(m).node[1];
        node.op_type = Some("Frobnicate".into());
        node.domain = Some("com.example".into());
        let names = (0..40).map(|i| format!("a{i}"));
        for name in names.chain(extra.iter().map(|s| s.to_string())) {
            node.attribute.push(AttributeProto::int(name, 1));
        }
    })
}

enum Case {
    Model(Box<Model>),
    Bytes(Vec<u8>),
}

/// Prepares a case's directory (external data files).
type Setup = Option<fn(&Path)>;

fn cases() -> Vec<(&'static str, Case, Setup)> {
    use Case::Bytes;
    let attr_two_values = {
        let mut a = AttributeProto::int("axis", 1);
        a.f = Some(1.0);
        a
    };
    let untyped = AttributeProto {
        r#type: None,
        ..AttributeProto::int("axis", 1)
    };
    #[allow(non_snake_case)]
    let Model = |m: onnx_light::onnx::Model| Case::Model(Box::new(m));
    let mut cases: Vec<(&'static str, Case, Setup)> = vec![
        ("valid", Model(base()), None),
        ("zero_bytes", Bytes(Vec::new()), None),
        (
            "only_ir_version",
            Model(ModelProto {
                ir_version: Some(8),
                ..ModelProto::default()
            }),
            None,
        ),
        (
            "ir_version_missing",
            Model(with(|m| m.ir_version = None)),
            None,
        ),
        (
            "ir_version_too_new",
            Model(with(|m| m.ir_version = Some(99))),
            None,
        ),
        (
            "ir_version_2_with_opsets",
            Model(with(|m| m.ir_version = Some(2))),
            None,
        ),
        (
            "ir_version_2_without_opsets",
            Model(with(|m| {
                m.ir_version = Some(2);
                m.opset_import.clear();
            })),
            None,
        ),
        (
            "no_opset_import",
            Model(with(|m| m.opset_import.clear())),
            None,
        ),
        (
            "duplicate_opset_domain",
            Model(with(|m| {
                m.opset_import.push(OperatorSetIdProto::new("", 13))
            })),
            None,
        ),
        (
            "opset_only_ai_onnx",
            Model(with(|m| {
                m.opset_import = vec![OperatorSetIdProto::new("ai.onnx", 17)]
            })),
            None,
        ),
        (
            "node_domain_ai_onnx",
            Model(with(|m| graph(m).node[1].domain = Some("ai.onnx".into()))),
            None,
        ),
        (
            "opset_version_over_int32",
            Model(with(|m| m.opset_import[0].version = Some(1 << 40))),
            None,
        ),
        (
            "metadata_duplicate_keys",
            Model(with(|m| {
                m.metadata_props.push(StringStringEntryProto::new("k", "1"));
                m.metadata_props.push(StringStringEntryProto::new("k", "2"));
            })),
            None,
        ),
        ("no_graph", Model(with(|m| m.graph = None)), None),
        (
            "graph_name_empty",
            Model(with(|m| graph(m).name = None)),
            None,
        ),
        (
            "unsorted_nodes",
            Model(with(|m| graph(m).node.swap(0, 1))),
            None,
        ),
        (
            "undefined_input",
            Model(with(|m| graph(m).node[1].input[0] = "nope".into())),
            None,
        ),
        (
            "two_nodes_one_output",
            Model(with(|m| {
                graph(m).node.push(NodeProto::new("Relu", ["x"], ["a"]))
            })),
            None,
        ),
        (
            "node_output_is_graph_input",
            Model(with(|m| graph(m).node[1].output[0] = "x".into())),
            None,
        ),
        (
            "graph_output_not_produced",
            Model(with(|m| graph(m).output[0].name = Some("q".into()))),
            None,
        ),
        (
            "graph_output_is_input",
            Model(with(|m| {
                graph(m)
                    .output
                    .push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]))
            })),
            None,
        ),
        (
            "duplicate_graph_input",
            Model(with(|m| {
                graph(m)
                    .input
                    .push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]))
            })),
            None,
        ),
        (
            "input_without_type",
            Model(with(|m| graph(m).input[0].r#type = None)),
            None,
        ),
        (
            "input_without_shape",
            Model(with(|m| {
                if let Some(TypeValue::TensorType(t)) =
                    &mut graph(m).input[0].r#type.as_mut().unwrap().value
                {
                    t.shape = None;
                }
            })),
            None,
        ),
        (
            "input_without_elem_type",
            Model(with(|m| {
                if let Some(TypeValue::TensorType(t)) =
                    &mut graph(m).input[0].r#type.as_mut().unwrap().value
                {
                    t.elem_type_raw = None;
                }
            })),
            None,
        ),
        (
            "input_type_without_value",
            Model(with(|m| {
                graph(m).input[0].r#type = Some(TypeProto::default())
            })),
            None,
        ),
        (
            "input_name_empty",
            Model(with(|m| {
                graph(m)
                    .input
                    .push(ValueInfoProto::tensor("", DataType::Float, [1]))
            })),
            None,
        ),
        (
            "unknown_op",
            Model(with(|m| {
                graph(m).node[1].op_type = Some("Frobnicate".into())
            })),
            None,
        ),
        (
            "unknown_op_custom_domain",
            Model(with(|m| {
                m.opset_import
                    .push(OperatorSetIdProto::new("com.example", 1));
                graph(m).node[1].op_type = Some("Frobnicate".into());
                graph(m).node[1].domain = Some("com.example".into());
            })),
            None,
        ),
        (
            "custom_domain_not_imported",
            Model(with(|m| {
                graph(m).node[1].op_type = Some("Frobnicate".into());
                graph(m).node[1].domain = Some("com.example".into());
            })),
            None,
        ),
        (
            "unknown_op_ml_domain",
            Model(with(|m| {
                m.opset_import
                    .push(OperatorSetIdProto::new("ai.onnx.ml", 3));
                graph(m).node[1].domain = Some("ai.onnx.ml".into());
            })),
            None,
        ),
        (
            "unknown_op_preview_training",
            Model(with(|m| {
                m.opset_import
                    .push(OperatorSetIdProto::new("ai.onnx.preview.training", 1));
                graph(m).node[1].op_type = Some("Frobnicate".into());
                graph(m).node[1].domain = Some("ai.onnx.preview.training".into());
            })),
            None,
        ),
        (
            "op_not_yet_defined",
            Model(with(|m| m.opset_import[0].version = Some(5))),
            None,
        ),
        (
            "op_type_empty",
            Model(with(|m| graph(m).node[1].op_type = Some("".into()))),
            None,
        ),
        (
            "deprecated_op",
            Model(with(|m| {
                m.opset_import[0].version = Some(10);
                graph(m).node[1] = NodeProto::new("Upsample", ["a", "w"], ["y"]);
            })),
            None,
        ),
        (
            "experimental_op",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Scale", ["a"], ["y"])
            })),
            None,
        ),
        (
            "node_without_inputs_or_outputs",
            Model(with(|m| {
                graph(m).node.push(NodeProto::new(
                    "Relu",
                    Vec::<&str>::new(),
                    Vec::<&str>::new(),
                ))
            })),
            None,
        ),
        (
            "wrong_attribute_type",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Softmax", ["a"], ["y"])
                    .with_attribute(AttributeProto::float("axis", 1.0));
            })),
            None,
        ),
        (
            "right_attribute_type",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Softmax", ["a"], ["y"])
                    .with_attribute(AttributeProto::int("axis", 1));
            })),
            None,
        ),
        (
            "unknown_attribute",
            Model(with(|m| {
                graph(m).node[1]
                    .attribute
                    .push(AttributeProto::int("alpha", 1))
            })),
            None,
        ),
        (
            "internal_attribute",
            Model(with(|m| {
                graph(m).node[1]
                    .attribute
                    .push(AttributeProto::int("__internal", 1))
            })),
            None,
        ),
        (
            "duplicate_attribute",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Softmax", ["a"], ["y"])
                    .with_attribute(AttributeProto::int("axis", 1))
                    .with_attribute(AttributeProto::int("axis", 0));
            })),
            None,
        ),
        // Past a handful of attributes, repeated names are found with a set.
        (
            "many_attributes_distinct",
            Model(with_many_attributes(&[])),
            None,
        ),
        (
            "many_attributes_last_repeats_first",
            Model(with_many_attributes(&["a0"])),
            None,
        ),
        (
            "attribute_two_values",
            Model(with(|m| {
                graph(m).node[1] =
                    NodeProto::new("Softmax", ["a"], ["y"]).with_attribute(attr_two_values.clone());
            })),
            None,
        ),
        (
            "attribute_without_type",
            Model(with(|m| {
                graph(m).node[1] =
                    NodeProto::new("Softmax", ["a"], ["y"]).with_attribute(untyped.clone());
            })),
            None,
        ),
        (
            "attribute_name_empty",
            Model(with(|m| {
                graph(m).node[1].attribute.push(AttributeProto::int("", 1))
            })),
            None,
        ),
        (
            "missing_required_attribute",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Cast", ["a"], ["y"])
            })),
            None,
        ),
        (
            "required_attribute_present",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Cast", ["a"], ["y"])
                    .with_attribute(AttributeProto::int("to", 1));
            })),
            None,
        ),
        (
            "tensor_attribute_without_value",
            Model(with(|m| {
                let mut a = AttributeProto::tensor("value", f32_raw("c", &[1], 1));
                a.t = None;
                graph(m)
                    .node
                    .push(NodeProto::new("Constant", Vec::<&str>::new(), ["c"]).with_attribute(a));
            })),
            None,
        ),
        (
            "constant_node",
            Model(with(|m| {
                graph(m).node.push(
                    NodeProto::new("Constant", Vec::<&str>::new(), ["c"])
                        .with_attribute(AttributeProto::tensor("value", f32_raw("c", &[2], 2))),
                );
            })),
            None,
        ),
        (
            "constant_tensor_too_short",
            Model(with(|m| {
                graph(m).node.push(
                    NodeProto::new("Constant", Vec::<&str>::new(), ["c"])
                        .with_attribute(AttributeProto::tensor("value", f32_raw("c", &[3], 2))),
                );
            })),
            None,
        ),
        (
            "too_many_inputs",
            Model(with(|m| graph(m).node[1].input.push("x".into()))),
            None,
        ),
        (
            "too_few_inputs",
            Model(with(|m| {
                graph(m).node[0].input.pop().map(|_| ()).unwrap_or(())
            })),
            None,
        ),
        (
            "too_many_outputs",
            Model(with(|m| graph(m).node[1].output.push("y2".into()))),
            None,
        ),
        (
            "empty_required_input",
            Model(with(|m| graph(m).node[0].input[1] = "".into())),
            None,
        ),
        (
            "empty_optional_input",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Clip", ["a", "", "w"], ["y"]);
            })),
            None,
        ),
        (
            "variadic_inputs",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("Sum", ["a", "x", "w", "a"], ["y"])
            })),
            None,
        ),
        (
            "batchnorm_3_outputs_opset9",
            Model(with(|m| {
                m.opset_import[0].version = Some(9);
                let g = graph(m);
                for n in ["s", "b", "mean", "var"] {
                    g.initializer.push(f32_raw(n, &[4], 4));
                }
                g.node[1] = NodeProto::new(
                    "BatchNormalization",
                    ["a", "s", "b", "mean", "var"],
                    ["y", "o1", "o2"],
                );
            })),
            None,
        ),
        (
            "batchnorm_5_outputs_opset9",
            Model(with(|m| {
                m.opset_import[0].version = Some(9);
                let g = graph(m);
                for n in ["s", "b", "mean", "var"] {
                    g.initializer.push(f32_raw(n, &[4], 4));
                }
                g.node[1] = NodeProto::new(
                    "BatchNormalization",
                    ["a", "s", "b", "mean", "var"],
                    ["y", "o1", "o2", "o3", "o4"],
                );
            })),
            None,
        ),
        (
            "initializer_not_input_ir3",
            Model(with(|m| {
                m.ir_version = Some(3);
                m.opset_import[0].version = Some(7);
            })),
            None,
        ),
        (
            "initializer_is_input_ir3",
            Model(with(|m| {
                m.ir_version = Some(3);
                m.opset_import[0].version = Some(7);
                graph(m)
                    .input
                    .push(ValueInfoProto::tensor("w", DataType::Float, [4]));
            })),
            None,
        ),
        (
            "initializer_duplicate",
            Model(with_initializer(f32_raw("w", &[4], 4))),
            None,
        ),
        (
            "initializer_unnamed",
            Model(with_initializer(f32_raw("", &[4], 4))),
            None,
        ),
        (
            "initializer_shadows_input",
            Model(with_initializer(f32_raw("x", &[1, 4], 4))),
            None,
        ),
        (
            "tensor_raw_too_short",
            Model(with(|m| graph(m).initializer[0] = f32_raw("w", &[4], 3))),
            None,
        ),
        (
            "tensor_raw_too_long",
            Model(with(|m| graph(m).initializer[0] = f32_raw("w", &[4], 5))),
            None,
        ),
        (
            "tensor_no_data",
            Model(with(|m| graph(m).initializer[0].raw_data = None)),
            None,
        ),
        (
            "tensor_two_fields",
            Model(with(|m| graph(m).initializer[0].float_data = vec![1.0; 4])),
            None,
        ),
        (
            "tensor_float_data_short",
            Model(with(|m| {
                let t = &mut graph(m).initializer[0];
                t.raw_data = None;
                t.float_data = vec![1.0; 3];
            })),
            None,
        ),
        (
            "tensor_float_data",
            Model(with(|m| {
                let t = &mut graph(m).initializer[0];
                t.raw_data = None;
                t.float_data = vec![1.0; 4];
            })),
            None,
        ),
        (
            "tensor_wrong_typed_field",
            Model(with(|m| {
                let t = &mut graph(m).initializer[0];
                t.raw_data = None;
                t.int64_data = vec![1; 4];
            })),
            None,
        ),
        (
            "tensor_data_type_missing",
            Model(with(|m| graph(m).initializer[0].data_type = None)),
            None,
        ),
        (
            "tensor_data_type_undefined",
            Model(with(|m| graph(m).initializer[0].data_type = Some(0))),
            None,
        ),
        (
            "tensor_data_type_unknown_raw",
            Model(with(|m| graph(m).initializer[0].data_type = Some(99))),
            None,
        ),
        (
            "tensor_negative_dim",
            Model(with(|m| graph(m).initializer[0].dims = vec![-4])),
            None,
        ),
        (
            "tensor_zero_elements_with_data",
            Model(with(|m| graph(m).initializer[0].dims = vec![0])),
            None,
        ),
        (
            "tensor_string_in_raw",
            Model(with_initializer(TensorProto::from_raw(
                "s",
                DataType::String,
                [1],
                vec![1u8],
            ))),
            None,
        ),
        (
            "tensor_int4_int32_data",
            Model(with_initializer(TensorProto {
                name: Some("q".into()),
                data_type: Some(DataType::Int4.to_i32()),
                dims: vec![9],
                int32_data: vec![0, 0],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_int4_int32_data_short",
            Model(with_initializer(TensorProto {
                name: Some("q".into()),
                data_type: Some(DataType::Int4.to_i32()),
                dims: vec![17],
                int32_data: vec![0, 0],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_float6_raw_padding",
            Model(with_initializer(TensorProto::from_raw(
                "q",
                DataType::Float6E2M3,
                [1],
                vec![0xC0u8],
            ))),
            None,
        ),
        (
            "tensor_complex64_float_data_short",
            Model(with_initializer(TensorProto {
                name: Some("c".into()),
                data_type: Some(DataType::Complex64.to_i32()),
                dims: vec![2],
                float_data: vec![0.0; 3],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "sparse_valid_linear",
            Model(with_sparse(sparse(&[3, 4], &[2], &[1, 7], 2))),
            None,
        ),
        (
            "sparse_valid_coo",
            Model(with_sparse(sparse(&[3, 4], &[2, 2], &[0, 1, 1, 3], 2))),
            None,
        ),
        (
            "sparse_index_out_of_range",
            Model(with_sparse(sparse(&[3, 4], &[2], &[1, 12], 2))),
            None,
        ),
        (
            "sparse_index_negative",
            Model(with_sparse(sparse(&[3, 4], &[2], &[-1, 2], 2))),
            None,
        ),
        (
            "sparse_indices_unsorted",
            Model(with_sparse(sparse(&[3, 4], &[2], &[7, 1], 2))),
            None,
        ),
        (
            "sparse_indices_repeated",
            Model(with_sparse(sparse(&[3, 4], &[2], &[7, 7], 2))),
            None,
        ),
        // Linear indices into a dense shape of a high rank ([8, 1, 1, ..., 1]).
        (
            "sparse_high_rank_linear_indices",
            Model(with_sparse(sparse(&high_rank(8), &[3], &[0, 5, 7], 3))),
            None,
        ),
        (
            "sparse_high_rank_index_out_of_range",
            Model(with_sparse(sparse(&high_rank(8), &[3], &[0, 5, 8], 3))),
            None,
        ),
        (
            "sparse_coo_out_of_range",
            Model(with_sparse(sparse(&[3, 4], &[2, 2], &[0, 1, 1, 4], 2))),
            None,
        ),
        (
            "sparse_coo_unsorted",
            Model(with_sparse(sparse(&[3, 4], &[2, 2], &[1, 1, 0, 3], 2))),
            None,
        ),
        (
            "sparse_coo_wrong_width",
            Model(with_sparse(sparse(&[3, 4], &[2, 1], &[0, 1], 2))),
            None,
        ),
        (
            "sparse_index_count_mismatch",
            Model(with_sparse(sparse(&[3, 4], &[3], &[0, 1, 2], 2))),
            None,
        ),
        (
            "sparse_indices_rank_3",
            Model(with_sparse(sparse(&[3, 4], &[2, 1, 1], &[0, 1], 2))),
            None,
        ),
        (
            "sparse_indices_int32",
            Model(with_sparse({
                let mut s = sparse(&[3, 4], &[2], &[1, 7], 2);
                let idx = s.indices.as_mut().unwrap();
                idx.data_type = Some(DataType::Int32.to_i32());
                idx.int32_data = vec![1, 7];
                idx.int64_data.clear();
                s
            })),
            None,
        ),
        (
            "sparse_no_indices",
            Model(with_sparse({
                let mut s = sparse(&[3, 4], &[2], &[1, 7], 2);
                s.indices = None;
                s
            })),
            None,
        ),
        (
            "sparse_no_values",
            Model(with_sparse({
                let mut s = sparse(&[3, 4], &[2], &[1, 7], 2);
                s.values = None;
                s
            })),
            None,
        ),
        (
            "sparse_dims_empty",
            Model(with_sparse(sparse(&[], &[2], &[0, 0], 2))),
            None,
        ),
        (
            "sparse_dims_zero",
            Model(with_sparse(sparse(&[3, 0], &[2], &[1, 7], 2))),
            None,
        ),
        (
            "sparse_values_rank_2",
            Model(with_sparse({
                let mut s = sparse(&[3, 4], &[2], &[1, 7], 2);
                s.values = Some(f32_raw("sp", &[2, 1], 2));
                s
            })),
            None,
        ),
        (
            "sparse_name_clash",
            Model(with_sparse({
                let mut s = sparse(&[3, 4], &[2], &[1, 7], 2);
                s.values.as_mut().unwrap().name = Some("w".into());
                s
            })),
            None,
        ),
        (
            "sparse_indices_data_long",
            Model(with_sparse(sparse(&[3, 4], &[2], &[1, 7, 9], 2))),
            None,
        ),
        (
            "sparse_indices_data_short",
            Model(with_sparse(sparse(&[3, 4], &[2], &[1], 2))),
            None,
        ),
        (
            "subgraph_uses_outer_scope",
            Model(with_if("x", "branch", None)),
            None,
        ),
        (
            "subgraph_undefined_input",
            Model(with_if("nope", "branch", None)),
            None,
        ),
        (
            "subgraph_output_is_outer_value",
            Model(with_if("x", "branch", Some("x"))),
            None,
        ),
        ("subgraph_name_empty", Model(with_if("x", "", None)), None),
        (
            "outer_node_uses_subgraph_value",
            Model(with(|m| {
                *m = with_if("x", "branch", None);
                graph(m).node.push(NodeProto::new("Relu", ["t_out"], ["w"]));
            })),
            None,
        ),
        (
            "sibling_subgraph_uses_other_branch_value",
            Model(with(|m| {
                *m = with_if("x", "branch", None);
                let g = graph(m);
                let node = g.node.last_mut().expect("the If node");
                let else_branch = node.attribute[1].g.as_mut().expect("else_branch");
                else_branch.node[0].input[0] = "t_out".into();
            })),
            None,
        ),
        (
            "subgraph_redefines_outer_value",
            Model(with(|m| {
                let g = graph(m);
                g.initializer.push(TensorProto {
                    name: Some("cond".into()),
                    data_type: Some(DataType::Bool.to_i32()),
                    int32_data: vec![1],
                    ..TensorProto::default()
                });
                let mut b = GraphProto::named("b");
                b.node.push(NodeProto::new("Relu", ["x"], ["a"]));
                b.output
                    .push(ValueInfoProto::tensor("a", DataType::Float, [1, 4]));
                g.node.push(
                    NodeProto::new("If", ["cond"], ["z"])
                        .with_attribute(AttributeProto::graph("then_branch", b.clone()))
                        .with_attribute(AttributeProto::graph("else_branch", b)),
                );
            })),
            None,
        ),
        (
            "subgraph_bad_tensor",
            Model(with(|m| {
                let g = graph(m);
                g.initializer.push(TensorProto {
                    name: Some("cond".into()),
                    data_type: Some(DataType::Bool.to_i32()),
                    int32_data: vec![1],
                    ..TensorProto::default()
                });
                let mut b = GraphProto::named("b");
                b.initializer.push(f32_raw("bw", &[4], 2));
                b.node.push(NodeProto::new("Add", ["x", "bw"], ["bo"]));
                b.output
                    .push(ValueInfoProto::tensor("bo", DataType::Float, [1, 4]));
                g.node.push(
                    NodeProto::new("If", ["cond"], ["z"])
                        .with_attribute(AttributeProto::graph("then_branch", b.clone()))
                        .with_attribute(AttributeProto::graph("else_branch", b)),
                );
            })),
            None,
        ),
        (
            "external_valid",
            Model(with_external(Some("w.bin"))),
            Some(|d: &Path| fs::write(d.join("w.bin"), [0u8; 16]).unwrap()),
        ),
        (
            "external_dot_path",
            Model(with_external(Some("./sub/../w.bin"))),
            Some(|d: &Path| fs::write(d.join("w.bin"), [0u8; 16]).unwrap()),
        ),
        (
            "external_missing_file",
            Model(with_external(Some("w.bin"))),
            None,
        ),
        ("external_no_location", Model(with_external(None)), None),
        (
            "external_empty_location",
            Model(with_external(Some(""))),
            None,
        ),
        (
            "external_absolute",
            Model(with_external(Some("/etc/hostname"))),
            None,
        ),
        (
            "external_parent_dir",
            Model(with_external(Some("../w.bin"))),
            Some(|d: &Path| fs::write(d.parent().unwrap().join("w.bin"), [0u8; 16]).unwrap()),
        ),
        (
            "external_directory",
            Model(with_external(Some("sub"))),
            Some(|d: &Path| fs::create_dir_all(d.join("sub")).unwrap()),
        ),
        (
            "external_and_raw",
            Model(with(|m| {
                let mut t = external(Some("w.bin"));
                t.raw_data = Some(vec![0u8; 16].into());
                graph(m).initializer[0] = t;
            })),
            Some(|d: &Path| fs::write(d.join("w.bin"), [0u8; 16]).unwrap()),
        ),
        (
            "external_hard_link",
            Model(with_external(Some("w.bin"))),
            Some(|d: &Path| {
                fs::write(d.join("w.bin"), [0u8; 16]).unwrap();
                fs::hard_link(d.join("w.bin"), d.join("w2.bin")).unwrap();
            }),
        ),
        (
            "ir_version_negative",
            Model(with(|m| {
                m.ir_version = Some(-3);
                m.opset_import.clear();
            })),
            None,
        ),
        (
            "input_sequence_without_elem_type",
            Model(with_input_type(
                "seq",
                TypeValue::SequenceType(Box::default()),
            )),
            None,
        ),
        (
            "input_map_without_value_type",
            Model(with_input_type(
                "map",
                TypeValue::MapType(Box::new(TypeProtoMap {
                    key_type_raw: Some(7),
                    ..TypeProtoMap::default()
                })),
            )),
            None,
        ),
        (
            "input_opaque_without_name",
            Model(with_input_type(
                "op",
                TypeValue::OpaqueType(TypeProtoOpaque::default()),
            )),
            None,
        ),
        (
            "input_optional_with_elem_type",
            Model(with_input_type(
                "opt",
                TypeValue::OptionalType(Box::new(TypeProtoOptional {
                    elem_type: Some(Box::new(TypeProto::tensor(DataType::Float, None))),
                    ..TypeProtoOptional::default()
                })),
            )),
            None,
        ),
        (
            "value_info_without_type",
            Model(with(|m| {
                graph(m).value_info.push(ValueInfoProto {
                    name: Some("a".into()),
                    ..ValueInfoProto::default()
                })
            })),
            None,
        ),
        (
            "subgraph_input_without_type",
            Model(with(|m| {
                let g = graph(m);
                g.initializer.push(TensorProto {
                    name: Some("trip".into()),
                    data_type: Some(DataType::Int64.to_i32()),
                    int64_data: vec![1],
                    ..TensorProto::default()
                });
                let mut body = GraphProto::named("body");
                body.input.push(ValueInfoProto {
                    name: Some("iter".into()),
                    ..ValueInfoProto::default()
                });
                body.input.push(ValueInfoProto {
                    name: Some("cond_in".into()),
                    ..ValueInfoProto::default()
                });
                body.node
                    .push(NodeProto::new("Identity", ["cond_in"], ["cond_out"]));
                body.output.push(ValueInfoProto {
                    name: Some("cond_out".into()),
                    ..ValueInfoProto::default()
                });
                g.node.push(
                    NodeProto::new("Loop", ["trip", "", "x"], ["lx"])
                        .with_attribute(AttributeProto::graph("body", body)),
                );
            })),
            None,
        ),
        (
            "subgraph_attribute_ref_with_value",
            Model(with(|m| {
                let g = graph(m);
                g.initializer.push(TensorProto {
                    name: Some("cond".into()),
                    data_type: Some(DataType::Bool.to_i32()),
                    int32_data: vec![1],
                    ..TensorProto::default()
                });
                let mut b = GraphProto::named("b");
                let mut a = AttributeProto::int("axis", 1);
                a.ref_attr_name = Some("outer".into());
                b.node
                    .push(NodeProto::new("Softmax", ["x"], ["bo"]).with_attribute(a));
                b.output
                    .push(ValueInfoProto::tensor("bo", DataType::Float, [1, 4]));
                g.node.push(
                    NodeProto::new("If", ["cond"], ["z"])
                        .with_attribute(AttributeProto::graph("then_branch", b.clone()))
                        .with_attribute(AttributeProto::graph("else_branch", b)),
                );
            })),
            None,
        ),
        (
            "sparse_constant_bad_indices",
            Model(with(|m| {
                let mut a = AttributeProto {
                    name: Some("sparse_value".into()),
                    r#type: Some(AttributeType::SparseTensor.into()),
                    ..AttributeProto::default()
                };
                a.sparse_tensor = Some(Box::new(sparse(&[3, 4], &[2], &[7, 1], 2)));
                graph(m)
                    .node
                    .push(NodeProto::new("Constant", Vec::<&str>::new(), ["c"]).with_attribute(a));
            })),
            None,
        ),
        (
            "sparse_constant_valid",
            Model(with(|m| {
                let mut a = AttributeProto {
                    name: Some("sparse_value".into()),
                    r#type: Some(AttributeType::SparseTensor.into()),
                    ..AttributeProto::default()
                };
                a.sparse_tensor = Some(Box::new(sparse(&[3, 4], &[2], &[1, 7], 2)));
                graph(m)
                    .node
                    .push(NodeProto::new("Constant", Vec::<&str>::new(), ["c"]).with_attribute(a));
            })),
            None,
        ),
        (
            "tensor_uint4_raw_short",
            Model(with_initializer(TensorProto::from_raw(
                "q",
                DataType::Uint4,
                [5],
                vec![0u8; 2],
            ))),
            None,
        ),
        (
            "tensor_uint4_raw_exact",
            Model(with_initializer(TensorProto::from_raw(
                "q",
                DataType::Uint4,
                [5],
                vec![0u8; 3],
            ))),
            None,
        ),
        (
            "tensor_float16_int32_data_short",
            Model(with_initializer(TensorProto {
                name: Some("h".into()),
                data_type: Some(DataType::Float16.to_i32()),
                dims: vec![3],
                int32_data: vec![0, 0],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_uint32_in_uint64_data",
            Model(with_initializer(TensorProto {
                name: Some("u".into()),
                data_type: Some(DataType::Uint32.to_i32()),
                dims: vec![2],
                uint64_data: vec![1, 2],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_uint32_in_int32_data",
            Model(with_initializer(TensorProto {
                name: Some("u".into()),
                data_type: Some(DataType::Uint32.to_i32()),
                dims: vec![2],
                int32_data: vec![1, 2],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_string_data_short",
            Model(with_initializer(TensorProto {
                name: Some("s".into()),
                data_type: Some(DataType::String.to_i32()),
                dims: vec![2],
                string_data: vec![b"a".to_vec().into()],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_complex128_double_data",
            Model(with_initializer(TensorProto {
                name: Some("c".into()),
                data_type: Some(DataType::Complex128.to_i32()),
                dims: vec![2],
                double_data: vec![0.0; 4],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_unknown_type_typed_field",
            Model(with_initializer(TensorProto {
                name: Some("z".into()),
                data_type: Some(99),
                dims: vec![1],
                float_data: vec![0.0],
                ..TensorProto::default()
            })),
            None,
        ),
        (
            "tensor_dims_overflow",
            Model(with(|m| {
                graph(m)
                    .initializer
                    .push(f32_raw("big", &[1 << 40, 1 << 40], 1))
            })),
            None,
        ),
        (
            "experimental_op_unknown_attribute",
            Model(with(|m| {
                graph(m).node[1] = NodeProto::new("ImageScaler", ["a"], ["y"])
                    .with_attribute(AttributeProto::int("whatever", 1));
            })),
            None,
        ),
        (
            "functions_ignored_before_ir8",
            Model(with(|m| {
                m.ir_version = Some(7);
                m.opset_import[0].version = Some(13);
                m.functions.push(FunctionProto {
                    name: Some("".into()),
                    ..FunctionProto::default()
                });
            })),
            None,
        ),
        (
            "function_duplicate_attribute",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.attribute = vec!["a".into(), "a".into()];
                f
            })),
            None,
        ),
        (
            "function_duplicate_input",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.input.push("i".into());
                f
            })),
            None,
        ),
        (
            "function_body_ssa",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.node.push(NodeProto::new("Relu", ["i"], ["o"]));
                f
            })),
            None,
        ),
        (
            "function_uses_outer_value",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.node[0].input[0] = "x".into();
                f
            })),
            None,
        ),
        (
            "external_symlink",
            Model(with_external(Some("w.bin"))),
            Some(|d: &Path| {
                fs::write(d.join("real.bin"), [0u8; 16]).unwrap();
                std::os::unix::fs::symlink("real.bin", d.join("w.bin")).unwrap();
            }),
        ),
        (
            "external_in_subdirectory",
            Model(with_external(Some("sub/w.bin"))),
            Some(|d: &Path| {
                fs::create_dir_all(d.join("sub")).unwrap();
                fs::write(d.join("sub/w.bin"), [0u8; 16]).unwrap();
            }),
        ),
        (
            "external_dotdot_in_name",
            Model(with_external(Some("w..bin"))),
            Some(|d: &Path| fs::write(d.join("w..bin"), [0u8; 16]).unwrap()),
        ),
        (
            "function_valid",
            Model(with_function(local_function(
                "f",
                "Relu",
                "",
                vec![OperatorSetIdProto::new("", 17)],
            ))),
            None,
        ),
        (
            "function_no_domain",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.domain = None;
                f
            })),
            None,
        ),
        (
            "function_body_opset_missing",
            Model(with_function(local_function("f", "Relu", "", vec![]))),
            None,
        ),
        (
            "function_opset_incompatible",
            Model(with_function(local_function(
                "f",
                "Relu",
                "",
                vec![OperatorSetIdProto::new("", 6)],
            ))),
            None,
        ),
        (
            "function_opset_compatible",
            Model(with_function(local_function(
                "f",
                "Relu",
                "",
                vec![OperatorSetIdProto::new("", 15)],
            ))),
            None,
        ),
        (
            "function_unsorted_body",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.node[0].input[0] = "nope".into();
                f
            })),
            None,
        ),
        (
            "function_duplicate_output",
            Model(with_function({
                let mut f = local_function("f", "Relu", "", vec![OperatorSetIdProto::new("", 17)]);
                f.output.push("o".into());
                f
            })),
            None,
        ),
        (
            "function_recursive",
            Model(with_function(local_function(
                "f",
                "f",
                "local",
                vec![
                    OperatorSetIdProto::new("", 17),
                    OperatorSetIdProto::new("local", 1),
                ],
            ))),
            None,
        ),
        (
            "function_twice",
            Model(with(|m| {
                m.functions.push(local_function(
                    "f",
                    "Relu",
                    "",
                    vec![OperatorSetIdProto::new("", 17)],
                ));
                m.functions.push(local_function(
                    "f",
                    "Relu",
                    "",
                    vec![OperatorSetIdProto::new("", 17)],
                ));
            })),
            None,
        ),
    ];
    // Nested Ifs, each then-branch holding the next: deep but within bounds.
    let mut deep = base();
    let leaf = |n: usize| {
        let mut g = GraphProto::named("leaf");
        g.node
            .push(NodeProto::new("Relu", ["x"], [format!("leaf_out{n}")]));
        g.output.push(ValueInfoProto::tensor(
            format!("leaf_out{n}"),
            DataType::Float,
            [1, 4],
        ));
        g
    };
    let mut inner = leaf(100);
    for level in 0..20 {
        let mut g = GraphProto::named(format!("level{level}"));
        let out = format!("out{level}");
        g.node.push(
            NodeProto::new("If", ["cond"], [out.clone()])
                .with_attribute(AttributeProto::graph("then_branch", inner))
                .with_attribute(AttributeProto::graph("else_branch", leaf(level))),
        );
        g.output
            .push(ValueInfoProto::tensor(out, DataType::Float, [1, 4]));
        inner = g;
    }
    let g = graph(&mut deep);
    g.initializer.push(TensorProto {
        name: Some("cond".into()),
        data_type: Some(DataType::Bool.to_i32()),
        int32_data: vec![1],
        ..TensorProto::default()
    });
    g.node.push(
        NodeProto::new("If", ["cond"], ["deep_out"])
            .with_attribute(AttributeProto::graph("then_branch", inner))
            .with_attribute(AttributeProto::graph("else_branch", leaf(200))),
    );
    cases.push(("nested_subgraphs", Model(deep), None));
    cases
}

#[test]
fn broken_models_get_onnx_checkers_verdict() {
    let dir = scratch("cases");
    let mut paths = Vec::new();
    let mut names = Vec::new();
    for (name, case, setup) in cases() {
        let d = dir.join(name);
        fs::create_dir_all(&d).unwrap();
        let bytes = match case {
            Case::Model(m) => m.encode_to_vec().expect("encode"),
            Case::Bytes(b) => b,
        };
        let path = d.join("model.onnx");
        fs::write(&path, bytes).unwrap();
        if let Some(setup) = setup {
            setup(&d);
        }
        paths.push(path);
        names.push(name);
    }
    let theirs = onnx_verdicts(&paths, &dir);
    let mut disagreements = Vec::new();
    let mut rejected = 0;
    for ((name, path), theirs) in names.iter().zip(&paths).zip(theirs) {
        let ours = our_verdict(path);
        rejected += usize::from(theirs.is_err());
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!("{name}:\n  onnx: {theirs:?}\n  ours: {ours:?}"));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} verdicts differ from onnx.checker:\n{}",
        disagreements.len(),
        names.len(),
        disagreements.join("\n")
    );
    // The cases exercise both verdicts.
    assert!(
        rejected > names.len() / 2 && rejected < names.len(),
        "{rejected} of {}",
        names.len()
    );
}

#[test]
fn every_problem_is_reported_with_its_path() {
    let m = with(|m| {
        let g = graph(m);
        g.node[1] = NodeProto::new("Conv", ["a", "w"], ["y"])
            .with_name("Conv_3")
            .with_attribute(AttributeProto::float("kernel_shape", 3.0));
        g.node
            .push(NodeProto::new("Frobnicate", ["y"], ["z"]).with_name("f"));
        g.initializer.push(f32_raw("short", &[8], 1));
    });
    let problems = checker::check_model(&m).unwrap_err();
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        text.contains(&r#"graph.node[1] "Conv_3".attribute kernel_shape: attribute kernel_shape is FLOAT, the schema wants INTS"#.to_string()),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.starts_with(r#"graph.node[2] "f": no operator Frobnicate"#)),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.starts_with(r#"graph.initializer[1] "short": raw_data holds 4 bytes"#)),
        "{text:#?}"
    );
}

#[test]
fn graphs_nested_past_the_limit_are_reported_not_descended() {
    let mut inner = GraphProto::named("leaf");
    inner.node.push(NodeProto::new("Relu", ["x"], ["leaf_out"]));
    inner
        .output
        .push(ValueInfoProto::tensor("leaf_out", DataType::Float, [1, 4]));
    for level in 0..(checker::MAX_GRAPH_NESTING + 5) {
        let mut g = GraphProto::named(format!("level{level}"));
        let out = format!("out{level}");
        g.node.push(
            NodeProto::new("Loop", ["", ""], [out.clone()])
                .with_attribute(AttributeProto::graph("body", inner)),
        );
        g.output
            .push(ValueInfoProto::tensor(out, DataType::Float, [1, 4]));
        inner = g;
    }
    let m = with(|m| {
        graph(m).node.push(
            NodeProto::new("Loop", ["", ""], ["deep"])
                .with_attribute(AttributeProto::graph("body", inner)),
        )
    });
    // On a thread with a small stack: the depth limit, not the stack, ends the walk.
    let problems = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || checker::check_model(&m).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("nested more than")),
        "{problems}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Models with corrupted bytes (every case above, a few bytes overwritten or the
    /// tail cut) get a verdict: no panic, the same on a second run, a path for every
    /// problem.
    #[test]
    fn corrupted_models_get_a_verdict(
        case in 0usize..1000,
        edits in proptest::collection::vec((0usize..1 << 16, proptest::num::u8::ANY), 1..8),
        cut in 0usize..1 << 16,
    ) {
        let cases = cases();
        let bytes = match &cases[case % cases.len()].1 {
            Case::Model(m) => m.encode_to_vec().unwrap(),
            Case::Bytes(b) => b.clone(),
        };
        let mut bytes = bytes;
        if bytes.is_empty() {
            return Ok(());
        }
        for (at, b) in edits {
            let i = at % bytes.len();
            bytes[i] = b;
        }
        bytes.truncate(bytes.len() - cut % (bytes.len() / 4 + 1));
        onnx_light_tests::fuzz_checks::checker_gives_a_verdict(&bytes);
    }
}

#[test]
fn options_mirror_onnx_checkers_flags() {
    let custom = with(|m| {
        m.opset_import
            .push(OperatorSetIdProto::new("com.example", 1));
        graph(m).node[1].op_type = Some("Frobnicate".into());
        graph(m).node[1].domain = Some("com.example".into());
    });
    assert!(checker::check_model(&custom).is_ok());
    let strict = checker::CheckOptions::default().check_custom_domain(true);
    let problems = checker::check_model_with(&custom, &strict).unwrap_err();
    assert!(
        problems[0].message.contains("no operator Frobnicate"),
        "{problems}"
    );

    let incompatible = with_function(local_function(
        "f",
        "Relu",
        "",
        vec![OperatorSetIdProto::new("", 6)],
    ));
    assert!(checker::check_model(&incompatible).is_err());
    let lenient = checker::CheckOptions::default().skip_opset_compatibility_check(true);
    assert!(checker::check_model_with(&incompatible, &lenient).is_ok());
}
