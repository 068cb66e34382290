//! `ONNXAE01`, the authenticated format: its header, its keys and its chunks (layout in
//! `docs/design/encryption-formats.md`).
//!
//! Owns the cryptographic construction (encrypt-then-MAC per chunk, each tag bound to the
//! header, the chunk's index and whether it is the last); knows nothing of files,
//! windows or threads beyond "these chunks may be processed in any order".

use std::ops::Range;

use crate::par::*;
use aes::cipher::array::Array;
use aes::cipher::{BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyInit};
use aes::{Aes256Dec, Aes256Enc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::format::ONNXAE01_MAGIC;
use super::kdf::{check_iterations, expand, Kdf};
use super::passphrase::Passphrase;
use super::random::IvSource;
use super::source::Source;
use crate::error::{Error, ErrorKind, Result};

/// Smallest `ONNXAE01` chunk size accepted (64 bytes).
pub const MIN_CHUNK_SIZE: u32 = 64;
/// Largest `ONNXAE01` chunk size accepted (64 MiB): one chunk per thread is in memory
/// at a time, so this bounds what a hostile header can make a reader allocate.
pub const MAX_CHUNK_SIZE: u32 = 64 << 20;

/// Why `chunk_size` is refused, if it is.
pub(crate) fn check_chunk_size(chunk_size: u32) -> std::result::Result<(), String> {
    if !(MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&chunk_size) || !chunk_size.is_multiple_of(16) {
        return Err(format!(
            "chunk size {chunk_size} is not a multiple of 16 in {MIN_CHUNK_SIZE} ..= {MAX_CHUNK_SIZE}"
        ));
    }
    Ok(())
}

/// Length of the salt.
pub(crate) const SALT_LEN: usize = 32;
/// Length of the header, MAC included.
pub(crate) const HEADER_LEN: usize = 84;
/// The header bytes the header MAC covers (all before it).
const SIGNED_LEN: usize = 52;
const IV_LEN: usize = 16;
const TAG_LEN: usize = 32;
/// Bytes a chunk record adds to its ciphertext: IV before, tag after.
pub(crate) const RECORD_OVERHEAD: usize = IV_LEN + TAG_LEN;
/// The shortest record: an empty final chunk, one block of padding.
pub(crate) const MIN_RECORD_LEN: usize = RECORD_OVERHEAD + 16;
/// KDF id 1: PBKDF2-HMAC-SHA256.
const KDF_PBKDF2_HMAC_SHA256: u8 = 1;
/// HKDF-Expand labels of the two keys.
const ENCRYPTION_LABEL: &[u8] = b"ONNXAE01 AES-256-CBC key";
const AUTHENTICATION_LABEL: &[u8] = b"ONNXAE01 HMAC-SHA256 key";
/// Chunks are MACed and en/decrypted in slices of this size, so that both passes find
/// the bytes in the L1/L2 cache.
const INTERLEAVE: usize = 16 << 10;
/// Ciphertext is read in pieces of this size (a multiple of `INTERLEAVE`): large enough
/// to keep positional reads few, small enough to stay in the L2 cache until processed.
const READ_PIECE: usize = 256 << 10;
/// Chunks handed to the thread pool at a time: bounds the bookkeeping (job lists,
/// IVs) whatever the number of chunks, at the cost of a barrier per batch.
const BATCH: usize = 1024;

type HmacSha256 = Hmac<Sha256>;

/// The header fields (everything but the magic, the KDF id and the reserved bytes,
/// which are fixed in this version).
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub(crate) iterations: u32,
    pub(crate) chunk_size: u32,
    pub(crate) salt: [u8; SALT_LEN],
    pub(crate) mac: [u8; 32],
}

