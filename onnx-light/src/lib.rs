//! Read, edit and write ONNX models without a protobuf runtime: owned, zero-copy from a
//! memory map, or structure-only with weights fetched on demand; saves atomic and
//! byte-identical to what the official `onnx` package writes; no 2 GiB limit; external
//! weight files split and aligned; encrypted models.
//!
//! ```
//! use onnx_light::io::{self, SerializeOptions};
//! use onnx_light::onnx::*;
//! # let dir = std::env::temp_dir().join(format!("crate-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("model.onnx");
//! # let mut g = GraphProto::named("g");
//! # g.node.push(NodeProto::new("Relu", ["x"], ["y"]));
//! # g.initializer.push(TensorProto::from_slice("w", [2, 2], &[1.0f32, 2.0, 3.0, 4.0])?);
//! # io::save(&ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]), &path, &SerializeOptions::default())?;
//!
//! let mut model: Model = io::load(&path)?;
//! let graph = model.graph.as_mut().ok_or("no graph")?;
//! let relus = graph.node.iter().filter(|n| n.op_type() == "Relu").count();
//! for w in graph.initializer.iter_mut() {
//!     println!("{w:?}");
//!     if w.elem_type() == Some(DataType::Float) {
//!         w.values_mut::<f32>()?.iter_mut().for_each(|v| *v *= 0.5); // edit in place
//!     }
//! }
//! io::save(&model, &path, &SerializeOptions::default())?;
//! # assert_eq!(relus, 1);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The public surface
//!
//! | Path | What it holds |
//! |---|---|
//! | [`onnx`] | every ONNX message (`ModelProto<'a>`, `GraphProto<'a>`, ...; [`onnx::Model`] is the owned `ModelProto<'static>`), the enums (`DataType`, ...), constructors, typed accessors, walks over every tensor |
//! | [`io`] | load (owned, structure-only, or mapped with the `unsafe` [`io::load_mapped`]; files, bytes, readers; limits), save (atomic, parallel, to files, bytes, writers), [`io::external`] data files (split, aligned, resolved beneath the model's directory), consolidation |
//! | [`tensor`] | every ONNX element type, typed views and edits of tensor data, `ndarray` conversions (feature `ndarray`) |
//! | [`checker`] | the rules of `onnx.checker.check_model`, every problem reported with its path; the operator schemas of every ONNX version |
//! | [`version_converter`] | converting a model between opset versions of the ONNX domain as `onnx.version_converter` does: the same adapters, refusals and resulting model |
//! | [`compose`], [`extract`] | graph surgery as `onnx.compose` and `onnx.utils` do it: merging graphs and models, prefixing names, cutting out sub-models (file to file, reading only the weights kept) |
//! | [`text`] | the ONNX text format: `to_text` prints as `onnx.printer` does, `parse_model` reads what `onnx.parser` reads |
//! | [`crypto`] | encrypted models: the authenticated, chunked default format, and onnx_light's `ONNXCRY2` and `ONNXCRY1` |
//! | `remote` | models in object storage and on HTTP(S) servers (`s3://`, `gs://`, `az://`, `https://`, `file://`): structure first with ranged reads, weights in parallel or on demand (feature `remote`) |
//! | [`Error`], [`ErrorKind`] | one error type: what went wrong and where (byte offset, field path, file, tensor) |
//! | [`prelude`], [`ProtoMessage`] | declaring protobuf messages of your own (below) |
//! | [`Str`], [`Bytes`], [`SharedBytes`], [`EnumValue`], [`UnknownFields`], ... | the field types messages are made of |
//!
//! Everything else (`codec`, `wire`, `__private`, items marked hidden) exists for
//! derive-generated code and the workspace's tests and is not a stable API.
//!
//! # Cargo features
//!
//! All on by default except `ndarray`: `crypto` (the [`crypto`] module and its RustCrypto
//! dependencies), `mmap` ([`io::load_mapped`] maps files; without it, it
//! reads them into one shared buffer), `parallel` (rayon: parallel decode,
//! save and decryption; without it everything runs on the calling thread), `ndarray`
//! (`TensorProto::to_ndarray` / `from_ndarray`). `remote` (off by default; on in the tool
//! and the Python package) adds the `remote` module, on the `object_store`, `tokio` and
//! `reqwest` crates. `test-hooks` is not for users: it adds
//! hooks for this workspace's own tests (a fixed salt and IV and a cheap stand-in for
//! PBKDF2 in `crypto`, fault injection at every step of a save), hidden from these docs;
//! only test builds turn it on, so no release build contains them.
//!
//! [`text`] prints and parses models in the ONNX text syntax, character for character as
//! `onnx.printer` and `onnx.parser` do.
//!
//! # Declaring a message
//!
//! ```
//! use onnx_light::prelude::*;
//!
//! #[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
//! struct Tensor<'a> {
//!     #[proto(1)]
//!     dims: Vec<i64>,
//!     #[proto(8)]
//!     name: Option<Str<'a>>,
//!     #[proto(9)]
//!     raw_data: Option<Bytes<'a>>,
//! }
//!
//! let t = Tensor { dims: vec![2, 3], name: Some("w".into()), raw_data: Some(Bytes::from(vec![0u8; 24])) };
//! let bytes = t.encode_to_vec()?;
//! let view = Tensor::decode(&bytes)?;          // borrows `bytes`: no copies
//! assert_eq!(view.name(), "w");
//! assert!(view.raw_data.as_ref().unwrap().is_borrowed());
//! let owned: Tensor<'static> = view.into_owned(); // or Tensor::decode_owned(&bytes)
//! assert_eq!(owned, t);
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! # The derive's attributes
//!
//! One attribute per field, `#[proto(NUMBER, options...)]`; the protobuf type is inferred
//! from the Rust type where that is unambiguous:
//!
//! | Rust type | protobuf |
//! |---|---|
//! | `i32`, `i64`, `u32`, `u64`, `f32`, `f64`, `bool` | `int32`, `int64`, `uint32`, `uint64`, `float`, `double`, `bool` |
//! | `Str<'a>` (borrowed, inline or heap; 16 bytes), `String` | `string` |
//! | `Bytes<'a>`, `Vec<u8>` | `bytes` |
//! | `EnumValue<E>` (with `#[derive(ProtoEnum)] enum E`) | enum `E` (open: unknown values kept) |
//! | any `#[derive(ProtoMessage)]` type `M` | message `M` |
//!
//! Shapes: `Option<T>` is a proto2 `optional` field (written when set, even to the
//! default); a plain `T` scalar has implicit presence (written when not the default);
//! `Vec<T>` is `repeated`; `Option<Box<M>>` is a recursive message; `BTreeMap<K, V>` or
//! `HashMap<K, V>` is a `map<K, V>`.
//!
//! Options: `sint32`, `sint64`, `fixed32`, `fixed64`, `sfixed32`, `sfixed64` name the
//! integer encoding; `packed` packs a repeated scalar (parsing always accepts both);
//! `key = sint32` / `value = fixed64` name a map's encodings; `name = "type"` sets the
//! protobuf field name (default: the Rust name); `default = 3` sets the value that the
//! generated accessor returns when the field is unset. `#[proto(oneof(4, 5))]` on an
//! `Option<E>` field holds a `#[derive(ProtoOneof)]` enum whose variants are
//! `#[proto(4)] A(i64)`, `#[proto(5)] B(Str<'a>)`; `#[proto(unknown_fields)]` on an
//! `UnknownFields<'a>` field keeps undeclared fields and writes them back; `parallel` on
//! a repeated message field (`Vec<M>`) lets long runs of it be decoded on several
//! threads (see below; `M` must be `Send`). On the struct,
//! `#[proto(name = "pkg.Message")]` sets the protobuf message name, and `nests` marks a
//! type through which messages nest without bound (a graph in an attribute of a node of
//! a graph): its generated `into_owned` and `reborrow` continue on a heap-allocated stack
//! when the thread's runs low, so a value built by hand any number of levels deep does
//! not overflow it; `encode_check = "path"` names a `fn(&Self) -> Result<()>` run before
//! the message is encoded, to refuse values that must not be written.
//!
//! # Decode modes
//!
//! * [`Decode::decode`] — borrow: strings and payloads are slices of the input.
//! * [`DecodeOwned::decode_owned`] — copy: the result owns everything (`T<'static>`).
//! * [`DecodeOwned::decode_shared`] — shared: large payloads become [`SharedBytes`] slices of
//!   a reference-counted owner (an mmap, a buffer), the rest is copied; the result is
//!   `T<'static>` and no weight is copied.
//!
//! Strings must be valid UTF-8: anything else is an [`ErrorKind::InvalidUtf8`] error
//! naming the field. Unknown enum values and (with `unknown_fields`) undeclared fields
//! are kept and written back.
//!
//! Decoding accepts every encoding protobuf accepts: fields in any order, repeated
//! scalars packed or unpacked (even mixed), a non-repeated field seen twice (the last
//! scalar or oneof member wins, a message merges into the one before: scalars replaced,
//! repeated fields appended, sub-messages merged), varints padded up to 10 bytes (keys
//! up to 5; bits past the 64th are dropped, as protobuf drops them). A declared field
//! whose key carries a wire type its type does not read is kept as an unknown field,
//! as protobuf keeps it, and the declared field is left as it was. Encoding is canonical
//! (field-number order, unknown fields last), so such input is written back as
//! protobuf's `SerializeToString()` writes it, not byte for byte.
//!
//! # Parallel decoding
//!
//! In every mode, a run of a `parallel` field's values that spans at least 256 KiB and
//! holds at least 1024 values (any number when the mode copies payloads) is split into one slice per thread of the current rayon pool, each slice decoded on its own thread straight into its
//! place in the list. The ONNX types declare a graph's nodes, initializers, sparse
//! initializers, inputs, outputs and value_info, and a function's nodes, `parallel`, so
//! that large graphs decode on every core (`docs/design/decode-performance.md` says why
//! the thresholds are where they are). The result is the same
//! as on one thread, and so is the error for malformed input (the first failing value
//! in input order, with its offset, field path and index) and the outcome against a
//! [`DecodeOptions::max_memory`] budget. [`DecodeOptions::parallel`] (default true)
//! turns it off; [`io::ParseOptions::num_threads`] chooses the pool (1: the calling
//! thread only).
//!
//! # Checking models
//!
//! [`checker::check_model`] applies the rules of `onnx.checker.check_model` and reports
//! every problem with its path; [`checker::schema`] holds the operator schemas of the
//! pinned `onnx` release.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Derive-generated code names `::onnx_light`; this makes that path work inside the
// crate too, for the message types it declares itself.
#[allow(unused_extern_crates)]
extern crate self as onnx_light;

