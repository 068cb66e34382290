//! Data-parallel loops, written once for both builds: with the `parallel` feature they
//! are rayon's parallel iterators; without it the same method names
//! (`into_par_iter`, `par_iter`, `par_chunks`, `par_chunks_mut`, `par_drain`, and the
//! adapters the crate uses on them) run the loop on the calling thread, in order.

#[cfg(feature = "parallel")]
pub(crate) use rayon::prelude::*;

/// The number of threads of the current pool (always 1 without the `parallel` feature).
#[cfg(feature = "parallel")]
#[allow(dead_code)] // used by the `crypto` feature only
pub(crate) fn current_num_threads() -> usize {
    rayon::current_num_threads()
}

#[cfg(not(feature = "parallel"))]
pub(crate) use sequential::*;

/// The number of threads of the current pool (always 1 without the `parallel` feature).
#[cfg(not(feature = "parallel"))]
#[allow(dead_code)] // used by the `crypto` feature only in this build
pub(crate) fn current_num_threads() -> usize {
    1
}

// The shim mirrors the part of rayon's API the crate uses; which methods a build calls
// depends on its other features.
#[cfg(not(feature = "parallel"))]
#[allow(dead_code)]
mod sequential {
    use std::ops::RangeFull;

    /// A loop over `I` with the subset of rayon's `ParallelIterator` API the crate uses.
    /// It does not implement `Iterator`, so that its `reduce` (rayon's, with an
    /// identity) cannot be confused with `Iterator::reduce`.
    pub(crate) struct Seq<I>(I);

    impl<I: Iterator> Seq<I> {
        pub(crate) fn map<B, F: FnMut(I::Item) -> B>(self, f: F) -> Seq<std::iter::Map<I, F>> {
            Seq(self.0.map(f))
        }

        pub(crate) fn enumerate(self) -> Seq<std::iter::Enumerate<I>> {
            Seq(self.0.enumerate())
        }

        pub(crate) fn zip<J: Iterator>(self, other: Seq<J>) -> Seq<std::iter::Zip<I, J>> {
            Seq(self.0.zip(other.0))
        }

        /// Rayon's minimum split length: meaningless on one thread.
        pub(crate) fn with_min_len(self, _min: usize) -> Self {
            self
        }

        pub(crate) fn for_each(self, f: impl FnMut(I::Item)) {
            self.0.for_each(f);
        }

        pub(crate) fn try_for_each<E>(
            mut self,
            f: impl FnMut(I::Item) -> Result<(), E>,
        ) -> Result<(), E> {
            self.0.try_for_each(f)
        }

        /// Folds in order from `identity()`, as rayon's `reduce` does on one thread.
        pub(crate) fn reduce(
            self,
            identity: impl Fn() -> I::Item,
            op: impl Fn(I::Item, I::Item) -> I::Item,
        ) -> I::Item {
            self.0.fold(identity(), op)
        }
    }

    /// `into_par_iter` for anything iterable.
    pub(crate) trait IntoParallelIterator: IntoIterator + Sized {
        fn into_par_iter(self) -> Seq<Self::IntoIter> {
            Seq(self.into_iter())
        }
    }

    impl<T: IntoIterator> IntoParallelIterator for T {}

    /// `par_iter` and `par_chunks` for slices.
    pub(crate) trait ParallelSlice<T> {
        fn par_iter(&self) -> Seq<std::slice::Iter<'_, T>>;
        fn par_chunks(&self, size: usize) -> Seq<std::slice::Chunks<'_, T>>;
    }

    impl<T> ParallelSlice<T> for [T] {
        fn par_iter(&self) -> Seq<std::slice::Iter<'_, T>> {
            Seq(self.iter())
        }

        fn par_chunks(&self, size: usize) -> Seq<std::slice::Chunks<'_, T>> {
            Seq(self.chunks(size))
        }
    }

    /// `par_chunks_mut` for slices.
    pub(crate) trait ParallelSliceMut<T> {
        fn par_chunks_mut(&mut self, size: usize) -> Seq<std::slice::ChunksMut<'_, T>>;
    }

    impl<T> ParallelSliceMut<T> for [T] {
        fn par_chunks_mut(&mut self, size: usize) -> Seq<std::slice::ChunksMut<'_, T>> {
            Seq(self.chunks_mut(size))
        }
    }

    /// `par_drain(..)` for vectors.
    pub(crate) trait ParallelDrainFull<T> {
        fn par_drain(&mut self, range: RangeFull) -> Seq<std::vec::Drain<'_, T>>;
    }

    impl<T> ParallelDrainFull<T> for Vec<T> {
        fn par_drain(&mut self, range: RangeFull) -> Seq<std::vec::Drain<'_, T>> {
            Seq(self.drain(range))
        }
    }
}
