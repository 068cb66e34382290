//! Shared pieces of the integration tests: the custom protobuf schema used for
//! known-answer and property tests, and the Python environment the interop tests run in.

pub mod bombs;
pub mod checker_oracle;
pub mod fuzz_checks;
pub mod kat;
pub mod mapped;
pub mod python;
pub mod scratch;
pub mod servers;
