//! One object in a store: its URL, its size, ranged reads (one, or many in parallel),
//! and the errors of the store as this crate's. Owns the tokio runtime every remote call
//! runs on, so that callers of the synchronous API never see async code.

use std::future::Future;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{GetOptions, ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::field::{Bytes, PayloadSource};
use crate::io::progress::{self, SharedProgress};
use crate::io::ReadRanges;

/// The largest single ranged GET: a payload larger than this is fetched in parts of this
/// size, in parallel, so that one huge tensor still uses every connection.
pub(crate) const PART: u64 = 8 << 20;

/// The runtime all remote I/O runs on: two worker threads drive the connections (the
/// work is waiting on the network; the copies are on the caller's thread).
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> =
        OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("onnx-light-remote")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| {
            Error::io(
                std::io::Error::other(format!("cannot start the I/O runtime: {e}")),
                None,
            )
        })
}

/// Runs `future` to completion on the runtime and waits for it. From inside another
/// tokio runtime (where blocking on this one would panic), it waits on a scoped thread.
pub(crate) fn block_on<F>(future: F) -> Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(rt.block_on(future));
    }
    std::thread::scope(|s| s.spawn(|| rt.block_on(future)).join()).map_err(|_| {
        Error::io(
            std::io::Error::other("a remote read panicked on its thread"),
            None,
        )
    })
}

/// A place in a store: the store, the object's path in it, and the URL that names it.
#[derive(Debug, Clone)]
pub(crate) struct Location {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: StorePath,
    pub(crate) url: Url,
}

/// True when `text` is a URL this module reads (`s3://`, `s3a://`, `gs://`, `az://`,
/// `azure://`, `abfs://`, `abfss://`, `adl://`, `http://`, `https://`, `file://`), not a
/// local path. A URL with nothing after the scheme (`s3://`) is a URL too, one that names
/// no object: taking it for a local path would write a file named `s3:`.
pub fn is_url(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once("://") else {
        return false;
    };
    matches!(
        scheme.to_ascii_lowercase().as_str(),
        "s3" | "s3a" | "gs" | "az" | "azure" | "abfs" | "abfss" | "adl" | "http" | "https" | "file"
    )
}

fn bad_url(url: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid_option("url", format!("{url}: {why}"))
}

impl Location {
    /// Parses `url` and builds its store from the environment, as the store's own
    /// builders read it (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`,
    /// `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, ...).
    ///
    /// # Errors
    /// `InvalidOption` (option `url`) for a URL that does not parse, a scheme this module
    /// does not read, or a store the environment cannot configure.
    pub(crate) fn parse(url: &str) -> Result<Location> {
        let parsed = Url::parse(url).map_err(|e| bad_url(url, e))?;
        if !is_url(url) {
            return Err(bad_url(url, "not an s3, gs, az, abfs, http(s) or file URL"));
        }
        // Caught here, before a store's builder asks for credentials it does not need.
        if parsed.scheme() != "file" && parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad_url(url, "names no bucket, container or host"));
        }
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad_url(url, e))?;
        let path = StorePath::from_url_path(path.as_ref()).map_err(|e| bad_url(url, e))?;
        let built = |e: object_store::Error| bad_url(url, e);
        let store: Arc<dyn ObjectStore> = match scheme {
            ObjectStoreScheme::AmazonS3 => {
                let builder = object_store::aws::AmazonS3Builder::from_env().with_url(url);
                if !aws_credentials_configured(&builder) {
                    return Err(no_aws_credentials(url));
                }
                Arc::new(
                    builder
                        .with_http_connector(FailFastConnector)
                        .build()
                        .map_err(built)?,
                )
            }
            ObjectStoreScheme::GoogleCloudStorage => Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_http_connector(FailFastConnector)
                    .build()
                    .map_err(built)?,
            ),
            ObjectStoreScheme::MicrosoftAzure => Arc::new(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_http_connector(FailFastConnector)
                    .build()
                    .map_err(built)?,
            ),
            ObjectStoreScheme::Http => Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(&parsed[..url::Position::BeforePath])
                    .with_http_connector(FailFastConnector)
                    // A URL that says `http://` asks for plain HTTP.
                    .with_client_options(
                        object_store::ClientOptions::new()
                            .with_allow_http(parsed.scheme() == "http"),
                    )
                    .build()
                    .map_err(built)?,
            ),
            ObjectStoreScheme::Local => Arc::new(object_store::local::LocalFileSystem::new()),
            other => return Err(bad_url(url, format!("{other:?} is not read here"))),
        };
        Ok(Location {
            store,
            path,
            url: parsed,
        })
    }

    /// The object at `relative` (a location already checked by
    /// [`validate_location`](crate::io::external::validate_location): relative, no `..`)
    /// beside this one, in the same store.
    pub(crate) fn sibling(&self, relative: &Path) -> Location {
        let mut parts: Vec<object_store::path::PathPart<'static>> = self
            .path
            .parts()
            .map(|p| p.as_ref().to_string().into())
            .collect();
        parts.pop();
        let mut url = self.url.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop();
            for c in relative.components() {
                let part = c.as_os_str().to_string_lossy().into_owned();
                segments.push(&part);
                parts.push(part.into());
            }
        }
        Location {
            store: self.store.clone(),
            path: StorePath::from_iter(parts),
            url,
        }
    }

    /// The location that a base URL (a "directory" of the store) and a relative location
    /// resolve to: the base itself stands for the model, whose siblings are wanted.
    pub(crate) fn directory(url: &str) -> Result<Location> {
        let with_slash = if url.ends_with('/') {
            url.to_string()
        } else {
            format!("{url}/")
        };
        // A placeholder last segment, which `sibling` replaces.
        Location::parse(&format!("{with_slash}_"))
    }

    /// The error `e` from the store, about this object.
    pub(crate) fn error(&self, e: object_store::Error) -> Error {
        store_error(e, self.url.as_str())
    }
}

