//! `text-bench`: `onnx_light::text::to_text` against `onnx.printer.to_text` (onnx 1.23.2,
//! in the pinned test venv), side by side in one run, on the structure-heavy model of
//! `model-bench` (~200 000 nodes), a weight-heavy one (the transformer graph with ~20 MB
//! of float weights, all printed) and the whole backend node-test corpus (1,765 small
//! models) when it has been fetched. Prints a markdown table of medians; checks first that
//! both sides print the same text.
//!
//! ```text
//! cargo run --release -p onnx-light-bench --bin text-bench            # ~1 min
//! cargo run --release -p onnx-light-bench --bin text-bench -- --runs 9
//! ```
//!
//! Columns: `to_text` on a decoded model (ours: `text::to_text(&model)`; onnx:
//! `onnx.printer.to_text(model_proto)`, which serializes the message for C++ to parse and
//! print), and from the file's bytes (ours: decode, then print; onnx: the C++ entry point
//! `model_to_text(bytes)`). The Python side times itself (`bench/python/text_bench.py`),
//! so interpreter start-up is not measured.

#[path = "model_bench/models.rs"]
#[allow(dead_code)]
mod models;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use onnx_light::onnx::{Model, ModelProto};
use onnx_light::prelude::*;
use onnx_light::text;
use onnx_light_tests::python::{python, workspace_root};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fmt(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// The median of `runs` timings of `f`.
fn time(runs: usize, f: impl Fn()) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// One row: a name and the model files it covers (one, or the whole corpus).
struct Case {
    name: String,
    files: Vec<PathBuf>,
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("ONNX_LIGHT_ONNX_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/onnx-corpus/node"));
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path().join("model.onnx"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn main() {
    let mut runs = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().map(|n| n.parse::<usize>())) {
            ("--runs", Some(Ok(n))) if n > 0 => runs = n,
            ("-h" | "--help", None) => {
                println!("text-bench [--runs N]   (N ≥ 1 runs per row, default 5)");
                return;
            }
            _ => {
                eprintln!(
                    "text-bench: unexpected argument {a:?}; usage: text-bench [--runs N] (N ≥ 1)"
                );
                std::process::exit(2);
            }
        }
    }
    let dir = workspace_root().join("target/bench-data/text");
    fs::create_dir_all(&dir).expect("create target/bench-data/text");

    let mut cases = Vec::new();
    for (name, model) in [
        (
            "structure-heavy, ~200k nodes",
            models::structure_heavy(10_000),
        ),
        ("weight-heavy, floats printed", models::weight_heavy(64)),
    ] {
        let path = dir.join(format!("{}.onnx", cases.len()));
        fs::write(&path, model.encode_to_vec().expect("encode")).expect("write a model");
        cases.push(Case {
            name: name.into(),
            files: vec![path],
        });
    }
    let corpus = corpus_files();
    if corpus.is_empty() {
        eprintln!("(corpus not fetched: run `cargo test --test onnx_corpus` first to add its row)");
    } else {
        cases.push(Case {
            name: format!("backend corpus, {} models", corpus.len()),
            files: corpus,
        });
    }

    // The Python side: one process for every file.
    let all: Vec<&PathBuf> = cases.iter().flat_map(|c| &c.files).collect();
    let text_dir = dir.join("printed");
    fs::create_dir_all(&text_dir).unwrap();
    eprintln!("timing onnx.printer on {} files ...", all.len());
    let out = Command::new(python())
        .arg(workspace_root().join("bench/python/text_bench.py"))
        .arg(runs.to_string())
        .arg(&text_dir)
        .args(&all)
        .output()
        .expect("run the Python side");
    assert!(
        out.status.success(),
        "text_bench.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let secs = |v: &serde_json::Value| -> Vec<Duration> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| Duration::from_secs_f64(s.as_f64().unwrap()))
            .collect()
    };

    println!("| model | text | ours `to_text` | `onnx.printer.to_text` | ratio | ours decode + print | onnx `model_to_text(bytes)` | ratio |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut index = 0;
    for case in &cases {
        let bytes: Vec<Vec<u8>> = case.files.iter().map(|p| fs::read(p).unwrap()).collect();
        let decoded: Vec<Model> = bytes
            .iter()
            .map(|b| Model::decode_owned(b).unwrap())
            .collect();
        let (mut onnx_model, mut onnx_bytes) = (Duration::ZERO, Duration::ZERO);
        let mut chars = 0u64;
        for (i, m) in decoded.iter().enumerate() {
            let line = &lines[index + i];
            onnx_model += median(secs(&line["to_text"]));
            onnx_bytes += median(secs(&line["bytes_to_text"]));
            chars += line["chars"].as_u64().unwrap();
            let theirs = fs::read_to_string(text_dir.join(format!("{}.txt", index + i))).unwrap();
            let ours = text::to_text(m).expect("print");
            assert!(
                ours == theirs,
                "{}: the texts differ",
                case.files[i].display()
            );
        }
        index += decoded.len();
        let ours_model = time(runs, || {
            for m in &decoded {
                std::hint::black_box(text::to_text(m).unwrap());
            }
        });
        let ours_bytes = time(runs, || {
            for b in &bytes {
                let m = ModelProto::decode(b).unwrap();
                std::hint::black_box(text::to_text(&m).unwrap());
            }
        });
        let ratio = |a: Duration, b: Duration| format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64());
        println!(
            "| {} | {:.1} MB | {} | {} | {} | {} | {} | {} |",
            case.name,
            chars as f64 / 1e6,
            fmt(ours_model),
            fmt(onnx_model),
            ratio(onnx_model, ours_model),
            fmt(ours_bytes),
            fmt(onnx_bytes),
            ratio(onnx_bytes, ours_bytes),
        );
    }
    println!(
        "\nratio: onnx's time / ours (above 1: onnx-light is faster); medians of {runs} runs."
    );
    let _ = fs::remove_dir_all(Path::new(&dir));
}
