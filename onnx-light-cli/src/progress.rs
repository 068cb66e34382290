//! Progress on stderr when it is a terminal and `--quiet` is off; nothing otherwise (so
//! scripts and pipes see clean output). Each step shows a spinner with what is happening,
//! which becomes a bar of bytes (done, total, percentage, rate and time left) as soon as
//! the library announces the bytes the step moves: a load, a save, an encryption.
//!
//! The spinner redraws its line on every tick from its own thread, so it is started
//! only after any prompt has been answered: a prompt waiting for input would be erased.
//! indicatif draws at most 20 times a second, whatever the library reports.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use onnx_light::io::{ParseOptions, SerializeOptions};

/// A step reporter.
pub struct Progress {
    bar: Option<ProgressBar>,
}

/// A step before its bytes are known: what it is, cut to the terminal's width.
fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {elapsed} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A step moving known bytes: what it is on one line, the bar and its numbers on the
/// next (under 80 columns).
fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner} {wide_msg}\n  [{bar:24}] {bytes}/{total_bytes} {percent}% {binary_bytes_per_sec} ETA {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Progress {
    /// Starts the spinner (when stderr is a terminal and not `quiet`). Ask for input
    /// before calling this.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new_spinner();
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        Progress::drawing(bar)
    }

    /// A reporter drawing on `bar` (none: reports nothing).
    fn drawing(bar: Option<ProgressBar>) -> Self {
        if let Some(b) = &bar {
            b.set_style(spinner_style());
        }
        Progress { bar }
    }

    /// Shows what is happening now: a spinner until the step's bytes are announced.
    pub fn step(&self, message: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_style(spinner_style());
            b.unset_length();
            b.set_position(0);
            b.reset_eta();
            b.set_message(message.into());
        }
    }

    /// What the library reports the bytes of a step to (none without a bar, so that
    /// nothing is counted).
    pub fn bytes(&self) -> Option<Arc<dyn onnx_light::io::Progress>> {
        self.bar
            .as_ref()
            .map(|b| Arc::new(Bytes(b.clone())) as Arc<dyn onnx_light::io::Progress>)
    }

    /// `options`, reporting the bytes the load reads.
    pub fn load(&self, options: ParseOptions) -> ParseOptions {
        match self.bytes() {
            Some(p) => options.progress(p),
            None => options,
        }
    }

    /// `options`, reporting the bytes the save writes.
    pub fn save(&self, options: SerializeOptions) -> SerializeOptions {
        match self.bytes() {
            Some(p) => options.progress(p),
            None => options,
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

/// The bar of a step, filled by the library's reports. Once all the bytes announced are
/// done, the step shows its spinner again: what follows (a flush, a check of what was
/// read) takes time the bar cannot measure.
struct Bytes(ProgressBar);

impl onnx_light::io::Progress for Bytes {
    fn expect(&self, bytes: u64) {
        let resumed = match self.0.length() {
            None => {
                self.0.set_length(bytes);
                self.0.reset_eta();
                true
            }
            Some(len) => {
                let finished = self.0.position() >= len;
                self.0.inc_length(bytes);
                finished
            }
        };
        if resumed && bytes > 0 {
            self.0.set_style(bytes_style());
        }
    }

    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
        if self.0.length().is_some_and(|len| self.0.position() >= len) {
            self.0.set_style(spinner_style());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announced_bytes_make_a_bar_that_each_step_starts_again() {
        let progress = Progress::drawing(Some(ProgressBar::hidden()));
        let bar = progress.bar.clone().unwrap();
        progress.step("reading");
        let bytes = progress.bytes().unwrap();
        assert_eq!(bar.length(), None);
        bytes.expect(1000);
        bytes.advance(250);
        bytes.expect(24);
        bytes.advance(774);
        assert_eq!((bar.position(), bar.length()), (1024, Some(1024)));
        // A new step is a spinner again, with nothing done.
        progress.step("writing");
        assert_eq!((bar.position(), bar.length()), (0, None));
        bytes.expect(10);
        assert_eq!((bar.position(), bar.length()), (0, Some(10)));
        assert_eq!(bar.message(), "writing");
    }

    #[test]
    fn without_a_terminal_nothing_is_counted() {
        // Tests do not run on a terminal's stderr (or are quiet).
        let progress = Progress::new(true);
        assert!(progress.bytes().is_none());
        assert_eq!(progress.load(ParseOptions::default()).progress, None);
        assert_eq!(progress.save(SerializeOptions::default()).progress, None);
    }
}
