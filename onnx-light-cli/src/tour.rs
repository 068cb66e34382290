//! `onnx-light tour`: a walk through the tool on the built-in sample model (or a copy of
//! the user's): `info`, `check`, `show`, `convert` to external data, a no-copy load timed
//! against a plain read of the file, encryption, then where to go next.
//!
//! The tour works in a fresh directory of its own and leaves it to the user. Each step
//! runs the command's own implementation there and prints the command line that repeats
//! it, then an excerpt of its output; a step's outputs are removed once it is done, so
//! that its commands can be run again as shown. Every line fits in 80 columns, but for
//! a path that is longer by itself (a long temporary directory).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::Model;

use crate::convert::{self, Convert};
use crate::mapped;
use crate::progress::Progress;
use crate::sample::{self, SampleSpec};
use crate::scratch::ScratchDir;
use crate::table::{self, Table};
use crate::{check, crypt, info, show};

type Failure = Box<dyn std::error::Error>;

/// The widest line the tour prints, in characters: under 80 columns.
const WIDTH: usize = 79;

/// The model every step uses, in the tour's directory.
const MODEL: &str = "model.onnx";
const EXTERNAL_MODEL: &str = "external.onnx";
const DATA_FILE: &str = "weights.bin";
const ENCRYPTED: &str = "model.enc";
const DECRYPTED: &str = "decrypted.onnx";
const PASSPHRASE_FILE: &str = "passphrase.txt";

/// Written to the passphrase file; a demo passphrase, known to anyone who reads this.
const DEMO_PASSPHRASE: &str = "onnx-light tour demo passphrase";

/// Numbered steps, the model's own included.
const STEPS: usize = 7;

/// Runs of each timed load; the best one is shown.
const RUNS: usize = 3;

/// The no-copy load as the tour shows it, next to the one call that does it.
const NO_COPY_RUST: [&str; 4] = [
    "use onnx_light::io::{self, ParseOptions};",
    "// SAFETY: nothing truncates or rewrites model.onnx while it is mapped",
    "let options = ParseOptions::default();",
    "let model = unsafe { io::load_mapped(\"model.onnx\", &options)? };",
];

/// The tour's only no-copy load: the file is mapped and the tensors are slices of it.
fn load_no_copy(path: &Path, load: &ParseOptions) -> onnx_light::Result<Model> {
    mapped::load_own_file(path, load)
}

/// `arg` as a POSIX shell reads it back: bare when it is made of characters no shell
/// treats specially, else in single quotes.
fn shell_quote(arg: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        Cow::Borrowed(arg)
    } else {
        Cow::Owned(format!("'{}'", arg.replace('\'', r"'\''")))
    }
}

