//! Verdicts on model files from `onnx.checker.check_model` and from
//! `onnx_light::checker`, for tests that compare the two.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use onnx_light::checker::{self, CheckOptions};
use onnx_light::onnx::ModelProto;
use onnx_light::shape::{infer_shapes, InferOptions};
use onnx_light::Decode;

use crate::python::{python_dir, run_python};

/// onnx's verdict for each file: `Ok(())` or `Err(message)`.
///
/// # Panics
/// When the script fails or gives no verdict for a file.
pub fn onnx_verdicts(paths: &[PathBuf], scratch: &Path) -> Vec<Result<(), String>> {
    verdicts(paths, scratch, false)
}

/// onnx's verdict for each file with `full_check=True`: the checker, then strict shape
/// inference with type checks.
///
/// # Panics
/// When the script fails or gives no verdict for a file.
pub fn onnx_full_verdicts(paths: &[PathBuf], scratch: &Path) -> Vec<Result<(), String>> {
    verdicts(paths, scratch, true)
}

fn verdicts(paths: &[PathBuf], scratch: &Path, full: bool) -> Vec<Result<(), String>> {
    let list = scratch.join("paths.txt");
    let text: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
    fs::write(&list, text).expect("write the path list");
    let arg = format!("@{}", list.display());
    let mut args = vec![OsStr::new(&arg)];
    if full {
        args.insert(0, OsStr::new("--full"));
    }
    let out = run_python(&python_dir().join("checker_verdicts.py"), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut verdicts = HashMap::new();
    for line in stdout.lines() {
        let mut parts = line.splitn(3, '\t');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("ok"), Some(p), _) => {
                verdicts.insert(p.to_string(), Ok(()));
            }
            (Some("error"), Some(p), m) => {
                verdicts.insert(p.to_string(), Err(m.unwrap_or("").to_string()));
            }
            _ => {} // onnx prints warnings (experimental operators) on stdout
        }
    }
    paths
        .iter()
        .map(|p| {
            verdicts
                .remove(&p.display().to_string())
                .unwrap_or_else(|| panic!("no verdict for {}", p.display()))
        })
        .collect()
}

/// Our verdict on a model file: decoded, then checked with its directory.
///
/// # Errors
/// The decode error or the problems found, as text.
pub fn our_verdict(path: &Path) -> Result<(), String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let model = ModelProto::decode(&bytes).map_err(|e| format!("decode: {e}"))?;
    let options = CheckOptions::default().model_dir(path.parent().unwrap());
    checker::check_model_with(&model, &options).map_err(|p| p.to_string())
}

/// Our verdict with the full check, as `checker.check_model(full_check=True)` gives it:
/// [`our_verdict`], then strict shape inference with type checks.
///
/// # Errors
/// The decode error, the problems found, or the inference error, as text.
pub fn our_full_verdict(path: &Path) -> Result<(), String> {
    our_verdict(path)?;
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let mut model = ModelProto::decode(&bytes).map_err(|e| format!("decode: {e}"))?;
    let options = InferOptions::default().strict_mode(true).check_type(true);
    infer_shapes(&mut model, &options).map_err(|e| e.to_string())
}
