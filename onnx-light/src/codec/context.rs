//! The three decode modes. Decoding is written once (by the derive) and instantiated for
//! each mode; a mode only decides how byte and string payloads are held.

use crate::error::{Error, ErrorKind, Limit, Result};
use crate::field::{ByteOwner, Bytes, SharedBytes, Str};

/// The memory of `n` values of `T`.
#[inline]
pub(crate) fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// How many bytes a decode may still allocate for the message it builds
/// ([`crate::DecodeOptions::max_memory`]).
///
/// What is counted: list storage (elements times their in-memory size, as reserved),
/// boxed messages, map entries, kept unknown fields, and the bytes of every string and
/// payload the mode copies (a short string kept inline in its [`Str`] is counted too,
/// though it needs no block of its own: the count is an upper bound). Not counted:
/// allocator overhead, the decode's own constant-size bookkeeping, and the index of a
/// list decoded in parallel (8 bytes per 64 values).
///
/// A list decoded in parallel gives each thread an equal share of what is left; if one
/// runs out of its share, the list is decoded again on the calling thread against the
/// whole budget, so a budget passes or fails exactly as it does on one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    limit: u64,
    used: u64,
}

impl Budget {
    /// No limit.
    pub const UNLIMITED: Budget = Budget {
        limit: u64::MAX,
        used: 0,
    };

