//! Floating-point element types narrower than 16 bits — the float8 family, float4 E2M1
//! and the two float6 types — stored as their bit patterns, with conversions to and from
//! `f32` that follow the ONNX `Cast` rules.
//!
//! Narrowing rounds to nearest, ties to even. With saturation (the ONNX default) values
//! beyond the largest finite value, and infinities, become that value with their sign;
//! without it they become infinity (E5M2) or NaN (the others), exactly as the tables of
//! the `Cast` operator (opset 25) say. Types without NaN or infinity (float4, float6)
//! always saturate, and map NaN to `+max` as the ONNX float4/float6 notes specify.
//! Widening is exact. Equality (`==`, `Hash`) compares bit patterns, so `NaN == NaN`
//! and `+0 != -0`; compare [`to_f32`](Float8E4M3FN::to_f32) values for float semantics.

use std::fmt;

/// How a format uses its special encodings.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Specials {
    /// No infinity, no NaN (float4, float6).
    Finite,
    /// NaN is the all-ones magnitude, no infinity (E4M3FN).
    NanAtMax,
    /// IEEE 754 style: exponent all ones is infinity (mantissa 0) or NaN (E5M2).
    Ieee,
    /// The negative-zero encoding is the only NaN, no infinity (E4M3FNUZ, E5M2FNUZ).
    Fnuz,
}

/// A small floating-point format: mantissa width, exponent bias, sign bit, the largest
/// finite magnitude code, and the use of special encodings.
struct Format {
    man_bits: u32,
    bias: i32,
    sign: u8,
    max: u8,
    specials: Specials,
}

const E4M3FN: Format = Format {
    man_bits: 3,
    bias: 7,
    sign: 0x80,
    max: 0x7E,
    specials: Specials::NanAtMax,
};
const E4M3FNUZ: Format = Format {
    man_bits: 3,
    bias: 8,
    sign: 0x80,
    max: 0x7F,
    specials: Specials::Fnuz,
};
const E5M2: Format = Format {
    man_bits: 2,
    bias: 15,
    sign: 0x80,
    max: 0x7B,
    specials: Specials::Ieee,
};
const E5M2FNUZ: Format = Format {
    man_bits: 2,
    bias: 16,
    sign: 0x80,
    max: 0x7F,
    specials: Specials::Fnuz,
};
const E2M1: Format = Format {
    man_bits: 1,
    bias: 1,
    sign: 0x08,
    max: 0x07,
    specials: Specials::Finite,
};
const E2M3: Format = Format {
    man_bits: 3,
    bias: 1,
    sign: 0x20,
    max: 0x1F,
    specials: Specials::Finite,
};
const E3M2: Format = Format {
    man_bits: 2,
    bias: 3,
    sign: 0x20,
    max: 0x1F,
    specials: Specials::Finite,
};

/// E5M2's infinity magnitude; magnitudes above it are NaN.
const E5M2_INF: u8 = 0x7C;
/// E5M2's canonical NaN magnitude (the quiet NaN).
const E5M2_NAN: u8 = 0x7E;

/// 2^k for k in f32's normal exponent range.
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

impl Format {
    fn decode(&self, code: u8) -> f32 {
        let negative = code & self.sign != 0;
        let mag = code & (self.sign - 1);
        let value = match self.specials {
            Specials::Fnuz if code == self.sign => return f32::NAN,
            Specials::NanAtMax if mag == 0x7F => f32::NAN,
            Specials::Ieee if mag == E5M2_INF => f32::INFINITY,
            Specials::Ieee if mag > E5M2_INF => f32::NAN,
            _ => self.magnitude(mag),
        };
        if negative {
            -value
        } else {
            value
        }
    }

    /// The finite value of a magnitude code (sign bit clear).
    fn magnitude(&self, mag: u8) -> f32 {
        let exp = i32::from(mag >> self.man_bits);
        let man = u32::from(mag) & ((1 << self.man_bits) - 1);
        if exp == 0 {
            // Subnormal: man × 2^(1 - bias - man_bits), exact in f32.
            man as f32 * pow2(1 - self.bias - self.man_bits as i32)
        } else {
            f32::from_bits((((exp - self.bias + 127) as u32) << 23) | (man << (23 - self.man_bits)))
        }
    }

