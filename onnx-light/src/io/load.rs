//! Loading models from files, memory and readers.

use super::sniff::{explain_failure, refuse_before_decoding};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::par::*;

use super::buffer::PayloadBuffer;
use super::consolidate::consolidate_tensors_to_buffer;
use super::external::{load_external, DataFile, ExternalLoad, ExternalMode};
use super::open::FileMapper;
use super::options::{default_max_memory, TensorBufferOptions};
use super::progress::{self, Progress, SharedProgress};
use super::structure::read_structure;
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::field::{ByteOwner, Bytes, LazyPayload, PayloadSource};
use crate::message::{Decode, DecodeOptions, DecodeOwned, IntoOwned};
use crate::onnx::{Model, ModelProto};
use crate::pool::{validate_threads, with_threads};
use crate::wire::DEFAULT_RECURSION_LIMIT;

/// Where a load puts the model's large payloads (weights). (Mapping the file instead is
/// the `unsafe` [`load_mapped`](crate::io::load_mapped), not a mode of the safe loads.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LoadMode {
    /// Read into memory the model owns (one buffer the tensors share): the model
    /// outlives the file and is unaffected by later changes to it (the default).
    #[default]
    Owned,
    /// Decode the structure only: large payloads stay on disk and each such tensor keeps
    /// a [`LazyPayload`] in `lazy_data` that fetches the bytes on demand. Needs a file;
    /// the weights are neither read nor mapped, and a fetch from a file that has shrunk
    /// since is an error, not a crash.
    StructureOnly,
}

/// How to load a model. Start from `ParseOptions::default()` and change what you need:
///
/// ```
/// # use onnx_light::io::ParseOptions;
/// let options = ParseOptions::default().structure_only(true).num_threads(2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Which payloads count as large (default 1024 bytes) and how loads that copy them
    /// align them (default 0: no requirement, so a file load needs one copy only).
    pub buffer: TensorBufferOptions,
    /// Where large payloads go: owned (default), or left on disk.
    pub mode: LoadMode,
    /// Worker threads for payload copies, file reads and decoding long lists (a graph's
    /// nodes, initializers, value_info: see [`DecodeOptions::parallel`]); 0 means all
    /// cores (default 0), 1 decodes on the calling thread only.
    pub num_threads: usize,
    /// Nesting limit for messages (default 100).
    pub recursion_limit: u32,
    /// Refuse inputs larger than this many bytes.
    pub max_model_size: Option<u64>,
    /// Refuse models with a tensor whose data is larger than this many bytes (external
    /// data is checked against its recorded range before anything is read or mapped).
    pub max_tensor_size: Option<u64>,
    /// The most bytes the decoded model may take in memory, on top of the input itself
    /// (see [`DecodeOptions::max_memory`] for what is counted: lists, boxes, and every
    /// string and payload the load copies; payloads that stay borrowed, shared or mapped
    /// are not counted, nor is external data, which [`allow_aliasing`](Self::allow_aliasing)
    /// bounds). Past it, the load stops with `LimitExceeded` of
    /// [`Limit::MaxMemory`](crate::Limit::MaxMemory) at the offset that asked for more.
    ///
    /// * `None` (the default): a budget proportional to the input,
    ///   [`default_max_memory`](crate::io::default_max_memory)`(input size)` = 64 MiB +
    ///   16 x the input's size in bytes. Real models need well under that; a small file
    ///   of millions of empty messages (each a few bytes on the wire and up to 800 in
    ///   memory) is refused before it allocates more.
    /// * `Some(bytes)`: that many bytes, whatever the input's size.
    /// * `Some(u64::MAX)`: no limit (trusted input only).
    pub max_memory: Option<u64>,
    /// Accept external-data ranges that alias each other (default false).
    ///
    /// By default, the external bytes the model's tensors reference in all may not
    /// exceed the total size of the distinct data files they are in: a model whose
    /// tensors point many times at the same range of a file (a handful of bytes on disk
    /// that load, or save, as many times their size) is refused with
    /// `InvalidExternalData` naming two overlapping tensors and the file, whose
    /// [`Error::limit`](crate::Error::limit) is
    /// [`Limit::Aliasing`](crate::Limit::Aliasing). No known exporter writes
    /// overlapping ranges (each tensor gets its own), so set this only for a model known
    /// to share bytes between tensors on purpose.
    /// [`io::external::verify`](crate::io::external::verify) lists the overlaps and
    /// reports the refusal (rule [`ExternalDataRule::Aliasing`](crate::ExternalDataRule)).
    pub allow_aliasing: bool,
    /// Load the data of tensors stored in external files (default true). Copied, or
    /// left lazy with `structure_only` (mapped by [`load_mapped`](crate::io::load_mapped)).
    pub load_external_data: bool,
    /// The directory external-data locations are relative to (default: the model file's
    /// directory, [`model_directory`](crate::io::model_directory), which follows a
    /// symbolic link at the path; required to load external data of a model given as
    /// bytes).
    pub external_data_dir: Option<PathBuf>,
    /// Read every external tensor from this location instead of the one it records
    /// (e.g. a renamed data file); checked like any location.
    pub external_data_location: Option<String>,
    /// Verify each data file's SHA-1 against the tensors' `checksum` (default false).
    pub verify_checksums: bool,
    /// Keep `data_location` and `external_data` after loading the bytes (default false:
    /// loaded tensors look inline).
    pub keep_external_metadata: bool,
    /// Told the bytes a load from a path reads (default none; see [`Progress`]): the
    /// model file (unless structure-only, which reads little of it, or mapped), the
    /// external data it copies and the data files it hashes for `verify_checksums`.
    /// Loads from memory report their external data only.
    pub progress: Option<SharedProgress>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            buffer: TensorBufferOptions::LOAD,
            mode: LoadMode::Owned,
            num_threads: 0,
            recursion_limit: DEFAULT_RECURSION_LIMIT,
            max_model_size: None,
            max_tensor_size: None,
            max_memory: None,
            allow_aliasing: false,
            load_external_data: true,
            external_data_dir: None,
            external_data_location: None,
            verify_checksums: false,
            keep_external_metadata: false,
            progress: None,
        }
    }
}

