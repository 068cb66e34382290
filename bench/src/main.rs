//! `wire-bench`: onnx-light's derive-generated codec against `prost` on the same custom
//! messages, in one run, printing a markdown table of medians and ratios.
//!
//! ```text
//! cargo run --release -p onnx-light-bench --bin wire-bench [-- --quick]
//! ```
//!
//! Two messages are measured:
//!
//! * **bytes-heavy**: 64 entries `{ string name = 1; bytes data = 2; }` of 1 MiB each.
//! * **small-field**: 10 000 records of 3 short strings, 4 integers in four encodings
//!   (`int32`, `sint64`, `fixed32`, `uint64`) and a packed `repeated int64` of 4 values.
//!
//! Every operation is warmed up and calibrated (a sample repeats it for ~30 ms, ~5 ms with
//! `--quick`), then the operations of a message are sampled round-robin: one sample of
//! each per round, 15 rounds (5 with `--quick`), each sample preceded by one untimed run.
//! Slow phases of a shared machine thus hit all operations alike. The table reports the
//! median time per operation, the `prost / ours` ratio of the medians (above 1:
//! onnx-light is faster) and the median and range of the per-round ratios. Decoded
//! values are dropped inside the timed region, for both libraries; both libraries must
//! write byte-identical encodings, which the program checks before timing anything.
//!
//! For profiling, `--only MSG --op TEXT --iters N --samples 1` runs one operation exactly
//! `N` times (e.g. under `valgrind --tool=callgrind`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use onnx_light::prelude::{Bytes, Decode, DecodeOwned, Message as _};
use onnx_light::{ByteOwner, DecodeOptions, Str};

/// The messages as onnx-light declares them.
mod ours {
    use onnx_light::prelude::*;

    /// One named payload.
    #[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
    #[proto(name = "bench.Chunk")]
    pub struct Chunk<'a> {
        #[proto(1)]
        pub name: Str<'a>,
        #[proto(2)]
        pub data: Bytes<'a>,
    }

    /// The bytes-heavy message.
    #[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
    #[proto(name = "bench.Blobs")]
    pub struct Blobs<'a> {
        #[proto(1)]
        pub chunks: Vec<Chunk<'a>>,
    }

    /// One small record.
    #[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
    #[proto(name = "bench.Record")]
    pub struct Record<'a> {
        #[proto(1)]
        pub name: Str<'a>,
        #[proto(2)]
        pub kind: Str<'a>,
        #[proto(3)]
        pub tag: Str<'a>,
        #[proto(4)]
        pub id: i32,
        #[proto(5, sint64)]
        pub offset: i64,
        #[proto(6, fixed32)]
        pub flags: u32,
        #[proto(7)]
        pub size: u64,
        #[proto(8, packed)]
        pub dims: Vec<i64>,
    }

    /// The small-field message.
    #[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
    #[proto(name = "bench.Catalog")]
    pub struct Catalog<'a> {
        #[proto(1)]
        pub records: Vec<Record<'a>>,
    }
}

/// The same messages declared for prost (proto3 semantics: implicit presence, packed
/// repeated scalars), so both libraries write identical bytes.
mod theirs {
    /// One named payload, `bytes` as `Vec<u8>`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Chunk {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(bytes = "vec", tag = "2")]
        pub data: Vec<u8>,
    }

    /// The bytes-heavy message, `bytes` as `Vec<u8>`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Blobs {
        #[prost(message, repeated, tag = "1")]
        pub chunks: Vec<Chunk>,
    }

    /// One named payload, `bytes` as `bytes::Bytes` (zero-copy from a `Bytes` input).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ChunkB {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(bytes = "bytes", tag = "2")]
        pub data: bytes::Bytes,
    }

    /// The bytes-heavy message, `bytes` as `bytes::Bytes`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BlobsB {
        #[prost(message, repeated, tag = "1")]
        pub chunks: Vec<ChunkB>,
    }

    /// One small record.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Record {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub kind: String,
        #[prost(string, tag = "3")]
        pub tag: String,
        #[prost(int32, tag = "4")]
        pub id: i32,
        #[prost(sint64, tag = "5")]
        pub offset: i64,
        #[prost(fixed32, tag = "6")]
        pub flags: u32,
        #[prost(uint64, tag = "7")]
        pub size: u64,
        #[prost(int64, repeated, tag = "8")]
        pub dims: Vec<i64>,
    }

    /// The small-field message.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Catalog {
        #[prost(message, repeated, tag = "1")]
        pub records: Vec<Record>,
    }
}