    fn encode(&self, x: f32, saturate: bool) -> u8 {
        let bits = x.to_bits();
        let sign = if bits >> 31 != 0 { self.sign } else { 0 };
        let abs = bits & 0x7FFF_FFFF;
        let saturate = saturate || self.specials == Specials::Finite;
        if abs > 0x7F80_0000 {
            return match self.specials {
                Specials::Finite => self.max,
                Specials::NanAtMax => sign | 0x7F,
                Specials::Ieee => sign | E5M2_NAN,
                Specials::Fnuz => self.sign,
            };
        }
        if abs == 0x7F80_0000 {
            return if saturate {
                sign | self.max
            } else {
                self.overflow(sign)
            };
        }

        // A finite value: sig × 2^(exp - 23), with the hidden bit in sig for normals.
        let e32 = (abs >> 23) as i32;
        let (exp, sig) = if e32 == 0 {
            (-126, abs & 0x7F_FFFF)
        } else {
            (e32 - 127, (abs & 0x7F_FFFF) | 0x80_0000)
        };
        let biased = exp + self.bias;
        let drop = 23 - self.man_bits;
        let mag = if biased >= 1 {
            // Normal in the target: exponent and the kept mantissa bits side by side, so a
            // rounding carry out of the mantissa moves on to the next exponent.
            let kept = ((biased as u32) << self.man_bits) | ((sig & 0x7F_FFFF) >> drop);
            round_half_even(kept, sig, drop)
        } else {
            // Subnormal in the target: the significand shifted down to the fixed quantum.
            let shift = drop + (1 - biased) as u32;
            if shift > 24 {
                0 // below half the smallest subnormal: sig < 2^24 ≤ 2^(shift-1)
            } else {
                round_half_even(sig >> shift, sig, shift)
            }
        };
        if mag > u32::from(self.max) {
            return if saturate {
                sign | self.max
            } else {
                self.overflow(sign)
            };
        }
        if mag == 0 && self.specials == Specials::Fnuz {
            return 0; // no negative zero: its encoding is NaN
        }
        sign | mag as u8
    }

    /// The encoding of a value too large for the format, without saturation.
    fn overflow(&self, sign: u8) -> u8 {
        match self.specials {
            Specials::Finite => sign | self.max,
            Specials::NanAtMax => sign | 0x7F,
            Specials::Ieee => sign | E5M2_INF,
            Specials::Fnuz => self.sign,
        }
    }
}

