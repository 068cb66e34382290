//! `onnx-light check MODEL`: validates a model and everything it refers to, reporting
//! every problem (one line each), not just the first: the rules of `onnx.checker`
//! (`onnx_light::checker`), then external data, tensor data and the round trip.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use onnx_light::checker::{self, CheckOptions, Detail, NodeRef, ProducedLater};
use onnx_light::io::external::{self, Verification, VerifyOptions};
use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::Model;
use onnx_light::prelude::*;
use onnx_light::remote::{self, RemoteOptions};
use onnx_light::shape::{self, InferOptions};
use onnx_light::wire::Sink;
use onnx_light::ExternalDataRule;

/// Compares encoded bytes with a file as they are produced, without holding either.
struct CompareSink {
    file: BufReader<File>,
    pos: u64,
    first_difference: Option<u64>,
    buf: Vec<u8>,
}

impl Sink for CompareSink {
    fn put(&mut self, bytes: &[u8]) -> onnx_light::Result<()> {
        // In pieces of the buffer's size: a large payload is neither copied whole nor
        // compared byte by byte (slice equality is a `memcmp`).
        for piece in bytes.chunks(COMPARE_CHUNK) {
            if self.first_difference.is_some() {
                break;
            }
            self.buf.resize(piece.len(), 0);
            let mut got = 0;
            while got < piece.len() {
                let n = self.file.read(&mut self.buf[got..])?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            if self.buf[..got] != piece[..got] {
                let i = self.buf[..got].iter().zip(piece).position(|(a, b)| a != b);
                self.first_difference = Some(self.pos + i.unwrap_or(0) as u64);
            } else if got < piece.len() {
                self.first_difference = Some(self.pos + got as u64);
            }
            self.pos += piece.len() as u64;
        }
        Ok(())
    }
}

/// The most bytes [`CompareSink`] reads from the file at once.
const COMPARE_CHUNK: usize = 1 << 20;

/// How many places a line names; the rest are counted.
const PLACES_SHOWN: usize = 3;

/// The problems of one kind `check` lists itself (a refused external reference, a
/// checksum mismatch, tensor data against its shape) past which it counts them, as
/// the checker does for its rules.
const PROBLEMS_PER_KIND: usize = checker::DEFAULT_MAX_PROBLEMS_PER_KIND;

/// One problem and the places it was found in: the first [`PLACES_SHOWN`], and how
/// many in all.
pub struct Group {
    pub what: String,
    pub places: Vec<String>,
    pub count: u64,
    /// Problems of the same kind found after these and only counted (by the checker,
    /// or past [`PROBLEMS_PER_KIND`]).
    pub more: u64,
}

impl Group {
    /// The places quoted, and how many more: "`a`, `b`, `c` and 11 more".
    pub fn places(&self) -> String {
        let quoted: Vec<String> = self.places.iter().map(|p| format!("`{p}`")).collect();
        match self.count - self.places.len() as u64 {
            0 => quoted.join(", "),
            more => format!("{} and {} more", quoted.join(", "), thousands(more)),
        }
    }
}

/// Problems grouped by what they say, in the order each first appears: one line per
/// problem, however many places share it. Groups are found by a map from their text,
/// and each keeps its first few places, so grouping is linear in the problems and
/// takes memory for the lines printed only.
#[derive(Default)]
pub struct Groups {
    index: HashMap<String, usize>,
    groups: Vec<Group>,
}

impl Groups {
    /// Adds `place` to the group of `what` (a new group if it is the first).
    pub fn add(&mut self, what: String, place: String, more: u64) {
        let i = match self.index.get(&what) {
            Some(&i) => i,
            None => {
                self.index.insert(what.clone(), self.groups.len());
                self.groups.push(Group {
                    what,
                    places: Vec::new(),
                    count: 0,
                    more: 0,
                });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[i];
        if group.places.len() < PLACES_SHOWN {
            group.places.push(place);
        }
        group.count += 1;
        group.more += more;
    }

    /// How many groups there are so far.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn into_groups(self) -> Vec<Group> {
        self.groups
    }
}

/// Nodes out of topological order, one root cause however many inputs it leaves
/// undefined: the first node found using a value a later node produces, and how many
/// nodes do so in all (every graph and function of the model).
pub struct OutOfOrder {
    /// The first such use, in model order.
    pub first: ProducedLater,
    /// The nodes using a value produced after them.
    pub nodes: u64,
}

impl OutOfOrder {
    /// The first use, who produces it later, and how many more nodes are out of order.
    pub fn what(&self) -> String {
        let f = &self.first;
        let whose = match f.graph.as_str() {
            "graph" => "the nodes".to_string(),
            graph => format!("the nodes of `{graph}`"),
        };
        let through = if f.in_subgraph { " in a subgraph" } else { "" };
        let mut what = format!(
            "{whose} are not in topological order: {} uses `{}`{through}, which {} produces later",
            node(&f.user),
            f.value,
            node(&f.producer),
        );
        match self.nodes.saturating_sub(1) {
            0 => {}
            1 => what.push_str(", and 1 more node uses a value produced after it"),
            more => what.push_str(&format!(
                ", and {} more nodes use values produced after them",
                thousands(more)
            )),
        }
        what
    }
}

/// `node `b` (index 3)`, or `node at index 3` for a node without a name.
fn node(n: &NodeRef) -> String {
    if n.name.is_empty() {
        format!("node at index {}", n.index)
    } else {
        format!("node `{}` (index {})", n.name, n.index)
    }
}

/// What to do about nodes out of order. Nothing in onnx-light reorders nodes, and
/// onnxruntime's saved model is not the same model (it may add nodes), so the hint
/// names no tool.
const OUT_OF_ORDER_HINT: &str = "onnxruntime sorts the nodes itself as it loads a model, but \
     onnx.checker requires them stored in topological order, each after the nodes \
     producing its inputs: the nodes must be sorted (onnx-light does not reorder them)";

/// Lines are kept under this many columns where words allow.
const COLUMNS: usize = 80;

/// `prefix` and `text`, broken at spaces into lines under [`COLUMNS`] columns, the
/// lines after the first indented by two spaces; a word longer than a line (a long
/// name) is not broken.
fn wrapped(prefix: &str, text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = prefix.to_string();
    let mut empty = prefix.is_empty();
    for word in text.split(' ') {
        let width = line.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && width >= COLUMNS {
            lines.push(std::mem::replace(&mut line, "  ".to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// `1 problem`, `2 problems`.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// Nodes out of order as `check` prints them: the root cause, then what to do.
fn out_of_order_lines(out_of_order: Option<(usize, OutOfOrder)>) -> Vec<String> {
    let Some((_, d)) = out_of_order else {
        return Vec::new();
    };
    let mut lines = wrapped("error:", &d.what());
    lines.extend(wrapped("hint:", OUT_OF_ORDER_HINT));
    lines
}

/// `1999900` as `1,999,900`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A problem `check` found itself (not by the ONNX rules): what, and how many more of
/// its kind were found after it and only counted.
pub struct Listed {
    pub message: String,
    pub more: u64,
    /// For a line that only sums up problems of the kind listed before it (`... and 5
    /// more overlapping pairs of external tensors`): how many; 0 for a problem.
    pub summed_up: u64,
}

impl Listed {
    /// One problem found by `check`.
    fn new(message: String) -> Self {
        Listed {
            message,
            more: 0,
            summed_up: 0,
        }
    }
}

/// `... and 1,999,900 more of this kind`, the line after a problem with `more` others.
pub fn more_of_this_kind(more: u64) -> Option<String> {
    (more > 0).then(|| format!("... and {} more of this kind", thousands(more)))
}

/// The problems of one kind, in the order found: the first [`PROBLEMS_PER_KIND`]
/// kept, the rest counted on the last one kept.
#[derive(Default)]
struct Bounded {
    kept: Vec<Listed>,
}

impl Bounded {
    fn push(&mut self, message: String) {
        if self.kept.len() < PROBLEMS_PER_KIND {
            self.kept.push(Listed::new(message));
        } else if let Some(last) = self.kept.last_mut() {
            last.more += 1;
        }
    }
}

/// The most overlapping pairs of external ranges reported one per line.
const OVERLAPS_SHOWN: usize = 20;

/// One problem per pair of external tensors whose ranges share bytes of a file (two
/// tensors aliasing the same bytes: a file that loads, or saves, as many times its
/// size), the first [`OVERLAPS_SHOWN`] of them, then how many more.
fn report_overlaps(found: &external::Overlaps, problems: &mut Vec<Listed>) {
    for o in &found.pairs {
        problems.push(Listed::new(format!(
            "external data of tensors `{}` and `{}` overlap: bytes {}..{} of {}",
            o.first,
            o.second,
            o.start,
            o.end,
            o.file.display()
        )));
    }
    let more = found.total - found.pairs.len() as u64;
    if more > 0 {
        problems.push(Listed {
            message: format!("... and {more} more overlapping pairs of external tensors"),
            more: 0,
            summed_up: more,
        });
    }
}

/// The external-data problems of a verification, one line per problem, the same problem
/// for many tensors (a missing data file) one line naming them. Aliasing is left out:
/// the overlapping pairs behind it are listed one by one.
fn report_external(v: &Verification, problems: &mut Vec<Listed>) {
    let mut refused = Groups::default();
    for p in v
        .problems
        .iter()
        .filter(|p| p.rule != ExternalDataRule::Aliasing)
    {
        refused.add(p.error.without_tensor().to_string(), p.tensor.clone(), 0);
    }
    let mut refusals = Bounded::default();
    for g in refused.into_groups() {
        refusals.push(match g.places.as_slice() {
            [one] if g.count == 1 && one.is_empty() => g.what,
            [one] if g.count == 1 => format!("{} (tensor `{one}`)", g.what),
            _ => format!("{} (tensors {})", g.what, g.places()),
        });
    }
    problems.extend(refusals.kept);
    report_overlaps(&v.overlaps, problems);
}

pub struct Report {
    pub lines: Vec<String>,
    /// Problems with the files and data, each kind bounded as the checker bounds its
    /// rules' problems.
    pub problems: Vec<Listed>,
    /// Problems found by the ONNX rules, each with its path in the model.
    pub rule_problems: Vec<checker::Problem>,
    /// What to do about a model that did not load (printed after the problems).
    pub hint: Option<String>,
}

impl Report {
    /// Whether a problem was found (`check` exits 1).
    pub fn failed(&self) -> bool {
        !self.problems.is_empty() || !self.rule_problems.is_empty()
    }

    /// The rule problems by root cause, in the order each first appears: nodes out of
    /// order as one [`OutOfOrder`] (however many inputs that leaves undefined, in every
    /// graph), at the index among the groups where it first appears; the other
    /// problems grouped by what they say.
    fn rule_groups(&self) -> (Vec<Group>, Option<(usize, OutOfOrder)>) {
        let mut groups = Groups::default();
        let mut out_of_order: Option<(usize, OutOfOrder)> = None;
        for p in &self.rule_problems {
            match &p.detail {
                Some(Detail::ProducedLater(later)) => {
                    let (_, d) = out_of_order.get_or_insert_with(|| {
                        let first = OutOfOrder {
                            first: later.clone(),
                            nodes: 0,
                        };
                        (groups.len(), first)
                    });
                    // The first value each node uses before it is produced is a kind
                    // of its own: those, kept and counted, are the nodes out of order.
                    if later.first_for_user {
                        d.nodes += 1 + p.more;
                    }
                }
                _ => groups.add(p.message.clone(), p.path.clone(), p.more),
            }
        }
        (groups.into_groups(), out_of_order)
    }

    /// The problems as `check` prints them on stderr, then the hint, then the verdict:
    /// one root cause per line (nodes out of order once, not once per input they leave
    /// undefined), the same problem in many places (every tensor of a missing data
    /// file, every node of an unknown operator) one line naming them; `--json` lists
    /// each. Empty for a valid model.
    pub fn problem_lines(&self) -> Vec<String> {
        if !self.failed() {
            return Vec::new();
        }
        let (groups, mut out_of_order) = self.rule_groups();
        let mut lines = Vec::new();
        for (i, g) in groups.into_iter().enumerate() {
            if out_of_order.as_ref().is_some_and(|(at, _)| *at == i) {
                lines.extend(out_of_order_lines(out_of_order.take()));
            }
            lines.push(match g.places.as_slice() {
                [one] if g.count == 1 => format!("error: {one}: {}", g.what),
                _ => format!("error: {} (at {})", g.what, g.places()),
            });
            lines.extend(more_of_this_kind(g.more).map(|m| format!("error: {m}")));
        }
        lines.extend(out_of_order_lines(out_of_order));
        for p in &self.problems {
            lines.push(format!("error: {}", p.message));
            lines.extend(more_of_this_kind(p.more).map(|m| format!("error: {m}")));
        }
        lines.extend(self.hint.iter().map(|h| format!("hint: {h}")));
        lines.push(self.verdict());
        lines
    }

    /// The last line `check` prints: `verdict: the model is valid`, or how many
    /// problems of how many kinds (a root cause, or one problem however many places
    /// share it, is one kind) and that the model is not valid.
    pub fn verdict(&self) -> String {
        if !self.failed() {
            return "verdict: the model is valid".to_string();
        }
        let (groups, out_of_order) = self.rule_groups();
        let mut problems = 0u64;
        let mut kinds = 0u64;
        if let Some((_, d)) = &out_of_order {
            problems += d.nodes;
            kinds += 1;
        }
        for g in &groups {
            problems += g.count + g.more;
            kinds += 1;
        }
        for p in &self.problems {
            if p.summed_up > 0 {
                problems += p.summed_up;
            } else {
                problems += 1 + p.more;
                kinds += 1;
            }
        }
        format!(
            "verdict: {} ({}) — the model is not valid",
            counted(problems, "problem", "problems"),
            counted(kinds, "kind", "kinds"),
        )
    }

    /// The verdict and every problem as one JSON object: `{"model", "valid", "problems":
    /// [{"path", "message", "more"}], "notes"}` (`path` is empty for file-level
    /// problems; `more` counts the problems of the same kind found after this one and
    /// not listed).
    pub fn to_json(&self, path: &Path) -> serde_json::Value {
        let rules = self
            .rule_problems
            .iter()
            .map(|p| serde_json::json!({"path": p.path, "message": p.message, "more": p.more}));
        let files = self
            .problems
            .iter()
            .map(|p| serde_json::json!({"path": "", "message": p.message, "more": p.more}));
        serde_json::json!({
            "model": path.display().to_string(),
            "valid": self.problems.is_empty() && self.rule_problems.is_empty(),
            "problems": rules.chain(files).collect::<Vec<_>>(),
            "notes": self.lines.iter().cloned().chain(self.hint.iter().map(|h| format!("hint: {h}"))).collect::<Vec<_>>(),
        })
    }
}

/// The external references of a model read from `url`, with the rules of a remote load:
/// locations, ranges against each object's size, lengths (structure only: no payload is
/// fetched); with `--checksums`, a full load that verifies them.
fn check_remote_references(
    url: &str,
    model: &Model,
    asked: &Asked,
    load: &ParseOptions,
    r: &mut Report,
) {
    let external = model.tensors().iter().filter(|t| t.is_external()).count();
    if external == 0 {
        return;
    }
    let options = RemoteOptions::default()
        .verify_checksums(asked.checksums)
        .parse(ParseOptions::clone(load).structure_only(!asked.checksums));
    let mut refs = model.clone();
    match remote::load_external_data_for_model(&mut refs, url, &options) {
        Ok(()) => {
            r.lines.push(format!(
                "external data: {external} tensors checked (locations, bounds, lengths)"
            ));
            if asked.checksums {
                r.lines
                    .push("checksums: verified where the model records one".to_string());
            }
        }
        Err(e) => r.problems.push(Listed::new(format!(
            "external data: {}",
            crate::failure::message(&e)
        ))),
    }
}

/// What `check` was asked to do beyond the default checks.
pub struct Asked {
    /// Verify external data checksums.
    pub checksums: bool,
    /// Run strict shape inference with type checks (`onnx`'s `full_check`).
    pub full: bool,
}

pub fn run(path: &Path, asked: &Asked, load: &ParseOptions) -> Report {
    let checksums = asked.checksums;
    let mut r = Report {
        lines: Vec::new(),
        problems: Vec::new(),
        rule_problems: Vec::new(),
        hint: None,
    };
    // Read, not mapped: a file truncated while `check` runs gives an error, not SIGBUS.
    // External data is resolved separately below.
    let mut model: Model = match crate::source::load_with(
        path,
        &ParseOptions::clone(load).load_external_data(false),
    ) {
        Ok(m) => m,
        Err(e) => {
            r.problems.push(Listed::new(format!(
                "cannot parse the model: {}",
                crate::failure::message(&e)
            )));
            r.hint = crate::hint(&e);
            return r;
        }
    };
    let nodes = model.graph.as_ref().map_or(0, |g| g.node.len());
    r.lines.push(format!(
        "parsed: {nodes} nodes, {} tensors",
        model.tensors().len()
    ));
    let url = crate::source::url(path);

    // Where the loader resolves external data: beside the file a link at `path` leads to.
    let dir = io::model_directory(path).unwrap_or_else(|_| Path::new(".").to_path_buf());
    let dir = dir.as_path();

    // The rules of onnx.checker.check_model, with the model's directory for external data
    // (a URL's data objects are the store's: checked below, never looked for on disk).
    let schemas = checker::schema::all();
    let rules = match url {
        Some(_) => CheckOptions::default(),
        None => CheckOptions::default().model_dir(dir),
    };
    match checker::check_model_with(&model, &rules) {
        Ok(()) => r.lines.push(format!(
            "onnx rules: passed (model IR version {}, operator schemas of onnx {})",
            model.ir_version(),
            schemas.onnx_version(),
        )),
        Err(problems) => r.rule_problems = problems.0,
    }

    // External references, with the rules of a load: paths, bounds, length vs shape,
    // checksums on request, overlapping ranges.
    if let Some(url) = url {
        check_remote_references(url, &model, asked, load, &mut r);
    }
    let mut verify = VerifyOptions::default()
        .checksums(checksums)
        .allow_aliasing(load.allow_aliasing)
        .overlaps_listed(OVERLAPS_SHOWN);
    // Hashing data files for checksums is the long step: the same bar as the load.
    verify.progress = load.progress.clone();
    match url.map_or_else(
        || external::verify(&model, dir, &verify).map(Some),
        |_| Ok(None),
    ) {
        Ok(None) => {}
        Ok(Some(v)) => {
            report_external(&v, &mut r.problems);
            if v.tensors > 0 {
                r.lines.push(format!(
                    "external data: {} tensors in {} files checked (paths, bounds, lengths)",
                    v.tensors,
                    v.files.len()
                ));
            }
            if checksums {
                r.lines.push(if v.checksums_verified == 0 {
                    "checksums: none to verify (no external tensor of the model records one)"
                        .to_string()
                } else {
                    format!("checksums: {} verified", v.checksums_verified)
                });
            }
        }
        Err(e) => r.problems.push(Listed::new(format!(
            "cannot open the model's directory: {e}"
        ))),
    }

    // Inline tensor data against shapes and types.
    let mut inline = 0usize;
    let mut mismatched = Bounded::default();
    model.visit_tensors(|_, t| {
        if t.is_external() {
            return;
        }
        inline += 1;
        if let Err(e) = t.validate_data() {
            mismatched.push(e.to_string());
        }
    });
    r.problems.extend(mismatched.kept);
    r.lines.push(format!(
        "tensor data: {inline} inline tensors checked against their shapes"
    ));

    // Round trip: whether re-encoding gives the file's bytes. A file from another
    // encoder (fields in another order, unpacked numbers, over-long varints, a field seen
    // twice) is valid and loads the same, so a difference is a note, not a problem.
    match File::open(path) {
        // A URL's bytes are not kept after the load.
        Err(_) if url.is_some() => r
            .lines
            .push("round trip: not compared for a model read from a URL".to_string()),
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
                Err(e) => r.problems.push(Listed::new(format!("round trip: {e}"))),
            }
        }
        Err(e) => r.problems.push(Listed::new(format!(
            "cannot reopen {}: {e}",
            path.display()
        ))),
    }

    // Shape inference, strict and with type checks, on a model the rules accept (as
    // `onnx.checker.check_model(full_check=True)`); last, as it records types in the model.
    if asked.full && r.rule_problems.is_empty() {
        let options = InferOptions::default().strict_mode(true).check_type(true);
        match shape::infer_shapes(&mut model, &options) {
            Ok(()) => r.lines.push(format!(
                "shape inference: passed ({} value types inferred or checked)",
                model.graph.as_ref().map_or(0, |g| g.value_info.len())
            )),
            Err(e) => r
                .problems
                .push(Listed::new(format!("shape inference: {e}"))),
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_first_places_of_each_problem_and_count_the_rest() {
        let mut groups = Groups::default();
        for i in 0..100_000u64 {
            groups.add(format!("problem {}", i % 3), format!("place {i}"), i % 2);
        }
        let groups = groups.into_groups();
        assert_eq!(groups.len(), 3);
        assert_eq!(groups[1].what, "problem 1");
        assert_eq!(groups[1].places, ["place 1", "place 4", "place 7"]);
        assert_eq!(groups[1].count, 33_333);
        assert_eq!(
            groups[1].places(),
            "`place 1`, `place 4`, `place 7` and 33,330 more"
        );
        assert_eq!(groups.iter().map(|g| g.more).sum::<u64>(), 50_000);
    }

    #[test]
    fn wrapped_lines_stay_under_80_columns_unless_a_word_is_longer() {
        let text = "word ".repeat(40) + &"x".repeat(100) + " end";
        let lines = wrapped("error:", text.trim_end());
        assert!(lines[0].starts_with("error: word word"), "{lines:?}");
        assert!(lines[1..]
            .iter()
            .all(|l| l.starts_with("  ") && !l.starts_with("   ")));
        for l in &lines {
            let long = l.contains(&"x".repeat(100));
            assert!(long || l.chars().count() < COLUMNS, "{l}");
        }
        assert_eq!(lines.join(" ").split_whitespace().count(), 43);
        assert_eq!(wrapped("hint:", "short"), ["hint: short"]);
    }

    #[test]
    fn problems_past_the_limit_of_their_kind_are_counted_on_the_last_kept() {
        let mut b = Bounded::default();
        for i in 0..1000 {
            b.push(format!("p{i}"));
        }
        assert_eq!(b.kept.len(), PROBLEMS_PER_KIND);
        assert_eq!(b.kept[PROBLEMS_PER_KIND - 1].message, "p99");
        assert_eq!(b.kept[PROBLEMS_PER_KIND - 1].more, 900);
        assert_eq!(
            more_of_this_kind(1_999_900).as_deref(),
            Some("... and 1,999,900 more of this kind")
        );
    }
}
