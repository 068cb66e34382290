//! The `onnx-light` binary: every command, its output, and its error paths (exit 1 with
//! `error: ...` for bad input, exit 2 for usage errors, never a panic).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light_tests::scratch::Scratch;
use predicates::prelude::*;

fn cli() -> Command {
    Command::cargo_bin("onnx-light").unwrap()
}

/// A small model: two float initializers, one big enough to go external.
fn model() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 64]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 64]));
    let w: Vec<u8> = (0..64 * 64 * 4).map(|i| (i % 251) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [64, 64], w));
    g.initializer.push(TensorProto::from_raw(
        "b",
        DataType::Float,
        [64],
        vec![0u8; 256],
    ));
    g.node.push(NodeProto::new("MatMul", ["x", "w"], ["xw"]));
    g.node.push(NodeProto::new("Add", ["xw", "b"], ["y"]));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("cli-test".into());
    m.metadata_props
        .push(StringStringEntryProto::new("author", "tests"));
    m
}

/// Runs `onnx-light ARGS PATH`, expecting exit `code`, and parses what it printed as JSON.
fn json_output(args: &[&str], path: &Path, code: i32) -> serde_json::Value {
    let out = cli()
        .args(args)
        .arg(path)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

fn write_model(dir: &Scratch, name: &str) -> PathBuf {
    let p = dir.path(name);
    io::save(&model(), &p, &SerializeOptions::default()).unwrap();
    p
}

#[test]
fn info_json_describes_the_model() {
    let dir = Scratch::new("info");
    let p = write_model(&dir, "m.onnx");
    let v = json_output(&["info", "--json"], &p, 0);
    assert_eq!(v["ir_version"], 14);
    assert_eq!(v["producer_name"], "cli-test");
    assert_eq!(v["opset_import"][0]["domain"], "");
    assert_eq!(v["opset_import"][0]["version"], 21);
    assert_eq!(v["nodes"], 2);
    assert_eq!(v["initializers"], 2);
    assert_eq!(v["weight_bytes"], 64 * 64 * 4 + 256);
    assert_eq!(v["inputs"][0]["name"], "x");
    assert_eq!(v["inputs"][0]["elem_type"], "FLOAT");
    assert_eq!(v["inputs"][0]["type"], "float[1,64]");
    assert_eq!(v["tensors"], 2);
    assert_eq!(v["attribute_tensors"], 0);
    assert_eq!(v["file_bytes"], std::fs::metadata(&p).unwrap().len());
    assert_eq!(v["inputs"][0]["shape"], serde_json::json!([1, 64]));
    assert_eq!(v["outputs"][0]["name"], "y");
    assert_eq!(v["external_files"], serde_json::json!([]));
    assert_eq!(v["op_types"]["MatMul"], 1);
    assert_eq!(v["metadata"]["author"], "tests");
    // The text form mentions the same facts.
    cli()
        .arg("info")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("MatMul").and(predicate::str::contains("ai.onnx:21")));
}

