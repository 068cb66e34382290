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
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;

use crate::par::*;

use super::names::{left_by_crashed_saves, names_in_use};
use super::reference::ExternalDataRef;
use crate::error::{Error, ErrorKind, Result};
use crate::field::Bytes;
use crate::io::atomic::{AtomicTarget, Displaced, SaveHook, TargetDir};
use crate::io::buffer::align_up;
use crate::io::location::{save_location, tensor_save_location};
use crate::io::open::FileId;
use crate::io::options::{ExternalDataOptions, SerializeOptions};
use crate::io::saved::{Saved, SavedFile};
use crate::io::write::{copy_in_steps, write_in_steps, write_model_file};
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
            ExternalDataRef::from_tensor(t)
                .and_then(|r| tensor_save_location(t.name(), &r.location))?
        } else if config.one_file_per_tensor {
            tensor_file_names.next(t.name())
        } else {
            save_location("external_data.location", &config.location)?
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

/// One data file of a save: its location as the model records it, and where it is.
struct DataFile {
    location: String,
    dir: Arc<TargetDir>,
    leaf: OsString,
}

/// A checked location's directory components and file name.
fn split_location(location: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = location.split('/').collect();
    let leaf = parts.pop().unwrap_or(location);
    (parts, leaf)
}

/// The identity of what is at `location` beneath `dir` (a link is not followed); `None`
/// when nothing is, or a directory on the way is missing.
fn entry_at(dir: &Arc<TargetDir>, location: &str) -> Result<Option<FileId>> {
    let (parts, leaf) = split_location(location);
    Ok(dir.beneath(&parts, None)?.and_then(|d| d.entry_id(leaf)))
}

/// Saves `model` to `path` with the planned external data.
pub(crate) fn save_external(
    model: &ModelProto<'_>,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
    plan: Plan,
) -> Result<Saved> {
    // Every file of this save is created, renamed and removed relative to this one
    // opened directory (and directories opened beneath it).
    let (dir, model_name) = TargetDir::of(path)?;
    // Files this save reads (lazily loaded payloads), by identity.
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
    // The data of the model at the path is free to replace; so is that of a model a
    // crashed save left aside (the path's previous model).
    let mut in_use = names_in_use(path);
    let (crash_leftovers, their_names) = left_by_crashed_saves(&dir, &model_name);
    in_use.extend(their_names);
    let final_locations = final_locations(
        &dir,
        (&model_name, model_entry),
        &plan,
        options,
        &in_use,
        &reading,
    )?;

    // Directories the locations need, created as needed (and removed again if the save
    // fails); then the files' own names.
    let mut created = Vec::new();
    // Files in the same directory share one opened directory: it is opened, synced
    // and listed once.
    let mut opened: HashMap<Vec<&str>, Arc<TargetDir>> = HashMap::new();
    let files: Result<Vec<DataFile>> = final_locations
        .iter()
        .map(|location| {
            let (parts, leaf) = split_location(location);
            let sub = match opened.get(&parts) {
                Some(d) => d.clone(),
                None => {
                    let d = dir
                        .beneath(&parts, Some(&mut created))?
                        .expect("directories are created");
                    opened.insert(parts, d.clone());
                    d
                }
            };
            Ok(DataFile {
                location: location.clone(),
                dir: sub,
                leaf: OsString::from(leaf),
            })
        })
        .collect();
    let files = match files {
        Ok(files) => files,
        Err(e) => {
            TargetDir::remove_created(created);
            return Err(e);
        }
    };
    let result = write_and_commit(
        model,
        path,
        options,
        hook,
        &plan,
        (&dir, &model_name),
        &files,
        &in_use,
    );
    match &result {
        Err(_) => TargetDir::remove_created(created),
        Ok(_) => {
            // Superseded now: the model at the path is the new one, and the files
            // the data files displaced are gone too.
            for name in crash_leftovers {
                let _ = rustix::fs::unlinkat(dir.fd(), &name, rustix::fs::AtFlags::empty());
            }
            let mut by_dir: Vec<(&Arc<TargetDir>, HashSet<&OsStr>)> = Vec::new();
            for f in &files {
                match by_dir.iter_mut().find(|(d, _)| Arc::ptr_eq(d, &f.dir)) {
                    Some((_, names)) => {
                        names.insert(&f.leaf);
                    }
                    None => by_dir.push((&f.dir, HashSet::from([f.leaf.as_os_str()]))),
                }
            }
            for (dir, names) in by_dir {
                dir.remove_dead_asides(&names);
            }
        }
    }
    result
}

/// The location each planned file gets. A name the caller chose is kept, and replaces
/// the file there when that is the data of the model at the target path, an older
/// generation of it, or when `replace_data_files` allows it; any other file there (most
/// likely another model's data), the model file, and a file this save reads that is
/// not the target model's data fail the save. A name that lazily loaded tensors brought
/// from their model takes the first free generation of it instead (`w.bin`, `w.bin~1`,
/// ...).
fn final_locations(
    dir: &Arc<TargetDir>,
    (model_name, model_entry): (&OsStr, Option<FileId>),
    plan: &Plan,
    options: &SerializeOptions,
    in_use: &HashSet<String>,
    reading: &HashSet<FileId>,
) -> Result<Vec<String>> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut finals: Vec<Option<String>> = vec![None; plan.files.len()];
    // What stands in the way of writing `candidate`, if anything.
    let clash = |candidate: &str, taken: &HashSet<String>| -> Result<Option<&'static str>> {
        if taken.contains(candidate) {
            return Ok(Some("another data file of this save"));
        }
        if OsStr::new(candidate) == model_name {
            return Ok(Some("the model file itself"));
        }
        let id = entry_at(dir, candidate)?;
        if id.is_some() && id == model_entry {
            return Ok(Some("the model file itself (another name of it)"));
        }
        // Replacing a file read here is safe for this save (it is read in full first)
        // but would break the model it belongs to, unless that is the model replaced.
        if id.is_some_and(|id| reading.contains(&id)) && !in_use.contains(candidate) {
            return Ok(Some("a file this save reads the weights from"));
        }
        let replaceable = options.replace_data_files
            || in_use.contains(candidate)
            || older_generation(candidate, in_use);
        Ok((id.is_some() && !replaceable).then_some("another file"))
    };
    // Chosen names first: an inherited one steps aside for them.
    for chosen_pass in [true, false] {
        for (i, (name, _)) in plan.files.iter().enumerate() {
            let inherited = !plan.chosen.contains(name);
            if inherited == chosen_pass {
                continue;
            }
            if !inherited {
                if let Some(what) = clash(name, &taken)? {
                    return Err(refused_location(dir, name, what));
                }
                taken.insert(name.clone());
                finals[i] = Some(name.clone());
                continue;
            }
            let base = generation_base(name);
            let mut candidate = base.to_string();
            let mut generation = 0;
            while clash(&candidate, &taken)?.is_some() {
                generation += 1;
                candidate = format!("{base}~{generation}");
            }
            taken.insert(candidate.clone());
            finals[i] = Some(candidate);
        }
    }
    Ok(finals.into_iter().flatten().collect())
}

