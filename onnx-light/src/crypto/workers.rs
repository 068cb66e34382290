//! The thread pool an encryption or decryption runs its chunks on.

use std::sync::Arc;

use crate::error::Result;
use crate::pool::pool_of;

/// Runs work on exactly the requested number of threads: the current rayon pool when
/// it already has that many, else the library's kept pool of that size (so that one
/// thread really means one, which matters for benchmarks and for callers sharing a
/// machine).
pub(crate) struct Workers {
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl Workers {
    /// `num_threads` workers; 0 means one per core.
    pub(crate) fn new(num_threads: usize) -> Result<Self> {
        let n = if num_threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            num_threads
        };
        if rayon::current_num_threads() == n {
            return Ok(Workers { pool: None });
        }
        Ok(Workers {
            pool: Some(pool_of(n)?),
        })
    }

    /// The number of threads `run` uses.
    pub(crate) fn count(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    /// Runs `f` so that rayon's parallel iterators inside it use these workers.
    pub(crate) fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Runs `work` on these workers while the calling thread runs `io`, and returns
    /// both results: streams write one window while the next is computed. `io` runs on
    /// the caller's thread, so it may use what cannot cross threads (the caller's
    /// writer); with nothing to write, `work` runs directly.
    pub(crate) fn overlap<R: Send, S>(
        &self,
        work: impl FnOnce() -> R + Send,
        io: Option<impl FnOnce() -> S>,
    ) -> (R, Option<S>) {
        let Some(io) = io else {
            return (self.run(work), None);
        };
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| self.run(work));
            let done = io();
            let result = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (result, Some(done))
        })
    }
}
