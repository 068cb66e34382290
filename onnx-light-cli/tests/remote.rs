//! `info`, `check`, `show` and `convert` with a URL input, against the test suite's
//! HTTP server with ranges on 127.0.0.1 (`tests/python/range_server.py`, which counts
//! the bytes it sends) and moto's S3 server: the same reports as for the local file, and
//! `info` fetches the structure, not the weights.

use std::path::Path;

use assert_cmd::Command;
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::scratch::Scratch;
use onnx_light_tests::servers::{HttpServer, S3Server};

const MIB: usize = 1 << 20;

fn model() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [4]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [4]));
    g.node.push(NodeProto::new("Relu", ["x"], ["y"]));
    for i in 0..6 {
        let bytes: Vec<u8> = (0..2 * MIB).map(|j| (j + i) as u8).collect();
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Float,
            [(MIB / 2) as i64],
            bytes,
        ));
    }
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn tool() -> Command {
    Command::cargo_bin("onnx-light").unwrap()
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Saves the model as `single/model.onnx` and `split/model.onnx` (+ `weights.bin`).
fn layout(dir: &Path) {
    let m = model();
    for (name, external) in [("single", false), ("split", true)] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let mut options = SerializeOptions::default();
        if external {
            options = options.external_data(ExternalDataOptions::new("weights.bin"));
        }
        io::save(&m, dir.join(name).join("model.onnx"), &options).unwrap();
    }
}

#[test]
fn info_show_and_check_of_a_url_say_what_they_say_of_the_file() {
    let dir = Scratch::new("cli-remote");
    layout(dir.dir());
    let server = HttpServer::start(dir.dir(), &[]);
    for name in ["single", "split"] {
        let path = dir.path(name).join("model.onnx");
        let url = server.url(&format!("{name}/model.onnx"));
        server.reset();
        let remote = stdout(tool().args(["info", "--json", &url]));
        // The weights stay on the server: 12 MiB of payloads, a few blocks fetched.
        let fetched = server.bytes_sent();
        assert!(fetched < 2 * MIB as u64, "info fetched {fetched} bytes");
        let local = stdout(tool().args(["info", "--json"]).arg(&path));
        let (mut r, l): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&remote).unwrap(),
            serde_json::from_str(&local).unwrap(),
        );
        // Everything but where the model was read from.
        for v in [&mut r] {
            if let Some(o) = v.as_object_mut() {
                for key in ["path", "file", "model"] {
                    if let (Some(a), Some(b)) = (o.get(key).cloned(), l.get(key)) {
                        assert_ne!(&a, b, "{key}");
                        o.insert(key.to_string(), b.clone());
                    }
                }
            }
        }
        assert_eq!(r, l, "{name}");
        assert_eq!(
            stdout(tool().args(["show", &url])),
            stdout(tool().arg("show").arg(&path)),
            "{name}"
        );
        let checked = stdout(tool().args(["check", &url]));
        assert!(checked.contains("onnx rules: passed"), "{checked}");
        if name == "split" {
            assert!(
                checked.contains("external data: 6 tensors checked"),
                "{checked}"
            );
        }
    }
}

#[test]
fn check_of_a_url_reports_a_missing_data_object_and_a_missing_model() {
    let dir = Scratch::new("cli-remote-check");
    layout(dir.dir());
    std::fs::remove_file(dir.path("split").join("weights.bin")).unwrap();
    let server = HttpServer::start(dir.dir(), &[]);
    let out = tool()
        .args(["check", &server.url("split/model.onnx")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&server.url("split/weights.bin")), "{err}");
    let missing = server.url("nothing.onnx");
    let out = tool().args(["info", &missing]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&missing), "{err}");
}

#[test]
fn convert_writes_the_model_read_from_a_url_as_from_the_file() {
    let dir = Scratch::new("cli-remote-convert");
    layout(dir.dir());
    let server = HttpServer::start(dir.dir(), &[]);
    let out = dir.path("out");
    std::fs::create_dir_all(&out).unwrap();
    for name in ["single", "split"] {
        let url = server.url(&format!("{name}/model.onnx"));
        let local = io::load(dir.path(name).join("model.onnx")).unwrap();
        // Inline, and to external data.
        let inline = out.join(format!("{name}-inline.onnx"));
        tool()
            .args(["-q", "convert", "--inline", &url])
            .arg(&inline)
            .assert()
            .success();
        assert_eq!(io::load(&inline).unwrap(), local, "{name}");
        let split = out.join(format!("{name}-split.onnx"));
        tool()
            .args([
                "-q",
                "convert",
                "--external-data",
                &format!("{name}-w.bin"),
                &url,
            ])
            .arg(&split)
            .assert()
            .success();
        assert_eq!(io::load(&split).unwrap(), local, "{name}");
        // With each data file's checksum recorded, which a verifying load checks.
        let summed = out.join(format!("{name}-summed.onnx"));
        tool()
            .args([
                "-q",
                "convert",
                "--external-data",
                &format!("{name}-s.bin"),
                "--checksum",
                &url,
            ])
            .arg(&summed)
            .assert()
            .success();
        let raw =
            io::load_with(&summed, &ParseOptions::default().load_external_data(false)).unwrap();
        assert!(raw
            .graph
            .as_ref()
            .unwrap()
            .initializer
            .iter()
            .all(|t| t.external_data.iter().any(|e| e.key() == "checksum")));
        let verified =
            io::load_with(&summed, &ParseOptions::default().verify_checksums(true)).unwrap();
        assert_eq!(verified, local, "{name}");
    }
}

