//! Decryption: opening an input of any format (magic, header, key, header MAC) and
//! decrypting it whole into one buffer or window by window into a writer.

use std::io::Write;

use super::authenticated::{ChunkCipher, Header, Layout, StreamEnd, HEADER_LEN, MIN_RECORD_LEN};
use super::encrypt::{ae_window_chunks, ONNXCRY1_WINDOW};
use super::format::EncryptionFormat;
use super::options::DecryptOptions;
use super::passphrase::Passphrase;
use super::source::{Memory, Source};
use super::workers::Workers;
use super::{onnxcry1, onnxcry2};
use crate::error::{Error, ErrorKind, Result};

/// An input whose format is known, whose header is checked and whose key is derived.
pub(crate) enum Opened {
    OnnxAe01 {
        cipher: Box<ChunkCipher>,
        layout: Layout,
    },
    OnnxCry1(Box<onnxcry1::Opener>),
    OnnxCry2(Box<onnxcry2::Opener>),
}

impl Opened {
    /// Detects the format and prepares decryption. An unauthenticated format is refused
    /// here unless allowed, before the KDF runs. For `ONNXAE01` the header's parameters
    /// are checked before the KDF runs, and the header MAC right after: a wrong
    /// passphrase fails here, before any ciphertext is read.
    pub(crate) fn open(
        source: &dyn Source,
        passphrase: &Passphrase,
        options: &DecryptOptions,
    ) -> Result<Opened> {
        let len = source.len();
        let mut prefix = [0u8; HEADER_LEN];
        let have = (len.min(HEADER_LEN as u64)) as usize;
        source.read_at(0, &mut prefix[..have])?;
        let format = EncryptionFormat::detect(&prefix[..have])?;
        if !options.allow_unauthenticated && !format.is_authenticated() {
            return Err(Error::at(
                ErrorKind::UnauthenticatedEncryption {
                    format: format.name(),
                },
                0,
            ));
        }
        match format {
            EncryptionFormat::OnnxAe01 => {
                let header = Header::parse(&prefix[..have])?;
                let layout = Layout::new(len, header.chunk_size);
                // Too short for a record: truncated, whatever the key. A length no
                // record boundary fits is a truncation or appended bytes: the key tells.
                let layout = match layout {
                    Err(e) if len < (HEADER_LEN + MIN_RECORD_LEN) as u64 => return Err(e),
                    layout => layout,
                };
                let cipher = Box::new(ChunkCipher::open(&options.kdf, passphrase, &header)?);
                let layout = layout.map_err(|truncated| match cipher.stream_end(source) {
                    StreamEnd::Final(end) => Error::at(ErrorKind::TrailingBytes, end),
                    StreamEnd::Broken(at) => Error::at(ErrorKind::WrongPassphraseOrCorrupted, at),
                    StreamEnd::Cut | StreamEnd::Unknown => truncated,
                })?;
                Ok(Opened::OnnxAe01 { cipher, layout })
            }
            EncryptionFormat::OnnxCry1 => Ok(Opened::OnnxCry1(Box::new(onnxcry1::Opener::new(
                source,
                passphrase,
                &options.kdf,
            )?))),
            EncryptionFormat::OnnxCry2 => Ok(Opened::OnnxCry2(Box::new(onnxcry2::Opener::new(
                source,
                passphrase,
                &options.kdf,
            )?))),
        }
    }

    /// The format.
    pub(crate) fn format(&self) -> EncryptionFormat {
        match self {
            Opened::OnnxAe01 { .. } => EncryptionFormat::OnnxAe01,
            Opened::OnnxCry1(_) => EncryptionFormat::OnnxCry1,
            Opened::OnnxCry2(_) => EncryptionFormat::OnnxCry2,
        }
    }

    /// What a decryption that ended with `decrypted` reports: `decrypted` itself, except
    /// for an `ONNXCRY1` input that is not whole blocks, which ends in an error either
    /// way (see [`onnxcry1::Opener::unaligned`]).
    pub(crate) fn settle<T>(&self, decrypted: Result<T>) -> Result<T> {
        match self {
            Opened::OnnxCry1(opener) => match opener.unaligned(&decrypted) {
                Some(e) => Err(e),
                None => decrypted,
            },
            _ => decrypted,
        }
    }

    /// Buffer bytes [`decrypt_all`](Self::decrypt_all) needs: the plaintext length plus
    /// at most 16 (never more than the input's length).
    pub(crate) fn capacity(&self) -> u64 {
        match self {
            Opened::OnnxAe01 { layout, .. } => layout.capacity(0..layout.chunks()),
            Opened::OnnxCry1(opener) => opener.ct_len(),
            Opened::OnnxCry2(opener) => opener.ct_len(),
        }
    }

    /// Decrypts everything into `dst` ([`capacity`](Self::capacity) bytes), in
    /// parallel on the current rayon pool; returns the plaintext length. On error the
    /// contents of `dst` are meaningless and must not be used.
    pub(crate) fn decrypt_all(&self, source: &dyn Source, dst: &mut [u8]) -> Result<usize> {
        match self {
            Opened::OnnxAe01 { cipher, layout } => {
                cipher.open_chunks(source, layout, 0..layout.chunks(), dst)
            }
            Opened::OnnxCry1(opener) => {
                opener.decrypt_range(source, 0, dst)?;
                let pad = opener.padding(&dst[dst.len() - 16..])?;
                Ok(dst.len() - pad)
            }
            Opened::OnnxCry2(opener) => {
                opener.decrypt(source, dst)?;
                Ok(dst.len())
            }
        }
    }

