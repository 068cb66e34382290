//! [`TensorElement`]: the Rust types a tensor's values can be read as and built from, and
//! how each one is decoded from and encoded to `raw_data` and its typed field.
//!
//! Reading `raw_data` borrows (`Cow::Borrowed`) when the bytes are aligned for the type
//! and the target is little-endian — checked by `bytemuck`, never by a pointer cast — and
//! copies otherwise. Typed fields are borrowed where they already hold the element type
//! (`float_data` for `f32` and `Complex32`, `int32_data` for `i32`, ...) and converted
//! otherwise. Values stored in a wider integer field (`int32_data`, `uint64_data`) keep
//! their low bits, as `onnx.numpy_helper.to_array` does.

use std::borrow::Cow;
use std::fmt;

use half::{bf16, f16};

use super::complex::{Complex32, Complex64};
use super::minifloat::{
    Float4E2M1, Float6E2M3, Float6E3M2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ,
    Float8E8M0,
};
use super::packed::{pack, unpack_codes, Int2, Int4, PackedElement, Uint2, Uint4};
use crate::onnx::{DataType, TensorProto};

/// A Rust type that holds the values of one ONNX data type.
///
/// [`DataType::rust_type`] gives the mapping (the full table is in
/// `docs/design/typed-tensors.md`). The trait is sealed: the set of ONNX types is fixed by the standard.
pub trait TensorElement:
    Copy + PartialEq + fmt::Debug + Send + Sync + 'static + sealed::Codec
{
    /// The ONNX data type of tensors holding this element type.
    const DATA_TYPE: DataType;
}

pub(crate) mod sealed {
    use std::borrow::Cow;

    use crate::onnx::TensorProto;

    /// Decoding and encoding; callers validate lengths first, and every method stays
    /// panic-free even when they do not (it then returns fewer values).
    pub trait Codec: Sized + Clone {
        /// `count` elements from little-endian `raw` bytes of the validated length.
        fn decode_raw(raw: &[u8], count: usize) -> Cow<'_, [Self]>;
        /// `count` elements from the typed field of `t` (entry count validated).
        fn decode_typed<'t>(t: &'t TensorProto<'_>, count: usize) -> Cow<'t, [Self]>;
        /// The `raw_data` bytes of `values`.
        fn encode_raw(values: &[Self]) -> Vec<u8>;
        /// Stores `values` in the typed field of `t`.
        fn encode_typed(values: &[Self], t: &mut TensorProto<'_>);

        /// True when [`view_raw_mut`](Self::view_raw_mut) gives a view: every type
        /// stored whole in `raw_data` on a little-endian target; not the packed types.
        const IN_PLACE: bool = false;
        /// `raw` (owned, of the validated length, aligned for `Self`) as values to
        /// edit in place; `None` when [`IN_PLACE`](Self::IN_PLACE) is false.
        fn view_raw_mut(_raw: &mut [u8]) -> Option<&mut [Self]> {
            None
        }
    }
}

use sealed::Codec;

/// A plain value stored as its little-endian bytes.
trait LittleEndian: bytemuck::Pod {
    /// Converts between little-endian and native byte order (an involution; the identity
    /// on little-endian targets).
    fn swap_le(self) -> Self;
}

macro_rules! le_int {
    ($($T:ty),*) => {$(
        impl LittleEndian for $T {
            fn swap_le(self) -> Self {
                <$T>::from_le(self)
            }
        }
    )*};
}
le_int!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! le_bits {
    ($($T:ty => $Bits:ty),*) => {$(
        impl LittleEndian for $T {
            fn swap_le(self) -> Self {
                <$T>::from_bits(<$Bits>::from_le(self.to_bits()))
            }
        }
    )*};
}
le_bits!(f32 => u32, f64 => u64, f16 => u16, bf16 => u16);

macro_rules! le_byte {
    ($($T:ty),*) => {$(
        impl LittleEndian for $T {
            fn swap_le(self) -> Self {
                self
            }
        }
    )*};
}
le_byte!(
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E5M2,
    Float8E5M2FNUZ,
    Float8E8M0
);

impl LittleEndian for Complex32 {
    fn swap_le(self) -> Self {
        Complex32::new(self.re.swap_le(), self.im.swap_le())
    }
}

impl LittleEndian for Complex64 {
    fn swap_le(self) -> Self {
        Complex64::new(self.re.swap_le(), self.im.swap_le())
    }
}

/// Little-endian bytes as `&[T]` when they are aligned and the target is little-endian,
/// else a converted copy.
fn decode_pod<T: LittleEndian>(raw: &[u8]) -> Cow<'_, [T]> {
    if cfg!(target_endian = "little") {
        if let Ok(values) = bytemuck::try_cast_slice::<u8, T>(raw) {
            return Cow::Borrowed(values);
        }
    }
    Cow::Owned(
        raw.chunks_exact(size_of::<T>())
            .map(|c| bytemuck::pod_read_unaligned::<T>(c).swap_le())
            .collect(),
    )
}

