//! Sampling (calibrated, round-robin, medians) and the markdown tables with targets.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One timed operation: `run(iters)` performs it `iters` times and returns the time
/// those took (measured by the caller's clock or reported by the peer itself).
pub struct Op<'a> {
    pub key: &'static str,
    run: Box<dyn FnMut(u64) -> Duration + 'a>,
    /// Write back the machine's dirty pages before each sample (see [`Op::settled`]).
    settle: bool,
    /// Never repeated within a sample (see [`Op::once`]).
    once: bool,
}

impl<'a> Op<'a> {
    /// A Rust operation timed here. Results are kept until the clock has stopped and
    /// dropped afterwards (freeing a decoded model is not part of decoding it).
    pub fn rust<T: 'a>(key: &'static str, mut f: impl FnMut() -> T + 'a) -> Self {
        Op {
            key,
            run: Box::new(move |iters| {
                let mut keep = Vec::with_capacity(iters as usize);
                let start = Instant::now();
                for _ in 0..iters {
                    keep.push(black_box(f()));
                }
                let elapsed = start.elapsed();
                drop(keep);
                elapsed
            }),
            settle: false,
            once: false,
        }
    }

    /// An operation that times itself (the Python peer reports its own timings).
    pub fn timed(key: &'static str, f: impl FnMut(u64) -> Duration + 'a) -> Self {
        Op {
            key,
            run: Box::new(f),
            settle: false,
            once: false,
        }
    }

    /// Before each sample (and the warm-up), off the clock, the machine's dirty pages are
    /// written back (`sync`). For operations that write files: without it, a sample
    /// starts while the kernel is still writing back the gigabyte the operation before it
    /// left in the page cache (ours with `sync(false)`, `fs::write`, `onnx.save`), and
    /// competes with that write-back or waits for it (a page under write-back cannot be
    /// rewritten at once), so a sample's time depends on which operation ran before it.
    pub fn settled(mut self) -> Self {
        self.settle = true;
        self
    }

    /// One run per sample whatever its length: for operations that start a process,
    /// where a sample is one fresh process.
    pub fn once(mut self) -> Self {
        self.once = true;
        self
    }
}

/// Writes back every dirty page of the machine (the `sync` command), so that the next
/// sample starts with nothing left to write back. A machine without `sync` is sampled
/// without it, with a warning.
fn write_back_dirty_pages() {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let ok = std::process::Command::new("sync")
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("  warning: `sync` failed; write samples may disturb each other");
    }
}

/// Statistics of one operation: time per iteration.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub median: Duration,
    pub min: Duration,
    pub max: Duration,
}

/// How the operations are sampled.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    /// Rounds: one sample of every operation per round.
    pub rounds: usize,
    /// Fast operations are repeated so that one sample lasts at least this long.
    pub min_sample: Duration,
}

/// Measures `ops` together: each is run once to warm up and calibrate, then sampled
/// round-robin (one sample of each per round, the order reversed every other round), so
/// that slow phases of a shared machine hit all of them alike.
pub fn measure(label: &str, ops: Vec<Op<'_>>, sampling: Sampling, into: &mut Results) {
    let mut ops = ops;
    let mut iters = Vec::with_capacity(ops.len());
    for op in &mut ops {
        if op.settle {
            write_back_dirty_pages();
        }
        let once = (op.run)(1).max(Duration::from_nanos(1));
        let n = if op.once || once >= sampling.min_sample {
            1
        } else {
            (sampling.min_sample.as_nanos() / once.as_nanos()).clamp(1, 100_000) as u64
        };
        iters.push(n);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(sampling.rounds); ops.len()];
    let started = Instant::now();
    for round in 0..sampling.rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..ops.len()).collect()
        } else {
            (0..ops.len()).rev().collect()
        };
        for i in order {
            let n = iters[i];
            if ops[i].settle {
                write_back_dirty_pages();
            }
            let t = (ops[i].run)(n);
            samples[i].push(t / n as u32);
        }
    }
    eprintln!(
        "  {label}: {} operations x {} rounds in {:.1} s",
        ops.len(),
        sampling.rounds,
        started.elapsed().as_secs_f64()
    );
    for (op, s) in ops.iter().zip(samples) {
        into.rounds.insert(op.key, s.clone());
        let mut s = s;
        s.sort();
        let stats = Stats {
            median: s[s.len() / 2],
            min: s[0],
            max: s[s.len() - 1],
        };
        into.times.insert(op.key, stats);
    }
}

