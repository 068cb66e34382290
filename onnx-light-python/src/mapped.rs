//! The binding's two uses of `unsafe`, each a promise the Python caller makes by asking
//! for it: `load(path, no_copy=True)` maps a file, and `from_array(a, copy=False)` reads
//! a NumPy array's memory in place.
#![allow(unsafe_code)]

use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;
use onnx_light::SharedOwner;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Loads `path` with `io::load_mapped`, for a Python caller who asked for `no_copy=True`.
pub fn load_mapped(path: &Path, options: &ParseOptions) -> onnx_light::Result<Model> {
    // SAFETY: `load_mapped` needs the model file and its data files not to be truncated
    // or rewritten in place while the model lives. Python has no `unsafe`, so the promise
    // is the Python caller's, made by passing `no_copy=True` (off by default), whose
    // docstring and the README state the hazard, as `numpy.memmap`'s do. What the binding
    // adds keeps its own side of it: the model is never written through (payloads are
    // read-only, NumPy views of them too) and this package's saves replace files by
    // renaming, never in place.
    unsafe { io::load_mapped(path, options) }
}

/// The memory of a C-contiguous `numpy.ndarray`, shared with a tensor: the array is kept
/// alive (and with it the buffer it views) for as long as any payload uses the bytes.
pub struct ArrayMemory {
    _array: Py<PyAny>,
    address: usize,
    len: usize,
}

impl ArrayMemory {
    /// The bytes of `array`, which must be a `numpy.ndarray` itself (not a subclass,
    /// which could describe its memory differently) laid out C-contiguously; `TypeError`
    /// or `ValueError` otherwise. Empty arrays give no memory to share (`None`).
    pub fn of(array: &Bound<'_, PyAny>) -> PyResult<Option<ArrayMemory>> {
        let py = array.py();
        let ndarray = py.import("numpy")?.getattr("ndarray")?;
        if !array.get_type().is(&ndarray) {
            return Err(PyTypeError::new_err("expected a numpy.ndarray"));
        }
        if !array
            .getattr("flags")?
            .getattr("c_contiguous")?
            .extract::<bool>()?
        {
            return Err(PyValueError::new_err("the array is not C-contiguous"));
        }
        let len: usize = array.getattr("nbytes")?.extract()?;
        if len == 0 {
            return Ok(None);
        }
        let address: usize = array
            .getattr("__array_interface__")?
            .get_item("data")?
            .get_item(0)?
            .extract()?;
        Ok(Some(ArrayMemory {
            _array: array.clone().unbind(),
            address,
            len,
        }))
    }
}

impl SharedOwner for ArrayMemory {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `address` and `len` are NumPy's own description of a C-contiguous
        // `ndarray` (the exact class, so NumPy's code answered): `len` bytes from
        // `address` belong to the array's buffer, which the held reference keeps
        // allocated; an ndarray never moves its data (its `data` attribute cannot be
        // assigned, and `resize` refuses while we hold a reference unless the caller
        // passes `refcheck=False`, which NumPy documents as unsafe). The bytes may change
        // while a tensor holds them: Python code may write to a writable array; the
        // docstring of `from_array(copy=False)` tells callers not to write while a save
        // or serialization reads it, the same promise a mapped file asks for.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }
}
