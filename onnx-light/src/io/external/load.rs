//! Loading external data into tensors: copied into one buffer, mapped, or left lazy.
//! References are checked by `resolve` and the aliasing cap by `overlap`; neither knows
//! this module.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use crate::par::*;

use super::overlap::{check_aliasing, ExternalRange};
use super::resolve::{resolve_tensor, DataFile, Resolver};
use crate::error::{Error, ErrorKind, Result};
use crate::field::{ByteOwner, Bytes, LazyPayload, PayloadSource, SharedBytes};
use crate::io::buffer::{align_up, PayloadBuffer};
use crate::io::open::FileMapper;
use crate::io::progress::{self, SharedProgress};
use crate::onnx::{ModelProto, TensorProto};

/// How external payloads end up in memory.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExternalMode {
    /// Read into one buffer the tensors share.
    Copy,
    /// Each file mapped once (by the mapper of a mapped load); tensors hold slices of
    /// the maps.
    Mapped(FileMapper),
    /// Nothing read: tensors get a `LazyPayload` and keep their metadata.
    Lazy,
}

/// What to do with the external data of a model.
#[derive(Debug, Clone)]
pub(crate) struct ExternalLoad<'o> {
    pub mode: ExternalMode,
    pub location_override: Option<&'o str>,
    pub verify_checksums: bool,
    pub keep_metadata: bool,
    pub alignment: usize,
    /// `ParseOptions::max_tensor_size`: checked against each reference before anything
    /// is read or mapped.
    pub max_tensor_size: Option<u64>,
    /// `ParseOptions::allow_aliasing`: without it, the referenced bytes may not exceed
    /// the data files' sizes.
    pub allow_aliasing: bool,
    /// `ParseOptions::progress`: told the bytes copied from data files and hashed.
    pub progress: Option<&'o SharedProgress>,
}

impl DataFile {
    /// Checks a range against the file as it is now: a file truncated since loading gives
    /// an error here, never a short read or a crash.
    fn check_range(&self, offset: u64, len: u64) -> Result<()> {
        let size = self
            .file
            .metadata()
            .map_err(|e| Error::io(e, Some(&self.path)))?
            .len();
        if offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::at(
                ErrorKind::Truncated {
                    needed: len,
                    remaining: size.saturating_sub(offset),
                },
                offset,
            )
            .in_file(&self.path));
        }
        Ok(())
    }
}

impl PayloadSource for DataFile {
    fn fetch(&self, offset: u64, len: u64) -> Result<Bytes<'static>> {
        self.check_range(offset, len)?;
        let len = usize::try_from(len).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "payload larger than the address space",
            })
        })?;
        let mut buf = vec![0u8; len];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| Error::io(e, Some(&self.path)))?;
        Ok(Bytes::from(buf))
    }

    fn copy_into(&self, offset: u64, len: u64, out: &std::fs::File, at: u64) -> Result<()> {
        self.check_range(offset, len)?;
        crate::io::copy::copy_range(&self.file, offset, len, out, at).map_err(|e| {
            // A full disk, a quota or a size limit is the output's: the caller names it.
            let output_side = matches!(
                e.kind(),
                std::io::ErrorKind::StorageFull
                    | std::io::ErrorKind::QuotaExceeded
                    | std::io::ErrorKind::FileTooLarge
            );
            Error::io(e, (!output_side).then_some(self.path.as_path()))
        })
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn file_identity(&self) -> Option<(u64, u64)> {
        crate::io::open::FileId::of_file(&self.file)
            .ok()
            .map(crate::io::open::FileId::parts)
    }
}

/// One external payload to load.
struct Job {
    file: Arc<DataFile>,
    offset: u64,
    len: u64,
}

/// Checks a tensor's reference against its opened file and its own dims and type.
fn plan_one(
    t: &TensorProto<'_>,
    resolver: &Resolver,
    load: &ExternalLoad<'_>,
) -> Result<(Job, Option<String>)> {
    let r = resolve_tensor(t, resolver, load.location_override)?;
    if let Some(limit) = load.max_tensor_size.filter(|&limit| r.len > limit) {
        return Err(Error::new(ErrorKind::LimitExceeded {
            which: crate::error::Limit::MaxTensorSize,
            limit,
            actual: r.len,
        })
        .in_tensor(t.name()));
    }
    Ok((
        Job {
            file: r.file,
            offset: r.offset,
            len: r.len,
        },
        r.checksum,
    ))
}

