//! Memory bombs through the `onnx-light` binary: each hostile file is given to `info`,
//! `check` and `convert --inline` in a child process whose peak resident memory is
//! measured. With the default limits every command refuses the file with a clear error,
//! or handles it, under [`PEAK_LIMIT`].
//!
//! # How the peak is measured
//!
//! The child's `VmHWM` (its resident high-water mark, kept by the kernel) is read from
//! `/proc/<pid>/status` every millisecond until it exits. The high-water mark covers
//! every moment up to the last read, so only the last millisecond before exit can go
//! unseen, far too short to fault in hundreds of MiB. A child whose resident memory
//! passes [`KILL_AT`] is killed (and the test fails), so a regression cannot take the
//! machine's memory from everything else running on it.

mod support;
use support::status_field;

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use onnx_light::io::{self, SerializeOptions};
use onnx_light_tests::bombs::{self, MIB};
use onnx_light_tests::scratch::Scratch;

/// What each command may take at its peak, resident.
const PEAK_LIMIT: u64 = 512 << 20;

/// Past this resident size the child is killed.
const KILL_AT: u64 = 1 << 30;

/// A finished run of the binary.
struct Run {
    what: String,
    status: ExitStatus,
    stdout: String,
    stderr: String,
    peak: u64,
    killed: bool,
}

impl Run {
    /// Asserts that the run ended by itself, with `code`, under [`PEAK_LIMIT`].
    #[track_caller]
    fn assert_exit(&self, code: i32) {
        println!(
            "{}: exit {:?}, peak {:.1} MiB",
            self.what,
            self.status.code(),
            self.peak as f64 / MIB as f64
        );
        assert!(
            !self.killed,
            "{}: killed past {} MiB resident",
            self.what,
            KILL_AT >> 20
        );
        assert_eq!(
            self.status.code(),
            Some(code),
            "{}: {:?}\nstderr: {}",
            self.what,
            self.status,
            self.stderr
        );
        assert!(
            self.peak < PEAK_LIMIT,
            "{}: peak resident memory {} bytes",
            self.what,
            self.peak
        );
    }
}

