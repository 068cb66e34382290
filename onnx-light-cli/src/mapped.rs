//! The tour's mapped load: the one place the tool maps a file. Every other command reads
//! files (or their structure only), so that a file another program truncates or rewrites
//! while a command runs gives an error, never a crash.
#![allow(unsafe_code)]

use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;

/// Loads `path`, a file in the tour's own directory (the current directory while the
/// tour runs), with `io::load_mapped`.
pub fn load_own_file(path: &Path, options: &ParseOptions) -> onnx_light::Result<Model> {
    // SAFETY: `load_mapped` needs the file (and any data file) not to be truncated or
    // rewritten in place while the model lives. The file is in a directory this process
    // created fresh, with an unpredictable name and mode 0700 (`ScratchDir`), and was
    // written there by the tour; the tour only replaces files by renaming new ones over
    // them (saves are atomic), which leaves a map of the old file intact, and drops
    // every mapped model before its next step. No other program has a reason or a name
    // to write it.
    unsafe { io::load_mapped(path, options) }
}
