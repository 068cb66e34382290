//! `onnx-light infer-shapes` on a single-file model larger than 2 GiB (what `onnx`
//! cannot parse in one piece): the types are inferred, checked against the declared
//! output in strict mode and recorded, the weights copied file to file, and the
//! process's resident memory stays a small fraction of the file.
//!
//! Writes two files of 2.1 GiB under target/ (removed at the end); the test process
//! itself holds the weights in zero pages it never writes, so it needs little memory.

mod support;
use support::status_field;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;

/// Rows and width of the embedding: 2^19 x 1088 float32 = 2.125 GiB.
const ROWS: i64 = 1 << 19;
const WIDTH: i64 = 1088;

/// What the command may keep resident at its peak: the weights never pass through it.
const PEAK_LIMIT: u64 = 64 << 20;

/// The last bytes of the embedding, distinct, to find in the output.
fn tail_mark() -> Vec<u8> {
    (0..4096u32).map(|i| (i % 251) as u8 + 1).collect()
}

/// An embedding lookup and an attention-style reshape, the 2.1 GiB embedding last in the
/// file, the output declared with its full shape.
fn model() -> Model {
    let mut g = GraphProto::named("big");
    g.input.push(ValueInfoProto::tensor(
        "ids",
        DataType::Int64,
        [Dimension::param("batch"), Dimension::param("seq")],
    ));
    g.output.push(ValueInfoProto::tensor(
        "probs",
        DataType::Float,
        [
            Dimension::param("batch"),
            8.into(),
            Dimension::param("seq"),
            8.into(),
        ],
    ));
    let w: Vec<u8> = (0..WIDTH * 64 * 4).map(|i| (i % 13) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [WIDTH, 64], w));
    let shape: Vec<u8> = [0i64, 0, 8, 8]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    g.initializer
        .push(TensorProto::from_raw("shape", DataType::Int64, [4], shape));
    // Zeroed memory the allocator takes fresh from the system: no page is resident
    // until written, and only the last one is.
    let mut embedding = vec![0u8; (ROWS * WIDTH * 4) as usize];
    let n = embedding.len();
    embedding[n - 4096..].copy_from_slice(&tail_mark());
    g.initializer.push(TensorProto::from_raw(
        "embedding",
        DataType::Float,
        [ROWS, WIDTH],
        embedding,
    ));
    g.node
        .push(NodeProto::new("Gather", ["embedding", "ids"], ["emb"]));
    g.node
        .push(NodeProto::new("MatMul", ["emb", "w"], ["proj"]));
    g.node
        .push(NodeProto::new("Reshape", ["proj", "shape"], ["heads"]));
    g.node.push(
        NodeProto::new("Transpose", ["heads"], ["heads_t"])
            .with_attribute(AttributeProto::ints("perm", vec![0, 2, 1, 3])),
    );
    g.node.push(
        NodeProto::new("Softmax", ["heads_t"], ["probs"])
            .with_attribute(AttributeProto::int("axis", -1)),
    );
    g.node.push(NodeProto::new("Shape", ["probs"], ["dims"]));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[test]
fn infer_shapes_on_a_model_larger_than_2_gib_stays_in_bounded_memory() {
    let dir = Scratch::new("beyond-2gib");
    let input = dir.path("big.onnx");
    let output = dir.path("typed.onnx");
    io::save(&model(), &input, &SerializeOptions::default().sync(false)).unwrap();
    let len = std::fs::metadata(&input).unwrap().len();
    assert!(len > 2 << 30, "{len} bytes");

    // The peak resident set (`VmHWM`, which the kernel keeps) read every millisecond
    // until the command exits.
    let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-light"))
        .args(["-q", "infer-shapes", "--strict", "--no-sync"])
        .arg(&input)
        .arg(&output)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(hwm) = status_field(child.id(), "VmHWM:") {
            peak = peak.max(hwm);
        }
        assert!(Instant::now() < deadline, "infer-shapes still running");
        std::thread::sleep(Duration::from_millis(1));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}: {stderr}");
    println!(
        "infer-shapes on {:.2} GiB: peak resident {:.1} MiB",
        len as f64 / (1u64 << 30) as f64,
        peak as f64 / (1u64 << 20) as f64
    );
    assert!(peak > 0, "the child's status was never read");
    assert!(peak < PEAK_LIMIT, "peak resident memory {peak} bytes");

    // Every computed value typed, in node order; the declared output confirmed (strict
    // mode fails on a conflict).
    let typed = io::load_with(
        &output,
        &ParseOptions::default()
            .structure_only(true)
            .load_external_data(false),
    )
    .unwrap();
    let g = typed.graph.as_ref().unwrap();
    let types: Vec<(&str, String)> = g
        .value_info
        .iter()
        .map(|v| (v.name(), v.r#type.as_ref().unwrap().to_string()))
        .collect();
    assert_eq!(
        types,
        [
            ("emb", "float[batch,seq,1088]".to_string()),
            ("proj", "float[batch,seq,64]".to_string()),
            ("heads", "float[batch,seq,8,8]".to_string()),
            ("heads_t", "float[batch,8,seq,8]".to_string()),
            ("dims", "int64[4]".to_string()),
        ]
    );
    assert_eq!(
        g.output[0].r#type.as_ref().unwrap().to_string(),
        "float[batch,8,seq,8]"
    );

    // The weights came through: the output is the input plus the recorded types, and
    // the embedding's last bytes are near its end.
    let out_len = std::fs::metadata(&output).unwrap().len();
    assert!(out_len > len && out_len < len + 4096, "{out_len} vs {len}");
    let mut tail = vec![0u8; 1 << 20];
    let mut f = File::open(&output).unwrap();
    f.seek(SeekFrom::End(-(tail.len() as i64))).unwrap();
    f.read_exact(&mut tail).unwrap();
    let mark = tail_mark();
    assert!(
        tail.windows(mark.len()).any(|w| w == mark.as_slice()),
        "the embedding's last bytes are missing from the output"
    );
}
