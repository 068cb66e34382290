//! Encrypted models: saving them to files and bytes, loading them back. Loading
//! decrypts straight into the buffer the model's large payloads then share, so no
//! second plaintext copy is made; saving streams the encoding through the cipher, so
//! no plaintext copy of the whole encoding is made either.

use std::path::Path;
use std::sync::Arc;

use super::decrypt::Opened;
use super::encrypt::EncryptingWriter;
use super::format::EncryptionFormat;
use super::options::{DecryptOptions, EncryptOptions};
use super::passphrase::Passphrase;
use super::source::{FileSource, Memory, Reported, Source};
use super::workers::Workers;
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::field::{ByteOwner, SharedOwner};
use crate::io::{
    load_from_owner, save_to_writer, write_atomically, NoHook, ParseOptions, PayloadBuffer,
    SerializeOptions, SharedProgress,
};
use crate::message::Message;
use crate::onnx::{Model, ModelProto};

/// A decrypted model, and the format it was stored in.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DecryptedModel {
    /// The model.
    pub model: Model,
    /// The format of the input: see [`is_authenticated`](Self::is_authenticated).
    pub format: EncryptionFormat,
}

impl DecryptedModel {
    /// Whether the model was verified to be exactly what was encrypted.
    /// `false` for `ONNXCRY1`: such a file can be modified by anyone without the
    /// passphrase and still load.
    pub fn is_authenticated(&self) -> bool {
        self.format.is_authenticated()
    }
}

/// The decrypted plaintext: a prefix of the buffer it was decrypted into (the rest
/// held the final block's padding).
struct Plaintext {
    buffer: ByteOwner,
    len: usize,
}

impl SharedOwner for Plaintext {
    fn bytes(&self) -> &[u8] {
        &self.buffer.bytes()[..self.len]
    }
}

/// A writer that tells `progress` the bytes written through it, a few MiB at a time (a
/// large payload handed over in one write still shows as it goes).
struct Reporting<'a, W> {
    inner: W,
    progress: Option<&'a SharedProgress>,
}

