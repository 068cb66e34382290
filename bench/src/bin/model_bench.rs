//! `model-bench`: onnx-light on real-sized ONNX models, side by side in one run with
//! `prost` (types generated at build time from `schema/onnx.proto` by `build.rs`: protox +
//! prost-build, no `protoc`), the official Python `onnx` package (in the pinned test venv)
//! and the physical references (`memcpy`, `std::fs::read` / `write`). Prints markdown
//! tables: medians, ratios to each peer, and the performance targets of the issues with a
//! verdict.
//!
//! ```text
//! cargo run --release -p onnx-light-bench --bin model-bench              # ~6 min
//! cargo run --release -p onnx-light-bench --bin model-bench -- --quick   # < 3 min
//! ```
//!
//! Models (generated, written to `target/bench-data`, deleted at the end unless `--keep`):
//! a ~1 GiB weight-heavy transformer-style model (single file; with one 4096-aligned
//! external data file; split into 256 MiB files), the same graph with 1/16 of the weights,
//! and a ~24 MB structure-heavy model of ~200 000 nodes (see `model_bench/models.rs`);
//! for `shape`, also a BERT-base encoder laid out as `torch.onnx.export` writes it (438
//! MB) and the weight-heavy graph at 2.12 GiB in one file.
//!
//! Sections (`--only` takes a comma-separated list): `mem` (decode and encode of the
//! weight-heavy model in memory, memcpy references), `save`, `file` (loads from a warm
//! page cache), `ext` (external data), `struct` (structure-heavy model in memory), `rss`
//! (peak memory, each load in a fresh process), `check` (`onnx_light::checker` against
//! `onnx.checker.check_model` on both models in memory), `fresh` (each sample a new
//! process: loads, and the command-line tool as users call it, against `onnx` in a new
//! Python process and `cp`; see `model_bench/fresh.rs`), `shape` (`shape::infer_shapes`
//! against `onnx.shape_inference` in memory and in fresh processes, and the peak memory
//! of inferring a model larger than 2 GiB; see `model_bench/shape.rs`). Other options:
//! `--quick` (3 rounds instead of 7; shorter samples, no 1-thread or `fsync` rows),
//! `--rounds N` (`fresh` and `shape`'s fresh processes take 5 unless given, and never
//! fewer), `--keep`.
//!
//! Method: every operation is run once (warm-up and calibration: fast ones are repeated
//! so that a sample lasts ≥ 20 ms, 5 ms with `--quick`), then the operations of a section
//! are sampled round-robin, one sample of each per round, the order reversed every other
//! round; the tables give the median (and range) over the rounds, and each target also
//! shows the per-round ratio (the two samples of a round are taken moments apart).
//! Decoded values are dropped after the clock stops, for every library. Operations that
//! write files are settled: the machine's dirty pages are written back (`sync`) before
//! each of their samples, off the clock (`Op::settled`). The Python peer
//! times itself inside a long-lived worker (`bench/python/model_bench_worker.py`), so
//! interpreter start-up is never measured.
//!
//! Hidden modes: `--child MODE PATH` (one load in a fresh process, for the peak-memory
//! table), `--fresh MODE PATH` (a load timed twice in a fresh process) and `--profile OP
//! PATH [ITERS]` (one operation in a loop, for `valgrind --tool=callgrind
//! --toggle-collect='*profile_target*'` or `perf record`; prints the median iteration).

#[path = "model_bench/child.rs"]
mod child;
#[path = "model_bench/fresh.rs"]
mod fresh;
#[path = "model_bench/harness.rs"]
mod harness;
#[path = "model_bench/models.rs"]
mod models;
#[path = "model_bench/python.rs"]
mod python;
#[path = "model_bench/shape.rs"]
mod shape;

use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::Model;
use onnx_light::ByteOwner;
use onnx_light_tests::mapped::load_mapped;
use prost::Message as _;
use serde_json::json;

use harness::{fmt_ratio, fmt_time, measure, Op, Results, Row, Sampling, Scorecard, Table, Target};
use python::{PythonEnv, Worker};

/// prost's types for the schema, `bytes` as `Vec<u8>`.
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    missing_debug_implementations
)]
mod prost_vec {
    pub mod onnx {
        include!(concat!(env!("OUT_DIR"), "/prost_vec/onnx.rs"));
    }
}

/// prost's types for the schema, `bytes` as `bytes::Bytes` (zero-copy decode).
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    missing_debug_implementations
)]
mod prost_bytes {
    pub mod onnx {
        include!(concat!(env!("OUT_DIR"), "/prost_bytes/onnx.rs"));
    }
}

const MB: f64 = 1e6;
const GIB: f64 = (1u64 << 30) as f64;
/// Split size for the split external-data save.
const SPLIT: u64 = 256 << 20;

/// An `Arc<Vec<u8>>` as a `bytes::Bytes` owner (prost's zero-copy input).
struct ArcBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for ArcBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

struct Config {
    quick: bool,
    keep: bool,
    sampling: Sampling,
    /// `--rounds N` was given (else the fresh-process section takes 5 rounds).
    rounds_given: bool,
    only: Option<Vec<String>>,
}

/// Operations `--quick` leaves out: the 1-thread variants, the `fsync` references and
/// prost's zero-copy decode (their rows are then absent from the tables).
const QUICK_SKIP: &[&str] = &[
    "w.dec.copy1",
    "w.dec.prost_bytes",
    "w.enc.ours1",
    "memcpy.huge2",
    "sv.save1",
    "sv.write_sync",
    "sv.atomic",
    "f.load1",
    "x.load1",
    "x.save1",
    "x.write_sync",
    "x.atomic",
    "s.enc.ours1",
    "s.enc.decoded1",
];

impl Config {
    /// The sampling of the sections whose every sample is a new process: 5 rounds, at
    /// least 5 with `--rounds`.
    fn fresh_sampling(&self) -> Sampling {
        let rounds = if self.rounds_given {
            self.sampling.rounds.max(5)
        } else {
            5
        };
        Sampling {
            rounds,
            ..self.sampling
        }
    }

    /// The operations to measure: all of them, or the `--quick` subset.
    fn select<'a>(&self, ops: Vec<Op<'a>>) -> Vec<Op<'a>> {
        if self.quick {
            ops.into_iter()
                .filter(|op| !QUICK_SKIP.contains(&op.key))
                .collect()
        } else {
            ops
        }
    }

    fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|s| s == section))
    }
}

/// The sections `--only` may name.
const SECTIONS: [&str; 9] = [
    "mem", "struct", "file", "save", "ext", "rss", "check", "fresh", "shape",
];

fn parse_args() -> Config {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--profile") {
        let op = args.get(1).expect("--profile OP PATH [ITERS]");
        let path = args.get(2).expect("--profile OP PATH [ITERS]");
        let iters = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(1);
        profile(op, Path::new(path), iters);
        std::process::exit(0);
    }
    if args.first().map(String::as_str) == Some("--fresh") {
        let mode = args.get(1).expect("--fresh MODE PATH");
        let path = args.get(2).expect("--fresh MODE PATH");
        fresh::child(mode, Path::new(path));
        std::process::exit(0);
    }
    if args.first().map(String::as_str) == Some("--child") {
        let mode = args.get(1).expect("--child MODE PATH");
        let path = args.get(2).expect("--child MODE PATH");
        child::run(mode, Path::new(path));
        std::process::exit(0);
    }
    let mut quick = false;
    let mut keep = false;
    let mut rounds = None;
    let mut only = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--keep" => keep = true,
            "--rounds" => {
                rounds = Some(it.next().and_then(|n| n.parse().ok()).expect("--rounds N"))
            }
            "--only" => {
                let list: Vec<String> = it
                    .next()
                    .expect("--only SECTIONS")
                    .split(',')
                    .map(str::to_string)
                    .collect();
                if let Some(bad) = list.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    eprintln!(
                        "model-bench: unknown section {bad:?} in --only; the sections are {}",
                        SECTIONS.join(",")
                    );
                    std::process::exit(2);
                }
                only = Some(list)
            }
            "-h" | "--help" => {
                println!(
                    "model-bench [--quick] [--rounds N] [--keep] [--only {}]",
                    SECTIONS.join(",")
                );
                std::process::exit(0);
            }
            other => panic!("unknown argument {other:?} (try --help)"),
        }
    }
    let rounds_given = rounds.is_some();
    let rounds = rounds.unwrap_or(if quick { 3 } else { 7 });
    Config {
        quick,
        keep,
        sampling: Sampling {
            rounds,
            min_sample: Duration::from_millis(if quick { 5 } else { 20 }),
        },
        rounds_given,
        only,
    }
}

