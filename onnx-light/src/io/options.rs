//! Options for saving (and the buffer options loads share), with documented defaults. Invalid values are errors
//! (see [`TensorBufferOptions::validate`]), never silently corrected.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::location::save_location;
use crate::io::progress::{Progress, SharedProgress};
use crate::pool::validate_threads;

/// How large tensor payloads are held in memory: which ones count as large, and how
/// their buffers are aligned. [`ParseOptions`](crate::io::ParseOptions) and
/// [`SerializeOptions`] each hold one (`buffer`) with their own threshold, and every
/// function that takes a `TensorBufferOptions` (such as
/// [`consolidate_tensors_to_buffer`](crate::io::consolidate_tensors_to_buffer)) is given
/// one of theirs as `&options.buffer`.
///
/// | | `raw_data_threshold` | `alignment` |
/// |---|---|---|
/// | `TensorBufferOptions::default()` | 0 | 0 |
/// | [`TensorBufferOptions::LOAD`] (`ParseOptions::default().buffer`) | 1024 | 0 |
/// | [`TensorBufferOptions::SAVE`] (`SerializeOptions::default().buffer`) | 64 | 0 |
///
/// ```
/// use onnx_light::io::{ParseOptions, SerializeOptions, TensorBufferOptions};
/// assert_eq!(TensorBufferOptions::default().raw_data_threshold, 0);
/// assert_eq!(ParseOptions::default().buffer.raw_data_threshold, 1024);
/// assert_eq!(SerializeOptions::default().buffer.raw_data_threshold, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorBufferOptions {
    /// Payloads (`raw_data`) of at least this many bytes are "large": shared instead of
    /// copied by a no-copy load, written in parallel by a save, moved to the buffer by a
    /// consolidation.
    pub raw_data_threshold: usize,
    /// Alignment in bytes of each large payload's start in a buffer this crate
    /// allocates: 0 (the default) or 1 for none, else a power of two (64 suits SIMD
    /// loads, 4096 suits page mapping).
    pub alignment: usize,
}

impl TensorBufferOptions {
    /// The defaults of [`ParseOptions`](crate::io::ParseOptions): threshold 1024 bytes,
    /// alignment 0 (payloads stay where the file puts them; ask for more and loading
    /// copies them into aligned storage).
    pub const LOAD: TensorBufferOptions = TensorBufferOptions {
        raw_data_threshold: 1024,
        alignment: 0,
    };

    /// The defaults of [`SerializeOptions`]: threshold 64 bytes, alignment 0 (external
    /// data offsets then follow `ExternalDataOptions::alignment` alone).
    pub const SAVE: TensorBufferOptions = TensorBufferOptions {
        raw_data_threshold: 64,
        alignment: 0,
    };

    /// Checks the values.
    ///
    /// # Errors
    /// `InvalidOption` when `alignment` is neither 0 nor a power of two, or exceeds 1 GiB.
    pub fn validate(&self) -> Result<()> {
        match self.alignment {
            0 => Ok(()),
            n => validate_alignment(n),
        }
    }
}

/// The base values: threshold 0 (every non-empty payload counts as large) and
/// alignment 0 (none).
impl Default for TensorBufferOptions {
    fn default() -> Self {
        TensorBufferOptions {
            raw_data_threshold: 0,
            alignment: 0,
        }
    }
}

/// The part of [`default_max_memory`] that every input gets, whatever its size: room
/// for the fixed costs of a small model.
pub const DEFAULT_MEMORY_FLOOR: u64 = 64 << 20;

/// The part of [`default_max_memory`] per byte of input. Real models decode to well
/// under this (a graph of 200 000 named nodes with attributes and `value_info` to about
/// 7 bytes per input byte, a graph of nothing but `Constant` nodes to about 11); inputs
/// made of millions of empty messages, each 2 or 3 bytes on the wire and tens to
/// hundreds in memory, go past it.
pub const DEFAULT_MEMORY_PER_INPUT_BYTE: u64 = 16;

/// The memory budget a load gives an input of `input_len` bytes when
/// [`ParseOptions::max_memory`](crate::io::ParseOptions::max_memory) is not set:
/// [`DEFAULT_MEMORY_FLOOR`] plus [`DEFAULT_MEMORY_PER_INPUT_BYTE`] times `input_len`
/// (saturating).
///
/// # Examples
/// ```
/// use onnx_light::io::default_max_memory;
/// assert_eq!(default_max_memory(10 << 20), (64 << 20) + 16 * (10 << 20));
/// ```
pub fn default_max_memory(input_len: u64) -> u64 {
    DEFAULT_MEMORY_FLOOR.saturating_add(DEFAULT_MEMORY_PER_INPUT_BYTE.saturating_mul(input_len))
}