#[test]
fn show_reads_a_model_from_a_local_s3_server() {
    let dir = Scratch::new("cli-remote-s3");
    layout(dir.dir());
    let server = S3Server::start();
    server.upload("models", "m", &dir.path("split"));
    let mut cmd = tool();
    for (k, v) in server.env() {
        cmd.env(k, v);
    }
    let remote = stdout(cmd.args(["show", "s3://models/m/model.onnx"]));
    let local = stdout(tool().arg("show").arg(dir.path("split").join("model.onnx")));
    assert_eq!(remote, local);
}

/// `onnx-light` with no `AWS_*` variable in its environment.
fn tool_without_aws_env() -> Command {
    let mut cmd = tool();
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

#[test]
fn an_s3_url_without_credentials_says_which_variables_to_set() {
    let url = "s3://models/m/model.onnx";
    let out = tool_without_aws_env().args(["info", url]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(url), "{err}");
    assert!(err.contains("no AWS credentials"), "{err}");
    for var in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SKIP_SIGNATURE",
    ] {
        assert!(err.contains(var), "{var}: {err}");
    }
}

#[test]
fn a_url_whose_port_refuses_connections_fails_naming_the_url() {
    // A port the system handed out and that nothing listens on any more.
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/model.onnx");
    let out = tool().args(["info", &url]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&url), "{err}");
    assert!(err.to_lowercase().contains("refused"), "{err}");
}

#[test]
fn convert_writes_to_a_local_s3_server_what_it_writes_to_disk() {
    let dir = Scratch::new("cli-remote-s3-convert");
    layout(dir.dir());
    let s3 = S3Server::start();
    // Creates the bucket and the input objects.
    s3.upload("models", "in", &dir.path("split"));
    let http = HttpServer::start(dir.dir(), &[]);
    let with_env = || {
        let mut cmd = tool();
        for (k, v) in s3.env() {
            cmd.env(k, v);
        }
        cmd
    };
    let local = io::load(dir.path("split").join("model.onnx")).unwrap();
    let cases: [(&str, String, &[&str]); 3] = [
        // A file to a URL, the external layout kept.
        (
            "kept",
            dir.path("split").join("model.onnx").display().to_string(),
            &[],
        ),
        // A URL to a URL, to new external data.
        (
            "split",
            http.url("split/model.onnx"),
            &["--external-data", "w/weights.bin"],
        ),
        // An S3 URL to another, every tensor inline.
        (
            "inline",
            "s3://models/in/model.onnx".to_string(),
            &["--inline"],
        ),
    ];
    for (name, input, args) in cases {
        let url = format!("s3://models/out/{name}/model.onnx");
        let said = stdout(with_env().args(["convert"]).args(args).args([&input, &url]));
        assert!(said.contains(&url), "{said}");
        // The same conversion to disk writes the same files as the objects.
        let on_disk = dir.path(&format!("disk-{name}"));
        std::fs::create_dir_all(&on_disk).unwrap();
        stdout(
            with_env()
                .args(["-q", "convert"])
                .args(args)
                .arg(&input)
                .arg(on_disk.join("model.onnx")),
        );
        let fetched = dir.path(&format!("fetched-{name}"));
        std::fs::create_dir_all(&fetched).unwrap();
        let keys = s3.download("models", &format!("out/{name}/"), &fetched);
        let mut files: Vec<String> = Vec::new();
        for key in &keys {
            let rel = key.strip_prefix(&format!("out/{name}/")).unwrap();
            assert_eq!(
                std::fs::read(fetched.join(rel)).unwrap(),
                std::fs::read(on_disk.join(rel)).unwrap(),
                "{name}: {rel}"
            );
            files.push(rel.to_string());
        }
        let expected: &[&str] = match name {
            "kept" => &["model.onnx", "weights.bin"],
            "split" => &["model.onnx", "w/weights.bin"],
            _ => &["model.onnx"],
        };
        assert_eq!(files, expected, "{name}");
        assert_eq!(
            io::load(on_disk.join("model.onnx")).unwrap(),
            local,
            "{name}"
        );
    }
    // An existing object needs --force; an HTTP URL is read-only.
    let url = "s3://models/out/kept/model.onnx";
    let input = dir.path("split").join("model.onnx");
    let out = with_env()
        .arg("convert")
        .arg(&input)
        .arg(url)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    stdout(
        with_env()
            .args(["-q", "convert", "--force"])
            .arg(&input)
            .arg(url),
    );
    let target = http.url("copy/model.onnx");
    let out = tool()
        .arg("convert")
        .arg(&input)
        .arg(&target)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&target) && err.contains("read-only"), "{err}");
}