/// Weights in `Constant` nodes, subgraphs, functions and sparse initializers count; types
/// print in ONNX notation; counts have thousands separators; empty tables are left out.
#[test]
fn info_counts_every_tensor_and_prints_types_in_onnx_notation() {
    let dir = Scratch::new("info-consts");
    let mut g = GraphProto::named("g");
    let dims = [Dimension::from("batch"), 3.into(), 224.into(), 224.into()];
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, dims));
    let mut seq = ValueInfoProto::scalar("s", DataType::Float);
    let map = TypeProto {
        value: Some(TypeValue::MapType(Box::new(TypeProtoMap {
            key_type_raw: Some(DataType::Int64.to_i32()),
            value_type: Some(Box::new(TypeProto::tensor(
                DataType::Float,
                Some(TensorShapeProto::default()),
            ))),
            ..TypeProtoMap::default()
        }))),
        ..TypeProto::default()
    };
    seq.r#type = Some(TypeProto {
        value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(map)),
            ..TypeProtoSequence::default()
        }))),
        ..TypeProto::default()
    });
    g.input.push(seq);
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1]));
    g.initializer
        .push(TensorProto::from_vec("w", [4], vec![1.0f32; 4]).unwrap()); // 16 B
    let big = TensorProto::from_vec("", [4000], vec![0.5f32; 4000]).unwrap(); // 16,000 B
    g.node.push(
        NodeProto::new("Constant", Vec::<&str>::new(), ["c"])
            .with_attribute(AttributeProto::tensor("value", big)),
    );
    let mut then = GraphProto::named("then");
    let small = TensorProto::from_vec("", [2], vec![7i64, 8]).unwrap(); // 16 B
    then.node.push(
        NodeProto::new("Constant", Vec::<&str>::new(), ["t"])
            .with_attribute(AttributeProto::tensor("value", small)),
    );
    g.node.push(
        NodeProto::new("If", ["cond"], ["z"])
            .with_attribute(AttributeProto::graph("then_branch", then)),
    );
    for i in 0..1233 {
        g.node.push(NodeProto::new(
            "Identity",
            [format!("a{i}")],
            [format!("b{i}")],
        ));
    }
    g.sparse_initializer.push(SparseTensorProto {
        values: Some(TensorProto::from_vec("sp", [2], vec![1.0f32, 2.0]).unwrap()), // 8 B
        indices: Some(TensorProto::from_vec("", [2], vec![0i64, 3]).unwrap()),      // 16 B
        dims: vec![10],
        ..SparseTensorProto::default()
    });
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let mut f = FunctionProto {
        name: Some("F".into()),
        domain: Some("local".into()),
        ..FunctionProto::default()
    };
    let d = TensorProto::from_vec("", [1], vec![2.5f64]).unwrap(); // 8 B
    f.node.push(
        NodeProto::new("Constant", Vec::<&str>::new(), ["k"])
            .with_attribute(AttributeProto::tensor("value", d)),
    );
    m.functions.push(f);
    let p = dir.path("m.onnx");
    io::save(&m, &p, &SerializeOptions::default()).unwrap();
    let file_bytes = std::fs::metadata(&p).unwrap().len();

    let v = json_output(&["info", "--json"], &p, 0);
    assert_eq!(v["weight_bytes"], 16 + 16_000 + 16 + 8 + 16 + 8);
    assert_eq!(v["tensors"], 6);
    assert_eq!(v["attribute_tensors"], 3);
    assert_eq!(v["initializers"], 1);
    assert_eq!(
        v["weight_bytes_by_type"],
        serde_json::json!({"FLOAT": 16 + 16_000 + 8, "INT64": 32, "DOUBLE": 8})
    );
    assert_eq!(v["file_bytes"], file_bytes);
    assert_eq!(v["inputs"][0]["type"], "float[batch,3,224,224]");
    assert_eq!(v["inputs"][1]["type"], "seq(map(int64, float))");
    assert_eq!(v["inputs"][1]["elem_type"], serde_json::Value::Null);
    assert_eq!(v["nodes"], 1235);

    let text = cli()
        .arg("info")
        .arg(&p)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    for want in [
        format!("file size     {} B (", {
            let s = file_bytes.to_string();
            let (a, b) = s.split_at(s.len() - 3);
            format!("{a},{b}")
        }),
        "input         x  float[batch,3,224,224]\n".to_string(),
        "input         s  seq(map(int64, float))\n".to_string(),
        "nodes         1,235\n".to_string(),
        "weights       16,064 B (15.7 KiB) in 6 tensors: 1 initializer, 3 in attributes, 2 elsewhere\n".to_string(),
        "float            3  16,024 B (15.6 KiB)\n".to_string(),
        "Identity  1,233\n".to_string(),
        "functions     local:F\n".to_string(),
    ] {
        assert!(text.contains(&want), "no {want:?} in\n{text}");
    }

    // A model with no weights and no nodes prints no empty tables.
    let empty = dir.path("empty.onnx");
    io::save(
        &ModelProto::new(
            GraphProto::named("e"),
            vec![OperatorSetIdProto::new("", 21)],
        ),
        &empty,
        &SerializeOptions::default(),
    )
    .unwrap();
    let text = cli()
        .arg("info")
        .arg(&empty)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("weights       0 B\n"), "{text}");
    assert!(
        !text.contains("data type") && !text.contains("op type") && !text.contains("---"),
        "{text}"
    );
}

#[test]
fn info_counts_external_weights_and_lists_their_files() {
    let dir = Scratch::new("info-ext");
    let p = write_model(&dir, "m.onnx");
    let out = dir.path("ext.onnx");
    cli()
        .args(["convert", "--external-data", "w.bin"])
        .arg(&p)
        .arg(&out)
        .assert()
        .success();
    let v = json_output(&["info", "--json"], &out, 0);
    assert_eq!(v["weight_bytes"], 64 * 64 * 4 + 256);
    assert_eq!(v["external_files"], serde_json::json!(["w.bin"]));
}

#[test]
fn show_prints_the_text_syntax_with_external_tensors_as_their_entries() {
    let dir = Scratch::new("show");
    let mut g = GraphProto::named("g");
    g.input.push(ValueInfoProto::tensor(
        "x",
        DataType::Float,
        [Dimension::from("n"), 2.into()],
    ));
    g.output.push(ValueInfoProto::tensor(
        "y",
        DataType::Float,
        [Dimension::from("n"), 2.into()],
    ));
    g.initializer
        .push(TensorProto::from_vec("b", [2], vec![0.5f32, 1e-4]).unwrap());
    let big: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    g.initializer
        .push(TensorProto::from_vec("w", [1024], big).unwrap());
    g.node
        .push(NodeProto::new("Add", ["x", "b"], ["y"]).with_name("add 1"));
    let p = dir.path("m.onnx");
    io::save(
        &ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]),
        &p,
        &SerializeOptions::default(),
    )
    .unwrap();
    let ext = dir.path("ext.onnx");
    cli()
        .args(["convert", "--external-data", "w.bin"])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    let out = cli()
        .arg("show")
        .arg(&ext)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let expected = "<\n   ir_version: 14,\n   opset_import: [\"\" : 21]\n>\n\
        g (float[n,2] x) => (float[n,2] y) \n   \
        <float[2] b =  {0.5,1e-04}, float[1024] w = [\"location\": \"w.bin\", \"offset\": \"0\", \"length\": \"4096\"]>\n\
        {\n   [\"add 1\"] y = Add (x, b)\n}\n";
    assert_eq!(text, expected);

    // Inline weights: cut after 16 values by default, all of them with --full.
    let show = |full: bool| {
        let mut c = cli();
        c.arg("show");
        if full {
            c.arg("--full");
        }
        let out = c.arg(&p).assert().success().get_output().stdout.clone();
        String::from_utf8(out).unwrap()
    };
    let short = show(false);
    assert!(
        short.contains("float[1024] w =  {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,... 1008 more}"),
        "{short}"
    );
    assert!(short.contains("float[2] b =  {0.5,1e-04}"), "{short}");
    let full = show(true);
    let all: Vec<String> = (0..1024).map(|i| i.to_string()).collect();
    assert!(full.contains(&format!("float[1024] w =  {{{}}}", all.join(","))));
    assert!(!full.contains("more}"));
}

