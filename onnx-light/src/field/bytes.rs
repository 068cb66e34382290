//! [`Bytes`]: a byte payload that is borrowed from the input, owned, or a slice of a
//! shared reference-counted buffer (an mmap, a consolidated buffer, a decrypted model).

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use super::aligned::AlignedBuffer;
use crate::error::{Error, ErrorKind, Result};

/// Something that owns an immutable byte buffer that [`SharedBytes`] can slice.
///
/// Implementations must return the same bytes (same address and length) on every
/// call for as long as they live; `SharedBytes` validates its range once, at creation.
pub trait SharedOwner: Send + Sync + 'static {
    /// The owned bytes.
    fn bytes(&self) -> &[u8];
}

impl SharedOwner for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl SharedOwner for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl SharedOwner for AlignedBuffer {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl SharedOwner for &'static [u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A reference-counted slice: the caller keeps its own clones, and the bytes live until
/// the last of them and of the payloads made from it is dropped.
impl SharedOwner for Arc<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// `bytes::Bytes` (feature `bytes`): its storage never moves and is freed with the last
/// handle, so payloads made from it share it as they share a mapping.
#[cfg(feature = "bytes")]
impl SharedOwner for bytes::Bytes {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A reference-counted owner of a byte buffer.
pub type ByteOwner = Arc<dyn SharedOwner>;

/// A range of a [`ByteOwner`]'s bytes. Cloning is a reference-count increment.
#[derive(Clone)]
pub struct SharedBytes {
    owner: ByteOwner,
    start: usize,
    len: usize,
}

impl SharedBytes {
    /// The bytes `range` of `owner`.
    ///
    /// # Errors
    /// `Truncated` when the range is reversed or extends past the owner's bytes.
    pub fn new(owner: ByteOwner, range: Range<usize>) -> Result<Self> {
        let total = owner.bytes().len();
        if range.start > range.end || range.end > total {
            return Err(Error::at(
                ErrorKind::Truncated {
                    needed: range.end.saturating_sub(range.start.min(range.end)) as u64,
                    remaining: total.saturating_sub(range.start) as u64,
                },
                range.start as u64,
            ));
        }
        Ok(SharedBytes {
            owner,
            start: range.start,
            len: range.end - range.start,
        })
    }

    /// All the bytes of `owner`, which this payload keeps alive: the zero-copy way to
    /// hand caller memory to a tensor. `Vec<u8>`, `Box<[u8]>`, `Arc<[u8]>`,
    /// `bytes::Bytes` (feature `bytes`) and any [`SharedOwner`] of your own qualify; the
    /// bytes are not copied, and the payload reads them where they are.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use onnx_light::onnx::{DataType, TensorProto};
    /// use onnx_light::SharedBytes;
    ///
    /// let weights: Arc<[u8]> = 1.5f32.to_le_bytes().repeat(4).into();
    /// let t = TensorProto::try_from_raw(
    ///     "w",
    ///     DataType::Float,
    ///     [2, 2],
    ///     SharedBytes::from_owner(weights.clone()),
    /// )?;
    /// // The tensor reads the caller's allocation, which it keeps alive.
    /// assert_eq!(t.raw_data.as_deref().unwrap().as_ptr(), weights.as_ptr());
    /// assert_eq!(&*t.values::<f32>()?, &[1.5; 4]);
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    pub fn from_owner(owner: impl SharedOwner) -> Self {
        SharedBytes::whole(Arc::new(owner))
    }

    /// The whole of `owner`'s bytes.
    pub fn whole(owner: ByteOwner) -> Self {
        let len = owner.bytes().len();
        SharedBytes {
            owner,
            start: 0,
            len,
        }
    }

    /// The shared bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // The range was validated against the owner at creation and owners never
        // change their bytes; `get` keeps even a misbehaving owner from causing a panic.
        self.owner
            .bytes()
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The owner these bytes are a slice of.
    pub fn owner(&self) -> &ByteOwner {
        &self.owner
    }

