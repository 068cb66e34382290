//! Numbers as the ONNX printer writes them: C++ `std::to_chars` without a format, i.e.
//! the shortest digits that read back to the same value, written in fixed or scientific
//! notation, whichever is shorter (fixed on a tie), with an exponent of at least two
//! digits (`1e+08`, `1e-05`, `0.001`, `123456789012`), and `nan` / `-nan` for NaN.

/// Defines a writer of one float type as `std::to_chars` writes it: the value taken
/// apart (`MANTISSA` stored bits, exponent `BIAS`), and its shortest digits from `zmij`,
/// a Schubfach implementation giving the same shortest digits as the Ryu algorithm of
/// the C++ library.
macro_rules! float_writer {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $mantissa:expr, $bias:expr) => {
        $(#[$doc])*
        pub(crate) fn $name(out: &mut Vec<u8>, v: $ty) {
            let bits = u64::from(v.to_bits());
            let frac = bits & ((1u64 << $mantissa) - 1);
            let sign = 1u64 << (8 * std::mem::size_of::<$ty>() - 1);
            let exp = (bits & !sign) >> $mantissa;
            let (m, e) = if exp == 0 {
                (frac, 1 - $bias - $mantissa)
            } else {
                (frac | 1 << $mantissa, exp as i32 - $bias - $mantissa)
            };
            let parts = Parts {
                negative: v.is_sign_negative(),
                nan: v.is_nan(),
                infinite: v.is_infinite(),
                zero: v == 0.0,
                m,
                e,
            };
            let mut b = zmij::Buffer::new();
            let shortest = if v.is_finite() {
                b.format_finite(v.abs())
            } else {
                ""
            };
            write_float(out, parts, shortest.as_bytes(), || v.abs() as u128);
        }
    };
}

float_writer!(
    /// Writes `f32` as `std::to_chars(float)` does.
    write_f32, f32, 23, 127
);
float_writer!(
    /// Writes `f64` as `std::to_chars(double)` does.
    write_f64, f64, 52, 1023
);

/// Writes an integer in decimal (without `core::fmt`, which costs more than the digits).
pub(crate) fn write_int(out: &mut Vec<u8>, v: impl Into<i128>) {
    let v: i128 = v.into();
    if v < 0 {
        out.push(b'-');
    }
    write_u128(out, v.unsigned_abs());
}

