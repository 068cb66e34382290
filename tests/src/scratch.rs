//! Scratch directories for tests: unique per process and call, under
//! `<workspace>/target/test-scratch/`, removed when dropped (also when a test fails).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh, empty directory, removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new directory whose name starts with `name`.
    ///
    /// # Panics
    /// When the directory cannot be created (test support: a panic fails the test).
    pub fn new(name: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = crate::python::workspace_root()
            .join("target")
            .join("test-scratch")
            .join(format!(
                "{name}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        Scratch(dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names of the directory's entries, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", self.0.display()))
            .map(|e| {
                e.expect("directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
