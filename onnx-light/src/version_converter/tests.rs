//! Unit tests of the converter, one family of adapters at a time.

use super::*;
use crate::onnx::*;

fn model(nodes: Vec<NodeProto<'static>>, opset: i64) -> ModelProto<'static> {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [2, 3, 4]));
    let last = nodes
        .last()
        .map(|n| n.output[0].as_str().to_owned())
        .unwrap_or_default();
    g.node = nodes;
    g.output.push(ValueInfoProto {
        name: Some(last.into()),
        ..Default::default()
    });
    ModelProto::new(g, vec![OperatorSetIdProto::new("", opset)])
}

fn ops(m: &ModelProto<'_>) -> Vec<String> {
    m.graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type().to_owned())
        .collect()
}

#[test]
fn unchanged_operators_are_relabelled_and_types_recorded() {
    let m = model(
        vec![
            NodeProto::new("Relu", ["x"], ["y"]),
            NodeProto::new("Abs", ["y"], ["z"]),
        ],
        14,
    );
    let out = convert_version(&m, 18).unwrap();
    assert_eq!(out.opset_import[0].version(), 18);
    assert_eq!(out.opset_import[0].domain, Some("".into()));
    assert_eq!(ops(&out), ["Relu", "Abs"]);
    let g = out.graph.as_ref().unwrap();
    // The inferred type of the intermediate value, and of the output.
    assert_eq!(g.value_info.len(), 1);
    assert_eq!(g.value_info[0].name(), "y");
    assert_eq!(
        g.output[0].r#type.as_ref().unwrap().to_string(),
        "float[2,3,4]"
    );
}

#[test]
fn axes_move_between_attribute_and_input_both_ways() {
    let m = model(
        vec![NodeProto::new("ReduceSum", ["x"], ["y"])
            .with_attribute(AttributeProto::ints("axes", [1]))
            .with_attribute(AttributeProto::int("keepdims", 0))],
        11,
    );
    let up = convert_version(&m, 13).unwrap();
    assert_eq!(ops(&up), ["Constant", "ReduceSum"]);
    let g = up.graph.as_ref().unwrap();
    assert_eq!(g.node[0].output[0].as_str(), "_v_4");
    assert_eq!(g.node[1].input[1].as_str(), "_v_4");
    assert!(g.node[1].attribute("axes").is_none());
    let t = g.node[0].attribute("value").unwrap().t.as_ref().unwrap();
    assert_eq!(t.int64_data, [1]);
    assert_eq!(t.dims, [1]);

    let down = convert_version(&up, 12).unwrap();
    assert_eq!(ops(&down), ["ReduceSum"]);
    let n = &down.graph.as_ref().unwrap().node[0];
    assert_eq!(n.input.len(), 1);
    assert_eq!(n.attribute("axes").unwrap().ints, [1]);
}

#[test]
fn axes_from_a_computed_input_are_refused_going_down() {
    let mut m = model(vec![NodeProto::new("Unsqueeze", ["x", "a"], ["y"])], 13);
    let g = m.graph.as_mut().unwrap();
    g.input
        .push(ValueInfoProto::tensor("a", DataType::Int64, [1]));
    let err = convert_version(&m, 12).unwrap_err();
    match err {
        VersionConvertError::Refused {
            op_type, from, to, ..
        } => assert_eq!((op_type.as_str(), from, to), ("Unsqueeze", 13, 12)),
        other => panic!("{other}"),
    }
}

#[test]
fn an_operators_first_version_cannot_go_down() {
    let m = model(vec![NodeProto::new("Gelu", ["x"], ["y"])], 20);
    let err = convert_version(&m, 19).unwrap_err();
    assert!(
        err.to_string().contains("No Previous Version of Gelu"),
        "{err}"
    );
}

#[test]
fn type_restrictions_refuse_the_types_the_older_version_lacks() {
    let mut m = model(vec![NodeProto::new("Max", ["x", "x"], ["y"])], 12);
    m.graph.as_mut().unwrap().input[0] = ValueInfoProto::tensor("x", DataType::Int32, [2]);
    let err = convert_version(&m, 11).unwrap_err();
    assert!(err.to_string().contains("DataType (6)"), "{err}");
    // Floats are fine.
    let m = model(vec![NodeProto::new("Max", ["x", "x"], ["y"])], 12);
    assert!(convert_version(&m, 11).is_ok());
}

