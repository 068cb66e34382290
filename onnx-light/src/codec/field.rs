//! Field shapes: how a codec's values sit in a message field (optional with presence,
//! implicit presence, repeated unpacked or packed, boxed, map, oneof). Generated code
//! calls these with the codec as a type parameter.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::mem::size_of;

use super::context::bytes_of;
use super::scalar::PackedScalar;
use super::{Codec, DecodeContext, SizeCache, SizeCursor};
use crate::descriptor::FieldDescriptor;
use crate::error::Result;
use crate::wire::{encoded_len_varint, key_len, FieldKey, Reader, Sink, WireType};

/// Writes a field key.
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn put_key<S: Sink + ?Sized>(sink: &mut S, number: u32, wire_type: WireType) -> Result<()> {
    sink.put_varint((u64::from(number) << 3) | wire_type as u64)
}

// ---- decoding -----------------------------------------------------------------------

/// `optional` field: sets (scalars, strings) or merges (messages).
///
/// Like every decoder of this module, returns `Ok(false)` without reading anything when
/// the key's wire type is not one the field accepts: the caller then keeps the field as
/// an unknown field, as protobuf does.
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_optional<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut Option<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool> {
    if key.wire_type != K::WIRE_TYPE {
        return Ok(false);
    }
    K::merge(slot.get_or_insert_with(Default::default), r, ctx)?;
    Ok(true)
}

/// `optional` message held in a `Box` (recursive types).
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_boxed<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut Option<Box<K::Value>>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool> {
    if key.wire_type != K::WIRE_TYPE {
        return Ok(false);
    }
    if slot.is_none() {
        ctx.charge(size_of::<K::Value>() as u64, r.offset())?;
    }
    K::merge(slot.get_or_insert_with(Default::default), r, ctx)?;
    Ok(true)
}

/// Implicit-presence field.
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_implicit<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut K::Value,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool> {
    if key.wire_type != K::WIRE_TYPE {
        return Ok(false);
    }
    K::merge(slot, r, ctx)?;
    Ok(true)
}

/// Repeated non-scalar field (strings, bytes, messages): one element per key.
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_repeated<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool> {
    if key.wire_type != K::WIRE_TYPE {
        return Ok(false);
    }
    if list.len() == list.capacity() {
        // Allocate the run of elements that starts here at once, at its exact size: no
        // regrowth (and copies) of long lists, no capacity of 4 for a list of one. At
        // least doubling when the list is already there, so that a field interleaved
        // with others still grows geometrically.
        let additional = r.count_run(key).max(list.len());
        ctx.charge(bytes_of::<K::Value>(additional), r.offset())?;
        // Without a budget the run's size is the only bound: a refusal is an error,
        // not an abort.
        list.try_reserve_exact(additional).map_err(|_| {
            crate::error::Error::at(
                crate::error::ErrorKind::ValueOutOfRange {
                    what: "a list larger than the memory available",
                },
                r.offset(),
            )
        })?;
    }
    // Decoded in place: large message values are not moved after decoding.
    list.push(K::Value::default());
    let index = list.len() - 1;
    if let Err(e) = K::merge(&mut list[index], r, ctx) {
        list.pop();
        return Err(e);
    }
    Ok(true)
}

#[cfg(feature = "parallel")]
pub use super::parallel::{PARALLEL_MIN_RUN_BYTES, PARALLEL_MIN_RUN_VALUES};

/// Repeated message field that may hold long lists (a graph's nodes, initializers,
/// value_info): as [`merge_repeated`], but a run of values spanning at least
/// [`PARALLEL_MIN_RUN_BYTES`] and holding at least [`PARALLEL_MIN_RUN_VALUES`] (any
/// number from 2 when the mode copies payloads) is split into one slice per thread of
/// the current rayon pool when the context allows it ([`DecodeContext::fork`]), each
/// slice decoded with a fork of the context straight into its place in the list.
///
/// The list, the budget charged, and the error for malformed input (offset, field
/// path, index) are those of [`merge_repeated`]: each value's charges depend only on
/// its own bytes; each slice gets an equal share of the budget left, and a slice that
/// runs out of its share makes the whole run decode again on the calling thread, which
/// charges the real budget in order; the error reported is the one of the first value
/// in input order that fails, with the values before it kept.
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_repeated_parallel<'a, 'b, K, C>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool>
where
    K: Codec<'a>,
    K::Value: Send,
    C: DecodeContext<'b, 'a>,
{
    #[cfg(feature = "parallel")]
    if list.len() == list.capacity() && key.wire_type == K::WIRE_TYPE {
        if let Some(done) = super::parallel::merge_run::<K, C>(list, key, r, ctx) {
            return done.map(|()| true);
        }
    }
    merge_repeated::<K, C>(list, key, r, ctx)
}

