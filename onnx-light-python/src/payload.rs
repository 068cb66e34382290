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

use onnx_light::onnx::{DataType, TensorProto};
use onnx_light::tensor::DataSource;
use onnx_light::{Bytes, OwnedBytes, SharedBytes, SharedOwner};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict};

use crate::errors::Failure;
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

    /// The address of the first byte.
    #[getter]
    fn address(&self) -> usize {
        self.bytes.as_slice().as_ptr() as usize
    }
}

/// Owned payload storage moved into a shared owner as it is (an aligned buffer keeps its
/// alignment). It is never written to once shared, so its bytes stay where they are.
struct Held(OwnedBytes);

impl SharedOwner for Held {
    fn bytes(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// `raw` as shared bytes: a shared payload is cloned (a reference count), an owned or
/// borrowed one is moved into a shared owner and left in `raw` as that owner's slice, so
/// that the tensor and every view of it use one buffer.
fn share(raw: &mut Bytes<'static>) -> SharedBytes {
    match raw {
        Bytes::Shared(s) => s.clone(),
        other => {
            let owned = match std::mem::take(other) {
                Bytes::Owned(o) => o,
                rest => OwnedBytes::from_vec(rest.into_vec()),
            };
            let s = SharedBytes::whole(Arc::new(Held(owned)));
            *other = Bytes::Shared(s.clone());
            s
        }
    }
}

/// Runs `f` on the `TensorProto` a view stands for (`None` when unset), with the GIL
/// released and the model locked.
fn with_tensor<R: Send>(
    py: Python<'_>,
    tensor: &Bound<'_, PyMessage>,
    f: impl FnOnce(Option<&mut TensorProto<'static>>) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    let view = tensor.borrow().view_ref();
    let done = py.detach(|| {
        view.with_detached(false, |msg| match msg {
            None => f(None),
            Some(msg) => {
                let t = msg
                    .as_any_mut()
                    .downcast_mut::<TensorProto<'static>>()
                    .ok_or_else(|| PyTypeError::new_err("expected a TensorProto"))?;
                f(Some(t))
            }
        })
    });
    Ok(done?)
}

/// The payload of `tensor.raw_data`, or `None` when it is unset. An owned payload is
/// moved (not copied) into a shared owner first, so that the model and the NumPy array
/// share one buffer; later edits of the tensor replace it and leave the array as it was.
#[pyfunction]
pub fn tensor_payload(py: Python<'_>, tensor: &Bound<'_, PyMessage>) -> PyResult<Option<Payload>> {
    with_tensor(py, tensor, |t| {
        Ok(t.and_then(|t| t.raw_data.as_mut())
            .map(|raw| Payload { bytes: share(raw) }))
    })
}

/// A `TensorProto` named `name` (unset when `None`) of `data_type` and `dims` whose
/// `raw_data` is the memory of `array` itself (a C-contiguous `numpy.ndarray` whose
/// bytes are already in `raw_data` layout: little-endian, one element after the
/// other), not a copy; the tensor keeps the array alive. The length is checked against
/// the shape (`TensorDataError`).
#[pyfunction]
#[pyo3(signature = (array, data_type, dims, name))]
pub fn tensor_sharing_array(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    data_type: i32,
    dims: Vec<i64>,
    name: Option<String>,
) -> PyResult<Py<PyAny>> {
    let data_type = DataType::try_from(data_type)
        .map_err(|_| PyValueError::new_err(format!("unknown data type {data_type}")))?;
    let raw = match crate::mapped::ArrayMemory::of(array)? {
        Some(memory) => Bytes::Shared(SharedBytes::from_owner(memory)),
        None => Bytes::new(),
    };
    let mut t = TensorProto::try_from_raw(String::new(), data_type, dims, raw)
        .map_err(crate::errors::to_py_err)?;
    t.name = name.map(Into::into);
    crate::message::wrap(py, PyMessage::from_box(Box::new(t)))
}

/// Where [`tensor_data`] found a tensor's bytes, decided while the GIL is released.
enum Found {
    /// Bytes that were there already: the tensor's payload, or a mapping of its file.
    Shared(SharedBytes),
    /// Bytes read from a file for this call (a lazy payload that is not mapped).
    Read(SharedBytes),
    /// Bytes encoded from a typed field (`float_data`, ...) for this call.
    Encoded(Vec<u8>),
}

/// A tensor's data type, its dims, and its values as little-endian bytes in `raw_data`
/// layout (sub-byte types packed) wherever the tensor holds them, with whether those
/// bytes existed before the call. The bytes are `(Payload, True)` for `raw_data` (shared
/// as [`tensor_payload`] shares it) and for a lazy payload whose source maps it;
/// `(Payload, False)` for one read from its file now (structure-only loads); `(bytearray, False)`
/// for values encoded from a typed field; `(None, False)` for strings (read
/// `string_data`) and for external data that was never loaded. The length is checked
/// against the shape first. Errors: `ValueError` for a segmented tensor,
/// `TensorDataError` (wrong length, unknown data type), the I/O errors of reading a lazy
/// payload; all name the tensor.
#[pyfunction]
pub fn tensor_data(py: Python<'_>, tensor: &Bound<'_, PyMessage>) -> PyResult<TensorValues> {
    let (data_type, dims, found) = with_tensor(py, tensor, |t| {
        let mut empty = TensorProto::default();
        let t = t.unwrap_or(&mut empty);
        let head = (t.data_type(), t.dims.clone());
        if t.segment.is_some() {
            return Err(PyValueError::new_err("segmented tensors are not supported").into());
        }
        let strings = t.elem_type() == Some(DataType::String);
        let unloaded = t.raw_data.is_none() && t.lazy_data.is_none() && t.is_external();
        if strings || unloaded {
            return Ok((head.0, head.1, None));
        }
        t.validate_data()?;
        if let (DataSource::RawData, Some(raw)) = (t.data_source()?, t.raw_data.as_mut()) {
            return Ok((head.0, head.1, Some(Found::Shared(share(raw)))));
        }
        let data = t.data()?;
        let source = data.source();
        let found = match (source, data.into_bytes()) {
            (DataSource::Lazy, Bytes::Shared(s)) => Found::Shared(s),
            (DataSource::Lazy, other) => Found::Read(share(&mut other.into_owned())),
            (_, other) => Found::Encoded(other.into_vec()),
        };
        Ok((head.0, head.1, Some(found)))
    })?;
    let (buffer, shared) = match found {
        None => (None, false),
        Some(Found::Shared(bytes)) => (Some(Py::new(py, Payload { bytes })?.into_any()), true),
        Some(Found::Read(bytes)) => (Some(Py::new(py, Payload { bytes })?.into_any()), false),
        Some(Found::Encoded(v)) => (Some(PyByteArray::new(py, &v).into_any().unbind()), false),
    };
    Ok((data_type, dims, buffer, shared))
}

/// What [`tensor_data`] returns: data type, dims, the bytes and whether they are shared.
type TensorValues = (i32, Vec<i64>, Option<Py<PyAny>>, bool);

/// A tensor's element count and the bytes of its values in `raw_data` layout (sub-byte
/// types packed; for strings, their total length), from its dims and data type alone
/// (nothing is read). Errors: `TensorDataError` for an unknown data type, and for a
/// negative dimension or a size over 2^64.
#[pyfunction]
pub fn tensor_sizes(py: Python<'_>, tensor: &Bound<'_, PyMessage>) -> PyResult<(u64, u64)> {
    with_tensor(py, tensor, |t| {
        let empty = TensorProto::default();
        let t: &TensorProto<'static> = match t {
            Some(t) => t,
            None => &empty,
        };
        let nbytes = t.byte_size()?;
        // `byte_size` has checked the dims (and the element count's range).
        Ok((t.element_count().unwrap_or(0), nbytes))
    })
}
