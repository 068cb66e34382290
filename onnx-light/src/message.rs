//! The traits every message type implements (via `#[derive(ProtoMessage)]`), and the
//! decode/encode entry points they provide, and `MessageCodec`, the codec of a nested
//! message.

use std::io;
use std::sync::Arc;

use std::mem::size_of;

use crate::codec::{
    BorrowMode, Budget, Codec, CopyMode, DecodeContext, SharedMode, SizeCache, SizeCursor,
};
use crate::descriptor::{FieldKind, MessageDescriptor};
use crate::error::{Error, ErrorKind, Result};
use crate::field::{ByteOwner, SharedOwner, UnknownField, UnknownFields};
use crate::wire::{
    encoded_len_varint, FieldKey, IoSink, Reader, Sink, SliceSink, WireType,
    DEFAULT_RECURSION_LIMIT,
};

/// Options for decoding one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Nested messages and groups allowed below the top-level message (default 100, as
    /// in protobuf). Deeper input is rejected with `RecursionLimitExceeded`.
    pub recursion_limit: u32,
    /// In shared mode, payloads of at least this many bytes are shared rather than
    /// copied (default 1024).
    pub shared_threshold: usize,
    /// The most bytes the decoded message may take in memory (default `None`: no
    /// limit). Counted as the decode goes, before each allocation: lists (elements
    /// times their size), boxed messages, map entries, kept unknown fields, and every
    /// string and payload the mode copies (see [`Budget`]). Past it, the decode stops
    /// with `LimitExceeded` at the offset that asked for more.
    ///
    /// An N-byte input can otherwise make a decode allocate a few hundred times N
    /// (millions of empty repeated messages, each 2 bytes on the wire and hundreds in
    /// memory): set this when decoding input you do not trust. Real models take
    /// between about 1x (weights) and 15x (names and nodes) their size in copy mode.
    pub max_memory: Option<u64>,
    /// Decode long lists (a graph's nodes, initializers, inputs, outputs and
    /// value_info: the fields declared `#[proto(N, parallel)]`) on the threads of the
    /// current rayon pool (default true). Outside any pool that is rayon's global pool,
    /// one thread per core; inside `ThreadPool::install`, that pool's threads. The
    /// decoded message, and the error for malformed input (offset, field path, index),
    /// are the same as with `false`, which decodes on the calling thread only.
    pub parallel: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            recursion_limit: DEFAULT_RECURSION_LIMIT,
            shared_threshold: 1024,
            max_memory: None,
            parallel: true,
        }
    }
}

/// Encoding, sizing and description: everything that does not depend on how the
/// message's bytes are held.
pub trait Message {
    /// Fully qualified protobuf name, e.g. `onnx.ModelProto`.
    const NAME: &'static str;
    /// The message's fields, for schema checks and tools.
    const DESCRIPTOR: &'static MessageDescriptor;

    /// Encoded size of the fields, recording nested sizes in `sizes` (generated).
    #[doc(hidden)]
    fn compute_size(&self, sizes: &mut SizeCache) -> u64;

    /// Writes the fields in field-number order, then unknown fields (generated).
    ///
    /// # Errors
    /// Errors of the sink.
    #[doc(hidden)]
    fn encode_fields<S: Sink + ?Sized>(
        &self,
        sink: &mut S,
        sizes: &mut SizeCursor<'_>,
    ) -> Result<()>;

    /// Exact encoded size in bytes. For a message nested deeper than
    /// [`MAX_ENCODE_DEPTH`](crate::MAX_ENCODE_DEPTH) levels, which no encoder writes, the
    /// levels below that depth are not counted.
    fn encoded_len(&self) -> u64 {
        self.compute_size(&mut SizeCache::new())
    }

    /// Encodes into any [`Sink`]; returns the number of bytes written.
    ///
    /// # Errors
    /// Errors of the sink; `RecursionLimitExceeded` for messages nested deeper than
    /// [`MAX_ENCODE_DEPTH`](crate::MAX_ENCODE_DEPTH) levels (whose recursive encoding
    /// could overflow the stack).
    fn encode<S: Sink + ?Sized>(&self, sink: &mut S) -> Result<u64> {
        let mut sizes = SizeCache::new();
        let len = self.compute_size(&mut sizes);
        sizes.check_depth()?;
        self.encode_fields(sink, &mut sizes.cursor())?;
        Ok(len)
    }