/// The decimal digits of `v`, written at the end of `buf`.
fn decimal_digits(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

fn write_u128(out: &mut Vec<u8>, v: u128) {
    let mut buf = [0u8; 40];
    out.extend_from_slice(decimal_digits_u128(v, &mut buf));
}

/// The decimal digits of `v`, written at the end of `buf`.
fn decimal_digits_u128(mut v: u128, buf: &mut [u8; 40]) -> &[u8] {
    if let Ok(small) = u64::try_from(v) {
        let mut tmp = [0u8; 20];
        let digits = decimal_digits(small, &mut tmp);
        let start = buf.len() - digits.len();
        buf[start..].copy_from_slice(digits);
        return &buf[start..];
    }
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

/// A float taken apart: its class, and `|value| = m * 2^e` when finite.
struct Parts {
    negative: bool,
    nan: bool,
    infinite: bool,
    zero: bool,
    m: u64,
    e: i32,
}

/// True when `2 * m * 2^e == odd * 10^k` exactly (`odd` is odd): the value lies exactly
/// halfway between two neighbouring decimals of `k`'s last digit.
fn is_exact_half(m: u64, e: i32, odd: u64, k: i32) -> bool {
    if m == 0 {
        return false;
    }
    let twos = m.trailing_zeros() as i32;
    let m_odd = u128::from(m >> twos);
    // Powers of two: m_odd * 2^(twos + e + 1) against odd * 5^k * 2^k.
    if twos + e + 1 != k {
        return false;
    }
    let pow5 = |n: i32| -> Option<u128> { 5u128.checked_pow(u32::try_from(n).ok()?) };
    if k >= 0 {
        pow5(k).and_then(|p| p.checked_mul(u128::from(odd))) == Some(m_odd)
    } else {
        pow5(-k).and_then(|p| p.checked_mul(m_odd)) == Some(u128::from(odd))
    }
}

fn write_float(out: &mut Vec<u8>, f: Parts, shortest: &[u8], exact_integer: impl FnOnce() -> u128) {
    if f.nan {
        out.extend_from_slice(if f.negative { b"-nan" } else { b"nan" });
        return;
    }
    if f.negative {
        out.push(b'-');
    }
    if f.infinite {
        out.extend_from_slice(b"inf");
        return;
    }
    if f.zero {
        out.push(b'0');
        return;
    }
    // `shortest` holds the shortest digits that read back to the value, in some
    // notation (`123.45`, `0.0001`, `1.5e-7`, `1e20`): take its significant digits,
    // worth `digits * 10^k`.
    let mut buf = [0u8; 24];
    let mut n = 0usize;
    let mut k: i32 = 0;
    let mut after_point = false;
    let mut at = 0;
    while at < shortest.len() {
        let c = shortest[at];
        match c {
            b'.' => after_point = true,
            b'0'..=b'9' => {
                if after_point {
                    k -= 1;
                }
                if (n > 0 || c != b'0') && n < buf.len() {
                    buf[n] = c;
                    n += 1;
                }
            }
            _ => break, // the exponent
        }
        at += 1;
    }
    if at < shortest.len() {
        let mut exp: i32 = 0;
        let mut negative = false;
        for &c in &shortest[at + 1..] {
            match c {
                b'-' => negative = true,
                b'0'..=b'9' => exp = exp * 10 + i32::from(c - b'0'),
                _ => {}
            }
        }
        k += if negative { -exp } else { exp };
    }
    while n > 1 && buf[n - 1] == b'0' {
        n -= 1;
        k += 1;
    }
    // When the value lies exactly halfway between two shortest candidates, C++ takes the
    // one whose last digit is even (whichever the digit generator took). A tie needs
    // the powers of two to match first, so the digits are rarely turned into a number.
    if n > 0 && buf[n - 1] % 2 == 1 && may_be_half(f.m, f.e, k) {
        let d = buf[..n]
            .iter()
            .fold(0u64, |d, &c| d * 10 + u64::from(c - b'0'));
        let even = if is_exact_half(f.m, f.e, 2 * d - 1, k) {
            Some(d - 1)
        } else if is_exact_half(f.m, f.e, 2 * d + 1, k) {
            Some(d + 1)
        } else {
            None
        };
        if let Some(mut d) = even {
            while d > 0 && d.is_multiple_of(10) {
                d /= 10;
                k += 1;
            }
            let mut tmp = [0u8; 20];
            let digits = decimal_digits(d, &mut tmp);
            n = digits.len();
            buf[..n].copy_from_slice(digits);
        }
    }
    let digits = &buf[..n];
    let n = n as i32;
    let sci_exp = k + n - 1;
    let fixed_len = if k >= 0 {
        n + k
    } else if n + k > 0 {
        n + 1
    } else {
        2 - k
    };
    let exp_digits = if sci_exp.abs() >= 100 { 3 } else { 2 };
    let sci_len = n + i32::from(n > 1) + 2 + exp_digits;
    // Either form is at most 24 bytes (fixed is only chosen when it is not longer than
    // scientific); it is assembled here and appended once.
    let mut o = [0u8; 32];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        o[len..len + bytes.len()].copy_from_slice(bytes);
        len += bytes.len();
    };
    if fixed_len <= sci_len {
        if k > 0 {
            // Fixed notation of a value with trailing zeros writes its exact integer
            // value, as `printf("%.0f")` would, not the shortest digits padded with
            // zeros: such a value is an integer, below 10^22 here.
            let mut tmp = [0u8; 40];
            put(decimal_digits_u128(exact_integer(), &mut tmp));
        } else if k == 0 {
            put(digits);
        } else if n + k > 0 {
            let point = (n + k) as usize;
            put(&digits[..point]);
            put(b".");
            put(&digits[point..]);
        } else {
            put(b"0.");
            for _ in 0..-(n + k) {
                put(b"0");
            }
            put(digits);
        }
    } else {
        put(&digits[..1]);
        if digits.len() > 1 {
            put(b".");
            put(&digits[1..]);
        }
        put(if sci_exp < 0 { b"e-" } else { b"e+" });
        let mag = sci_exp.unsigned_abs();
        if mag < 10 {
            put(b"0");
        }
        let mut tmp = [0u8; 20];
        put(decimal_digits(u64::from(mag), &mut tmp));
    }
    out.extend_from_slice(&o[..len]);
}

/// The powers-of-two part of [`is_exact_half`]: false rules a tie out.
fn may_be_half(m: u64, e: i32, k: i32) -> bool {
    m != 0 && m.trailing_zeros() as i32 + e + 1 == k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: f32) -> String {
        let mut out = Vec::new();
        write_f32(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    fn f64s(v: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    /// Expected strings are what `onnx.printer` (onnx 1.23) prints for the same values.
    // The tie cases are written out in full: they are exact f32 values.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn floats_print_as_cpp_to_chars() {
        let cases: &[(f32, &str)] = &[
            (0.123_456_79, "0.12345679"),
            (1e20, "1e+20"),
            (1e-7, "1e-07"),
            (3.0, "3"),
            (1.5, "1.5"),
            (1e8, "1e+08"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e-45, "1e-45"),
            (3.402_823_5e38, "3.4028235e+38"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (-f32::NAN, "-nan"),
            (0.0001, "1e-04"),
            (0.001, "0.001"),
            (10000.0, "10000"),
            (100000.0, "1e+05"),
            (123456.0, "123456"),
            (1.5e-5, "1.5e-05"),
            (-2.5, "-2.5"),
            (1_056_890_432.0, "1056890432"),
            (-29_460_752_384.0, "-29460752384"),
            (312_985.125, "312985.12"),
            (1_595_310.25, "1595310.2"),
        ];
        for &(v, s) in cases {
            assert_eq!(f32s(v), s, "{v:e}");
        }
        assert_eq!(f64s(0.1), "0.1");
        assert_eq!(f64s(1e300), "1e+300");
        assert_eq!(f64s(5e-324), "5e-324");
        assert_eq!(f64s(123_456_789_012.0), "123456789012");
    }
}