#[test]
fn convert_without_options_is_byte_identical_and_round_trips_external_layouts() {
    let dir = Scratch::new("convert");
    let p = write_model(&dir, "m.onnx");
    let same = dir.path("same.onnx");
    cli().arg("convert").arg(&p).arg(&same).assert().success();
    assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&same).unwrap());
    // The weights are copied from the input file: over the input itself too, with any
    // thread count.
    let original = std::fs::read(&p).unwrap();
    for threads in ["1", "2"] {
        cli()
            .args(["convert", "--force", "--no-sync", "--threads", threads])
            .arg(&same)
            .arg(&same)
            .assert()
            .success();
        assert_eq!(std::fs::read(&same).unwrap(), original);
    }
    let ext = dir.path("ext.onnx");
    cli()
        .args([
            "convert",
            "--external-data",
            "data.bin",
            "--size-threshold",
            "1k",
            "--align",
            "4k",
            "--max-file-size",
            "8KiB",
            "--threads",
            "2",
        ])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    assert!(dir.path("data.bin").exists());
    let back = dir.path("back.onnx");
    cli()
        .args(["convert", "--inline"])
        .arg(&ext)
        .arg(&back)
        .assert()
        .success();
    assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&back).unwrap());
    // --no-sync skips the fsyncs only: the same bytes.
    let fast = dir.path("fast.onnx");
    cli()
        .args(["convert", "--no-sync", "--inline"])
        .arg(&ext)
        .arg(&fast)
        .assert()
        .success();
    assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&fast).unwrap());
}

#[test]
fn convert_refuses_an_existing_output_unless_forced() {
    let dir = Scratch::new("exists");
    let p = write_model(&dir, "m.onnx");
    let out = dir.path("out.onnx");
    std::fs::write(&out, b"precious").unwrap();
    cli()
        .arg("convert")
        .arg(&p)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: ").and(predicate::str::contains("--force")));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    cli()
        .args(["convert", "--force"])
        .arg(&p)
        .arg(&out)
        .assert()
        .success();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&p).unwrap());
    // A directory as OUTPUT is named as such, with or without --force, by every command
    // that writes one.
    let sub = dir.path("sub");
    std::fs::create_dir(&sub).unwrap();
    for args in [
        vec!["convert", "--force"],
        vec!["encrypt", "--force"],
        vec!["decrypt", "--force"],
    ] {
        cli()
            .args(args)
            .arg(&p)
            .arg(&sub)
            .env("ONNX_LIGHT_PASSPHRASE", "pw")
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "sub is a directory; give a file name",
            ));
    }
    cli()
        .arg("sample")
        .arg(&sub)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is a directory"));
    assert!(sub.is_dir());
}

#[test]
fn check_passes_valid_models_and_reports_every_problem() {
    let dir = Scratch::new("check");
    let p = write_model(&dir, "m.onnx");
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("byte-identical"));
    // External data with a truncated file and a length mismatch: both reported.
    let ext = dir.path("ext.onnx");
    cli()
        .args([
            "convert",
            "--external-data",
            "w.bin",
            "--size-threshold",
            "1",
        ])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    // No tensor records a checksum: said so, not "0 verified".
    cli()
        .args(["check", "--checksums"])
        .arg(&ext)
        .assert()
        .success()
        .stdout(predicate::str::contains("checksums: none to verify"));
    let data = std::fs::read(dir.path("w.bin")).unwrap();
    std::fs::write(dir.path("w.bin"), &data[..100]).unwrap();
    cli().arg("check").arg(&ext).assert().code(1).stderr(
        predicate::str::contains("tensor `w`")
            .and(predicate::str::contains("tensor `b`"))
            .and(predicate::str::contains("past the end")),
    );
    // A missing data file is one line per kind of problem, naming every tensor it
    // concerns, not a line per tensor per pass; --json still lists each rule problem
    // with its path (and the file problem once).
    std::fs::remove_file(dir.path("w.bin")).unwrap();
    let out = cli()
        .arg("check")
        .arg(&ext)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].contains("cannot be read")
            && lines[0].contains("(at `graph.initializer[0] \"w\"`, `graph.initializer[1] \"b\"`)"),
        "{stderr}"
    );
    assert!(lines[1].contains("(tensors `w`, `b`)"), "{stderr}");
    assert_eq!(
        lines[2],
        "verdict: 3 problems (2 kinds) — the model is not valid"
    );
    let v = json_output(&["check", "--json"], &ext, 1);
    let problems = v["problems"].as_array().unwrap();
    let paths: Vec<&str> = problems
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "graph.initializer[0] \"w\"",
            "graph.initializer[1] \"b\"",
            ""
        ],
        "{v:#}"
    );
}

#[test]
fn check_accepts_a_valid_model_in_non_canonical_encoding_with_a_note() {
    let dir = Scratch::new("check-noncanonical");
    let canonical = model().encode_to_vec().unwrap();
    // ModelProto.ir_version (the first record) moved to the end, after a producer_name
    // that the file's own producer_name (later) replaces: valid, as another encoder
    // might write it, and not what we write.
    let (first, rest) = canonical.split_at(2);
    assert_eq!(first[0], 0x08, "ir_version first");
    let mut bytes = vec![0x12, 3, b'o', b'l', b'd'];
    bytes.extend_from_slice(rest);
    bytes.extend_from_slice(first);
    let p = dir.path("other.onnx");
    std::fs::write(&p, &bytes).unwrap();
    let loaded: Model = io::load(&p).unwrap();
    assert_eq!(loaded, model());
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .success()
        .stdout(
            predicate::str::contains(
                "note: the file is not in canonical encoding (first difference at byte 0)",
            )
            .and(predicate::str::contains("valid")),
        )
        .stderr(predicate::str::is_empty());
}

