//! The thread pool an encryption or decryption runs its chunks on.

#[cfg(feature = "parallel")]
use std::sync::Arc;

use crate::error::Result;
#[cfg(feature = "parallel")]
use crate::pool::pool_of;

/// Runs work on exactly the requested number of threads: the current rayon pool when
/// it already has that many, else the library's kept pool of that size (so that one
/// thread really means one, which matters for benchmarks and for callers sharing a
/// machine).
/// Without the `parallel` feature, the calling thread is the only worker.
pub(crate) struct Workers {
    #[cfg(feature = "parallel")]
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl Workers {
    /// `num_threads` workers; 0 means one per core.
    #[cfg(feature = "parallel")]
    pub(crate) fn new(num_threads: usize) -> Result<Self> {
        let n = crate::pool::thread_count(num_threads);
        if rayon::current_num_threads() == n {
            return Ok(Workers { pool: None });
        }
        Ok(Workers {
            pool: Some(pool_of(n)?),
        })
    }

    /// The calling thread, after checking `num_threads` as the parallel build does.
    #[cfg(not(feature = "parallel"))]
    pub(crate) fn new(num_threads: usize) -> Result<Self> {
        crate::pool::validate_threads(num_threads)?;
        Ok(Workers {})
    }

    /// The number of threads `run` uses.
    pub(crate) fn count(&self) -> usize {
        #[cfg(feature = "parallel")]
        if let Some(p) = &self.pool {
            return p.current_num_threads();
        }
        crate::par::current_num_threads()
    }

    /// Runs `f` so that the parallel iterators inside it use these workers.
    pub(crate) fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        #[cfg(feature = "parallel")]
        if let Some(p) = &self.pool {
            return p.install(f);
        }
        f()
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
