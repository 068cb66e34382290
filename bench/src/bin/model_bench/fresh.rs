//! Fresh processes: what a user pays who loads a model once when a server starts, or
//! runs the command-line tool. Each sample is a new process (a cold allocator, memory
//! that has to be faulted in again); ours and the peers' processes alternate in one
//! round-robin loop, and the machine's dirty pages are written back before each sample,
//! off the clock.
//!
//! Loads are timed inside the fresh process (the benchmark re-executes itself with
//! `--fresh MODE PATH`; Python runs the worker with `--fresh`), twice: the first call is
//! the fresh-process time, the second the same call in a process that has already done
//! it once (the in-process number). The command-line rows time the whole command, from
//! spawn to exit, as a shell would.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use onnx_light::io::{self, ParseOptions};
use onnx_light_tests::mapped::load_mapped;

use crate::harness::{self, fmt_ratio, fmt_time, measure, Op, Results, Row, Sampling, Table};
use crate::harness::{Scorecard, Target};
use crate::python::PythonEnv;

/// The child's body for `--fresh MODE PATH`: runs the operation twice and prints both
/// times in seconds, then the first call's minor page faults. Results are dropped after
/// the clock stops.
///
/// The in-memory modes prepare their input off the clock: `decode1` / `decode` read the
/// file and time `io::load_from_bytes` on one thread / all cores, `borrow1`
/// `io::load_from_slice` on one thread; `encode` loads the
/// model and times `io::save_to_vec`. A mode ending in `-prewarmed` first faults in and
/// frees [`PREWARM_BYTES`] of heap, so that the call finds its memory already provided
/// (see [`PREWARM_TUNABLES`]).
pub fn child(mode: &str, path: &Path) {
    let mode = match mode.strip_suffix("-prewarmed") {
        Some(base) => {
            prewarm_heap();
            base
        }
        None => mode,
    };
    let bytes = match mode {
        "decode1" | "decode" | "borrow1" => std::fs::read(path).expect("read"),
        _ => Vec::new(),
    };
    let model = (mode == "encode").then(|| io::load(path).expect("load"));
    let one = ParseOptions::default().num_threads(1);
    let once = || -> (Duration, u64) {
        let faults = minor_faults();
        let start = Instant::now();
        if mode == "borrow1" {
            // The decoded model borrows `bytes`: timed and dropped here.
            let view = io::load_from_slice(&bytes, &one).expect("borrow decode");
            let t = start.elapsed();
            let faults = minor_faults() - faults;
            drop(std::hint::black_box(view));
            return (t, faults);
        }
        let keep: Box<dyn std::any::Any> = match mode {
            "load" => Box::new(io::load(path).expect("load")),
            "nocopy" => Box::new(load_mapped(path, &ParseOptions::default()).expect("no-copy")),
            "read" => Box::new(std::fs::read(path).expect("read")),
            "decode1" => Box::new(io::load_from_bytes(&bytes, &one).expect("decode")),
            "decode" => {
                Box::new(io::load_from_bytes(&bytes, &ParseOptions::default()).expect("decode"))
            }
            "encode" => Box::new(
                io::save_to_vec(model.as_ref().expect("model"), &Default::default())
                    .expect("encode"),
            ),
            other => panic!("unknown fresh mode {other}"),
        };
        let t = start.elapsed();
        let faults = minor_faults() - faults;
        drop(keep);
        (t, faults)
    };
    let (first, faults) = once();
    let (second, _) = once();
    println!("{} {} {faults}", first.as_secs_f64(), second.as_secs_f64());
}

/// Heap faulted in before a `-prewarmed` call: several times what either decoder
/// allocates for the structure-heavy model, with room for the input read first.
pub const PREWARM_BYTES: usize = 512 << 20;

/// The allocator settings a `-prewarmed` child runs under: glibc serves every block from
/// its main heap and never returns freed memory to the system, so the pages a prewarm
/// touched serve the timed call's allocations.
const PREWARM_TUNABLES: &str =
    "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296";

