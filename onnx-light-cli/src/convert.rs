//! `onnx-light convert IN OUT`: rewrite a model, optionally moving weights into or out
//! of external data files. Unless weights move from external files into the model
//! (`--inline`), the weights are copied file to file, never held in memory, so models
//! larger than memory convert.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use onnx_light::io::external::{self, ExternalDataOptions, VerifyOptions};
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::Model;
use onnx_light::shape::{self, InferOptions};
use onnx_light::version_converter;

use crate::failure::usage;
use crate::progress::Progress;

/// What `convert` was asked to do.
#[derive(Debug, Clone)]
pub struct Convert {
    pub external_data: Option<String>,
    pub size_threshold: Option<u64>,
    pub align: Option<u64>,
    pub max_file_size: Option<u64>,
    /// `--checksum`: record each data file's SHA-1.
    pub checksum: bool,
    pub inline: bool,
    pub sync: bool,
    pub threads: usize,
    pub force: bool,
    /// `--max-memory` and `--allow-aliasing`.
    pub load: ParseOptions,
    /// `infer-shapes`: the types inference finds are recorded in the model written.
    pub infer: Option<InferOptions>,
    /// `--opset N`: the model is converted to version N of the ONNX domain.
    pub opset: Option<i64>,
}

impl Convert {
    /// Runs shape inference on `model` when asked; what it did, for the report.
    fn prepare(&self, model: &mut Model, progress: &Progress) -> Result<Option<String>, Failure> {
        if let Some(target) = self.opset {
            progress.step("converting the opset version");
            let from = model
                .opset_import
                .iter()
                .find(|o| o.domain().is_empty() || o.domain() == "ai.onnx")
                .map_or(0, |o| o.version());
            let converted =
                version_converter::convert_version_owned(std::mem::take(model), target)?;
            *model = converted;
            return Ok(Some(format!(
                "converted from opset {from} to {target} of the ONNX domain"
            )));
        }
        let Some(options) = &self.infer else {
            return Ok(None);
        };
        progress.step("inferring types and shapes");
        let count = |m: &Model| m.graph.as_ref().map_or(0, |g| g.value_info.len());
        let before = count(model);
        shape::infer_shapes(model, options)?;
        let added = count(model) - before;
        Ok(Some(format!(
            "inferred the types of {added} value{}",
            if added == 1 { "" } else { "s" }
        )))
    }
}

/// The report of a run, after what inference did (if it ran).
fn said(inferred: Option<String>, written: String) -> String {
    match inferred {
        Some(i) => format!("{i}; {written}"),
        None => written,
    }
}

fn has_external(model: &Model) -> bool {
    let mut any = false;
    model.visit_tensors(|_, t| any |= t.is_external());
    any
}

type Failure = Box<dyn std::error::Error>;

/// A file's identity (device, inode): names are compared by what they are, never by
/// how they are spelled.
type FileId = (u64, u64);

/// The identity of the entry at `path` itself (a symbolic link is not followed: a data
/// file name that is a link is never written through). For the output model, pass the
/// file a save replaces (`io::resolve_links`): a save through a link replaces its target.
fn entry_id(path: &Path) -> Option<FileId> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// The directory a path's file lives in.
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The external data files a model uses: each file's identity and name (relative to the
/// model's directory), as the library's resolver opens them.
fn data_files(model: &Model, dir: &Path) -> Vec<(FileId, String)> {
    let options = VerifyOptions::default()
        .allow_aliasing(true)
        .overlaps_listed(0);
    let Ok(found) = external::verify(model, dir, &options) else {
        return Vec::new();
    };
    found
        .files
        .into_iter()
        .map(|f| (f.identity, f.location.display().to_string()))
        .collect()
}

/// The data file names the model at `path` refers to (read back after a save).
fn locations(path: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let options = ParseOptions::default()
        .structure_only(true)
        .load_external_data(false);
    if let Ok(m) = io::load_with(path, &options) {
        m.visit_tensors(|_, t| {
            if let Ok(r) = onnx_light::io::external::ExternalDataRef::from_tensor(t) {
                names.insert(r.location);
            }
        });
    }
    names
}

/// Refuses conversions that would destroy the user's files: writing the model over one
/// of the input's data files, or a data file over the input model or over the output
/// model itself. Names are compared by file identity and by (directory, name), so `./m`,
/// `m`, an absolute path, a path through a linked directory and a symbolic link to the
/// file are all the same file.
fn refuse_destructive(
    input: &Path,
    output: &Path,
    external_data: Option<&str>,
    input_data: &[(FileId, String)],
) -> Result<(), Failure> {
    let input_id = std::fs::metadata(input).ok().map(|m| (m.dev(), m.ino()));
    // What the save replaces: the output, or the file a link there leads to.
    let target = io::resolve_links(output)?;
    let output_id = entry_id(&target);
    if let Some((_, name)) = input_data.iter().find(|(id, _)| Some(*id) == output_id) {
        return Err(usage(format!(
            "{} is the external data file {name} of {}: writing the model there would destroy its weights",
            output.display(),
            input.display()
        )));
    }
    let Some(name) = external_data else {
        return Ok(());
    };
    let bare = Path::new(name).file_name().unwrap_or_default();
    let data_path = parent(&target).join(bare);
    let same_dir = |a: &Path, b: &Path| {
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        id(a).is_some() && id(a) == id(b)
    };
    if Some(bare) == target.file_name() && same_dir(parent(&target), parent(&data_path)) {
        return Err(usage(format!(
            "--external-data {name} names the output model itself; choose another name for the data file"
        )));
    }
    let data_id = entry_id(&data_path);
    if data_id.is_some() && data_id == input_id {
        return Err(usage(format!(
            "--external-data {name} names the input model {}; choose another name for the data file",
            input.display()
        )));
    }
    if data_id.is_some() && data_id == output_id {
        return Err(usage(format!(
            "--external-data {name} is another name (a hard link) of the output model {}",
            output.display()
        )));
    }
    Ok(())
}