    /// At most `limit` bytes (`None`: no limit).
    pub fn new(limit: Option<u64>) -> Self {
        Budget {
            limit: limit.unwrap_or(u64::MAX),
            used: 0,
        }
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Bytes that may still be charged (`u64::MAX - used` when there is no limit).
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// Takes `bytes` from the budget.
    ///
    /// # Errors
    /// `LimitExceeded` (`which`: [`Limit::MaxMemory`]) at `offset` when the total
    /// would pass the limit; nothing is taken then.
    #[inline]
    pub fn charge(&mut self, bytes: u64, offset: u64) -> Result<()> {
        let total = self.used.saturating_add(bytes);
        if total > self.limit {
            return Err(self.exceeded(total, offset));
        }
        self.used = total;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn exceeded(&self, total: u64, offset: u64) -> Error {
        Error::at(
            ErrorKind::LimitExceeded {
                which: Limit::MaxMemory,
                limit: self.limit,
                actual: total,
            },
            offset,
        )
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::UNLIMITED
    }
}

/// How a decoder turns slices of its input (lifetime `'b`) into field values that live
/// for `'a`. Implemented by [`BorrowMode`], [`CopyMode`] and [`SharedMode`].
///
/// Contexts are `Send`: a decode that splits a long list across threads
/// ([`field::merge_repeated_parallel`](crate::codec::field::merge_repeated_parallel))
/// decodes each slice with a [`fork`](DecodeContext::fork) on another thread.
pub trait DecodeContext<'b, 'a>: Send {
    /// A byte payload found at absolute `offset` of the input.
    fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'a>;

    /// A string field's text, already validated as UTF-8.
    fn str(&mut self, text: &'b str) -> Str<'a>;

    /// Takes `bytes` about to be allocated for the decoded message from the decode's
    /// [`Budget`]; `offset` is where in the input the allocation is caused.
    ///
    /// # Errors
    /// `LimitExceeded` past the budget. Contexts without a budget never fail.
    #[inline]
    fn charge(&mut self, _bytes: u64, _offset: u64) -> Result<()> {
        Ok(())
    }

    /// The bytes [`bytes`](Self::bytes) (`payload`) or [`str`](Self::str) would copy
    /// for a value of `len` bytes: 0 when it borrows or shares.
    #[inline]
    fn copy_cost(&self, len: usize, _payload: bool) -> u64 {
        len as u64
    }

    /// The decode's budget as it stands (unlimited for contexts without one).
    #[inline]
    fn budget(&self) -> Budget {
        Budget::UNLIMITED
    }

    /// Whether [`fork`](DecodeContext::fork) gives a context (false by default): asked
    /// before a long list is looked at for splitting.
    #[inline]
    fn splits(&self) -> bool {
        false
    }

    /// A context of the same mode for decoding one slice of a long list on another
    /// thread, with a budget of its own of `budget` bytes; `None` (the default) when
    /// this context decodes on the calling thread only.
    #[inline]
    fn fork(&self, _budget: u64) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// The methods every mode implements alike from its `budget` and `parallel` fields:
/// charging, the budget, and forks (a clone with a budget of its own).
macro_rules! budget_and_forks {
    () => {
        #[inline]
        fn charge(&mut self, bytes: u64, offset: u64) -> Result<()> {
            self.budget.charge(bytes, offset)
        }

        #[inline]
        fn budget(&self) -> Budget {
            self.budget
        }

        #[inline]
        fn splits(&self) -> bool {
            self.parallel
        }

        fn fork(&self, budget: u64) -> Option<Self> {
            self.parallel.then(|| Self {
                budget: Budget::new(Some(budget)),
                ..self.clone()
            })
        }
    };
}

/// Borrow mode: payloads and strings are slices of the input; nothing is copied.
#[derive(Debug, Default, Clone, Copy)]
pub struct BorrowMode {
    /// The allocation budget of the decode.
    pub budget: Budget,
    /// Whether long lists may be decoded on the threads of the current rayon pool
    /// ([`DecodeOptions::parallel`](crate::DecodeOptions::parallel)).
    pub parallel: bool,
}

impl<'a> DecodeContext<'a, 'a> for BorrowMode {
    #[inline]
    fn bytes(&mut self, data: &'a [u8], _offset: u64) -> Bytes<'a> {
        Bytes::Borrowed(data)
    }

    #[inline]
    fn str(&mut self, text: &'a str) -> Str<'a> {
        Str::borrowed(text)
    }

    #[inline]
    fn copy_cost(&self, _len: usize, _payload: bool) -> u64 {
        0
    }

    budget_and_forks!();
}

/// Copy mode: every payload and string is copied; the result owns everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct CopyMode {
    /// The allocation budget of the decode.
    pub budget: Budget,
    /// Whether long lists may be decoded on the threads of the current rayon pool
    /// ([`DecodeOptions::parallel`](crate::DecodeOptions::parallel)).
    pub parallel: bool,
}

impl<'b> DecodeContext<'b, 'static> for CopyMode {
    #[inline]
    fn bytes(&mut self, data: &'b [u8], _offset: u64) -> Bytes<'static> {
        Bytes::from(data.to_vec())
    }

    #[inline]
    fn str(&mut self, text: &'b str) -> Str<'static> {
        Str::copied(text)
    }

    budget_and_forks!();
}

/// Shared mode: payloads of at least `threshold` bytes become [`SharedBytes`] slices of
/// the owner (no copy; the owner lives as long as any payload does); smaller payloads
/// and strings are copied.
///
/// The input being decoded must be the owner's own bytes, so that offsets in the input
/// are offsets in the owner; [`crate::DecodeOwned::decode_shared`] guarantees that.
#[derive(Clone)]
pub struct SharedMode {
    owner: ByteOwner,
    threshold: usize,
    /// The allocation budget of the decode.
    pub budget: Budget,
    /// Whether long lists may be decoded on the threads of the current rayon pool
    /// ([`DecodeOptions::parallel`](crate::DecodeOptions::parallel)).
    pub parallel: bool,
}

impl SharedMode {
    /// Shares payloads of at least `threshold` bytes from `owner`.
    pub fn new(owner: ByteOwner, threshold: usize) -> Self {
        SharedMode {
            owner,
            threshold,
            budget: Budget::UNLIMITED,
            parallel: false,
        }
    }

    /// Whether a payload of `len` bytes is shared rather than copied.
    #[inline]
    fn shares(&self, len: usize) -> bool {
        len >= self.threshold && len > 0
    }
}

impl std::fmt::Debug for SharedMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedMode")
            .field("owner_len", &self.owner.bytes().len())
            .field("threshold", &self.threshold)
            .finish()
    }
}

impl<'b> DecodeContext<'b, 'static> for SharedMode {
    #[inline]
    fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'static> {
        if self.shares(data.len()) {
            let start = offset as usize;
            let in_owner = self
                .owner
                .bytes()
                .get(start..start.saturating_add(data.len()));
            // Share only when the offset really designates these bytes of the owner;
            // anything else (a caller bypassing `decode_shared`) falls back to a copy.
            if in_owner.is_some_and(|s| std::ptr::eq(s.as_ptr(), data.as_ptr())) {
                if let Ok(shared) = SharedBytes::new(self.owner.clone(), start..start + data.len())
                {
                    return Bytes::Shared(shared);
                }
            }
        }
        Bytes::from(data.to_vec())
    }

    #[inline]
    fn str(&mut self, text: &'b str) -> Str<'static> {
        Str::copied(text)
    }

    #[inline]
    fn copy_cost(&self, len: usize, payload: bool) -> u64 {
        if payload && self.shares(len) {
            0
        } else {
            len as u64
        }
    }

    budget_and_forks!();
}

/// Adapts any context to produce `'static` values: used for fields whose type holds no
/// borrow (`String`, `Bytes<'static>`, messages declared without a lifetime). Borrowed
/// values are copied; Owned and Shared payloads pass through unchanged.
///
/// The inner context is held as a trait object so that recursive messages do not
/// instantiate `ToStatic<ToStatic<...>>` without end.
pub struct ToStatic<'c, 'b, 'a> {
    inner: &'c mut dyn DecodeContext<'b, 'a>,
}

impl<'c, 'b, 'a> ToStatic<'c, 'b, 'a> {
    /// Wraps `inner`.
    #[inline]
    pub fn new<C: DecodeContext<'b, 'a>>(inner: &'c mut C) -> Self {
        ToStatic { inner }
    }
}

impl<'b> DecodeContext<'b, 'static> for ToStatic<'_, 'b, '_> {
    #[inline]
    fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'static> {
        self.inner.bytes(data, offset).into_owned()
    }

    #[inline]
    fn str(&mut self, text: &'b str) -> Str<'static> {
        Str::copied(text)
    }

    #[inline]
    fn charge(&mut self, bytes: u64, offset: u64) -> Result<()> {
        self.inner.charge(bytes, offset)
    }

    #[inline]
    fn budget(&self) -> Budget {
        self.inner.budget()
    }
}

impl std::fmt::Debug for ToStatic<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToStatic")
    }
}
