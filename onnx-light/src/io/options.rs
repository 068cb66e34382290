//! Options for loading and saving, with documented defaults. Invalid values are errors
//! (see [`TensorBufferOptions::validate`]), never silently corrected.

use crate::error::{Error, Result};

/// How large tensor payloads are held in memory: which ones count as large, and how
/// their buffers are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorBufferOptions {
    /// Payloads (`raw_data`) of at least this many bytes are "large": shared instead of
    /// copied, or moved to a consolidated buffer.
    pub raw_data_threshold: usize,
    /// Alignment in bytes of each large payload's start in a buffer this crate
    /// allocates (a power of two; 64 suits SIMD loads, 4096 suits page mapping).
    pub alignment: usize,
}

impl TensorBufferOptions {
    /// Defaults for loading: threshold 1024 bytes, alignment 1 (payloads stay where
    /// the file puts them; ask for more and loading copies them into aligned storage).
    pub const LOAD: TensorBufferOptions = TensorBufferOptions {
        raw_data_threshold: 1024,
        alignment: 1,
    };

    /// Defaults for saving: threshold 64 bytes, alignment 1 (external data offsets then
    /// follow `ExternalDataOptions::alignment` alone).
    pub const SAVE: TensorBufferOptions = TensorBufferOptions {
        raw_data_threshold: 64,
        alignment: 1,
    };

    /// Checks the values.
    ///
    /// # Errors
    /// `InvalidOption` when `alignment` is not a power of two or exceeds 1 GiB.
    pub fn validate(&self) -> Result<()> {
        validate_alignment(self.alignment)
    }
}

impl Default for TensorBufferOptions {
    fn default() -> Self {
        TensorBufferOptions::LOAD
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