fn encode_pod<T: LittleEndian>(values: &[T]) -> Vec<u8> {
    if cfg!(target_endian = "little") {
        bytemuck::cast_slice(values).to_vec()
    } else {
        let mut out = Vec::with_capacity(size_of_val(values));
        for v in values {
            out.extend_from_slice(bytemuck::bytes_of(&v.swap_le()));
        }
        out
    }
}

/// Complex values from a float field of re/im pairs: a view when the pairs line up.
fn decode_pairs<P: bytemuck::Pod, C: bytemuck::Pod>(
    parts: &[P],
    make: impl Fn(P, P) -> C,
) -> Cow<'_, [C]> {
    match bytemuck::try_cast_slice(parts) {
        Ok(values) => Cow::Borrowed(values),
        Err(_) => Cow::Owned(parts.chunks_exact(2).map(|p| make(p[0], p[1])).collect()),
    }
}

macro_rules! element {
    (
        $T:ty, $dtype:ident,
        decode_typed: |$t:ident| $decode:expr,
        encode_typed: |$values:ident, $out:ident| $encode:expr
    ) => {
        impl TensorElement for $T {
            const DATA_TYPE: DataType = DataType::$dtype;
        }

        impl Codec for $T {
            fn decode_raw(raw: &[u8], _count: usize) -> Cow<'_, [Self]> {
                decode_pod(raw)
            }
            fn decode_typed<'t>($t: &'t TensorProto<'_>, _count: usize) -> Cow<'t, [Self]> {
                $decode
            }
            fn encode_raw(values: &[Self]) -> Vec<u8> {
                encode_pod(values)
            }
            fn encode_typed($values: &[Self], $out: &mut TensorProto<'_>) {
                $encode
            }
            const IN_PLACE: bool = cfg!(target_endian = "little");
            fn view_raw_mut(raw: &mut [u8]) -> Option<&mut [Self]> {
                if Self::IN_PLACE {
                    bytemuck::try_cast_slice_mut(raw).ok()
                } else {
                    None
                }
            }
        }
    };
}

/// Element types whose typed field holds exactly them: borrowed both ways.
macro_rules! native_field_element {
    ($T:ty, $dtype:ident, $field:ident) => {
        element!($T, $dtype,
            decode_typed: |t| Cow::Borrowed(&t.$field),
            encode_typed: |values, t| t.$field = values.to_vec());
    };
}

/// Element types stored one per `int32_data` entry, in its low bits.
macro_rules! int32_field_element {
    ($T:ty, $dtype:ident, from: |$v:ident| $from:expr, to: |$e:ident| $to:expr) => {
        element!($T, $dtype,
            decode_typed: |t| Cow::Owned(t.int32_data.iter().map(|&$v| $from).collect()),
            encode_typed: |values, t| t.int32_data = values.iter().map(|&$e| $to).collect());
    };
}

native_field_element!(f32, Float, float_data);
native_field_element!(f64, Double, double_data);
native_field_element!(i32, Int32, int32_data);
native_field_element!(i64, Int64, int64_data);
native_field_element!(u64, Uint64, uint64_data);

element!(u32, Uint32,
    decode_typed: |t| Cow::Owned(t.uint64_data.iter().map(|&v| v as u32).collect()),
    encode_typed: |values, t| t.uint64_data = values.iter().map(|&v| u64::from(v)).collect());

int32_field_element!(u8, Uint8, from: |v| v as u8, to: |v| i32::from(v));
int32_field_element!(i8, Int8, from: |v| v as i8, to: |v| i32::from(v));
int32_field_element!(u16, Uint16, from: |v| v as u16, to: |v| i32::from(v));
int32_field_element!(i16, Int16, from: |v| v as i16, to: |v| i32::from(v));
int32_field_element!(f16, Float16,
    from: |v| f16::from_bits(v as u16), to: |v| i32::from(v.to_bits()));
