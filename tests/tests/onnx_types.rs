//! Ergonomics of the prebuilt ONNX types: building by hand, Debug that never dumps
//! weights, equality, and the walk over every tensor of a model.

use onnx_light::onnx::*;
use onnx_light::prelude::*;

fn tensor(name: &str) -> TensorProto<'static> {
    TensorProto::from_raw(name.to_string(), DataType::Float, [1], vec![0u8; 4])
}

fn sparse(name: &str) -> SparseTensorProto<'static> {
    SparseTensorProto {
        values: Some(tensor(&format!("{name}.values"))),
        indices: Some(TensorProto {
            name: Some(format!("{name}.indices").into()),
            data_type: Some(DataType::Int64.to_i32()),
            int64_data: vec![0],
            ..TensorProto::default()
        }),
        dims: vec![4],
        ..SparseTensorProto::default()
    }
}

/// A graph with tensors in every place a graph can hold them, and a nested subgraph
/// `depth` levels down.
fn graph(prefix: &str, depth: usize) -> GraphProto<'static> {
    let mut g = GraphProto::named(prefix.to_string());
    g.initializer.push(tensor(&format!("{prefix}.init")));
    g.sparse_initializer
        .push(sparse(&format!("{prefix}.sparse_init")));
    let mut node =
        NodeProto::new("Constant", Vec::<String>::new(), [format!("{prefix}.c")]).with_attribute(
            AttributeProto::tensor("value", tensor(&format!("{prefix}.attr_t"))),
        );
    node.attribute.push(AttributeProto {
        name: Some("ts".into()),
        tensors: vec![
            tensor(&format!("{prefix}.attr_ts0")),
            tensor(&format!("{prefix}.attr_ts1")),
        ],
        sparse_tensor: Some(Box::new(sparse(&format!("{prefix}.attr_sparse")))),
        sparse_tensors: vec![sparse(&format!("{prefix}.attr_sparses"))],
        ..AttributeProto::default()
    });
    if depth > 0 {
        node.attribute.push(AttributeProto::graph(
            "then",
            graph(&format!("{prefix}.g"), depth - 1),
        ));
        node.attribute.push(AttributeProto {
            name: Some("branches".into()),
            graphs: vec![graph(&format!("{prefix}.gs"), depth - 1)],
            ..AttributeProto::default()
        });
    }
    g.node.push(node);
    g
}

fn model() -> Model {
    let mut m = ModelProto::new(graph("main", 2), vec![OperatorSetIdProto::new("", 21)]);
    m.training_info.push(TrainingInfoProto {
        initialization: Some(graph("train_init", 0)),
        algorithm: Some(graph("train_algo", 0)),
        ..TrainingInfoProto::default()
    });
    let mut f = FunctionProto {
        name: Some("f".into()),
        attribute_proto: vec![AttributeProto::tensor("default_t", tensor("func.default"))],
        ..FunctionProto::default()
    };
    f.node.push(
        NodeProto::new("Constant", Vec::<String>::new(), ["k"])
            .with_attribute(AttributeProto::tensor("value", tensor("func.node_t"))),
    );
    m.functions.push(f);
    m
}

/// Tensors per graph: 1 initializer + 2 sparse-initializer parts + 1 `t` + 2 `tensors`
/// + 2 `sparse_tensor` parts + 2 `sparse_tensors` parts = 10.
const PER_GRAPH: usize = 10;