/// `words` as lines of at most `width` characters, the first indented by `indent`
/// spaces and the others by `indent + hang`, each line but the last ending with `sep`.
/// A word too long for any line (a long path) stays where it is: a break would not
/// make it fit.
fn wrap(words: &[String], indent: usize, hang: usize, width: usize, sep: &str) -> Vec<String> {
    let len = |s: &str| s.chars().count();
    let mut lines = Vec::new();
    let mut line = " ".repeat(indent);
    let mut empty = true;
    for (i, w) in words.iter().enumerate() {
        // Room for `sep` after every word but the last, in case the next one breaks.
        let room = if i + 1 < words.len() { len(sep) } else { 0 };
        let fits_a_new_line = indent + hang + len(w) + room <= width;
        if !empty && len(&line) + 1 + len(w) + room > width && fits_a_new_line {
            line.push_str(sep);
            lines.push(std::mem::replace(&mut line, " ".repeat(indent + hang)));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(w);
        empty = false;
    }
    if !empty {
        lines.push(line);
    }
    lines
}

/// A command line as lines to copy, indented by `indent`: broken between arguments
/// with ` \` where it would be wider than `width`, so that a shell reads it back as one
/// command.
fn command_lines(indent: usize, words: &[String], width: usize) -> Vec<String> {
    let words: Vec<String> = words.iter().map(|a| shell_quote(a).into_owned()).collect();
    wrap(&words, indent, 4, width, " \\")
}

/// `line` cut to `width` characters, the cut marked with `…`; trailing spaces dropped.
fn cut(line: &str, width: usize) -> String {
    let line = line.trim_end();
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut s: String = line.chars().take(width - 1).collect();
    s.push('…');
    s
}

/// `time` relative to `base`: `1.06x`, or `1/240` for a fraction under a tenth.
fn relative(time: Duration, base: Duration) -> String {
    if base.is_zero() || time.is_zero() {
        return "-".into();
    }
    let r = time.as_secs_f64() / base.as_secs_f64();
    if r >= 0.1 {
        format!("{r:.2}x")
    } else {
        format!("1/{:.0}", 1.0 / r)
    }
}

/// Prints the tour; nothing with `--quiet`.
struct Page {
    quiet: bool,
    step: usize,
}

impl Page {
    fn line(&self, text: &str) {
        if !self.quiet {
            crate::print_line(text);
        }
    }

    /// The next step's heading, after a blank line.
    fn heading(&mut self, title: &str) {
        self.step += 1;
        self.line("");
        self.prose(0, &format!("[{}/{STEPS}] {title}", self.step));
    }

    /// Text wrapped at spaces to the page's width.
    fn prose(&self, indent: usize, text: &str) {
        let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        for l in wrap(&words, indent, 0, WIDTH, "") {
            self.line(&l);
        }
    }

    /// `onnx-light ARGS`, ready to copy, indented 2 as in the steps.
    fn command(&self, args: &[String]) {
        self.shell(2, "onnx-light", args);
    }

    /// `program ARGS`, ready to copy.
    fn shell(&self, indent: usize, program: &str, args: &[String]) {
        let words: Vec<String> = std::iter::once(program.to_string())
            .chain(args.iter().cloned())
            .collect();
        for l in command_lines(indent, &words, WIDTH) {
            self.line(&l);
        }
    }

    /// The first `shown` lines of a command's output, indented and cut to the width,
    /// then how many more there are.
    fn output(&self, text: &str, shown: usize) {
        let lines: Vec<&str> = text.lines().collect();
        for l in lines.iter().take(shown) {
            self.line(&cut(&format!("    {l}"), WIDTH));
        }
        match lines.len().saturating_sub(shown) {
            0 => {}
            1 => self.line("    … 1 more line"),
            n => self.line(&format!("    … {n} more lines")),
        }
    }
}

/// `args` as owned strings, for [`Page::command`].
fn args<const N: usize>(args: [&str; N]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The `--max-memory` flag that gives the commands the tour's own limit, if any.
fn memory_flag(load: &ParseOptions) -> Vec<String> {
    match load.max_memory {
        Some(u64::MAX) => args(["--max-memory", "none"]),
        Some(bytes) => vec!["--max-memory".into(), bytes.to_string()],
        None => Vec::new(),
    }
}

/// This executable when a shell would not run it as `onnx-light` (not on PATH, or
/// another `onnx-light` found first): the commands then need an alias.
fn needs_alias() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join("onnx-light"))
        .find(|candidate| candidate.is_file())
        .and_then(|f| f.canonicalize().ok());
    (found.as_ref() != Some(&exe)).then_some(exe)
}

fn file_size(name: &str) -> Result<u64, Failure> {
    Ok(std::fs::metadata(name)
        .map_err(|e| format!("{name}: {e}"))?
        .len())
}