/// Everything the sections share.
struct Ctx {
    dir: PathBuf,
    cfg: Config,
    py: PythonEnv,
    worker: RefCell<Worker>,
    results: Results,
    tables: Vec<Table>,
    /// Markdown paragraphs printed before the tables.
    facts: Vec<String>,
    /// Verdicts of the peak-memory targets: (row, text, met).
    peak_card: Vec<(String, String, bool)>,
    started: Instant,
}

impl Ctx {
    fn progress(&self, what: &str) {
        eprintln!("[{:6.1} s] {what}", self.started.elapsed().as_secs_f64());
    }
}

/// The generated inputs and their files.
struct Inputs {
    weights: Model,
    weights_bytes: Arc<Vec<u8>>,
    weights_path: PathBuf,
    small_path: PathBuf,
    ext_path: PathBuf,
    ext_data_path: PathBuf,
    ext_small_path: PathBuf,
    split_path: PathBuf,
    tensor_count: usize,
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len()
}

fn ext_options() -> ExternalDataOptions {
    ExternalDataOptions::new("model.data").alignment(4096)
}

fn split_options() -> ExternalDataOptions {
    ExternalDataOptions::new("w.bin")
        .alignment(4096)
        .max_file_size(SPLIT)
}

fn generate(cx: &mut Ctx) -> Inputs {
    cx.progress("generating the weight-heavy model");
    let weights = models::weight_heavy(1280);
    let tensor_count = weights.tensors().len();
    let weights_bytes = Arc::new(
        io::save_to_vec(&weights, &SerializeOptions::default()).expect("encode the model"),
    );
    let weights_path = cx.dir.join("weights.onnx");
    std::fs::write(&weights_path, &*weights_bytes).expect("write weights.onnx");

    let small = models::weight_heavy(320);
    let small_path = cx.dir.join("weights_small.onnx");
    io::save(&small, &small_path, &SerializeOptions::default()).expect("save the small model");

    cx.progress("saving the weight-heavy model with external data (one file; split)");
    let ext_dir = cx.dir.join("ext");
    let ext_small_dir = cx.dir.join("ext_small");
    let split_dir = cx.dir.join("ext_split");
    for d in [&ext_dir, &ext_small_dir, &split_dir] {
        // Fresh directories: a save next to an older model would add a second
        // generation of data files (`name~1`) instead of replacing them.
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("create a data directory");
    }
    let ext_path = ext_dir.join("model.onnx");
    io::save(
        &weights,
        &ext_path,
        &SerializeOptions::default().external_data(ext_options()),
    )
    .expect("save with external data");
    let ext_small_path = ext_small_dir.join("model.onnx");
    io::save(
        &small,
        &ext_small_path,
        &SerializeOptions::default().external_data(ext_options()),
    )
    .expect("save the small model with external data");
    let split_path = split_dir.join("model.onnx");
    io::save(
        &weights,
        &split_path,
        &SerializeOptions::default().external_data(split_options()),
    )
    .expect("save with split external data");
    Inputs {
        tensor_count,
        weights,
        weights_bytes,
        weights_path,
        small_path,
        ext_data_path: ext_dir.join("model.data"),
        ext_path,
        ext_small_path,
        split_path,
    }
}

fn memcpy_fresh(src: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(src.len());
    v.extend_from_slice(src);
    v
}

fn huge_region(len: usize) -> memmap2::MmapMut {
    let m = memmap2::MmapMut::map_anon(len).expect("anonymous map");
    let _ = m.advise(memmap2::Advice::HugePage);
    m
}

fn memcpy_huge(src: &[u8], threads: usize) -> memmap2::MmapMut {
    let mut m = huge_region(src.len());
    if threads <= 1 {
        m.copy_from_slice(src);
    } else {
        let chunk = src.len().div_ceil(threads);
        std::thread::scope(|s| {
            for (d, c) in m.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(c));
            }
        });
    }
    m
}

