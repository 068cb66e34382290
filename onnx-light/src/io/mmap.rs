//! Memory-mapped loads: the one place the crate maps a file, and the `unsafe` entry
//! point that does it.
//!
//! # Hazards
//!
//! A mapped file that another process truncates makes later reads of the vanished pages
//! fail with `SIGBUS`; one that is modified in place changes bytes that safe code holds
//! as immutable. Neither can be prevented by this library, so mapping is the caller's
//! promise: [`load_mapped`] is an `unsafe fn`, as `memmap2::Mmap::map` is. The safe loads
//! never map a file: they copy it, or read its structure only and leave the weights on
//! disk, or share an owner the caller made (such as a map the caller created and vouched
//! for, through [`load_from_owner`](super::load_from_owner)). The crate never writes a
//! file in place itself: saves create a new file and rename it over the old one, so a
//! mapped old file stays intact.
//!
//! Without the `mmap` feature, "mapping" reads the whole file into one page-aligned
//! shared buffer: mapped loads still give `'static` models whose payloads are slices of
//! one owner, at the cost of reading the file.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::load::{load_path, ParseOptions};
use crate::error::{Error, Result};
use crate::field::ByteOwner;
use crate::onnx::Model;

/// Loads a model from a file by mapping it: large payloads (and those of its external
/// data files, each mapped once) become shared slices of the maps, so nothing is copied
/// and the model is still `'static` (the maps live as long as any tensor does). Options
/// as for [`load_with`](super::load_with); `structure_only` and an `alignment` above 1
/// are refused (a mapped payload stays where the file has it).
///
/// The safe alternatives: [`load_with`](super::load_with) (one read into memory the
/// model owns), `structure_only` (weights left on disk, fetched on demand, errors
/// instead of crashes when the file shrinks), or a map you create and vouch for
/// yourself, passed to [`load_from_owner`](super::load_from_owner) (`Arc<memmap2::Mmap>`
/// is a [`SharedOwner`](crate::SharedOwner)).
///
/// # Safety
///
/// The model file and every external data file the model refers to must not be
/// truncated or modified in place, by this process or any other, while the returned
/// model, a clone of it, or any payload taken from it is alive. Otherwise reading a
/// payload is undefined behaviour: in practice the process dies of `SIGBUS` (a
/// truncated file) or sees bytes change behind a `&[u8]` (a file rewritten in place).
/// Replacing the files by renaming new ones over them, as this crate's saves do, is
/// fine: the maps keep the old files.
///
/// # Errors
/// As [`load_with`](super::load_with); `InvalidOption` for `structure_only` or an
/// `alignment` above 1.
///
/// # Examples
/// ```no_run
/// use onnx_light::io::{self, ParseOptions};
/// // SAFETY: the model and its data files are this application's own, and nothing
/// // truncates or rewrites them while it runs.
/// let model = unsafe { io::load_mapped("model.onnx", &ParseOptions::default())? };
/// # Ok::<(), onnx_light::Error>(())
/// ```
// SAFETY: `unsafe` here is the contract itself (`# Safety` above), not a block: the body
// only hands the private `map_file` to the load.
pub unsafe fn load_mapped(path: impl AsRef<Path>, options: &ParseOptions) -> Result<Model> {
    load_path(path.as_ref(), options, Some(map_file))
}

/// Maps `file` (opened from `path`) read-only. Private: a load gets it only through
/// [`load_mapped`], whose caller took on the hazards above.
///
/// # Errors
/// I/O errors from the operating system, naming `path`.
#[cfg(feature = "mmap")]
fn map_file(file: &File, path: &Path) -> Result<ByteOwner> {
    use memmap2::Mmap;
    if file.metadata().map_err(|e| Error::io(e, Some(path)))?.len() == 0 {
        // Mapping zero bytes is an error on Linux; an empty owner is the honest answer.
        return Ok(Arc::new(Vec::<u8>::new()));
    }
    // SAFETY: the map is read-only and private to this crate's `SharedBytes`, which only
    // ever hand out `&[u8]`. Undefined behaviour could only arise if the file were
    // modified or truncated while mapped; this function is reachable only through
    // `load_mapped`, whose caller promised (its `# Safety` section) that the model file
    // and its data files are not, and the crate never writes a mapped file in place
    // (saves go through a new file and a rename).
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io(e, Some(path)))?;
    Ok(Arc::new(map))
}

/// Reads `file` (opened from `path`) into one shared, page-aligned buffer.
///
/// # Errors
/// I/O errors from the operating system, naming `path`.
#[cfg(not(feature = "mmap"))]
fn map_file(file: &File, path: &Path) -> Result<ByteOwner> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map_err(|e| Error::io(e, Some(path)))?.len();
    let len = usize::try_from(len).map_err(|_| {
        Error::new(crate::error::ErrorKind::ValueOutOfRange {
            what: "file larger than the address space",
        })
    })?;
    let mut buffer = crate::field::AlignedBuffer::zeroed(len, 4096)?;
    file.read_exact_at(&mut buffer, 0)
        .map_err(|e| Error::io(e, Some(path)))?;
    Ok(Arc::new(buffer))
}