    /// Decrypts window by window into `out`, using `workers` for each window while the
    /// calling thread writes the window before; memory is two windows (see
    /// [`crate::crypto::decrypt_file`]). What reaches `out` before an error must be
    /// discarded: a later chunk may still fail.
    pub(crate) fn decrypt_to(
        &self,
        source: &dyn Source,
        out: &mut dyn Write,
        workers: &Workers,
    ) -> Result<()> {
        // Windows as (start, end) in the unit each format counts in: chunks, ciphertext
        // bytes, or (`ONNXCRY2`, one AEAD message) the whole input as one window.
        let (unit_total, per_window, buf_len) = match self {
            Opened::OnnxAe01 { cipher, layout } => {
                let per_window = ae_window_chunks(cipher.chunk_size(), workers.count()) as u64;
                let total = layout.chunks();
                (
                    total,
                    per_window,
                    layout.capacity(0..per_window.min(total)) as usize + 16,
                )
            }
            Opened::OnnxCry1(opener) => {
                let window = ONNXCRY1_WINDOW.max(2 * workers.count() * onnxcry1::PIECE) as u64;
                let total = opener.ct_len();
                (total, window, window.min(total) as usize)
            }
            Opened::OnnxCry2(opener) => {
                let len = usize::try_from(opener.ct_len()).map_err(|_| {
                    Error::new(ErrorKind::ValueOutOfRange {
                        what: "encrypted model larger than the address space",
                    })
                })?;
                (1, 1, len)
            }
        };
        let decrypt = |start: u64, end: u64, buf: &mut [u8]| -> Result<usize> {
            match self {
                Opened::OnnxAe01 { cipher, layout } => {
                    let dst = &mut buf[..layout.capacity(start..end) as usize];
                    cipher.open_chunks(source, layout, start..end, dst)
                }
                Opened::OnnxCry1(opener) => {
                    let dst = &mut buf[..(end - start) as usize];
                    opener.decrypt_range(source, start, dst)?;
                    let mut n = dst.len();
                    if end == opener.ct_len() {
                        n -= opener.padding(&dst[n - 16..])?;
                    }
                    Ok(n)
                }
                Opened::OnnxCry2(opener) => {
                    opener.decrypt(source, buf)?;
                    Ok(buf.len())
                }
            }
        };
        // Zeroed allocations: with a single window (`ONNXCRY2`) the second buffer is
        // never written, so its pages are never touched.
        let (mut current, mut pending) = (vec![0u8; buf_len], vec![0u8; buf_len]);
        let mut pending_len = 0;
        let mut start = 0;
        while start < unit_total {
            let end = (start + per_window).min(unit_total);
            let dst = &mut current;
            let ready = &pending[..pending_len];
            let (decrypted, written) = workers.overlap(
                || decrypt(start, end, dst),
                (!ready.is_empty()).then_some(|| out.write_all(ready)),
            );
            written.transpose()?;
            pending_len = decrypted?;
            std::mem::swap(&mut current, &mut pending);
            start = end;
        }
        out.write_all(&pending[..pending_len])?;
        Ok(())
    }
}

/// Plaintext decrypted from bytes, and the format it was in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecryptedBytes {
    /// The plaintext.
    pub bytes: Vec<u8>,
    /// The format of the input: see [`is_authenticated`](Self::is_authenticated).
    pub format: EncryptionFormat,
}

impl DecryptedBytes {
    /// Whether the plaintext was verified to be exactly what was encrypted: `false`
    /// for `ONNXCRY1`, which a third party can modify undetected.
    pub fn is_authenticated(&self) -> bool {
        self.format.is_authenticated()
    }
}

/// Decrypts `data` in any format (detected from its magic), in parallel (`ONNXCRY2`:
/// on one thread).
///
/// # Errors
/// `NotEncrypted`, `UnsupportedEncryption` (another version, KDF or parameters out of
/// range), `UnauthenticatedEncryption` (`ONNXCRY1` without
/// [`DecryptOptions::allow_unauthenticated`]), `WrongPassphraseOrCorrupted`,
/// `TruncatedEncryption`, `TrailingBytes` (bytes appended after the encrypted stream);
/// the error's offset says where the problem was found.
///
/// # Examples
/// See [`encrypt_bytes`](super::encrypt_bytes).
pub fn decrypt_bytes(
    data: &[u8],
    passphrase: &Passphrase,
    options: &DecryptOptions,
) -> Result<DecryptedBytes> {
    let workers = Workers::new(options.num_threads)?;
    let source = Memory(data);
    let opened = Opened::open(&source, passphrase, options)?;
    // Bounded by the input's length: a header cannot make this allocate more.
    let mut bytes = vec![0u8; opened.capacity() as usize];
    let n = opened.settle(workers.run(|| opened.decrypt_all(&source, &mut bytes)))?;
    bytes.truncate(n);
    Ok(DecryptedBytes {
        bytes,
        format: opened.format(),
    })
}
