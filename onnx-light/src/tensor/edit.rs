//! Editing a `TensorProto`'s values: in place where the payload is owned and aligned,
//! copy-on-write otherwise. Borrowed, Shared (e.g. memory-mapped) and lazy payloads are
//! copied into owned aligned storage first, so no other holder of those bytes ever sees
//! a change.

use std::any::{Any, TypeId};

use super::access::{fetch, mismatch, named, unsupported, Located};
use super::build::{aligned_payload, check_shape};
use super::dtype::TypedField;
use super::element::TensorElement;
use crate::error::{Error, Result};
use crate::field::{Bytes, ProtoEnum};
use crate::onnx::TensorProto;

/// Where the payload is, without a borrow of the tensor.
enum Place {
    Raw,
    Lazy,
    /// A typed field, and the (validated) element count.
    Typed(TypedField, usize),
}

impl<'a> TensorProto<'a> {
    /// The values as `&mut [T]` to edit in place; `T` must be the tensor's element type.
    ///
    /// Owned `raw_data` aligned for `T` is edited where it is. Borrowed or Shared
    /// `raw_data` and a lazy payload are first copied into owned aligned `raw_data`
    /// (copy-on-write: the input buffer or mapped file is never written). A typed field
    /// that holds `T` itself (`float_data` for `f32`, `int64_data` for `i64`, ...) is
    /// edited in place; values in a typed field of another type (`u8` in `int32_data`)
    /// move to `raw_data`. External-data metadata is left as it is, as
    /// [`io::materialize_lazy_data`](crate::io::materialize_lazy_data) leaves it. A
    /// `bool` payload with bytes other than 0 and 1 has them rewritten as 1 (they read
    /// as `true` either way).
    ///
    /// ```
    /// use onnx_light::onnx::TensorProto;
    ///
    /// let mut w = TensorProto::from_slice("w", [2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// for v in w.values_mut::<f32>()? {
    ///     *v *= 0.5;
    /// }
    /// assert_eq!(&*w.values::<f32>()?, &[0.5, 1.0, 1.5, 2.0]);
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::ElementTypeMismatch`](crate::ErrorKind::ElementTypeMismatch) when `T` is not the element type;
    /// [`ErrorKind::UnsupportedDataType`](crate::ErrorKind::UnsupportedDataType) for the packed types (`Int4`, `Float4E2M1`,
    /// ...; several values share a byte, so there is no `&mut [T]`: use
    /// [`set_values`](Self::set_values)) and, on a big-endian target, for every
    /// multi-byte type; otherwise the errors of [`values`](Self::values). All name the
    /// tensor, and the tensor is unchanged after an error.
    pub fn values_mut<T: TensorElement>(&mut self) -> Result<&mut [T]> {
        let place = self.editable::<T>().map_err(|e| named(e, self.name()))?;
        if let Place::Lazy = place {
            let bytes = match &self.lazy_data {
                Some(lazy) => fetch(lazy).map_err(|e| named(e, self.name()))?,
                None => Bytes::new(),
            };
            self.raw_data = Some(aligned_payload::<T>(bytes.into_vec()));
            self.lazy_data = None;
        }
        if let Place::Typed(field, count) = place {
            if holds_native::<T>(field) {
                return native_field::<T>(self, field).ok_or_else(no_view::<T>);
            }
            let raw = T::encode_raw(&T::decode_typed(self, count));
            self.replace_payload(aligned_payload::<T>(raw));
        }
        let raw = self.raw_data.get_or_insert_with(Bytes::new);
        let in_place = match raw {
            Bytes::Owned(o) => o.as_slice().as_ptr().align_offset(align_of::<T>()) == 0,
            Bytes::Borrowed(_) | Bytes::Shared(_) => false,
        };
        if !in_place {
            // Copy-on-write into storage aligned for `T`.
            *raw = aligned_payload::<T>(raw.as_slice().to_vec());
        }
        // Owned and aligned now, of the validated length, and `T::IN_PLACE` was checked,
        // so the view exists.
        T::view_raw_mut(raw.make_mut()).ok_or_else(no_view::<T>)
    }

    /// Replaces the values with `values` (a slice, array or vector of the tensor's
    /// element type, row-major), keeping `dims`: the payload becomes owned `raw_data`
    /// aligned for `T`, and the typed `*_data` fields and any lazy payload are cleared.
    /// External-data metadata is left as it is (saving writes the new bytes). To change
    /// the shape as well, use [`set_values_with_dims`](Self::set_values_with_dims).
    ///
    /// ```
    /// use onnx_light::onnx::TensorProto;
    ///
    /// let mut bias = TensorProto::from_slice("b", [3], &[0i64; 3])?;
    /// bias.set_values(vec![1i64, 2, 3])?;
    /// assert_eq!(&*bias.values::<i64>()?, &[1, 2, 3]);
    /// assert!(bias.set_values(&[1i64, 2]).is_err()); // dims say 3
    /// assert!(bias.set_values(&[1.0f32, 2.0, 3.0]).is_err()); // not INT64
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::ElementTypeMismatch`](crate::ErrorKind::ElementTypeMismatch) when `T` is not the element type (build a new
    /// tensor with [`from_slice`](Self::from_slice) to change it);
    /// [`ErrorKind::TensorDataMismatch`](crate::ErrorKind::TensorDataMismatch) when `dims` do not hold `values.len()` elements;
    /// [`ErrorKind::UnsupportedDataType`](crate::ErrorKind::UnsupportedDataType) for an `UNDEFINED` or unknown data type. All
    /// name the tensor, and the tensor is unchanged after an error.
    pub fn set_values<T: TensorElement>(&mut self, values: impl AsRef<[T]>) -> Result<()> {
        let values = values.as_ref();
        self.check_set::<T>(&self.dims, values.len())
            .map_err(|e| named(e, self.name()))?;
        self.replace_payload(aligned_payload::<T>(T::encode_raw(values)));
        Ok(())
    }

    /// As [`set_values`](Self::set_values), with a new shape `dims` (e.g. to grow a
    /// vocabulary); the element type stays the tensor's.
    ///
    /// # Errors
    /// As [`set_values`](Self::set_values), the element count checked against the new
    /// `dims`; [`ErrorKind::ValueOutOfRange`](crate::ErrorKind::ValueOutOfRange) for a negative dimension.
    pub fn set_values_with_dims<T: TensorElement>(
        &mut self,
        dims: impl Into<Vec<i64>>,
        values: impl AsRef<[T]>,
    ) -> Result<()> {
        let dims = dims.into();
        let values = values.as_ref();
        self.check_set::<T>(&dims, values.len())
            .map_err(|e| named(e, self.name()))?;
        self.dims = dims;
        self.replace_payload(aligned_payload::<T>(T::encode_raw(values)));
        Ok(())
    }

    /// Checks what `values_mut::<T>` needs before anything changes: the element type,
    /// a type with an in-place form, and a payload that matches the shape.
    fn editable<T: TensorElement>(&self) -> Result<Place> {
        let dtype = self.known_elem_type()?;
        if dtype != T::DATA_TYPE {
            return Err(mismatch(dtype, T::DATA_TYPE));
        }
        if !T::IN_PLACE {
            return Err(unsupported(dtype.to_i32()));
        }
        let (_, count, located) = self.validated()?;
        Ok(match located {
            Located::Raw(_) => Place::Raw,
            Located::Lazy(_) => Place::Lazy,
            Located::Typed(field) => Place::Typed(field, count),
        })
    }

    fn check_set<T: TensorElement>(&self, dims: &[i64], len: usize) -> Result<()> {
        let dtype = self.known_elem_type()?;
        if dtype != T::DATA_TYPE {
            return Err(mismatch(dtype, T::DATA_TYPE));
        }
        check_shape(dims, len)
    }

    /// Makes `raw` the only payload.
    fn replace_payload(&mut self, raw: Bytes<'static>) {
        self.raw_data = Some(raw);
        self.lazy_data = None;
        self.float_data = Vec::new();
        self.int32_data = Vec::new();
        self.string_data = Vec::new();
        self.int64_data = Vec::new();
        self.double_data = Vec::new();
        self.uint64_data = Vec::new();
    }
}

/// The error for a type with no mutable view; after the checks of `editable`, only a
/// broken invariant reaches it (an error rather than a panic).
fn no_view<T: TensorElement>() -> Error {
    unsupported(T::DATA_TYPE.to_i32())
}

/// True when the entries of the typed field `field` are exactly `T` (`float_data` for
/// `f32`, `int64_data` for `i64`, ...).
fn holds_native<T: TensorElement>(field: TypedField) -> bool {
    let native = match field {
        TypedField::FloatData => TypeId::of::<f32>(),
        TypedField::Int32Data => TypeId::of::<i32>(),
        TypedField::Int64Data => TypeId::of::<i64>(),
        TypedField::DoubleData => TypeId::of::<f64>(),
        TypedField::Uint64Data => TypeId::of::<u64>(),
        TypedField::StringData => return false,
    };
    native == TypeId::of::<T>()
}

/// The typed field `field` of `t` as `&mut [T]` when it holds `T` (found by type, not
/// by a cast).
fn native_field<'t, T: TensorElement>(
    t: &'t mut TensorProto<'_>,
    field: TypedField,
) -> Option<&'t mut [T]> {
    let any: &mut dyn Any = match field {
        TypedField::FloatData => &mut t.float_data,
        TypedField::Int32Data => &mut t.int32_data,
        TypedField::Int64Data => &mut t.int64_data,
        TypedField::DoubleData => &mut t.double_data,
        TypedField::Uint64Data => &mut t.uint64_data,
        TypedField::StringData => return None,
    };
    any.downcast_mut::<Vec<T>>().map(Vec::as_mut_slice)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::error::ErrorKind;
    use crate::field::{ByteOwner, LazyPayload, PayloadSource};
    use crate::onnx::DataType;
    use crate::tensor::Int4;
    use crate::{Decode, Message};

    fn i4(v: i8) -> Int4 {
        Int4::new(v).unwrap()
    }

    fn le(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn owned_aligned_raw_data_is_edited_where_it_is() {
        let mut t = TensorProto::from_slice("w", [3], &[1.0f32, 2.0, 3.0]).unwrap();
        let before = t.raw_data.as_ref().unwrap().as_ptr();
        t.values_mut::<f32>().unwrap()[1] = 20.0;
        assert_eq!(t.raw_data.as_ref().unwrap().as_ptr(), before);
        assert_eq!(&*t.values::<f32>().unwrap(), &[1.0, 20.0, 3.0]);
    }

    #[test]
    fn borrowed_raw_data_is_copied_never_written() {
        // Odd offset: the borrowed payload is misaligned for f32 as well.
        let mut buffer = vec![0xAAu8];
        buffer.extend(le(&[1.0, 2.0]));
        let original = buffer.clone();
        let mut t = TensorProto::from_raw("w", DataType::Float, [2], &buffer[1..]);
        assert!(t.raw_data.as_ref().unwrap().is_borrowed());
        t.values_mut::<f32>().unwrap()[0] = 5.0;
        assert!(t.raw_data.as_ref().unwrap().is_owned());
        assert_eq!(&*t.values::<f32>().unwrap(), &[5.0, 2.0]);
        assert_eq!(buffer, original);

        // The same through a borrow-mode decode.
        let bytes = TensorProto::from_slice("w", [2], &[1.0f32, 2.0])
            .unwrap()
            .encode_to_vec()
            .unwrap();
        let copy = bytes.clone();
        let mut view = TensorProto::decode(&bytes).unwrap();
        view.values_mut::<f32>().unwrap()[1] = 7.0;
        assert_eq!(&*view.values::<f32>().unwrap(), &[1.0, 7.0]);
        assert_eq!(bytes, copy);
    }

    #[test]
    fn shared_raw_data_is_copied_never_written() {
        let owner: ByteOwner = Arc::new(le(&[1.0, 2.0]));
        let mut t = TensorProto::from_raw(
            "w",
            DataType::Float,
            [2],
            Bytes::shared(owner.clone(), 0..8).unwrap(),
        );
        t.values_mut::<f32>().unwrap()[0] = 9.0;
        assert_eq!(owner.bytes(), le(&[1.0, 2.0]).as_slice());
        assert_eq!(&*t.values::<f32>().unwrap(), &[9.0, 2.0]);
    }

    struct Source(ByteOwner);

    impl PayloadSource for Source {
        fn fetch(&self, offset: u64, len: u64) -> Result<Bytes<'static>> {
            Bytes::shared(self.0.clone(), offset as usize..(offset + len) as usize)
        }
        fn describe(&self) -> String {
            "test source".into()
        }
    }

    #[test]
    fn lazy_payload_is_fetched_into_owned_raw_data() {
        let owner: ByteOwner = Arc::new(le(&[0.0, 1.0, 2.0]));
        let mut t = TensorProto {
            name: Some("w".into()),
            data_type: Some(DataType::Float.to_i32()),
            dims: vec![2],
            lazy_data: Some(LazyPayload::new(Arc::new(Source(owner.clone())), 4, 8)),
            ..TensorProto::default()
        };
        t.values_mut::<f32>().unwrap()[1] = 4.0;
        assert!(t.lazy_data.is_none());
        assert!(t.raw_data.as_ref().unwrap().is_owned());
        assert_eq!(&*t.values::<f32>().unwrap(), &[1.0, 4.0]);
        assert_eq!(owner.bytes(), le(&[0.0, 1.0, 2.0]).as_slice());
    }

    #[test]
    fn typed_fields_are_edited_in_place_or_moved_to_raw_data() {
        let mut t = TensorProto::from_slice_typed("w", [2], &[1.0f32, 2.0]).unwrap();
        t.values_mut::<f32>().unwrap()[0] = 3.0;
        assert_eq!(t.float_data, [3.0, 2.0]);
        assert!(t.raw_data.is_none());

        let mut t = TensorProto::from_slice_typed("q", [3], &[1u8, 2, 3]).unwrap();
        t.values_mut::<u8>().unwrap()[2] = 30;
        assert!(t.int32_data.is_empty());
        assert_eq!(t.raw_data.as_deref(), Some(&[1u8, 2, 30][..]));
    }

    #[test]
    fn bool_bytes_other_than_one_become_one() {
        let mut t = TensorProto::from_raw("b", DataType::Bool, [3], vec![0u8, 2, 1]);
        let values = t.values_mut::<bool>().unwrap();
        assert_eq!(values, [false, true, true]);
        values[0] = true;
        assert_eq!(t.raw_data.as_deref(), Some(&[1u8, 1, 1][..]));
    }

    #[test]
    fn refused_edits_leave_the_tensor_unchanged() {
        let buffer = le(&[1.0, 2.0]);
        let mut t = TensorProto::from_raw("w", DataType::Float, [2], &buffer[..]);
        let before = t.clone();
        let e = t.values_mut::<i32>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::ElementTypeMismatch { .. }));
        assert_eq!(e.tensor(), Some("w"));
        let e = t.set_values([1.0f32]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::TensorDataMismatch { .. }));
        assert!(t.set_values_with_dims([-1], [0f32; 0]).is_err());
        t.dims = vec![3]; // payload too short for the shape
        let e = t.values_mut::<f32>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::TensorDataMismatch { .. }));
        t.dims = vec![2];
        assert_eq!(t, before);
        assert!(t.raw_data.as_ref().unwrap().is_borrowed());

        let mut packed = TensorProto::from_slice("p", [2], &[i4(1), i4(-2)]).unwrap();
        let e = packed.values_mut::<Int4>().unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDataType { .. }));
    }

    #[test]
    fn set_values_replaces_every_payload_field() {
        let mut t = TensorProto::from_slice_typed("w", [2], &[1i64, 2]).unwrap();
        t.set_values([3i64, 4]).unwrap();
        assert!(t.int64_data.is_empty());
        assert_eq!(&*t.values::<i64>().unwrap(), &[3, 4]);
        assert_eq!(t.data_source().unwrap(), crate::tensor::DataSource::RawData);

        t.set_values_with_dims([2, 2], vec![1i64, 2, 3, 4]).unwrap();
        assert_eq!(t.dims, [2, 2]);
        assert_eq!(&*t.values::<i64>().unwrap(), &[1, 2, 3, 4]);
        // Packed types have no `&mut [T]` but can be replaced.
        let mut p = TensorProto::from_slice("p", [3], &[i4(1); 3]).unwrap();
        p.set_values([i4(-1), i4(0), i4(7)]).unwrap();
        assert_eq!(&*p.values::<Int4>().unwrap(), &[i4(-1), i4(0), i4(7)]);
    }
}
