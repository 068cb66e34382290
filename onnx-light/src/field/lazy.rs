//! Payloads that are not in memory yet: a source that can produce them on demand (a file
//! range, a mapped region). The field layer only knows the interface; `io` implements it
//! for files.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::Bytes;
use crate::error::{Error, Result};

/// Something that can produce the bytes of a payload on demand.
pub trait PayloadSource: Send + Sync + 'static {
    /// The `len` bytes at `offset` of the source. Implementations validate the range
    /// against the source and return an error naming it when it does not fit.
    ///
    /// # Errors
    /// I/O errors, or a range outside the source.
    fn fetch(&self, offset: u64, len: u64) -> Result<Bytes<'static>>;

    /// A short description for messages (e.g. the file path).
    fn describe(&self) -> String;

    /// Writes the `len` bytes at `offset` of the source into `out` at `at`. Sources that
    /// can copy without holding the bytes in memory (files: in the kernel) override it;
    /// the default fetches them and writes them.
    ///
    /// # Errors
    /// As [`fetch`](Self::fetch), and I/O errors writing `out`.
    fn copy_into(&self, offset: u64, len: u64, out: &File, at: u64) -> Result<()> {
        let bytes = self.fetch(offset, len)?;
        out.write_all_at(&bytes, at).map_err(|e| Error::io(e, None))
    }

    /// The (device, inode) of the file the bytes come from, when they come from a file:
    /// saves use it never to replace or remove a file they are still reading.
    fn file_identity(&self) -> Option<(u64, u64)> {
        None
    }
}

/// A payload left where it is: `len` bytes at `offset` of `source`.
#[derive(Clone)]
pub struct LazyPayload {
    source: Arc<dyn PayloadSource>,
    offset: u64,
    len: u64,
}

impl LazyPayload {
    /// A reference to `len` bytes at `offset` of `source`.
    pub fn new(source: Arc<dyn PayloadSource>, offset: u64, len: u64) -> Self {
        LazyPayload {
            source,
            offset,
            len,
        }
    }

    /// The payload's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty payload.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Offset of the payload in its source.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The source's description (e.g. its path).
    pub fn source(&self) -> String {
        self.source.describe()
    }

    /// The (device, inode) of the file the payload is in, if it is in a file.
    pub fn file_identity(&self) -> Option<(u64, u64)> {
        self.source.file_identity()
    }

    /// Reads (or maps) the payload now.
    ///
    /// # Errors
    /// Whatever the source reports: I/O errors, a range that no longer fits.
    pub fn fetch(&self) -> Result<Bytes<'static>> {
        self.source.fetch(self.offset, self.len)
    }

    /// Reads `len` bytes of the payload from `start` on (a part, without the rest).
    ///
    /// # Errors
    /// Whatever the source reports; a range past the payload's end is an error.
    pub(crate) fn fetch_part(&self, start: u64, len: u64) -> Result<Bytes<'static>> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(crate::Error::new(crate::ErrorKind::ValueOutOfRange {
                what: "part of a payload",
            }));
        }
        self.source.fetch(self.offset + start, len)
    }

    /// Writes the payload into `out` at `at` without reading it into memory where the
    /// source allows (a file copies in the kernel).
    ///
    /// # Errors
    /// Whatever the source reports: I/O errors, a range that no longer fits.
    pub fn copy_into(&self, out: &File, at: u64) -> Result<()> {
        self.source.copy_into(self.offset, self.len, out, at)
    }

    /// Writes `len` bytes of the payload from `start` on into `out` at `at`, as
    /// [`copy_into`](Self::copy_into) does the whole (for copies in steps).
    ///
    /// # Errors
    /// As `copy_into`; a range past the payload's end is an error.
    pub(crate) fn copy_part_into(&self, start: u64, len: u64, out: &File, at: u64) -> Result<()> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(crate::Error::new(crate::ErrorKind::ValueOutOfRange {
                what: "part of a payload",
            }));
        }
        self.source.copy_into(self.offset + start, len, out, at)
    }
}

impl PartialEq for LazyPayload {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.source, &other.source)
            && self.offset == other.offset
            && self.len == other.len
    }
}

impl fmt::Debug for LazyPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyPayload")
            .field("source", &self.source.describe())
            .field("offset", &self.offset)
            .field("len", &self.len)
            .finish()
    }
}
