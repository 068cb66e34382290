//! Verifying a model's external data without loading it: every reference checked with
//! the rules of a load (the same resolver, range and length checks, checksums and
//! aliasing cap), every broken rule reported with its typed [`ExternalDataRule`], not
//! only the first. What `onnx-light check`, Python's `verify_external_data` and any
//! caller that wants to know whether (and why not) a model's data would load use.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::overlap::{check_aliasing, overlapping_ranges, ExternalRange, Overlaps};
use super::resolve::{resolve_tensor, DataFile, Resolver};
use crate::error::{Error, ErrorKind, ExternalDataRule, Result};
use crate::io::location::validate_location;
use crate::io::open::FileId;
use crate::io::progress::{Progress, SharedProgress};
use crate::onnx::{ModelProto, TensorProto};

/// Options of [`verify`]. Start from `VerifyOptions::default()`:
///
/// ```
/// # use onnx_light::io::external::VerifyOptions;
/// let options = VerifyOptions::default().checksums(true).overlaps_listed(5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyOptions {
    /// Compare each data file's SHA-1 with the `checksum` its tensors record (default
    /// false: it reads every such file whole).
    pub checksums: bool,
    /// Check every external tensor against this location instead of the one it records,
    /// as `ParseOptions::external_data_location` loads it.
    pub location: Option<String>,
    /// Accept ranges that alias each other, as `ParseOptions::allow_aliasing` does
    /// (default false: a model referencing more bytes than its files hold breaks
    /// [`ExternalDataRule::Aliasing`]).
    pub allow_aliasing: bool,
    /// How many overlapping pairs [`Verification::overlaps`] lists (all are counted;
    /// default 20).
    pub overlaps_listed: usize,
    /// Told the bytes of the data files read to compute their checksums (default none);
    /// see [`Progress`].
    pub progress: Option<SharedProgress>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            checksums: false,
            location: None,
            allow_aliasing: false,
            overlaps_listed: 20,
            progress: None,
        }
    }
}

impl VerifyOptions {
    /// Sets `checksums`.
    pub fn checksums(mut self, yes: bool) -> Self {
        self.checksums = yes;
        self
    }
    /// Sets `location`.
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }
    /// Sets `allow_aliasing`.
    pub fn allow_aliasing(mut self, yes: bool) -> Self {
        self.allow_aliasing = yes;
        self
    }
    /// Sets `overlaps_listed`.
    pub fn overlaps_listed(mut self, pairs: usize) -> Self {
        self.overlaps_listed = pairs;
        self
    }
    /// Sets `progress`: `progress` is told the bytes hashed (see [`Progress`]).
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(SharedProgress::new(progress));
        self
    }
}

/// One broken rule: which tensor, which rule, and the error a load would give for it
/// (its message names the location, the file and why).
#[derive(Debug)]
#[non_exhaustive]
pub struct ExternalDataProblem {
    /// The tensor's name.
    pub tensor: String,
    /// The rule it broke.
    pub rule: ExternalDataRule,
    /// The error, with the tensor and file it concerns.
    pub error: Error,
}

impl fmt::Display for ExternalDataProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

/// A data file the model's references resolve to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedFile {
    /// The location as resolved, relative to the base directory (backslashes read as
    /// separators, `.` components dropped), as the first tensor using the file names it.
    pub location: PathBuf,
    /// The base directory joined with `location`.
    pub path: PathBuf,
    /// The file's (device, inode): two locations naming one file (a hard link) are one
    /// entry.
    pub identity: (u64, u64),
    /// The file's size when it was opened.
    pub size: u64,
    /// How many external tensors reference it (those whose reference resolved).
    pub tensors: usize,
    /// Its SHA-1, lowercase hex, when checksums were compared and a tensor records one.
    pub sha1: Option<String>,
}

