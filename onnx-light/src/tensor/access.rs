//! Reading a `TensorProto`: one interface over every place its values can be —
//! `raw_data` (Borrowed, Owned or Shared), the typed fields, and a lazy payload left in
//! its source (`lazy_data`, e.g. a mapped external file).
//!
//! Every read validates the payload against the shape and data type first (packed
//! types rounded up to whole bytes), so a short or long payload is an error naming the
//! tensor, never a short read; sizes are checked before anything is allocated.

use std::borrow::Cow;

use super::dtype::TypedField;
use super::element::{sealed::Codec, with_element_type, TensorElement};
use crate::error::{Error, ErrorKind, Result};
use crate::field::{Bytes, LazyPayload, ProtoEnum};
use crate::onnx::{DataType, TensorProto};

/// Where a tensor's values are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataSource {
    /// `raw_data`: little-endian bytes, borrowed, owned or shared.
    RawData,
    /// The typed field for the data type (`float_data`, `int32_data`, ...).
    TypedField(TypedField),
    /// A payload left in its source (`lazy_data`), read or mapped on access.
    Lazy,
}

/// A tensor's values as little-endian bytes (`raw_data` layout), resolved from wherever
/// the tensor holds them, together with their data type and element count.
///
/// The bytes are borrowed from `raw_data`, encoded from a typed field, or fetched from a
/// lazy payload (a mapped file stays mapped: [`TensorData::bytes`] is then `Shared`).
/// [`TensorData::values`] views them as `&[T]` when alignment and byte order allow.
#[derive(Debug, Clone)]
pub struct TensorData<'t> {
    name: &'t str,
    shape: &'t [i64],
    dtype: DataType,
    count: usize,
    source: DataSource,
    bytes: Bytes<'t>,
}

impl<'t> TensorData<'t> {
    /// The element type.
    pub fn elem_type(&self) -> DataType {
        self.dtype
    }

    /// The element type; the same as [`elem_type`](Self::elem_type).
    #[deprecated(
        since = "0.1.0",
        note = "use `elem_type()`, the name every message uses"
    )]
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The shape of the tensor the data belongs to.
    pub fn shape(&self) -> &'t [i64] {
        self.shape
    }

    /// The number of elements.
    pub fn element_count(&self) -> usize {
        self.count
    }

    /// Where the bytes came from.
    pub fn source(&self) -> DataSource {
        self.source
    }

    /// The little-endian bytes (packed for types narrower than a byte).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes in their ownership state: Borrowed from `raw_data`, Owned when encoded
    /// from a typed field or read from a file, Shared when mapped.
    pub fn bytes(&self) -> &Bytes<'t> {
        &self.bytes
    }

    /// The bytes, keeping their ownership state.
    pub fn into_bytes(self) -> Bytes<'t> {
        self.bytes
    }

    /// The values as `T`: borrowed when the bytes are aligned for `T` and the target is
    /// little-endian, an owned copy otherwise.
    ///
    /// # Errors
    /// [`ErrorKind::ElementTypeMismatch`] when `T` is not the tensor's element type.
    pub fn values<T: TensorElement>(&self) -> Result<Cow<'_, [T]>> {
        if T::DATA_TYPE != self.dtype {
            return Err(named(mismatch(self.dtype, T::DATA_TYPE), self.name));
        }
        Ok(T::decode_raw(&self.bytes, self.count))
    }
}

/// Where [`TensorProto::locate`] found the values.
pub(super) enum Located<'t> {
    Raw(&'t [u8]),
    Lazy(&'t LazyPayload),
    Typed(TypedField),
}

pub(super) fn named(e: Error, name: &str) -> Error {
    if name.is_empty() {
        e
    } else {
        e.in_tensor(name)
    }
}

pub(super) fn mismatch(data_type: DataType, requested: DataType) -> Error {
    Error::new(ErrorKind::ElementTypeMismatch {
        data_type: data_type.onnx_name(),
        requested: requested.onnx_name(),
    })
}

/// The error for a data type with no typed form, or one ONNX does not define.
pub(super) fn unsupported(data_type: i32) -> Error {
    Error::new(ErrorKind::UnsupportedDataType {
        data_type,
        name: DataType::from_i32(data_type).map(DataType::onnx_name),
    })
}

fn check_len(field: &'static str, expected: u64, actual: u64) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::TensorDataMismatch {
            field,
            expected,
            actual,
        }))
    }
}

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| {
        Error::new(ErrorKind::ValueOutOfRange {
            what: "tensor element count exceeds the address space",
        })
    })
}

