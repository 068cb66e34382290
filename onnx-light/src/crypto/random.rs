//! Salts and IVs: from the operating system's random generator, or (known-answer tests
//! only) fixed values.

use rand::rngs::SysRng;
use rand::TryRng;

use crate::error::{Error, Result};

/// Fills `buf` from the operating system's cryptographic random generator.
///
/// # Errors
/// An I/O error when the generator fails (e.g. no entropy source in a sandbox).
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<()> {
    SysRng.try_fill_bytes(buf).map_err(|e| {
        Error::io(
            std::io::Error::other(format!(
                "the operating system's random number generator failed: {e}"
            )),
            None,
        )
    })
}

/// Where the IVs of `ONNXAE01` chunks come from.
#[derive(Debug, Clone)]
pub(crate) enum IvSource {
    /// Fresh random IVs.
    Random,
    /// `iv` with its last 8 bytes XORed with the chunk index (u64 little-endian), for
    /// known-answer tests.
    Fixed([u8; 16]),
}

impl IvSource {
    /// The IVs of chunks `first_index ..`, one per element of `ivs`.
    pub(crate) fn fill(&self, first_index: u64, ivs: &mut [[u8; 16]]) -> Result<()> {
        match self {
            IvSource::Random => fill_random(ivs.as_flattened_mut()),
            IvSource::Fixed(base) => {
                for (k, iv) in ivs.iter_mut().enumerate() {
                    *iv = *base;
                    let index = (first_index + k as u64).to_le_bytes();
                    for (b, x) in iv[8..].iter_mut().zip(index) {
                        *b ^= x;
                    }
                }
                Ok(())
            }
        }
    }
}
