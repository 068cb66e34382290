//! The ONNX text format against the official `onnx` package (`onnx.printer`,
//! `onnx.parser`, onnx 1.23 in the test venv):
//!
//! * every model of the backend node-test corpus prints character for character as
//!   `onnx.printer.to_text` prints it (one Python process prints them all);
//! * random float and double values (every exponent, subnormals, NaN, infinities) print
//!   as the printer's `std::to_chars` prints them;
//! * printing a model the printer refuses (raw data of the wrong size) is an error too.

mod onnx_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::text;
use onnx_light_tests::python::{python_dir, run_python};
use onnx_light_tests::scratch::Scratch;

use onnx_support::corpus::corpus_dir;
use onnx_support::describe_text_diff;

/// Every corpus model: `(test name, file bytes)`, sorted by name.
fn corpus_models() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(corpus_dir())
        .expect("list the corpus")
        .map(|e| e.expect("directory entry").path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let model = dir.join("model.onnx");
        if model.is_file() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, fs::read(&model).expect("read a corpus model")));
        }
    }
    out
}

/// What `onnx.printer` prints for each model file: `Ok(text)` or `Err(message)`, by name.
fn onnx_prints(
    files: &[(String, &Path)],
    scratch: &Scratch,
) -> BTreeMap<String, Result<String, String>> {
    let list = scratch.path("models.list");
    let out_dir = scratch.path("printed");
    fs::create_dir_all(&out_dir).unwrap();
    let lines: Vec<String> = files
        .iter()
        .map(|(name, path)| format!("{name}\t{}", path.display()))
        .collect();
    fs::write(&list, lines.join("\n") + "\n").unwrap();
    run_python(
        &python_dir().join("text_format.py"),
        &["print".as_ref(), list.as_os_str(), out_dir.as_os_str()],
    );
    let mut out = BTreeMap::new();
    for (name, _) in files {
        let txt = out_dir.join(format!("{name}.txt"));
        let err = out_dir.join(format!("{name}.err"));
        let result = if txt.exists() {
            Ok(fs::read_to_string(&txt).unwrap())
        } else {
            Err(fs::read_to_string(&err)
                .unwrap_or_else(|_| panic!("text_format.py wrote nothing for {name}")))
        };
        out.insert(name.clone(), result);
    }
    out
}

#[test]
fn corpus_models_print_as_onnx_printer_prints_them() {
    let models = corpus_models();
    assert!(models.len() > 1000, "only {} corpus models", models.len());
    let scratch = Scratch::new("text-corpus");
    let files: Vec<(String, std::path::PathBuf)> = models
        .iter()
        .map(|(name, _)| (name.clone(), corpus_dir().join(name).join("model.onnx")))
        .collect();
    let refs: Vec<(String, &Path)> = files
        .iter()
        .map(|(n, p)| (n.clone(), p.as_path()))
        .collect();
    let expected = onnx_prints(&refs, &scratch);
    let mut failures = Vec::new();
    for (name, bytes) in &models {
        let model = Model::decode_owned(bytes).expect("decode a corpus model");
        let ours = text::to_text(&model).map_err(|e| e.to_string());
        match (&expected[name], ours) {
            (Ok(want), Ok(got)) if *want == got => {}
            (Ok(want), Ok(got)) => {
                failures.push(format!("{name}: {}", describe_text_diff(want, &got)))
            }
            (Err(_), Err(_)) => {}
            (want, got) => failures.push(format!("{name}: onnx {want:?}, ours {got:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus models print differently:\n{}",
        failures.len(),
        models.len(),
        failures.join("\n")
    );
}

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn float_model(floats: &[f32], doubles: &[f64]) -> Model {
    let mut g = GraphProto::named("floats");
    let raw32: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    let raw64: Vec<u8> = doubles.iter().flat_map(|v| v.to_le_bytes()).collect();
    g.initializer.push(TensorProto::from_raw(
        "f",
        DataType::Float,
        [floats.len() as i64],
        raw32,
    ));
    g.initializer.push(TensorProto::from_raw(
        "d",
        DataType::Double,
        [doubles.len() as i64],
        raw64,
    ));
    let mut typed = TensorProto {
        name: Some("typed".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![64],
        ..TensorProto::default()
    };
    typed.float_data = floats[..64].to_vec();
    g.initializer.push(typed);
    g.node.push(
        NodeProto::new("Foo", ["x"], ["y"])
            .with_attribute(AttributeProto::floats("fs", &floats[..256]))
            .with_attribute(AttributeProto::float("f", floats[7])),
    );
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[test]
fn random_floats_print_as_cpp_to_chars_prints_them() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut floats: Vec<f32> = (0..60_000)
        .map(|_| f32::from_bits(rng.next() as u32))
        .collect();
    let mut doubles: Vec<f64> = (0..60_000).map(|_| f64::from_bits(rng.next())).collect();
    // Values of everyday magnitudes, round decimals, powers of ten and the edges.
    for i in 0..20_000u64 {
        let r = rng.next();
        floats.push((r % 2_000_001) as f32 / 1000.0 - 1000.0);
        doubles.push((r % 2_000_001) as f64 / 1000.0 - 1000.0);
        let e = (i % 80) as i32 - 40;
        floats.push(10f32.powi(e) * ((r >> 32) % 10) as f32);
        doubles.push(10f64.powi(e * 8) * ((r >> 32) % 10) as f64);
    }
    floats.extend([
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        f32::EPSILON,
        1e-45,
        -0.0,
        0.0,
    ]);
    doubles.extend([
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        5e-324,
        -0.0,
    ]);
    let model = float_model(&floats, &doubles);
    let scratch = Scratch::new("text-floats");
    let path = scratch.path("floats.onnx");
    fs::write(&path, model.encode_to_vec().unwrap()).unwrap();
    let expected = onnx_prints(&[("floats".into(), path.as_path())], &scratch);
    let want = expected["floats"]
        .as_ref()
        .expect("onnx prints the float model");
    let got = text::to_text(&model).unwrap();
    if *want != got {
        // Report the first differing values, not just the first differing byte.
        let w: Vec<&str> = want.split([',', '{', '}', '[', ']']).collect();
        let g: Vec<&str> = got.split([',', '{', '}', '[', ']']).collect();
        let diffs: Vec<String> = w
            .iter()
            .zip(&g)
            .filter(|(a, b)| a != b)
            .take(20)
            .map(|(a, b)| format!("onnx {a:?} ours {b:?}"))
            .collect();
        panic!("floats print differently:\n{}", diffs.join("\n"));
    }
}

#[test]
fn raw_data_of_the_wrong_size_is_refused_like_the_printer_does() {
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "w",
        DataType::Float,
        [3],
        vec![0u8; 8],
    ));
    let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let err = text::to_text(&model).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            onnx_light::ErrorKind::TensorDataMismatch {
                expected: 12,
                actual: 8,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.tensor(), Some("w"));
    let scratch = Scratch::new("text-bad-raw");
    let path = scratch.path("bad.onnx");
    fs::write(&path, model.encode_to_vec().unwrap()).unwrap();
    let expected = onnx_prints(&[("bad".into(), path.as_path())], &scratch);
    assert!(
        expected["bad"].is_err(),
        "onnx.printer accepted it: {:?}",
        expected["bad"]
    );
}
