//! Typed tensors: every ONNX element type as a Rust type, one read interface over every
//! way a [`TensorProto`] holds its values, and construction from Rust values.
//!
//! A tensor's values can be in `raw_data` (borrowed from the input, owned, or a shared
//! slice of a mapped file), in the typed field for its data type (`float_data`,
//! `int32_data`, ...), or left in their source (`lazy_data`: a lazily loaded or external
//! payload). [`TensorProto::values`] reads any of them as a `Cow<[T]>`: a zero-copy
//! `&[T]` when the bytes are aligned for `T` and the target is little-endian, an owned
//! copy otherwise — the `Cow` variant tells which. Alignment is checked by `bytemuck`;
//! nothing here casts a pointer.
//!
//! # Reading weights as `&[f32]`
//!
//! ```
//! use std::borrow::Cow;
//! use onnx_light::onnx::TensorProto;
//! use onnx_light::prelude::*;
//!
//! # let bytes = TensorProto::from_vec("w", [2, 2], vec![0.5f32, 1.0, 1.5, 2.0])?.encode_to_vec()?;
//! let tensor = TensorProto::decode(&bytes)?; // e.g. an initializer; borrows `bytes`
//! let weights: Cow<[f32]> = tensor.values::<f32>()?;
//! let w: &[f32] = &weights;
//! assert_eq!(w, [0.5, 1.0, 1.5, 2.0]);
//! // Borrowed: a view of `raw_data`. Owned: it had to copy (unaligned, or a typed field).
//! let zero_copy = matches!(weights, Cow::Borrowed(_));
//! # let _ = zero_copy;
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! # Building a tensor from a `Vec<f32>`
//!
//! ```
//! use onnx_light::onnx::{DataType, TensorProto};
//!
//! let bias = TensorProto::from_vec("bias", [2, 3], vec![0.0f32, 0.1, 0.2, 0.3, 0.4, 0.5])?;
//! assert_eq!(bias.elem_type(), Some(DataType::Float)); // inferred from f32
//! assert_eq!(bias.byte_size()?, 24);          // in raw_data, little-endian
//! assert!(TensorProto::from_vec("bad", [4], vec![1.0f32]).is_err()); // shape is checked
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! Also: [`TensorProto::from_slice`], [`from_elements`](TensorProto::from_elements)
//! (any iterator), [`from_slice_typed`](TensorProto::from_slice_typed) (typed field
//! instead of `raw_data`), [`try_from_raw`](TensorProto::try_from_raw) (bytes plus a data
//! type, length checked), [`from_strings`](TensorProto::from_strings), and with the
//! `ndarray` feature `from_ndarray` / `to_ndarray`.
//!
//! # Element types, packing, validation
//!
//! Every ONNX element type has a Rust type (`f32`, [`f16`](struct@f16), [`bf16`], the
//! float8/float6/float4 types, [`Int4`], [`Uint2`], ...); [`DataType::rust_type`],
//! [`DataType::bit_width`], [`DataType::onnx_name`], [`DataType::typed_field`] and
//! [`DataType::byte_size`] give the mapping at run time. Every read checks the payload
//! against shape × data type first, so a wrong length is an
//! [`ErrorKind::TensorDataMismatch`](crate::ErrorKind::TensorDataMismatch) naming the
//! tensor, never a short read. The full table, the packing of sub-byte types, the rounding
//! of small floats and the rules for lazy and external data are in the design note
//! `docs/design/typed-tensors.md`.

mod access;
#[cfg(feature = "ndarray")]
mod array;
mod build;
mod complex;
mod dtype;
mod edit;
mod element;
mod minifloat;
mod packed;

pub use access::{DataSource, TensorData};
pub use complex::{Complex32, Complex64};
pub use dtype::TypedField;
pub use element::TensorElement;
pub use half::{bf16, f16};
pub use minifloat::{
    E8M0Rounding, Float4E2M1, Float6E2M3, Float6E3M2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2,
    Float8E5M2FNUZ, Float8E8M0,
};
pub use packed::{pack, unpack, Int2, Int4, PackedElement, Uint2, Uint4};

#[cfg(doc)]
use crate::onnx::{DataType, TensorProto};
