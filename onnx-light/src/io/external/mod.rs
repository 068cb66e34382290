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
//! A name that no model at the target path uses, and that already holds a file or a
//! symlink, is taken by removing that entry and renaming the new file to the free name
//! (a symlink is never followed; a directory there makes the save fail and is kept).
//! Renaming over an existing file would end in the same state, but on ext4 (whose
//! default `auto_da_alloc` starts writing back a file renamed over another) it made a
//! `sync(false)` save of 1 GiB spend about 0.3 s more in the rename than a save that
//! does `fsync` (BENCHMARKS.md, "Targets missed", item 3).

mod load;
mod reference;
mod resolve;
mod save;

pub use load::{file_sha1, resolve_tensor, ResolvedExternal};
pub(crate) use load::{is_external, load_external, ExternalLoad, ExternalMode};
pub use reference::ExternalDataRef;
pub use resolve::{validate_location, DataFile, Resolver};
pub use save::{convert_model_to_external_data, ExternalDataOptions};
pub(crate) use save::{plan, save_external};
