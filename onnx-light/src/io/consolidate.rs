//! Moving every large payload of a model into one aligned buffer that the tensors share.
//!
//! This is also how copy-mode loading beats the page-fault ceiling: decode in borrow mode
//! (no payload touched), then copy every large payload once, in parallel, into a single
//! huge-page buffer, and give each tensor a shared slice of it.

use crate::par::*;

use super::buffer::{align_up, PayloadBuffer};
use super::options::TensorBufferOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::field::{ByteOwner, Bytes, SharedBytes};
use crate::onnx::ModelProto;

/// The buffer a model's payloads were consolidated into. Tensors keep it alive through
/// their shared slices; dropping this handle frees nothing they use.
#[derive(Clone)]
pub struct ConsolidatedBuffer {
    owner: ByteOwner,
    tensors: usize,
    payload_bytes: u64,
}

impl ConsolidatedBuffer {
    /// The shared owner of the bytes.
    pub fn owner(&self) -> &ByteOwner {
        &self.owner
    }

    /// Size of the buffer, alignment padding included.
    pub fn len(&self) -> usize {
        self.owner.bytes().len()
    }

    /// True when no payload was moved.
    pub fn is_empty(&self) -> bool {
        self.tensors == 0
    }

    /// Number of payloads moved into the buffer.
    pub fn tensor_count(&self) -> usize {
        self.tensors
    }

    /// Payload bytes moved (the buffer's length without padding).
    pub fn payload_bytes(&self) -> u64 {
        self.payload_bytes
    }
}

impl std::fmt::Debug for ConsolidatedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsolidatedBuffer")
            .field("len", &self.len())
            .field("tensors", &self.tensors)
            .field("payload_bytes", &self.payload_bytes)
            .finish()
    }
}

fn is_large(raw: Option<&Bytes<'_>>, threshold: usize) -> Option<usize> {
    raw.map(|r| r.len()).filter(|&n| n >= threshold && n > 0)
}

