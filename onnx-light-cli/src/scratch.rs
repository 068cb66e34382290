//! Private scratch directories for `tour` and `bench`: a fresh directory with an
//! unpredictable name and mode 0700 (never one that someone else created first), removed
//! when dropped, also when the command fails, unless the command keeps it.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// A directory only this user can enter, removed on drop.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `<temp dir>/onnx-light-<what>-<random>`; an existing entry of that name
    /// is never reused. The path is absolute, so it stays right when the process
    /// changes its working directory (a relative `TMPDIR` included).
    pub fn new(what: &str) -> std::io::Result<Self> {
        let base = std::path::absolute(std::env::temp_dir())?;
        for _ in 0..64 {
            // RandomState is keyed from the operating system's random source.
            let mut h = RandomState::new().build_hasher();
            h.write_u32(std::process::id());
            let p = base.join(format!("onnx-light-{what}-{:016x}", h.finish()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(ScratchDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free scratch directory name"))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Leaves the directory in place for the user and returns its path.
    pub fn keep(mut self) -> PathBuf {
        // An empty path is what `drop` leaves alone.
        std::mem::take(&mut self.0)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn scratch_directories_are_private_fresh_and_removed() {
        let a = ScratchDir::new("test").unwrap();
        let b = ScratchDir::new("test").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let kept = a.path().to_path_buf();
        std::fs::write(kept.join("f"), b"x").unwrap();
        drop(a);
        assert!(!kept.exists());
    }

    #[test]
    fn a_kept_scratch_directory_stays_with_its_files() {
        let a = ScratchDir::new("test").unwrap();
        std::fs::write(a.path().join("f"), b"x").unwrap();
        let kept = a.keep();
        assert!(kept.is_absolute());
        assert_eq!(std::fs::read(kept.join("f")).unwrap(), b"x");
        std::fs::remove_dir_all(&kept).unwrap();
    }
}
