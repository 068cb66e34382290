//! Options for encrypting and decrypting, with documented defaults. Invalid values are
//! errors, never silently corrected.

use super::authenticated::check_chunk_size;
use super::format::EncryptionFormat;
#[cfg(feature = "test-hooks")]
use super::kdf::TestKdf;
use super::kdf::{
    check_iterations, Kdf, DEFAULT_ITERATIONS, ONNXCRY1_ITERATIONS, ONNXCRY2_ITERATIONS,
};
use crate::error::{Error, Result};
use crate::io::{Progress, SharedProgress};
use std::sync::Arc;

/// Plaintext bytes per `ONNXAE01` chunk unless told otherwise (1 MiB).
pub const DEFAULT_CHUNK_SIZE: u32 = 1 << 20;

/// How to encrypt. Start from `EncryptOptions::default()` (`ONNXAE01`, 600 000 PBKDF2
/// iterations, 1 MiB chunks, all cores):
///
/// ```
/// use onnx_light::crypto::{EncryptOptions, EncryptionFormat};
/// let options = EncryptOptions::default().iterations(1_000_000).num_threads(4);
/// let legacy = EncryptOptions::default().format(EncryptionFormat::OnnxCry1);
/// # options.validate()?; legacy.validate()?;
/// # Ok::<(), onnx_light::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EncryptOptions {
    /// The format to write (default [`EncryptionFormat::OnnxAe01`]).
    pub format: EncryptionFormat,
    /// PBKDF2 iterations; `None` means the format's default: 600 000 for `ONNXAE01`
    /// (accepted: [`MIN_ITERATIONS`](super::MIN_ITERATIONS) ..=
    /// [`MAX_ITERATIONS`](super::MAX_ITERATIONS)); `ONNXCRY1` and `ONNXCRY2` fix
    /// 100 000 and refuse any other value.
    pub iterations: Option<u32>,
    /// Plaintext bytes per `ONNXAE01` chunk: a multiple of 16 in
    /// [`MIN_CHUNK_SIZE`](super::MIN_CHUNK_SIZE) ..=
    /// [`MAX_CHUNK_SIZE`](super::MAX_CHUNK_SIZE) (default 1 MiB). `ONNXCRY1` and
    /// `ONNXCRY2` have no chunks and do not use it.
    pub chunk_size: u32,
    /// Worker threads; 0 means all cores (default 0). `ONNXCRY1` encryption (one CBC
    /// chain) and `ONNXCRY2` (one AEAD message) run on one thread whatever this says.
    pub num_threads: usize,
    /// Told the plaintext bytes a file encryption ([`encrypt_file`](super::encrypt_file),
    /// [`save_encrypted`](super::save_encrypted)) encrypts, and the bytes of a model and
    /// its external data it loads first (default none); see [`Progress`].
    pub progress: Option<SharedProgress>,
    pub(crate) kdf: Kdf,
    #[cfg(feature = "test-hooks")]
    fixed: Option<FixedRandomness>,
}

impl Default for EncryptOptions {
    fn default() -> Self {
        EncryptOptions {
            format: EncryptionFormat::OnnxAe01,
            iterations: None,
            chunk_size: DEFAULT_CHUNK_SIZE,
            num_threads: 0,
            progress: None,
            kdf: Kdf::default(),
            #[cfg(feature = "test-hooks")]
            fixed: None,
        }
    }
}

/// Salt and IVs chosen by a test instead of the operating system's random generator
/// (feature `test-hooks`; without it none is ever made).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
pub(crate) struct FixedRandomness {
    pub(crate) salt: Vec<u8>,
    pub(crate) iv: [u8; 16],
}