#[test]
fn the_walk_reaches_every_tensor_at_any_depth() {
    let m = model();
    // main (depth 2) has 2 subgraphs of depth 1, each with 2 of depth 0: 1 + 2 + 4 = 7
    // graphs; plus 2 training graphs; plus 2 function tensors.
    let expected = 7 * PER_GRAPH + 2 * PER_GRAPH + 2;
    assert_eq!(m.tensors().len(), expected);
    let names: Vec<&str> = m.tensors().iter().map(|t| t.name()).collect();
    for wanted in [
        "main.init",
        "main.sparse_init.values",
        "main.sparse_init.indices",
        "main.attr_t",
        "main.attr_ts1",
        "main.attr_sparse.indices",
        "main.attr_sparses.values",
        "main.g.g.init",
        "main.gs.g.attr_t",
        "main.g.gs.attr_sparses.indices",
        "train_init.attr_t",
        "train_algo.init",
        "func.default",
        "func.node_t",
    ] {
        assert!(names.contains(&wanted), "{wanted} not visited");
    }
    let mut sites = std::collections::BTreeMap::new();
    m.visit_tensors(|site, _| *sites.entry(format!("{site:?}")).or_insert(0) += 1);
    assert_eq!(sites["Initializer"], 9);
    assert_eq!(sites["SparseInitializer"], 18);
    assert_eq!(sites["Attribute"], 9 * 3 + 2);
    assert_eq!(sites["SparseAttribute"], 9 * 4);
}

#[test]
fn the_mutable_walk_changes_every_tensor() {
    let mut m = model();
    m.visit_tensors_mut(|_, t| {
        let renamed = format!("renamed/{}", t.name());
        t.name = Some(renamed.into());
    });
    assert!(m.tensors().iter().all(|t| t.name().starts_with("renamed/")));
    // And the change survives a round trip.
    let bytes = m.encode_to_vec().unwrap();
    let back = Model::decode_owned(&bytes).unwrap();
    assert_eq!(back, m);
}

#[test]
fn debug_never_dumps_weights() {
    let big = TensorProto {
        name: Some("big".into()),
        dims: vec![10_000_000],
        data_type: Some(DataType::Float.to_i32()),
        float_data: vec![1.5; 10_000_000],
        ..TensorProto::default()
    };
    let raw = TensorProto::from_raw("raw", DataType::Float, [4_000_000], vec![7u8; 16_000_000]);
    let mut g = GraphProto::named("g");
    g.initializer.push(big);
    g.initializer.push(raw);
    let text = format!("{:?}", ModelProto::new(g, vec![]));
    assert!(text.len() < 2_000, "Debug printed {} bytes", text.len());
    assert!(text.contains("10000000 values"));
    assert!(text.contains("16000000 bytes"));
}

#[test]
fn models_built_by_hand_compare_and_round_trip() {
    let a = model();
    let b = model();
    assert_eq!(a, b);
    let mut c = model();
    c.graph.as_mut().unwrap().node[0].op_type = Some("Identity".into());
    assert_ne!(a, c);
    let bytes = a.encode_to_vec().unwrap();
    assert_eq!(ModelProto::decode(&bytes).unwrap(), a);
    assert_eq!(a.ir_version(), IR_VERSION);
    let node = &a.graph.as_ref().unwrap().node[0];
    assert_eq!(
        node.attribute("value").unwrap().r#type(),
        AttributeType::Tensor
    );
    assert!(node.attribute("missing").is_none());
}

#[test]
fn constructors_fill_what_onnx_helper_would() {
    let vi = ValueInfoProto::tensor("x", DataType::Float16, [1, 3]);
    let t = vi.r#type.as_ref().unwrap().tensor_type().unwrap();
    assert_eq!(t.elem_type(), Some(DataType::Float16));
    assert_eq!(t.elem_type_raw(), DataType::Float16.to_i32());
    let dims: Vec<_> = t
        .shape
        .as_ref()
        .unwrap()
        .dim
        .iter()
        .map(|d| d.value.clone())
        .collect();
    assert_eq!(
        dims,
        vec![
            Some(DimensionValue::DimValue(1)),
            Some(DimensionValue::DimValue(3))
        ]
    );
    let a = AttributeProto::ints("pads", [0, 1]);
    assert_eq!(
        (a.name(), a.r#type(), a.ints.as_slice()),
        ("pads", AttributeType::Ints.into(), &[0i64, 1][..])
    );
    let t = TensorProto::from_raw("w", DataType::Bfloat16, [2], vec![0u8; 4]);
    assert_eq!(t.elem_type(), Some(DataType::Bfloat16));
    assert!(!t.is_external());
}