#[test]
fn check_compares_a_large_model_with_its_file_through_the_end() {
    let dir = Scratch::new("check-large-round-trip");
    let mut m = model();
    let big: Vec<u8> = (0..3 << 20).map(|i| (i % 253) as u8).collect();
    m.graph
        .as_mut()
        .unwrap()
        .initializer
        .push(TensorProto::from_raw(
            "big",
            DataType::Uint8,
            [3 << 20],
            big,
        ));
    let canonical = m.encode_to_vec().unwrap();
    let p = dir.path("m.onnx");
    std::fs::write(&p, &canonical).unwrap();
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("round trip: byte-identical"));
    // The same bytes and then ir_version again, as an over-long varint of the same value:
    // the model loads the same; the files agree up to where ours ends.
    let ir = m.ir_version.unwrap();
    assert!(ir < 0x80);
    let mut longer = canonical.clone();
    longer.extend_from_slice(&[0x08, 0x80 | ir as u8, 0x00]);
    std::fs::write(&p, &longer).unwrap();
    assert_eq!(io::load(&p).unwrap(), m);
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "not in canonical encoding (first difference at byte {})",
            canonical.len()
        )));
}

#[test]
fn check_verifies_checksums_on_request() {
    let dir = Scratch::new("checksums");
    let p = write_model(&dir, "m.onnx");
    let ext = dir.path("ext.onnx");
    cli()
        .args(["convert", "--external-data", "w.bin"])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    let mut m =
        io::load_with(&ext, &io::ParseOptions::default().load_external_data(false)).unwrap();
    m.visit_tensors_mut(|_, t| {
        if t.is_external() {
            t.external_data
                .push(StringStringEntryProto::new("checksum", "0".repeat(40)));
        }
    });
    io::save(&m, &ext, &SerializeOptions::default()).unwrap();
    cli().arg("check").arg(&ext).assert().success();
    cli()
        .args(["check", "--checksums"])
        .arg(&ext)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("checksum mismatch"));
}

#[test]
fn hostile_external_paths_are_reported_not_followed() {
    let dir = Scratch::new("hostile");
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto {
        name: Some("evil".into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims: vec![4],
        data_location: Some(DataLocation::External.into()),
        external_data: vec![StringStringEntryProto::new("location", "../../etc/passwd")],
        ..TensorProto::default()
    });
    let p = dir.path("evil.onnx");
    std::fs::write(&p, ModelProto::new(g, vec![]).encode_to_vec().unwrap()).unwrap();
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`..` component"));
    cli().arg("info").arg(&p).assert().success();
    let out = dir.path("out.onnx");
    cli()
        .args(["convert", "--inline"])
        .arg(&p)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("error: ").and(predicate::str::contains("evil")));
    assert!(!out.exists());
}

#[test]
fn bad_inputs_give_one_error_line_and_exit_1_never_a_panic() {
    let dir = Scratch::new("bad");
    let missing = dir.path("missing.onnx");
    let garbage = dir.path("garbage.onnx");
    std::fs::write(&garbage, [0xffu8, 0xff, 0xff, 0x0f, 0x07]).unwrap();
    let truncated = dir.path("truncated.onnx");
    let bytes = model().encode_to_vec().unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for path in [&missing, &dir.0, &garbage, &truncated] {
        for cmd in [
            vec!["info"],
            vec!["show"],
            vec!["check"],
            vec!["tour"],
            vec!["bench", "--runs", "1"],
        ] {
            let out = dir.path("out.onnx");
            let mut c = cli();
            c.args(&cmd).arg(path);
            let assert = c.assert().code(1);
            let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
            assert!(
                stderr.starts_with("error: "),
                "{cmd:?} {}: {stderr}",
                path.display()
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
            let _ = out;
        }
        cli()
            .arg("convert")
            .arg(path)
            .arg(dir.path("out.onnx"))
            .assert()
            .code(1);
        assert!(!dir.path("out.onnx").exists());
    }
}

#[test]
fn usage_errors_exit_2() {
    cli().arg("no-such-command").assert().code(2);
    cli().args(["convert", "only-one-arg"]).assert().code(2);
    cli()
        .args(["convert", "a", "b", "--inline", "--external-data", "x"])
        .assert()
        .code(2);
    cli()
        .args([
            "convert",
            "a",
            "b",
            "--external-data",
            "x",
            "--align",
            "4 furlongs",
        ])
        .assert()
        .code(2);
    // Counts out of range are refused before anything runs: no bench of zero runs
    // reported as one, no sample of 4 TB built in memory.
    let dir = Scratch::new("usage");
    cli()
        .args(["bench", "m.onnx", "--runs", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 is not in 1.."));
    cli()
        .arg("sample")
        .arg(dir.path("big.onnx"))
        .args(["--layers", "100000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("100000 is not in 0..=1000"));
    assert!(!dir.path("big.onnx").exists());
}

#[test]
fn usage_errors_found_after_parsing_exit_2_and_name_the_flag() {
    let dir = Scratch::new("usage-late");
    let p = write_model(&dir, "m.onnx");
    let out = dir.path("out.onnx");
    let convert = |args: &[&str]| {
        let mut c = cli();
        c.arg("convert").arg(&p).arg(&out).args(args);
        c
    };
    for (args, said) in [
        (
            vec!["--external-data", "w.bin", "--align", "100"],
            "invalid --align: 100 is not a power of two",
        ),
        (
            vec!["--external-data", "w.bin", "--max-file-size", "0"],
            "invalid --max-file-size: must be at least 1 byte",
        ),
        (vec!["--align", "4k"], "need --external-data NAME"),
        (
            vec!["--external-data", "out.onnx"],
            "names the output model itself",
        ),
        (vec!["--external-data", "m.onnx"], "names the input model"),
    ] {
        let assert = convert(&args).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with(&format!("error: {said}")) || stderr.contains(said),
            "{args:?}: {stderr}"
        );
        // The library's names of the options never reach the user.
        for name in ["alignment", "max_file_size", "external_data.location"] {
            assert!(!stderr.contains(name), "{args:?}: {stderr}");
        }
        assert!(!out.exists() && !dir.path("w.bin").exists(), "{args:?}");
    }
    // Checked before anything else, an existing output included.
    std::fs::write(&out, "x").unwrap();
    convert(&["--external-data", "w.bin", "--align", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--align"));
    std::fs::remove_file(&out).unwrap();
    let key = dir.path("key.txt");
    std::fs::write(&key, "k").unwrap();
    cli()
        .args(["encrypt", "--format", "rot13", "--passphrase-file"])
        .arg(&key)
        .arg(&p)
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown --format \"rot13\""));
    let empty = dir.path("empty.txt");
    std::fs::write(&empty, "\n").unwrap();
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&out)
        .arg("--passphrase-file")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: invalid passphrase: is empty",
        ));
    use std::os::unix::ffi::OsStrExt;
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&out)
        .env(
            "ONNX_LIGHT_PASSPHRASE",
            std::ffi::OsStr::from_bytes(b"\xff\xfe"),
        )
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not valid UTF-8"));
    assert!(!out.exists());
}

