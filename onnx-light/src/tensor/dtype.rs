//! What each [`DataType`] is: bit width, ONNX name, the Rust element type it maps to,
//! and which `TensorProto` field holds its values when `raw_data` is not used.
//!
//! This is the one table the rest of the tensor module consults; it knows nothing of
//! how values are decoded.

use crate::field::ProtoEnum;
use crate::onnx::DataType;

/// The typed (non-`raw_data`) field of a `TensorProto` that holds a data type's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypedField {
    /// `float_data` (`FLOAT`, and `COMPLEX64` as re/im pairs).
    FloatData,
    /// `int32_data` (every integer, boolean and small-float type that fits 32 bits).
    Int32Data,
    /// `string_data` (`STRING`).
    StringData,
    /// `int64_data` (`INT64`).
    Int64Data,
    /// `double_data` (`DOUBLE`, and `COMPLEX128` as re/im pairs).
    DoubleData,
    /// `uint64_data` (`UINT32`, `UINT64`).
    Uint64Data,
}

impl TypedField {
    /// The field's name in `onnx.proto`, e.g. `"int32_data"`.
    pub const fn name(self) -> &'static str {
        match self {
            TypedField::FloatData => "float_data",
            TypedField::Int32Data => "int32_data",
            TypedField::StringData => "string_data",
            TypedField::Int64Data => "int64_data",
            TypedField::DoubleData => "double_data",
            TypedField::Uint64Data => "uint64_data",
        }
    }
}

impl DataType {
    /// Every data type, in the order of their numbers (`UNDEFINED` first).
    pub const ALL: [DataType; 29] = [
        DataType::Undefined,
        DataType::Float,
        DataType::Uint8,
        DataType::Int8,
        DataType::Uint16,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::String,
        DataType::Bool,
        DataType::Float16,
        DataType::Double,
        DataType::Uint32,
        DataType::Uint64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::Bfloat16,
        DataType::Float8E4M3FN,
        DataType::Float8E4M3FNUZ,
        DataType::Float8E5M2,
        DataType::Float8E5M2FNUZ,
        DataType::Uint4,
        DataType::Int4,
        DataType::Float4E2M1,
        DataType::Float8E8M0,
        DataType::Uint2,
        DataType::Int2,
        DataType::Float6E2M3,
        DataType::Float6E3M2,
    ];

