//! Loading and saving models: files, memory, readers, external data. Knows files and
//! memory; builds on the message types and never the other way round.
//!
//! # Loading
//!
//! ```
//! # use onnx_light::io::{self, ParseOptions, SerializeOptions};
//! # use onnx_light::onnx::*;
//! # let dir = std::env::temp_dir().join(format!("io-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("model.onnx");
//! # let mut g = GraphProto::named("g");
//! # g.initializer.push(TensorProto::from_raw("w", DataType::Float, [256], vec![0u8; 1024]));
//! # io::save(&ModelProto::new(g, vec![]), &path, &SerializeOptions::default())?;
//! // Owned: the file is read once; the model borrows nothing.
//! let model: Model = io::load(&path)?;
//!
//! // No-copy: the file is mapped and large payloads are slices of the map; the result is
//! // still `'static` (the map lives as long as any tensor does). Mapping is `unsafe`:
//! // see below.
//! // SAFETY: the file is this example's own; nothing truncates or rewrites it.
//! let mapped = unsafe { io::load_mapped(&path, &ParseOptions::default())? };
//!
//! // Structure only: weights stay on disk until fetched.
//! let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true))?;
//! let w = &lazy.graph.as_ref().unwrap().initializer[0];
//! assert!(w.raw_data.is_none() && w.lazy_data.as_ref().unwrap().fetch()?.len() == 1024);
//!
//! // From memory: borrowing (compiler-checked) or copying into one shared buffer.
//! let bytes = std::fs::read(&path)?;
//! let view = io::load_from_slice(&bytes, &ParseOptions::default())?;
//! let copy = io::load_from_bytes(&bytes, &ParseOptions::default().alignment(64))?;
//! assert_eq!(model, mapped);
//! assert_eq!(view, copy);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Saving
//!
//! ```
//! # use onnx_light::io::{self, ParseOptions, SerializeOptions};
//! # use onnx_light::io::external::ExternalDataOptions;
//! # use onnx_light::onnx::*;
//! # let dir = std::env::temp_dir().join(format!("io-doc-save-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let mut g = GraphProto::named("g");
//! # g.initializer.push(TensorProto::from_raw("w", DataType::Float, [4096], vec![0u8; 16384]));
//! # let model = ModelProto::new(g, vec![]);
//! // One file, written atomically (a temporary file renamed over the target), payloads
//! // written in parallel: the bytes are the same for any thread count.
//! io::save(&model, dir.join("model.onnx"), &SerializeOptions::default())?;
//!
//! // External data: large tensors in weights.bin, split at 2 GiB, 4096-aligned so that a
//! // mapped load gives page-aligned tensors.
//! let external = ExternalDataOptions::new("weights.bin").alignment(4096).max_file_size(2 << 30);
//! io::save(&model, dir.join("split.onnx"), &SerializeOptions::default().external_data(external))?;
//! assert_eq!(io::load(dir.join("split.onnx"))?, model);
//!
//! // To memory or any writer.
//! let bytes = io::save_to_vec(&model, &SerializeOptions::default())?;
//! io::save_to_writer(&model, std::io::sink(), &SerializeOptions::default().num_threads(1))?;
//! # assert_eq!(bytes, std::fs::read(dir.join("model.onnx"))?);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A save to a path that is a symbolic link replaces the file the link leads to (a
//! temporary file beside it, renamed over it) and leaves the link a link; its external
//! data goes beside that file, where a load through the link looks for it
//! ([`model_directory`]). See [`save`] for dangling links, loops and the refusals.
//!
//! # Memory-mapped models
//!
//! A no-copy model reads its weights from the mapped file for as long as it lives.
//! Truncating or rewriting that file in place meanwhile is undefined behaviour on every
//! platform (reads of vanished pages raise `SIGBUS`; bytes behind a `&[u8]` change), and
//! no library can prevent another process from doing it. So mapping is the caller's
//! promise, as with `memmap2::Mmap::map`: [`load_mapped`] is an `unsafe fn` whose
//! `# Safety` section states it. Safe code never maps a file: the default load copies it
//! (one read), `structure_only` reads the structure and fetches weights on demand (a
//! file that has shrunk gives an error, not a crash), and [`load_from_owner`] shares an
//! owner the caller made, such as an `Arc<memmap2::Mmap>` the caller mapped and vouched
//! for. This crate never truncates or rewrites a file in place itself: its saves write a
//! new file and rename it, so a mapped old file stays intact.

pub(crate) mod atomic;
pub(crate) mod buffer;
mod consolidate;
mod copy;
pub mod external;
mod load;
mod location;
mod mmap;
pub(crate) mod open;
mod options;
pub(crate) mod progress;
mod save;
mod saved;
mod sniff;
mod structure;
mod write;

pub use crate::pool::MAX_THREADS;
#[cfg(feature = "crypto")]
pub(crate) use atomic::{write_atomically, NoHook};
// Crash-injection hooks for the workspace's save tests: feature `test-hooks`, hidden, not
// for users.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use atomic::{SaveHook, SaveStep};
#[cfg(any(feature = "crypto", feature = "remote"))]
pub(crate) use buffer::PayloadBuffer;
// What `remote` loads build on: the structure walk over any positional reads, its
// decode, and the checks of a file's first bytes.
pub use consolidate::{consolidate_tensors_to_buffer, ConsolidatedBuffer};
#[cfg(feature = "remote")]
pub(crate) use load::decode_structure;
pub use load::{
    load, load_external_data_for_model, load_from_bytes, load_from_owner, load_from_reader,
    load_from_slice, load_with, materialize_lazy_data, model_directory, resolve_links, LoadMode,
    ParseOptions,
};
pub use mmap::load_mapped;
pub use progress::{Progress, SharedProgress};
#[cfg(feature = "remote")]
pub(crate) use sniff::{explain_failure, refuse_before_decoding};
#[cfg(feature = "remote")]
pub(crate) use structure::{read_structure_from, Blocks, ReadRanges};
// `ExternalDataOptions` is also here, beside the `SerializeOptions` that take it.
pub use options::{
    default_max_memory, ExternalDataOptions, SerializeOptions, TensorBufferOptions,
    DEFAULT_MEMORY_FLOOR, DEFAULT_MEMORY_PER_INPUT_BYTE,
};
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use save::save_with_hook;
pub use save::{save, save_to_vec, save_to_writer};
pub use saved::{Saved, SavedFile};
pub(crate) use write::encoded_len_with_lazy;
