//! Writing an encoded model: the walk that refuses what cannot be written and collects
//! large payloads, the sinks that write the structure in order while deferring those
//! payloads, and the parallel copies or positional writes that fill them in.
//!
//! Encoding is two linear passes: sizes first (so the output has its exact final size
//! before a byte is written), then the bytes. With more than one thread, the structure is
//! written in order while each large payload is only given its offset; the payloads are
//! then copied (or written with positional writes) in parallel. The result is the same
//! bytes a sequential save writes.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::par::*;

use super::atomic::{check_file_size_limit, SaveHook, SaveStep};
use super::buffer::PayloadBuffer;
use super::options::SerializeOptions;
use crate::codec::SizeCache;
use crate::error::{Error, ErrorKind, Result};
use crate::field::{Bytes, LazyPayload, SharedBytes};
use crate::message::{Message, Reborrow};
use crate::onnx::{ModelProto, TensorProto};
use crate::pool::{thread_count, with_threads};
use crate::wire::{put_varint_bytewise, IoSink, Sink};

/// One walk over the model's tensors before an in-memory encode (`save_to_vec`,
/// `save_to_writer`): refuses what such an encode cannot write, and collects the large
/// payloads when they are to be copied in parallel. One walk, not one per question, since
/// each walk reads every attribute (`docs/design/save-performance.md`).
///
/// Refused: external data options (the files need a model path), tensors marked
/// external that hold their data in memory (the data would be written inline and the
/// model would still point at a file), and tensors whose weights were left on disk.
fn survey<'m>(
    model: &'m ModelProto<'_>,
    options: &SerializeOptions,
    parallel: bool,
) -> Result<Payloads<'m>> {
    if options.external_data.is_some() {
        return Err(Error::invalid_option(
            "external_data",
            "external data files need a model path: use io::save",
        ));
    }
    let mut payloads = Payloads {
        by_key: HashMap::new(),
    };
    model.try_visit_tensors(|_, t| {
        let reason = if t.is_external()
            && (t.raw_data.is_some() || t.lazy_data.is_some())
        {
            Some("it is marked external but holds its data in memory; save it with io::save to write the data file".to_string())
        } else if let (None, Some(lazy)) = (&t.raw_data, &t.lazy_data) {
            Some(format!(
                "its weights are still in {} (structure-only load); call io::materialize_lazy_data first",
                lazy.source()
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::new(ErrorKind::IncompleteModel { reason }).in_tensor(t.name()));
        }
        if parallel {
            payloads.consider(t, options.buffer.raw_data_threshold);
        }
        Ok(())
    })?;
    Ok(payloads)
}

/// The large payloads of a model, by (address, length): the sink recognises them when
/// the encoder hands them over, and defers them.
struct Payloads<'m> {
    by_key: HashMap<(usize, usize), &'m [u8]>,
}

impl<'m> Payloads<'m> {
    fn collect(model: &'m ModelProto<'_>, threshold: usize, parallel: bool) -> Self {
        let mut payloads = Payloads {
            by_key: HashMap::new(),
        };
        if parallel {
            model.visit_tensors(|_, t| payloads.consider(t, threshold));
        }
        payloads
    }

    /// Adds `t`'s payload if it has at least `threshold` bytes (and at least one).
    fn consider(&mut self, t: &'m TensorProto<'_>, threshold: usize) {
        if let Some(raw) = t
            .raw_data
            .as_deref()
            .filter(|r| r.len() >= threshold.max(1))
        {
            self.by_key.insert((raw.as_ptr() as usize, raw.len()), raw);
        }
    }

    fn keys(&self) -> HashSet<(usize, usize)> {
        self.by_key.keys().copied().collect()
    }

    /// Whether copying these payloads in parallel pays off in an encoding of `total`
    /// bytes: only when they are at least half of it. Below that the bookkeeping (a
    /// lookup per large write, a zeroed output buffer, one job per payload) costs more
    /// than a second thread saves (`docs/design/save-performance.md`).
    fn worth_deferring(&self, total: u64) -> bool {
        let bytes: u64 = self.by_key.keys().map(|k| k.1 as u64).sum();
        !self.by_key.is_empty() && bytes >= total / 2
    }

