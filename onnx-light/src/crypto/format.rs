//! The encrypted formats and how an input's first bytes name one.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// Magic of the authenticated format; the last two digits are its version.
pub(crate) const ONNXAE01_MAGIC: &[u8; 8] = b"ONNXAE01";
/// Magic of onnx_light's unauthenticated format.
pub(crate) const ONNXCRY1_MAGIC: &[u8; 8] = b"ONNXCRY1";
/// Magic of onnx_light's ChaCha20-Poly1305 format.
pub(crate) const ONNXCRY2_MAGIC: &[u8; 8] = b"ONNXCRY2";

/// An encrypted-model format. Reading detects it from the magic; writing uses
/// [`EncryptOptions::format`](super::EncryptOptions::format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum EncryptionFormat {
    /// `ONNXAE01`, this library's authenticated format (the default): any modification,
    /// truncation or reordering, and a wrong passphrase, are detected before anything is
    /// parsed or returned.
    #[default]
    OnnxAe01,
    /// `ONNXCRY1`, onnx_light's AES-CBC format, kept for interoperability. It has **no
    /// integrity protection**: a modified file may decrypt to different bytes without
    /// an error. Reading it needs
    /// [`DecryptOptions::allow_unauthenticated`](super::DecryptOptions::allow_unauthenticated),
    /// and results read from it are reported as unauthenticated.
    OnnxCry1,
    /// `ONNXCRY2`, onnx_light's ChaCha20-Poly1305 format, kept for interoperability:
    /// authenticated (any modification or a wrong passphrase fails the tag), but
    /// whole-buffer (no streaming) and with a fixed PBKDF2 cost of 100 000 iterations.
    OnnxCry2,
}

impl EncryptionFormat {
    /// The 8 bytes a file in this format starts with.
    pub fn magic(self) -> &'static [u8; 8] {
        match self {
            EncryptionFormat::OnnxAe01 => ONNXAE01_MAGIC,
            EncryptionFormat::OnnxCry1 => ONNXCRY1_MAGIC,
            EncryptionFormat::OnnxCry2 => ONNXCRY2_MAGIC,
        }
    }

    /// The magic as text, e.g. `"ONNXCRY1"`.
    pub fn name(self) -> &'static str {
        match self {
            EncryptionFormat::OnnxAe01 => "ONNXAE01",
            EncryptionFormat::OnnxCry1 => "ONNXCRY1",
            EncryptionFormat::OnnxCry2 => "ONNXCRY2",
        }
    }

    /// Whether decryption verifies integrity (false for `ONNXCRY1` only).
    pub fn is_authenticated(self) -> bool {
        !matches!(self, EncryptionFormat::OnnxCry1)
    }

    /// The format an input is in, from its first bytes (8 are enough).
    ///
    /// # Errors
    /// * `NotEncrypted` when the bytes start with no known magic (an empty input too);
    /// * `UnsupportedEncryption` for another version of a known format;
    /// * `TruncatedEncryption` when fewer than 8 bytes are given and they begin a magic.
    ///
    /// # Examples
    /// ```
    /// use onnx_light::crypto::EncryptionFormat;
    /// assert_eq!(EncryptionFormat::detect(b"ONNXAE01...")?, EncryptionFormat::OnnxAe01);
    /// assert!(EncryptionFormat::detect(b"\x08\x07\x12").is_err()); // a plain model
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    pub fn detect(prefix: &[u8]) -> Result<EncryptionFormat> {
        let known = [
            EncryptionFormat::OnnxAe01,
            EncryptionFormat::OnnxCry1,
            EncryptionFormat::OnnxCry2,
        ];
        if prefix.len() < 8 {
            if !prefix.is_empty() && known.iter().any(|f| f.magic().starts_with(prefix)) {
                return Err(Error::at(
                    ErrorKind::TruncatedEncryption,
                    prefix.len() as u64,
                ));
            }
            return Err(Error::new(ErrorKind::NotEncrypted));
        }
        let magic = &prefix[..8];
        if let Some(format) = known.into_iter().find(|f| f.magic() == magic) {
            return Ok(format);
        }
        let reason = if magic.starts_with(b"ONNXAE") {
            format!(
                "ONNXAE format version {} (this library reads version 01)",
                printable(&magic[6..])
            )
        } else if magic.starts_with(b"ONNXCRY") {
            format!(
                "ONNXCRY format version {} (this library reads versions 1 and 2)",
                printable(&magic[7..])
            )
        } else {
            return Err(Error::new(ErrorKind::NotEncrypted));
        };
        Err(Error::at(ErrorKind::UnsupportedEncryption { reason }, 0))
    }
}

impl fmt::Display for EncryptionFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EncryptionFormat::OnnxAe01 => "ONNXAE01 (authenticated)",
            EncryptionFormat::OnnxCry1 => "ONNXCRY1 (unauthenticated)",
            EncryptionFormat::OnnxCry2 => "ONNXCRY2 (authenticated)",
        })
    }
}

/// Bytes as text for an error message: ASCII as is, anything else escaped.
fn printable(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(bytes: &[u8]) -> ErrorKind {
        EncryptionFormat::detect(bytes).unwrap_err().kind().clone()
    }

    #[test]
    fn magics_name_formats_and_other_versions_are_unsupported() {
        assert_eq!(
            EncryptionFormat::detect(b"ONNXCRY1").unwrap(),
            EncryptionFormat::OnnxCry1
        );
        assert_eq!(
            EncryptionFormat::detect(b"ONNXAE01rest").unwrap(),
            EncryptionFormat::OnnxAe01
        );
        assert!(
            matches!(kind(b"ONNXAE02"), ErrorKind::UnsupportedEncryption { reason } if reason.contains("02"))
        );
        assert_eq!(
            EncryptionFormat::detect(b"ONNXCRY2").unwrap(),
            EncryptionFormat::OnnxCry2
        );
        assert!(matches!(
            kind(b"ONNXCRY3"),
            ErrorKind::UnsupportedEncryption { .. }
        ));
        assert_eq!(kind(b"ONNXAB01"), ErrorKind::NotEncrypted);
        assert_eq!(kind(b""), ErrorKind::NotEncrypted);
        assert_eq!(kind(b"\x08\x07"), ErrorKind::NotEncrypted);
        assert_eq!(kind(b"ONNXC"), ErrorKind::TruncatedEncryption);
        assert_eq!(kind(b"ONNXAE0"), ErrorKind::TruncatedEncryption);
    }
}