/// Refuses, without `--force`, to replace a file already at a data file name the save
/// may write next to `output` (beside the file a link there leads to): `NAME`, and with
/// `split` the files `NAME.1`, `NAME.2`, ...
/// that a split save names. Such a file is usually another model's data; the save would
/// replace it. A file in `replaced` (the data files of the model being converted in
/// place, which the save replaces) is not in the way.
pub fn refuse_existing_data_file(
    output: &Path,
    name: &str,
    split: bool,
    force: bool,
    replaced: &[(FileId, String)],
) -> Result<(), Failure> {
    if force {
        return Ok(());
    }
    let dir = io::model_directory(output)?;
    let dir = dir.as_path();
    // NAME, then the split files a split save numbers from 1 without gaps, as far as they
    // exist: each with the identity of what is there.
    let mut present: Vec<(std::path::PathBuf, FileId)> = Vec::new();
    if let Some(id) = entry_id(&dir.join(name)) {
        present.push((dir.join(name), id));
    }
    for n in 1.. {
        let path = dir.join(format!("{name}.{n}"));
        match entry_id(&path).filter(|_| split) {
            Some(id) => present.push((path, id)),
            None => break,
        }
    }
    let paths: Vec<String> = present
        .iter()
        .filter(|(_, id)| !replaced.iter().any(|(r, _)| r == id))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if paths.is_empty() {
        return Ok(());
    }
    let (exist, it) = if paths.len() == 1 {
        ("exists", "it")
    } else {
        ("exist", "them")
    };
    Err(format!(
        "{} {exist} (another model's data?); pass --force to replace {it}",
        paths.join(", ")
    )
    .into())
}

