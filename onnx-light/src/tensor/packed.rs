//! Element types narrower than a byte — `INT4`, `UINT4`, `INT2`, `UINT2`, and (from
//! [`super::minifloat`]) `FLOAT4E2M1`, `FLOAT6E2M3`, `FLOAT6E3M2` — and their packing.
//!
//! ONNX packs them as one little-endian bit stream: element `i` occupies bits
//! `i * BITS .. (i + 1) * BITS`, least-significant bit first, so for 4-bit types the first
//! element is the low nibble; the last byte is zero-padded. In memory each element is one
//! byte (these types), unpacked.

use std::fmt;

use super::minifloat::{Float4E2M1, Float6E2M3, Float6E3M2};
use crate::error::{Error, ErrorKind, Result};

/// An element type stored in fewer than 8 bits, packed in tensors.
///
/// Implemented for [`Int4`], [`Uint4`], [`Int2`], [`Uint2`], [`Float4E2M1`],
/// [`Float6E2M3`] and [`Float6E3M2`]; sealed.
pub trait PackedElement: sealed::Code {
    /// Bits per element.
    const BITS: u32;
}

pub(crate) mod sealed {
    /// The element's bit pattern (in the low `BITS` bits).
    pub trait Code: Copy {
        fn code(self) -> u8;
        fn from_code(code: u8) -> Self;
    }
}

/// Bytes that `count` elements of `bits` bits take when packed (rounded up).
pub(crate) fn packed_len(count: usize, bits: u32) -> Option<usize> {
    count.checked_mul(bits as usize).map(|b| b.div_ceil(8))
}

/// Packs `values` into bytes, least-significant bits first, padding the last byte with
/// zero bits.
///
/// ```
/// use onnx_light::tensor::{pack, Int4};
/// let v = [Int4::new(1).unwrap(), Int4::new(-1).unwrap(), Int4::new(7).unwrap()];
/// assert_eq!(pack(&v), [0xF1, 0x07]);
/// ```
pub fn pack<T: PackedElement>(values: &[T]) -> Vec<u8> {
    let bits = T::BITS as usize;
    // `values.len() * bits` cannot overflow: `values` is in memory, one byte per element.
    let mut out = vec![0u8; (values.len() * bits).div_ceil(8)];
    for (i, v) in values.iter().enumerate() {
        let bit = i * bits;
        let code = u16::from(v.code()) << (bit % 8);
        let byte = bit / 8;
        out[byte] |= code as u8;
        if code > 0xFF {
            out[byte + 1] |= (code >> 8) as u8;
        }
    }
    out
}

/// Unpacks the first `count` elements of `packed` (see [`pack`]).
///
/// # Errors
/// [`ErrorKind::TensorDataMismatch`] when `packed` holds fewer than `count` elements.
/// Extra bytes are ignored.
pub fn unpack<T: PackedElement>(packed: &[u8], count: usize) -> Result<Vec<T>> {
    let needed = packed_len(count, T::BITS);
    if needed.is_none_or(|n| n > packed.len()) {
        return Err(Error::new(ErrorKind::TensorDataMismatch {
            field: "packed data",
            expected: needed.map_or(u64::MAX, |n| n as u64),
            actual: packed.len() as u64,
        }));
    }
    Ok(unpack_codes(packed, count, T::BITS)
        .map(T::from_code)
        .collect())
}

/// The codes of up to `count` elements of `bits` bits in `packed`; stops early (never
/// panics) if `packed` is short.
pub(crate) fn unpack_codes(
    packed: &[u8],
    count: usize,
    bits: u32,
) -> impl Iterator<Item = u8> + '_ {
    let bits = bits as usize;
    let mask = (1u16 << bits) - 1;
    (0..count).map_while(move |i| {
        let bit = i * bits;
        let byte = bit / 8;
        let lo = u16::from(*packed.get(byte)?);
        let hi = u16::from(packed.get(byte + 1).copied().unwrap_or(0));
        Some(((((hi << 8) | lo) >> (bit % 8)) & mask) as u8)
    })
}

