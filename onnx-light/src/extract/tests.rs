use super::*;
use crate::onnx::{
    AttributeProto, DataType, OperatorSetIdProto, SparseTensorProto, TensorAnnotation,
};

fn vi(name: &str) -> ValueInfoProto<'static> {
    ValueInfoProto::tensor(name.to_string(), DataType::Float, [1, 2])
}

/// Three layers: `A0, A1 -> B0, B1, B2 -> C0, C1 -> D0`.
fn layered() -> ModelProto<'static> {
    let mut g = GraphProto::named("test");
    g.input = vec![vi("A0"), vi("A1")];
    g.output = vec![vi("D0")];
    for (op, ins, out) in [
        ("Add", ["A0", "A1"], "B0"),
        ("Sub", ["A0", "A1"], "B1"),
        ("Mul", ["A0", "A1"], "B2"),
        ("Add", ["B0", "B1"], "C0"),
        ("Sub", ["B1", "B2"], "C1"),
        ("Mul", ["C0", "C1"], "D0"),
    ] {
        g.node.push(NodeProto::new(op, ins, [out]));
    }
    for n in ["B0", "B1", "B2", "C0", "C1"] {
        g.value_info.push(vi(n));
    }
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.ir_version = Some(9);
    m
}

fn reason(e: Error) -> String {
    match e.kind() {
        ErrorKind::GraphEdit { reason } => reason.clone(),
        other => panic!("not a graph edit error: {other:?}"),
    }
}

