//! A bounds-checked cursor over protobuf-encoded bytes.

use super::key::{FieldKey, WireType, MAX_KEY_LEN};
use super::varint::{decode_varint, decode_varint_unrolled, MAX_VARINT_LEN};
use crate::error::{Error, ErrorKind, Result};

/// Default nesting limit for messages and groups, as in protobuf.
pub const DEFAULT_RECURSION_LIMIT: u32 = 100;

/// What [`Reader::index_run`] found: a run of `count` values ending `end` bytes past
/// the reader's position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunIndex {
    /// How many values the run holds.
    pub count: usize,
    /// Just past the run's last value, relative to the reader's position.
    pub end: usize,
}

/// A cursor over the bytes of one message.
///
/// Every read checks the remaining length first; nested messages get a child reader
/// limited to their own bytes and one less level of nesting budget. Offsets in errors
/// are absolute: counted from the start of the outermost input.
#[derive(Debug, Clone)]
pub struct Reader<'b> {
    buf: &'b [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` in the outermost input.
    base: u64,
    /// Nesting levels still allowed below this one.
    depth_left: u32,
    /// The configured limit, for error messages.
    limit: u32,
}

impl<'b> Reader<'b> {
    /// A reader over a whole input with the default recursion limit.
    pub fn new(buf: &'b [u8]) -> Self {
        Self::with_recursion_limit(buf, DEFAULT_RECURSION_LIMIT)
    }