    /// Offset of these bytes within the owner's buffer.
    pub fn offset_in_owner(&self) -> usize {
        self.start
    }
}

/// Owned storage for a payload: a `Vec<u8>`, or a buffer with a guaranteed alignment.
#[derive(Clone)]
pub struct OwnedBytes {
    repr: OwnedRepr,
}

#[derive(Clone)]
enum OwnedRepr {
    Vec(Vec<u8>),
    Aligned(AlignedBuffer),
}

impl OwnedBytes {
    /// Takes ownership of a vector without copying.
    pub fn from_vec(v: Vec<u8>) -> Self {
        OwnedBytes {
            repr: OwnedRepr::Vec(v),
        }
    }

    /// Copies `data` into storage aligned to `align` (a power of two).
    ///
    /// # Errors
    /// `InvalidOption` when `align` is not a power of two.
    pub fn aligned(data: &[u8], align: usize) -> Result<Self> {
        Ok(OwnedBytes {
            repr: OwnedRepr::Aligned(AlignedBuffer::copy_from(data, align)?),
        })
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.repr {
            OwnedRepr::Vec(v) => v,
            OwnedRepr::Aligned(a) => a,
        }
    }

    /// The bytes, mutably, in place (alignment is kept).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.repr {
            OwnedRepr::Vec(v) => v,
            OwnedRepr::Aligned(a) => a,
        }
    }

    /// The alignment guaranteed for the start (1 for a plain vector).
    pub fn alignment(&self) -> usize {
        match &self.repr {
            OwnedRepr::Vec(_) => 1,
            OwnedRepr::Aligned(a) => a.alignment(),
        }
    }

    /// A growable vector of the bytes; aligned storage is copied into a plain vector.
    pub fn to_mut_vec(&mut self) -> &mut Vec<u8> {
        if let OwnedRepr::Aligned(a) = &self.repr {
            self.repr = OwnedRepr::Vec(a.to_vec());
        }
        match &mut self.repr {
            OwnedRepr::Vec(v) => v,
            OwnedRepr::Aligned(_) => unreachable!("converted to a vector just above"),
        }
    }

    /// The bytes as a vector (no copy for vector storage).
    pub fn into_vec(self) -> Vec<u8> {
        match self.repr {
            OwnedRepr::Vec(v) => v,
            OwnedRepr::Aligned(a) => a.to_vec(),
        }
    }
}

/// A byte payload in one of three states. All three read the same through `Deref`;
/// mutation ([`Bytes::make_mut`], [`Bytes::to_mut_vec`]) copies a Borrowed or Shared
/// payload into Owned storage first, so other holders never see a change.
#[derive(Clone)]
pub enum Bytes<'a> {
    /// A slice of the caller's buffer; the compiler keeps the buffer alive.
    Borrowed(&'a [u8]),
    /// Own storage.
    Owned(OwnedBytes),
    /// A slice of a reference-counted buffer that outlives every loader.
    Shared(SharedBytes),
}

impl Default for Bytes<'_> {
    fn default() -> Self {
        Bytes::Borrowed(&[])
    }
}

