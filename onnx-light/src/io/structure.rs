//! Reading a model file's structure without its weights, and without mapping it.
//!
//! The file's protobuf fields are walked with positional reads, guided by the message
//! descriptors; every `TensorProto.raw_data` of at least a threshold is skipped instead
//! of read. The result is a buffer of the file's length with every other byte at its
//! offset: decoding it in borrow mode gives the model, and the skipped payloads (zeros
//! in the buffer) are then replaced by references to their ranges of the file. Pages of
//! the zeroed buffer that no read touches take no memory, so a structure-only load of a
//! file of inline weights costs about its structure. A file that another process
//! truncates meanwhile gives an I/O error, never a crash.
//!
//! Input that does not walk cleanly (a malformed key, a length past its message, a
//! group, nesting past the walk's depth) is read whole from there to the end of the
//! enclosing message, so the decode that follows sees the file's own bytes and reports
//! what it would report for them. Knows the wire format and the descriptors; nothing of
//! loads.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::descriptor::{FieldKind, MessageDescriptor};
use crate::error::{Error, ErrorKind, Result};
use crate::field::AlignedBuffer;
use crate::message::Message;
use crate::onnx::{message_descriptors, ModelProto, TensorProto};
use crate::wire::decode_varint;

/// The read-ahead while walking keys and short fields: it starts small after each skipped
/// payload (the next tensor's header is a few dozen bytes past it) and doubles while the
/// structure goes on, up to the largest block. So a read takes at most the largest block
/// of a payload it runs into, and a long stretch of structure is read in few calls.
const MIN_BLOCK: u64 = 4 << 10;
const MAX_BLOCK: u64 = 256 << 10;

/// The deepest nesting the walk descends into; deeper messages are read whole (the
/// decode applies its own recursion limit to them).
const MAX_DEPTH: u32 = 100;

/// The bytes of the file (`len` bytes, opened from `path`) that the structure of a model
/// needs: every byte but those of each `TensorProto.raw_data` of at least `threshold`
/// bytes, which stay zero.
///
/// # Errors
/// I/O errors naming `path` (a file truncated while it is read among them);
/// `ValueOutOfRange` for a file larger than the address space.
pub(crate) fn read_structure(
    file: &File,
    path: &Path,
    len: u64,
    threshold: usize,
) -> Result<AlignedBuffer> {
    let source = FileRanges { file, path };
    read_structure_from(&source, len, threshold, Blocks::FILE)
}

/// Positional reads of a model's bytes: a local file, or an object in a store.
pub(crate) trait ReadRanges {
    /// Fills `dst` with the bytes at `offset`; an error names the source.
    fn read_exact_at(&self, dst: &mut [u8], offset: u64) -> Result<()>;
}

/// A local file, read with `pread`.
struct FileRanges<'f> {
    file: &'f File,
    path: &'f Path,
}

impl ReadRanges for FileRanges<'_> {
    fn read_exact_at(&self, dst: &mut [u8], offset: u64) -> Result<()> {
        self.file
            .read_exact_at(dst, offset)
            .map_err(|e| Error::io(e, Some(self.path)))
    }
}

/// The walk's read-ahead bounds: a read after a skipped payload asks for `min` bytes,
/// and each further read of structure doubles that, up to `max`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blocks {
    pub(crate) min: u64,
    pub(crate) max: u64,
}

impl Blocks {
    /// For files: each read is a system call, cheap enough to keep reads small.
    pub(crate) const FILE: Blocks = Blocks {
        min: MIN_BLOCK,
        max: MAX_BLOCK,
    };
}

/// [`read_structure`] from any source of positional reads, with its read-ahead bounds
/// (larger for sources whose every read is a round trip).
pub(crate) fn read_structure_from(
    source: &dyn ReadRanges,
    len: u64,
    threshold: usize,
    blocks: Blocks,
) -> Result<AlignedBuffer> {
    let size = usize::try_from(len).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "file larger than the address space",
        })
    })?;
    // Zeroed by the allocator (fresh pages for a large buffer): only the pages the walk
    // reads into are ever touched.
    let mut buffer = AlignedBuffer::zeroed(size, 16)?;
    let mut walk = Walk {
        source,
        buf: &mut buffer,
        loaded: 0,
        ahead: blocks.min,
        blocks,
        threshold: threshold.max(1) as u64,
        descriptors: message_descriptors()
            .into_iter()
            .map(|d| (d.name, d))
            .collect(),
    };
    walk.message(Some(ModelProto::DESCRIPTOR), 0, len, 0)?;
    Ok(buffer)
}

struct Walk<'w> {
    source: &'w dyn ReadRanges,
    buf: &'w mut [u8],
    /// Every byte before this offset that the walk needs is in `buf`. The walk only moves
    /// forward, so one offset is enough.
    loaded: u64,
    /// The next read-ahead.
    ahead: u64,
    blocks: Blocks,
    threshold: u64,
    descriptors: HashMap<&'static str, &'static MessageDescriptor>,
}

