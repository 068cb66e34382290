use super::*;
use crate::onnx::{Dimension, NodeProto, OperatorSetIdProto, TensorProto};

fn model(
    nodes: Vec<NodeProto<'static>>,
    inputs: Vec<ValueInfoProto<'static>>,
) -> ModelProto<'static> {
    let mut g = GraphProto::named("g");
    g.input = inputs;
    g.node = nodes;
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn types(m: &ModelProto<'_>) -> Vec<String> {
    let g = m.graph.as_ref().unwrap();
    g.value_info
        .iter()
        .map(|vi| format!("{}: {}", vi.name(), vi.r#type.as_ref().unwrap()))
        .collect()
}

#[test]
fn values_get_types_in_node_order_and_unknown_dimensions_fresh_names() {
    let mut m = model(
        vec![
            NodeProto::new("Add", ["x", "y"], ["s"]),
            NodeProto::new("Shape", ["s"], ["shape"]),
            NodeProto::new("Relu", ["s"], ["r"]),
        ],
        vec![
            ValueInfoProto::tensor("x", DataType::Float, [Dimension::param("n"), 3.into()]),
            ValueInfoProto::tensor("y", DataType::Float, [Dimension::param("m"), 3.into()]),
        ],
    );
    // `unk__0` is taken: the fresh names skip it.
    m.graph
        .as_mut()
        .unwrap()
        .value_info
        .push(ValueInfoProto::tensor(
            "taken",
            DataType::Float,
            [Dimension::param("unk__0")],
        ));
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert_eq!(
        types(&m),
        [
            "taken: float[unk__0]",
            "s: float[unk__1,3]",
            "shape: int64[2]",
            "r: float[unk__1,3]"
        ]
    );
}

#[test]
fn fresh_names_skip_only_the_exact_names_the_model_uses() {
    // `unk__0` and `unk__2` collide with fresh names; `unk__01`, `unk__` and `unk__1x`
    // are other names that a fresh one can never equal.
    let dims = ["unk__0", "unk__01", "unk__", "unk__1x", "unk__2"].map(Dimension::param);
    let mut m = model(
        vec![
            NodeProto::new("Add", ["x", "y"], ["s"]),
            NodeProto::new("Add", ["s", "y"], ["t"]),
            NodeProto::new("Add", ["t", "y"], ["u"]),
        ],
        vec![
            ValueInfoProto::tensor("x", DataType::Float, [Dimension::param("n")]),
            ValueInfoProto::tensor("y", DataType::Float, [Dimension::param("m")]),
        ],
    );
    m.graph
        .as_mut()
        .unwrap()
        .value_info
        .push(ValueInfoProto::tensor("taken", DataType::Float, dims));
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert_eq!(
        types(&m),
        [
            "taken: float[unk__0,unk__01,unk__,unk__1x,unk__2]",
            "s: float[unk__1]",
            "t: float[unk__3]",
            "u: float[unk__4]"
        ]
    );
    assert_eq!(
        super::fresh_number("unk__18446744073709551615"),
        Some(u64::MAX)
    );
    assert_eq!(super::fresh_number("unk__18446744073709551616"), None);
    assert_eq!(super::fresh_number("unk__+1"), None);
}

#[test]
fn declared_types_are_merged_and_conflicts_refused_in_strict_mode() {
    let x = ValueInfoProto::tensor("x", DataType::Float, [2, 3]);
    let mut m = model(vec![NodeProto::new("Relu", ["x"], ["y"])], vec![x.clone()]);
    // A declared name takes the inferred size; an unknown dimension too.
    m.graph
        .as_mut()
        .unwrap()
        .value_info
        .push(ValueInfoProto::tensor(
            "y",
            DataType::Float,
            [Dimension::param("a"), Dimension::unknown()],
        ));
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert_eq!(types(&m), ["y: float[2,3]"]);
    // A different size, rank or element type is an error (strict) or leaves the
    // declaration (lax).
    for declared in [
        ValueInfoProto::tensor("y", DataType::Float, [2, 4]),
        ValueInfoProto::tensor("y", DataType::Float, [2]),
        ValueInfoProto::tensor("y", DataType::Int64, [2, 3]),
    ] {
        let mut m = model(vec![NodeProto::new("Relu", ["x"], ["y"])], vec![x.clone()]);
        m.graph.as_mut().unwrap().value_info.push(declared.clone());
        let err =
            infer_shapes(&mut m.clone(), &InferOptions::default().strict_mode(true)).unwrap_err();
        assert!(err.to_string().contains("(Relu, node 0"), "{err}");
        infer_shapes(&mut m, &InferOptions::default()).unwrap();
        assert_eq!(m.graph.as_ref().unwrap().value_info, [declared]);
    }
}

#[test]
fn a_node_without_input_types_is_an_error_only_in_strict_mode() {
    let mut m = model(vec![NodeProto::new("Relu", ["x"], ["y"])], vec![]);
    assert!(infer_shapes(&mut m.clone(), &InferOptions::default().strict_mode(true)).is_err());
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert!(m.graph.as_ref().unwrap().value_info.is_empty());
}

#[test]
fn reshape_reads_its_shape_from_an_initializer_or_a_constant() {
    let shape = TensorProto::from_vec("shape", [3], vec![0i64, -1, 2]).unwrap();
    let mut m = model(
        vec![
            NodeProto::new("Reshape", ["x", "shape"], ["r"]),
            NodeProto::new("Constant", Vec::<String>::new(), ["axes"]).with_attribute(
                crate::onnx::AttributeProto::tensor(
                    "value",
                    TensorProto::from_vec("", [1], vec![0i64]).unwrap(),
                ),
            ),
            NodeProto::new("Unsqueeze", ["r", "axes"], ["u"]),
        ],
        vec![ValueInfoProto::tensor(
            "x",
            DataType::Float,
            [Dimension::param("n"), 6.into(), 4.into()],
        )],
    );
    m.graph.as_mut().unwrap().initializer.push(shape);
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    // 0 keeps `n`; -1 is still computed: the dimension a 0 copies counts on both sides.
    assert_eq!(
        types(&m),
        ["r: float[n,12,2]", "axes: int64[1]", "u: float[1,n,12,2]"]
    );
}

#[test]
fn function_outputs_are_inferred_through_the_body_with_the_callers_attributes() {
    let mut perm = AttributeProto {
        name: Some("perm".into()),
        ref_attr_name: Some("p".into()),
        ..Default::default()
    };
    perm.r#type = Some(crate::onnx::AttributeType::Ints.into());
    let mut transpose = NodeProto::new("Transpose", ["s"], ["z"]);
    transpose.attribute.push(perm);
    let f = FunctionProto {
        name: Some("F".into()),
        domain: Some("local".into()),
        input: vec!["x".into(), "y".into()],
        output: vec!["z".into(), "w".into()],
        attribute: vec!["p".into()],
        node: vec![
            NodeProto::new("Add", ["x", "y"], ["s"]),
            transpose,
            NodeProto::new("Foo", ["s"], ["w"]),
        ],
        opset_import: vec![OperatorSetIdProto::new("", 18)],
        ..Default::default()
    };
    let x = ValueInfoProto::tensor("x", DataType::Float, [Dimension::param("n"), 4.into()])
        .r#type
        .unwrap();
    let y = TypeProto::tensor(DataType::Float, Some(TensorShapeProto::from_dims(&[4])));
    let p = AttributeProto::ints("p", vec![1, 0]);
    let out = infer_function_output_types(&f, &[x.clone(), y], &[p]).unwrap();
    assert_eq!(out[0].to_string(), "float[4,n]");
    // `Foo` has no schema: its output is an empty type.
    assert!(is_unset(&out[1]));
    // Without the attribute, Transpose reverses the axes as well; with one input
    // known, Add gives the element type only (`[]`: shape unknown).
    let out = infer_function_output_types(&f, std::slice::from_ref(&x), &[]).unwrap();
    assert_eq!(out[0].to_string(), "float[]");
    // The body is checked: an int32 `y` breaks Add's type constraint.
    let y = TypeProto::tensor(DataType::Int32, Some(TensorShapeProto::from_dims(&[4])));
    let e = infer_function_output_types(&f, &[x, y], &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("B has inconsistent type tensor(int32)"),
        "{e}"
    );
}

#[test]
fn a_structure_only_load_reads_the_small_constants_shapes_depend_on() {
    let dir = std::env::temp_dir().join(format!("shape-lazy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.onnx");
    let mut m = model(
        vec![
            NodeProto::new("Reshape", ["x", "shape"], ["y"]),
            NodeProto::new("Resize", ["y", "", "scales"], ["z"]),
        ],
        vec![ValueInfoProto::tensor("x", DataType::Float, [2, 3, 4])],
    );
    let shape = TensorProto::from_raw(
        "shape",
        DataType::Int64,
        [2],
        [6i64, -1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    let scales = TensorProto::from_raw(
        "scales",
        DataType::Float,
        [2],
        [0.5f32, 2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    m.graph.as_mut().unwrap().initializer.push(shape);
    m.graph.as_mut().unwrap().initializer.push(scales);
    crate::io::save(&m, &path, &crate::io::SerializeOptions::default()).unwrap();
    let options = crate::io::ParseOptions::default().structure_only(true);
    let mut lazy = crate::io::load_with(&path, &options).unwrap();
    infer_shapes(&mut lazy, &InferOptions::default()).unwrap();
    assert_eq!(types(&lazy), ["y: float[6,4]", "z: float[3,8]"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn after_an_operator_without_schema_errors_are_not_reported_as_in_onnx() {
    let x = ValueInfoProto::tensor("x", DataType::Float, [2]);
    let declared = ValueInfoProto::tensor("r", DataType::Float, [3]);
    let strict = InferOptions::default().strict_mode(true);
    let mut m = model(vec![NodeProto::new("Relu", ["x"], ["r"])], vec![x.clone()]);
    m.graph.as_mut().unwrap().output.push(declared.clone());
    assert!(infer_shapes(&mut m, &strict).is_err());
    let mut m = model(
        vec![
            NodeProto::new("Foo", ["x"], ["f"]),
            NodeProto::new("Relu", ["x"], ["r"]),
        ],
        vec![x.clone()],
    );
    m.graph.as_mut().unwrap().output.push(declared);
    infer_shapes(&mut m, &strict).unwrap();
}

#[test]
fn a_node_of_a_domain_the_model_does_not_import_fails_in_either_mode() {
    let x = ValueInfoProto::tensor("x", DataType::Float, [2]);
    let mut foo = NodeProto::new("Foo", ["x"], ["f"]);
    foo.domain = Some("custom".into());
    let mut m = model(vec![foo], vec![x.clone()]);
    let e = infer_shapes(&mut m, &InferOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("No opset import for domain custom optype Foo"),
        "{e}"
    );
    // `""` nodes resolve through an `ai.onnx` import too.
    let mut m = model(vec![NodeProto::new("Relu", ["x"], ["r"])], vec![x]);
    m.opset_import = vec![OperatorSetIdProto::new("ai.onnx", 21)];
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert_eq!(types(&m), ["r: float[2]"]);
}

fn local_call(input: [&'static str; 1], output: [&'static str; 1]) -> NodeProto<'static> {
    NodeProto {
        domain: Some("local".into()),
        ..NodeProto::new("Twice", input, output)
    }
}

/// A model calling local function `local.Twice` (`Add(x, x)` through `Relu`) on `x`.
fn calling_a_local_function(body: Vec<NodeProto<'static>>) -> ModelProto<'static> {
    let mut m = model(
        vec![local_call(["x"], ["y"])],
        vec![ValueInfoProto::tensor(
            "x",
            DataType::Float,
            [Dimension::param("n"), 3.into()],
        )],
    );
    m.opset_import.push(OperatorSetIdProto::new("local", 1));
    m.functions.push(FunctionProto {
        name: Some("Twice".into()),
        domain: Some("local".into()),
        input: vec!["a".into()],
        output: vec!["b".into()],
        node: body,
        opset_import: vec![
            OperatorSetIdProto::new("", 21),
            OperatorSetIdProto::new("local", 1),
        ],
        ..Default::default()
    });
    m
}

#[test]
fn a_call_of_a_local_function_is_inferred_through_its_body() {
    let mut m = calling_a_local_function(vec![
        NodeProto::new("Add", ["a", "a"], ["s"]),
        NodeProto::new("Relu", ["s"], ["b"]),
    ]);
    infer_shapes(&mut m, &InferOptions::default().strict_mode(true)).unwrap();
    assert_eq!(types(&m), ["y: float[n,3]"]);
}

#[test]
fn a_local_function_calling_itself_is_refused_in_either_mode() {
    let recursive = vec![local_call(["a"], ["b"])];
    for strict in [true, false] {
        let mut m = calling_a_local_function(recursive.clone());
        let before = m.clone();
        let e = infer_shapes(&mut m, &InferOptions::default().strict_mode(strict)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidModel { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("Cycle detected in model-local function references"),
            "{e}"
        );
        assert_eq!(m, before);
    }
}

#[test]
fn versions_onnx_has_no_inference_for_give_nothing_or_go_through_their_body() {
    let relu = || {
        let mut m = model(
            vec![NodeProto::new("Relu", ["x"], ["y"])],
            vec![ValueInfoProto::tensor("x", DataType::Float, [2])],
        );
        m.opset_import[0] = OperatorSetIdProto::new("", 1);
        m
    };
    let mut m = relu();
    infer_shapes(&mut m, &InferOptions::default().strict_mode(true)).unwrap();
    assert_eq!(types(&m), Vec::<String>::new());
    // With `check_type`, the output takes the type its type parameter is bound to.
    let mut m = relu();
    let full = InferOptions::default().strict_mode(true).check_type(true);
    infer_shapes(&mut m, &full).unwrap();
    assert_eq!(types(&m), ["y: float[]"]);
    // MeanVarianceNormalization-13 has a function body and no inference function. Its
    // body reads `axes` from the caller only (the schema's default is not bound, as in
    // `onnx`): without it, a Constant of the body has no value.
    let mvn = |axes: Option<[i64; 3]>| {
        let mut node = NodeProto::new("MeanVarianceNormalization", ["x"], ["y"]);
        if let Some(axes) = axes {
            node = node.with_attribute(AttributeProto::ints("axes", axes));
        }
        model(
            vec![node],
            vec![ValueInfoProto::tensor("x", DataType::Float, [2, 3, 4, 5])],
        )
    };
    let mut m = mvn(Some([0, 2, 3]));
    infer_shapes(&mut m, &InferOptions::default().strict_mode(true)).unwrap();
    assert_eq!(types(&m), ["y: float[2,3,4,5]"]);
    let e = infer_shapes(&mut mvn(None), &InferOptions::default().strict_mode(true));
    assert!(e.unwrap_err().to_string().contains("op_type:Constant"));
    let mut m = mvn(None);
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    assert_eq!(types(&m), ["y: float[]"]);
}

#[test]
fn values_declared_without_a_type_get_an_empty_one_and_the_last_declaration_the_inferred_type() {
    let named = |name: &str| ValueInfoProto {
        name: Some(name.to_string().into()),
        ..ValueInfoProto::default()
    };
    let x = ValueInfoProto::tensor("x", DataType::Float, [2]);
    let mut m = model(
        vec![NodeProto::new("Relu", ["x"], ["y"])],
        vec![x, named("z")],
    );
    let g = m.graph.as_mut().unwrap();
    g.value_info = vec![named("y"), named("q")];
    g.output = vec![named("w")];
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    let g = m.graph.as_ref().unwrap();
    // As `onnx` does: the untyped entry of `y` takes the type, and a new one is added.
    assert_eq!(types(&m), ["y: float[2]", "q: ", "y: float[2]"]);
    assert_eq!(g.input[1].r#type, Some(TypeProto::default()));
    assert_eq!(g.output[0].r#type, Some(TypeProto::default()));
}

#[test]
fn a_declared_type_of_another_kind_or_element_type_is_named_as_onnx_names_it() {
    let x = ValueInfoProto::tensor("x", DataType::Float, [2]);
    let refuse = |output: ValueInfoProto<'static>| {
        let mut m = model(vec![NodeProto::new("Relu", ["x"], ["y"])], vec![x.clone()]);
        m.graph.as_mut().unwrap().output.push(output);
        infer_shapes(&mut m, &InferOptions::default().strict_mode(true))
            .unwrap_err()
            .to_string()
    };
    let e = refuse(ValueInfoProto::tensor("y", DataType::Int64, [2]));
    assert!(
        e.ends_with("Inferred elem type differs from existing elem type: (1) vs (7)"),
        "{e}"
    );
    let sequence = TypeProto {
        value: Some(TypeValue::SequenceType(Box::default())),
        ..TypeProto::default()
    };
    let e = refuse(ValueInfoProto {
        name: Some("y".into()),
        r#type: Some(sequence),
        ..ValueInfoProto::default()
    });
    assert!(
        e.ends_with("type case mismatch. existing=sequence_type inferred=tensor_type"),
        "{e}"
    );
}

#[test]
fn int32_constants_are_refused_where_onnx_parses_int64_data() {
    let run = |op: &'static str| {
        let mut m = model(
            vec![NodeProto::new(op, ["x", "c"], ["y"])],
            vec![ValueInfoProto::tensor("x", DataType::Float, [2, 3])],
        );
        let c = TensorProto::from_vec("c", [2], vec![1i32, 1]).unwrap();
        m.graph.as_mut().unwrap().initializer.push(c);
        infer_shapes(&mut m, &InferOptions::default().strict_mode(true))
            .unwrap_err()
            .to_string()
    };
    let e = run("Unsqueeze");
    assert!(e.contains("ParseData type mismatch for tensor: c"), "{e}");
    let e = run("Tile");
    assert!(
        e.contains("'Repeats' input must be 1D tensor of type int64"),
        "{e}"
    );
    let e = run("ReduceSum");
    assert!(e.contains("Expected:int64"), "{e}");
}

#[test]
fn an_initializer_conflicting_with_its_declared_type_fails_in_either_mode() {
    let zeros = |dims: &[i64]| {
        let n = dims.iter().product::<i64>() as usize;
        TensorProto::from_slice("x", dims.to_vec(), &vec![0f32; n]).unwrap()
    };
    for (declared, reason) in [
        (vec![4.into(), 3.into()], "[ShapeInferenceError] Inferred shape and existing shape differ in dimension 0: (8) vs (4)"),
        (vec![Dimension::unknown(), 7.into()], "[ShapeInferenceError] Inferred shape and existing shape differ in rank: (3) vs (2)"),
    ] {
        for strict in [false, true] {
            let mut m = model(
                vec![NodeProto::new("Relu", ["x"], ["y"])],
                vec![ValueInfoProto::tensor("x", DataType::Float, declared.clone())],
            );
            let dims: &[i64] = if declared.len() == 2 && declared[1].as_value() == Some(7) { &[8, 7, 9] } else { &[8, 7] };
            m.graph.as_mut().unwrap().initializer.push(zeros(dims));
            let e = infer_shapes(&mut m, &InferOptions::default().strict_mode(strict)).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::GraphInference { .. }), "{e}");
            assert_eq!(e.to_string(), reason);
        }
    }
}

#[test]
fn constant_data_onnx_cannot_parse_is_an_error_of_the_node() {
    let scalar = |name: &str, v: f32| {
        TensorProto::from_slice(name.to_string(), Vec::<i64>::new(), &[v]).unwrap()
    };
    let mut delta = scalar("delta", 1.0);
    delta.raw_data = Some(Vec::new().into());
    let mut m = model(
        vec![NodeProto::new("Range", ["start", "limit", "delta"], ["y"])],
        ["start", "limit", "delta"]
            .map(|n| ValueInfoProto::tensor(n, DataType::Float, Vec::<i64>::new()))
            .to_vec(),
    );
    let g = m.graph.as_mut().unwrap();
    g.initializer = vec![scalar("start", 1.0), scalar("limit", 5.0), delta];
    let e = infer_shapes(&mut m, &InferOptions::default().strict_mode(true)).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "Data size mismatch. Tensor: delta has 0 bytes of raw_data for 1 elements of size 4"
        ),
        "{e}"
    );
}

#[test]
fn the_name_table_tells_apart_names_whose_hashes_collide() {
    // Entries named as a graph would hold them; every name given the same hash.
    let names = ["a", "b", "c"];
    let at = |h: Home| match h {
        Home::ValueInfo(i) => names[i],
        _ => "",
    };
    let index = |h: Option<Home>| match h {
        Some(Home::ValueInfo(i)) => Some(i),
        _ => None,
    };
    let mut homes = Homes::default();
    assert_eq!(index(homes.get_hashed(7, "a", at)), None);
    homes.insert_hashed(7, "a", Home::ValueInfo(0), at);
    // A different name with the same hash is not taken for the first one.
    assert_eq!(index(homes.get_hashed(7, "b", at)), None);
    homes.insert_hashed(7, "b", Home::ValueInfo(1), at);
    assert_eq!(index(homes.get_hashed(7, "a", at)), Some(0));
    assert_eq!(index(homes.get_hashed(7, "b", at)), Some(1));
    assert_eq!(index(homes.get_hashed(7, "c", at)), None);
    // A name defined again takes its new home, in either table.
    homes.insert_hashed(7, "b", Home::ValueInfo(2), |h| match h {
        Home::ValueInfo(2) => "b",
        h => at(h),
    });
    assert_eq!(
        index(homes.get_hashed(7, "b", |h| match h {
            Home::ValueInfo(2) => "b",
            h => at(h),
        })),
        Some(2)
    );
    // Names found through the real hash.
    let mut homes = Homes::with_capacity(2);
    homes.insert("a", Home::ValueInfo(0), at);
    homes.insert("c", Home::ValueInfo(2), at);
    assert_eq!(index(homes.get("a", at)), Some(0));
    assert_eq!(index(homes.get("c", at)), Some(2));
    assert_eq!(index(homes.get("b", at)), None);
}

#[test]
fn fresh_dimension_names_are_written_as_onnx_writes_them() {
    let mut text = FreshName::default();
    assert_eq!(text.of(0), "unk__0");
    assert_eq!(text.of(42), "unk__42");
    assert_eq!(text.of(7), "unk__7");
    assert_eq!(text.of(u64::MAX), format!("unk__{}", u64::MAX));
}

#[test]
fn a_constant_whose_type_conflicts_keeps_the_earlier_values() {
    let constant = |values: Vec<i64>| {
        let len = values.len() as i64;
        NodeProto::new("Constant", Vec::<String>::new(), ["c"]).with_attribute(
            crate::onnx::AttributeProto::tensor(
                "value",
                TensorProto::from_vec("", [len], values).unwrap(),
            ),
        )
    };
    let mut m = model(
        vec![
            constant(vec![4]),
            constant(vec![2, 2]),
            NodeProto::new("Split", ["x", "c"], ["p", "q"]),
        ],
        vec![ValueInfoProto::tensor("x", DataType::Float, [4])],
    );
    infer_shapes(&mut m, &InferOptions::default()).unwrap();
    // As in onnx, the second Constant's int64[2] conflicts with int64[1], so Split
    // still sees one split of 4 for two outputs and types neither.
    assert_eq!(types(&m), ["c: int64[1]"]);
}
