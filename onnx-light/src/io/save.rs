//! Saving models: the entry points. Writing the bytes is `write`'s, replacing files
//! atomically is `atomic`'s, and external data files are planned and written by
//! `external`; this module only chooses between them.

use std::io::Write;
use std::path::Path;

use super::atomic::{write_atomically, NoHook, SaveHook, SaveStep};
use super::options::SerializeOptions;
use super::progress::SharedProgress;
use super::saved::Saved;
use super::write::{encode_to_vec, encode_to_writer, write_model_file};
use crate::error::{Error, ErrorKind, Result};
use crate::onnx::ModelProto;

/// Encodes `model` into a new vector of exactly its encoded size.
///
/// # Errors
/// `InvalidOption` for external data options (they need a model path: use [`save`]);
/// `IncompleteModel` for tensors whose weights were left on disk or that are marked
/// external while holding their data; `ValueOutOfRange` if the encoding does not fit in
/// memory.
pub fn save_to_vec(model: &ModelProto<'_>, options: &SerializeOptions) -> Result<Vec<u8>> {
    encode_to_vec(model, options)
}

/// Encodes `model` into any writer (sequentially, buffered; large payloads are written
/// straight through). Returns the number of bytes written.
///
/// # Errors
/// I/O errors of the writer; `InvalidOption` for external data options (they need a
/// model path: use [`save`]); `IncompleteModel` for tensors left on disk or marked
/// external while holding their data.
pub fn save_to_writer(
    model: &ModelProto<'_>,
    writer: impl Write,
    options: &SerializeOptions,
) -> Result<u64> {
    encode_to_writer(model, writer, options)
}

/// Saves `model` to `path` atomically: the bytes go to a new temporary file in the same
/// directory, which is flushed to disk and then renamed over `path`. A failure at any
/// point leaves the previous file untouched and removes the temporary file. An existing
/// file's permissions are kept (without set-ID and sticky bits). Returns the files
/// written ([`Saved`]).
///
/// With external data ([`SerializeOptions::external_data`]) the data files keep the
/// names given (`location`, which may name subdirectories of the model's directory,
/// created as needed): saving again over the same path replaces them, never appends
/// to them. See [`external`](super::external) for the order of the writes and what a
/// crash at any point leaves.
///
/// When `path` is a symbolic link (or a chain of them), the save replaces the file it
/// leads to, in that file's directory, and the link stays a link; external data files go
/// there too, beside the model ([`model_directory`](super::model_directory)). A dangling
/// link's target is created; a loop, a link to a directory, FIFO or device, and a link in
/// a world-writable sticky directory owned by another user are refused. A file that a no-copy model still maps stays valid: it is
/// replaced, never written in place. Weights a structure-only load left on disk are
/// copied from their file into the new one without passing through memory (in the
/// kernel where it can); a source file truncated since the load is an error.
///
/// # Errors
/// I/O errors naming the file, among them a file that weights were left in and that
/// has shrunk since the load, and the refusals above (`IsADirectory` for a directory,
/// `InvalidInput` for a FIFO or device, `PermissionDenied` for a link in a shared sticky
/// directory, a loop of links).
///
/// # Examples
/// ```no_run
/// use onnx_light::io::{self, SerializeOptions};
/// let model = io::load("in.onnx")?;
/// io::save(&model, "out.onnx", &SerializeOptions::default())?;
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn save(
    model: &ModelProto<'_>,
    path: impl AsRef<Path>,
    options: &SerializeOptions,
) -> Result<Saved> {
    save_with_hook(model, path.as_ref(), options, &NoHook)
}

/// [`save`] with a hook called before every step (for fault-injection tests).
///
/// # Errors
/// As [`save`], plus whatever the hook returns.
pub fn save_with_hook(
    model: &ModelProto<'_>,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
) -> Result<Saved> {
    options.validate()?;
    // A model nested too deep to encode is refused before the walks of the save recurse
    // through its subgraphs: the k-th nested graph sits 3k - 2 messages deep, so past
    // limit / 3 graphs (rounded up) the encoder would refuse it too. The encoder bounds
    // the rest (deep types) itself.
    let limit = crate::codec::MAX_ENCODE_DEPTH;
    if model.graphs_nest_deeper_than((limit as usize).div_ceil(3)) {
        return Err(Error::new(ErrorKind::RecursionLimitExceeded { limit }));
    }
    match &options.progress {
        None => save_through(model, path, options, hook),
        Some(progress) => {
            // Every payload is written once, to the model file or a data file; the model
            // file's writer announces the rest of its bytes (`write::write_model_file`).
            let mut payloads = 0u64;
            model.visit_tensors(|_, t| payloads += payload_len(t));
            progress.expect(payloads);
            let reporting = Reporting {
                inner: hook,
                progress,
            };
            save_through(model, path, options, &reporting)
        }
    }
}

/// The bytes of a tensor's payload, in memory or left on disk.
fn payload_len(t: &crate::onnx::TensorProto<'_>) -> u64 {
    match (&t.raw_data, &t.lazy_data) {
        (Some(raw), _) => raw.len() as u64,
        (None, Some(lazy)) => lazy.len(),
        (None, None) => 0,
    }
}

/// A hook that tells a save's progress each write it sees (every write of the model file
/// and of the data files goes through the hook) before passing it on.
struct Reporting<'h> {
    inner: &'h dyn SaveHook,
    progress: &'h SharedProgress,
}

impl SaveHook for Reporting<'_> {
    fn before(&self, step: SaveStep) -> std::io::Result<()> {
        self.inner.before(step)?;
        if let SaveStep::Write { len, .. } = step {
            self.progress.advance(len);
        }
        Ok(())
    }

    fn unnamed_temporaries(&self) -> bool {
        self.inner.unnamed_temporaries()
    }
}

/// [`save_with_hook`] once the options and the model's nesting are checked.
fn save_through(
    model: &ModelProto<'_>,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
) -> Result<Saved> {
    // External data, or tensors whose bytes are still on disk: the path that writes a
    // view of the model (data files and fetched tensors) without mutating it.
    if let Some(plan) = super::external::plan(model, options)? {
        // Weights left on disk that all stay in the model file are copied file to file
        // by the model file's writer; anything that writes data files, or turns
        // external tensors inline, is the external save's.
        if !(options.external_data.is_none() && plan.writes_no_data_files()) {
            return super::external::save_external(model, path, options, hook, plan);
        }
    }
    // No data files to write; weights still on disk stay inline.
    let mut written = 0;
    let model_path = write_atomically(path, hook, options.sync, options.owner_only, |file| {
        write_model_file(model, file, path, options, hook).map_err(|e| e.in_file(path))?;
        written = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(())
    })?;
    Ok(Saved::new(model_path, written, Vec::new()))
}
