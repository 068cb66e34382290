//! Models in object storage: `s3://`, `gs://`, `az://` / `abfs://`, `http(s)://` and
//! `file://` URLs, read through the Apache Arrow project's `object_store` crate (its
//! credentials, endpoints, retries and timeouts) on a runtime this module owns: the API is
//! synchronous. Feature `remote`.
//!
//! ```no_run
//! # use onnx_light::io::ParseOptions;
//! # use onnx_light::remote::{self, RemoteOptions};
//! // Everything: the model, then its external data with parallel ranged GETs.
//! let model = remote::load("s3://models/resnet/model.onnx")?;
//!
//! // The structure only: inline payloads are skipped (their tags and lengths are read,
//! // their bytes are not); each weight is fetched when first asked for.
//! let options = RemoteOptions::default().parse(ParseOptions::default().structure_only(true));
//! let lazy = remote::load_with("https://example.com/model.onnx", &options)?;
//! let w = &lazy.graph.as_ref().unwrap().initializer[0];
//! let bytes = w.lazy_data.as_ref().unwrap().fetch()?;
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! # Stores and credentials
//!
//! Each store is configured from the environment as `object_store`'s `from_env` builders
//! read it: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, and for
//! S3-compatible servers (MinIO, Ceph, a local test server) `AWS_ENDPOINT` and
//! `AWS_ALLOW_HTTP=true`; `GOOGLE_SERVICE_ACCOUNT` / `GOOGLE_APPLICATION_CREDENTIALS`;
//! `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`, ... HTTP(S) URLs need a
//! server that answers `HEAD` with the length and `GET` with `Range`.
//!
//! An `s3://` URL with no credentials in the environment is refused at once with
//! `Io(PermissionDenied)` saying which variables to set: a key pair,
//! `AWS_SKIP_SIGNATURE=true` (public buckets), a web identity
//! (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN`) or a container's credentials.
//! The instance-metadata endpoint (an instance's role) is asked on an EC2 instance,
//! which the machine's firmware tables say it is (`/sys/class/dmi/id/sys_vendor`,
//! `/sys/hypervisor/uuid`; no request is made to find out), and elsewhere only when
//! `AWS_METADATA_ENDPOINT` names it: off an instance, that fallback only fails, slowly
//! and obscurely.
//! `AWS_PROFILE` and `~/.aws` are not read.
//!
//! # What is read
//!
//! * An owned load ([`LoadMode::Owned`](crate::io::LoadMode)) fetches the model object
//!   with parallel ranged GETs of at most 8 MiB, [`RemoteOptions::concurrency`] at a time,
//!   into one buffer, and decodes it as a load from a file does.
//! * A structure-only load walks the object with ranged reads, as a structure-only load
//!   of a file does: keys, lengths and every field but large `raw_data` are read (small
//!   reads coalesced into read-ahead blocks), payloads are skipped and become
//!   [`LazyPayload`](crate::field::LazyPayload)s that fetch their own range on first use.
//! * External data resolves against the model's URL with the rules of a load from disk
//!   ([`validate_location`](crate::io::external::validate_location): no absolute
//!   location, no `..`, nothing that leaves the model's prefix), each range checked
//!   against its object's size and its tensor's dims. Owned loads fetch the payloads in
//!   parallel into one buffer; structure-only loads leave them lazy.
//!
//! # Saving
//!
//! [`save`] / [`save_with`] write a model to `s3://`, `gs://`, `az://` or `file://` with
//! the [`SerializeOptions`](crate::io::SerializeOptions) of [`io::save`](crate::io::save):
//! the objects are the files a save to disk writes, byte for byte, data objects beside
//! the model under its prefix (the save's location rules refuse any other place),
//! checksums recorded on request. The save is staged in a private local directory,
//! then uploaded: data objects first, the model object last (each object appears whole
//! or not at all, so no reader finds a model whose data is missing); objects above
//! 8 MiB go up as multipart uploads of 8 MiB parts, [`RemoteOptions::concurrency`] in
//! flight, aborted on failure. `http(s)://` is read-only (`Io(Unsupported)`).
//!
//! # Integrity
//!
//! The ONNX `checksum` key of external data (the SHA-1 of the whole data file, hex) is
//! verified by default ([`RemoteOptions::verify_checksums`]): an object whose tensors
//! record one is fetched whole (once), hashed, and its tensors cut from that copy; a
//! mismatch is `ChecksumMismatch` naming the URL. Lazy payloads are not verified (that
//! would fetch every byte).
//!
//! # Errors
//!
//! A missing object is `Io(NotFound)` and a refused one `Io(PermissionDenied)`, each
//! naming the URL as [`Error::file`](crate::Error::file). A connection refused (nothing
//! listens on the port) is `Io(ConnectionRefused)` at once, not retried; other transport
//! errors, timeouts and `5xx` answers are retried as `object_store` does (with backoff,
//! up to 10 times). A server that answers a range
//! request with the whole object (no range support) is read once, whole, and every range
//! is cut from that copy.

mod external;
mod object;
mod options;
mod save;

use std::path::Path;
use std::sync::Arc;

