//! The three decode modes. Decoding is written once (by the derive) and instantiated for
//! each mode; a mode only decides how byte and string payloads are held.

use std::borrow::Cow;

use crate::field::{ByteOwner, Bytes, SharedBytes};

/// How a decoder turns slices of its input (lifetime `'b`) into field values that live
/// for `'a`. Implemented by [`BorrowMode`], [`CopyMode`] and [`SharedMode`].
pub trait DecodeContext<'b, 'a> {
    /// A byte payload found at absolute `offset` of the input.
    fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'a>;

    /// A string field's text, already validated as UTF-8.
    fn str(&mut self, text: &'b str) -> Cow<'a, str>;
}

/// Borrow mode: payloads and strings are slices of the input; nothing is copied.
#[derive(Debug, Default, Clone, Copy)]
pub struct BorrowMode;

impl<'a> DecodeContext<'a, 'a> for BorrowMode {
    #[inline]
    fn bytes(&mut self, data: &'a [u8], _offset: u64) -> Bytes<'a> {
        Bytes::Borrowed(data)
    }

    #[inline]
    fn str(&mut self, text: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(text)
    }
}

/// Copy mode: every payload and string is copied; the result owns everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct CopyMode;

impl<'b> DecodeContext<'b, 'static> for CopyMode {
    #[inline]
    fn bytes(&mut self, data: &'b [u8], _offset: u64) -> Bytes<'static> {
        Bytes::from(data.to_vec())
    }

    #[inline]
    fn str(&mut self, text: &'b str) -> Cow<'static, str> {
        Cow::Owned(text.to_owned())
    }
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
}

impl SharedMode {
    /// Shares payloads of at least `threshold` bytes from `owner`.
    pub fn new(owner: ByteOwner, threshold: usize) -> Self {
        SharedMode { owner, threshold }
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
        if data.len() >= self.threshold && !data.is_empty() {
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
    fn str(&mut self, text: &'b str) -> Cow<'static, str> {
        Cow::Owned(text.to_owned())
    }
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
    fn str(&mut self, text: &'b str) -> Cow<'static, str> {
        Cow::Owned(text.to_owned())
    }
}

impl std::fmt::Debug for ToStatic<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToStatic")
    }
}
