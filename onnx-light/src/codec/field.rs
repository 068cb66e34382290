//! Field shapes: how a codec's values sit in a message field (optional with presence,
//! implicit presence, repeated unpacked or packed, boxed, map, oneof). Generated code
//! calls these with the codec as a type parameter.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::mem::size_of;

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
/// # Errors
/// Wrong wire type or malformed value.
#[inline]
pub fn merge_optional<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut Option<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()> {
    r.expect(key, K::WIRE_TYPE)?;
    K::merge(slot.get_or_insert_with(Default::default), r, ctx)
}

/// `optional` message held in a `Box` (recursive types).
///
/// # Errors
/// Wrong wire type or malformed value.
#[inline]
pub fn merge_boxed<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut Option<Box<K::Value>>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()> {
    r.expect(key, K::WIRE_TYPE)?;
    if slot.is_none() {
        ctx.charge(size_of::<K::Value>() as u64, r.offset())?;
    }
    K::merge(slot.get_or_insert_with(Default::default), r, ctx)
}

/// Implicit-presence field.
///
/// # Errors
/// Wrong wire type or malformed value.
#[inline]
pub fn merge_implicit<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    slot: &mut K::Value,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()> {
    r.expect(key, K::WIRE_TYPE)?;
    K::merge(slot, r, ctx)
}

/// Repeated non-scalar field (strings, bytes, messages): one element per key.
///
/// # Errors
/// Wrong wire type or malformed value.
#[inline]
pub fn merge_repeated<'a, 'b, K: Codec<'a>, C: DecodeContext<'b, 'a>>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()> {
    r.expect(key, K::WIRE_TYPE)?;
    if list.len() == list.capacity() {
        // Allocate the run of elements that starts here at once, at its exact size: no
        // regrowth (and copies) of long lists, no capacity of 4 for a list of one. At
        // least doubling when the list is already there, so that a field interleaved
        // with others still grows geometrically.
        let additional = r.count_run(key).max(list.len());
        ctx.charge(bytes_of::<K::Value>(additional), r.offset())?;
        list.reserve_exact(additional);
    }
    // Decoded in place: large message values are not moved after decoding.
    list.push(K::Value::default());
    let index = list.len() - 1;
    if let Err(e) = K::merge(&mut list[index], r, ctx) {
        list.pop();
        return Err(e);
    }
    Ok(())
}

/// Repeated scalar field: accepts packed and unpacked encodings, even mixed.
///
/// # Errors
/// Wrong wire type or malformed value.
#[inline]
pub fn merge_repeated_scalar<'a, 'b, K: PackedScalar<'a>, C: DecodeContext<'b, 'a>>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()> {
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
        return K::read_packed(&mut packed, list);
    }
    r.expect(key, K::WIRE_TYPE)?;
    if list.len() == list.capacity() {
        // What the push below may reserve: doubling, at least 4.
        ctx.charge(bytes_of::<K::Value>(list.len().max(4)), r.offset())?;
    }
    let mut v = K::Value::default();
    K::merge(&mut v, r, ctx)?;
    list.push(v);
    Ok(())
}

/// The memory of `n` values of `T`.
#[inline]
fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(size_of::<T>() as u64)
}

/// Map field: each entry is a nested message with the key as field 1 and the value as
/// field 2 (either may be missing: the default is used). A later entry with the same
/// key replaces an earlier one.
///
/// # Errors
/// Wrong wire type or malformed entry.
pub fn merge_map<'a, 'b, KC, VC, M, C>(
    map: &mut M,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Result<()>
where
    KC: Codec<'a>,
    VC: Codec<'a>,
    M: MapField<KC::Value, VC::Value>,
    C: DecodeContext<'b, 'a>,
{
    r.expect(key, WireType::LengthDelimited)?;
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
            1 => {
                entry.expect(fk, KC::WIRE_TYPE)?;
                KC::merge(&mut k, &mut entry, ctx)?;
            }
            2 => {
                entry.expect(fk, VC::WIRE_TYPE)?;
                VC::merge(&mut v, &mut entry, ctx)?;
            }
            _ => entry.skip(fk)?,
        }
    }
    map.insert_entry(k, v);
    Ok(())
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
    ///
    /// # Errors
    /// Wrong wire type or malformed value.
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
