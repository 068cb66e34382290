//! Where a command reads its model from: a local path, or a URL (`s3://`, `gs://`,
//! `az://`, `http(s)://`, `file://`) read through `onnx_light::remote`.

use std::path::Path;

use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;
use onnx_light::remote::{self, RemoteOptions};

/// The URL `path` spells, when it is one.
pub fn url(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| remote::is_url(s))
}

/// Loads the model at `path` (a file or a URL) as `options` say.
pub fn load_with(path: &Path, options: &ParseOptions) -> onnx_light::Result<Model> {
    match url(path) {
        Some(url) => remote::load_with(url, &RemoteOptions::default().parse(options.clone())),
        None => io::load_with(path, options),
    }
}

/// The size in bytes of the file or object at `path` (0 when it cannot be asked).
pub fn size(path: &Path) -> u64 {
    match url(path) {
        Some(url) => remote::size(url).unwrap_or(0),
        None => std::fs::metadata(path).map_or(0, |m| m.len()),
    }
}