pub mod checker;
pub mod compose;
// The codec and wire layers are public only for derive-generated code and the workspace's
// white-box tests: hidden, and not a stable API.
#[doc(hidden)]
pub mod codec;
#[cfg(feature = "crypto")]
#[cfg_attr(docsrs, doc(cfg(feature = "crypto")))]
pub mod crypto;
mod descriptor;
mod error;
pub mod extract;
mod field;
pub mod formats;
pub mod inline;
pub mod io;
mod message;
pub mod onnx;
mod par;
mod pool;
#[cfg(feature = "remote")]
#[cfg_attr(docsrs, doc(cfg(feature = "remote")))]
pub mod remote;
pub mod shape;
pub mod tensor;
pub mod text;
pub mod version_converter;
#[doc(hidden)]
pub mod wire;

pub use codec::MAX_ENCODE_DEPTH;
pub use descriptor::{FieldDescriptor, FieldKind, Label, MessageDescriptor};
pub use error::{Error, ErrorKind, ExternalDataRule, Limit, PathSegment, Result, TextFormat};
pub use field::{
    AlignedBuffer, ByteOwner, Bytes, EnumValue, LazyPayload, OwnedBytes, PayloadSource, ProtoEnum,
    SharedBytes, SharedOwner, Str, UnknownField, UnknownFields,
};
pub use message::{Decode, DecodeOptions, DecodeOwned, IntoOwned, Message, Reborrow};
pub use onnx_light_derive::{ProtoEnum, ProtoMessage, ProtoOneof};
pub use wire::{Sink, DEFAULT_RECURSION_LIMIT};

/// The traits and types needed to declare, decode and encode messages.
pub mod prelude {
    pub use crate::field::{Bytes, EnumValue, ProtoEnum, Str, UnknownFields};
    pub use crate::message::{Decode, DecodeOwned, IntoOwned, Message};
    pub use onnx_light_derive::{ProtoEnum, ProtoMessage, ProtoOneof};
}

/// Paths used by generated code. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::codec::field::{MapField, Oneof, OneofDecode};
    pub use crate::codec::*;
    pub use crate::descriptor::*;
    pub use crate::error::{Error, Result};
    pub use crate::field::*;
    pub use crate::message::{Decode, IntoOwned, Message, MessageCodec, Reborrow};
    pub use crate::onnx::guarded;
    pub use crate::wire::{key_len, FieldKey, Reader, Sink, WireType};
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{Err, Ok};
    pub use std::vec::Vec;
}

/// The README's examples, compiled and run as doctests (they use every default feature).
#[cfg(all(doctest, feature = "crypto", feature = "mmap", feature = "parallel"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The example of this crate's own README (the crates.io page), compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
