use super::expand::insert_position;
use super::*;
use crate::error::Error;
use crate::field::Str;
use crate::field::{Bytes, LazyPayload, PayloadSource};
use crate::onnx::{
    AttributeProto, DataType, Dimension, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, ValueInfoProto,
};
use crate::onnx::{FunctionProto, SparseTensorProto};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn vi(name: &str) -> ValueInfoProto<'static> {
    ValueInfoProto::tensor(name.to_string(), DataType::Float, [2, 3])
}

/// `x -> Relu -> h -> Neg -> y`, with a weight `w` added on the way.
fn chain(
    x: &'static str,
    h: &'static str,
    y: &'static str,
    w: &'static str,
) -> GraphProto<'static> {
    let mut g = GraphProto::named(format!("g_{x}"));
    g.doc_string = Some(Str::from(format!("doc {x}")));
    g.input.push(vi(x));
    g.output.push(vi(y));
    g.value_info.push(vi(h));
    g.initializer.push(TensorProto::from_raw(
        w.to_string(),
        DataType::Float,
        [1],
        vec![0u8; 4],
    ));
    g.node
        .push(NodeProto::new("Relu", [x], [h]).with_name(format!("relu_{x}")));
    g.node
        .push(NodeProto::new("Add", [h, w], [y]).with_name(format!("add_{x}")));
    g
}