macro_rules! small_int {
    (
        $(#[$doc:meta])*
        $name:ident($repr:ty),
        bits: $bits:literal, min: $min:literal, max: $max:literal, signed: $signed:literal
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        pub struct $name($repr);

        impl $name {
            /// The smallest value.
            pub const MIN: Self = Self($min);
            /// The largest value.
            pub const MAX: Self = Self($max);

            /// The value `v`, or `None` when it is out of range.
            pub const fn new(v: $repr) -> Option<Self> {
                if matches!(v, $min..=$max) {
                    Some(Self(v))
                } else {
                    None
                }
            }

            /// The value whose two's-complement bit pattern is the low bits of `bits`.
            pub const fn from_bits(bits: u8) -> Self {
                let code = bits & ((1 << $bits) - 1);
                if $signed {
                    // Sign-extend from the element's top bit.
                    Self((((code << (8 - $bits)) as i8) >> (8 - $bits)) as $repr)
                } else {
                    Self(code as $repr)
                }
            }

            /// The bit pattern, in the low bits.
            pub const fn to_bits(self) -> u8 {
                (self.0 as u8) & ((1 << $bits) - 1)
            }

            /// The value.
            pub const fn get(self) -> $repr {
                self.0
            }
        }

        impl From<$name> for $repr {
            fn from(v: $name) -> $repr {
                v.0
            }
        }

        impl From<$name> for i32 {
            fn from(v: $name) -> i32 {
                i32::from(v.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl sealed::Code for $name {
            fn code(self) -> u8 {
                self.to_bits()
            }
            fn from_code(code: u8) -> Self {
                Self::from_bits(code)
            }
        }

        impl PackedElement for $name {
            const BITS: u32 = $bits;
        }
    };
}

small_int! {
    /// `INT4`: a signed integer in `-8 ..= 7`, packed two per byte in tensors.
    Int4(i8), bits: 4, min: -8, max: 7, signed: true
}
small_int! {
    /// `UINT4`: an unsigned integer in `0 ..= 15`, packed two per byte in tensors.
    Uint4(u8), bits: 4, min: 0, max: 15, signed: false
}
small_int! {
    /// `INT2`: a signed integer in `-2 ..= 1`, packed four per byte in tensors.
    Int2(i8), bits: 2, min: -2, max: 1, signed: true
}
small_int! {
    /// `UINT2`: an unsigned integer in `0 ..= 3`, packed four per byte in tensors.
    Uint2(u8), bits: 2, min: 0, max: 3, signed: false
}

macro_rules! packed_float {
    ($name:ident, $bits:literal) => {
        impl sealed::Code for $name {
            fn code(self) -> u8 {
                self.to_bits()
            }
            fn from_code(code: u8) -> Self {
                Self::from_bits(code)
            }
        }

        impl PackedElement for $name {
            const BITS: u32 = $bits;
        }
    };
}

packed_float!(Float4E2M1, 4);
packed_float!(Float6E2M3, 6);
packed_float!(Float6E3M2, 6);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ints_cover_their_range_and_sign_extend() {
        let int4: Vec<i8> = (0..16).map(|c| Int4::from_bits(c).get()).collect();
        assert_eq!(
            int4,
            [0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1]
        );
        let int2: Vec<i8> = (0..4).map(|c| Int2::from_bits(c).get()).collect();
        assert_eq!(int2, [0, 1, -2, -1]);
        for c in 0..16u8 {
            assert_eq!(Int4::from_bits(c).to_bits(), c);
            assert_eq!(Uint4::from_bits(c).to_bits(), c);
            assert_eq!(Uint4::from_bits(c).get(), c);
        }
        assert_eq!(Int4::new(8), None);
        assert_eq!(Int4::new(-9), None);
        assert_eq!(Uint2::new(4), None);
        assert_eq!(Int2::new(-2), Some(Int2::MIN));
        assert_eq!(Uint4::MAX.get(), 15);
    }

    #[test]
    fn four_bit_packing_puts_the_first_element_in_the_low_nibble() {
        let v: Vec<Uint4> = [1, 2, 3].iter().map(|&x| Uint4::new(x).unwrap()).collect();
        assert_eq!(pack(&v), [0x21, 0x03]);
        assert_eq!(unpack::<Uint4>(&[0x21, 0x03], 3).unwrap(), v);
    }

    #[test]
    fn two_bit_packing_fills_bytes_from_the_low_bits() {
        let v: Vec<Uint2> = [1, 2, 3, 0, 3]
            .iter()
            .map(|&x| Uint2::new(x).unwrap())
            .collect();
        assert_eq!(pack(&v), [0b00_11_10_01, 0b11]);
        assert_eq!(unpack::<Uint2>(&pack(&v), 5).unwrap(), v);
    }

    #[test]
    fn six_bit_packing_matches_the_spec_formula() {
        // byte0 = x0 | (x1 & 3) << 6; byte1 = x1 >> 2 | (x2 & 0xF) << 4; byte2 = x2 >> 4 | x3 << 2
        let codes = [0x3Fu8, 0x15, 0x2A, 0x01, 0x33];
        let v: Vec<Float6E2M3> = codes.iter().map(|&c| Float6E2M3::from_bits(c)).collect();
        let (x0, x1, x2, x3) = (codes[0], codes[1], codes[2], codes[3]);
        let expected = [
            x0 | ((x1 & 3) << 6),
            (x1 >> 2) | ((x2 & 0xF) << 4),
            (x2 >> 4) | (x3 << 2),
            codes[4],
        ];
        assert_eq!(pack(&v), expected);
        assert_eq!(unpack::<Float6E2M3>(&expected, 5).unwrap(), v);
        assert_eq!(packed_len(5, 6), Some(4));
    }

    #[test]
    fn every_code_sequence_round_trips_for_every_width() {
        // All codes in every position of a 4-element group, with a ragged tail.
        fn check<T: PackedElement + PartialEq + std::fmt::Debug>() {
            let n = 1usize << T::BITS;
            let values: Vec<T> = (0..n * 3 + 1)
                .map(|i| T::from_code((i * 7 % n) as u8))
                .collect();
            for len in 0..values.len() {
                let packed = pack(&values[..len]);
                assert_eq!(packed.len(), packed_len(len, T::BITS).unwrap());
                assert_eq!(unpack::<T>(&packed, len).unwrap(), &values[..len]);
            }
        }
        check::<Int4>();
        check::<Uint4>();
        check::<Int2>();
        check::<Uint2>();
        check::<Float4E2M1>();
        check::<Float6E2M3>();
        check::<Float6E3M2>();
    }

    #[test]
    fn unpacking_short_data_is_an_error_not_a_short_read() {
        let e = unpack::<Int4>(&[0x12], 3).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::TensorDataMismatch {
                expected: 2,
                actual: 1,
                ..
            }
        ));
        assert_eq!(unpack_codes(&[0x12], 3, 4).count(), 2);
    }
}