const CHUNKS: usize = 64;
const CHUNK_LEN: usize = 1 << 20;
const RECORDS: usize = 10_000;

// ---- test data ----------------------------------------------------------------------

fn chunk_payload(i: usize) -> Vec<u8> {
    (0..CHUNK_LEN)
        .map(|j| (j.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8)
        .collect()
}

fn blobs() -> (ours::Blobs<'static>, theirs::Blobs) {
    let mut o = ours::Blobs::default();
    let mut t = theirs::Blobs::default();
    for i in 0..CHUNKS {
        let name = format!("layer{i:02}.weight");
        let data = chunk_payload(i);
        o.chunks.push(ours::Chunk {
            name: Str::from(name.clone()),
            data: Bytes::from(data.clone()),
        });
        t.chunks.push(theirs::Chunk { name, data });
    }
    (o, t)
}

fn catalog() -> (ours::Catalog<'static>, theirs::Catalog) {
    const KINDS: [&str; 6] = ["Conv", "Relu", "Add", "MatMul", "Gemm", "Reshape"];
    let mut o = ours::Catalog::default();
    let mut t = theirs::Catalog::default();
    for i in 0..RECORDS {
        let n = i as i64;
        let r = theirs::Record {
            name: format!("node_{i}"),
            kind: KINDS[i % KINDS.len()].to_owned(),
            tag: format!("t{}", i % 97),
            // Mostly small, every 50th negative (int32 negatives take ten bytes).
            id: if i % 50 == 0 {
                -(i as i32) - 1
            } else {
                i as i32
            },
            offset: (n - 5_000) * 37,
            flags: (i as u32).wrapping_mul(2_654_435_761),
            size: ((i as u64) << 20) | 7,
            dims: vec![1, n % 64 + 1, 224, 224 + n % 3],
        };
        o.records.push(ours::Record {
            name: Str::from(r.name.clone()),
            kind: Str::from(r.kind.clone()),
            tag: Str::from(r.tag.clone()),
            id: r.id,
            offset: r.offset,
            flags: r.flags,
            size: r.size,
            dims: r.dims.clone(),
        });
        t.records.push(r);
    }
    (o, t)
}

// ---- measurement --------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Config {
    /// Timed samples (rounds) per operation.
    samples: usize,
    /// Minimum warm-up time per operation.
    warmup: Duration,
    /// Target duration of one sample; short operations repeat within a sample.
    sample_time: Duration,
    /// Profiling: this many iterations per sample, no warm-up, no calibration.
    fixed_iters: Option<u64>,
    /// Run only the operations whose name contains this text.
    op_filter: Option<String>,
}

impl Config {
    fn full() -> Self {
        Config {
            samples: 15,
            warmup: Duration::from_millis(300),
            sample_time: Duration::from_millis(30),
            fixed_iters: None,
            op_filter: None,
        }
    }

    fn quick() -> Self {
        Config {
            samples: 5,
            warmup: Duration::from_millis(30),
            sample_time: Duration::from_millis(5),
            fixed_iters: None,
            op_filter: None,
        }
    }
}

/// One timed operation and its samples (nanoseconds per iteration).
struct Op<'r> {
    name: &'static str,
    run: Box<dyn FnMut() + 'r>,
    iters: u64,
    samples: Vec<f64>,
}

impl std::fmt::Debug for Op<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Op")
            .field("name", &self.name)
            .field("iters", &self.iters)
            .finish()
    }
}

impl<'r> Op<'r> {
    fn new(name: &'static str, run: impl FnMut() + 'r) -> Self {
        Op {
            name,
            run: Box::new(run),
            iters: 1,
            samples: Vec::new(),
        }
    }

    fn sample(&mut self, cfg: &Config) {
        if cfg.fixed_iters.is_none() {
            // One untimed run first: the previous operation of the round left its own
            // data in the caches and its frees in the allocator's bins; this one should
            // not pay for that.
            (self.run)();
        }
        let start = Instant::now();
        for _ in 0..self.iters {
            (self.run)();
        }
        let ns = start.elapsed().as_nanos() as f64 / self.iters as f64;
        self.samples.push(ns);
    }

