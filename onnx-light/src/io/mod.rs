//! Loading and saving models: buffers, options, consolidation. Knows files and memory;
//! builds on the message types and never the other way round.

mod buffer;
mod consolidate;
pub mod external;
mod load;
mod mmap;
mod options;
mod save;

pub use buffer::PayloadBuffer;
pub use consolidate::{consolidate_tensors_to_buffer, ConsolidatedBuffer};
pub use load::{
    load, load_external_data_for_model, load_from_bytes, load_from_owner, load_from_reader,
    load_from_slice, load_with, materialize_lazy_data, ParseOptions,
};
pub use options::TensorBufferOptions;
pub use save::{
    save, save_to_vec, save_to_writer, save_with_hook, SaveHook, SaveStep, SerializeOptions,
};