impl ParseOptions {
    /// Sets `buffer.raw_data_threshold`.
    pub fn raw_data_threshold(mut self, bytes: usize) -> Self {
        self.buffer.raw_data_threshold = bytes;
        self
    }
    /// Sets `buffer.alignment`.
    pub fn alignment(mut self, bytes: usize) -> Self {
        self.buffer.alignment = bytes;
        self
    }
    /// Sets `mode`.
    pub fn mode(mut self, mode: LoadMode) -> Self {
        self.mode = mode;
        self
    }
    /// Sets `num_threads` (0 = all cores).
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = n;
        self
    }
    /// `true` sets `mode` to [`LoadMode::StructureOnly`]; `false` turns a
    /// structure-only load back into an owned one (and leaves other modes alone).
    pub fn structure_only(mut self, yes: bool) -> Self {
        self.mode = match (yes, self.mode) {
            (true, _) => LoadMode::StructureOnly,
            (false, LoadMode::StructureOnly) => LoadMode::Owned,
            (false, other) => other,
        };
        self
    }
    /// Sets `recursion_limit`.
    pub fn recursion_limit(mut self, levels: u32) -> Self {
        self.recursion_limit = levels;
        self
    }
    /// Sets `max_model_size`.
    pub fn max_model_size(mut self, bytes: u64) -> Self {
        self.max_model_size = Some(bytes);
        self
    }
    /// Sets `max_memory` to `bytes` (`u64::MAX`: no limit).
    pub fn max_memory(mut self, bytes: u64) -> Self {
        self.max_memory = Some(bytes);
        self
    }
    /// Sets `allow_aliasing`.
    pub fn allow_aliasing(mut self, yes: bool) -> Self {
        self.allow_aliasing = yes;
        self
    }

    /// Sets `max_tensor_size`.
    pub fn max_tensor_size(mut self, bytes: u64) -> Self {
        self.max_tensor_size = Some(bytes);
        self
    }

    /// Sets `load_external_data`.
    pub fn load_external_data(mut self, yes: bool) -> Self {
        self.load_external_data = yes;
        self
    }
    /// Sets `external_data_dir`.
    pub fn external_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.external_data_dir = Some(dir.into());
        self
    }
    /// Sets `external_data_location`.
    pub fn external_data_location(mut self, location: impl Into<String>) -> Self {
        self.external_data_location = Some(location.into());
        self
    }
    /// Sets `verify_checksums`.
    pub fn verify_checksums(mut self, yes: bool) -> Self {
        self.verify_checksums = yes;
        self
    }
    /// Sets `keep_external_metadata`.
    pub fn keep_external_metadata(mut self, yes: bool) -> Self {
        self.keep_external_metadata = yes;
        self
    }
    /// Sets `progress`: `progress` is told the bytes the load reads (see [`Progress`]).
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(SharedProgress::new(progress));
        self
    }

    /// What to do with external data; `mapper` maps the files (a mapped load only).
    fn external_load(&self, mapper: Option<FileMapper>) -> ExternalLoad<'_> {
        ExternalLoad {
            mode: match (self.mode, mapper) {
                (LoadMode::Owned, None) => ExternalMode::Copy,
                (LoadMode::Owned, Some(map)) => ExternalMode::Mapped(map),
                (LoadMode::StructureOnly, _) => ExternalMode::Lazy,
            },
            location_override: self.external_data_location.as_deref(),
            verify_checksums: self.verify_checksums,
            keep_metadata: self.keep_external_metadata || self.mode == LoadMode::StructureOnly,
            alignment: self.buffer.alignment,
            max_tensor_size: self.max_tensor_size,
            allow_aliasing: self.allow_aliasing,
            progress: self.progress.as_ref(),
        }
    }

    /// Loads the external data of `model` if asked to and a directory is known.
    fn load_external_into(
        &self,
        model: &mut ModelProto<'_>,
        model_dir: Option<&Path>,
        mapper: Option<FileMapper>,
    ) -> Result<()> {
        if !self.load_external_data {
            return Ok(());
        }
        let Some(dir) = self.external_data_dir.as_deref().or(model_dir) else {
            return Ok(());
        };
        with_threads(self.num_threads, || {
            load_external(model, dir, &self.external_load(mapper))
        })?
    }

    /// Checks that the options make sense together.
    ///
    /// # Errors
    /// `InvalidOption` naming the option and why.
    pub fn validate(&self) -> Result<()> {
        self.buffer.validate()?;
        validate_threads(self.num_threads)?;
        Ok(())
    }

    /// The memory budget for decoding an input of `input_len` bytes: `max_memory`, or
    /// the default proportional to the input; `None` for no limit.
    pub(crate) fn memory_limit(&self, input_len: u64) -> Option<u64> {
        match self.max_memory {
            None => Some(default_max_memory(input_len)),
            Some(u64::MAX) => None,
            Some(bytes) => Some(bytes),
        }
    }

    pub(crate) fn decode_options(&self, input_len: u64) -> DecodeOptions {
        DecodeOptions {
            recursion_limit: self.recursion_limit,
            shared_threshold: self.buffer.raw_data_threshold.max(1),
            max_memory: self.memory_limit(input_len),
            parallel: self.num_threads != 1,
        }
    }

    /// Runs a decode on this load's threads: on the calling thread when `num_threads`
    /// is 1 (its decode options then say `parallel: false`), else on a pool of that
    /// many threads that the decode splits long lists across.
    fn decoding<T: Send>(&self, decode: impl FnOnce() -> Result<T> + Send) -> Result<T> {
        if self.num_threads == 1 {
            return decode();
        }
        with_threads(self.num_threads, decode)?
    }

    pub(crate) fn check_model_size(&self, len: u64) -> Result<()> {
        match self.max_model_size {
            Some(limit) if len > limit => Err(Error::new(ErrorKind::LimitExceeded {
                which: Limit::MaxModelSize,
                limit,
                actual: len,
            })),
            _ => Ok(()),
        }
    }

    pub(crate) fn check_tensors(&self, model: &ModelProto<'_>) -> Result<()> {
        let Some(limit) = self.max_tensor_size else {
            return Ok(());
        };
        model.try_visit_tensors(|_, t| {
            let size = t.inline_data_len() + t.lazy_data.as_ref().map_or(0, LazyPayload::len);
            if size > limit {
                return Err(Error::new(ErrorKind::LimitExceeded {
                    which: Limit::MaxTensorSize,
                    limit,
                    actual: size,
                })
                .in_tensor(t.name()));
            }
            Ok(())
        })
    }
}

