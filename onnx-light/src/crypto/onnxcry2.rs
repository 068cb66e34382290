//! `ONNXCRY2`, onnx_light's ChaCha20-Poly1305 format, byte for byte (layout in
//! `docs/design/encryption-formats.md`). One AEAD message over the whole plaintext, its tag
//! stored before the ciphertext: it is sealed and opened whole, in memory, on one thread.

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha20;
use chacha20poly1305::{AeadInOut, ChaCha20Poly1305, KeyInit};
use poly1305::universal_hash::UniversalHash;
use poly1305::Poly1305;
use zeroize::Zeroize;

use super::format::ONNXCRY2_MAGIC;
use super::kdf::{Kdf, Key, ONNXCRY2_ITERATIONS};
use super::passphrase::Passphrase;
use super::source::Source;
use crate::error::{Error, ErrorKind, Result};

/// Length of the salt.
pub(crate) const SALT_LEN: usize = 16;
/// Length of the nonce.
pub(crate) const NONCE_LEN: usize = 12;
/// Offset of the tag (after magic, salt and nonce).
const TAG_AT: usize = 8 + SALT_LEN + NONCE_LEN;
/// Magic, salt, nonce and tag.
pub(crate) const HEADER_LEN: usize = TAG_AT + 16;
/// How many bytes appended to a file a reader looks through for the end of the
/// ciphertext, once the tag fails over all of it (each length tried costs a few Poly1305
/// blocks, so a wrong passphrase stays cheap).
const TRAILING_SEARCH: usize = 64 << 10;

/// The cipher for a passphrase and salt.
fn cipher(kdf: &Kdf, passphrase: &Passphrase, salt: &[u8]) -> ChaCha20Poly1305 {
    let key = kdf.derive(passphrase, salt, ONNXCRY2_ITERATIONS);
    ChaCha20Poly1305::new(&(*key).into())
}

/// Encrypts an `ONNXCRY2` message: the key is derived up front, the plaintext sealed
/// whole at the end.
pub(crate) struct Sealer {
    cipher: ChaCha20Poly1305,
    salt: [u8; SALT_LEN],
    nonce: [u8; NONCE_LEN],
}

impl Sealer {
    pub(crate) fn new(
        kdf: &Kdf,
        passphrase: &Passphrase,
        salt: [u8; SALT_LEN],
        nonce: [u8; NONCE_LEN],
    ) -> Self {
        Sealer {
            cipher: cipher(kdf, passphrase, &salt),
            salt,
            nonce,
        }
    }

    /// Encrypts the whole plaintext, `buf`, in place and returns the header that goes
    /// before it.
    ///
    /// # Errors
    /// `ValueOutOfRange` for a plaintext longer than ChaCha20 can encrypt under one
    /// nonce (256 GiB).
    pub(crate) fn seal(&self, buf: &mut [u8]) -> Result<[u8; HEADER_LEN]> {
        let tag = self
            .cipher
            .encrypt_inout_detached(&self.nonce.into(), b"", buf.into())
            .map_err(|_| {
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "ONNXCRY2 plaintext longer than 256 GiB",
                })
            })?;
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(ONNXCRY2_MAGIC);
        header[8..24].copy_from_slice(&self.salt);
        header[24..TAG_AT].copy_from_slice(&self.nonce);
        header[TAG_AT..].copy_from_slice(&tag);
        Ok(header)
    }
}

/// Decrypts an `ONNXCRY2` input whose header has been read.
pub(crate) struct Opener {
    cipher: ChaCha20Poly1305,
    /// Kept (zeroed on drop) to find where a ciphertext followed by other bytes ends.
    key: Key,
    nonce: [u8; NONCE_LEN],
    tag: [u8; 16],
    ct_len: u64,
}

