// Mapping a file is the caller's promise that nothing truncates or rewrites it: a call
// outside an `unsafe` block does not compile.
use onnx_light::io::{self, ParseOptions};

fn main() {
    let _ = io::load_mapped("model.onnx", &ParseOptions::default());
}
