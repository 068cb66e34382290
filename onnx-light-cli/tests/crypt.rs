//! `onnx-light encrypt` / `decrypt`: formats, external data, the ONNXCRY1 warning, and
//! the passphrase prompt. (The basic round trips and error paths are in `cli.rs`.)

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use assert_cmd::Command;
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;

const PASSPHRASE: &str = "correct horse battery staple";

fn cli() -> Command {
    Command::cargo_bin("onnx-light").unwrap()
}

/// A model with two weights large enough to go to an external data file.
fn model() -> Model {
    let mut g = GraphProto::named("g");
    for (i, n) in [4096usize, 2048].into_iter().enumerate() {
        let data: Vec<u8> = (0..n).map(|j| (j * 7 + i) as u8).collect();
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [n as i64],
            data,
        ));
    }
    g.node.push(NodeProto::new("Add", ["w0", "w1"], ["y"]));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    cli()
        .args(args)
        .env("ONNX_LIGHT_PASSPHRASE", PASSPHRASE)
        .output()
        .unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn p(path: &Path) -> &std::ffi::OsStr {
    path.as_os_str()
}

#[test]
fn onnxcry1_decrypts_with_exactly_one_warning_line_on_stderr_even_when_quiet() {
    let dir = Scratch::new("cli-cry1");
    let m = dir.path("m.onnx");
    io::save(&model(), &m, &SerializeOptions::default()).unwrap();
    let cry = dir.path("m.cry");
    let out = run(&[
        "encrypt".as_ref(),
        "--format".as_ref(),
        "onnxcry1".as_ref(),
        p(&m),
        p(&cry),
    ]);
    assert!(out.status.success(), "{out:?}");
    for quiet in [false, true] {
        let dec = dir.path("out.onnx");
        let mut args = vec!["decrypt".as_ref(), p(&cry), p(&dec), "--force".as_ref()];
        if quiet {
            args.push("--quiet".as_ref());
        }
        let out = run(&args);
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        assert!(
            stderr.starts_with("warning: ") && stderr.contains("not authenticated"),
            "{stderr}"
        );
        assert_eq!(out.stdout.is_empty(), quiet);
        assert_eq!(io::load(&dec).unwrap(), model());
    }
    // Authenticated formats: no warning.
    let ae = dir.path("m.cry2");
    let out = run(&[
        "encrypt".as_ref(),
        "--format".as_ref(),
        "onnxcry2".as_ref(),
        p(&m),
        p(&ae),
    ]);
    assert!(out.status.success(), "{out:?}");
    let out = run(&["decrypt".as_ref(), p(&ae), p(&dir.path("out2.onnx"))]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn decrypt_names_bytes_appended_to_an_encrypted_file_and_where_its_stream_ends() {
    let dir = Scratch::new("cli-trailing");
    let m = dir.path("m.onnx");
    io::save(&model(), &m, &SerializeOptions::default()).unwrap();
    let enc = dir.path("m.enc");
    let out = run(&["encrypt".as_ref(), p(&m), p(&enc)]);
    assert!(out.status.success(), "{out:?}");
    let end = std::fs::metadata(&enc).unwrap().len();
    let mut f = std::fs::OpenOptions::new().append(true).open(&enc).unwrap();
    f.write_all(b"junk").unwrap();
    drop(f);
    let dec = dir.path("out.onnx");
    let out = run(&["decrypt".as_ref(), p(&enc), p(&dec)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "error: the encrypted model has trailing bytes after the end of its encrypted \
             stream at byte offset {end}"
        )),
        "{stderr}"
    );
    assert!(!dec.exists());
}

#[test]
fn onnxcry2_round_trips_through_the_cli() {
    let dir = Scratch::new("cli-cry2");
    let m = dir.path("m.onnx");
    io::save(&model(), &m, &SerializeOptions::default()).unwrap();
    let enc = dir.path("m.enc");
    let out = run(&[
        "encrypt".as_ref(),
        "--format".as_ref(),
        "ONNXCRY2".as_ref(),
        p(&m),
        p(&enc),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::read(&enc).unwrap().starts_with(b"ONNXCRY2"));
    let dec = dir.path("out.onnx");
    let out = run(&["decrypt".as_ref(), p(&enc), p(&dec)]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("(authenticated)"));
    assert_eq!(std::fs::read(&dec).unwrap(), std::fs::read(&m).unwrap());
    // The encrypted file given where a model is expected is named as one, with the
    // command that decrypts it, rather than as a wire-format error at its first byte.
    for command in ["info", "show", "check", "convert"] {
        let out = run(&[command.as_ref(), p(&enc), p(&dir.path("plain.onnx"))]
            [..2 + usize::from(command == "convert")]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {err}");
        assert!(
            err.contains("is an encrypted model (ONNXCRY2)"),
            "{command}: {err}"
        );
        assert!(
            err.contains("hint: for a plain model: onnx-light decrypt"),
            "{err}"
        );
    }
    let out = run(&[
        "encrypt".as_ref(),
        "--format".as_ref(),
        "onnxcry3".as_ref(),
        p(&m),
        p(&dir.path("x")),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("onnxcry2"));
}

#[test]
fn external_weights_are_encrypted_and_come_back_inline_or_as_external_data() {
    let dir = Scratch::new("cli-external");
    let m = dir.path("m.onnx");
    let external = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(), &m, &external).unwrap();
    let data = std::fs::read(dir.path("w.bin")).unwrap();
    let w0: Vec<u8> = (0..4096usize).map(|j| (j * 7) as u8).collect();
    assert!(contains(&data, &w0[..64]));
    let enc = dir.path("m.enc");
    let out = run(&[
        "encrypt".as_ref(),
        "--format".as_ref(),
        "onnxcry2".as_ref(),
        p(&m),
        p(&enc),
    ]);
    assert!(out.status.success(), "{out:?}");
    let sealed = std::fs::read(&enc).unwrap();
    assert!(
        sealed.len() > 4096 + 2048,
        "the weights are in the encrypted file"
    );
    assert!(
        w0.chunks(32).all(|c| !contains(&sealed, c)),
        "plaintext weights"
    );
    // The original model and its data file are not needed any more.
    std::fs::remove_file(dir.path("w.bin")).unwrap();
    std::fs::remove_file(&m).unwrap();
    let single = dir.path("single.onnx");
    let out = run(&["decrypt".as_ref(), p(&enc), p(&single)]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(io::load(&single).unwrap(), model());
    let mut entries = dir.entries();
    entries.sort();
    assert_eq!(entries, ["m.enc", "single.onnx"]);
    // --external-data writes the weights to a data file again.
    let split = dir.path("split.onnx");
    let out = run(&[
        "decrypt".as_ref(),
        p(&enc),
        p(&split),
        "--external-data".as_ref(),
        "weights.data".as_ref(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let data = std::fs::read(dir.path("weights.data")).unwrap();
    assert!(contains(&data, &w0));
    assert!(std::fs::metadata(&split).unwrap().len() < 1024);
    assert_eq!(io::load(&split).unwrap(), model());
}

/// The compiled binary, for running under `script`.
fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_onnx-light"))
}

#[test]
fn the_passphrase_prompt_stays_visible_on_a_terminal() {
    // `script` gives the command a terminal (stdin, stdout and stderr), where the
    // spinner is on. The prompt must not be redrawn by it while waiting for input.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("util-linux `script` is needed to give the command a terminal");
    }
    let dir = Scratch::new("cli-prompt");
    let m = dir.path("m.onnx");
    io::save(&model(), &m, &SerializeOptions::default()).unwrap();
    let command = format!(
        "{} encrypt --format onnxcry2 {} {}",
        binary().display(),
        m.display(),
        dir.path("m.enc").display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_remove("ONNX_LIGHT_PASSPHRASE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Long enough for a spinner (120 ms ticks) to redraw the line several times.
    std::thread::sleep(Duration::from_millis(1500));
    stdin.write_all(b"s3cret\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stdin.write_all(b"s3cret\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{screen:?}");
    let first = screen.find("passphrase: ").expect("the prompt is shown");
    let second = screen.find("passphrase again: ").expect("the confirmation");
    let between = &screen[first + "passphrase: ".len()..second];
    assert!(
        !between.contains('\x1b') && between.trim().is_empty(),
        "the prompt was redrawn while waiting: {between:?}"
    );
    assert!(std::fs::read(dir.path("m.enc"))
        .unwrap()
        .starts_with(b"ONNXCRY2"));
}
