//! Shared pieces of the hardening suites (malformed inputs, resource limits, memory-map
//! hazards, concurrency): a real model, a raw protobuf writer independent of the
//! library's encoder, and "decode this in every mode" helpers.
#![allow(dead_code)] // each suite uses a different subset

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ByteOwner, DecodeOptions, ErrorKind};
use onnx_light_tests::mapped::Load;
pub use onnx_light_tests::scratch::Scratch;

/// A small but complete model: every top-level field kind, nodes with every attribute
/// kind (including a subgraph), raw / packed / string tensors, one payload above the
/// sharing threshold, a sparse initializer, typed inputs, a function and training info.
pub fn real_model() -> Model {
    let mut body = GraphProto::named("body");
    body.node
        .push(NodeProto::new("Identity", ["cond_in"], ["cond_out"]).with_name("inner"));
    body.input
        .push(ValueInfoProto::scalar("cond_in", DataType::Bool));
    body.output
        .push(ValueInfoProto::scalar("cond_out", DataType::Bool));

    let mut g = GraphProto::named("main_graph");
    g.doc_string = Some("a graph for malformed-input tests".into());
    g.node.push(
        NodeProto::new("Conv", ["x", "w", "b"], ["y"])
            .with_name("conv0")
            .with_attribute(AttributeProto::ints("kernel_shape", vec![3, 3]))
            .with_attribute(AttributeProto::int("group", 1))
            .with_attribute(AttributeProto::float("alpha", 0.5))
            .with_attribute(AttributeProto::floats("scales", vec![1.0, 2.0]))
            .with_attribute(AttributeProto::string("auto_pad", b"NOTSET".to_vec())),
    );
    g.node.push(
        NodeProto::new("Constant", Vec::<&str>::new(), ["c"])
            .with_name("const0")
            .with_attribute(AttributeProto::tensor(
                "value",
                TensorProto::from_raw("cval", DataType::Int64, [2], 7i64.to_le_bytes().repeat(2)),
            )),
    );
    g.node.push(
        NodeProto::new("Loop", ["n", "cond"], ["out"])
            .with_name("loop0")
            .with_attribute(AttributeProto::graph("body", body)),
    );
    let w: Vec<u8> = (0..1200u32).map(|i| (i * 7 + 3) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Uint8, [1200], w));
    g.initializer.push(TensorProto {
        name: Some("b".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![3],
        float_data: vec![0.25, -1.5, 3.0],
        ..TensorProto::default()
    });
    g.initializer.push(TensorProto {
        name: Some("shape".into()),
        data_type: Some(DataType::Int64.to_i32()),
        dims: vec![4],
        int64_data: vec![1, -1, 300, 1 << 40],
        ..TensorProto::default()
    });
    g.initializer.push(TensorProto {
        name: Some("labels".into()),
        data_type: Some(DataType::String.to_i32()),
        dims: vec![2],
        string_data: vec![Bytes::from(b"cat".to_vec()), Bytes::from(vec![0xff, 0x00])],
        ..TensorProto::default()
    });
    g.sparse_initializer.push(SparseTensorProto {
        values: Some(TensorProto::from_raw(
            "sv",
            DataType::Float,
            [2],
            1.5f32.to_le_bytes().repeat(2),
        )),
        indices: Some(TensorProto {
            name: Some("si".into()),
            data_type: Some(DataType::Int64.to_i32()),
            dims: vec![2],
            int64_data: vec![1, 5],
            ..TensorProto::default()
        }),
        dims: vec![8],
        ..SparseTensorProto::default()
    });
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 3, 8, 8]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 3, 6, 6]));
    g.value_info.push(ValueInfoProto {
        name: Some("seq".into()),
        r#type: Some(TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
                elem_type: Some(Box::new(TypeProto::tensor(
                    DataType::Float,
                    Some(TensorShapeProto {
                        dim: vec![Dimension::param("batch"), Dimension::value(4)],
                        ..TensorShapeProto::default()
                    }),
                ))),
                ..TypeProtoSequence::default()
            }))),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    });

    let mut m = ModelProto::new(
        g,
        vec![
            OperatorSetIdProto::new("", 21),
            OperatorSetIdProto::new("com.example", 1),
        ],
    );
    m.producer_name = Some("onnx-light-hardening".into());
    m.producer_version = Some("0.1".into());
    m.domain = Some("ai.example".into());
    m.model_version = Some(3);
    m.doc_string = Some("héllo wörld".into());
    m.metadata_props
        .push(StringStringEntryProto::new("author", "tests"));
    m.functions.push(FunctionProto {
        name: Some("MyRelu".into()),
        domain: Some("com.example".into()),
        input: vec!["X".into()],
        output: vec!["Y".into()],
        node: vec![NodeProto::new("Relu", ["X"], ["Y"])],
        opset_import: vec![OperatorSetIdProto::new("", 21)],
        ..FunctionProto::default()
    });
    m.training_info.push(TrainingInfoProto {
        initialization: Some(GraphProto::named("init")),
        update_binding: vec![StringStringEntryProto::new("w", "w_new")],
        ..TrainingInfoProto::default()
    });
    m
}