/// `kept` rounded by the `dropped` low bits of `sig`, to nearest with ties to even.
fn round_half_even(kept: u32, sig: u32, dropped: u32) -> u32 {
    let rest = sig & ((1 << dropped) - 1);
    let half = 1 << (dropped - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

macro_rules! small_float {
    (
        $(#[$doc:meta])*
        $name:ident, $format:ident,
        bits: $bits:literal, max: $max:literal, min_positive: 2^$min_exp:literal
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(u8);

        impl $name {
            /// Positive zero.
            pub const ZERO: Self = Self(0);
            /// The largest finite value.
            pub const MAX: Self = Self($format.max);
            /// The most negative finite value.
            pub const MIN: Self = Self($format.sign | $format.max);
            #[doc = concat!("The largest finite value as `f32`: ", stringify!($max), ".")]
            pub const MAX_F32: f32 = $max;
            #[doc = concat!(
                "The smallest positive (subnormal) value as `f32`: 2^", stringify!($min_exp), "."
            )]
            pub const MIN_POSITIVE_F32: f32 = f32::from_bits(((127 + $min_exp) as u32) << 23);

            /// The value with this bit pattern; bits above the type's width are ignored.
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits & (((1u16 << $bits) - 1) as u8))
            }

            /// The bit pattern.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// The nearest value to `x` (ties to even), saturating out-of-range values and
            /// infinities to `±MAX`, as ONNX `Cast` does by default.
            pub fn from_f32(x: f32) -> Self {
                Self($format.encode(x, true))
            }

            /// The value exactly, as `f32`.
            pub fn to_f32(self) -> f32 {
                $format.decode(self.0)
            }

            /// True for a NaN encoding.
            pub fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }
        }

        impl From<$name> for f32 {
            fn from(v: $name) -> f32 {
                v.to_f32()
            }
        }

        impl From<$name> for f64 {
            fn from(v: $name) -> f64 {
                f64::from(v.to_f32())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?} = {:#04x})", stringify!($name), self.to_f32(), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}

macro_rules! float8_saturation {
    ($name:ident, $format:ident) => {
        impl $name {
            /// The nearest value to `x` (ties to even). With `saturate`, out-of-range
            /// values and infinities become `±MAX` (what [`from_f32`](Self::from_f32)
            /// does); without it they become infinity or NaN, per the ONNX `Cast` table
            /// for this type.
            pub fn from_f32_with(x: f32, saturate: bool) -> Self {
                Self($format.encode(x, saturate))
            }
        }
    };
}

small_float! {
    /// `FLOAT8E4M3FN`: 1 sign, 4 exponent (bias 7), 3 mantissa bits; NaN is `S.1111.111`,
    /// no infinity.
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Float8E4M3FN, E4M3FN, bits: 8, max: 448.0, min_positive: 2^-9
}
small_float! {
    /// `FLOAT8E4M3FNUZ`: 1 sign, 4 exponent (bias 8), 3 mantissa bits; the only NaN is
    /// `0x80` (where negative zero would be), no infinity, no negative zero.
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Float8E4M3FNUZ, E4M3FNUZ, bits: 8, max: 240.0, min_positive: 2^-10
}
small_float! {
    /// `FLOAT8E5M2`: 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-style infinities
    /// and NaNs.
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Float8E5M2, E5M2, bits: 8, max: 57344.0, min_positive: 2^-16
}
small_float! {
    /// `FLOAT8E5M2FNUZ`: 1 sign, 5 exponent (bias 16), 2 mantissa bits; the only NaN is
    /// `0x80`, no infinity, no negative zero.
    #[derive(bytemuck::Pod, bytemuck::Zeroable)]
    Float8E5M2FNUZ, E5M2FNUZ, bits: 8, max: 57344.0, min_positive: 2^-17
}
small_float! {
    /// `FLOAT4E2M1`: 1 sign, 2 exponent (bias 1), 1 mantissa bit; values ±{0, 0.5, 1, 1.5,
    /// 2, 3, 4, 6}, no infinity or NaN. Packed two per byte in tensors.
    Float4E2M1, E2M1, bits: 4, max: 6.0, min_positive: 2^-1
}
small_float! {
    /// `FLOAT6E2M3`: 1 sign, 2 exponent (bias 1), 3 mantissa bits; no infinity or NaN.
    /// Packed four per three bytes in `raw_data`.
    Float6E2M3, E2M3, bits: 6, max: 7.5, min_positive: 2^-3
}
small_float! {
    /// `FLOAT6E3M2`: 1 sign, 3 exponent (bias 3), 2 mantissa bits; no infinity or NaN.
    /// Packed four per three bytes in `raw_data`.
    Float6E3M2, E3M2, bits: 6, max: 28.0, min_positive: 2^-4
}

float8_saturation!(Float8E4M3FN, E4M3FN);
float8_saturation!(Float8E4M3FNUZ, E4M3FNUZ);
float8_saturation!(Float8E5M2, E5M2);
float8_saturation!(Float8E5M2FNUZ, E5M2FNUZ);

impl Float8E4M3FN {
    /// The NaN (positive sign).
    pub const NAN: Self = Self(0x7F);
}

impl Float8E4M3FNUZ {
    /// The NaN.
    pub const NAN: Self = Self(0x80);
}

impl Float8E5M2 {
    /// The canonical (quiet, positive) NaN.
    pub const NAN: Self = Self(0x7E);
    /// Positive infinity.
    pub const INFINITY: Self = Self(0x7C);
    /// Negative infinity.
    pub const NEG_INFINITY: Self = Self(0xFC);
}

impl Float8E5M2FNUZ {
    /// The NaN.
    pub const NAN: Self = Self(0x80);
}

/// How [`Float8E8M0::from_f32_with`] rounds a value that is not a power of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum E8M0Rounding {
    /// Up to the next power of two (the ONNX `Cast` default, and CUDA's behaviour).
    #[default]
    Up,
    /// To the nearer power of two.
    Nearest,
    /// Down (truncate the mantissa).
    Down,
}

/// `FLOAT8E8M0`: an unsigned power of two, `2^(bits - 127)`, for microscaling (MX)
/// scales; `0xFF` is NaN, there is no zero, infinity or sign.
///
/// Conversion from `f32` follows `onnx.numpy_helper.to_float8e8m0` (the reference
/// implementation behind `onnx.helper.make_tensor` and the reference `Cast`) bit for bit:
/// the sign is ignored, NaN and infinities become NaN (the `Cast` table lists `E8M0_MAX`
/// for a saturated infinity, but no ONNX implementation does that), and an `f32`
/// subnormal counts as exponent 0, so with [`E8M0Rounding::Up`] even `2^-127` itself
/// (code 0, an `f32` subnormal) rounds up to `2^-126`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Float8E8M0(u8);

impl Float8E8M0 {
    /// 1.0 (`2^0`).
    pub const ONE: Self = Self(127);
    /// The largest value, `2^127`.
    pub const MAX: Self = Self(0xFE);
    /// The smallest value, `2^-127`.
    pub const MIN: Self = Self(0);
    /// The NaN.
    pub const NAN: Self = Self(0xFF);

    /// The value with this bit pattern.
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits)
    }

    /// The bit pattern (the biased exponent).
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// `x` rounded up to a power of two, saturating at `2^127`: the ONNX defaults.
    pub fn from_f32(x: f32) -> Self {
        Self::from_f32_with(x, true, E8M0Rounding::Up)
    }

    /// `x` rounded to a power of two as `rounding` says; with `saturate` a value that
    /// rounds past `2^127` stays `2^127`, without it it becomes NaN.
    pub fn from_f32_with(x: f32, saturate: bool, rounding: E8M0Rounding) -> Self {
        let bits = x.to_bits();
        let exponent = (bits >> 23) & 0xFF;
        if exponent == 0xFF {
            return Self::NAN;
        }
        let round_up = match rounding {
            E8M0Rounding::Down => false,
            E8M0Rounding::Up => bits & 0x7F_FFFF != 0,
            E8M0Rounding::Nearest => {
                // The reference's rule: guard bit set, and round bit, sticky bits or a
                // normal input (its "lsb") — so ties on normal inputs round up.
                let guard = bits & 0x40_0000 != 0;
                let round = bits & 0x20_0000 != 0;
                let sticky = bits & 0x1F_FFFF != 0;
                guard && (round || sticky || exponent > 0)
            }
        };
        let exponent = if round_up && !(saturate && exponent == 0xFE) {
            exponent + 1
        } else {
            exponent
        };
        Self(exponent as u8)
    }

    /// The value exactly, as `f32` (`2^-127` is an `f32` subnormal).
    pub fn to_f32(self) -> f32 {
        match self.0 {
            0xFF => f32::NAN,
            0 => f32::from_bits(0x0040_0000),
            e => f32::from_bits(u32::from(e) << 23),
        }
    }

    /// True for the NaN encoding.
    pub fn is_nan(self) -> bool {
        self.0 == 0xFF
    }
}

