//! The ONNX backend node-test corpus: every `model.onnx` and every test-data `.pb` file
//! shipped in the official `onnx` 1.22.0 wheel (about 1,765 models and 6,000 data files).
//!
//! * `corpus_round_trips_byte_identical`: each file decoded in borrow, copy and shared
//!   mode re-encodes to exactly its original bytes; the modes decode to equal values, and
//!   shared mode shares the payloads. Every failing file is listed with the first
//!   differing byte.
//! * `onnx_parse_agrees_with_ours`: the canonical summary of every model and data file
//!   (`tests/python/onnx_summary.py`, parsed by the official `onnx` package) equals the
//!   summary of what onnx-light decoded.
//!
//! The wheel is fetched with the test venv's pip into `target/onnx-1.22-wheel` and its
//! `onnx/backend/test/data/node` tree extracted to `target/onnx-corpus/node` on first use
//! (under a file lock, as several test binaries may run at once). Set
//! `ONNX_LIGHT_ONNX_CORPUS` to an existing `node` directory to use it instead (offline
//! runs). Any platform's wheel carries the same data files; the one for CPython 3.11 on
//! manylinux x86_64 is fetched whatever the host is.

mod onnx_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light_tests::mapped::Load;
use onnx_light_tests::python::{python_dir, run_python, workspace_root};

use onnx_support::corpus::{corpus_dir, ONNX_VERSION};
use onnx_support::summary;
use onnx_support::{borrow_round_trip, copy_round_trip, describe_text_diff, shared_round_trip};

// ---------------------------------------------------------------------------------------
// Reading the corpus.

/// One test of the corpus: its model and its data files.
struct Case {
    /// The test's directory name, e.g. `test_abs`.
    name: String,
    model: Vec<u8>,
    /// `(test/set/file, file name, bytes)`, sorted.
    data: Vec<(String, String, Vec<u8>)>,
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    v.sort();
    v
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_else(|| panic!("non-UTF-8 name: {}", p.display()))
        .to_string()
}

fn corpus() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let read = |p: &Path| fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut cases = Vec::new();
        for test_dir in sorted_entries(&corpus_dir()) {
            let model_path = test_dir.join("model.onnx");
            if !model_path.is_file() {
                continue;
            }
            let name = file_name(&test_dir);
            let mut data = Vec::new();
            for set_dir in sorted_entries(&test_dir) {
                let set = file_name(&set_dir);
                if !set.starts_with("test_data_set_") || !set_dir.is_dir() {
                    continue;
                }
                for f in sorted_entries(&set_dir) {
                    let fname = file_name(&f);
                    if fname.ends_with(".pb") {
                        data.push((format!("{name}/{set}/{fname}"), fname, read(&f)));
                    }
                }
            }
            cases.push(Case {
                name,
                model: read(&model_path),
                data,
            });
        }
        cases
    })
}

/// The message type of a data file, from the type of the graph input or output it
/// belongs to (`input_3.pb` is a value of `graph.input[3]`), as the onnx backend test
/// runner reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Tensor,
    Sequence,
    Optional,
    Map,
    SparseTensor,
}

fn data_kind(model: &ModelProto<'_>, file: &str) -> Result<Kind, String> {
    let stem = file
        .strip_suffix(".pb")
        .ok_or_else(|| format!("not a .pb file: {file}"))?;
    let (list, index) = if let Some(i) = stem.strip_prefix("input_") {
        ("input", i)
    } else if let Some(i) = stem.strip_prefix("output_") {
        ("output", i)
    } else {
        return Err(format!("not an input_N or output_N file: {file}"));
    };
    let index: usize = index.parse().map_err(|_| format!("bad index in {file}"))?;
    let graph = model.graph.as_ref().ok_or("the model has no graph")?;
    let values = if list == "input" {
        &graph.input
    } else {
        &graph.output
    };
    let value = values
        .get(index)
        .ok_or_else(|| format!("{file}: the graph has only {} {list}s", values.len()))?;
    match value.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(TypeValue::TensorType(_)) => Ok(Kind::Tensor),
        Some(TypeValue::SequenceType(_)) => Ok(Kind::Sequence),
        Some(TypeValue::OptionalType(_)) => Ok(Kind::Optional),
        Some(TypeValue::MapType(_)) => Ok(Kind::Map),
        Some(TypeValue::SparseTensorType(_)) => Ok(Kind::SparseTensor),
        other => Err(format!("{file}: unsupported value type {other:?}")),
    }
}