    /// The name `onnx.proto` gives the type, e.g. `"FLOAT8E4M3FN"`.
    pub fn onnx_name(self) -> &'static str {
        self.proto_name()
    }

    /// The Rust element type that [`TensorElement`](super::TensorElement) maps to this data
    /// type, as written in this crate's docs; `None` for `UNDEFINED` and `STRING`
    /// (string tensors are read with [`TensorProto::strings`](crate::onnx::TensorProto::strings)).
    pub const fn rust_type(self) -> Option<&'static str> {
        Some(match self {
            DataType::Undefined | DataType::String => return None,
            DataType::Float => "f32",
            DataType::Uint8 => "u8",
            DataType::Int8 => "i8",
            DataType::Uint16 => "u16",
            DataType::Int16 => "i16",
            DataType::Int32 => "i32",
            DataType::Int64 => "i64",
            DataType::Bool => "bool",
            DataType::Float16 => "half::f16",
            DataType::Double => "f64",
            DataType::Uint32 => "u32",
            DataType::Uint64 => "u64",
            DataType::Complex64 => "Complex32",
            DataType::Complex128 => "Complex64",
            DataType::Bfloat16 => "half::bf16",
            DataType::Float8E4M3FN => "Float8E4M3FN",
            DataType::Float8E4M3FNUZ => "Float8E4M3FNUZ",
            DataType::Float8E5M2 => "Float8E5M2",
            DataType::Float8E5M2FNUZ => "Float8E5M2FNUZ",
            DataType::Uint4 => "Uint4",
            DataType::Int4 => "Int4",
            DataType::Float4E2M1 => "Float4E2M1",
            DataType::Float8E8M0 => "Float8E8M0",
            DataType::Uint2 => "Uint2",
            DataType::Int2 => "Int2",
            DataType::Float6E2M3 => "Float6E2M3",
            DataType::Float6E3M2 => "Float6E3M2",
        })
    }

    /// The field that holds this type's values when `raw_data` is not used; `None` for
    /// `UNDEFINED`.
    pub const fn typed_field(self) -> Option<TypedField> {
        Some(match self {
            DataType::Undefined => return None,
            DataType::Float | DataType::Complex64 => TypedField::FloatData,
            DataType::Double | DataType::Complex128 => TypedField::DoubleData,
            DataType::Int64 => TypedField::Int64Data,
            DataType::Uint32 | DataType::Uint64 => TypedField::Uint64Data,
            DataType::String => TypedField::StringData,
            DataType::Uint8
            | DataType::Int8
            | DataType::Uint16
            | DataType::Int16
            | DataType::Int32
            | DataType::Bool
            | DataType::Float16
            | DataType::Bfloat16
            | DataType::Float8E4M3FN
            | DataType::Float8E4M3FNUZ
            | DataType::Float8E5M2
            | DataType::Float8E5M2FNUZ
            | DataType::Uint4
            | DataType::Int4
            | DataType::Float4E2M1
            | DataType::Float8E8M0
            | DataType::Uint2
            | DataType::Int2
            | DataType::Float6E2M3
            | DataType::Float6E3M2 => TypedField::Int32Data,
        })
    }

    /// True for the types narrower than a byte, which are packed in `raw_data`.
    pub fn is_packed(self) -> bool {
        matches!(self.bit_width(), Some(bits) if bits < 8)
    }

    /// Bytes that `elements` values take in `raw_data` (packed types rounded up to whole
    /// bytes); `None` for `UNDEFINED`, `STRING`, or a size that overflows `u64`.
    /// ([`DataType::bit_width`] gives the bits per element.)
    pub fn byte_size(self, elements: u64) -> Option<u64> {
        let bits = u64::from(self.bit_width()?);
        elements.checked_mul(bits).map(|total| total.div_ceil(8))
    }

    /// Entries of the typed field that `elements` values take: two per element for the
    /// complex types, two or four elements per `int32_data` entry for the 4- and 2-bit
    /// types, one otherwise (float6 included: one 6-bit code per entry, as the spec says).
    pub const fn typed_len(self, elements: u64) -> Option<u64> {
        match self {
            DataType::Undefined => None,
            DataType::Complex64 | DataType::Complex128 => elements.checked_mul(2),
            DataType::Uint4 | DataType::Int4 | DataType::Float4E2M1 => Some(elements.div_ceil(2)),
            DataType::Uint2 | DataType::Int2 => Some(elements.div_ceil(4)),
            _ => Some(elements),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_value_in_order() {
        assert_eq!(DataType::ALL.len(), DataType::VALUES.len());
        for (i, dt) in DataType::ALL.iter().enumerate() {
            assert_eq!(dt.to_i32(), i as i32);
            assert_eq!(dt.onnx_name(), DataType::VALUES[i].0);
        }
    }

    #[test]
    fn packed_sizes_round_up() {
        assert_eq!(DataType::Int4.byte_size(5), Some(3));
        assert_eq!(DataType::Uint2.byte_size(5), Some(2));
        assert_eq!(DataType::Float6E2M3.byte_size(5), Some(4));
        assert_eq!(DataType::Float6E2M3.byte_size(4), Some(3));
        assert_eq!(DataType::Complex128.byte_size(3), Some(48));
        assert_eq!(DataType::Float.byte_size(u64::MAX), None);
        assert_eq!(DataType::String.byte_size(1), None);
        assert_eq!(DataType::Int4.typed_len(5), Some(3));
        assert_eq!(DataType::Int2.typed_len(5), Some(2));
        assert_eq!(DataType::Float6E3M2.typed_len(5), Some(5));
        assert_eq!(DataType::Complex64.typed_len(3), Some(6));
    }

    #[test]
    fn every_defined_type_has_a_field_and_all_but_string_a_width_and_rust_type() {
        for dt in DataType::ALL {
            if dt == DataType::Undefined {
                continue;
            }
            assert!(dt.typed_field().is_some(), "{dt:?}");
            let fixed = dt != DataType::String;
            assert_eq!(dt.bit_width().is_some(), fixed, "{dt:?}");
            assert_eq!(dt.rust_type().is_some(), fixed, "{dt:?}");
        }
    }
}