#[test]
fn runtime_failures_exit_1_in_the_tools_words() {
    let dir = Scratch::new("runtime");
    let p = write_model(&dir, "m.onnx");
    let out = dir.path("out.onnx");
    // A missing input, a missing passphrase file, an existing output.
    cli()
        .arg("convert")
        .arg(dir.path("missing.onnx"))
        .arg(&out)
        .assert()
        .code(1);
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&out)
        .arg("--passphrase-file")
        .arg(dir.path("missing.txt"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot read the passphrase file"));
    std::fs::write(&out, "x").unwrap();
    cli()
        .arg("convert")
        .arg(&p)
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("pass --force"));
    std::fs::remove_file(&out).unwrap();
    // A limit is named by its flag, not by the library's option.
    cli()
        .args(["info", "--max-memory", "100"])
        .arg(&p)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("decoded size (--max-memory) of"))
        .stderr(predicate::str::contains("max_memory").not());
    // An encrypted model: what to run, not the library function to call.
    let enc = dir.path("m.enc");
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&enc)
        .env("ONNX_LIGHT_PASSPHRASE", "k")
        .assert()
        .success();
    cli()
        .arg("info")
        .arg(&enc)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the input is an encrypted model (ONNXAE01); decrypt it first",
        ))
        .stderr(predicate::str::contains("load_encrypted").not())
        .stderr(predicate::str::contains(
            "hint: for a plain model: onnx-light decrypt",
        ));
}

#[test]
fn quiet_silences_everything_but_errors() {
    let dir = Scratch::new("quiet");
    let p = write_model(&dir, "m.onnx");
    cli()
        .args(["--quiet", "convert"])
        .arg(&p)
        .arg(dir.path("o.onnx"))
        .assert()
        .success()
        .stdout("")
        .stderr("");
    cli()
        .args(["check", "-q"])
        .arg(&p)
        .assert()
        .success()
        .stdout("");
}

#[test]
fn progress_never_reaches_a_stderr_that_is_not_a_terminal() {
    // Every command that shows progress on a terminal, each kind of long step: stderr is
    // a pipe here, so it stays empty (and so it does with --quiet).
    let dir = Scratch::new("no-progress");
    let p = write_model(&dir, "m.onnx");
    let steps: Vec<Vec<&str>> = vec![
        vec!["sample", "--layers", "0", "s.onnx"],
        vec!["convert", "m.onnx", "x.onnx", "--external-data", "x.bin"],
        vec!["convert", "x.onnx", "kept.onnx"],
        vec!["convert", "x.onnx", "inline.onnx", "--inline"],
        vec!["check", "x.onnx", "--checksums"],
        vec!["encrypt", "m.onnx", "m.enc"],
        vec!["decrypt", "m.enc", "d.onnx"],
        vec!["decrypt", "m.enc", "e.onnx", "--external-data", "e.bin"],
    ];
    for quiet in [false, true] {
        // Quiet, the steps that take no time in a test build: not the sample, a hundred
        // megabytes built in memory, nor the key derivations.
        let cheap = |args: &&Vec<&str>| !["sample", "encrypt", "decrypt"].contains(&args[0]);
        for args in steps.iter().filter(|a| !quiet || cheap(a)) {
            let mut c = cli();
            c.current_dir(dir.dir())
                .env("ONNX_LIGHT_PASSPHRASE", "k")
                .args(args);
            if args[0] != "check" {
                c.arg("--force");
            }
            if quiet {
                c.arg("--quiet");
            }
            let out = c.assert().success();
            assert_eq!(
                String::from_utf8_lossy(&out.get_output().stderr),
                "",
                "{args:?}"
            );
        }
    }
    assert_eq!(io::load(dir.path("d.onnx")).unwrap(), io::load(&p).unwrap());
}

