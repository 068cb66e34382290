//! Opset version conversion for Python: `onnx_light.onnx.version_converter` (in
//! `python/onnx_light/onnx/`) calls this.

use onnx_light::onnx::ModelProto;
use onnx_light::version_converter;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::message::{wrap, PyMessage};
use crate::shape::copy_of;

/// `ConvertError` (a `RuntimeError`, what `onnx` raises) carrying the converter's
/// message.
fn to_py_err(error: version_converter::VersionConvertError) -> PyErr {
    let message = error.to_string();
    Python::attach(|py| {
        let made = py
            .import("onnx_light.onnx._errors")
            .and_then(|m| m.getattr("ConvertError")?.call1((message.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// A new model: `model` converted to version `target_version` of the ONNX domain
/// (see `onnx_light::version_converter`). `model` is not changed.
#[pyfunction]
pub fn convert_version(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    target_version: i64,
) -> PyResult<Py<PyAny>> {
    let model: ModelProto<'static> = copy_of(py, model, "ModelProto")?;
    let converted = py
        .detach(|| version_converter::convert_version_owned(model, target_version))
        .map_err(to_py_err)?;
    wrap(py, PyMessage::from_box(Box::new(converted)))
}
