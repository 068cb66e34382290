//! `onnx-light tour`: the README's main job. Builds (or copies) a model, saves it, loads
//! it back in every mode the library offers, checks every round trip, and prints one
//! table of sizes and timings.

use std::path::Path;
use std::time::{Duration, Instant};

use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::{Model, ModelProto};
use onnx_light::prelude::*;

use crate::mapped;
use crate::sample::{self, SampleSpec};
use crate::scratch::ScratchDir;
use crate::table::{self, Table};

type Failure = Box<dyn std::error::Error>;

/// The table being built, with the size every step is measured against.
struct Report {
    table: Table,
    size: u64,
}

impl Report {
    /// Times `f`, adds a row, and fails the tour when the row's check fails.
    fn step<T>(
        &mut self,
        name: &str,
        f: impl FnOnce() -> onnx_light::Result<T>,
        check: impl FnOnce(&T) -> Option<bool>,
    ) -> Result<T, Failure> {
        let start = Instant::now();
        let value = f().map_err(|e| format!("{name}: {e}"))?;
        let elapsed = start.elapsed();
        let verdict = check(&value);
        self.row(name, elapsed, verdict);
        if verdict == Some(false) {
            return Err(format!("round trip failed: {name}").into());
        }
        Ok(value)
    }

    fn row(&mut self, name: &str, d: Duration, verdict: Option<bool>) {
        self.table.row(vec![
            name.to_string(),
            table::bytes(self.size),
            table::duration(d),
            table::throughput(self.size, d),
            match verdict {
                Some(true) => "equal",
                Some(false) => "DIFFERENT",
                None => "-",
            }
            .to_string(),
        ]);
    }
}

/// Runs the tour on `model` (a path, not modified) or on the built-in sample, loading
/// with `load` (`--max-memory`, `--allow-aliasing`).
pub fn run(model: Option<&Path>, load: &ParseOptions, quiet: bool) -> Result<(), Failure> {
    let dir = ScratchDir::new("tour")?;
    let mut r = Report {
        table: Table::new(&["step", "size", "time", "throughput", "check"]),
        size: 0,
    };

    let (original, input_bytes): (Model, Option<Vec<u8>>) = match model {
        None => {
            let start = Instant::now();
            let m = sample::build(SampleSpec::DEFAULT);
            r.size = m.tensors().iter().map(|t| t.inline_data_len()).sum();
            r.row("build sample in memory", start.elapsed(), None);
            (m, None)
        }
        Some(path) => {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            r.size = bytes.len() as u64;
            // A model with external data is loaded with its weights inline, so its saved
            // bytes cannot equal the model file's; its round trips are still checked.
            let probe = io::load_with(
                path,
                &ParseOptions::clone(load)
                    .structure_only(true)
                    .load_external_data(false),
            )?;
            let self_contained = probe.tensors().iter().all(|t| !t.is_external());
            drop(probe);
            let m = r.step(
                &format!("load {}", path.display()),
                || io::load_with(path, load),
                |_| None,
            )?;
            (m, self_contained.then_some(bytes))
        }
    };

    let file = dir.path().join("model.onnx");
    let all_cores = SerializeOptions::default();
    r.step(
        "save single file",
        || io::save(&original, &file, &all_cores),
        |_| None,
    )?;
    let written = std::fs::read(&file)?;
    r.size = written.len() as u64;
    if let Some(input) = &input_bytes {
        if *input != written {
            return Err("saving the input model changed its bytes".into());
        }
    }
    r.step(
        "save single file, 1 thread",
        || {
            io::save(
                &original,
                &file,
                &SerializeOptions::default().num_threads(1),
            )
        },
        |_| Some(std::fs::read(&file).is_ok_and(|b| b == written)),
    )?;
    r.step(
        "encode to memory",
        || io::save_to_vec(&original, &all_cores),
        |v| Some(*v == written),
    )?;

    let same = |m: &Model| Some(*m == original);
    r.step("load owned", || io::load_with(&file, load), same)?;
    r.step(
        "load owned, 1 thread",
        || io::load_with(&file, &load.clone().num_threads(1)),
        same,
    )?;
    r.step(
        "load owned, 4096-aligned",
        || io::load_with(&file, &load.clone().alignment(4096)),
        same,
    )?;
    r.step(
        "load no-copy (mmap)",
        || mapped::load_own_file(&dir, "model.onnx", load),
        same,
    )?;
    let mut lazy = r.step(
        "load structure only",
        || io::load_with(&file, &load.clone().structure_only(true)),
        |m| Some(m.tensors().iter().any(|t| t.lazy_data.is_some())),
    )?;
    r.step(
        "  then fetch the weights",
        || io::materialize_lazy_data(&mut lazy).map(|()| lazy == original),
        |equal| Some(*equal),
    )?;
    r.step(
        "decode bytes, borrow mode",
        || ModelProto::decode(&written),
        |m| Some(*m == original),
    )?;
    r.step(
        "decode bytes, copy mode",
        || io::load_from_bytes(&written, &load.clone()),
        same,
    )?;

    if quiet {
        return Ok(());
    }
    println!(
        "onnx-light tour: {} ({} tensors, {} nodes)",
        model
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "built-in sample model".into()),
        original.tensors().len(),
        original.graph.as_ref().map_or(0, |g| g.node.len()),
    );
    println!();
    print!("{}", r.table.render());
    println!();
    println!(
        "every round trip checked; scratch files in {} removed",
        dir.path().display()
    );
    Ok(())
}
