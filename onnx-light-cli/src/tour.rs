//! `onnx-light tour`: the README's main job. Builds (or copies) a model, writes it, reads
//! it back in every mode the library offers, checks every round trip, and prints one table
//! of sizes and timings.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use onnx_light::onnx::Model;
use onnx_light::prelude::*;
use onnx_light::{ByteOwner, DecodeOptions};

use crate::sample::{self, SampleSpec};
use crate::table::{self, Table};

/// A directory removed when dropped, also on early return.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<Self> {
        let base = std::env::temp_dir();
        for attempt in 0..1000u32 {
            let p = base.join(format!("onnx-light-tour-{}-{attempt}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(ScratchDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free scratch directory name"))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let v = f();
    (v, start.elapsed())
}

type Failure = Box<dyn std::error::Error>;

fn check(ok: bool, what: &str) -> Result<(), Failure> {
    if ok {
        Ok(())
    } else {
        Err(format!("round trip failed: {what}").into())
    }
}

/// Runs the tour on `model` (a path) or on the built-in sample.
pub fn run(model: Option<&Path>) -> Result<(), Failure> {
    let dir = ScratchDir::new()?;
    let mut t = Table::new(&["step", "size", "time", "throughput", "check"]);

    let (original, original_bytes): (Model, Option<Vec<u8>>) = match model {
        None => {
            let (m, d) = timed(|| sample::build(SampleSpec::DEFAULT));
            let weights: u64 = m.tensors().iter().map(|t| t.inline_data_len()).sum();
            t.row(vec![
                "build sample in memory".into(),
                table::bytes(weights),
                table::duration(d),
                table::throughput(weights, d),
                "-".into(),
            ]);
            (m, None)
        }
        Some(path) => {
            let (bytes, d) = timed(|| std::fs::read(path));
            let bytes = bytes.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            t.row(vec![
                format!("read {}", path.display()),
                table::bytes(bytes.len() as u64),
                table::duration(d),
                table::throughput(bytes.len() as u64, d),
                "-".into(),
            ]);
            let m = Model::decode_owned(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            (m, Some(bytes))
        }
    };

    // Single file.
    let (encoded, d) = timed(|| original.encode_to_vec());
    let encoded = encoded?;
    let size = encoded.len() as u64;
    if let Some(input) = &original_bytes {
        check(
            *input == encoded,
            "re-encoding the input model changed its bytes",
        )?;
    }
    t.row(vec![
        "encode".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        if original_bytes.is_some() {
            "byte-identical to input"
        } else {
            "-"
        }
        .into(),
    ]);
    let file = dir.0.join("model.onnx");
    let (written, d) = timed(|| std::fs::write(&file, &encoded));
    written?;
    t.row(vec![
        "write single file".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        "-".into(),
    ]);
    drop(encoded);

    let (bytes, d) = timed(|| std::fs::read(&file));
    let bytes = bytes?;
    t.row(vec![
        "read file".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        "-".into(),
    ]);

    let (borrowed, d) = timed(|| onnx_light::onnx::ModelProto::decode(&bytes));
    let borrowed = borrowed?;
    let equal = borrowed == original;
    t.row(vec![
        "decode, borrow mode".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        check_cell(equal),
    ]);
    check(equal, "borrow mode")?;
    drop(borrowed);

    let (copied, d) = timed(|| Model::decode_owned(&bytes));
    let copied = copied?;
    let equal = copied == original;
    t.row(vec![
        "decode, copy mode".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        check_cell(equal),
    ]);
    check(equal, "copy mode")?;
    drop(copied);

    let (consolidated, d) = timed(|| -> onnx_light::Result<Model> {
        let mut view = onnx_light::onnx::ModelProto::decode(&bytes)?;
        onnx_light::io::consolidate_tensors_to_buffer(
            &mut view,
            &onnx_light::io::TensorBufferOptions::LOAD,
        )?;
        Ok(onnx_light::IntoOwned::into_owned(view))
    });
    let consolidated = consolidated?;
    let equal = consolidated == original;
    t.row(vec![
        "decode, copy into one buffer".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        check_cell(equal),
    ]);
    check(equal, "copy mode into one buffer")?;
    drop(consolidated);

    let owner: ByteOwner = Arc::new(bytes);
    let (shared, d) = timed(|| Model::decode_shared(owner.clone(), &DecodeOptions::default()));
    let shared = shared?;
    let equal = shared == original;
    let reencoded = shared.encode_to_vec()?;
    let identical = reencoded.as_slice() == owner.bytes();
    t.row(vec![
        "decode, shared mode".into(),
        table::bytes(size),
        table::duration(d),
        table::throughput(size, d),
        check_cell(equal && identical),
    ]);
    check(equal, "shared mode")?;
    check(
        identical,
        "re-encoding a shared-mode model changed its bytes",
    )?;

    println!(
        "onnx-light tour: {} ({} tensors, {} nodes)",
        model
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "built-in sample model".into()),
        original.tensors().len(),
        original.graph.as_ref().map_or(0, |g| g.node.len()),
    );
    println!();
    print!("{}", t.render());
    println!();
    println!(
        "every round trip checked; scratch files in {} removed",
        dir.0.display()
    );
    Ok(())
}

fn check_cell(ok: bool) -> String {
    if ok { "equal" } else { "DIFFERENT" }.into()
}