    /// A reader over a whole input allowing `limit` levels of nested messages or groups.
    pub fn with_recursion_limit(buf: &'b [u8], limit: u32) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
            depth_left: limit,
            limit,
        }
    }

    /// The same reader, reporting offsets as if its input started at absolute `base`
    /// (for payloads sliced out of a larger input).
    pub fn rebased(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// True when every byte has been consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Bytes not yet consumed.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Position relative to this reader's start (for [`Reader::consumed_since`]).
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes consumed since `start` (a value of [`Reader::position`]), with the
    /// absolute offset of their first byte.
    #[inline]
    pub fn consumed_since(&self, start: usize) -> (&'b [u8], u64) {
        let start = start.min(self.pos);
        (&self.buf[start..self.pos], self.base + start as u64)
    }

    /// The bytes not yet consumed.
    #[inline]
    pub fn unread(&self) -> &'b [u8] {
        &self.buf[self.pos..]
    }

    /// How many length-delimited values of field `key` follow one another from here: the
    /// value at the current position (whose key was just read) and each next value whose
    /// key is the same. Nothing is consumed. Serializers write a repeated field's
    /// elements in one run, so this is usually the field's whole length, which lets a
    /// decoder allocate the list once at its exact size. The count stops at the first
    /// other key or malformed length (the decode reports that); every counted value
    /// occupies at least one byte of the input, so the count never exceeds the bytes
    /// that are really there. At least 1.
    pub fn count_run(&self, key: FieldKey) -> usize {
        self.run_extent(key).count.max(1)
    }

    /// The run that [`Reader::count_run`] counts: how many values it holds (0 when the
    /// first one is malformed) and the position (relative to the current one) just past
    /// its last value. Nothing is consumed.
    pub fn run_extent(&self, key: FieldKey) -> RunIndex {
        self.walk_run(key, |_, _| {})
    }

    /// [`Reader::run_extent`], also appending to `checkpoints` the relative position of
    /// the length prefix of every `every`-th value (0, `every`, `2 * every`, ...).
    pub fn index_run(&self, key: FieldKey, every: usize, checkpoints: &mut Vec<usize>) -> RunIndex {
        let every = every.max(1);
        self.walk_run(key, |i, pos| {
            if i.is_multiple_of(every) {
                checkpoints.push(pos);
            }
        })
    }

    /// Walks a run without consuming it, calling `at_value(i, pos)` with each value's
    /// index and the relative position of its length prefix. A malformed length ends
    /// the run before the malformed value.
    #[inline(always)]
    fn walk_run(&self, key: FieldKey, mut at_value: impl FnMut(usize, usize)) -> RunIndex {
        #[inline(always)]
        fn varint_at(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
            match buf.get(pos) {
                Some(&b) if b < 0x80 => Some((u64::from(b), 1)),
                Some(_) => decode_varint(&buf[pos..]).ok(),
                None => None,
            }
        }
        let raw_key = key.to_raw();
        let buf = self.unread();
        // `pos`: the length prefix of the value at hand.
        let mut pos = 0;
        let mut run = RunIndex { count: 0, end: 0 };
        while let Some((len, n)) = varint_at(buf, pos) {
            let end = match usize::try_from(len) {
                Ok(len) if len <= buf.len() - pos - n => pos + n + len,
                _ => break,
            };
            at_value(run.count, pos);
            run.count += 1;
            run.end = end;
            // A key longer than `read_key` reads ends the run where the decode fails.
            match varint_at(buf, end) {
                Some((next, k)) if next == raw_key && k <= MAX_KEY_LEN => pos = end + k,
                _ => break,
            }
        }
        run
    }

    /// A reader at the length prefix of the value `skip` values past the one whose
    /// length prefix is `at` bytes past the current position, in a run that
    /// [`Reader::index_run`] walked (so its lengths and keys are known to be
    /// well-formed); the same nesting budget.
    #[cfg(feature = "parallel")]
    pub(crate) fn ahead(&self, at: usize, skip: usize) -> Reader<'b> {
        let mut r = Reader {
            pos: (self.pos + at).min(self.buf.len()),
            ..self.clone()
        };
        for _ in 0..skip {
            if r.read_len_prefixed().and_then(|_| r.read_key()).is_err() {
                break;
            }
        }
        r
    }

    /// Consumes `n` bytes already decoded by readers from [`Reader::ahead`].
    #[cfg(feature = "parallel")]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }

    /// The nesting levels still allowed below this reader.
    pub fn depth_left(&self) -> u32 {
        self.depth_left
    }

    #[cold]
    fn err(&self, kind: ErrorKind) -> Error {
        Error::at(kind, self.offset())
    }

    /// Reads a varint.
    ///
    /// # Errors
    /// `Truncated` or `VarintOverflow`, at the varint's offset.
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64> {
        // One- and two-byte varints inline; everything else in one out-of-line call
        // whose `Result<u64>` comes back in registers.
        match *self.unread() {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b0))
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                Ok(u64::from(b0 & 0x7f) | (u64::from(b1) << 7))
            }
            _ => self.read_varint_slow(),
        }
    }

    #[inline(never)]
    fn read_varint_slow(&mut self) -> Result<u64> {
        if let Some(bytes) = self.unread().first_chunk::<MAX_VARINT_LEN>() {
            // Away from the end: decode in registers, no `Result` through memory.
            return match decode_varint_unrolled(bytes) {
                Some((v, n)) => {
                    self.pos += n;
                    Ok(v)
                }
                None => Err(self.err(ErrorKind::VarintOverflow)),
            };
        }
        match decode_varint(self.unread()) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(kind) => Err(self.err(kind)),
        }
    }

    /// Reads a field key, rejecting wire types 6/7, field numbers 0 or >= 2^29, and
    /// keys longer than [`MAX_KEY_LEN`] bytes (as protobuf does).
    ///
    /// # Errors
    /// As [`Reader::read_varint`] (`VarintOverflow` also for a key over five bytes),
    /// plus `InvalidWireType` / `InvalidFieldNumber`, at the key's offset.
    #[inline]
    pub fn read_key(&mut self) -> Result<FieldKey> {
        let start = self.pos;
        // Keys of one and two bytes (field numbers below 2048) inline, as in
        // `read_varint`; longer ones out of line, where their length is checked.
        let raw = match *self.unread() {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                u64::from(b0)
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                u64::from(b0 & 0x7f) | (u64::from(b1) << 7)
            }
            _ => self.read_long_key()?,
        };
        match FieldKey::from_raw(raw) {
            Ok(key) => Ok(key),
            Err(kind) => Err(self.err_at_pos(kind, start)),
        }
    }

    #[inline(never)]
    fn read_long_key(&mut self) -> Result<u64> {
        let start = self.pos;
        let raw = self.read_varint_slow()?;
        if self.pos - start > MAX_KEY_LEN {
            return Err(self.err_at_pos(ErrorKind::VarintOverflow, start));
        }
        Ok(raw)
    }

    #[cold]
    #[inline(never)]
    fn err_at_pos(&self, kind: ErrorKind, pos: usize) -> Error {
        Error::at(kind, self.base + pos as u64)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'b [u8]> {
        if n > self.remaining() {
            return Err(self.err(ErrorKind::Truncated {
                needed: n as u64,
                remaining: self.remaining() as u64,
            }));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads four little-endian bytes.
    ///
    /// # Errors
    /// `Truncated`.
    #[inline]
    pub fn read_fixed32(&mut self) -> Result<u32> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Reads eight little-endian bytes.
    ///
    /// # Errors
    /// `Truncated`.
    #[inline]
    pub fn read_fixed64(&mut self) -> Result<u64> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }

    /// Reads a length prefix and returns the bytes it covers with their absolute offset.
    /// The length is checked against the remaining input before anything else happens.
    ///
    /// # Errors
    /// `Truncated` for a cut-off prefix, `LengthOutOfBounds` for a length past the end.
    #[inline]
    pub fn read_length_delimited(&mut self) -> Result<(&'b [u8], u64)> {
        let s = self.read_len_prefixed()?;
        Ok((s, self.offset() - s.len() as u64))
    }

    /// [`Reader::read_length_delimited`] without the offset: the payload's offset is
    /// `self.offset() - payload.len()` right after the call. A `Result<&[u8]>` comes back
    /// in registers, which the decoders' hot paths notice.
    ///
    /// # Errors
    /// As [`Reader::read_length_delimited`].
    #[inline]
    pub(crate) fn read_len_prefixed(&mut self) -> Result<&'b [u8]> {
        let prefix_pos = self.pos;
        let len = self.read_varint()?;
        let start = self.pos;
        // One range check covers "length past the end" and every slicing bound.
        let end = usize::try_from(len).ok().and_then(|n| start.checked_add(n));
        match end.and_then(|end| self.buf.get(start..end)) {
            Some(s) => {
                self.pos = start + s.len();
                Ok(s)
            }
            None => Err(self.length_out_of_bounds(prefix_pos, len)),
        }
    }

    #[cold]
    #[inline(never)]
    fn length_out_of_bounds(&self, prefix_pos: usize, length: u64) -> Error {
        Error::at(
            ErrorKind::LengthOutOfBounds {
                length,
                remaining: self.remaining() as u64,
            },
            self.base + prefix_pos as u64,
        )
    }

    /// Reads a length-delimited value and returns a reader over it, one nesting level
    /// deeper.
    ///
    /// # Errors
    /// As [`Reader::read_length_delimited`], plus `RecursionLimitExceeded`.
    #[inline]
    pub fn nested(&mut self) -> Result<Reader<'b>> {
        if self.depth_left == 0 {
            return Err(self.err(ErrorKind::RecursionLimitExceeded { limit: self.limit }));
        }
        let buf = self.read_len_prefixed()?;
        Ok(Reader {
            buf,
            pos: 0,
            base: self.offset() - buf.len() as u64,
            depth_left: self.depth_left - 1,
            limit: self.limit,
        })
    }

    /// Checks that a known field arrived with the wire type its declaration expects.
    ///
    /// # Errors
    /// `WireTypeMismatch` at the offset of the value.
    #[inline]
    pub fn expect(&self, key: FieldKey, expected: WireType) -> Result<()> {
        if key.wire_type == expected {
            Ok(())
        } else {
            Err(self.mismatch(key, expected))
        }
    }

    /// The error for a known field carrying an unexpected wire type.
    #[cold]
    pub fn mismatch(&self, key: FieldKey, expected: WireType) -> Error {
        self.err(ErrorKind::WireTypeMismatch {
            expected: expected as u8,
            found: key.wire_type as u8,
        })
    }

    /// Skips the value of a field whose key was just read. Groups are skipped with
    /// their contents; their end keys must match, and their nesting counts against the
    /// recursion limit. No recursion on the call stack, whatever the input.
    ///
    /// # Errors
    /// Any read error inside the value, `UnexpectedEndGroup` for an end key with no
    /// start, `UnterminatedGroup`, `RecursionLimitExceeded`.
    pub fn skip(&mut self, key: FieldKey) -> Result<()> {
        match key.wire_type {
            WireType::Varint => self.read_varint().map(drop),
            WireType::Fixed64 => self.take(8).map(drop),
            WireType::Fixed32 => self.take(4).map(drop),
            WireType::LengthDelimited => self.read_len_prefixed().map(drop),
            WireType::EndGroup => {
                Err(self.err(ErrorKind::UnexpectedEndGroup { field: key.number }))
            }
            WireType::StartGroup => self.skip_group(key.number),
        }
    }

    fn skip_group(&mut self, number: u32) -> Result<()> {
        // Open groups, innermost last. Bounded by the recursion budget.
        let mut open: Vec<u32> = vec![number];
        while let Some(&innermost) = open.last() {
            if open.len() as u64 > u64::from(self.depth_left) {
                return Err(self.err(ErrorKind::RecursionLimitExceeded { limit: self.limit }));
            }
            if self.is_empty() {
                return Err(self.err(ErrorKind::UnterminatedGroup { field: innermost }));
            }
            let key = self.read_key()?;
            match key.wire_type {
                WireType::StartGroup => open.push(key.number),
                WireType::EndGroup => {
                    if key.number != innermost {
                        return Err(self.err(ErrorKind::UnterminatedGroup { field: innermost }));
                    }
                    open.pop();
                }
                _ => self.skip(key)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u32, wt: WireType) -> u8 {
        ((n << 3) | wt as u32) as u8
    }

    #[test]
    fn length_past_end_is_rejected_before_slicing() {
        // field 1, LEN, length 2^62: must not allocate or panic.
        let mut bytes = vec![key(1, WireType::LengthDelimited)];
        bytes.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]);
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        let e = r.skip(k).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::LengthOutOfBounds { .. }));
        assert_eq!(e.offset(), Some(1));
    }

    #[test]
    fn count_run_counts_the_values_of_one_key_that_follow_each_other() {
        let l = key(2, WireType::LengthDelimited);
        let other = key(3, WireType::LengthDelimited);
        // Three values of field 2, then field 3, then field 2 again.
        let bytes = [l, 1, b'a', l, 0, l, 2, b'b', b'c', other, 0, l, 1, b'd'];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(r.count_run(k), 3);
        assert_eq!(r.position(), 1, "counting consumes nothing");
        // From the last value: a run of one.
        let mut r = Reader::new(&bytes[11..]);
        let k = r.read_key().unwrap();
        assert_eq!(r.count_run(k), 1);
        // A length past the end stops the count (the decode reports it); never 0.
        let bad = [l, 1, b'a', l, 9, b'x'];
        let mut r = Reader::new(&bad);
        let k = r.read_key().unwrap();
        assert_eq!(r.count_run(k), 1);
        let mut r = Reader::new(&bad[3..]);
        let k = r.read_key().unwrap();
        assert_eq!(r.count_run(k), 1);
        // A truncated varint key after a value ends the run.
        let cut = [l, 0, 0x80];
        let mut r = Reader::new(&cut);
        let k = r.read_key().unwrap();
        assert_eq!(r.count_run(k), 1);
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn index_run_counts_like_count_run_and_records_every_nth_position() {
        let l = key(2, WireType::LengthDelimited);
        let other = key(3, WireType::LengthDelimited);
        // Five values of field 2 (lengths 1, 0, 2, 1, 0), then field 3.
        let bytes = [
            l, 1, b'a', l, 0, l, 2, b'b', b'c', l, 1, b'd', l, 0, other, 0,
        ];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        let mut checkpoints = Vec::new();
        let run = r.index_run(k, 2, &mut checkpoints);
        assert_eq!(run, RunIndex { count: 5, end: 13 });
        assert_eq!(run.count, r.count_run(k));
        // Values 0, 2 and 4 have their lengths at (relative) 0, 5 and 12.
        assert_eq!(checkpoints, vec![0, 5, 12]);
        assert_eq!(r.position(), 1, "indexing consumes nothing");
        // From value 2's checkpoint, one value further is value 3 ("d").
        let mut v3 = r.ahead(checkpoints[1], 1);
        assert_eq!(v3.read_len_prefixed().unwrap(), b"d");
        // A length past the end ends the run before that value.
        let bad = [l, 1, b'a', l, 9, b'x'];
        let mut r = Reader::new(&bad);
        let k = r.read_key().unwrap();
        checkpoints.clear();
        assert_eq!(
            r.index_run(k, 64, &mut checkpoints),
            RunIndex { count: 1, end: 2 }
        );
        assert_eq!(checkpoints, vec![0]);
    }

    #[test]
    fn wire_types_6_and_7_are_errors() {
        for wt in [6u8, 7] {
            let bytes = [(1 << 3) | wt];
            let e = Reader::new(&bytes).read_key().unwrap_err();
            assert_eq!(e.kind(), &ErrorKind::InvalidWireType(wt));
        }
    }

    #[test]
    fn field_number_zero_and_too_large_are_errors() {
        let e = Reader::new(&[0x00]).read_key().unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::InvalidFieldNumber(0));
        // number 2^29, wire type 0: varint of 2^32.
        let e = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x10])
            .read_key()
            .unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::InvalidFieldNumber(1 << 29));
    }

    #[test]
    fn keys_may_be_padded_to_five_bytes_but_not_six() {
        // Field 1, wire type 0, padded: accepted up to five bytes, as protobuf reads it.
        for len in 1..=MAX_KEY_LEN {
            let mut bytes = vec![0x08];
            if len > 1 {
                bytes[0] = 0x88;
                bytes.extend(std::iter::repeat_n(0x80, len - 2));
                bytes.push(0x00);
            }
            let mut r = Reader::new(&bytes);
            assert_eq!(
                r.read_key().unwrap(),
                FieldKey {
                    number: 1,
                    wire_type: WireType::Varint
                },
                "{bytes:02x?}"
            );
            assert!(r.is_empty());
        }
        // Six bytes (and ten, away from the end of the input): malformed, at the key.
        for len in [6, 10] {
            let mut bytes = vec![0x88];
            bytes.extend(std::iter::repeat_n(0x80, len - 2));
            bytes.extend_from_slice(&[0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            let e = Reader::new(&bytes).read_key().unwrap_err();
            assert_eq!(
                (e.kind(), e.offset()),
                (&ErrorKind::VarintOverflow, Some(0))
            );
        }
    }

    #[test]
    fn a_run_ends_at_a_key_longer_than_five_bytes() {
        let l = key(2, WireType::LengthDelimited);
        // Two values of field 2, the second behind the same key padded to six bytes.
        let bytes = [l, 1, b'a', 0x92, 0x80, 0x80, 0x80, 0x80, 0x00, 1, b'b'];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(r.run_extent(k), RunIndex { count: 1, end: 2 });
        // Padded to five bytes, it is the same key and the run goes on.
        let bytes = [l, 1, b'a', 0x92, 0x80, 0x80, 0x80, 0x00, 1, b'b'];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(r.run_extent(k), RunIndex { count: 2, end: 9 });
    }

    #[test]
    fn nested_groups_are_skipped_with_matching_ends() {
        let bytes = [
            key(5, WireType::StartGroup),
            key(1, WireType::Varint),
            42,
            key(6, WireType::StartGroup),
            key(6, WireType::EndGroup),
            key(5, WireType::EndGroup),
            key(2, WireType::Varint),
            7,
        ];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        r.skip(k).unwrap();
        assert_eq!(r.read_key().unwrap().number, 2);
    }

    #[test]
    fn mismatched_and_missing_group_ends_are_errors() {
        let bytes = [key(5, WireType::StartGroup), key(6, WireType::EndGroup)];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(
            r.skip(k).unwrap_err().kind(),
            &ErrorKind::UnterminatedGroup { field: 5 }
        );
        let bytes = [key(5, WireType::StartGroup), key(1, WireType::Varint), 1];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(
            r.skip(k).unwrap_err().kind(),
            &ErrorKind::UnterminatedGroup { field: 5 }
        );
    }

    #[test]
    fn stray_end_group_is_an_error() {
        let bytes = [key(3, WireType::EndGroup)];
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(
            r.skip(k).unwrap_err().kind(),
            &ErrorKind::UnexpectedEndGroup { field: 3 }
        );
    }

    #[test]
    fn deep_groups_hit_the_recursion_limit_without_stack_use() {
        let mut bytes = vec![key(1, WireType::StartGroup); 1_000_000];
        bytes.extend(std::iter::repeat_n(key(1, WireType::EndGroup), 1_000_000));
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        assert_eq!(
            r.skip(k).unwrap_err().kind(),
            &ErrorKind::RecursionLimitExceeded { limit: 100 }
        );
        // Exactly at the limit is fine.
        let mut bytes = vec![key(1, WireType::StartGroup); 100];
        bytes.extend(std::iter::repeat_n(key(1, WireType::EndGroup), 100));
        let mut r = Reader::new(&bytes);
        let k = r.read_key().unwrap();
        r.skip(k).unwrap();
        assert!(r.is_empty());
    }

    #[test]
    fn nested_readers_report_absolute_offsets() {
        // field 1 LEN [ field 2 LEN(len 5 but only 1 byte) ]
        let bytes = [
            key(1, WireType::LengthDelimited),
            3,
            key(2, WireType::LengthDelimited),
            5,
            0,
        ];
        let mut r = Reader::new(&bytes);
        r.read_key().unwrap();
        let mut inner = r.nested().unwrap();
        inner.read_key().unwrap();
        let e = inner.read_length_delimited().unwrap_err();
        assert_eq!(e.offset(), Some(3));
    }

    #[test]
    fn nesting_beyond_the_limit_is_rejected() {
        let bytes = [key(1, WireType::LengthDelimited), 0];
        let mut r = Reader::with_recursion_limit(&bytes, 0);
        r.read_key().unwrap();
        assert_eq!(
            r.nested().unwrap_err().kind(),
            &ErrorKind::RecursionLimitExceeded { limit: 0 }
        );
    }
}