impl Walk<'_> {
    /// Reads `[from, to)` (clamped to what is not loaded yet) into the buffer.
    fn read(&mut self, from: u64, to: u64) -> Result<()> {
        let from = from.max(self.loaded);
        if from < to {
            // Both offsets are at most the file's length, which fits in a usize.
            let dst = &mut self.buf[from as usize..to as usize];
            self.source.read_exact_at(dst, from)?;
            self.loaded = to;
        }
        Ok(())
    }

    /// Makes `[at, at + n)` available, reading ahead (never past `end`).
    fn need(&mut self, at: u64, n: u64, end: u64) -> Result<()> {
        let want = at.saturating_add(n).min(end);
        if want <= self.loaded {
            return Ok(());
        }
        let ahead = at.max(self.loaded).saturating_add(self.ahead).min(end);
        self.ahead = (self.ahead * 2).min(self.blocks.max);
        self.read(at, want.max(ahead))
    }

    /// A varint at `at` (not past `end`): its value and length, or `None` when malformed.
    fn varint(&mut self, at: u64, end: u64) -> Result<Option<(u64, u64)>> {
        self.need(at, 10, end)?;
        let stop = at.saturating_add(10).min(end);
        Ok(decode_varint(&self.buf[at as usize..stop as usize])
            .ok()
            .map(|(v, n)| (v, n as u64)))
    }

    /// Walks the message of type `desc` (`None`: unknown, read whole) in `[start, end)`.
    fn message(
        &mut self,
        desc: Option<&'static MessageDescriptor>,
        start: u64,
        end: u64,
        depth: u32,
    ) -> Result<()> {
        let Some(desc) = desc.filter(|_| depth < MAX_DEPTH) else {
            return self.read(start, end);
        };
        let mut at = start;
        while at < end {
            match self.field(desc, at, end, depth)? {
                Some(next) => at = next,
                // Not a clean field: the decode reports it from the file's own bytes.
                None => return self.read(at, end),
            }
        }
        Ok(())
    }

    /// Walks the field whose key starts at `at`; the offset after it, or `None` when the
    /// field is malformed or a group.
    fn field(
        &mut self,
        desc: &'static MessageDescriptor,
        at: u64,
        end: u64,
        depth: u32,
    ) -> Result<Option<u64>> {
        let Some((key, key_len)) = self.varint(at, end)? else {
            return Ok(None);
        };
        let Ok(number) = u32::try_from(key >> 3) else {
            return Ok(None);
        };
        let value = at + key_len;
        Ok(match key & 7 {
            0 => self.varint(value, end)?.map(|(_, n)| value + n),
            wire @ (1 | 5) => {
                let n = if wire == 1 { 8 } else { 4 };
                if end - value < n {
                    return Ok(None);
                }
                self.need(value, n, end)?;
                Some(value + n)
            }
            2 => {
                let Some((len, len_len)) = self.varint(value, end)? else {
                    return Ok(None);
                };
                let data = value + len_len;
                if len > end - data {
                    return Ok(None);
                }
                let data_end = data + len;
                match desc.field(number).map(|f| f.kind) {
                    // Shorter than the threshold: it cannot hold a payload to skip.
                    _ if len < self.threshold => self.read(data, data_end)?,
                    Some(FieldKind::Bytes)
                        if desc.name == TensorProto::NAME && number == RAW_DATA =>
                    {
                        // The weights: left where they are. A payload the read-ahead did
                        // not reach is large: the next read starts small again.
                        if data_end > self.loaded {
                            self.ahead = self.blocks.min;
                        }
                    }
                    Some(FieldKind::Message(name)) => {
                        let inner = self.descriptors.get(name).copied();
                        self.message(inner, data, data_end, depth + 1)?;
                    }
                    _ => self.read(data, data_end)?,
                }
                Some(data_end)
            }
            // Groups (3, 4) and the undefined wire types 6 and 7.
            _ => None,
        })
    }
}