/// Loads a model from a file with default options: owned, read with all cores.
///
/// # Errors
/// I/O errors naming the file; decoding errors with byte offset and field path.
///
/// # Examples
/// ```no_run
/// let model = onnx_light::io::load("model.onnx")?;
/// println!("{} tensors", model.tensors().len());
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Model> {
    load_with(path, &ParseOptions::default())
}

/// Loads a model from a file. The file is never mapped (see
/// [`load_mapped`](crate::io::load_mapped) for that):
///
/// * default: the file is read once into a single (huge-page) buffer and large payloads
///   become shared slices of it: one copy, peak memory about the file size;
/// * `structure_only`: everything but the large payloads is read (with positional reads
///   that skip them) and decoded; the payloads are left on disk as [`LazyPayload`]s;
/// * `alignment > 1`: payloads are then copied into aligned storage.
///
/// # Errors
/// I/O errors naming the file; decoding errors with byte offset, field path and file.
pub fn load_with(path: impl AsRef<Path>, options: &ParseOptions) -> Result<Model> {
    load_path(path.as_ref(), options, None)
}

/// [`load_with`], mapping the model file and its data files with `mapper` when given
/// (`io::mmap::load_mapped` only).
pub(crate) fn load_path(
    path: &Path,
    options: &ParseOptions,
    mapper: Option<FileMapper>,
) -> Result<Model> {
    options.validate()?;
    if mapper.is_some() {
        if options.mode == LoadMode::StructureOnly {
            return Err(Error::invalid_option(
                "structure_only",
                "leaves the weights on disk, where a mapped load maps them; use load_with",
            ));
        }
        if options.buffer.alignment > 1 {
            return Err(Error::invalid_option(
                "alignment",
                "a mapped load keeps payloads where the file has them, so it cannot align them; use a copying load",
            ));
        }
    }
    // Non-blocking and type-checked: a FIFO or device at the path is refused, not waited on.
    let file = super::open::open_model(path)?;
    let meta = file.metadata().map_err(|e| Error::io(e, Some(path)))?;
    options
        .check_model_size(meta.len())
        .map_err(|e| e.in_file(path))?;
    let mut model = with_threads(options.num_threads, || {
        load_file(&file, path, meta.len(), options, mapper)
    })?
    .map_err(|e| e.in_file(path))?;
    let dir = model_directory(path)?;
    options.load_external_into(&mut model, Some(&dir), mapper)?;
    options.check_tensors(&model).map_err(|e| e.in_file(path))?;
    Ok(model)
}

