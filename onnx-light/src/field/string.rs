//! [`Str`], the string field type: 16 bytes, in one of three states — borrowed from the
//! input, stored inline (up to [`Str::INLINE_CAPACITY`] bytes), or owned on the heap.
//!
//! Why not `Cow<'a, str>`: a model is mostly strings (names, op types, inputs, outputs),
//! millions of them in a large graph. `Cow<'a, str>` takes 24 bytes and, when owned, one
//! heap block per string (32 bytes with the allocator's header for a name of 20). `Str`
//! takes 16 bytes, an `Option<Str>` too, and an owned string of up to 15 bytes (most
//! names and every op type of the common operator set) needs no heap block at all: a
//! copy-mode decode of a graph allocates for its messages and lists only.
//!
//! This module hand-packs the three states into two words, so the `unsafe` is confined
//! here and argued block by block. The layout, in memory order:
//!
//! | bytes | borrowed / heap | inline |
//! |---|---|---|
//! | 0..8 | the pointer (a `&'a str`'s or a leaked `Box<str>`'s) | text bytes 0..8 |
//! | 8..15 | the length, 7 bytes little-endian | text bytes 8..15 |
//! | 15 | the tag: `BORROWED` or `HEAP` | the tag: `INLINE + length` |
//!
//! The tag is an enum of 18 values, so the other 238 byte values are niches and
//! `Option<Str>` (and a oneof holding a `Str`) stays 16 bytes.
#![allow(unsafe_code)]

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;

/// The last byte of a [`Str`]: which state it is in, and an inline string's length.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Tag {
    Borrowed = 0x40,
    Heap = 0x41,
    Inline0 = 0x80,
    Inline1,
    Inline2,
    Inline3,
    Inline4,
    Inline5,
    Inline6,
    Inline7,
    Inline8,
    Inline9,
    Inline10,
    Inline11,
    Inline12,
    Inline13,
    Inline14,
    Inline15,
}

const INLINE_TAGS: [Tag; 16] = [
    Tag::Inline0,
    Tag::Inline1,
    Tag::Inline2,
    Tag::Inline3,
    Tag::Inline4,
    Tag::Inline5,
    Tag::Inline6,
    Tag::Inline7,
    Tag::Inline8,
    Tag::Inline9,
    Tag::Inline10,
    Tag::Inline11,
    Tag::Inline12,
    Tag::Inline13,
    Tag::Inline14,
    Tag::Inline15,
];

impl Tag {
    #[inline]
    fn inline_len(self) -> Option<usize> {
        let t = self as u8;
        (t & 0x80 != 0).then_some((t & 0x0f) as usize)
    }
}

/// The first 8 bytes: a pointer, or inline text.
#[derive(Clone, Copy)]
#[repr(C)]
union Head {
    ptr: *const u8,
    bytes: [u8; 8],
}

/// The three states without a lifetime. It owns the heap block of the `Heap` state and
/// frees it when dropped; keeping the `Drop` here rather than on `Str<'a>` means a
/// borrowed `Str<'a>` may be dropped after the text it borrows has gone, as a `&'a str`
/// or a `Cow<'a, str>` may (no drop-check constraint on `'a`).
#[repr(C)]
struct Raw {
    head: Head,
    mid: [u8; 7],
    tag: Tag,
}

const INLINE_CAP: usize = 15;
/// The length bits of the tail word.
const LEN_MASK: u64 = (1 << 56) - 1;

/// The first 8 bytes of `s` as a little-endian word.
#[inline(always)]
fn word8(s: &[u8]) -> u64 {
    u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
}

/// The first 4 bytes of `s` as a little-endian word.
#[inline(always)]
fn word4(s: &[u8]) -> u32 {
    u32::from_le_bytes([s[0], s[1], s[2], s[3]])
}