/// True when the environment gives the S3 store a way to authenticate other than the
/// cloud's instance-metadata endpoint: a key pair, unsigned requests, a web identity, a
/// container's credentials, or an explicit `AWS_METADATA_ENDPOINT`. Without one the
/// store would ask `169.254.169.254`, which off a cloud instance fails slowly and
/// obscurely.
fn aws_credentials_configured(builder: &object_store::aws::AmazonS3Builder) -> bool {
    use object_store::aws::AmazonS3ConfigKey as Key;
    let set = |key: Key| {
        builder
            .get_config_value(&key)
            .is_some_and(|v| !v.trim().is_empty())
    };
    let yes = |key: Key| {
        builder
            .get_config_value(&key)
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"))
    };
    set(Key::AccessKeyId)
        || set(Key::SecretAccessKey)
        || yes(Key::SkipSignature)
        || (set(Key::WebIdentityTokenFile) && set(Key::RoleArn))
        || set(Key::ContainerCredentialsRelativeUri)
        || (set(Key::ContainerCredentialsFullUri) && set(Key::ContainerAuthorizationTokenFile))
        || set(Key::MetadataEndpoint)
        || on_ec2(Path::new("/"))
}

/// Whether the machine under `root` says it is an EC2 instance, from what its firmware
/// and hypervisor tell the kernel (no request is made): there the instance's role is the
/// usual credential, so the metadata endpoint is asked as on any EC2 tool.
fn on_ec2(root: &Path) -> bool {
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
    [
        "sys/class/dmi/id/sys_vendor",
        "sys/class/dmi/id/board_vendor",
    ]
    .iter()
    .any(|p| read(p).trim() == "Amazon EC2")
        || read("sys/hypervisor/uuid")
            .trim()
            .get(..3)
            .is_some_and(|head| head.eq_ignore_ascii_case("ec2"))
}

/// The error of an `s3://` URL read with no credentials in the environment: what to set.
fn no_aws_credentials(url: &str) -> Error {
    let message = "no AWS credentials found in the environment: set AWS_ACCESS_KEY_ID and \
        AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials; AWS_PROFILE \
        and ~/.aws are not read, `aws configure export-credentials --format env` prints a \
        profile's keys), or AWS_SKIP_SIGNATURE=true for a public bucket, or \
        AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN; an EC2 instance's role is used on \
        the instance itself, and elsewhere an instance-metadata endpoint only when \
        AWS_METADATA_ENDPOINT names it";
    Error::io(
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, message),
        Some(Path::new(url)),
    )
}

/// The HTTP client of every store, with one change to the store's retries: a connection
/// the server's host refuses (nothing listens on the port) fails at once instead of
/// being retried with backoff for seconds. Other transport errors, timeouts and `5xx`
/// answers are retried as the store does.
#[derive(Debug)]
struct FailFastConnector;

impl object_store::client::HttpConnector for FailFastConnector {
    fn connect(
        &self,
        options: &object_store::ClientOptions,
    ) -> object_store::Result<object_store::client::HttpClient> {
        let inner = object_store::client::ReqwestConnector::default().connect(options)?;
        Ok(object_store::client::HttpClient::new(FailFast(inner)))
    }
}

#[derive(Debug)]
struct FailFast(object_store::client::HttpClient);

