//! `onnx-light`: the command-line tool over the onnx-light library.

mod bench;
mod check;
mod convert;
mod crypt;
mod failure;
mod info;
mod mapped;
mod progress;
mod sample;
mod scratch;
mod show;
mod size;
mod source;
mod table;
mod tour;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use onnx_light::io::ParseOptions;

// `check` words the hint of a model that did not load as the other commands do.
use failure::hint;
use progress::Progress;

/// The most layers `sample` builds: about 40 GB of weights, all in memory.
const MAX_SAMPLE_LAYERS: i64 = 1000;

/// Read, write, convert and check ONNX models without the protobuf runtime.
#[derive(Debug, Parser)]
#[command(name = "onnx-light", version, about)]
struct Cli {
    /// Print nothing but errors (and what a command is asked to print, like --json).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A walk through the tool: info, check, show, convert, a no-copy load, encryption,
    /// each with the command that repeats it (the default: on a built-in sample model
    /// when no MODEL is given).
    Tour {
        /// A model to use instead of the built-in sample (it is copied, not modified).
        model: Option<PathBuf>,
        /// Transformer layers of the sample (each about 40 MB of weights; at most 1000).
        #[arg(long, default_value_t = 6, conflicts_with = "model",
              value_parser = clap::value_parser!(u16).range(0..=MAX_SAMPLE_LAYERS))]
        layers: u16,
        #[command(flatten)]
        memory: MemoryLimit,
        #[command(flatten)]
        aliasing: Aliasing,
    },
    /// Write the built-in sample model (a small transformer, ~340 MB of weights) to OUT.
    Sample {
        /// The file to write the sample model to.
        output: PathBuf,
        /// Transformer layers (each about 40 MB of weights, built in memory; at most
        /// 1000).
        #[arg(long, default_value_t = 6,
              value_parser = clap::value_parser!(u16).range(0..=MAX_SAMPLE_LAYERS))]
        layers: u16,
        /// Replace OUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Describe a model: IR version, opsets, inputs, outputs, nodes, weights, files.
    Info {
        /// The ONNX model file to describe.
        model: PathBuf,
        /// One JSON object (schema in the README).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        memory: MemoryLimit,
    },
    /// Print a model in the ONNX text syntax, as `onnx.printer.to_text` does, with each
    /// tensor's values cut after the first 16 unless --full (external tensors as their
    /// `external_data` entries).
    Show {
        /// The ONNX model file to print.
        model: PathBuf,
        /// Print every tensor value: exactly what `onnx.printer.to_text` prints.
        #[arg(long)]
        full: bool,
        #[command(flatten)]
        memory: MemoryLimit,
    },
    /// Rewrite a model, moving weights into or out of external data files.
    Convert {
        /// The ONNX model to read (not modified, unless it is also OUTPUT): a file or a
        /// URL (s3://, gs://, az://, http(s)://, file://).
        input: PathBuf,
        /// The model file to write (its data files go next to it), or an s3://, gs://,
        /// az:// or file:// URL (its data objects go beside it, the model object last).
        output: PathBuf,
        /// Write tensors to this external data file next to OUTPUT (a file name).
        #[arg(long, value_name = "NAME", conflicts_with = "inline", value_parser = data_file_name)]
        external_data: Option<String>,
        /// Tensors at least this large go external (default 1024; suffixes like 4k).
        #[arg(long, value_name = "BYTES", value_parser = size::parse)]
        size_threshold: Option<u64>,
        /// Align each external tensor to this power of two (default 4096).
        #[arg(long, value_name = "BYTES", value_parser = size::parse)]
        align: Option<u64>,
        /// Split external data into files of at most this size (NAME, NAME.1, ...).
        #[arg(long, value_name = "BYTES", value_parser = size::parse)]
        max_file_size: Option<u64>,
        /// Record each data file's SHA-1 as its tensors' `checksum` (verified by
        /// `check --checksums` and by loads from URLs).
        #[arg(long)]
        checksum: bool,
        /// Bring every external tensor back into the model file.
        #[arg(long)]
        inline: bool,
        /// Convert the model to this opset version of the ONNX domain (as
        /// onnx.version_converter.convert_version); refused conversions fail.
        #[arg(long, value_name = "N")]
        opset: Option<i64>,
        /// Skip the fsyncs: still atomic, but not durable across a power loss.
        #[arg(long)]
        no_sync: bool,
        /// Worker threads (default 0: all cores; at most 1024).
        #[arg(long, value_name = "N", default_value_t = 0,
              value_parser = clap::value_parser!(u16).range(0..=onnx_light::io::MAX_THREADS as i64))]
        threads: u16,
        /// Replace OUTPUT if it exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        memory: MemoryLimit,
        #[command(flatten)]
        aliasing: Aliasing,
    },
    /// Infer the types and shapes of the values a model computes (as
    /// onnx.shape_inference.infer_shapes) and write the model with them recorded. Any
    /// size: weights are copied file to file, external data keeps its layout.
    InferShapes {
        /// The ONNX model to read (not modified, unless it is also OUTPUT).
        input: PathBuf,
        /// The model file to write (its data files go next to it).
        output: PathBuf,
        /// Fail on the first node whose types conflict with the declared ones or break
        /// its operator's rules (else such nodes are skipped).
        #[arg(long)]
        strict: bool,
        /// Check each node's input types against its operator's schema (a mismatch
        /// fails, as in onnx).
        #[arg(long)]
        check_type: bool,
        /// Propagate the values computed from shapes (Shape, Gather, Concat, ...) into
        /// the operators that take a shape (Reshape, Expand, ...), as onnx's data_prop.
        #[arg(long)]
        data_prop: bool,
        /// Skip the fsyncs: still atomic, but not durable across a power loss.
        #[arg(long)]
        no_sync: bool,
        /// Replace OUTPUT if it exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        memory: MemoryLimit,
        #[command(flatten)]
        aliasing: Aliasing,
    },
    /// Validate a model and everything it refers to (the rules of onnx.checker, external
    /// data, tensor sizes); exit 1 with one line per problem (the same problem in many
    /// places is one line naming them).
    Check {
        /// The ONNX model file to check (its external data is read from beside it).
        model: PathBuf,
        /// Print the verdict and every problem as one JSON object.
        #[arg(long)]
        json: bool,
        /// Also verify external data checksums (SHA-1 of each file).
        #[arg(long)]
        checksums: bool,
        /// Also run strict shape inference with type checks, as
        /// onnx.checker.check_model(full_check=True).
        #[arg(long)]
        full: bool,
        #[command(flatten)]
        memory: MemoryLimit,
    },
    /// Encrypt a model file (authenticated ONNXAE01 by default; ONNXCRY2 and ONNXCRY1
    /// for compatibility). Weights in external data files are encrypted too, inline:
    /// OUTPUT is the only file needed to decrypt.
    Encrypt {
        /// The ONNX model to encrypt (with its external data).
        input: PathBuf,
        /// The encrypted file to write.
        output: PathBuf,
        /// `onnxae01` (authenticated, default), `onnxcry2` (onnx_light's, ChaCha20-Poly1305)
        /// or `onnxcry1` (onnx_light's, no MAC).
        #[arg(long, default_value = "onnxae01")]
        format: String,
        /// Read the passphrase from this file (else ONNX_LIGHT_PASSPHRASE, which is removed
        /// from the environment once read, else a prompt).
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
        /// Replace OUTPUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Decrypt an encrypted model file (format detected from its first bytes) into one
    /// model file. ONNXCRY1 input, which has no integrity protection, is accepted with a
    /// warning on stderr (shown even with --quiet).
    Decrypt {
        /// The encrypted model to decrypt.
        input: PathBuf,
        /// The plain ONNX model to write.
        output: PathBuf,
        /// Write the tensors to this external data file next to OUTPUT (a file name).
        #[arg(long, value_name = "NAME", value_parser = data_file_name)]
        external_data: Option<String>,
        /// Read the passphrase from this file (else ONNX_LIGHT_PASSPHRASE, which is removed
        /// from the environment once read, else a prompt).
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
        /// Replace OUTPUT if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Time loading and saving MODEL in every mode on this machine.
    Bench {
        /// The ONNX model file to time.
        model: PathBuf,
        /// One JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Runs per step (the median is reported; at least 1).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
        runs: u16,
        #[command(flatten)]
        memory: MemoryLimit,
        #[command(flatten)]
        aliasing: Aliasing,
    },
}

/// `--max-memory`, on every command that loads a model.
#[derive(Debug, Clone, Args)]
struct MemoryLimit {
    /// The most memory the decoded model may take (suffixes like 512M; `none`: no
    /// limit). Default: 64 MiB + 16x the model file's size.
    #[arg(long, value_name = "BYTES", value_parser = size::parse_limit)]
    max_memory: Option<u64>,
}

/// `--external-data NAME`: a file name, written next to OUTPUT, checked as the library
/// checks a data file's location, so that a path is refused before anything is read.
fn data_file_name(text: &str) -> Result<String, String> {
    let options = onnx_light::io::external::ExternalDataOptions::new(text);
    match options.validate() {
        Ok(()) => Ok(text.to_string()),
        Err(e) => match e.kind() {
            onnx_light::ErrorKind::InvalidOption { reason, .. } => Err(reason.clone()),
            _ => Err(e.to_string()),
        },
    }
}

/// `--allow-aliasing`, on commands that load external data.
#[derive(Debug, Clone, Args)]
struct Aliasing {
    /// Load a model whose external tensors share bytes of their data files (refused by
    /// default when they reference more bytes than the files hold).
    #[arg(long)]
    allow_aliasing: bool,
}

impl MemoryLimit {
    fn options(&self) -> ParseOptions {
        let options = ParseOptions::default();
        match self.max_memory {
            Some(bytes) => options.max_memory(bytes),
            None => options,
        }
    }
}

/// The load options the flags ask for (everything else at its default).
fn load_options(memory: &MemoryLimit, aliasing: &Aliasing) -> ParseOptions {
    memory.options().allow_aliasing(aliasing.allow_aliasing)
}

type Failure = Box<dyn std::error::Error>;

/// Refuses an OUTPUT that is a directory, or that exists when `--force` was not given.
fn refuse_existing_output(output: &std::path::Path, force: bool) -> Result<(), Failure> {
    if output.is_dir() {
        return Err(format!("{} is a directory; give a file name", output.display()).into());
    }
    if output.exists() && !force {
        return Err(format!(
            "{} exists; pass --force to replace it (the replacement is atomic)",
            output.display()
        )
        .into());
    }
    Ok(())
}

/// Writes `text` to standard output. A reader that went away (`onnx-light ... | head`)
/// ends the program quietly, as it ends other command-line tools; any other write
/// error ends it with that error (`println!` would panic on either).
pub fn print_text(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

/// [`print_text`] of one line.
pub fn print_line(line: &str) {
    print_text(&format!("{line}\n"));
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let say = |s: &str| {
        if !cli.quiet {
            print_line(s);
        }
    };
    match cli.command {
        None => tour::run(
            None,
            sample::SampleSpec::DEFAULT,
            &ParseOptions::default(),
            cli.quiet,
        )?,
        Some(Command::Tour {
            model,
            layers,
            memory,
            aliasing,
        }) => tour::run(
            model.as_deref(),
            sample::SampleSpec {
                layers: usize::from(layers),
                ..sample::SampleSpec::DEFAULT
            },
            &load_options(&memory, &aliasing),
            cli.quiet,
        )?,
        Some(Command::Sample {
            output,
            layers,
            force,
        }) => {
            refuse_existing_output(&output, force)?;
            let spec = sample::SampleSpec {
                layers: usize::from(layers),
                ..sample::SampleSpec::DEFAULT
            };
            let progress = Progress::new(cli.quiet);
            progress.step("building the sample model");
            let model = sample::build(spec);
            progress.step(format!("writing {}", output.display()));
            onnx_light::io::save(
                &model,
                &output,
                &progress.save(onnx_light::io::SerializeOptions::default()),
            )?;
            drop(progress);
            say(&format!("wrote {} ({} layers)", output.display(), layers));
        }
        Some(Command::Info {
            model,
            json,
            memory,
        }) => info::run(&model, json, &memory.options())?,
        Some(Command::Show {
            model,
            full,
            memory,
        }) => show::run(&model, full, &memory.options())?,
        Some(Command::Convert {
            input,
            output,
            external_data,
            size_threshold,
            align,
            max_file_size,
            checksum,
            inline,
            opset,
            no_sync,
            threads,
            force,
            memory,
            aliasing,
        }) => {
            let progress = Progress::new(cli.quiet);
            let c = convert::Convert {
                external_data,
                size_threshold,
                align,
                max_file_size,
                checksum,
                inline,
                sync: !no_sync,
                threads: usize::from(threads),
                force,
                load: load_options(&memory, &aliasing),
                infer: None,
                opset,
            };
            let done = convert::run(&input, &output, &c, &progress)?;
            drop(progress);
            say(&done);
        }
        Some(Command::InferShapes {
            input,
            output,
            strict,
            check_type,
            data_prop,
            no_sync,
            force,
            memory,
            aliasing,
        }) => {
            let progress = Progress::new(cli.quiet);
            let c = convert::Convert {
                external_data: None,
                size_threshold: None,
                align: None,
                max_file_size: None,
                checksum: false,
                inline: false,
                sync: !no_sync,
                threads: 0,
                force,
                load: load_options(&memory, &aliasing),
                infer: Some(
                    onnx_light::shape::InferOptions::default()
                        .strict_mode(strict)
                        .check_type(check_type)
                        .data_prop(data_prop),
                ),
                opset: None,
            };
            let done = convert::run(&input, &output, &c, &progress)?;
            drop(progress);
            say(&done);
        }
        Some(Command::Check {
            model,
            json,
            checksums,
            full,
            memory,
        }) => {
            let progress = Progress::new(cli.quiet || json);
            progress.step(format!("checking {}", model.display()));
            let report = check::run(
                &model,
                &check::Asked { checksums, full },
                &progress.load(memory.options()),
            );
            drop(progress);
            let failed = report.failed();
            if json {
                print_line(&format!("{:#}", report.to_json(&model)));
                return Ok(if failed {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                });
            }
            for l in &report.lines {
                say(l);
            }
            for l in report.problem_lines() {
                eprintln!("{l}");
            }
            if failed {
                return Ok(ExitCode::FAILURE);
            }
            say(&report.verdict());
        }
        Some(Command::Encrypt {
            input,
            output,
            format,
            passphrase_file,
            force,
        }) => {
            // The passphrase is read before the spinner starts: crypt makes the progress.
            let done = crypt::encrypt(
                &input,
                &output,
                &format,
                passphrase_file.as_ref(),
                force,
                cli.quiet,
            )?;
            say(&done);
        }
        Some(Command::Decrypt {
            input,
            output,
            external_data,
            passphrase_file,
            force,
        }) => {
            let done = crypt::decrypt(
                &input,
                &output,
                external_data.as_deref(),
                passphrase_file.as_ref(),
                force,
                cli.quiet,
            )?;
            say(&done);
        }
        Some(Command::Bench {
            model,
            json,
            runs,
            memory,
            aliasing,
        }) => {
            let progress = Progress::new(cli.quiet || json);
            let load = load_options(&memory, &aliasing);
            bench::run(&model, usize::from(runs), json, &load, &progress)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `onnx-light model.onnx`: a model where a command was expected.
            let bare_model = e.kind() == clap::error::ErrorKind::InvalidSubcommand
                && std::env::args_os().nth(1).is_some_and(|a| {
                    Path::new(&a).is_file() || a.to_string_lossy().ends_with(".onnx")
                });
            let _ = e.print();
            if bare_model {
                let model = std::env::args_os().nth(1).unwrap_or_default();
                eprintln!(
                    "hint: to describe the model: onnx-light info {}",
                    model.to_string_lossy()
                );
            }
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => failure::report(e.as_ref()),
    }
}
