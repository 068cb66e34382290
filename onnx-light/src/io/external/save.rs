//! Saving with external data: which tensors go out, into which files at which offsets,
//! and the crash-safe order of writing.
//!
//! The model is never mutated: a [`Reborrow`] view (strings and payloads borrowed, not
//! copied) gets the new `external_data` entries, and is what the model file encodes.
//! Data files are written under temporary names and renamed into place before the model
//! file is; a data file name that the model currently at the target path still uses is
//! never overwritten (the new data goes to a second generation name, `name~1`), so the
//! old model and its data stay loadable whatever step fails. A name that holds an older
//! generation of that model's data (or any file, with `replace_data_files`) is taken by
//! moving what is there aside, renaming, and at the end removing it (or putting it back
//! when the save fails: `AtomicTarget::commit_unused`); a name that holds any other file
//! makes the save fail before anything is written.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::par::*;

use super::names::names_in_use;
use super::reference::ExternalDataRef;
use crate::error::{Error, ErrorKind, Result};
use crate::field::Bytes;
use crate::io::atomic::{AtomicTarget, Displaced, SaveHook, SaveStep, TargetDir};
use crate::io::buffer::align_up;
use crate::io::location::{bare_file_name, option_file_name};
use crate::io::open::FileId;
use crate::io::options::{ExternalDataOptions, SerializeOptions};
use crate::io::write::write_model_file;
use crate::message::Reborrow;
use crate::onnx::{DataLocation, ModelProto, StringStringEntryProto, TensorProto, TensorSite};
use crate::pool::with_threads;

/// A file name for a tensor: letters, digits, `.`, `-`, `_` kept, anything else `_`.
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(180)
        .collect();
    while s.starts_with('.') {
        s.replace_range(..1, "_");
    }
    if s.is_empty() {
        s.push_str("tensor");
    }
    s
}

/// File names for one-file-per-tensor saves: the sanitized tensor name, with `_2`, `_3`,
/// ... appended when two tensors would share a name.
#[derive(Default)]
struct TensorFileNames {
    used: HashSet<String>,
}

impl TensorFileNames {
    fn next(&mut self, tensor_name: &str) -> String {
        let base = sanitize(tensor_name);
        let mut candidate = base.clone();
        let mut n = 1;
        while !self.used.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{base}_{n}");
        }
        candidate
    }
}

/// Whether the options send a tensor of `len` bytes at `site` to an external file. Sparse
/// tensors stay inline: onnx never writes them externally and onnxruntime cannot read them.
fn selected(options: &ExternalDataOptions, site: TensorSite, len: u64) -> bool {
    let site_ok = match site {
        TensorSite::Attribute => options.convert_attributes,
        TensorSite::SparseInitializer | TensorSite::SparseAttribute => false,
        _ => true,
    };
    site_ok && len >= options.size_threshold as u64
}

/// Where one tensor's bytes go.
#[derive(Debug, Clone)]
struct Placement {
    file: usize,
    offset: u64,
    len: u64,
}

/// The decisions of an external save, made before anything is written.
pub(crate) struct Plan {
    /// Per tensor in traversal order: where its bytes go, if it goes external.
    placements: Vec<Option<Placement>>,
    /// File names as requested (before generation renaming), and their sizes.
    files: Vec<(String, u64)>,
    /// The requested names the caller chose (the options' location, or a tensor marked
    /// by `convert_model_to_external_data`), as opposed to the names lazily loaded
    /// tensors brought from their model.
    chosen: HashSet<String>,
}

impl Plan {
    /// True when no data file is written: every tensor stays in the model file.
    pub(crate) fn writes_no_data_files(&self) -> bool {
        self.files.is_empty()
    }
}

/// The bytes a tensor would write: its in-memory payload or its lazy source.
fn payload_len(t: &TensorProto<'_>) -> Option<u64> {
    match (&t.raw_data, &t.lazy_data) {
        (Some(raw), _) => Some(raw.len() as u64),
        (None, Some(lazy)) => Some(lazy.len()),
        (None, None) => None,
    }
}