#[async_trait::async_trait]
impl object_store::client::HttpService for FailFast {
    async fn call(
        &self,
        req: object_store::client::HttpRequest,
    ) -> std::result::Result<object_store::client::HttpResponse, object_store::client::HttpError>
    {
        use object_store::client::{HttpError, HttpErrorKind};
        self.0.execute(req).await.map_err(|e| {
            if e.kind() == HttpErrorKind::Connect && connection_refused(&e) {
                // A kind the store does not retry.
                HttpError::new(HttpErrorKind::Unknown, e)
            } else {
                e
            }
        })
    }
}

/// True when `e` (or an error it wraps) is a refused connection.
fn connection_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = s.source();
    }
    false
}

/// A store's error as this crate's: a missing object is `Io(NotFound)` and a refusal
/// `Io(PermissionDenied)`, both naming the URL (as the file).
pub(crate) fn store_error(e: object_store::Error, url: &str) -> Error {
    use std::io::ErrorKind as Io;
    let kind = match &e {
        object_store::Error::NotFound { .. } => Io::NotFound,
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => Io::PermissionDenied,
        object_store::Error::NotSupported { .. } | object_store::Error::NotImplemented { .. } => {
            Io::Unsupported
        }
        _ if connection_refused(&e) => Io::ConnectionRefused,
        _ => Io::Other,
    };
    let message = if kind == Io::ConnectionRefused {
        format!("connection refused (is the server up, and the port right?): {e}")
    } else {
        e.to_string()
    };
    Error::io(std::io::Error::new(kind, message), Some(Path::new(url)))
}

/// True when the server answered a range request with the whole object: it does not
/// serve ranges.
fn ranges_unsupported(e: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        let text = s.to_string();
        // The store's two ways of saying it: a HEAD without `Accept-Ranges: bytes`, or a
        // `200` with the whole body for a ranged GET.
        if text.contains("non-partial response") || text.contains("Range request not supported") {
            return true;
        }
        source = s.source();
    }
    false
}

/// An object of a store, its size known: the reads of a structure walk, the fetches of
/// lazy payloads and the parallel fills of eager loads. A server that does not serve
/// ranges is read once, whole, and every range is cut from that copy.
#[derive(Debug)]
pub(crate) struct RemoteObject {
    pub(crate) location: Location,
    pub(crate) size: u64,
    whole_only: AtomicBool,
    whole: tokio::sync::OnceCell<bytes::Bytes>,
}

impl RemoteObject {
    /// Asks the store for the object's size.
    ///
    /// # Errors
    /// `Io(NotFound)` or `Io(PermissionDenied)` naming the URL, or another I/O error.
    pub(crate) async fn open(location: Location) -> Result<RemoteObject> {
        let head = GetOptions::new().with_head(true);
        let meta = location
            .store
            .get_opts(&location.path, head)
            .await
            .map_err(|e| location.error(e))?
            .meta;
        Ok(RemoteObject {
            location,
            size: meta.size,
            whole_only: AtomicBool::new(false),
            whole: tokio::sync::OnceCell::new(),
        })
    }

    /// The URL, for messages.
    pub(crate) fn url(&self) -> &str {
        self.location.url.as_str()
    }

    /// The bytes in `range` (within the size), from the store.
    pub(crate) async fn get(&self, range: Range<u64>) -> Result<bytes::Bytes> {
        if range.end > self.size {
            return Err(Error::at(
                ErrorKind::Truncated {
                    needed: range.end - range.start,
                    remaining: self.size.saturating_sub(range.start),
                },
                range.start,
            )
            .in_file(Path::new(self.url())));
        }
        if range.is_empty() {
            return Ok(bytes::Bytes::new());
        }
        if !self.whole_only.load(Ordering::Relaxed) {
            let ranged = GetOptions::new().with_range(Some(range.clone()));
            let got = match self
                .location
                .store
                .get_opts(&self.location.path, ranged)
                .await
            {
                Ok(r) => r.bytes().await,
                Err(e) => Err(e),
            };
            match got {
                Ok(b) => return self.checked(b, &range),
                Err(e) if ranges_unsupported(&e) => {
                    self.whole_only.store(true, Ordering::Relaxed);
                }
                Err(e) => return Err(self.location.error(e)),
            }
        }
        let whole = self
            .whole
            .get_or_try_init(|| async {
                let all = GetOptions::new();
                let got = self.location.store.get_opts(&self.location.path, all).await;
                let got = got.map_err(|e| self.location.error(e))?;
                got.bytes().await.map_err(|e| self.location.error(e))
            })
            .await?;
        let r = self.checked(whole.clone(), &(0..self.size))?;
        Ok(r.slice(range.start as usize..range.end as usize))
    }