/// A fresh-process command for MODE: a `-prewarmed` mode runs under
/// [`PREWARM_TUNABLES`] (the Rust child and the Python worker prewarm alike).
fn fresh_command(program: &Path, script: Option<&Path>, mode: &str, path: &Path) -> Command {
    let mut c = Command::new(program);
    c.args(script).arg("--fresh").arg(mode).arg(path);
    if mode.ends_with("-prewarmed") {
        c.env("GLIBC_TUNABLES", PREWARM_TUNABLES);
    }
    c
}

/// Writes to and frees [`PREWARM_BYTES`] of heap. Under [`PREWARM_TUNABLES`] the block
/// comes from glibc's main heap and stays there when freed, its pages provided.
fn prewarm_heap() {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    assert!(
        tunables.contains("trim_threshold"),
        "a -prewarmed mode needs GLIBC_TUNABLES={PREWARM_TUNABLES}"
    );
    let block = vec![1u8; PREWARM_BYTES];
    std::hint::black_box(&block);
}

/// This process's minor page faults so far (`/proc/self/stat`, field 10): each is a page
/// of fresh memory the kernel had to provide.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    // The command name (field 2) may hold spaces; the fields after it follow its `)`.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    rest.split(' ')
        .nth(7)
        .and_then(|v| v.parse().ok())
        .expect("minflt in /proc/self/stat")
}

/// Per-sample measurements beside the one the harness samples: the whole process's wall
/// time, the second call's time and the first call's minor page faults, by operation
/// key, in round order.
#[derive(Default)]
struct Extra {
    wall: HashMap<&'static str, Vec<Duration>>,
    second: HashMap<&'static str, Vec<Duration>>,
    faults: HashMap<&'static str, Vec<u64>>,
}

/// Runs `cmd` to completion; returns its wall time and its standard output.
pub fn run_timed(mut cmd: Command) -> (Duration, String) {
    cmd.stdin(Stdio::null()).stderr(Stdio::inherit());
    let start = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    let wall = start.elapsed();
    assert!(out.status.success(), "{cmd:?} failed: {}", out.status);
    (wall, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A load timed inside a fresh process: `cmd` prints the first and second call's
/// times and the first call's page faults. The harness samples the first; `extra` keeps
/// the wall time, the second and the faults.
fn load_op<'a>(
    key: &'static str,
    extra: &'a RefCell<Extra>,
    make: impl Fn() -> Command + 'a,
    json: bool,
) -> Op<'a> {
    Op::timed(key, move |_| {
        let (wall, out) = run_timed(make());
        let (first, second, faults) = if json {
            let v: serde_json::Value = serde_json::from_str(out.trim())
                .unwrap_or_else(|e| panic!("{key}: bad output {out:?}: {e}"));
            (
                v["first"].as_f64().expect("first"),
                v["second"].as_f64().expect("second"),
                v["faults"].as_f64().expect("faults"),
            )
        } else {
            let v: Vec<f64> = out
                .split_whitespace()
                .map(|x| x.parse().expect("a number"))
                .collect();
            assert_eq!(v.len(), 3, "{key}: bad output {out:?}");
            (v[0], v[1], v[2])
        };
        let mut e = extra.borrow_mut();
        e.wall.entry(key).or_default().push(wall);
        e.faults.entry(key).or_default().push(faults as u64);
        e.second
            .entry(key)
            .or_default()
            .push(Duration::from_secs_f64(second));
        Duration::from_secs_f64(first)
    })
    .settled()
    .once()
}

/// A command timed from spawn to exit.
fn command_op<'a>(key: &'static str, make: impl Fn() -> Command + 'a) -> Op<'a> {
    Op::timed(key, move |_| run_timed(make()).0)
        .settled()
        .once()
}

/// A command that writes `output`, timed from spawn to exit; `output` is removed after
/// each sample, off the clock, so that every sample writes a new file (as a user
/// converting to a new name does) and the outputs of the rows do not pile up on disk.
fn writing_op<'a>(key: &'static str, output: &'a Path, make: impl Fn() -> Command + 'a) -> Op<'a> {
    Op::timed(key, move |_| {
        let t = run_timed(make()).0;
        let _ = std::fs::remove_file(output);
        t
    })
    .settled()
    .once()
}