/// Decides what goes where, or `None` when the save has no external data to write.
pub(crate) fn plan(model: &ModelProto<'_>, options: &SerializeOptions) -> Result<Option<Plan>> {
    let ext = options.external_data.as_ref();
    if let Some(e) = ext {
        e.validate()?;
    }
    let defaults = ExternalDataOptions::default();
    let config = ext.unwrap_or(&defaults);
    let mut placements = Vec::new();
    let mut files: Vec<(String, u64)> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut tensor_file_names = TensorFileNames::default();
    let mut chosen: HashSet<String> = HashSet::new();
    let mut any = false;
    let mut any_lazy = false;
    model.try_visit_tensors(|site, t| -> Result<()> {
        any_lazy |= t.raw_data.is_none() && t.lazy_data.is_some();
        let Some(len) = payload_len(t) else {
            placements.push(None);
            return Ok(());
        };
        // With options, the options decide (an old layout is not kept); without, a
        // tensor marked external in memory (convert_model_to_external_data, or a lazy
        // load that kept its metadata) goes to the file it names.
        let wanted = match ext {
            Some(e) => selected(e, site, len),
            None => t.is_external(),
        };
        if !wanted {
            // A lazily loaded tensor that stays inline is fetched while saving.
            placements.push(None);
            return Ok(());
        }
        any = true;
        let requested = if ext.is_none() {
            ExternalDataRef::from_tensor(t).and_then(|r| {
                bare_file_name("location", &r.location).map_err(|e| e.in_tensor(t.name()))
            })?
        } else if config.one_file_per_tensor {
            tensor_file_names.next(t.name())
        } else {
            option_file_name("external_data.location", &config.location)?
        };
        if ext.is_some() || t.raw_data.is_some() {
            chosen.insert(requested.clone());
        }
        // Both alignments are powers of two: the larger is a multiple of the other.
        let alignment = config.alignment.max(options.buffer.alignment) as u64;
        let mut file = *by_name.entry(requested.clone()).or_insert_with(|| {
            files.push((requested.clone(), 0));
            files.len() - 1
        });
        let mut offset = align_up(files[file].1, alignment).ok_or_else(|| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "external data file offset",
            })
        })?;
        if let Some(max) = config.max_file_size {
            if files[file].1 > 0 && offset.saturating_add(len) > max {
                // Split: `name.1`, `name.2`, ... (a new file starts at offset 0).
                let split = files
                    .iter()
                    .filter(|(n, _)| n == &requested || n.starts_with(&format!("{requested}.")))
                    .count();
                let split_name = format!("{requested}.{split}");
                chosen.insert(split_name.clone());
                files.push((split_name.clone(), 0));
                file = files.len() - 1;
                by_name.insert(requested.clone(), file);
                offset = 0;
            }
        }
        files[file].1 = offset + len;
        placements.push(Some(Placement { file, offset, len }));
        Ok(())
    })?;
    // A model with lazily loaded tensors always gets a plan. (So `None` also means that
    // every tensor's data is in memory.)
    Ok((any || any_lazy).then_some(Plan {
        placements,
        files,
        chosen,
    }))
}