/// What a finished conversion says: the data files the output uses, and the input's
/// data files it no longer uses when it replaced the input in place.
fn report(output: &Path, in_place: bool, old_data: &[(FileId, String)]) -> String {
    let names = locations(output);
    let mut said = if names.is_empty() {
        format!("wrote {} as a single file", output.display())
    } else {
        let list: Vec<&str> = names.iter().map(String::as_str).collect();
        format!(
            "wrote {} with {} external data file{}: {}",
            output.display(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    };
    if in_place {
        for (_, old) in old_data {
            if !names.contains(old) {
                said.push_str(&format!(
                    "\nnote: {old} (data of the previous {}) is no longer used; it was left in place",
                    output.display()
                ));
            }
        }
    }
    said
}

/// The external data options `--external-data` and its companions ask for, checked as
/// the save will check them (a bad value is a usage error, said with its flag).
fn external_data_options(c: &Convert) -> Result<Option<ExternalDataOptions>, Failure> {
    let Some(name) = &c.external_data else {
        if c.size_threshold.is_some()
            || c.align.is_some()
            || c.max_file_size.is_some()
            || c.checksum
        {
            return Err(usage(
                "--size-threshold, --align, --max-file-size and --checksum need --external-data NAME",
            ));
        }
        return Ok(None);
    };
    let mut ext = ExternalDataOptions::new(name.clone()).checksum(c.checksum);
    if let Some(t) = c.size_threshold {
        let t = usize::try_from(t).map_err(|_| usage("--size-threshold is too large"))?;
        ext = ext.size_threshold(t);
    }
    if let Some(a) = c.align {
        ext = ext.alignment(usize::try_from(a).map_err(|_| usage("--align is too large"))?);
    }
    if let Some(m) = c.max_file_size {
        ext = ext.max_file_size(m);
    }
    ext.validate()?;
    Ok(Some(ext))
}

pub fn run(
    input: &Path,
    output: &Path,
    c: &Convert,
    progress: &Progress,
) -> Result<String, Failure> {
    // The arguments first: a usage error is said before anything is read.
    let ext = external_data_options(c)?;
    if let Some(url) = crate::source::url(output) {
        return run_to_url(input, url, ext, c, progress);
    }
    crate::refuse_existing_output(output, c.force)?;
    let probe = crate::source::load_with(
        input,
        &ParseOptions::clone(&c.load)
            .structure_only(true)
            .load_external_data(false),
    )?;
    // A model read from a URL has no data files here to protect.
    let input_data = match crate::source::url(input) {
        Some(_) => Vec::new(),
        None => data_files(&probe, &io::model_directory(input)?),
    };
    let input_has_external = has_external(&probe);
    // The probe is already the structure-only model of a single-file input: the copying
    // paths below use it instead of reading the structure again.
    let mut probe = (!input_has_external).then_some(probe);
    let mut load_structure = || match probe.take() {
        Some(model) => Ok(model),
        None => crate::source::load_with(
            input,
            &progress.load(
                ParseOptions::clone(&c.load)
                    .structure_only(true)
                    .num_threads(c.threads),
            ),
        ),
    };
    refuse_destructive(input, output, c.external_data.as_deref(), &input_data)?;
    let in_place = std::fs::metadata(input)
        .ok()
        .zip(std::fs::metadata(output).ok())
        .is_some_and(|(a, b)| (a.dev(), a.ino()) == (b.dev(), b.ino()));
    if let Some(name) = &c.external_data {
        // Converting in place, the input's own data files are the ones being replaced;
        // otherwise they are another model's, and in the way like any file.
        let split = c.max_file_size.is_some();
        let replaced: &[(FileId, String)] = if in_place { &input_data } else { &[] };
        refuse_existing_data_file(output, name, split, c.force, replaced)?;
    }
    let old_data = if in_place { input_data } else { Vec::new() };
    let save = progress.save(
        SerializeOptions::default()
            .num_threads(c.threads)
            .sync(c.sync)
            .replace_data_files(c.force),
    );
    if let Some(ext) = ext {
        progress.step(format!("reading the structure of {}", input.display()));
        let mut model = load_structure()?;
        let inferred = c.prepare(&mut model, progress)?;
        progress.step(format!(
            "writing {} with external data {}",
            output.display(),
            ext.location
        ));
        io::save(&model, output, &save.external_data(ext))?;
        return Ok(said(inferred, report(output, in_place, &old_data)));
    }
    progress.step(format!("reading {}", input.display()));
    if !input_has_external {
        // One file in, one file out: the weights are copied from the input file into the
        // output file (in the kernel where it can), never read into this process.
        let mut model = load_structure()?;
        let inferred = c.prepare(&mut model, progress)?;
        progress.step(format!("writing {}", output.display()));
        io::save(&model, output, &save)?;
        return Ok(said(inferred, report(output, in_place, &old_data)));
    }
    if c.inline {
        let load = progress.load(ParseOptions::clone(&c.load).num_threads(c.threads));
        let mut model = crate::source::load_with(input, &load)?;
        let inferred = c.prepare(&mut model, progress)?;
        progress.step(format!("writing {}", output.display()));
        io::save(&model, output, &save)?;
        return Ok(said(inferred, report(output, in_place, &old_data)));
    }
    // Keep the external layout: external tensors go to files of the same names next to
    // the output, inline ones into the model file, all copied from their files.
    let mut model = crate::source::load_with(
        input,
        &progress.load(
            ParseOptions::clone(&c.load)
                .structure_only(true)
                .num_threads(c.threads),
        ),
    )?;
    let inferred = c.prepare(&mut model, progress)?;
    progress.step(format!(
        "writing {} and its external data",
        output.display()
    ));
    io::save(&model, output, &save)?;
    Ok(said(inferred, report(output, in_place, &old_data)))
}

/// `convert` to a URL: the model (weights left where they are until the save copies
/// them, unless `--inline` asks for every tensor in the model object) saved to the
/// store with the options of a save to a file, data objects beside it.
fn run_to_url(
    input: &Path,
    url: &str,
    ext: Option<ExternalDataOptions>,
    c: &Convert,
    progress: &Progress,
) -> Result<String, Failure> {
    // Before anything is read: an HTTP URL is read-only.
    onnx_light::remote::check_writable(url)?;
    match onnx_light::remote::size(url) {
        Ok(_) if !c.force => {
            return Err(format!(
            "{url} exists; pass --force to replace it (the model object is replaced last, whole)"
        )
            .into())
        }
        Err(e)
            if !matches!(
                e.kind(),
                onnx_light::ErrorKind::Io(std::io::ErrorKind::NotFound)
            ) =>
        {
            return Err(e.into())
        }
        _ => {}
    }
    let load = ParseOptions::clone(&c.load).num_threads(c.threads);
    let load = if c.inline && ext.is_none() {
        load
    } else {
        load.structure_only(true)
    };
    progress.step(format!("reading {}", input.display()));
    let mut model = crate::source::load_with(input, &progress.load(load))?;
    let inferred = c.prepare(&mut model, progress)?;
    let mut save = progress.save(SerializeOptions::default().num_threads(c.threads));
    if let Some(ext) = ext {
        save = save.external_data(ext);
    }
    progress.step(format!("writing {url}"));
    let saved = onnx_light::remote::save(&model, url, &save)?;
    let written = match saved.data_objects.len() {
        0 => format!("wrote {url} as a single object"),
        n => format!(
            "wrote {url} and {n} data object{} beside it ({})",
            if n == 1 { "" } else { "s" },
            saved
                .data_objects
                .iter()
                .map(|o| o.location.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(said(inferred, written))
}