// ---- a raw protobuf writer, independent of the library's encoder ---------------------

pub const VARINT: u8 = 0;
pub const I64: u8 = 1;
pub const LEN: u8 = 2;
pub const SGROUP: u8 = 3;
pub const EGROUP: u8 = 4;
pub const I32: u8 = 5;

pub fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// A key with any wire type bits (0..=7) and any field number.
pub fn key(number: u64, wire_type: u8) -> Vec<u8> {
    varint((number << 3) | u64::from(wire_type))
}

pub fn len_field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = key(number, LEN);
    out.extend(varint(payload.len() as u64));
    out.extend_from_slice(payload);
    out
}

pub fn varint_field(number: u64, v: u64) -> Vec<u8> {
    let mut out = key(number, VARINT);
    out.extend(varint(v));
    out
}

pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// Reads a varint at `pos` of `buf` (the test's own reader): `(value, length)`.
pub fn read_varint(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = *buf.get(pos + i)?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// One top-level record of a well-formed message, located by the test's own reader.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub start: usize,
    pub number: u64,
    pub wire_type: u8,
    pub key_len: usize,
    /// Length of the length prefix (LEN only; 0 otherwise).
    pub prefix_len: usize,
    /// Offset of the value: the varint, the fixed bytes, or the LEN payload.
    pub value_start: usize,
    pub end: usize,
}

/// Splits a well-formed message into its top-level records.
pub fn records(buf: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let (k, key_len) = read_varint(buf, pos).unwrap();
        let (number, wire_type) = (k >> 3, (k & 7) as u8);
        let after_key = pos + key_len;
        let (prefix_len, value_start, end) = match wire_type {
            VARINT => (
                0,
                after_key,
                after_key + read_varint(buf, after_key).unwrap().1,
            ),
            I64 => (0, after_key, after_key + 8),
            I32 => (0, after_key, after_key + 4),
            LEN => {
                let (n, l) = read_varint(buf, after_key).unwrap();
                (l, after_key + l, after_key + l + n as usize)
            }
            other => panic!("unexpected wire type {other} in a generated model"),
        };
        out.push(Record {
            start: pos,
            number,
            wire_type,
            key_len,
            prefix_len,
            value_start,
            end,
        });
        pos = end;
    }
    out
}

/// Position of the only occurrence of `needle` in `haystack`.
pub fn find_unique(haystack: &[u8], needle: &[u8]) -> usize {
    let hits: Vec<usize> = haystack
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "{:?} must occur once",
        String::from_utf8_lossy(needle)
    );
    hits[0]
}

// ---- decoding in every mode ----------------------------------------------------------

/// What a decode gave, in a form comparable across modes: the model (owned; lazily
/// loaded payloads fetched) or the error's kind, offset and field path.
///
/// Models compare by their encoding: bit for bit, so that a NaN decoded in two modes
/// (which `PartialEq` calls different) counts as the same value.
#[derive(Debug, Clone)]
pub enum Outcome {
    Model(Box<Model>),
    Error {
        kind: ErrorKind,
        offset: Option<u64>,
        path: String,
    },
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Model(a), Outcome::Model(b)) => {
                a == b || a.encode_to_vec().unwrap() == b.encode_to_vec().unwrap()
            }
            (
                Outcome::Error { kind, offset, path },
                Outcome::Error {
                    kind: k,
                    offset: o,
                    path: p,
                },
            ) => (kind, offset, path) == (k, o, p),
            _ => false,
        }
    }
}

impl Outcome {
    pub fn of<'a>(r: onnx_light::Result<ModelProto<'a>>) -> Outcome {
        match r {
            Ok(m) => {
                let mut m: Model = m.into_owned();
                io::materialize_lazy_data(&mut m).expect("lazy payloads fetch");
                Outcome::Model(Box::new(m))
            }
            Err(e) => Outcome::Error {
                kind: e.kind().clone(),
                offset: e.offset(),
                path: e.path_string(),
            },
        }
    }

    pub fn error(&self) -> Option<(&ErrorKind, Option<u64>, &str)> {
        match self {
            Outcome::Error { kind, offset, path } => Some((kind, *offset, path)),
            Outcome::Model(_) => None,
        }
    }

    pub fn model(&self) -> Option<&Model> {
        match self {
            Outcome::Model(m) => Some(m),
            Outcome::Error { .. } => None,
        }
    }
}

