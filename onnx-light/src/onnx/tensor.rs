//! `TensorProto`, `SparseTensorProto` and their enums: the messages that carry weights.

use std::fmt;

use crate::field::{Bytes, EnumValue, LazyPayload, Str, UnknownFields};
use crate::{ProtoEnum, ProtoMessage};

use super::StringStringEntryProto;

/// Element types of tensors (`TensorProto.DataType`).
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.TensorProto.DataType")]
pub enum DataType {
    Undefined = 0,
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Uint16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    Uint32 = 12,
    Uint64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    Bfloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    Uint4 = 21,
    Int4 = 22,
    Float4E2M1 = 23,
    Float8E8M0 = 24,
    Uint2 = 25,
    Int2 = 26,
    Float6E2M3 = 27,
    Float6E3M2 = 28,
}

impl DataType {
    /// Bits per element in `raw_data`; `None` for `UNDEFINED` and `STRING`, which have
    /// no fixed width. Types narrower than a byte are packed (see [`crate::tensor`]).
    pub const fn bit_width(self) -> Option<u32> {
        use DataType::*;
        Some(match self {
            Undefined | String => return None,
            Uint2 | Int2 => 2,
            Uint4 | Int4 | Float4E2M1 => 4,
            Float6E2M3 | Float6E3M2 => 6,
            Uint8 | Int8 | Bool | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ
            | Float8E8M0 => 8,
            Uint16 | Int16 | Float16 | Bfloat16 => 16,
            Float | Int32 | Uint32 => 32,
            Double | Int64 | Uint64 | Complex64 => 64,
            Complex128 => 128,
        })
    }
}

impl DataType {
    /// The name in ONNX text notation, as `onnx.printer` writes it: `float`, `int64`,
    /// `bfloat16`, `float8e4m3fn`, ... (the protobuf name in lower case).
    const fn text_name(self) -> &'static str {
        use DataType::*;
        match self {
            Undefined => "undefined",
            Float => "float",
            Uint8 => "uint8",
            Int8 => "int8",
            Uint16 => "uint16",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            String => "string",
            Bool => "bool",
            Float16 => "float16",
            Double => "double",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Bfloat16 => "bfloat16",
            Float8E4M3FN => "float8e4m3fn",
            Float8E4M3FNUZ => "float8e4m3fnuz",
            Float8E5M2 => "float8e5m2",
            Float8E5M2FNUZ => "float8e5m2fnuz",
            Uint4 => "uint4",
            Int4 => "int4",
            Float4E2M1 => "float4e2m1",
            Float8E8M0 => "float8e8m0",
            Uint2 => "uint2",
            Int2 => "int2",
            Float6E2M3 => "float6e2m3",
            Float6E3M2 => "float6e3m2",
        }
    }
}

/// The name in ONNX text notation, as `onnx.printer` writes it: `float`, `int64`,
/// `bfloat16`, `float8e4m3fn`, ... ([`DataType::onnx_name`] is the protobuf name,
/// `FLOAT`).
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.text_name())
    }
}

/// Where a tensor's data is: in the message, or in an external file.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx.TensorProto.DataLocation")]
pub enum DataLocation {
    Default = 0,
    External = 1,
}

/// A segment of a tensor that was split into chunks (`TensorProto.Segment`).
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.TensorProto.Segment")]
pub struct Segment<'a> {
    #[proto(1)]
    pub begin: Option<i64>,
    #[proto(2)]
    pub end: Option<i64>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A tensor: shape, element type, and its data in one of several fields (`raw_data`,
/// the typed `*_data` fields, or external data described by `external_data`).
///
/// `Debug` summarises the data fields (length and a few leading values) and never
/// prints the weights.
#[derive(ProtoMessage, Default, Clone, PartialEq)]
#[proto(
    name = "onnx.TensorProto",
    encode_check = "TensorProto::check_encodable"
)]
pub struct TensorProto<'a> {
    #[proto(1)]
    pub dims: Vec<i64>,
    /// A [`DataType`] value (declared `int32` in the schema).
    #[proto(2)]
    pub data_type: Option<i32>,
    #[proto(3)]
    pub segment: Option<Segment<'a>>,
    #[proto(4, packed)]
    pub float_data: Vec<f32>,
    #[proto(5, packed)]
    pub int32_data: Vec<i32>,
    #[proto(6)]
    pub string_data: Vec<Bytes<'a>>,
    #[proto(7, packed)]
    pub int64_data: Vec<i64>,
    #[proto(8)]
    pub name: Option<Str<'a>>,
    #[proto(9)]
    pub raw_data: Option<Bytes<'a>>,
    #[proto(10, packed)]
    pub double_data: Vec<f64>,
    #[proto(11, packed)]
    pub uint64_data: Vec<u64>,
    #[proto(12)]
    pub doc_string: Option<Str<'a>>,
    #[proto(13)]
    pub external_data: Vec<StringStringEntryProto<'a>>,
    #[proto(14)]
    pub data_location: Option<EnumValue<DataLocation>>,
    #[proto(16)]
    pub metadata_props: Vec<StringStringEntryProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
    /// Weights not loaded yet (structure-only and lazy loads): where the `raw_data`
    /// bytes are. `raw_data` is unset while this is set. Not part of the ONNX schema and
    /// never serialized; saving such a tensor fetches the bytes or fails, never writes a
    /// tensor without its weights.
    #[proto(skip)]
    pub lazy_data: Option<LazyPayload>,
}