pub(crate) fn validate_alignment(alignment: usize) -> Result<()> {
    if !alignment.is_power_of_two() {
        return Err(Error::invalid_option(
            "alignment",
            format!("{alignment} is not a power of two"),
        ));
    }
    if alignment > 1 << 30 {
        return Err(Error::invalid_option(
            "alignment",
            format!("{alignment} is larger than the 1 GiB maximum"),
        ));
    }
    Ok(())
}

/// How to save a model. Start from `SerializeOptions::default()`:
///
/// ```
/// # use onnx_light::io::SerializeOptions;
/// let options = SerializeOptions::default().num_threads(1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SerializeOptions {
    /// Payloads of at least `raw_data_threshold` bytes (default 64) are written in
    /// parallel. `alignment` (default 0: none) aligns the offsets of external data: each
    /// tensor's offset is a multiple of the larger of it and
    /// `ExternalDataOptions::alignment`. (A single-file save cannot align payloads: the
    /// encoding fixes where they are.)
    pub buffer: TensorBufferOptions,
    /// Worker threads; 0 means all cores (default 0). Any value gives the same bytes.
    pub num_threads: usize,
    /// Write large tensors to external data files next to the model (path saves only).
    pub external_data: Option<ExternalDataOptions>,
    /// Flush every written file, and the directory after the renames, to stable storage
    /// before the save returns (default true).
    ///
    /// `false` skips the `fsync`s, which cost about as much as writing the bytes on
    /// some machines. The save stays atomic for every other program and for a crash of
    /// this one: the model at the path is replaced by a rename only after all of the new
    /// files are completely written, so readers see the old model or the new one, never
    /// a mix. What is given up is durability across an operating-system crash or power
    /// loss shortly after the save: the new files may then not have reached the disk.
    /// Use it for outputs you can regenerate (conversions, caches, tests).
    pub sync: bool,
    /// Leave the saved files readable and writable by their owner only (mode 0600), as
    /// their temporaries are, instead of the usual permissions (default false): for
    /// decrypted models.
    pub owner_only: bool,
    /// Let an external-data save replace a file already at a data file's name that the
    /// model being replaced does not use (default false: such a save fails with
    /// `Io(AlreadyExists)` before anything is written, since the file is usually another
    /// model's data). The data of the model at the target path is replaced either way;
    /// see [`crate::io::external`].
    pub replace_data_files: bool,
    /// Told the bytes a save to a path writes, to the model file and its data files
    /// (default none); see [`Progress`]. Saves to memory or a writer do not report.
    pub progress: Option<SharedProgress>,
}

impl Default for SerializeOptions {
    fn default() -> Self {
        SerializeOptions {
            buffer: TensorBufferOptions::SAVE,
            num_threads: 0,
            external_data: None,
            sync: true,
            owner_only: false,
            replace_data_files: false,
            progress: None,
        }
    }
}

impl SerializeOptions {
    /// Checks the options.
    ///
    /// # Errors
    /// `InvalidOption` naming the offending option.
    pub fn validate(&self) -> Result<()> {
        self.buffer.validate()?;
        validate_threads(self.num_threads)
    }

    /// Sets `num_threads` (0 = all cores).
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = n;
        self
    }
    /// Sets `buffer.raw_data_threshold`.
    pub fn raw_data_threshold(mut self, bytes: usize) -> Self {
        self.buffer.raw_data_threshold = bytes;
        self
    }
    /// Sets `external_data`.
    pub fn external_data(mut self, external: ExternalDataOptions) -> Self {
        self.external_data = Some(external);
        self
    }
    /// Sets `replace_data_files`.
    pub fn replace_data_files(mut self, yes: bool) -> Self {
        self.replace_data_files = yes;
        self
    }
    /// Sets `buffer.alignment`: external data offsets become multiples of it (or of
    /// `ExternalDataOptions::alignment`, whichever is larger).
    pub fn alignment(mut self, bytes: usize) -> Self {
        self.buffer.alignment = bytes;
        self
    }
    /// Sets `owner_only` (files left at mode 0600).
    pub fn owner_only(mut self, yes: bool) -> Self {
        self.owner_only = yes;
        self
    }

    /// Sets `sync` (`false`: atomic but not flushed to stable storage).
    pub fn sync(mut self, yes: bool) -> Self {
        self.sync = yes;
        self
    }
    /// Sets `progress`: `progress` is told the bytes the save writes (see [`Progress`]).
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(SharedProgress::new(progress));
        self
    }
}

