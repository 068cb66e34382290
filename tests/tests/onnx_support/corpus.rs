//! Fetching the ONNX backend node-test corpus (the `onnx/backend/test/data/node` tree of
//! the official `onnx` wheel) on first use; shared by the tests that read it.

use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;

use onnx_light_tests::python::{
    lock_file, pip, python, python_dir, run_command, run_python, workspace_root,
};

/// The `onnx` release whose corpus is tested.
pub const ONNX_VERSION: &str = "1.22.0";
/// Environment variable naming an existing corpus `node` directory.
pub const CORPUS_ENV: &str = "ONNX_LIGHT_ONNX_CORPUS";

/// Every test of the corpus that has a model: its directory, its name and the model.
pub fn corpus_models() -> impl Iterator<Item = (PathBuf, String, onnx_light::onnx::Model)> {
    use onnx_light::prelude::*;
    fs::read_dir(corpus_dir())
        .expect("list the corpus")
        .filter_map(|entry| {
            let test = entry.expect("a corpus entry").path();
            let bytes = fs::read(test.join("model.onnx")).ok()?;
            let model = onnx_light::onnx::Model::decode_owned(&bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", test.display()));
            let name = test.file_name()?.to_string_lossy().into_owned();
            Some((test, name, model))
        })
}

// ---------------------------------------------------------------------------------------
// Fetching the corpus.

/// The corpus `node` directory, fetched and extracted on first use.
pub fn corpus_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| match std::env::var_os(CORPUS_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => fetch_corpus(),
    })
    .clone()
}

fn fetch_corpus() -> PathBuf {
    let target = workspace_root().join("target");
    fs::create_dir_all(&target).expect("create target/");
    let dest = target.join("onnx-corpus");
    let marker = dest.join(".complete");
    let marker_text = format!("onnx=={ONNX_VERSION} onnx/backend/test/data/node\n");

    let lock_path = target.join("onnx-corpus.lock");
    let lock = lock_file(&lock_path);

    if fs::read_to_string(&marker).is_ok_and(|m| m == marker_text) {
        return dest.join("node");
    }

    let wheel_dir = target.join("onnx-1.22-wheel");
    let find_wheel = || -> Option<PathBuf> {
        fs::read_dir(&wheel_dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with(&format!("onnx-{ONNX_VERSION}-")) && n.ends_with(".whl")
                })
            })
    };
    let wheel = match find_wheel() {
        Some(w) => w,
        None => {
            run_command(
                pip(&python(), "download")
                    .arg(format!("onnx=={ONNX_VERSION}"))
                    .args(["--no-deps", "--only-binary=:all:"])
                    .args(["--python-version", "3.11", "--implementation", "cp"])
                    .args(["--abi", "cp311", "--platform", "manylinux_2_28_x86_64"])
                    .arg("-d")
                    .arg(&wheel_dir),
            );
            find_wheel().unwrap_or_else(|| {
                panic!("pip download left no onnx wheel in {}", wheel_dir.display())
            })
        }
    };

    // Extract next to the destination, then move into place: an interrupted run
    // leaves no half-extracted corpus behind a marker.
    let tmp = target.join("onnx-corpus.tmp");
    let _ = fs::remove_dir_all(&tmp);
    let _ = fs::remove_dir_all(&dest);
    run_python(
        &python_dir().join("onnx_corpus.py"),
        &["extract".as_ref(), wheel.as_os_str(), tmp.as_os_str()],
    );
    fs::rename(&tmp, &dest).expect("move the extracted corpus into place");
    fs::write(&marker, marker_text).expect("write the corpus marker");
    drop(lock);
    dest.join("node")
}
