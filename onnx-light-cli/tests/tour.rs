//! `onnx-light tour`: what a user relies on. Each step shows the command that repeats
//! it, and those commands run as shown in the tour's directory; lines fit in 80
//! columns; the tour ends with next steps; it writes nothing outside its directory and
//! never touches the model it is given.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;

fn cli() -> Command {
    Command::cargo_bin("onnx-light").unwrap()
}

/// `onnx-light ARGS` with the temporary directory `tmp`, run from `cwd`: the tour may
/// write in the first only, and in the second nothing.
fn tour(args: &[&str], tmp: &Scratch, cwd: &Scratch) -> Command {
    let mut c = cli();
    c.args(args).env("TMPDIR", tmp.dir()).current_dir(cwd.dir());
    c
}

/// A small model whose weight goes to an external data file.
fn model() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [1, 64]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [1, 64]));
    let w: Vec<u8> = (0..64 * 64 * 4).map(|i| (i % 251) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [64, 64], w));
    g.node.push(NodeProto::new("MatMul", ["x", "w"], ["y"]));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

/// The directory the tour says it works in (its `cd` line).
fn work_dir(stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  cd "))
        .unwrap_or_else(|| panic!("no cd line in:\n{stdout}"));
    PathBuf::from(line)
}

/// The `onnx-light` command lines the steps show (indented two spaces), each joined
/// across its ` \` continuation lines and split into words.
fn commands(stdout: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut lines = stdout.lines();
    while let Some(l) = lines.next() {
        let Some(mut text) = l.strip_prefix("  onnx-light ").map(str::to_string) else {
            continue;
        };
        while let Some(head) = text.strip_suffix(" \\") {
            let next = lines.next().expect("a continuation line");
            text = format!("{head} {}", next.trim());
        }
        assert!(
            !text.contains('\''),
            "this test splits unquoted words: {text}"
        );
        found.push(text.split_whitespace().map(str::to_string).collect());
    }
    found
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_tour_shows_each_step_in_80_columns_and_ends_with_next_steps() {
    let (tmp, cwd) = (Scratch::new("tour-tmp"), Scratch::new("tour-cwd"));
    let out = tour(&["tour", "--layers", "0"], &tmp, &cwd)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let dir = work_dir(&stdout);
    let exe = assert_cmd::cargo::cargo_bin("onnx-light");

    // The paths of the tour's directory and of this build come from the machine;
    // everything the tour writes around them fits.
    for l in stdout.lines() {
        let l = l
            .replace(&dir.display().to_string(), "DIR")
            .replace(&exe.display().to_string(), "EXE");
        assert!(l.chars().count() < 80, "{} columns: {l}", l.chars().count());
    }

    let shown: Vec<String> = commands(&stdout).iter().map(|c| c.join(" ")).collect();
    for step in [
        "sample model.onnx --layers 0",
        "info model.onnx",
        "check model.onnx",
        "show model.onnx",
        "convert model.onnx external.onnx --external-data weights.bin",
        "bench model.onnx",
        "encrypt model.onnx model.enc --passphrase-file passphrase.txt",
        "decrypt model.enc decrypted.onnx --passphrase-file passphrase.txt",
    ] {
        assert!(shown.contains(&step.to_string()), "{step} not in {shown:?}");
    }
    assert!(stdout.contains("unsafe { io::load_mapped(\"model.onnx\", &options)? }"));
    // Excerpts of the real outputs.
    for said in [
        "    verdict: the model is valid",
        "       <float[16384,1024] embed =  {",
        "    wrote external.onnx with 1 external data file: weights.bin",
        "    wrote decrypted.onnx (authenticated)",
    ] {
        assert!(stdout.contains(said), "{said} not in:\n{stdout}");
    }
    // Loads are timed against a read of the file, never as a throughput.
    assert!(stdout.contains("vs the read"));
    assert!(!stdout.contains("B/s"), "{stdout}");

    let next = &stdout[stdout.rfind("\nNext steps\n").expect("next steps")..];
    for step in [
        "onnx_light::io::load(\"model.onnx\")",
        "pip install ./onnx-light-python",
        "onnx-light --help",
        &format!("rm -r {}", dir.display()),
    ] {
        assert!(next.contains(step), "{step} not in:\n{next}");
    }
    assert!(stdout
        .trim_end()
        .ends_with(&format!("rm -r {}", dir.display())));

    // Nothing outside the tour's directory; in it, what its commands read.
    assert_eq!(dir.parent(), Some(tmp.dir()));
    assert_eq!(tmp.entries(), [dir.file_name().unwrap().to_str().unwrap()]);
    assert!(cwd.entries().is_empty(), "{:?}", cwd.entries());
    assert_eq!(names(&dir), ["model.onnx", "passphrase.txt"]);
}

#[test]
fn the_tours_commands_run_as_shown_in_its_directory() {
    let (tmp, cwd, mine) = (
        Scratch::new("tour-tmp"),
        Scratch::new("tour-cwd"),
        Scratch::new("tour-mine"),
    );
    let path = mine.path("m.onnx");
    let external = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(), &path, &external).unwrap();
    let before: Vec<Vec<u8>> = ["m.onnx", "w.bin"]
        .iter()
        .map(|n| std::fs::read(mine.path(n)).unwrap())
        .collect();

    let path_arg = path.to_str().unwrap();
    let out = tour(&["tour", path_arg, "--max-memory", "512M"], &tmp, &cwd)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let dir = work_dir(&stdout);
    let shown = commands(&stdout);

    // The first command is how the tour made its copy (which is there already): the
    // given model, its weights brought into the one file, with the tour's limit.
    let (made, steps) = shown.split_first().expect("commands");
    let expected = [
        "convert",
        path_arg,
        "model.onnx",
        "--inline",
        "--max-memory",
        "536870912",
    ];
    assert_eq!(made, &expected);
    assert!(steps.len() >= 7, "{steps:?}");
    for step in steps {
        cli().args(step).current_dir(&dir).assert().success();
    }
    assert_eq!(
        std::fs::read(dir.join("decrypted.onnx")).unwrap(),
        std::fs::read(dir.join("model.onnx")).unwrap()
    );
    assert_eq!(
        io::load(dir.join("external.onnx")).unwrap(),
        io::load(&path).unwrap()
    );

    // The given model and its data file are as they were, and alone.
    assert_eq!(mine.entries(), ["m.onnx", "w.bin"]);
    for (name, bytes) in ["m.onnx", "w.bin"].iter().zip(&before) {
        assert_eq!(&std::fs::read(mine.path(name)).unwrap(), bytes, "{name}");
    }
    assert!(cwd.entries().is_empty());
}

#[test]
fn a_quiet_or_failed_tour_leaves_nothing_behind() {
    let (tmp, cwd, mine) = (
        Scratch::new("tour-tmp"),
        Scratch::new("tour-cwd"),
        Scratch::new("tour-mine"),
    );
    let path = mine.path("m.onnx");
    io::save(&model(), &path, &SerializeOptions::default()).unwrap();
    // With --quiet nothing names the directory, so the tour removes it.
    tour(&["--quiet", "tour", path.to_str().unwrap()], &tmp, &cwd)
        .assert()
        .success()
        .stdout("");
    assert!(tmp.entries().is_empty(), "{:?}", tmp.entries());

    let garbage = mine.path("garbage.onnx");
    std::fs::write(&garbage, [0xffu8, 0xff, 0xff, 0x0f, 0x07]).unwrap();
    tour(&["tour", garbage.to_str().unwrap()], &tmp, &cwd)
        .assert()
        .code(1);
    assert!(tmp.entries().is_empty(), "{:?}", tmp.entries());
    assert!(cwd.entries().is_empty());
}
