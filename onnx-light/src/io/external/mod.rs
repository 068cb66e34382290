//! External data (the ONNX spec's `data_location = EXTERNAL` with `location`, `offset`,
//! `length`, `checksum`): loading, saving (split, aligned, per tensor), the single
//! resolver that keeps every path inside the model's directory, and [`verify`], which
//! checks a model's references with the rules of a load and reports every broken one,
//! typed ([`ExternalDataRule`](crate::ExternalDataRule)), without loading anything. A
//! load refused by one of those rules fails with `InvalidExternalData`, whose `rule`
//! field names it (a missing file is `Io(NotFound)`, a bad checksum `ChecksumMismatch`).
//!
//! # Saving over a model that has external data
//!
//! [`crate::io::save`] keeps the data file names the caller gave
//! ([`ExternalDataOptions::location`], which may name subdirectories of the model's
//! directory, created as needed and never through a symbolic link), also when saving
//! over a model that uses them: the old files are replaced, never appended to or left
//! behind under another name. Every file is first written and flushed under a
//! temporary name; then the names change, in this order:
//!
//! 1. when a data file the model currently at the target path uses is about to be
//!    replaced, that model file is renamed aside (to a hidden `.<name>.old-<pid>-<n>`);
//! 2. each data file is renamed to its name (a file there is first renamed aside);
//! 3. the new model file is renamed to its name;
//! 4. what was renamed aside is removed.
//!
//! A failure at any step puts everything back as it was. A crash (power loss, SIGKILL)
//! leaves the old model with its old data, or the new model with its new data, or —
//! between steps 1 and 3 — no model file at the path: a load then fails loudly instead of
//! pairing the old model with new data, and the old model is still in its hidden file.
//! A data file the replaced model used under a generation name (`name~1`) is removed
//! once a save writes that data under `name` itself.
//!
//! Any other file already at a data file's name (the data of another model in the same
//! directory, a stale file, a symlink) is not replaced. When the caller chose the name
//! (`ExternalDataOptions::location`, or `convert_model_to_external_data`), the save fails
//! with `ErrorKind::Io(AlreadyExists)` naming the file, before anything is written, unless
//! [`SerializeOptions::replace_data_files`](crate::io::SerializeOptions::replace_data_files)
//! allows it; a location that a lazily loaded tensor brought from its model gives way to
//! the first free generation of it (`w.bin~1`, `w.bin~2`, ...), so that a model saved
//! next to the one it was loaded from never breaks that one. (A symlink is never
//! followed; a directory there makes the save fail and is kept.) Names are compared by
//! file identity, never by spelling: a data file never takes the model file's own name,
//! and a save refuses to write its model over a data file it reads. A data file that a
//! lazily loaded or memory-mapped model still reads from is replaced by a rename, so
//! the model in memory keeps reading its old bytes. See `docs/design/page-cache.md` for
//! why names are freed by renaming aside.
//!
//! # Opening data files
//!
//! Locations are resolved beneath the model's directory one descriptor at a time
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or `openat` with `O_NOFOLLOW`
//! per component on kernels without it), so no symbolic link is ever followed, even one
//! that stays inside the directory, and a directory swapped for a link while a model loads
//! cannot redirect a read. Hard links are allowed: a hard-linked file is the file itself
//! (package managers install files that way). Files are opened non-blocking and must be
//! regular files (a FIFO or device is refused, never waited on). Locations that mean
//! something else on another platform or to onnxruntime are refused on load and on save:
//! `_ORT_MEM_ADDR_` (onnxruntime reads process memory there), a `:` (an NTFS alternate data
//! stream), Windows device names (`CON`, `NUL`, `COM1`, ...), and names ending in a dot or
//! a space.

mod load;
mod names;
mod overlap;
mod reference;
mod resolve;
mod save;
mod verify;

pub use crate::io::location::validate_location;
pub use crate::io::options::ExternalDataOptions;
pub(crate) use load::{load_external, ExternalLoad, ExternalMode};
pub use overlap::{overlapping_tensors, Overlap, Overlaps};
pub use reference::ExternalDataRef;
#[cfg(feature = "remote")]
pub(crate) use resolve::check_range;
pub(crate) use resolve::DataFile;
pub use save::convert_model_to_external_data;
pub(crate) use save::{plan, save_external};
pub use verify::{verify, ExternalDataProblem, Verification, VerifiedFile, VerifyOptions};