/// Everything measured, by operation key.
#[derive(Default)]
pub struct Results {
    pub times: HashMap<&'static str, Stats>,
    /// Per-round samples, in round order (operations measured together share rounds).
    pub rounds: HashMap<&'static str, Vec<Duration>>,
}

impl Results {
    /// Median, min and max over the rounds of `a / b`, the two samples of a round
    /// being taken moments apart (the ratio least disturbed by a busy machine).
    pub fn per_round(&self, a: &str, b: &str) -> Option<(f64, f64, f64)> {
        let (ra, rb) = (self.rounds.get(a)?, self.rounds.get(b)?);
        if ra.len() != rb.len() || ra.is_empty() {
            return None;
        }
        let mut r: Vec<f64> = ra
            .iter()
            .zip(rb)
            .map(|(x, y)| x.as_secs_f64() / y.as_secs_f64())
            .collect();
        r.sort_by(f64::total_cmp);
        Some((r[r.len() / 2], r[0], r[r.len() - 1]))
    }

    pub fn get(&self, key: &str) -> Option<Stats> {
        self.times.get(key).copied()
    }
    pub fn median(&self, key: &str) -> Option<f64> {
        self.get(key).map(|s| s.median.as_secs_f64())
    }
}

/// A performance target of a row, against a peer row.
#[derive(Debug, Clone)]
pub enum Target {
    /// At least `factor` times faster than the peer (peer / this >= factor).
    Faster(&'static str, f64),
    /// At most `factor` times the peer's time (this / peer <= factor).
    Within(&'static str, f64),
}

/// A target's verdict.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub text: String,
    pub met: bool,
}

/// Formats a duration with a sensible unit.
pub fn fmt_time(d: f64) -> String {
    if d >= 1.0 {
        format!("{d:.2} s")
    } else if d >= 1e-3 {
        format!("{:.1} ms", d * 1e3)
    } else if d >= 1e-6 {
        format!("{:.1} µs", d * 1e6)
    } else {
        format!("{:.0} ns", d * 1e9)
    }
}

/// Formats a ratio.
pub fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else {
        format!("{r:.2}x")
    }
}

/// One row of a timing table.
pub struct Row {
    pub label: String,
    pub key: &'static str,
    /// Bytes processed per operation, for a throughput column.
    pub bytes: Option<u64>,
    pub targets: Vec<Target>,
    /// Free text for the notes column.
    pub note: String,
}

impl Row {
    pub fn new(label: impl Into<String>, key: &'static str) -> Self {
        Row {
            label: label.into(),
            key,
            bytes: None,
            targets: Vec::new(),
            note: String::new(),
        }
    }
    pub fn bytes(mut self, n: u64) -> Self {
        self.bytes = Some(n);
        self
    }
    pub fn target(mut self, t: Target) -> Self {
        self.targets.push(t);
        self
    }
    pub fn note(mut self, s: impl Into<String>) -> Self {
        self.note = s.into();
        self
    }
}

/// A table: rows, the peers whose ratio gets a column, and the label of each key.
pub struct Table {
    pub title: String,
    /// A short name for the summary of targets.
    pub short: &'static str,
    pub intro: String,
    pub peers: Vec<(&'static str, &'static str)>,
    pub rows: Vec<Row>,
}

/// Every target verdict, for the summary.
#[derive(Default)]
pub struct Scorecard {
    pub items: Vec<(String, String, Verdict)>,
}

fn label_of(table: &Table, key: &str) -> String {
    table
        .rows
        .iter()
        .find(|r| r.key == key)
        .map(|r| r.label.clone())
        .unwrap_or_else(|| key.to_string())
}

fn short_label(table: &Table, key: &str) -> String {
    table
        .peers
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| label_of(table, key))
}