/// `TensorProto.raw_data`.
const RAW_DATA: u32 = 9;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Decode, Message};
    use crate::onnx::{AttributeProto, DataType, GraphProto, NodeProto};

    fn scratch(name: &str, bytes: &[u8]) -> (std::path::PathBuf, File) {
        let path = std::env::temp_dir().join(format!(
            "onnx-light-structure-{name}-{}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        let file = File::open(&path).unwrap();
        (path, file)
    }

    /// Payloads well past the read-ahead, so that most of each is never read.
    const BIG: usize = 3 * MAX_BLOCK as usize;

    fn model() -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        g.initializer.push(TensorProto::from_raw(
            "big",
            DataType::Uint8,
            [BIG as i64],
            vec![7u8; BIG],
        ));
        g.initializer.push(TensorProto::from_raw(
            "small",
            DataType::Uint8,
            [10],
            vec![9u8; 10],
        ));
        g.node.push(
            NodeProto::new("Constant", Vec::<String>::new(), ["k"]).with_attribute(
                AttributeProto::tensor(
                    "value",
                    TensorProto::from_raw(
                        "in_attribute",
                        DataType::Uint8,
                        [BIG as i64],
                        vec![5u8; BIG],
                    ),
                ),
            ),
        );
        ModelProto::new(g, vec![])
    }

    /// The file ranges of every `raw_data` of at least `threshold` bytes in `bytes`.
    fn payload_ranges(bytes: &[u8], threshold: usize) -> Vec<std::ops::Range<usize>> {
        let view = ModelProto::decode(bytes).unwrap();
        let mut ranges = Vec::new();
        view.visit_tensors(|_, t| {
            if let Some(raw) = t.raw_data.as_deref().filter(|r| r.len() >= threshold) {
                let start = raw.as_ptr() as usize - bytes.as_ptr() as usize;
                ranges.push(start..start + raw.len());
            }
        });
        ranges
    }

    #[test]
    fn large_raw_data_is_skipped_and_everything_else_read() {
        let bytes = model().encode_to_vec().unwrap();
        let (path, file) = scratch("skip", &bytes);
        let buf = read_structure(&file, &path, bytes.len() as u64, 1024).unwrap();
        let payloads = payload_ranges(&bytes, 1024);
        assert_eq!(payloads.len(), 2);
        for (i, (a, b)) in buf.iter().zip(&bytes).enumerate() {
            if !payloads.iter().any(|r| r.contains(&i)) {
                assert_eq!(a, b, "byte {i} outside the payloads differs");
            }
        }
        // Of each payload, at most the read-ahead was read.
        for r in &payloads {
            let unread = buf[r.clone()].iter().filter(|&&b| b == 0).count();
            assert!(
                unread >= r.len() - MAX_BLOCK as usize,
                "{unread} of {} unread",
                r.len()
            );
        }
        // The buffer decodes to the model with zeros for the skipped bytes.
        let view = ModelProto::decode(&buf).unwrap();
        let g = view.graph.as_ref().unwrap();
        assert_eq!(g.initializer[1].raw_data.as_deref(), Some(&[9u8; 10][..]));
        assert_eq!(
            g.node[0].attribute[0].t.as_ref().unwrap().name(),
            "in_attribute"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn malformed_input_is_read_as_it_is() {
        // ModelProto.graph { initializer (5000 bytes of raw_data), a group start key, two
        // bytes }: the payload before the bad key is skipped, the rest read as it is.
        let tensor = TensorProto::from_raw("w", DataType::Uint8, [BIG as i64], vec![7u8; BIG])
            .encode_to_vec()
            .unwrap();
        let mut graph = vec![0x2a];
        push_varint(&mut graph, tensor.len() as u64);
        graph.extend_from_slice(&tensor);
        let bad = graph.len();
        graph.extend_from_slice(&[0x0b, 0x01, 0x02]);
        let mut bytes = vec![0x3a];
        push_varint(&mut bytes, graph.len() as u64);
        let graph_start = bytes.len();
        bytes.extend_from_slice(&graph);
        let (path, file) = scratch("malformed", &bytes);
        let buf = read_structure(&file, &path, bytes.len() as u64, 1024).unwrap();
        let bad = graph_start + bad;
        assert!(buf[bad..] == bytes[bad..]);
        assert!(buf.iter().filter(|&&b| b == 7).count() <= MAX_BLOCK as usize);
        let (a, b) = (
            ModelProto::decode(&buf).unwrap_err(),
            ModelProto::decode(&bytes).unwrap_err(),
        );
        assert_eq!((a.kind(), a.offset()), (b.kind(), b.offset()));
        // An invalid wire type at the top level: the whole file is read.
        let garbage = [0x0f, 1, 2, 3, 0xff, 0xff];
        let (path2, file2) = scratch("garbage", &garbage);
        let buf = read_structure(&file2, &path2, garbage.len() as u64, 1).unwrap();
        assert!(buf[..] == garbage[..]);
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_file(&path2).unwrap();
    }

    fn push_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    #[test]
    fn a_file_shorter_than_its_length_is_an_io_error() {
        let bytes = model().encode_to_vec().unwrap();
        let (path, file) = scratch("short", &bytes[..100]);
        let e = read_structure(&file, &path, bytes.len() as u64, 1024).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Io(std::io::ErrorKind::UnexpectedEof)),
            "{e}"
        );
        assert_eq!(e.file(), Some(path.as_path()));
        std::fs::remove_file(&path).unwrap();
    }
}
