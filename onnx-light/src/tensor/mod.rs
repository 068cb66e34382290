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
//! assert_eq!(bias.dtype()?, DataType::Float); // inferred from f32
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
//! # Element types
//!
//! Bits are per element in `raw_data`; types narrower than a byte are packed. The last
//! column is the typed field used when `raw_data` is not, and how many elements each of
//! its entries holds.
//!
//! | `DataType` | ONNX name | bits | Rust type | typed field |
//! |---|---|---|---|---|
//! | `Float` | `FLOAT` | 32 | `f32` | `float_data` |
//! | `Uint8` | `UINT8` | 8 | `u8` | `int32_data` |
//! | `Int8` | `INT8` | 8 | `i8` | `int32_data` |
//! | `Uint16` | `UINT16` | 16 | `u16` | `int32_data` |
//! | `Int16` | `INT16` | 16 | `i16` | `int32_data` |
//! | `Int32` | `INT32` | 32 | `i32` | `int32_data` |
//! | `Int64` | `INT64` | 64 | `i64` | `int64_data` |
//! | `String` | `STRING` | — | bytes, via [`TensorProto::strings`] | `string_data` |
//! | `Bool` | `BOOL` | 8 | `bool` | `int32_data` |
//! | `Float16` | `FLOAT16` | 16 | [`f16`](struct@f16) (`half`) | `int32_data` (bit pattern) |
//! | `Double` | `DOUBLE` | 64 | `f64` | `double_data` |
//! | `Uint32` | `UINT32` | 32 | `u32` | `uint64_data` |
//! | `Uint64` | `UINT64` | 64 | `u64` | `uint64_data` |
//! | `Complex64` | `COMPLEX64` | 64 | [`Complex32`] (two `f32`) | `float_data` (re, im) |
//! | `Complex128` | `COMPLEX128` | 128 | [`Complex64`] (two `f64`) | `double_data` (re, im) |
//! | `Bfloat16` | `BFLOAT16` | 16 | [`bf16`] (`half`) | `int32_data` (bit pattern) |
//! | `Float8E4M3FN` | `FLOAT8E4M3FN` | 8 | [`Float8E4M3FN`] | `int32_data` (bit pattern) |
//! | `Float8E4M3FNUZ` | `FLOAT8E4M3FNUZ` | 8 | [`Float8E4M3FNUZ`] | `int32_data` (bit pattern) |
//! | `Float8E5M2` | `FLOAT8E5M2` | 8 | [`Float8E5M2`] | `int32_data` (bit pattern) |
//! | `Float8E5M2FNUZ` | `FLOAT8E5M2FNUZ` | 8 | [`Float8E5M2FNUZ`] | `int32_data` (bit pattern) |
//! | `Uint4` | `UINT4` | 4 | [`Uint4`] | `int32_data`, 2 per entry |
//! | `Int4` | `INT4` | 4 | [`Int4`] | `int32_data`, 2 per entry |
//! | `Float4E2M1` | `FLOAT4E2M1` | 4 | [`Float4E2M1`] | `int32_data`, 2 per entry |
//! | `Float8E8M0` | `FLOAT8E8M0` | 8 | [`Float8E8M0`] | `int32_data` (bit pattern) |
//! | `Uint2` | `UINT2` | 2 | [`Uint2`] | `int32_data`, 4 per entry |
//! | `Int2` | `INT2` | 2 | [`Int2`] | `int32_data`, 4 per entry |
//! | `Float6E2M3` | `FLOAT6E2M3` | 6 | [`Float6E2M3`] | `int32_data`, 1 code per entry |
//! | `Float6E3M2` | `FLOAT6E3M2` | 6 | [`Float6E3M2`] | `int32_data`, 1 code per entry |
//!
//! The same facts at run time: [`DataType::bit_width`], [`DataType::onnx_name`],
//! [`DataType::rust_type`], [`DataType::typed_field`], [`DataType::byte_size`].
//!
//! Packing follows the spec: one little-endian bit stream, element `i` at bits
//! `i * bits ..`, so the first 4-bit element is the low nibble, 2-bit elements fill a
//! byte from bit 0 up, and four 6-bit elements fill three bytes; the last byte is
//! zero-padded (see [`pack`], [`unpack`]). In memory every element type is unpacked.
//!
//! # Small floats
//!
//! The float8, float6 and float4 types convert to `f32` exactly and from `f32` with
//! round-to-nearest-even and the saturation rules of the ONNX `Cast` operator:
//! `from_f32` saturates (the ONNX default, what `onnx.helper.make_tensor` does) and the
//! float8 types' `from_f32_with(x, saturate)` can overflow to infinity or NaN instead.
//! Types without infinity or NaN (float4, float6) always saturate and map NaN to `+max`;
//! [`Float8E8M0`] documents its own rounding modes.
//!
//! # Validation
//!
//! Every read checks the payload against shape × data type first: a `raw_data` or lazy
//! payload of the wrong byte length, or a typed field with the wrong number of entries,
//! is an [`ErrorKind::TensorDataMismatch`](crate::ErrorKind::TensorDataMismatch) naming
//! the tensor, never a short read. An unknown or `UNDEFINED` data type is an
//! [`ErrorKind::UnsupportedDataType`](crate::ErrorKind::UnsupportedDataType) on typed
//! access only: such tensors parse and serialize unchanged. Values kept in a wider
//! integer field keep their low bits, as `onnx.numpy_helper.to_array` reads them.
//! Tensors split into segments (`TensorProto.segment`) are not supported: their payload
//! does not match the full shape, which is reported as a mismatch.
//!
//! # Lazy and external data
//!
//! When `raw_data` is unset and `lazy_data` holds a [`LazyPayload`](crate::LazyPayload),
//! reads fetch it: [`TensorProto::data`] keeps a mapped payload zero-copy
//! ([`TensorData::bytes`] is `Shared`), [`TensorProto::values`] and
//! [`raw_bytes`](TensorProto::raw_bytes) copy it into the returned `Cow`. A tensor marked
//! `data_location = EXTERNAL` with neither `raw_data` nor `lazy_data` gives
//! [`ErrorKind::ExternalDataNotLoaded`](crate::ErrorKind::ExternalDataNotLoaded): the
//! external-data loader resolves `location` and attaches the payload; this module only
//! reads it.

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