/// Section: decode and encode of the weight-heavy model in memory.
fn section_mem(cx: &mut Ctx, inp: &Inputs) {
    cx.progress("weight-heavy in memory: decode, encode, memcpy");
    let bytes: &[u8] = &inp.weights_bytes;
    let n = bytes.len() as u64;
    {
        let mut w = cx.worker.borrow_mut();
        w.read("w", &inp.weights_path);
        w.parse("w");
        let py_len = w.encoded_len("w");
        cx.facts.push(format!(
            "onnx's `ByteSize()` of the parsed weight-heavy model equals our encoding: {}.",
            py_len == n
        ));
    }
    let prost_model = prost_vec::onnx::ModelProto::decode(bytes).expect("prost decodes");
    cx.facts.push(format!(
        "prost re-encodes the weight-heavy model to exactly our bytes: {}.",
        prost_model.encode_to_vec() == bytes
    ));
    let owner: ByteOwner = inp.weights_bytes.clone();
    let bytes_owner = bytes::Bytes::from_owner(ArcBytes(inp.weights_bytes.clone()));
    let mut warm = vec![1u8; bytes.len()];
    let worker = &cx.worker;
    let model = &inp.weights;
    let opts2 = ParseOptions::default().num_threads(2);
    let opts1 = ParseOptions::default().num_threads(1);
    let ops = vec![
        Op::rust("w.dec.borrow", || {
            io::load_from_slice(bytes, &opts2).expect("borrow decode")
        }),
        Op::rust("w.dec.copy2", || {
            io::load_from_bytes(bytes, &opts2).expect("copy decode")
        }),
        Op::rust("w.dec.copy1", || {
            io::load_from_bytes(bytes, &opts1).expect("copy decode")
        }),
        Op::rust("w.dec.shared", || {
            io::load_from_owner(owner.clone(), &opts2).expect("shared decode")
        }),
        Op::rust("w.dec.prost", || {
            prost_vec::onnx::ModelProto::decode(bytes).expect("prost decode")
        }),
        Op::rust("w.dec.prost_bytes", || {
            prost_bytes::onnx::ModelProto::decode(bytes_owner.clone()).expect("prost decode")
        }),
        Op::timed("w.dec.onnx", |iters| {
            worker
                .borrow_mut()
                .time("load_from_string", iters, json!({"key": "w"}))
        }),
        Op::rust("w.enc.ours2", || {
            io::save_to_vec(model, &SerializeOptions::default().num_threads(2)).expect("encode")
        }),
        Op::rust("w.enc.ours1", || {
            io::save_to_vec(model, &SerializeOptions::default().num_threads(1)).expect("encode")
        }),
        Op::rust("w.enc.prost", || prost_model.encode_to_vec()),
        Op::timed("w.enc.onnx", |iters| {
            worker
                .borrow_mut()
                .time("serialize", iters, json!({"key": "w"}))
        }),
        Op::rust("memcpy.fresh", || memcpy_fresh(bytes)),
        Op::rust("memcpy.huge1", || memcpy_huge(bytes, 1)),
        Op::rust("memcpy.huge2", || memcpy_huge(bytes, 2)),
        Op::rust("memcpy.warm", || warm.copy_from_slice(bytes)),
    ];
    measure(
        "weight-heavy in memory",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    drop(prost_model);

    let peers = vec![
        ("w.dec.prost", "prost"),
        ("w.dec.onnx", "onnx"),
        ("memcpy.fresh", "memcpy 4K"),
    ];
    cx.tables.push(Table {
        short: "weight-heavy decode",
        title: format!(
            "Decode in memory: weight-heavy model ({:.2} GiB, {} tensors)",
            n as f64 / GIB,
            inp.tensor_count
        ),
        intro: "Ratios: the peer's median ÷ this row's (> 1: this row is faster). \
            Ours: `io::load_from_slice` (borrow), `io::load_from_bytes` (copy: the input \
            copied in parallel into one huge-page buffer, decoded in shared mode from it), \
            `io::load_from_owner` (shared, owner an `Arc<Vec<u8>>`). prost: \
            `ModelProto::decode(&[u8])` with `bytes` as `Vec<u8>`, and as `bytes::Bytes` \
            from a `Bytes` input (zero-copy). onnx: \
            `onnx.load_from_string(bytes)` (upb). memcpy: the same number of bytes into \
            fresh 4 KiB-page memory (`Vec`), into a fresh `MADV_HUGEPAGE` map (1 and 2 \
            threads), into warm memory."
            .into(),
        peers,
        rows: vec![
            Row::new("ours: borrow", "w.dec.borrow")
                .target(Target::Faster("w.dec.prost", 100.0))
                .target(Target::Faster("w.dec.onnx", 100.0)),
            Row::new("ours: copy, 2 threads (default)", "w.dec.copy2")
                .bytes(n)
                .target(Target::Faster("w.dec.prost", 1.5)),
            Row::new("ours: copy, 1 thread", "w.dec.copy1")
                .bytes(n)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new("ours: shared", "w.dec.shared"),
            Row::new("prost: decode, `Vec<u8>`", "w.dec.prost").bytes(n),
            Row::new("prost: decode, `bytes::Bytes`", "w.dec.prost_bytes"),
            Row::new("onnx: `load_from_string`", "w.dec.onnx").bytes(n),
            Row::new("memcpy into fresh 4 KiB pages", "memcpy.fresh").bytes(n),
            Row::new("memcpy into fresh MADV_HUGEPAGE, 1 thread", "memcpy.huge1").bytes(n),
            Row::new("memcpy into fresh MADV_HUGEPAGE, 2 threads", "memcpy.huge2").bytes(n),
            Row::new("memcpy into warm memory", "memcpy.warm").bytes(n),
        ],
    });
    cx.tables.push(Table {
        short: "weight-heavy encode",
        title: "Encode in memory: weight-heavy model".into(),
        intro: "Ours: `io::save_to_vec` (exact-size output; with 2 threads the payloads \
            are copied in parallel). prost: `encode_to_vec`. onnx: `SerializeToString()`."
            .into(),
        peers: vec![
            ("w.enc.prost", "prost"),
            ("w.enc.onnx", "onnx"),
            ("memcpy.fresh", "memcpy 4K"),
        ],
        rows: vec![
            Row::new("ours: `save_to_vec`, 2 threads", "w.enc.ours2").bytes(n),
            Row::new("ours: `save_to_vec`, 1 thread", "w.enc.ours1").bytes(n),
            Row::new("prost: `encode_to_vec`", "w.enc.prost").bytes(n),
            Row::new("onnx: `SerializeToString`", "w.enc.onnx").bytes(n),
            Row::new("memcpy into fresh 4 KiB pages", "memcpy.fresh").bytes(n),
        ],
    });
}

/// Section: saving the weight-heavy model to a file.
fn section_save(cx: &mut Ctx, inp: &Inputs) {
    cx.progress("weight-heavy: save");
    let dir = cx.dir.join("save");
    std::fs::create_dir_all(&dir).expect("create save/");
    {
        let mut w = cx.worker.borrow_mut();
        if !w.has_model("w") {
            w.read("w", &inp.weights_path);
            w.parse("w");
        }
    }
    let bytes: &[u8] = &inp.weights_bytes;
    let n = bytes.len() as u64;
    let model = &inp.weights;
    let worker = &cx.worker;
    let (ours, plain, synced, atomic, py) = (
        dir.join("ours.onnx"),
        dir.join("plain.onnx"),
        dir.join("synced.onnx"),
        dir.join("atomic.onnx"),
        dir.join("onnx.onnx"),
    );
    let ops = vec![
        Op::rust("sv.save2", || {
            io::save(model, &ours, &SerializeOptions::default().num_threads(2)).expect("save")
        })
        .settled(),
        Op::rust("sv.save1", || {
            io::save(model, &ours, &SerializeOptions::default().num_threads(1)).expect("save")
        })
        .settled(),
        Op::rust("sv.nosync", || {
            io::save(model, &ours, &SerializeOptions::default().sync(false)).expect("save")
        })
        .settled(),
        Op::rust("sv.write", || std::fs::write(&plain, bytes).expect("write")).settled(),
        Op::rust("sv.write_sync", || write_synced(&synced, bytes)).settled(),
        Op::rust("sv.atomic", || write_atomic(&atomic, bytes)).settled(),
        Op::timed("sv.onnx", |iters| {
            worker
                .borrow_mut()
                .time("save", iters, json!({"key": "w", "path": py}))
        })
        .settled(),
    ];
    measure(
        "weight-heavy save",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    cx.worker.borrow_mut().free("w");
    for p in [&ours, &plain, &synced, &atomic, &py] {
        let _ = std::fs::remove_file(p);
    }
    cx.tables.push(Table {
        short: "save",
        title: "Save to a file: weight-heavy model".into(),
        intro: "Ours: `io::save` (atomic: a temporary file in the same directory, \
            pre-sized, positional writes, `fsync`, rename). `fs::write`: the same bytes, \
            no `fsync` (rewritten in place: `O_TRUNC`); `fs::write + fsync`: then \
            `File::sync_all`; std atomic: what `io::save` guarantees, done with `std` alone \
            (`fs::write` to a new file, `sync_all`, `rename` over the target, directory \
            `sync_all`). onnx: `onnx.save` (`SerializeToString` + write, no `fsync`)."
            .into(),
        peers: vec![
            ("sv.write", "fs::write"),
            ("sv.write_sync", "write+fsync"),
            ("sv.atomic", "std atomic"),
            ("sv.onnx", "onnx"),
        ],
        rows: vec![
            Row::new("ours: `io::save`, 2 threads", "sv.save2")
                .bytes(n)
                .target(Target::Within("sv.write", 1.3))
                .target(Target::Faster("sv.onnx", 3.0)),
            Row::new("ours: `io::save`, 1 thread", "sv.save1")
                .bytes(n)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new("ours: `io::save`, `sync(false)`, 2 threads", "sv.nosync")
                .bytes(n)
                .target(Target::Within("sv.write", 1.3))
                .note("atomic, no `fsync`: like for like with `fs::write`"),
            Row::new("`std::fs::write`", "sv.write").bytes(n),
            Row::new("`std::fs::write` + `sync_all`", "sv.write_sync").bytes(n),
            Row::new(
                "std atomic save: `fs::write` to a new file + `sync_all` + `rename`",
                "sv.atomic",
            )
            .bytes(n),
            Row::new("onnx: `onnx.save`", "sv.onnx").bytes(n),
        ],
    });
}

/// What an atomic, durable save costs with `std` alone: the bytes written to a new file
/// next to `path`, flushed to disk, renamed over `path` (then the directory flushed).
fn write_atomic(path: &Path, bytes: &[u8]) {
    let mut temp = path.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = PathBuf::from(temp);
    write_synced(&temp, bytes);
    std::fs::rename(&temp, path).expect("rename");
    if let Some(dir) = path.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .expect("fsync the directory");
    }
}

fn write_synced(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).expect("create");
    f.write_all(bytes).expect("write");
    f.sync_all().expect("fsync");
}