// ---------------------------------------------------------------------------------------
// Round trips.

#[derive(Default)]
struct Tally {
    models: usize,
    model_bytes: usize,
    model_tensors: usize,
    data: BTreeMap<Kind, usize>,
    data_bytes: usize,
    shared_files: usize,
    shared_payloads: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.models += other.models;
        self.model_bytes += other.model_bytes;
        self.model_tensors += other.model_tensors;
        for (k, n) in other.data {
            *self.data.entry(k).or_default() += n;
        }
        self.data_bytes += other.data_bytes;
        self.shared_files += other.shared_files;
        self.shared_payloads += other.shared_payloads;
        self.failures.extend(other.failures);
    }
}

/// Threshold for shared mode: small enough that the corpus's payloads are shared.
const SHARED_THRESHOLD: usize = 16;

/// Round trips of one message type in borrow, copy and shared mode, with equality of
/// the decoded values across modes; problems are pushed to
/// `$errs`. Evaluates to the borrow-mode result and the number of shared payloads that
/// `$count_shared` found in the shared-mode value. Values holding NaN floats are unequal
/// to themselves: those are compared through `$summary`, which holds the floats' bits.
macro_rules! check_modes {
    ($ty:ident, $summary:path, $bytes:expr, $errs:expr, $count_shared:expr) => {{
        let bytes: &[u8] = $bytes;
        let same = |x: &$ty<'_>, y: &$ty<'_>| x == y || $summary(x) == $summary(y);
        let errs: &mut Vec<String> = $errs;
        let mut shared_payloads = 0usize;
        let borrowed = borrow_round_trip::<$ty<'_>>(bytes);
        let copied = copy_round_trip::<$ty<'static>>(bytes);
        if let Err(e) = &borrowed {
            errs.push(e.clone());
        }
        if let Err(e) = &copied {
            errs.push(e.clone());
        }
        if let (Ok(b), Ok(c)) = (&borrowed, &copied) {
            if !same(b, c) {
                errs.push("borrow and copy mode decode to different values".to_string());
            }
        }
        match shared_round_trip::<$ty<'static>>(bytes, SHARED_THRESHOLD) {
            Err(e) => errs.push(e),
            Ok(s) => {
                if copied.as_ref().is_ok_and(|c| !same(&s, c)) {
                    errs.push("shared and copy mode decode to different values".into());
                }
                shared_payloads = $count_shared(&s, &mut *errs);
            }
        }
        (borrowed, shared_payloads)
    }};
}

/// Checks the shared-mode payloads of a tensor: any `raw_data` at or above the threshold
/// must be a shared slice. Returns how many were shared.
fn shared_tensor_payloads(t: &TensorProto<'_>, errs: &mut Vec<String>) -> usize {
    match &t.raw_data {
        Some(raw) if raw.len() >= SHARED_THRESHOLD => {
            if raw.is_shared() {
                1
            } else {
                errs.push(format!(
                    "shared mode: raw_data of {} bytes (tensor {:?}) is not shared",
                    raw.len(),
                    t.name()
                ));
                0
            }
        }
        _ => 0,
    }
}

fn no_payloads<T>(_: &T, _: &mut Vec<String>) -> usize {
    0
}

/// Checks one test's model and data files.
fn check_case(case: &Case) -> Tally {
    let mut tally = Tally::default();
    let mut errs = Vec::new();

    let (model, n) = check_modes!(
        ModelProto,
        summary::model,
        &case.model,
        &mut errs,
        |m: &ModelProto<'static>, errs: &mut Vec<String>| {
            let mut n = 0;
            m.visit_tensors(|_, t| n += shared_tensor_payloads(t, errs));
            n
        }
    );
    let model_path = format!("{}/model.onnx", case.name);
    tally
        .failures
        .extend(errs.drain(..).map(|e| format!("{model_path}: {e}")));
    tally.models += 1;
    tally.model_bytes += case.model.len();
    tally.shared_files += 1;
    tally.shared_payloads += n;
    let Ok(model) = model else {
        return tally;
    };
    tally.model_tensors += model.tensors().len();

    for (rel, fname, bytes) in &case.data {
        let kind = match data_kind(&model, fname) {
            Ok(k) => k,
            Err(e) => {
                tally.failures.push(format!("{rel}: {e}"));
                continue;
            }
        };
        *tally.data.entry(kind).or_default() += 1;
        tally.data_bytes += bytes.len();
        let n = match kind {
            Kind::Tensor => {
                check_modes!(
                    TensorProto,
                    summary::tensor,
                    bytes,
                    &mut errs,
                    shared_tensor_payloads
                )
                .1
            }
            Kind::Sequence => {
                check_modes!(
                    SequenceProto,
                    summary::sequence,
                    bytes,
                    &mut errs,
                    no_payloads
                )
                .1
            }
            Kind::Optional => {
                check_modes!(
                    OptionalProto,
                    summary::optional,
                    bytes,
                    &mut errs,
                    no_payloads
                )
                .1
            }
            Kind::Map => check_modes!(MapProto, summary::map, bytes, &mut errs, no_payloads).1,
            Kind::SparseTensor => {
                check_modes!(
                    SparseTensorProto,
                    summary::sparse,
                    bytes,
                    &mut errs,
                    no_payloads
                )
                .1
            }
        };
        tally
            .failures
            .extend(errs.drain(..).map(|e| format!("{rel} (as {kind:?}): {e}")));
        tally.shared_files += 1;
        tally.shared_payloads += n;
    }
    tally
}

