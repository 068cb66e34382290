//! The one resolver every external-data path goes through, on load and on save, and the
//! check of one tensor's reference against the file it resolves to.
//!
//! A location is a relative path below the model's directory. Refused: empty names,
//! absolute paths, Windows drive and UNC prefixes, `..` components (with either slash),
//! NUL and other control characters, names that mean something else on another platform
//! or to onnxruntime (see [`validate_location`]), any symbolic link on the way, and
//! anything that is not a regular file. Files are opened beneath the directory one
//! descriptor at a time (`crate::io::open::Beneath`), so swapping a directory for a link
//! while a model loads cannot redirect a read; ranges are checked against the size of the
//! file as opened, not as named.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::reference::{invalid, ExternalDataRef};
use crate::error::{Error, ExternalDataRule, Result};
use crate::io::location::validate_location;
use crate::io::open::Beneath;
use crate::io::progress::{self, SharedProgress};
use crate::onnx::TensorProto;

/// An opened data file: its real path, its size when opened, and the handle.
#[derive(Debug)]
pub(crate) struct DataFile {
    pub(crate) file: File,
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
}

impl DataFile {
    /// The file's real path (symlinks resolved).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size when it was opened.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The SHA-1 of the whole file as opened, lowercase hex (the spec's `checksum`),
    /// each chunk read told to `progress` (which the file's size was announced to).
    ///
    /// # Errors
    /// I/O errors naming the file (one that shrank since it was opened among them).
    pub(crate) fn sha1(&self, progress: Option<&SharedProgress>) -> Result<String> {
        use sha1::{Digest, Sha1};
        use std::os::unix::fs::FileExt;
        let mut hasher = Sha1::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0u64;
        while at < self.size {
            let n = ((self.size - at) as usize).min(buf.len());
            self.file
                .read_exact_at(&mut buf[..n], at)
                .map_err(|e| Error::io(e, Some(&self.path)))?;
            hasher.update(&buf[..n]);
            progress::advance(progress, n as u64);
            at += n as u64;
        }
        Ok(hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect())
    }

    /// Wraps an already opened file (its size is read now).
    ///
    /// # Errors
    /// An I/O error naming `path`.
    pub(crate) fn from_file(file: &File, path: &Path) -> Result<Self> {
        let file = file.try_clone().map_err(|e| Error::io(e, Some(path)))?;
        let size = file.metadata().map_err(|e| Error::io(e, Some(path)))?.len();
        Ok(DataFile {
            file,
            path: path.to_path_buf(),
            size,
        })
    }
}

/// Resolves locations against one base directory, opening each file once.
#[derive(Debug)]
pub(crate) struct Resolver {
    base: PathBuf,
    dir: Beneath,
    opened: Mutex<HashMap<PathBuf, Arc<DataFile>>>,
}

impl Resolver {
    /// A resolver for data files below `base_dir`.
    ///
    /// # Errors
    /// An I/O error naming the directory if it does not exist.
    pub(crate) fn new(base_dir: &Path) -> Result<Self> {
        let dir = Beneath::open(base_dir).map_err(|e| Error::io(e, Some(base_dir)))?;
        // Only for naming files in messages: every open goes through `dir`.
        let base = base_dir
            .canonicalize()
            .unwrap_or_else(|_| base_dir.to_path_buf());
        Ok(Resolver {
            base,
            dir,
            opened: Mutex::new(HashMap::new()),
        })
    }