impl Opener {
    /// Reads the header of `source` and derives the key.
    ///
    /// # Errors
    /// `TruncatedEncryption` when the input is shorter than the header.
    pub(crate) fn new(source: &dyn Source, passphrase: &Passphrase, kdf: &Kdf) -> Result<Self> {
        let len = source.len();
        let ct_len = len
            .checked_sub(HEADER_LEN as u64)
            .ok_or_else(|| Error::at(ErrorKind::TruncatedEncryption, len))?;
        let mut header = [0u8; HEADER_LEN];
        source.read_at(0, &mut header)?;
        debug_assert_eq!(&header[..8], ONNXCRY2_MAGIC);
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&header[24..TAG_AT]);
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&header[TAG_AT..]);
        let key = kdf.derive(passphrase, &header[8..24], ONNXCRY2_ITERATIONS);
        Ok(Opener {
            cipher: ChaCha20Poly1305::new(&(*key).into()),
            key,
            nonce,
            tag,
            ct_len,
        })
    }

    /// Ciphertext bytes, which is also the plaintext's length.
    pub(crate) fn ct_len(&self) -> u64 {
        self.ct_len
    }

    /// Reads the whole ciphertext into `dst` (`ct_len` bytes), verifies the tag and
    /// decrypts in place. On error the contents of `dst` are meaningless.
    ///
    /// # Errors
    /// `WrongPassphraseOrCorrupted` when the tag does not verify: a wrong passphrase, or
    /// any changed, added or removed byte (the format records no length, so a cut
    /// ciphertext shows here too); `TrailingBytes` when it verifies a shorter
    /// ciphertext, ending at most [`TRAILING_SEARCH`] bytes before the input does.
    pub(crate) fn decrypt(&self, source: &dyn Source, dst: &mut [u8]) -> Result<()> {
        debug_assert_eq!(dst.len() as u64, self.ct_len);
        source.read_at(HEADER_LEN as u64, dst)?;
        // A failed tag leaves `dst` as read: the ciphertext.
        self.cipher
            .decrypt_inout_detached(&self.nonce.into(), b"", dst.into(), &self.tag.into())
            .map_err(|_| match self.authenticated_prefix(dst) {
                Some(len) => Error::at(ErrorKind::TrailingBytes, (HEADER_LEN + len) as u64),
                None => Error::at(ErrorKind::WrongPassphraseOrCorrupted, TAG_AT as u64),
            })
    }

    /// The length of a prefix of `ct`, shorter than `ct` by at most [`TRAILING_SEARCH`]
    /// bytes, that the tag authenticates: the ciphertext, when other bytes follow it.
    /// The AEAD's tag is Poly1305 over the ciphertext zero-padded to 16 bytes, then both
    /// lengths (RFC 8439); each length is tried from the state after the whole blocks
    /// before it, in one pass.
    fn authenticated_prefix(&self, ct: &[u8]) -> Option<usize> {
        if ct.is_empty() {
            return None;
        }
        // The Poly1305 key: the first 32 bytes of the ChaCha20 keystream.
        let mut mac_key = poly1305::Key::default();
        ChaCha20::new(&(*self.key).into(), &self.nonce.into()).apply_keystream(&mut mac_key);
        let mut mac = Poly1305::new(&mac_key);
        mac_key.as_mut_slice().zeroize();
        let lowest = ct.len().saturating_sub(TRAILING_SEARCH);
        let first_block = lowest / 16;
        mac.update_padded(&ct[..first_block * 16]);
        for block in first_block..=(ct.len() - 1) / 16 {
            let start = block * 16;
            for len in lowest.max(start)..ct.len().min(start + 16) {
                let mut candidate = mac.clone();
                candidate.update_padded(&ct[start..len]);
                let mut lengths = poly1305::Block::default();
                lengths[8..].copy_from_slice(&(len as u64).to_le_bytes());
                candidate.update(&[lengths]);
                if candidate.verify(&self.tag.into()).is_ok() {
                    return Some(len);
                }
            }
            if start + 16 <= ct.len() {
                mac.update_padded(&ct[start..start + 16]);
            }
        }
        None
    }
}
