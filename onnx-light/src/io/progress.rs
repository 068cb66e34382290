//! Byte counts of long loads, saves and encryptions, for callers that draw progress. Knows
//! nothing of terminals or of what the bytes are: the loads and saves call it.

use std::fmt;
use std::sync::Arc;

/// Told how many bytes a long operation has to move and has moved, so that a caller can
/// show a percentage, a rate and an estimated end: set it with
/// [`ParseOptions::progress`](crate::io::ParseOptions::progress),
/// [`SerializeOptions::progress`](crate::io::SerializeOptions::progress) and the
/// encryption options.
///
/// [`expect`](Self::expect) announces bytes before they are moved, as the operation learns
/// of them (a save with external data announces its model file's structure only once
/// the data files are written), so the total can grow while the operation runs; the
/// [`advance`](Self::advance)s of a completed operation add up to what it announced.
/// Both may be called from several threads at once and are called once per chunk (at
/// most a few MiB), so they should be cheap; drawing is the caller's to rate-limit.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use onnx_light::io::{self, ParseOptions, Progress, SerializeOptions};
/// use onnx_light::onnx::*;
///
/// #[derive(Default)]
/// struct Count { total: AtomicU64, done: AtomicU64 }
/// impl Progress for Count {
///     fn expect(&self, bytes: u64) { self.total.fetch_add(bytes, Ordering::Relaxed); }
///     fn advance(&self, bytes: u64) { self.done.fetch_add(bytes, Ordering::Relaxed); }
/// }
///
/// # let dir = std::env::temp_dir().join(format!("progress-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let mut g = GraphProto::named("g");
/// g.initializer.push(TensorProto::from_raw("w", DataType::Float, [1024], vec![0u8; 4096]));
/// let path = dir.join("model.onnx");
/// let count = Arc::new(Count::default());
/// io::save(&ModelProto::new(g, vec![]), &path, &SerializeOptions::default().progress(count.clone()))?;
/// let written = std::fs::metadata(&path)?.len();
/// assert_eq!(count.done.load(Ordering::Relaxed), written);
/// assert_eq!(count.total.load(Ordering::Relaxed), written);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Progress: Send + Sync {
    /// `bytes` more are to be read or written than announced so far.
    fn expect(&self, bytes: u64);
    /// `bytes` more were read, or are being written (a save reports each write as it
    /// starts).
    fn advance(&self, bytes: u64);
}

/// A [`Progress`] as options hold it: cloned with the options, and equal only to its own
/// clones (options compare equal when they report to the same place).
#[derive(Clone)]
pub struct SharedProgress(Arc<dyn Progress>);

impl SharedProgress {
    /// Wraps `progress`.
    pub fn new(progress: Arc<dyn Progress>) -> Self {
        SharedProgress(progress)
    }

    /// Announces `bytes` to come.
    pub(crate) fn expect(&self, bytes: u64) {
        self.0.expect(bytes);
    }

    /// Reports `bytes` done.
    pub(crate) fn advance(&self, bytes: u64) {
        self.0.advance(bytes);
    }
}

impl From<Arc<dyn Progress>> for SharedProgress {
    fn from(progress: Arc<dyn Progress>) -> Self {
        SharedProgress(progress)
    }
}

impl PartialEq for SharedProgress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedProgress {}

impl fmt::Debug for SharedProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedProgress")
    }
}

/// Announces `bytes` to `progress`, when there is one.
pub(crate) fn expect(progress: Option<&SharedProgress>, bytes: u64) {
    if let Some(p) = progress {
        p.expect(bytes);
    }
}

/// Reports `bytes` done to `progress`, when there is one.
pub(crate) fn advance(progress: Option<&SharedProgress>, bytes: u64) {
    if let Some(p) = progress {
        p.advance(bytes);
    }
}

/// A progress that counts, for the tests of the operations that report.
#[cfg(test)]
pub(crate) mod counting {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use super::{Progress, SharedProgress};

    /// Bytes announced and bytes reported, and whether a report ever ran ahead of the
    /// announcements.
    #[derive(Default)]
    pub(crate) struct Count {
        pub(crate) expected: AtomicU64,
        pub(crate) done: AtomicU64,
        pub(crate) ahead: AtomicU64,
    }

