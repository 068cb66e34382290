//! Section `shape`: `onnx_light::shape::infer_shapes` against
//! `onnx.shape_inference.infer_shapes`, in memory and as users run it once (the
//! command-line tool against `onnx` in a new Python process), and the peak memory of
//! inferring the types of a single-file model larger than 2 GiB.
//!
//! Every comparison starts with a check that both sides infer the same model: our
//! result is encoded and compared with the bytes `onnx` writes, and where they differ,
//! the inferred types are compared value by value and the differences counted.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::Model;
use onnx_light::shape::{self, InferOptions};
use onnx_light::ByteOwner;

use crate::child::status_kib;
use serde_json::json;

use crate::fresh::{cli_binary, run_timed};
use crate::harness::{self, measure, Op, Results, Row, Scorecard, Table, Target};
use crate::{count_nodes, file_len, models, tick, Ctx, GIB, MB};

/// Width of the weight-heavy model for the peak-memory rows: 2.12 GiB in one file.
const BIG_HIDDEN: i64 = 1920;

/// Our inference on a copy of `model`, the copy made off the clock.
fn ours_op<'a>(key: &'static str, model: &'a Model) -> Op<'a> {
    Op::timed(key, move |iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let mut m = model.clone();
            let start = Instant::now();
            shape::infer_shapes(&mut m, &InferOptions::default()).expect("infer_shapes");
            total += start.elapsed();
            drop(m);
        }
        total
    })
}

/// `onnx.shape_inference.infer_shapes` in the worker on the model parsed under `key`.
fn onnx_op<'a>(key: &'static str, cx: &'a Ctx, model_key: &'static str) -> Op<'a> {
    Op::timed(key, move |iters| {
        cx.worker
            .borrow_mut()
            .time("infer", iters, json!({"key": model_key}))
    })
}

/// The inferred types of a model's value_info and graph outputs, by name.
fn inferred_types(m: &Model) -> HashMap<String, String> {
    let Some(g) = m.graph.as_ref() else {
        return HashMap::new();
    };
    g.value_info
        .iter()
        .chain(&g.output)
        .map(|v| {
            let t = v.r#type.as_ref().map(|t| t.to_string()).unwrap_or_default();
            (v.name().to_string(), t)
        })
        .collect()
}

