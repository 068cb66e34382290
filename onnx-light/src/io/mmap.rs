//! Read-only memory maps of files: the one place the crate maps a file.
//!
//! # Hazards
//!
//! A mapped file that another process truncates makes later reads of the vanished pages
//! fail with `SIGBUS`; one that is modified in place changes bytes that safe code holds
//! as immutable. Neither can be prevented by this library. What it does: maps only on
//! request (`no_copy`), never writes a file in place itself (saves create a new file and
//! rename it over the old one, so a mapped old file stays intact), and offers
//! copying loads for files that others may change. Do not truncate or rewrite in place a
//! file that a no-copy model still maps.
//!
//! Without the `mmap` feature, "mapping" reads the whole file into one page-aligned
//! shared buffer: no-copy loads still give `'static` models whose payloads are slices of
//! one owner, at the cost of reading the file.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::field::ByteOwner;

/// Maps `file` (opened from `path`) read-only.
///
/// # Errors
/// I/O errors from the operating system, naming `path`.
#[cfg(feature = "mmap")]
pub(crate) fn map_file(file: &File, path: &Path) -> Result<ByteOwner> {
    use memmap2::Mmap;
    if file.metadata().map_err(|e| Error::io(e, Some(path)))?.len() == 0 {
        // Mapping zero bytes is an error on Linux; an empty owner is the honest answer.
        return Ok(Arc::new(Vec::<u8>::new()));
    }
    // SAFETY: the map is read-only and private to this crate's `SharedBytes`, which only
    // ever hand out `&[u8]`. Undefined behaviour could only arise if the file were
    // modified or truncated while mapped, by another process or by the caller; the module
    // documentation above states that hazard and the crate never writes a mapped file in
    // place (saves go through a new file and a rename).
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io(e, Some(path)))?;
    Ok(Arc::new(map))
}

/// Reads `file` (opened from `path`) into one shared, page-aligned buffer.
///
/// # Errors
/// I/O errors from the operating system, naming `path`.
#[cfg(not(feature = "mmap"))]
pub(crate) fn map_file(file: &File, path: &Path) -> Result<ByteOwner> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map_err(|e| Error::io(e, Some(path)))?.len();
    let len = usize::try_from(len).map_err(|_| {
        Error::new(crate::error::ErrorKind::ValueOutOfRange {
            what: "file larger than the address space",
        })
    })?;
    let mut buffer = crate::field::AlignedBuffer::zeroed(len, 4096)?;
    file.read_exact_at(&mut buffer, 0)
        .map_err(|e| Error::io(e, Some(path)))?;
    Ok(Arc::new(buffer))
}