    /// The length of the shortest payload (`usize::MAX` when there is none).
    fn min_len(&self) -> usize {
        self.by_key.keys().map(|k| k.1).min().unwrap_or(usize::MAX)
    }
}

/// A sink over an exactly sized slice that skips recognised payloads, recording where
/// each goes.
struct DeferringSliceSink<'o> {
    out: &'o mut [u8],
    pos: usize,
    payloads: HashSet<(usize, usize)>,
    /// The shortest payload in `payloads`: shorter writes (keys, varints, most strings)
    /// are copied without a lookup.
    min_payload: usize,
    jobs: Vec<(usize, (usize, usize))>,
}

impl Sink for DeferringSliceSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.pos + bytes.len();
        if end > self.out.len() {
            return Err(Error::new(ErrorKind::BufferTooSmall {
                needed: bytes.len() as u64,
                remaining: (self.out.len() - self.pos) as u64,
            }));
        }
        let key = (bytes.as_ptr() as usize, bytes.len());
        if bytes.len() >= self.min_payload && self.payloads.contains(&key) {
            self.jobs.push((self.pos, key));
        } else {
            self.out[self.pos..end].copy_from_slice(bytes);
        }
        self.pos = end;
        Ok(())
    }

    #[inline]
    fn put_u8(&mut self, b: u8) -> Result<()> {
        match self.out.get_mut(self.pos) {
            Some(slot) => {
                *slot = b;
                self.pos += 1;
                Ok(())
            }
            None => Err(Error::new(ErrorKind::BufferTooSmall {
                needed: 1,
                remaining: 0,
            })),
        }
    }

    #[inline]
    fn put_varint(&mut self, v: u64) -> Result<()> {
        put_varint_bytewise(self, v)
    }
}

/// A positional writer: structure bytes are buffered and written at increasing offsets;
/// recognised payloads are skipped and recorded.
struct PositionalSink<'f> {
    file: &'f File,
    hook: &'f dyn SaveHook,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
    payloads: HashSet<(usize, usize)>,
    /// The shortest payload in `payloads`: shorter writes are buffered without a lookup.
    min_payload: usize,
    jobs: Vec<(u64, (usize, usize))>,
}

const WRITE_CHUNK: usize = 1 << 20;

impl PositionalSink<'_> {
    fn flush_buf(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.hook.before(SaveStep::Write {
                offset: self.buf_start,
                len: self.buf.len() as u64,
            })?;
            self.file.write_all_at(&self.buf, self.buf_start)?;
            self.buf.clear();
        }
        self.buf_start = self.pos;
        Ok(())
    }
}

impl Sink for PositionalSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let key = (bytes.as_ptr() as usize, bytes.len());
        if bytes.len() >= self.min_payload && self.payloads.contains(&key) {
            self.flush_buf()?;
            self.jobs.push((self.pos, key));
            self.pos += bytes.len() as u64;
            self.buf_start = self.pos;
            return Ok(());
        }
        if bytes.len() >= WRITE_CHUNK {
            // A large payload written sequentially: straight from the model, not
            // through the buffer (one copy less).
            self.flush_buf()?;
            self.hook.before(SaveStep::Write {
                offset: self.pos,
                len: bytes.len() as u64,
            })?;
            self.file.write_all_at(bytes, self.pos)?;
            self.pos += bytes.len() as u64;
            self.buf_start = self.pos;
            return Ok(());
        }
        self.buf.extend_from_slice(bytes);
        self.pos += bytes.len() as u64;
        if self.buf.len() >= WRITE_CHUNK {
            self.flush_buf()?;
        }
        Ok(())
    }

    #[inline]
    fn put_u8(&mut self, b: u8) -> Result<()> {
        self.buf.push(b);
        self.pos += 1;
        if self.buf.len() >= WRITE_CHUNK {
            self.flush_buf()?;
        }
        Ok(())
    }

    #[inline]
    fn put_varint(&mut self, v: u64) -> Result<()> {
        put_varint_bytewise(self, v)
    }
}

