//! `onnx-light check` on nodes out of topological order: one root cause naming the
//! first node that uses a value before it is produced and its producer, how many more
//! nodes do so, a value produced nowhere still its own error, and a verdict line last.

use std::path::PathBuf;

use assert_cmd::Command;
use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;

fn cli() -> Command {
    Command::cargo_bin("onnx-light").unwrap()
}

/// `y = relu(relu(x·w + b) + x·w)`, five named nodes in topological order.
fn model() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 4]));
    g.initializer
        .push(TensorProto::from_vec("w", [4, 4], vec![0.5f32; 16]).unwrap());
    g.initializer
        .push(TensorProto::from_vec("b", [4], vec![1.0f32; 4]).unwrap());
    g.node
        .push(NodeProto::new("MatMul", ["x", "w"], ["h0"]).with_name("n0"));
    g.node
        .push(NodeProto::new("Add", ["h0", "b"], ["h1"]).with_name("n1"));
    g.node
        .push(NodeProto::new("Relu", ["h1"], ["h2"]).with_name("n2"));
    g.node
        .push(NodeProto::new("Add", ["h2", "h0"], ["h3"]).with_name("n3"));
    g.node
        .push(NodeProto::new("Relu", ["h3"], ["y"]).with_name("n4"));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

/// The model with its nodes listed last first, as a tool that does not sort them
/// may write it (onnxruntime sorts them as it loads the model).
fn reversed(mut m: Model) -> Model {
    m.graph.as_mut().unwrap().node.reverse();
    m
}

fn save(dir: &Scratch, name: &str, m: &Model) -> PathBuf {
    let p = dir.path(name);
    io::save(m, &p, &SerializeOptions::default()).unwrap();
    p
}

/// `check PATH`: its exit code, stdout and stderr.
fn check(path: &PathBuf) -> (i32, String, String) {
    let out = cli().arg("check").arg(path).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Lines wrapped by `check` joined back into one.
fn unwrapped(text: &str) -> String {
    text.replace("\n  ", " ")
}

#[test]
fn nodes_out_of_order_are_one_root_cause_naming_the_first_user_and_its_producer() {
    let dir = Scratch::new("order-reversed");
    let p = save(&dir, "reversed.onnx", &reversed(model()));
    let (code, _, stderr) = check(&p);
    assert_eq!(code, 1, "{stderr}");
    // Four nodes use values produced after them (five uses: `n3` uses two).
    let said = unwrapped(&stderr);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines,
        [
            "error: the nodes are not in topological order: node `n4` (index 0) uses \
             `h3`, which node `n3` (index 1) produces later, and 3 more nodes use values \
             produced after them",
            "hint: onnxruntime sorts the nodes itself as it loads a model, but \
             onnx.checker requires them stored in topological order, each after the \
             nodes producing its inputs: the nodes must be sorted (onnx-light does not \
             reorder them)",
            "verdict: 4 problems (1 kind) — the model is not valid",
        ],
        "{stderr}"
    );
    // Printed under 80 columns, and no line per input left undefined.
    for l in stderr.lines() {
        assert!(l.chars().count() < 80, "{} columns: {l}", l.chars().count());
    }
    assert!(!stderr.contains("is not defined before"), "{stderr}");
}

#[test]
fn an_input_produced_nowhere_stays_its_own_error() {
    let dir = Scratch::new("order-missing");
    let mut m = reversed(model());
    // `n1` (index 3 once reversed) adds a value nothing produces.
    m.graph.as_mut().unwrap().node[3].input[1] = "ghost".into();
    let p = save(&dir, "missing.onnx", &m);
    let (code, _, stderr) = check(&p);
    assert_eq!(code, 1, "{stderr}");
    let said = unwrapped(&stderr);
    assert!(
        said.contains(
            "error: the nodes are not in topological order: node `n4` (index 0) uses \
             `h3`, which node `n3` (index 1) produces later, and 3 more nodes"
        ),
        "{stderr}"
    );
    assert!(
        said.contains(
            "error: graph.node[3] \"n1\": input 'ghost' is not defined before the node \
             (not a graph input, initializer, or output of an earlier node)"
        ),
        "{stderr}"
    );
    assert_eq!(
        said.lines().last(),
        Some("verdict: 5 problems (2 kinds) — the model is not valid"),
        "{stderr}"
    );
}

#[test]
fn a_subgraph_using_a_value_produced_later_is_its_enclosing_node_out_of_order() {
    let dir = Scratch::new("order-subgraph");
    // `If` returns `t` from either branch; `t` is produced after it.
    let branch = |name: &str| {
        let mut b = GraphProto::named(name.to_string());
        let out = format!("{name}_out");
        b.node
            .push(NodeProto::new("Identity", ["t"], [out.clone()]));
        b.output
            .push(ValueInfoProto::tensor(out, DataType::Float, [1, 4]));
        b
    };
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 4]));
    g.input
        .push(ValueInfoProto::tensor("c", DataType::Bool, [1]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 4]));
    g.node.push(
        NodeProto::new("If", ["c"], ["y"])
            .with_name("choose")
            .with_attribute(AttributeProto::graph("then_branch", branch("then")))
            .with_attribute(AttributeProto::graph("else_branch", branch("else"))),
    );
    g.node
        .push(NodeProto::new("Relu", ["x"], ["t"]).with_name("relu"));
    let m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let p = save(&dir, "subgraph.onnx", &m);
    let (code, _, stderr) = check(&p);
    assert_eq!(code, 1, "{stderr}");
    let said = unwrapped(&stderr);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines[0],
        "error: the nodes are not in topological order: node `choose` (index 0) uses \
         `t` in a subgraph, which node `relu` (index 1) produces later",
        "{stderr}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("verdict: 1 problem (1 kind) — the model is not valid"),
        "{stderr}"
    );
}

#[test]
fn a_valid_model_ends_with_the_verdict_that_it_is_valid() {
    let dir = Scratch::new("order-valid");
    let p = save(&dir, "valid.onnx", &model());
    let (code, stdout, stderr) = check(&p);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(
        stdout.lines().last(),
        Some("verdict: the model is valid"),
        "{stdout}"
    );
}

#[test]
fn json_lists_each_use_with_the_node_that_produces_it() {
    let dir = Scratch::new("order-json");
    let p = save(&dir, "reversed.onnx", &reversed(model()));
    let out = cli()
        .args(["check", "--json"])
        .arg(&p)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["valid"], false);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 5, "{v:#}");
    assert_eq!(problems[0]["path"], "graph.node[0] \"n4\"");
    assert_eq!(
        problems[0]["message"],
        "input 'h3' is not defined before the node: node[1] \"n3\" produces it later \
         (the nodes are not in topological order)"
    );
}

/// `check --json | head -1`: the reader goes away before the report is written; the
/// tool ends quietly instead of panicking on the broken pipe.
#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let dir = Scratch::new("check-pipe");
    let path = save(&dir, "r.onnx", &reversed(model()));
    for args in [&["check", "--json"][..], &["check"], &["info"]] {
        let bin = assert_cmd::cargo::cargo_bin("onnx-light");
        let mut child = std::process::Command::new(bin)
            .args(args)
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The read end is closed before anything was read.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {stderr}");
    }
}
