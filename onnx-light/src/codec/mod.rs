//! Per-type encoders and decoders that `#[derive(ProtoMessage)]` composes.
//!
//! A [`Codec`] knows one protobuf type (int64, sint32, string, a message type, ...) and its
//! Rust value type; the functions in [`field`] apply a codec to a field's shape
//! (optional, implicit, repeated, packed, map). Generated code only calls into this module
//! and the wire layer; nothing here knows ONNX.
//!
//! A field decoder given a key whose wire type its codec does not read (other than a
//! packed run of a repeated scalar) consumes nothing and answers `Ok(false)`, as for an
//! undeclared number: the message then keeps the field as an unknown field, as protobuf
//! does.

mod context;
pub mod field;
mod len;
#[cfg(feature = "parallel")]
mod parallel;
mod scalar;

pub use context::{BorrowMode, Budget, CopyMode, DecodeContext, SharedMode, ToStatic};
pub use len::{BytesCodec, StrCodec, StringCodec, VecBytesCodec};
pub use scalar::{
    Bool, Double, EnumCodec, Fixed32, Fixed64, Float, Int32, Int64, SFixed32, SFixed64, SInt32,
    SInt64, UInt32, UInt64,
};

use crate::descriptor::FieldKind;
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{Reader, Sink, WireType};

/// One protobuf type and the Rust type that holds its values.
pub trait Codec<'a> {
    /// The Rust value type.
    type Value: Default;
    /// The wire type of a single (unpacked) value.
    const WIRE_TYPE: WireType;
    /// The protobuf type, for descriptors.
    const KIND: FieldKind;
    /// Size of each element when packed, for fixed-width scalars.
    const FIXED_SIZE: Option<usize> = None;
    /// True for scalar types that may be packed.
    const PACKABLE: bool = false;

    /// Reads one value whose key (of wire type `WIRE_TYPE`) was just read. Scalars and
    /// strings replace `value`; messages merge into it, as protobuf specifies.
    ///
    /// # Errors
    /// Malformed input.
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut Self::Value,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()>;

    /// Encoded size of the value without its key (length prefix included). Messages
    /// record their sizes in `sizes` so that encoding never computes them again.
    fn size(value: &Self::Value, sizes: &mut SizeCache) -> u64;

    /// Writes the value without its key (length prefix included).
    ///
    /// # Errors
    /// Errors of the sink.
    fn encode<S: Sink + ?Sized>(
        value: &Self::Value,
        sink: &mut S,
        sizes: &mut SizeCursor<'_>,
    ) -> Result<()>;

    /// True when `value` is the type's default (implicit-presence fields skip it).
    fn is_default(value: &Self::Value) -> bool;
}

/// Sizes of nested length-delimited values, recorded in the order an encoder meets
/// them, so that encoding a message is two linear passes however deep it nests.
///
/// It also bounds how deep the sizing recursion goes: past [`MAX_ENCODE_DEPTH`] levels
/// of nested messages it stops descending and records that, so that a message built
/// deeper than anything a load accepts is refused by the encoder instead of
/// overflowing the stack.
#[derive(Debug, Default)]
pub struct SizeCache {
    sizes: Vec<u64>,
    depth: u32,
    too_deep: bool,
}

/// The most levels of nested messages an encoder sizes and writes. Far above the
/// default limit of a load (100) and any real model, and well within the stack of a
/// thread at this depth.
pub const MAX_ENCODE_DEPTH: u32 = 1000;

impl SizeCache {
    /// Enters a nested message: false (and nothing entered) when it would be deeper
    /// than [`MAX_ENCODE_DEPTH`], which the cache then remembers.
    #[inline]
    pub fn enter(&mut self) -> bool {
        if self.depth >= MAX_ENCODE_DEPTH {
            self.too_deep = true;
            return false;
        }
        self.depth += 1;
        true
    }

    /// Leaves a nested message entered with [`SizeCache::enter`].
    #[inline]
    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// `RecursionLimitExceeded` when the sized message nests deeper than
    /// [`MAX_ENCODE_DEPTH`]: its sizes are incomplete and it must not be encoded.
    ///
    /// # Errors
    /// As above.
    pub fn check_depth(&self) -> crate::error::Result<()> {
        if self.too_deep {
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::RecursionLimitExceeded {
                    limit: MAX_ENCODE_DEPTH,
                },
            ));
        }
        Ok(())
    }

    /// An empty cache.
    pub fn new() -> Self {
        SizeCache::default()
    }

    /// Reserves the next slot; fill it with [`SizeCache::set`] once the size is known.
    #[inline]
    pub fn reserve(&mut self) -> usize {
        self.sizes.push(0);
        self.sizes.len() - 1
    }

    /// Fills a reserved slot.
    #[inline]
    pub fn set(&mut self, slot: usize, size: u64) {
        if let Some(s) = self.sizes.get_mut(slot) {
            *s = size;
        }
    }

    /// A cursor that hands the sizes back in order.
    pub fn cursor(&self) -> SizeCursor<'_> {
        SizeCursor {
            sizes: &self.sizes,
            next: 0,
        }
    }

    /// Number of recorded sizes.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// True when no size is recorded.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}

/// Reads a [`SizeCache`] back in the order it was filled.
#[derive(Debug, Clone)]
pub struct SizeCursor<'c> {
    sizes: &'c [u64],
    next: usize,
}

impl SizeCursor<'_> {
    /// The next recorded size.
    ///
    /// # Errors
    /// `BufferTooSmall` when the message has more nested values than were sized
    /// (it changed between sizing and encoding).
    #[inline]
    pub fn next_size(&mut self) -> Result<u64> {
        match self.sizes.get(self.next) {
            Some(&s) => {
                self.next += 1;
                Ok(s)
            }
            None => Err(Error::new(ErrorKind::ValueOutOfRange {
                what: "message changed between sizing and encoding",
            })),
        }
    }
}
