//! The CLI used carelessly or with hostile files: names spelled several ways that are
//! the same file, FIFOs where files should be, size limits, permissions, absurd flags.
//! Nothing the user had may be lost, nothing may hang, every refusal says why.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;
use predicates::prelude::*;

fn cli() -> Command {
    let mut c = Command::cargo_bin("onnx-light").unwrap();
    // Nothing here may take long: a hang fails the test instead of stalling the suite.
    c.timeout(Duration::from_secs(60));
    c
}

/// A model with one 64 KiB initializer (big enough to go external).
fn model() -> Model {
    let mut g = GraphProto::named("g");
    let w: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [16384], w));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn save_plain(path: &Path) {
    io::save(&model(), path, &SerializeOptions::default()).unwrap();
}

fn save_external(path: &Path, data: &str) {
    let ext = io::external::ExternalDataOptions::new(data);
    io::save(
        &model(),
        path,
        &SerializeOptions::default().external_data(ext),
    )
    .unwrap();
}

/// The ways of naming `name` in `dir`: bare (from `dir` as working directory), `./`,
/// absolute, and through a symbolic link to `dir`.
fn spellings(dir: &Scratch, name: &str) -> Vec<PathBuf> {
    let link = dir.path("via-link");
    if !link.exists() {
        std::os::unix::fs::symlink(dir.dir(), &link).unwrap();
    }
    vec![
        PathBuf::from(name),
        PathBuf::from(format!("./{name}")),
        dir.path(name),
        link.join(name),
    ]
}

#[test]
fn a_data_file_named_like_the_input_model_is_refused_however_spelled() {
    let dir = Scratch::new("careless-input");
    save_plain(&dir.path("m.onnx"));
    let before = std::fs::read(dir.path("m.onnx")).unwrap();
    for out in spellings(&dir, "out.onnx") {
        for input in spellings(&dir, "m.onnx") {
            cli()
                .current_dir(dir.dir())
                .arg("convert")
                .arg(&input)
                .arg(&out)
                .args(["--external-data", "m.onnx", "--force"])
                .assert()
                .failure()
                .stderr(predicate::str::contains("names the input model"));
        }
    }
    assert_eq!(std::fs::read(dir.path("m.onnx")).unwrap(), before);
    assert!(!dir.path("out.onnx").exists());
}