/// Moves every `raw_data` payload of at least `options.raw_data_threshold` bytes into one
/// new buffer, each starting at a multiple of `options.alignment` (the buffer itself is
/// page-aligned), copying in parallel on the current rayon pool. Afterwards those
/// tensors hold [`Bytes::Shared`] slices of the buffer, whatever state they were in.
///
/// # Errors
/// `InvalidOption` for a bad alignment; `ValueOutOfRange` if the layout does not fit the
/// address space; an I/O error if the buffer cannot be allocated.
pub fn consolidate_tensors_to_buffer(
    model: &mut ModelProto<'_>,
    options: &TensorBufferOptions,
) -> Result<ConsolidatedBuffer> {
    options.validate()?;
    let threshold = options.raw_data_threshold;
    let alignment = options.alignment as u64;

    // Layout, in traversal order.
    let mut sources: Vec<&[u8]> = Vec::new();
    let mut offsets: Vec<u64> = Vec::new();
    let mut cursor = 0u64;
    let mut overflow = false;
    model.visit_tensors(|_, t| {
        if let Some(len) = is_large(t.raw_data.as_ref(), threshold) {
            let Some(start) = align_up(cursor, alignment) else {
                overflow = true;
                return;
            };
            offsets.push(start);
            cursor = start.saturating_add(len as u64);
            sources.push(t.raw_data.as_deref().unwrap_or(&[]));
        }
    });
    let too_big = || {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "consolidated payloads larger than the address space",
        })
    };
    if overflow || cursor == u64::MAX {
        return Err(too_big());
    }
    let total = usize::try_from(cursor).map_err(|_| too_big())?;
    let payload_bytes: u64 = sources.iter().map(|s| s.len() as u64).sum();

    // Copy every payload into its place, in parallel.
    let mut buffer = PayloadBuffer::new(total)?;
    {
        let mut rest = buffer.as_mut_slice();
        let mut pos = 0usize;
        let mut jobs: Vec<(&mut [u8], &[u8])> = Vec::with_capacity(sources.len());
        for (src, &off) in sources.iter().zip(&offsets) {
            let off = off as usize; // <= total, which fits in usize
            let (_, tail) = rest.split_at_mut(off - pos);
            let (dst, tail) = tail.split_at_mut(src.len());
            jobs.push((dst, src));
            rest = tail;
            pos = off + src.len();
        }
        jobs.into_par_iter()
            .with_min_len(1)
            .for_each(|(dst, src)| dst.copy_from_slice(src));
    }
    let tensors = sources.len();
    drop(sources);
    let owner = buffer.freeze()?;

    // Point each tensor at its slice, in the same traversal order.
    let mut next = 0usize;
    model.try_visit_tensors_mut(|_, t| -> Result<()> {
        if let Some(len) = is_large(t.raw_data.as_ref(), threshold) {
            let start = offsets[next] as usize;
            next += 1;
            t.raw_data = Some(Bytes::Shared(SharedBytes::new(
                owner.clone(),
                start..start + len,
            )?));
        }
        Ok(())
    })?;
    Ok(ConsolidatedBuffer {
        owner,
        tensors,
        payload_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Decode, Message};
    use crate::onnx::{DataType, GraphProto, ModelProto, TensorProto};

    fn model() -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        for (i, n) in [3000usize, 10, 5000, 1024, 1023].into_iter().enumerate() {
            g.initializer.push(TensorProto::from_raw(
                format!("t{i}"),
                DataType::Uint8,
                [n as i64],
                vec![i as u8 + 1; n],
            ));
        }
        ModelProto::new(g, vec![])
    }

    #[test]
    fn large_payloads_move_to_one_aligned_buffer_and_small_ones_stay() {
        let mut m = model();
        let before = m.clone();
        let buf = consolidate_tensors_to_buffer(
            &mut m,
            &TensorBufferOptions {
                raw_data_threshold: 1024,
                alignment: 4096,
            },
        )
        .unwrap();
        assert_eq!(m, before);
        assert_eq!(buf.tensor_count(), 3);
        assert_eq!(buf.payload_bytes(), 3000 + 5000 + 1024);
        let base = buf.owner().bytes().as_ptr() as usize;
        for t in m.tensors() {
            let raw = t.raw_data.as_ref().unwrap();
            if raw.len() >= 1024 {
                assert!(raw.is_shared());
                assert_eq!((raw.as_ptr() as usize - base) % 4096, 0);
            } else {
                assert!(raw.is_owned());
            }
        }
    }

    #[test]
    fn tensors_stay_valid_after_the_handle_is_dropped() {
        let mut m = model();
        let buf = consolidate_tensors_to_buffer(&mut m, &TensorBufferOptions::LOAD).unwrap();
        drop(buf);
        assert_eq!(
            m.tensors()[0].raw_data.as_deref().unwrap(),
            &[1u8; 3000][..]
        );
    }

    #[test]
    fn a_borrowed_model_becomes_owned_without_copying_payloads_twice() {
        let bytes = model().encode_to_vec().unwrap();
        let mut view = ModelProto::decode(&bytes).unwrap();
        consolidate_tensors_to_buffer(&mut view, &TensorBufferOptions::LOAD).unwrap();
        let owned: ModelProto<'static> = crate::IntoOwned::into_owned(view);
        drop(bytes);
        assert_eq!(owned, model());
        assert!(owned.tensors()[0].raw_data.as_ref().unwrap().is_shared());
    }

    #[test]
    fn invalid_alignment_is_an_error_not_a_fix() {
        let mut m = model();
        let err = consolidate_tensors_to_buffer(
            &mut m,
            &TensorBufferOptions {
                raw_data_threshold: 1,
                alignment: 48,
            },
        )
        .unwrap_err();
        assert!(matches!(
            err.kind(),
            ErrorKind::InvalidOption {
                name: "alignment",
                ..
            }
        ));
    }

    #[test]
    fn the_default_options_move_every_payload_unaligned() {
        let mut m = model();
        let before = m.clone();
        let buf = consolidate_tensors_to_buffer(&mut m, &TensorBufferOptions::default()).unwrap();
        assert_eq!(m, before);
        assert_eq!(buf.tensor_count(), 5);
        // Alignment 0 packs the payloads one after another.
        assert_eq!(buf.len(), 3000 + 10 + 5000 + 1024 + 1023);
        assert!(m
            .tensors()
            .iter()
            .all(|t| t.raw_data.as_ref().unwrap().is_shared()));
    }
}
