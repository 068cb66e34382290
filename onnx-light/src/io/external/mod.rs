//! External data (the ONNX spec's `data_location = EXTERNAL` with `location`, `offset`,
//! `length`, `checksum`): loading, saving (split, aligned, per tensor) and the single
//! resolver that keeps every path inside the model's directory.

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
