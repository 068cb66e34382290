//! Destinations for encoded bytes.

use std::io;

use super::varint::{encode_varint, MAX_VARINT_LEN};
use crate::error::{Error, ErrorKind, Result};

/// Where an encoder puts bytes: a `Vec<u8>`, a pre-sized slice, or any `io::Write`.
pub trait Sink {
    /// Appends `bytes`.
    ///
    /// # Errors
    /// Whatever the destination reports (I/O errors, a full pre-sized buffer).
    fn put(&mut self, bytes: &[u8]) -> Result<()>;

    /// Appends one byte.
    ///
    /// # Errors
    /// As [`Sink::put`].
    #[inline]
    fn put_u8(&mut self, b: u8) -> Result<()> {
        self.put(&[b])
    }

    /// Appends a varint.
    ///
    /// # Errors
    /// As [`Sink::put`].
    #[inline]
    fn put_varint(&mut self, v: u64) -> Result<()> {
        if v < 0x80 {
            return self.put_u8(v as u8);
        }
        let mut buf = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(v, &mut buf);
        self.put(&buf[..n])
    }
}

/// Writes a varint one byte at a time through [`Sink::put_u8`]: for sinks whose `put`
/// does per-call work (a payload lookup) that a byte never needs.
#[inline]
pub(crate) fn put_varint_bytewise<S: Sink + ?Sized>(sink: &mut S, mut v: u64) -> Result<()> {
    while v >= 0x80 {
        sink.put_u8((v as u8) | 0x80)?;
        v >>= 7;
    }
    sink.put_u8(v as u8)
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn put_u8(&mut self, b: u8) -> Result<()> {
        self.push(b);
        Ok(())
    }

    #[inline]
    fn put_varint(&mut self, v: u64) -> Result<()> {
        if v < 0x80 {
            self.push(v as u8);
        } else {
            push_varint_multibyte(self, v);
        }
        Ok(())
    }
}

/// Appends a varint of two bytes or more byte by byte, after one capacity check for
/// the longest varint: no scratch buffer and no variable-length `memcpy` call for a
/// few bytes (which costs more than the bytes themselves).
#[inline(never)]
fn push_varint_multibyte(out: &mut Vec<u8>, mut v: u64) {
    out.reserve(MAX_VARINT_LEN);
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl<S: Sink + ?Sized> Sink for &mut S {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        (**self).put(bytes)
    }

    #[inline]
    fn put_u8(&mut self, b: u8) -> Result<()> {
        (**self).put_u8(b)
    }

    #[inline]
    fn put_varint(&mut self, v: u64) -> Result<()> {
        (**self).put_varint(v)
    }
}

/// Writes into a caller-provided slice of exactly the encoded size. Running out of room
/// is an error (it means the message changed between sizing and writing), never a panic.
#[derive(Debug)]
pub struct SliceSink<'s> {
    buf: &'s mut [u8],
    pos: usize,
}

impl<'s> SliceSink<'s> {
    /// A sink writing from the start of `buf`.
    pub fn new(buf: &'s mut [u8]) -> Self {
        SliceSink { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.pos
    }
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let remaining = self.buf.len() - self.pos;
        if bytes.len() > remaining {
            return Err(Error::new(ErrorKind::BufferTooSmall {
                needed: bytes.len() as u64,
                remaining: remaining as u64,
            }));
        }
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
        Ok(())
    }
}

/// Buffers small writes to an `io::Write`; large payloads go straight through without
/// an extra copy.
#[derive(Debug)]
pub struct IoSink<W: io::Write> {
    inner: W,
    buf: Vec<u8>,
    written: u64,
}

const IO_BUFFER: usize = 64 * 1024;

impl<W: io::Write> IoSink<W> {
    /// A sink over `inner`.
    pub fn new(inner: W) -> Self {
        IoSink {
            inner,
            buf: Vec::with_capacity(IO_BUFFER),
            written: 0,
        }
    }

    /// Bytes accepted so far (buffered or written).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes out the buffer and flushes the writer.
    ///
    /// # Errors
    /// I/O errors of the writer.
    pub fn flush(&mut self) -> Result<()> {
        self.drain()?;
        self.inner.flush()?;
        Ok(())
    }

    /// Flushes and returns the writer.
    ///
    /// # Errors
    /// I/O errors of the writer.
    pub fn into_inner(mut self) -> Result<W> {
        self.flush()?;
        Ok(self.inner)
    }

    fn drain(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<W: io::Write> Sink for IoSink<W> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.written += bytes.len() as u64;
        if self.buf.len() + bytes.len() <= IO_BUFFER {
            self.buf.extend_from_slice(bytes);
            return Ok(());
        }
        self.drain()?;
        if bytes.len() >= IO_BUFFER {
            self.inner.write_all(bytes)?;
        } else {
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_sink_refuses_to_overflow() {
        let mut buf = [0u8; 3];
        let mut s = SliceSink::new(&mut buf);
        s.put(&[1, 2]).unwrap();
        let e = s.put(&[3, 4]).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::BufferTooSmall {
                needed: 2,
                remaining: 1
            }
        ));
        assert_eq!(s.written(), 2);
    }

    #[test]
    fn io_sink_keeps_order_across_small_and_large_writes() {
        let mut s = IoSink::new(Vec::new());
        let big = vec![7u8; IO_BUFFER + 10];
        s.put(&[1, 2, 3]).unwrap();
        s.put(&big).unwrap();
        s.put_varint(300).unwrap();
        let out = s.into_inner().unwrap();
        assert_eq!(&out[..3], &[1, 2, 3]);
        assert_eq!(&out[3..3 + big.len()], &big[..]);
        assert_eq!(&out[3 + big.len()..], &[0xac, 0x02]);
    }
}
