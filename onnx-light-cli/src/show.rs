//! `onnx-light show`: a model in the ONNX text syntax, as `onnx.printer.to_text` prints
//! it, with each tensor's values cut after the first few (`--full`: exactly as the
//! printer, every weight written out); external tensors as their `external_data`
//! entries, since their files are not read.

use std::io::{self, Write};
use std::path::Path;

use onnx_light::io::ParseOptions;
use onnx_light::text::{self, PrintOptions};

/// The values of each tensor that `show` prints without `--full`.
pub const SHOWN_VALUES: usize = 16;

pub fn run(
    model: &Path,
    full: bool,
    options: &ParseOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let s = text(model, full, options)?;
    let mut out = io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        // `show MODEL | head` closes the pipe early: not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// What `show` prints, ending with a newline.
pub fn text(
    model: &Path,
    full: bool,
    options: &ParseOptions,
) -> Result<String, Box<dyn std::error::Error>> {
    // Read, never mapped (the file may change while it prints), and external files left
    // alone: the printer shows where external weights are, not their values.
    let options = options.clone().load_external_data(false);
    let model = crate::source::load_with(model, &options)?;
    let print = PrintOptions::default().max_tensor_values((!full).then_some(SHOWN_VALUES));
    let mut s = text::to_text_with(&model, &print)?;
    s.push('\n');
    Ok(s)
}