impl Header {
    /// Parses the first [`HEADER_LEN`] bytes and checks everything that can be checked
    /// without a key (so an absurd iteration count is refused before the KDF runs).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Header> {
        if bytes.len() < HEADER_LEN {
            return Err(Error::at(
                ErrorKind::TruncatedEncryption,
                bytes.len() as u64,
            ));
        }
        debug_assert_eq!(&bytes[..8], ONNXAE01_MAGIC);
        let unsupported =
            |reason: String, at: u64| Error::at(ErrorKind::UnsupportedEncryption { reason }, at);
        if bytes[8] != KDF_PBKDF2_HMAC_SHA256 {
            return Err(unsupported(
                format!(
                    "key derivation function id {} (1 = PBKDF2-HMAC-SHA256)",
                    bytes[8]
                ),
                8,
            ));
        }
        if bytes[9..12] != [0, 0, 0] {
            return Err(unsupported("reserved header bytes are not zero".into(), 9));
        }
        let iterations = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
        check_iterations(iterations).map_err(|r| unsupported(r, 12))?;
        let chunk_size = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
        check_chunk_size(chunk_size).map_err(|r| unsupported(r, 16))?;
        Ok(Header {
            iterations,
            chunk_size,
            salt: bytes[20..52].try_into().expect("32 bytes"),
            mac: bytes[52..84].try_into().expect("32 bytes"),
        })
    }

    /// The bytes the header MAC covers.
    fn signed_bytes(&self) -> [u8; SIGNED_LEN] {
        let mut b = [0u8; SIGNED_LEN];
        b[..8].copy_from_slice(ONNXAE01_MAGIC);
        b[8] = KDF_PBKDF2_HMAC_SHA256;
        b[12..16].copy_from_slice(&self.iterations.to_le_bytes());
        b[16..20].copy_from_slice(&self.chunk_size.to_le_bytes());
        b[20..52].copy_from_slice(&self.salt);
        b
    }

    /// The header as written.
    pub(crate) fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..SIGNED_LEN].copy_from_slice(&self.signed_bytes());
        b[SIGNED_LEN..].copy_from_slice(&self.mac);
        b
    }
}

/// The keys of one file, expanded: AES-256 schedules for both directions and the
/// chunk MAC keyed and already fed the header MAC. Key material is zeroed on drop
/// (the `zeroize` features of `aes` and `sha2`).
pub(crate) struct ChunkCipher {
    enc: Aes256Enc,
    dec: Aes256Dec,
    chunk_mac: HmacSha256,
    chunk_size: usize,
}

impl ChunkCipher {
    /// Derives the keys for `header`'s salt and iterations. Returns them (the chunk
    /// MAC not yet fed the header MAC) and the HMAC that computes the header MAC,
    /// already fed the header bytes it covers.
    fn derive(kdf: &Kdf, passphrase: &Passphrase, header: &Header) -> (ChunkCipher, HmacSha256) {
        let master = kdf.derive(passphrase, &header.salt, header.iterations);
        let enc_key = expand(&master, ENCRYPTION_LABEL);
        let mac_key = expand(&master, AUTHENTICATION_LABEL);
        let mac = <HmacSha256 as KeyInit>::new_from_slice(&mac_key[..])
            .expect("HMAC takes keys of any length");
        let cipher = ChunkCipher {
            enc: Aes256Enc::new_from_slice(&enc_key[..]).expect("a 32-byte key"),
            dec: Aes256Dec::new_from_slice(&enc_key[..]).expect("a 32-byte key"),
            chunk_mac: mac.clone(),
            chunk_size: header.chunk_size as usize,
        };
        let mut header_mac = mac;
        header_mac.update(&header.signed_bytes());
        (cipher, header_mac)
    }

    /// The keys for a header read from a file, after checking its MAC: a wrong
    /// passphrase (or a modified header) fails here, before any decryption.
    pub(crate) fn open(kdf: &Kdf, passphrase: &Passphrase, header: &Header) -> Result<Self> {
        let (mut cipher, header_mac) = Self::derive(kdf, passphrase, header);
        header_mac
            .verify_slice(&header.mac)
            .map_err(|_| Error::at(ErrorKind::WrongPassphraseOrCorrupted, 0))?;
        cipher.chunk_mac.update(&header.mac);
        Ok(cipher)
    }

    /// Keys and the complete header for a new file with `iterations`, `chunk_size`
    /// and `salt`.
    pub(crate) fn create(
        kdf: &Kdf,
        passphrase: &Passphrase,
        iterations: u32,
        chunk_size: u32,
        salt: [u8; SALT_LEN],
    ) -> (Self, Header) {
        let mut header = Header {
            iterations,
            chunk_size,
            salt,
            mac: [0; 32],
        };
        let (mut cipher, header_mac) = Self::derive(kdf, passphrase, &header);
        header.mac = header_mac.finalize().into_bytes().into();
        cipher.chunk_mac.update(&header.mac);
        (cipher, header)
    }

