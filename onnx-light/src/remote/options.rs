//! The options of remote loads.

use crate::error::{Error, Result};
use crate::io::ParseOptions;

/// Ranged GETs in flight at once, by default.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// How to read a model from a URL: the [`ParseOptions`] of any load (structure-only or
/// owned, limits, threads, progress, external data), plus what only remote reads have.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// The load's options. `verify_checksums` there is ignored: see
    /// [`verify_checksums`](Self::verify_checksums); `external_data_dir`, when set, is
    /// the URL of the directory the data objects are in (default: beside the model).
    pub parse: ParseOptions,
    /// Verify the external-data `checksum` of each object whose tensors record one
    /// (default true; owned loads only).
    pub verify_checksums: bool,
    /// The most ranged GETs in flight at once (default [`DEFAULT_CONCURRENCY`]).
    pub concurrency: usize,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            parse: ParseOptions::default(),
            verify_checksums: true,
            concurrency: DEFAULT_CONCURRENCY,
        }
    }
}

impl RemoteOptions {
    /// Sets `parse`.
    pub fn parse(mut self, parse: ParseOptions) -> Self {
        self.parse = parse;
        self
    }
    /// Sets `verify_checksums`.
    pub fn verify_checksums(mut self, yes: bool) -> Self {
        self.verify_checksums = yes;
        self
    }
    /// Sets `concurrency` (at least 1).
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        self.parse.validate()?;
        if self.concurrency == 0 {
            return Err(Error::invalid_option(
                "concurrency",
                "at least one request must be in flight",
            ));
        }
        Ok(())
    }
}