/// The error for a chosen data file location that `what` already holds.
fn refused_location(dir: &TargetDir, location: &str, what: &str) -> Error {
    let (kind, message) = if what == "another file" {
        (
            std::io::ErrorKind::AlreadyExists,
            format!(
                "the data file {location} already exists and is not the data of an earlier \
                 save to this path (another model's?); choose another location, remove \
                 the file, or allow replacing it (replace_data_files)"
            ),
        )
    } else {
        (
            std::io::ErrorKind::InvalidInput,
            format!("the data file location {location} names {what}; choose another location"),
        )
    };
    Error::io(
        std::io::Error::new(kind, message),
        Some(&dir.join(location)),
    )
}

/// Writes the data files and the model file under temporary names, then renames them
/// into place, in the order the module's documentation gives.
#[allow(clippy::too_many_arguments)]
fn write_and_commit(
    model: &ModelProto<'_>,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
    plan: &Plan,
    (dir, model_name): (&Arc<TargetDir>, &OsStr),
    files: &[DataFile],
    in_use: &HashSet<String>,
) -> Result<Saved> {
    // Files this save will replace: their cached pages are released now, for the new
    // files to reuse.
    for f in files {
        if let Some(leaf) = f.leaf.to_str() {
            f.dir.release_cached_pages(leaf);
        }
    }
    let file_path = |f: &DataFile| f.dir.join(&f.leaf);

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
                StringStringEntryProto::new("location", files[p.file].location.clone()),
                StringStringEntryProto::new("offset", p.offset.to_string()),
                StringStringEntryProto::new("length", p.len.to_string()),
            ];
        }
        index += 1;
    });

    // Data files first, under temporary names.
    let mut targets: Vec<AtomicTarget> = Vec::new();
    let written = (|| -> Result<()> {
        for (f, (_, size)) in files.iter().zip(&plan.files) {
            let target =
                AtomicTarget::in_dir(&f.dir, &f.leaf, hook)?.owner_only(options.owner_only);
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
                            write_in_steps(hook, &target.file, bytes, *offset)
                                .map_err(|e| e.in_file(&file_path(&files[*file])))?;
                        }
                        TensorSource::Lazy(lazy, name) => {
                            copy_in_steps(hook, &target.file, lazy, *offset).map_err(|e| {
                                e.in_file(&file_path(&files[*file])).in_tensor(name)
                            })?;
                        }
                    }
                    Ok(())
                })
        })??;
        for (target, f) in targets.iter().zip(files) {
            target
                .flush(hook, options.sync)
                .map_err(|e| Error::io(e, Some(&file_path(f))))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        targets.into_iter().for_each(AtomicTarget::abandon);
        return Err(e);
    }
    // Each data file's SHA-1, read back from the file as written, recorded in its
    // tensors (after `length`, as the spec lists the keys).
    if options.external_data.as_ref().is_some_and(|e| e.checksum) {
        let sums: Result<Vec<String>> = targets
            .iter()
            .zip(files)
            .map(|(t, f)| sha1_of(&t.file).map_err(|e| Error::io(e, Some(&file_path(f)))))
            .collect();
        let sums = match sums {
            Ok(s) => s,
            Err(e) => {
                targets.into_iter().for_each(AtomicTarget::abandon);
                return Err(e);
            }
        };
        let mut index = 0usize;
        view.visit_tensors_mut(|_, t| {
            if let Some(Some(p)) = plan.placements.get(index) {
                t.external_data.push(StringStringEntryProto::new(
                    "checksum",
                    sums[p.file].clone(),
                ));
            }
            index += 1;
        });
    }

    // Then the model file, also under a temporary name.
    let mut model_target = match AtomicTarget::in_dir(dir, model_name, hook) {
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
    let sizes: Vec<u64> = targets
        .iter()
        .map(|t| t.file.metadata().map(|m| m.len()).unwrap_or(0))
        .collect();
    let model_len = model_target.file.metadata().map(|m| m.len()).unwrap_or(0);

    // Commit. When a data file the current model at `path` uses is about to be replaced,
    // that model first leaves its name: from then until the new model is renamed in,
    // the path holds no model (a crash in that window leaves a load failing loudly,
    // never the old model paired with new data). Then the data files, then the model.
    // On a failure, data files already renamed into place are removed again and what
    // they and the model displaced is put back; on success, that is removed.
    let replaces_used_data = files
        .iter()
        .any(|f| in_use.contains(&f.location) && f.dir.entry_id(&f.leaf).is_some());
    let old_model = if replaces_used_data {
        match model_target.move_current_aside(hook, options.sync) {
            Ok(d) => d,
            Err(e) => {
                model_target.abandon();
                targets.into_iter().for_each(AtomicTarget::abandon);
                return Err(e);
            }
        }
    } else {
        None
    };
    // The data files' renames are made durable together, once, before the model's:
    // their order among themselves does not matter.
    let mut committed: Vec<(&DataFile, Option<Displaced>)> = Vec::new();
    let mut pending = targets.into_iter().zip(files);
    let outcome = loop {
        let Some((t, f)) = pending.next() else {
            if options.sync {
                let mut synced: Vec<&Arc<TargetDir>> = Vec::new();
                for f in files {
                    if !synced.iter().any(|d| Arc::ptr_eq(d, &f.dir)) {
                        f.dir.sync();
                        synced.push(&f.dir);
                    }
                }
            }
            break model_target.commit(hook, options.sync);
        };
        match t.commit_unused(hook, false) {
            Ok(displaced) => committed.push((f, displaced)),
            Err(e) => {
                pending.for_each(|(t, _)| t.abandon());
                model_target.abandon();
                break Err(e);
            }
        }
    };
    for (f, displaced) in committed {
        match (&outcome, displaced) {
            (Ok(()), Some(d)) => d.discard(),
            (Ok(()), None) => {}
            (Err(_), Some(d)) => d.restore(),
            (Err(_), None) => {
                let _ = rustix::fs::unlinkat(f.dir.fd(), &f.leaf, rustix::fs::AtFlags::empty());
            }
        }
    }
    match (&outcome, old_model) {
        (Ok(()), Some(d)) => d.discard(),
        (Err(_), Some(d)) => d.restore(),
        (_, None) => {}
    }
    outcome?;
    remove_superseded_generations(dir, in_use, files);
    Ok(Saved::new(
        dir.join(model_name),
        model_len,
        files
            .iter()
            .zip(sizes)
            .map(|(f, len)| SavedFile::new(file_path(f), f.location.clone(), len))
            .collect(),
    ))
}

