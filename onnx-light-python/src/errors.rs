//! Library errors as Python exceptions. The classes live in `onnx_light.onnx._errors`
//! (Python, so that they can derive from both `Error` and `ValueError`/`OSError`); each
//! carries the library's message unchanged.

use onnx_light::{Error, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The exception class name for an error kind.
fn class_name(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::Io(std::io::ErrorKind::AlreadyExists) => "DataFileExistsError",
        ErrorKind::Io(_) => "FileError",
        ErrorKind::InvalidOption { .. } => "OptionError",
        ErrorKind::InvalidExternalData { .. }
        | ErrorKind::ChecksumMismatch { .. }
        | ErrorKind::ExternalDataNotLoaded { .. } => "ExternalDataError",
        ErrorKind::NotEncrypted
        | ErrorKind::UnsupportedEncryption { .. }
        | ErrorKind::WrongPassphraseOrCorrupted
        | ErrorKind::TruncatedEncryption
        | ErrorKind::UnauthenticatedEncryption { .. } => "EncryptionError",
        ErrorKind::TensorDataMismatch { .. }
        | ErrorKind::UnsupportedDataType { .. }
        | ErrorKind::ElementTypeMismatch { .. } => "TensorDataError",
        _ => "DecodeError",
    }
}

/// The Python exception for a library error.
pub fn to_py_err(error: Error) -> PyErr {
    let name = class_name(&error);
    let message = error.to_string();
    Python::attach(|py| {
        let class = py
            .import("onnx_light.onnx._errors")
            .and_then(|m| m.getattr(name));
        match class {
            Ok(class) => match class.call1((message.clone(),)) {
                Ok(exc) => PyErr::from_value(exc),
                Err(e) => e,
            },
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}
