//! Shape inference for Python: `onnx_light.onnx.shape_inference` (in
//! `python/onnx_light/onnx/`) calls these.

use onnx_light::onnx::{AttributeProto, FunctionProto, ModelProto, TypeProto};
use onnx_light::shape::{self, InferOptions};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::message::{wrap, PyMessage};
use crate::tools::with_message;

/// A copy of the message behind `obj`, which must be a `T` (`what` names it in the
/// error).
pub(crate) fn copy_of<T: Clone + Send + 'static>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &'static str,
) -> PyResult<T> {
    with_message(py, obj, |m| {
        m.as_any()
            .downcast_ref::<T>()
            .cloned()
            .ok_or_else(|| PyTypeError::new_err(format!("expected a {what}")).into())
    })
}

/// The model `model` is with the types inference finds recorded in it (a new model;
/// `model` is not changed).
#[pyfunction]
#[pyo3(signature = (model, check_type, strict_mode, data_prop = false))]
pub fn infer_shapes(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    check_type: bool,
    strict_mode: bool,
    data_prop: bool,
) -> PyResult<Py<PyAny>> {
    let mut model: ModelProto<'static> = copy_of(py, model, "ModelProto")?;
    let options = InferOptions::default()
        .strict_mode(strict_mode)
        .check_type(check_type)
        .data_prop(data_prop);
    py.detach(|| shape::infer_shapes(&mut model, &options))
        .map_err(crate::errors::to_py_err)?;
    wrap(py, PyMessage::from_box(Box::new(model)))
}

/// The output types of `function` called with `input_types` and `attributes`.
#[pyfunction]
pub fn infer_function_output_types(
    py: Python<'_>,
    function: &Bound<'_, PyAny>,
    input_types: Vec<Bound<'_, PyAny>>,
    attributes: Vec<Bound<'_, PyAny>>,
) -> PyResult<Vec<Py<PyAny>>> {
    let function: FunctionProto<'static> = copy_of(py, function, "FunctionProto")?;
    let input_types = input_types
        .iter()
        .map(|t| copy_of::<TypeProto<'static>>(py, t, "TypeProto"))
        .collect::<PyResult<Vec<_>>>()?;
    let attributes = attributes
        .iter()
        .map(|a| copy_of::<AttributeProto<'static>>(py, a, "AttributeProto"))
        .collect::<PyResult<Vec<_>>>()?;
    let types = py
        .detach(|| shape::infer_function_output_types(&function, &input_types, &attributes))
        .map_err(crate::errors::to_py_err)?;
    types
        .into_iter()
        .map(|t| wrap(py, PyMessage::from_box(Box::new(t))))
        .collect()
}
