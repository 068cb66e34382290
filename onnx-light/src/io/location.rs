//! External-data locations as names: the rules a location must pass before any file is
//! opened or written under it, the same on load and on save. Knows paths and errors;
//! knows nothing of files, models or options.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, ErrorKind, ExternalDataRule, Result};

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
/// `InvalidExternalData` (rule [`ExternalDataRule::Location`]) naming `tensor`, the
/// location and the reason.
pub fn validate_location(tensor: &str, location: &str) -> Result<PathBuf> {
    let bad = |why: &str| {
        Error::new(ErrorKind::InvalidExternalData {
            location: Some(location.to_string()),
            reason: why.to_string(),
            rule: ExternalDataRule::Location,
        })
        .in_tensor(tensor)
    };
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

/// A checked location as the model records it: its components joined with `/`.
pub(crate) fn location_string(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Where a save writes a data file (`ExternalDataOptions::location`, or the location a
/// tensor carries): a path relative to the model's directory, checked like every
/// location (nothing absolute, no `..`, no device names, ...) and normalized to `/`
/// separators. Directories in it are created beneath the model's directory by the save;
/// `what` names the option or entry it came from.
///
/// # Errors
/// `InvalidOption` naming `what` when the location is refused or names a directory.
pub(crate) fn save_location(what: &'static str, location: &str) -> Result<String> {
    if location.ends_with(['/', '\\']) {
        return Err(Error::invalid_option(
            what,
            format!("{location:?} names a directory; give a file name (e.g. {location}model.data)"),
        ));
    }
    let path = validate_location("", location).map_err(|e| {
        let why = match e.kind() {
            ErrorKind::InvalidExternalData { reason, .. } => reason.clone(),
            _ => e.to_string(),
        };
        Error::invalid_option(what, format!("{location:?}: {why}"))
    })?;
    Ok(location_string(&path))
}

/// Where a save writes the data of a tensor marked external in memory: the location it
/// records, checked and normalized as [`save_location`] does. The model, not an option,
/// holds that location, so a refusal is about the tensor's external data.
///
/// # Errors
/// `InvalidExternalData` (rule [`ExternalDataRule::Location`]) naming `tensor`, the
/// location and the reason, when the location is refused or names a directory.
pub(crate) fn tensor_save_location(tensor: &str, location: &str) -> Result<String> {
    if location.ends_with(['/', '\\']) {
        return Err(Error::new(ErrorKind::InvalidExternalData {
            location: Some(location.to_string()),
            reason: "the location names a directory, not a file".to_string(),
            rule: ExternalDataRule::Location,
        })
        .in_tensor(tensor));
    }
    validate_location(tensor, location).map(|path| location_string(&path))
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
    fn save_locations_are_normalized_relative_paths_naming_a_file() {
        for (given, kept) in [
            ("w.bin", "w.bin"),
            ("./weights/w.bin", "weights/w.bin"),
            ("weights\\w.bin", "weights/w.bin"),
            ("a//b/./c.bin", "a/b/c.bin"),
        ] {
            assert_eq!(save_location("location", given).unwrap(), kept);
        }
        for (given, why) in [
            ("weights/", "names a directory"),
            ("weights\\", "names a directory"),
            ("../w.bin", ".."),
            ("/abs/w.bin", "absolute"),
            ("./.", "names no file"),
        ] {
            let err = save_location("location", given).unwrap_err();
            assert!(matches!(
                err.kind(),
                ErrorKind::InvalidOption {
                    name: "location",
                    ..
                }
            ));
            assert!(err.to_string().contains(why), "{given:?}: {err}");
        }
    }

    #[test]
    fn a_tensors_own_location_is_refused_as_its_external_data() {
        assert_eq!(
            tensor_save_location("t", "./weights\\w.bin").unwrap(),
            "weights/w.bin"
        );
        for (given, why) in [
            ("weights/", "names a directory"),
            ("../w.bin", ".."),
            ("/abs/w.bin", "absolute"),
        ] {
            let err = tensor_save_location("t", given).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::InvalidExternalData {
                        rule: ExternalDataRule::Location,
                        ..
                    }
                ),
                "{given:?}: {err}"
            );
            assert!(err.to_string().contains(why), "{given:?}: {err}");
            assert!(err.to_string().contains("`t`"), "{given:?}: {err}");
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
