//! Models read from URLs (`onnx_light::remote`) against real servers on 127.0.0.1,
//! started by the tests from the test venv: `tests/python/range_server.py` (HTTP with
//! ranges, counting the bytes it sends) and moto's standalone S3 server. Loads from URLs
//! equal loads of the same files from disk; structure-only loads fetch little; a lazy
//! tensor fetches about its own bytes; errors are typed and name the URL.

use std::path::Path;

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::remote::{self, RemoteOptions};
use onnx_light::{ErrorKind, ExternalDataRule};
use onnx_light_tests::scratch::Scratch;
use onnx_light_tests::servers::{AzuriteServer, GcsServer, HttpServer, S3Server};

const MIB: usize = 1 << 20;

/// A model of `tensors` initializers of `size` bytes each (distinct contents), a node,
/// and a small tensor under the payload threshold.
fn model(tensors: usize, size: usize) -> Model {
    let mut g = GraphProto::named("g");
    for i in 0..tensors {
        let bytes: Vec<u8> = (0..size).map(|j| (j * 7 + i * 13) as u8).collect();
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [size as i64],
            bytes,
        ));
    }
    g.initializer.push(TensorProto::from_raw(
        "small",
        DataType::Uint8,
        [8],
        vec![3u8; 8],
    ));
    g.node.push(NodeProto::new("Relu", ["x"], ["y"]));
    ModelProto::new(g, vec![])
}

/// Saves `m` as `model.onnx` in `dir`, with external data in `weights.bin` when asked.
fn save(m: &Model, dir: &Path, external: Option<ExternalDataOptions>) {
    let mut options = SerializeOptions::default();
    if let Some(e) = external {
        options = options.external_data(e);
    }
    io::save(m, dir.join("model.onnx"), &options).unwrap();
}

fn structure_only() -> RemoteOptions {
    RemoteOptions::default().parse(ParseOptions::default().structure_only(true))
}

#[test]
fn an_owned_load_over_http_equals_the_load_from_disk_byte_for_byte() {
    let dir = Scratch::new("remote-owned");
    let single = dir.path("single");
    let split = dir.path("split");
    std::fs::create_dir_all(&single).unwrap();
    std::fs::create_dir_all(&split).unwrap();
    let m = model(4, 3 * MIB + 5);
    save(&m, &single, None);
    save(&m, &split, Some(ExternalDataOptions::new("weights.bin")));
    let server = HttpServer::start(dir.dir(), &[]);
    for name in ["single", "split"] {
        let local = io::load(dir.path(name).join("model.onnx")).unwrap();
        let remote = remote::load(&server.url(&format!("{name}/model.onnx"))).unwrap();
        assert_eq!(remote, local, "{name}");
        assert_eq!(
            remote.encode_to_vec().unwrap(),
            local.encode_to_vec().unwrap(),
            "{name}"
        );
        // Parallel parts of 8 MiB or less, concurrency 1 or many: the same bytes.
        let one = RemoteOptions::default().concurrency(1);
        let remote = remote::load_with(&server.url(&format!("{name}/model.onnx")), &one).unwrap();
        assert_eq!(remote, local, "{name}, one request at a time");
    }
}

#[test]
fn adjacent_external_tensors_are_fetched_in_few_requests() {
    let dir = Scratch::new("remote-coalesce");
    // Twelve 1 MiB tensors, 4096-aligned in one 12 MiB file: two parts of at most 8 MiB.
    let m = model(12, MIB);
    save(&m, dir.dir(), Some(ExternalDataOptions::new("weights.bin")));
    let server = HttpServer::start(dir.dir(), &[]);
    server.reset();
    let loaded = remote::load(&server.url("model.onnx")).unwrap();
    assert_eq!(loaded, m);
    // The model file, then the data in two ranged GETs.
    assert_eq!(server.requests_served(), 3);
    let data_len = std::fs::metadata(dir.path("weights.bin")).unwrap().len();
    let model_len = std::fs::metadata(dir.path("model.onnx")).unwrap().len();
    assert!(server.bytes_sent() <= model_len + data_len);
}

