//! External data beside a model in a store: locations checked with the rules of a load
//! from disk and resolved against the model's URL, ranges checked against each object's
//! size, then the payloads fetched in parallel (or left lazy), checksums verified.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt, TryStreamExt};

use super::object::{block_on, Location, RemoteObject, PART};
use super::options::RemoteOptions;
use crate::error::{Error, ErrorKind, ExternalDataRule, Limit, Result};
use crate::field::{Bytes, LazyPayload, PayloadSource, SharedBytes};
use crate::io::buffer::align_up;
use crate::io::external::{check_range, validate_location, ExternalDataRef};
use crate::io::progress::{self, SharedProgress};
use crate::io::{LoadMode, PayloadBuffer};
use crate::onnx::ModelProto;

/// One external payload: the object, the range, and the checksum its tensor records.
struct Job {
    object: Arc<RemoteObject>,
    offset: u64,
    len: u64,
    checksum: Option<String>,
}

/// Loads the external data of every external tensor of `model` from the objects beside
/// `model_location` (the model's own URL; its siblings are the data files).
pub(crate) fn load_external(
    model: &mut ModelProto<'_>,
    model_location: &Location,
    options: &RemoteOptions,
) -> Result<()> {
    let parse = &options.parse;
    // Every reference read and its location checked before anything is fetched.
    let mut refs: Vec<(String, ExternalDataRef, PathBuf)> = Vec::new();
    model.try_visit_tensors(|_, t| -> Result<()> {
        if !t.is_external() {
            return Ok(());
        }
        let mut r = ExternalDataRef::from_tensor(t)?;
        if let Some(over) = &parse.external_data_location {
            r.location = over.clone();
        }
        let relative = validate_location(t.name(), &r.location)?;
        refs.push((t.name().to_string(), r, relative));
        Ok(())
    })?;
    if refs.is_empty() {
        return Ok(());
    }
    let objects = open_objects(&refs, model_location, options.concurrency)?;
    // Ranges against the objects' sizes, lengths against dims, in traversal order.
    let mut jobs = Vec::with_capacity(refs.len());
    let mut next = 0usize;
    model.try_visit_tensors(|_, t| -> Result<()> {
        if !t.is_external() {
            return Ok(());
        }
        let (_, r, relative) = &refs[next];
        next += 1;
        let object = objects[relative].clone();
        let len = check_range(t, r, object.size).map_err(|e| e.in_file(Path::new(object.url())))?;
        if let Some(limit) = parse.max_tensor_size.filter(|&limit| len > limit) {
            return Err(Error::new(ErrorKind::LimitExceeded {
                which: Limit::MaxTensorSize,
                limit,
                actual: len,
            })
            .in_tensor(t.name()));
        }
        jobs.push(Job {
            object,
            offset: r.offset,
            len,
            checksum: r.checksum.clone(),
        });
        Ok(())
    })?;
    if !parse.allow_aliasing {
        check_aliasing(&jobs)?;
    }
    let lazy = parse.mode == LoadMode::StructureOnly;
    let payloads: Vec<Option<Bytes<'static>>> = if lazy {
        vec![None; jobs.len()]
    } else {
        fetch_all(&jobs, options)?
    };
    let keep_metadata = parse.keep_external_metadata || lazy;
    let mut next = 0usize;
    model.visit_tensors_mut(|_, t| {
        if !t.is_external() {
            return;
        }
        let job = &jobs[next];
        match payloads[next].clone() {
            Some(bytes) => {
                t.raw_data = Some(bytes);
                t.lazy_data = None;
                if !keep_metadata {
                    t.data_location = None;
                    t.external_data.clear();
                }
            }
            None => {
                let source: Arc<dyn PayloadSource> = job.object.clone();
                t.lazy_data = Some(LazyPayload::new(source, job.offset, job.len));
                t.raw_data = None;
            }
        }
        next += 1;
    });
    Ok(())
}

/// A data object opened, by its location relative to the model.
type Opened = (PathBuf, Arc<RemoteObject>);

/// Opens (asks the size of) each distinct data object once, `concurrency` at a time.
fn open_objects(
    refs: &[(String, ExternalDataRef, PathBuf)],
    model_location: &Location,
    concurrency: usize,
) -> Result<HashMap<PathBuf, Arc<RemoteObject>>> {
    let mut distinct: Vec<&PathBuf> = refs.iter().map(|(_, _, p)| p).collect();
    distinct.sort();
    distinct.dedup();
    let heads: Vec<BoxFuture<'_, Result<Opened>>> = distinct
        .into_iter()
        .map(|relative| {
            async move {
                let object = RemoteObject::open(model_location.sibling(relative)).await?;
                Ok((relative.clone(), Arc::new(object)))
            }
            .boxed()
        })
        .collect();
    let opened: Vec<(PathBuf, Arc<RemoteObject>)> = block_on(
        futures_util::stream::iter(heads)
            .buffer_unordered(concurrency.max(1))
            .try_collect(),
    )??;
    Ok(opened.into_iter().collect())
}

