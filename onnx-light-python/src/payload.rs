//! Tensor payloads handed to NumPy without a copy. A `Payload` holds a `SharedBytes`
//! (a reference-counted owner plus a range) and describes it to NumPy through
//! `__array_interface__` as read-only memory; NumPy keeps the `Payload` as the array's
//! base, so the owner lives as long as any array made from it.
//!
//! Why this is sound (there is no `unsafe` here, but NumPy reads the address we give):
//! `SharedOwner` implementations must return the same bytes, at the same address, for as
//! long as they live, and a shared payload is never written through (editing a tensor
//! copies first). The address is therefore valid and its bytes fixed while the `Payload`
//! lives, and the array is read-only. Mapped files keep the mapping hazard documented by
//! the library (a file truncated by another process while mapped).

use std::sync::Arc;

use onnx_light::onnx::TensorProto;
use onnx_light::{ByteOwner, Bytes, SharedBytes};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::message::PyMessage;

/// A read-only view of a tensor's `raw_data` that keeps its storage alive.
#[pyclass(module = "onnx_light.onnx", name = "Payload", frozen)]
pub struct Payload {
    bytes: SharedBytes,
}

#[pymethods]
impl Payload {
    fn __len__(&self) -> usize {
        self.bytes.len()
    }

    /// NumPy's array interface: a read-only 1-D `uint8` array over the payload.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("shape", (self.bytes.len(),))?;
        d.set_item("typestr", "|u1")?;
        // The address as an integer, with the read-only flag.
        d.set_item("data", (self.bytes.as_slice().as_ptr() as usize, true))?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    /// A copy of the bytes.
    fn tobytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.bytes.as_slice())
    }

    /// Whether the bytes are shared with a file mapping or buffer (always true once a
    /// payload has been handed out: owned bytes are moved into a shared owner first).
    #[getter]
    fn address(&self) -> usize {
        self.bytes.as_slice().as_ptr() as usize
    }
}

/// The payload of `tensor.raw_data`, or `None` when it is unset. An owned payload is
/// moved (not copied) into a shared owner first, so that the model and the NumPy array
/// share one buffer; later edits of the tensor replace it and leave the array as it was.
#[pyfunction]
pub fn tensor_payload(py: Python<'_>, tensor: &Bound<'_, PyMessage>) -> PyResult<Option<Payload>> {
    let view = tensor.borrow().view_ref();
    let done = py.detach(|| {
        view.with_detached(false, |msg| {
            let Some(msg) = msg else {
                return Ok(None);
            };
            let t = msg
                .as_any_mut()
                .downcast_mut::<TensorProto<'static>>()
                .ok_or_else(|| PyTypeError::new_err("expected a TensorProto"))?;
            let Some(raw) = t.raw_data.as_mut() else {
                return Ok(None);
            };
            let shared = match raw {
                Bytes::Shared(s) => s.clone(),
                other => {
                    let owner: ByteOwner = Arc::new(std::mem::take(other).into_vec());
                    let s = SharedBytes::whole(owner);
                    *other = Bytes::Shared(s.clone());
                    s
                }
            };
            Ok(Some(Payload { bytes: shared }))
        })
    });
    Ok(done?)
}