/// Text of at most [`INLINE_CAP`] bytes as two little-endian words, bytes 0..8 and
/// 8..16, zero past its end. Built from at most two overlapping loads per word, not a
/// copy of variable length: a copy-mode decode stores one per name, op type and input,
/// and a call to `memcpy` for each costs more than the loads.
#[inline]
fn inline_words(t: &[u8]) -> (u64, u64) {
    let n = t.len();
    debug_assert!(n <= INLINE_CAP);
    let word4 = |s: &[u8]| u64::from(word4(s));
    if n >= 8 {
        // The last 8 bytes, shifted down so that byte 8 lands at the bottom (nothing is
        // left when there are exactly 8).
        let last = word8(&t[n - 8..]);
        let hi = last.checked_shr(8 * (16 - n) as u32).unwrap_or(0);
        (word8(t), hi)
    } else if n >= 4 {
        // The first and the last 4 bytes; where they overlap they hold the same bytes.
        (word4(t) | word4(&t[n - 4..]) << (8 * (n - 4)), 0)
    } else if n > 0 {
        // Bytes 0, n / 2 and n - 1 cover lengths 1 to 3.
        let b = |i: usize| u64::from(t[i]) << (8 * i);
        (b(0) | b(n / 2) | b(n - 1), 0)
    } else {
        (0, 0)
    }
}

impl Raw {
    /// Bytes 8..16 (the length and the tag in a pointer state) as one little-endian
    /// word: the tag is its top byte.
    #[inline]
    fn tail_word(&self) -> u64 {
        let at = (self as *const Raw)
            .cast::<u8>()
            .wrapping_add(8)
            .cast::<u64>();
        // SAFETY: `Raw` is `repr(C)`, 16 bytes, with `mid` at 8 and `tag` at 15, both
        // always initialised; the pointer comes from `&self`, which covers all 16 bytes;
        // the read is unaligned-safe and any 8 bytes are a valid `u64`.
        u64::from_le(unsafe { std::ptr::read_unaligned(at) })
    }

    /// The length of a borrowed or heap string.
    #[inline]
    fn word_len(&self) -> usize {
        (self.tail_word() & LEN_MASK) as usize
    }

    /// `ptr`/`len` in a pointer state. Lengths of 2^56 bytes (64 PiB) and more cannot be
    /// stored; no machine can hold such a string.
    #[inline]
    const fn pointer(ptr: *const u8, len: usize, tag: Tag) -> Raw {
        assert!(
            (len as u64) & !LEN_MASK == 0,
            "a string of 2^56 bytes or more"
        );
        let mut raw = Raw {
            head: Head { ptr },
            mid: [0; 7],
            tag,
        };
        let word = ((len as u64) | ((tag as u8 as u64) << 56)).to_le();
        let at = std::ptr::addr_of_mut!(raw).cast::<u8>().wrapping_add(8);
        // SAFETY: as in `tail_word`: bytes 8..16 of the local `raw`, written as one
        // unaligned word (one store instead of seven); the top byte written is `tag`
        // itself, so `raw.tag` stays a valid `Tag`, and the other seven bytes are the
        // little-endian length, which is what `mid` holds in a pointer state.
        unsafe { std::ptr::write_unaligned(at.cast::<u64>(), word) };
        raw
    }

    /// `text` stored inline; `None` when longer than [`INLINE_CAP`].
    #[inline]
    fn inline(text: &str) -> Option<Raw> {
        let t = text.as_bytes();
        if t.len() > INLINE_CAP {
            return None;
        }
        let (lo, hi) = inline_words(t);
        let [m0, m1, m2, m3, m4, m5, m6, _] = hi.to_le_bytes();
        Some(Raw {
            head: Head {
                bytes: lo.to_le_bytes(),
            },
            mid: [m0, m1, m2, m3, m4, m5, m6],
            tag: INLINE_TAGS[t.len()],
        })
    }

    /// `text` moved to a heap block of its own.
    #[inline]
    fn heap(text: Box<str>) -> Raw {
        let len = text.len();
        let ptr = Box::into_raw(text) as *const u8;
        Raw::pointer(ptr, len, Tag::Heap)
    }

    #[inline]
    /// The text of a pointer state, for a lifetime the caller vouches for.
    // SAFETY: (the contract) `self` is in a pointer state, and `'x` ends before its text
    // does: the `&'a str` a borrowed `Str<'a>` holds, or the box `self` owns.
    unsafe fn pointer_text<'x>(&self) -> &'x str {
        let (ptr, len) = (self.head.ptr, self.word_len());
        // SAFETY: a pointer state is only made by `Raw::pointer`, from the pointer and
        // length of a `&str` or of a leaked `Box<str>`: `len` bytes of valid UTF-8, alive
        // for `'x` by the caller's contract, and never mutated (no `&mut` is handed out).
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
    }