/// The SHA-1 of a whole file, lowercase hex.
fn sha1_of(file: &std::fs::File) -> std::io::Result<String> {
    use sha1::{Digest, Sha1};
    use std::fmt::Write as _;
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    let mut hasher = Sha1::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    while at < len {
        let n = ((len - at) as usize).min(buf.len());
        file.read_exact_at(&mut buf[..n], at)?;
        hasher.update(&buf[..n]);
        at += n as u64;
    }
    let mut hex = String::with_capacity(40);
    for b in hasher.finalize() {
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

/// After a successful save: removes the data files under a generation name (`w.bin~1`)
/// that the replaced model used and the new one no longer does, now that the data is
/// under the name itself (`w.bin`). Nothing else is removed: another model may
/// share any other file.
fn remove_superseded_generations(
    dir: &Arc<TargetDir>,
    in_use: &HashSet<String>,
    files: &[DataFile],
) {
    let written: HashSet<&str> = files.iter().map(|f| f.location.as_str()).collect();
    for old in in_use {
        let base = generation_base(old);
        if base != old && written.contains(base) && !written.contains(old.as_str()) {
            let (parts, leaf) = split_location(old);
            if let Ok(Some(d)) = dir.beneath(&parts, None) {
                let _ = rustix::fs::unlinkat(d.fd(), leaf, rustix::fs::AtFlags::empty());
            }
        }
    }
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
        Some(save_location("external_data.location", &options.location)?)
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
