//! Fields a message type does not declare, kept verbatim so that a model written by a
//! newer schema survives a load/save round trip.

use std::fmt;

use super::bytes::Bytes;
use crate::error::Result;
use crate::wire::{encode_varint, FieldKey, Sink, WireType, MAX_VARINT_LEN};

/// One undeclared field: its key and its exact encoded bytes (key included).
#[derive(Clone, PartialEq, Eq)]
pub struct UnknownField<'a> {
    key: FieldKey,
    raw: Bytes<'a>,
}

impl<'a> UnknownField<'a> {
    /// A field from its key and its exact encoded bytes, key included, as read from the
    /// input. The decoder calls this; the bytes are written back unchanged.
    pub fn from_raw(key: FieldKey, raw: Bytes<'a>) -> Self {
        UnknownField { key, raw }
    }

    fn encode_new(key: FieldKey, value: &[u8]) -> UnknownField<'static> {
        let mut raw = Vec::with_capacity(MAX_VARINT_LEN + value.len());
        let mut buf = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(key.to_raw(), &mut buf);
        raw.extend_from_slice(&buf[..n]);
        raw.extend_from_slice(value);
        UnknownField {
            key,
            raw: Bytes::from(raw),
        }
    }

    /// A varint field.
    ///
    /// # Errors
    /// `InvalidFieldNumber` for 0 or a number above 2^29 - 1.
    pub fn varint(number: u32, value: u64) -> Result<UnknownField<'static>> {
        let mut buf = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(value, &mut buf);
        Ok(Self::encode_new(
            FieldKey::new(number, WireType::Varint)?,
            &buf[..n],
        ))
    }

    /// A length-delimited field.
    ///
    /// # Errors
    /// `InvalidFieldNumber` for 0 or a number above 2^29 - 1.
    pub fn length_delimited(number: u32, value: &[u8]) -> Result<UnknownField<'static>> {
        let mut v = Vec::with_capacity(MAX_VARINT_LEN + value.len());
        let mut buf = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(value.len() as u64, &mut buf);
        v.extend_from_slice(&buf[..n]);
        v.extend_from_slice(value);
        Ok(Self::encode_new(
            FieldKey::new(number, WireType::LengthDelimited)?,
            &v,
        ))
    }

    /// A fixed32 field.
    ///
    /// # Errors
    /// `InvalidFieldNumber` for 0 or a number above 2^29 - 1.
    pub fn fixed32(number: u32, value: u32) -> Result<UnknownField<'static>> {
        Ok(Self::encode_new(
            FieldKey::new(number, WireType::Fixed32)?,
            &value.to_le_bytes(),
        ))
    }

    /// A fixed64 field.
    ///
    /// # Errors
    /// `InvalidFieldNumber` for 0 or a number above 2^29 - 1.
    pub fn fixed64(number: u32, value: u64) -> Result<UnknownField<'static>> {
        Ok(Self::encode_new(
            FieldKey::new(number, WireType::Fixed64)?,
            &value.to_le_bytes(),
        ))
    }

    /// The field's key.
    pub fn key(&self) -> FieldKey {
        self.key
    }

    /// The field number.
    pub fn number(&self) -> u32 {
        self.key.number
    }

    /// The exact encoded bytes, key included.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The encoded value: the bytes after the key (for length-delimited fields, the
    /// length prefix and the payload; for groups, the contents and the end key).
    pub fn value_bytes(&self) -> &[u8] {
        let key_len = crate::wire::encoded_len_varint(self.key.to_raw()) as usize;
        self.raw.get(key_len..).unwrap_or(&[])
    }

    /// The same field with no borrow.
    pub fn into_owned(self) -> UnknownField<'static> {
        UnknownField {
            key: self.key,
            raw: self.raw.into_owned(),
        }
    }
}

impl fmt::Debug for UnknownField<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownField")
            .field("number", &self.key.number)
            .field("wire_type", &self.key.wire_type)
            .field("len", &self.raw.len())
            .finish()
    }
}

/// The undeclared fields of one message, in input order. Written back after the
/// declared fields, as protobuf does.
///
/// One pointer wide when empty (nearly always): every message has one, so this keeps
/// the in-memory size of decoded models down.
#[derive(Clone, Default)]
pub struct UnknownFields<'a> {
    // Boxed on purpose: one pointer instead of a `Vec`'s three in every message.
    #[allow(clippy::box_collection)]
    fields: Option<Box<Vec<UnknownField<'a>>>>,
}

impl<'a> UnknownFields<'a> {
    /// No fields.
    pub const fn new() -> Self {
        UnknownFields { fields: None }
    }

    fn as_slice(&self) -> &[UnknownField<'a>] {
        self.fields.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Appends a field.
    pub fn push(&mut self, field: UnknownField<'a>) {
        self.fields.get_or_insert_with(Box::default).push(field);
    }

    /// The fields in order.
    pub fn iter(&self) -> std::slice::Iter<'_, UnknownField<'a>> {
        self.as_slice().iter()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Removes every field.
    pub fn clear(&mut self) {
        self.fields = None;
    }

    /// Encoded size of all fields.
    pub fn encoded_len(&self) -> u64 {
        self.iter().map(|f| f.raw.len() as u64).sum()
    }

    /// Writes all fields verbatim.
    ///
    /// # Errors
    /// Errors of the sink.
    pub fn encode<S: Sink + ?Sized>(&self, sink: &mut S) -> Result<()> {
        for f in self.iter() {
            sink.put(&f.raw)?;
        }
        Ok(())
    }

    /// The same fields with no borrow.
    pub fn into_owned(self) -> UnknownFields<'static> {
        UnknownFields {
            fields: self
                .fields
                .map(|v| Box::new(v.into_iter().map(UnknownField::into_owned).collect())),
        }
    }
}

impl PartialEq for UnknownFields<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for UnknownFields<'_> {}

impl<'s, 'a> IntoIterator for &'s UnknownFields<'a> {
    type Item = &'s UnknownField<'a>;
    type IntoIter = std::slice::Iter<'s, UnknownField<'a>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for UnknownFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