/// Section: loading the single-file weight-heavy model from a warm page cache.
fn section_file(cx: &mut Ctx, inp: &Inputs) {
    cx.progress("weight-heavy: load from file");
    let path = &inp.weights_path;
    let small = &inp.small_path;
    let n = file_len(path);
    let worker = &cx.worker;
    let ops = vec![
        Op::rust("f.load2", || {
            io::load_with(path, &ParseOptions::default().num_threads(2)).expect("load")
        }),
        Op::rust("f.load1", || {
            io::load_with(path, &ParseOptions::default().num_threads(1)).expect("load")
        }),
        Op::rust("f.nocopy", || {
            load_mapped(path, &ParseOptions::default()).expect("no-copy load")
        }),
        Op::rust("f.nocopy_small", || {
            load_mapped(small, &ParseOptions::default()).expect("no-copy load")
        }),
        Op::rust("f.structure", || {
            io::load_with(path, &ParseOptions::default().structure_only(true))
                .expect("structure-only load")
        }),
        Op::rust("f.read", || std::fs::read(path).expect("read")),
        Op::rust("f.prost", || {
            let bytes = std::fs::read(path).expect("read");
            prost_vec::onnx::ModelProto::decode(&bytes[..]).expect("prost decode")
        }),
        Op::timed("f.onnx", |iters| {
            worker
                .borrow_mut()
                .time("load", iters, json!({"path": path, "external": true}))
        }),
    ];
    measure(
        "weight-heavy file load",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    let per_tensor = cx
        .results
        .median("f.nocopy")
        .map(|t| fmt_time(t / inp.tensor_count as f64))
        .unwrap_or_default();
    cx.tables.push(Table {
        short: "file load",
        title: format!(
            "Load from a file (warm page cache): weight-heavy model, {:.2} GiB single file",
            n as f64 / GIB
        ),
        intro: format!(
            "Ours: `io::load_with(path, options)`: owned (the file read with positional \
            reads into one huge-page buffer the tensors share), `io::load_mapped` (the file \
            mapped, tensors are slices of the map), `structure_only(true)` (weights left on \
            disk, the structure read around them). The \"small\" row: the same graph with 1/16 of the weight bytes ({:.0} \
            MB), to show that the no-copy load does not depend on weight size. prost: \
            `fs::read` + decode. onnx: `onnx.load(path)`.",
            file_len(small) as f64 / MB
        ),
        peers: vec![
            ("f.read", "fs::read"),
            ("f.prost", "prost"),
            ("f.onnx", "onnx"),
        ],
        rows: vec![
            Row::new("ours: owned, 2 threads (default)", "f.load2")
                .bytes(n)
                .target(Target::Within("f.read", 1.0))
                .target(Target::Faster("f.onnx", 4.0))
                .target(Target::Faster("f.prost", 2.0)),
            Row::new("ours: owned, 1 thread", "f.load1")
                .bytes(n)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new("ours: no-copy", "f.nocopy")
                .target(Target::Faster("f.onnx", 100.0))
                .target(Target::Within("f.nocopy_small", 1.5))
                .note(format!("{per_tensor} per tensor")),
            Row::new("ours: no-copy, small weights", "f.nocopy_small"),
            Row::new("ours: structure only", "f.structure"),
            Row::new("`std::fs::read`", "f.read").bytes(n),
            Row::new("prost: `fs::read` + decode", "f.prost").bytes(n),
            Row::new("onnx: `onnx.load`", "f.onnx").bytes(n),
        ],
    });
}

/// How the `std` peers of a save write their files.
#[derive(Clone, Copy)]
enum Write {
    /// `std::fs::write`.
    Plain,
    /// Then `File::sync_all`.
    Synced,
    /// A new file, `sync_all`, renamed over the old one: an atomic, durable save.
    Atomic,
}

/// Section: external data (one aligned file; split save).
fn section_ext(cx: &mut Ctx, inp: &Inputs) {
    cx.progress("weight-heavy with external data: load, save");
    let path = &inp.ext_path;
    let small = &inp.ext_small_path;
    let data = &inp.ext_data_path;
    let data_len = file_len(data);
    let model = &inp.weights;
    let worker = &cx.worker;
    let save_dir = cx.dir.join("xsave");
    let write_dir = cx.dir.join("xwrite");
    for d in [&save_dir, &write_dir] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("create a scratch directory");
    }
    let save_path = save_dir.join("model.onnx");
    // The files a split save writes, by size (taken from the fixture saved the same way).
    let split_dir = inp.split_path.parent().expect("a directory");
    let mut files: Vec<(String, u64)> = std::fs::read_dir(split_dir)
        .expect("list ext_split/")
        .map(|e| {
            let e = e.expect("entry");
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().expect("metadata").len(),
            )
        })
        .collect();
    files.sort();
    let split_total: u64 = files.iter().map(|f| f.1).sum();
    let src: &[u8] = &inp.weights_bytes;
    assert!(files.iter().all(|(_, len)| *len as usize <= src.len()));
    let write_all = |how: Write| {
        for (name, len) in &files {
            let p = write_dir.join(name);
            let bytes = &src[..*len as usize];
            match how {
                Write::Plain => std::fs::write(&p, bytes).expect("write"),
                Write::Synced => write_synced(&p, bytes),
                Write::Atomic => write_atomic(&p, bytes),
            }
        }
    };
    let split = SerializeOptions::default().external_data(split_options());
    let ops = vec![
        Op::rust("x.nocopy", || {
            load_mapped(path, &ParseOptions::default()).expect("no-copy load")
        }),
        Op::rust("x.load2", || {
            io::load_with(path, &ParseOptions::default().num_threads(2)).expect("load")
        }),
        Op::rust("x.load1", || {
            io::load_with(path, &ParseOptions::default().num_threads(1)).expect("load")
        }),
        Op::rust("x.lazy", || {
            io::load_with(path, &ParseOptions::default().structure_only(true)).expect("lazy load")
        }),
        Op::rust("x.lazy_small", || {
            io::load_with(small, &ParseOptions::default().structure_only(true)).expect("lazy load")
        }),
        Op::rust("x.nodata", || {
            io::load_with(path, &ParseOptions::default().load_external_data(false))
                .expect("load without data")
        }),
        Op::rust("x.read", || std::fs::read(data).expect("read")),
        Op::timed("x.onnx", |iters| {
            worker
                .borrow_mut()
                .time("load", iters, json!({"path": path, "external": true}))
        }),
        Op::rust("x.save2", || {
            io::save(model, &save_path, &split.clone().num_threads(2)).expect("split save")
        })
        .settled(),
        Op::rust("x.save1", || {
            io::save(model, &save_path, &split.clone().num_threads(1)).expect("split save")
        })
        .settled(),
        Op::rust("x.nosync", || {
            io::save(model, &save_path, &split.clone().sync(false)).expect("split save")
        })
        .settled(),
        Op::rust("x.write", || write_all(Write::Plain)).settled(),
        Op::rust("x.write_sync", || write_all(Write::Synced)).settled(),
        Op::rust("x.atomic", || write_all(Write::Atomic)).settled(),
    ];
    measure(
        "external data",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    let _ = std::fs::remove_dir_all(&save_dir);
    let _ = std::fs::remove_dir_all(&write_dir);
    let per_tensor = cx
        .results
        .median("x.nocopy")
        .map(|t| fmt_time(t / inp.tensor_count as f64))
        .unwrap_or_default();
    cx.tables.push(Table {
        short: "external data",
        title: format!(
            "External data: weight-heavy model, {:.2} GiB in one 4096-aligned data file",
            data_len as f64 / GIB
        ),
        intro: format!(
            "Loads of `model.onnx` ({} KB) + `model.data`: no-copy (each data file mapped \
            once, tensors are slices of the map), owned (payloads read in parallel into one \
            huge-page buffer), lazy (`structure_only`: each tensor's range resolved and \
            checked, nothing read), and decoding `model.onnx` alone \
            (`load_external_data(false)`) as the structure-only reference; \"small\" = the \
            same graph with 1/16 of the weights. onnx: \
            `onnx.load(path, load_external_data=True)`. Save: `io::save` with \
            `ExternalDataOptions::new(\"w.bin\").alignment(4096).max_file_size(256 MiB)` \
            ({} files, {:.2} GiB in all, each `fsync`ed, renamed into place) against \
            writing files of the same sizes with `std::fs::write` (rewritten in place), \
            then `sync_all`, and the std atomic equivalent (each file new, `sync_all`, \
            `rename`).",
            file_len(path) / 1000,
            files.len(),
            split_total as f64 / GIB
        ),
        peers: vec![
            ("x.read", "fs::read data"),
            ("x.onnx", "onnx"),
            ("x.write", "fs::write"),
            ("x.write_sync", "write+fsync"),
            ("x.atomic", "std atomic"),
        ],
        rows: vec![
            Row::new("ours: no-copy", "x.nocopy")
                .target(Target::Faster("x.onnx", 100.0))
                .note(format!("{per_tensor} per tensor")),
            Row::new("ours: owned, 2 threads (default)", "x.load2")
                .bytes(data_len)
                .target(Target::Within("x.read", 1.3)),
            Row::new("ours: owned, 1 thread", "x.load1")
                .bytes(data_len)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new("ours: lazy (structure only)", "x.lazy")
                .target(Target::Within("x.lazy_small", 1.5))
                .target(Target::Within("x.nodata", 2.0)),
            Row::new("ours: lazy, small weights", "x.lazy_small"),
            Row::new("ours: `model.onnx` without its data", "x.nodata"),
            Row::new("`std::fs::read` of the data file", "x.read").bytes(data_len),
            Row::new("onnx: `onnx.load(load_external_data=True)`", "x.onnx").bytes(data_len),
            Row::new("ours: split aligned save, 2 threads", "x.save2")
                .bytes(split_total)
                .target(Target::Within("x.write", 1.3)),
            Row::new("ours: split aligned save, 1 thread", "x.save1")
                .bytes(split_total)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new(
                "ours: split aligned save, `sync(false)`, 2 threads",
                "x.nosync",
            )
            .bytes(split_total)
            .target(Target::Within("x.write", 1.3))
            .note("atomic, no `fsync`: like for like with `fs::write`"),
            Row::new("`std::fs::write` of the same files", "x.write").bytes(split_total),
            Row::new("`std::fs::write` + `sync_all`", "x.write_sync").bytes(split_total),
            Row::new(
                "std atomic: each file new + `sync_all` + `rename`",
                "x.atomic",
            )
            .bytes(split_total),
        ],
    });
}