/// The rule of loads from disk: the bytes the tensors reference in all may not exceed the
/// sizes of the distinct objects they are in (else two ranges overlap, and a small object
/// would load as many times its size).
fn check_aliasing(jobs: &[Job]) -> Result<()> {
    let mut sizes: HashMap<&str, u64> = HashMap::new();
    let mut referenced = 0u128;
    for job in jobs {
        sizes.insert(job.object.url(), job.object.size);
        referenced += u128::from(job.len);
    }
    let objects: u128 = sizes.values().map(|&s| u128::from(s)).sum();
    if referenced <= objects {
        return Ok(());
    }
    Err(Error::new(ErrorKind::InvalidExternalData {
        location: None,
        rule: ExternalDataRule::Aliasing,
        reason: format!(
            "tensors reference {referenced} external bytes, more than the {objects} bytes of their data objects: \
             some ranges overlap"
        ),
    })
    .refused_by(Limit::Aliasing))
}

/// Fetches every payload with parallel ranged GETs into one buffer the tensors share.
/// An object whose tensors record a `checksum` (when verifying) is fetched whole into
/// its own buffer instead, hashed, and its tensors cut from it: its bytes cross the
/// network once.
fn fetch_all(jobs: &[Job], options: &RemoteOptions) -> Result<Vec<Option<Bytes<'static>>>> {
    let too_big = || {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "external data larger than the address space",
        })
    };
    let alignment = options.parse.buffer.alignment.max(1) as u64;
    let hashed = |job: &Job| options.verify_checksums && job.checksum.is_some();
    // Objects fetched whole, each once, in first-use order.
    let mut whole: Vec<Arc<RemoteObject>> = Vec::new();
    for job in jobs.iter().filter(|j| hashed(j)) {
        if !whole.iter().any(|o| Arc::ptr_eq(o, &job.object)) {
            whole.push(job.object.clone());
        }
    }
    // The layout of the shared buffer: the other payloads, then the whole objects.
    let mut offsets = Vec::with_capacity(jobs.len());
    let mut cursor = 0u64;
    for job in jobs {
        if hashed(job) {
            offsets.push(0);
            continue;
        }
        let start = align_up(cursor, alignment).ok_or_else(too_big)?;
        offsets.push(start);
        cursor = start.checked_add(job.len).ok_or_else(too_big)?;
    }
    let mut whole_at = Vec::with_capacity(whole.len());
    for object in &whole {
        let start = align_up(cursor, alignment).ok_or_else(too_big)?;
        whole_at.push(start);
        cursor = start.checked_add(object.size).ok_or_else(too_big)?;
    }
    let total = usize::try_from(cursor).map_err(|_| too_big())?;
    let mut buffer = PayloadBuffer::new(total)?;
    let progress = options.parse.progress.as_ref();
    progress::expect(
        progress,
        jobs.iter()
            .filter(|j| !hashed(j))
            .map(|j| j.len)
            .sum::<u64>()
            + whole.iter().map(|o| o.size).sum::<u64>(),
    );
    {
        // Carve the buffer into each fetch's destination, in offset order.
        let mut fills: Vec<(u64, u64, usize)> = Vec::new(); // (buffer offset, length, fetch)
        for (i, job) in jobs.iter().enumerate() {
            if !hashed(job) {
                fills.push((offsets[i], job.len, i));
            }
        }
        for (w, object) in whole.iter().enumerate() {
            fills.push((whole_at[w], object.size, jobs.len() + w));
        }
        fills.sort_by_key(|f| f.0);
        let mut rest = buffer.as_mut_slice();
        let mut pos = 0u64;
        let mut work: Vec<(Arc<RemoteObject>, &mut [u8], u64)> = Vec::with_capacity(fills.len());
        for (at, len, which) in fills {
            let (_, tail) = rest.split_at_mut((at - pos) as usize);
            let (dst, tail) = tail.split_at_mut(len as usize);
            rest = tail;
            pos = at + len;
            let (object, from) = match jobs.get(which) {
                Some(job) => (job.object.clone(), job.offset),
                None => (whole[which - jobs.len()].clone(), 0),
            };
            work.push((object, dst, from));
        }
        let requests = coalesced_requests(work, progress);
        block_on(
            futures_util::stream::iter(requests)
                .buffer_unordered(options.concurrency.max(1))
                .try_collect::<()>(),
        )??;
    }
    let owner = buffer.freeze()?;
    // Each object fetched whole against the checksums its tensors record.
    for (w, object) in whole.iter().enumerate() {
        let start = whole_at[w] as usize;
        let bytes = &owner.bytes()[start..start + object.size as usize];
        let actual = sha1_hex(bytes);
        for job in jobs.iter().filter(|j| Arc::ptr_eq(&j.object, object)) {
            let Some(expected) = &job.checksum else {
                continue;
            };
            if !actual.eq_ignore_ascii_case(expected.trim()) {
                return Err(Error::new(ErrorKind::ChecksumMismatch {
                    expected: expected.clone(),
                    actual,
                })
                .in_file(Path::new(object.url())));
            }
        }
    }
    jobs.iter()
        .enumerate()
        .map(|(i, job)| {
            let start = if hashed(job) {
                let w = whole
                    .iter()
                    .position(|o| Arc::ptr_eq(o, &job.object))
                    .unwrap_or_default();
                whole_at[w] + job.offset
            } else {
                offsets[i]
            } as usize;
            SharedBytes::new(owner.clone(), start..start + job.len as usize)
                .map(|s| Some(Bytes::Shared(s)))
        })
        .collect()
}

