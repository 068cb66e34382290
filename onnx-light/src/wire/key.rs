//! Field keys (tags): a field number and a wire type in one varint.

use crate::error::{Error, ErrorKind, Result};

/// The largest field number protobuf allows (2^29 - 1).
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// The longest key protobuf's parsers read: they read keys as 32-bit varints, so a key
/// padded to more than five bytes is malformed even when its value is small.
pub const MAX_KEY_LEN: usize = 5;

/// How a field's value is laid out on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WireType {
    /// A base-128 varint (int32, int64, uint*, sint*, bool, enum).
    Varint = 0,
    /// Eight little-endian bytes (fixed64, sfixed64, double).
    Fixed64 = 1,
    /// A varint length followed by that many bytes (string, bytes, messages, packed).
    LengthDelimited = 2,
    /// Start of a group (deprecated; skipped with its contents).
    StartGroup = 3,
    /// End of a group.
    EndGroup = 4,
    /// Four little-endian bytes (fixed32, sfixed32, float).
    Fixed32 = 5,
}

impl WireType {
    /// The wire type for the low three bits of a key.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidWireType`] for 6 and 7.
    #[inline]
    pub fn from_bits(bits: u8) -> Result<WireType, ErrorKind> {
        Ok(match bits {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::LengthDelimited,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            other => return Err(ErrorKind::InvalidWireType(other)),
        })
    }
}

/// A decoded key: which field, and how its value is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldKey {
    /// The field number, 1 ..= [`MAX_FIELD_NUMBER`].
    pub number: u32,
    /// The wire type of the value that follows.
    pub wire_type: WireType,
}

impl FieldKey {
    /// A key for `number` and `wire_type`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidFieldNumber`] when `number` is 0 or above [`MAX_FIELD_NUMBER`].
    pub fn new(number: u32, wire_type: WireType) -> Result<FieldKey> {
        if number == 0 || number > MAX_FIELD_NUMBER {
            return Err(Error::new(ErrorKind::InvalidFieldNumber(number.into())));
        }
        Ok(FieldKey { number, wire_type })
    }

    /// Splits a raw key varint into number and wire type, validating both.
    #[inline]
    pub fn from_raw(raw: u64) -> Result<FieldKey, ErrorKind> {
        let wire_type = WireType::from_bits((raw & 7) as u8)?;
        let number = raw >> 3;
        if number == 0 || number > u64::from(MAX_FIELD_NUMBER) {
            return Err(ErrorKind::InvalidFieldNumber(number));
        }
        Ok(FieldKey {
            number: number as u32,
            wire_type,
        })
    }

    /// The raw key varint.
    #[inline]
    pub const fn to_raw(self) -> u64 {
        ((self.number as u64) << 3) | self.wire_type as u64
    }
}