/// Which modes [`decode_everywhere`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modes {
    /// The three decode modes and `io::load_from_bytes` with 1 and 2 threads (for sweeps
    /// over thousands of inputs).
    Decoders,
    /// The three decode modes and every in-memory `io` entry point.
    Memory,
    /// `Memory` plus `io::load_with` on a file: owned with 1 and 2 threads, no-copy,
    /// structure-only.
    MemoryAndFiles,
}

/// Decodes `bytes` with recursion limit `limit` in every decode mode (borrow, copy,
/// shared) and through the `io` loaders with 1 and 2 threads; returns each mode's
/// outcome, named.
pub fn decode_everywhere(bytes: &[u8], limit: u32, modes: Modes) -> Vec<(String, Outcome)> {
    let decode = DecodeOptions {
        recursion_limit: limit,
        ..DecodeOptions::default()
    };
    let parse = |threads: usize| {
        ParseOptions::default()
            .recursion_limit(limit)
            .num_threads(threads)
    };
    let mut out: Vec<(String, Outcome)> = vec![
        (
            "borrow".into(),
            Outcome::of(ModelProto::decode_with(bytes, &decode)),
        ),
        (
            "copy".into(),
            Outcome::of(Model::decode_owned_with(bytes, &decode)),
        ),
        (
            "shared".into(),
            Outcome::of(Model::decode_shared(
                Arc::new(bytes.to_vec()) as ByteOwner,
                &decode,
            )),
        ),
    ];
    if modes == Modes::Decoders {
        for threads in [1, 2] {
            out.push((
                format!("load_from_bytes/{threads}"),
                Outcome::of(io::load_from_bytes(bytes, &parse(threads))),
            ));
        }
        return out;
    }
    for threads in [1, 2] {
        out.push((
            format!("load_from_slice/{threads}"),
            Outcome::of(io::load_from_slice(bytes, &parse(threads))),
        ));
        out.push((
            format!("load_from_bytes/{threads}"),
            Outcome::of(io::load_from_bytes(bytes, &parse(threads))),
        ));
        out.push((
            format!("load_from_bytes aligned/{threads}"),
            Outcome::of(io::load_from_bytes(bytes, &parse(threads).alignment(64))),
        ));
        out.push((
            format!("load_from_owner/{threads}"),
            Outcome::of(io::load_from_owner(
                Arc::new(bytes.to_vec()),
                &parse(threads),
            )),
        ));
        out.push((
            format!("load_from_reader/{threads}"),
            Outcome::of(io::load_from_reader(bytes, &parse(threads))),
        ));
    }
    if modes == Modes::MemoryAndFiles {
        let dir = Scratch::new("everywhere");
        let path = dir.path("m.onnx");
        std::fs::write(&path, bytes).unwrap();
        let file_modes = [
            ("load_with/1", Load::With(parse(1))),
            ("load_with/2", Load::With(parse(2))),
            ("load_mapped/1", Load::Mapped(parse(1))),
            ("load_mapped/2", Load::Mapped(parse(2))),
            (
                "load_with structure_only/1",
                Load::With(parse(1).structure_only(true)),
            ),
            (
                "load_with structure_only/2",
                Load::With(parse(2).structure_only(true)),
            ),
        ];
        for (name, load) in file_modes {
            let r = load.load(&path);
            if let Err(e) = &r {
                assert_eq!(e.file(), Some(path.as_path()), "{name}: {e}");
            }
            out.push((name.into(), Outcome::of(r)));
        }
    }
    out
}

/// [`decode_everywhere`], asserting that every mode gave the same outcome; returns it.
pub fn same_everywhere(bytes: &[u8], limit: u32, modes: Modes) -> Outcome {
    let all = decode_everywhere(bytes, limit, modes);
    let (first_name, first) = &all[0];
    for (name, o) in &all[1..] {
        assert_eq!(o, first, "{name} differs from {first_name}");
    }
    first.clone()
}

/// Asserts that `bytes` fail in every mode with exactly this kind at this offset, and
/// returns the field path (the same in every mode).
#[track_caller]
pub fn assert_error_everywhere(bytes: &[u8], kind: ErrorKind, offset: u64) -> String {
    match same_everywhere(bytes, 100, Modes::MemoryAndFiles) {
        Outcome::Error {
            kind: k,
            offset: o,
            path,
        } => {
            assert_eq!(k, kind, "kind (path {path})");
            assert_eq!(o, Some(offset), "offset of {kind:?} (path {path})");
            path
        }
        Outcome::Model(_) => panic!("decoded, but {kind:?} at {offset} was expected"),
    }
}

/// Runs `f` on a thread with a `stack`-byte stack and returns its result (a stack
/// overflow aborts the whole test binary, so a pass proves the bound).
pub fn on_small_stack<T: Send + 'static>(
    stack: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// The record reached by following `path` — (field number, occurrence) pairs — down