    /// Encodes into a new vector allocated at exactly the encoded size.
    ///
    /// # Errors
    /// `ValueOutOfRange` when the encoding does not fit in this platform's address space;
    /// `RecursionLimitExceeded` as for [`Message::encode`].
    fn encode_to_vec(&self) -> Result<Vec<u8>> {
        let mut sizes = SizeCache::new();
        let len = self.compute_size(&mut sizes);
        sizes.check_depth()?;
        let cap = usize::try_from(len).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "encoded message larger than the address space",
            })
        })?;
        let mut out = Vec::with_capacity(cap);
        self.encode_fields(&mut out, &mut sizes.cursor())?;
        Ok(out)
    }

    /// Encodes into `buf`, which must be exactly [`Message::encoded_len`] bytes long.
    ///
    /// # Errors
    /// `BufferTooSmall` when `buf` is shorter; `ValueOutOfRange` when it is longer.
    fn encode_to_slice(&self, buf: &mut [u8]) -> Result<()> {
        let mut sizes = SizeCache::new();
        let len = self.compute_size(&mut sizes);
        sizes.check_depth()?;
        if len != buf.len() as u64 {
            return Err(Error::new(ErrorKind::BufferTooSmall {
                needed: len,
                remaining: buf.len() as u64,
            }));
        }
        let mut sink = SliceSink::new(buf);
        self.encode_fields(&mut sink, &mut sizes.cursor())
    }

    /// Encodes into any `io::Write`, buffering small writes; returns the bytes written.
    ///
    /// # Errors
    /// I/O errors of the writer.
    fn write_to<W: io::Write>(&self, writer: W) -> Result<u64> {
        let mut sink = IoSink::new(writer);
        let n = self.encode(&mut sink)?;
        sink.flush()?;
        Ok(n)
    }
}

/// Decoding into a message whose borrowed fields live for `'a`.
///
/// Implemented for `T<'a>` by the derive; `T<'static>` (the owned form) therefore
/// implements `Decode<'static>` and gets [`DecodeOwned::decode_owned`] and
/// [`DecodeOwned::decode_shared`] as well.
pub trait Decode<'a>: Message + Default {
    /// Decodes one field whose key was just read; `Ok(false)` when the field is not
    /// declared (generated).
    ///
    /// # Errors
    /// Malformed input.
    #[doc(hidden)]
    fn merge_field<'b, C: DecodeContext<'b, 'a>>(
        &mut self,
        key: FieldKey,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<bool>;

    /// True when the type keeps undeclared fields (generated).
    #[doc(hidden)]
    const KEEPS_UNKNOWN_FIELDS: bool = false;

    /// Stores an undeclared field (generated for types that keep them).
    #[doc(hidden)]
    fn push_unknown_field(&mut self, _field: UnknownField<'a>) {}

    /// Merges every field of `r` into `self` (protobuf merge semantics: scalars are
    /// replaced, nested messages merged, repeated fields appended).
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    #[doc(hidden)]
    fn merge_from<'b, C: DecodeContext<'b, 'a>>(
        &mut self,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<()> {
        while !r.is_empty() {
            let start = r.position();
            let key = r.read_key()?;
            if self.merge_field(key, r, ctx)? {
                continue;
            }
            if key.wire_type == WireType::EndGroup {
                return Err(Error::at(
                    ErrorKind::UnexpectedEndGroup { field: key.number },
                    r.offset(),
                ));
            }
            r.skip(key)?;
            if Self::KEEPS_UNKNOWN_FIELDS {
                let (raw, at) = r.consumed_since(start);
                ctx.charge(
                    size_of::<UnknownField<'a>>() as u64 + ctx.copy_cost(raw.len(), true),
                    r.offset(),
                )?;
                self.push_unknown_field(UnknownField::from_raw(key, ctx.bytes(raw, at)));
            }
        }
        Ok(())
    }

    /// Decodes in borrow mode: strings and payloads are slices of `buf`, nothing is
    /// copied, and the compiler keeps `buf` alive as long as the message.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode(buf: &'a [u8]) -> Result<Self> {
        Self::decode_with(buf, &DecodeOptions::default())
    }

    /// [`Decode::decode`] with explicit options.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode_with(buf: &'a [u8], options: &DecodeOptions) -> Result<Self> {
        let mut msg = Self::default();
        let mut r = Reader::with_recursion_limit(buf, options.recursion_limit);
        let mut ctx = BorrowMode {
            budget: Budget::new(options.max_memory),
            parallel: options.parallel,
        };
        msg.merge_from(&mut r, &mut ctx)?;
        Ok(msg)
    }
}