    fn median(&self) -> f64 {
        median(&self.samples)
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Warms up and calibrates every operation, then samples them round-robin.
fn measure(ops: &mut Vec<Op<'_>>, cfg: &Config) {
    if let Some(filter) = &cfg.op_filter {
        ops.retain(|op| op.name.contains(filter.as_str()));
    }
    for op in ops.iter_mut() {
        if let Some(n) = cfg.fixed_iters {
            op.iters = n;
            continue;
        }
        let start = Instant::now();
        let mut runs = 0u32;
        while runs < 2 || start.elapsed() < cfg.warmup {
            (op.run)();
            runs += 1;
        }
        let per_run = start.elapsed().as_nanos() as f64 / f64::from(runs);
        op.iters = ((cfg.sample_time.as_nanos() as f64 / per_run) as u64).clamp(1, 1_000_000);
    }
    for round in 0..cfg.samples {
        // Alternate the order so no operation always runs first after the previous one.
        if round % 2 == 0 {
            ops.iter_mut().for_each(|op| op.sample(cfg));
        } else {
            ops.iter_mut().rev().for_each(|op| op.sample(cfg));
        }
    }
}

// ---- reporting ----------------------------------------------------------------------

fn fmt_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else {
        format!("{r:.2}x")
    }
}

/// One row of the comparison table.
#[derive(Debug)]
struct Row {
    message: &'static str,
    operation: &'static str,
    /// Name of the onnx-light operation.
    ours: &'static str,
    /// Name of the prost operation.
    prost: &'static str,
    /// Minimum `prost / ours` ratio the project aims for.
    target: Option<f64>,
}

#[derive(Debug, Default)]
struct Report {
    rows: Vec<String>,
    details: Vec<String>,
    missed: Vec<String>,
}

impl Report {
    fn add(&mut self, ops: &[Op<'_>], rows: &[Row]) {
        for row in rows {
            let find = |name: &str| ops.iter().find(|op| op.name == name);
            let (Some(ours_op), Some(prost_op)) = (find(row.ours), find(row.prost)) else {
                continue; // filtered out with --op
            };
            let (ours, prost) = (ours_op.median(), prost_op.median());
            let ratio = prost / ours;
            // Ratios of the two samples taken in the same round (moments apart): their
            // range shows how much the machine's noise moves the comparison.
            let paired: Vec<f64> = ours_op
                .samples
                .iter()
                .zip(&prost_op.samples)
                .map(|(o, p)| p / o)
                .collect();
            let lo = paired.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = paired.iter().copied().fold(0.0, f64::max);
            let mid = median(&paired);
            let target = match row.target {
                None => String::new(),
                Some(t) if ratio >= t => format!("≥ {t} ✓"),
                Some(t) => {
                    self.missed.push(format!(
                        "{} / {}: {} < {t}",
                        row.message,
                        row.operation,
                        fmt_ratio(ratio)
                    ));
                    format!("≥ {t} ✗")
                }
            };
            self.rows.push(format!(
                "| {} | {} | {} | {} | **{}** | {} ({} – {}) | {} |",
                row.message,
                row.operation,
                fmt_time(ours),
                fmt_time(prost),
                fmt_ratio(ratio),
                fmt_ratio(mid),
                fmt_ratio(lo),
                fmt_ratio(hi),
                target
            ));
        }
        let message = rows.first().map_or("", |r| r.message);
        for op in ops {
            let min = op.samples.iter().copied().fold(f64::INFINITY, f64::min);
            let max = op.samples.iter().copied().fold(0.0, f64::max);
            self.details.push(format!(
                "| {message} | {} | {} | {} | {} | {} |",
                op.name,
                fmt_time(op.median()),
                fmt_time(min),
                fmt_time(max),
                op.iters
            ));
        }
    }

    fn print(&self, cfg: &Config) {
        println!(
            "Medians of {} samples per operation; ratio = prost median / onnx-light median \
             (> 1: onnx-light is faster). Per-round ratio: the two samples of each round \
             are taken moments apart, so their ratio is the least disturbed by a busy \
             machine; median (min – max) over the rounds.\n",
            cfg.samples
        );
        println!(
            "| message | operation | onnx-light | prost | prost / ours | per-round ratio | target |"
        );
        println!("|---|---|--:|--:|--:|--:|---|");
        for r in &self.rows {
            println!("{r}");
        }
        println!("\nPer-operation spread (time per iteration):\n");
        println!("| message | operation | median | min | max | iterations / sample |");
        println!("|---|---|--:|--:|--:|--:|");
        for d in &self.details {
            println!("{d}");
        }
        println!();
        if self.missed.is_empty() {
            println!("All targets met.");
        } else {
            println!("Targets missed:");
            for m in &self.missed {
                println!("- {m}");
            }
        }
    }
}

// ---- the benchmarks -----------------------------------------------------------------

fn bench_bytes_heavy(cfg: &Config, report: &mut Report) {
    let (o, t) = blobs();
    let encoded = o.encode_to_vec().expect("encode");
    assert_eq!(
        encoded,
        prost::Message::encode_to_vec(&t),
        "onnx-light and prost must write the same bytes"
    );
    assert_eq!(ours::Blobs::decode_owned(&encoded).expect("decode"), o);
    let owner_vec = Arc::new(encoded.clone());
    let owner: ByteOwner = owner_vec.clone();
    let buf: &[u8] = &owner_vec;
    let as_bytes = bytes::Bytes::from(encoded);
    let options = DecodeOptions::default();
    {
        // Both zero-copy paths really are zero-copy.
        let shared = ours::Blobs::decode_shared(owner.clone(), &options).expect("decode");
        assert!(shared.chunks.iter().all(|c| c.data.is_shared()));
        let theirs = <theirs::BlobsB as prost::Message>::decode(as_bytes.clone()).expect("decode");
        let range = as_bytes.as_ptr_range();
        assert!(theirs
            .chunks
            .iter()
            .all(|c| range.contains(&c.data.as_ptr())));
    }
    println!(
        "- bytes-heavy: {CHUNKS} entries {{ string name = 1; bytes data = 2; }} of {} KiB, \
         {} bytes encoded",
        CHUNK_LEN / 1024,
        buf.len()
    );

    let mut ops = vec![
        Op::new("ours: decode (borrow)", || {
            black_box(ours::Blobs::decode(black_box(buf)).expect("decode"));
        }),
        Op::new("ours: decode_owned (copy)", || {
            black_box(ours::Blobs::decode_owned(black_box(buf)).expect("decode"));
        }),
        Op::new("ours: decode_shared (Arc<Vec<u8>>)", || {
            black_box(
                ours::Blobs::decode_shared(black_box(owner.clone()), &options).expect("decode"),
            );
        }),
        Op::new("ours: encode_to_vec", || {
            black_box(black_box(&o).encode_to_vec().expect("encode"));
        }),
        Op::new("prost: decode (Vec<u8>)", || {
            black_box(<theirs::Blobs as prost::Message>::decode(black_box(buf)).expect("decode"));
        }),
        Op::new("prost: decode (bytes::Bytes)", || {
            black_box(
                <theirs::BlobsB as prost::Message>::decode(black_box(as_bytes.clone()))
                    .expect("decode"),
            );
        }),
        Op::new("prost: encode_to_vec", || {
            black_box(prost::Message::encode_to_vec(black_box(&t)));
        }),
    ];
    measure(&mut ops, cfg);
    let m = "bytes-heavy";
    report.add(
        &ops,
        &[
            Row {
                message: m,
                operation: "decode: borrow vs prost `Vec<u8>`",
                ours: "ours: decode (borrow)",
                prost: "prost: decode (Vec<u8>)",
                target: Some(10.0),
            },
            Row {
                message: m,
                operation: "decode: copy vs prost `Vec<u8>`",
                ours: "ours: decode_owned (copy)",
                prost: "prost: decode (Vec<u8>)",
                target: None,
            },
            Row {
                message: m,
                operation: "decode: shared vs prost `Vec<u8>`",
                ours: "ours: decode_shared (Arc<Vec<u8>>)",
                prost: "prost: decode (Vec<u8>)",
                target: None,
            },
            Row {
                message: m,
                operation: "decode: shared vs prost `bytes::Bytes`",
                ours: "ours: decode_shared (Arc<Vec<u8>>)",
                prost: "prost: decode (bytes::Bytes)",
                target: None,
            },
            Row {
                message: m,
                operation: "encode to `Vec<u8>`",
                ours: "ours: encode_to_vec",
                prost: "prost: encode_to_vec",
                target: None,
            },
        ],
    );
}

fn bench_small_field(cfg: &Config, report: &mut Report) {
    let (o, t) = catalog();
    let encoded = o.encode_to_vec().expect("encode");
    assert_eq!(
        encoded,
        prost::Message::encode_to_vec(&t),
        "onnx-light and prost must write the same bytes"
    );
    assert_eq!(ours::Catalog::decode_owned(&encoded).expect("decode"), o);
    let owner_vec = Arc::new(encoded);
    let owner: ByteOwner = owner_vec.clone();
    let buf: &[u8] = &owner_vec;
    let options = DecodeOptions::default();
    println!(
        "- small-field: {RECORDS} records {{ 3 strings, int32, sint64, fixed32, uint64, \
         packed int64 x 4 }}, {} bytes encoded\n",
        buf.len()
    );

    let mut ops = vec![
        Op::new("ours: decode (borrow)", || {
            black_box(ours::Catalog::decode(black_box(buf)).expect("decode"));
        }),
        Op::new("ours: decode_owned (copy)", || {
            black_box(ours::Catalog::decode_owned(black_box(buf)).expect("decode"));
        }),
        Op::new("ours: decode_shared (Arc<Vec<u8>>)", || {
            black_box(
                ours::Catalog::decode_shared(black_box(owner.clone()), &options).expect("decode"),
            );
        }),
        Op::new("ours: encode_to_vec", || {
            black_box(black_box(&o).encode_to_vec().expect("encode"));
        }),
        Op::new("prost: decode", || {
            black_box(<theirs::Catalog as prost::Message>::decode(black_box(buf)).expect("decode"));
        }),
        Op::new("prost: encode_to_vec", || {
            black_box(prost::Message::encode_to_vec(black_box(&t)));
        }),
    ];
    measure(&mut ops, cfg);
    let m = "small-field";
    report.add(
        &ops,
        &[
            Row {
                message: m,
                operation: "decode: borrow vs prost",
                ours: "ours: decode (borrow)",
                prost: "prost: decode",
                target: None,
            },
            Row {
                message: m,
                operation: "decode: copy vs prost",
                ours: "ours: decode_owned (copy)",
                prost: "prost: decode",
                target: Some(1.0),
            },
            Row {
                message: m,
                operation: "decode: shared vs prost",
                ours: "ours: decode_shared (Arc<Vec<u8>>)",
                prost: "prost: decode",
                target: None,
            },
            Row {
                message: m,
                operation: "encode to `Vec<u8>`",
                ours: "ours: encode_to_vec",
                prost: "prost: encode_to_vec",
                target: Some(1.0),
            },
        ],
    );
}

/// A short description of the machine, for the report (Linux: `/proc/cpuinfo`).
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!(
        "{cpus} CPU(s) available, {model}, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn usage() -> ! {
    eprintln!(
        "usage: wire-bench [--quick] [--samples N] [--only bytes-heavy|small-field] \
         [--op TEXT] [--iters N]\n\n\
         --quick      5 samples of ~5 ms instead of 15 of ~30 ms\n\
         --samples N  N samples (rounds) per operation\n\
         --only MSG   measure one message only\n\
         --op TEXT    only the operations whose name contains TEXT\n\
         --iters N    N iterations per sample, no warm-up or calibration (for callgrind)"
    );
    std::process::exit(2);
}

fn main() {
    let (mut quick, mut samples, mut only) = (false, None, None);
    let (mut fixed_iters, mut op_filter) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--quick" => quick = true,
            "--samples" => {
                samples = Some(
                    value()
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--iters" => {
                fixed_iters = Some(
                    value()
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--op" => op_filter = Some(value()),
            "--only" => {
                let v = value();
                if v != "bytes-heavy" && v != "small-field" {
                    usage();
                }
                only = Some(v);
            }
            _ => usage(),
        }
    }
    let mut cfg = if quick {
        Config::quick()
    } else {
        Config::full()
    };
    cfg.samples = samples.unwrap_or(cfg.samples);
    cfg.fixed_iters = fixed_iters;
    cfg.op_filter = op_filter;

    if cfg!(debug_assertions) {
        eprintln!("wire-bench: DEBUG BUILD, the numbers mean nothing; use --release");
    }
    println!("### wire-bench: onnx-light vs prost\n");
    println!("Machine: {}.", machine());
    println!(
        "Config: {} samples per operation, ~{} ms per sample{}.\n",
        cfg.samples,
        cfg.sample_time.as_millis(),
        if quick { " (--quick)" } else { "" }
    );
    let mut report = Report::default();
    if only.as_deref().is_none_or(|o| o == "bytes-heavy") {
        bench_bytes_heavy(&cfg, &mut report);
    }
    if only.as_deref().is_none_or(|o| o == "small-field") {
        bench_small_field(&cfg, &mut report);
    }
    report.print(&cfg);
}
