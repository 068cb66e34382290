//! Mapped loads for the tests and the benchmarks (`bench/`): the one place either
//! calls the `unsafe` `io::load_mapped`.
#![allow(unsafe_code)]

use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;

/// `io::load_mapped` for the tests and benchmarks. Its contract is the caller's: map
/// only a file (and data files) the test or benchmark wrote itself in a scratch directory
/// of its own and does not truncate or rewrite while the model lives. The one exception is
/// `tests/mmap_hazards.rs`, which breaks it on purpose, in a child process, to show what
/// happens.
pub fn load_mapped(path: impl AsRef<Path>, options: &ParseOptions) -> onnx_light::Result<Model> {
    // SAFETY: see the function's documentation: every caller maps files it owns and
    // leaves them alone while the model lives (or, in `mmap_hazards`, breaks the
    // contract in a child process whose death is the expected outcome).
    unsafe { io::load_mapped(path, options) }
}

/// How a test loads a file: through the safe `io::load_with`, or mapped.
#[derive(Debug, Clone)]
pub enum Load {
    /// `io::load_with(path, options)`.
    With(ParseOptions),
    /// [`load_mapped`]`(path, options)`.
    Mapped(ParseOptions),
}

impl Load {
    /// Loads `path` this way.
    pub fn load(&self, path: impl AsRef<Path>) -> onnx_light::Result<Model> {
        match self {
            Load::With(o) => io::load_with(path, o),
            Load::Mapped(o) => load_mapped(path, o),
        }
    }

    /// The options.
    pub fn options(&self) -> &ParseOptions {
        match self {
            Load::With(o) | Load::Mapped(o) => o,
        }
    }

    /// The same way of loading with the options changed by `f`.
    pub fn with_options(&self, f: impl FnOnce(ParseOptions) -> ParseOptions) -> Load {
        match self {
            Load::With(o) => Load::With(f(o.clone())),
            Load::Mapped(o) => Load::Mapped(f(o.clone())),
        }
    }
}