/// The file `path` names once the symbolic links at its last component are followed (a
/// chain of them too; a dangling link gives the name it points to): the file a save to
/// `path` replaces, leaving the link a link, and the file whose directory holds the
/// model's external data ([`model_directory`]). Links among the directories are the
/// kernel's to follow, as for any path.
///
/// # Errors
/// `path` being a loop of symbolic links, or a link that cannot be read.
pub fn resolve_links(path: impl AsRef<Path>) -> Result<PathBuf> {
    let path = path.as_ref();
    super::open::follow_links(path, |_, _| Ok(())).map_err(|e| Error::io(e, Some(path)))
}

/// The directory the external data of the model file at `path` is resolved against, and
/// where a save to `path` writes its data files: the directory of the file `path` names,
/// after following symbolic links at `path` itself ([`resolve_links`]). So a model
/// reached through a link (`latest.onnx -> v7/model.onnx`) keeps its data beside the file
/// it is (`v7/`). (`onnx` uses the link's own directory; the two agree whenever the link
/// and its target share a directory, as in `latest.onnx -> v7.onnx`.)
///
/// # Errors
/// As [`resolve_links`].
pub fn model_directory(path: impl AsRef<Path>) -> Result<PathBuf> {
    let file = resolve_links(path)?;
    Ok(match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

fn load_file(
    file: &File,
    path: &Path,
    len: u64,
    options: &ParseOptions,
    mapper: Option<FileMapper>,
) -> Result<Model> {
    let decode = options.decode_options(len);
    if let Some(map) = mapper {
        let owner = map(file, path)?;
        refuse_before_decoding(owner.bytes())?;
        return Model::decode_shared(owner.clone(), &decode)
            .map_err(|e| explain_failure(owner.bytes(), e));
    }
    if options.mode == LoadMode::StructureOnly {
        let head = read_head(file, len).map_err(|e| Error::io(e, Some(path)))?;
        refuse_before_decoding(&head)?;
        let structure = read_structure(file, path, len, decode.shared_threshold)
            .map_err(|e| explain_failure(&head, e))?;
        let source: Arc<dyn PayloadSource> = Arc::new(DataFile::from_file(file, path)?);
        return decode_structure(structure, &head, &decode, &source);
    }
    let len = usize::try_from(len).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "file larger than the address space",
        })
    })?;
    let mut buffer = PayloadBuffer::new(len)?;
    progress::expect(options.progress.as_ref(), len as u64);
    read_parallel(file, buffer.as_mut_slice(), options.progress.as_ref())
        .map_err(|e| Error::io(e, Some(path)))?;
    let owner = buffer.freeze()?;
    refuse_before_decoding(owner.bytes())?;
    let mut model = Model::decode_shared(owner.clone(), &decode)
        .map_err(|e| explain_failure(owner.bytes(), e))?;
    if options.buffer.alignment > 1 {
        consolidate_tensors_to_buffer(&mut model, &options.buffer)?;
    }
    Ok(model)
}

