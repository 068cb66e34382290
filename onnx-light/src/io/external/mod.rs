//! External data (the ONNX spec's `data_location = EXTERNAL` with `location`, `offset`,
//! `length`, `checksum`): loading, saving (split, aligned, per tensor) and the single
//! resolver that keeps every path inside the model's directory.
//!
//! # Saving over a model that has external data
//!
//! [`crate::io::save`] never writes into a data file that the model currently at the
//! target path uses: until the new model file is renamed into place, the old model and
//! its data must stay loadable. A data file name the old model still uses therefore goes
//! to a second generation, `name~1` (and the next save over that model goes back to
//! `name`), so a directory saved over again and again holds at most two generations of
//! data. The old generation's files are left where they are (another model may refer to
//! them); the next save that takes their names replaces them.
//!
//! A name that no model at the target path uses but that already holds a file or a
//! symlink (an older generation) is taken by renaming that entry aside, renaming the new
//! file to the free name, and removing the old entry once the model file is in place; if
//! the save fails, the old entry is put back, so a failed save changes nothing in the
//! directory. (A symlink is never followed; a directory there makes the save fail and is
//! kept.) Before writing, the save also drops such a file's pages from the page cache
//! (`posix_fadvise(DONTNEED)`, Linux only; the file is untouched) so that the new file's
//! writes reuse them. Both choices are measured in BENCHMARKS.md ("Targets missed", item
//! 3): on its ext4 VM, a rename over an existing file cost a `sync(false)` save about 0.3
//! s per GB, and writing into fresh pages instead of released ones swung a 1 GB write
//! between 0.3 s and 2.5 s.

mod load;
mod overlap;
mod reference;
mod resolve;
mod save;

pub use load::{file_sha1, resolve_tensor, ResolvedExternal};
pub(crate) use load::{is_external, load_external, ExternalLoad, ExternalMode};
pub use overlap::{find_overlaps, overlapping_ranges, ExternalRange, Overlap, Overlaps};
pub use reference::ExternalDataRef;
pub use resolve::{validate_location, DataFile, Resolver};
pub use save::{convert_model_to_external_data, ExternalDataOptions};
pub(crate) use save::{plan, save_external};