    pub(crate) fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// The chunk MAC fed everything that precedes the ciphertext.
    fn tag_prefix(&self, index: u64, iv: &[u8; IV_LEN]) -> HmacSha256 {
        let mut mac = self.chunk_mac.clone();
        mac.update(&index.to_le_bytes());
        mac.update(iv);
        mac
    }

    /// Encrypts and tags one chunk of `plaintext` into `record`, exactly
    /// [`record_len`] long: `IV | ciphertext | tag`. Copying, encryption and MAC go
    /// slice by slice, so each slice is still in the cache for the next step.
    fn seal(
        &self,
        index: u64,
        is_final: bool,
        iv: [u8; IV_LEN],
        plaintext: &[u8],
        record: &mut [u8],
    ) {
        let ct_len = ciphertext_len(plaintext.len(), is_final);
        debug_assert_eq!(record.len(), IV_LEN + ct_len + TAG_LEN);
        record[..IV_LEN].copy_from_slice(&iv);
        let (body, tag) = record[IV_LEN..].split_at_mut(ct_len);
        // PKCS#7 padding (final chunk only): 1 to 16 bytes, each holding the count.
        let pad = (ct_len - plaintext.len()) as u8;
        let mut mac = self.tag_prefix(index, &iv);
        let mut cbc = cbc::Encryptor::<Aes256Enc>::inner_iv_init(self.enc.clone(), &iv.into());
        for (k, piece) in body.chunks_mut(INTERLEAVE).enumerate() {
            let from = (k * INTERLEAVE).min(plaintext.len());
            let to = (from + piece.len()).min(plaintext.len());
            piece[..to - from].copy_from_slice(&plaintext[from..to]);
            piece[to - from..].fill(pad);
            let (blocks, rest) = Array::slice_as_chunks_mut(piece);
            debug_assert!(rest.is_empty());
            cbc.encrypt_blocks(blocks);
            mac.update(piece);
        }
        mac.update(&[u8::from(is_final)]);
        tag.copy_from_slice(&mac.finalize().into_bytes());
    }

    /// Reads record `index` of `source`, its ciphertext into `ct`, then checks and
    /// decrypts it in place; returns the plaintext length. Reading, MAC and decryption
    /// go slice by slice in one pass. A chunk whose tag fails is reported and its bytes
    /// must be discarded by the caller (they are never handed out); padding is looked
    /// at only once the tag has verified.
    fn open_record(
        &self,
        source: &dyn Source,
        layout: &Layout,
        index: u64,
        ct: &mut [u8],
    ) -> Result<usize> {
        let at = layout.record_offset(index);
        let is_final = layout.is_final(index);
        let mut iv = [0u8; IV_LEN];
        let mut tag = [0u8; TAG_LEN];
        source.read_at(at, &mut iv)?;
        source.read_at(at + (IV_LEN + ct.len()) as u64, &mut tag)?;
        let mut mac = self.tag_prefix(index, &iv);
        let mut cbc = cbc::Decryptor::<Aes256Dec>::inner_iv_init(self.dec.clone(), &iv.into());
        let mut offset = at + IV_LEN as u64;
        for piece in ct.chunks_mut(READ_PIECE) {
            source.read_at(offset, piece)?;
            offset += piece.len() as u64;
            for slice in piece.chunks_mut(INTERLEAVE) {
                mac.update(slice);
                let (blocks, rest) = Array::slice_as_chunks_mut(slice);
                debug_assert!(rest.is_empty());
                cbc.decrypt_blocks(blocks);
            }
        }
        let as_non_final = (is_final && ct.len() == self.chunk_size).then(|| mac.clone());
        mac.update(&[u8::from(is_final)]);
        if mac.verify_slice(&tag).is_err() {
            if let Some(mut mac) = as_non_final {
                mac.update(&[0]);
                if mac.verify_slice(&tag).is_ok() {
                    // A complete non-final chunk ends the input: the rest was cut off.
                    return Err(Error::at(ErrorKind::TruncatedEncryption, source.len()));
                }
            }
            return Err(Error::at(ErrorKind::WrongPassphraseOrCorrupted, at));
        }
        if !is_final {
            return Ok(ct.len());
        }
        let pad = usize::from(ct[ct.len() - 1]);
        if !(1..=16).contains(&pad) || ct[ct.len() - pad..].iter().any(|&b| usize::from(b) != pad) {
            // Only a writer holding the key can get here.
            return Err(Error::at(ErrorKind::WrongPassphraseOrCorrupted, at));
        }
        Ok(ct.len() - pad)
    }