#[test]
fn a_structure_only_load_skips_the_payloads_and_a_lazy_tensor_fetches_its_own_bytes() {
    let dir = Scratch::new("remote-lazy");
    let m = model(8, 2 * MIB);
    save(&m, dir.dir(), None);
    let file_len = std::fs::metadata(dir.path("model.onnx")).unwrap().len();
    let server = HttpServer::start(dir.dir(), &[]);
    let url = server.url("model.onnx");
    server.reset();
    let lazy = remote::load_with(&url, &structure_only()).unwrap();
    let structure_bytes = server.bytes_sent();
    // Each payload costs at most the walk's read-ahead after it: far from the 16 MiB.
    assert!(
        structure_bytes < file_len / 8,
        "the structure load fetched {structure_bytes} of {file_len} bytes"
    );
    let local = io::load(dir.path("model.onnx")).unwrap();
    let g = lazy.graph.as_ref().unwrap();
    assert_eq!(g.node, local.graph.as_ref().unwrap().node);
    let w3 = &g.initializer[3];
    assert!(w3.raw_data.is_none());
    server.reset();
    let bytes = w3.lazy_data.as_ref().unwrap().fetch().unwrap();
    let fetched = server.bytes_sent();
    assert_eq!(
        &bytes[..],
        local.graph.as_ref().unwrap().initializer[3]
            .raw_data
            .as_deref()
            .unwrap()
    );
    assert_eq!(
        fetched,
        2 * MIB as u64,
        "one tensor fetched {fetched} bytes"
    );
    // Fetched whole, the lazy model is the model.
    let mut all = lazy.clone();
    io::materialize_lazy_data(&mut all).unwrap();
    assert_eq!(all, local);
}

#[test]
fn external_data_left_lazy_fetches_one_tensor_at_a_time() {
    let dir = Scratch::new("remote-lazy-external");
    let m = model(6, MIB);
    save(&m, dir.dir(), Some(ExternalDataOptions::new("weights.bin")));
    let server = HttpServer::start(dir.dir(), &[]);
    server.reset();
    let lazy = remote::load_with(&server.url("model.onnx"), &structure_only()).unwrap();
    // The model file (twice at most: its first bytes are sniffed first), no payload.
    let model_len = std::fs::metadata(dir.path("model.onnx")).unwrap().len();
    assert!(
        server.bytes_sent() <= 2 * model_len,
        "{} bytes fetched",
        server.bytes_sent()
    );
    let t = &lazy.graph.as_ref().unwrap().initializer[2];
    assert!(t.is_external(), "a lazy tensor keeps its external_data");
    server.reset();
    let bytes = t.lazy_data.as_ref().unwrap().fetch().unwrap();
    assert_eq!(server.bytes_sent(), MIB as u64);
    assert_eq!(
        &bytes[..],
        m.graph.as_ref().unwrap().initializer[2]
            .raw_data
            .as_deref()
            .unwrap()
    );
}

#[test]
fn a_server_without_range_support_is_read_whole_and_gives_the_same_model() {
    let dir = Scratch::new("remote-no-ranges");
    let m = model(3, MIB);
    save(&m, dir.dir(), Some(ExternalDataOptions::new("weights.bin")));
    let server = HttpServer::start(dir.dir(), &["--no-ranges"]);
    let local = io::load(dir.path("model.onnx")).unwrap();
    assert_eq!(remote::load(&server.url("model.onnx")).unwrap(), local);
    let mut lazy = remote::load_with(&server.url("model.onnx"), &structure_only()).unwrap();
    io::materialize_lazy_data(&mut lazy).unwrap();
    lazy.visit_tensors_mut(|_, t| {
        t.data_location = None;
        t.external_data.clear();
    });
    assert_eq!(lazy, local);
}

#[test]
fn a_missing_object_is_not_found_and_a_refused_one_permission_denied_naming_the_url() {
    let dir = Scratch::new("remote-errors");
    let m = model(1, 4096);
    std::fs::create_dir_all(dir.path("private")).unwrap();
    std::fs::create_dir_all(dir.path("broken")).unwrap();
    save(&m, &dir.path("private"), None);
    // The model is there; its data file is not.
    save(
        &m,
        &dir.path("broken"),
        Some(ExternalDataOptions::new("weights.bin")),
    );
    std::fs::remove_file(dir.path("broken").join("weights.bin")).unwrap();
    let server = HttpServer::start(dir.dir(), &["--deny", "private/"]);

    let url = server.url("nothing/model.onnx");
    let e = remote::load(&url).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&url)));
    assert!(e.to_string().contains(&url), "{e}");

    let url = server.url("private/model.onnx");
    let e = remote::load(&url).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::PermissionDenied),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&url)));

    let e = remote::load(&server.url("broken/model.onnx")).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&server.url("broken/weights.bin"))));

    // Nothing listens on the port: a refused connection, named as one, naming the URL.
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/model.onnx");
    let e = remote::load(&url).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::ConnectionRefused),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&url)));

    let e = remote::load("ftp://example/model.onnx").unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::InvalidOption { name: "url", .. }),
        "{e}"
    );
}

