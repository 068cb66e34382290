//! The Python peer: one long-lived worker process in the pinned test venv
//! (`onnx_light_tests::python::python()`, onnx 1.23.2), driven by JSON lines. It times its
//! own operations, so interpreter start-up and the pipe are never part of a timing.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// The worker's source, written next to the benchmark data at start-up.
pub const WORKER_SOURCE: &str = include_str!("../../../python/model_bench_worker.py");

/// A running worker.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub onnx_version: String,
}

/// The interpreter and the worker script.
#[derive(Debug, Clone)]
pub struct PythonEnv {
    pub interpreter: PathBuf,
    pub script: PathBuf,
}

impl PythonEnv {
    /// Sets up the venv (on first use) and writes the worker script into `dir`.
    pub fn new(dir: &Path) -> Self {
        let interpreter = onnx_light_tests::python::python();
        let script = dir.join("model_bench_worker.py");
        std::fs::write(&script, WORKER_SOURCE).expect("write the Python worker");
        PythonEnv {
            interpreter,
            script,
        }
    }

    /// Starts a worker.
    pub fn start(&self) -> Worker {
        let mut child = Command::new(&self.interpreter)
            .arg(&self.script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.interpreter.display()));
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the worker says hello");
        let hello: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("bad hello from the Python worker {line:?}: {e}"));
        Worker {
            child,
            stdin,
            stdout,
            onnx_version: hello["onnx"].as_str().unwrap_or("?").to_string(),
        }
    }

    /// Peak memory of one operation in a fresh Python process: (baseline, peak) in KiB.
    pub fn peak(&self, mode: &str, path: &Path) -> (u64, u64) {
        let out = Command::new(&self.interpreter)
            .arg(&self.script)
            .arg("--peak")
            .arg(mode)
            .arg(path)
            .stderr(Stdio::inherit())
            .output()
            .expect("run the Python peak child");
        assert!(out.status.success(), "Python peak child {mode} failed");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON from the peak child");
        (
            v["baseline_kb"].as_u64().expect("baseline_kb"),
            v["peak_kb"].as_u64().expect("peak_kb"),
        )
    }
}

impl Worker {
    fn call(&mut self, cmd: Value) -> Value {
        writeln!(self.stdin, "{cmd}").expect("write to the Python worker");
        self.stdin.flush().expect("flush to the Python worker");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("read from the Python worker");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("bad reply from the Python worker {line:?} to {cmd}: {e}"));
        if let Some(e) = v.get("error") {
            panic!("the Python worker failed on {cmd}: {e}");
        }
        v
    }

    /// Reads a file into the worker's memory under `key` (untimed).
    pub fn read(&mut self, key: &str, path: &Path) {
        self.call(json!({"cmd": "read", "key": key, "path": path}));
    }

    /// Parses the bytes under `key` into a model kept under the same key (untimed).
    pub fn parse(&mut self, key: &str) {
        self.call(json!({"cmd": "parse", "key": key}));
    }

    /// The parsed model's encoded size.
    pub fn encoded_len(&mut self, key: &str) -> u64 {
        self.call(json!({"cmd": "info", "key": key}))["encoded"]
            .as_u64()
            .expect("a parsed model")
    }

    /// True when a parsed model is kept under `key`.
    pub fn has_model(&mut self, key: &str) -> bool {
        self.call(json!({"cmd": "info", "key": key}))["encoded"].is_u64()
    }

    /// Drops what is kept under `key`.
    pub fn free(&mut self, key: &str) {
        self.call(json!({"cmd": "free", "key": key}));
    }

    /// Times `iters` runs of an operation; `args` holds its other fields.
    pub fn time(&mut self, op: &str, iters: u64, args: Value) -> Duration {
        let mut cmd = json!({"cmd": "time", "op": op, "iters": iters});
        if let (Some(c), Some(a)) = (cmd.as_object_mut(), args.as_object()) {
            for (k, v) in a {
                c.insert(k.clone(), v.clone());
            }
        }
        let secs = self.call(cmd)["secs"].as_f64().expect("secs");
        Duration::from_secs_f64(secs)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"cmd": "quit"}));
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}