/// Decodes a model from `structure` (the file's bytes with its large payloads left as
/// zeros, from [`read_structure`]) and points every payload the decode shares at its
/// range of `source`. `head` is the file's first bytes, for the explanation of a failure.
pub(crate) fn decode_structure(
    structure: crate::field::AlignedBuffer,
    head: &[u8],
    decode: &DecodeOptions,
    source: &Arc<dyn PayloadSource>,
) -> Result<Model> {
    let structure: ByteOwner = Arc::new(structure);
    let mut model =
        Model::decode_shared(structure.clone(), decode).map_err(|e| explain_failure(head, e))?;
    leave_payloads_on_disk(&mut model, &structure, source);
    if Arc::strong_count(&structure) > 1 {
        // Large bytes other than `raw_data` (`string_data`, attribute bytes, unknown
        // fields) are still slices of the file-sized buffer: decode again, borrowing,
        // and copy them, so that the model does not keep the buffer.
        drop(model);
        let bytes = structure.bytes();
        let mut view = ModelProto::decode_with(bytes, decode)?;
        leave_borrowed_payloads_on_disk(&mut view, bytes, decode.shared_threshold, source);
        return Ok(view.into_owned());
    }
    Ok(model)
}

/// Fills `buf` from the start of `file`, in chunks read in parallel, each reported to
/// `progress` once read.
fn read_parallel(
    file: &File,
    buf: &mut [u8],
    progress: Option<&SharedProgress>,
) -> std::io::Result<()> {
    const CHUNK: usize = 16 << 20;
    buf.par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(i, chunk)| {
            file.read_exact_at(chunk, (i * CHUNK) as u64)?;
            progress::advance(progress, chunk.len() as u64);
            Ok(())
        })
}

/// The first bytes of `file` (up to 8, its length `len`): enough to tell an encrypted
/// model by its magic before walking it.
/// The first bytes of the file, enough to recognise what it is when it is not a model.
fn read_head(file: &File, len: u64) -> std::io::Result<Vec<u8>> {
    let mut head = vec![0u8; len.min(512) as usize];
    file.read_exact_at(&mut head, 0)?;
    Ok(head)
}

/// Replaces every large payload that is a slice of `owner` (the file's structure, at the
/// file's offsets) by a lazy reference to the same range of the file.
fn leave_payloads_on_disk(model: &mut Model, owner: &ByteOwner, source: &Arc<dyn PayloadSource>) {
    model.visit_tensors_mut(|_, t| {
        if let Some(Bytes::Shared(s)) = &t.raw_data {
            if Arc::ptr_eq(s.owner(), owner) {
                t.lazy_data = Some(LazyPayload::new(
                    source.clone(),
                    s.offset_in_owner() as u64,
                    s.len() as u64,
                ));
                t.raw_data = None;
            }
        }
    });
}

/// Replaces every `raw_data` of at least `threshold` bytes of a model decoded in borrow
/// mode from `bytes` (the file's structure, at the file's offsets) by a lazy reference
/// to its range of the file.
fn leave_borrowed_payloads_on_disk(
    model: &mut ModelProto<'_>,
    bytes: &[u8],
    threshold: usize,
    source: &Arc<dyn PayloadSource>,
) {
    let base = bytes.as_ptr() as usize;
    model.visit_tensors_mut(|_, t| {
        if let Some(Bytes::Borrowed(s)) = &t.raw_data {
            let start = (s.as_ptr() as usize).wrapping_sub(base);
            if s.len() >= threshold && start.checked_add(s.len()).is_some_and(|e| e <= bytes.len())
            {
                t.lazy_data = Some(LazyPayload::new(
                    source.clone(),
                    start as u64,
                    s.len() as u64,
                ));
                t.raw_data = None;
            }
        }
    });
}

