//! Codecs for length-delimited scalars: strings and bytes.

use super::{Codec, DecodeContext, SizeCache, SizeCursor};
use crate::descriptor::FieldKind;
use crate::error::{Error, ErrorKind, Result};
use crate::field::{Bytes, Str};
use crate::wire::{encoded_len_varint, Reader, Sink, WireType};

#[inline]
fn read_str<'b>(r: &mut Reader<'b>) -> Result<&'b str> {
    let data = r.read_len_prefixed()?;
    crate::field::from_utf8(data).map_err(|e| {
        let at = r.offset() - data.len() as u64;
        Error::at(ErrorKind::InvalidUtf8, at + e.valid_up_to() as u64)
    })
}

#[inline]
fn len_prefixed(len: usize) -> u64 {
    encoded_len_varint(len as u64) + len as u64
}

#[inline]
fn put_len_prefixed<S: Sink + ?Sized>(data: &[u8], sink: &mut S) -> Result<()> {
    sink.put_varint(data.len() as u64)?;
    sink.put(data)
}

/// `string` held as `Str<'a>` ([`crate::Str`]): borrowed in borrow mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct StrCodec;

impl<'a> Codec<'a> for StrCodec {
    type Value = Str<'a>;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::String;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut Str<'a>,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        let text = read_str(r)?;
        ctx.charge(ctx.copy_cost(text.len(), false), r.offset())?;
        *value = ctx.str(text);
        Ok(())
    }

    #[inline]
    fn size(value: &Str<'a>, _sizes: &mut SizeCache) -> u64 {
        len_prefixed(value.len())
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &Str<'a>,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        put_len_prefixed(value.as_bytes(), sink)
    }

    #[inline]
    fn is_default(value: &Str<'a>) -> bool {
        value.is_empty()
    }
}

/// `string` held as `String` (always copied).
#[derive(Debug, Clone, Copy, Default)]
pub struct StringCodec;

impl<'a> Codec<'a> for StringCodec {
    type Value = String;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::String;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut String,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        let s = read_str(r)?;
        ctx.charge(s.len() as u64, r.offset())?;
        value.clear();
        value.push_str(s);
        Ok(())
    }

    #[inline]
    fn size(value: &String, _sizes: &mut SizeCache) -> u64 {
        len_prefixed(value.len())
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &String,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        put_len_prefixed(value.as_bytes(), sink)
    }

    #[inline]
    fn is_default(value: &String) -> bool {
        value.is_empty()
    }
}

/// `bytes` held as [`Bytes<'a>`]: borrowed, copied or shared depending on the mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesCodec;

impl<'a> Codec<'a> for BytesCodec {
    type Value = Bytes<'a>;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::Bytes;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut Bytes<'a>,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        let data = r.read_len_prefixed()?;
        ctx.charge(ctx.copy_cost(data.len(), true), r.offset())?;
        *value = ctx.bytes(data, r.offset() - data.len() as u64);
        Ok(())
    }

    #[inline]
    fn size(value: &Bytes<'a>, _sizes: &mut SizeCache) -> u64 {
        len_prefixed(value.len())
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &Bytes<'a>,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        put_len_prefixed(value, sink)
    }

    #[inline]
    fn is_default(value: &Bytes<'a>) -> bool {
        value.is_empty()
    }
}

/// `bytes` held as `Vec<u8>` (always copied).
#[derive(Debug, Clone, Copy, Default)]
pub struct VecBytesCodec;

impl<'a> Codec<'a> for VecBytesCodec {
    type Value = Vec<u8>;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::Bytes;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut Vec<u8>,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        let data = r.read_len_prefixed()?;
        ctx.charge(data.len() as u64, r.offset())?;
        value.clear();
        value.extend_from_slice(data);
        Ok(())
    }

    #[inline]
    fn size(value: &Vec<u8>, _sizes: &mut SizeCache) -> u64 {
        len_prefixed(value.len())
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &Vec<u8>,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        put_len_prefixed(value, sink)
    }

    #[inline]
    fn is_default(value: &Vec<u8>) -> bool {
        value.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::field::merge_repeated_scalar;
    use crate::codec::Int64;
    use crate::wire::FieldKey;

    /// Records the offsets the codecs hand to the context.
    struct Offsets(Vec<u64>);

    impl<'b> DecodeContext<'b, 'b> for Offsets {
        fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'b> {
            self.0.push(offset);
            Bytes::Borrowed(data)
        }
        fn str(&mut self, text: &'b str) -> Str<'b> {
            Str::borrowed(text)
        }
    }

    #[test]
    fn payload_offsets_are_absolute() {
        // Two payloads (a 1-byte and a 200-byte one, whose prefix takes two bytes) in a
        // reader that starts at absolute offset 1000.
        let mut input = vec![1, 0xaa, 0xc8, 0x01];
        input.extend_from_slice(&[7; 200]);
        let mut r = Reader::new(&input).rebased(1000);
        let mut ctx = Offsets(Vec::new());
        let mut v = Bytes::default();
        BytesCodec::merge(&mut v, &mut r, &mut ctx).unwrap();
        assert_eq!(&*v, &[0xaa]);
        BytesCodec::merge(&mut v, &mut r, &mut ctx).unwrap();
        assert_eq!(v.len(), 200);
        assert_eq!(ctx.0, vec![1001, 1004]);
        assert!(r.is_empty());
    }

    #[test]
    fn invalid_utf8_is_reported_at_the_bad_byte() {
        let input = [4, b'o', b'k', 0xff, b'!'];
        let mut r = Reader::new(&input).rebased(50);
        let mut s = Str::default();
        let e = StrCodec::merge(&mut s, &mut r, &mut Offsets(Vec::new())).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::InvalidUtf8);
        assert_eq!(e.offset(), Some(53));
    }

    #[test]
    fn packed_errors_are_reported_at_absolute_offsets() {
        // A packed run of 3 bytes whose last varint is cut off, at absolute offset 20.
        let input = [3, 1, 0x80, 0x80];
        let mut r = Reader::new(&input).rebased(20);
        let key = FieldKey::new(1, WireType::LengthDelimited).unwrap();
        let mut list = Vec::new();
        let e = merge_repeated_scalar::<Int64, _>(&mut list, key, &mut r, &mut Offsets(Vec::new()))
            .unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }));
        assert_eq!(e.offset(), Some(22));
        assert_eq!(list, vec![1]);
    }
}