#[test]
fn split_and_softmax_follow_their_rules() {
    let m = model(
        vec![NodeProto::new("Split", ["x"], ["a", "b"])
            .with_attribute(AttributeProto::int("axis", 1))],
        13,
    );
    let mut m = m;
    m.graph.as_mut().unwrap().output[0].name = Some("a".into());
    let up = convert_version(&m, 18).unwrap();
    let n = &up.graph.as_ref().unwrap().node[0];
    assert_eq!(n.attribute("num_outputs").unwrap().i, Some(2));

    let m = model(
        vec![NodeProto::new("Softmax", ["x"], ["y"]).with_attribute(AttributeProto::int("axis", 1))],
        12,
    );
    let up = convert_version(&m, 13).unwrap();
    assert_eq!(ops(&up), ["Shape", "Flatten", "Softmax", "Reshape"]);
    let m = model(vec![NodeProto::new("Softmax", ["x"], ["y"])], 13);
    let down = convert_version(&m, 12).unwrap();
    assert_eq!(
        down.graph.as_ref().unwrap().node[0]
            .attribute("axis")
            .unwrap()
            .i,
        Some(2)
    );
}

#[test]
fn versions_outside_the_domain_are_refused() {
    let m = model(vec![NodeProto::new("Relu", ["x"], ["y"])], 14);
    let (_, max) = version_range();
    assert!(matches!(
        convert_version(&m, max + 1),
        Err(VersionConvertError::InvalidVersion { .. })
    ));
    assert!(matches!(
        convert_version(&m, 0),
        Err(VersionConvertError::InvalidVersion { version: 0, .. })
    ));
    let mut no_ir = m.clone();
    no_ir.ir_version = None;
    assert!(matches!(
        convert_version(&no_ir, 15),
        Err(VersionConvertError::IrVersion(0))
    ));
}

#[test]
fn other_domains_and_unknown_operators() {
    let mut custom = NodeProto::new("Custom", ["x"], ["y"]);
    custom.domain = Some("my.domain".into());
    let mut m = model(vec![custom], 12);
    m.opset_import.push(OperatorSetIdProto::new("my.domain", 1));
    let out = convert_version(&m, 13).unwrap();
    assert_eq!(out.opset_import[1].version(), 1);
    let m = model(vec![NodeProto::new("NoSuchOp", ["x"], ["y"])], 12);
    assert!(matches!(
        convert_version(&m, 13),
        Err(VersionConvertError::UnknownOperator { .. })
    ));
}

#[test]
fn old_broadcasting_is_made_explicit_and_back() {
    let mut m = model(vec![NodeProto::new("Add", ["x", "b"], ["y"])], 7);
    m.graph
        .as_mut()
        .unwrap()
        .input
        .push(ValueInfoProto::tensor("b", DataType::Float, [4]));
    let down = convert_version(&m, 6).unwrap();
    let n = &down.graph.as_ref().unwrap().node[0];
    assert_eq!(n.attribute("broadcast").unwrap().i, Some(1));
    let up = convert_version(&down, 7).unwrap();
    assert!(up.graph.as_ref().unwrap().node[0]
        .attribute("broadcast")
        .is_none());

    // A shape that does not broadcast the old way is refused.
    let mut m = model(vec![NodeProto::new("Add", ["x", "b"], ["y"])], 7);
    m.graph
        .as_mut()
        .unwrap()
        .input
        .push(ValueInfoProto::tensor("b", DataType::Float, [4, 1]));
    assert!(convert_version(&m, 6).is_err());
}

#[test]
fn type_extensions_cast_around_the_node_going_to_opset_8() {
    let mut m = model(vec![NodeProto::new("MatMul", ["a", "a"], ["y"])], 9);
    let g = m.graph.as_mut().unwrap();
    g.input[0] = ValueInfoProto::tensor("a", DataType::Int32, [2, 2]);
    let down = convert_version(&m, 8).unwrap();
    assert_eq!(ops(&down), ["Cast", "Cast", "MatMul", "Cast"]);
    let g = down.graph.as_ref().unwrap();
    assert_eq!(g.node[0].output[0].as_str(), "pre_cast_0");
    assert_eq!(g.node[2].output[0].as_str(), "y_intermediate_output");
    assert_eq!(g.node[3].output[0].as_str(), "y");
    assert_eq!(g.node[3].attribute("to").unwrap().i, Some(6));
}

#[test]
fn replaced_nodes_keep_graph_output_names() {
    let mut m = model(vec![NodeProto::new("Upsample", ["x", "s"], ["y"])], 9);
    let g = m.graph.as_mut().unwrap();
    g.input[0] = ValueInfoProto::tensor("x", DataType::Float, [1, 1, 2, 2]);
    g.initializer
        .push(TensorProto::from_slice("s", [4], &[1.0f32, 1.0, 2.0, 2.0]).unwrap());
    let up = convert_version(&m, 10).unwrap();
    let g = up.graph.as_ref().unwrap();
    assert_eq!(ops(&up), ["Resize"]);
    assert_eq!(g.node[0].output[0].as_str(), "y");
    assert_eq!(g.output[0].name(), "y");
    // And back: the scales initializer becomes the attribute again.
    let down = convert_version(&m, 8).unwrap();
    let g = down.graph.as_ref().unwrap();
    assert_eq!(
        g.node[0].attribute("scales").unwrap().floats,
        [1.0, 1.0, 2.0, 2.0]
    );
    assert!(g.initializer.is_empty());
}
