//! The Python package `onnx_light` (`onnx-light-python/`): builds its wheel with maturin
//! (release profile, in its own target directory so that it never waits on the lock of
//! the `cargo test` that runs this), installs it into a private directory (never into
//! the shared venv), and runs its pytest suite (`onnx-light-python/tests`) with the
//! managed interpreter, which has `onnx`, `onnxruntime`, `onnx_ir`, `maturin` and `pytest` from
//! `tests/python/requirements.txt`.

use std::fs;
use std::path::Path;
use std::process::Command;

use onnx_light_tests::python::{pip, python, run_command, workspace_root};

fn only_wheel(dir: &Path) -> std::path::PathBuf {
    let wheels: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(
        wheels.len(),
        1,
        "expected one wheel in {}: {wheels:?}",
        dir.display()
    );
    wheels.into_iter().next().expect("one wheel")
}

#[test]
fn python_package_passes_its_pytest_suite() {
    let root = workspace_root();
    let python = python();
    let work = root.join("target").join("python-package");
    let wheels = work.join("wheels");
    let site = work.join("site");
    for dir in [&wheels, &site] {
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    }

    run_command(
        Command::new(&python)
            .args([
                "-m",
                "maturin",
                "build",
                "--release",
                "--locked",
                "--quiet",
                "-o",
            ])
            .arg(&wheels)
            .arg("-m")
            .arg(root.join("onnx-light-python").join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", work.join("cargo-target"))
            .current_dir(&root),
    );

    run_command(
        pip(&python, "install")
            .args(["--no-deps", "--target"])
            .arg(&site)
            .arg(only_wheel(&wheels)),
    );

    run_command(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(root.join("onnx-light-python").join("tests"))
            .env("PYTHONPATH", &site)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(&work),
    );
}