#[test]
fn corpus_round_trips_byte_identical() {
    let cases = corpus();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let chunk = cases.len().div_ceil(threads).max(1);
    let mut tally = Tally::default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|cases| {
                scope.spawn(move || {
                    let mut t = Tally::default();
                    for case in cases {
                        t.add(check_case(case));
                    }
                    t
                })
            })
            .collect();
        for h in handles {
            tally.add(h.join().expect("a corpus worker panicked"));
        }
    });

    let data_files: usize = tally.data.values().sum();
    println!(
        "onnx {ONNX_VERSION} node corpus: {} models ({} bytes, {} tensors inside), \
         {data_files} data files ({} bytes: {:?}); shared mode on {} files ({} shared payloads)",
        tally.models,
        tally.model_bytes,
        tally.model_tensors,
        tally.data_bytes,
        tally.data,
        tally.shared_files,
        tally.shared_payloads,
    );
    assert!(
        tally.failures.is_empty(),
        "{} failures in the corpus round trip:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    // An empty or truncated corpus must not pass.
    assert!(tally.models > 1500, "only {} models", tally.models);
    assert!(data_files > 5000, "only {data_files} data files");
    assert!(tally.data.get(&Kind::Tensor).copied().unwrap_or(0) > 5000);
    assert!(tally.data.get(&Kind::Sequence).copied().unwrap_or(0) > 0);
    assert!(tally.data.get(&Kind::Optional).copied().unwrap_or(0) > 0);
    assert!(
        tally.model_tensors > 1000,
        "only {} tensors",
        tally.model_tensors
    );
    assert!(tally.shared_files > 1500 && tally.shared_payloads > 500);
}

// ---------------------------------------------------------------------------------------
// Semantic agreement with the official parser.

/// Our summary of every model and data file, keyed as the Python script keys them.
fn our_summaries() -> (BTreeMap<String, String>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut errors = Vec::new();
    for case in corpus() {
        let model = match ModelProto::decode(&case.model) {
            Ok(m) => m,
            Err(e) => {
                errors.push(format!("{}/model.onnx: decode error: {e}", case.name));
                continue;
            }
        };
        out.insert(format!("model {}", case.name), summary::model(&model));
        for (rel, fname, bytes) in &case.data {
            let s = data_kind(&model, fname).and_then(|kind| {
                let e = |e: onnx_light::Error| format!("decode error: {e}");
                Ok(match kind {
                    Kind::Tensor => summary::tensor(&TensorProto::decode(bytes).map_err(e)?),
                    Kind::Sequence => summary::sequence(&SequenceProto::decode(bytes).map_err(e)?),
                    Kind::Optional => summary::optional(&OptionalProto::decode(bytes).map_err(e)?),
                    Kind::Map => summary::map(&MapProto::decode(bytes).map_err(e)?),
                    Kind::SparseTensor => {
                        summary::sparse(&SparseTensorProto::decode(bytes).map_err(e)?)
                    }
                })
            });
            match s {
                Ok(s) => {
                    out.insert(format!("data {rel}"), s);
                }
                Err(e) => errors.push(format!("{rel}: {e}")),
            }
        }
    }
    (out, errors)
}

/// How many disagreements are shown in detail.
const DETAILED: usize = 30;