/// Loads the external data of a model decoded without it (e.g. with
/// `load_external_data(false)`, or from bytes), resolving locations against `base_dir`;
/// the counterpart of onnx's `load_external_data_for_model`. The data is copied, or left
/// lazy with `structure_only`; never mapped.
///
/// # Errors
/// `InvalidExternalData` (refused location, range, length), I/O errors naming the
/// tensor and file, `ChecksumMismatch` when verifying.
pub fn load_external_data_for_model(
    model: &mut ModelProto<'_>,
    base_dir: impl AsRef<Path>,
    options: &ParseOptions,
) -> Result<()> {
    options.validate()?;
    let base_dir = base_dir.as_ref();
    with_threads(options.num_threads, || {
        load_external(model, base_dir, &options.external_load(None))
    })?
}

/// Fetches the bytes of every tensor that has `lazy_data`, making the model complete.
///
/// # Errors
/// The first fetch error, naming the tensor.
pub fn materialize_lazy_data(model: &mut ModelProto<'_>) -> Result<()> {
    model.try_visit_tensors_mut(|_, t| {
        if let Some(lazy) = &t.lazy_data {
            t.raw_data = Some(lazy.fetch().map_err(|e| e.in_tensor(t.name()))?);
            t.lazy_data = None;
        }
        Ok(())
    })
}

/// Decodes a model in borrow mode: strings and payloads are slices of `bytes`, and the
/// compiler keeps `bytes` alive as long as the model.
///
/// # Errors
/// Decoding errors; `InvalidOption` for `structure_only` (there is no file to fetch from).
pub fn load_from_slice<'a>(bytes: &'a [u8], options: &ParseOptions) -> Result<ModelProto<'a>> {
    validate_in_memory(options)?;
    options.check_model_size(bytes.len() as u64)?;
    refuse_before_decoding(bytes)?;
    let mut model = options
        .decoding(|| ModelProto::decode_with(bytes, &options.decode_options(bytes.len() as u64)))
        .map_err(|e| explain_failure(bytes, e))?;
    options.load_external_into(&mut model, None, None)?;
    options.check_tensors(&model)?;
    Ok(model)
}

/// Decodes a model that owns its data. Every byte of it is copied at most once.
///
/// With the default alignment (0: none), a model whose initializers make up at least half of
/// the input (mostly weights; found by walking the graph's fields, not decoding them)
/// is copied whole, in parallel, into a huge-page buffer and decoded in shared mode from
/// it: large payloads become slices of the buffer, strings are copied once. A model that
/// is mostly structure is decoded in copy mode straight from `bytes`: every string and
/// payload is copied once while decoding, and the structure bytes are not copied, so
/// peak memory is the decoded model alone.
///
/// # Errors
/// Decoding errors; `InvalidOption` for `structure_only` or `no_copy`.
pub fn load_from_bytes(bytes: &[u8], options: &ParseOptions) -> Result<Model> {
    if options.buffer.alignment > 1 {
        // Aligned payloads need a copy of their own anyway: decode in borrow mode and
        // copy each large payload once, into its aligned place.
        let mut view = load_from_slice(bytes, options)?;
        with_threads(options.num_threads, || {
            consolidate_tensors_to_buffer(&mut view, &options.buffer)
        })??;
        return Ok(view.into_owned());
    }
    validate_in_memory(options)?;
    options.check_model_size(bytes.len() as u64)?;
    refuse_before_decoding(bytes)?;
    if initializer_bytes(bytes, options.recursion_limit) < bytes.len() as u64 / 2 {
        // Mostly structure: decode straight from `bytes` in copy mode. Strings and
        // payloads are copied once each while decoding; the structure bytes themselves
        // are never copied, so peak memory is the decoded model alone.
        let mut model = options
            .decoding(|| {
                Model::decode_owned_with(bytes, &options.decode_options(bytes.len() as u64))
            })
            .map_err(|e| explain_failure(bytes, e))?;
        options.load_external_into(&mut model, None, None)?;
        options.check_tensors(&model)?;
        return Ok(model);
    }
    let mut buffer = PayloadBuffer::new(bytes.len())?;
    with_threads(options.num_threads, || {
        copy_parallel(buffer.as_mut_slice(), bytes)
    })?;
    let owner = buffer.freeze()?;
    let decode = options.decode_options(bytes.len() as u64);
    let mut model = options
        .decoding(|| Model::decode_shared(owner.clone(), &decode))
        .map_err(|e| explain_failure(bytes, e))?;
    drop(owner);
    options.load_external_into(&mut model, None, None)?;
    options.check_tensors(&model)?;
    Ok(model)
}