impl<'a> TensorProto<'a> {
    /// The element type as an error when it is `UNDEFINED` or unknown: use
    /// [`elem_type`](Self::elem_type) (`Option<DataType>`), the accessor every message
    /// has.
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDataType`] for `UNDEFINED` or a value this library does
    /// not know (such tensors still parse and serialize unchanged).
    #[deprecated(
        since = "0.1.0",
        note = "use `elem_type()` (`Option<DataType>`), the name every message uses"
    )]
    pub fn dtype(&self) -> Result<DataType> {
        self.known_elem_type()
    }

    /// The element type, or [`ErrorKind::UnsupportedDataType`] naming the tensor when it
    /// is `UNDEFINED` or unknown: what every typed access needs first.
    pub(crate) fn known_elem_type(&self) -> Result<DataType> {
        let raw = self.data_type();
        match DataType::from_i32(raw) {
            Some(DataType::Undefined) | None => Err(named(unsupported(raw), self.name())),
            Some(dt) => Ok(dt),
        }
    }

    /// The shape (`dims`); empty for a scalar.
    pub fn shape(&self) -> &[i64] {
        &self.dims
    }

    /// Bytes of the values in `raw_data` layout (packed types rounded up); for strings,
    /// the total length of the strings.
    ///
    /// # Errors
    /// As [`dtype`](Self::dtype); [`ErrorKind::ValueOutOfRange`] for a negative dimension
    /// or a size over `u64`.
    pub fn byte_size(&self) -> Result<u64> {
        let dtype = self.known_elem_type()?;
        if dtype == DataType::String {
            return Ok(self.string_data.iter().map(|s| s.len() as u64).sum());
        }
        let count = self.checked_element_count()?;
        dtype.byte_size(count).ok_or_else(|| {
            named(
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "tensor byte size overflows u64",
                }),
                self.name(),
            )
        })
    }

    /// [`element_count`](Self::element_count), or an error naming the tensor.
    fn checked_element_count(&self) -> Result<u64> {
        self.element_count().ok_or_else(|| {
            named(
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "tensor element count (a negative dimension, or over u64)",
                }),
                self.name(),
            )
        })
    }

    /// The `metadata_props` entries as `(key, value)` pairs.
    pub fn metadata(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.metadata_props.iter().map(|e| (e.key(), e.value()))
    }

    /// Where the values are held: `raw_data` if set, else a lazy payload, else the typed
    /// field for the data type.
    ///
    /// # Errors
    /// As [`dtype`](Self::dtype); [`ErrorKind::ExternalDataNotLoaded`] for external data
    /// that was neither loaded nor left lazy.
    pub fn data_source(&self) -> Result<DataSource> {
        let dtype = self.known_elem_type()?;
        Ok(
            match self.locate(dtype).map_err(|e| named(e, self.name()))? {
                Located::Raw(_) => DataSource::RawData,
                Located::Lazy(_) => DataSource::Lazy,
                Located::Typed(f) => DataSource::TypedField(f),
            },
        )
    }

    fn locate(&self, dtype: DataType) -> Result<Located<'_>> {
        if dtype == DataType::String {
            return Ok(Located::Typed(TypedField::StringData));
        }
        if let Some(raw) = &self.raw_data {
            return Ok(Located::Raw(raw));
        }
        if let Some(lazy) = &self.lazy_data {
            return Ok(Located::Lazy(lazy));
        }
        if self.is_external() {
            return Err(Error::new(ErrorKind::ExternalDataNotLoaded {
                location: self
                    .external_data_value("location")
                    .unwrap_or("")
                    .to_string(),
            }));
        }
        // `typed_field` is `None` only for UNDEFINED, which `known_elem_type()` rejected.
        Ok(Located::Typed(
            dtype.typed_field().unwrap_or(TypedField::Int32Data),
        ))
    }

    fn typed_entries(&self, field: TypedField) -> usize {
        match field {
            TypedField::FloatData => self.float_data.len(),
            TypedField::Int32Data => self.int32_data.len(),
            TypedField::StringData => self.string_data.len(),
            TypedField::Int64Data => self.int64_data.len(),
            TypedField::DoubleData => self.double_data.len(),
            TypedField::Uint64Data => self.uint64_data.len(),
        }
    }

    /// Checks that the payload matches the shape and data type, without reading a lazy
    /// payload (its recorded length is checked).
    ///
    /// # Errors
    /// [`ErrorKind::TensorDataMismatch`] naming the field, the expected and the actual
    /// length; the errors of [`data_source`](Self::data_source);
    /// [`ErrorKind::ValueOutOfRange`] for a negative dimension or an element count over
    /// `u64`. All name the tensor.
    pub fn validate_data(&self) -> Result<()> {
        self.validated()
            .map(|_| ())
            .map_err(|e| named(e, self.name()))
    }

    /// Data type, element count and location, after checking the payload length.
    pub(super) fn validated(&self) -> Result<(DataType, usize, Located<'_>)> {
        let dtype = self.known_elem_type()?;
        let count = self.checked_element_count()?;
        let located = self.locate(dtype)?;
        let bytes = || {
            dtype.byte_size(count).ok_or_else(|| {
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "tensor byte size overflows u64",
                })
            })
        };
        match &located {
            Located::Raw(raw) => check_len("raw_data", bytes()?, raw.len() as u64)?,
            Located::Lazy(lazy) => check_len("external data", bytes()?, lazy.len())?,
            Located::Typed(field) => {
                let expected = dtype.typed_len(count).ok_or_else(|| {
                    Error::new(ErrorKind::ValueOutOfRange {
                        what: "tensor element count overflows u64",
                    })
                })?;
                check_len(field.name(), expected, self.typed_entries(*field) as u64)?;
            }
        }
        // The payload is in memory (or its length was checked), so the count fits.
        Ok((dtype, to_usize(count)?, located))
    }

    /// The values as `T`, which must be the tensor's element type: borrowed from
    /// `raw_data` when it is aligned for `T` and the target is little-endian, borrowed
    /// from a typed field that holds `T` itself (`float_data` for `f32`, ...), an owned
    /// copy otherwise. A lazy payload is fetched and copied; use [`data`](Self::data)
    /// to keep a mapped payload zero-copy.
    ///
    /// # Errors
    /// [`ErrorKind::ElementTypeMismatch`] when `T` is not the element type;
    /// [`ErrorKind::TensorDataMismatch`] when the payload does not match the shape; the
    /// errors of [`validate_data`](Self::validate_data) and of fetching a lazy payload.
    /// All name the tensor.
    pub fn values<T: TensorElement>(&self) -> Result<Cow<'_, [T]>> {
        self.values_unnamed().map_err(|e| named(e, self.name()))
    }

    fn values_unnamed<T: TensorElement>(&self) -> Result<Cow<'_, [T]>> {
        let dtype = self.known_elem_type()?;
        if dtype != T::DATA_TYPE {
            return Err(mismatch(dtype, T::DATA_TYPE));
        }
        let (_, count, located) = self.validated()?;
        Ok(match located {
            Located::Raw(raw) => T::decode_raw(raw, count),
            Located::Lazy(lazy) => {
                let bytes = fetch(lazy)?;
                Cow::Owned(T::decode_raw(&bytes, count).into_owned())
            }
            Located::Typed(_) => T::decode_typed(self, count),
        })
    }

    /// The values as little-endian bytes in `raw_data` layout: borrowed from `raw_data`,
    /// encoded from a typed field, or fetched (and copied) from a lazy payload.
    ///
    /// # Errors
    /// As [`data`](Self::data).
    pub fn raw_bytes(&self) -> Result<Cow<'_, [u8]>> {
        Ok(match self.data()?.into_bytes() {
            Bytes::Borrowed(b) => Cow::Borrowed(b),
            other => Cow::Owned(other.into_vec()),
        })
    }

    /// The values as [`TensorData`]: little-endian bytes with their type and count. A
    /// lazy payload is fetched here, and a mapped one stays mapped (no copy).
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDataType`] for `STRING` (use [`strings`](Self::strings))
    /// and for unknown types; otherwise as [`values`](Self::values).
    pub fn data(&self) -> Result<TensorData<'_>> {
        self.data_unnamed().map_err(|e| named(e, self.name()))
    }

    fn data_unnamed(&self) -> Result<TensorData<'_>> {
        let (dtype, count, located) = self.validated()?;
        let (source, bytes) = match located {
            Located::Raw(raw) => (DataSource::RawData, Bytes::Borrowed(raw)),
            Located::Lazy(lazy) => (DataSource::Lazy, fetch(lazy)?),
            Located::Typed(field) => {
                let encoded = with_element_type!(
                    dtype,
                    |T| T::encode_raw(&T::decode_typed(self, count)),
                    else return Err(unsupported(dtype.to_i32()))
                );
                (DataSource::TypedField(field), Bytes::from(encoded))
            }
        };
        Ok(TensorData {
            name: self.name(),
            shape: &self.dims,
            dtype,
            count,
            source,
            bytes,
        })
    }

    /// The strings of a `STRING` tensor (`string_data`), as stored: bytes, which the spec
    /// says are UTF-8 but which are not checked.
    ///
    /// # Errors
    /// [`ErrorKind::ElementTypeMismatch`] for a tensor of another type;
    /// [`ErrorKind::TensorDataMismatch`] when the count does not match the shape.
    pub fn strings(&self) -> Result<&[Bytes<'a>]> {
        let check = || {
            let dtype = self.known_elem_type()?;
            if dtype != DataType::String {
                return Err(mismatch(dtype, DataType::String));
            }
            self.validated()?;
            Ok(())
        };
        check().map_err(|e| named(e, self.name()))?;
        Ok(&self.string_data)
    }
}

/// The lazy payload's bytes, checked against its recorded length (a source that changed
/// since must not cause a short read).
pub(super) fn fetch(lazy: &LazyPayload) -> Result<Bytes<'static>> {
    let bytes = lazy.fetch()?;
    check_len("external data", lazy.len(), bytes.len() as u64)?;
    Ok(bytes)
}