/// Writes `model` into `file` (the temporary file that will replace `path`).
///
/// Payloads that a structure-only load left on disk ([`LazyPayload`]s) are copied from
/// their file into `file` ([`LazyPayload::copy_into`]: in the kernel where it can), never
/// read into memory: for the encoder they are stand-ins of the right length, slices of
/// one reserved but never touched region, which the sink always defers
/// (`docs/design/fresh-process.md`).
pub(crate) fn write_model_file(
    model: &ModelProto<'_>,
    file: &File,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
) -> Result<()> {
    match with_stand_ins(model)? {
        None => write_encoded(model, &HashMap::new(), file, path, options, hook),
        Some((view, by_key)) => write_encoded(&view, &by_key, file, path, options, hook),
    }
}

/// The payloads that a structure-only load left on disk and that a save writes into the
/// model file, by the key of their stand-ins.
type StandIns<'m> = HashMap<(usize, usize), &'m LazyPayload>;

/// A view of `model` in which every payload a structure-only load left on disk (and
/// that stays in the model file) is a stand-in of its length, and the stand-ins by key;
/// `None` when there is no such payload.
fn with_stand_ins<'m>(model: &'m ModelProto<'_>) -> Result<Option<(ModelProto<'m>, StandIns<'m>)>> {
    let mut lazy: Vec<&LazyPayload> = Vec::new();
    model.visit_tensors(|_, t| {
        if let (None, Some(l)) = (&t.raw_data, &t.lazy_data) {
            if !t.is_external() && !l.is_empty() {
                lazy.push(l);
            }
        }
    });
    if lazy.is_empty() {
        return Ok(None);
    }
    // Stand-in `i` starts at byte `i` of the region, so each has its own address (the
    // sink's key) while the region stays as small as the longest payload.
    let longest = lazy.iter().map(|l| l.len()).max().unwrap_or(0);
    let region_len = usize::try_from(longest.saturating_add(lazy.len() as u64)).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "payload larger than the address space",
        })
    })?;
    let region = PayloadBuffer::new(region_len)?.freeze()?;
    let mut stand_ins: Vec<SharedBytes> = Vec::with_capacity(lazy.len());
    for (i, l) in lazy.iter().enumerate() {
        // `longest` fits in a usize (checked above), so every length does.
        stand_ins.push(SharedBytes::new(region.clone(), i..i + l.len() as usize)?);
    }
    let base = region.bytes().as_ptr() as usize;
    let mut by_key = HashMap::with_capacity(lazy.len());
    for (i, (s, l)) in stand_ins.iter().zip(&lazy).enumerate() {
        by_key.insert((base + i, s.len()), *l);
    }
    let mut view = model.reborrow();
    let mut next = stand_ins.into_iter();
    view.visit_tensors_mut(|_, t| {
        if let (None, Some(l)) = (&t.raw_data, &t.lazy_data) {
            if !t.is_external() && !l.is_empty() {
                t.raw_data = next.next().map(Bytes::Shared);
                t.lazy_data = None;
            }
        }
    });
    Ok(Some((view, by_key)))
}

/// The size of the model file a save of `model` without external data writes: its
/// encoding, the payloads a structure-only load left on disk counted at their length
/// (none is read).
///
/// # Errors
/// `ValueOutOfRange` for a payload larger than the address space.
pub(crate) fn encoded_len_with_lazy(model: &ModelProto<'_>) -> Result<u64> {
    Ok(match with_stand_ins(model)? {
        None => model.encoded_len(),
        Some((view, _)) => view.encoded_len(),
    })
}