#[test]
fn a_data_file_name_leaving_the_model_directory_is_a_usage_error_before_anything_is_read() {
    let dir = Scratch::new("careless-data-path");
    std::fs::create_dir(dir.path("work")).unwrap();
    save_plain(&dir.path("work/m.onnx"));
    let outside = dir.path("evil.bin");
    let absolute = outside.to_string_lossy().into_owned();
    for name in [
        "../evil.bin",
        "sub/../../evil.bin",
        "sub/",
        absolute.as_str(),
        "",
        "CON",
    ] {
        for command in ["convert", "decrypt"] {
            cli()
                .current_dir(dir.path("work"))
                .args([command, "m.onnx", "out.onnx", "--external-data", name])
                .assert()
                .code(2)
                .stderr(predicate::str::contains("--external-data"))
                .stderr(predicate::str::contains(format!("{name:?}")));
        }
    }
    assert!(!outside.exists());
    assert_eq!(dir.entries(), ["work"]);
    let work: Vec<_> = std::fs::read_dir(dir.path("work"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(work, ["m.onnx"]);
    // A subdirectory of the model's is fine: created as needed.
    cli()
        .current_dir(dir.path("work"))
        .args([
            "convert",
            "m.onnx",
            "out.onnx",
            "--external-data",
            "weights/w.bin",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("weights/w.bin"));
    assert!(dir.path("work/weights/w.bin").is_file());
    assert_eq!(
        io::load(dir.path("work/out.onnx")).unwrap(),
        io::load(dir.path("work/m.onnx")).unwrap()
    );
}

#[test]
fn a_data_file_named_like_the_output_model_is_refused_however_spelled() {
    let dir = Scratch::new("careless-output");
    save_plain(&dir.path("src.onnx"));
    for out in spellings(&dir, "out.onnx") {
        cli()
            .current_dir(dir.dir())
            .args(["convert", "src.onnx"])
            .arg(&out)
            .args(["--external-data", "out.onnx"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("names the output model itself"));
        assert!(!dir.path("out.onnx").exists(), "{}", out.display());
    }
}

#[test]
fn a_hard_link_of_the_input_is_not_taken_as_a_data_file_name() {
    let dir = Scratch::new("careless-hardlink");
    save_plain(&dir.path("m.onnx"));
    std::fs::hard_link(dir.path("m.onnx"), dir.path("h.bin")).unwrap();
    let before = std::fs::read(dir.path("m.onnx")).unwrap();
    cli()
        .current_dir(dir.dir())
        .args(["convert", "m.onnx", "out.onnx", "--external-data", "h.bin"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("names the input model"));
    assert_eq!(std::fs::read(dir.path("h.bin")).unwrap(), before);
}

#[test]
fn the_output_is_never_written_over_a_data_file_of_the_input() {
    let dir = Scratch::new("careless-datafile");
    save_external(&dir.path("m.onnx"), "w.bin");
    let weights = std::fs::read(dir.path("w.bin")).unwrap();
    // A symbolic link to the data file too: a save through a link replaces its target.
    std::os::unix::fs::symlink("w.bin", dir.path("to-w.onnx")).unwrap();
    let spelled = spellings(&dir, "w.bin").into_iter();
    for out in spelled.chain([PathBuf::from("to-w.onnx")]) {
        cli()
            .current_dir(dir.dir())
            .args(["convert", "m.onnx", "--inline", "--force"])
            .arg(&out)
            .assert()
            .failure()
            .stderr(predicate::str::contains("would destroy its weights"));
    }
    assert_eq!(std::fs::read(dir.path("w.bin")).unwrap(), weights);
    assert_eq!(io::load(dir.path("m.onnx")).unwrap(), model());
}

#[test]
fn convert_says_which_data_files_it_wrote_and_which_it_left_unused() {
    let dir = Scratch::new("careless-report");
    save_plain(&dir.path("m.onnx"));
    cli()
        .current_dir(dir.dir())
        .args(["convert", "m.onnx", "one.onnx"])
        .assert()
        .success()
        .stdout(predicate::str::contains("as a single file"));
    // A threshold above every tensor: no data file is written, and none is claimed.
    cli()
        .current_dir(dir.dir())
        .args(["convert", "m.onnx", "none.onnx", "--external-data", "x.bin"])
        .args(["--size-threshold", "1M"])
        .assert()
        .success()
        .stdout(predicate::str::contains("as a single file"));
    assert!(!dir.path("x.bin").exists());
    cli()
        .current_dir(dir.dir())
        .args(["convert", "m.onnx", "ext.onnx", "--external-data", "a.bin"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 external data file: a.bin"));
    // In place, to another data file: the old one is reported, and kept.
    cli()
        .current_dir(dir.dir())
        .args([
            "convert",
            "ext.onnx",
            "ext.onnx",
            "--force",
            "--external-data",
            "b.bin",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("b.bin").and(
            predicate::str::contains("a.bin").and(predicate::str::contains("no longer used")),
        ));
    assert!(dir.path("a.bin").exists());
    assert_eq!(io::load(dir.path("ext.onnx")).unwrap(), model());
}

/// The test model with other weights: the same sizes, different bytes.
fn other_model() -> Model {
    let mut g = GraphProto::named("g");
    let w: Vec<u8> = (0..65536u32).map(|i| (i % 241) as u8 ^ 0x5a).collect();
    g.initializer
        .push(TensorProto::from_raw("w", DataType::Float, [16384], w));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[test]
fn another_models_data_file_is_replaced_only_with_force() {
    let dir = Scratch::new("careless-other-data");
    save_external(&dir.path("a.onnx"), "w.bin");
    let a_data = std::fs::read(dir.path("w.bin")).unwrap();
    io::save(
        &other_model(),
        dir.path("b.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap();
    encrypt_with_passphrase_file(&dir, "pw", "b.onnx", "b.enc");
    // A split save would write w.bin.1 too: that file is named as well.
    std::fs::write(dir.path("w.bin.1"), "kept").unwrap();
    let refused = [
        vec!["convert", "b.onnx", "out.onnx", "--external-data", "w.bin"],
        vec!["convert", "b.onnx", "out.onnx", "--external-data", "w.bin"]
            .into_iter()
            .chain(["--max-file-size", "16k"])
            .collect(),
        vec![
            "decrypt",
            "b.enc",
            "out.onnx",
            "--external-data",
            "w.bin",
            "--passphrase-file",
            "pass",
        ],
    ];
    for args in &refused {
        let split = args.contains(&"--max-file-size");
        cli()
            .current_dir(dir.dir())
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("./w.bin").and(predicate::str::contains("--force")))
            .stderr(predicate::str::contains("w.bin.1").count(usize::from(split)));
    }
    assert_eq!(std::fs::read(dir.path("w.bin")).unwrap(), a_data);
    assert_eq!(std::fs::read(dir.path("w.bin.1")).unwrap(), b"kept");
    assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model());
    assert!(!dir.path("out.onnx").exists());
    // The input's own data file is in the way of another output too (it is a.onnx's);
    // converting in place replaces it, keeping its name.
    cli()
        .current_dir(dir.dir())
        .args(["convert", "a.onnx", "a2.onnx", "--external-data", "w.bin"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("./w.bin").and(predicate::str::contains("--force")));
    assert!(!dir.path("a2.onnx").exists());
    cli()
        .current_dir(dir.dir())
        .args([
            "convert",
            "a.onnx",
            "a.onnx",
            "--external-data",
            "w.bin",
            "--force",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("w.bin"));
    assert_eq!(
        std::fs::read(dir.path("w.bin")).unwrap().len(),
        a_data.len()
    );
    assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model());
    // With --force the file is replaced, as asked.
    for args in [&refused[0], &refused[2]] {
        cli()
            .current_dir(dir.dir())
            .args(args)
            .arg("--force")
            .assert()
            .success();
        assert_eq!(io::load(dir.path("out.onnx")).unwrap(), other_model());
    }
}

/// Writes `passphrase` to `dir/pass` and encrypts `dir/input` to `dir/output` with it.
fn encrypt_with_passphrase_file(dir: &Scratch, passphrase: &str, input: &str, output: &str) {
    std::fs::write(dir.path("pass"), passphrase).unwrap();
    cli()
        .args(["encrypt", "--passphrase-file"])
        .arg(dir.path("pass"))
        .arg(dir.path(input))
        .arg(dir.path(output))
        .assert()
        .success();
}

fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success());
}

#[test]
fn fifos_in_place_of_files_are_refused_without_hanging() {
    let dir = Scratch::new("careless-fifo");
    save_external(&dir.path("m.onnx"), "w.bin");
    std::fs::remove_file(dir.path("w.bin")).unwrap();
    mkfifo(&dir.path("w.bin"));
    cli()
        .arg("check")
        .arg(dir.path("m.onnx"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("FIFO"));
    cli()
        .args(["convert", "--inline"])
        .arg(dir.path("m.onnx"))
        .arg(dir.path("out.onnx"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("FIFO"));
    // A FIFO as the model, and as the output of an external-data save.
    mkfifo(&dir.path("pipe.onnx"));
    cli()
        .arg("info")
        .arg(dir.path("pipe.onnx"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("FIFO"));
    // Even with --force: the rename would put a file in the FIFO's place (as it would
    // in /dev/null's), so the save refuses and the FIFO stays.
    save_plain(&dir.path("plain.onnx"));
    cli()
        .args(["convert", "--force", "--external-data", "d.bin"])
        .arg(dir.path("plain.onnx"))
        .arg(dir.path("pipe.onnx"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("the path is a FIFO"));
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(dir.path("pipe.onnx"))
        .unwrap()
        .file_type();
    assert!(kind.is_fifo());
    assert!(!dir.path("d.bin").exists());
}

#[test]
fn an_absurd_thread_count_is_a_usage_error() {
    let dir = Scratch::new("careless-threads");
    save_plain(&dir.path("m.onnx"));
    cli()
        .args(["convert", "--threads", "100000"])
        .arg(dir.path("m.onnx"))
        .arg(dir.path("o.onnx"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1024"));
    cli()
        .args(["convert", "--threads", "1024"])
        .arg(dir.path("m.onnx"))
        .arg(dir.path("o.onnx"))
        .assert()
        .success();
}

/// Under `ulimit -f`, a save fails with an error instead of dying of SIGXFSZ, and
/// leaves no temporary file.
#[test]
fn a_file_size_limit_is_an_error_and_leaves_nothing_behind() {
    let dir = Scratch::new("careless-fsize");
    save_plain(&dir.path("m.onnx"));
    let bin = assert_cmd::cargo::cargo_bin("onnx-light");
    for extra in [&[][..], &["--external-data", "w.bin"][..]] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            // 16 blocks: at most 16 KiB whatever the shell's block size.
            .arg("ulimit -f 16 && exec \"$0\" \"$@\"")
            .arg(&bin)
            .arg("convert")
            .arg(dir.path("m.onnx"))
            .arg(dir.path("o.onnx"))
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains("file size limit"), "{stderr}");
        assert_eq!(dir.entries(), ["m.onnx"], "{extra:?}");
    }
}

#[test]
fn replacing_a_file_keeps_its_permissions_but_never_set_id_bits_even_through_a_link() {
    let dir = Scratch::new("careless-perms");
    save_plain(&dir.path("m.onnx"));
    let convert_to = |out: &Path| {
        cli()
            .args(["convert", "--force"])
            .arg(dir.path("m.onnx"))
            .arg(out)
            .assert()
            .success();
    };
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().mode() & 0o7777;
    // A regular file's permissions are kept.
    save_plain(&dir.path("a.onnx"));
    std::fs::set_permissions(dir.path("a.onnx"), std::fs::Permissions::from_mode(0o640)).unwrap();
    convert_to(&dir.path("a.onnx"));
    assert_eq!(mode(&dir.path("a.onnx")), 0o640);
    // Set-user-ID, set-group-ID and sticky bits are dropped.
    std::fs::set_permissions(dir.path("a.onnx"), std::fs::Permissions::from_mode(0o7755)).unwrap();
    convert_to(&dir.path("a.onnx"));
    assert_eq!(mode(&dir.path("a.onnx")), 0o755);
    // Through a symbolic link: the link stays a link and its target is replaced, as any
    // file is: its permissions kept, its set-user-ID bit dropped.
    std::fs::write(dir.path("target.onnx"), b"old").unwrap();
    std::fs::set_permissions(
        dir.path("target.onnx"),
        std::fs::Permissions::from_mode(0o4750),
    )
    .unwrap();
    std::os::unix::fs::symlink("target.onnx", dir.path("link.onnx")).unwrap();
    convert_to(&dir.path("link.onnx"));
    assert!(std::fs::symlink_metadata(dir.path("link.onnx"))
        .unwrap()
        .is_symlink());
    assert_eq!(mode(&dir.path("target.onnx")), 0o750);
    assert_eq!(
        std::fs::read(dir.path("target.onnx")).unwrap(),
        std::fs::read(dir.path("m.onnx")).unwrap()
    );
    // A new file is not world-writable and not executable.
    convert_to(&dir.path("new.onnx"));
    assert_eq!(mode(&dir.path("new.onnx")) & 0o113, 0);
}

/// `check` reads the model instead of mapping it: a file truncated while it runs gives
/// an error or a verdict, never a SIGBUS.
#[test]
fn check_survives_its_model_being_truncated() {
    use std::os::unix::process::ExitStatusExt;
    let dir = Scratch::new("careless-truncate");
    let mut g = GraphProto::named("g");
    for i in 0..64 {
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [1 << 20],
            vec![i as u8; 1 << 20],
        ));
    }
    let big = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let path = dir.path("big.onnx");
    let bin = assert_cmd::cargo::cargo_bin("onnx-light");
    for round in 0..5 {
        io::save(&big, &path, &SerializeOptions::default().sync(false)).unwrap();
        let mut child = std::process::Command::new(&bin)
            .arg("check")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 * round));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), None, "round {round}: killed by a signal");
        assert!(
            matches!(status.code(), Some(0 | 1)),
            "round {round}: {status}"
        );
    }
}

/// Encryption streams under `ulimit -f` fail with an error and leave no temporary file
/// (one of them would hold decrypted plaintext); a FIFO as input is refused.
#[test]
fn encrypt_and_decrypt_under_a_file_size_limit_fail_cleanly() {
    let dir = Scratch::new("careless-crypt-fsize");
    save_plain(&dir.path("m.onnx"));
    encrypt_with_passphrase_file(&dir, "correct horse", "m.onnx", "m.enc");
    let bin = assert_cmd::cargo::cargo_bin("onnx-light");
    for (cmd, input, output) in [
        ("encrypt", "m.onnx", "x.enc"),
        ("decrypt", "m.enc", "x.onnx"),
    ] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -f 16 && exec \"$0\" \"$@\"")
            .arg(&bin)
            .arg(cmd)
            .arg("--passphrase-file")
            .arg(dir.path("pass"))
            .arg(dir.path(input))
            .arg(dir.path(output))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {stderr}");
        assert!(stderr.contains("file size limit"), "{cmd}: {stderr}");
        assert_eq!(dir.entries(), ["m.enc", "m.onnx", "pass"], "{cmd}");
    }
    mkfifo(&dir.path("pipe"));
    cli()
        .args(["encrypt", "--passphrase-file"])
        .arg(dir.path("pass"))
        .arg(dir.path("pipe"))
        .arg(dir.path("y.enc"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("FIFO"));
}

/// Decrypted output is readable by its owner only, also when written as a model with
/// external data.
#[test]
fn decrypted_output_is_private_in_every_form() {
    let dir = Scratch::new("careless-decrypt-mode");
    save_external(&dir.path("m.onnx"), "w.bin");
    encrypt_with_passphrase_file(&dir, "pw", "m.onnx", "m.enc");
    cli()
        .args(["decrypt", "--passphrase-file"])
        .arg(dir.path("pass"))
        .arg(dir.path("m.enc"))
        .arg(dir.path("plain.onnx"))
        .assert()
        .success();
    cli()
        .args(["decrypt", "--external-data", "d.bin", "--passphrase-file"])
        .arg(dir.path("pass"))
        .arg(dir.path("m.enc"))
        .arg(dir.path("split.onnx"))
        .assert()
        .success();
    for name in ["plain.onnx", "split.onnx", "d.bin"] {
        let mode = std::fs::metadata(dir.path(name)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}: {mode:o}");
    }
    assert_eq!(io::load(dir.path("split.onnx")).unwrap(), model());
}
