//! Library errors as Python exceptions. The classes live in `onnx_light.onnx._errors`
//! (Python, so that they can derive from both `Error` and `ValueError`/`OSError`); each
//! carries the library's message unchanged.

use onnx_light::{Error, ErrorKind, ExternalDataRule, Limit, TextFormat};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The exception class name for an error kind.
fn class_name(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::Io(_) => "FileError",
        ErrorKind::InvalidOption { .. } => "OptionError",
        ErrorKind::InvalidExternalData { .. }
        | ErrorKind::ChecksumMismatch { .. }
        | ErrorKind::ExternalDataNotLoaded { .. } => "ExternalDataError",
        ErrorKind::NotEncrypted
        | ErrorKind::EncryptedInput { .. }
        | ErrorKind::UnsupportedEncryption { .. }
        | ErrorKind::WrongPassphraseOrCorrupted
        | ErrorKind::TruncatedEncryption
        | ErrorKind::TrailingBytes
        | ErrorKind::UnauthenticatedEncryption { .. } => "EncryptionError",
        ErrorKind::TensorDataMismatch { .. }
        | ErrorKind::UnsupportedDataType { .. }
        | ErrorKind::ElementTypeMismatch { .. } => "TensorDataError",
        ErrorKind::Inference { .. } | ErrorKind::GraphInference { .. } => "InferenceError",
        ErrorKind::InvalidModel { .. } => "ValidationError",
        ErrorKind::GraphEdit { .. } => "GraphEditError",
        _ => "DecodeError",
    }
}

/// The external-data rule an error reports (`ExternalDataError.rule` in Python).
fn external_rule(error: &Error) -> Option<ExternalDataRule> {
    match error.kind() {
        ErrorKind::InvalidExternalData { rule, .. } => Some(*rule),
        ErrorKind::ChecksumMismatch { .. } => Some(ExternalDataRule::ChecksumMismatch),
        _ => None,
    }
}

/// What a Python caller passes to `load` to lift a default limit that refused a model,
/// chosen from the limit the error records, never from its words.
fn python_hint(error: &Error) -> Option<&'static str> {
    match error.limit()? {
        Limit::MaxMemory => Some(
            "if you trust the model, pass max_memory=None (no limit) or a larger size in bytes",
        ),
        Limit::Aliasing => Some("pass allow_aliasing=True if the tensors share bytes on purpose"),
        _ => None,
    }
}

/// The Python exception for a library error. An I/O error becomes the `FileError`
/// subclass of its error number, with `errno`, `strerror` and `filename` set as the
/// built-in `OSError` sets them (`_errors._file_error` picks the class).
pub fn to_py_err(error: Error) -> PyErr {
    let mut message = error.to_string();
    if let Some(hint) = python_hint(&error) {
        message = format!("{message}; {hint}");
    }
    Python::attach(|py| {
        let module = py.import("onnx_light.onnx._errors");
        let made = module.and_then(|m| match error.kind() {
            ErrorKind::Io(kind) => {
                let source = error.io_error();
                let errno = source.and_then(std::io::Error::raw_os_error);
                let strerror = source.map(|e| os_message(e, errno));
                // A `str`, as `OSError.filename` usually is (not a `pathlib.Path`).
                let filename = error.file().map(|f| f.as_os_str().to_os_string());
                m.getattr("_file_error")?.call1((
                    message.clone(),
                    errno,
                    format!("{kind:?}"),
                    strerror,
                    filename,
                ))
            }
            ErrorKind::InvalidExternalData { .. } | ErrorKind::ChecksumMismatch { .. } => {
                m.getattr(class_name(&error))?.call1((
                    message.clone(),
                    external_rule(&error).map(ExternalDataRule::name),
                ))
            }
            ErrorKind::InvalidText {
                format,
                line,
                column,
                message: what,
            } => {
                let format = match format {
                    TextFormat::Json => "json",
                    _ => "textproto",
                };
                m.getattr("_text_error")?
                    .call1((format, what.clone(), *line, *column))
            }
            _ => m.getattr(class_name(&error))?.call1((message.clone(),)),
        });
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// An I/O error's own words, as `OSError.strerror` holds them: without the
/// ` (os error N)` that Rust appends to an operating-system error.
fn os_message(error: &std::io::Error, errno: Option<i32>) -> String {
    let text = error.to_string();
    match errno {
        Some(n) => text
            .strip_suffix(&format!(" (os error {n})"))
            .map_or(text.clone(), str::to_string),
        None => text,
    }
}

/// An error raised with the GIL released, while a model's lock may be held: it becomes
/// a Python exception (which needs the GIL) only after the section returns. Converting
/// it inside would take the GIL while holding the lock, and deadlock against a thread
/// that holds the GIL and waits for that lock.
pub enum Failure {
    /// A library error, converted by [`to_py_err`] once the GIL is held.
    Library(Error),
    /// A Python exception made without the GIL (a lazily built one).
    Python(PyErr),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Library(e)
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Python(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Library(e) => to_py_err(e),
            Failure::Python(e) => e,
        }
    }
}