/// Repeated scalar field: accepts packed and unpacked encodings, even mixed (a
/// length-delimited key is a packed run, not a wire-type mismatch).
///
/// # Errors
/// Malformed value.
#[inline]
pub fn merge_repeated_scalar<'a, 'b, K: PackedScalar<'a>, C: DecodeContext<'b, 'a>>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool> {
    if key.wire_type == WireType::LengthDelimited {
        let data = r.read_len_prefixed()?;
        // At most one element per smallest encoding of one (1, 4 or 8 bytes).
        let width = match K::WIRE_TYPE {
            WireType::Fixed32 => 4,
            WireType::Fixed64 => 8,
            _ => 1,
        };
        ctx.charge(bytes_of::<K::Value>(data.len() / width), r.offset())?;
        let mut packed = Reader::new(data).rebased(r.offset() - data.len() as u64);
        K::read_packed(&mut packed, list)?;
        return Ok(true);
    }
    if key.wire_type != K::WIRE_TYPE {
        return Ok(false);
    }
    if list.len() == list.capacity() {
        // What the push below may reserve: doubling, at least 4.
        ctx.charge(bytes_of::<K::Value>(list.len().max(4)), r.offset())?;
    }
    let mut v = K::Value::default();
    K::merge(&mut v, r, ctx)?;
    list.push(v);
    Ok(true)
}

