//! Field value types that the generated code and users share: byte payloads in three
//! ownership states, strings, unknown fields, open enums.
//!
//! This layer knows the wire format only to write unknown fields back; it knows nothing
//! of ONNX or of files.

mod aligned;
mod bytes;
mod enumeration;
mod lazy;
mod string;
mod unknown;

pub use aligned::AlignedBuffer;
pub use bytes::{ByteOwner, Bytes, OwnedBytes, SharedBytes, SharedOwner};
pub use enumeration::{EnumValue, ProtoEnum};
pub use lazy::{LazyPayload, PayloadSource};
pub(crate) use string::from_utf8;
pub use string::Str;
pub use unknown::{UnknownField, UnknownFields};