    /// Where the stream in `source` ends, found from its records rather than from the
    /// input's length.
    ///
    /// A reader lays the records out from the input's length, so bytes appended to a
    /// file make its length impossible or its last records fail. The stream's own
    /// records come first: complete non-final chunks up to the final one, which is the
    /// first record that does not authenticate as a complete non-final chunk; it is
    /// found by bisection, then its length by trying each in one pass over its bytes.
    /// Only a final chunk that authenticates at its index is believed, so a stream is
    /// never said to end where it does not.
    pub(crate) fn stream_end(&self, source: &dyn Source) -> StreamEnd {
        let record = (self.chunk_size + RECORD_OVERHEAD) as u64;
        let slots = source.len().saturating_sub(HEADER_LEN as u64) / record;
        let (mut lo, mut hi) = (0, slots);
        let mut piece = Vec::new();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.authenticates_as_full(source, mid, &mut piece) {
                Ok(true) => lo = mid + 1,
                Ok(false) => hi = mid,
                Err(_) => return StreamEnd::Unknown,
            }
        }
        match self.final_chunk_end(source, lo) {
            Ok(Some(end)) => StreamEnd::Final(end),
            Ok(None) if lo < slots => StreamEnd::Broken(HEADER_LEN as u64 + lo * record),
            Ok(None) => StreamEnd::Cut,
            Err(_) => StreamEnd::Unknown,
        }
    }

    /// Whether record `index` of `source`, read as a complete non-final chunk (it must
    /// fit in the input), authenticates. Only the MAC is computed, nothing decrypted.
    fn authenticates_as_full(
        &self,
        source: &dyn Source,
        index: u64,
        piece: &mut Vec<u8>,
    ) -> Result<bool> {
        let at = HEADER_LEN as u64 + index * (self.chunk_size + RECORD_OVERHEAD) as u64;
        let mut iv = [0u8; IV_LEN];
        source.read_at(at, &mut iv)?;
        let mut mac = self.tag_prefix(index, &iv);
        let mut offset = at + IV_LEN as u64;
        let mut left = self.chunk_size;
        while left > 0 {
            let n = left.min(READ_PIECE);
            piece.resize(n, 0);
            source.read_at(offset, piece)?;
            mac.update(piece);
            offset += n as u64;
            left -= n;
        }
        let mut tag = [0u8; TAG_LEN];
        source.read_at(offset, &mut tag)?;
        mac.update(&[0]);
        Ok(mac.verify_slice(&tag).is_ok())
    }

    /// Where a final chunk recorded at `index` ends, if one of some length authenticates
    /// there: each ciphertext length (16 to `chunk_size + 16`, that fits the input) is
    /// tried with the MAC state after the bytes before it, in one pass.
    fn final_chunk_end(&self, source: &dyn Source, index: u64) -> Result<Option<u64>> {
        let at = HEADER_LEN as u64 + index * (self.chunk_size + RECORD_OVERHEAD) as u64;
        let start = at + IV_LEN as u64;
        let room = source.len().saturating_sub(start);
        let longest = room.min((self.chunk_size + 16 + TAG_LEN) as u64) as usize;
        if longest < 16 + TAG_LEN {
            return Ok(None);
        }
        let mut iv = [0u8; IV_LEN];
        source.read_at(at, &mut iv)?;
        let mut bytes = vec![0u8; longest];
        source.read_at(start, &mut bytes)?;
        let mut mac = self.tag_prefix(index, &iv);
        let mut ct_len = 16;
        while ct_len + TAG_LEN <= longest {
            mac.update(&bytes[ct_len - 16..ct_len]);
            let mut as_final = mac.clone();
            as_final.update(&[1]);
            if as_final
                .verify_slice(&bytes[ct_len..ct_len + TAG_LEN])
                .is_ok()
            {
                return Ok(Some(start + (ct_len + TAG_LEN) as u64));
            }
            ct_len += 16;
        }
        Ok(None)
    }

    /// Bytes [`seal_chunks`](Self::seal_chunks) writes for `pt_len` plaintext bytes.
    pub(crate) fn sealed_len(&self, pt_len: usize, ends_stream: bool) -> usize {
        let cs = self.chunk_size;
        if !ends_stream {
            return pt_len / cs * record_len(cs, false);
        }
        let before_final = pt_len.saturating_sub(1) / cs;
        before_final * record_len(cs, false) + record_len(pt_len - before_final * cs, true)
    }

    /// Seals the plaintext of consecutive chunks, the first numbered `first_index`, in
    /// parallel, writing their records to the start of `out` (at least
    /// [`sealed_len`](Self::sealed_len) long); returns the bytes written. `plaintext`
    /// holds whole chunks, except that with `ends_stream` its last chunk (the final one)
    /// may be short or empty.
    pub(crate) fn seal_chunks(
        &self,
        ivs: &IvSource,
        first_index: u64,
        plaintext: &[u8],
        ends_stream: bool,
        out: &mut [u8],
    ) -> Result<usize> {
        let cs = self.chunk_size;
        debug_assert!(ends_stream || plaintext.len().is_multiple_of(cs));
        let count = if ends_stream {
            plaintext.len().div_ceil(cs).max(1)
        } else {
            plaintext.len() / cs
        };
        let mut rest = out;
        let mut written = 0;
        let mut jobs = Vec::with_capacity(count.min(BATCH));
        let mut iv_bytes = vec![[0u8; IV_LEN]; count.min(BATCH)];
        for start in (0..count).step_by(BATCH) {
            let end = (start + BATCH).min(count);
            ivs.fill(first_index + start as u64, &mut iv_bytes[..end - start])?;
            jobs.clear();
            for k in start..end {
                let piece = &plaintext[k * cs..((k + 1) * cs).min(plaintext.len())];
                let is_final = ends_stream && k + 1 == count;
                let len = record_len(piece.len(), is_final);
                let (record, tail) = std::mem::take(&mut rest).split_at_mut(len);
                rest = tail;
                written += len;
                let iv = iv_bytes[k - start];
                jobs.push((first_index + k as u64, is_final, iv, piece, record));
            }
            jobs.par_drain(..)
                .for_each(|(index, is_final, iv, piece, record)| {
                    self.seal(index, is_final, iv, piece, record);
                });
        }
        Ok(written)
    }

    /// Reads, checks and decrypts `chunks` of `source` (laid out as `layout` says) in
    /// parallel into `dst`, which must be [`Layout::capacity`] long. Returns the
    /// plaintext length (`dst.len()` less the final chunk's padding).
    pub(crate) fn open_chunks(
        &self,
        source: &dyn Source,
        layout: &Layout,
        chunks: Range<u64>,
        dst: &mut [u8],
    ) -> Result<usize> {
        debug_assert_eq!(dst.len() as u64, layout.capacity(chunks.clone()));
        let mut jobs = Vec::with_capacity(((chunks.end - chunks.start) as usize).min(BATCH));
        let mut rest = dst;
        let mut total = 0;
        let mut index = chunks.start;
        while index < chunks.end {
            let batch_end = (index + BATCH as u64).min(chunks.end);
            jobs.clear();
            for i in index..batch_end {
                let (piece, tail) =
                    std::mem::take(&mut rest).split_at_mut(layout.ct_len(i) as usize);
                rest = tail;
                jobs.push((i, piece));
            }
            // Not `try_reduce`: with several bad chunks it would report whichever
            // thread failed first. `reduce` keeps the operands in chunk order, so the
            // error reported is the first bad chunk's, whatever the thread count.
            total += jobs
                .par_drain(..)
                .map(|(i, ct)| self.open_record(source, layout, i, ct))
                .reduce(
                    || Ok(0),
                    |a, b| match (a, b) {
                        (Ok(a), Ok(b)) => Ok(a + b),
                        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                    },
                )
                .map_err(|e| {
                    // Bytes appended to the file move the records a reader expects.
                    if e.kind() != &ErrorKind::WrongPassphraseOrCorrupted {
                        return e;
                    }
                    match self.stream_end(source) {
                        StreamEnd::Final(end) if end < source.len() => {
                            Error::at(ErrorKind::TrailingBytes, end)
                        }
                        _ => e,
                    }
                })?;
            index = batch_end;
        }
        Ok(total)
    }
}

