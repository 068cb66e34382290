//! The codec for nested messages.

use std::marker::PhantomData;

use super::{Codec, DecodeContext, SizeCache, SizeCursor};
use crate::descriptor::FieldKind;
use crate::error::Result;
use crate::message::Decode;
use crate::wire::{encoded_len_varint, Reader, Sink, WireType};

/// A nested message of type `M`: merged when seen twice, sized once per encode.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageCodec<M>(PhantomData<fn() -> M>);

impl<'a, M: Decode<'a>> Codec<'a> for MessageCodec<M> {
    type Value = M;
    const WIRE_TYPE: WireType = WireType::LengthDelimited;
    const KIND: FieldKind = FieldKind::Message(M::NAME);

    #[inline]
    fn merge<'b, C: DecodeContext<'b, 'a>>(
        value: &mut M,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        let mut inner = r.nested()?;
        value.merge_from(&mut inner, ctx)
    }

    #[inline]
    fn size(value: &M, sizes: &mut SizeCache) -> u64 {
        let slot = sizes.reserve();
        let len = value.compute_size(sizes);
        sizes.set(slot, len);
        encoded_len_varint(len) + len
    }

    #[inline]
    fn encode<S: Sink + ?Sized>(value: &M, sink: &mut S, sizes: &mut SizeCursor<'_>) -> Result<()> {
        let len = sizes.next_size()?;
        sink.put_varint(len)?;
        value.encode_fields(sink, sizes)
    }

    #[inline]
    fn is_default(_value: &M) -> bool {
        false
    }
}
