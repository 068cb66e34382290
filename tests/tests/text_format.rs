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

/// Every model file under `dir`, recursively, sorted.
fn onnx_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            onnx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "onnx") {
            out.push(p);
        }
    }
}

/// The other models the `onnx` package ships: real architectures (`light`: ResNet,
/// Inception, DenseNet, ... with their weights), models converted from PyTorch, simple
/// ones. They print as the printer prints them and parse as the parser parses that.
#[test]
fn shipped_real_models_print_and_parse_as_onnx_does() {
    let out = run_python(&python_dir().join("text_format.py"), &["datadir".as_ref()]);
    let data = std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap());
    let mut files = Vec::new();
    for sub in ["light", "pytorch-converted", "pytorch-operator", "simple"] {
        onnx_files(&data.join(sub), &mut files);
    }
    assert!(
        files.len() > 100,
        "only {} models under {}",
        files.len(),
        data.display()
    );
    let named: Vec<(String, &Path)> = files
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&data).unwrap().to_string_lossy();
            (
                rel.replace(['/', '\\'], "__")
                    .trim_end_matches(".onnx")
                    .to_string(),
                p.as_path(),
            )
        })
        .collect();
    let scratch = Scratch::new("text-real");
    let expected = onnx_prints(&named, &scratch);
    let mut failures = Vec::new();
    let mut texts = BTreeMap::new();
    for (name, path) in &named {
        let model = Model::decode_owned(&fs::read(path).unwrap()).expect("decode a shipped model");
        match (&expected[name], text::to_text(&model)) {
            (Ok(want), Ok(got)) if *want == got => {
                texts.insert(name.clone(), got);
            }
            (Ok(want), Ok(got)) => {
                failures.push(format!("{name}: {}", describe_text_diff(want, &got)))
            }
            (Err(_), Err(_)) => {}
            (want, got) => {
                failures.push(format!("{name}: onnx {want:?}, ours {:?}", got.map(|_| ())))
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} models print differently:\n{}",
        failures.len(),
        named.len(),
        failures.join("\n")
    );
    let failures = compare_parses(&texts, true, &scratch);
    assert!(
        failures.is_empty(),
        "{} of {} texts parse differently:\n{}",
        failures.len(),
        texts.len(),
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

// ---------------------------------------------------------------------------------------
// The parser against `onnx.parser`.

/// What `onnx.parser` gives for each text: the serialized model (or graph, for names
/// starting with `graph_`), or its error message.
fn onnx_parses(
    texts: &BTreeMap<String, String>,
    scratch: &Scratch,
) -> BTreeMap<String, Result<Vec<u8>, String>> {
    let in_dir = scratch.path("texts");
    let out_dir = scratch.path("parsed");
    fs::create_dir_all(&in_dir).unwrap();
    fs::create_dir_all(&out_dir).unwrap();
    for (name, text) in texts {
        fs::write(in_dir.join(format!("{name}.txt")), text).unwrap();
    }
    run_python(
        &python_dir().join("text_format.py"),
        &["parse".as_ref(), in_dir.as_os_str(), out_dir.as_os_str()],
    );
    texts
        .keys()
        .map(|name| {
            let pb = out_dir.join(format!("{name}.pb"));
            let r = if pb.exists() {
                Ok(fs::read(&pb).unwrap())
            } else {
                Err(fs::read_to_string(out_dir.join(format!("{name}.err")))
                    .unwrap_or_else(|_| panic!("text_format.py wrote nothing for {name}")))
            };
            (name.clone(), r)
        })
        .collect()
}

/// Our parse of a text, encoded: `Ok(bytes)` or `Err((line, column, message))`.
fn our_parse(name: &str, text: &str) -> Result<Vec<u8>, (usize, usize, String)> {
    let r = if name.starts_with("graph_") {
        text::parse_graph(text).map(|g| g.encode_to_vec().unwrap())
    } else {
        text::parse_model(text).map(|m| m.encode_to_vec().unwrap())
    };
    r.map_err(|e| (e.line(), e.column(), e.to_string()))
}

/// `(line, column)` of an `onnx.parser` ParseError message, when it has one.
fn onnx_error_position(message: &str) -> Option<(usize, usize)> {
    let rest = message.split("(line: ").nth(1)?;
    let (line, rest) = rest.split_once(" column: ")?;
    let (column, _) = rest.split_once(')')?;
    Some((line.parse().ok()?, column.parse().ok()?))
}

/// Compares our parse of every text with `onnx.parser`'s: the same bytes when it accepts,
/// an error when it refuses (at the same line and column when it names one and
/// `positions` is set). Returns the failures.
fn compare_parses(
    texts: &BTreeMap<String, String>,
    positions: bool,
    scratch: &Scratch,
) -> Vec<String> {
    let expected = onnx_parses(texts, scratch);
    let mut failures = Vec::new();
    for (name, text) in texts {
        match (&expected[name], our_parse(name, text)) {
            (Ok(want), Ok(got)) => {
                if *want != got {
                    failures.push(format!(
                        "{name}: different bytes: {}\n  text: {text:?}",
                        onnx_support::describe_diff(want, &got).unwrap_or_default()
                    ));
                }
            }
            (Err(msg), Err((line, column, ours))) => {
                if let (true, Some(pos)) = (positions, onnx_error_position(msg)) {
                    if pos != (line, column) {
                        failures.push(format!(
                            "{name}: onnx error at {pos:?}, ours at {:?}\n  onnx: {msg}\n  ours: {ours}\n  text: {text:?}",
                            (line, column)
                        ));
                    }
                }
            }
            (Ok(_), Err(e)) => failures.push(format!(
                "{name}: onnx accepts, we refuse: {e:?}\n  text: {text:?}"
            )),
            (Err(msg), Ok(_)) => failures.push(format!(
                "{name}: onnx refuses ({msg}), we accept\n  text: {text:?}"
            )),
        }
    }
    failures
}

#[test]
fn corpus_texts_parse_as_onnx_parser_parses_them_and_print_back_identically() {
    let mut texts = BTreeMap::new();
    let mut reprinted = Vec::new();
    for (name, bytes) in corpus_models() {
        let model = Model::decode_owned(&bytes).unwrap();
        let Ok(text) = text::to_text(&model) else {
            continue;
        };
        if let Ok(parsed) = text::parse_model(&text) {
            let again = text::to_text(&parsed).expect("a parsed model prints");
            if again != text {
                reprinted.push(format!("{name}: {}", describe_text_diff(&text, &again)));
            }
        }
        texts.insert(name, text);
    }
    assert!(
        reprinted.is_empty(),
        "{} texts print differently after parsing:\n{}",
        reprinted.len(),
        reprinted.join("\n")
    );
    let scratch = Scratch::new("text-parse-corpus");
    let failures = compare_parses(&texts, true, &scratch);
    assert!(
        failures.is_empty(),
        "{} of {} corpus texts:\n{}",
        failures.len(),
        texts.len(),
        failures.join("\n")
    );
}

/// Hand-written texts over the whole syntax, the parser's leniencies and its errors.
const TEXTS: &[(&str, &str)] = &[
    ("basic", r#"<ir_version: 10, opset_import: ["" : 21, "com.microsoft" : 1], producer_name: "me", producer_version: "1.0", domain: "ai.x", model_version: 3, doc_string: "a \"doc\"", metadata_props: ["k": "v", "k2": "v2"]>
agraph (float[N, 128] X, float[128, 10] W) => (float[N, 10] C) {
    T = MatMul(X, W)
    C = Relu(T)
}"#),
    ("comments", "# a comment\n<ir_version: 8 # trailing\n, opset_import: [\"\" : 18]>\ng (float x) => (float y) {\n  y = Identity(x) # done\n}\n# end"),
    ("types", r#"<ir_version: 9, opset_import: ["" : 18]> g (float[] a, int64 b, seq(float[?]) c, map(int64, seq(double)) d, optional(seq(string[2])) e, sparse_tensor(float[3,n]) f, sparse_tensor(int8) h, opaque() i, opaque(nm) j, opaque(ai.onnx.ml, nm) k, opaque(a.b.c) l, bfloat16["batch size", 3] m, float8e4m3fn[1] n, uint2[?] o, float6e3m2[2] p) => (q) { q = Identity(a) }"#),
    ("initializers", r#"<ir_version: 9, opset_import: ["" : 18]> g (float[2] x = {1.5, -2}, int64[3] i) => (float[2] y)
    <float[2] w = {0.1, 1e-5}, int64[2] k = {-9223372036854775808, 9223372036854775807}, uint64[2] u = {18446744073709551615, -1},
     uint32[1] u32 = {7}, int8[3] i8 = {-1, 127, 300}, bool[2] b = {1, 0}, string[2] s = {"a", "b\"c"}, double[3] d = {1e300, -0, 5e-324},
     float16[1] h = {15360}, complex64[1] c = {1, 2}, complex128[1] c2 = {3, 4}, float[2] nf = {nan, -inf}, float[1] e = ["location": "w.bin", "offset": "0"],
     float[0] z = {}, float[2] none, int4[2] i4 = {1, -1}, float t>
{ y = Add(x, w) }"#),
    ("attributes", r#"<ir_version: 9, opset_import: ["" : 18, "x" : 1]> g (float x) => (float y) {
    [n1] a = Foo <i = 1, f = 2.5, f2: float = 3, s = "str", ints = [1, 2, -3], floats = [1.5, 2], floats2: floats = [1, 2], strs = ["a", "b"], empty: ints = [], t = float[2] {1, 2}, t2 = int64 named = {5}, t3 = float[1] = {7}, tp = float[2], tp2 = seq(int64), ref: int = @r, ref2 = @"quoted", inf = inf, ninf = -Infinity, nn = NaN> (x)
    ["node 2"] b, c = x.y.Bar:ov (a, , "q r", )
    d = Baz (x) <after = 1>
    e = Qux <gs: graphs = [g1 () => () {}], ts: tensors = [float[1] {1}], lst = [float, int64[2]]> (x)
    y = If (c) <then_branch = then () => (float t) { t = Identity(x) }, else_branch = else () => (float t) { t = Neg(x) }>
}"#),
    ("functions", r#"<ir_version: 9, opset_import: ["" : 18, "local" : 1]> g (float x) => (float y) { y = local.F <alpha = 2.0> (x) }
<domain: "local", opset_import: ["" : 18], doc_string: "fn", overload: "o1">
F <alpha, beta: float = 1.5, "gamma"> (float[N] X, Y) => (Z, float W) <float tmp> {
    tmp = Mul(X, Y)
    Z = Add(tmp, X)
    W = Identity(Z)
}
<domain: "local", opset_import: []> G () => () {}"#),
    ("odd_ids", "<ir_version: 9, opset_import: [\"\" : 18]> \"my graph\" (float \"x 1\") => (float y) { [\"\"] y = Identity(\"x 1\") }"),
    ("numbers", r#"<ir_version: 9, opset_import: ["" : 18]> g () => () <float[6] a = {1., 1.e5, 00012, 3.4028235e38, 1e-50, -0.0}, double[2] b = {1.7976931348623157e308, 2.5E-3}, int64[1] c = {-0}> {}"#),
    ("no_header", "g (float x) => (float y) { y = Abs(x) }"),
    ("graph_ignores_trailing", "g (float x) => (float y) { y = Abs(x) } and then anything"),
    // Errors.
    ("err_empty", ""),
    ("err_unclosed_node", "g (float[N] X) => (float[N] Y) {\n  Y = Relu(X\n}"),
    ("err_bad_keyword", "<ir_versions: 7> g () => () {}"),
    ("err_trailing", "g () => () {} trailing"),
    ("err_float_overflow", "g () => () <float[1] w = {1e39}> {}"),
    ("err_double_overflow", "g () => () <double[1] w = {1e309}> {}"),
    ("err_int_range", "g () => () <int32[1] w = {2147483648}> {}"),
    ("err_int64_range", "g () => () <int64[1] w = {9223372036854775808}> {}"),
    ("err_uint64_range", "g () => () <uint64[1] w = {18446744073709551616}> {}"),
    ("err_space_after_minus", "g () => () <int64[1] w = {- 5}> {}"),
    ("err_exponent", "g () => () <float[1] w = {1e}> {}"),
    ("err_leading_point", "g (x) => (y) {\n y = F <f = .5> (x)\n}"),
    ("err_string", "g () => () { y = F <s = \"abc> (x) }"),
    ("err_mixed_list", "g (x) => (y) { y = F <l = [1, 2.5]> (x) }"),
    ("err_empty_list", "g (x) => (y) { y = F <l = []> (x) }"),
    ("err_singleton_list", "g (x) => (y) { y = F <l: int = []> (x) }"),
    ("err_type_mismatch", "g (x) => (y) { y = F <l: int = \"s\"> (x) }"),
    ("err_unknown_attr_type", "g (x) => (y) { y = F <l: integer = 1> (x) }"),
    ("err_map_key", "g (map(seq, float) x) => (y) {}"),
    ("err_sparse_elem", "g (sparse_tensor(seq(float)) x) => (y) {}"),
    ("err_unknown_type", "g (x) => (y) { y = F <t: type_proto = floaty> (x) }"),
    ("err_symbolic_dim", "g () => () <float[N] w = {1}> {}"),
    ("err_unknown_rank", "g () => () <float[] w = {1}> {}"),
    ("err_not_tensor", "g (seq(float) x = {1}) => () {}"),
    ("err_arrow_space", "g () = > () {}"),
    ("err_sparse_attr", "g (x) => (y) { y = Constant <sparse_value: sparse_tensor = > () }"),
    ("err_ellipsis", "g () => () <complex64[1] w = ...> {}"),
    ("err_bad_inf", "g (x) => (y) { y = F <f = infinit> (x) }"),
    ("err_missing_brace", "<ir_version: 9>\ng (x) => (y)\n  y = F(x)\n"),
    ("err_unhandled_function_keyword", "g () => () {} <ir_version: 3> f () => () {}"),
    ("err_function_bad_attr_is_skipped", "g () => () {} <domain: \"d\"> f <a = > () => () {}"),
    ("err_function_attr_exception", "g () => () {} <domain: \"d\"> f <a = 99999999999999999999> () => () {}"),
];

#[test]
fn hand_written_texts_parse_as_onnx_parser_parses_them() {
    let texts: BTreeMap<String, String> = TEXTS
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    let scratch = Scratch::new("text-parse-hand");
    let failures = compare_parses(&texts, true, &scratch);
    assert!(
        failures.is_empty(),
        "{} of {} texts:\n{}",
        failures.len(),
        texts.len(),
        failures.join("\n\n")
    );
    // The texts are meant to cover both outcomes.
    assert!(texts.keys().any(|n| n.starts_with("err_")) && our_parse("basic", TEXTS[0].1).is_ok());
}

/// Corpus texts cut short and edited byte by byte (deterministically): every variant is
/// accepted or refused as `onnx.parser` does, with the same bytes when accepted, and
/// nothing panics.
#[test]
fn mutated_texts_are_accepted_and_refused_as_onnx_parser_does() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut texts = BTreeMap::new();
    let models = corpus_models();
    let edits: &[&str] = &[
        "", " ", ",", "(", ")", "<", ">", "[", "]", "{", "}", "=", ":", "\"", "-", ".", "@", "#",
        "\n", "0", "1e", "x", "float", "seq(", "inf", "=>", "?", "\\",
    ];
    for (i, (name, bytes)) in models.iter().enumerate().step_by(6) {
        let model = Model::decode_owned(bytes).unwrap();
        let Ok(text) = text::to_text(&model) else {
            continue;
        };
        for j in 0..4 {
            let mut t: Vec<u8> = text.clone().into_bytes();
            let at = (rng.next() as usize) % t.len().max(1);
            match j {
                0 => t.truncate(at),
                _ => {
                    let edit = edits[(rng.next() as usize) % edits.len()];
                    let remove = (rng.next() % 3) as usize;
                    let end = (at + remove).min(t.len());
                    t.splice(at..end, edit.bytes());
                }
            }
            // Corpus texts are ASCII, so any cut or splice is still UTF-8.
            let t = String::from_utf8(t).unwrap();
            texts.insert(format!("m{i:04}_{j}_{name}"), t);
        }
    }
    // The fuzz target's properties hold on each of them too.
    for t in texts.values() {
        onnx_light_tests::fuzz_checks::text_format_is_consistent(t.as_bytes());
    }
    let scratch = Scratch::new("text-parse-mutated");
    // Positions are compared too: both parsers stop at the same character.
    let failures = compare_parses(&texts, true, &scratch);
    assert!(
        failures.is_empty(),
        "{} of {} mutated texts:\n{}",
        failures.len(),
        texts.len(),
        failures.join("\n\n")
    );
}

#[test]
fn hostile_texts_give_errors_not_panics_or_stack_overflows() {
    let deep_type = format!(
        "g ({}float{} x) => () {{}}",
        "seq(".repeat(100_000),
        ")".repeat(100_000)
    );
    let err = text::parse_graph(&deep_type).unwrap_err();
    assert!(err.message().contains("nest"), "{err}");
    let mut deep_graph = String::from("g () => () { y = F <b = ");
    for _ in 0..50_000 {
        deep_graph.push_str("h () => () { y = F <b = ");
    }
    let err = text::parse_model(&deep_graph).unwrap_err();
    assert!(err.message().contains("nest"), "{err}");
    // 100 levels are fine: the graph, 98 sequences and the tensor type.
    let ok = format!(
        "g ({}float{} x) => () {{}}",
        "seq(".repeat(98),
        ")".repeat(98)
    );
    text::parse_graph(&ok).unwrap();
    for t in [
        "\0",
        "g () => () {}\0",
        "\"",
        "\"\\",
        "-",
        "g (float[",
        "g (float[-",
        "<",
        "<ir_version:",
        "g () => () { y = F <a = [",
        "g () => () { y = F <a = @",
        "g () => () { [",
        "é (x) => () {}",
        "g (float[\"é\"] x) => () {}",
    ] {
        let r = text::parse_model(t);
        if let Err(e) = &r {
            assert!(e.line() >= 1 && e.column() >= 1, "{t:?}: {e}");
        }
    }
    let err = text::parse_model("g (x) => (y) {\n  y = é(x)\n}").unwrap_err();
    assert_eq!((err.line(), err.column()), (2, 7), "{err}");
}