/// The bytes of `ModelProto.graph.initializer` and `sparse_initializer` entries in an
/// encoded model, found by walking keys and skipping values (nothing is decoded). Stops
/// quietly at malformed input (the decode that follows reports it).
fn initializer_bytes(bytes: &[u8], recursion_limit: u32) -> u64 {
    use crate::wire::{Reader, WireType};
    let mut total = 0u64;
    let mut model = Reader::with_recursion_limit(bytes, recursion_limit);
    while let Ok(key) = model.read_key() {
        if key.number == 7 && key.wire_type == WireType::LengthDelimited {
            let Ok(mut graph) = model.nested() else {
                break;
            };
            while let Ok(key) = graph.read_key() {
                if matches!(key.number, 5 | 15) && key.wire_type == WireType::LengthDelimited {
                    match graph.read_length_delimited() {
                        Ok((data, _)) => total += data.len() as u64,
                        Err(_) => break,
                    }
                } else if graph.skip(key).is_err() {
                    break;
                }
            }
        } else if model.skip(key).is_err() {
            break;
        }
    }
    total
}

/// Copies `src` into `dst` (of the same length) in chunks, in parallel.
fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    const CHUNK: usize = 16 << 20;
    dst.par_chunks_mut(CHUNK)
        .zip(src.par_chunks(CHUNK))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Decodes a model from a buffer shared with it: large payloads become slices of
/// `owner`, smaller ones are copied. External data is read (copied) from
/// `external_data_dir` when that is set, as [`load_from_bytes`] does.
///
/// This is the safe way to a no-copy model from a map: the caller creates the map (e.g.
/// `memmap2::Mmap`, whose `unsafe` constructor is where they vouch that the file will
/// not change) and hands over an `Arc` of it; or calls the `unsafe`
/// [`load_mapped`](crate::io::load_mapped), which does both.
///
/// # Errors
/// Decoding errors; `InvalidOption` for `structure_only`.
pub fn load_from_owner(owner: ByteOwner, options: &ParseOptions) -> Result<Model> {
    if options.mode == LoadMode::StructureOnly {
        return Err(structure_only_needs_a_file());
    }
    options.buffer.validate()?;
    let len = owner.bytes().len() as u64;
    options.check_model_size(len)?;
    refuse_before_decoding(owner.bytes())?;
    let decode = options.decode_options(len);
    let mut model = options
        .decoding(|| Model::decode_shared(owner.clone(), &decode))
        .map_err(|e| explain_failure(owner.bytes(), e))?;
    options.load_external_into(&mut model, None, None)?;
    if options.buffer.alignment > 1 {
        with_threads(options.num_threads, || {
            consolidate_tensors_to_buffer(&mut model, &options.buffer)
        })??;
    }
    options.check_tensors(&model)?;
    Ok(model)
}

/// Reads a whole model from `reader` and decodes it; payloads share the read buffer.
///
/// # Errors
/// I/O errors of the reader; decoding errors; `LimitExceeded` past `max_model_size`
/// (checked while reading, so an endless stream is cut off).
pub fn load_from_reader(mut reader: impl Read, options: &ParseOptions) -> Result<Model> {
    validate_in_memory(options)?;
    let mut bytes = Vec::new();
    match options.max_model_size {
        Some(limit) => {
            reader
                .by_ref()
                .take(limit.saturating_add(1))
                .read_to_end(&mut bytes)?;
            options.check_model_size(bytes.len() as u64)?;
        }
        None => {
            reader.read_to_end(&mut bytes)?;
        }
    }
    load_from_owner(Arc::new(bytes), options)
}

fn structure_only_needs_a_file() -> Error {
    Error::invalid_option(
        "structure_only",
        "needs a file to fetch the weights from later; use io::load_with",
    )
}