    impl Progress for Count {
        fn expect(&self, bytes: u64) {
            self.expected.fetch_add(bytes, Ordering::SeqCst);
        }
        fn advance(&self, bytes: u64) {
            let done = self.done.fetch_add(bytes, Ordering::SeqCst) + bytes;
            if done > self.expected.load(Ordering::SeqCst) {
                self.ahead.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    impl Count {
        /// A new counter and the handle to give the options.
        pub(crate) fn new() -> (Arc<Count>, SharedProgress) {
            let count = Arc::new(Count::default());
            let shared = SharedProgress::new(count.clone());
            (count, shared)
        }

        /// (announced, reported), once announcements never trailed reports.
        pub(crate) fn totals(&self) -> (u64, u64) {
            assert_eq!(
                self.ahead.load(Ordering::SeqCst),
                0,
                "bytes reported before they were announced"
            );
            (
                self.expected.load(Ordering::SeqCst),
                self.done.load(Ordering::SeqCst),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::counting::Count;
    use crate::io::external::ExternalDataOptions;
    use crate::io::{self, ParseOptions, SerializeOptions};
    use crate::onnx::{DataType, GraphProto, Model, ModelProto, TensorProto};

    /// Two tensors large enough to go external (one over a read chunk), one small.
    fn model() -> Model {
        let mut g = GraphProto::named("g");
        for (name, len) in [("big", (17 << 20) + 3), ("mid", 70_000), ("small", 12)] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            g.initializer.push(TensorProto::from_raw(
                name,
                DataType::Uint8,
                [len as i64],
                bytes,
            ));
        }
        ModelProto::new(g, vec![])
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("onnx-light-progress-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn size(path: &std::path::Path) -> u64 {
        std::fs::metadata(path).unwrap().len()
    }

    #[test]
    fn a_load_reports_every_byte_it_reads_after_announcing_it() {
        let dir = scratch("load");
        let single = dir.join("single.onnx");
        io::save(&model(), &single, &SerializeOptions::default()).unwrap();
        let external = dir.join("external.onnx");
        let ext = ExternalDataOptions::new("w.bin");
        io::save(
            &model(),
            &external,
            &SerializeOptions::default().external_data(ext),
        )
        .unwrap();
        let weights = (17 << 20) + 3 + 70_000;
        for threads in [1, 4] {
            let (count, shared) = Count::new();
            let options = ParseOptions::default().num_threads(threads);
            let options = ParseOptions {
                progress: Some(shared),
                ..options
            };
            assert_eq!(io::load_with(&single, &options).unwrap(), model());
            assert_eq!(count.totals(), (size(&single), size(&single)));
            // The model file, then the external bytes (not the data file's padding).
            let (count, shared) = Count::new();
            let options = ParseOptions {
                progress: Some(shared),
                ..options
            };
            assert_eq!(io::load_with(&external, &options).unwrap(), model());
            let read = size(&external) + weights;
            assert_eq!(count.totals(), (read, read));
        }
        // A structure-only load leaves the weights on disk and reports nothing.
        let count = Arc::new(Count::default());
        let lazy = ParseOptions::default()
            .structure_only(true)
            .progress(count.clone());
        io::load_with(&external, &lazy).unwrap();
        io::load_with(&single, &lazy).unwrap();
        assert_eq!(count.totals(), (0, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_save_reports_every_byte_it_writes_to_every_file() {
        let dir = scratch("save");
        // From memory, on one thread and several: the model file's size.
        for threads in [1, 4] {
            let count = Arc::new(Count::default());
            let path = dir.join(format!("m{threads}.onnx"));
            let options = SerializeOptions::default()
                .num_threads(threads)
                .progress(count.clone());
            io::save(&model(), &path, &options).unwrap();
            assert_eq!(count.totals(), (size(&path), size(&path)));
        }
        // With external data (unaligned, so the data file is the payloads alone): both
        // files.
        let count = Arc::new(Count::default());
        let split = dir.join("split.onnx");
        let ext = ExternalDataOptions::new("w.bin").alignment(1);
        let options = SerializeOptions::default()
            .external_data(ext)
            .progress(count.clone());
        io::save(&model(), &split, &options).unwrap();
        let both = size(&split) + size(&dir.join("w.bin"));
        assert_eq!(count.totals(), (both, both));
        // Weights left on disk, copied file to file: into one file, or kept external.
        let lazy = ParseOptions::default().structure_only(true);
        for (from, to) in [("m1.onnx", "copied.onnx"), ("split.onnx", "kept.onnx")] {
            let m = io::load_with(dir.join(from), &lazy).unwrap();
            let count = Arc::new(Count::default());
            let path = dir.join(to);
            io::save(
                &m,
                &path,
                &SerializeOptions::default().progress(count.clone()),
            )
            .unwrap();
            let data = if from == "split.onnx" {
                (17 << 20) + 3 + 70_000
            } else {
                0
            };
            let written = size(&path) + data;
            assert_eq!(count.totals(), (written, written), "{to}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn checksum_verification_reports_the_data_files_it_hashes() {
        use crate::io::external::{verify, VerifyOptions};
        use crate::message::Message;
        use crate::onnx::StringStringEntryProto;

        let dir = scratch("sha1");
        let path = dir.join("m.onnx");
        let ext = ExternalDataOptions::new("w.bin");
        io::save(
            &model(),
            &path,
            &SerializeOptions::default().external_data(ext),
        )
        .unwrap();
        let structure = ParseOptions::default().load_external_data(false);
        let mut m = io::load_with(&path, &structure).unwrap();
        let record = |m: &mut Model, sum: &str| {
            m.visit_tensors_mut(|_, t| {
                if t.is_external() {
                    t.external_data.retain(|e| e.key() != "checksum");
                    t.external_data
                        .push(StringStringEntryProto::new("checksum", sum.to_string()));
                }
            })
        };
        // The file's SHA-1, as a mismatch reports it.
        record(&mut m, "0");
        let sums = VerifyOptions::default().checksums(true);
        let found = verify(&m, &dir, &sums).unwrap();
        record(&mut m, found.files[0].sha1.as_deref().unwrap());
        let data = size(&dir.join("w.bin"));
        let count = Arc::new(Count::default());
        let verified = verify(&m, &dir, &sums.progress(count.clone())).unwrap();
        assert!(verified.is_ok() && verified.checksums_verified == 2);
        assert_eq!(count.totals(), (data, data));
        // A load that verifies them: the model file, the data file hashed, the payloads.
        let summed = dir.join("summed.onnx");
        std::fs::write(&summed, m.encode_to_vec().unwrap()).unwrap();
        let count = Arc::new(Count::default());
        let load = ParseOptions::default()
            .verify_checksums(true)
            .progress(count.clone());
        io::load_with(&summed, &load).unwrap();
        let read = size(&summed) + data + (17 << 20) + 3 + 70_000;
        assert_eq!(count.totals(), (read, read));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
