//! Encryption: in memory ([`encrypt_bytes`]) and as a stream ([`EncryptingWriter`]),
//! in any format. Streams hold a few windows of chunks at a time, whatever the
//! input's size (`ONNXCRY2`, one AEAD message, holds it all).

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;

use super::authenticated::{self, ChunkCipher};
use super::format::EncryptionFormat;
use super::options::EncryptOptions;
use super::passphrase::Passphrase;
use super::random::{fill_random, IvSource};
use super::workers::Workers;
use super::{onnxcry1, onnxcry2};
use crate::error::{Error, Result};

/// Plaintext an `ONNXCRY1` stream encrypts per write to the inner writer.
pub(crate) const ONNXCRY1_WINDOW: usize = 1 << 20;

/// Chunks an `ONNXAE01` stream seals or opens per window: four per thread (at least
/// eight) so that threads stay busy when chunks take unequal time, but no more than
/// 256 MiB (at least two chunks) so that memory stays bounded whatever the chunk size.
pub(crate) fn ae_window_chunks(chunk_size: usize, threads: usize) -> usize {
    let wanted = (4 * threads).max(8);
    let cap = ((256usize << 20) / chunk_size).max(2);
    wanted.min(cap)
}

/// The cipher state of one stream.
enum Sealing {
    OnnxAe01 {
        cipher: Box<ChunkCipher>,
        ivs: IvSource,
        next_index: u64,
    },
    OnnxCry1(Box<onnxcry1::Sealer>),
    /// `ONNXCRY2` is one AEAD message whose tag is in the header: nothing is written
    /// until the whole plaintext is known.
    OnnxCry2(Box<onnxcry2::Sealer>),
}

impl Sealing {
    fn format(&self) -> EncryptionFormat {
        match self {
            Sealing::OnnxAe01 { .. } => EncryptionFormat::OnnxAe01,
            Sealing::OnnxCry1(_) => EncryptionFormat::OnnxCry1,
            Sealing::OnnxCry2(_) => EncryptionFormat::OnnxCry2,
        }
    }
}

/// Checks `options` and `passphrase`, draws the salt and derives the keys; returns the
/// cipher state and the header to write first (empty for `ONNXCRY2`, whose header
/// follows from the sealed plaintext).
fn start(passphrase: &Passphrase, options: &EncryptOptions) -> Result<(Sealing, Vec<u8>)> {
    options.validate()?;
    if passphrase.is_empty() {
        return Err(Error::invalid_option(
            "passphrase",
            "is empty; an empty passphrase protects nothing",
        ));
    }
    match options.format {
        EncryptionFormat::OnnxAe01 => {
            let mut salt = [0u8; authenticated::SALT_LEN];
            let ivs = match options.fixed() {
                Some(fixed) => {
                    salt.copy_from_slice(&fixed.salt);
                    IvSource::Fixed(fixed.iv)
                }
                None => {
                    fill_random(&mut salt)?;
                    IvSource::Random
                }
            };
            let (cipher, header) = ChunkCipher::create(
                &options.kdf,
                passphrase,
                options.effective_iterations(),
                options.chunk_size,
                salt,
            );
            let sealing = Sealing::OnnxAe01 {
                cipher: Box::new(cipher),
                ivs,
                next_index: 0,
            };
            Ok((sealing, header.to_bytes().to_vec()))
        }
        EncryptionFormat::OnnxCry1 => {
            let mut salt = [0u8; onnxcry1::SALT_LEN];
            let mut iv = [0u8; 16];
            match options.fixed() {
                Some(fixed) => {
                    salt.copy_from_slice(&fixed.salt);
                    iv = fixed.iv;
                }
                None => {
                    fill_random(&mut salt)?;
                    fill_random(&mut iv)?;
                }
            }
            let (sealer, header) = onnxcry1::Sealer::new(&options.kdf, passphrase, salt, iv);
            Ok((Sealing::OnnxCry1(Box::new(sealer)), header.to_vec()))
        }
        EncryptionFormat::OnnxCry2 => {
            let mut salt = [0u8; onnxcry2::SALT_LEN];
            let mut nonce = [0u8; onnxcry2::NONCE_LEN];
            match options.fixed() {
                Some(fixed) => {
                    salt.copy_from_slice(&fixed.salt);
                    nonce.copy_from_slice(&fixed.iv[..onnxcry2::NONCE_LEN]);
                }
                None => {
                    fill_random(&mut salt)?;
                    fill_random(&mut nonce)?;
                }
            }
            let sealer = onnxcry2::Sealer::new(&options.kdf, passphrase, salt, nonce);
            Ok((Sealing::OnnxCry2(Box::new(sealer)), Vec::new()))
        }
    }
}

