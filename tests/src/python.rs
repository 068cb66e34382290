//! The Python interpreter the interop tests run: a virtual environment at
//! `<workspace>/target/interop-venv` with the packages pinned in
//! `tests/python/requirements.txt`, created on first use.
//!
//! Set `ONNX_LIGHT_PYTHON` to an interpreter to use it instead (nothing is installed
//! then: it must already have the required packages).
//!
//! Several test binaries, and several threads in each, may ask at once: creation is
//! serialized by an exclusive lock on `target/interop-venv.lock`, and a marker file in
//! the environment records the requirements it was installed from, so an edited
//! requirements file triggers a reinstall. Failures panic with the failing command and
//! its output: this is test support code, and a panic fails the test that asked.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Environment variable naming an interpreter to use instead of the managed venv.
pub const PYTHON_ENV: &str = "ONNX_LIGHT_PYTHON";

/// Name of the marker file, inside the venv, holding the installed requirements.
const MARKER: &str = "onnx-light-requirements.txt";

/// The workspace root (the parent of the tests crate).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// `tests/python`: the Python scripts and `requirements.txt`.
pub fn python_dir() -> PathBuf {
    workspace_root().join("tests").join("python")
}

/// Path of a Python interpreter with the pinned requirements installed: the value of
/// `ONNX_LIGHT_PYTHON` if set, else the venv at `<workspace>/target/interop-venv`,
/// created or updated on first use.
///
/// # Panics
/// When the venv cannot be created or the requirements cannot be installed; the message
/// names the command and shows its output.
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| match std::env::var_os(PYTHON_ENV) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => ensure_venv(),
        })
        .clone()
}

/// Runs `python script args...` from the workspace root and returns its output.
///
/// # Panics
/// When the interpreter cannot be started or the script exits unsuccessfully; the
/// message shows the command, its exit status, stdout and stderr.
pub fn run_python(script: &Path, args: &[&OsStr]) -> Output {
    let mut cmd = Command::new(python());
    cmd.arg(script).args(args).current_dir(workspace_root());
    run_command(&mut cmd)
}

/// Runs `cmd` to completion; panics unless it succeeds, showing the command, its exit
/// status, stdout and stderr.
pub fn run_command(cmd: &mut Command) -> Output {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !output.status.success() {
        panic!(
            "command failed ({}): {cmd:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
    output
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Creates (or updates) the venv under an exclusive file lock, so that concurrent test
/// binaries install once and never see a half-built environment.
fn ensure_venv() -> PathBuf {
    let target = workspace_root().join("target");
    fs::create_dir_all(&target)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", target.display()));
    let venv = target.join("interop-venv");
    let requirements_path = python_dir().join("requirements.txt");
    let requirements = fs::read_to_string(&requirements_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", requirements_path.display()));

    let lock_path = target.join("interop-venv.lock");
    let lock = lock_file(&lock_path);

    let python = venv_python(&venv);
    let marker = venv.join(MARKER);
    let up_to_date =
        python.exists() && fs::read_to_string(&marker).is_ok_and(|m| m == requirements);
    if !up_to_date {
        // Missing, half-built, or built from other requirements: start afresh, so that
        // packages removed from requirements.txt do not linger.
        let _ = fs::remove_file(&marker);
        let bootstrap = if cfg!(windows) { "python" } else { "python3" };
        run_command(
            Command::new(bootstrap)
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
        );
        run_command(pip(&python, "install").arg("-r").arg(&requirements_path));
        // Written last: its presence means the environment is complete.
        let tmp = venv.join(format!("{MARKER}.tmp"));
        fs::write(&tmp, &requirements)
            .and_then(|()| fs::rename(&tmp, &marker))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", marker.display()));
    }
    drop(lock); // releases the lock
    python
}

/// `python -m pip SUBCOMMAND`, quiet and without the version check; the caller adds
/// the arguments.
pub fn pip(python: &Path, subcommand: &str) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", subcommand, "--disable-pip-version-check", "-q"]);
    cmd
}

/// Opens (creating it) and exclusively locks `path`, which serializes the test binaries
/// that set up one shared resource; the lock goes with the returned file.
// `File::lock` is stable since Rust 1.89, above the workspace's MSRV; this crate is
// test-only and never published, so it may use it.
#[allow(clippy::incompatible_msrv)]
pub fn lock_file(path: &Path) -> File {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    file
}