impl<'a> Bytes<'a> {
    /// An empty payload.
    pub const fn new() -> Self {
        Bytes::Borrowed(&[])
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(s) => s,
            Bytes::Owned(o) => o.as_slice(),
            Bytes::Shared(s) => s.as_slice(),
        }
    }

    /// A copy of `data` in storage aligned to `align` (a power of two).
    ///
    /// # Errors
    /// `InvalidOption` when `align` is not a power of two.
    pub fn aligned(data: &[u8], align: usize) -> Result<Bytes<'static>> {
        Ok(Bytes::Owned(OwnedBytes::aligned(data, align)?))
    }

    /// `range` of a shared owner.
    ///
    /// # Errors
    /// When the range does not lie within the owner's bytes.
    pub fn shared(owner: ByteOwner, range: Range<usize>) -> Result<Bytes<'static>> {
        Ok(Bytes::Shared(SharedBytes::new(owner, range)?))
    }

    /// True for the Borrowed state.
    pub fn is_borrowed(&self) -> bool {
        matches!(self, Bytes::Borrowed(_))
    }

    /// True for the Owned state.
    pub fn is_owned(&self) -> bool {
        matches!(self, Bytes::Owned(_))
    }

    /// True for the Shared state.
    pub fn is_shared(&self) -> bool {
        matches!(self, Bytes::Shared(_))
    }

    /// The same bytes with no borrow: Borrowed payloads are copied; Owned and Shared
    /// payloads are moved as they are.
    pub fn into_owned(self) -> Bytes<'static> {
        match self {
            Bytes::Borrowed(s) => Bytes::Owned(OwnedBytes::from_vec(s.to_vec())),
            Bytes::Owned(o) => Bytes::Owned(o),
            Bytes::Shared(s) => Bytes::Shared(s),
        }
    }

    fn make_owned(&mut self) -> &mut OwnedBytes {
        if !self.is_owned() {
            // Copy-on-write: the borrowed or shared bytes stay untouched for other holders.
            *self = Bytes::Owned(OwnedBytes::from_vec(self.as_slice().to_vec()));
        }
        match self {
            Bytes::Owned(o) => o,
            _ => unreachable!("made owned just above"),
        }
    }

    /// The bytes for in-place mutation, copying Borrowed or Shared payloads first.
    pub fn make_mut(&mut self) -> &mut [u8] {
        self.make_owned().as_mut_slice()
    }

    /// A growable vector of the bytes, copying first unless they are owned vector storage.
    pub fn to_mut_vec(&mut self) -> &mut Vec<u8> {
        self.make_owned().to_mut_vec()
    }

    /// The bytes as a vector (copies unless Owned vector storage).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(o) => o.into_vec(),
            other => other.as_slice().to_vec(),
        }
    }
}

impl Deref for Bytes<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for Bytes<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Bytes<'_> {}

impl PartialEq<[u8]> for Bytes<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for Bytes<'_> {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Bytes<'_> {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.as_slice() == other
    }
}

impl std::hash::Hash for Bytes<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<'a> From<&'a [u8]> for Bytes<'a> {
    fn from(s: &'a [u8]) -> Self {
        Bytes::Borrowed(s)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Bytes<'a> {
    fn from(s: &'a [u8; N]) -> Self {
        Bytes::Borrowed(s)
    }
}

impl From<Vec<u8>> for Bytes<'_> {
    fn from(v: Vec<u8>) -> Self {
        Bytes::Owned(OwnedBytes::from_vec(v))
    }
}

/// A Shared payload over the caller's reference-counted slice, without a copy.
impl From<Arc<[u8]>> for Bytes<'_> {
    fn from(bytes: Arc<[u8]>) -> Self {
        Bytes::Shared(SharedBytes::from_owner(bytes))
    }
}

/// A Shared payload over a `bytes::Bytes` (feature `bytes`), without a copy.
#[cfg(feature = "bytes")]
impl From<bytes::Bytes> for Bytes<'_> {
    fn from(bytes: bytes::Bytes) -> Self {
        Bytes::Shared(SharedBytes::from_owner(bytes))
    }
}

impl From<SharedBytes> for Bytes<'_> {
    fn from(s: SharedBytes) -> Self {
        Bytes::Shared(s)
    }
}

/// How many leading bytes `Debug` shows; weights are never dumped.
const DEBUG_PREVIEW: usize = 16;

fn debug_preview(f: &mut fmt::Formatter<'_>, state: &str, bytes: &[u8]) -> fmt::Result {
    write!(f, "{state}({} bytes", bytes.len())?;
    if !bytes.is_empty() {
        f.write_str(": ")?;
        for b in bytes.iter().take(DEBUG_PREVIEW) {
            write!(f, "{b:02x}")?;
        }
        if bytes.len() > DEBUG_PREVIEW {
            f.write_str("…")?;
        }
    }
    f.write_str(")")
}