/// Sets `t`'s external-data `location` to `location`.
fn relocate(m: &mut Model, location: &str) {
    m.visit_tensors_mut(|_, t| {
        for e in t.external_data.iter_mut() {
            if e.key() == "location" {
                *e = StringStringEntryProto::new("location", location.to_string());
            }
        }
    });
}

#[test]
fn no_location_leaves_the_model_prefix() {
    let dir = Scratch::new("remote-escape");
    std::fs::create_dir_all(dir.path("inner")).unwrap();
    let m = model(1, 4096);
    save(
        &m,
        &dir.path("inner"),
        Some(ExternalDataOptions::new("weights.bin")),
    );
    // A copy of the data one level up, where `../weights.bin` would find it.
    std::fs::copy(
        dir.path("inner").join("weights.bin"),
        dir.path("weights.bin"),
    )
    .unwrap();
    let loaded = io::load_with(
        dir.path("inner").join("model.onnx"),
        &ParseOptions::default().load_external_data(false),
    )
    .unwrap();
    let server = HttpServer::start(dir.dir(), &[]);
    for bad in ["../weights.bin", "/weights.bin", "a/../../weights.bin"] {
        let mut escaping = loaded.clone();
        relocate(&mut escaping, bad);
        server.reset();
        let e = remote::load_external_data_for_model(
            &mut escaping,
            &server.url("inner/model.onnx"),
            &RemoteOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e.kind(),
                ErrorKind::InvalidExternalData {
                    rule: ExternalDataRule::Location,
                    ..
                }
            ),
            "{bad}: {e}"
        );
        assert_eq!(server.bytes_sent(), 0, "{bad}: nothing is fetched");
    }
    // The same model resolves its own data beside it.
    let mut ok = loaded.clone();
    remote::load_external_data_for_model(
        &mut ok,
        &server.url("inner/model.onnx"),
        &RemoteOptions::default(),
    )
    .unwrap();
    assert_eq!(ok, io::load(dir.path("inner").join("model.onnx")).unwrap());
}

