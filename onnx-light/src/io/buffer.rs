//! Large zero-initialised buffers for tensor payloads. With the `mmap` feature they are
//! anonymous memory maps with transparent huge pages requested: copying hundreds of
//! megabytes into freshly allocated memory is bound by page faults (one per 4 KiB page),
//! and 2 MiB pages remove 511 of every 512 of them (the request is advice: where huge
//! pages are unavailable the buffer still works, only slower). Without it they are
//! page-aligned heap buffers.

use std::sync::Arc;

#[cfg(feature = "mmap")]
use memmap2::{Mmap, MmapMut};

#[cfg(feature = "mmap")]
use crate::error::Error;
use crate::error::Result;
#[cfg(not(feature = "mmap"))]
use crate::field::AlignedBuffer;
use crate::field::ByteOwner;
#[cfg(feature = "mmap")]
use crate::field::SharedOwner;

#[cfg(feature = "mmap")]
impl SharedOwner for Mmap {
    fn bytes(&self) -> &[u8] {
        self
    }
}

#[cfg(feature = "mmap")]
type Storage = MmapMut;
#[cfg(not(feature = "mmap"))]
type Storage = AlignedBuffer;

/// The alignment of a heap payload buffer (a page, as an anonymous map's).
#[cfg(not(feature = "mmap"))]
const PAGE: usize = 4096;

/// A writable payload buffer; [`PayloadBuffer::freeze`] turns it into a shared owner.
#[derive(Debug)]
pub struct PayloadBuffer {
    map: Option<Storage>,
}

impl PayloadBuffer {
    /// A zero-filled buffer of `len` bytes whose start is page-aligned.
    ///
    /// # Errors
    /// An I/O error when the operating system refuses the mapping (out of memory).
    pub fn new(len: usize) -> Result<Self> {
        if len == 0 {
            return Ok(PayloadBuffer { map: None });
        }
        #[cfg(feature = "mmap")]
        let map = {
            let map = MmapMut::map_anon(len).map_err(|e| {
                Error::io(
                    std::io::Error::new(
                        e.kind(),
                        format!("cannot allocate a {len}-byte payload buffer: {e}"),
                    ),
                    None,
                )
            })?;
            #[cfg(target_os = "linux")]
            {
                // Advice only: failure (no THP support) leaves a working, slower buffer.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            map
        };
        #[cfg(not(feature = "mmap"))]
        let map = AlignedBuffer::zeroed(len, PAGE)?;
        Ok(PayloadBuffer { map: Some(map) })
    }

    /// The buffer, for filling.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.map {
            Some(m) => m,
            None => &mut [],
        }
    }

    /// Makes the buffer read-only and shareable.
    ///
    /// # Errors
    /// An I/O error if the protection change fails.
    pub fn freeze(self) -> Result<ByteOwner> {
        match self.map {
            #[cfg(feature = "mmap")]
            Some(m) => {
                let ro = m.make_read_only().map_err(|e| Error::io(e, None))?;
                Ok(Arc::new(ro))
            }
            #[cfg(not(feature = "mmap"))]
            Some(m) => Ok(Arc::new(m)),
            None => Ok(Arc::new(Vec::<u8>::new())),
        }
    }
}

/// Rounds `offset` up to a multiple of `alignment` (a power of two), or `None` on overflow.
pub(crate) fn align_up(offset: u64, alignment: u64) -> Option<u64> {
    // Alignment 0 means none, as 1 does.
    let mask = alignment.max(1) - 1;
    offset.checked_add(mask).map(|v| v & !mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_page_aligned_and_shareable_after_freezing() {
        let mut b = PayloadBuffer::new(10_000).unwrap();
        assert!(b.as_mut_slice().iter().all(|&x| x == 0));
        assert_eq!(b.as_mut_slice().as_ptr() as usize % 4096, 0);
        b.as_mut_slice()[9_999] = 7;
        let owner = b.freeze().unwrap();
        assert_eq!(owner.bytes().len(), 10_000);
        assert_eq!(owner.bytes()[9_999], 7);
    }

    #[test]
    fn empty_buffers_work() {
        let mut b = PayloadBuffer::new(0).unwrap();
        assert!(b.as_mut_slice().is_empty());
        assert!(b.freeze().unwrap().bytes().is_empty());
    }

    #[test]
    fn align_up_rounds_and_detects_overflow() {
        assert_eq!(align_up(0, 64), Some(0));
        assert_eq!(align_up(1, 64), Some(64));
        assert_eq!(align_up(64, 64), Some(64));
        assert_eq!(align_up(7, 0), Some(7));
        assert_eq!(align_up(u64::MAX - 2, 4096), None);
    }
}