/// How to write tensors to external data files.
///
/// ```
/// # use onnx_light::io::external::ExternalDataOptions;
/// let options = ExternalDataOptions::new("weights.bin")
///     .alignment(4096)
///     .max_file_size(2 << 30);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExternalDataOptions {
    /// The data file's path relative to the model's directory: `w.bin`, or
    /// `weights/w.bin` (directories created by the save as needed, never through a
    /// symbolic link). An absolute path, a `..` component or a name ending in `/` is
    /// refused (`InvalidOption`) rather than written somewhere else. Saving again keeps
    /// the name. With `one_file_per_tensor`, unused.
    pub location: String,
    /// Tensors with at least this many bytes of `raw_data` go external (default 1024,
    /// as in onnx).
    pub size_threshold: usize,
    /// Each tensor's offset is a multiple of this power of two (default 4096, so that
    /// a mapped file gives page-aligned tensors).
    pub alignment: usize,
    /// Start a new file (`name.1`, `name.2`, ...) rather than grow one past this size; a
    /// tensor larger than the limit gets a file of its own.
    pub max_file_size: Option<u64>,
    /// One file per tensor, named after the tensor (sanitised, made unique).
    pub one_file_per_tensor: bool,
    /// Also move attribute tensors (`Constant` values and the like); default false.
    pub convert_attributes: bool,
    /// Record each data file's SHA-1 (lowercase hex) as the `checksum` entry of its
    /// tensors, the key the ONNX spec defines for it (default false: the file is read
    /// back once after it is written). Loads verify it with
    /// [`ParseOptions::verify_checksums`](crate::io::ParseOptions), remote loads by default.
    pub checksum: bool,
}

impl ExternalDataOptions {
    /// All large tensors to one file `location`, 4096-aligned.
    pub fn new(location: impl Into<String>) -> Self {
        ExternalDataOptions {
            location: location.into(),
            size_threshold: 1024,
            alignment: 4096,
            max_file_size: None,
            one_file_per_tensor: false,
            convert_attributes: false,
            checksum: false,
        }
    }
    /// Sets `size_threshold`.
    pub fn size_threshold(mut self, bytes: usize) -> Self {
        self.size_threshold = bytes;
        self
    }
    /// Sets `alignment`.
    pub fn alignment(mut self, bytes: usize) -> Self {
        self.alignment = bytes;
        self
    }
    /// Sets `max_file_size`.
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = Some(bytes);
        self
    }
    /// Sets `one_file_per_tensor`.
    pub fn one_file_per_tensor(mut self, yes: bool) -> Self {
        self.one_file_per_tensor = yes;
        self
    }
    /// Sets `convert_attributes`.
    pub fn convert_attributes(mut self, yes: bool) -> Self {
        self.convert_attributes = yes;
        self
    }
    /// Sets `checksum`.
    pub fn checksum(mut self, yes: bool) -> Self {
        self.checksum = yes;
        self
    }

    /// Checks the options as a save does before it touches any file: the alignment, the
    /// file size limit and the location (relative, beneath the model's directory).
    ///
    /// # Errors
    /// `InvalidOption` naming the option and saying what is wrong with it.
    pub fn validate(&self) -> Result<()> {
        validate_alignment(self.alignment)?;
        if self.max_file_size == Some(0) {
            return Err(Error::invalid_option(
                "max_file_size",
                "must be at least 1 byte",
            ));
        }
        if !self.one_file_per_tensor {
            save_location("external_data.location", &self.location)?;
        }
        Ok(())
    }
}

impl Default for ExternalDataOptions {
    fn default() -> Self {
        ExternalDataOptions::new("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::ParseOptions;

    #[test]
    fn the_base_and_its_two_uses_have_their_own_thresholds_and_no_alignment() {
        let base = TensorBufferOptions::default();
        assert_eq!((base.raw_data_threshold, base.alignment), (0, 0));
        let load = ParseOptions::default().buffer;
        assert_eq!((load.raw_data_threshold, load.alignment), (1024, 0));
        let save = SerializeOptions::default().buffer;
        assert_eq!((save.raw_data_threshold, save.alignment), (64, 0));
    }

    #[test]
    fn alignment_zero_and_powers_of_two_are_valid_other_values_are_not() {
        for ok in [0, 1, 2, 64, 4096, 1 << 30] {
            let o = TensorBufferOptions {
                raw_data_threshold: 0,
                alignment: ok,
            };
            assert!(o.validate().is_ok(), "{ok}");
        }
        for bad in [3, 48, 1000, 1 << 31] {
            let o = TensorBufferOptions {
                raw_data_threshold: 0,
                alignment: bad,
            };
            assert!(o.validate().is_err(), "{bad}");
        }
    }
}
