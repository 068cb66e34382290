//! `onnx-light show`: a model in the ONNX text syntax, exactly as `onnx.printer.to_text`
//! prints it (every weight written out; external tensors as their `external_data`
//! entries, since their files are not read).

use std::io::{self, Write};
use std::path::Path;

use onnx_light::io::{self as olio, ParseOptions};
use onnx_light::text;

pub fn run(model: &Path, options: &ParseOptions) -> Result<(), Box<dyn std::error::Error>> {
    // Mapped, not copied, and external files left alone: the printer shows where
    // external weights are, not their values.
    let options = options.clone().no_copy(true).load_external_data(false);
    let model = olio::load_with(model, &options)?;
    let mut s = text::to_text(&model)?;
    s.push('\n');
    let mut out = io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        // `show MODEL | head` closes the pipe early: not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
