//! The one resolver every external-data path goes through, on load and on save.
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
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::reference::invalid;
use crate::error::{Error, Result};
use crate::io::open::Beneath;

/// Windows device names: a file component with one of these stems (any case, any
/// extension) opens the device, not a file, on Windows.
const WINDOWS_DEVICES: [&str; 24] = [
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "COM1", "COM2", "COM3", "COM4", "COM5",
    "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
    "LPT9",
];

/// Why a single path component would name something other than a plain file somewhere.
fn foreign_meaning(part: &str) -> Option<&'static str> {
    if part.contains(':') {
        return Some("a `:` in a name is an NTFS alternate data stream on Windows");
    }
    if part.ends_with('.') || part.ends_with(' ') {
        return Some("Windows drops a trailing dot or space, so the name would open another file");
    }
    // The device is opened whatever follows the stem (`NUL.bin`, `com1 .txt`); `COM` and
    // `LPT` also take the superscript digits.
    let stem = part.split('.').next().unwrap_or(part).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    let device = WINDOWS_DEVICES.contains(&upper.as_str())
        || [
            "COM\u{b9}",
            "COM\u{b2}",
            "COM\u{b3}",
            "LPT\u{b9}",
            "LPT\u{b2}",
            "LPT\u{b3}",
        ]
        .contains(&upper.as_str());
    if device {
        return Some("it is a Windows device name");
    }
    None
}

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
    if location.contains("_ORT_MEM_ADDR_") {
        return Err(bad(
            "the location contains `_ORT_MEM_ADDR_`, which onnxruntime reads as a memory address",
        ));
    }
    let normalized = location.replace('\\', "/");
    if normalized.starts_with('/') {
        return Err(bad("the location is an absolute path"));
    }
    let mut out = PathBuf::new();
    for part in Path::new(&normalized).components() {
        match part {
            Component::Normal(p) => {
                if let Some(why) = p.to_str().and_then(foreign_meaning) {
                    return Err(bad(&format!("the location is refused: {why}")));
                }
                out.push(p)
            }
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
    dir: Beneath,
    opened: Mutex<HashMap<PathBuf, Arc<DataFile>>>,
}

impl Resolver {
    /// A resolver for data files below `base_dir`.
    ///
    /// # Errors
    /// An I/O error naming the directory if it does not exist.
    pub fn new(base_dir: &Path) -> Result<Self> {
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

    /// The canonical base directory.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Opens the file `location` names (for `tensor`), or returns the already opened one.
    ///
    /// # Errors
    /// `InvalidExternalData` for a refused location, a symbolic link on the way (even one
    /// that stays inside the directory), a path that escapes the base directory or is not
    /// a regular file; an I/O error naming the tensor and file for a missing or
    /// unreadable file.
    pub fn open(&self, tensor: &str, location: &str) -> Result<Arc<DataFile>> {
        let relative = validate_location(tensor, location)?;
        if let Some(f) = self.opened.lock().map_err(|_| poisoned())?.get(&relative) {
            return Ok(f.clone());
        }
        let path = self.base.join(&relative);
        let file = self.dir.open_file(&relative).map_err(|e| {
            let refused = |why: &str| invalid(tensor, Some(location), why.to_string());
            match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
                Some(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                    refused("the location passes through a symbolic link (links are not followed; hard links are fine)")
                }
                Some(rustix::io::Errno::XDEV) => refused("the location escapes the model directory"),
                _ if e.kind() == std::io::ErrorKind::InvalidInput => {
                    refused(&format!("the location is {e}"))
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

fn poisoned() -> Error {
    Error::new(crate::error::ErrorKind::ValueOutOfRange {
        what: "external data resolver used after a panic",
    })
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
            ("*/_ORT_MEM_ADDR_/*", "onnxruntime"),
            ("w.bin:stream", "alternate data stream"),
            ("sub:x/w.bin", "alternate data stream"),
            ("w.bin.", "trailing dot"),
            ("w.bin ", "trailing dot or space"),
            ("sub./w.bin", "trailing dot"),
            ("CON", "device"),
            ("nul.bin", "device"),
            ("sub/Com1.txt", "device"),
            ("lpt9", "device"),
            ("aux .bin", "device"),
            ("COM\u{b9}", "device"),
            ("conout$", "device"),
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
        for fine in [
            "console.bin",
            "com10",
            "nullable.bin",
            "a.b.c",
            "CON_weights",
        ] {
            assert_eq!(validate_location("t", fine).unwrap(), PathBuf::from(fine));
        }
        assert_eq!(
            validate_location("t", "sub\\w.bin").unwrap(),
            PathBuf::from("sub/w.bin")
        );
    }
}