/// Section: the structure-heavy model in memory.
/// Writes the structure-heavy model to `structure.onnx` in the data directory.
fn write_structure(cx: &Ctx, model: &Model) -> PathBuf {
    let bytes = io::save_to_vec(model, &SerializeOptions::default()).expect("encode");
    let path = cx.dir.join("structure.onnx");
    std::fs::write(&path, &bytes).expect("write structure.onnx");
    path
}

fn section_struct(cx: &mut Ctx) -> PathBuf {
    cx.progress("generating the structure-heavy model");
    let model = models::structure_heavy(10_000);
    let nodes = count_nodes(&model);
    let path = write_structure(cx, &model);
    let bytes = Arc::new(std::fs::read(&path).expect("read structure.onnx"));
    cx.progress("structure-heavy in memory: decode, encode");
    {
        let mut w = cx.worker.borrow_mut();
        w.read("s", &path);
        w.parse("s");
        let py_len = w.encoded_len("s");
        cx.facts.push(format!(
            "onnx's `ByteSize()` of the parsed structure-heavy model equals our encoding: {}.",
            py_len == bytes.len() as u64
        ));
    }
    let b: &[u8] = &bytes;
    let prost_model = prost_vec::onnx::ModelProto::decode(b).expect("prost decodes");
    cx.facts.push(format!(
        "prost re-encodes the structure-heavy model to exactly our bytes: {}.",
        prost_model.encode_to_vec() == b
    ));
    let owner: ByteOwner = bytes.clone();
    let worker = &cx.worker;
    let opts = ParseOptions::default();
    let opts1 = ParseOptions::default().num_threads(1);
    let m = &model;
    // The model as a load gives it (each peer also encodes a model it decoded), beside
    // the model built in memory above: the same bytes out, a different memory layout.
    let decoded = io::load_from_bytes(b, &ParseOptions::default()).expect("decode");
    let d = &decoded;
    let ops = vec![
        Op::rust("s.dec.borrow", || {
            io::load_from_slice(b, &opts).expect("borrow")
        }),
        Op::rust("s.dec.borrow1", || {
            io::load_from_slice(b, &opts1).expect("borrow")
        }),
        Op::rust("s.dec.copy", || {
            io::load_from_bytes(b, &opts).expect("copy")
        }),
        Op::rust("s.dec.copy1", || {
            io::load_from_bytes(b, &opts1).expect("copy")
        }),
        Op::rust("s.dec.shared", || {
            io::load_from_owner(owner.clone(), &opts).expect("shared")
        }),
        Op::rust("s.dec.prost", || {
            prost_vec::onnx::ModelProto::decode(b).expect("prost decode")
        }),
        Op::timed("s.dec.onnx", |iters| {
            worker
                .borrow_mut()
                .time("load_from_string", iters, json!({"key": "s"}))
        }),
        Op::rust("s.enc.ours", || {
            io::save_to_vec(m, &SerializeOptions::default()).expect("encode")
        }),
        Op::rust("s.enc.ours1", || {
            io::save_to_vec(m, &SerializeOptions::default().num_threads(1)).expect("encode")
        }),
        Op::rust("s.enc.decoded", || {
            io::save_to_vec(d, &SerializeOptions::default()).expect("encode")
        }),
        Op::rust("s.enc.decoded1", || {
            io::save_to_vec(d, &SerializeOptions::default().num_threads(1)).expect("encode")
        }),
        Op::rust("s.enc.prost", || prost_model.encode_to_vec()),
        Op::timed("s.enc.onnx", |iters| {
            worker
                .borrow_mut()
                .time("serialize", iters, json!({"key": "s"}))
        }),
    ];
    measure(
        "structure-heavy in memory",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    cx.worker.borrow_mut().free("s");
    let len = bytes.len();
    cx.tables.push(Table {
        short: "structure-heavy decode",
        title: format!(
            "Structure-heavy model in memory ({:.1} MB, {} nodes incl. subgraphs)",
            len as f64 / MB,
            nodes
        ),
        intro: "Decode: ours borrow / copy / shared with the same calls as above (for this \
            model, which is mostly structure, `load_from_bytes` decodes in copy mode \
            straight from the input: each string and payload copied once, the input not \
            copied). By default the graph's node and value_info lists are decoded on both \
            cores (`ParseOptions::num_threads`, 0 = all cores); the 1-thread rows decode on \
            the calling thread. prost `decode` (`Vec<u8>` bytes, `String` strings); onnx \
            `load_from_string` (upb, arena-allocated). Encode: `io::save_to_vec` / prost \
            `encode_to_vec` / onnx `SerializeToString`."
            .into(),
        peers: vec![("s.dec.prost", "prost"), ("s.dec.onnx", "onnx")],
        rows: vec![
            Row::new("decode, ours: borrow, 2 threads (default)", "s.dec.borrow")
                .bytes(len as u64)
                .target(Target::Faster("s.dec.prost", 3.0)),
            Row::new("decode, ours: borrow, 1 thread", "s.dec.borrow1")
                .bytes(len as u64)
                .note("no target: the targets apply to the default (all cores)"),
            Row::new("decode, ours: copy, 2 threads (default)", "s.dec.copy")
                .bytes(len as u64)
                .target(Target::Faster("s.dec.prost", 1.5))
                .target(Target::Faster("s.dec.onnx", 1.0)),
            Row::new("decode, ours: copy, 1 thread", "s.dec.copy1")
                .bytes(len as u64)
                .target(Target::Faster("s.dec.onnx", 1.2)),
            Row::new("decode, ours: shared", "s.dec.shared").bytes(len as u64),
            Row::new("decode, prost", "s.dec.prost").bytes(len as u64),
            Row::new("decode, onnx: `load_from_string`", "s.dec.onnx").bytes(len as u64),
        ],
    });
    cx.tables.push(Table {
        short: "structure-heavy encode",
        title: "Structure-heavy model: encode".into(),
        intro: "The same bytes from two models: one decoded from the file \
            (`load_from_bytes`: allocated in the order it is read, as onnx's arena and \
            prost's decoded model are) and the one the benchmark built in memory (nodes, \
            attributes and strings allocated while building, scattered over the heap). \
            Both encodes walk the model twice (sizes, then bytes); on the built one the \
            walks wait on memory."
            .into(),
        peers: vec![("s.enc.prost", "prost"), ("s.enc.onnx", "onnx")],
        rows: vec![
            Row::new(
                "encode, ours: `save_to_vec` of the decoded model, 2 threads (default)",
                "s.enc.decoded",
            )
            .bytes(len as u64)
            .target(Target::Faster("s.enc.prost", 1.0))
            .target(Target::Faster("s.enc.onnx", 1.0)),
            Row::new(
                "encode, ours: `save_to_vec` of the decoded model, 1 thread",
                "s.enc.decoded1",
            )
            .bytes(len as u64),
            Row::new(
                "encode, ours: `save_to_vec` of the built model, 2 threads (default)",
                "s.enc.ours",
            )
            .bytes(len as u64)
            .target(Target::Faster("s.enc.prost", 1.0)),
            Row::new(
                "encode, ours: `save_to_vec` of the built model, 1 thread",
                "s.enc.ours1",
            )
            .bytes(len as u64),
            Row::new("encode, prost: `encode_to_vec`", "s.enc.prost").bytes(len as u64),
            Row::new("encode, onnx: `SerializeToString`", "s.enc.onnx").bytes(len as u64),
        ],
    });
    path
}

/// Section: `onnx_light::checker::check_model` against `onnx.checker.check_model`
/// (`full_check=False`) on the structure-heavy and the weight-heavy model, both already
/// in memory.
fn section_check(cx: &mut Ctx, inp: &Inputs) {
    use onnx_light::checker;
    cx.progress("check: generating the structure-heavy model");
    let structure = models::structure_heavy(10_000);
    let nodes = count_nodes(&structure);
    let s_path = cx.dir.join("check_structure.onnx");
    let s_bytes = io::save_to_vec(&structure, &SerializeOptions::default()).expect("encode");
    std::fs::write(&s_path, &s_bytes).expect("write check_structure.onnx");
    {
        let mut w = cx.worker.borrow_mut();
        w.read("cs", &s_path);
        w.parse("cs");
        w.read("cw", &inp.weights_path);
        w.parse("cw");
    }
    // Both checkers must accept both models (the worker fails loudly otherwise).
    let ours_accept =
        checker::check_model(&structure).is_ok() && checker::check_model(&inp.weights).is_ok();
    cx.facts.push(format!(
        "`onnx.checker.check_model` accepts the structure-heavy and weight-heavy models; so does `onnx_light::checker::check_model`: {ours_accept}."
    ));
    cx.progress("check: structure-heavy and weight-heavy models");
    let worker = &cx.worker;
    let weights = &inp.weights;
    let s = &structure;
    let ops = vec![
        Op::rust("c.s.ours", || checker::check_model(s).is_ok()),
        Op::timed("c.s.onnx", |iters| {
            worker
                .borrow_mut()
                .time("check", iters, json!({"key": "cs"}))
        }),
        Op::timed("c.s.onnx_ser", |iters| {
            worker
                .borrow_mut()
                .time("serialize", iters, json!({"key": "cs"}))
        }),
        Op::rust("c.w.ours", || checker::check_model(weights).is_ok()),
        Op::timed("c.w.onnx", |iters| {
            worker
                .borrow_mut()
                .time("check", iters, json!({"key": "cw"}))
        }),
        Op::timed("c.w.onnx_ser", |iters| {
            worker
                .borrow_mut()
                .time("serialize", iters, json!({"key": "cw"}))
        }),
    ];
    measure(
        "check",
        cx.cfg.select(ops),
        cx.cfg.sampling,
        &mut cx.results,
    );
    {
        let mut w = cx.worker.borrow_mut();
        w.free("cs");
        w.free("cw");
    }
    let _ = std::fs::remove_file(&s_path);
    let intro = "Ours: `onnx_light::checker::check_model(&model)` on the decoded model. \
        onnx: `onnx.checker.check_model(model, full_check=False)` on the parsed \
        `ModelProto`, which serializes the model and has C++ parse it again before \
        checking (that is the call's cost to a user; the `SerializeToString` row shows \
        the serialization part alone).";
    cx.tables.push(Table {
        short: "check structure-heavy",
        title: format!("Check in memory: structure-heavy model ({nodes} nodes incl. subgraphs)"),
        intro: intro.into(),
        peers: vec![("c.s.onnx", "onnx")],
        rows: vec![
            Row::new("ours: `checker::check_model`", "c.s.ours")
                .target(Target::Faster("c.s.onnx", 5.0)),
            Row::new("onnx: `check_model`", "c.s.onnx"),
            Row::new("onnx: `SerializeToString` alone", "c.s.onnx_ser"),
        ],
    });
    cx.tables.push(Table {
        short: "check weight-heavy",
        title: format!(
            "Check in memory: weight-heavy model ({:.2} GiB)",
            inp.weights_bytes.len() as f64 / GIB
        ),
        intro: String::new(),
        peers: vec![("c.w.onnx", "onnx")],
        rows: vec![
            Row::new("ours: `checker::check_model`", "c.w.ours")
                .target(Target::Faster("c.w.onnx", 5.0)),
            Row::new("onnx: `check_model`", "c.w.onnx"),
            Row::new("onnx: `SerializeToString` alone", "c.w.onnx_ser"),
        ],
    });
}

fn count_nodes(m: &Model) -> usize {
    fn graph(g: &onnx_light::onnx::GraphProto<'_>) -> usize {
        g.node
            .iter()
            .map(|n| {
                1 + n
                    .attribute
                    .iter()
                    .map(|a| {
                        a.g.as_deref().map_or(0, graph) + a.graphs.iter().map(graph).sum::<usize>()
                    })
                    .sum::<usize>()
            })
            .sum()
    }
    m.graph.as_ref().map_or(0, graph)
}

/// Section: peak memory, each load in a fresh process.
fn section_rss(cx: &mut Ctx, inp: &Inputs, structure: Option<&Path>) -> String {
    cx.progress("peak memory (child processes)");
    let mut s = String::new();
    let file = file_len(&inp.weights_path);
    let _ = writeln!(
        s,
        "### Peak memory (RSS) of one load, each in a fresh process\n"
    );
    let _ = writeln!(
        s,
        "Peak resident set (`VmHWM`, reset through `/proc/self/clear_refs` just before the \
        operation) minus the resident set at that moment; Rust children re-execute this \
        binary (`--child MODE PATH`), Python children run the worker with `--peak`. File \
        loads include reading the file; in-memory decodes start with the input already \
        read. \"mapped file\" = file pages resident at the end (no-copy maps).\n"
    );
    let _ = writeln!(
        s,
        "| model | operation | peak − baseline | ÷ input size | mapped file | target |\n\
         |---|---|--:|--:|--:|---|"
    );
    let mut card_lines = Vec::new();
    let w = &inp.weights_path;
    let owned = child::measure("load", w);
    let owned_ratio = owned.delta_bytes() as f64 / file as f64;
    let met = owned_ratio <= 1.15;
    let t = format!("≤ 1.15x the file: {:.2}x {}", owned_ratio, tick(met));
    card_lines.push((
        "peak RSS, owned load (weight-heavy)".to_string(),
        t.clone(),
        met,
    ));
    rss_row(
        &mut s,
        "weight-heavy 1 GiB",
        "ours: `io::load` (owned)",
        (owned.baseline_kb, owned.peak_kb),
        file,
        None,
        &t,
    );
    let structure_only = child::measure("structure", w);
    let nocopy = child::measure("nocopy", w);
    // "Structure only plus what is touched": no weight pages resident beyond the pages
    // shared with structure bytes; criterion: the no-copy peak exceeds the
    // structure-only peak by less than 1% of the file.
    let extra = nocopy
        .delta_bytes()
        .saturating_sub(structure_only.delta_bytes());
    let met = (extra as f64) < 0.01 * file as f64;
    let t = format!(
        "structure + touched pages (≤ structure-only + 1% of the file): +{:.1} MB {}",
        extra as f64 / MB,
        tick(met)
    );
    card_lines.push((
        "peak RSS, no-copy load (weight-heavy)".to_string(),
        t.clone(),
        met,
    ));
    rss_row(
        &mut s,
        "weight-heavy 1 GiB",
        "ours: no-copy",
        (nocopy.baseline_kb, nocopy.peak_kb),
        file,
        Some(nocopy.rss_file_kb),
        &t,
    );
    rss_row(
        &mut s,
        "weight-heavy 1 GiB",
        "ours: structure only",
        (structure_only.baseline_kb, structure_only.peak_kb),
        file,
        Some(structure_only.rss_file_kb),
        "",
    );
    let p = child::measure("prost-file", w);
    rss_row(
        &mut s,
        "weight-heavy 1 GiB",
        "prost: `fs::read` + decode",
        (p.baseline_kb, p.peak_kb),
        file,
        None,
        "",
    );
    let p = cx.py.peak("load", w);
    rss_row(
        &mut s,
        "weight-heavy 1 GiB",
        "onnx: `onnx.load`",
        p,
        file,
        None,
        "",
    );

    let x = &inp.ext_path;
    let data = file_len(&inp.ext_data_path);
    let p = child::measure("load", x);
    rss_row(
        &mut s,
        "external data 1 GiB",
        "ours: `io::load` (owned)",
        (p.baseline_kb, p.peak_kb),
        data,
        None,
        "",
    );
    let p = child::measure("nocopy", x);
    rss_row(
        &mut s,
        "external data 1 GiB",
        "ours: no-copy",
        (p.baseline_kb, p.peak_kb),
        data,
        Some(p.rss_file_kb),
        "",
    );
    let p = child::measure("structure", x);
    rss_row(
        &mut s,
        "external data 1 GiB",
        "ours: lazy",
        (p.baseline_kb, p.peak_kb),
        data,
        Some(p.rss_file_kb),
        "",
    );
    let p = cx.py.peak("load", x);
    rss_row(
        &mut s,
        "external data 1 GiB",
        "onnx: `onnx.load(load_external_data=True)`",
        p,
        data,
        None,
        "",
    );

    if let Some(sp) = structure {
        let len = file_len(sp);
        let upb = cx.py.peak("load_from_string", sp);
        let upb_delta = upb.1.saturating_sub(upb.0) * 1024;
        let copy = child::measure("copy-bytes", sp);
        let met = copy.delta_bytes() <= upb_delta;
        let t = format!(
            "≤ upb: {:.0} vs {:.0} MB {}",
            copy.delta_bytes() as f64 / MB,
            upb_delta as f64 / MB,
            tick(met)
        );
        card_lines.push((
            "peak RSS, copy decode (structure-heavy)".to_string(),
            t.clone(),
            met,
        ));
        rss_row(
            &mut s,
            "structure-heavy",
            "ours: copy decode (`load_from_bytes`)",
            (copy.baseline_kb, copy.peak_kb),
            len,
            None,
            &t,
        );
        let p = child::measure("borrow-bytes", sp);
        rss_row(
            &mut s,
            "structure-heavy",
            "ours: borrow decode",
            (p.baseline_kb, p.peak_kb),
            len,
            None,
            "",
        );
        let p = child::measure("prost-bytes", sp);
        rss_row(
            &mut s,
            "structure-heavy",
            "prost: decode",
            (p.baseline_kb, p.peak_kb),
            len,
            None,
            "",
        );
        rss_row(
            &mut s,
            "structure-heavy",
            "onnx: `load_from_string` (upb)",
            upb,
            len,
            None,
            "",
        );
    }
    s.push('\n');
    cx.peak_card.extend(card_lines);
    s
}

/// One row of the peak-memory table: `p` = (baseline, peak) in KiB.
fn rss_row(
    s: &mut String,
    model: &str,
    op: &str,
    p: (u64, u64),
    input: u64,
    file_kb: Option<u64>,
    target: &str,
) {
    let delta = p.1.saturating_sub(p.0) * 1024;
    let _ = writeln!(
        s,
        "| {model} | {op} | {:.0} MB | {:.2}x | {} | {target} |",
        delta as f64 / MB,
        delta as f64 / input as f64,
        file_kb
            .map(|k| format!("{:.1} MB", (k * 1024) as f64 / MB))
            .unwrap_or_default()
    );
}

fn tick(met: bool) -> &'static str {
    if met {
        "✓"
    } else {
        "✗"
    }
}

