//! Codecs for length-delimited scalars: strings and bytes.

use std::borrow::Cow;

use super::{Codec, DecodeContext, SizeCache, SizeCursor};
use crate::descriptor::FieldKind;
use crate::error::{Error, ErrorKind, Result};
use crate::field::Bytes;
use crate::wire::{encoded_len_varint, Reader, Sink, WireType};

#[inline]
fn read_str<'b>(r: &mut Reader<'b>) -> Result<&'b str> {
    let data = r.read_len_prefixed()?;
    std::str::from_utf8(data).map_err(|e| {
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

/// `string` held as `Cow<'a, str>` ([`crate::Str`]): borrowed in borrow mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct StrCodec;

impl<'a> Codec<'a> for StrCodec {
    type Value = Cow<'a, str>;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::String;

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut Cow<'a, str>,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        *value = ctx.str(read_str(r)?);
        Ok(())
    }

    #[inline]
    fn size(value: &Cow<'a, str>, _sizes: &mut SizeCache) -> u64 {
        len_prefixed(value.len())
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(
        value: &Cow<'a, str>,
        sink: &mut S,
        _sizes: &mut SizeCursor<'_>,
    ) -> Result<()> {
        put_len_prefixed(value.as_bytes(), sink)
    }

    #[inline]
    fn is_default(value: &Cow<'a, str>) -> bool {
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
        _ctx: &mut C,
    ) -> Result<()> {
        let s = read_str(r)?;
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
        _ctx: &mut C,
    ) -> Result<()> {
        let data = r.read_len_prefixed()?;
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