/// Writes `checksum` into every external tensor of the model in `dir` (saved again).
fn record_checksum(dir: &Path, checksum: &str) {
    let path = dir.join("model.onnx");
    let mut m = io::load_with(&path, &ParseOptions::default().load_external_data(false)).unwrap();
    m.visit_tensors_mut(|_, t| {
        if t.is_external() {
            t.external_data.retain(|e| e.key() != "checksum");
            t.external_data
                .push(StringStringEntryProto::new("checksum", checksum));
        }
    });
    let bytes = m.encode_to_vec().unwrap();
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn checksums_are_verified_by_default_and_the_check_can_be_turned_off() {
    let dir = Scratch::new("remote-checksum");
    let m = model(3, MIB);
    save(&m, dir.dir(), Some(ExternalDataOptions::new("weights.bin")));
    let data = std::fs::read(dir.path("weights.bin")).unwrap();
    let sum = sha1_hex(&data);
    let server = HttpServer::start(dir.dir(), &[]);
    let url = server.url("model.onnx");
    record_checksum(dir.dir(), &sum);
    let local = io::load(dir.path("model.onnx")).unwrap();
    server.reset();
    assert_eq!(remote::load(&url).unwrap(), local);
    // The data file crossed the network once, for the hash and the tensors together.
    let model_len = std::fs::metadata(dir.path("model.onnx")).unwrap().len();
    assert_eq!(server.bytes_sent(), model_len + data.len() as u64);

    let wrong = "0".repeat(40);
    record_checksum(dir.dir(), &wrong);
    let e = remote::load(&url).unwrap_err();
    match e.kind() {
        ErrorKind::ChecksumMismatch { expected, actual } => {
            assert_eq!(
                (expected.as_str(), actual.as_str()),
                (wrong.as_str(), sum.as_str())
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.file(), Some(Path::new(&server.url("weights.bin"))));
    let unchecked = RemoteOptions::default().verify_checksums(false);
    let loaded = remote::load_with(&url, &unchecked).unwrap();
    assert_eq!(loaded, io::load(dir.path("model.onnx")).unwrap());
}

#[test]
fn models_in_a_local_s3_server_load_as_from_disk() {
    let dir = Scratch::new("remote-s3");
    let m = model(5, 3 * MIB);
    let single = dir.path("single");
    let split = dir.path("split");
    std::fs::create_dir_all(&single).unwrap();
    std::fs::create_dir_all(&split).unwrap();
    save(&m, &single, None);
    save(&m, &split, Some(ExternalDataOptions::new("weights.bin")));
    let server = S3Server::start();
    server.upload("models", "a/single", &single);
    server.upload("models", "a/split", &split);
    // The store reads its endpoint and credentials from the environment, as users
    // configure it; no other test of this binary uses these variables.
    for (k, v) in server.env() {
        std::env::set_var(k, v);
    }
    for name in ["single", "split"] {
        let local = io::load(dir.path(name).join("model.onnx")).unwrap();
        let url = format!("s3://models/a/{name}/model.onnx");
        let loaded = remote::load(&url).unwrap();
        assert_eq!(
            loaded.encode_to_vec().unwrap(),
            local.encode_to_vec().unwrap()
        );
        let mut lazy = remote::load_with(&url, &structure_only()).unwrap();
        io::materialize_lazy_data(&mut lazy).unwrap();
        lazy.visit_tensors_mut(|_, t| {
            t.data_location = None;
            t.external_data.clear();
        });
        assert_eq!(lazy, local, "{name}");
    }
    let e = remote::load("s3://models/a/missing.onnx").unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new("s3://models/a/missing.onnx")));
    // Saves share the server: the store's settings are the process's environment.
    saves_to_s3_equal_saves_to_disk(&server, &dir);
}

/// Every file under `root`, as (path relative to it, bytes), sorted.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let name = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Remote saves against the S3 server (its environment set): the objects are the files
/// of the same save to disk, byte for byte, with data objects beside the model, large
/// ones through multipart uploads; a location leaving the prefix writes nothing.
fn saves_to_s3_equal_saves_to_disk(server: &S3Server, dir: &Scratch) {
    // 20 MiB of weights: the single-file model and the data file are multipart uploads.
    let m = model(4, 5 * MIB + 3);
    let cases = [
        ("single", SerializeOptions::default()),
        (
            "split",
            SerializeOptions::default().external_data(
                ExternalDataOptions::new("data/weights.bin")
                    .max_file_size(12 * MIB as u64)
                    .checksum(true),
            ),
        ),
    ];
    for (name, options) in cases {
        let local = dir.path(&format!("save-local-{name}"));
        std::fs::create_dir_all(&local).unwrap();
        let saved_local = io::save(&m, local.join("model.onnx"), &options).unwrap();
        let url = format!("s3://models/saved/{name}/model.onnx");
        let saved = remote::save(&m, &url, &options).unwrap();
        assert_eq!(saved.model.url, url);
        assert_eq!(saved.model.len, saved_local.model_len);
        let locations: Vec<_> = saved
            .data_objects
            .iter()
            .map(|o| o.location.clone())
            .collect();
        let local_locations: Vec<_> = saved_local
            .data_files
            .iter()
            .map(|f| f.location.clone())
            .collect();
        assert_eq!(locations, local_locations, "{name}");
        let fetched = dir.path(&format!("save-fetched-{name}"));
        std::fs::create_dir_all(&fetched).unwrap();
        let keys = server.download("models", &format!("saved/{name}/"), &fetched);
        assert_eq!(keys.len(), 1 + local_locations.len(), "{name}: {keys:?}");
        assert!(
            tree(&fetched) == tree(&local),
            "{name}: the objects differ from the files"
        );
        let loaded = remote::load(&url).unwrap();
        assert_eq!(
            loaded,
            io::load(local.join("model.onnx")).unwrap(),
            "{name}"
        );
    }

    // A location that leaves the model's prefix: refused, nothing written anywhere.
    for bad in ["../escape.bin", "/tmp/escape.bin", "a/../../escape.bin"] {
        let options = SerializeOptions::default().external_data(ExternalDataOptions::new(bad));
        let e = remote::save(&m, "s3://models/esc/inner/model.onnx", &options).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                ErrorKind::InvalidOption { .. }
                    | ErrorKind::InvalidExternalData {
                        rule: ExternalDataRule::Location,
                        ..
                    }
            ),
            "{bad}: {e}"
        );
    }
    let fetched = dir.path("save-fetched-esc");
    std::fs::create_dir_all(&fetched).unwrap();
    assert_eq!(
        server.download("models", "esc", &fetched),
        Vec::<String>::new()
    );
}

