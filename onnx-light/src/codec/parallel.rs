//! Decoding one long run of a repeated message field on the threads of the current
//! rayon pool (feature `parallel`): the run is indexed, split into one slice per thread,
//! and each slice decoded with a fork of the context straight into its place in the
//! list. `field::merge_repeated_parallel` decides when.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use super::context::bytes_of;
use super::{Codec, DecodeContext};
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{FieldKey, Reader};

/// The fewest bytes a run of values must span before `merge_repeated_parallel` splits
/// it across threads: below this, starting the threads costs more than they save.
pub const PARALLEL_MIN_RUN_BYTES: usize = 256 << 10;

/// The fewest values a run must hold before `merge_repeated_parallel` splits it,
/// unless the mode copies its bytes: a value whose payload is borrowed or shared
/// decodes in well under a microsecond whatever its size, so a few hundred large
/// tensors are not worth the tens of microseconds that starting the threads costs.
pub const PARALLEL_MIN_RUN_VALUES: usize = 1024;

/// Every how many values the run's index records a position: a slice starts at
/// the nearest one and walks the few lengths after it to its first value.
const CHECKPOINT_EVERY: usize = 64;

/// The run of values of `key` that starts at `r`, decoded on the current pool's
/// threads; `None` when it is not worth splitting or must be decoded on this thread
/// (nothing consumed or charged then). Never inlined: it runs once per long run,
/// and inlined into the field decoders it would crowd out the inlining of their
/// per-value code.
#[inline(never)]
pub(crate) fn merge_run<'a, 'b, K, C>(
    list: &mut Vec<K::Value>,
    key: FieldKey,
    r: &mut Reader<'b>,
    ctx: &mut C,
) -> Option<Result<()>>
where
    K: Codec<'a>,
    K::Value: Send,
    C: DecodeContext<'b, 'a>,
{
    // Cheap checks first: the bytes left, the pool, whether the context splits at all.
    if r.remaining() < PARALLEL_MIN_RUN_BYTES || rayon::current_num_threads() < 2 || !ctx.splits() {
        return None;
    }
    let run = r.run_extent(key);
    let n = run.count;
    let copies = ctx.copy_cost(run.end, true) > 0;
    if run.end < PARALLEL_MIN_RUN_BYTES || n < 2 || (n < PARALLEL_MIN_RUN_VALUES && !copies) {
        return None;
    }
    // Where the slices start: indexed only for a run that is split.
    let mut checkpoints = Vec::with_capacity(n.div_ceil(CHECKPOINT_EVERY));
    r.index_run(key, CHECKPOINT_EVERY, &mut checkpoints);
    // What `merge_repeated` reserves for the run, charged before any value.
    let list_bytes = bytes_of::<K::Value>(n.max(list.len()));
    let left = ctx.budget().remaining().checked_sub(list_bytes)?;
    let slices = rayon::current_num_threads().min(n);
    let share = left / slices as u64;
    let forks: Vec<C> = (0..slices)
        .map(|_| ctx.fork(share))
        .collect::<Option<_>>()?;
    let forks = Mutex::new(forks);
    let failure = Failure::default();
    let base: &Reader<'b> = r;
    let mut decoded = Vec::new();
    // Each slice is a range of consecutive values that one thread decodes in order,
    // its reader going from one value to the next.
    (0..n)
        .into_par_iter()
        .with_min_len(n.div_ceil(slices))
        .map_init(
            || Slice {
                ctx: lock(&forks).pop(),
                forks: &forks,
                next: None,
            },
            |slice, i| {
                let mut value = K::Value::default();
                if failure.before(i) {
                    return value;
                }
                let Some(ctx) = &mut slice.ctx else {
                    failure.starve();
                    return value;
                };
                let mut at = match slice.next.take() {
                    Some((j, at)) if j == i => at,
                    _ => base.ahead(checkpoints[i / CHECKPOINT_EVERY], i % CHECKPOINT_EVERY),
                };
                match K::merge(&mut value, &mut at, ctx) {
                    Ok(()) => {
                        // The next value's key (the run is known to hold it).
                        if i + 1 < n && at.read_key().is_ok() {
                            slice.next = Some((i + 1, at));
                        }
                    }
                    Err(e) => failure.record(i, e),
                }
                value
            },
        )
        .collect_into_vec(&mut decoded);
    let used = lock(&forks)
        .iter()
        .fold(0u64, |sum, f| sum.saturating_add(f.budget().used()));
    if failure.starved.load(Ordering::Relaxed) {
        return None;
    }
    match failure.into_first() {
        // Out of a slice's share of the budget: decode the run on this thread,
        // against the real budget.
        Some((_, e)) if matches!(e.kind(), ErrorKind::LimitExceeded { .. }) => None,
        Some((i, e)) => {
            // As `merge_repeated` leaves it: the values before the failing one.
            decoded.truncate(i);
            append(list, decoded);
            Some(Err(e))
        }
        None => {
            let charged = ctx.charge(list_bytes.saturating_add(used), r.offset());
            append(list, decoded);
            r.advance(run.end);
            Some(charged)
        }
    }
}

fn append<T>(list: &mut Vec<T>, mut values: Vec<T>) {
    if list.is_empty() {
        *list = values;
    } else {
        list.append(&mut values);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Poisoned only if a slice panicked, and then the panic propagates anyway.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One slice's context (handed back, for its budget, when the slice is done) and
/// where its next value starts.
struct Slice<'f, 'b, C> {
    ctx: Option<C>,
    forks: &'f Mutex<Vec<C>>,
    next: Option<(usize, Reader<'b>)>,
}

impl<C> Drop for Slice<'_, '_, C> {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            lock(self.forks).push(ctx);
        }
    }
}

/// The first value (in input order) that failed, and its error; or that a slice
/// found no context (more slices than forks: the run is decoded again on the
/// calling thread).
struct Failure {
    first: AtomicUsize,
    error: Mutex<Option<(usize, Error)>>,
    starved: AtomicBool,
}

impl Default for Failure {
    fn default() -> Self {
        Failure {
            first: AtomicUsize::new(usize::MAX),
            error: Mutex::new(None),
            starved: AtomicBool::new(false),
        }
    }
}

impl Failure {
    /// Whether a value before `i` failed: value `i` cannot matter any more.
    fn before(&self, i: usize) -> bool {
        self.first.load(Ordering::Relaxed) < i
    }

    fn starve(&self) {
        self.starved.store(true, Ordering::Relaxed);
        // Nothing decoded from here on matters.
        self.first.store(0, Ordering::Relaxed);
    }

    fn record(&self, i: usize, e: Error) {
        let mut error = lock(&self.error);
        if error.as_ref().is_none_or(|(j, _)| i < *j) {
            *error = Some((i, e));
            self.first.fetch_min(i, Ordering::Relaxed);
        }
    }

    fn into_first(self) -> Option<(usize, Error)> {
        self.error
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