/// [`write_model_file`] once every payload is in memory or a stand-in listed in `lazy`.
fn write_encoded(
    model: &ModelProto<'_>,
    lazy: &HashMap<(usize, usize), &LazyPayload>,
    file: &File,
    path: &Path,
    options: &SerializeOptions,
    hook: &dyn SaveHook,
) -> Result<()> {
    let parallel = thread_count(options.num_threads) > 1;
    // Sized first: a model nested too deep to encode is refused before any other walk.
    let mut sizes = SizeCache::new();
    let total = model.compute_size(&mut sizes);
    sizes.check_depth()?;
    if let Some(progress) = &options.progress {
        // The save announced every payload; the rest of this file is announced here.
        let mut inline = 0u64;
        model.visit_tensors(|_, t| inline += t.raw_data.as_ref().map_or(0, |r| r.len() as u64));
        progress.expect(total.saturating_sub(inline));
    }
    let mut payloads = Payloads::collect(model, options.buffer.raw_data_threshold, parallel);
    if !payloads.worth_deferring(total) {
        payloads.by_key.clear();
    }
    // Stand-ins are always deferred: their bytes are not in memory.
    for key in lazy.keys() {
        payloads.by_key.remove(key);
    }
    let mut deferred = payloads.keys();
    deferred.extend(lazy.keys().copied());
    let min_payload = deferred.iter().map(|k| k.1).min().unwrap_or(usize::MAX);
    // Reserve the final size up front: a full disk or a file size limit fails here,
    // before any writing.
    check_file_size_limit(total, path)?;
    file.set_len(total)?;
    let mut sink = PositionalSink {
        file,
        hook,
        pos: 0,
        buf: Vec::with_capacity(WRITE_CHUNK),
        buf_start: 0,
        payloads: deferred,
        min_payload,
        jobs: Vec::new(),
    };
    model.encode_fields(&mut sink, &mut sizes.cursor())?;
    sink.flush_buf()?;
    let (copies, jobs): (Vec<_>, Vec<_>) = std::mem::take(&mut sink.jobs)
        .into_iter()
        .partition(|(_, key)| lazy.contains_key(key));
    with_threads(options.num_threads, || {
        jobs.into_par_iter()
            .try_for_each(|(offset, key)| -> Result<()> {
                write_in_steps(hook, file, payloads.by_key[&key], offset)
            })
    })??;
    // File-to-file copies run one after another: writers of one file take its lock in
    // turn, so more threads only add contention.
    for (offset, key) in copies {
        copy_in_steps(hook, file, lazy[&key], offset)?;
    }
    Ok(())
}

/// The most bytes one save step writes or copies: a large payload goes in several, each
/// seen by the save's hook first, so that progress moves (and fault injection can land)
/// within it.
const STEP: u64 = 64 << 20;

/// Writes `bytes` into `file` at `offset`, in steps of at most [`STEP`] bytes.
///
/// # Errors
/// The hook's errors, I/O errors.
pub(crate) fn write_in_steps(
    hook: &dyn SaveHook,
    file: &File,
    bytes: &[u8],
    offset: u64,
) -> Result<()> {
    in_steps(hook, offset, bytes.len() as u64, |start, len| {
        let part = &bytes[start as usize..(start + len) as usize];
        Ok(file.write_all_at(part, offset + start)?)
    })
}

/// Copies the payload `source` left on disk into `file` at `offset`, in steps of at
/// most [`STEP`] bytes.
///
/// # Errors
/// The hook's errors, the source's errors.
pub(crate) fn copy_in_steps(
    hook: &dyn SaveHook,
    file: &File,
    source: &LazyPayload,
    offset: u64,
) -> Result<()> {
    in_steps(hook, offset, source.len(), |start, len| {
        source.copy_part_into(start, len, file, offset + start)
    })
}

/// Runs `step(start, len)` over `total` bytes in parts of at most [`STEP`] (one part
/// for none), each announced to the hook as a write at `offset + start` first.
fn in_steps(
    hook: &dyn SaveHook,
    offset: u64,
    total: u64,
    mut step: impl FnMut(u64, u64) -> Result<()>,
) -> Result<()> {
    let mut done = 0;
    loop {
        let len = STEP.min(total - done);
        hook.before(SaveStep::Write {
            offset: offset + done,
            len,
        })?;
        step(done, len)?;
        done += len;
        if done >= total {
            return Ok(());
        }
    }
}

