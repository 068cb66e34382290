//! Code generation. Runs only on input that passed `check`, reading the `model`; each
//! submodule emits one part of the generated code. `message`, `oneof` and `enumeration`
//! assemble a derive's impls from the parts; `stub` stands in for them after errors.

pub mod decode;
pub mod describe;
pub mod encode;
pub mod enumeration;
pub mod message;
pub mod oneof;
pub mod owned;
pub mod stub;
