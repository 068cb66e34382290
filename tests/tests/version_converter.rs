//! The version converter against `onnx.version_converter.convert_version` (the test
//! venv's onnx), byte for byte, on every backend node-test model converted to opsets
//! 11, 13, 18 and 21 and down to 9: each case must give the same model bytes, or both
//! must refuse. The agreement is printed; the few known disagreements are listed in
//! [`KNOWN`] and anything beyond them fails the test.

mod onnx_support;

use std::ffi::OsStr;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::version_converter::convert_version;
use onnx_light_tests::python::{python_dir, run_python};
use onnx_light_tests::scratch::Scratch;

use onnx_support::corpus::corpus_dir;
use onnx_support::describe_diff;

/// The opset versions every model is converted to.
const TARGETS: &[i64] = &[11, 13, 18, 21, 9];

/// Cases (`model.target`) where onnx-light and onnx disagree, each for a documented
/// reason.
const KNOWN: &[&str] = &[];

/// Environment variable naming a directory of onnx's results to reuse.
const REUSE_ENV: &str = "ONNX_LIGHT_VC_EXPECTED";

#[test]
fn conversions_agree_with_onnx_on_the_backend_corpus() {
    let corpus = corpus_dir();
    let dir = Scratch::new("version-converter");
    // onnx's results: computed now, or read from a directory an earlier run of
    // `tests/python/version_converter.py` filled (named by REUSE_ENV).
    let (out, onnx_seconds) = match std::env::var_os(REUSE_ENV) {
        Some(reuse) if !reuse.is_empty() => (std::path::PathBuf::from(reuse), f64::NAN),
        _ => {
            let out = dir.path("expected");
            let mut args: Vec<&OsStr> = vec![corpus.as_os_str(), out.as_os_str()];
            let targets: Vec<String> = TARGETS.iter().map(i64::to_string).collect();
            args.extend(targets.iter().map(OsStr::new));
            let output = run_python(&python_dir().join("version_converter.py"), &args);
            let seconds = String::from_utf8_lossy(&output.stdout)
                .lines()
                .last()
                .and_then(|l| l.trim().parse::<f64>().ok())
                .unwrap_or(f64::NAN);
            (out, seconds)
        }
    };

    let mut cases: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.onnx").is_file())
        .collect();
    cases.sort();
    let mut agree = 0usize;
    let mut total = 0usize;
    let mut details = Vec::new();
    let mut ours_seconds = 0.0f64;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = fs::read(case.join("model.onnx")).unwrap();
        let model = Model::decode_owned(&bytes).unwrap();
        for target in TARGETS {
            total += 1;
            let key = format!("{name}.{target}");
            let expected = fs::read(out.join(format!("{key}.expected"))).ok();
            let start = Instant::now();
            let ours = catch_unwind(AssertUnwindSafe(|| {
                convert_version(&model, *target).map(|m| m.encode_to_vec().unwrap())
            }));
            ours_seconds += start.elapsed().as_secs_f64();
            let verdict = match (ours, expected) {
                (Err(_), _) => Err("panicked".to_owned()),
                (Ok(Err(_)), None) => Ok(()),
                (Ok(Ok(ours)), Some(expected)) => match describe_diff(&expected, &ours) {
                    None => Ok(()),
                    Some(diff) => Err(format!("different model: {diff}")),
                },
                (Ok(Err(e)), Some(_)) => Err(format!("we refuse, onnx converts: {e}")),
                (Ok(Ok(_)), None) => Err(format!(
                    "we convert, onnx refuses: {}",
                    fs::read_to_string(out.join(format!("{key}.error"))).unwrap_or_default()
                )),
            };
            match verdict {
                Ok(()) => agree += 1,
                Err(why) => {
                    details.push(format!("{key}: {why}"));
                }
            }
        }
    }
    println!(
        "version converter: {agree} of {total} cases agree with onnx ({:.2}%); \
         conversion time: onnx {onnx_seconds:.2} s, onnx-light {ours_seconds:.2} s",
        100.0 * agree as f64 / total as f64
    );
    for d in &details {
        println!("  {d}");
    }
    let unexpected: Vec<_> = details
        .iter()
        .filter(|d| !KNOWN.iter().any(|k| d.starts_with(&format!("{k}:"))))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} cases disagree with onnx beyond the known ones:\n{}",
        unexpected.len(),
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(agree > 0 && total > 0);
}

/// A structure-only load converts without reading its weights: the initializers stay
/// lazy through the conversion, and saving the converted model fetches them from the
/// source file, byte for byte.
#[test]
fn structure_only_models_convert_without_reading_their_weights() {
    use onnx_light::io::{self, ParseOptions, SerializeOptions};

    let dir = Scratch::new("version-converter-lazy");
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 65536]));
    let w: Vec<u8> = (0..65536 * 4).map(|i| (i % 253) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [65536], w));
    g.initializer.push(TensorProto::from_raw(
        "axes",
        DataType::Int64,
        [1],
        0i64.to_le_bytes().to_vec(),
    ));
    // PRelu is the same operator at opsets 12 to 15.
    g.node.push(NodeProto::new("PRelu", ["x", "w"], ["xw"]));
    g.node
        .push(NodeProto::new("Unsqueeze", ["xw", "axes"], ["y"]));
    g.output.push(ValueInfoProto {
        name: Some("y".into()),
        ..Default::default()
    });
    let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 13)]);
    let path = dir.path("m.onnx");
    io::save(&model, &path, &SerializeOptions::default()).unwrap();

    let options = ParseOptions::default().structure_only(true);
    let lazy = io::load_with(&path, &options).unwrap();
    let up = convert_version(&lazy, 15).unwrap();
    let w = &up.graph.as_ref().unwrap().initializer[0];
    assert!(w.raw_data.is_none() && w.lazy_data.is_some());
    let out = dir.path("up.onnx");
    io::save(&up, &out, &SerializeOptions::default()).unwrap();
    let full = convert_version(&io::load(&path).unwrap(), 15).unwrap();
    assert_eq!(fs::read(&out).unwrap(), full.encode_to_vec().unwrap());

    // Going below 13 reads the axes' values: a structure-only load keeps such small
    // constants, so it converts as a full load does, the weights still lazy.
    let down = convert_version(&lazy, 12).unwrap();
    let g = down.graph.as_ref().unwrap();
    assert_eq!(g.node[1].attribute("axes").unwrap().ints, [0]);
    assert_eq!(g.initializer.len(), 1);
    assert!(g.initializer[0].lazy_data.is_some());
    let full = convert_version(&io::load(&path).unwrap(), 12).unwrap();
    let out = dir.path("down.onnx");
    io::save(&down, &out, &SerializeOptions::default()).unwrap();
    assert_eq!(fs::read(&out).unwrap(), full.encode_to_vec().unwrap());
}
