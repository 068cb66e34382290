//! Codecs for the scalar protobuf types (varint, zigzag, fixed-width, float, bool, enum).

use std::marker::PhantomData;

use super::{Codec, DecodeContext, SizeCache, SizeCursor};
use crate::descriptor::FieldKind;
use crate::error::Result;
use crate::field::{EnumValue, ProtoEnum};
use crate::wire::{
    encoded_len_varint, zigzag_decode32, zigzag_decode64, zigzag_encode32, zigzag_encode64, Reader,
    Sink, WireType,
};

/// Scalar codecs additionally read and write whole packed runs.
pub trait PackedScalar<'a>: Codec<'a> {
    /// Appends every value of a packed payload.
    ///
    /// # Errors
    /// Malformed input.
    fn read_packed(data: &mut Reader<'_>, out: &mut Vec<Self::Value>) -> Result<()>;

    /// The packed payload size of `values` (without key and length prefix).
    fn packed_len(values: &[Self::Value]) -> u64;

    /// Writes `values` back to back (without key and length prefix).
    ///
    /// # Errors
    /// Errors of the sink.
    fn write_packed<S: Sink + ?Sized>(values: &[Self::Value], sink: &mut S) -> Result<()>;
}

macro_rules! varint_codec {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $kind:ident,
     decode: |$d:ident| $dec:expr, encode: |$e:ident| $enc:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl $name {
            #[inline]
            fn from_wire($d: u64) -> $ty {
                $dec
            }
            #[inline]
            fn to_wire($e: $ty) -> u64 {
                $enc
            }
        }

        impl<'a> Codec<'a> for $name {
            type Value = $ty;
            const WIRE_TYPE: WireType = WireType::Varint;
            const KIND: FieldKind = FieldKind::$kind;
            const PACKABLE: bool = true;

            #[inline]
            fn merge<'b, C: DecodeContext<'b, 'a>>(
                value: &mut $ty,
                r: &mut Reader<'b>,
                _ctx: &mut C,
            ) -> Result<()> {
                *value = Self::from_wire(r.read_varint()?);
                Ok(())
            }

            #[inline]
            fn size(value: &$ty, _sizes: &mut SizeCache) -> u64 {
                encoded_len_varint(Self::to_wire(*value))
            }

            #[inline]
            fn encode<S: Sink + ?Sized>(
                value: &$ty,
                sink: &mut S,
                _sizes: &mut SizeCursor<'_>,
            ) -> Result<()> {
                sink.put_varint(Self::to_wire(*value))
            }

            #[inline]
            fn is_default(value: &$ty) -> bool {
                *value == <$ty>::default()
            }
        }

        impl<'a> PackedScalar<'a> for $name {
            fn read_packed(data: &mut Reader<'_>, out: &mut Vec<$ty>) -> Result<()> {
                // Every varint ends in exactly one byte below 0x80, so that count sizes
                // the vector exactly: never more than one element per input byte.
                out.reserve(data.unread().iter().filter(|&&b| b < 0x80).count());
                while !data.is_empty() {
                    out.push(Self::from_wire(data.read_varint()?));
                }
                Ok(())
            }

            fn packed_len(values: &[$ty]) -> u64 {
                values
                    .iter()
                    .map(|&v| encoded_len_varint(Self::to_wire(v)))
                    .sum()
            }

            fn write_packed<S: Sink + ?Sized>(values: &[$ty], sink: &mut S) -> Result<()> {
                for &v in values {
                    sink.put_varint(Self::to_wire(v))?;
                }
                Ok(())
            }
        }
    };
}

varint_codec!(
    /// `int32`: negative values are sign-extended to ten bytes, as protobuf does.
    Int32, i32, Int32, decode: |v| v as i32, encode: |v| v as i64 as u64);
varint_codec!(
    /// `int64`.
    Int64, i64, Int64, decode: |v| v as i64, encode: |v| v as u64);
varint_codec!(
    /// `uint32`.
    UInt32, u32, UInt32, decode: |v| v as u32, encode: |v| u64::from(v));
varint_codec!(
    /// `uint64`.
    UInt64, u64, UInt64, decode: |v| v, encode: |v| v);
varint_codec!(
    /// `sint32` (zigzag).
    SInt32, i32, SInt32, decode: |v| zigzag_decode32(v as u32), encode: |v| u64::from(zigzag_encode32(v)));
varint_codec!(
    /// `sint64` (zigzag).
    SInt64, i64, SInt64, decode: |v| zigzag_decode64(v), encode: |v| zigzag_encode64(v));
varint_codec!(
    /// `bool`: any non-zero varint reads as true.
    Bool, bool, Bool, decode: |v| v != 0, encode: |v| u64::from(v));