impl fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self {
            Bytes::Borrowed(_) => "Borrowed",
            Bytes::Owned(_) => "Owned",
            Bytes::Shared(_) => "Shared",
        };
        debug_preview(f, state, self.as_slice())
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_preview(f, "SharedBytes", self.as_slice())
    }
}

impl fmt::Debug for OwnedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_preview(f, "OwnedBytes", self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_states_read_the_same_and_compare_equal() {
        let data = b"payload".to_vec();
        let owner: ByteOwner = Arc::new(data.clone());
        let a = Bytes::Borrowed(&data);
        let b = Bytes::from(data.clone());
        let c = Bytes::shared(owner, 0..7).unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(&*c, b"payload");
    }

    #[test]
    fn an_arc_slice_is_shared_without_a_copy_and_kept_alive() {
        let data: Arc<[u8]> = Arc::from(&b"caller memory"[..]);
        let address = data.as_ptr();
        let mut payload = Bytes::from(data.clone());
        assert!(payload.is_shared());
        assert_eq!(payload.as_ptr(), address);
        assert_eq!(Arc::strong_count(&data), 2);
        drop(data);
        assert_eq!(&*payload, b"caller memory");
        // Writing copies first: the caller's allocation is never written through.
        let other = payload.clone();
        payload.make_mut()[0] = b'C';
        assert_eq!(&*payload, b"Caller memory");
        assert_eq!(&*other, b"caller memory");
        assert_eq!(other.as_ptr(), address);
    }

    #[cfg(feature = "bytes")]
    #[test]
    fn a_bytes_handle_is_shared_without_a_copy() {
        let data = bytes::Bytes::from(vec![7u8; 4096]);
        let slice = data.slice(1024..2048);
        let payload = Bytes::from(slice.clone());
        assert!(payload.is_shared());
        assert_eq!(payload.as_ptr(), slice.as_ptr());
        drop((data, slice));
        assert_eq!(&*payload, &[7u8; 1024][..]);
    }

    #[test]
    fn mutating_a_shared_payload_copies_and_leaves_other_holders_alone() {
        let owner: ByteOwner = Arc::new(vec![1u8, 2, 3, 4]);
        let mut a = Bytes::shared(owner.clone(), 1..3).unwrap();
        let b = a.clone();
        a.make_mut()[0] = 99;
        assert!(a.is_owned());
        assert_eq!(&*a, &[99, 3]);
        assert_eq!(&*b, &[2, 3]);
        assert_eq!(owner.bytes(), &[1, 2, 3, 4]);
    }

    #[test]
    fn mutating_a_borrowed_payload_copies() {
        let data = [5u8, 6];
        let mut a = Bytes::Borrowed(&data);
        a.to_mut_vec().push(7);
        assert_eq!(&*a, &[5, 6, 7]);
        assert_eq!(data, [5, 6]);
    }

    #[test]
    fn shared_range_outside_owner_is_an_error() {
        let owner: ByteOwner = Arc::new(vec![0u8; 4]);
        assert!(Bytes::shared(owner.clone(), 2..5).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 3..2;
        assert!(Bytes::shared(owner, reversed).is_err());
    }

    #[test]
    fn aligned_owned_storage_is_aligned_and_stays_so_when_mutated_in_place() {
        let mut b = Bytes::aligned(&[1, 2, 3], 4096).unwrap();
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        b.make_mut()[0] = 9;
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        assert_eq!(&*b, &[9, 2, 3]);
    }

    #[test]
    fn debug_never_dumps_the_payload() {
        let big = Bytes::from(vec![0xabu8; 1 << 20]);
        let s = format!("{big:?}");
        assert!(s.len() < 80, "{s}");
        assert!(s.contains("1048576 bytes"));
    }

    #[test]
    fn into_owned_keeps_shared_payloads_shared() {
        let owner: ByteOwner = Arc::new(vec![1u8; 8]);
        let s = Bytes::shared(owner, 0..8).unwrap();
        assert!(s.into_owned().is_shared());
        let data = [1u8];
        assert!(Bytes::Borrowed(&data).into_owned().is_owned());
    }
}