/// Saves `model` to `path` with the planned external data.
pub(crate) fn save_external(
    model: &ModelProto<'_>,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
    plan: Plan,
) -> Result<()> {
    // Every file of this save is created, renamed and removed relative to this one
    // opened directory.
    let (dir, model_name) = TargetDir::of(path)?;
    // Files this save reads (lazily loaded payloads), by identity: none of them may be
    // renamed aside, removed or renamed over, however its name is spelled.
    let mut reading: HashSet<FileId> = HashSet::new();
    let mut reading_data: HashSet<FileId> = HashSet::new();
    model.visit_tensors(|_, t| {
        if let Some(id) = t.lazy_data.as_ref().and_then(|l| l.file_identity()) {
            reading.insert(FileId::from_parts(id));
            if t.is_external() {
                reading_data.insert(FileId::from_parts(id));
            }
        }
    });
    let model_entry = dir.entry_id(&model_name);
    if model_entry.is_some_and(|id| reading_data.contains(&id)) {
        return Err(Error::io(
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the target is an external data file the model being saved reads its weights from; \
                 replacing it would destroy them",
            ),
            Some(path),
        ));
    }
    // Final names: a name the current model at `path` uses, a file this save reads, the
    // model file itself, or another name of it (a hard link) gets a second generation.
    let in_use = names_in_use(path);
    let mut taken: HashSet<String> = HashSet::new();
    // Names lazily loaded tensors brought from their model were chosen by no one here:
    // the save takes the first free generation of the name (`w.bin`, `w.bin~1`, ...
    // whatever generation the model had), passing over another model's files, where a
    // name the caller chose is refused below.
    let foreign = |candidate: &str| {
        !options.replace_data_files
            && dir.entry_id(candidate).is_some()
            && !older_generation(candidate, &in_use)
    };
    let final_names: Vec<String> = plan
        .files
        .iter()
        .map(|(name, _)| {
            let inherited = !plan.chosen.contains(name);
            let base = if inherited {
                generation_base(name)
            } else {
                name.as_str()
            };
            let mut candidate = base.to_string();
            let mut generation = 0;
            while in_use.contains(&candidate)
                || taken.contains(&candidate)
                || OsString::from(&candidate) == model_name
                || dir
                    .entry_id(&candidate)
                    .is_some_and(|id| reading.contains(&id) || Some(id) == model_entry)
                || (inherited && foreign(&candidate))
            {
                generation += 1;
                candidate = format!("{base}~{generation}");
            }
            taken.insert(candidate.clone());
            candidate
        })
        .collect();

    // A file already at a final name is replaced only when it is an older generation of
    // the model at `path`'s data, or when the caller allows it: anything else is usually
    // another model's data, and a save must not break that model.
    if let Some(name) = final_names.iter().find(|n| foreign(n)) {
        return Err(Error::io(
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "the data file {name} already exists and is not the data of an earlier \
                     save to this path (another model's?); choose another location, remove \
                     the file, or allow replacing it (replace_data_files)"
                ),
            ),
            Some(&dir.join(name)),
        ));
    }

    // Files this save will replace (older generations, or files the caller allowed it
    // to replace): their cached pages are released now, for the new files to reuse.
    for name in &final_names {
        dir.release_cached_pages(name);
    }

    // The view the model file encodes: external tensors point at their files.
    let mut view = model.reborrow();
    let mut index = 0usize;
    let mut sources: Vec<(usize, u64, TensorSource<'_>)> = Vec::new();
    model.visit_tensors(|_, t| {
        if let Some(Some(p)) = plan.placements.get(index) {
            let source = match (&t.raw_data, &t.lazy_data) {
                (Some(raw), _) => TensorSource::Memory(raw),
                (None, Some(lazy)) => TensorSource::Lazy(lazy, t.name().to_string()),
                (None, None) => unreachable!("planned tensors have data"),
            };
            sources.push((p.file, p.offset, source));
        }
        index += 1;
    });
    // Tensors that stay inline keep their lazy data: the model file's writer copies it
    // from its file. One that was external is now inline: its old description goes.
    let mut index = 0usize;
    view.visit_tensors_mut(|_, t| {
        if matches!(plan.placements.get(index), Some(None))
            && (t.raw_data.is_some() || t.lazy_data.is_some())
            && t.is_external()
        {
            t.data_location = None;
            t.external_data.clear();
        }
        if let Some(Some(p)) = plan.placements.get(index) {
            t.raw_data = None;
            t.lazy_data = None;
            t.data_location = Some(DataLocation::External.into());
            t.external_data = vec![
                StringStringEntryProto::new("location", final_names[p.file].clone()),
                StringStringEntryProto::new("offset", p.offset.to_string()),
                StringStringEntryProto::new("length", p.len.to_string()),
            ];
        }
        index += 1;
    });

    // Data files first, under temporary names.
    let mut targets: Vec<AtomicTarget> = Vec::new();
    let written = (|| -> Result<()> {
        for (name, (_, size)) in final_names.iter().zip(&plan.files) {
            let target =
                AtomicTarget::in_dir(&dir, name.as_ref(), hook)?.owner_only(options.owner_only);
            target.reserve(*size)?;
            targets.push(target);
        }
        with_threads(options.num_threads, || {
            sources
                .par_iter()
                .try_for_each(|(file, offset, source)| -> Result<()> {
                    let target = &targets[*file];
                    match source {
                        TensorSource::Memory(bytes) => {
                            hook.before(SaveStep::Write {
                                offset: *offset,
                                len: bytes.len() as u64,
                            })?;
                            target
                                .file
                                .write_all_at(bytes, *offset)
                                .map_err(|e| Error::io(e, Some(&dir.join(&final_names[*file]))))?;
                        }
                        TensorSource::Lazy(lazy, name) => {
                            hook.before(SaveStep::Write {
                                offset: *offset,
                                len: lazy.len(),
                            })?;
                            lazy.copy_into(&target.file, *offset).map_err(|e| {
                                e.in_file(&dir.join(&final_names[*file])).in_tensor(name)
                            })?;
                        }
                    }
                    Ok(())
                })
        })??;
        for (target, name) in targets.iter().zip(&final_names) {
            target
                .flush(hook, options.sync)
                .map_err(|e| Error::io(e, Some(&dir.join(name))))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        targets.into_iter().for_each(AtomicTarget::abandon);
        return Err(e);
    }

    // Then the model file, also under a temporary name.
    let model_target = match AtomicTarget::in_dir(&dir, &model_name, hook) {
        Ok(t) => t.owner_only(options.owner_only),
        Err(e) => {
            targets.into_iter().for_each(AtomicTarget::abandon);
            return Err(e);
        }
    };
    let result = write_model_file(&view, &model_target.file, path, options, hook)
        .and_then(|()| Ok(model_target.flush(hook, options.sync)?));
    if let Err(e) = result {
        model_target.abandon();
        targets.into_iter().for_each(AtomicTarget::abandon);
        return Err(e.in_file(path));
    }
    // Commit: data files (none of which the current model uses), then the model. On a
    // failure, data files already renamed into place are removed again (no model refers
    // to them) and what they displaced is put back; on success, that is removed.
    let mut committed: Vec<(String, Option<Displaced>)> = Vec::new();
    let mut targets = targets.into_iter().zip(&final_names);
    let outcome = loop {
        let Some((t, name)) = targets.next() else {
            break model_target.commit(hook, options.sync);
        };
        match t.commit_unused(hook, options.sync) {
            Ok(displaced) => committed.push((name.clone(), displaced)),
            Err(e) => {
                targets.for_each(|(t, _)| t.abandon());
                model_target.abandon();
                break Err(e);
            }
        }
    };
    for (name, displaced) in committed {
        match (&outcome, displaced) {
            (Ok(()), Some(d)) => d.discard(),
            (Ok(()), None) => {}
            (Err(_), Some(d)) => d.restore(),
            (Err(_), None) => {
                let _ = rustix::fs::unlinkat(dir.fd(), name.as_str(), rustix::fs::AtFlags::empty());
            }
        }
    }
    outcome
}

/// A data file name without its generation suffix (`w.bin~1` → `w.bin`).
fn generation_base(name: &str) -> &str {
    match name.rsplit_once('~') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// Whether `name` is another generation of a data file the model at the target path
/// uses (`in_use`): the data of an earlier save of that model, free to replace.
fn older_generation(name: &str, in_use: &HashSet<String>) -> bool {
    let base = generation_base(name);
    in_use
        .iter()
        .any(|u| u != name && generation_base(u) == base)
}

/// Where a tensor's bytes come from while saving: memory, or a file range copied file
/// to file, never read into memory (`docs/design/fresh-process.md`).
enum TensorSource<'m> {
    Memory(&'m Bytes<'m>),
    Lazy(&'m crate::field::LazyPayload, String),
}

/// Marks tensors as external in memory, as onnx's `convert_model_to_external_data`
/// does: each tensor the options select gets `data_location = EXTERNAL` and a
/// `location` entry (its bytes stay in memory). A later [`crate::io::save`] writes them
/// to those files.
///
/// # Errors
/// `InvalidOption` for bad options.
pub fn convert_model_to_external_data(
    model: &mut ModelProto<'_>,
    options: &ExternalDataOptions,
) -> Result<()> {
    options.validate()?;
    let mut names = TensorFileNames::default();
    let location = if options.one_file_per_tensor {
        None
    } else {
        Some(option_file_name(
            "external_data.location",
            &options.location,
        )?)
    };
    model.visit_tensors_mut(|site, t| {
        // The same rule as a save with options.
        let Some(raw) = &t.raw_data else {
            return;
        };
        if !selected(options, site, raw.len() as u64) {
            return;
        }
        let name = match &location {
            Some(l) => l.clone(),
            None => names.next(t.name()),
        };
        t.data_location = Some(DataLocation::External.into());
        t.external_data = vec![StringStringEntryProto::new("location", name)];
    });
    Ok(())
}
