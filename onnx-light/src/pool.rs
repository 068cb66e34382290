//! Worker threads: how many a load, save or encryption uses, and the rayon pools that
//! run them (kept per size, so repeated calls start no new threads). Used by `io` and
//! `crypto`; knows nothing of either. Without the `parallel` feature there are no pools:
//! work runs on the calling thread, and thread counts are still validated.

#[cfg(feature = "parallel")]
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// The number of worker threads to use: 0 means "all available cores".
pub(crate) fn thread_count(num_threads: usize) -> usize {
    if num_threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        num_threads
    }
}

/// Runs `f` on a pool of `num_threads` threads (0 = all cores), so that the parallel
/// iterators inside it use that many threads: with one thread, they run sequentially
/// (on a one-thread pool: running `f` on the calling thread would hand its parallel
/// iterators to the global pool, which has one thread per core). Runs `f` directly when
/// the current pool already has that size.
#[cfg(feature = "parallel")]
pub(crate) fn with_threads<T: Send>(num_threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    let n = thread_count(num_threads);
    if rayon::current_num_threads() == n {
        return Ok(f());
    }
    Ok(pool_of(n)?.install(f))
}

/// Runs `f` on the calling thread (the build has no `parallel` feature), after checking
/// `num_threads` as the parallel build does.
#[cfg(not(feature = "parallel"))]
pub(crate) fn with_threads<T: Send>(num_threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    validate_threads(num_threads)?;
    Ok(f())
}

#[cfg(feature = "parallel")]
/// Pools of this many threads or fewer are kept for the life of the process, one per
/// size: a load or save that asks for a thread count starts no threads after the first.
const KEPT_POOL_MAX: usize = 64;

/// The most worker threads a load, save or encryption starts (`num_threads` above it is
/// an `InvalidOption` error): more than any machine's cores, and few enough that a
/// mistyped count cannot exhaust the process's threads or memory.
pub const MAX_THREADS: usize = 1024;

/// Checks a `num_threads` option against [`MAX_THREADS`].
///
/// # Errors
/// `InvalidOption` naming `num_threads`.
pub(crate) fn validate_threads(n: usize) -> Result<()> {
    if n > MAX_THREADS {
        return Err(Error::invalid_option(
            "num_threads",
            format!("{n} threads asked for; at most {MAX_THREADS}"),
        ));
    }
    Ok(())
}

/// A pool of `n` threads: the kept one for its size, or a new one past
/// [`KEPT_POOL_MAX`].
///
/// # Errors
/// `InvalidOption` for more than [`MAX_THREADS`] threads, or when they cannot start.
#[cfg(feature = "parallel")]
pub(crate) fn pool_of(n: usize) -> Result<Arc<rayon::ThreadPool>> {
    validate_threads(n)?;
    static POOLS: Mutex<Vec<Option<Arc<rayon::ThreadPool>>>> = Mutex::new(Vec::new());
    let build = || {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(move |i| format!("onnx-light-{n}-{i}"))
            .build()
            .map(Arc::new)
            .map_err(|e| {
                Error::invalid_option("num_threads", format!("cannot start {n} threads: {e}"))
            })
    };
    if n > KEPT_POOL_MAX {
        return build();
    }
    // A poisoned lock only means another thread panicked while holding it; the list
    // of pools is still valid.
    let mut pools = POOLS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if pools.len() <= n {
        pools.resize(n + 1, None);
    }
    if let Some(pool) = &pools[n] {
        return Ok(pool.clone());
    }
    let pool = build()?;
    pools[n] = Some(pool.clone());
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "parallel")]
    #[test]
    fn parallel_iterators_inside_use_the_requested_number_of_threads() {
        for n in [1, 2, 3] {
            assert_eq!(with_threads(n, rayon::current_num_threads).unwrap(), n);
        }
        assert_eq!(
            with_threads(0, rayon::current_num_threads).unwrap(),
            thread_count(0)
        );
    }

    #[test]
    fn more_threads_than_the_maximum_is_an_invalid_option() {
        let err = with_threads(MAX_THREADS + 1, || ()).unwrap_err();
        assert!(err.to_string().contains("num_threads"), "{err}");
        assert!(validate_threads(MAX_THREADS).is_ok());
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn kept_pools_nest_without_deadlock_and_start_no_new_threads() {
        let nested = with_threads(1, || {
            with_threads(2, || with_threads(1, rayon::current_num_threads).unwrap()).unwrap()
        })
        .unwrap();
        assert_eq!(nested, 1);
        let first = with_threads(3, || std::thread::current().name().map(str::to_owned));
        let again = with_threads(3, || std::thread::current().name().map(str::to_owned));
        let name = first.unwrap().unwrap();
        assert!(name.starts_with("onnx-light-3-"), "{name}");
        assert!(again.unwrap().unwrap().starts_with("onnx-light-3-"));
        assert!(Arc::ptr_eq(&pool_of(3).unwrap(), &pool_of(3).unwrap()));
    }
}
