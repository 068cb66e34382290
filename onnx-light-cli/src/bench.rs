//! `onnx-light bench MODEL`: load and save timings per mode on the user's own model, so
//! they can see what to expect on their machine (median of several runs). A mapped load
//! is not among them: the tool never maps a file that someone else may change while it
//! runs; `onnx-light tour MODEL` times one on its own private copy of the model.

use std::path::Path;
use std::time::{Duration, Instant};

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::ModelProto;
use onnx_light::prelude::*;
use serde_json::json;

use crate::progress::Progress;
use crate::table::{self, Table};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn run(
    path: &Path,
    runs: usize,
    as_json: bool,
    load: &ParseOptions,
    progress: &Progress,
) -> Result<(), Box<dyn std::error::Error>> {
    let runs = runs.max(1);
    let size = std::fs::metadata(path)?.len();
    let model = io::load_with(path, load)?;
    let scratch = crate::scratch::ScratchDir::new("bench")?;
    let out = scratch.path().join("model.onnx");
    let bytes = std::fs::read(path)?;
    type Step<'s> = (&'s str, Box<dyn Fn() -> onnx_light::Result<()> + 's>);
    let steps: Vec<Step<'_>> = vec![
        (
            "load owned",
            Box::new(|| io::load_with(path, load).map(drop)),
        ),
        (
            "load owned, 1 thread",
            Box::new(|| io::load_with(path, &load.clone().num_threads(1)).map(drop)),
        ),
        (
            "load structure only",
            Box::new(|| io::load_with(path, &load.clone().structure_only(true)).map(drop)),
        ),
        (
            "decode in memory, borrow",
            Box::new(|| ModelProto::decode(&bytes).map(drop)),
        ),
        (
            "save single file",
            Box::new(|| io::save(&model, &out, &SerializeOptions::default()).map(drop)),
        ),
        (
            "save single file, 1 thread",
            Box::new(|| {
                io::save(&model, &out, &SerializeOptions::default().num_threads(1)).map(drop)
            }),
        ),
        (
            "save external, 4096-aligned",
            Box::new(|| {
                io::save(
                    &model,
                    &out,
                    &SerializeOptions::default()
                        .external_data(ExternalDataOptions::new("model.data")),
                )
                .map(drop)
            }),
        ),
    ];
    let mut rows = Vec::new();
    for (name, f) in &steps {
        progress.step(format!("{name} ({runs} runs)"));
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            f()?;
            times.push(start.elapsed());
        }
        let min = *times.iter().min().unwrap_or(&Duration::ZERO);
        rows.push((name.to_string(), median(times), min));
    }
    drop(scratch);
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|(n, med, min)| json!({"step": n, "median_seconds": med.as_secs_f64(), "min_seconds": min.as_secs_f64(), "bytes": size}))
            .collect();
        crate::print_line(&serde_json::to_string_pretty(
            &json!({"model": path.display().to_string(), "runs": runs, "results": v}),
        )?);
        return Ok(());
    }
    let mut t = Table::new(&["step", "median", "min", "throughput"]);
    for (n, med, min) in &rows {
        t.row(vec![
            n.clone(),
            table::duration(*med),
            table::duration(*min),
            table::throughput(size, *med),
        ]);
    }
    crate::print_text(&format!(
        "{} ({}), median of {runs} runs\n\n{}",
        path.display(),
        table::bytes(size),
        t.render()
    ));
    Ok(())
}