/// Reads at most the first MiB of a file the child wrote.
fn head(path: &Path) -> String {
    let mut text = Vec::new();
    if let Ok(f) = File::open(path) {
        let _ = f.take(MIB as u64).read_to_end(&mut text);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Runs `onnx-light ARGS` in `dir`, measuring its peak resident memory. Standard output
/// goes to a file when `keep_stdout` (else nowhere: some reports are large).
fn run<I, S>(dir: &Scratch, args: I, keep_stdout: bool) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let what = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let (out, err) = (dir.path("stdout.txt"), dir.path("stderr.txt"));
    let stdout = if keep_stdout {
        Stdio::from(File::create(&out).unwrap())
    } else {
        Stdio::null()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-light"))
        .args(&args)
        .current_dir(dir.dir())
        .stdout(stdout)
        .stderr(Stdio::from(File::create(&err).unwrap()))
        .spawn()
        .unwrap();
    let (mut peak, mut killed) = (0, false);
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(hwm) = status_field(child.id(), "VmHWM:") {
            peak = peak.max(hwm);
        }
        if !killed && (peak > KILL_AT || Instant::now() > deadline) {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    Run {
        what,
        status,
        stdout: if keep_stdout {
            head(&out)
        } else {
            String::new()
        },
        stderr: head(&err),
        peak,
        killed,
    }
}

fn write(dir: &Scratch, name: &str, bytes: &[u8]) -> String {
    std::fs::write(dir.path(name), bytes).unwrap();
    name.to_string()
}

#[test]
fn ten_mib_of_empty_opset_imports_are_described_and_checked_under_512_mib() {
    // 5M imports of 40 bytes each in memory: within 64 MiB + 16 x 10 MiB, so handled.
    let dir = Scratch::new("bomb-opsets");
    let m = write(&dir, "opsets.onnx", &bombs::empty_opset_imports(10 * MIB));
    let info = run(&dir, ["info", &m], true);
    info.assert_exit(0);
    assert!(info.stdout.contains("opsets        ai.onnx:0, ai.onnx:0"));
    run(&dir, ["info", "--json", &m], false).assert_exit(0);
    // Parsed and checked within the budget; the ONNX rules then reject the model (no IR
    // version, no graph), with one line per problem, not one per import.
    let check = run(&dir, ["check", &m], true);
    check.assert_exit(1);
    assert!(check.stdout.contains("parsed: 0 nodes"), "{}", check.stdout);
    assert!(
        check.stderr.contains("model: ir_version is missing") && check.stderr.lines().count() < 10,
        "{}",
        check.stderr
    );
}

#[test]
fn ten_mib_of_empty_functions_are_refused_under_512_mib() {
    // 3.5M functions of 264 bytes each: 920 MB, past the default budget.
    let dir = Scratch::new("bomb-functions");
    let m = write(&dir, "functions.onnx", &bombs::empty_functions(10 * MIB));
    for args in [
        vec!["info", &m],
        vec!["convert", "--inline", &m, "out.onnx"],
    ] {
        let r = run(&dir, &args, true);
        r.assert_exit(1);
        assert!(
            r.stderr.contains("decoded size (--max-memory)")
                && r.stderr.contains("ModelProto.functions")
                && r.stderr.contains("hint:")
                && !r.stderr.contains("max_memory"),
            "{}",
            r.stderr
        );
    }
    let check = run(&dir, ["check", &m], true);
    check.assert_exit(1);
    assert!(
        check
            .stderr
            .contains("cannot parse the model: decoded size (--max-memory)"),
        "{}",
        check.stderr
    );
    assert!(!dir.path("out.onnx").exists());
}

#[test]
fn empty_sparse_initializers_are_refused_without_asking_for_the_whole_list() {
    // 10 MiB: 5M sparse tensors of 800 bytes each (4 GB); 40 MiB: 21M of them, a list of
    // 16.7 GB that was asked of the allocator in one piece.
    let dir = Scratch::new("bomb-sparse");
    for size in [10, 40] {
        let m = write(
            &dir,
            &format!("sparse{size}.onnx"),
            &bombs::empty_sparse_initializers(size * MIB),
        );
        for args in [
            vec!["info", &m],
            vec!["check", &m],
            vec!["convert", "--inline", &m, "out.onnx"],
        ] {
            let r = run(&dir, &args, true);
            r.assert_exit(1);
            assert!(
                r.stderr.contains("decoded size (--max-memory)")
                    && !r.stderr.contains("max_memory")
                    && r.stderr.contains("graph.sparse_initializer"),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn sparse_tensors_declaring_huge_shapes_allocate_nothing_for_them() {
    // 1000 sparse initializers each declaring 2^60 dense elements and 2^30 values,
    // holding 12 bytes: nothing is sized from the declared shapes.
    let dir = Scratch::new("bomb-sparse-dims");
    let model = bombs::sparse_with_huge_declared_dims(1000);
    io::save(&model, dir.path("huge.onnx"), &SerializeOptions::default()).unwrap();
    let info = run(&dir, ["info", "huge.onnx"], true);
    info.assert_exit(0);
    // 2000 tensors too short for their shapes (values and indices of each): the
    // first 100 are listed, the rest counted.
    let check = run(&dir, ["check", "huge.onnx"], true);
    check.assert_exit(1);
    assert!(
        check.stderr.contains("`s0`")
            && check.stderr.contains("... and 1,900 more of this kind")
            && !check.stderr.contains("s999"),
        "{}",
        check.stderr
    );
    run(&dir, ["convert", "--inline", "huge.onnx", "out.onnx"], true).assert_exit(0);
}

#[test]
fn a_thousand_tensors_aliasing_one_range_are_refused_and_reported() {
    // 1000 tensors on the same 4 MiB: 4 GiB once loaded, 4 MiB on disk.
    let dir = Scratch::new("bomb-alias");
    bombs::aliased_external(dir.dir(), 1000, 4 * MIB);
    let convert = run(
        &dir,
        ["convert", "--inline", "model.onnx", "out.onnx"],
        true,
    );
    convert.assert_exit(1);
    assert!(
        convert
            .stderr
            .contains("`t0` and `t1` share bytes 0..4194304")
            && convert.stderr.contains("data.bin")
            && convert.stderr.contains("--allow-aliasing")
            && !convert.stderr.contains("ParseOptions::allow_aliasing"),
        "{}",
        convert.stderr
    );
    assert!(!dir.path("out.onnx").exists());
    let check = run(&dir, ["check", "model.onnx"], true);
    check.assert_exit(1);
    let overlaps: Vec<&str> = check
        .stderr
        .lines()
        .filter(|l| l.contains("overlap"))
        .collect();
    assert_eq!(overlaps.len(), 21, "{}", check.stderr);
    assert!(
        overlaps[0].contains("`t0` and `t1` overlap: bytes 0..4194304")
            && overlaps[0].contains("data.bin"),
        "{}",
        overlaps[0]
    );
    assert!(overlaps[20].contains("and 499480 more"), "{}", overlaps[20]);
    // The `info` of such a model does not load its external data at all.
    run(&dir, ["info", "model.onnx"], true).assert_exit(0);
}

#[test]
fn allow_aliasing_loads_aliased_ranges_on_request() {
    let dir = Scratch::new("bomb-alias-allowed");
    bombs::aliased_external(dir.dir(), 10, 4096);
    run(
        &dir,
        ["convert", "--inline", "model.onnx", "out.onnx"],
        true,
    )
    .assert_exit(1);
    run(
        &dir,
        [
            "convert",
            "--inline",
            "--allow-aliasing",
            "model.onnx",
            "out.onnx",
        ],
        true,
    )
    .assert_exit(0);
    let out = io::load(dir.path("out.onnx")).unwrap();
    assert_eq!(out.tensors().len(), 10);
    assert!(out
        .tensors()
        .iter()
        .all(|t| t.raw_data.as_deref() == Some(&[1u8; 4096][..])));
}

#[test]
fn max_memory_overrides_the_default_budget() {
    let dir = Scratch::new("bomb-max-memory");
    // 10k empty functions: 2.6 MB in memory, well within the default of 64 MiB + 16x.
    let m = write(&dir, "functions.onnx", &bombs::empty_functions(30_000));
    run(&dir, ["info", &m], true).assert_exit(0);
    for args in [
        vec!["info", "--max-memory", "1M", &m],
        vec!["check", "--max-memory", "1M", &m],
        vec!["convert", "--inline", "--max-memory", "1M", &m, "out.onnx"],
    ] {
        let r = run(&dir, &args, true);
        r.assert_exit(1);
        assert!(
            r.stderr.contains("exceeds the limit of 1048576 bytes"),
            "{}",
            r.stderr
        );
    }
    // No limit at all: the 10 MiB of sparse initializers that the default refuses would
    // take 4 GB; a smaller one shows `none` lifts the limit.
    let s = write(
        &dir,
        "sparse.onnx",
        &bombs::empty_sparse_initializers(200_000),
    );
    run(&dir, ["info", "--max-memory", "64M", &s], true).assert_exit(1);
    run(&dir, ["info", "--max-memory", "none", &s], true).assert_exit(0);
}