fn validate_in_memory(options: &ParseOptions) -> Result<()> {
    options.buffer.validate()?;
    if options.mode == LoadMode::StructureOnly {
        return Err(structure_only_needs_a_file());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::onnx::{DataType, GraphProto, NodeProto, TensorProto};

    /// The load mode is one value: the boolean builder switches it.
    #[test]
    fn load_modes_are_exclusive_and_the_boolean_builder_switches_them() {
        let o = ParseOptions::default();
        assert_eq!(o.mode, LoadMode::Owned);
        assert_eq!(o.clone().structure_only(true).mode, LoadMode::StructureOnly);
        assert_eq!(
            o.clone().structure_only(true).structure_only(false).mode,
            LoadMode::Owned
        );
        assert_eq!(
            o.mode(LoadMode::StructureOnly).mode,
            LoadMode::StructureOnly
        );
    }

    fn model(nodes: usize, payloads: &[usize]) -> Model {
        let mut g = GraphProto::named("g");
        for i in 0..nodes {
            g.node.push(NodeProto::new(
                "Relu",
                [format!("value_{i}")],
                [format!("value_{}", i + 1)],
            ));
        }
        for (i, &n) in payloads.iter().enumerate() {
            g.initializer.push(TensorProto::from_raw(
                format!("t{i}"),
                DataType::Uint8,
                [n as i64],
                vec![i as u8 + 1; n],
            ));
        }
        ModelProto::new(g, vec![])
    }

    fn owners(m: &Model) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        m.visit_tensors(|_, t| {
            if let Some(Bytes::Shared(s)) = &t.raw_data {
                v.push((
                    Arc::as_ptr(s.owner()) as *const u8 as usize,
                    s.owner().bytes().len(),
                ));
            }
        });
        v
    }

    #[test]
    fn copy_load_of_a_weight_heavy_model_shares_one_copy_of_the_input() {
        let original = model(10, &[5000, 100, 70_000]);
        let bytes = original.encode_to_vec().unwrap();
        let m = load_from_bytes(&bytes, &ParseOptions::default()).unwrap();
        assert_eq!(m, original);
        let o = owners(&m);
        assert_eq!(o.len(), 2);
        assert!(o.iter().all(|&(p, len)| p == o[0].0 && len == bytes.len()));
    }

    #[test]
    fn copy_load_of_a_structure_heavy_model_keeps_only_the_payloads() {
        let original = model(5000, &[2000, 10]);
        let bytes = original.encode_to_vec().unwrap();
        let m = load_from_bytes(&bytes, &ParseOptions::default()).unwrap();
        assert_eq!(m, original);
        // Decoded in copy mode: nothing holds a copy of the structure bytes.
        assert!(owners(&m).is_empty(), "{:?}", owners(&m));
        m.visit_tensors(|_, t| assert!(t.raw_data.as_ref().unwrap().is_owned()));
    }

    /// Weights stay on disk; other large bytes are copied, so the model keeps no slice of
    /// the file-sized buffer the structure was read into.
    #[test]
    fn structure_only_loads_leave_weights_on_disk_and_own_everything_else() {
        let mut original = model(2, &[5000, 10]);
        let mut strings = TensorProto::from_raw("s", DataType::String, [1], Vec::new());
        strings.raw_data = None;
        strings.string_data = vec![Bytes::from(vec![b'x'; 5000])];
        original.graph.as_mut().unwrap().initializer.push(strings);
        let dir = std::env::temp_dir().join(format!("onnx-light-lazy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.onnx");
        std::fs::write(&path, original.encode_to_vec().unwrap()).unwrap();
        let mut lazy = load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
        let g = lazy.graph.as_ref().unwrap();
        assert!(g.initializer[0].raw_data.is_none() && g.initializer[0].lazy_data.is_some());
        assert!(g.initializer[1].raw_data.as_ref().unwrap().is_owned());
        assert!(!g.initializer[2].string_data[0].is_shared());
        materialize_lazy_data(&mut lazy).unwrap();
        assert_eq!(lazy, original);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn copy_load_with_alignment_aligns_payloads() {
        let original = model(3, &[3000, 5000]);
        let bytes = original.encode_to_vec().unwrap();
        let m = load_from_bytes(&bytes, &ParseOptions::default().alignment(4096)).unwrap();
        assert_eq!(m, original);
        m.visit_tensors(|_, t| {
            let raw = t.raw_data.as_deref().unwrap();
            assert_eq!(raw.as_ptr() as usize % 4096, 0);
        });
    }
}