/// Loads the external data of every external tensor of `model`, resolving locations
/// against `base_dir`.
pub(crate) fn load_external(
    model: &mut ModelProto<'_>,
    base_dir: &Path,
    load: &ExternalLoad<'_>,
) -> Result<()> {
    // Plan: every external tensor, in traversal order.
    let mut plan: Vec<Result<(Job, Option<String>)>> = Vec::new();
    let mut names = Vec::new();
    let mut resolver = None;
    model.visit_tensors(|_, t| {
        if !t.is_external() {
            return;
        }
        names.push(t.name().to_string());
        let r = match &resolver {
            Some(r) => Ok(r),
            None => Resolver::new(base_dir).map(|r| &*resolver.insert(r)),
        };
        plan.push(r.and_then(|r| plan_one(t, r, load)));
    });
    if plan.is_empty() {
        return Ok(());
    }
    let plan: Vec<(Job, Option<String>)> = plan.into_iter().collect::<Result<_>>()?;
    if !load.allow_aliasing {
        let ranges: Vec<ExternalRange> = plan
            .iter()
            .zip(names)
            .map(|((job, _), tensor)| ExternalRange {
                tensor,
                file: job.file.clone(),
                offset: job.offset,
                len: job.len,
            })
            .collect();
        check_aliasing(&ranges)?;
    }

    if load.verify_checksums {
        let mut digests: std::collections::HashMap<*const DataFile, String> = Default::default();
        if let Some(progress) = load.progress {
            // Each file with a recorded checksum is read whole, once.
            let mut sized: std::collections::HashMap<*const DataFile, u64> = Default::default();
            for (job, _) in plan.iter().filter(|(_, checksum)| checksum.is_some()) {
                sized.insert(Arc::as_ptr(&job.file), job.file.size());
            }
            progress.expect(sized.values().sum());
        }
        for (job, checksum) in &plan {
            let Some(expected) = checksum else { continue };
            let key = Arc::as_ptr(&job.file);
            let actual = match digests.get(&key) {
                Some(d) => d.clone(),
                None => {
                    let d = job.file.sha1(load.progress)?;
                    digests.insert(key, d.clone());
                    d
                }
            };
            if !actual.eq_ignore_ascii_case(expected.trim()) {
                return Err(Error::new(ErrorKind::ChecksumMismatch {
                    expected: expected.clone(),
                    actual,
                })
                .in_file(&job.file.path));
            }
        }
    }

    let payloads: Vec<Option<Bytes<'static>>> = match load.mode {
        ExternalMode::Lazy => vec![None; plan.len()],
        ExternalMode::Mapped(map_file) => {
            let mut maps: std::collections::HashMap<*const DataFile, ByteOwner> =
                Default::default();
            let mut out = Vec::with_capacity(plan.len());
            for (job, _) in &plan {
                let key = Arc::as_ptr(&job.file);
                let map = match maps.get(&key) {
                    Some(m) => m.clone(),
                    None => {
                        let m: ByteOwner = map_file(&job.file.file, &job.file.path)?;
                        maps.insert(key, m.clone());
                        m
                    }
                };
                let start = job.offset as usize;
                out.push(Some(Bytes::Shared(
                    SharedBytes::new(map, start..start + job.len as usize)
                        .map_err(|e| e.in_file(&job.file.path))?,
                )));
            }
            out
        }
        ExternalMode::Copy => read_into_one_buffer(&plan, load.alignment, load.progress)?,
    };

    // Give each tensor its bytes, in the same traversal order.
    let mut next = 0usize;
    model.visit_tensors_mut(|_, t| {
        if !t.is_external() {
            return;
        }
        let (job, _) = &plan[next];
        match payloads[next].clone() {
            Some(bytes) => {
                t.raw_data = Some(bytes);
                t.lazy_data = None;
                if !load.keep_metadata {
                    t.data_location = None;
                    t.external_data.clear();
                }
            }
            None => {
                let source: Arc<dyn PayloadSource> = job.file.clone();
                t.lazy_data = Some(LazyPayload::new(source, job.offset, job.len));
                t.raw_data = None;
            }
        }
        next += 1;
    });
    Ok(())
}

/// Reads every payload into one (huge-page) buffer with parallel positional reads,
/// telling `progress` the bytes as they are read.
fn read_into_one_buffer(
    plan: &[(Job, Option<String>)],
    alignment: usize,
    progress: Option<&SharedProgress>,
) -> Result<Vec<Option<Bytes<'static>>>> {
    let too_big = || {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "external data larger than the address space",
        })
    };
    let mut offsets = Vec::with_capacity(plan.len());
    let mut cursor = 0u64;
    for (job, _) in plan {
        let start = align_up(cursor, alignment as u64).ok_or_else(too_big)?;
        offsets.push(start);
        cursor = start.checked_add(job.len).ok_or_else(too_big)?;
    }
    let total = usize::try_from(cursor).map_err(|_| too_big())?;
    let mut buffer = PayloadBuffer::new(total)?;
    progress::expect(progress, plan.iter().map(|(job, _)| job.len).sum());
    {
        let mut rest = buffer.as_mut_slice();
        let mut pos = 0usize;
        let mut work = Vec::with_capacity(plan.len());
        for ((job, _), &off) in plan.iter().zip(&offsets) {
            let off = off as usize;
            let (_, tail) = rest.split_at_mut(off - pos);
            let (dst, tail) = tail.split_at_mut(job.len as usize);
            work.push((dst, job));
            rest = tail;
            pos = off + job.len as usize;
        }
        work.into_par_iter()
            .try_for_each(|(dst, job)| read_range(&job.file, dst, job.offset, progress))?;
    }
    let owner = buffer.freeze()?;
    plan.iter()
        .zip(&offsets)
        .map(|((job, _), &off)| {
            let start = off as usize;
            SharedBytes::new(owner.clone(), start..start + job.len as usize)
                .map(|s| Some(Bytes::Shared(s)))
        })
        .collect()
}

/// Reads `dst.len()` bytes at `offset`, in chunks so that one huge tensor still spreads
/// over the pool's threads (and its progress shows).
fn read_range(
    file: &DataFile,
    dst: &mut [u8],
    offset: u64,
    progress: Option<&SharedProgress>,
) -> Result<()> {
    const CHUNK: usize = 16 << 20;
    dst.par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(i, chunk)| {
            file.file
                .read_exact_at(chunk, offset + (i * CHUNK) as u64)?;
            progress::advance(progress, chunk.len() as u64);
            Ok(())
        })
        .map_err(|e: std::io::Error| Error::io(e, Some(&file.path)))
}