/// The command-line tool, built by cargo next to this benchmark (`cargo build -p
/// onnx-light-cli` in the same profile first, so the timed binary is the current code).
pub fn cli_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let dir = exe.parent().expect("a directory").to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-q", "-p", "onnx-light-cli"]);
    if dir.ends_with("release") {
        build.arg("--release");
    }
    let ok = build.status().map(|s| s.success()).unwrap_or(false);
    let cli = dir.join("onnx-light");
    assert!(
        ok || cli.exists(),
        "cannot build onnx-light-cli: run `cargo build --release -p onnx-light-cli`"
    );
    cli
}

/// What the fresh-process section needs.
pub struct FreshInputs<'a> {
    pub dir: &'a Path,
    pub py: &'a PythonEnv,
    pub weights: &'a Path,
    pub structure: Option<&'a Path>,
}

/// Measures the fresh-process rows and renders their two tables.
pub fn section(inp: &FreshInputs<'_>, sampling: Sampling, card: &mut Scorecard) -> String {
    let cli = cli_binary();
    let dir = inp.dir.join("fresh");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create fresh/");
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let weights = inp.weights;
    let python = &inp.py.interpreter;
    let script = &inp.py.script;
    let pass = dir.join("passphrase");
    std::fs::write(&pass, "fresh-process benchmark\n").expect("write the passphrase");
    let (ours_out, onnx_out, cp_out) = (
        dir.join("ours.onnx"),
        dir.join("onnx.onnx"),
        dir.join("cp.onnx"),
    );
    let (enc, enc_out, dec) = (
        dir.join("model.enc"),
        dir.join("encrypted.enc"),
        dir.join("decrypted.onnx"),
    );
    // The decrypt rows need an encrypted input before the first sample.
    run_timed({
        let mut c = Command::new(&cli);
        c.arg("-q").arg("encrypt").arg(weights).arg(&enc);
        c.arg("--passphrase-file").arg(&pass).arg("--force");
        c
    });
    // The "over an existing file" rows replace these outputs in every sample.
    let (ours_over, cp_over) = (dir.join("ours_over.onnx"), dir.join("cp_over.onnx"));
    for p in [&ours_over, &cp_over] {
        std::fs::copy(weights, p).expect("copy the model");
    }
    let extra = RefCell::new(Extra::default());
    let rust_load = |mode: &'static str| {
        let exe = exe.clone();
        move || fresh_command(&exe, None, mode, weights)
    };
    let cli_cmd = |args: Vec<&std::ffi::OsStr>| {
        let cli = cli.clone();
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        move || {
            let mut c = Command::new(&cli);
            c.arg("-q").args(&args);
            c.stdout(Stdio::null());
            c
        }
    };
    let mut ops = vec![
        load_op("fr.load", &extra, rust_load("load"), false),
        load_op("fr.nocopy", &extra, rust_load("nocopy"), false),
        load_op("fr.read", &extra, rust_load("read"), false),
        load_op(
            "fr.onnx",
            &extra,
            || fresh_command(python, Some(script), "load", weights),
            true,
        ),
        writing_op(
            "cli.convert",
            &ours_out,
            cli_cmd(vec![
                "convert".as_ref(),
                "--no-sync".as_ref(),
                "--force".as_ref(),
                weights.as_os_str(),
                ours_out.as_os_str(),
            ]),
        ),
        command_op(
            "cli.convert_over",
            cli_cmd(vec![
                "convert".as_ref(),
                "--no-sync".as_ref(),
                "--force".as_ref(),
                weights.as_os_str(),
                ours_over.as_os_str(),
            ]),
        ),
        command_op("cli.cp_over", || {
            let mut c = Command::new("cp");
            c.arg(weights).arg(&cp_over);
            c
        }),
        writing_op("cli.convert_onnx", &onnx_out, || {
            let mut c = Command::new(python);
            c.arg("-c")
                .arg("import sys, onnx; onnx.save_model(onnx.load(sys.argv[1]), sys.argv[2])")
                .arg(weights)
                .arg(&onnx_out);
            c
        }),
        writing_op("cli.cp", &cp_out, || {
            let mut c = Command::new("cp");
            c.arg(weights).arg(&cp_out);
            c
        }),
        command_op(
            "cli.info",
            cli_cmd(vec!["info".as_ref(), weights.as_os_str()]),
        ),
        command_op(
            "cli.check",
            cli_cmd(vec!["check".as_ref(), weights.as_os_str()]),
        ),
        command_op("cli.check_onnx", || {
            let mut c = Command::new(python);
            c.arg("-c")
                .arg("import sys, onnx; onnx.checker.check_model(sys.argv[1])")
                .arg(weights);
            c
        }),
        writing_op(
            "cli.encrypt",
            &enc_out,
            cli_cmd(vec![
                "encrypt".as_ref(),
                "--force".as_ref(),
                "--passphrase-file".as_ref(),
                pass.as_os_str(),
                weights.as_os_str(),
                enc_out.as_os_str(),
            ]),
        ),
        writing_op(
            "cli.decrypt",
            &dec,
            cli_cmd(vec![
                "decrypt".as_ref(),
                "--force".as_ref(),
                "--passphrase-file".as_ref(),
                pass.as_os_str(),
                enc.as_os_str(),
                dec.as_os_str(),
            ]),
        ),
        command_op("cli.python", || {
            let mut c = Command::new(python);
            c.arg("-c").arg("import onnx");
            c
        }),
    ];
    if let Some(structure) = inp.structure {
        let rust_fresh = |mode: &'static str| {
            let (exe, path) = (exe.clone(), structure.to_path_buf());
            move || fresh_command(&exe, None, mode, &path)
        };
        let py_fresh = |mode: &'static str| {
            let path = structure.to_path_buf();
            move || fresh_command(python, Some(script), mode, &path)
        };
        ops.push(load_op("fs.dec1", &extra, rust_fresh("decode1"), false));
        ops.push(load_op("fs.dec", &extra, rust_fresh("decode"), false));
        ops.push(load_op("fs.bor1", &extra, rust_fresh("borrow1"), false));
        ops.push(load_op(
            "fs.dec_onnx",
            &extra,
            py_fresh("load_from_string"),
            true,
        ));
        ops.push(load_op(
            "fs.dec1_warm",
            &extra,
            rust_fresh("decode1-prewarmed"),
            false,
        ));
        ops.push(load_op(
            "fs.dec_onnx_warm",
            &extra,
            py_fresh("load_from_string-prewarmed"),
            true,
        ));
        ops.push(load_op("fs.enc", &extra, rust_fresh("encode"), false));
        ops.push(load_op("fs.enc_onnx", &extra, py_fresh("serialize"), true));
        ops.push(command_op(
            "cli.info_struct",
            cli_cmd(vec!["info".as_ref(), structure.as_os_str()]),
        ));
        ops.push(command_op(
            "cli.check_struct",
            cli_cmd(vec!["check".as_ref(), structure.as_os_str()]),
        ));
        let structure = structure.to_path_buf();
        ops.push(command_op("cli.check_struct_onnx", move || {
            let mut c = Command::new(python);
            c.arg("-c")
                .arg("import sys, onnx; onnx.checker.check_model(sys.argv[1])")
                .arg(&structure);
            c
        }));
    }
    let mut results = Results::default();
    measure("fresh processes", ops, sampling, &mut results);
    let extra = extra.into_inner();
    let n = std::fs::metadata(weights).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);

    let loads = Table {
        short: "fresh load",
        title: format!(
            "Load in a fresh process (warm page cache): weight-heavy model, {:.2} GiB",
            n as f64 / (1u64 << 30) as f64
        ),
        intro: "Each sample a new process that loads once (timed inside it, from the call \
            to its return; `onnx` already imported), then loads again: \"2nd call\" is the \
            same load in a process that has already done one. \"process\" is the whole \
            child, spawn to exit, both loads included (and interpreter start-up and \
            `import onnx` for Python). Ours: `io::load` (owned) and `io::load_mapped`; `std::fs::read` of the \
            same file in a fresh Rust process; onnx: `onnx.load(path)`."
            .into(),
        peers: vec![("fr.read", "fs::read"), ("fr.onnx", "onnx")],
        rows: vec![
            Row::new("ours: owned (`io::load`)", "fr.load")
                .bytes(n)
                .target(Target::Within("fr.read", 1.5)),
            Row::new("ours: no-copy", "fr.nocopy").target(Target::Faster("fr.onnx", 100.0)),
            Row::new("`std::fs::read`", "fr.read").bytes(n),
            Row::new("onnx: `onnx.load`", "fr.onnx").bytes(n),
        ],
    };
    let convert = Table {
        short: "CLI convert",
        title: format!(
            "`onnx-light convert` in a fresh process: weight-heavy model, {:.2} GiB single file",
            n as f64 / (1u64 << 30) as f64
        ),
        intro: "Whole processes, spawn to exit, warm page cache, writes settled (`sync`) \
            before each sample: `onnx-light convert --no-sync --force IN OUT` against \
            `python -c \"onnx.save_model(onnx.load(IN), OUT)\"` (interpreter start-up \
            included, as a user pays it) and `cp IN OUT`. OUT is removed after each \
            sample (a new file each time), except in the \"over an existing OUT\" rows, \
            where it is replaced: our save renames a new file over it, `cp` truncates \
            and rewrites it."
            .into(),
        peers: vec![("cli.convert_onnx", "onnx"), ("cli.cp", "cp")],
        rows: vec![
            Row::new("ours: `convert --no-sync`", "cli.convert")
                .bytes(n)
                .target(Target::Faster("cli.convert_onnx", 4.0))
                .target(Target::Within("cli.cp", 2.0)),
            Row::new("onnx: load + `save_model`", "cli.convert_onnx").bytes(n),
            Row::new("`cp`", "cli.cp").bytes(n),
            Row::new(
                "ours: `convert --no-sync`, over an existing OUT",
                "cli.convert_over",
            )
            .bytes(n)
            .target(Target::Within("cli.cp_over", 2.0)),
            Row::new("`cp`, over an existing OUT", "cli.cp_over").bytes(n),
        ],
    };
    let s_len = inp
        .structure
        .and_then(|p| std::fs::metadata(p).ok())
        .map_or(0, |m| m.len());
    let structure = Table {
        short: "fresh structure-heavy",
        title: format!(
            "Decode in a fresh process: structure-heavy model, {:.1} MB",
            s_len as f64 / 1e6
        ),
        intro: "Each sample a new process that prepares its input off the clock (the file \
            read into memory; for the encodes, the model loaded), then times the call twice, \
            as above. Ours: `io::load_from_bytes` on one thread and on all cores, \
            `io::load_from_slice` (strings and payloads borrowed from the input) on one thread, \
            `io::save_to_vec` of the loaded model; onnx (upb): `onnx.load_from_string` and \
            `SerializeToString` of the model `onnx.load` gave. \"page faults\": minor faults \
            during the first call, each a 4 KiB page of fresh memory (a huge page counts \
            once)."
            .into(),
        peers: vec![("fs.dec_onnx", "onnx")],
        rows: vec![
            Row::new("ours: decode, 1 thread", "fs.dec1")
                .bytes(s_len)
                .target(Target::Faster("fs.dec_onnx", 1.2)),
            Row::new("ours: decode, all cores (default)", "fs.dec")
                .bytes(s_len)
                .target(Target::Faster("fs.dec_onnx", 1.0)),
            Row::new(
                "ours: borrowing decode (`load_from_slice`), 1 thread",
                "fs.bor1",
            )
            .bytes(s_len),
            Row::new("onnx: `load_from_string`", "fs.dec_onnx").bytes(s_len),
        ],
    };
    let structure_warm = Table {
        short: "prewarmed structure-heavy",
        title: "Decode on a prewarmed heap: structure-heavy model, one thread".into(),
        intro: format!(
            "As above, but each process first writes to and frees {} MiB of heap, under \
            `GLIBC_TUNABLES={PREWARM_TUNABLES}` (glibc keeps freed memory), so that the \
            decode finds its memory already provided: the parse and the allocator alone, \
            without the page faults. Both decoders run this way; upb's arena blocks, \
            which it otherwise gets from and returns to the system, come from the same \
            heap.",
            PREWARM_BYTES >> 20
        ),
        peers: vec![("fs.dec_onnx_warm", "onnx")],
        rows: vec![
            Row::new("ours: decode, 1 thread, prewarmed", "fs.dec1_warm").bytes(s_len),
            Row::new("onnx: `load_from_string`, prewarmed", "fs.dec_onnx_warm").bytes(s_len),
        ],
    };
    let structure_enc = Table {
        short: "fresh structure-heavy encode",
        title: "Encode in a fresh process: structure-heavy model".into(),
        intro: "As above; the model is loaded off the clock.".into(),
        peers: vec![("fs.enc_onnx", "onnx")],
        rows: vec![
            Row::new("ours: encode (`save_to_vec`)", "fs.enc")
                .bytes(s_len)
                .target(Target::Faster("fs.enc_onnx", 1.0)),
            Row::new("onnx: `SerializeToString`", "fs.enc_onnx").bytes(s_len),
        ],
    };
    let ratio = |peer: &str, key: &str| -> String {
        match (results.median(peer), results.median(key)) {
            (Some(p), Some(t)) => format!("onnx ÷ this: {}", fmt_ratio(p / t)),
            _ => String::new(),
        }
    };
    let commands = Table {
        short: "CLI",
        title: "Other commands in a fresh process".into(),
        intro: "Whole processes, as above. `info` and `check` of the weight-heavy model and \
            of the structure-heavy one, `check` against `python -c \
            \"onnx.checker.check_model(path)\"`; `encrypt` (ONNXAE01: PBKDF2 with 600 000 \
            iterations, `fsync`) and `decrypt` of the weight-heavy model with \
            `--passphrase-file`. `python -c \"import onnx\"`: the start-up every Python row \
            includes."
            .into(),
        peers: Vec::new(),
        rows: vec![
            Row::new("ours: `info`", "cli.info"),
            Row::new("ours: `check`", "cli.check").note(ratio("cli.check_onnx", "cli.check")),
            Row::new("onnx: `check_model(path)`", "cli.check_onnx"),
            Row::new("ours: `info`, structure-heavy", "cli.info_struct"),
            Row::new("ours: `check`, structure-heavy", "cli.check_struct")
                .note(ratio("cli.check_struct_onnx", "cli.check_struct")),
            Row::new(
                "onnx: `check_model(path)`, structure-heavy",
                "cli.check_struct_onnx",
            ),
            Row::new("ours: `encrypt`", "cli.encrypt").bytes(n),
            Row::new("ours: `decrypt`", "cli.decrypt").bytes(n),
            Row::new("`python -c \"import onnx\"`", "cli.python"),
        ],
    };
    let mut s = render_loads(&loads, &results, &extra, card);
    if inp.structure.is_some() {
        s.push_str(&render_loads(&structure, &results, &extra, card));
        s.push_str(&render_loads(&structure_warm, &results, &extra, card));
        s.push_str(&render_loads(&structure_enc, &results, &extra, card));
    }
    s.push_str(&harness::render(&convert, &results, card));
    s.push_str(&harness::render(&commands, &results, card));
    s
}