/// Where a stream ends, by its records ([`ChunkCipher::stream_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// A final chunk that authenticates ends at this offset.
    Final(u64),
    /// The record at this offset fits in the input but authenticates neither as a
    /// complete non-final chunk nor as a final one: corrupted.
    Broken(u64),
    /// Every complete record authenticates as a non-final chunk, and what follows is
    /// no final chunk: the input was cut.
    Cut,
    /// A read failed.
    Unknown,
}

/// Ciphertext length of a chunk of `pt_len` plaintext bytes: the same for a non-final
/// chunk, padded to the next multiple of 16 (1 to 16 bytes added) for the final one.
fn ciphertext_len(pt_len: usize, is_final: bool) -> usize {
    if is_final {
        (pt_len / 16 + 1) * 16
    } else {
        pt_len
    }
}

/// Length of a chunk's record: IV, ciphertext, tag.
pub(crate) fn record_len(pt_len: usize, is_final: bool) -> usize {
    IV_LEN + ciphertext_len(pt_len, is_final) + TAG_LEN
}

/// Where the chunks of a file of known length are: every record but the last is
/// `chunk_size + 48` bytes, the last one (the final chunk) `64 ..= chunk_size + 64`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    chunk_size: u64,
    chunks: u64,
    final_ct_len: u64,
}