    /// Opens the file `location` names (for `tensor`), or returns the already opened one.
    ///
    /// # Errors
    /// `InvalidExternalData` for a refused location, a symbolic link on the way (even one
    /// that stays inside the directory), a path that escapes the base directory or is not
    /// a regular file; an I/O error naming the tensor and file for a missing or
    /// unreadable file.
    pub(crate) fn open(&self, tensor: &str, location: &str) -> Result<Arc<DataFile>> {
        let relative = validate_location(tensor, location)?;
        if let Some(f) = self.opened.lock().map_err(|_| poisoned())?.get(&relative) {
            return Ok(f.clone());
        }
        let path = self.base.join(&relative);
        let file = self.dir.open_file(&relative).map_err(|e| {
            let refused =
                |rule, why: &str| invalid(tensor, Some(location), rule, why.to_string());
            match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
                Some(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => refused(
                    ExternalDataRule::SymbolicLink,
                    "the location passes through a symbolic link (links are not followed; hard links are fine)",
                ),
                Some(rustix::io::Errno::XDEV) => refused(
                    ExternalDataRule::OutsideDirectory,
                    "the location escapes the model directory",
                ),
                _ if matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::IsADirectory
                ) =>
                {
                    refused(
                        ExternalDataRule::NotRegularFile,
                        &format!("the location is {e}"),
                    )
                }
                _ => Error::io(e, Some(&path)).in_tensor(tensor),
            }
        })?;
        let size = file
            .metadata()
            .map_err(|e| Error::io(e, Some(&path)))?
            .len();
        let data = Arc::new(DataFile { file, path, size });
        self.opened
            .lock()
            .map_err(|_| poisoned())?
            .insert(relative, data.clone());
        Ok(data)
    }
}

/// A tensor's external data, checked: the opened file, and the range in it.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedExternal {
    /// The opened data file.
    pub(crate) file: Arc<DataFile>,
    /// Byte offset of the payload.
    pub(crate) offset: u64,
    /// Byte length of the payload.
    pub(crate) len: u64,
    /// The `checksum` the tensor records, if any.
    pub(crate) checksum: Option<String>,
}

/// Checks one tensor's external-data reference: its metadata, its location (through the
/// resolver), its range against the opened file, and its length against its own dims and
/// data type. Nothing is read. `location_override` replaces the recorded location.
///
/// # Errors
/// `InvalidExternalData` naming the tensor, the location and the reason; I/O errors
/// naming the tensor and file.
pub(crate) fn resolve_tensor(
    t: &TensorProto<'_>,
    resolver: &Resolver,
    location_override: Option<&str>,
) -> Result<ResolvedExternal> {
    let name = t.name();
    let mut r = ExternalDataRef::from_tensor(t)?;
    if let Some(over) = location_override {
        r.location = over.to_string();
    }
    let file = resolver.open(name, &r.location)?;
    let len = check_range(t, &r, file.size)?;
    Ok(ResolvedExternal {
        file,
        offset: r.offset,
        len,
        checksum: r.checksum,
    })
}

/// Checks a tensor's reference `r` against the `size` of the data file it names: the
/// range fits in the file, and its length matches the tensor's dims and data type. The
/// payload's length (`length`, or the rest of the file).
///
/// # Errors
/// `InvalidExternalData` naming the tensor, the location and the broken rule.
pub(crate) fn check_range(t: &TensorProto<'_>, r: &ExternalDataRef, size: u64) -> Result<u64> {
    let name = t.name();
    if r.offset > size {
        return Err(invalid(
            name,
            Some(&r.location),
            ExternalDataRule::OutOfRange,
            format!(
                "offset {} exceeds file size ({} bytes): past the end of the file",
                r.offset, size
            ),
        ));
    }
    let len = r.length.unwrap_or(size - r.offset);
    if r.offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(invalid(
            name,
            Some(&r.location),
            ExternalDataRule::OutOfRange,
            format!(
                "length {len} exceeds available data ({} bytes from offset {}): past the end of the {}-byte file",
                size - r.offset,
                r.offset,
                size
            ),
        ));
    }
    if let Some(expected) = t.expected_raw_len() {
        if expected != len {
            return Err(invalid(
                name,
                Some(&r.location),
                ExternalDataRule::LengthMismatch,
                format!(
                    "length {len} does not match the {expected} bytes its dims and data type need"
                ),
            ));
        }
    }
    Ok(len)
}

fn poisoned() -> Error {
    Error::new(crate::error::ErrorKind::ValueOutOfRange {
        what: "external data resolver used after a panic",
    })
}