#[test]
fn onnx_parse_agrees_with_ours() {
    let dir = corpus_dir();
    let cases = corpus();
    // Python runs while Rust summarizes.
    let (output, (ours, mut errors)) = std::thread::scope(|scope| {
        let py = scope.spawn(|| {
            run_python(
                &python_dir().join("onnx_corpus.py"),
                &["summary".as_ref(), dir.as_os_str()],
            )
        });
        let ours = our_summaries();
        (py.join().expect("the Python summary panicked"), ours)
    });
    let text = String::from_utf8(output.stdout).expect("UTF-8 summary");
    let mut theirs = BTreeMap::new();
    for line in text.lines() {
        let mut it = line.splitn(3, ' ');
        let (Some(kind), Some(key), Some(s)) = (it.next(), it.next(), it.next()) else {
            panic!("malformed summary line: {line:?}");
        };
        theirs.insert(format!("{kind} {key}"), s.to_string());
    }

    for (key, s) in &theirs {
        match ours.get(key) {
            None => errors.push(format!("{key}: summarized by onnx only")),
            // Every disagreeing file is named; the first ones with the difference.
            Some(o) if o != s && errors.len() < DETAILED => {
                errors.push(format!("{key}: {}", describe_text_diff(s, o)))
            }
            Some(o) if o != s => errors.push(format!("{key}: differs")),
            Some(_) => {}
        }
    }
    for key in ours.keys().filter(|k| !theirs.contains_key(*k)) {
        errors.push(format!("{key}: summarized by onnx-light only"));
    }
    let models = theirs.keys().filter(|k| k.starts_with("model ")).count();
    println!(
        "onnx and onnx-light agree on {} of {} summaries ({models} models, {} data files)",
        theirs.len() - errors.len().min(theirs.len()),
        theirs.len(),
        theirs.len() - models
    );
    assert!(
        errors.is_empty(),
        "{} disagreements:\n{}",
        errors.len(),
        errors.join("\n")
    );
    assert_eq!(models, cases.len());
    assert!(models > 1500 && theirs.len() > 6500, "corpus too small");
}

