//! Progress on stderr: a spinner with the current step when stderr is a terminal and
//! `--quiet` is off; nothing otherwise (so scripts and pipes see clean output).
//!
//! The spinner redraws its line on every tick from its own thread, so it is started
//! only after any prompt has been answered: a prompt waiting for input would be erased.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A step reporter.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts the spinner (when stderr is a terminal and not `quiet`). Ask for input
    /// before calling this.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        Progress { bar }
    }

    /// Shows what is happening now.
    pub fn step(&self, message: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(message.into());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
