//! `onnx-light check MODEL`: validates a model and everything it refers to, reporting
//! every problem (one line each), not just the first: the rules of `onnx.checker`
//! (`onnx_light::checker`), then external data, tensor data and the round trip.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use onnx_light::checker::{self, CheckOptions};
use onnx_light::io::external::{file_sha1, find_overlaps, resolve_tensor, Resolver};
use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;
use onnx_light::prelude::*;
use onnx_light::wire::Sink;

/// Compares encoded bytes with a file as they are produced, without holding either.
struct CompareSink {
    file: BufReader<File>,
    pos: u64,
    first_difference: Option<u64>,
    buf: Vec<u8>,
}

impl Sink for CompareSink {
    fn put(&mut self, bytes: &[u8]) -> onnx_light::Result<()> {
        if self.first_difference.is_some() {
            self.pos += bytes.len() as u64;
            return Ok(());
        }
        self.buf.resize(bytes.len(), 0);
        let mut got = 0;
        while got < bytes.len() {
            let n = self.file.read(&mut self.buf[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        if let Some(i) = self.buf[..got].iter().zip(bytes).position(|(a, b)| a != b) {
            self.first_difference = Some(self.pos + i as u64);
        } else if got < bytes.len() {
            self.first_difference = Some(self.pos + got as u64);
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }
}

/// The first few of `items`, quoted, and how many more: "`a`, `b`, `c` and 11 more".
pub fn some_of(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let quoted: Vec<String> = items.iter().take(SHOWN).map(|i| format!("`{i}`")).collect();
    match items.len().saturating_sub(SHOWN) {
        0 => quoted.join(", "),
        more => format!("{} and {more} more", quoted.join(", ")),
    }
}

/// `(what, where)` pairs grouped by `what`, in the order each first appears: one entry
/// per problem, with every place it was found.
pub fn grouped(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (what, place) in pairs {
        match groups.iter_mut().find(|(w, _)| *w == what) {
            Some((_, places)) => places.push(place),
            None => groups.push((what, vec![place])),
        }
    }
    groups
}

/// The most overlapping pairs of external ranges reported one per line.
const OVERLAPS_SHOWN: usize = 20;

/// One problem per pair of external tensors whose ranges share bytes of a file (two
/// tensors aliasing the same bytes: a file that loads, or saves, as many times its
/// size), the first [`OVERLAPS_SHOWN`] of them, then how many more.
fn report_overlaps(model: &Model, dir: &Path, problems: &mut Vec<String>) {
    let Ok(resolver) = Resolver::new(dir) else {
        return; // reported with the external references
    };
    let found = find_overlaps(model, &resolver, OVERLAPS_SHOWN);
    for o in &found.pairs {
        problems.push(format!(
            "external data of tensors `{}` and `{}` overlap: bytes {}..{} of {}",
            o.first,
            o.second,
            o.start,
            o.end,
            o.file.display()
        ));
    }
    let more = found.total - found.pairs.len() as u64;
    if more > 0 {
        problems.push(format!(
            "... and {more} more overlapping pairs of external tensors"
        ));
    }
}

pub struct Report {
    pub lines: Vec<String>,
    pub problems: Vec<String>,
    /// Problems found by the ONNX rules, each with its path in the model.
    pub rule_problems: Vec<checker::Problem>,
    /// What to do about a model that did not load (printed after the problems).
    pub hint: Option<String>,
}

impl Report {
    /// The verdict and every problem as one JSON object: `{"model", "valid", "problems":
    /// [{"path", "message"}], "notes"}` (`path` is empty for file-level problems).
    pub fn to_json(&self, path: &Path) -> serde_json::Value {
        let rules = self
            .rule_problems
            .iter()
            .map(|p| serde_json::json!({"path": p.path, "message": p.message}));
        let files = self
            .problems
            .iter()
            .map(|m| serde_json::json!({"path": "", "message": m}));
        serde_json::json!({
            "model": path.display().to_string(),
            "valid": self.problems.is_empty() && self.rule_problems.is_empty(),
            "problems": rules.chain(files).collect::<Vec<_>>(),
            "notes": self.lines.iter().cloned().chain(self.hint.iter().map(|h| format!("hint: {h}"))).collect::<Vec<_>>(),
        })
    }
}

pub fn run(path: &Path, checksums: bool, load: &ParseOptions) -> Report {
    let mut r = Report {
        lines: Vec::new(),
        problems: Vec::new(),
        rule_problems: Vec::new(),
        hint: None,
    };
    // Read, not mapped: a file truncated while `check` runs gives an error, not SIGBUS.
    // External data is resolved separately below.
    let model: Model =
        match io::load_with(path, &ParseOptions::clone(load).load_external_data(false)) {
            Ok(m) => m,
            Err(e) => {
                r.problems.push(format!("cannot parse the model: {e}"));
                r.hint = crate::hint(&e);
                return r;
            }
        };
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        r.problems
            .push("the file is empty (0 bytes): not an ONNX model".into());
    }
    let nodes = model.graph.as_ref().map_or(0, |g| g.node.len());
    r.lines.push(format!(
        "parsed: {nodes} nodes, {} tensors",
        model.tensors().len()
    ));

    // Where the loader resolves external data: beside the file a link at `path` leads to.
    let dir = io::model_directory(path).unwrap_or_else(|_| Path::new(".").to_path_buf());
    let dir = dir.as_path();

    // The rules of onnx.checker.check_model, with the model's directory for external data.
    let schemas = checker::schema::all();
    match checker::check_model_with(&model, &CheckOptions::default().model_dir(dir)) {
        Ok(()) => r.lines.push(format!(
            "onnx rules: passed (operator schemas of onnx {}, IR version {})",
            schemas.onnx_version(),
            schemas.ir_version
        )),
        Err(problems) => r.rule_problems = problems.0,
    }

    // External references: path rules, bounds, length vs shape, checksums. The same
    // problem for many tensors (a missing data file) is one line naming them.
    let mut external = 0usize;
    let mut files = std::collections::BTreeMap::new();
    let mut refused: Vec<(String, String)> = Vec::new();
    match Resolver::new(dir) {
        Ok(resolver) => {
            model.visit_tensors(|_, t| {
                if !t.is_external() {
                    return;
                }
                external += 1;
                match resolve_tensor(t, &resolver, None) {
                    Ok(res) => {
                        let entry = files
                            .entry(res.file.path().to_path_buf())
                            .or_insert((res.file.clone(), Vec::new()));
                        if let Some(sum) = res.checksum {
                            entry.1.push((t.name().to_string(), sum));
                        }
                    }
                    Err(e) => {
                        let tensor = e.tensor().unwrap_or_default().to_string();
                        let what = e.to_string().replace(&format!(" (tensor `{tensor}`)"), "");
                        refused.push((what, tensor));
                    }
                }
            });
        }
        Err(e) => r
            .problems
            .push(format!("cannot open the model's directory: {e}")),
    }
    for (what, tensors) in grouped(refused) {
        r.problems.push(match tensors.as_slice() {
            [one] if one.is_empty() => what,
            [one] => format!("{what} (tensor `{one}`)"),
            many => format!("{what} (tensors {})", some_of(many)),
        });
    }
    report_overlaps(&model, dir, &mut r.problems);
    if external > 0 {
        r.lines.push(format!(
            "external data: {external} tensors in {} files checked (paths, bounds, lengths)",
            files.len()
        ));
    }
    if checksums {
        let mut verified = 0;
        for (file, sums) in files.values() {
            if sums.is_empty() {
                continue;
            }
            match file_sha1(file) {
                Ok(actual) => {
                    for (tensor, expected) in sums {
                        verified += 1;
                        if !actual.eq_ignore_ascii_case(expected.trim()) {
                            r.problems.push(format!(
                                "checksum mismatch for tensor `{tensor}`: {} has SHA-1 {actual}, the model records {expected}",
                                file.path().display()
                            ));
                        }
                    }
                }
                Err(e) => r.problems.push(e.to_string()),
            }
        }
        r.lines.push(format!("checksums: {verified} verified"));
    }

    // Inline tensor data against shapes and types.
    let mut inline = 0usize;
    model.visit_tensors(|_, t| {
        if t.is_external() {
            return;
        }
        inline += 1;
        if let Err(e) = t.validate_data() {
            r.problems.push(e.to_string());
        }
    });
    r.lines.push(format!(
        "tensor data: {inline} inline tensors checked against their shapes"
    ));

    // Round trip: whether re-encoding gives the file's bytes. A file from another
    // encoder (fields in another order, unpacked numbers, over-long varints, a field seen
    // twice) is valid and loads the same, so a difference is a note, not a problem.
    match File::open(path) {
        Ok(f) => {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let mut sink = CompareSink {
                file: BufReader::new(f),
                pos: 0,
                first_difference: None,
                buf: Vec::new(),
            };
            match model.encode(&mut sink) {
                Ok(written) => {
                    let diff = sink
                        .first_difference
                        .or((written != len).then_some(written.min(len)));
                    match diff {
                        None => r.lines.push("round trip: byte-identical".into()),
                        Some(at) => r.lines.push(format!(
                            "note: the file is not in canonical encoding (first difference at byte {at}); it is valid and loads the same"
                        )),
                    }
                }
                Err(e) => r.problems.push(format!("round trip: {e}")),
            }
        }
        Err(e) => r
            .problems
            .push(format!("cannot reopen {}: {e}", path.display())),
    }
    r
}