/// A type's text with every fresh dimension name (`unk__N`) written `?`.
fn without_fresh_names(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find("unk__") {
        out.push_str(&rest[..i]);
        out.push('?');
        rest = rest[i + 5..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Whether our inferred model is onnx's, and if not, how the inferred types differ.
pub struct Agreement {
    pub identical_bytes: bool,
    pub values: usize,
    pub differ: usize,
    /// Differences left once the fresh dimension names are set aside.
    pub differ_beyond_names: usize,
    pub example: Option<String>,
}

impl Agreement {
    pub fn text(&self) -> String {
        if self.identical_bytes {
            return format!(
                "identical: the same bytes ({} value types) {}",
                self.values,
                tick(true)
            );
        }
        if self.differ == 0 {
            return format!(
                "the same {} value types (the encodings differ elsewhere) {}",
                self.values,
                tick(true)
            );
        }
        format!(
            "different: {} of {} value types differ ({} once the fresh `unk__N` names are \
             set aside){} {}",
            self.differ,
            self.values,
            self.differ_beyond_names,
            self.example
                .as_ref()
                .map(|e| format!("; first: {e}"))
                .unwrap_or_default(),
            tick(false)
        )
    }
}

/// Compares our inferred model with the model `onnx` wrote (`theirs`, encoded).
pub fn agreement(ours: &Model, theirs: &[u8]) -> Agreement {
    let ours_bytes = io::save_to_vec(ours, &SerializeOptions::default()).expect("encode");
    let theirs_model =
        io::load_from_bytes(theirs, &ParseOptions::default()).expect("decode onnx's output");
    agreement_of(ours, &theirs_model, ours_bytes == theirs)
}

fn agreement_of(ours: &Model, theirs: &Model, identical_bytes: bool) -> Agreement {
    let a = inferred_types(ours);
    let b = inferred_types(theirs);
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let (mut differ, mut beyond) = (0, 0);
    let mut example = None;
    // Report the first difference in the order onnx lists its values.
    let order: Vec<&str> = theirs
        .graph
        .iter()
        .flat_map(|g| g.value_info.iter().chain(&g.output))
        .map(|v| v.name())
        .collect();
    for name in &names {
        let (x, y) = (a.get(*name), b.get(*name));
        if x != y {
            differ += 1;
            let strip = |t: Option<&String>| t.map(|t| without_fresh_names(t));
            if strip(x) != strip(y) {
                beyond += 1;
            }
        }
    }
    for name in order.iter().copied() {
        let (x, y) = (a.get(name), b.get(name));
        if x != y {
            example = Some(format!(
                "`{name}`: ours `{}`, onnx `{}`",
                x.map_or("(none)", String::as_str),
                y.map_or("(none)", String::as_str)
            ));
            break;
        }
    }
    Agreement {
        identical_bytes,
        values: names.len(),
        differ,
        differ_beyond_names: beyond,
        example,
    }
}

/// Our inference once, and onnx's on the same model (`key` in the worker), compared.
fn check_agreement(cx: &Ctx, model: &Model, key: &str, scratch: &Path) -> Agreement {
    let mut ours = model.clone();
    shape::infer_shapes(&mut ours, &InferOptions::default()).expect("infer_shapes");
    let out = scratch.join(format!("onnx-{key}.onnx"));
    cx.worker
        .borrow_mut()
        .time("infer", 1, json!({"key": key, "out": out}));
    let theirs = std::fs::read(&out).expect("read onnx's inferred model");
    let _ = std::fs::remove_file(&out);
    agreement(&ours, &theirs)
}

/// A model read from `path` the way the benchmark's peers hold it: decoded in shared
/// mode (payloads share the file's bytes, so a copy of the model is cheap), external data
/// not loaded.
fn load_shared(path: &Path) -> Model {
    let bytes: ByteOwner = std::sync::Arc::new(std::fs::read(path).expect("read the model"));
    io::load_from_owner(bytes, &ParseOptions::default().load_external_data(false)).expect("decode")
}

fn value_info_len(m: &Model) -> usize {
    m.graph.as_ref().map_or(0, |g| g.value_info.len())
}

/// What one process did at its peak (polled from `/proc/<pid>/status` every
/// millisecond until it exits).
struct PeakRun {
    wall: Duration,
    ok: bool,
    /// `VmHWM`: the peak resident set, file pages of maps included.
    hwm: u64,
    /// The highest `RssAnon` seen: memory the process allocated.
    anon: u64,
    /// The highest `RssFile` seen: pages of mapped files.
    file: u64,
    stderr: String,
}

fn run_peak(mut cmd: Command) -> PeakRun {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    let (mut hwm, mut anon, mut file) = (0, 0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            hwm = hwm.max(status_kib(&s, "VmHWM").map(|k| k * 1024).unwrap_or(0));
            anon = anon.max(status_kib(&s, "RssAnon").map(|k| k * 1024).unwrap_or(0));
            file = file.max(status_kib(&s, "RssFile").map(|k| k * 1024).unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let wall = start.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    PeakRun {
        wall,
        ok: status.success(),
        hwm,
        anon,
        file,
        stderr,
    }
}

/// The last line of a failed command's error output, for the table.
fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(160)
        .collect::<String>()
        .replace('|', "\\|")
}

fn python_c(cx: &Ctx, code: &str, args: &[&Path]) -> Command {
    let mut c = Command::new(&cx.py.interpreter);
    c.arg("-c").arg(code).args(args);
    c
}

const ONNX_PATH: &str =
    "import sys, onnx; onnx.shape_inference.infer_shapes_path(sys.argv[1], sys.argv[2])";
const ONNX_LOAD: &str = "import sys, onnx; \
    onnx.save(onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1])), sys.argv[2])";
const OURS_PY_PATH: &str = "import sys; from onnx_light.onnx import shape_inference; \
    shape_inference.infer_shapes_path(sys.argv[1], sys.argv[2])";

/// The whole section; returns its tables (targets recorded in `card`).
pub fn section(cx: &mut Ctx, card: &mut Scorecard) -> String {
    let dir = cx.dir.join("shape");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create shape/");
    let mut out = String::new();
    out.push_str(&in_memory(cx, &dir, card));
    out.push_str(&fresh_processes(cx, &dir, card));
    out.push_str(&beyond_2gib(cx, &dir));
    // `--keep` keeps the generated models (not the ones larger than 2 GiB).
    if !cx.cfg.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    out
}

/// The generated models of the in-memory and fresh-process rows, as files.
struct Files {
    structure: PathBuf,
    bert: PathBuf,
    bert_ext: PathBuf,
}

fn write_models(cx: &Ctx, dir: &Path) -> Files {
    cx.progress("shape: generating the structure-heavy and BERT-base models");
    let structure = dir.join("structure.onnx");
    io::save(
        &models::structure_heavy(10_000),
        &structure,
        &SerializeOptions::default().sync(false),
    )
    .expect("save the structure-heavy model");
    let bert = models::bert(models::BERT_BASE);
    let bert_path = dir.join("bert.onnx");
    io::save(&bert, &bert_path, &SerializeOptions::default().sync(false))
        .expect("save the BERT model");
    let ext_dir = dir.join("bert_ext");
    std::fs::create_dir_all(&ext_dir).expect("create bert_ext/");
    let bert_ext = ext_dir.join("model.onnx");
    io::save(
        &bert,
        &bert_ext,
        &SerializeOptions::default()
            .sync(false)
            .external_data(ExternalDataOptions::new("model.data")),
    )
    .expect("save the BERT model with external data");
    Files {
        structure,
        bert: bert_path,
        bert_ext,
    }
}

fn in_memory(cx: &mut Ctx, dir: &Path, card: &mut Scorecard) -> String {
    let files = write_models(cx, dir);
    let structure = load_shared(&files.structure);
    let bert = load_shared(&files.bert);
    let bert_ext = load_shared(&files.bert_ext);
    let nodes = count_nodes(&structure);
    let declared = value_info_len(&structure);
    let bert_nodes = count_nodes(&bert);
    let bert_len = file_len(&files.bert);
    {
        let mut w = cx.worker.borrow_mut();
        for (key, path) in [
            ("sh_s", &files.structure),
            ("sh_b", &files.bert),
            ("sh_bx", &files.bert_ext),
        ] {
            w.read(key, path);
            w.parse(key);
        }
    }
    cx.progress("shape: comparing the inferred models with onnx's");
    let agree_s = check_agreement(cx, &structure, "sh_s", dir);
    let agree_b = check_agreement(cx, &bert, "sh_b", dir);
    let agree_bx = check_agreement(cx, &bert_ext, "sh_bx", dir);
    let inferred_s = {
        let mut m = structure.clone();
        shape::infer_shapes(&mut m, &InferOptions::default()).expect("infer");
        value_info_len(&m)
    };

    cx.progress("shape: in memory, structure-heavy and BERT-base");
    let c: &Ctx = cx;
    let ops = vec![
        ours_op("sh.s.ours", &structure),
        onnx_op("sh.s.onnx", c, "sh_s"),
        ours_op("sh.bx.ours", &bert_ext),
        onnx_op("sh.bx.onnx", c, "sh_bx"),
        ours_op("sh.b.ours", &bert),
        onnx_op("sh.b.onnx", c, "sh_b"),
    ];
    let mut results = Results::default();
    measure("shape in memory", ops, cx.cfg.sampling, &mut results);
    {
        let mut w = cx.worker.borrow_mut();
        for key in ["sh_s", "sh_b", "sh_bx"] {
            w.free(key);
        }
    }
    let mut s = String::new();
    let t = Table {
        short: "shape structure-heavy",
        title: format!(
            "Shape inference in memory: structure-heavy model ({nodes} nodes incl. subgraphs, \
             {declared} value_info entries declared, {inferred_s} after inference)"
        ),
        intro: format!(
            "Ours: `shape::infer_shapes(&mut model, &InferOptions::default())` on a copy of \
            the decoded model (the copy made off the clock). onnx: \
            `onnx.shape_inference.infer_shapes(model)` on the parsed `ModelProto` (it \
            serializes the model, C++ parses, infers and serializes it, Python parses the \
            result: that is the call's cost to a user). Both with `check_type=False`, \
            `strict_mode=False`; {} rounds at full size. Same inferred model: {}.",
            cx.cfg.sampling.rounds,
            agree_s.text()
        ),
        peers: vec![("sh.s.onnx", "onnx")],
        rows: vec![
            Row::new("ours: `shape::infer_shapes`", "sh.s.ours")
                .target(Target::Faster("sh.s.onnx", 20.0)),
            Row::new("onnx: `shape_inference.infer_shapes`", "sh.s.onnx"),
        ],
    };
    s.push_str(&harness::render(&t, &results, card));
    let t = Table {
        short: "shape BERT-base",
        title: format!(
            "Shape inference in memory: BERT-base ({bert_nodes} nodes, {:.0} MB of weights)",
            bert_len as f64 / MB
        ),
        intro: format!(
            "A generated model of `bert-base-uncased`'s architecture as `torch.onnx.export` \
            (opset 14) writes it: 12 layers, width 768, 12 heads, inputs `[batch_size, \
            sequence_length]`, attention reshapes computed from `Shape`; every weight at its \
            real size, pseudo-random (there is no network here to fetch a real export). \
            Here the model is saved with external data and loaded without it: the \
            inference alone. Same inferred model: {}.",
            agree_bx.text()
        ),
        peers: vec![("sh.bx.onnx", "onnx")],
        rows: vec![
            Row::new("ours: `shape::infer_shapes`", "sh.bx.ours"),
            Row::new("onnx: `shape_inference.infer_shapes`", "sh.bx.onnx"),
        ],
    };
    s.push_str(&harness::render(&t, &results, card));
    let t = Table {
        short: "shape BERT-base inline",
        title: "The same, BERT-base with its weights inline".into(),
        intro: format!(
            "The single file loaded whole: onnx's call serializes the weights for C++ and \
            parses them back, ours does not touch them. Same inferred model: {}.",
            agree_b.text()
        ),
        peers: vec![("sh.b.onnx", "onnx")],
        rows: vec![
            Row::new("ours: `shape::infer_shapes`", "sh.b.ours"),
            Row::new("onnx: `shape_inference.infer_shapes`", "sh.b.onnx"),
        ],
    };
    s.push_str(&harness::render(&t, &results, card));
    cx.results.times.extend(results.times);
    cx.results.rounds.extend(results.rounds);
    s
}

/// A command timed from spawn to exit, its output removed before each sample (off the
/// clock) and kept after it, for the comparison at the end.
fn command_op<'a>(key: &'static str, output: &'a Path, make: impl Fn() -> Command + 'a) -> Op<'a> {
    Op::timed(key, move |_| {
        let _ = std::fs::remove_file(output);
        let mut c = make();
        c.stdout(Stdio::null());
        run_timed(c).0
    })
    .settled()
    .once()
}

fn fresh_processes(cx: &mut Ctx, dir: &Path, card: &mut Scorecard) -> String {
    cx.progress("shape: fresh processes, `onnx-light infer-shapes` against onnx");
    let cli = cli_binary();
    let structure = dir.join("structure.onnx");
    let bert = dir.join("bert.onnx");
    let outs: Vec<PathBuf> = (0..6).map(|i| dir.join(format!("out{i}.onnx"))).collect();
    let cli_cmd = |input: &Path, output: &Path| {
        let (cli, input, output) = (cli.clone(), input.to_path_buf(), output.to_path_buf());
        move || {
            let mut c = Command::new(&cli);
            c.arg("-q")
                .arg("infer-shapes")
                .arg("--no-sync")
                .arg("--force")
                .arg(&input)
                .arg(&output);
            c
        }
    };
    let cxr: &Ctx = cx;
    let py = |code: &'static str, input: &Path, output: &Path| {
        let (input, output) = (input.to_path_buf(), output.to_path_buf());
        move || python_c(cxr, code, &[&input, &output])
    };
    let none = dir.join("none");
    let ops = vec![
        command_op("shf.s.cli", &outs[0], cli_cmd(&structure, &outs[0])),
        command_op("shf.s.path", &outs[1], py(ONNX_PATH, &structure, &outs[1])),
        command_op("shf.s.load", &outs[2], py(ONNX_LOAD, &structure, &outs[2])),
        command_op("shf.b.cli", &outs[3], cli_cmd(&bert, &outs[3])),
        command_op("shf.b.path", &outs[4], py(ONNX_PATH, &bert, &outs[4])),
        command_op("shf.b.load", &outs[5], py(ONNX_LOAD, &bert, &outs[5])),
        command_op("shf.python", &none, || python_c(cxr, "import onnx", &[])),
    ];
    let sampling = cx.cfg.fresh_sampling();
    let rounds = sampling.rounds;
    let mut results = Results::default();
    measure("shape fresh processes", ops, sampling, &mut results);
    let read_model = |p: &Path| {
        io::load_with(
            p,
            &ParseOptions::default()
                .structure_only(true)
                .load_external_data(false),
        )
        .expect("load an inferred model")
    };
    let compare = |ours: &Path, theirs: &Path| {
        let same_bytes = std::fs::read(ours).ok() == std::fs::read(theirs).ok();
        agreement_of(&read_model(ours), &read_model(theirs), same_bytes)
    };
    let agree_s = compare(&outs[0], &outs[1]);
    let agree_s_load = compare(&outs[0], &outs[2]);
    let agree_b = compare(&outs[3], &outs[4]);
    let agree_b_load = compare(&outs[3], &outs[5]);
    for p in &outs {
        let _ = std::fs::remove_file(p);
    }
    let (s_len, b_len) = (file_len(&structure), file_len(&bert));
    let t = Table {
        short: "shape fresh",
        title: "Shape inference in a fresh process: `onnx-light infer-shapes IN OUT` against \
            `onnx` in a new Python process"
            .into(),
        intro: format!(
            "Whole processes, spawn to exit, warm page cache, writes settled (`sync`) before \
            each sample, {rounds} rounds: `onnx-light -q infer-shapes --no-sync --force IN OUT` \
            (release build; the weights are copied file to file) against `python -c \
            \"onnx.shape_inference.infer_shapes_path(IN, OUT)\"` and `python -c \
            \"onnx.save(onnx.shape_inference.infer_shapes(onnx.load(IN)), OUT)\"` \
            (interpreter start-up and `import onnx` included, as a user pays them; the last \
            row is that alone). Structure-heavy {:.1} MB, BERT-base {:.0} MB, single files. \
            The outputs of the last round compared: structure-heavy, ours against \
            `infer_shapes_path`: {}; against load + `infer_shapes` + save: {}. BERT-base: {}; {}.",
            s_len as f64 / MB,
            b_len as f64 / MB,
            agree_s.text(),
            agree_s_load.text(),
            agree_b.text(),
            agree_b_load.text(),
        ),
        peers: vec![
            ("shf.s.path", "onnx path"),
            ("shf.s.load", "onnx load+save"),
        ],
        rows: vec![
            Row::new(
                "structure-heavy, ours: `onnx-light infer-shapes`",
                "shf.s.cli",
            ),
            Row::new("structure-heavy, onnx: `infer_shapes_path`", "shf.s.path"),
            Row::new(
                "structure-heavy, onnx: `load` + `infer_shapes` + `save`",
                "shf.s.load",
            ),
        ],
    };
    let mut s = harness::render(&t, &results, card);
    let t = Table {
        short: "shape fresh BERT",
        title: "The same, BERT-base single file".into(),
        intro: String::new(),
        peers: vec![
            ("shf.b.path", "onnx path"),
            ("shf.b.load", "onnx load+save"),
        ],
        rows: vec![
            Row::new("BERT-base, ours: `onnx-light infer-shapes`", "shf.b.cli"),
            Row::new("BERT-base, onnx: `infer_shapes_path`", "shf.b.path"),
            Row::new(
                "BERT-base, onnx: `load` + `infer_shapes` + `save`",
                "shf.b.load",
            ),
            Row::new("`python -c \"import onnx\"`", "shf.python"),
        ],
    };
    s.push_str(&harness::render(&t, &results, card));
    s
}

/// Peak memory of inferring the types of a single-file model larger than 2 GiB.
fn beyond_2gib(cx: &mut Ctx, dir: &Path) -> String {
    cx.progress("shape: generating a weight-heavy model larger than 2 GiB");
    let big = dir.join("big.onnx");
    let ext_dir = dir.join("big_ext");
    std::fs::create_dir_all(&ext_dir).expect("create big_ext/");
    let big_ext = ext_dir.join("model.onnx");
    {
        let model = models::weight_heavy(BIG_HIDDEN);
        io::save(&model, &big, &SerializeOptions::default().sync(false)).expect("save big.onnx");
        io::save(
            &model,
            &big_ext,
            &SerializeOptions::default()
                .sync(false)
                .external_data(ExternalDataOptions::new("model.data")),
        )
        .expect("save big_ext/model.onnx");
    }
    let len = file_len(&big);
    assert!(len > 2 * (1 << 30), "the model is larger than 2 GiB");
    cx.progress("shape: peak memory of inferring the > 2 GiB model (child processes)");
    let cli = cli_binary();
    let (cli_out, py_out, onnx_out, ext_out) = (
        dir.join("big-cli.onnx"),
        dir.join("big-py.onnx"),
        dir.join("big-onnx.onnx"),
        ext_dir.join("inferred.onnx"),
    );
    let cli_run = run_peak({
        let mut c = Command::new(&cli);
        c.arg("-q")
            .arg("infer-shapes")
            .arg("--no-sync")
            .arg("--force")
            .arg(&big)
            .arg(&cli_out);
        c
    });
    let has_ours_py = python_c(cx, "import onnx_light.onnx.shape_inference", &[])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let py_run = has_ours_py.then(|| run_peak(python_c(cx, OURS_PY_PATH, &[&big, &py_out])));
    let onnx_run = run_peak(python_c(cx, ONNX_PATH, &[&big, &onnx_out]));
    // The reference: onnx's inference of the same model with its weights in a data file
    // (the only way onnx reads a model this large).
    let ext_run = run_peak(python_c(cx, ONNX_PATH, &[&big_ext, &ext_out]));
    let read_model = |p: &Path| {
        io::load_with(
            p,
            &ParseOptions::default()
                .structure_only(true)
                .load_external_data(false),
        )
        .ok()
    };
    let reference = ext_run.ok.then(|| read_model(&ext_out)).flatten();
    let cli_model = cli_run.ok.then(|| read_model(&cli_out)).flatten();
    let verdict = |m: Option<&Model>| -> String {
        match (m, &reference) {
            (Some(m), Some(r)) => agreement_of(m, r, false).text(),
            (None, _) => "no output".into(),
            (Some(_), None) => "no reference".into(),
        }
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### Peak memory of shape inference on a {:.2} GiB single-file model\n\n\
         The weight-heavy transformer at width {BIG_HIDDEN} ({:.2} GiB, one file), each \
         command a fresh process whose `/proc/<pid>/status` is read every millisecond: \
         `VmHWM` (peak resident, pages of mapped files included), and the highest \
         `RssAnon` (memory the process allocated) and `RssFile` (mapped file pages) seen. \
         \"same types as onnx\": the value types against onnx's `infer_shapes_path` of the \
         same model saved with external data (onnx reads a model this large only that \
         way).\n",
        len as f64 / GIB,
        len as f64 / GIB,
    );
    let _ = writeln!(
        s,
        "| command | time | peak RSS (`VmHWM`) | peak `RssAnon` | peak `RssFile` | ÷ file | result |\n\
         |---|--:|--:|--:|--:|--:|---|"
    );
    let row = |s: &mut String, what: &str, r: &PeakRun, result: String| {
        let _ = writeln!(
            s,
            "| {what} | {} | {:.0} MB | {:.0} MB | {:.0} MB | {:.3}x | {} |",
            harness::fmt_time(r.wall.as_secs_f64()),
            r.hwm as f64 / MB,
            r.anon as f64 / MB,
            r.file as f64 / MB,
            r.hwm as f64 / len as f64,
            if r.ok {
                result
            } else {
                format!("failed: `{}`", last_line(&r.stderr))
            }
        );
    };
    row(
        &mut s,
        "ours: `onnx-light infer-shapes --no-sync IN OUT`",
        &cli_run,
        format!("same types as onnx: {}", verdict(cli_model.as_ref())),
    );
    match &py_run {
        Some(r) => {
            let m = r.ok.then(|| read_model(&py_out)).flatten();
            row(
                &mut s,
                "ours: Python `onnx_light.onnx.shape_inference.infer_shapes_path(IN, OUT)`",
                r,
                format!("same types as onnx: {}", verdict(m.as_ref())),
            );
        }
        None => {
            let _ = writeln!(
                s,
                "| ours: Python `onnx_light...infer_shapes_path` | | | | | | not measured: \
                 `onnx_light` is not installed in {} |",
                cx.py.interpreter.display()
            );
        }
    }
    row(
        &mut s,
        "onnx: `onnx.shape_inference.infer_shapes_path(IN, OUT)`",
        &onnx_run,
        "ran".into(),
    );
    row(
        &mut s,
        "onnx: the same with the weights in a data file (the reference)",
        &ext_run,
        "the reference".into(),
    );
    s.push('\n');
    for p in [&cli_out, &py_out, &onnx_out, &big, &big_ext] {
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_dir_all(&ext_dir);
    s
}
