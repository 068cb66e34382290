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
//! [`WrongPassphraseOrCorrupted`](crate::ErrorKind::WrongPassphraseOrCorrupted) and
//! [`TruncatedEncryption`](crate::ErrorKind::TruncatedEncryption); none contains the
//! passphrase. A [`Passphrase`] has a redacted `Debug` and is zeroed when dropped, as
//! are derived keys. Decrypted files are created 0600.
//!
//! # `ONNXAE01`, byte by byte
//!
//! Integers are little-endian; `‖` is concatenation.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `ONNXAE01` (`01` is the version) |
//! | 8 | 1 | KDF id: `1` = PBKDF2-HMAC-SHA256 (the only one) |
//! | 9 | 3 | reserved, zero |
//! | 12 | 4 | PBKDF2 iterations, u32, [`MIN_ITERATIONS`] ..= [`MAX_ITERATIONS`] (default [`DEFAULT_ITERATIONS`]) |
//! | 16 | 4 | chunk size `C`, u32: a multiple of 16 in [`MIN_CHUNK_SIZE`] ..= [`MAX_CHUNK_SIZE`] (default [`DEFAULT_CHUNK_SIZE`]) |
//! | 20 | 32 | salt, random |
//! | 52 | 32 | header MAC = HMAC-SHA256(`K_mac`, bytes 0 .. 52) |
//! | 84 | | chunk records `0 .. n`: `IV_i` (16, random) ‖ AES-256-CBC(`K_enc`, `IV_i`) of the chunk ‖ `tag_i` (32) |
//!
//! `tag_i` = HMAC-SHA256(`K_mac`, header MAC ‖ u64(`i`) ‖ `IV_i` ‖ ciphertext ‖
//! u8(`final_i`)). The plaintext is cut into `n = max(1, ⌈len / C⌉)` chunks: all but the
//! last hold `C` bytes, unpadded, `final = 0`; the last holds `0 ..= C` bytes,
//! PKCS#7-padded, `final = 1`. A reader finds every record from the file's length.
//! `M` = PBKDF2-HMAC-SHA256(passphrase as UTF-8, salt, iterations, 32);
//! `K_enc` = HMAC-SHA256(`M`, `"ONNXAE01 AES-256-CBC key"` ‖ 0x01) and `K_mac` =
//! HMAC-SHA256(`M`, `"ONNXAE01 HMAC-SHA256 key"` ‖ 0x01) (HKDF-Expand, RFC 5869).
//!
//! Reading checks the magic, KDF id, reserved bytes, iterations and chunk size before
//! the KDF runs (a hostile header cannot make a reader spin), then the length, then the
//! header MAC (a wrong passphrase fails here), then every chunk's tag (in constant time,
//! in parallel) and the final padding; nothing is parsed or returned before all pass.
//! Any changed bit, chunks swapped, duplicated, dropped or moved between files, and
//! truncation anywhere are detected. Not hidden: the plaintext's length (to 16 bytes)
//! and the KDF parameters.
//!
//! # `ONNXCRY2` and `ONNXCRY1`, byte by byte
//!
//! | format | 0 .. 8 | 8 .. 24 | then | then |
//! |---|---|---|---|---|
//! | `ONNXCRY2` | magic | salt | nonce (12) ‖ Poly1305 tag (16) | ChaCha20 ciphertext (RFC 8439, no associated data) |
//! | `ONNXCRY1` | magic | salt | IV (16) | AES-256-CBC ciphertext, PKCS#7-padded |
//!
//! Both: key = PBKDF2-HMAC-SHA256(passphrase as UTF-8, salt, 100 000 iterations, 32).
//! `ONNXCRY2` is authenticated but whole-buffer: sealed and opened in memory on one
//! thread, its parameters not covered by the tag; a cut ciphertext fails the tag
//! (`WrongPassphraseOrCorrupted`; only a cut header is `TruncatedEncryption`).
//!
//! `ONNXCRY1` has **no MAC**: anyone can flip plaintext bits without the passphrase,
//! and a wrong passphrase shows only as bad padding, which about 1 in 256 wrong keys
//! passes. Hence the opt-in, and results that report `is_authenticated() == false`.
//! The model loaders give one error, `WrongPassphraseOrCorrupted` with no offset, for
//! bad padding and for a plaintext that does not decode, so that errors say nothing
//! about the decrypted bytes; the bytes functions can only report the padding. Its
//! encryption is one CBC chain (one thread); its decryption is parallel.
//!
//! # Memory and threads
//!
//! Loading decrypts into one buffer that the model's payloads then share; saving
//! streams the encoding through the cipher. For `ONNXAE01` and `ONNXCRY1`,
//! [`encrypt_file`], [`decrypt_file`], [`save_encrypted`] and [`EncryptingWriter`] work
//! a window at a time (four chunks per thread, at least eight, at most 256 MiB; 1 MiB
//! for `ONNXCRY1`) while the calling thread writes the window before, so files larger
//! than memory go through. `ONNXCRY2` holds the whole file in memory, and so does
//! encrypting a model with external data. File outputs are written to a temporary file
//! renamed into place only on success; a failed decryption leaves no output.

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