/// Encrypts `plaintext` in memory; `ONNXAE01` chunks are sealed in parallel.
///
/// # Errors
/// `InvalidOption` for invalid options or an empty passphrase; an I/O error if the
/// operating system's random generator fails; `ValueOutOfRange` for an `ONNXCRY2`
/// plaintext over 256 GiB.
///
/// # Examples
/// ```
/// use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, Passphrase};
/// let passphrase = Passphrase::new("s3cret");
/// let sealed = crypto::encrypt_bytes(b"weights", &passphrase, &EncryptOptions::default().iterations(1_000))?;
/// let opened = crypto::decrypt_bytes(&sealed, &passphrase, &DecryptOptions::default())?;
/// assert_eq!(opened.bytes, b"weights");
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn encrypt_bytes(
    plaintext: &[u8],
    passphrase: &Passphrase,
    options: &EncryptOptions,
) -> Result<Vec<u8>> {
    let (sealing, mut out) = start(passphrase, options)?;
    match sealing {
        Sealing::OnnxAe01 { cipher, ivs, .. } => {
            let header_len = out.len();
            out.resize(header_len + cipher.sealed_len(plaintext.len(), true), 0);
            let workers = Workers::new(options.num_threads)?;
            workers.run(|| cipher.seal_chunks(&ivs, 0, plaintext, true, &mut out[header_len..]))?;
        }
        Sealing::OnnxCry1(mut sealer) => {
            let header_len = out.len();
            out.reserve_exact(plaintext.len() + 16);
            out.extend_from_slice(plaintext);
            out.resize(out.len() + 16, 0);
            let n = sealer.finish(&mut out[header_len..], plaintext.len());
            out.truncate(header_len + n);
        }
        Sealing::OnnxCry2(sealer) => {
            out.reserve_exact(onnxcry2::HEADER_LEN + plaintext.len());
            out.resize(onnxcry2::HEADER_LEN, 0);
            out.extend_from_slice(plaintext);
            let header = sealer.seal(&mut out[onnxcry2::HEADER_LEN..])?;
            out[..onnxcry2::HEADER_LEN].copy_from_slice(&header);
        }
    }
    Ok(out)
}

/// A writer that encrypts what is written to it and passes the ciphertext on to an
/// inner writer, a window at a time (for `ONNXAE01`, four chunks per thread and at
/// least eight, sealed in parallel while the calling thread writes the window before;
/// 1 MiB for `ONNXCRY1`). Memory is about three windows, whatever the stream's length;
/// `ONNXCRY2`, one AEAD message with its tag in the header, buffers the whole
/// plaintext and writes everything at [`finish`](Self::finish).
///
/// Call [`finish`](Self::finish) at the end: it writes the final chunk (and padding).
/// A writer dropped without `finish` leaves a stream that decryption reports as
/// truncated (`ONNXAE01`), usually as wrong passphrase or corrupted (`ONNXCRY1`), or
/// nothing at all (`ONNXCRY2`).
///
/// # Examples
/// ```
/// use std::io::Write;
/// use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, EncryptingWriter, Passphrase};
/// let passphrase = Passphrase::new("s3cret");
/// let options = EncryptOptions::default().iterations(1_000).chunk_size(64);
/// let mut writer = EncryptingWriter::new(Vec::new(), &passphrase, &options)?;
/// writer.write_all(b"first part, ")?;
/// writer.write_all(b"second part")?;
/// let sealed = writer.finish()?;
/// let opened = crypto::decrypt_bytes(&sealed, &passphrase, &DecryptOptions::default())?;
/// assert_eq!(opened.bytes, b"first part, second part");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EncryptingWriter<W: Write> {
    inner: W,
    sealing: Sealing,
    /// Threads for `ONNXAE01` windows (the other formats seal on one thread).
    workers: Option<Workers>,
    /// Set when sealing or writing failed: the stream is then unusable.
    failed: bool,
    /// Plaintext, `window + unit` bytes; `filled` of them hold data.
    buf: Vec<u8>,
    filled: usize,
    /// Bytes sealed at a time, once more data is known to follow.
    window: usize,
    /// Sealed records of the window being sealed, and of the one before, which is
    /// written to `inner` meanwhile (`pending_len` bytes).
    out: Vec<u8>,
    pending: Vec<u8>,
    pending_len: usize,
}

impl<W: Write> EncryptingWriter<W> {
    /// Derives the keys (this runs the KDF) and writes the header to `inner`.
    ///
    /// # Errors
    /// `InvalidOption` for invalid options or an empty passphrase; I/O errors of
    /// `inner` or of the random generator.
    pub fn new(mut inner: W, passphrase: &Passphrase, options: &EncryptOptions) -> Result<Self> {
        let (sealing, header) = start(passphrase, options)?;
        let (workers, window, unit) = match &sealing {
            Sealing::OnnxAe01 { cipher, .. } => {
                let workers = Workers::new(options.num_threads)?;
                let cs = cipher.chunk_size();
                let window = ae_window_chunks(cs, workers.count()) * cs;
                (Some(workers), window, cs)
            }
            Sealing::OnnxCry1(_) => (None, ONNXCRY1_WINDOW, 16),
            // The buffer grows with the plaintext and is never sealed early.
            Sealing::OnnxCry2(_) => (None, usize::MAX, 0),
        };
        inner.write_all(&header)?;
        Ok(EncryptingWriter {
            inner,
            sealing,
            workers,
            failed: false,
            buf: if window == usize::MAX {
                Vec::new()
            } else {
                vec![0; window + unit]
            },
            filled: 0,
            window,
            out: Vec::new(),
            pending: Vec::new(),
            pending_len: 0,
        })
    }

