//! Numbers as protobuf's Python runtime writes and reads them in its text formats:
//! Python's `repr(float)`, protobuf's shortest form of a `float` field, and Python's
//! `int()` / `float()` syntax for the values it reads.

/// `repr(v)` of a Python float: the shortest digits that read back to `v`, in fixed
/// notation when the decimal point falls within 16 digits of the first one and after
/// at most 4 leading zeros, else in exponent notation with a signed, two-digit (or
/// longer) exponent: `0.1`, `100.0`, `1e-05`, `1e+16`, `nan`, `-inf`.
pub(crate) fn python_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // `{:e}` gives the shortest round-trip digits: "-1.2345e-7". When two strings of
    // that length are equally near, Python takes the one with an even last digit:
    // the correctly rounded string of that length (round half to even).
    let mut sci = format!("{:e}", v);
    let len = sci
        .split_once('e')
        .map_or(0, |(m, _)| m.bytes().filter(u8::is_ascii_digit).count());
    let rounded = format!("{:.*e}", len.saturating_sub(1), v);
    if rounded.parse::<f64>().ok() == Some(v) {
        sci = rounded;
    }
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    // Position of the decimal point relative to the first digit.
    let point = exp + 1;
    let mut out = String::from(sign);
    if -4 < point && point <= 16 {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (point - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
    out
}

/// The double protobuf prints for a `float` field (`type_checkers.ToShortestFloat`):
/// the value rounded to the fewest significant digits, from 6 up, that still convert
/// back to the same `f32`.
pub(crate) fn shortest_float(v: f32) -> f64 {
    let wide = f64::from(v);
    if !wide.is_finite() {
        return wide;
    }
    for digits in 6..=17 {
        let text = format!("{:.*e}", digits - 1, wide);
        let rounded: f64 = text.parse().expect("`{:e}` output parses");
        if rounded as f32 == v {
            return rounded;
        }
    }
    wide
}

/// C's `printf("%.*g", precision, v)` for a finite `v`: `precision` significant
/// digits, fixed notation when the exponent is from -4 to `precision - 1`, trailing
/// zeros (and a trailing point) removed, a signed two-digit (or longer) exponent.
fn c_format_g(v: f64, precision: usize) -> String {
    let sci = format!("{:.*e}", precision - 1, v);
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if -4 <= exp && exp < precision as i32 {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        let body = body.trim_end_matches('0').trim_end_matches('.');
        out.push_str(body);
    } else {
        let frac = digits[1..].trim_end_matches('0');
        out.push_str(&digits[..1]);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
    out
}

/// A `float` as protobuf's upb runtime prints it in `str(message)`: `%.6g` when that
/// reads back to the same value, else `%.9g`; `inf`, `-inf`, `nan`.
pub(crate) fn upb_float(v: f32) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let short = c_format_g(f64::from(v), 6);
    if short.parse::<f32>().ok() == Some(v) {
        short
    } else {
        c_format_g(f64::from(v), 9)
    }
}

/// A `double` as protobuf's upb runtime prints it: `%.15g` when that reads back to the
/// same value, else `%.17g`.
pub(crate) fn upb_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let short = c_format_g(v, 15);
    if short.parse::<f64>().ok() == Some(v) {
        short
    } else {
        c_format_g(v, 17)
    }
}

