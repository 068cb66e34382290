//! Base-128 varints and zigzag encoding.

use crate::error::{ErrorKind, Result};

/// The longest valid varint: 64 bits in 7-bit groups.
pub const MAX_VARINT_LEN: usize = 10;

/// Number of bytes `value` takes as a varint (1 ..= 10).
#[inline]
pub const fn encoded_len_varint(value: u64) -> u64 {
    // Each byte carries 7 bits; `| 1` makes zero take one byte.
    let bits = 64 - (value | 1).leading_zeros() as u64;
    bits.div_ceil(7)
}

/// Writes `value` as a varint into `buf`, returning the number of bytes used.
#[inline]
pub fn encode_varint(mut value: u64, buf: &mut [u8; MAX_VARINT_LEN]) -> usize {
    let mut i = 0;
    while value >= 0x80 {
        buf[i] = (value as u8) | 0x80;
        value >>= 7;
        i += 1;
    }
    buf[i] = value as u8;
    i + 1
}

/// Decodes a varint from the front of `buf`: `(value, bytes used)`.
///
/// # Errors
/// [`ErrorKind::Truncated`] when `buf` ends inside the varint (offset relative to
/// `buf`'s start is left to the caller), [`ErrorKind::VarintOverflow`] for more than 10
/// bytes or a value over 64 bits.
#[inline]
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize), ErrorKind> {
    // Fast path: one byte covers most keys and small values.
    if let Some(&b) = buf.first() {
        if b < 0x80 {
            return Ok((u64::from(b), 1));
        }
    }
    decode_varint_slow(buf)
}

#[inline(never)]
fn decode_varint_slow(buf: &[u8]) -> Result<(u64, usize), ErrorKind> {
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().take(MAX_VARINT_LEN).enumerate() {
        if i == MAX_VARINT_LEN - 1 && b > 1 {
            // The 10th byte may only contribute the 64th bit.
            return Err(ErrorKind::VarintOverflow);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok((value, i + 1));
        }
    }
    if buf.len() >= MAX_VARINT_LEN {
        Err(ErrorKind::VarintOverflow)
    } else {
        Err(ErrorKind::Truncated {
            needed: buf.len() as u64 + 1,
            remaining: buf.len() as u64,
        })
    }
}

/// Maps signed to unsigned so that small magnitudes stay small (`sint32`).
#[inline]
pub const fn zigzag_encode32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Inverse of [`zigzag_encode32`].
#[inline]
pub const fn zigzag_decode32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Maps signed to unsigned so that small magnitudes stay small (`sint64`).
#[inline]
pub const fn zigzag_encode64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag_encode64`].
#[inline]
pub const fn zigzag_decode64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0]),
            (1, &[1]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (
                u64::MAX,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
            // int32 -1 is sign-extended to 64 bits: ten bytes.
            (
                -1i64 as u64,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ];
        for &(v, bytes) in cases {
            let mut buf = [0; MAX_VARINT_LEN];
            let n = encode_varint(v, &mut buf);
            assert_eq!(&buf[..n], bytes, "encoding {v}");
            assert_eq!(encoded_len_varint(v), n as u64);
            assert_eq!(decode_varint(bytes).unwrap(), (v, bytes.len()));
        }
    }

    #[test]
    fn eleven_bytes_overflow() {
        let bytes = [0x80u8; 11];
        assert_eq!(decode_varint(&bytes), Err(ErrorKind::VarintOverflow));
    }

    #[test]
    fn tenth_byte_above_one_overflows() {
        let mut bytes = [0xffu8; 10];
        bytes[9] = 0x02;
        assert_eq!(decode_varint(&bytes), Err(ErrorKind::VarintOverflow));
    }

    #[test]
    fn non_canonical_padding_is_accepted() {
        // protobuf accepts redundant continuation bytes as long as they fit in 10.
        assert_eq!(decode_varint(&[0x81, 0x80, 0x00]).unwrap(), (1, 3));
    }

    #[test]
    fn truncated_varint() {
        assert!(matches!(
            decode_varint(&[0x80, 0x80]),
            Err(ErrorKind::Truncated { .. })
        ));
        assert!(matches!(
            decode_varint(&[]),
            Err(ErrorKind::Truncated { .. })
        ));
    }

    #[test]
    fn zigzag_known_values() {
        assert_eq!(zigzag_encode32(0), 0);
        assert_eq!(zigzag_encode32(-1), 1);
        assert_eq!(zigzag_encode32(1), 2);
        assert_eq!(zigzag_encode32(i32::MIN), u32::MAX);
        assert_eq!(zigzag_encode64(i64::MIN), u64::MAX);
        assert_eq!(zigzag_encode64(i64::MAX), u64::MAX - 1);
    }

    proptest! {
        #[test]
        fn varint_round_trips(v: u64) {
            let mut buf = [0; MAX_VARINT_LEN];
            let n = encode_varint(v, &mut buf);
            prop_assert_eq!(n as u64, encoded_len_varint(v));
            prop_assert_eq!(decode_varint(&buf[..n]).unwrap(), (v, n));
        }

        #[test]
        fn zigzag_round_trips(a: i32, b: i64) {
            prop_assert_eq!(zigzag_decode32(zigzag_encode32(a)), a);
            prop_assert_eq!(zigzag_decode64(zigzag_encode64(b)), b);
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes: Vec<u8>) {
            let _ = decode_varint(&bytes);
        }
    }
}