/// The thread-scaling table, from rows measured in the sections.
fn scaling_table(results: &Results) -> String {
    let mut s = String::from(
        "### Thread scaling (1 vs 2 threads; this machine has 2 cores)\n\n\
         Speed-up = time with 1 thread ÷ time with 2 threads, from the rows above.\n\n\
         | operation | 1 thread | 2 threads | speed-up |\n|---|--:|--:|--:|\n",
    );
    let mut rows = 0;
    for (label, one, two) in [
        (
            "copy decode in memory (`load_from_bytes`)",
            "w.dec.copy1",
            "w.dec.copy2",
        ),
        (
            "encode to memory (`save_to_vec`)",
            "w.enc.ours1",
            "w.enc.ours2",
        ),
        (
            "structure-heavy borrow decode (`load_from_slice`)",
            "s.dec.borrow1",
            "s.dec.borrow",
        ),
        (
            "structure-heavy copy decode (`load_from_bytes`)",
            "s.dec.copy1",
            "s.dec.copy",
        ),
        ("load a file, owned (`io::load`)", "f.load1", "f.load2"),
        ("save a file (`io::save`)", "sv.save1", "sv.save2"),
        ("load with external data, owned", "x.load1", "x.load2"),
        (
            "save with split aligned external data",
            "x.save1",
            "x.save2",
        ),
        (
            "reference: memcpy into MADV_HUGEPAGE memory",
            "memcpy.huge1",
            "memcpy.huge2",
        ),
    ] {
        if let (Some(a), Some(b)) = (results.median(one), results.median(two)) {
            rows += 1;
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} |",
                fmt_time(a),
                fmt_time(b),
                fmt_ratio(a / b)
            );
        }
    }
    if rows == 0 {
        return String::new();
    }
    s.push('\n');
    s
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split(':')
                    .nth(1)
                    .map(|s| s.trim().to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                l.strip_prefix("MemTotal:")?
                    .split_whitespace()
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
        })
        .map_or_else(String::new, |kb| {
            format!(", {:.0} GiB RAM", kb as f64 / (1u64 << 20) as f64)
        });
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    format!(
        "{cores} CPUs ({cpu}){mem}, {} {}, THP `{thp}`",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// `--profile OP PATH [ITERS]`: runs one operation on the model in PATH, ITERS times,
/// inside `profile_target` (for `valgrind --tool=callgrind
/// --toggle-collect='*profile_target*'` or `perf record`), and prints the median and
/// fastest time of one iteration. Each result is dropped right after its iteration,
/// outside `profile_target` and outside the clock, so that the next iteration reuses the
/// freed heap as the benchmark's rounds do. (Run it with
/// `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296`
/// to keep glibc from returning that heap to the kernel between iterations: the
/// benchmark's long-lived process usually keeps it, and without the tunables a large
/// decode pays its page faults again every iteration.) OP: in memory `borrow`, `copy`,
/// `copy1`, `borrow2` (all cores), `shared`, `prost`, `encode`, `encode1`, `prost-encode`; file loads of PATH
/// `load`, `load1`, `read`; file saves into `$TMPDIR/model-bench-profile/` `save`,
/// `save1`, `save-split`, `save-split1`; `check`; `infer` (shape inference on a copy of
/// the model made before the profiled region).
fn profile(op: &str, path: &Path, iters: usize) {
    let bytes = Arc::new(std::fs::read(path).expect("read the model"));
    // `encode-built` / `encode1-built`: the structure-heavy model as the table encodes
    // it, built in memory (PATH is only read), instead of the decoded file.
    let (op, model) = match op.strip_suffix("-built") {
        Some(base) => (base, models::structure_heavy(10_000)),
        None => (
            op,
            io::load_from_bytes(&bytes, &ParseOptions::default()).expect("decode"),
        ),
    };
    let prost_model = prost_vec::onnx::ModelProto::decode(&bytes[..]).expect("prost decode");
    let mut times = Vec::with_capacity(iters.max(1));
    for _ in 0..iters.max(1) {
        if op == "infer" {
            let mut copy = model.clone();
            let started = Instant::now();
            profile_infer(&mut copy);
            times.push(started.elapsed());
            continue;
        }
        let started = Instant::now();
        let result = profile_target(op, path, &bytes, &model, &prost_model);
        times.push(started.elapsed());
        drop(result);
    }
    times.sort();
    eprintln!(
        "{op}: {} per iteration (median of {}; fastest {})",
        fmt_time(times[times.len() / 2].as_secs_f64()),
        times.len(),
        fmt_time(times[0].as_secs_f64())
    );
}

/// Shape inference on `model`, for `--profile infer` (named for `--toggle-collect`).
#[inline(never)]
fn profile_infer(model: &mut Model) {
    let options = onnx_light::shape::InferOptions::default();
    onnx_light::shape::infer_shapes(model, &options).expect("infer_shapes");
}

/// What a profiled operation produced, dropped after the profiled region.
#[allow(dead_code)]
enum Kept<'a> {
    Ours(onnx_light::onnx::ModelProto<'a>),
    Prost(prost_vec::onnx::ModelProto),
    Bytes(Vec<u8>),
    Nothing,
}

#[inline(never)]
fn profile_target<'a>(
    op: &str,
    path: &Path,
    bytes: &'a Arc<Vec<u8>>,
    model: &Model,
    prost_model: &prost_vec::onnx::ModelProto,
) -> Kept<'a> {
    let one = ParseOptions::default().num_threads(1);
    let ours =
        |r: onnx_light::Result<onnx_light::onnx::ModelProto<'a>>| Kept::Ours(r.expect("decode"));
    match op {
        "borrow" => ours(io::load_from_slice(bytes, &one)),
        "borrow2" => ours(io::load_from_slice(bytes, &ParseOptions::default())),
        "copy" => ours(io::load_from_bytes(bytes, &ParseOptions::default())),
        "copy1" => ours(io::load_from_bytes(bytes, &one)),
        "shared" => ours(io::load_from_owner(bytes.clone(), &one)),
        "prost" => Kept::Prost(prost_vec::onnx::ModelProto::decode(&bytes[..]).expect("decode")),
        "encode" => {
            Kept::Bytes(io::save_to_vec(model, &SerializeOptions::default()).expect("encode"))
        }
        "encode1" => Kept::Bytes(
            io::save_to_vec(model, &SerializeOptions::default().num_threads(1)).expect("encode"),
        ),
        "prost-encode" => Kept::Bytes(prost_model.encode_to_vec()),
        "load" => ours(io::load_with(path, &ParseOptions::default())),
        "load1" => ours(io::load_with(path, &one)),
        "read" => Kept::Bytes(std::fs::read(path).expect("read")),
        "save" | "save1" | "save-split" | "save-split1" => {
            let dir = std::env::temp_dir().join("model-bench-profile");
            std::fs::create_dir_all(&dir).expect("create the profile directory");
            let mut options = SerializeOptions::default();
            if op.ends_with('1') {
                options = options.num_threads(1);
            }
            if op.starts_with("save-split") {
                options = options.external_data(split_options());
            }
            io::save(model, dir.join("model.onnx"), &options).expect("save");
            Kept::Nothing
        }
        "check" => {
            if let Err(problems) = onnx_light::checker::check_model(model) {
                panic!("the model does not pass the checker: {problems}");
            }
            Kept::Nothing
        }
        other => panic!("unknown profile op {other}"),
    }
}