/// Ranges of one object closer than this are fetched as one: the bytes between them
/// (alignment padding, a small inline tensor) cost less than another request.
const MAX_GAP: u64 = 256 << 10;

/// One ranged GET: the object's `range`, and where each piece of it goes (offset in the
/// range, destination).
type Part<'b> = (Arc<RemoteObject>, Range<u64>, Pieces<'b>);

/// Destinations, each with its offset (in the object or in a part).
type Pieces<'b> = Vec<(u64, &'b mut [u8])>;

/// The requests that fill every `(object, destination, offset)`: per object, ranges
/// sorted by offset and merged into runs across gaps of at most [`MAX_GAP`], each run
/// cut into parts of at most [`PART`] bytes, each destination split at part boundaries.
/// Adjacent tensors of a data file so cost one request per part, not one each. Boxed
/// before the stream is made, so that its type holds no closure.
fn coalesced_requests<'b>(
    mut work: Vec<(Arc<RemoteObject>, &'b mut [u8], u64)>,
    progress: Option<&'b SharedProgress>,
) -> Vec<BoxFuture<'b, Result<()>>> {
    work.sort_by(|a, b| (Arc::as_ptr(&a.0) as usize, a.2).cmp(&(Arc::as_ptr(&b.0) as usize, b.2)));
    // Runs: (object, start, end, members).
    let mut runs: Vec<(Arc<RemoteObject>, u64, u64, Pieces<'b>)> = Vec::new();
    for (object, dst, from) in work {
        let end = from + dst.len() as u64;
        match runs.last_mut() {
            Some(run)
                if Arc::ptr_eq(&run.0, &object)
                    && from >= run.1
                    && from <= run.2.saturating_add(MAX_GAP) =>
            {
                run.2 = run.2.max(end);
                run.3.push((from, dst));
            }
            _ => runs.push((object, from, end, vec![(from, dst)])),
        }
    }
    let mut parts: Vec<Part<'b>> = Vec::new();
    for (object, start, end, members) in runs {
        let first = parts.len();
        let mut at = start;
        while at < end {
            let stop = (at + PART).min(end);
            parts.push((object.clone(), at..stop, Vec::new()));
            at = stop;
        }
        for (mut from, mut dst) in members {
            while !dst.is_empty() {
                let index = first + ((from - start) / PART) as usize;
                let part = &mut parts[index];
                let n = ((part.1.end - from) as usize).min(dst.len());
                let (head, tail) = std::mem::take(&mut dst).split_at_mut(n);
                part.2.push((from - part.1.start, head));
                from += n as u64;
                dst = tail;
            }
        }
    }
    parts
        .into_iter()
        .map(|(object, range, pieces)| {
            async move {
                let got = object.get(range).await?;
                for (at, dst) in pieces {
                    let at = at as usize;
                    dst.copy_from_slice(&got[at..at + dst.len()]);
                    progress::advance(progress, dst.len() as u64);
                }
                Ok(())
            }
            .boxed()
        })
        .collect()
}

/// SHA-1 of `bytes`, lowercase hex: the ONNX `checksum` of a data file.
fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    use std::fmt::Write;
    let digest = Sha1::digest(bytes);
    let mut hex = String::with_capacity(40);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}
