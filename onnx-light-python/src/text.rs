//! protobuf's text encodings for Python: `str()` / `repr()` of messages (the text
//! format, as protobuf shows a message) and the `textproto` and `json` formats of
//! `onnx_light.onnx.serialization`, all through `onnx_light::formats`.

use onnx_light::formats::textproto::Style;
use onnx_light::formats::{json, textproto, TypeRegistry};
use onnx_light::TextFormat;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::api::decode_message;
use crate::errors::Failure;
use crate::reflect::{descriptor, Reflect};
use crate::tools::with_message;

/// The text format of `msg` as `str(message)` shows it with protobuf's upb runtime.
pub fn format_message(msg: &dyn Reflect) -> Result<String, Failure> {
    let desc = descriptor(msg.proto_name()).expect("known type");
    Ok(textproto::print_encoded(
        &msg.encode()?,
        desc,
        TypeRegistry::onnx(),
        Style::Upb,
    )?)
}

fn format_of(name: &str) -> PyResult<TextFormat> {
    match name {
        "textproto" => Ok(TextFormat::TextProto),
        "json" => Ok(TextFormat::Json),
        _ => Err(PyValueError::new_err(format!(
            "unknown text encoding {name:?}: \"textproto\" or \"json\""
        ))),
    }
}

/// A message in protobuf's text format (`"textproto"`) or JSON mapping (`"json"`).
#[pyfunction]
pub fn message_to_text(py: Python<'_>, msg: &Bound<'_, PyAny>, format: &str) -> PyResult<String> {
    let format = format_of(format)?;
    with_message(py, msg, |m| {
        let desc = descriptor(m.proto_name()).expect("known type");
        let bytes = m.encode()?;
        Ok(match format {
            TextFormat::Json => json::print_encoded(&bytes, desc, TypeRegistry::onnx())?,
            _ => textproto::print_encoded(&bytes, desc, TypeRegistry::onnx(), Style::TextFormat)?,
        })
    })
}

/// A message of type `name` read from protobuf's text format or JSON mapping.
#[pyfunction]
pub fn message_from_text(
    py: Python<'_>,
    name: &str,
    text: &str,
    format: &str,
) -> PyResult<Py<PyAny>> {
    let format = format_of(format)?;
    let desc = descriptor(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown message type {name:?}")))?;
    let bytes = py
        .detach(|| match format {
            TextFormat::Json => json::parse_to_encoded(text, desc, TypeRegistry::onnx()),
            _ => textproto::parse_to_encoded(text, desc, TypeRegistry::onnx()),
        })
        .map_err(crate::errors::to_py_err)?;
    decode_message(py, name, &bytes)
}