    #[inline]
    /// Takes back the heap state's box.
    // SAFETY: (the contract) `self` is in the heap state, and is neither used nor dropped
    // afterwards, so that the box is rebuilt exactly once.
    unsafe fn take_box(&self) -> Box<str> {
        let slice = std::ptr::slice_from_raw_parts_mut(self.head.ptr as *mut u8, self.word_len());
        // SAFETY: the heap state is only made by `Raw::heap`, from `Box::into_raw` of a
        // `Box<str>` of this length; `Clone` copies the text to a new block and
        // `into_owned` moves the `Raw` as it is, so this pointer has one owner, and the
        // caller's contract makes this its only rebuild.
        unsafe { Box::from_raw(slice as *mut str) }
    }

    #[inline]
    fn as_str(&self) -> &str {
        match self.tag.inline_len() {
            Some(len) => {
                let start = (self as *const Raw).cast::<u8>();
                // SAFETY: in the inline state bytes 0..len of `self` are the text: `Raw`
                // is `repr(C)` with `head` (8 bytes, written whole through `bytes`) at
                // offset 0 and `mid` at offset 8, so bytes 0..15 are contiguous and
                // initialised; `len <= 15` (the tag's low nibble); they were copied from
                // a `&str` by `Raw::inline`, so they are valid UTF-8; the pointer comes
                // from `&self`, which covers all 16 bytes, for the lifetime of `&self`.
                unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(start, len)) }
            }
            // SAFETY: a pointer state (the tag is not inline); the text lives at least as
            // long as `&self`: a borrowed `Str<'a>` cannot outlive its `&'a str` (its
            // `PhantomData<&'a str>`; `into_owned` copies borrowed text rather than
            // lengthening the lifetime), and a heap box lives until `self` is dropped.
            None => unsafe { self.pointer_text() },
        }
    }
}

impl Drop for Raw {
    #[inline]
    fn drop(&mut self) {
        if self.tag == Tag::Heap {
            // SAFETY: the heap state, and `self` is being dropped: never used again.
            drop(unsafe { self.take_box() });
        }
    }
}

/// `bytes` as text when they are valid UTF-8: exactly `std::str::from_utf8`'s answer
/// (the same error, at the same byte), but faster for what most strings of a model are:
/// short ASCII names. Up to 64 bytes are checked 8 at a time for a byte of 0x80 or more;
/// text that has one, or is longer, goes to `std::str::from_utf8`.
#[inline]
pub(crate) fn from_utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    if is_short_ascii(bytes) {
        // SAFETY: every byte is below 0x80 (`is_short_ascii` just checked): ASCII text,
        // which is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

/// Whether `b` is at most 64 bytes, all below 0x80.
#[inline]
fn is_short_ascii(b: &[u8]) -> bool {
    const HIGH8: u64 = 0x8080_8080_8080_8080;
    const HIGH4: u32 = 0x8080_8080;
    let n = b.len();
    if n > 64 {
        false
    } else if n >= 8 {
        // Whole words from the start, and the last 8 bytes (overlapping) for the rest.
        let mut acc = word8(&b[n - 8..]);
        for w in b.chunks_exact(8) {
            acc |= word8(w);
        }
        acc & HIGH8 == 0
    } else if n >= 4 {
        (word4(b) | word4(&b[n - 4..])) & HIGH4 == 0
    } else {
        b.iter().all(u8::is_ascii)
    }
}

/// A string field: borrowed from the input in borrow mode, owned otherwise — inline
/// when it is short, on the heap when not. 16 bytes, and so is `Option<Str>`.
///
/// It reads like a `&str` (`Deref<Target = str>`), compares, hashes and orders like
/// one, and converts from `&str`, `String`, `Box<str>` and `Cow<str>`:
///
/// ```
/// use onnx_light::Str;
///
/// let borrowed = Str::from("relu_1");
/// assert!(borrowed.is_borrowed());
/// let owned: Str<'static> = borrowed.clone().into_owned();
/// assert!(!owned.is_borrowed());
/// assert_eq!(owned, "relu_1");
/// assert_eq!(owned.len(), 6);
/// let name: String = owned.into();
/// assert_eq!(name, "relu_1");
/// ```
///
/// String fields are validated as UTF-8 when decoded; invalid UTF-8 is an
/// [`ErrorKind::InvalidUtf8`](crate::ErrorKind::InvalidUtf8) error naming the field.
#[repr(transparent)]
pub struct Str<'a> {
    raw: Raw,
    _borrows: PhantomData<&'a str>,
}