/// Every corpus model through every file load mode and every save path: the bytes that
/// come out are the bytes that went in.
#[test]
fn corpus_models_round_trip_through_every_load_mode_and_save_path() {
    use onnx_light::io::{self, ParseOptions, SerializeOptions};
    let root = corpus_dir();
    let scratch = onnx_light_tests::python::workspace_root()
        .join("target")
        .join("test-scratch")
        .join(format!("corpus-io-{}", std::process::id()));
    fs::create_dir_all(&scratch).unwrap();
    let modes = [
        ("owned", Load::With(ParseOptions::default())),
        (
            "owned, 1 thread",
            Load::With(ParseOptions::default().num_threads(1)),
        ),
        (
            "owned, aligned",
            Load::With(ParseOptions::default().alignment(64)),
        ),
        ("mapped", Load::Mapped(ParseOptions::default())),
        (
            "structure only",
            Load::With(ParseOptions::default().structure_only(true)),
        ),
    ];
    let save_options = [
        SerializeOptions::default().num_threads(1),
        SerializeOptions::default().num_threads(2),
    ];
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for case in corpus() {
        let path = root.join(&case.name).join("model.onnx");
        for (mode, load) in &modes {
            let mut model = match load.load(&path) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{} ({mode}): {e}", case.name));
                    continue;
                }
            };
            if *mode == "structure only" {
                if let Err(e) = io::materialize_lazy_data(&mut model) {
                    failures.push(format!("{} ({mode}): {e}", case.name));
                    continue;
                }
            }
            for (i, save) in save_options.iter().enumerate() {
                let out = scratch.join(format!("m{i}.onnx"));
                let results = [
                    io::save(&model, &out, save).and_then(|_| fs::read(&out).map_err(Into::into)),
                    io::save_to_vec(&model, save),
                    {
                        let mut w = Vec::new();
                        io::save_to_writer(&model, &mut w, save).map(|_| w)
                    },
                ];
                for (which, bytes) in ["save", "save_to_vec", "save_to_writer"]
                    .iter()
                    .zip(results)
                {
                    match bytes {
                        Ok(b) if b == case.model => {}
                        Ok(b) => failures.push(format!(
                            "{} ({mode}, {which}): {}",
                            case.name,
                            onnx_support::describe_diff(&case.model, &b).unwrap_or_default()
                        )),
                        Err(e) => failures.push(format!("{} ({mode}, {which}): {e}", case.name)),
                    }
                }
            }
            checked += 1;
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    assert!(checked > 1500 * modes.len(), "only {checked} loads checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Corpus models broken in ways that exercise every operator's schema: an unknown
/// operator, the first attribute dropped (required or not) or given another type, one
/// input too many, the nodes in reverse order, the oldest opset.
fn corpus_mutations(model: &Model) -> Vec<(&'static str, Model)> {
    let mut out = Vec::new();
    let Some(graph) = model.graph.as_ref() else {
        return out;
    };
    if graph.node.is_empty() {
        return out;
    }
    let mut m = model.clone();
    let op = format!("{}X", m.graph.as_ref().unwrap().node[0].op_type());
    m.graph.as_mut().unwrap().node[0].op_type = Some(op.into());
    out.push(("unknown_op", m));
    if !graph.node[0].attribute.is_empty() {
        let mut m = model.clone();
        m.graph.as_mut().unwrap().node[0].attribute.remove(0);
        out.push(("attribute_dropped", m));
        let mut m = model.clone();
        let a = &mut m.graph.as_mut().unwrap().node[0].attribute[0];
        let retyped = if a.r#type() == AttributeType::Float {
            AttributeProto::int(a.name().to_string(), 1)
        } else {
            AttributeProto::float(a.name().to_string(), 1.0)
        };
        *a = retyped;
        out.push(("attribute_retyped", m));
    }
    let mut m = model.clone();
    let g = m.graph.as_mut().unwrap();
    let extra = g.node[0].input.first().cloned().unwrap_or_default();
    g.node[0].input.push(extra);
    out.push(("extra_input", m));
    if graph.node.len() > 1 {
        let mut m = model.clone();
        m.graph.as_mut().unwrap().node.reverse();
        out.push(("reversed", m));
    }
    let mut m = model.clone();
    for o in &mut m.opset_import {
        o.version = Some(1);
    }
    out.push(("opset_1", m));
    out
}

/// `onnx_light::checker` gives every corpus model, and several broken variants of each,
/// the verdict `onnx.checker.check_model` gives it (accepted or rejected, with the
/// model's directory for external data), and so does the full check (the checker, then
/// strict shape inference with type checks) with `full_check=True`.
#[test]
fn checker_agrees_with_onnx_checker_on_every_corpus_model() {
    use onnx_light_tests::checker_oracle::{
        onnx_full_verdicts, onnx_verdicts, our_full_verdict, our_verdict,
    };
    let root = corpus_dir();
    let scratch = workspace_root()
        .join("target")
        .join("test-scratch")
        .join(format!("corpus-checker-{}", std::process::id()));
    fs::create_dir_all(&scratch).unwrap();
    let mut paths: Vec<PathBuf> = corpus()
        .iter()
        .map(|c| root.join(&c.name).join("model.onnx"))
        .collect();
    let originals = paths.len();
    for case in corpus() {
        let model = Model::decode_owned(&case.model).expect("corpus models decode");
        for (what, broken) in corpus_mutations(&model) {
            let path = scratch.join(format!("{}-{what}.onnx", case.name));
            fs::write(&path, broken.encode_to_vec().expect("encode")).unwrap();
            paths.push(path);
        }
    }
    let theirs = onnx_verdicts(&paths, &scratch);
    let theirs_full = onnx_full_verdicts(&paths, &scratch);
    let mut disagreements = Vec::new();
    let (mut rejected, mut rejected_full) = (0usize, 0usize);
    for ((path, theirs), theirs_full) in paths.iter().zip(&theirs).zip(&theirs_full) {
        let ours = our_verdict(path);
        rejected += usize::from(theirs.is_err());
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!(
                "{}:\n  onnx: {theirs:?}\n  ours: {ours:?}",
                path.display()
            ));
        }
        // `check_model(full_check=True)`: the checker, then strict inference.
        let ours_full = our_full_verdict(path);
        rejected_full += usize::from(theirs_full.is_err());
        if ours_full.is_ok() != theirs_full.is_ok() {
            disagreements.push(format!(
                "{} (full_check):\n  onnx: {theirs_full:?}\n  ours: {ours_full:?}",
                path.display()
            ));
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    assert!(rejected_full >= rejected, "{rejected_full} < {rejected}");
    assert!(
        disagreements.is_empty(),
        "{} of {} corpus verdicts differ from onnx.checker ({rejected} rejected by onnx):\n{}",
        disagreements.len(),
        paths.len(),
        disagreements.join("\n")
    );
    assert!(originals > 1500, "corpus too small");
    assert!(
        rejected > originals,
        "{rejected} of {} rejected",
        paths.len()
    );
}