impl Layout {
    /// The layout of an input of `total_len` bytes whose header says `chunk_size`.
    ///
    /// # Errors
    /// `TruncatedEncryption` when no record boundary fits the length.
    pub(crate) fn new(total_len: u64, chunk_size: u32) -> Result<Layout> {
        let truncated = || Error::at(ErrorKind::TruncatedEncryption, total_len);
        let body = total_len
            .checked_sub(HEADER_LEN as u64)
            .ok_or_else(truncated)?;
        let cs = u64::from(chunk_size);
        let overhead = RECORD_OVERHEAD as u64;
        let record = cs + overhead;
        let longest_final = record + 16;
        let before_final = if body <= longest_final {
            0
        } else {
            (body - longest_final).div_ceil(record)
        };
        let final_record = body - before_final * record;
        if final_record < overhead + 16 || !(final_record - overhead).is_multiple_of(16) {
            return Err(truncated());
        }
        Ok(Layout {
            chunk_size: cs,
            chunks: before_final + 1,
            final_ct_len: final_record - overhead,
        })
    }

    /// Number of chunks.
    pub(crate) fn chunks(&self) -> u64 {
        self.chunks
    }

    fn is_final(&self, index: u64) -> bool {
        index + 1 == self.chunks
    }

    fn ct_len(&self, index: u64) -> u64 {
        if self.is_final(index) {
            self.final_ct_len
        } else {
            self.chunk_size
        }
    }

    fn record_offset(&self, index: u64) -> u64 {
        HEADER_LEN as u64 + index * (self.chunk_size + RECORD_OVERHEAD as u64)
    }

    /// Buffer bytes [`ChunkCipher::open_chunks`] needs for `chunks`: their ciphertext
    /// length (at most 16 bytes more than their plaintext).
    pub(crate) fn capacity(&self, chunks: Range<u64>) -> u64 {
        if chunks.is_empty() {
            return 0;
        }
        let last = chunks.end - 1;
        (last - chunks.start) * self.chunk_size + self.ct_len(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_inverts_the_writer_for_every_length() {
        for cs in [64u32, 80, 4096] {
            for pt_len in 0..(4 * cs as usize + 40) {
                let full = if pt_len == 0 {
                    0
                } else {
                    (pt_len - 1) / cs as usize
                };
                let last = pt_len - full * cs as usize;
                let total =
                    HEADER_LEN + full * record_len(cs as usize, false) + record_len(last, true);
                let layout = Layout::new(total as u64, cs).unwrap();
                assert_eq!(layout.chunks, full as u64 + 1, "cs {cs} len {pt_len}");
                assert_eq!(
                    layout.capacity(0..layout.chunks),
                    (full * cs as usize + ciphertext_len(last, true)) as u64
                );
            }
        }
    }

    #[test]
    fn lengths_between_records_are_truncations() {
        assert!(Layout::new(HEADER_LEN as u64 + 63, 64).is_err());
        assert!(Layout::new(HEADER_LEN as u64 + 65, 64).is_err());
        assert!(Layout::new(10, 64).is_err());
        assert!(Layout::new(HEADER_LEN as u64 + 64, 64).is_ok());
    }
}
