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
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, Result};

/// Maps `file` (opened from `path`) read-only.
///
/// # Errors
/// I/O errors from the operating system, naming `path`.
pub(crate) fn map_file(file: &File, path: &Path) -> Result<Arc<Mmap>> {
    if file.metadata().map_err(|e| Error::io(e, Some(path)))?.len() == 0 {
        // Mapping zero bytes is an error on Linux; an empty map is the honest answer.
        return memmap2::MmapOptions::new()
            .len(0)
            .map_anon()
            .and_then(|m| m.make_read_only())
            .map(Arc::new)
            .map_err(|e| Error::io(e, Some(path)));
    }
    // SAFETY: the map is read-only and private to this crate's `SharedBytes`, which only
    // ever hand out `&[u8]`. Undefined behaviour could only arise if the file were
    // modified or truncated while mapped, by another process or by the caller; the module
    // documentation above states that hazard and the crate never writes a mapped file in
    // place (saves go through a new file and a rename).
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io(e, Some(path)))?;
    Ok(Arc::new(map))
}