/// What [`verify`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Verification {
    /// The external tensors checked (every tensor marked external, at every site).
    pub tensors: usize,
    /// The data files the references resolve to, each once, in model order.
    pub files: Vec<VerifiedFile>,
    /// Every broken rule: each tensor's (the first one its reference breaks), in model
    /// order; then checksum mismatches; then aliasing, named after its first overlapping
    /// pair.
    pub problems: Vec<ExternalDataProblem>,
    /// The tensors whose ranges share bytes of a file: the first
    /// [`VerifyOptions::overlaps_listed`] pairs, and how many in all. Overlaps are not
    /// problems by themselves (a load refuses them only past the aliasing cap).
    pub overlaps: Overlaps,
    /// How many tensors had their `checksum` compared.
    pub checksums_verified: usize,
}

impl Verification {
    /// True when no rule is broken: the model's external data would load (limits aside).
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The rule an error of a reference check breaks: its own for a refusal, and for the
/// errors a load gives in kinds of their own, the rule they mean.
fn rule_of(e: &Error) -> ExternalDataRule {
    match e.kind() {
        ErrorKind::InvalidExternalData { rule, .. } => *rule,
        ErrorKind::ChecksumMismatch { .. } => ExternalDataRule::ChecksumMismatch,
        ErrorKind::Io(std::io::ErrorKind::NotFound) => ExternalDataRule::MissingFile,
        _ => ExternalDataRule::Unreadable,
    }
}

fn problem(tensor: &str, error: Error) -> ExternalDataProblem {
    ExternalDataProblem {
        tensor: tensor.to_string(),
        rule: rule_of(&error),
        error,
    }
}

/// Checks the external data of `model` against the files below `base_dir` (the model's
/// directory: [`model_directory`](crate::io::model_directory)), with the rules a load
/// applies, and reports every broken one. Nothing is loaded: files are opened (beneath
/// `base_dir`, following no link) and their sizes read; with `checksums`, the files
/// whose tensors record a checksum are read whole.
///
/// # Errors
/// Only when `base_dir` cannot be opened while the model has external tensors; every
/// problem of a tensor or file is in the report.
///
/// # Examples
/// ```
/// # use onnx_light::io::{self, SerializeOptions};
/// # use onnx_light::io::external::ExternalDataOptions;
/// # use onnx_light::onnx::*;
/// use onnx_light::io::external::{verify, VerifyOptions};
/// use onnx_light::ExternalDataRule;
/// # let dir = std::env::temp_dir().join(format!("verify-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// # let mut g = GraphProto::named("g");
/// # g.initializer.push(TensorProto::from_raw("w", DataType::Uint8, [4096], vec![1u8; 4096]));
/// # let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
/// # io::save(&ModelProto::new(g, vec![]), dir.join("m.onnx"), &options)?;
/// let options = io::ParseOptions::default().load_external_data(false);
/// let model = io::load_with(dir.join("m.onnx"), &options)?;
/// assert!(verify(&model, &dir, &VerifyOptions::default())?.is_ok());
///
/// std::fs::remove_file(dir.join("w.bin"))?;
/// let report = verify(&model, &dir, &VerifyOptions::default())?;
/// assert_eq!(report.problems[0].rule, ExternalDataRule::MissingFile);
/// assert_eq!(report.problems[0].tensor, "w");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify(
    model: &ModelProto<'_>,
    base_dir: impl AsRef<Path>,
    options: &VerifyOptions,
) -> Result<Verification> {
    let base_dir = base_dir.as_ref();
    let mut report = Verification::default();
    let mut resolver: Option<Resolver> = None;
    let mut dir_error = None;
    let mut ranges: Vec<ExternalRange> = Vec::new();
    // (tensor, recorded checksum, its file's index in `report.files`)
    let mut checksums: Vec<(String, String, usize)> = Vec::new();
    let mut file_index: HashMap<(u64, u64), usize> = HashMap::new();
    let mut by_pointer: HashMap<*const DataFile, usize> = HashMap::new();
    // The opened file of each entry of `report.files`.
    let mut opened: Vec<Arc<DataFile>> = Vec::new();
    model.visit_tensors(|_, t| {
        if !t.is_external() || dir_error.is_some() {
            return;
        }
        report.tensors += 1;
        if resolver.is_none() {
            match Resolver::new(base_dir) {
                Ok(r) => resolver = Some(r),
                Err(e) => {
                    dir_error = Some(e);
                    return;
                }
            }
        }
        let Some(resolver) = &resolver else { return };
        let name = t.name();
        let r = match resolve_tensor(t, resolver, options.location.as_deref()) {
            Ok(r) => r,
            Err(e) => return report.problems.push(problem(name, e)),
        };
        let index = match by_pointer.get(&Arc::as_ptr(&r.file)) {
            Some(&i) => i,
            None => {
                let identity = FileId::of_file(&r.file.file)
                    .map(FileId::parts)
                    .unwrap_or((u64::MAX, report.files.len() as u64));
                let i = *file_index.entry(identity).or_insert_with(|| {
                    opened.push(r.file.clone());
                    report.files.push(VerifiedFile {
                        location: resolved_location(t, options.location.as_deref()),
                        path: r.file.path().to_path_buf(),
                        identity,
                        size: r.file.size(),
                        tensors: 0,
                        sha1: None,
                    });
                    report.files.len() - 1
                });
                by_pointer.insert(Arc::as_ptr(&r.file), i);
                i
            }
        };
        report.files[index].tensors += 1;
        if let Some(sum) = &r.checksum {
            checksums.push((name.to_string(), sum.clone(), index));
        }
        ranges.push(ExternalRange {
            tensor: name.to_string(),
            file: r.file,
            offset: r.offset,
            len: r.len,
        });
    });
    if let Some(e) = dir_error {
        return Err(e);
    }
    if options.checksums {
        verify_checksums(&mut report, &opened, checksums, options.progress.as_ref());
    }
    report.overlaps = overlapping_ranges(&ranges, options.overlaps_listed);
    if !options.allow_aliasing {
        if let Err(e) = check_aliasing(&ranges) {
            let tensor = e.tensor().unwrap_or_default().to_string();
            report.problems.push(problem(&tensor, e));
        }
    }
    Ok(report)
}

