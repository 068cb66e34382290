//! Building a `TensorProto` from Rust values: the data type comes from the element type,
//! the shape is checked against the number of values, and the values go to `raw_data`
//! (the compact form every ONNX reader accepts) or, on request, to the typed field.

use super::element::TensorElement;
use crate::error::{Error, ErrorKind, Result};
use crate::field::{Bytes, ProtoEnum, Str};
use crate::onnx::{DataType, TensorProto};

/// Checks that `dims` are non-negative and hold exactly `len` elements.
pub(super) fn check_shape(dims: &[i64], len: usize) -> Result<()> {
    let mut n = 1u64;
    for &d in dims {
        let d = u64::try_from(d).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "negative tensor dimension",
            })
        })?;
        n = n.checked_mul(d).ok_or_else(|| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "tensor element count overflows u64",
            })
        })?;
    }
    if n == len as u64 {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::TensorDataMismatch {
            field: "values",
            expected: n,
            actual: len as u64,
        }))
    }
}

/// `bytes` as an owned payload whose start is aligned for `T`, so that reading the
/// tensor back views it without copying. The global allocator practically always
/// returns such storage; otherwise it is copied once into aligned storage.
pub(super) fn aligned_payload<T>(bytes: Vec<u8>) -> Bytes<'static> {
    let align = align_of::<T>();
    if bytes.as_ptr().align_offset(align) == 0 {
        Bytes::from(bytes)
    } else {
        // `align` is a power of two, so this cannot fail.
        Bytes::aligned(&bytes, align).unwrap_or_else(|_| Bytes::from(bytes))
    }
}

impl<'a> TensorProto<'a> {
    fn with_shape(name: Str<'a>, dtype: DataType, dims: Vec<i64>, len: usize) -> Result<Self> {
        check_shape(&dims, len).map_err(|e| e.in_tensor(&name))?;
        Ok(TensorProto {
            name: Some(name),
            data_type: Some(dtype.to_i32()),
            dims,
            ..TensorProto::default()
        })
    }

    /// A tensor of shape `dims` holding `values` (row-major) in `raw_data`; the data
    /// type is `T`'s.
    ///
    /// # Errors
    /// [`ErrorKind::TensorDataMismatch`] when `dims` do not hold `values.len()` elements,
    /// [`ErrorKind::ValueOutOfRange`] for a negative dimension; both name the tensor.
    pub fn from_slice<T: TensorElement>(
        name: impl Into<Str<'a>>,
        dims: impl Into<Vec<i64>>,
        values: &[T],
    ) -> Result<Self> {
        let mut t = Self::with_shape(name.into(), T::DATA_TYPE, dims.into(), values.len())?;
        t.raw_data = Some(aligned_payload::<T>(T::encode_raw(values)));
        Ok(t)
    }

    /// As [`from_slice`](Self::from_slice), taking a vector.
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_vec<T: TensorElement>(
        name: impl Into<Str<'a>>,
        dims: impl Into<Vec<i64>>,
        values: Vec<T>,
    ) -> Result<Self> {
        Self::from_slice(name, dims, &values)
    }

    /// As [`from_slice`](Self::from_slice), collecting `values` first.
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_elements<T: TensorElement>(
        name: impl Into<Str<'a>>,
        dims: impl Into<Vec<i64>>,
        values: impl IntoIterator<Item = T>,
    ) -> Result<Self> {
        let values: Vec<T> = values.into_iter().collect();
        Self::from_slice(name, dims, &values)
    }

    /// A tensor holding `values` in the typed field for `T` (`float_data`, `int32_data`,
    /// ...) instead of `raw_data`, as `onnx.helper.make_tensor(..., raw=False)` writes.
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_slice_typed<T: TensorElement>(
        name: impl Into<Str<'a>>,
        dims: impl Into<Vec<i64>>,
        values: &[T],
    ) -> Result<Self> {
        let mut t = Self::with_shape(name.into(), T::DATA_TYPE, dims.into(), values.len())?;
        T::encode_typed(values, &mut t);
        Ok(t)
    }

    /// A tensor whose `raw_data` is `raw` (little-endian, packed for types narrower than a
    /// byte), after checking its length against `dims` and `data_type`. `raw` keeps its
    /// state: a borrowed slice stays borrowed.
    ///
    /// # Errors
    /// [`ErrorKind::TensorDataMismatch`] for a length that does not match;
    /// [`ErrorKind::UnsupportedDataType`] for `UNDEFINED` and `STRING` (strings have no
    /// raw form: use [`from_strings`](Self::from_strings)). All name the tensor.
    pub fn try_from_raw(
        name: impl Into<Str<'a>>,
        data_type: DataType,
        dims: impl Into<Vec<i64>>,
        raw: impl Into<Bytes<'a>>,
    ) -> Result<Self> {
        let t = TensorProto::from_raw(name, data_type, dims, raw);
        if data_type == DataType::String {
            return Err(super::access::unsupported(data_type.to_i32()).in_tensor(t.name()));
        }
        t.validate_data()?;
        Ok(t)
    }

    /// A `STRING` tensor of shape `dims` holding copies of `strings` (`&str`, `String`,
    /// `&[u8]`, ...; UTF-8 by the spec, not checked).
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_strings<S: AsRef<[u8]>>(
        name: impl Into<Str<'a>>,
        dims: impl Into<Vec<i64>>,
        strings: impl IntoIterator<Item = S>,
    ) -> Result<Self> {
        let strings: Vec<Bytes<'a>> = strings
            .into_iter()
            .map(|s| Bytes::from(s.as_ref().to_vec()))
            .collect();
        let mut t = Self::with_shape(name.into(), DataType::String, dims.into(), strings.len())?;
        t.string_data = strings;
        Ok(t)
    }
}