/// Decoding into a message that owns its data (`T<'static>`): copy mode and shared
/// mode. Implemented for every `T: Decode<'static>`.
pub trait DecodeOwned: Decode<'static> {
    /// Decodes in copy mode: the result owns every string and payload.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode_owned(buf: &[u8]) -> Result<Self> {
        Self::decode_owned_with(buf, &DecodeOptions::default())
    }

    /// [`DecodeOwned::decode_owned`] with explicit options.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode_owned_with(buf: &[u8], options: &DecodeOptions) -> Result<Self> {
        let mut msg = Self::default();
        let mut r = Reader::with_recursion_limit(buf, options.recursion_limit);
        let mut ctx = CopyMode {
            budget: Budget::new(options.max_memory),
            parallel: options.parallel,
        };
        msg.merge_from(&mut r, &mut ctx)?;
        Ok(msg)
    }

    /// Decodes in shared mode from a reference-counted owner (an mmap, a vector, a
    /// decrypted buffer): payloads of at least `options.shared_threshold` bytes become
    /// shared slices of the owner, smaller ones are copied. The result is `'static` and
    /// keeps the owner alive as long as any payload does.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode_shared(owner: ByteOwner, options: &DecodeOptions) -> Result<Self> {
        let mut ctx = SharedMode::new(owner.clone(), options.shared_threshold);
        ctx.budget = Budget::new(options.max_memory);
        ctx.parallel = options.parallel;
        let mut msg = Self::default();
        let mut r = Reader::with_recursion_limit(owner.bytes(), options.recursion_limit);
        msg.merge_from(&mut r, &mut ctx)?;
        Ok(msg)
    }

    /// [`DecodeOwned::decode_shared`] taking any owner by value.
    ///
    /// # Errors
    /// Malformed input, with offset and field path.
    fn decode_shared_from<O: SharedOwner>(owner: O, options: &DecodeOptions) -> Result<Self> {
        Self::decode_shared(Arc::new(owner), options)
    }
}

impl<T: Decode<'static>> DecodeOwned for T {}

/// Conversion to a value that borrows nothing: `T<'a>` to `T<'static>`.
///
/// Borrowed payloads and strings are copied; Owned and Shared payloads move as they are.
pub trait IntoOwned {
    /// The owned form.
    type Owned: 'static;
    /// Converts, copying only what is borrowed.
    fn into_owned(self) -> Self::Owned;
}

macro_rules! owned_as_is {
    ($($t:ty),*) => {$(
        impl IntoOwned for $t {
            type Owned = $t;
            #[inline]
            fn into_owned(self) -> $t { self }
        }
    )*};
}
owned_as_is!(i32, i64, u32, u64, f32, f64, bool, u8, String);

impl IntoOwned for crate::field::Str<'_> {
    type Owned = crate::field::Str<'static>;
    #[inline]
    fn into_owned(self) -> crate::field::Str<'static> {
        crate::field::Str::into_owned(self)
    }
}

impl IntoOwned for crate::field::Bytes<'_> {
    type Owned = crate::field::Bytes<'static>;
    fn into_owned(self) -> crate::field::Bytes<'static> {
        crate::field::Bytes::into_owned(self)
    }
}

impl IntoOwned for UnknownFields<'_> {
    type Owned = UnknownFields<'static>;
    fn into_owned(self) -> UnknownFields<'static> {
        UnknownFields::into_owned(self)
    }
}

impl<E: crate::field::ProtoEnum> IntoOwned for crate::field::EnumValue<E> {
    type Owned = Self;
    fn into_owned(self) -> Self {
        self
    }
}

impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(T::into_owned)
    }
}

impl<T: IntoOwned> IntoOwned for Box<T> {
    type Owned = Box<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        Box::new((*self).into_owned())
    }
}

impl<T: IntoOwned> IntoOwned for Vec<T> {
    type Owned = Vec<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.into_iter().map(T::into_owned).collect()
    }
}

impl<K: IntoOwned, V: IntoOwned> IntoOwned for std::collections::BTreeMap<K, V>
where
    K::Owned: Ord,
{
    type Owned = std::collections::BTreeMap<K::Owned, V::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }
}

impl<K: IntoOwned, V: IntoOwned, H> IntoOwned for std::collections::HashMap<K, V, H>
where
    K::Owned: Eq + std::hash::Hash,
{
    type Owned = std::collections::HashMap<K::Owned, V::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }
}

/// A view of a value that borrows every string and payload from it: `&'m T<'a>` to
/// `T<'m>`. Nothing large is copied (byte payloads and strings become borrowed slices);
/// fields that do not borrow (numbers, typed arrays) are cloned. Saving uses it to write a
/// model differently (e.g. with external data) without mutating or deep-copying it.
pub trait Reborrow {
    /// The view type.
    type Borrowed<'m>
    where
        Self: 'm;
    /// Makes the view.
    fn reborrow(&self) -> Self::Borrowed<'_>;
}

impl Reborrow for crate::field::Str<'_> {
    type Borrowed<'m>
        = crate::field::Str<'m>
    where
        Self: 'm;
    #[inline]
    fn reborrow(&self) -> crate::field::Str<'_> {
        crate::field::Str::borrowed(self)
    }
}