fn model(g: GraphProto<'static>) -> ModelProto<'static> {
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn reason(e: Error) -> String {
    match e.kind() {
        ErrorKind::GraphEdit { reason } => reason.clone(),
        other => panic!("not a graph edit error: {other:?}"),
    }
}

#[test]
fn merged_graph_connects_the_second_graph_to_the_first() {
    let g1 = chain("a", "b", "c", "w1");
    let mut g2 = chain("d", "e", "f", "w2");
    // The connected input has an initializer and a value info of its own: both go.
    g2.initializer.push(TensorProto::from_raw(
        "d",
        DataType::Float,
        [1],
        vec![0u8; 4],
    ));
    g2.value_info.push(vi("d"));
    let g = merge_graphs(&g1, &g2, &[("c", "d")], &MergeOptions::default()).unwrap();
    let names =
        |l: &[ValueInfoProto<'_>]| l.iter().map(|v| v.name().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&g.input), ["a"]);
    assert_eq!(names(&g.output), ["f"]);
    assert_eq!(g.node.len(), 4);
    assert_eq!(g.node[2].input[0], "c");
    let inits: Vec<&str> = g.initializer.iter().map(|t| t.name()).collect();
    assert_eq!(inits, ["w1", "w2"]);
    // The first graph's connected output stays declared, as a value info.
    assert_eq!(names(&g.value_info), ["b", "e", "c"]);
    assert_eq!(g.name(), "g_a_g_d");
    assert_eq!(
        g.doc_string(),
        "Graph combining g_a and g_d\ng_a\n\ndoc a\n\ng_d\n\ndoc d"
    );
}

#[test]
fn connections_reach_into_subgraphs_of_the_second_graph() {
    let g1 = chain("a", "b", "c", "w1");
    let mut g2 = chain("d", "e", "f", "w2");
    let mut branch = GraphProto::named("branch");
    branch.node.push(NodeProto::new("Identity", ["d"], ["z"]));
    g2.node.push(
        NodeProto::new("If", ["e"], ["k"])
            .with_attribute(AttributeProto::graph("then_branch", branch)),
    );
    let g = merge_graphs(&g1, &g2, &[("c", "d")], &MergeOptions::default()).unwrap();
    let sub = g.node[4].attribute[0].g.as_ref().unwrap();
    assert_eq!(sub.node[0].input[0], "c");
}

#[test]
fn merging_refuses_unknown_and_clashing_names_with_onnxs_messages() {
    let g1 = chain("a", "b", "c", "w");
    let g2 = chain("d", "e", "f", "w");
    let e = merge_graphs(&g1, &g2, &[("x", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(reason(e), "Output x is not present in g1");
    let e = merge_graphs(&g1, &g2, &[("c", "x")], &MergeOptions::default()).unwrap_err();
    assert_eq!(reason(e), "Input x is not present in g2");
    let e = merge_graphs(&g1, &g2, &[("c", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        reason(e),
        "Cant merge two graphs with overlapping names. Found repeated edge names: w\n\
         Consider using ``onnx.compose.add_prefix`` to add a prefix to names in one of the graphs."
    );
    // A prefix separates them; io_map names are given before prefixing.
    let g = merge_graphs(
        &g1,
        &g2,
        &[("c", "d")],
        &MergeOptions::default().prefix2("m2/"),
    )
    .unwrap();
    assert_eq!(g.node[2].input[0], "c");
    assert_eq!(g.node[3].input[1], "m2/w");
}

#[test]
fn overlapping_names_are_listed_by_category() {
    let mut g1 = chain("a", "b", "c", "w");
    let mut g2 = chain("a", "b", "c", "w");
    let sparse = |v: &str, i: &str| SparseTensorProto {
        values: Some(TensorProto::from_raw(
            v.to_string(),
            DataType::Float,
            [1],
            vec![0u8; 4],
        )),
        indices: Some(TensorProto::from_raw(
            i.to_string(),
            DataType::Int64,
            [1],
            vec![0u8; 8],
        )),
        ..SparseTensorProto::default()
    };
    g1.sparse_initializer.push(sparse("sv", "si"));
    g2.sparse_initializer.push(sparse("sv", "si"));
    let found = check_overlapping_names(&g1, &g2, &[("c", "a")]);
    let cats: Vec<_> = found.iter().map(|(c, n)| (c.as_str(), n.clone())).collect();
    assert_eq!(
        cats,
        [
            ("edge", vec!["b".to_string(), "w".into(), "c".into()]),
            ("value_info", vec!["b".into()]),
            ("initializer", vec!["w".into()]),
            ("sparse_initializer", vec!["sv".into(), "si".into()]),
        ]
    );
}

#[test]
fn inputs_and_outputs_kept_cut_the_graphs_down() {
    let mut g1 = chain("a", "b", "c", "w1");
    g1.output.push(vi("b"));
    let g2 = chain("d", "e", "f", "w2");
    let options = MergeOptions::default().outputs(["f"]);
    let g = merge_graphs(&g1, &g2, &[("c", "d")], &options).unwrap();
    assert_eq!(g.output.len(), 1);
    // The first graph was extracted (its name says so) before merging.
    assert_eq!(g.name(), "Extracted from {g_a}_g_d");
}

/// A payload source that counts the reads it serves.
struct Counting(AtomicUsize);

impl PayloadSource for Counting {
    fn fetch(&self, _offset: u64, len: u64) -> crate::Result<Bytes<'static>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(Bytes::from(vec![0u8; len as usize]))
    }
    fn describe(&self) -> String {
        "counting".into()
    }
}

#[test]
fn merging_and_prefixing_never_read_weights_left_on_disk() {
    let source = Arc::new(Counting(AtomicUsize::new(0)));
    let mut g1 = chain("a", "b", "c", "w1");
    g1.initializer[0].raw_data = None;
    g1.initializer[0].lazy_data = Some(LazyPayload::new(source.clone(), 0, 1 << 30));
    let g2 = chain("d", "e", "f", "w2");
    let m = merge_models(
        &model(g1),
        &model(g2),
        &[("c", "d")],
        &MergeOptions::default().prefix1("p/"),
    )
    .unwrap();
    let w = &m.graph.as_ref().unwrap().initializer[0];
    assert_eq!(w.name(), "p/w1");
    assert_eq!(w.lazy_data.as_ref().map(LazyPayload::len), Some(1 << 30));
    assert_eq!(source.0.load(Ordering::SeqCst), 0);
}

#[test]
fn merged_models_combine_opsets_metadata_and_functions() {
    let entry = |k: &str, v: &str| StringStringEntryProto {
        key: Some(Str::from(k.to_string())),
        value: Some(Str::from(v.to_string())),
        ..Default::default()
    };
    let mut m1 = model(chain("a", "b", "c", "w1"));
    let mut m2 = model(chain("d", "e", "f", "w2"));
    m2.opset_import.push(OperatorSetIdProto::new("com.x", 1));
    m1.metadata_props = vec![entry("k1", "v"), entry("k2", "x"), entry("k1", "v1")];
    m2.metadata_props = vec![entry("k3", "y"), entry("k1", "v1")];
    m1.functions.push(FunctionProto {
        name: Some("f1".into()),
        ..Default::default()
    });
    let m = merge_models(&m1, &m2, &[("c", "d")], &MergeOptions::default()).unwrap();
    let opsets: Vec<_> = m
        .opset_import
        .iter()
        .map(|o| (o.domain(), o.version()))
        .collect();
    assert_eq!(opsets, [("", 21), ("", 21), ("com.x", 1)]);
    let meta: Vec<_> = m
        .metadata_props
        .iter()
        .map(|e| (e.key(), e.value()))
        .collect();
    assert_eq!(meta, [("k1", "v1"), ("k2", "x"), ("k3", "y")]);
    assert_eq!(m.producer_name(), "onnx.compose.merge_models");
    assert_eq!((m.producer_version(), m.model_version()), ("1.0", 1));
    assert_eq!(m.domain, Some(Str::from("")));
    assert_eq!(m.functions.len(), 1);

    m2.metadata_props.push(entry("k2", "other"));
    let e = merge_models(&m1, &m2, &[("c", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        reason(e),
        "Can't merge models with different values for the same model metadata property. \
         Found: property = k2, with values x and other."
    );
    m2.metadata_props.pop();
    m2.functions = m1.functions.clone();
    let e = merge_models(&m1, &m2, &[("c", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        reason(e),
        "Can't merge models with overlapping local function names. Found in both graphs: f1"
    );
    m2.opset_import[0].version = Some(20);
    let e = merge_models(&m1, &m2, &[("c", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        reason(e),
        "Can't merge two models with different operator set ids for a given domain. \
         Got: [domain: \"\"\nversion: 21\n] and [domain: \"\"\nversion: 20\n, domain: \"com.x\"\nversion: 1\n]"
    );
    m2.ir_version = Some(7);
    let e = merge_models(&m1, &m2, &[("c", "d")], &MergeOptions::default()).unwrap_err();
    assert_eq!(
        reason(e),
        "IR version mismatch 14 != 7. Both models should have the same IR version"
    );
}

#[test]
fn prefixes_follow_the_chosen_kinds_of_names() {
    let mut g = chain("a", "b", "c", "w");
    // An optional output left empty stays empty.
    g.node[0].output.push(Str::from(""));
    let mut only_edges = g.clone();
    add_prefix_graph(
        &mut only_edges,
        "p/",
        &PrefixOptions::default()
            .nodes(false)
            .inputs(false)
            .outputs(false)
            .initializers(false)
            .value_infos(false),
    );
    // Edges: values written by nodes that are not graph outputs, wherever they appear.
    assert_eq!(only_edges.node[0].output, [Str::from("p/b"), Str::from("")]);
    assert_eq!(only_edges.node[1].input, [Str::from("p/b"), Str::from("w")]);
    assert_eq!(only_edges.node[1].output[0], "c");
    assert_eq!(only_edges.value_info[0].name(), "p/b");
    assert_eq!(only_edges.input[0].name(), "a");
    assert_eq!(only_edges.node[0].name(), "relu_a");

    add_prefix_graph(&mut g, "p/", &PrefixOptions::default());
    assert_eq!(g.input[0].name(), "p/a");
    assert_eq!(g.output[0].name(), "p/c");
    assert_eq!(g.initializer[0].name(), "p/w");
    assert_eq!(g.node[1].input, [Str::from("p/b"), Str::from("p/w")]);
    assert_eq!(g.node[0].name(), "p/relu_a");
}

#[test]
fn prefixing_nodes_renames_their_subgraphs_with_shared_names() {
    let mut g = chain("a", "b", "c", "w");
    let mut body = GraphProto::named("body");
    body.node.push(NodeProto::new("Add", ["b", "k"], ["z"]));
    body.output.push(vi("z"));
    g.node.push(
        NodeProto::new("If", ["b"], ["o"])
            .with_attribute(AttributeProto::graph("then_branch", body)),
    );
    // An unnamed node gets the empty name, set, as onnx's assignment sets it.
    g.node.push(NodeProto::new("Relu", ["o"], ["o2"]));
    let mut names = NameMap::new();
    add_prefix_graph_with(&mut g, "p/", &PrefixOptions::default(), &mut names);
    let sub = g.node[2].attribute[0].g.as_ref().unwrap();
    assert_eq!(sub.node[0].input, [Str::from("p/b"), Str::from("k")]);
    assert_eq!(sub.output[0].name(), "p/z");
    assert_eq!(g.node[3].name, Some(Str::from("")));
    assert_eq!(names.get("z"), Some("p/z"));
    assert_eq!(names.get("w"), Some("p/w"));
}

#[test]
fn prefixing_a_model_renames_its_functions_and_their_calls() {
    let mut m = model(chain("a", "b", "c", "w"));
    m.graph.as_mut().unwrap().node[0].op_type = Some("f".into());
    let mut inner = FunctionProto {
        name: Some("g".into()),
        ..Default::default()
    };
    inner.node.push(NodeProto::new("f", ["x"], ["y"]));
    m.functions.push(FunctionProto {
        name: Some("f".into()),
        ..Default::default()
    });
    m.functions.push(inner);
    add_prefix(&mut m, "p/", &PrefixOptions::default());
    assert_eq!(m.functions[0].name(), "p/f");
    assert_eq!(m.functions[1].node[0].op_type(), "p/f");
    assert_eq!(m.graph.as_ref().unwrap().node[0].op_type(), "p/f");
    add_prefix(&mut m, "q/", &PrefixOptions::default().functions(false));
    assert_eq!(m.functions[0].name(), "p/f");
}

#[test]
fn expanding_outputs_inserts_an_unsqueeze_per_output() {
    let mut g = chain("a", "b", "c", "w");
    g.output[0] = ValueInfoProto::tensor("c", DataType::Float, [Dimension::param("n"), 3.into()]);
    expand_out_dim_graph(&mut g, -1);
    assert_eq!(g.node[1].output[0], "c_collapsed_dim_-1");
    let constant = &g.node[2];
    assert_eq!(constant.op_type(), "Constant");
    assert_eq!(constant.name(), "g_a_expand_out_dim_idx-constant");
    let value = constant.attribute[0].t.as_ref().unwrap();
    assert_eq!(
        (value.name(), value.int64_data.as_slice()),
        ("g_a_expand_out_dim_idx-value", &[-1i64][..])
    );
    let unsqueeze = &g.node[3];
    assert_eq!(
        unsqueeze.input,
        [
            Str::from("c_collapsed_dim_-1"),
            Str::from("g_a_expand_out_dim_idx")
        ]
    );
    assert_eq!(unsqueeze.name(), "unsqueeze-c");
    // Python's list.insert(-1, 1): before the last dimension; a name reads as 0.
    assert_eq!(
        g.output[0].r#type.as_ref().unwrap().to_string(),
        "float[0,1,3]"
    );
    assert_eq!(insert_position(7, 2), 2);
    assert_eq!(insert_position(-7, 2), 0);
}

#[test]
fn graphs_nested_deeper_than_the_stack_allows_are_prefixed_and_merged() {
    let mut g = GraphProto::named("leaf");
    g.node.push(NodeProto::new("Identity", ["d"], ["z"]));
    for i in 0..20_000 {
        let mut outer = GraphProto::named(format!("level{i}"));
        outer.node.push(
            NodeProto::new("If", ["c"], ["o"])
                .with_attribute(AttributeProto::graph("then_branch", g)),
        );
        g = outer;
    }
    let mut second = chain("d", "e", "f", "w2");
    second.node.push(
        NodeProto::new("Loop", ["e"], ["k"]).with_attribute(AttributeProto::graph("body", g)),
    );
    let first = chain("a", "b", "c2", "w1");
    let mut merged =
        merge_graphs(&first, &second, &[("c2", "d")], &MergeOptions::default()).unwrap();
    add_prefix_graph(&mut merged, "p/", &PrefixOptions::default());
    let mut level = merged.node[4].attribute[0].g.as_deref().unwrap();
    while let Some(inner) = level.node[0].attribute.first() {
        level = inner.g.as_deref().unwrap();
    }
    assert_eq!(level.node[0].input[0], "p/c2");
    // Dropping a graph this deep recurses beyond the test thread's stack (the types'
    // drop is not guarded): the graphs are left to the end of the process.
    std::mem::forget(merged);
    std::mem::forget(second);
}
