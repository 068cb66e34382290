//! `load(path, no_copy=True)`: the one place the binding maps a file.
#![allow(unsafe_code)]

use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;

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