// SAFETY: a `Str<'a>` is, by state, a `&'a str`, a `Box<str>` or plain bytes, all of which
// are `Send`; it never hands out `&mut` access to its text, and moving it to another
// thread moves the box's ownership with it.
unsafe impl Send for Str<'_> {}
// SAFETY: `&Str` only reads (`as_str`); `&str` and `Box<str>` are `Sync`.
unsafe impl Sync for Str<'_> {}

impl<'a> Str<'a> {
    /// The longest string stored inline (without a heap block) when owned: 15 bytes.
    pub const INLINE_CAPACITY: usize = INLINE_CAP;

    /// `text`, borrowed.
    #[inline]
    pub const fn borrowed(text: &'a str) -> Str<'a> {
        Str {
            raw: Raw::pointer(text.as_ptr(), text.len(), Tag::Borrowed),
            _borrows: PhantomData,
        }
    }

    /// An owned copy of `text`: inline up to [`Str::INLINE_CAPACITY`] bytes, else one
    /// heap block of exactly `text.len()` bytes.
    #[inline]
    pub fn copied(text: &str) -> Str<'a> {
        let raw = Raw::inline(text).unwrap_or_else(|| Raw::heap(Box::from(text)));
        Str {
            raw,
            _borrows: PhantomData,
        }
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.raw.as_str()
    }

    /// Whether the text is borrowed (from the input of a borrow-mode decode, or from a
    /// `&str` given to [`Str::borrowed`] / `From<&str>`).
    #[inline]
    pub fn is_borrowed(&self) -> bool {
        self.raw.tag == Tag::Borrowed
    }

    /// The borrowed text with the lifetime of its borrow (`None` when owned), which
    /// can outlive `self`, as a `&'a str` copied out of a `Cow::Borrowed` can.
    #[inline]
    pub fn as_borrowed(&self) -> Option<&'a str> {
        if !self.is_borrowed() {
            return None;
        }
        // SAFETY: the borrowed state is a pointer state whose text is a `&'a str` (made
        // only by `Str::borrowed`, or kept with the same `'a` by `Clone`), alive for all
        // of `'a`.
        Some(unsafe { self.raw.pointer_text() })
    }

    /// Whether the text is held inline (owned, no heap block).
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.raw.tag.inline_len().is_some()
    }

    /// The same text with no borrow: a borrowed string is copied (inline or to the
    /// heap), an owned one is moved as it is.
    #[inline]
    pub fn into_owned(self) -> Str<'static> {
        if self.is_borrowed() {
            return Str::copied(self.as_str());
        }
        let Str { raw, .. } = self;
        // An owned `Raw` holds no borrow: it can take any lifetime.
        Str {
            raw,
            _borrows: PhantomData,
        }
    }

    /// The text as a `String` (one allocation; none is reused, since a `Str` never
    /// keeps spare capacity).
    #[inline]
    pub fn into_string(self) -> String {
        if self.raw.tag != Tag::Heap {
            return self.as_str().to_owned();
        }
        let Str { raw, .. } = self;
        let raw = ManuallyDrop::new(raw);
        // SAFETY: the heap state (checked above); `raw` is `ManuallyDrop` and goes out of
        // scope here, so it is neither used nor dropped after this.
        let boxed = unsafe { raw.take_box() };
        boxed.into_string()
    }
}

impl Deref for Str<'_> {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Clone for Str<'_> {
    /// Borrowed and inline strings are copied as they are; a heap string gets a new
    /// block.
    #[inline]
    fn clone(&self) -> Self {
        let raw = match self.raw.tag {
            Tag::Heap => Raw::heap(Box::from(self.as_str())),
            _ => Raw {
                head: self.raw.head,
                mid: self.raw.mid,
                tag: self.raw.tag,
            },
        };
        Str {
            raw,
            _borrows: PhantomData,
        }
    }
}