impl<'a> TensorProto<'a> {
    /// A tensor whose data is `raw_data` (little-endian element bytes).
    pub fn from_raw(
        name: impl Into<Str<'a>>,
        data_type: DataType,
        dims: impl Into<Vec<i64>>,
        raw_data: impl Into<Bytes<'a>>,
    ) -> Self {
        TensorProto {
            name: Some(name.into()),
            data_type: Some(data_type.to_i32()),
            dims: dims.into(),
            raw_data: Some(raw_data.into()),
            ..TensorProto::default()
        }
    }

    /// Refuses to encode a tensor whose weights a structure-only load left on disk: the
    /// encoding would silently lack them. Saves (`io::save`) copy them from their file
    /// instead; `io::materialize_lazy_data` reads them into memory.
    fn check_encodable(&self) -> crate::Result<()> {
        match (&self.raw_data, &self.lazy_data) {
            (None, Some(lazy)) => Err(crate::Error::new(crate::ErrorKind::IncompleteModel {
                reason: format!(
                    "its weights are still in {} (structure-only load); save it with \
                     io::save, or call io::materialize_lazy_data first",
                    lazy.source()
                ),
            })
            .in_tensor(self.name())),
            _ => Ok(()),
        }
    }

    /// The element type, if `data_type` holds a value this schema knows (unset reads as
    /// `Some(Undefined)`, the protobuf default); the raw number is
    /// [`elem_type_raw`](Self::elem_type_raw).
    pub fn elem_type(&self) -> Option<DataType> {
        DataType::from_i32(self.data_type())
    }

    /// The `data_type` number as stored (0 when unset), the same as
    /// [`data_type`](Self::data_type); named like the other messages' raw accessors.
    pub fn elem_type_raw(&self) -> i32 {
        self.data_type()
    }

    /// True when the data lives in an external file.
    pub fn is_external(&self) -> bool {
        self.data_location() == DataLocation::External
    }

    /// The value of the `external_data` entry with this key.
    pub fn external_data_value(&self, key: &str) -> Option<&str> {
        self.external_data
            .iter()
            .find(|e| e.key() == key)
            .map(|e| e.value())
    }

    /// Number of elements the dims describe (1 for a scalar), or `None` when a dim is
    /// negative or the product overflows.
    pub fn element_count(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| {
            u64::try_from(d).ok().and_then(|d| n.checked_mul(d))
        })
    }

    /// The byte length the dims and data type require of `raw_data` (sub-byte types
    /// rounded up to whole bytes), when both are known and fixed-size.
    pub fn expected_raw_len(&self) -> Option<u64> {
        let bits = u64::from(self.elem_type()?.bit_width()?);
        self.element_count()?
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
    }

    /// Bytes held in the message itself, over every data field (external data is not
    /// counted). For typed fields this is the size of their values in memory.
    pub fn inline_data_len(&self) -> u64 {
        let strings: u64 = self.string_data.iter().map(|s| s.len() as u64).sum();
        self.raw_data.as_ref().map_or(0, |r| r.len() as u64)
            + 4 * self.float_data.len() as u64
            + 4 * self.int32_data.len() as u64
            + 8 * self.int64_data.len() as u64
            + 8 * self.double_data.len() as u64
            + 8 * self.uint64_data.len() as u64
            + strings
    }
}

struct Summary<'s, T: fmt::Debug>(&'s [T]);

impl<T: fmt::Debug> fmt::Debug for Summary<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 8;
        let head = &self.0[..self.0.len().min(SHOWN)];
        write!(f, "[{} values", self.0.len())?;
        if !head.is_empty() {
            f.write_str(": ")?;
            for (i, v) in head.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v:?}")?;
            }
            if self.0.len() > SHOWN {
                f.write_str(", …")?;
            }
        }
        f.write_str("]")
    }
}

impl fmt::Debug for TensorProto<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TensorProto");
        if let Some(name) = &self.name {
            d.field("name", name);
        }
        d.field("dims", &self.dims);
        if let Some(t) = self.data_type {
            match DataType::from_i32(t) {
                Some(dt) => d.field("data_type", &dt),
                None => d.field("data_type", &t),
            };
        }
        if let Some(s) = &self.segment {
            d.field("segment", s);
        }
        if let Some(raw) = &self.raw_data {
            d.field("raw_data", raw);
        }
        if !self.float_data.is_empty() {
            d.field("float_data", &Summary(&self.float_data));
        }
        if !self.int32_data.is_empty() {
            d.field("int32_data", &Summary(&self.int32_data));
        }
        if !self.int64_data.is_empty() {
            d.field("int64_data", &Summary(&self.int64_data));
        }
        if !self.double_data.is_empty() {
            d.field("double_data", &Summary(&self.double_data));
        }
        if !self.uint64_data.is_empty() {
            d.field("uint64_data", &Summary(&self.uint64_data));
        }
        if !self.string_data.is_empty() {
            d.field("string_data", &Summary(&self.string_data));
        }
        if let Some(doc) = &self.doc_string {
            d.field("doc_string", doc);
        }
        if !self.external_data.is_empty() {
            d.field("external_data", &self.external_data);
        }
        if let Some(loc) = &self.data_location {
            d.field("data_location", loc);
        }
        if !self.metadata_props.is_empty() {
            d.field("metadata_props", &self.metadata_props);
        }
        if !self.unknown_fields.is_empty() {
            d.field("unknown_fields", &self.unknown_fields);
        }
        if let Some(lazy) = &self.lazy_data {
            d.field("lazy_data", lazy);
        }
        d.finish()
    }
}

/// A sparse tensor: `values` at `indices` of a dense tensor of shape `dims`.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.SparseTensorProto")]
pub struct SparseTensorProto<'a> {
    #[proto(1)]
    pub values: Option<TensorProto<'a>>,
    #[proto(2)]
    pub indices: Option<TensorProto<'a>>,
    #[proto(3)]
    pub dims: Vec<i64>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}