macro_rules! fixed_codec {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $kind:ident, $wire:ident, $n:literal, $read:ident,
     default: |$d:ident| $isdef:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl<'a> Codec<'a> for $name {
            type Value = $ty;
            const WIRE_TYPE: WireType = WireType::$wire;
            const KIND: FieldKind = FieldKind::$kind;
            const FIXED_SIZE: Option<usize> = Some($n);
            const PACKABLE: bool = true;

            #[inline]
            fn merge<'b, C: DecodeContext<'b, 'a>>(
                value: &mut $ty,
                r: &mut Reader<'b>,
                _ctx: &mut C,
            ) -> Result<()> {
                *value = <$ty>::from_le_bytes(r.$read()?.to_le_bytes());
                Ok(())
            }

            #[inline]
            fn size(_value: &$ty, _sizes: &mut SizeCache) -> u64 {
                $n
            }

            #[inline]
            fn encode<S: Sink + ?Sized>(
                value: &$ty,
                sink: &mut S,
                _sizes: &mut SizeCursor<'_>,
            ) -> Result<()> {
                sink.put(&value.to_le_bytes())
            }

            #[inline]
            fn is_default($d: &$ty) -> bool {
                $isdef
            }
        }

        impl<'a> PackedScalar<'a> for $name {
            fn read_packed(data: &mut Reader<'_>, out: &mut Vec<$ty>) -> Result<()> {
                let len = data.remaining();
                if len % $n != 0 {
                    return Err(crate::error::Error::at(
                        crate::error::ErrorKind::InvalidPackedLength {
                            length: len as u64,
                            element_size: $n,
                        },
                        data.offset(),
                    ));
                }
                // The payload is in memory already, so this reservation is bounded by
                // the input's size.
                out.reserve(len / $n);
                while !data.is_empty() {
                    out.push(<$ty>::from_le_bytes(data.$read()?.to_le_bytes()));
                }
                Ok(())
            }

            fn packed_len(values: &[$ty]) -> u64 {
                values.len() as u64 * $n
            }

            fn write_packed<S: Sink + ?Sized>(values: &[$ty], sink: &mut S) -> Result<()> {
                // Short runs (dims, a few values) go straight to the sink: zeroing a 4 KiB
                // buffer would cost more than the values. Large arrays are converted in
                // stack-sized chunks, one sink call per chunk.
                if values.len() * $n <= 256 {
                    for v in values {
                        sink.put(&v.to_le_bytes())?;
                    }
                    return Ok(());
                }
                let mut buf = [0u8; 4096];
                for chunk in values.chunks(4096 / $n) {
                    for (dst, v) in buf.chunks_exact_mut($n).zip(chunk) {
                        dst.copy_from_slice(&v.to_le_bytes());
                    }
                    sink.put(&buf[..chunk.len() * $n])?;
                }
                Ok(())
            }
        }
    };
}

fixed_codec!(
    /// `fixed32`.
    Fixed32, u32, Fixed32, Fixed32, 4, read_fixed32, default: |v| *v == 0);
fixed_codec!(
    /// `fixed64`.
    Fixed64, u64, Fixed64, Fixed64, 8, read_fixed64, default: |v| *v == 0);
fixed_codec!(
    /// `sfixed32`.
    SFixed32, i32, SFixed32, Fixed32, 4, read_fixed32, default: |v| *v == 0);
fixed_codec!(
    /// `sfixed64`.
    SFixed64, i64, SFixed64, Fixed64, 8, read_fixed64, default: |v| *v == 0);
fixed_codec!(
    /// `float` (IEEE 754 single, little-endian); NaN payloads and -0.0 are kept bit-exact.
    Float, f32, Float, Fixed32, 4, read_fixed32, default: |v| v.to_bits() == 0);
fixed_codec!(
    /// `double` (IEEE 754 double, little-endian); NaN payloads and -0.0 are kept bit-exact.
    Double, f64, Double, Fixed64, 8, read_fixed64, default: |v| v.to_bits() == 0);

/// An enum field: an `int32` varint kept as [`EnumValue`], known to the schema or not.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnumCodec<E>(PhantomData<fn() -> E>);

impl<'a, E: ProtoEnum> Codec<'a> for EnumCodec<E> {
    type Value = EnumValue<E>;
    const WIRE_TYPE: WireType = WireType::Varint;
    const KIND: FieldKind = FieldKind::Enum(E::NAME);
    const PACKABLE: bool = true;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut EnumValue<E>,
        r: &mut Reader<'b>,
        _ctx: &mut C,
    ) -> Result<()> {
        *value = EnumValue::from_raw(r.read_varint()? as i32);
        Ok(())
    }

    #[inline]
    fn size(value: &EnumValue<E>, _sizes: &mut SizeCache) -> u64 {
        encoded_len_varint(value.raw() as i64 as u64)
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &EnumValue<E>,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        sink.put_varint(value.raw() as i64 as u64)
    }

    #[inline]
    fn is_default(value: &EnumValue<E>) -> bool {
        value.raw() == 0
    }
}

impl<'a, E: ProtoEnum> PackedScalar<'a> for EnumCodec<E> {
    fn read_packed(data: &mut Reader<'_>, out: &mut Vec<EnumValue<E>>) -> Result<()> {
        while !data.is_empty() {
            out.push(EnumValue::from_raw(data.read_varint()? as i32));
        }
        Ok(())
    }

    fn packed_len(values: &[EnumValue<E>]) -> u64 {
        values
            .iter()
            .map(|v| encoded_len_varint(v.raw() as i64 as u64))
            .sum()
    }

    fn write_packed<S: Sink + ?Sized>(values: &[EnumValue<E>], sink: &mut S) -> Result<()> {
        for v in values {
            sink.put_varint(v.raw() as i64 as u64)?;
        }
        Ok(())
    }
}
