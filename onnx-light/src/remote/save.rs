//! Saving a model to a store: the save of a file, staged in a private local directory,
//! then uploaded object by object, data objects first and the model object last.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use object_store::{ObjectStoreExt, ObjectStoreScheme, PutPayload, WriteMultipart};

use super::object::{block_on, Location, PART};
use super::options::RemoteOptions;
use crate::error::{Error, Result};
use crate::io::{self, SerializeOptions};
use crate::onnx::ModelProto;

/// One object a remote save wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SavedObject {
    /// Its URL.
    pub url: String,
    /// Its location as the model records it, relative to the model's URL (empty for
    /// the model object itself).
    pub location: String,
    /// Its size in bytes.
    pub len: u64,
}

/// What a remote save wrote: the model object and its data objects, in the order the
/// local save wrote them (which is the order they were uploaded in, the model last).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SavedObjects {
    /// The model object.
    pub model: SavedObject,
    /// The external-data objects.
    pub data_objects: Vec<SavedObject>,
}

/// A directory of the system's temporary directory that is removed when dropped.
struct Staging(PathBuf);

impl Staging {
    /// A new directory, created here (never one that was already there, which another
    /// user of a shared temporary directory could have placed or linked elsewhere) and
    /// readable only by its owner.
    fn new() -> Result<Staging> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        loop {
            let dir = std::env::temp_dir().join(format!(
                "onnx-light-upload-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match builder.create(&dir) {
                Ok(()) => return Ok(Staging(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(e, Some(&dir))),
            }
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Checks that `url` names a place a save can write to (its store configured from the
/// environment), without writing or asking the store anything.
///
/// # Errors
/// `InvalidOption` (option `url`) for a URL that is not one of a store;
/// `Io(Unsupported)` naming the URL for `http(s)://`, which is read-only; the errors of
/// a store the environment cannot configure (missing AWS credentials, ...).
pub fn check_writable(url: &str) -> Result<()> {
    writable(url).map(|_| ())
}

fn writable(url: &str) -> Result<Location> {
    let target = Location::parse(url)?;
    // The store would read `dir/` as the object `dir` and fail only after the staging.
    if target.url.path().ends_with('/') {
        return Err(Error::invalid_option(
            "url",
            format!("{url}: names no object (it ends with '/')"),
        ));
    }
    if matches!(
        ObjectStoreScheme::parse(&target.url).map(|(s, _)| s),
        Ok(ObjectStoreScheme::Http)
    ) {
        return Err(Error::io(
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "HTTP(S) URLs are read-only: save to s3://, gs://, az:// or file://",
            ),
            Some(Path::new(url)),
        ));
    }
    Ok(target)
}

/// Saves `model` to the object at `url` as [`io::save`] saves it to a file, with the
/// same `options` (external data beside the model under the same prefix, checksums on
/// request, the same bytes); see [`save_with`].
///
/// # Errors
/// See [`save_with`].
pub fn save(model: &ModelProto<'_>, url: &str, options: &SerializeOptions) -> Result<SavedObjects> {
    save_with(model, url, options, &RemoteOptions::default())
}

/// Saves `model` to the object at `url` (`s3://`, `gs://`, `az://`, `file://`, ...; an
/// `http(s)://` URL is read-only), its parts uploaded [`RemoteOptions::concurrency`] at a
/// time.
///
/// The model is first saved to a private directory of the system's temporary
/// directory by [`io::save`] with `options`, which applies the rules of a save to disk:
/// each data file's `location` is relative and stays under the model's directory, so
/// each data object stays under the model's prefix. The data objects are then uploaded
/// (objects of more than 8 MiB as multipart uploads of 8 MiB parts, in parallel), and
/// the model object last: a store makes each object appear whole or not at all, so no
/// reader sees a model whose data is not all there. A failed multipart upload is
/// aborted; the staging directory is removed in every case. The staging copy needs
/// local disk space for the whole model.
///
/// Saving over an existing model replaces its data objects before its model object:
/// a reader that opens the old model object in between may read new data.
///
/// # Errors
/// `InvalidOption` (option `url`) for a URL that is not one of a store;
/// `Io(Unsupported)` naming the URL for `http(s)://`; what [`io::save`] reports for the
/// model and its options (a `location` that leaves the model's directory among them);
/// the store's errors naming the object's URL (`Io(PermissionDenied)`, ...).
pub fn save_with(
    model: &ModelProto<'_>,
    url: &str,
    options: &SerializeOptions,
    remote: &RemoteOptions,
) -> Result<SavedObjects> {
    remote.validate()?;
    let target = writable(url)?;
    let name = target
        .path
        .filename()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Error::invalid_option("url", format!("{url}: names no object")))?
        .to_string();
    let staging = Staging::new()?;
    let saved = io::save(model, staging.0.join(&name), options)?;
    let mut data_objects = Vec::with_capacity(saved.data_files.len());
    for file in &saved.data_files {
        let object = target.sibling(Path::new(&file.location));
        upload(&object, &file.path, file.len, remote.concurrency)?;
        data_objects.push(SavedObject {
            url: object.url.to_string(),
            location: file.location.clone(),
            len: file.len,
        });
    }
    upload(&target, &saved.model, saved.model_len, remote.concurrency)?;
    Ok(SavedObjects {
        model: SavedObject {
            url: target.url.to_string(),
            location: String::new(),
            len: saved.model_len,
        },
        data_objects,
    })
}

/// Uploads the `len` bytes of the file at `path` to `object`: one PUT for up to
/// [`PART`] bytes, a multipart upload of `PART`-sized parts, `concurrency` in flight,
/// above that (aborted on failure).
fn upload(object: &Location, path: &Path, len: u64, concurrency: usize) -> Result<()> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(e, Some(path)))?;
    let read = |file: &mut std::fs::File, n: usize| -> Result<bytes::Bytes> {
        let mut buf = vec![0u8; n];
        file.read_exact(&mut buf)
            .map_err(|e| Error::io(e, Some(path)))?;
        Ok(bytes::Bytes::from(buf))
    };
    if len <= PART {
        let whole = read(&mut file, len as usize)?;
        block_on(object.store.put(&object.path, PutPayload::from(whole)))?
            .map_err(|e| object.error(e))?;
        return Ok(());
    }
    block_on(async {
        let started = object
            .store
            .put_multipart(&object.path)
            .await
            .map_err(|e| object.error(e))?;
        let mut writer = WriteMultipart::new_with_chunk_size(started, PART as usize);
        let mut left = len;
        let sent: Result<()> = async {
            while left > 0 {
                writer
                    .wait_for_capacity(concurrency)
                    .await
                    .map_err(|e| object.error(e))?;
                // The file is read on the caller's thread, which drives this future;
                // the parts upload on the runtime's workers.
                let n = left.min(PART);
                writer.put(read(&mut file, n as usize)?);
                left -= n;
            }
            Ok(())
        }
        .await;
        match sent {
            Ok(()) => writer
                .finish()
                .await
                .map(|_| ())
                .map_err(|e| object.error(e)),
            Err(e) => {
                let _ = writer.abort().await;
                Err(e)
            }
        }
    })?
}

#[cfg(test)]
mod tests {
    use super::Staging;

    #[test]
    fn staging_directories_are_new_private_and_removed() {
        let (a, b) = (Staging::new().unwrap(), Staging::new().unwrap());
        assert_ne!(a.0, b.0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a.0).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        }
        let path = a.0.clone();
        drop(a);
        assert!(!path.exists());
    }
}