int32_field_element!(bf16, Bfloat16,
    from: |v| bf16::from_bits(v as u16), to: |v| i32::from(v.to_bits()));
int32_field_element!(Float8E4M3FN, Float8E4M3FN,
    from: |v| Float8E4M3FN::from_bits(v as u8), to: |v| i32::from(v.to_bits()));
int32_field_element!(Float8E4M3FNUZ, Float8E4M3FNUZ,
    from: |v| Float8E4M3FNUZ::from_bits(v as u8), to: |v| i32::from(v.to_bits()));
int32_field_element!(Float8E5M2, Float8E5M2,
    from: |v| Float8E5M2::from_bits(v as u8), to: |v| i32::from(v.to_bits()));
int32_field_element!(Float8E5M2FNUZ, Float8E5M2FNUZ,
    from: |v| Float8E5M2FNUZ::from_bits(v as u8), to: |v| i32::from(v.to_bits()));
int32_field_element!(Float8E8M0, Float8E8M0,
    from: |v| Float8E8M0::from_bits(v as u8), to: |v| i32::from(v.to_bits()));

element!(Complex32, Complex64,
    decode_typed: |t| decode_pairs(&t.float_data, Complex32::new),
    encode_typed: |values, t| t.float_data = values.iter().flat_map(|c| [c.re, c.im]).collect());
element!(Complex64, Complex128,
    decode_typed: |t| decode_pairs(&t.double_data, Complex64::new),
    encode_typed: |values, t| t.double_data = values.iter().flat_map(|c| [c.re, c.im]).collect());

impl TensorElement for bool {
    const DATA_TYPE: DataType = DataType::Bool;
}

impl Codec for bool {
    fn decode_raw(raw: &[u8], _count: usize) -> Cow<'_, [Self]> {
        // A view when every byte is 0 or 1 (the spec's encoding); any other byte is read
        // as true, like numpy.
        match bytemuck::checked::try_cast_slice::<u8, bool>(raw) {
            Ok(values) => Cow::Borrowed(values),
            Err(_) => Cow::Owned(raw.iter().map(|&b| b != 0).collect()),
        }
    }
    fn decode_typed<'t>(t: &'t TensorProto<'_>, _count: usize) -> Cow<'t, [Self]> {
        Cow::Owned(t.int32_data.iter().map(|&v| v as u8 != 0).collect())
    }
    fn encode_raw(values: &[Self]) -> Vec<u8> {
        values.iter().map(|&b| u8::from(b)).collect()
    }
    fn encode_typed(values: &[Self], t: &mut TensorProto<'_>) {
        t.int32_data = values.iter().map(|&b| i32::from(b)).collect();
    }
    const IN_PLACE: bool = true;
    fn view_raw_mut(raw: &mut [u8]) -> Option<&mut [Self]> {
        // Bytes other than 0 and 1 read as true; writing them as 1 keeps every value
        // and makes each byte a valid `bool`.
        for b in raw.iter_mut() {
            *b = u8::from(*b != 0);
        }
        bytemuck::checked::try_cast_slice_mut(raw).ok()
    }
}

/// Packed types: `raw_data` is one bit stream; in `int32_data` each entry holds one
/// packed byte, except for the 6-bit types, which hold one code per entry.
macro_rules! packed_element {
    ($($T:ty => $dtype:ident),*) => {$(
        impl TensorElement for $T {
            const DATA_TYPE: DataType = DataType::$dtype;
        }

        impl Codec for $T {
            fn decode_raw(raw: &[u8], count: usize) -> Cow<'_, [Self]> {
                Cow::Owned(unpack_codes(raw, count, Self::BITS).map(<$T>::from_bits).collect())
            }
            fn decode_typed<'t>(t: &'t TensorProto<'_>, count: usize) -> Cow<'t, [Self]> {
                let codes: Vec<u8> = t.int32_data.iter().map(|&v| v as u8).collect();
                if Self::BITS == 6 {
                    Cow::Owned(codes.into_iter().take(count).map(<$T>::from_bits).collect())
                } else {
                    let unpacked = unpack_codes(&codes, count, Self::BITS);
                    Cow::Owned(unpacked.map(<$T>::from_bits).collect())
                }
            }
            fn encode_raw(values: &[Self]) -> Vec<u8> {
                pack(values)
            }
            fn encode_typed(values: &[Self], t: &mut TensorProto<'_>) {
                t.int32_data = if Self::BITS == 6 {
                    values.iter().map(|v| i32::from(v.to_bits())).collect()
                } else {
                    pack(values).into_iter().map(i32::from).collect()
                };
            }
        }
    )*};
}

