//! Where ciphertext is read from: memory or a file, by positional reads that many
//! threads may issue at once.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, ErrorKind, Result};
use crate::io::SharedProgress;

/// Encrypted input of a known length, read at offsets.
pub(crate) trait Source: Sync {
    /// Length in bytes, fixed when the source was opened.
    fn len(&self) -> u64;

    /// Fills `buf` with the bytes at `offset`.
    ///
    /// # Errors
    /// `TruncatedEncryption` past the end; I/O errors.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
}

/// A source that tells `progress` the bytes read from it, its length announced when it is
/// made. The few bytes of a header that is read twice are not counted again: the reports
/// stop at the length, which a complete decryption reads in full.
pub(crate) struct Reported<'a> {
    inner: &'a dyn Source,
    progress: &'a SharedProgress,
    reported: AtomicU64,
}

impl<'a> Reported<'a> {
    pub(crate) fn new(inner: &'a dyn Source, progress: &'a SharedProgress) -> Self {
        progress.expect(inner.len());
        Reported {
            inner,
            progress,
            reported: AtomicU64::new(0),
        }
    }
}

impl Source for Reported<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)?;
        let len = self.len();
        let before = self
            .reported
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                Some(r.saturating_add(buf.len() as u64).min(len))
            })
            .unwrap_or(len);
        let n = (before.saturating_add(buf.len() as u64).min(len)) - before;
        if n > 0 {
            self.progress.advance(n);
        }
        Ok(())
    }
}

/// Input held in memory.
pub(crate) struct Memory<'a>(pub(crate) &'a [u8]);

impl Source for Memory<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        match end {
            Some(end) if end <= self.len() => {
                buf.copy_from_slice(&self.0[offset as usize..end as usize]);
                Ok(())
            }
            _ => Err(Error::at(ErrorKind::TruncatedEncryption, self.len())),
        }
    }
}

/// A file whose length is taken once, at opening: a file that shrinks later gives a
/// truncation error at the read that misses its bytes.
pub(crate) struct FileSource<'a> {
    file: &'a File,
    path: &'a Path,
    len: u64,
}

impl<'a> FileSource<'a> {
    pub(crate) fn new(file: &'a File, path: &'a Path) -> Result<Self> {
        let meta = file.metadata().map_err(|e| Error::io(e, Some(path)))?;
        if !meta.is_file() {
            return Err(Error::io(
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
                Some(path),
            ));
        }
        Ok(FileSource {
            file,
            path,
            len: meta.len(),
        })
    }
}

impl Source for FileSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::at(ErrorKind::TruncatedEncryption, offset).in_file(self.path)
            } else {
                Error::io(e, Some(self.path))
            }
        })
    }
}