    /// `got`, when it is as long as `range` (an object that changed size since it was
    /// opened gives an error, never a short payload).
    fn checked(&self, got: bytes::Bytes, range: &Range<u64>) -> Result<bytes::Bytes> {
        let want = range.end - range.start;
        if got.len() as u64 != want {
            return Err(Error::at(
                ErrorKind::Truncated {
                    needed: want,
                    remaining: got.len() as u64,
                },
                range.start,
            )
            .in_file(Path::new(self.url())));
        }
        Ok(got)
    }

    /// Fills each `(destination, offset)` with the object's bytes there, by ranged GETs
    /// of at most [`PART`] bytes, at most `concurrency` at a time; each part is told to
    /// `progress` once copied.
    pub(crate) async fn fill(
        &self,
        parts: Vec<(&mut [u8], u64)>,
        concurrency: usize,
        progress: Option<&SharedProgress>,
    ) -> Result<()> {
        let mut split = Vec::new();
        for (dst, offset) in parts {
            let mut at = offset;
            for chunk in dst.chunks_mut(PART as usize) {
                let len = chunk.len() as u64;
                split.push((chunk, at));
                at += len;
            }
        }
        // Boxed before the stream is made, so that its type holds no closure (whose
        // lifetimes the `Send` check of the future could not generalize).
        let requests: Vec<BoxFuture<'_, Result<()>>> = split
            .into_iter()
            .map(|(dst, at)| {
                async move {
                    let got = self.get(at..at + dst.len() as u64).await?;
                    dst.copy_from_slice(&got);
                    progress::advance(progress, got.len() as u64);
                    Ok(())
                }
                .boxed()
            })
            .collect();
        futures_util::stream::iter(requests)
            .buffer_unordered(concurrency.max(1))
            .try_collect::<()>()
            .await
    }
}

impl ReadRanges for RemoteObject {
    fn read_exact_at(&self, dst: &mut [u8], offset: u64) -> Result<()> {
        let end = offset.saturating_add(dst.len() as u64);
        let got = block_on(self.get(offset..end))??;
        dst.copy_from_slice(&got);
        Ok(())
    }
}

impl PayloadSource for RemoteObject {
    fn fetch(&self, offset: u64, len: u64) -> Result<Bytes<'static>> {
        let size = usize::try_from(len).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "payload larger than the address space",
            })
        })?;
        let mut buf = vec![0u8; size];
        block_on(self.fill(
            vec![(&mut buf[..], offset)],
            super::options::DEFAULT_CONCURRENCY,
            None,
        ))??;
        Ok(Bytes::from(buf))
    }

    fn describe(&self) -> String {
        self.url().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::on_ec2;
    use std::path::Path;

    /// A fresh root named `name` holding `files` (path under the root, contents); removed
    /// on drop.
    struct Root(std::path::PathBuf);

    impl Root {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn root_with(name: &str, files: &[(&str, &str)]) -> Root {
        let dir = std::env::temp_dir().join(format!("ec2-root-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Root(dir)
    }

    #[test]
    fn an_ec2_instance_is_recognised_from_its_firmware_tables() {
        let nitro = root_with("nitro", &[("sys/class/dmi/id/sys_vendor", "Amazon EC2\n")]);
        assert!(on_ec2(nitro.path()));
        let board = root_with(
            "board",
            &[("sys/class/dmi/id/board_vendor", "Amazon EC2\n")],
        );
        assert!(on_ec2(board.path()));
        let xen = root_with(
            "xen",
            &[(
                "sys/hypervisor/uuid",
                "ec2e1916-9099-7caf-fd21-012345abcdef\n",
            )],
        );
        assert!(on_ec2(xen.path()));
        let upper = root_with("upper", &[("sys/hypervisor/uuid", "EC2E1916-9099-7CAF\n")]);
        assert!(on_ec2(upper.path()));
    }

    #[test]
    fn other_machines_are_not_taken_for_ec2() {
        let other = root_with(
            "other",
            &[
                ("sys/class/dmi/id/sys_vendor", "QEMU\n"),
                ("sys/class/dmi/id/board_vendor", "Amazon EC2 lookalike\n"),
                (
                    "sys/hypervisor/uuid",
                    "4f3c2a1b-0000-1111-2222-333344445555\n",
                ),
            ],
        );
        assert!(!on_ec2(other.path()));
        let short = root_with("short", &[("sys/hypervisor/uuid", "ec")]);
        assert!(!on_ec2(short.path()));
        assert!(!on_ec2(Path::new("/nonexistent-root-for-this-test")));
    }
}