/// Map field: each entry is a nested message with the key as field 1 and the value as
/// field 2 (either may be missing: the default is used). A later entry with the same
/// key replaces an earlier one. Inside an entry, other fields, and a key or value with
/// a wire type its codec does not read, are skipped (an entry keeps no unknown fields).
///
/// # Errors
/// Malformed entry.
pub fn merge_map<'a, 'b, KC, VC, M, C>(
    map: &mut M,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<bool>
where
    KC: Codec<'a>,
    VC: Codec<'a>,
    M: MapField<KC::Value, VC::Value>,
    C: DecodeContext<'b, 'a>,
{
    if key.wire_type != WireType::LengthDelimited {
        return Ok(false);
    }
    // An entry's key and value, plus a tree or table slot's bookkeeping (estimated).
    ctx.charge(
        (size_of::<KC::Value>() + size_of::<VC::Value>() + 32) as u64,
        r.offset(),
    )?;
    let mut entry = r.nested()?;
    let mut k = KC::Value::default();
    let mut v = VC::Value::default();
    while !entry.is_empty() {
        let fk = entry.read_key()?;
        match fk.number {
            1 if fk.wire_type == KC::WIRE_TYPE => KC::merge(&mut k, &mut entry, ctx)?,
            2 if fk.wire_type == VC::WIRE_TYPE => VC::merge(&mut v, &mut entry, ctx)?,
            _ => entry.skip(fk)?,
        }
    }
    map.insert_entry(k, v);
    Ok(true)
}

// ---- sizing -------------------------------------------------------------------------

/// Size of an `optional` field.
#[inline]
pub fn size_optional<'a, K: Codec<'a>>(
    number: u32,
    slot: &Option<K::Value>,
    sizes: &mut SizeCache,
) -> u64 {
    match slot {
        Some(v) => key_len(number) + K::size(v, sizes),
        None => 0,
    }
}

/// Size of a boxed `optional` field.
#[inline]
pub fn size_boxed<'a, K: Codec<'a>>(
    number: u32,
    slot: &Option<Box<K::Value>>,
    sizes: &mut SizeCache,
) -> u64 {
    match slot {
        Some(v) => key_len(number) + K::size(v, sizes),
        None => 0,
    }
}

/// Size of an implicit-presence field (nothing when default).
#[inline]
pub fn size_implicit<'a, K: Codec<'a>>(
    number: u32,
    value: &K::Value,
    sizes: &mut SizeCache,
) -> u64 {
    if K::is_default(value) {
        0
    } else {
        key_len(number) + K::size(value, sizes)
    }
}

/// Size of an unpacked repeated field.
#[inline]
pub fn size_repeated<'a, K: Codec<'a>>(
    number: u32,
    list: &[K::Value],
    sizes: &mut SizeCache,
) -> u64 {
    let mut n = key_len(number) * list.len() as u64;
    for v in list {
        n += K::size(v, sizes);
    }
    n
}

/// Size of a packed repeated field (nothing when empty).
#[inline]
pub fn size_packed<'a, K: PackedScalar<'a>>(number: u32, list: &[K::Value]) -> u64 {
    if list.is_empty() {
        return 0;
    }
    let payload = K::packed_len(list);
    key_len(number) + encoded_len_varint(payload) + payload
}

/// Size of a map field.
pub fn size_map<'a, KC, VC, M>(number: u32, map: &M, sizes: &mut SizeCache) -> u64
where
    KC: Codec<'a>,
    VC: Codec<'a>,
    M: MapField<KC::Value, VC::Value>,
{
    let mut n = 0;
    for (k, v) in map.sorted_entries() {
        let slot = sizes.reserve();
        let entry = 1 + KC::size(k, sizes) + 1 + VC::size(v, sizes);
        sizes.set(slot, entry);
        n += key_len(number) + encoded_len_varint(entry) + entry;
    }
    n
}

// ---- encoding -----------------------------------------------------------------------

/// Writes an `optional` field when set.
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn encode_optional<'a, K: Codec<'a>, S: Sink + ?Sized>(
    number: u32,
    slot: &Option<K::Value>,
    sink: &mut S,
    sizes: &mut SizeCursor<'_>,
) -> Result<()> {
    if let Some(v) = slot {
        put_key(sink, number, K::WIRE_TYPE)?;
        K::encode(v, sink, sizes)?;
    }
    Ok(())
}

/// Writes a boxed `optional` field when set.
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn encode_boxed<'a, K: Codec<'a>, S: Sink + ?Sized>(
    number: u32,
    slot: &Option<Box<K::Value>>,
    sink: &mut S,
    sizes: &mut SizeCursor<'_>,
) -> Result<()> {
    if let Some(v) = slot {
        put_key(sink, number, K::WIRE_TYPE)?;
        K::encode(v, sink, sizes)?;
    }
    Ok(())
}

/// Writes an implicit-presence field unless it is the default.
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn encode_implicit<'a, K: Codec<'a>, S: Sink + ?Sized>(
    number: u32,
    value: &K::Value,
    sink: &mut S,
    sizes: &mut SizeCursor<'_>,
) -> Result<()> {
    if !K::is_default(value) {
        put_key(sink, number, K::WIRE_TYPE)?;
        K::encode(value, sink, sizes)?;
    }
    Ok(())
}

/// Writes every element with its own key.
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn encode_repeated<'a, K: Codec<'a>, S: Sink + ?Sized>(
    number: u32,
    list: &[K::Value],
    sink: &mut S,
    sizes: &mut SizeCursor<'_>,
) -> Result<()> {
    for v in list {
        put_key(sink, number, K::WIRE_TYPE)?;
        K::encode(v, sink, sizes)?;
    }
    Ok(())
}

/// Writes a packed run (nothing when empty).
///
/// # Errors
/// Errors of the sink.
#[inline]
pub fn encode_packed<'a, K: PackedScalar<'a>, S: Sink + ?Sized>(
    number: u32,
    list: &[K::Value],
    sink: &mut S,
) -> Result<()> {
    if list.is_empty() {
        return Ok(());
    }
    put_key(sink, number, WireType::LengthDelimited)?;
    sink.put_varint(K::packed_len(list))?;
    K::write_packed(list, sink)
}

/// Writes a map field, entries sorted by key (protobuf's deterministic order).
///
/// # Errors
/// Errors of the sink.
pub fn encode_map<'a, KC, VC, M, S>(
    number: u32,
    map: &M,
    sink: &mut S,
    sizes: &mut SizeCursor<'_>,
) -> Result<()>
where
    KC: Codec<'a>,
    VC: Codec<'a>,
    M: MapField<KC::Value, VC::Value>,
    S: Sink + ?Sized,
{
    for (k, v) in map.sorted_entries() {
        put_key(sink, number, WireType::LengthDelimited)?;
        sink.put_varint(sizes.next_size()?)?;
        put_key(sink, 1, KC::WIRE_TYPE)?;
        KC::encode(k, sink, sizes)?;
        put_key(sink, 2, VC::WIRE_TYPE)?;
        VC::encode(v, sink, sizes)?;
    }
    Ok(())
}

