//! Key derivation: PBKDF2-HMAC-SHA256 from the passphrase, the bounds on its iteration
//! count, and the HKDF-Expand step that splits one master key into independent keys.
//!
//! Knows passphrases, salts and keys; nothing of either format's layout.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use super::passphrase::Passphrase;

/// Fewest PBKDF2 iterations accepted, when writing and when reading: the minimum
/// recommended by NIST SP 800-132 (section 5.2). Use far more ([`DEFAULT_ITERATIONS`]).
pub const MIN_ITERATIONS: u32 = 1_000;

/// Most PBKDF2 iterations accepted. A file asking for more is refused before the key
/// derivation runs, so a hostile header cannot make a reader spin for hours.
pub const MAX_ITERATIONS: u32 = 10_000_000;

/// PBKDF2 iterations used for `ONNXAE01` unless told otherwise (OWASP's 2023
/// recommendation for PBKDF2-HMAC-SHA256).
pub const DEFAULT_ITERATIONS: u32 = 600_000;

/// The iteration count `ONNXCRY1` fixes.
pub const ONNXCRY1_ITERATIONS: u32 = 100_000;

/// The iteration count `ONNXCRY2` fixes.
pub const ONNXCRY2_ITERATIONS: u32 = 100_000;

/// A 32-byte key, zeroed when dropped.
pub(crate) type Key = Zeroizing<[u8; 32]>;

/// A stand-in for PBKDF2, for the workspace's tests only (feature `test-hooks`): it must
/// write a 32-byte key derived from all three inputs. Not part of the stable API.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub type TestKdf = fn(passphrase: &[u8], salt: &[u8], iterations: u32, key: &mut [u8; 32]);

/// Which password-based key derivation runs: PBKDF2-HMAC-SHA256, or (feature
/// `test-hooks` only) a cheap stand-in so that thousands of decryptions stay fast in
/// debug builds. Without the feature there is no stand-in to choose.
#[derive(Clone, Copy, Default)]
pub(crate) struct Kdf {
    #[cfg(feature = "test-hooks")]
    test: Option<TestKdf>,
}

impl Kdf {
    #[cfg(feature = "test-hooks")]
    pub(crate) fn test(kdf: TestKdf) -> Self {
        Kdf { test: Some(kdf) }
    }

    /// The 32-byte PBKDF2-HMAC-SHA256 output for `passphrase`, `salt` and `iterations`.
    /// Callers check `iterations` first (see [`check_iterations`]).
    pub(crate) fn derive(&self, passphrase: &Passphrase, salt: &[u8], iterations: u32) -> Key {
        let mut key = Zeroizing::new([0u8; 32]);
        #[cfg(feature = "test-hooks")]
        if let Some(f) = self.test {
            f(passphrase.as_bytes(), salt, iterations, &mut key);
            return key;
        }
        pbkdf2::pbkdf2_hmac::<Sha256>(passphrase.as_bytes(), salt, iterations, &mut *key);
        key
    }

    /// Whether this is the test stand-in (never, without `test-hooks`).
    fn is_test(&self) -> bool {
        #[cfg(feature = "test-hooks")]
        return self.test.is_some();
        #[cfg(not(feature = "test-hooks"))]
        false
    }
}

impl fmt::Debug for Kdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.is_test() {
            false => "PBKDF2-HMAC-SHA256",
            true => "test stand-in for PBKDF2 (insecure)",
        })
    }
}

/// Why `iterations` is refused, if it is.
pub(crate) fn check_iterations(iterations: u32) -> std::result::Result<(), String> {
    if (MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        Ok(())
    } else {
        Err(format!(
            "{iterations} PBKDF2 iterations, outside the accepted {MIN_ITERATIONS} ..= {MAX_ITERATIONS}"
        ))
    }
}

/// HKDF-Expand (RFC 5869) with SHA-256 for one 32-byte output block:
/// `HMAC-SHA256(master, label || 0x01)`. Distinct labels give independent keys.
pub(crate) fn expand(master: &[u8; 32], label: &[u8]) -> Key {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(master).expect("HMAC takes keys of any length");
    mac.update(label);
    mac.update(&[1]);
    let mut key = Zeroizing::new([0u8; 32]);
    key.copy_from_slice(&mac.finalize().into_bytes());
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn pbkdf2_matches_rfc_7914_vector() {
        // RFC 7914 section 11: PBKDF2-HMAC-SHA256("passwd", "salt", 1, 64), first 32 bytes.
        let key = Kdf::default().derive(&Passphrase::new("passwd"), b"salt", 1);
        assert_eq!(
            hex(&key[..]),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn expand_matches_rfc_5869_structure() {
        // RFC 5869 test case 3 has an empty info; its OKM's first block is
        // HMAC(PRK, 0x01), which is what `expand` computes with an empty label.
        let prk: [u8; 32] = [
            0x19, 0xef, 0x24, 0xa3, 0x2c, 0x71, 0x7b, 0x16, 0x7f, 0x33, 0xa9, 0x1d, 0x6f, 0x64,
            0x8b, 0xdf, 0x96, 0x59, 0x67, 0x76, 0xaf, 0xdb, 0x63, 0x77, 0xac, 0x43, 0x4c, 0x1c,
            0x29, 0x3c, 0xcb, 0x04,
        ];
        assert_eq!(
            hex(&expand(&prk, b"")[..]),
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
        );
    }

    #[test]
    fn iteration_bounds_are_inclusive() {
        assert!(check_iterations(MIN_ITERATIONS).is_ok());
        assert!(check_iterations(MAX_ITERATIONS).is_ok());
        assert!(check_iterations(MIN_ITERATIONS - 1).is_err());
        assert!(check_iterations(MAX_ITERATIONS + 1).is_err());
        assert!(check_iterations(DEFAULT_ITERATIONS).is_ok());
        assert!(check_iterations(ONNXCRY1_ITERATIONS).is_ok());
    }
}