/// The median of one row's per-sample values (None where there are none).
fn median<T: Ord + Copy>(v: Option<&Vec<T>>) -> Option<T> {
    let mut v = v?.clone();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

/// The load table: the harness's columns plus the whole process, the second call and the
/// first call's page faults (median).
fn render_loads(table: &Table, results: &Results, extra: &Extra, card: &mut Scorecard) -> String {
    let mut s = String::new();
    harness::write_heading(
        &mut s,
        table,
        &[
            "fresh: median",
            "min – max",
            "process",
            "2nd call",
            "page faults",
        ],
    );
    for row in &table.rows {
        let Some(stats) = results.get(row.key) else {
            continue;
        };
        let med = stats.median.as_secs_f64();
        let cell = |v: Option<Duration>| v.map(|d| fmt_time(d.as_secs_f64())).unwrap_or_default();
        let faults = median(extra.faults.get(row.key)).map_or(String::new(), |n| n.to_string());
        let _ = write!(
            s,
            "| {} | {} | {} – {} | {} | {} | {faults} |",
            row.label,
            fmt_time(med),
            fmt_time(stats.min.as_secs_f64()),
            fmt_time(stats.max.as_secs_f64()),
            cell(median(extra.wall.get(row.key))),
            cell(median(extra.second.get(row.key))),
        );
        harness::write_ratios_and_verdicts(&mut s, table, results, row, med, card);
    }
    s.push('\n');
    s
}
