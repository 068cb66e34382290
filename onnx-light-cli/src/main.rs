//! `onnx-light`: the command-line tool over the onnx-light library.

mod sample;
mod table;
mod tour;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Read, write and check ONNX models without the protobuf runtime.
#[derive(Debug, Parser)]
#[command(name = "onnx-light", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Save and load a model in every mode, check each round trip, print timings
    /// (the default: on a built-in sample model when no MODEL is given).
    Tour {
        /// A model to use instead of the built-in sample (it is not modified).
        model: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => tour::run(None),
        Some(Command::Tour { model }) => tour::run(model.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = e.source();
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}
