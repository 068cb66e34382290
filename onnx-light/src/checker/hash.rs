//! A fast, non-cryptographic hasher for the checker's name sets: the keys are names
//! from the model being checked, and a set of them only answers "was this defined";
//! collisions cost time, never correctness. (std's SipHash resists hash flooding, which
//! matters for long-lived maps fed by an adversary; each set here lives for one check
//! and a crafted model could at worst slow that check down.)

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing over 8-byte words (the scheme of rustc's FxHasher).
#[derive(Default, Clone, Copy)]
pub(crate) struct NameHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl NameHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for NameHasher {
    /// Whole 8-byte words, then the tail read as one overlapping word (or two
    /// overlapping halves for short names): no byte-wise copy into a stack buffer,
    /// whose read back would stall on store forwarding.
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        if n >= 8 {
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                self.add(word(c));
            }
            if !chunks.remainder().is_empty() {
                self.add(word(&bytes[n - 8..]));
            }
        } else if n >= 4 {
            let lo = u64::from(half(&bytes[..4]));
            let hi = u64::from(half(&bytes[n - 4..]));
            self.add(lo | hi << 32);
        } else if n > 0 {
            let w =
                u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8 | u64::from(bytes[n - 1]) << 16;
            self.add(w | (n as u64) << 24);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    /// The multiplications leave their entropy in the high bits, while the hash table
    /// picks buckets with the low ones: a final mix spreads it over every bit.
    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
}

/// The eight bytes of `c` (exactly eight long) as a little-endian word.
#[inline]
fn word(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(c);
    u64::from_le_bytes(w)
}

/// The four bytes of `c` (exactly four long) as a little-endian word.
#[inline]
fn half(c: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(c);
    u32::from_le_bytes(w)
}

pub(crate) type NameSet<'a> = HashSet<&'a str, BuildHasherDefault<NameHasher>>;
pub(crate) type NameMap<'a, V> = HashMap<&'a str, V, BuildHasherDefault<NameHasher>>;