packed_element!(
    Int4 => Int4,
    Uint4 => Uint4,
    Int2 => Int2,
    Uint2 => Uint2,
    Float4E2M1 => Float4E2M1,
    Float6E2M3 => Float6E2M3,
    Float6E3M2 => Float6E3M2
);

/// Runs `$body` with `$T` bound to the element type of `$dtype`, or evaluates `$other`
/// for `UNDEFINED` and `STRING`.
macro_rules! with_element_type {
    ($dtype:expr, |$T:ident| $body:expr, else $other:expr) => {{
        use $crate::onnx::DataType as D;
        use $crate::tensor::*;
        match $dtype {
            D::Float => {
                type $T = f32;
                $body
            }
            D::Uint8 => {
                type $T = u8;
                $body
            }
            D::Int8 => {
                type $T = i8;
                $body
            }
            D::Uint16 => {
                type $T = u16;
                $body
            }
            D::Int16 => {
                type $T = i16;
                $body
            }
            D::Int32 => {
                type $T = i32;
                $body
            }
            D::Int64 => {
                type $T = i64;
                $body
            }
            D::Bool => {
                type $T = bool;
                $body
            }
            D::Float16 => {
                type $T = half::f16;
                $body
            }
            D::Double => {
                type $T = f64;
                $body
            }
            D::Uint32 => {
                type $T = u32;
                $body
            }
            D::Uint64 => {
                type $T = u64;
                $body
            }
            D::Complex64 => {
                type $T = Complex32;
                $body
            }
            D::Complex128 => {
                type $T = Complex64;
                $body
            }
            D::Bfloat16 => {
                type $T = half::bf16;
                $body
            }
            D::Float8E4M3FN => {
                type $T = Float8E4M3FN;
                $body
            }
            D::Float8E4M3FNUZ => {
                type $T = Float8E4M3FNUZ;
                $body
            }
            D::Float8E5M2 => {
                type $T = Float8E5M2;
                $body
            }
            D::Float8E5M2FNUZ => {
                type $T = Float8E5M2FNUZ;
                $body
            }
            D::Uint4 => {
                type $T = Uint4;
                $body
            }
            D::Int4 => {
                type $T = Int4;
                $body
            }
            D::Float4E2M1 => {
                type $T = Float4E2M1;
                $body
            }
            D::Float8E8M0 => {
                type $T = Float8E8M0;
                $body
            }
            D::Uint2 => {
                type $T = Uint2;
                $body
            }
            D::Int2 => {
                type $T = Int2;
                $body
            }
            D::Float6E2M3 => {
                type $T = Float6E2M3;
                $body
            }
            D::Float6E3M2 => {
                type $T = Float6E3M2;
                $body
            }
            D::Undefined | D::String => $other,
        }
    }};
}

pub(crate) use with_element_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_type_maps_back_to_its_data_type() {
        for dt in DataType::ALL {
            let mapped = with_element_type!(dt, |T| Some(T::DATA_TYPE), else None);
            match mapped {
                Some(m) => assert_eq!(m, dt),
                None => assert!(matches!(dt, DataType::Undefined | DataType::String)),
            }
        }
    }

    #[test]
    fn aligned_little_endian_bytes_are_viewed_unaligned_ones_copied() {
        let words = [1.5f32.to_bits(), (-2.0f32).to_bits(), 0];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let aligned = f32::decode_raw(&bytes[..8], 2);
        assert!(matches!(aligned, Cow::Borrowed(_)));
        assert_eq!(aligned.as_ptr().cast::<u8>(), bytes.as_ptr());
        assert_eq!(&*aligned, &[1.5, -2.0]);
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes[..8]);
        let copied = f32::decode_raw(&shifted[1..], 2);
        assert!(matches!(copied, Cow::Owned(_)));
        assert_eq!(&*copied, &[1.5, -2.0]);
    }

    #[test]
    fn bool_bytes_other_than_zero_and_one_are_copied_as_true() {
        assert!(matches!(bool::decode_raw(&[0, 1], 2), Cow::Borrowed(_)));
        let v = bool::decode_raw(&[0, 2], 2);
        assert!(matches!(v, Cow::Owned(_)));
        assert_eq!(&*v, &[false, true]);
    }
}