#[test]
fn bench_runs_on_a_given_model() {
    let dir = Scratch::new("bench");
    let p = write_model(&dir, "m.onnx");
    let v = json_output(&["bench", "--json", "--runs", "2"], &p, 0);
    assert!(v["results"].as_array().unwrap().len() >= 6);
    // Bench never modifies the model it is given.
    assert_eq!(std::fs::read(&p).unwrap(), model().encode_to_vec().unwrap());
}

#[test]
fn sample_writes_the_built_in_model() {
    let dir = Scratch::new("sample");
    let p = dir.path("s.onnx");
    cli()
        .args(["sample", "--layers", "1"])
        .arg(&p)
        .assert()
        .success();
    let m = io::load_with(&p, &io::ParseOptions::default().structure_only(true)).unwrap();
    assert!(m.tensors().len() >= 8);
    // A valid model by the rules of onnx.checker: operators of its opset, their
    // attributes, every input produced before it is used.
    cli()
        .arg("check")
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "onnx rules: passed (model IR version",
        ));
    cli()
        .args(["sample", "--layers", "1"])
        .arg(&p)
        .assert()
        .code(1);
}

#[test]
fn encrypt_and_decrypt_round_trip_with_a_passphrase_file_or_the_environment() {
    let dir = Scratch::new("crypt");
    let p = write_model(&dir, "m.onnx");
    let key = dir.path("key.txt");
    std::fs::write(&key, "correct horse battery staple\n").unwrap();
    let enc = dir.path("m.enc");
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&enc)
        .arg("--passphrase-file")
        .arg(&key)
        .assert()
        .success();
    assert!(std::fs::read(&enc).unwrap().starts_with(b"ONNXAE01"));
    // The environment works too (the file's trailing newline is not part of it).
    let out = dir.path("out.onnx");
    cli()
        .arg("decrypt")
        .arg(&enc)
        .arg(&out)
        .env("ONNX_LIGHT_PASSPHRASE", "correct horse battery staple")
        .assert()
        .success()
        .stdout(predicate::str::contains("authenticated"));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&p).unwrap());
    // ONNXCRY1 on request, reported as unauthenticated.
    let cry = dir.path("m.cry");
    cli()
        .args(["encrypt", "--format", "onnxcry1"])
        .arg(&p)
        .arg(&cry)
        .arg("--passphrase-file")
        .arg(&key)
        .assert()
        .success();
    assert!(std::fs::read(&cry).unwrap().starts_with(b"ONNXCRY1"));
    let out2 = dir.path("out2.onnx");
    cli()
        .arg("decrypt")
        .arg(&cry)
        .arg(&out2)
        .arg("--passphrase-file")
        .arg(&key)
        .assert()
        .success()
        .stdout(predicate::str::contains("not authenticated"));
    assert_eq!(std::fs::read(&out2).unwrap(), std::fs::read(&p).unwrap());
}

#[test]
fn a_wrong_passphrase_fails_cleanly_and_leaves_no_output() {
    let dir = Scratch::new("wrongpass");
    let p = write_model(&dir, "m.onnx");
    let enc = dir.path("m.enc");
    cli()
        .arg("encrypt")
        .arg(&p)
        .arg(&enc)
        .env("ONNX_LIGHT_PASSPHRASE", "right")
        .assert()
        .success();
    let out = dir.path("out.onnx");
    let assert = cli()
        .arg("decrypt")
        .arg(&enc)
        .arg(&out)
        .env("ONNX_LIGHT_PASSPHRASE", "wrong")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.starts_with("error: ") && stderr.contains("passphrase"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("wrong\n") && !stderr.contains("\"wrong\""),
        "the passphrase leaked: {stderr}"
    );
    assert!(!out.exists());
    // Not an encrypted file at all: a clear error.
    cli()
        .arg("decrypt")
        .arg(&p)
        .arg(&out)
        .env("ONNX_LIGHT_PASSPHRASE", "right")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not an encrypted"));
    // No passphrase source and no terminal: an error, not a hang.
    cli()
        .arg("decrypt")
        .arg(&enc)
        .arg(&out)
        .env_remove("ONNX_LIGHT_PASSPHRASE")
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no passphrase"));
    // The passphrase is never an argument.
    cli()
        .args(["encrypt", "--passphrase", "x"])
        .arg(&p)
        .arg(dir.path("x.enc"))
        .assert()
        .code(2);
}

