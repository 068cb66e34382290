//! The tour's mapped load: the one place the tool maps a file. Every other command reads
//! files (or their structure only), so that a file another program truncates or rewrites
//! while a command runs gives an error, never a crash.
#![allow(unsafe_code)]

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;

use crate::scratch::ScratchDir;

/// Loads the file `name` of the tour's scratch directory with `io::load_mapped`.
pub fn load_own_file(
    dir: &ScratchDir,
    name: &str,
    options: &ParseOptions,
) -> onnx_light::Result<Model> {
    // SAFETY: `load_mapped` needs the file (and any data file) not to be truncated or
    // rewritten in place while the model lives. The file is in a directory this process
    // created fresh, with an unpredictable name and mode 0700 (`ScratchDir`), and was
    // written there by the tour as one file without external data; the tour itself only
    // replaces it by renaming a new file over it (saves are atomic), which leaves a map
    // of the old file intact. No other program has a reason or a name to write it.
    unsafe { io::load_mapped(dir.path().join(name), options) }
}