#[test]
fn extracts_the_nodes_between_inputs_and_outputs() {
    let m = layered();
    let part = Extractor::new(&m)
        .unwrap()
        .extract_model(&["B0", "B1", "B2"], &["C0", "C1"])
        .unwrap();
    let g = part.graph.as_ref().unwrap();
    let ops: Vec<&str> = g.node.iter().map(|n| n.op_type()).collect();
    assert_eq!(ops, ["Add", "Sub"]);
    let names =
        |l: &[ValueInfoProto<'_>]| l.iter().map(|v| v.name().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&g.input), ["B0", "B1", "B2"]);
    assert_eq!(names(&g.output), ["C0", "C1"]);
    assert_eq!(names(&g.value_info), ["B0", "B1", "B2", "C0", "C1"]);
    assert_eq!(g.name(), "Extracted from {test}");
    assert_eq!(part.ir_version, Some(9));
    assert_eq!(part.opset_import, m.opset_import);
    assert_eq!(part.producer_name(), "onnx.utils.extract_model");
}

#[test]
fn missing_names_are_all_listed() {
    let m = layered();
    let e = Extractor::new(&m)
        .unwrap()
        .extract_model(&["B0", "nope"], &["C0", "gone"])
        .unwrap_err();
    assert_eq!(
        reason(e),
        "The following names were not found in value_infos: nope"
    );
    let e = Extractor::new(&m)
        .unwrap()
        .extract_model(&["B0"], &["C0", "gone", "lost"])
        .unwrap_err();
    assert_eq!(
        reason(e),
        "The following names were not found in value_infos: gone, lost"
    );
}

#[test]
fn a_name_written_twice_is_refused() {
    let mut m = layered();
    m.graph.as_mut().unwrap().node[1].output[0] = "B0".into();
    let e = Extractor::new(&m).unwrap_err();
    assert!(reason(e).contains("\"B0\" is written by node 0 and node 1"));
}

#[test]
fn sparse_initializers_and_annotations_are_refused() {
    let mut m = layered();
    m.graph
        .as_mut()
        .unwrap()
        .sparse_initializer
        .push(SparseTensorProto::default());
    let e = Extractor::new(&m)
        .unwrap()
        .extract_model(&["A0"], &["B0"])
        .unwrap_err();
    assert_eq!(reason(e), "len_sparse_initializer is 1, it must be 0.");
    let g = m.graph.as_mut().unwrap();
    g.sparse_initializer.clear();
    g.quantization_annotation.push(TensorAnnotation::default());
    let e = Extractor::new(&m)
        .unwrap()
        .extract_model(&["A0"], &["B0"])
        .unwrap_err();
    assert_eq!(reason(e), "len_quantization_annotation is 1, it must be 0.");
}

#[test]
fn initializers_used_and_functions_called_are_kept() {
    let mut m = layered();
    let g = m.graph.as_mut().unwrap();
    g.initializer.push(TensorProto::from_raw(
        "A1",
        DataType::Float,
        [1, 2],
        vec![0u8; 8],
    ));
    g.initializer.push(TensorProto::from_raw(
        "unused",
        DataType::Float,
        [1],
        vec![0u8; 4],
    ));
    g.node[3].op_type = Some("outer".into());
    g.node[3].domain = Some("local".into());
    let function = |name: &str, calls: Option<&str>| {
        let mut f = FunctionProto {
            name: Some(name.to_string().into()),
            domain: Some("local".into()),
            ..Default::default()
        };
        if let Some(c) = calls {
            f.node.push(NodeProto {
                domain: Some("local".into()),
                ..NodeProto::new(c.to_string(), ["x"], ["y"])
            });
        }
        f
    };
    m.functions = vec![
        function("inner", None),
        function("spare", None),
        function("outer", Some("inner")),
    ];
    let part = Extractor::new(&m)
        .unwrap()
        .extract_model(&["A0", "A1"], &["C0"])
        .unwrap();
    let g = part.graph.as_ref().unwrap();
    assert_eq!(g.node.len(), 3);
    assert_eq!(g.initializer.len(), 1);
    assert_eq!(g.initializer[0].name(), "A1");
    let functions: Vec<&str> = part.functions.iter().map(|f| f.name()).collect();
    assert_eq!(functions, ["outer", "inner"]);
}

#[test]
fn the_walk_stops_at_inputs_and_does_not_enter_subgraphs() {
    let mut m = layered();
    let mut branch = GraphProto::named("b");
    branch.node.push(NodeProto::new("Identity", ["C1"], ["z"]));
    m.graph.as_mut().unwrap().node.push(
        NodeProto::new("If", ["C0"], ["E"])
            .with_attribute(AttributeProto::graph("then_branch", branch)),
    );
    m.graph.as_mut().unwrap().value_info.push(vi("E"));
    let e = Extractor::new(&m).unwrap();
    // C1's producer is not reached: only the If node's own inputs are followed.
    assert_eq!(e.reachable_nodes(&["B0", "B1"], &["E"]), [3, 6]);
    assert_eq!(e.reachable_nodes(&["A0", "A1"], &["E"]), [0, 1, 3, 6]);
}

#[test]
fn later_declarations_replace_earlier_ones_in_place() {
    let mut m = layered();
    let g = m.graph.as_mut().unwrap();
    // B1 declared again as an input: its place in the value infos stays, its type is the input's.
    let mut b1 = ValueInfoProto::tensor("B1", DataType::Double, [1, 2]);
    b1.doc_string = Some("the input".into());
    g.input.push(b1);
    let part = Extractor::new(&m)
        .unwrap()
        .extract_model(&["B0", "B1"], &["C0"])
        .unwrap();
    let g = part.graph.as_ref().unwrap();
    let vis: Vec<(&str, &str)> = g
        .value_info
        .iter()
        .map(|v| (v.name(), v.doc_string()))
        .collect();
    assert_eq!(vis, [("B0", ""), ("B1", "the input"), ("C0", "")]);
}

#[test]
fn extracting_a_file_copies_only_the_kept_weights() {
    let dir = std::env::temp_dir().join(format!("extract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut m = layered();
    let g = m.graph.as_mut().unwrap();
    g.node[1].input[1] = "W1".into();
    g.node[2].input[1] = "W2".into();
    g.initializer.push(TensorProto::from_raw(
        "W1",
        DataType::Float,
        [1, 2],
        vec![1u8; 8],
    ));
    g.initializer.push(TensorProto::from_raw(
        "W2",
        DataType::Float,
        [512, 2],
        vec![2u8; 4096],
    ));
    let src = dir.join("m.onnx");
    io::save(&m, &src, &SerializeOptions::default()).unwrap();
    let out = dir.join("part.onnx");
    extract_model_file(&src, &out, &["A0"], &["C0"], &ExtractOptions::default()).unwrap();
    let part = io::load(&out).unwrap();
    let want = Extractor::new(&io::load(&src).unwrap())
        .unwrap()
        .extract_model(&["A0"], &["C0"])
        .unwrap();
    assert_eq!(part, want);
    let g = part.graph.as_ref().unwrap();
    assert_eq!(g.initializer.len(), 1);
    assert_eq!(g.initializer[0].raw_data.as_deref(), Some(&[1u8; 8][..]));
    assert_eq!(
        external_data_location(&out),
        PathBuf::from("part.onnx.data")
    );

    // From external data: the kept weight comes inline, marked DEFAULT as onnx marks
    // the tensors it loads, and no data file is written beside the output.
    let external = dir.join("ext.onnx");
    let data = ExternalDataOptions::new("ext.data").size_threshold(0);
    io::save(
        &m,
        &external,
        &SerializeOptions::default().external_data(data),
    )
    .unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let out = sub.join("part.onnx");
    extract_model_file(
        &external,
        &out,
        &["A0"],
        &["C0"],
        &ExtractOptions::default(),
    )
    .unwrap();
    let part = io::load(&out).unwrap();
    let w = &part.graph.as_ref().unwrap().initializer[0];
    assert_eq!(w.raw_data.as_deref(), Some(&[1u8; 8][..]));
    assert_eq!(w.data_location, Some(DataLocation::Default.into()));
    assert!(w.external_data.is_empty());
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 1);

    // Past the single-file size, the tensors go to `<file name>.data`, back to back.
    let small = ExtractOptions::default().max_single_file(1000);
    extract_model_file(&src, &out, &["A0"], &["C0", "B2"], &small).unwrap();
    let stored = io::load_with(&out, &ParseOptions::default().load_external_data(false)).unwrap();
    let inits = &stored.graph.as_ref().unwrap().initializer;
    let entries = |t: &TensorProto<'_>| {
        t.external_data
            .iter()
            .map(|e| format!("{}={}", e.key(), e.value()))
            .collect::<Vec<_>>()
    };
    assert_eq!(inits[0].name(), "W1");
    assert!(!inits[0].is_external(), "8 bytes stay inline");
    assert_eq!(
        entries(&inits[1]),
        ["location=part.onnx.data", "offset=0", "length=4096"]
    );
    assert_eq!(
        std::fs::read(sub.join("part.onnx.data")).unwrap(),
        vec![2u8; 4096]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