impl EncryptOptions {
    /// Sets `format`.
    pub fn format(mut self, format: EncryptionFormat) -> Self {
        self.format = format;
        self
    }
    /// Sets `iterations`.
    pub fn iterations(mut self, iterations: u32) -> Self {
        self.iterations = Some(iterations);
        self
    }
    /// Sets `chunk_size`.
    pub fn chunk_size(mut self, bytes: u32) -> Self {
        self.chunk_size = bytes;
        self
    }
    /// Sets `num_threads` (0 = all cores).
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = n;
        self
    }
    /// Sets `progress`: `progress` is told the bytes encrypted (see [`Progress`]).
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(SharedProgress::new(progress));
        self
    }

    /// Replaces PBKDF2 by `kdf`. **Insecure; for the workspace's tests only** (thousands
    /// of decryptions in a debug build; feature `test-hooks`). Not part of the stable API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn insecure_test_kdf(mut self, kdf: TestKdf) -> Self {
        self.kdf = Kdf::test(kdf);
        self
    }

    /// Uses `salt` (16 bytes for `ONNXCRY1` and `ONNXCRY2`, 32 for `ONNXAE01`) and
    /// `iv` instead of random ones, so that known-answer tests can compare bytes.
    /// `ONNXAE01` chunk `i` gets `iv` with its last 8 bytes XORed with `i` (u64
    /// little-endian); `ONNXCRY2` takes its 12-byte nonce from the first 12 bytes of
    /// `iv`. **Insecure; for the workspace's tests only** (feature `test-hooks`). Not part
    /// of the stable API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn insecure_fixed_salt_and_iv(mut self, salt: &[u8], iv: [u8; 16]) -> Self {
        self.fixed = Some(FixedRandomness {
            salt: salt.to_vec(),
            iv,
        });
        self
    }

    /// The salt and IV a known-answer test fixed (feature `test-hooks`); `None` in
    /// every other build, where salts and IVs always come from the random generator.
    pub(crate) fn fixed(&self) -> Option<&FixedRandomness> {
        #[cfg(feature = "test-hooks")]
        return self.fixed.as_ref();
        #[cfg(not(feature = "test-hooks"))]
        None
    }

    /// The PBKDF2 iteration count that will be used.
    pub fn effective_iterations(&self) -> u32 {
        match self.format {
            EncryptionFormat::OnnxAe01 => self.iterations.unwrap_or(DEFAULT_ITERATIONS),
            EncryptionFormat::OnnxCry1 => ONNXCRY1_ITERATIONS,
            EncryptionFormat::OnnxCry2 => ONNXCRY2_ITERATIONS,
        }
    }

    /// Checks that the options make sense for the chosen format.
    ///
    /// # Errors
    /// `InvalidOption` naming the option and why.
    pub fn validate(&self) -> Result<()> {
        match self.format {
            EncryptionFormat::OnnxAe01 => {
                check_iterations(self.effective_iterations())
                    .map_err(|reason| Error::invalid_option("iterations", reason))?;
                check_chunk_size(self.chunk_size)
                    .map_err(|reason| Error::invalid_option("chunk_size", reason))?;
            }
            EncryptionFormat::OnnxCry1 | EncryptionFormat::OnnxCry2 => {
                let fixed = self.effective_iterations();
                if let Some(n) = self.iterations.filter(|&n| n != fixed) {
                    return Err(Error::invalid_option(
                        "iterations",
                        format!(
                            "{} fixes {fixed} PBKDF2 iterations, not {n}",
                            self.format.name()
                        ),
                    ));
                }
            }
        }
        if let Some(fixed) = self.fixed() {
            let want = match self.format {
                EncryptionFormat::OnnxAe01 => super::authenticated::SALT_LEN,
                EncryptionFormat::OnnxCry1 => super::onnxcry1::SALT_LEN,
                EncryptionFormat::OnnxCry2 => super::onnxcry2::SALT_LEN,
            };
            if fixed.salt.len() != want {
                return Err(Error::invalid_option(
                    "salt",
                    format!("{} bytes given, {want} needed", fixed.salt.len()),
                ));
            }
        }
        Ok(())
    }
}

/// How to decrypt. `DecryptOptions::default()` uses all cores and reads the
/// authenticated formats only (`ONNXAE01`, `ONNXCRY2`); `ONNXCRY1` needs an opt-in:
///
/// ```
/// use onnx_light::crypto::DecryptOptions;
/// let legacy = DecryptOptions::default().allow_unauthenticated(true).num_threads(2);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DecryptOptions {
    /// Worker threads; 0 means all cores (default 0).
    pub num_threads: usize,
    /// Read `ONNXCRY1`, which has no integrity protection (default false: such input is
    /// refused with [`UnauthenticatedEncryption`](crate::ErrorKind::UnauthenticatedEncryption)
    /// before any key is derived). Results from it report `is_authenticated() == false`.
    pub allow_unauthenticated: bool,
    /// Told the encrypted bytes [`decrypt_file`](super::decrypt_file) reads (default
    /// none; a load of an encrypted model reports to `ParseOptions::progress`); see
    /// [`Progress`].
    pub progress: Option<SharedProgress>,
    pub(crate) kdf: Kdf,
}

impl DecryptOptions {
    /// Sets `num_threads` (0 = all cores).
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = n;
        self
    }
    /// Sets `allow_unauthenticated`.
    pub fn allow_unauthenticated(mut self, yes: bool) -> Self {
        self.allow_unauthenticated = yes;
        self
    }
    /// Sets `progress`: `progress` is told the encrypted bytes read (see [`Progress`]).
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(SharedProgress::new(progress));
        self
    }
    /// Replaces PBKDF2 by `kdf`. **Insecure; for the workspace's tests only** (feature
    /// `test-hooks`). Not part of the stable API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn insecure_test_kdf(mut self, kdf: TestKdf) -> Self {
        self.kdf = Kdf::test(kdf);
        self
    }
}
