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
//! [`crate::io::save`] never writes into a data file that the model currently at the
//! target path uses: until the new model file is renamed into place, the old model and
//! its data must stay loadable. A data file name the old model still uses therefore goes
//! to a second generation, `name~1` (and the next save over that model goes back to
//! `name`), so a directory saved over again and again holds at most two generations of
//! data. The old generation's files are left where they are (another model may refer to
//! them); the next save over the same model takes their names and replaces them.
//!
//! Any other file already at a data file's name (the data of another model in the same
//! directory, a stale file, a symlink) is not replaced. When the caller chose the name
//! (`ExternalDataOptions::location`, or `convert_model_to_external_data`), the save fails
//! with `ErrorKind::Io(AlreadyExists)` naming the file, before anything is written, unless
//! [`SerializeOptions::replace_data_files`](crate::io::SerializeOptions::replace_data_files)
//! allows it; a name that a lazily loaded tensor brought from its model gives way to the
//! first free generation of it (`w.bin`, `w.bin~1`, `w.bin~2`, ...). A name that is
//! taken (an older generation, or an allowed file) is freed by renaming that entry
//! aside, renaming the new file to the free name, and removing the old entry once the
//! model file is in place; if the save fails, the old entry is put back, so a failed
//! save changes nothing in the directory. (A symlink is never followed; a directory
//! there makes the save fail and is kept.) Names are compared by file identity, never
//! by spelling: a save never takes the name of a file it reads (the input model, or a
//! data file a lazily loaded model still reads), nor the model file's own name, and
//! refuses to write its model over a data file it reads. See `docs/design/page-cache.md`
//! for why names are freed this way.
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
pub(crate) use resolve::DataFile;
pub use save::convert_model_to_external_data;
pub(crate) use save::{plan, save_external};
pub use verify::{verify, ExternalDataProblem, Verification, VerifiedFile, VerifyOptions};
