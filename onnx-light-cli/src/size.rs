//! Byte sizes on the command line: `4096`, `4k`, `64KiB`, `2GiB`, `1.5G`.

/// Parses a size: a number with an optional unit. `k`/`K`/`KiB`/`KB`, `M`..., `G`...,
/// `T`... are all binary multiples (1024), since sizes here are file and buffer sizes.
pub fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "{text:?} is not a size (expected e.g. 4096, 4k, 2GiB)"
        ));
    }
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "unknown size unit {other:?} in {text:?} (use k, M, G, T)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (expected e.g. 4096, 4k, 2GiB)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is out of range"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("{text:?} is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parses a limit: a size as [`parse`] reads it, or `none` / `unlimited` for no limit
/// (`u64::MAX`, which the library reads as "no limit").
pub fn parse_limit(text: &str) -> Result<u64, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "none" | "unlimited" => Ok(u64::MAX),
        _ => parse(text),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, parse_limit};

    #[test]
    fn limits_accept_sizes_and_none() {
        assert_eq!(parse_limit("512M").unwrap(), 512 << 20);
        assert_eq!(parse_limit("none").unwrap(), u64::MAX);
        assert_eq!(parse_limit("Unlimited").unwrap(), u64::MAX);
        assert!(parse_limit("nothing").is_err());
    }

    #[test]
    fn sizes_accept_binary_suffixes() {
        assert_eq!(parse("4096").unwrap(), 4096);
        assert_eq!(parse("4k").unwrap(), 4096);
        assert_eq!(parse("64KiB").unwrap(), 65536);
        assert_eq!(parse("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse("1.5M").unwrap(), 3 << 19);
        assert!(parse("12q").is_err());
        assert!(parse("").is_err());
        assert!(parse("0.3").is_err());
    }
}
