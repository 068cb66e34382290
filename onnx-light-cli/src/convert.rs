//! `onnx-light convert IN OUT`: rewrite a model, optionally moving weights into or out
//! of external data files. External-to-external conversions stream one tensor at a
//! time, so models larger than memory convert.

use std::path::Path;

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::Model;

use crate::progress::Progress;

/// What `convert` was asked to do.
#[derive(Debug, Clone)]
pub struct Convert {
    pub external_data: Option<String>,
    pub size_threshold: Option<u64>,
    pub align: Option<u64>,
    pub max_file_size: Option<u64>,
    pub inline: bool,
    pub sync: bool,
    pub threads: usize,
    pub force: bool,
    /// `--max-memory` and `--allow-aliasing`.
    pub load: ParseOptions,
}

fn has_external(model: &Model) -> bool {
    let mut any = false;
    model.visit_tensors(|_, t| any |= t.is_external());
    any
}

/// Fetches the lazily loaded tensors that stay inline (not marked external).
fn fetch_inline(model: &mut Model) -> onnx_light::Result<()> {
    let mut failure = None;
    model.visit_tensors_mut(|_, t| {
        if failure.is_some() || t.is_external() {
            return;
        }
        if let Some(lazy) = t.lazy_data.take() {
            match lazy.fetch() {
                Ok(b) => t.raw_data = Some(b),
                Err(e) => failure = Some(e.in_tensor(t.name())),
            }
        }
    });
    failure.map_or(Ok(()), Err)
}

pub fn run(
    input: &Path,
    output: &Path,
    c: &Convert,
    progress: &Progress,
) -> Result<String, Box<dyn std::error::Error>> {
    if output.exists() && !c.force {
        return Err(format!(
            "{} exists; pass --force to replace it (the replacement is atomic)",
            output.display()
        )
        .into());
    }
    if c.external_data.is_none()
        && (c.size_threshold.is_some() || c.align.is_some() || c.max_file_size.is_some())
    {
        return Err(
            "--size-threshold, --align and --max-file-size need --external-data NAME".into(),
        );
    }
    let save = SerializeOptions::default()
        .num_threads(c.threads)
        .sync(c.sync);
    if let Some(name) = &c.external_data {
        let mut ext = ExternalDataOptions::new(name.clone());
        if let Some(t) = c.size_threshold {
            ext = ext
                .size_threshold(usize::try_from(t).map_err(|_| "--size-threshold is too large")?);
        }
        if let Some(a) = c.align {
            ext = ext.alignment(usize::try_from(a).map_err(|_| "--align is too large")?);
        }
        if let Some(m) = c.max_file_size {
            ext = ext.max_file_size(m);
        }
        progress.step(format!("reading the structure of {}", input.display()));
        let model = io::load_with(
            input,
            &ParseOptions::clone(&c.load)
                .structure_only(true)
                .num_threads(c.threads),
        )?;
        progress.step(format!(
            "writing {} with external data {name}",
            output.display()
        ));
        io::save(&model, output, &save.external_data(ext))?;
        return Ok(format!(
            "wrote {} with external data next to it",
            output.display()
        ));
    }
    progress.step(format!("reading {}", input.display()));
    let probe = io::load_with(
        input,
        &ParseOptions::clone(&c.load)
            .structure_only(true)
            .load_external_data(false),
    )?;
    if c.inline || !has_external(&probe) {
        drop(probe);
        let model = io::load_with(input, &ParseOptions::clone(&c.load).num_threads(c.threads))?;
        progress.step(format!("writing {}", output.display()));
        io::save(&model, output, &save)?;
        return Ok(format!("wrote {} as a single file", output.display()));
    }
    // Keep the external layout: external tensors stream to files of the same names next
    // to the output; large inline tensors are read back.
    drop(probe);
    let mut model = io::load_with(
        input,
        &ParseOptions::clone(&c.load)
            .structure_only(true)
            .num_threads(c.threads),
    )?;
    fetch_inline(&mut model)?;
    progress.step(format!(
        "writing {} and its external data",
        output.display()
    ));
    io::save(&model, output, &save)?;
    Ok(format!(
        "wrote {} keeping its external data layout",
        output.display()
    ))
}