pub use object::is_url;
use object::{block_on, Location, RemoteObject};
pub use options::{RemoteOptions, DEFAULT_CONCURRENCY};
pub use save::{check_writable, save, save_with, SavedObject, SavedObjects};

use crate::error::{Error, Result};
use crate::io::{consolidate_tensors_to_buffer, progress};
use crate::io::{
    decode_structure, explain_failure, read_structure_from, refuse_before_decoding, Blocks,
    LoadMode, PayloadBuffer,
};
use crate::message::DecodeOwned;
use crate::onnx::{Model, ModelProto};
use crate::pool::with_threads;

/// The read-ahead of a structure walk over the network: each read is a round trip, so
/// reads start at 64 KiB after a skipped payload and grow to 4 MiB through long
/// stretches of structure.
const REMOTE_BLOCKS: Blocks = Blocks {
    min: 64 << 10,
    max: 4 << 20,
};

/// Loads the model at `url`, with its external data, with the default options.
///
/// # Errors
/// See [`load_with`].
pub fn load(url: &str) -> Result<Model> {
    load_with(url, &RemoteOptions::default())
}

/// Loads the model at `url` as `options` say.
///
/// # Errors
/// `InvalidOption` (option `url`) for a URL that is not one of a store; `Io(NotFound)` or
/// `Io(PermissionDenied)` naming the URL; what a load from a file reports for its bytes
/// (decode errors, limits, external-data rules, `ChecksumMismatch`), naming the URL.
pub fn load_with(url: &str, options: &RemoteOptions) -> Result<Model> {
    options.validate()?;
    let parse = &options.parse;
    let location = Location::parse(url)?;
    let object = Arc::new(block_on(RemoteObject::open(location.clone()))??);
    let named = Path::new(object.url());
    let len = object.size;
    parse.check_model_size(len).map_err(|e| e.in_file(named))?;
    let mut model = with_threads(parse.num_threads, || read_model(&object, options))?
        .map_err(|e| e.in_file(named))?;
    if parse.load_external_data {
        let base = match &parse.external_data_dir {
            Some(dir) => Location::directory(&dir.to_string_lossy())?,
            None => location,
        };
        with_threads(parse.num_threads, || {
            external::load_external(&mut model, &base, options)
        })??;
        if parse.buffer.alignment > 1 && parse.mode == LoadMode::Owned {
            with_threads(parse.num_threads, || {
                consolidate_tensors_to_buffer(&mut model, &parse.buffer)
            })??;
        }
    }
    parse.check_tensors(&model).map_err(|e| e.in_file(named))?;
    Ok(model)
}

/// The model object's own bytes, decoded: whole, or its structure only.
fn read_model(object: &Arc<RemoteObject>, options: &RemoteOptions) -> Result<Model> {
    let parse = &options.parse;
    let len = object.size;
    let decode = parse.decode_options(len);
    if parse.mode == LoadMode::StructureOnly {
        let head_len = len.min(512);
        let head = block_on(object.get(0..head_len))??;
        refuse_before_decoding(&head)?;
        let structure =
            read_structure_from(object.as_ref(), len, decode.shared_threshold, REMOTE_BLOCKS)
                .map_err(|e| explain_failure(&head, e))?;
        let source: Arc<dyn crate::field::PayloadSource> = object.clone();
        return decode_structure(structure, &head, &decode, &source);
    }
    let size = usize::try_from(len).map_err(|_| {
        Error::new(crate::error::ErrorKind::ValueOutOfRange {
            what: "model larger than the address space",
        })
    })?;
    let mut buffer = PayloadBuffer::new(size)?;
    progress::expect(parse.progress.as_ref(), len);
    block_on(object.fill(
        vec![(buffer.as_mut_slice(), 0)],
        options.concurrency,
        parse.progress.as_ref(),
    ))??;
    let owner = buffer.freeze()?;
    refuse_before_decoding(owner.bytes())?;
    let mut model = Model::decode_shared(owner.clone(), &decode)
        .map_err(|e| explain_failure(owner.bytes(), e))?;
    if parse.buffer.alignment > 1 && !parse.load_external_data {
        consolidate_tensors_to_buffer(&mut model, &parse.buffer)?;
    }
    Ok(model)
}

/// Loads the external data of `model` from the objects beside `model_url` (the URL of
/// the model, or of the directory its data files are in when it ends with `/`), as a
/// load from that URL would.
///
/// # Errors
/// As [`load_with`] for the external data.
pub fn load_external_data_for_model(
    model: &mut ModelProto<'_>,
    model_url: &str,
    options: &RemoteOptions,
) -> Result<()> {
    options.validate()?;
    let base = if model_url.ends_with('/') {
        Location::directory(model_url)?
    } else {
        Location::parse(model_url)?
    };
    with_threads(options.parse.num_threads, || {
        external::load_external(model, &base, options)
    })?
}

/// The size in bytes of the object at `url` (one `HEAD` request).
///
/// # Errors
/// `InvalidOption` (option `url`) for a URL that is not one of a store; `Io(NotFound)` or
/// `Io(PermissionDenied)` naming the URL.
pub fn size(url: &str) -> Result<u64> {
    let location = Location::parse(url)?;
    Ok(block_on(RemoteObject::open(location))??.size)
}
