//! `ONNXCRY1`, onnx_light's format, byte for byte (layout in
//! `docs/design/encryption-formats.md`). It has no MAC: decryption cannot tell a modified file from the
//! original, and a wrong passphrase shows only as bad padding (or, about once in 256
//! tries, as bytes that fail to decode). It is read and written for interoperability.
//!
//! CBC encryption is one chain and runs on one thread; decryption is parallel, since
//! every ciphertext block is decrypted with the block before it as its IV.

use crate::par::*;
use aes::cipher::array::Array;
use aes::cipher::{BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyInit};
use aes::{Aes256Dec, Aes256Enc};

use super::format::ONNXCRY1_MAGIC;
use super::kdf::{Kdf, ONNXCRY1_ITERATIONS};
use super::passphrase::Passphrase;
use super::source::Source;
use crate::error::{Error, ErrorKind, Result};

/// Length of the salt.
pub(crate) const SALT_LEN: usize = 16;
/// Magic, salt and IV.
pub(crate) const HEADER_LEN: usize = 40;
/// Unit of parallel decryption (a multiple of 16).
pub(crate) const PIECE: usize = 256 << 10;

/// Decrypts an `ONNXCRY1` input whose header has been read.
pub(crate) struct Opener {
    dec: Aes256Dec,
    iv: [u8; 16],
    /// The whole blocks of ciphertext.
    ct_len: u64,
    /// The input's length when it is not whole blocks (bytes past the last one).
    unaligned_len: Option<u64>,
}

impl Opener {
    /// Reads the header of `source`, checks the ciphertext length and derives the key.
    ///
    /// The format records no length: an input that is not whole blocks was cut, or had
    /// bytes appended. Its whole blocks are decrypted as the stream, and
    /// [`unaligned`](Self::unaligned) says how to tell the two apart once they are.
    ///
    /// # Errors
    /// `TruncatedEncryption` when there is not one whole block of ciphertext.
    pub(crate) fn new(source: &dyn Source, passphrase: &Passphrase, kdf: &Kdf) -> Result<Self> {
        let len = source.len();
        let after_header = len.saturating_sub(HEADER_LEN as u64);
        let ct_len = after_header / 16 * 16;
        if ct_len == 0 {
            return Err(Error::at(ErrorKind::TruncatedEncryption, len));
        }
        let mut header = [0u8; HEADER_LEN];
        source.read_at(0, &mut header)?;
        debug_assert_eq!(&header[..8], ONNXCRY1_MAGIC);
        let key = kdf.derive(passphrase, &header[8..24], ONNXCRY1_ITERATIONS);
        Ok(Opener {
            dec: Aes256Dec::new_from_slice(&key[..]).expect("a 32-byte key"),
            iv: header[24..40].try_into().expect("16 bytes"),
            ct_len,
            unaligned_len: (ct_len != after_header).then_some(len),
        })
    }

    /// Ciphertext bytes (a positive multiple of 16).
    pub(crate) fn ct_len(&self) -> u64 {
        self.ct_len
    }

    /// For an input that is not whole blocks, the error its decryption ends with: if the
    /// whole blocks decrypted as a complete stream (`decrypted` is `Ok`: valid padding,
    /// and for the model loaders a model that decodes), the bytes after them were
    /// appended (`TrailingBytes` where they start); else the input was cut
    /// (`TruncatedEncryption` at its end). Either verdict says no more about the
    /// plaintext than decrypting the whole blocks alone would. `None` for whole blocks.
    pub(crate) fn unaligned<T>(&self, decrypted: &Result<T>) -> Option<Error> {
        let len = self.unaligned_len?;
        Some(match decrypted {
            Err(e) if matches!(e.kind(), ErrorKind::Io(_)) => return None,
            Ok(_) => Error::at(ErrorKind::TrailingBytes, HEADER_LEN as u64 + self.ct_len),
            Err(_) => Error::at(ErrorKind::TruncatedEncryption, len),
        })
    }

    /// Decrypts the ciphertext bytes `start .. start + dst.len()` (block-aligned,
    /// counted from the start of the ciphertext) into `dst`, in parallel.
    pub(crate) fn decrypt_range(
        &self,
        source: &dyn Source,
        start: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        debug_assert!(start.is_multiple_of(16) && dst.len().is_multiple_of(16));
        dst.par_chunks_mut(PIECE)
            .enumerate()
            .try_for_each(|(k, piece)| -> Result<()> {
                let at = start + (k * PIECE) as u64;
                let mut iv = self.iv;
                if at > 0 {
                    source.read_at(HEADER_LEN as u64 + at - 16, &mut iv)?;
                }
                source.read_at(HEADER_LEN as u64 + at, piece)?;
                let mut cbc =
                    cbc::Decryptor::<Aes256Dec>::inner_iv_init(self.dec.clone(), &iv.into());
                let (blocks, _) = Array::slice_as_chunks_mut(piece);
                cbc.decrypt_blocks(blocks);
                Ok(())
            })
    }

    /// The number of padding bytes the decrypted final block ends with.
    ///
    /// # Errors
    /// `WrongPassphraseOrCorrupted` when the padding is not PKCS#7 (what a wrong
    /// passphrase almost always gives).
    pub(crate) fn padding(&self, last_block: &[u8]) -> Result<usize> {
        let pad = last_block.last().map_or(0, |&b| usize::from(b));
        let valid = (1..=16).contains(&pad)
            && last_block.len() >= pad
            && last_block[last_block.len() - pad..]
                .iter()
                .all(|&b| usize::from(b) == pad);
        if valid {
            Ok(pad)
        } else {
            Err(Error::at(
                ErrorKind::WrongPassphraseOrCorrupted,
                HEADER_LEN as u64 + self.ct_len - 16,
            ))
        }
    }
}

/// Encrypts an `ONNXCRY1` stream: one CBC chain over the plaintext, PKCS#7-padded at
/// the end.
pub(crate) struct Sealer {
    cbc: cbc::Encryptor<Aes256Enc>,
}

impl Sealer {
    /// The key for `salt`, and the 40-byte header to write first.
    pub(crate) fn new(
        kdf: &Kdf,
        passphrase: &Passphrase,
        salt: [u8; SALT_LEN],
        iv: [u8; 16],
    ) -> (Self, [u8; HEADER_LEN]) {
        let key = kdf.derive(passphrase, &salt, ONNXCRY1_ITERATIONS);
        let cbc = cbc::Encryptor::<Aes256Enc>::inner_iv_init(
            Aes256Enc::new_from_slice(&key[..]).expect("a 32-byte key"),
            &iv.into(),
        );
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(ONNXCRY1_MAGIC);
        header[8..24].copy_from_slice(&salt);
        header[24..].copy_from_slice(&iv);
        (Sealer { cbc }, header)
    }

    /// Encrypts whole blocks in place, continuing the chain.
    pub(crate) fn encrypt(&mut self, blocks: &mut [u8]) {
        let (blocks, rest) = Array::slice_as_chunks_mut(blocks);
        debug_assert!(rest.is_empty());
        self.cbc.encrypt_blocks(blocks);
    }

    /// Pads the rest of the plaintext, `buf[..len]` (possibly empty), with PKCS#7's 1 to
    /// 16 bytes (`buf` must have room for them) and encrypts it in place, ending the
    /// chain. Returns the ciphertext length.
    pub(crate) fn finish(&mut self, buf: &mut [u8], len: usize) -> usize {
        let pad = 16 - len % 16;
        buf[len..len + pad].fill(pad as u8);
        self.encrypt(&mut buf[..len + pad]);
        len + pad
    }
}