impl Reborrow for crate::field::Bytes<'_> {
    type Borrowed<'m>
        = crate::field::Bytes<'m>
    where
        Self: 'm;
    fn reborrow(&self) -> crate::field::Bytes<'_> {
        crate::field::Bytes::Borrowed(self.as_slice())
    }
}

impl Reborrow for UnknownFields<'_> {
    type Borrowed<'m>
        = UnknownFields<'m>
    where
        Self: 'm;
    fn reborrow(&self) -> UnknownFields<'_> {
        let mut out = UnknownFields::new();
        for f in self.iter() {
            out.push(UnknownField::from_raw(
                f.key(),
                crate::field::Bytes::Borrowed(f.raw()),
            ));
        }
        out
    }
}

impl<T: Reborrow> Reborrow for Option<T> {
    type Borrowed<'m>
        = Option<T::Borrowed<'m>>
    where
        Self: 'm;
    fn reborrow(&self) -> Option<T::Borrowed<'_>> {
        self.as_ref().map(T::reborrow)
    }
}

impl<T: Reborrow> Reborrow for Box<T> {
    type Borrowed<'m>
        = Box<T::Borrowed<'m>>
    where
        Self: 'm;
    fn reborrow(&self) -> Box<T::Borrowed<'_>> {
        Box::new((**self).reborrow())
    }
}

impl<T: Reborrow> Reborrow for Vec<T> {
    type Borrowed<'m>
        = Vec<T::Borrowed<'m>>
    where
        Self: 'm;
    fn reborrow(&self) -> Vec<T::Borrowed<'_>> {
        self.iter().map(T::reborrow).collect()
    }
}

// Map keys are strings, integers or bools (protobuf's rule), so the views of maps are
// spelled out per key type; a generic key would need a higher-ranked `Ord` bound.
macro_rules! reborrow_maps {
    ($($k:ty),*) => {$(
        impl<V: Reborrow> Reborrow for std::collections::BTreeMap<$k, V> {
            type Borrowed<'m> = std::collections::BTreeMap<$k, V::Borrowed<'m>> where Self: 'm;
            fn reborrow(&self) -> Self::Borrowed<'_> {
                self.iter().map(|(k, v)| (k.clone(), v.reborrow())).collect()
            }
        }
        impl<V: Reborrow, S> Reborrow for std::collections::HashMap<$k, V, S> {
            type Borrowed<'m> = std::collections::HashMap<$k, V::Borrowed<'m>> where Self: 'm;
            fn reborrow(&self) -> Self::Borrowed<'_> {
                self.iter().map(|(k, v)| (k.clone(), v.reborrow())).collect()
            }
        }
    )*};
}
reborrow_maps!(i32, i64, u32, u64, bool, String);

impl<'a, V: Reborrow> Reborrow for std::collections::BTreeMap<crate::field::Str<'a>, V> {
    type Borrowed<'m>
        = std::collections::BTreeMap<crate::field::Str<'m>, V::Borrowed<'m>>
    where
        Self: 'm;
    fn reborrow(&self) -> Self::Borrowed<'_> {
        self.iter()
            .map(|(k, v)| (k.reborrow(), v.reborrow()))
            .collect()
    }
}

impl<'a, V: Reborrow, S> Reborrow for std::collections::HashMap<crate::field::Str<'a>, V, S> {
    type Borrowed<'m>
        = std::collections::HashMap<crate::field::Str<'m>, V::Borrowed<'m>>
    where
        Self: 'm;
    fn reborrow(&self) -> Self::Borrowed<'_> {
        self.iter()
            .map(|(k, v)| (k.reborrow(), v.reborrow()))
            .collect()
    }
}

macro_rules! reborrow_by_clone {
    ($($t:ty),*) => {$(
        impl Reborrow for $t {
            type Borrowed<'m> = $t where Self: 'm;
            #[inline]
            fn reborrow(&self) -> $t { self.clone() }
        }
    )*};
}
reborrow_by_clone!(i32, i64, u32, u64, f32, f64, bool, u8, String);

impl<E: crate::field::ProtoEnum> Reborrow for crate::field::EnumValue<E> {
    type Borrowed<'m>
        = Self
    where
        Self: 'm;
    fn reborrow(&self) -> Self {
        *self
    }
}

/// A nested message of type `M`: merged when seen twice, sized once per encode.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageCodec<M>(std::marker::PhantomData<fn() -> M>);

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
        if !sizes.enter() {
            return 0; // too deep: the encoder refuses the message (check_depth)
        }
        let slot = sizes.reserve();
        let len = value.compute_size(sizes);
        sizes.set(slot, len);
        sizes.leave();
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