/// Whether two files hold the same bytes, read a block at a time.
fn same_bytes(a: &str, b: &str) -> std::io::Result<bool> {
    let (fa, fb) = (File::open(a)?, File::open(b)?);
    if fa.metadata()?.len() != fb.metadata()?.len() {
        return Ok(false);
    }
    let (mut ra, mut rb) = (BufReader::new(fa), BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = ra.read(&mut ba)?;
        if n == 0 {
            return Ok(true);
        }
        rb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Removes what a step wrote, so that its commands can be run again as shown.
fn remove(names: &[&str]) -> std::io::Result<()> {
    for name in names {
        std::fs::remove_file(name)?;
    }
    Ok(())
}

/// Runs the tour on a copy of `model` (a path, not modified) or on the built-in sample
/// built as `spec` says, loading with `load` (`--max-memory`, `--allow-aliasing`).
pub fn run(
    model: Option<&Path>,
    spec: SampleSpec,
    load: &ParseOptions,
    quiet: bool,
) -> Result<(), Failure> {
    // Made absolute before the tour moves into its directory.
    let given = model.map(std::path::absolute).transpose()?;
    let alias = needs_alias();
    let dir = ScratchDir::new("tour")?;
    // Every command then runs on the names it shows, and prints what it would print
    // when repeated there.
    std::env::set_current_dir(dir.path())?;
    let mut tour = Tour {
        page: Page { quiet, step: 0 },
        load,
        limit: memory_flag(load),
    };
    let (made_with, about) = tour.make_model(given.as_deref(), spec)?;
    tour.introduce(given.is_some(), dir.path(), alias.as_deref());
    tour.model(&made_with, &about);
    tour.info()?;
    tour.check();
    tour.show()?;
    tour.convert()?;
    tour.no_copy()?;
    tour.encryption()?;
    tour.next_steps(dir.path(), alias.is_some())?;
    // With --quiet nobody was told where the directory is: it goes.
    if !quiet {
        dir.keep();
    }
    Ok(())
}

/// The tour under way, in its directory.
struct Tour<'l> {
    page: Page,
    load: &'l ParseOptions,
    /// `--max-memory`, for the commands that load a model.
    limit: Vec<String>,
}

impl Tour<'_> {
    fn progress(&self, what: &str) -> Progress {
        let progress = Progress::new(self.page.quiet);
        progress.step(what);
        progress
    }

    /// `args` with the tour's `--max-memory`, if any.
    fn limited(&self, mut args: Vec<String>) -> Vec<String> {
        args.extend(self.limit.iter().cloned());
        args
    }

    /// Writes `model.onnx`: a copy of the given model as one file, or the sample.
    /// Returns the command that makes it and what to say about it.
    fn make_model(
        &self,
        given: Option<&Path>,
        spec: SampleSpec,
    ) -> Result<(Vec<String>, String), Failure> {
        if let Some(path) = given {
            let c = Convert {
                external_data: None,
                size_threshold: None,
                align: None,
                max_file_size: None,
                checksum: false,
                inline: true,
                sync: true,
                threads: 0,
                force: false,
                load: self.load.clone(),
                infer: None,
                opset: None,
            };
            let progress = self.progress(&format!("copying {}", path.display()));
            convert::run(path, Path::new(MODEL), &c, &progress)?;
            let mut made = vec![
                "convert".to_string(),
                path.display().to_string(),
                MODEL.into(),
                "--inline".into(),
            ];
            made = self.limited(made);
            if self.load.allow_aliasing {
                made.push("--allow-aliasing".into());
            }
            let about = format!(
                "A copy of {}, its weights in the one file ({}); yours is not \
                 modified. The tour made it with:",
                path.file_name().unwrap_or_default().to_string_lossy(),
                table::bytes(file_size(MODEL)?)
            );
            return Ok((made, about));
        }
        let progress = self.progress("building the sample model");
        let model = sample::build(spec);
        let weights: u64 = model.tensors().iter().map(|t| t.inline_data_len()).sum();
        progress.step(format!("writing {MODEL}"));
        io::save(&model, MODEL, &SerializeOptions::default())?;
        let mut made = args(["sample", MODEL]);
        if spec.layers != SampleSpec::DEFAULT.layers {
            made.extend(["--layers".to_string(), spec.layers.to_string()]);
        }
        let about = format!(
            "The built-in sample: a small transformer ({} layers, {} of random \
             weights). The tour made it with:",
            spec.layers,
            table::bytes(weights)
        );
        Ok((made, about))
    }

    /// What the tour is, and how to follow along in its directory.
    fn introduce(&self, given: bool, dir: &Path, alias: Option<&Path>) {
        let page = &self.page;
        page.line(&format!(
            "onnx-light tour: the tool, step by step, on {}",
            if given {
                "a copy of your model"
            } else {
                "its built-in sample model"
            }
        ));
        page.line("");
        page.prose(
            0,
            "The tour works in a directory of its own and leaves it to you. Each step \
             shows the command that repeats it there; to follow along:",
        );
        page.shell(2, "cd", &[dir.display().to_string()]);
        if let Some(exe) = alias {
            // Quoted twice: once for `alias`, once for the shell that expands the alias.
            let exe = shell_quote(&exe.display().to_string()).into_owned();
            page.shell(2, "alias", &[format!("onnx-light={exe}")]);
            page.line("(this onnx-light is not the one on your PATH, hence the alias)");
        }
    }

    fn model(&mut self, made_with: &[String], about: &str) {
        self.page.heading(&format!("The model: {MODEL}"));
        self.page.prose(2, about);
        self.page.command(made_with);
    }

    fn info(&mut self) -> Result<(), Failure> {
        self.page
            .heading("info: what the model holds, without reading its weights");
        self.page.command(&self.limited(args(["info", MODEL])));
        let mut out = Vec::new();
        info::write(Path::new(MODEL), false, self.load, &mut out)?;
        self.page.output(&String::from_utf8_lossy(&out), 9);
        Ok(())
    }

    /// A model with problems is shown with them, as `check` prints them; the tour goes
    /// on, since the other commands may still work.
    fn check(&mut self) {
        self.page
            .heading("check: the rules of onnx.checker, external data, round trip");
        self.page.command(&self.limited(args(["check", MODEL])));
        let progress = self.progress(&format!("checking {MODEL}"));
        let report = check::run(
            Path::new(MODEL),
            &check::Asked {
                checksums: false,
                full: false,
            },
            self.load,
        );
        drop(progress);
        let mut said = report.lines.clone();
        said.extend(report.problem_lines());
        if !report.failed() {
            said.push(report.verdict());
        }
        self.page.output(&said.join("\n"), 8);
        if report.failed() {
            self.page.prose(
                2,
                "check exits with status 1 on a problem; the tour goes on.",
            );
        }
    }

    fn show(&mut self) -> Result<(), Failure> {
        self.page.heading("show: the model in the ONNX text syntax");
        self.page.prose(
            2,
            &format!(
                "Each tensor is cut after {} values; --full prints them all.",
                show::SHOWN_VALUES
            ),
        );
        self.page.command(&self.limited(args(["show", MODEL])));
        let text = show::text(Path::new(MODEL), false, self.load)?;
        self.page.output(&text, 10);
        Ok(())
    }

    /// Writes `external.onnx` and `weights.bin`, which the no-copy step loads too.
    fn convert(&mut self) -> Result<(), Failure> {
        self.page
            .heading("convert: the weights to an external data file");
        self.page.command(&self.limited(args([
            "convert",
            MODEL,
            EXTERNAL_MODEL,
            "--external-data",
            DATA_FILE,
        ])));
        let c = Convert {
            external_data: Some(DATA_FILE.into()),
            size_threshold: None,
            align: None,
            max_file_size: None,
            checksum: false,
            inline: false,
            sync: true,
            threads: 0,
            force: false,
            load: self.load.clone(),
            infer: None,
            opset: None,
        };
        let progress = self.progress(&format!("writing {EXTERNAL_MODEL}"));
        let said = convert::run(Path::new(MODEL), Path::new(EXTERNAL_MODEL), &c, &progress)?;
        drop(progress);
        self.page.output(&said, 4);
        self.page.prose(
            2,
            &format!(
                "{EXTERNAL_MODEL} holds the graph ({}), {DATA_FILE} every tensor of \
                 1 KiB or more ({}), each at an offset aligned to 4096 bytes (--align). \
                 --max-file-size splits the data into several files.",
                table::bytes(file_size(EXTERNAL_MODEL)?),
                table::bytes(file_size(DATA_FILE)?)
            ),
        );
        Ok(())
    }

    /// Times a plain read of the file, an owned load and a no-copy load, the best of a
    /// few runs each, shown relative to the read; checks that every load, and a no-copy
    /// load of the converted model, gives the same model.
    fn no_copy(&mut self) -> Result<(), Failure> {
        self.page
            .heading("A no-copy load, in Rust: the file is mapped, not read");
        for l in NO_COPY_RUST {
            self.page.line(&format!("  {l}"));
        }
        let progress = self.progress("timing loads");
        let model = Path::new(MODEL);
        let mut best = [Duration::MAX; 3];
        let mut owned = None;
        let mut mapped = None;
        // Interleaved, so that a burst of work elsewhere on the machine slows every
        // kind of run alike; the best of each is the least disturbed.
        for _ in 0..RUNS {
            let start = Instant::now();
            let bytes = std::fs::read(model).map_err(|e| format!("{MODEL}: {e}"))?;
            best[0] = best[0].min(start.elapsed());
            drop(bytes);
            drop(owned.take());
            let start = Instant::now();
            let m = io::load_with(model, self.load)?;
            best[1] = best[1].min(start.elapsed());
            owned = Some(m);
            drop(mapped.take());
            let start = Instant::now();
            let m = load_no_copy(model, self.load)?;
            best[2] = best[2].min(start.elapsed());
            mapped = Some(m);
        }
        let external = load_no_copy(Path::new(EXTERNAL_MODEL), self.load)?;
        drop(progress);
        if owned != mapped || owned.as_ref() != Some(&external) {
            return Err("the loads of the model gave different models".into());
        }
        drop((owned, mapped, external));
        let mut t = Table::new(&["what", &format!("best of {RUNS}"), "vs the read"]);
        for (what, time) in [
            (format!("std::fs::read(\"{MODEL}\")"), best[0]),
            ("io::load (owned)".to_string(), best[1]),
            ("no-copy load".to_string(), best[2]),
        ] {
            t.row(vec![what, table::duration(time), relative(time, best[0])]);
        }
        self.page.output(&t.render(), 5);
        self.page.prose(
            2,
            &format!(
                "An owned load reads the file once, into one buffer the tensors share. \
                 A no-copy load maps the file instead: its time does not grow with the \
                 weights, which are read from disk when first used, and the file must \
                 not change meanwhile. Both give the same model, and so does a no-copy \
                 load of {EXTERNAL_MODEL} (one map per file). To time every way to load \
                 on your machine:"
            ),
        );
        self.page.command(&self.limited(args(["bench", MODEL])));
        remove(&[EXTERNAL_MODEL, DATA_FILE])?;
        Ok(())
    }

    /// Encrypts and decrypts with a demo passphrase from a file, so that nothing
    /// prompts, and checks that the round trip gives the model's bytes back.
    fn encryption(&mut self) -> Result<(), Failure> {
        self.page
            .heading("encrypt, decrypt: authenticated (ONNXAE01) by default");
        {
            use std::io::Write as _;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(PASSPHRASE_FILE)?;
            writeln!(f, "{DEMO_PASSPHRASE}")?;
        }
        self.page.prose(
            2,
            &format!(
                "The passphrase is a fixed demo one, which the tour wrote to \
                 {PASSPHRASE_FILE}. Keep a real one in a file only you can read, or in \
                 {}, or type it when asked: never on a command line.",
                crypt::PASSPHRASE_ENV
            ),
        );
        let key = PathBuf::from(PASSPHRASE_FILE);
        let quiet = self.page.quiet;
        self.page.command(&args([
            "encrypt",
            MODEL,
            ENCRYPTED,
            "--passphrase-file",
            PASSPHRASE_FILE,
        ]));
        let said = crypt::encrypt(
            Path::new(MODEL),
            Path::new(ENCRYPTED),
            "onnxae01",
            Some(&key),
            false,
            quiet,
        )?;
        self.page.output(&said, 2);
        self.page.command(&args([
            "decrypt",
            ENCRYPTED,
            DECRYPTED,
            "--passphrase-file",
            PASSPHRASE_FILE,
        ]));
        let said = crypt::decrypt(
            Path::new(ENCRYPTED),
            Path::new(DECRYPTED),
            None,
            Some(&key),
            false,
            quiet,
        )?;
        self.page.output(&said, 2);
        if !same_bytes(MODEL, DECRYPTED)? {
            return Err(format!("{DECRYPTED} differs from {MODEL}").into());
        }
        self.page.prose(
            2,
            &format!(
                "{DECRYPTED} has the bytes of {MODEL}. A wrong passphrase, or any \
                 changed byte of {ENCRYPTED}, is an error before anything is parsed."
            ),
        );
        remove(&[ENCRYPTED, DECRYPTED])?;
        Ok(())
    }

    /// The library from Rust and Python, the help, and how to remove the directory.
    fn next_steps(&self, dir: &Path, alias: bool) -> Result<(), Failure> {
        let page = &self.page;
        page.line("");
        page.line("Next steps");
        page.prose(
            2,
            "The library from Rust (not yet on crates.io: the README says how to depend on it):",
        );
        page.line("    let model = onnx_light::io::load(\"model.onnx\")?;");
        page.prose(
            2,
            "From Python, with the API of the onnx package; in the repository:",
        );
        page.shell(4, "pip", &args(["install", "./onnx-light-python"]));
        page.prose(2, "then:");
        page.line("    import onnx_light.onnx as onnx");
        page.line("    model = onnx.load(\"model.onnx\")");
        page.prose(2, "Every command and its options:");
        page.shell(4, "onnx-light", &args(["--help"]));
        if alias {
            page.prose(2, "The tool on your PATH (in the repository):");
            page.shell(4, "cargo", &args(["install", "--path", "onnx-light-cli"]));
        }
        page.prose(
            2,
            &format!(
                "{MODEL} and {PASSPHRASE_FILE} ({}) stay for the commands above, which \
                 run again in order; what they wrote was removed. When you are done:",
                table::bytes(file_size(MODEL)? + file_size(PASSPHRASE_FILE)?)
            ),
        );
        page.shell(4, "rm", &["-r".into(), dir.display().to_string()]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_leaves_plain_names_and_quotes_the_rest() {
        assert_eq!(shell_quote("/tmp/model.onnx"), "/tmp/model.onnx");
        assert_eq!(shell_quote("--max-memory"), "--max-memory");
        assert_eq!(shell_quote("my model.onnx"), "'my model.onnx'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn long_commands_break_between_arguments_and_read_back_whole() {
        let a: Vec<String> = std::iter::once("onnx-light".to_string())
            .chain((0..12).map(|i| format!("argument-{i}")))
            .collect();
        let lines = command_lines(2, &a, 40);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        let (last, rest) = lines.split_last().unwrap();
        assert!(rest.iter().all(|l| l.ends_with(" \\")));
        assert!(!last.ends_with('\\'));
        let joined: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.trim_end_matches(" \\").split_whitespace())
            .collect();
        assert_eq!(joined, a);
        // A command that fits exactly is one line: its last word needs no room for ` \`.
        assert_eq!(
            command_lines(2, &a[..3], 34),
            ["  onnx-light argument-0 argument-1"]
        );
        assert_eq!(command_lines(2, &a[..3], 33).len(), 2);
        // A path longer than any line is not moved to a line of its own.
        let long = ["cd".to_string(), format!("/{}", "d".repeat(50))];
        assert_eq!(command_lines(2, &long, 40), [format!("  cd {}", long[1])]);
    }

    #[test]
    fn prose_wraps_within_the_width() {
        let words: Vec<String> = "a few words that will not fit on one narrow line"
            .split(' ')
            .map(str::to_string)
            .collect();
        let lines = wrap(&words, 2, 0, 20, "");
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert!(lines.iter().all(|l| l.starts_with("  ")));
        assert_eq!(lines.join(" ").split_whitespace().collect::<Vec<_>>(), {
            let w: Vec<&str> = words.iter().map(String::as_str).collect();
            w
        });
    }

    #[test]
    fn long_output_lines_are_cut_with_a_mark() {
        assert_eq!(cut("short  ", 10), "short");
        let c = cut("µ".repeat(20).as_str(), 10);
        assert_eq!(c.chars().count(), 10);
        assert!(c.ends_with('…'));
    }

    #[test]
    fn times_are_shown_relative_to_the_read() {
        let ms = Duration::from_millis;
        assert_eq!(relative(ms(106), ms(100)), "1.06x");
        assert_eq!(relative(Duration::from_micros(400), ms(100)), "1/250");
        assert_eq!(relative(ms(1), Duration::ZERO), "-");
    }
}