impl<W: std::io::Write> std::io::Write for Reporting<'_, W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        const STEP: usize = 4 << 20;
        let n = self.inner.write(&data[..data.len().min(STEP)])?;
        if let Some(p) = self.progress {
            p.advance(n as u64);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn serialize_options(options: &EncryptOptions) -> SerializeOptions {
    SerializeOptions::default().num_threads(options.num_threads)
}

/// Refuses a model with a tensor whose data is in an external file: encrypting only
/// the reference would leave the weights in plain text beside the encrypted model.
fn refuse_external_references(model: &ModelProto<'_>) -> Result<()> {
    model.try_visit_tensors(|_, t| {
        if t.is_external() && t.raw_data.is_none() && t.lazy_data.is_none() {
            let location = t.external_data_value("location").unwrap_or("?");
            let reason = format!(
                "its data is in the external file {location:?}, which encryption would leave \
                 in plain text; load the model with its external data first \
                 (or encrypt the model file with crypto::encrypt_file)"
            );
            return Err(Error::new(ErrorKind::IncompleteModel { reason }).in_tensor(t.name()));
        }
        Ok(())
    })
}

/// Encodes and encrypts `model` into a new vector, in the format `options` names.
///
/// # Errors
/// As [`encrypt_bytes`](super::encrypt_bytes); `IncompleteModel` for tensors whose
/// weights were left on disk or are in external files (the encrypted model is always
/// self-contained).
///
/// # Examples
/// ```
/// use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, Passphrase};
/// use onnx_light::io::ParseOptions;
/// use onnx_light::onnx::*;
///
/// let model = ModelProto::new(GraphProto::named("g"), vec![OperatorSetIdProto::new("", 21)]);
/// let passphrase = Passphrase::new("s3cret");
/// let sealed = crypto::encrypt_model(&model, &passphrase, &EncryptOptions::default().iterations(1_000))?;
/// let opened = crypto::load_encrypted_from_bytes(
///     &sealed, &passphrase, &DecryptOptions::default(), &ParseOptions::default())?;
/// assert!(opened.is_authenticated());
/// assert_eq!(opened.model, model);
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn encrypt_model(
    model: &ModelProto<'_>,
    passphrase: &Passphrase,
    options: &EncryptOptions,
) -> Result<Vec<u8>> {
    refuse_external_references(model)?;
    let mut writer = EncryptingWriter::new(Vec::new(), passphrase, options)?;
    save_to_writer(model, &mut writer, &serialize_options(options))?;
    writer.finish()
}

/// Encodes, encrypts and saves `model` to `path` atomically (a temporary file renamed
/// over `path` once complete and flushed; on error `path` is left as it was). The
/// encoding streams through the cipher: memory beyond the model is a few windows.
///
/// # Errors
/// As [`encrypt_model`]; I/O errors naming the file.
///
/// # Examples
/// ```no_run
/// use onnx_light::crypto::{self, EncryptOptions, Passphrase};
/// let model = onnx_light::io::load("model.onnx")?;
/// let passphrase = Passphrase::new(std::env::var("MODEL_KEY").unwrap());
/// crypto::save_encrypted(&model, "model.onnx.enc", &passphrase, &EncryptOptions::default())?;
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn save_encrypted(
    model: &ModelProto<'_>,
    path: impl AsRef<Path>,
    passphrase: &Passphrase,
    options: &EncryptOptions,
) -> Result<()> {
    let path = path.as_ref();
    refuse_external_references(model)?;
    if let Some(progress) = &options.progress {
        progress.expect(model.encoded_len());
    }
    write_atomically(path, &NoHook, true, false, |file| {
        let mut out = crate::io::atomic::SizeLimited::new(file);
        let mut writer = EncryptingWriter::new(&mut out, passphrase, options)?;
        let mut reported = Reporting {
            inner: &mut writer,
            progress: options.progress.as_ref(),
        };
        save_to_writer(model, &mut reported, &serialize_options(options))?;
        writer.finish()?;
        Ok(())
    })
    .map(|_| ())
    .map_err(|e| e.in_file(path))
}

/// Loads an encrypted model file in an authenticated format with default options
/// (`ONNXCRY1` needs [`load_encrypted_with`] and
/// [`DecryptOptions::allow_unauthenticated`]).
///
/// # Errors
/// See [`load_encrypted_with`].
///
/// # Examples
/// ```no_run
/// use onnx_light::crypto::{self, Passphrase};
/// let passphrase = Passphrase::new(std::env::var("MODEL_KEY").unwrap());
/// let opened = crypto::load_encrypted("model.onnx.enc", &passphrase)?;
/// println!("{} tensors", opened.model.tensors().len());
/// # Ok::<(), onnx_light::Error>(())
/// ```
pub fn load_encrypted(path: impl AsRef<Path>, passphrase: &Passphrase) -> Result<DecryptedModel> {
    load_encrypted_with(
        path,
        passphrase,
        &DecryptOptions::default(),
        &ParseOptions::default(),
    )
}

/// Loads an encrypted model file (any format, detected from its magic).
///
/// The file is read and decrypted in parallel (`decrypt.num_threads`), chunk by chunk,
/// into one buffer; the model's large payloads are slices of it (no second plaintext
/// copy). Decoding starts only once every chunk authenticated. `parse` applies to the
/// decoding, except `structure_only`, which an encrypted file cannot honour.
///
/// # Errors
/// `NotEncrypted`, `UnsupportedEncryption`, `UnauthenticatedEncryption` (`ONNXCRY1`
/// without [`DecryptOptions::allow_unauthenticated`]), `WrongPassphraseOrCorrupted`,
/// `TruncatedEncryption`, `TrailingBytes`, I/O errors, all naming the file;
/// `InvalidOption` for `structure_only`; decoding errors. For `ONNXCRY1`, bad padding and
/// a plaintext that does not decode as a model (whatever the reason, a `parse` limit
/// included) give one and the same `WrongPassphraseOrCorrupted` error, so that the
/// error reveals nothing about the decrypted bytes (no padding oracle).
pub fn load_encrypted_with(
    path: impl AsRef<Path>,
    passphrase: &Passphrase,
    decrypt: &DecryptOptions,
    parse: &ParseOptions,
) -> Result<DecryptedModel> {
    let path = path.as_ref();
    check_parse_options(parse)?;
    let file = crate::io::open::open_regular(path).map_err(|e| Error::io(e, Some(path)))?;
    let source = FileSource::new(&file, path)?;
    let result = match &parse.progress {
        Some(progress) => load(
            &Reported::new(&source, progress),
            passphrase,
            decrypt,
            parse,
        ),
        None => load(&source, passphrase, decrypt, parse),
    };
    result.map_err(|e| e.in_file(path))
}

/// Decrypts and decodes an encrypted model held in memory (any format). Large
/// payloads share the decryption buffer, as with [`load_encrypted_with`].
///
/// # Errors
/// As [`load_encrypted_with`], without file names.
pub fn load_encrypted_from_bytes(
    bytes: &[u8],
    passphrase: &Passphrase,
    decrypt: &DecryptOptions,
    parse: &ParseOptions,
) -> Result<DecryptedModel> {
    check_parse_options(parse)?;
    load(&Memory(bytes), passphrase, decrypt, parse)
}

fn check_parse_options(parse: &ParseOptions) -> Result<()> {
    parse.validate()?;
    if parse.mode == crate::io::LoadMode::StructureOnly {
        return Err(Error::invalid_option(
            "structure_only",
            "an encrypted file's payloads cannot be read from disk later; load the whole model",
        ));
    }
    Ok(())
}

fn load(
    source: &dyn Source,
    passphrase: &Passphrase,
    decrypt: &DecryptOptions,
    parse: &ParseOptions,
) -> Result<DecryptedModel> {
    let workers = Workers::new(decrypt.num_threads)?;
    let opened = Opened::open(source, passphrase, decrypt)?;
    let capacity = opened.capacity();
    // The plaintext is at least `capacity - 16` bytes: refuse before decrypting.
    if let Some(limit) = parse.max_model_size {
        let at_least = capacity.saturating_sub(16);
        if at_least > limit {
            return Err(Error::new(ErrorKind::LimitExceeded {
                which: Limit::MaxModelSize,
                limit,
                actual: at_least,
            }));
        }
    }
    let capacity = usize::try_from(capacity).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "encrypted model larger than the address space",
        })
    })?;
    let mut buffer = PayloadBuffer::new(capacity)?;
    let format = opened.format();
    // Without a MAC, every failure that depends on the decrypted bytes (padding, then
    // decoding) must look the same, or the error tells an attacker about the plaintext.
    let blind = |e: Error| {
        if format.is_authenticated() || matches!(e.kind(), ErrorKind::Io(_)) {
            e
        } else {
            Error::new(ErrorKind::WrongPassphraseOrCorrupted)
        }
    };
    let decrypted = workers
        .run(|| opened.decrypt_all(source, buffer.as_mut_slice()))
        .map_err(blind)
        .and_then(|len| {
            if len == 0 {
                // An empty model encrypts to an empty plaintext: what was encrypted was a
                // model, where an empty file given to a load is not.
                return Ok(Model::default());
            }
            let owner: ByteOwner = Arc::new(Plaintext {
                buffer: buffer.freeze()?,
                len,
            });
            // The decrypted model is all there is: nothing beside the encrypted file is
            // read.
            let inline = parse.clone().load_external_data(false);
            load_from_owner(owner, &inline).map_err(blind)
        });
    let model = opened.settle(decrypted)?;
    Ok(DecryptedModel { model, format })
}
