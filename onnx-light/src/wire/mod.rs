//! The protobuf wire format: varints, zigzag, fixed-width values, keys, length-delimited
//! reads, skipping of unknown fields, and writers.
//!
//! This layer knows nothing of ONNX or of any message type. Everything here treats the
//! input as hostile: every length is checked against the bytes that remain *before*
//! anything is allocated or sliced, nesting is bounded, and no input makes it panic.
//! It reads what protobuf's parsers read: non-minimal varints up to 10 bytes (keys up to
//! [`MAX_KEY_LEN`]), bits past the 64th dropped.

mod key;
mod reader;
mod sink;
mod varint;

pub use key::{FieldKey, WireType, MAX_FIELD_NUMBER, MAX_KEY_LEN};
pub use reader::{Reader, RunIndex, DEFAULT_RECURSION_LIMIT};
pub(crate) use sink::put_varint_bytewise;
pub use sink::{IoSink, Sink, SliceSink};
pub use varint::{
    decode_varint, encode_varint, encoded_len_varint, zigzag_decode32, zigzag_decode64,
    zigzag_encode32, zigzag_encode64, MAX_VARINT_LEN,
};

/// Size in bytes of the key (tag) of a field with this number.
#[inline]
pub const fn key_len(number: u32) -> u64 {
    encoded_len_varint((number as u64) << 3)
}
