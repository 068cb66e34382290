//! Encrypted models: `ONNXAE01`, this library's authenticated, streaming format and the
//! default for writing; `ONNXCRY2` (ChaCha20-Poly1305) and `ONNXCRY1` (AES-CBC, no MAC),
//! onnx_light's formats, read and written byte for byte for interoperability.
//!
//! This module owns the byte layouts, key derivation, and the parallel and streaming
//! machinery. It builds on [`io`](crate::io) (encoding to a writer, decoding from a
//! shared buffer, atomic file replacement) and knows nothing of what a model contains.
//!
//! ```
//! use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, Passphrase};
//! use onnx_light::io::ParseOptions;
//! use onnx_light::onnx::*;
//!
//! let model = ModelProto::new(GraphProto::named("g"), vec![OperatorSetIdProto::new("", 21)]);
//! let passphrase = Passphrase::new("correct horse battery staple");
//! let options = EncryptOptions::default().iterations(1_000); // default: 600 000
//! let sealed = crypto::encrypt_model(&model, &passphrase, &options)?;
//! assert_eq!(&sealed[..8], b"ONNXAE01");
//!
//! let opened = crypto::load_encrypted_from_bytes(
//!     &sealed, &passphrase, &DecryptOptions::default(), &ParseOptions::default())?;
//! assert!(opened.is_authenticated());
//! assert_eq!(opened.model, model);
//!
//! let wrong = Passphrase::new("correct horse battery stapler");
//! let err = crypto::decrypt_bytes(&sealed, &wrong, &DecryptOptions::default()).unwrap_err();
//! assert_eq!(err.kind(), &onnx_light::ErrorKind::WrongPassphraseOrCorrupted);
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! # The API
//!
//! | | in memory | files |
//! |---|---|---|
//! | models | [`encrypt_model`], [`load_encrypted_from_bytes`] | [`save_encrypted`], [`load_encrypted`], [`load_encrypted_with`] |
//! | bytes | [`encrypt_bytes`], [`decrypt_bytes`], [`EncryptingWriter`] | [`encrypt_file`], [`decrypt_file`] (streaming) |
//!
//! Writing takes [`EncryptOptions`] (format, PBKDF2 iterations, chunk size, threads).
//! An encrypted model is always self-contained: [`encrypt_file`] encrypts a model's
//! external weights with it, inline, and the model functions refuse a model that still
//! refers to external files. Reading detects the format from the magic
//! ([`EncryptionFormat::detect`]) and takes [`DecryptOptions`]; `ONNXCRY1` is refused
//! ([`UnauthenticatedEncryption`](crate::ErrorKind::UnauthenticatedEncryption)) unless
//! [`DecryptOptions::allow_unauthenticated`] is set. Errors distinguish
//! [`NotEncrypted`](crate::ErrorKind::NotEncrypted),
//! [`UnsupportedEncryption`](crate::ErrorKind::UnsupportedEncryption),
//! [`WrongPassphraseOrCorrupted`](crate::ErrorKind::WrongPassphraseOrCorrupted),
//! [`TruncatedEncryption`](crate::ErrorKind::TruncatedEncryption) and
//! [`TrailingBytes`](crate::ErrorKind::TrailingBytes) (bytes appended after the
//! encrypted stream, reported where it ends); none contains the passphrase. A [`Passphrase`] has a redacted `Debug` and is zeroed when dropped, as
//! are derived keys. Decrypted files are created 0600.
//!
//! # Formats
//!
//! The byte layouts of the three formats, what a reader checks before it derives a key,
//! and how much memory and how many threads each format uses are described in the
//! design note `docs/design/encryption-formats.md`. In short: `ONNXAE01` and `ONNXCRY1`
//! stream file to file a window of chunks at a time, so files larger than memory go
//! through; `ONNXCRY2` is sealed and opened whole, in memory, on one thread.

mod authenticated;
mod decrypt;
mod encrypt;
mod format;
mod kdf;
mod model;
mod onnxcry1;
mod onnxcry2;
mod options;
mod passphrase;
mod random;
mod source;
mod stream;
mod workers;

pub use authenticated::{MAX_CHUNK_SIZE, MIN_CHUNK_SIZE};
pub use decrypt::{decrypt_bytes, DecryptedBytes};
pub use encrypt::{encrypt_bytes, EncryptingWriter};
pub use format::EncryptionFormat;
// The test stand-in for PBKDF2: feature `test-hooks` (the workspace's tests), not for users.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use kdf::TestKdf;
pub use kdf::{
    DEFAULT_ITERATIONS, MAX_ITERATIONS, MIN_ITERATIONS, ONNXCRY1_ITERATIONS, ONNXCRY2_ITERATIONS,
};
pub use model::{
    encrypt_model, load_encrypted, load_encrypted_from_bytes, load_encrypted_with, save_encrypted,
    DecryptedModel,
};
pub use options::{DecryptOptions, EncryptOptions, DEFAULT_CHUNK_SIZE};
pub use passphrase::Passphrase;
pub use stream::{decrypt_file, encrypt_file};
