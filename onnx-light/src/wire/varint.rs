//! Base-128 varints and zigzag encoding.

use crate::error::{ErrorKind, Result};

/// The longest valid varint: 64 bits in 7-bit groups.
pub const MAX_VARINT_LEN: usize = 10;

/// Number of bytes `value` takes as a varint (1 ..= 10).
#[inline]
pub const fn encoded_len_varint(value: u64) -> u64 {
    // Each byte carries 7 bits: ceil((h + 1) / 7) bytes for highest set bit h, which is
    // (h * 9 + 73) / 64 for every h in 0..=63 (a multiply and a shift instead of a
    // division). `| 1` makes zero take one byte.
    let h = 63 - (value | 1).leading_zeros() as u64;
    (h * 9 + 73) / 64
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
/// bytes. Bits past the 64th (a 10th byte above 1) are dropped, as protobuf's parsers
/// drop them: the varint is valid and reads as its low 64 bits.
#[inline]
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize), ErrorKind> {
    // Fast paths, inlined at every call site: one byte covers keys and small values,
    // two bytes cover lengths and values below 16384.
    match *buf {
        [b0, ..] if b0 < 0x80 => Ok((u64::from(b0), 1)),
        [b0, b1, ..] if b1 < 0x80 => Ok((u64::from(b0 & 0x7f) | (u64::from(b1) << 7), 2)),
        _ => decode_varint_slow(buf),
    }
}

#[inline(never)]
fn decode_varint_slow(buf: &[u8]) -> Result<(u64, usize), ErrorKind> {
    // Away from the end of the input, ten bytes are known to be there: a fixed-size
    // array lets the loop unroll without a bounds check per byte.
    if let Some(bytes) = buf.first_chunk::<MAX_VARINT_LEN>() {
        return decode_varint_unrolled(bytes).ok_or(ErrorKind::VarintOverflow);
    }
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().take(MAX_VARINT_LEN).enumerate() {
        // In the 10th byte only the lowest bit lands inside 64 bits; the shift drops
        // the others.
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

/// Decodes a varint from ten bytes known to be there: `(value, bytes used)`, or `None`
/// for a varint longer than ten bytes. Bits past the 64th are dropped, as in
/// [`decode_varint`]. Fully unrolled, no bounds checks.
#[inline(always)]
pub(crate) fn decode_varint_unrolled(bytes: &[u8; MAX_VARINT_LEN]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
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
    fn bits_past_the_64th_are_dropped_as_protobuf_drops_them() {
        // Nine bytes of ones and a 10th byte of 0x02: bit 64 falls off, leaving 2^63 - 1.
        let mut bytes = [0xffu8; 10];
        bytes[9] = 0x02;
        assert_eq!(decode_varint(&bytes), Ok((i64::MAX as u64, 10)));
        bytes[9] = 0x7f;
        assert_eq!(decode_varint(&bytes), Ok((u64::MAX, 10)));
        // The same near the end of the input (the loop) and away from it (unrolled).
        let mut padded = bytes.to_vec();
        padded.extend_from_slice(&[0; 4]);
        assert_eq!(decode_varint(&padded), Ok((u64::MAX, 10)));
    }

    #[test]
    fn non_canonical_padding_is_accepted() {
        // protobuf accepts redundant continuation bytes as long as they fit in 10.
        assert_eq!(decode_varint(&[0x81, 0x80, 0x00]).unwrap(), (1, 3));
        let mut zero = [0x80u8; 10];
        zero[9] = 0x00;
        assert_eq!(decode_varint(&zero).unwrap(), (0, 10));
        assert_eq!(decode_varint(&[0x80, 0x00]).unwrap(), (0, 2));
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

    #[test]
    fn encoded_len_at_every_width_boundary() {
        for bits in 0..64u32 {
            let v = 1u64 << bits;
            assert_eq!(encoded_len_varint(v), u64::from(bits / 7 + 1), "2^{bits}");
            assert_eq!(
                encoded_len_varint(v - 1),
                u64::from(bits.max(1).div_ceil(7)),
                "2^{bits}-1"
            );
        }
        assert_eq!(encoded_len_varint(0), 1);
        assert_eq!(encoded_len_varint(u64::MAX), 10);
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
        fn decoding_agrees_near_and_away_from_the_end(v: u64, pad in 0usize..12) {
            // Varints followed by `pad` bytes of padding take the short-input loop or
            // the unrolled path; both must agree.
            let mut buf = vec![0xff; MAX_VARINT_LEN + pad];
            let n = encode_varint(v, (&mut buf[..MAX_VARINT_LEN]).try_into().unwrap());
            buf.drain(n..MAX_VARINT_LEN);
            prop_assert_eq!(decode_varint(&buf).unwrap(), (v, n));
        }

        #[test]
        fn padded_errors_match(mut bytes: Vec<u8>, pad in 0usize..12) {
            // The unrolled path must report exactly what the loop reports.
            bytes.truncate(MAX_VARINT_LEN);
            let short = decode_varint(&bytes);
            let mut padded = bytes.clone();
            padded.extend(std::iter::repeat_n(0u8, pad));
            match short {
                Ok(ok) => prop_assert_eq!(decode_varint(&padded).unwrap(), ok),
                Err(ErrorKind::VarintOverflow) => {
                    prop_assert_eq!(decode_varint(&padded), Err(ErrorKind::VarintOverflow))
                }
                Err(_) => {} // truncated: padding completes it
            }
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes: Vec<u8>) {
            let _ = decode_varint(&bytes);
        }
    }
}
