//! What a save reports: the files it wrote.

use std::path::{Path, PathBuf};

/// The files a save wrote: the model file and its external data files.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Saved {
    /// The model file (where a symbolic link led, the file it leads to).
    pub model: PathBuf,
    /// The model file's size in bytes.
    pub model_len: u64,
    /// The data files, in the order their first tensor was written.
    pub data_files: Vec<SavedFile>,
}

impl Saved {
    pub(crate) fn new(model: PathBuf, model_len: u64, data_files: Vec<SavedFile>) -> Self {
        Saved {
            model,
            model_len,
            data_files,
        }
    }

    /// Every file written, the model file first.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.model.as_path())
            .chain(self.data_files.iter().map(|f| f.path.as_path()))
    }
}

/// One external data file a save wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SavedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its location as the model records it, relative to the model's directory.
    pub location: String,
    /// Its size in bytes.
    pub len: u64,
}

impl SavedFile {
    pub(crate) fn new(path: PathBuf, location: String, len: u64) -> Self {
        SavedFile {
            path,
            location,
            len,
        }
    }
}