#[test]
fn http_urls_are_read_only_and_file_urls_save_as_the_disk_does() {
    let dir = Scratch::new("remote-save-file");
    let m = model(2, 9 * MIB);
    let options =
        SerializeOptions::default().external_data(ExternalDataOptions::new("weights.bin"));
    let server = HttpServer::start(dir.dir(), &[]);
    let url = server.url("model.onnx");
    let e = remote::save(&m, &url, &options).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::Unsupported),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&url)));
    assert!(!dir.path("model.onnx").exists() && !dir.path("weights.bin").exists());

    let local = dir.path("local");
    let through_url = dir.path("url");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::create_dir_all(&through_url).unwrap();
    io::save(&m, local.join("model.onnx"), &options).unwrap();
    let target = format!(
        "file://{}/model.onnx",
        std::fs::canonicalize(&through_url).unwrap().display()
    );
    let saved = remote::save(&m, &target, &options).unwrap();
    assert_eq!(saved.data_objects.len(), 1);
    assert!(tree(&through_url) == tree(&local), "the files differ");
}

#[test]
fn file_urls_are_read_through_the_same_path() {
    let dir = Scratch::new("remote-file");
    let m = model(2, MIB);
    save(&m, dir.dir(), Some(ExternalDataOptions::new("weights.bin")));
    let path = std::fs::canonicalize(dir.path("model.onnx")).unwrap();
    let url = format!("file://{}", path.display());
    assert_eq!(remote::load(&url).unwrap(), io::load(&path).unwrap());
    assert!(remote::is_url(&url) && remote::is_url("s3://b/k") && !remote::is_url("m.onnx"));
}

#[test]
fn a_url_that_names_no_object_is_refused_before_anything_is_written() {
    let dir = Scratch::new("remote-no-object");
    let m = model(1, MIB);
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    let base = std::fs::canonicalize(dir.dir()).unwrap();
    std::fs::create_dir(base.join("sub")).unwrap();
    // A directory, a store's root, a scheme alone: none is an object to write.
    for url in [
        format!("file://{}/sub/", base.display()),
        format!("file://{}/new/", base.display()),
        "s3://".to_string(),
        "gs://".to_string(),
        "az://".to_string(),
    ] {
        assert!(remote::is_url(&url), "{url}");
        for err in [
            remote::save(&m, &url, &options).unwrap_err(),
            remote::check_writable(&url).unwrap_err(),
        ] {
            assert!(
                matches!(err.kind(), ErrorKind::InvalidOption { name: "url", .. }),
                "{url}: {err}"
            );
            assert!(err.to_string().contains(&url), "{url}: {err}");
        }
    }
    assert_eq!(dir.entries(), ["sub"]);
    assert!(std::fs::read_dir(base.join("sub"))
        .unwrap()
        .next()
        .is_none());
    let err = remote::load("s3://").unwrap_err();
    assert!(err.to_string().contains("names no bucket"), "{err}");
}

/// SHA-1 of `bytes`, hex, computed here without the library.
fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_save_records_each_data_files_checksum_and_loads_verify_it() {
    let dir = Scratch::new("remote-checksum-save");
    let m = model(5, MIB);
    let external = ExternalDataOptions::new("weights.bin")
        .max_file_size(3 * MIB as u64)
        .checksum(true);
    save(&m, dir.dir(), Some(external));
    let path = dir.path("model.onnx");
    let raw = io::load_with(&path, &ParseOptions::default().load_external_data(false)).unwrap();
    let mut recorded = 0;
    raw.visit_tensors(|_, t| {
        if !t.is_external() {
            return;
        }
        let r = io::external::ExternalDataRef::from_tensor(t).unwrap();
        let data = std::fs::read(dir.path(&r.location)).unwrap();
        assert_eq!(
            r.checksum.as_deref(),
            Some(sha1_hex(&data).as_str()),
            "{}",
            t.name()
        );
        recorded += 1;
    });
    assert_eq!(recorded, 5);
    // Loads verify the recorded sums: from disk when asked, from a URL by default.
    let verified = io::load_with(&path, &ParseOptions::default().verify_checksums(true)).unwrap();
    assert_eq!(verified, m);
    let server = HttpServer::start(dir.dir(), &[]);
    assert_eq!(remote::load(&server.url("model.onnx")).unwrap(), m);
    // One flipped byte in the second file.
    let second = dir.path("weights.bin.1");
    let mut data = std::fs::read(&second).unwrap();
    data[100] ^= 1;
    std::fs::write(&second, data).unwrap();
    let e = remote::load(&server.url("model.onnx")).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::ChecksumMismatch { .. }),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new(&server.url("weights.bin.1"))));
}

