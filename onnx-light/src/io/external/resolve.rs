//! The one resolver every external-data path goes through, on load and on save.
//!
//! A location is a relative path below the model's directory. Refused: empty names,
//! absolute paths, Windows drive and UNC prefixes, `..` components (with either slash),
//! NUL and other control characters, anything whose real path (symlinks resolved) leaves
//! the directory, and anything that is not a regular file. Ranges are checked against the
//! size of the file as opened, not as named, so a file swapped after the check cannot
//! widen what is read.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::reference::invalid;
use crate::error::{Error, Result};

/// Checks a location and returns it as a relative path (backslashes read as separators,
/// `.` components dropped).
///
/// # Errors
/// `InvalidExternalData` naming `tensor`, the location and the reason.
pub fn validate_location(tensor: &str, location: &str) -> Result<PathBuf> {
    let bad = |why: &str| invalid(tensor, Some(location), why.to_string());
    if location.is_empty() {
        return Err(bad("the location is empty"));
    }
    if location.chars().any(|c| c.is_control()) {
        return Err(bad("the location contains NUL or control characters"));
    }
    let bytes = location.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err(bad("the location has a Windows drive prefix"));
    }
    if location.starts_with("\\\\") || location.starts_with("//") {
        return Err(bad("the location is a UNC or network path"));
    }
    let normalized = location.replace('\\', "/");
    if normalized.starts_with('/') {
        return Err(bad("the location is an absolute path"));
    }
    let mut out = PathBuf::new();
    for part in Path::new(&normalized).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => return Err(bad("the location contains a `..` component")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad("the location is an absolute path"))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(bad("the location names no file"));
    }
    Ok(out)
}

/// An opened data file: its real path, its size when opened, and the handle.
#[derive(Debug)]
pub struct DataFile {
    pub(crate) file: File,
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
}

impl DataFile {
    /// The file's real path (symlinks resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size when it was opened.
    pub fn size(&self) -> u64 {
        self.size
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
pub struct Resolver {
    base: PathBuf,
    opened: Mutex<HashMap<PathBuf, Arc<DataFile>>>,
}

impl Resolver {
    /// A resolver for data files below `base_dir`.
    ///
    /// # Errors
    /// An I/O error naming the directory if it does not exist.
    pub fn new(base_dir: &Path) -> Result<Self> {
        let base = base_dir
            .canonicalize()
            .map_err(|e| Error::io(e, Some(base_dir)))?;
        Ok(Resolver {
            base,
            opened: Mutex::new(HashMap::new()),
        })
    }

    /// The canonical base directory.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Opens the file `location` names (for `tensor`), or returns the already opened one.
    ///
    /// # Errors
    /// `InvalidExternalData` for a refused location, a path that escapes the base
    /// directory or is not a regular file; an I/O error naming the tensor and file for a
    /// missing or unreadable file.
    pub fn open(&self, tensor: &str, location: &str) -> Result<Arc<DataFile>> {
        let relative = validate_location(tensor, location)?;
        if let Some(f) = self.opened.lock().map_err(|_| poisoned())?.get(&relative) {
            return Ok(f.clone());
        }
        let joined = self.base.join(&relative);
        let real = joined
            .canonicalize()
            .map_err(|e| Error::io(e, Some(&joined)).in_tensor(tensor))?;
        if !real.starts_with(&self.base) {
            return Err(invalid(
                tensor,
                Some(location),
                format!(
                    "the file resolves to {} outside the model directory",
                    real.display()
                ),
            ));
        }
        // The canonical path has no symlink left; O_NOFOLLOW refuses one planted since.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc_o_nofollow())
            .open(&real)
            .map_err(|e| Error::io(e, Some(&real)).in_tensor(tensor))?;
        let meta = file.metadata().map_err(|e| Error::io(e, Some(&real)))?;
        if !meta.is_file() {
            return Err(invalid(
                tensor,
                Some(location),
                "the location is not a regular file",
            ));
        }
        let data = Arc::new(DataFile {
            file,
            path: real,
            size: meta.len(),
        });
        self.opened
            .lock()
            .map_err(|_| poisoned())?
            .insert(relative, data.clone());
        Ok(data)
    }
}

fn poisoned() -> Error {
    Error::new(crate::error::ErrorKind::ValueOutOfRange {
        what: "external data resolver used after a panic",
    })
}

/// `O_NOFOLLOW` on Linux (the value std does not export).
const fn libc_o_nofollow() -> i32 {
    0o400000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_locations_are_refused_with_a_reason() {
        for (loc, why) in [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("../x.bin", ".."),
            ("a/../../x.bin", ".."),
            ("..\\..\\x.bin", ".."),
            ("C:\\x.bin", "drive"),
            ("c:x.bin", "drive"),
            ("\\\\server\\share\\x", "UNC"),
            ("//server/x", "UNC"),
            ("x\0.bin", "control"),
            ("x\n.bin", "control"),
            (".", "names no file"),
        ] {
            let err = validate_location("t", loc).unwrap_err();
            assert!(err.to_string().contains(why), "{loc:?}: {err}");
            assert_eq!(err.tensor(), Some("t"));
        }
    }

    #[test]
    fn ordinary_locations_are_relative_paths() {
        assert_eq!(
            validate_location("t", "w.bin").unwrap(),
            PathBuf::from("w.bin")
        );
        assert_eq!(
            validate_location("t", "./sub/w.bin").unwrap(),
            PathBuf::from("sub/w.bin")
        );
        assert_eq!(
            validate_location("t", "sub\\w.bin").unwrap(),
            PathBuf::from("sub/w.bin")
        );
    }
}