fn main() {
    let cfg = parse_args();
    let started = Instant::now();
    let root = onnx_light_tests::python::workspace_root();
    let dir = root.join("target").join("bench-data");
    std::fs::create_dir_all(&dir).expect("create target/bench-data");
    eprintln!("model-bench: data in {}", dir.display());
    let py = PythonEnv::new(&dir);
    let worker = RefCell::new(py.start());
    let load_before = loadavg();
    let mut cx = Ctx {
        dir: dir.clone(),
        cfg,
        py,
        worker,
        results: Results::default(),
        tables: Vec::new(),
        facts: Vec::new(),
        peak_card: Vec::new(),
        started,
    };
    // The weight-heavy models, for every section but `struct` and `shape`.
    let inputs = ["mem", "save", "check", "file", "ext", "rss", "fresh"]
        .iter()
        .any(|s| cx.cfg.wants(s))
        .then(|| generate(&mut cx));
    let inp = || inputs.as_ref().expect("the weight-heavy models");
    if cx.cfg.wants("mem") {
        section_mem(&mut cx, inp());
    }
    if cx.cfg.wants("save") {
        section_save(&mut cx, inp());
    }
    cx.worker.borrow_mut().free("w");
    if cx.cfg.wants("check") {
        section_check(&mut cx, inp());
    }
    if cx.cfg.wants("file") {
        section_file(&mut cx, inp());
    }
    if cx.cfg.wants("ext") {
        section_ext(&mut cx, inp());
    }
    let structure = if cx.cfg.wants("struct") || cx.cfg.wants("rss") {
        Some(section_struct(&mut cx))
    } else if cx.cfg.wants("fresh") {
        cx.progress("generating the structure-heavy model");
        Some(write_structure(&cx, &models::structure_heavy(10_000)))
    } else {
        None
    };
    let rss = if cx.cfg.wants("rss") {
        section_rss(&mut cx, inp(), structure.as_deref())
    } else {
        String::new()
    };
    let mut fresh_card = Scorecard::default();
    let fresh = if cx.cfg.wants("fresh") {
        cx.progress("fresh processes: loads and the command-line tool");
        let sampling = cx.cfg.fresh_sampling();
        fresh::section(
            &fresh::FreshInputs {
                dir: &cx.dir,
                py: &cx.py,
                weights: &inp().weights_path,
                structure: structure.as_deref(),
            },
            sampling,
            &mut fresh_card,
        )
    } else {
        String::new()
    };
    let mut shape_card = Scorecard::default();
    let shape = if cx.cfg.wants("shape") {
        shape::section(&mut cx, &mut shape_card)
    } else {
        String::new()
    };
    let onnx_version = cx.worker.borrow().onnx_version.clone();
    let elapsed = started.elapsed();

    // Report.
    let mut out = String::new();
    let _ = writeln!(out, "## model-bench: onnx-light vs prost vs onnx\n");
    let _ = writeln!(
        out,
        "Machine: {}. Load average {} at the start, {} at the end. onnx {onnx_version} \
         (upb), prost 0.14. {} rounds per operation (median; min – max), samples of ≥ {} ms; \
         run time {:.0} s{}.\n",
        machine(),
        load_before,
        loadavg(),
        cx.cfg.sampling.rounds,
        cx.cfg.sampling.min_sample.as_millis(),
        elapsed.as_secs_f64(),
        if cx.cfg.quick { " (`--quick`)" } else { "" }
    );
    let mut card = Scorecard::default();
    let extra_card = &cx.peak_card;
    for f in &cx.facts {
        let _ = writeln!(out, "- {f}");
    }
    out.push('\n');
    for t in &cx.tables {
        out.push_str(&harness::render(t, &cx.results, &mut card));
    }
    out.push_str(&rss);
    out.push_str(&fresh);
    card.items.append(&mut fresh_card.items);
    out.push_str(&shape);
    card.items.append(&mut shape_card.items);
    out.push_str(&scaling_table(&cx.results));
    let _ = writeln!(
        out,
        "### Targets\n\n| table | row | target | |\n|---|---|---|---|"
    );
    let mut missed = 0;
    for (table, row, v) in &card.items {
        missed += usize::from(!v.met);
        let _ = writeln!(out, "| {table} | {row} | {} | {} |", v.text, tick(v.met));
    }
    for (row, text, met) in extra_card {
        missed += usize::from(!met);
        let _ = writeln!(out, "| peak memory | {row} | {text} | {} |", tick(*met));
    }
    let total = card.items.len() + extra_card.len();
    let _ = writeln!(out, "\n{} of {total} targets met.", total - missed);
    println!("{out}");

    drop(cx.worker);
    if !cx.cfg.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