#[test]
fn models_in_azurite_save_and_load_as_on_disk() {
    let dir = Scratch::new("remote-azure");
    std::fs::create_dir_all(dir.path("azurite")).unwrap();
    let Some(server) = AzuriteServer::start(&dir.path("azurite")) else {
        return;
    };
    server.create_container("models");
    // The store reads the emulator's settings from the environment; no other test of
    // this binary uses these variables.
    for (k, v) in server.env() {
        std::env::set_var(k, v);
    }
    // 20 MiB: the single model object and the data file go up in parts.
    let m = model(4, 5 * MIB + 3);
    let cases = [
        ("single", SerializeOptions::default()),
        (
            "split",
            SerializeOptions::default()
                .external_data(ExternalDataOptions::new("data/weights.bin").checksum(true)),
        ),
    ];
    for (name, options) in cases {
        let local = dir.path(&format!("local-{name}"));
        std::fs::create_dir_all(&local).unwrap();
        let saved_local = io::save(&m, local.join("model.onnx"), &options).unwrap();
        let url = format!("az://models/{name}/model.onnx");
        let saved = remote::save(&m, &url, &options).unwrap();
        // The objects are the files, byte for byte.
        let scratch = dir.path(&format!("fetched-{name}"));
        std::fs::create_dir_all(&scratch).unwrap();
        assert!(
            server.get("models", &format!("{name}/model.onnx"), &scratch)
                == std::fs::read(local.join("model.onnx")).unwrap(),
            "{name}: the model object differs from the file"
        );
        assert_eq!(saved.data_objects.len(), saved_local.data_files.len());
        for file in &saved_local.data_files {
            let key = format!("{name}/{}", file.location);
            assert!(
                server.get("models", &key, &scratch) == std::fs::read(&file.path).unwrap(),
                "{key} differs from its file"
            );
        }
        // Loaded whole, and structure first with one tensor fetched lazily.
        let from_disk = io::load(local.join("model.onnx")).unwrap();
        assert_eq!(remote::load(&url).unwrap(), from_disk, "{name}");
        let lazy = remote::load_with(&url, &structure_only()).unwrap();
        let w2 = &lazy.graph.as_ref().unwrap().initializer[2];
        assert!(w2.raw_data.is_none(), "{name}");
        let bytes = w2.lazy_data.as_ref().unwrap().fetch().unwrap();
        assert_eq!(
            &bytes[..],
            from_disk.graph.as_ref().unwrap().initializer[2]
                .raw_data
                .as_deref()
                .unwrap(),
            "{name}"
        );
    }
    let e = remote::load("az://models/missing/model.onnx").unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new("az://models/missing/model.onnx")));
}

#[test]
fn models_in_a_local_gcs_server_load_as_from_disk() {
    let dir = Scratch::new("remote-gcs");
    let m = model(4, 3 * MIB);
    for (name, external) in [("single", None), ("split", Some("weights.bin"))] {
        std::fs::create_dir_all(dir.path(name)).unwrap();
        save(&m, &dir.path(name), external.map(ExternalDataOptions::new));
    }
    let server = GcsServer::start();
    server.upload("models", "a/single", &dir.path("single"));
    server.upload("models", "a/split", &dir.path("split"));
    // The store's settings are the environment's; no other test of this binary uses
    // this variable.
    for (k, v) in server.env(&dir.path("service-account.json")) {
        std::env::set_var(k, v);
    }
    for name in ["single", "split"] {
        let url = format!("gs://models/a/{name}/model.onnx");
        let local = io::load(dir.path(name).join("model.onnx")).unwrap();
        let loaded = remote::load(&url).unwrap();
        assert_eq!(
            loaded.encode_to_vec().unwrap(),
            local.encode_to_vec().unwrap(),
            "{name}"
        );
        let lazy = remote::load_with(&url, &structure_only()).unwrap();
        let w1 = &lazy.graph.as_ref().unwrap().initializer[1];
        assert!(w1.raw_data.is_none(), "{name}");
        let bytes = w1.lazy_data.as_ref().unwrap().fetch().unwrap();
        assert_eq!(
            &bytes[..],
            local.graph.as_ref().unwrap().initializer[1]
                .raw_data
                .as_deref()
                .unwrap(),
            "{name}"
        );
    }
    let e = remote::load("gs://models/a/missing.onnx").unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert_eq!(e.file(), Some(Path::new("gs://models/a/missing.onnx")));
}