/// from the top level of `bytes`, with absolute offsets. Each step but the last must be
/// a message.
pub fn locate(bytes: &[u8], path: &[(u64, usize)]) -> Record {
    let mut base = 0;
    let mut slice = bytes;
    let mut found = None;
    for &(field, nth) in path {
        let r = records(slice)
            .into_iter()
            .filter(|r| r.number == field)
            .nth(nth)
            .unwrap_or_else(|| panic!("no occurrence {nth} of field {field}"));
        let abs = Record {
            start: r.start + base,
            value_start: r.value_start + base,
            end: r.end + base,
            ..r
        };
        slice = &bytes[abs.value_start..abs.end];
        base = abs.value_start;
        found = Some(abs);
    }
    found.unwrap()
}

/// The real model with `extra` appended to its graph's payload (protobuf merges
/// repeated records, so this adds fields to the graph); returns the bytes and the
/// absolute offset of `extra`.
pub fn with_graph_extra(extra: &[u8]) -> (Vec<u8>, usize) {
    let mut m = real_model();
    let g = m.graph.take().unwrap();
    let mut payload = g.encode_to_vec().unwrap();
    let graph_len = payload.len();
    payload.extend_from_slice(extra);
    let mut bytes = m.encode_to_vec().unwrap();
    bytes.extend(key(7, LEN));
    bytes.extend(varint(payload.len() as u64));
    let at = bytes.len() + graph_len;
    bytes.extend(payload);
    (bytes, at)
}

/// [`with_graph_extra`] for one more record of field `field` of the graph whose payload
/// is `prefix ++ bad`; returns the bytes and the absolute offset of `bad`.
pub fn with_graph_record(field: u64, prefix: &[u8], bad: &[u8]) -> (Vec<u8>, usize) {
    let payload = cat(&[prefix, bad]);
    let record = len_field(field, &payload);
    let header = record.len() - payload.len();
    let (bytes, at) = with_graph_extra(&record);
    (bytes, at + header + prefix.len())
}

// ---- child processes ------------------------------------------------------------------
//
// A test that needs a child process re-runs the test binary with `--exact <test>` and
// `CHILD` set to the test's name; the test function checks `child_of(name)` first and
// plays the child's part if it is set.

/// Set in a child to the name of the test whose child part it runs.
pub const CHILD: &str = "ONNX_LIGHT_HARDENING_CHILD";
/// The model file the child works on.
pub const FILE: &str = "ONNX_LIGHT_HARDENING_FILE";

/// If this process is the child of `test`, the model file it works on.
pub fn child_of(test: &str) -> Option<PathBuf> {
    (std::env::var(CHILD).ok()? == test).then(|| std::env::var_os(FILE).unwrap().into())
}

/// Says `marker` to the parent and waits for its go-ahead on stdin.
pub fn tell_and_wait(marker: &str) {
    println!("\n{marker}");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

pub fn say(marker: &str) {
    println!("\n{marker}");
    std::io::stdout().flush().unwrap();
}

pub struct ChildRun {
    child: Child,
    out: BufReader<ChildStdout>,
    seen: String,
}

impl ChildRun {
    pub fn spawn(test: &str, file: &Path) -> Self {
        // Through `sh` to switch core dumps off: a child that dies of a signal must not
        // leave a core file behind on machines that enable them.
        let mut child = Command::new("sh")
            .args(["-c", "ulimit -c 0; exec \"$0\" \"$@\""])
            .arg(std::env::current_exe().unwrap())
            .args([test, "--exact", "--nocapture", "--test-threads", "1"])
            .env(CHILD, test)
            .env(FILE, file)
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        ChildRun {
            child,
            out,
            seen: String::new(),
        }
    }

    /// Reads the child's output up to the line `marker`.
    pub fn expect(&mut self, marker: &str) {
        loop {
            let mut line = String::new();
            if self.out.read_line(&mut line).unwrap() == 0 {
                let mut err = String::new();
                let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
                panic!(
                    "the child ended before {marker:?}; stdout:\n{}\nstderr:\n{err}",
                    self.seen
                );
            }
            self.seen.push_str(&line);
            if line.trim_end() == marker {
                return;
            }
        }
    }

    pub fn go(&mut self) {
        self.child
            .stdin
            .as_mut()
            .unwrap()
            .write_all(b"go\n")
            .unwrap();
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub fn kill(mut self) -> std::process::ExitStatus {
        self.child.kill().unwrap();
        self.child.wait().unwrap()
    }

    /// Waits for the end; returns the exit status and everything the child printed.
    pub fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        drop(self.child.stdin.take());
        self.out.read_to_string(&mut self.seen).unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (self.child.wait().unwrap(), self.seen, err)
    }
}