#[test]
fn check_lists_the_first_hundred_problems_of_a_kind_and_counts_the_rest() {
    let dir = Scratch::new("check-bounded");
    // 1000 copies of one metadata key (999 repeats), and a chain of 1000 Relu nodes
    // stored last first (999 inputs not defined before their node).
    let mut m = model();
    for _ in 0..1000 {
        m.metadata_props.push(StringStringEntryProto::new("k", ""));
    }
    let g = m.graph.as_mut().unwrap();
    let mut chain: Vec<NodeProto<'static>> = (0..1000)
        .map(|i| {
            let input = if i == 0 {
                "y".to_string()
            } else {
                format!("r{i}")
            };
            NodeProto::new("Relu", [input], [format!("r{}", i + 1)])
        })
        .collect();
    chain.reverse();
    g.node.extend(chain);
    let path = dir.path("bounded.onnx");
    io::save(&m, &path, &SerializeOptions::default()).unwrap();

    let out = cli()
        .arg("check")
        .arg(&path)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // One line for the repeated key (100 places kept) and one for the rest of that
    // kind; the nodes out of order are one root cause, counted past the 100 kept.
    assert_eq!(
        lines[0],
        r#"error: the key appears more than once (at `model.metadata_props[2] "k"`, `model.metadata_props[3] "k"`, `model.metadata_props[4] "k"` and 97 more)"#
    );
    assert_eq!(lines[1], "error: ... and 899 more of this kind");
    assert!(lines[2].starts_with("error: the nodes are not in topological order"));
    assert!(
        stderr
            .replace("\n  ", " ")
            .contains("and 998 more nodes use values produced after them"),
        "{stderr}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("verdict: 1,998 problems (2 kinds) — the model is not valid")
    );

    let v = json_output(&["check", "--json"], &path, 1);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 200, "{v:#}");
    assert_eq!(problems[99]["more"], 899);
    assert_eq!(problems[199]["more"], 899);
    assert_eq!(problems[0]["more"], 0);
}

#[test]
fn check_applies_the_onnx_rules_and_lists_every_problem_as_json() {
    let dir = Scratch::new("check-rules");
    let good = write_model(&dir, "good.onnx");
    let v = json_output(&["check", "--json"], &good, 0);
    assert_eq!(v["valid"], true);
    assert_eq!(v["problems"].as_array().unwrap().len(), 0);

    // Nodes out of order, and an attribute of the wrong type.
    let mut m = model();
    let g = m.graph.as_mut().unwrap();
    g.node.swap(0, 1);
    g.node[1] = NodeProto::new("MatMul", ["x", "w"], ["xw"])
        .with_name("mm")
        .with_attribute(AttributeProto::int("transA", 1));
    let bad = dir.path("bad.onnx");
    io::save(&m, &bad, &SerializeOptions::default()).unwrap();
    let out = cli()
        .arg("check")
        .arg(&bad)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr).replace("\n  ", " ");
    assert!(
        stderr.contains(
            "error: the nodes are not in topological order: node at index 0 uses `xw`, \
             which node `mm` (index 1) produces later\n"
        ) && stderr
            .contains(r#"graph.node[1] "mm".attribute transA: MatMul-13 has no attribute transA"#),
        "{stderr}"
    );
    let v = json_output(&["check", "--json"], &bad, 1);
    assert_eq!(v["valid"], false);
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{v:#}");
    assert_eq!(problems[0]["path"], "graph.node[0]");
    assert_eq!(
        problems[1]["path"],
        r#"graph.node[1] "mm".attribute transA"#
    );

    // An empty file is not a model.
    let empty = dir.path("empty.onnx");
    std::fs::write(&empty, b"").unwrap();
    cli()
        .arg("check")
        .arg(&empty)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not an ONNX model: it is empty"));
}

#[test]
fn files_that_are_not_models_are_named_with_what_they_are() {
    let dir = Scratch::new("not_a_model");
    let readme = dir.path("README.md");
    std::fs::write(&readme, "# Notes\n\nNothing to see.\n").unwrap();
    let empty = dir.path("empty.onnx");
    std::fs::write(&empty, b"").unwrap();
    let png = dir.path("picture.onnx");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    for (path, what) in [(&readme, "text"), (&empty, "empty"), (&png, "PNG image")] {
        for cmd in ["info", "check", "show"] {
            let out = cli()
                .arg(cmd)
                .arg(path)
                .assert()
                .code(1)
                .get_output()
                .clone();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("not an ONNX model") && stderr.contains(what),
                "{cmd} {}: {stderr}",
                path.display()
            );
            assert!(out.stdout.is_empty(), "{cmd} printed a model for {what}");
        }
    }
}

#[test]
fn a_bare_model_path_suggests_info_and_errors_are_said_once() {
    let dir = Scratch::new("bare");
    let p = write_model(&dir, "m.onnx");
    let out = cli().arg(&p).assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "hint: to describe the model: onnx-light info {}",
            p.display()
        )),
        "{stderr}"
    );
    // A missing file: the I/O error once, not again as its own cause.
    let out = cli()
        .arg("info")
        .arg(dir.path("missing.onnx"))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("caused by"), "{stderr}");
    // Every positional argument has a help text.
    for command in [
        "info", "show", "check", "convert", "encrypt", "decrypt", "sample", "bench",
    ] {
        let out = cli()
            .args([command, "--help"])
            .assert()
            .success()
            .get_output()
            .clone();
        let help = String::from_utf8_lossy(&out.stdout);
        let arguments = help.split("Arguments:").nth(1).unwrap_or_default();
        let arguments = arguments.split("Options:").next().unwrap_or_default();
        for line in arguments
            .lines()
            .filter(|l| l.trim_start().starts_with('<'))
        {
            assert!(line.trim().contains("  "), "{command}: no help for {line}");
        }
    }
}