/// Removes the underscores Python allows between digits (`1_000`), or `None` when one
/// stands anywhere else.
fn strip_underscores(s: &str, is_digit: impl Fn(char) -> bool) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let before = i > 0 && is_digit(chars[i - 1]);
            let after = chars.get(i + 1).is_some_and(|&n| is_digit(n));
            if !(before && after) {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Python's `float(s)` for a string without surrounding whitespace: decimal numbers
/// (`1`, `-1.5e3`, `.5`, `1.`, `1_000.5`), `inf`, `infinity` and `nan` in any case.
pub(crate) fn parse_python_float(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan" {
        f64::NAN
    } else {
        let plain = strip_underscores(body, |c| c.is_ascii_digit())?;
        let (mantissa, exponent) = match plain.find(['e', 'E']) {
            Some(at) => (&plain[..at], Some(&plain[at + 1..])),
            None => (plain.as_str(), None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() && frac.is_empty() || !digits_ok(int) || !digits_ok(frac) {
            return None;
        }
        if let Some(e) = exponent {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            if e.is_empty() || !digits_ok(e) {
                return None;
            }
        }
        plain.parse::<f64>().ok()?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Python's `int(s, 0)`, after protobuf's rewrite of C octal (`017` reads as 15) when
/// `c_octal_rewrite`: an
/// optional sign, then a decimal number without leading zeros, or `0x` / `0o` / `0b`
/// with digits of that base; underscores between digits (and after the prefix).
/// `None` when the text is no integer; `Some(None)` when it is one too large for 128
/// bits (out of every protobuf range anyway).
pub(crate) fn parse_python_int_auto(s: &str, c_octal_rewrite: bool) -> Option<Option<i128>> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    // protobuf turns `-?0\d+` into Python's `0o` octal; `+017` is not rewritten.
    let c_octal = c_octal_rewrite
        && !s.starts_with('+')
        && body.len() > 1
        && body.starts_with('0')
        && body.bytes().all(|b| b.is_ascii_digit());
    let (radix, digits) = if c_octal {
        (8, &body[1..])
    } else {
        let lower = body.get(..2).map(str::to_ascii_lowercase);
        match lower.as_deref() {
            Some("0x") => (16, &body[2..]),
            Some("0o") => (8, &body[2..]),
            Some("0b") => (2, &body[2..]),
            _ => (10, body),
        }
    };
    let digits = if radix != 10 && !c_octal {
        // Python allows one underscore right after the prefix.
        digits.strip_prefix('_').unwrap_or(digits)
    } else {
        digits
    };
    let plain = strip_underscores(digits, |c| c.is_digit(radix))?;
    if plain.is_empty() || !plain.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if radix == 10 && plain.len() > 1 && plain.starts_with('0') && plain.bytes().any(|b| b != b'0')
    {
        return None;
    }
    Some(accumulate(&plain, radix, negative))
}

/// Python's `int(s)` (base 10; leading zeros allowed) for a string without surrounding
/// whitespace; results as for [`parse_python_int_auto`].
pub(crate) fn parse_python_int_decimal(s: &str) -> Option<Option<i128>> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let plain = strip_underscores(body, |c| c.is_ascii_digit())?;
    if plain.is_empty() || !plain.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(accumulate(&plain, 10, negative))
}

fn accumulate(digits: &str, radix: u32, negative: bool) -> Option<i128> {
    let mut v: i128 = 0;
    for c in digits.chars() {
        let d = i128::from(c.to_digit(radix)?);
        v = v.checked_mul(i128::from(radix))?.checked_add(d)?;
    }
    Some(if negative { -v } else { v })
}

/// An integral double as an integer, `None` when it is not integral or does not fit
/// in 128 bits.
pub(crate) fn integral(v: f64) -> Option<i128> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1.7e38 {
        Some(v as i128)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_matches_python_for_both_notations() {
        let cases = [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1e22, "1e+22"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-2.5e-7, "-2.5e-07"),
            (1604931570505250.2, "1604931570505250.2"),
            (-799071080755614.2, "-799071080755614.2"),
        ];
        for (v, want) in cases {
            assert_eq!(python_repr(v), want, "{v:e}");
        }
    }

    #[test]
    fn shortest_float_starts_at_six_digits() {
        assert_eq!(python_repr(shortest_float(0.1)), "0.1");
        assert_eq!(python_repr(shortest_float(3.4e38)), "3.4e+38");
        assert_eq!(python_repr(shortest_float(1e-7)), "1e-07");
        assert_eq!(python_repr(shortest_float(16777216.0)), "16777216.0");
        assert_eq!(python_repr(shortest_float(1.0 / 3.0)), "0.33333334");
        assert_eq!(python_repr(shortest_float(f32::MAX)), "3.4028235e+38");
    }

    #[test]
    fn upb_numbers_match_c_printf() {
        let floats = [
            (1.0f32, "1"),
            (-0.0, "-0"),
            (1e-5, "1e-05"),
            (100.0, "100"),
            (16777216.0, "16777216"),
            (0.3, "0.3"),
            (2.632_261e30, "2.63226098e+30"),
            (1e10, "1e+10"),
            (f32::INFINITY, "inf"),
        ];
        for (v, want) in floats {
            assert_eq!(upb_float(v), want);
        }
        let doubles = [
            (100.0, "100"),
            (0.1, "0.1"),
            (1e22, "1e+22"),
            (1e15, "1e+15"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.30000000000000004, "0.30000000000000004"),
            (5e-324, "4.94065645841247e-324"),
            (0.0001, "0.0001"),
            (123456.0, "123456"),
        ];
        for (v, want) in doubles {
            assert_eq!(upb_double(v), want);
        }
    }

    #[test]
    fn python_int_syntax() {
        assert_eq!(parse_python_int_auto("017", true), Some(Some(15)));
        assert_eq!(parse_python_int_auto("-017", true), Some(Some(-15)));
        assert_eq!(parse_python_int_auto("+017", true), None);
        assert_eq!(parse_python_int_auto("08", true), None);
        assert_eq!(parse_python_int_auto("00", true), Some(Some(0)));
        assert_eq!(parse_python_int_auto("0x_fF", true), Some(Some(255)));
        assert_eq!(parse_python_int_auto("1_000", true), Some(Some(1000)));
        assert_eq!(parse_python_int_auto("1__0", true), None);
        assert_eq!(parse_python_int_auto("1.0", true), None);
        assert_eq!(parse_python_int_auto(&"9".repeat(50), true), Some(None));
        assert_eq!(parse_python_int_decimal("007"), Some(Some(7)));
        assert_eq!(parse_python_int_decimal("0x1"), None);
    }

    #[test]
    fn python_float_syntax() {
        assert_eq!(parse_python_float("1."), Some(1.0));
        assert_eq!(parse_python_float(".5"), Some(0.5));
        assert_eq!(parse_python_float("-1_0.5e+1"), Some(-105.0));
        assert_eq!(parse_python_float("Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_python_float("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_python_float("NaN").unwrap().is_nan());
        assert_eq!(parse_python_float("."), None);
        assert_eq!(parse_python_float("1e"), None);
        assert_eq!(parse_python_float("1f"), None);
        assert_eq!(parse_python_float("0x10"), None);
    }
}