/// Evaluates a target of `key` in `results`.
pub fn verdict(table: &Table, results: &Results, key: &str, target: &Target) -> Option<Verdict> {
    let this = results.median(key)?;
    match *target {
        Target::Faster(peer, factor) => {
            let p = results.median(peer)?;
            let r = p / this;
            let met = r >= factor;
            Some(Verdict {
                text: format!(
                    "≥ {} faster than {}: {}{} {}",
                    fmt_ratio(factor),
                    short_label(table, peer),
                    fmt_ratio(r),
                    per_round(results.per_round(peer, key)),
                    if met { "✓" } else { "✗" }
                ),
                met,
            })
        }
        Target::Within(peer, factor) => {
            let p = results.median(peer)?;
            let r = this / p;
            let met = r <= factor;
            Some(Verdict {
                text: format!(
                    "≤ {} the time of {}: {}{} {}",
                    fmt_ratio(factor),
                    short_label(table, peer),
                    fmt_ratio(r),
                    per_round(results.per_round(key, peer)),
                    if met { "✓" } else { "✗" }
                ),
                met,
            })
        }
    }
}

fn per_round(r: Option<(f64, f64, f64)>) -> String {
    r.map(|(med, lo, hi)| {
        format!(
            " (per round {}, {} – {})",
            fmt_ratio(med),
            fmt_ratio(lo),
            fmt_ratio(hi)
        )
    })
    .unwrap_or_default()
}

/// A table's title, intro and header: `operation`, then `columns` (right-aligned), one
/// ratio column per peer, and `target`.
pub fn write_heading(s: &mut String, table: &Table, columns: &[&str]) {
    let _ = writeln!(s, "### {}\n", table.title);
    if !table.intro.is_empty() {
        let _ = writeln!(s, "{}\n", table.intro);
    }
    let mut header = String::from("| operation |");
    let mut rule = String::from("|---|");
    let peers = table
        .peers
        .iter()
        .map(|(_, label)| format!("{label} ÷ this"));
    for column in columns.iter().map(|c| c.to_string()).chain(peers) {
        let _ = write!(header, " {column} |");
        rule.push_str("--:|");
    }
    let _ = writeln!(s, "{header} target |\n{rule}---|");
}

/// Renders a timing table as markdown; records its targets in `card`.
pub fn render(table: &Table, results: &Results, card: &mut Scorecard) -> String {
    let mut s = String::new();
    write_heading(&mut s, table, &["median", "min – max", "throughput"]);
    for row in &table.rows {
        let Some(stats) = results.get(row.key) else {
            continue;
        };
        let med = stats.median.as_secs_f64();
        let tput = row
            .bytes
            .map(|b| format!("{:.2} GB/s", b as f64 / med / 1e9))
            .unwrap_or_default();
        let _ = write!(
            s,
            "| {} | {} | {} – {} | {} |",
            row.label,
            fmt_time(med),
            fmt_time(stats.min.as_secs_f64()),
            fmt_time(stats.max.as_secs_f64()),
            tput
        );
        write_ratios_and_verdicts(&mut s, table, results, row, med, card);
    }
    s.push('\n');
    s
}

/// The end of a table row: each peer's median ÷ this row's `med`, then the row's target
/// verdicts (recorded in `card`) and note.
pub fn write_ratios_and_verdicts(
    s: &mut String,
    table: &Table,
    results: &Results,
    row: &Row,
    med: f64,
    card: &mut Scorecard,
) {
    for (peer, _) in &table.peers {
        let cell = if *peer == row.key {
            "—".to_string()
        } else {
            results
                .median(peer)
                .map(|p| fmt_ratio(p / med))
                .unwrap_or_default()
        };
        let _ = write!(s, " {cell} |");
    }
    let mut cells: Vec<String> = Vec::new();
    for t in &row.targets {
        if let Some(v) = verdict(table, results, row.key, t) {
            cells.push(v.text.clone());
            card.items
                .push((table.short.to_string(), row.label.clone(), v));
        }
    }
    if !row.note.is_empty() {
        cells.push(row.note.clone());
    }
    let _ = writeln!(s, " {} |", cells.join("; "));
}