#[test]
fn infer_shapes_with_data_prop_carries_a_symbolic_dimension_through_a_computed_shape() {
    // y = Reshape(x, Concat(Shape(x)[0:1], [-1])) with x of shape [batch, 3, 4]: without
    // data propagation only the rank of y is known.
    let mut g = GraphProto::named("g");
    g.input.push(ValueInfoProto::tensor(
        "x",
        DataType::Float,
        [Dimension::param("batch"), 3.into(), 4.into()],
    ));
    for (name, value) in [("zero", 0i64), ("one", 1), ("minus_one", -1)] {
        g.initializer
            .push(TensorProto::from_vec(name, [1], vec![value]).unwrap());
    }
    g.node.push(NodeProto::new("Shape", ["x"], ["s"]));
    g.node
        .push(NodeProto::new("Slice", ["s", "zero", "one"], ["n"]));
    g.node.push(
        NodeProto::new("Concat", ["n", "minus_one"], ["target"])
            .with_attribute(AttributeProto::int("axis", 0)),
    );
    g.node
        .push(NodeProto::new("Reshape", ["x", "target"], ["y"]));
    g.output.push(ValueInfoProto {
        name: Some("y".into()),
        ..Default::default()
    });
    let m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let dir = Scratch::new("infer-shapes-data-prop");
    let p = dir.path("m.onnx");
    io::save(&m, &p, &SerializeOptions::default()).unwrap();
    let output_type = |path: &Path| {
        let typed = io::load(path).unwrap();
        let y = &typed.graph.as_ref().unwrap().output[0];
        y.r#type.as_ref().unwrap().to_string()
    };
    let plain = dir.path("plain.onnx");
    cli()
        .args(["infer-shapes"])
        .arg(&p)
        .arg(&plain)
        .assert()
        .success();
    assert_eq!(output_type(&plain), "float[unk__0,unk__1]");
    let propagated = dir.path("propagated.onnx");
    cli()
        .args(["infer-shapes", "--data-prop"])
        .arg(&p)
        .arg(&propagated)
        .assert()
        .success();
    // The batch name comes through; the -1 next to a name stays unknown, as in onnx.
    assert_eq!(output_type(&propagated), "float[batch,unk__0]");
}

#[test]
fn infer_shapes_records_types_keeps_weights_in_place_and_refuses_conflicts_when_strict() {
    let dir = Scratch::new("infer-shapes");
    let p = write_model(&dir, "m.onnx");
    let out = dir.path("typed.onnx");
    cli()
        .args(["infer-shapes"])
        .arg(&p)
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "inferred the types of 1 value; wrote",
        ));
    let typed = io::load(&out).unwrap();
    let g = typed.graph.as_ref().unwrap();
    assert_eq!(g.value_info[0].name(), "xw");
    assert_eq!(
        g.value_info[0].r#type.as_ref().unwrap().to_string(),
        "float[1,64]"
    );
    assert_eq!(g.initializer, model().graph.unwrap().initializer);
    // External data keeps its layout.
    let ext = dir.path("ext.onnx");
    cli()
        .args(["convert", "--external-data", "ext.data"])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    cli()
        .args(["infer-shapes", "--force"])
        .arg(&ext)
        .arg(&ext)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 external data file: ext.data"));
    let again = io::load(&ext).unwrap();
    assert_eq!(again.graph.as_ref().unwrap().value_info.len(), 1);

    // A declared output type inference contradicts: skipped by default, an error with
    // --strict (and with `check --full`), naming the node.
    let mut m = model();
    m.graph.as_mut().unwrap().output[0] = ValueInfoProto::tensor("y", DataType::Float, [1, 32]);
    let bad = dir.path("bad.onnx");
    io::save(&m, &bad, &SerializeOptions::default()).unwrap();
    cli()
        .args(["infer-shapes"])
        .arg(&bad)
        .arg(dir.path("lax.onnx"))
        .assert()
        .success();
    cli()
        .args(["infer-shapes", "--strict"])
        .arg(&bad)
        .arg(dir.path("strict.onnx"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "(Add, node 1 \"\"): Inferred shape and existing shape differ in dimension 1: (64) vs (32)",
        ));
    assert!(!Path::new(&dir.path("strict.onnx")).exists());
    cli().args(["check"]).arg(&bad).assert().success();
    cli()
        .args(["check", "--full"])
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "shape inference: [ShapeInferenceError]",
        ));
    cli()
        .args(["check", "--full"])
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("shape inference: passed"));
}

#[test]
fn convert_to_another_opset_keeps_external_data_and_refuses_what_onnx_refuses() {
    let dir = Scratch::new("convert-opset");
    let p = write_model(&dir, "m.onnx");
    let ext = dir.path("ext.onnx");
    cli()
        .args(["convert", "--external-data", "ext.data"])
        .arg(&p)
        .arg(&ext)
        .assert()
        .success();
    let down = dir.path("up.onnx");
    cli()
        .args(["convert", "--opset", "24"])
        .arg(&ext)
        .arg(&down)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "converted from opset 21 to 24 of the ONNX domain",
        ))
        .stdout(predicate::str::contains("1 external data file: ext.data"));
    let converted = io::load(&down).unwrap();
    assert_eq!(converted.opset_import[0].version(), 24);
    assert_eq!(
        converted.graph.as_ref().unwrap().initializer,
        model().graph.unwrap().initializer
    );
    // The types onnx's converter records: the intermediate value's.
    assert_eq!(converted.graph.as_ref().unwrap().value_info[0].name(), "xw");

    // A Gelu cannot go below its first version: exit 1, nothing written.
    let mut m = model();
    m.graph.as_mut().unwrap().node[1] = NodeProto::new("Gelu", ["xw"], ["y"]);
    let gelu = dir.path("gelu.onnx");
    io::save(&m, &gelu, &SerializeOptions::default()).unwrap();
    cli()
        .args(["convert", "--opset", "18"])
        .arg(&gelu)
        .arg(dir.path("gelu18.onnx"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "No Previous Version of Gelu exists",
        ));
    assert!(!Path::new(&dir.path("gelu18.onnx")).exists());
}