impl Default for Str<'_> {
    /// The empty string (inline).
    #[inline]
    fn default() -> Self {
        Str::copied("")
    }
}

impl AsRef<str> for Str<'_> {
    #[inline]
    fn as_ref(&self) -> &str {
        self
    }
}

impl AsRef<[u8]> for Str<'_> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<std::path::Path> for Str<'_> {
    #[inline]
    fn as_ref(&self) -> &std::path::Path {
        self.as_str().as_ref()
    }
}

impl AsRef<std::ffi::OsStr> for Str<'_> {
    #[inline]
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.as_str().as_ref()
    }
}

impl Borrow<str> for Str<'_> {
    #[inline]
    fn borrow(&self) -> &str {
        self
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl PartialEq for Str<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Str<'_> {}

impl PartialOrd for Str<'_> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str<'_> {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Str<'_> {
    /// Hashes as the `str` does, so that a `HashMap<Str, _>` can be queried with a
    /// `&str`.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

macro_rules! eq_with {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for Str<'_> {
            #[inline]
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == &other[..]
            }
        }
        impl PartialEq<Str<'_>> for $other {
            #[inline]
            fn eq(&self, other: &Str<'_>) -> bool {
                &self[..] == other.as_str()
            }
        }
    )*};
}
eq_with!(str, &str, String, Cow<'_, str>);

impl<'a> From<&'a str> for Str<'a> {
    /// Borrows `text`.
    #[inline]
    fn from(text: &'a str) -> Self {
        Str::borrowed(text)
    }
}

impl<'a> From<&'a String> for Str<'a> {
    /// Borrows `text`.
    #[inline]
    fn from(text: &'a String) -> Self {
        Str::borrowed(text)
    }
}

impl From<String> for Str<'_> {
    /// Takes `text` (inline when short; else its buffer, shrunk to fit).
    #[inline]
    fn from(text: String) -> Self {
        match Raw::inline(&text) {
            Some(raw) => Str {
                raw,
                _borrows: PhantomData,
            },
            None => Str::from(text.into_boxed_str()),
        }
    }
}

impl From<Box<str>> for Str<'_> {
    /// Takes `text` (inline when short).
    #[inline]
    fn from(text: Box<str>) -> Self {
        let raw = Raw::inline(&text).unwrap_or_else(|| Raw::heap(text));
        Str {
            raw,
            _borrows: PhantomData,
        }
    }
}

impl From<char> for Str<'_> {
    #[inline]
    fn from(c: char) -> Self {
        Str::copied(c.encode_utf8(&mut [0; 4]))
    }
}

impl<'a> From<Cow<'a, str>> for Str<'a> {
    /// Borrows a borrowed `Cow`, takes an owned one.
    #[inline]
    fn from(text: Cow<'a, str>) -> Self {
        match text {
            Cow::Borrowed(t) => Str::borrowed(t),
            Cow::Owned(t) => Str::from(t),
        }
    }
}

impl<'a> From<Str<'a>> for Cow<'a, str> {
    /// Borrowed stays borrowed; owned becomes a `String`.
    #[inline]
    fn from(text: Str<'a>) -> Self {
        match text.as_borrowed() {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(text.into_string()),
        }
    }
}

impl From<Str<'_>> for String {
    #[inline]
    fn from(text: Str<'_>) -> Self {
        text.into_string()
    }
}

impl From<Str<'_>> for Box<str> {
    #[inline]
    fn from(text: Str<'_>) -> Self {
        text.into_string().into_boxed_str()
    }
}

impl std::str::FromStr for Str<'_> {
    type Err = std::convert::Infallible;
    /// An owned copy.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Str::copied(text))
    }
}

impl<'a> FromIterator<&'a str> for Str<'_> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(iter: I) -> Self {
        Str::from(iter.into_iter().collect::<String>())
    }
}

