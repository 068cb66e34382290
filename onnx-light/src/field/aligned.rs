//! An owned byte buffer whose start is aligned to a chosen power of two.
//!
//! `Vec<u8>` only promises 1-byte alignment; typed views (`&[f32]`), `O_DIRECT` writes and
//! page-aligned consolidation need more. This is the one place in the field layer that
//! allocates by hand, so the `unsafe` is confined here and argued block by block.
#![allow(unsafe_code)]

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::error::{Error, Result};

/// A heap buffer of `len` bytes starting at an address that is a multiple of `align`.
pub struct AlignedBuffer {
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
}

// SAFETY: `AlignedBuffer` uniquely owns its allocation (like `Box<[u8]>`); it hands out
// `&[u8]` only through `&self` and `&mut [u8]` only through `&mut self`, so sending it to
// another thread or sharing `&AlignedBuffer` between threads is as safe as for `Vec<u8>`.
unsafe impl Send for AlignedBuffer {}
// SAFETY: see `Send` above; `&AlignedBuffer` only permits reads.
unsafe impl Sync for AlignedBuffer {}

impl AlignedBuffer {
    fn layout(len: usize, align: usize) -> Result<Layout> {
        if !align.is_power_of_two() {
            return Err(Error::invalid_option(
                "alignment",
                format!("{align} is not a power of two"),
            ));
        }
        Layout::from_size_align(len, align).map_err(|_| {
            Error::invalid_option(
                "alignment",
                format!("{len} bytes aligned to {align} exceed the address space"),
            )
        })
    }

    /// A zero-filled buffer of `len` bytes aligned to `align`.
    ///
    /// # Errors
    /// `InvalidOption` when `align` is not a power of two or the size overflows;
    /// an `OutOfMemory` I/O error when the allocator fails.
    pub fn zeroed(len: usize, align: usize) -> Result<Self> {
        let layout = Self::layout(len, align)?;
        if len == 0 {
            return Ok(Self::empty(align));
        }
        // SAFETY: `layout` has a non-zero size (checked above) and a valid power-of-two
        // alignment (checked by `Layout::from_size_align`).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::from(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes"),
            ))
        })?;
        Ok(AlignedBuffer { ptr, len, align })
    }

    /// A copy of `data` in a buffer aligned to `align`.
    ///
    /// # Errors
    /// As [`AlignedBuffer::zeroed`].
    pub fn copy_from(data: &[u8], align: usize) -> Result<Self> {
        let mut buf = Self::zeroed(data.len(), align)?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    fn empty(align: usize) -> Self {
        // A dangling but aligned, non-null pointer: valid for zero-length slices.
        let ptr = NonNull::new(std::ptr::without_provenance_mut::<u8>(align))
            .unwrap_or(NonNull::dangling());
        AlignedBuffer { ptr, len: 0, align }
    }

    /// The alignment the buffer's start is guaranteed to have.
    pub fn alignment(&self) -> usize {
        self.align
    }
}

impl Deref for AlignedBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes (zeroed at allocation) owned by
        // `self`, or is an aligned dangling pointer with `len == 0`; the borrow of `self`
        // keeps the allocation alive and prevents mutation for the slice's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` guarantees the slice is the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        // SAFETY: the pointer came from `alloc_zeroed` with exactly this size and
        // alignment (the layout was valid then, so it is now), and is freed only here.
        unsafe {
            alloc::dealloc(
                self.ptr.as_ptr(),
                Layout::from_size_align_unchecked(self.len, self.align),
            )
        }
    }
}

impl Clone for AlignedBuffer {
    fn clone(&self) -> Self {
        // The layout was valid when `self` was made, so only allocation can fail here.
        Self::copy_from(self, self.align).unwrap_or_else(|_| {
            alloc::handle_alloc_error(
                Layout::from_size_align(self.len, self.align).unwrap_or(Layout::new::<u8>()),
            )
        })
    }
}

impl fmt::Debug for AlignedBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuffer")
            .field("len", &self.len)
            .field("align", &self.align)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_is_aligned_for_every_power_of_two() {
        for shift in 0..=16 {
            let align = 1usize << shift;
            for len in [0usize, 1, 7, 4096, 10_000] {
                let b = AlignedBuffer::zeroed(len, align).unwrap();
                assert_eq!(b.as_ptr() as usize % align, 0, "align {align} len {len}");
                assert_eq!(b.len(), len);
                assert!(b.iter().all(|&x| x == 0));
            }
        }
    }

    #[test]
    fn non_power_of_two_alignment_is_an_error() {
        assert!(AlignedBuffer::zeroed(8, 3).is_err());
        assert!(AlignedBuffer::zeroed(8, 0).is_err());
    }

    #[test]
    fn copy_and_clone_keep_contents_and_alignment() {
        let b = AlignedBuffer::copy_from(b"hello", 64).unwrap();
        let c = b.clone();
        assert_eq!(&*c, b"hello");
        assert_eq!(c.as_ptr() as usize % 64, 0);
    }
}
