//! Function inlining for Python: `onnx_light.onnx.inliner` (in `python/onnx_light/onnx/`)
//! calls these.

use onnx_light::inline::{self, FunctionSelection, InlineError};
use onnx_light::onnx::ModelProto;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::message::{wrap, PyMessage};
use crate::shape::copy_of;

/// The Python exception for an inlining error: `ValidationError` for what
/// `onnx.checker` refuses (call cycles, duplicated functions), `InlineNotImplementedError`
/// (a `NotImplementedError`) for what is not implemented, `InlineError` (a
/// `RuntimeError`, as `onnx` raises) for the rest.
fn to_py_err(error: InlineError) -> PyErr {
    let class = match error {
        InlineError::InvalidFunctions { .. } => "ValidationError",
        InlineError::ContextDependentFunction { .. } => "InlineNotImplementedError",
        _ => "InlineError",
    };
    let message = error.to_string();
    Python::attach(|py| {
        let made = py
            .import("onnx_light.onnx._errors")
            .and_then(|m| m.getattr(class)?.call1((message.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// A new model: `model` with its local functions inlined (see
/// `onnx_light::inline::inline_local_functions`).
#[pyfunction]
pub fn inline_local_functions(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    convert_version: bool,
) -> PyResult<Py<PyAny>> {
    let mut model: ModelProto<'static> = copy_of(py, model, "ModelProto")?;
    py.detach(|| inline::inline_local_functions(&mut model, convert_version))
        .map_err(to_py_err)?;
    wrap(py, PyMessage::from_box(Box::new(model)))
}

/// A new model: `model` with the selected functions inlined (see
/// `onnx_light::inline::inline_selected_functions`).
#[pyfunction]
pub fn inline_selected_functions(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    function_ids: Vec<(String, String)>,
    exclude: bool,
    inline_schema_functions: bool,
) -> PyResult<Py<PyAny>> {
    let mut model: ModelProto<'static> = copy_of(py, model, "ModelProto")?;
    let selection = if exclude {
        FunctionSelection::all_except(function_ids)
    } else {
        FunctionSelection::only(function_ids)
    };
    py.detach(|| {
        inline::inline_selected_functions(&mut model, &selection, inline_schema_functions)
    })
    .map_err(to_py_err)?;
    wrap(py, PyMessage::from_box(Box::new(model)))
}
