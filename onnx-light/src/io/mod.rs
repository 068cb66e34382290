//! Loading and saving models: buffers, options, consolidation. Knows files and memory;
//! builds on the message types and never the other way round.

mod buffer;
mod consolidate;
mod options;

pub use buffer::PayloadBuffer;
pub use consolidate::{consolidate_tensors_to_buffer, ConsolidatedBuffer};
pub use options::TensorBufferOptions;
