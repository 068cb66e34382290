//! Encrypted models: `ONNXAE01`, this library's authenticated format and the default for
//! writing, and `ONNXCRY1`, onnx_light's format, read and written byte for byte for
//! interoperability.
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
//! Writing takes [`EncryptOptions`] (format, PBKDF2 iterations, chunk size, threads);
//! reading detects the format from the magic ([`EncryptionFormat::detect`]) and takes
//! [`DecryptOptions`] (threads; `require_authenticated` refuses `ONNXCRY1`). Every
//! result of a decryption says which format it came from and whether it is
//! authenticated. Errors distinguish [`NotEncrypted`](crate::ErrorKind::NotEncrypted),
//! [`UnsupportedEncryption`](crate::ErrorKind::UnsupportedEncryption) (another version,
//! KDF, or parameters out of range), [`WrongPassphraseOrCorrupted`](crate::ErrorKind::WrongPassphraseOrCorrupted)
//! and [`TruncatedEncryption`](crate::ErrorKind::TruncatedEncryption); none contains
//! the passphrase or key material. A [`Passphrase`] has a redacted `Debug`, and it and
//! all derived keys are zeroed when dropped.
//!
//! # `ONNXAE01`, byte by byte
//!
//! Integers are little-endian. `‖` is concatenation.
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `ONNXAE01` (ASCII; `01` is the version) |
//! | 8 | 1 | KDF id: `1` = PBKDF2-HMAC-SHA256 (the only one) |
//! | 9 | 3 | reserved, zero |
//! | 12 | 4 | PBKDF2 iterations, u32, [`MIN_ITERATIONS`] ..= [`MAX_ITERATIONS`] (default [`DEFAULT_ITERATIONS`]) |
//! | 16 | 4 | chunk size `C`, u32: a multiple of 16 in [`MIN_CHUNK_SIZE`] ..= [`MAX_CHUNK_SIZE`] (default [`DEFAULT_CHUNK_SIZE`]) |
//! | 20 | 32 | salt, random |
//! | 52 | 32 | header MAC = HMAC-SHA256(`K_mac`, bytes 0 .. 52) |
//! | 84 | | chunk records `0 .. n` |
//!
//! Chunk record `i`:
//!
//! | bytes | field |
//! |---:|---|
//! | 16 | `IV_i`, random |
//! | `L_i` | AES-256-CBC(`K_enc`, `IV_i`) of the chunk's plaintext |
//! | 32 | `tag_i` = HMAC-SHA256(`K_mac`, header MAC ‖ u64(`i`) ‖ `IV_i` ‖ ciphertext ‖ u8(`final_i`)) |
//!
//! The plaintext is cut into `n = max(1, ⌈len / C⌉)` chunks. Every chunk but the last
//! holds exactly `C` bytes, is encrypted without padding (`L_i = C`) and has
//! `final_i = 0`; the last holds the remaining `0 ..= C` bytes, is PKCS#7-padded
//! (`L = 16 ..= C + 16`) and has `final = 1`. So every record is `C + 48` bytes except
//! the last, which is `64 ..= C + 64`, and a reader finds all records from the file's
//! length alone.
//!
//! Keys: `M` = PBKDF2-HMAC-SHA256(passphrase as UTF-8, salt, iterations, 32 bytes);
//! `K_enc` = HMAC-SHA256(`M`, `"ONNXAE01 AES-256-CBC key"` ‖ 0x01) and
//! `K_mac` = HMAC-SHA256(`M`, `"ONNXAE01 HMAC-SHA256 key"` ‖ 0x01) (HKDF-Expand,
//! RFC 5869, with `M` as the pseudorandom key): independent keys for encryption and
//! authentication.
//!
//! Reading checks, in this order: the magic; the KDF id, reserved bytes, iteration
//! count and chunk size (refused before the KDF runs, so a hostile header cannot make
//! a reader spin); that the length is a whole number of records; then derives the
//! keys and verifies the header MAC (a wrong passphrase fails here, before any
//! ciphertext is read); then verifies every chunk's tag (in parallel, each while its
//! chunk is decrypted in the same pass) and the final chunk's padding. Tags are
//! compared in constant time. Nothing is parsed or returned until every chunk verified.
//!
//! What the construction catches: any changed bit (the header MAC covers the header,
//! each tag its chunk); chunks swapped, duplicated or dropped (each tag binds its
//! index); truncation at a chunk boundary (the last chunk present is not marked final;
//! reported as truncation) and anywhere else (the length fits no record boundary, or
//! the last record's tag fails); records moved between files (each tag binds the
//! header MAC, and every file has its own salt and so its own keys). What it does not
//! hide: the plaintext's length (to within 16 bytes) and the KDF parameters.
//!
//! # `ONNXCRY1`, byte by byte
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `ONNXCRY1` |
//! | 8 | 16 | salt, random |
//! | 24 | 16 | IV, random |
//! | 40 | | AES-256-CBC(`K`, IV) of the serialized model, PKCS#7-padded (a positive multiple of 16 bytes) |
//!
//! `K` = PBKDF2-HMAC-SHA256(passphrase as UTF-8, salt, 100 000 iterations, 32 bytes).
//!
//! `ONNXCRY1` has **no MAC**. Anyone can flip bits of the plaintext (with some
//! garbling) without knowing the passphrase, and a wrong passphrase is detected only by
//! the padding, which about 1 in 256 wrong keys passes (the garbage then fails to
//! decode, or at worst decodes). It is supported so that files made by onnx_light can be
//! read and written; results from it report `is_authenticated() == false`, and
//! [`DecryptOptions::require_authenticated`] refuses it. Its encryption is a single CBC
//! chain and runs on one thread; its decryption is parallel.
//!
//! # Memory and threads
//!
//! `ONNXAE01` chunks are sealed and opened in parallel on `num_threads` threads.
//! Loading a model decrypts into one buffer that the model's payloads then share;
//! saving streams the encoding through the cipher. [`encrypt_file`], [`decrypt_file`],
//! [`save_encrypted`] and [`EncryptingWriter`] work window by window: a window is
//! four chunks per thread and at least eight (never more than 256 MiB unless two
//! chunks are larger), or 1 MiB for `ONNXCRY1` (more with many threads). While the
//! workers process one window, the calling thread writes the one before, so about
//! three windows are in memory whatever the file's size, and files larger than memory
//! go through (1 GiB streams with a peak RSS of about 20 MiB). File outputs are written
//! to a temporary file and renamed into place only on success; a failed decryption
//! leaves no output.

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
pub use options::{
    DecryptOptions, EncryptOptions, DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE,
};
pub use passphrase::Passphrase;
pub use stream::{decrypt_file, encrypt_file};