// ---- maps ---------------------------------------------------------------------------

/// A map type usable as a map field: `BTreeMap` or `HashMap`.
pub trait MapField<K, V>: Default {
    /// Inserts or replaces an entry.
    fn insert_entry(&mut self, key: K, value: V);
    /// Entries in ascending key order (the order they are written in).
    fn sorted_entries(&self) -> Vec<(&K, &V)>;
}

impl<K: Ord, V> MapField<K, V> for BTreeMap<K, V> {
    fn insert_entry(&mut self, key: K, value: V) {
        self.insert(key, value);
    }
    fn sorted_entries(&self) -> Vec<(&K, &V)> {
        self.iter().collect()
    }
}

impl<K: Ord + Hash, V, H: BuildHasher + Default> MapField<K, V> for HashMap<K, V, H> {
    fn insert_entry(&mut self, key: K, value: V) {
        self.insert(key, value);
    }
    fn sorted_entries(&self) -> Vec<(&K, &V)> {
        let mut v: Vec<_> = self.iter().collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

// ---- oneofs -------------------------------------------------------------------------

/// A `oneof` group, implemented by `#[derive(ProtoOneof)]` on an enum whose variants
/// each hold one field.
pub trait Oneof {
    /// The variants as fields (name, number, type), in declaration order.
    const FIELDS: &'static [FieldDescriptor];

    /// Size of the variant if it is the one with field `number`, else 0.
    fn size_variant(&self, number: u32, sizes: &mut SizeCache) -> u64;

    /// Writes the variant if it is the one with field `number`.
    ///
    /// # Errors
    /// Errors of the sink.
    fn encode_variant<S: Sink + ?Sized>(
        &self,
        number: u32,
        sink: &mut S,
        sizes: &mut SizeCursor<'_>,
    ) -> Result<()>;
}

/// Decoding for a [`Oneof`] whose borrowed values live for `'a`.
pub trait OneofDecode<'a>: Oneof + Sized {
    /// Decodes field `key` into the oneof if it is one of its variants: a message
    /// variant seen again merges, any other variant replaces the current one.
    /// `Ok(false)`, with nothing read and the oneof unchanged, when the wire type is not
    /// the variant's (the caller keeps the field as an unknown field).
    ///
    /// # Errors
    /// Malformed value.
    fn merge_variant<'b, C: DecodeContext<'b, 'a>>(
        slot: &mut Option<Self>,
        key: FieldKey,
        r: &mut Reader<'b>,
        ctx: &mut C,
    ) -> Result<bool>;
}

/// The descriptor of the oneof variant with field `number`, renamed into oneof `name`.
/// Evaluated at compile time: a number the enum does not declare fails the build.
pub const fn oneof_field(
    fields: &'static [FieldDescriptor],
    number: u32,
    oneof: &'static str,
) -> FieldDescriptor {
    let mut i = 0;
    while i < fields.len() {
        if fields[i].number == number {
            let mut f = fields[i];
            f.oneof = Some(oneof);
            return f;
        }
        i += 1;
    }
    panic!("a number listed in #[proto(oneof(...))] is not a variant of the oneof enum");
}

/// True when `fields` declares exactly the numbers in `numbers` (compile-time check
/// that a struct's `oneof(...)` list matches its enum).
pub const fn oneof_numbers_match(fields: &'static [FieldDescriptor], numbers: &[u32]) -> bool {
    if fields.len() != numbers.len() {
        return false;
    }
    let mut i = 0;
    while i < numbers.len() {
        let mut found = false;
        let mut j = 0;
        while j < fields.len() {
            if fields[j].number == numbers[i] {
                found = true;
            }
            j += 1;
        }
        if !found {
            return false;
        }
        i += 1;
    }
    true
}