impl FromIterator<char> for Str<'_> {
    fn from_iter<I: IntoIterator<Item = char>>(iter: I) -> Self {
        Str::from(iter.into_iter().collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use std::mem::size_of;

    const SAMPLES: [&str; 9] = [
        "",
        "a",
        "Relu",
        "fifteen_bytes__",
        "sixteen_bytes___",
        "/model/layers.0/self_attn/q_proj/MatMul",
        "é",
        "naïve ünïcödé ✓ text that is long",
        "\0nul\u{7f}",
    ];

    #[test]
    fn sixteen_bytes_and_so_is_an_option() {
        assert_eq!(size_of::<Str<'_>>(), 16);
        assert_eq!(size_of::<Option<Str<'_>>>(), 16);
        assert_eq!(size_of::<Option<Option<Str<'_>>>>(), 16);
        // A oneof of an integer and a string, as `Dimension`'s value is.
        #[allow(dead_code)]
        enum IntOrStr<'a> {
            Int(i64),
            Str(Str<'a>),
        }
        assert_eq!(size_of::<Option<IntOrStr<'_>>>(), 16);
    }

    fn hash_of(s: &Str<'_>) -> u64 {
        // Fixed keys: equal values hash alike across calls.
        let mut h = std::hash::DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    #[test]
    fn inline_text_of_every_length_reads_back_and_ignores_what_follows_it() {
        // Two buffers that agree on each prefix and differ after it.
        let a = "0123456789abcdefXYZ";
        let b = "0123456789abcdef!!!";
        for n in 0..=Str::INLINE_CAPACITY {
            let (x, y) = (Str::copied(&a[..n]), Str::copied(&b[..n]));
            assert!(x.is_inline(), "length {n}");
            assert_eq!(x.as_str(), &a[..n], "length {n}");
            assert_eq!(x, y, "length {n}");
            assert_eq!(hash_of(&x), hash_of(&y), "length {n}");
        }
        // Each byte position distinct, so that a byte taken from the wrong place shows.
        let distinct: String = (1u8..=15).map(|b| char::from(b'@' + b)).collect();
        for n in 0..=15 {
            assert_eq!(Str::copied(&distinct[..n]).as_str(), &distinct[..n]);
        }
    }

    #[test]
    fn every_state_reads_back_its_text() {
        for s in SAMPLES {
            let b = Str::borrowed(s);
            assert!(b.is_borrowed() && !b.is_inline());
            assert_eq!(b.as_str(), s);
            assert_eq!(b.as_ptr(), s.as_ptr(), "borrowed means no copy");
            let c = Str::copied(s);
            assert!(!c.is_borrowed());
            assert_eq!(c.is_inline(), s.len() <= Str::INLINE_CAPACITY, "{s:?}");
            assert_eq!(c.as_str(), s);
            let o = Str::from(s.to_string());
            assert_eq!(o.is_inline(), s.len() <= 15);
            assert_eq!(&*o, s);
            let bx = Str::from(Box::<str>::from(s));
            assert_eq!(&*bx, s);
            assert_eq!(b, c);
            assert_eq!(c, o);
        }
    }

    #[test]
    fn owned_strings_outlive_their_source_and_borrowed_ones_share_it() {
        let owned: Vec<Str<'static>> = SAMPLES
            .iter()
            .map(|s| {
                let temp = s.to_string();
                Str::borrowed(&temp).into_owned()
            })
            .collect();
        for (o, s) in owned.iter().zip(SAMPLES) {
            assert_eq!(o, s);
        }
        // Moving an owned heap string keeps its block.
        let long = Str::from("x".repeat(100));
        let at = long.as_ptr();
        let moved = long.into_owned();
        assert_eq!(moved.as_ptr(), at);
        let text = moved.into_string();
        assert_eq!(text.as_ptr(), at, "into_string reuses the block");
    }

    #[test]
    fn clones_are_independent() {
        for s in SAMPLES {
            for v in [Str::borrowed(s), Str::copied(s)] {
                let c = v.clone();
                assert_eq!(c, v);
                assert_eq!(c.is_borrowed(), v.is_borrowed());
                if !v.is_borrowed() && !v.is_inline() {
                    assert_ne!(c.as_ptr(), v.as_ptr(), "a heap clone has its own block");
                }
                drop(v);
                assert_eq!(c, s);
            }
        }
    }

    #[test]
    fn compares_hashes_and_orders_as_str() {
        let mut sorted: Vec<Str<'_>> = SAMPLES.iter().map(|s| Str::copied(s)).collect();
        sorted.sort();
        let mut expect = SAMPLES.to_vec();
        expect.sort();
        assert_eq!(
            sorted,
            expect.iter().map(|s| Str::borrowed(s)).collect::<Vec<_>>()
        );
        let set: HashSet<Str<'_>> = SAMPLES.iter().map(|s| Str::from(s.to_string())).collect();
        assert!(SAMPLES.iter().all(|s| set.contains(*s)));
        let mut map = HashMap::new();
        map.insert(Str::from("key"), 1);
        assert_eq!(map.get("key"), Some(&1));
        let (a, a_string, a_cow) = (Str::copied("a"), String::from("a"), Cow::Borrowed("a"));
        assert_eq!(a, "a");
        assert_eq!("a", a);
        assert_eq!(a, *"a");
        assert_eq!(*"a", a);
        assert_eq!(a, a_string);
        assert_eq!(a_string, a);
        assert_eq!(a, a_cow);
        assert_eq!(a_cow, a);
        assert_eq!(format!("{:?}", Str::from("q\"")), format!("{:?}", "q\""));
        assert_eq!(format!("{:>4}", Str::from("ab")), "  ab");
    }

    #[test]
    fn conversions_keep_the_state_they_can() {
        let text = String::from("a borrowed string longer than fifteen");
        let cow: Cow<'_, str> = Str::from(&text).into();
        assert!(matches!(cow, Cow::Borrowed(t) if t.as_ptr() == text.as_ptr()));
        let cow: Cow<'_, str> = Str::from(text.clone()).into();
        assert!(matches!(cow, Cow::Owned(ref t) if *t == text));
        let back = Str::from(Cow::Borrowed(text.as_str()));
        assert!(back.is_borrowed());
        let s: String = Str::from("short").into();
        assert_eq!(s, "short");
        let b: Box<str> = Str::from(text.clone()).into();
        assert_eq!(&*b, text);
        assert_eq!(Str::from('é'), "é");
        assert_eq!(Str::default(), "");
        assert_eq!("x".parse::<Str<'_>>().unwrap(), "x");
        assert_eq!(["a", "b"].into_iter().collect::<Str<'_>>(), "ab");
    }

    #[test]
    fn from_utf8_agrees_with_std_at_every_length_and_position() {
        // Every length up to 80 (both sides of every word and of the 64-byte cut), with
        // a non-ASCII byte of each kind at every position, and all ASCII.
        for len in 0..80usize {
            let ascii: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(from_utf8(&ascii), std::str::from_utf8(&ascii), "len {len}");
            for at in 0..len {
                for bad in [0x80u8, 0xc3, 0xff, 0xe2, 0xf0] {
                    let mut b = ascii.clone();
                    b[at] = bad;
                    assert_eq!(from_utf8(&b), std::str::from_utf8(&b), "len {len} at {at}");
                }
                // A valid two-byte character ending at `at`.
                if at >= 1 {
                    let mut b = ascii.clone();
                    b[at - 1] = 0xc3;
                    b[at] = 0xa9;
                    assert_eq!(from_utf8(&b), std::str::from_utf8(&b));
                    assert!(from_utf8(&b).is_ok());
                }
            }
        }
    }

    #[test]
    fn a_borrowed_text_outlives_its_str() {
        let text = String::from("a name longer than fifteen bytes");
        let borrowed: &str = {
            let s = Str::from(&text);
            s.as_borrowed().unwrap()
        };
        assert_eq!(borrowed.as_ptr(), text.as_ptr());
        assert_eq!(Str::copied("short").as_borrowed(), None);
        assert_eq!(Str::from(text.clone()).as_borrowed(), None);
    }

    #[test]
    fn a_borrowed_str_may_be_dropped_after_its_text() {
        // As with `&str`, the drop of a borrowed `Str` does not use the text, so this
        // order of declarations compiles (it would not if `Str<'a>` had a `Drop`).
        let mut names: Vec<Str<'_>> = Vec::new();
        let text = String::from("input");
        names.push(Str::from(&text));
        assert_eq!(names[0], "input");
    }
}