/// Compares each recorded checksum with its file's SHA-1 (`opened[i]` is the file of
/// `report.files[i]`), computing each file's once; a file that cannot be read is one
/// problem, for the first tensor that needed it.
fn verify_checksums(
    report: &mut Verification,
    opened: &[Arc<DataFile>],
    checksums: Vec<(String, String, usize)>,
    progress: Option<&SharedProgress>,
) {
    if let Some(progress) = progress {
        let files: std::collections::HashSet<usize> = checksums.iter().map(|c| c.2).collect();
        progress.expect(files.iter().map(|&i| opened[i].size()).sum());
    }
    let mut digests: HashMap<usize, Option<String>> = HashMap::new();
    for (tensor, expected, index) in checksums {
        let file = &opened[index];
        let digest = match digests.get(&index) {
            Some(d) => d.clone(),
            None => {
                let d = match file.sha1(progress) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        report.problems.push(problem(&tensor, e.in_tensor(&tensor)));
                        None
                    }
                };
                digests.insert(index, d.clone());
                d
            }
        };
        let Some(actual) = digest else { continue };
        report.checksums_verified += 1;
        report.files[index].sha1 = Some(actual.clone());
        if !actual.eq_ignore_ascii_case(expected.trim()) {
            let e = Error::new(ErrorKind::ChecksumMismatch { expected, actual })
                .in_tensor(&tensor)
                .in_file(file.path());
            report.problems.push(problem(&tensor, e));
        }
    }
}

/// The location a tensor's reference resolved through, as the resolver reads it.
fn resolved_location(t: &TensorProto<'_>, location_override: Option<&str>) -> PathBuf {
    let location = location_override
        .or_else(|| t.external_data_value("location"))
        .unwrap_or_default();
    validate_location(t.name(), location).unwrap_or_else(|_| PathBuf::from(location))
}