impl From<Float8E8M0> for f32 {
    fn from(v: Float8E8M0) -> f32 {
        v.to_f32()
    }
}

impl From<Float8E8M0> for f64 {
    fn from(v: Float8E8M0) -> f64 {
        f64::from(v.to_f32())
    }
}

impl fmt::Debug for Float8E8M0 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Float8E8M0({:?} = {:#04x})", self.to_f32(), self.0)
    }
}

impl fmt::Display for Float8E8M0 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finite code in increasing order of value (for the exhaustive rounding tests).
    fn finite_codes_ascending(decode: impl Fn(u8) -> f32, width: u32) -> Vec<(u8, f32)> {
        let mut v: Vec<(u8, f32)> = (0..1u16 << width)
            .map(|c| (c as u8, decode(c as u8)))
            .filter(|(_, x)| x.is_finite())
            .collect();
        // -0 and +0 compare equal; keep +0 as the representative of zero.
        v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then(a.0.cmp(&b.0)));
        v.dedup_by(|b, a| a.1 == b.1);
        v
    }

    fn formats() -> Vec<(&'static str, &'static Format, u32)> {
        vec![
            ("E4M3FN", &E4M3FN, 8),
            ("E4M3FNUZ", &E4M3FNUZ, 8),
            ("E5M2", &E5M2, 8),
            ("E5M2FNUZ", &E5M2FNUZ, 8),
            ("E2M1", &E2M1, 4),
            ("E2M3", &E2M3, 6),
            ("E3M2", &E3M2, 6),
        ]
    }

    #[test]
    fn every_code_decodes_and_encodes_back_exactly() {
        for (name, f, width) in formats() {
            for code in 0..(1u16 << width) {
                let code = code as u8;
                let x = f.decode(code);
                if x.is_nan() {
                    // Each NaN code maps to the format's canonical NaN (sign kept where
                    // the format has signed NaNs).
                    let back = f.encode(x, false);
                    assert!(f.decode(back).is_nan(), "{name} {code:#04x}");
                    if f.specials != Specials::Fnuz {
                        assert_eq!(back & f.sign, code & f.sign, "{name} {code:#04x}");
                    }
                    continue;
                }
                assert_eq!(f.encode(x, false), code, "{name} {code:#04x} = {x}");
                if x.is_finite() {
                    assert_eq!(f.encode(x, true), code, "{name} {code:#04x} = {x}");
                } else {
                    // Infinity saturates to ±MAX.
                    assert_eq!(f.encode(x, true), (code & f.sign) | f.max, "{name}");
                }
            }
        }
    }

    #[test]
    fn midpoints_round_to_even_and_neighbours_to_the_nearer_code() {
        for (name, f, width) in formats() {
            let codes = finite_codes_ascending(|c| f.decode(c), width);
            for pair in codes.windows(2) {
                let ((lo_code, lo), (hi_code, hi)) = (pair[0], pair[1]);
                let mid = (f64::from(lo) + f64::from(hi)) / 2.0;
                let mid = mid as f32;
                assert_eq!(
                    f64::from(mid),
                    (f64::from(lo) + f64::from(hi)) / 2.0,
                    "exact"
                );
                let even = if lo_code & 1 == 0 { lo_code } else { hi_code };
                for saturate in [false, true] {
                    let got = f.encode(mid, saturate);
                    // Zero may come back as either sign; compare values there.
                    assert_eq!(
                        f.decode(got).to_bits() & 0x7FFF_FFFF,
                        f.decode(even).to_bits() & 0x7FFF_FFFF,
                        "{name}: midpoint {mid} of {lo} and {hi}"
                    );
                    // One f32 ulp either side of the midpoint is no longer a tie.
                    let below = f32::from_bits(mid.to_bits().wrapping_sub(1));
                    let above = f32::from_bits(mid.to_bits() + 1);
                    let (below, above) = if mid > 0.0 {
                        (below, above)
                    } else {
                        (above, below)
                    };
                    if mid != 0.0 {
                        assert_eq!(f.decode(f.encode(below, saturate)), lo, "{name} {below}");
                        assert_eq!(f.decode(f.encode(above, saturate)), hi, "{name} {above}");
                    }
                }
            }
        }
    }

    #[test]
    fn overflow_saturates_or_follows_the_cast_table() {
        let big = [1e9_f32, f32::MAX, f32::INFINITY];
        for x in big {
            assert_eq!(Float8E4M3FN::from_f32(x).to_f32(), 448.0);
            assert_eq!(Float8E4M3FN::from_f32(-x).to_f32(), -448.0);
            assert_eq!(Float8E4M3FNUZ::from_f32(x).to_f32(), 240.0);
            assert_eq!(Float8E5M2::from_f32(x).to_f32(), 57344.0);
            assert_eq!(Float8E5M2FNUZ::from_f32(-x).to_f32(), -57344.0);
            assert_eq!(Float4E2M1::from_f32(x).to_f32(), 6.0);
            assert_eq!(Float6E2M3::from_f32(-x).to_f32(), -7.5);
            assert_eq!(Float6E3M2::from_f32(x).to_f32(), 28.0);
            assert!(Float8E4M3FN::from_f32_with(x, false).is_nan());
            assert_eq!(Float8E4M3FN::from_f32_with(-x, false).to_bits(), 0xFF);
            assert_eq!(Float8E4M3FNUZ::from_f32_with(x, false), Float8E4M3FNUZ::NAN);
            assert_eq!(Float8E5M2::from_f32_with(x, false), Float8E5M2::INFINITY);
            assert_eq!(
                Float8E5M2::from_f32_with(-x, false),
                Float8E5M2::NEG_INFINITY
            );
            assert_eq!(
                Float8E5M2FNUZ::from_f32_with(-x, false),
                Float8E5M2FNUZ::NAN
            );
        }
        // Just above MAX but rounding down to it is not an overflow.
        assert_eq!(Float8E4M3FN::from_f32_with(464.0, false).to_f32(), 448.0);
        assert!(Float8E4M3FN::from_f32_with(464.1, false).is_nan());
        assert_eq!(Float8E5M2::from_f32_with(61439.0, false).to_f32(), 57344.0);
        assert_eq!(
            Float8E5M2::from_f32_with(61440.0, false),
            Float8E5M2::INFINITY
        );
    }

    #[test]
    fn nan_zero_and_negative_zero_per_type() {
        assert_eq!(Float8E4M3FN::from_f32(f32::NAN).to_bits(), 0x7F);
        assert_eq!(Float8E4M3FN::from_f32(-f32::NAN).to_bits(), 0xFF);
        assert_eq!(Float8E5M2::from_f32(f32::NAN).to_bits(), 0x7E);
        assert_eq!(Float8E4M3FNUZ::from_f32(-f32::NAN).to_bits(), 0x80);
        assert_eq!(Float8E5M2FNUZ::from_f32(f32::NAN).to_bits(), 0x80);
        // Types without NaN map it to +MAX (ONNX float4/float6 notes).
        assert_eq!(Float4E2M1::from_f32(f32::NAN).to_f32(), 6.0);
        assert_eq!(Float6E2M3::from_f32(-f32::NAN).to_f32(), 7.5);
        assert_eq!(Float6E3M2::from_f32(f32::NAN).to_f32(), 28.0);
        // Negative zero survives where it exists and becomes +0 where it does not.
        assert_eq!(Float8E4M3FN::from_f32(-0.0).to_bits(), 0x80);
        assert_eq!(Float8E5M2::from_f32(-0.0).to_bits(), 0x80);
        assert_eq!(Float4E2M1::from_f32(-0.0).to_bits(), 0x08);
        assert_eq!(Float6E2M3::from_f32(-0.0).to_bits(), 0x20);
        assert_eq!(Float8E4M3FNUZ::from_f32(-0.0).to_bits(), 0);
        assert_eq!(Float8E5M2FNUZ::from_f32(-1e-30).to_bits(), 0);
        assert_eq!(Float8E4M3FN::from_f32(-1e-30).to_bits(), 0x80);
        assert!(Float8E4M3FNUZ::NAN.to_f32().is_nan());
        assert!(Float8E5M2::NAN.is_nan());
        assert_eq!(Float8E5M2::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    }

    #[test]
    fn constants_match_their_encodings() {
        assert_eq!(Float8E4M3FN::MAX.to_f32(), Float8E4M3FN::MAX_F32);
        assert_eq!(Float8E4M3FN::MIN.to_f32(), -Float8E4M3FN::MAX_F32);
        assert_eq!(Float8E4M3FNUZ::MAX.to_f32(), Float8E4M3FNUZ::MAX_F32);
        assert_eq!(Float8E5M2::MAX.to_f32(), Float8E5M2::MAX_F32);
        assert_eq!(Float8E5M2FNUZ::MAX.to_f32(), Float8E5M2FNUZ::MAX_F32);
        assert_eq!(Float4E2M1::MIN.to_f32(), -Float4E2M1::MAX_F32);
        assert_eq!(Float6E2M3::MAX.to_f32(), Float6E2M3::MAX_F32);
        assert_eq!(Float6E3M2::MAX.to_f32(), Float6E3M2::MAX_F32);
        assert_eq!(
            Float8E4M3FN::from_bits(1).to_f32(),
            Float8E4M3FN::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float8E4M3FNUZ::from_bits(1).to_f32(),
            Float8E4M3FNUZ::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float8E5M2::from_bits(1).to_f32(),
            Float8E5M2::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float8E5M2FNUZ::from_bits(1).to_f32(),
            Float8E5M2FNUZ::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float4E2M1::from_bits(1).to_f32(),
            Float4E2M1::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float6E2M3::from_bits(1).to_f32(),
            Float6E2M3::MIN_POSITIVE_F32
        );
        assert_eq!(
            Float6E3M2::from_bits(1).to_f32(),
            Float6E3M2::MIN_POSITIVE_F32
        );
        assert_eq!(Float4E2M1::from_bits(0xF7).to_bits(), 0x07);
        assert_eq!(Float6E3M2::from_bits(0xFF).to_bits(), 0x3F);
        let e2m1: Vec<f32> = (0..8).map(|c| Float4E2M1::from_bits(c).to_f32()).collect();
        assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    }

    #[test]
    fn e8m0_codes_round_trip_and_rounding_modes_differ_as_documented() {
        for code in 1..=0xFEu8 {
            let x = Float8E8M0::from_bits(code).to_f32();
            assert_eq!(x, 2f32.powi(i32::from(code) - 127));
            for saturate in [false, true] {
                for rounding in [E8M0Rounding::Up, E8M0Rounding::Nearest, E8M0Rounding::Down] {
                    assert_eq!(
                        Float8E8M0::from_f32_with(x, saturate, rounding).to_bits(),
                        code,
                        "{code} {saturate} {rounding:?}"
                    );
                }
            }
        }
        // 2^-127 is an f32 subnormal: exact when rounding down or to nearest; the
        // reference rounds it up to 2^-126.
        let min = Float8E8M0::MIN.to_f32();
        assert_eq!(min, 2f32.powi(-127));
        assert_eq!(
            Float8E8M0::from_f32_with(min, true, E8M0Rounding::Down),
            Float8E8M0::MIN
        );
        assert_eq!(
            Float8E8M0::from_f32_with(min, true, E8M0Rounding::Nearest),
            Float8E8M0::MIN
        );
        assert_eq!(Float8E8M0::from_f32(min).to_bits(), 1);
        assert!(Float8E8M0::from_f32(f32::NAN).is_nan());
        assert!(Float8E8M0::from_f32(f32::INFINITY).is_nan());
        assert_eq!(Float8E8M0::from_f32(3.0).to_f32(), 4.0);
        assert_eq!(
            Float8E8M0::from_f32_with(3.0, true, E8M0Rounding::Down).to_f32(),
            2.0
        );
        assert_eq!(
            Float8E8M0::from_f32_with(3.0, true, E8M0Rounding::Nearest).to_f32(),
            4.0
        );
        assert_eq!(
            Float8E8M0::from_f32_with(2.9, true, E8M0Rounding::Nearest).to_f32(),
            2.0
        );
        assert_eq!(
            Float8E8M0::from_f32(-4.0).to_f32(),
            4.0,
            "the sign is ignored"
        );
        assert_eq!(Float8E8M0::from_f32(f32::MAX), Float8E8M0::MAX);
        assert!(Float8E8M0::from_f32_with(f32::MAX, false, E8M0Rounding::Up).is_nan());
        assert_eq!(Float8E8M0::from_f32(0.0), Float8E8M0::MIN);
    }
}