/// The body of `io::save_to_vec`.
pub(crate) fn encode_to_vec(model: &ModelProto<'_>, options: &SerializeOptions) -> Result<Vec<u8>> {
    options.validate()?;
    let parallel = thread_count(options.num_threads) > 1;
    // Sized first: a model nested too deep to encode is refused before any other walk.
    let mut sizes = SizeCache::new();
    let total = model.compute_size(&mut sizes);
    sizes.check_depth()?;
    let payloads = survey(model, options, parallel)?;
    let total = usize::try_from(total).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "encoded model larger than the address space",
        })
    })?;
    if !payloads.worth_deferring(total as u64) {
        // Sequential, or not enough to copy in parallel.
        let mut out = Vec::with_capacity(total);
        model.encode_fields(&mut out, &mut sizes.cursor())?;
        return Ok(out);
    }
    let mut out = vec![0u8; total];
    let mut sink = DeferringSliceSink {
        out: &mut out,
        pos: 0,
        payloads: payloads.keys(),
        min_payload: payloads.min_len(),
        jobs: Vec::new(),
    };
    model.encode_fields(&mut sink, &mut sizes.cursor())?;
    let jobs = std::mem::take(&mut sink.jobs);
    drop(sink);
    // Split the output into the payloads' disjoint ranges and fill them in parallel.
    let mut rest: &mut [u8] = &mut out;
    let mut base = 0usize;
    let mut work: Vec<(&mut [u8], &[u8])> = Vec::with_capacity(jobs.len());
    for (offset, key) in jobs {
        let src = payloads.by_key[&key];
        let (_, tail) = rest.split_at_mut(offset - base);
        let (dst, tail) = tail.split_at_mut(src.len());
        work.push((dst, src));
        rest = tail;
        base = offset + src.len();
    }
    with_threads(options.num_threads, || {
        work.into_par_iter()
            .for_each(|(dst, src)| dst.copy_from_slice(src));
    })?;
    Ok(out)
}

/// The body of `io::save_to_writer`.
pub(crate) fn encode_to_writer(
    model: &ModelProto<'_>,
    writer: impl Write,
    options: &SerializeOptions,
) -> Result<u64> {
    options.validate()?;
    survey(model, options, false)?;
    let mut sink = IoSink::new(writer);
    let n = model.encode(&mut sink)?;
    sink.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{save, save_to_vec};
    use crate::onnx::{DataType, GraphProto, NodeProto};

    /// Large payloads (written straight from the model), small ones and structure
    /// (buffered), in every thread count: the same bytes as `encode_to_vec`.
    #[test]
    fn every_path_writes_the_same_bytes() {
        let mut g = GraphProto::named("g");
        for i in 0..2000 {
            g.node.push(NodeProto::new(
                "Relu",
                [format!("v{i}")],
                [format!("v{}", i + 1)],
            ));
        }
        for (i, n) in [3 << 20, 10, WRITE_CHUNK, 100, WRITE_CHUNK - 1, 70_000]
            .into_iter()
            .enumerate()
        {
            g.initializer.push(TensorProto::from_raw(
                format!("t{i}"),
                DataType::Uint8,
                [n as i64],
                (0..n).map(|j| (j * 7 + i) as u8).collect::<Vec<u8>>(),
            ));
        }
        let model = ModelProto::new(g, vec![]);
        let expected = model.encode_to_vec().unwrap();
        let dir = std::env::temp_dir().join(format!("onnx-light-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for threads in [1, 2, 4] {
            let options = SerializeOptions::default().num_threads(threads);
            assert_eq!(save_to_vec(&model, &options).unwrap(), expected);
            let path = dir.join(format!("m{threads}.onnx"));
            save(&model, &path, &options).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), expected);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
