//! Peak memory of one load, measured in a fresh process: the benchmark re-executes
//! itself with `--child MODE PATH`; the child resets its peak RSS (`/proc/self/clear_refs`),
//! notes its RSS, runs the load, and prints the peak (`VmHWM`), all in KiB.

use std::path::Path;
use std::process::{Command, Stdio};

use onnx_light::io::{self, ParseOptions};
use onnx_light_tests::mapped::load_mapped;
use prost::Message as _;

use crate::prost_vec;

/// The child's report, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct Peak {
    pub baseline_kb: u64,
    pub peak_kb: u64,
    /// File-backed resident memory when the load has finished (mapped file pages).
    pub rss_file_kb: u64,
}

impl Peak {
    /// Peak minus baseline, in bytes.
    pub fn delta_bytes(&self) -> u64 {
        self.peak_kb.saturating_sub(self.baseline_kb) * 1024
    }
}

/// A field of a `/proc/<pid>/status` text (`VmHWM`, `RssAnon`, ...), in KiB.
pub(crate) fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status_kib(&status, field).unwrap_or_else(|| panic!("{field} missing from /proc/self/status"))
}

fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM via /proc/self/clear_refs");
}

/// The child's body: runs `mode` on `path` and prints its report.
pub fn run(mode: &str, path: &Path) {
    // Inputs of the in-memory decodes are read before the baseline: only the decode's
    // own memory is measured. File loads include reading the file.
    let input = match mode {
        "copy-bytes" | "borrow-bytes" | "prost-bytes" => {
            Some(std::fs::read(path).expect("read the input"))
        }
        _ => None,
    };
    reset_peak();
    let baseline_kb = status_kb("VmRSS");
    let keep: Box<dyn std::any::Any> = match mode {
        "load" => Box::new(io::load(path).expect("load")),
        "nocopy" => Box::new(load_mapped(path, &ParseOptions::default()).expect("no-copy load")),
        "structure" => Box::new(
            io::load_with(path, &ParseOptions::default().structure_only(true))
                .expect("structure-only load"),
        ),
        "prost-file" => {
            let bytes = std::fs::read(path).expect("read");
            Box::new(prost_vec::onnx::ModelProto::decode(&bytes[..]).expect("prost decode"))
        }
        "copy-bytes" => Box::new(
            io::load_from_bytes(input.as_deref().unwrap_or(&[]), &ParseOptions::default())
                .expect("copy decode"),
        ),
        "borrow-bytes" => {
            let view =
                io::load_from_slice(input.as_deref().unwrap_or(&[]), &ParseOptions::default())
                    .expect("borrow decode");
            let n = view.graph.as_ref().map_or(0, |g| g.node.len());
            Box::new(n)
        }
        "prost-bytes" => Box::new(
            prost_vec::onnx::ModelProto::decode(input.as_deref().unwrap_or(&[]))
                .expect("prost decode"),
        ),
        other => panic!("unknown child mode {other}"),
    };
    let peak_kb = status_kb("VmHWM");
    let rss_file_kb = status_kb("RssFile");
    println!("{baseline_kb} {peak_kb} {rss_file_kb}");
    drop(keep);
}

/// Runs a child and parses its report.
pub fn measure(mode: &str, path: &Path) -> Peak {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let out = Command::new(exe)
        .arg("--child")
        .arg(mode)
        .arg(path)
        .stderr(Stdio::inherit())
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "child {mode} {} failed",
        path.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().expect("a number"))
        .collect();
    assert_eq!(v.len(), 3, "child output {text:?}");
    Peak {
        baseline_kb: v[0],
        peak_kb: v[1],
        rss_file_kb: v[2],
    }
}