    /// Seals the first `window` buffered bytes, which are known not to end the stream,
    /// while writing the window sealed before, and moves the rest to the front.
    fn seal_window(&mut self) -> Result<()> {
        self.check_usable()?;
        self.failed = true; // until this window is written
        let window = self.window;
        match &mut self.sealing {
            Sealing::OnnxAe01 { .. } => {
                self.pending_len = self.seal_ae01(window, false)?;
                std::mem::swap(&mut self.out, &mut self.pending);
            }
            Sealing::OnnxCry1(sealer) => {
                sealer.encrypt(&mut self.buf[..window]);
                self.inner.write_all(&self.buf[..window])?;
            }
            Sealing::OnnxCry2(_) => {}
        }
        self.buf.copy_within(window..self.filled, 0);
        self.filled -= window;
        self.failed = false;
        Ok(())
    }

    /// `ONNXAE01`: seals the first `len` buffered bytes (the end of the stream when
    /// `last`) into `out` on the workers, while this thread writes the records sealed
    /// before (`pending`). Returns the sealed length.
    fn seal_ae01(&mut self, len: usize, last: bool) -> Result<usize> {
        let (
            Sealing::OnnxAe01 {
                cipher,
                ivs,
                next_index,
            },
            Some(workers),
        ) = (&mut self.sealing, self.workers.as_ref())
        else {
            return Err(Error::io(
                io::Error::other("ONNXAE01 sealing called on another format"),
                None,
            ));
        };
        let need = cipher.sealed_len(len, last);
        if self.out.len() < need {
            self.out.resize(need, 0);
        }
        let (buf, out, first) = (&self.buf[..len], &mut self.out, *next_index);
        let (inner, pending) = (&mut self.inner, &self.pending[..self.pending_len]);
        let (sealed, written) = workers.overlap(
            || cipher.seal_chunks(ivs, first, buf, last, out),
            (!pending.is_empty()).then_some(|| inner.write_all(pending)),
        );
        written.transpose()?;
        let n = sealed?;
        *next_index += (len / cipher.chunk_size()) as u64;
        Ok(n)
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::io(
                io::Error::other("an earlier write to this encrypting writer failed"),
                None,
            ));
        }
        Ok(())
    }

    /// Seals what remains as the end of the stream and flushes the inner writer.
    ///
    /// # Errors
    /// I/O errors of the inner writer or of the random generator.
    pub fn finish(mut self) -> Result<W> {
        self.check_usable()?;
        let filled = self.filled;
        match &mut self.sealing {
            Sealing::OnnxAe01 { .. } => {
                let n = self.seal_ae01(filled, true)?;
                self.inner.write_all(&self.out[..n])?;
            }
            Sealing::OnnxCry1(sealer) => {
                // `buf` is 16 bytes longer than a window, and `filled` is at most one.
                let n = sealer.finish(&mut self.buf, filled);
                self.inner.write_all(&self.buf[..n])?;
            }
            Sealing::OnnxCry2(sealer) => {
                let header = sealer.seal(&mut self.buf[..filled])?;
                self.inner.write_all(&header)?;
                self.inner.write_all(&self.buf[..filled])?;
            }
        }
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// Encrypts everything `reader` (the file `path`) yields, reading straight into
    /// the window. Returns the number of plaintext bytes read.
    pub(crate) fn write_from(&mut self, reader: &mut impl Read, path: &Path) -> Result<u64> {
        self.check_usable()?;
        if matches!(self.sealing, Sealing::OnnxCry2(_)) {
            let n = reader
                .read_to_end(&mut self.buf)
                .map_err(|e| Error::io(e, Some(path)))?;
            self.filled += n;
            return Ok(n as u64);
        }
        let mut total = 0u64;
        loop {
            let n = match reader.read(&mut self.buf[self.filled..]) {
                Ok(0) => return Ok(total),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(e, Some(path))),
            };
            self.filled += n;
            total += n as u64;
            if self.filled > self.window {
                self.seal_window()?;
            }
        }
    }
}

impl<W: Write> Write for EncryptingWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.check_usable().map_err(io::Error::other)?;
        if matches!(self.sealing, Sealing::OnnxCry2(_)) {
            self.buf.extend_from_slice(data);
            self.filled += data.len();
            return Ok(data.len());
        }
        let mut rest = data;
        while !rest.is_empty() {
            let take = (self.buf.len() - self.filled).min(rest.len());
            self.buf[self.filled..self.filled + take].copy_from_slice(&rest[..take]);
            self.filled += take;
            rest = &rest[take..];
            if self.filled > self.window {
                self.seal_window().map_err(io::Error::other)?;
            }
        }
        Ok(data.len())
    }

    /// Flushes the inner writer. Buffered plaintext stays buffered: a chunk is sealed
    /// only once it is known whether it is the last.
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> fmt::Debug for EncryptingWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncryptingWriter")
            .field("format", &self.sealing.format())
            .field("buffered", &self.filled)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}
