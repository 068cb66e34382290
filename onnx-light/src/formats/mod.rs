//! protobuf's text encodings of messages: the text format ([`textproto`], what
//! `text_format.MessageToString` writes and `text_format.Parse` reads) and the JSON
//! mapping ([`json`], what `json_format.MessageToJson(..., preserving_proto_field_name=True)`
//! writes and `json_format.Parse` reads). `onnx` saves models and tensors in them
//! (`format="textproto"`, `"json"`); this module writes the same characters as the
//! official protobuf Python runtime, and reads what it reads.
//!
//! ```
//! use onnx_light::formats::{json, textproto, TypeRegistry};
//! use onnx_light::onnx::*;
//!
//! let tensor = TensorProto::from_slice("w", [2], &[0.5f32, 1e-7])?;
//! let types = TypeRegistry::onnx();
//! let text = textproto::to_string(&tensor, types)?;
//! assert_eq!(text, "dims: 2\ndata_type: 1\nname: \"w\"\nraw_data: \"\\000\\000\\000?\\225\\277\\3263\"\n");
//! assert_eq!(textproto::from_str::<Tensor>(&text, types)?, tensor);
//! let json = json::to_string(&tensor, types)?;
//! assert!(json.starts_with("{\n  \"dims\": [\n    \"2\"\n  ],\n  \"data_type\": 1,"));
//! assert_eq!(json::from_str::<Tensor>(&json, types)?, tensor);
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! Both work on any message type whose descriptors a [`TypeRegistry`] holds (every
//! ONNX type in [`TypeRegistry::onnx`]; a type of your own with
//! [`TypeRegistry::add_message`]): printing walks the message's canonical encoding
//! guided by the descriptors, and parsing builds an encoding that the message's own
//! decoder then reads, so both follow the wire rules of the rest of the crate.
//!
//! Enums are read and written as proto2's closed enums, as every ONNX enum is: a value
//! the enum does not declare (which this crate keeps, and protobuf keeps among unknown
//! fields) is not printed, and reading one is an error. Unknown fields are not printed,
//! as protobuf's printers leave them out by default. Text that does not parse gives
//! [`ErrorKind::InvalidText`] with the line and column.

pub mod json;
mod number;
pub mod textproto;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::descriptor::{FieldDescriptor, FieldKind, Label, MessageDescriptor};
use crate::error::{Error, ErrorKind, Result};
use crate::field::ProtoEnum;
use crate::wire::{encode_varint, FieldKey, Reader, WireType, MAX_VARINT_LEN};

/// The message and enum types the text encodings can resolve by name: what a field of
/// kind [`FieldKind::Message`] or [`FieldKind::Enum`] refers to.
#[derive(Debug, Clone, Default)]
pub struct TypeRegistry {
    messages: HashMap<&'static str, &'static MessageDescriptor>,
    enums: HashMap<&'static str, &'static [(&'static str, i32)]>,
}

impl TypeRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every message and enum type of the ONNX schema.
    pub fn onnx() -> &'static TypeRegistry {
        static ONNX: OnceLock<TypeRegistry> = OnceLock::new();
        ONNX.get_or_init(|| {
            let mut r = TypeRegistry::new();
            for d in crate::onnx::message_descriptors() {
                r.add_message(d);
            }
            for (name, values) in crate::onnx::enum_descriptors() {
                r.add_enum_values(name, values);
            }
            r
        })
    }

    /// Adds a message type (its `Message::DESCRIPTOR`).
    pub fn add_message(&mut self, descriptor: &'static MessageDescriptor) -> &mut Self {
        self.messages.insert(descriptor.name, descriptor);
        self
    }

    /// Adds an enum type declared with `#[derive(ProtoEnum)]`.
    pub fn add_enum<E: ProtoEnum>(&mut self) -> &mut Self {
        self.add_enum_values(E::NAME, E::VALUES)
    }

    /// Adds an enum type by its fully qualified name and `(value name, number)` pairs.
    pub fn add_enum_values(
        &mut self,
        name: &'static str,
        values: &'static [(&'static str, i32)],
    ) -> &mut Self {
        self.enums.insert(name, values);
        self
    }

    /// The message type of this fully qualified name.
    pub fn message(&self, name: &str) -> Option<&'static MessageDescriptor> {
        self.messages.get(name).copied()
    }

    /// The values of the enum type of this fully qualified name.
    pub fn enum_values(&self, name: &str) -> Option<&'static [(&'static str, i32)]> {
        self.enums.get(name).copied()
    }

    pub(crate) fn require_message(&self, name: &str) -> Result<&'static MessageDescriptor> {
        self.message(name).ok_or_else(|| unregistered(name))
    }

    pub(crate) fn require_enum(&self, name: &str) -> Result<&'static [(&'static str, i32)]> {
        self.enum_values(name).ok_or_else(|| unregistered(name))
    }
}

fn unregistered(name: &str) -> Error {
    Error::new(ErrorKind::UnregisteredType {
        name: name.to_string(),
    })
}

/// The fields of one message: either a declared message type or the key/value entry of
/// a map field.
#[derive(Clone, Copy)]
pub(crate) enum Fields {
    Message(&'static MessageDescriptor),
    MapEntry(&'static FieldKind, &'static FieldKind),
}

impl Fields {
    pub(crate) fn full_name(&self) -> &'static str {
        match self {
            Fields::Message(d) => d.name,
            Fields::MapEntry(..) => "map entry",
        }
    }

    pub(crate) fn by_number(&self, number: u32) -> Option<FieldDescriptor> {
        match self {
            Fields::Message(d) => d.field(number).copied(),
            Fields::MapEntry(k, v) => match number {
                1 => Some(entry_field("key", 1, k)),
                2 => Some(entry_field("value", 2, v)),
                _ => None,
            },
        }
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<FieldDescriptor> {
        match self {
            Fields::Message(d) => d.field_by_name(name).copied(),
            Fields::MapEntry(..) => match name {
                "key" => self.by_number(1),
                "value" => self.by_number(2),
                _ => None,
            },
        }
    }

    pub(crate) fn all(&self) -> Vec<FieldDescriptor> {
        match self {
            Fields::Message(d) => d.fields.to_vec(),
            Fields::MapEntry(..) => vec![self.by_number(1).unwrap(), self.by_number(2).unwrap()],
        }
    }
}

fn entry_field(name: &'static str, number: u32, kind: &'static FieldKind) -> FieldDescriptor {
    FieldDescriptor {
        name,
        number,
        kind: *kind,
        label: Label::Optional,
        packed: false,
        oneof: None,
    }
}

/// The fields of the message a field of kind `kind` holds (a message or map entry).
pub(crate) fn nested_fields(kind: &FieldKind, registry: &TypeRegistry) -> Result<Option<Fields>> {
    Ok(match kind {
        FieldKind::Message(name) => Some(Fields::Message(registry.require_message(name)?)),
        FieldKind::Map(k, v) => Some(Fields::MapEntry(k, v)),
        _ => None,
    })
}

/// The wire type a scalar of `kind` is written with.
pub(crate) fn wire_type_of(kind: &FieldKind) -> WireType {
    match kind {
        FieldKind::Double | FieldKind::Fixed64 | FieldKind::SFixed64 => WireType::Fixed64,
        FieldKind::Float | FieldKind::Fixed32 | FieldKind::SFixed32 => WireType::Fixed32,
        FieldKind::String | FieldKind::Bytes | FieldKind::Message(_) | FieldKind::Map(..) => {
            WireType::LengthDelimited
        }
        _ => WireType::Varint,
    }
}

/// One encoded value, as read off the wire.
#[derive(Clone, Copy)]
pub(crate) enum Raw<'b> {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    Len(&'b [u8]),
}

/// A field's value decoded for printing.
pub(crate) enum Scalar<'b> {
    Signed(i64),
    Unsigned(u64),
    Float(f32),
    Double(f64),
    Bool(bool),
    Str(&'b str),
    Bytes(&'b [u8]),
    /// A declared enum value, by name.
    Enum(&'static str),
}

/// The value of a scalar field of `kind`, or `None` for an enum number the enum does
/// not declare (protobuf keeps those among the unknown fields).
pub(crate) fn scalar<'b>(
    kind: &FieldKind,
    raw: Raw<'b>,
    registry: &TypeRegistry,
) -> Result<Option<Scalar<'b>>> {
    Ok(Some(match (kind, raw) {
        (FieldKind::Int32, Raw::Varint(v)) => Scalar::Signed(i64::from(v as i32)),
        (FieldKind::Int64, Raw::Varint(v)) => Scalar::Signed(v as i64),
        (FieldKind::UInt32, Raw::Varint(v)) => Scalar::Unsigned(u64::from(v as u32)),
        (FieldKind::UInt64, Raw::Varint(v)) => Scalar::Unsigned(v),
        (FieldKind::SInt32, Raw::Varint(v)) => {
            let v = v as u32;
            Scalar::Signed(i64::from((v >> 1) as i32 ^ -((v & 1) as i32)))
        }
        (FieldKind::SInt64, Raw::Varint(v)) => Scalar::Signed((v >> 1) as i64 ^ -((v & 1) as i64)),
        (FieldKind::Bool, Raw::Varint(v)) => Scalar::Bool(v != 0),
        (FieldKind::Enum(name), Raw::Varint(v)) => {
            let number = v as i32;
            match registry
                .require_enum(name)?
                .iter()
                .find(|(_, n)| *n == number)
            {
                Some((value_name, _)) => Scalar::Enum(value_name),
                None => return Ok(None),
            }
        }
        (FieldKind::Fixed32, Raw::Fixed32(v)) => Scalar::Unsigned(u64::from(v)),
        (FieldKind::SFixed32, Raw::Fixed32(v)) => Scalar::Signed(i64::from(v as i32)),
        (FieldKind::Float, Raw::Fixed32(v)) => Scalar::Float(f32::from_bits(v)),
        (FieldKind::Fixed64, Raw::Fixed64(v)) => Scalar::Unsigned(v),
        (FieldKind::SFixed64, Raw::Fixed64(v)) => Scalar::Signed(v as i64),
        (FieldKind::Double, Raw::Fixed64(v)) => Scalar::Double(f64::from_bits(v)),
        (FieldKind::String, Raw::Len(b)) => Scalar::Str(std::str::from_utf8(b).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "string field that is not UTF-8",
            })
        })?),
        (FieldKind::Bytes, Raw::Len(b)) => Scalar::Bytes(b),
        _ => unreachable!("values are collected only with their field's wire type"),
    }))
}

/// A set field of a message and its values in wire order (one for a singular field).
pub(crate) struct FieldValues<'b> {
    pub field: FieldDescriptor,
    pub values: Vec<Raw<'b>>,
    /// The merged body of a singular message field written more than once.
    pub merged: Option<Vec<u8>>,
}

impl<'b> FieldValues<'b> {
    /// The body of a singular message field (the merge of every occurrence).
    pub(crate) fn message_body(&self) -> Cow<'_, [u8]> {
        match (&self.merged, self.values.last()) {
            (Some(m), _) => Cow::Borrowed(m),
            (None, Some(Raw::Len(b))) => Cow::Borrowed(b),
            _ => Cow::Borrowed(&[]),
        }
    }
}

/// The set fields of the message encoded in `bytes`, in field-number order, as
/// protobuf's `ListFields` gives them: values of undeclared fields and values with
/// another wire type than their field's (both unknown fields to protobuf) are left
/// out; for a singular scalar written more than once the last value counts, for a
/// singular message every occurrence is merged.
pub(crate) fn list_fields<'b>(bytes: &'b [u8], fields: &Fields) -> Result<Vec<FieldValues<'b>>> {
    // With each value its position on the wire, for the oneof rule below.
    let mut items: Vec<(FieldDescriptor, usize, Raw<'b>)> = Vec::new();
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let key = r.read_key()?;
        let Some(field) = fields.by_number(key.number) else {
            r.skip(key)?;
            continue;
        };
        let at = items.len();
        let expected = wire_type_of(&field.kind);
        if key.wire_type == expected {
            let raw = match expected {
                WireType::Varint => Raw::Varint(r.read_varint()?),
                WireType::Fixed32 => Raw::Fixed32(r.read_fixed32()?),
                WireType::Fixed64 => Raw::Fixed64(r.read_fixed64()?),
                _ => Raw::Len(r.read_length_delimited()?.0),
            };
            items.push((field, at, raw));
        } else if key.wire_type == WireType::LengthDelimited
            && field.label == Label::Repeated
            && expected != WireType::LengthDelimited
        {
            // Packed numbers.
            let (body, _) = r.read_length_delimited()?;
            let mut p = Reader::new(body);
            while !p.is_empty() {
                let raw = match expected {
                    WireType::Varint => Raw::Varint(p.read_varint()?),
                    WireType::Fixed32 => Raw::Fixed32(p.read_fixed32()?),
                    _ => Raw::Fixed64(p.read_fixed64()?),
                };
                items.push((field, at, raw));
            }
        } else {
            r.skip(key)?;
        }
    }
    // Stable: the values of each field keep their wire order.
    items.sort_by_key(|(f, _, _)| f.number);
    let mut out: Vec<FieldValues<'b>> = Vec::new();
    let mut last_at: Vec<usize> = Vec::new();
    for (field, at, raw) in items {
        match out.last_mut() {
            Some(last) if last.field.number == field.number => {
                last.values.push(raw);
                *last_at.last_mut().expect("one per field") = at;
            }
            _ => {
                out.push(FieldValues {
                    field,
                    values: vec![raw],
                    merged: None,
                });
                last_at.push(at);
            }
        }
    }
    for f in &mut out {
        if f.field.label == Label::Repeated || f.values.len() < 2 {
            continue;
        }
        if matches!(f.field.kind, FieldKind::Message(_)) {
            let mut merged = Vec::new();
            for v in &f.values {
                if let Raw::Len(b) = v {
                    merged.extend_from_slice(b);
                }
            }
            f.merged = Some(merged);
        }
        let last = *f.values.last().expect("not empty");
        f.values = vec![last];
    }
    // A oneof holds one member at most: the one written last.
    let mut winner: HashMap<&str, (usize, u32)> = HashMap::new();
    for (f, &at) in out.iter().zip(&last_at) {
        if let Some(group) = f.field.oneof {
            let w = winner.entry(group).or_insert((at, f.field.number));
            if at >= w.0 {
                *w = (at, f.field.number);
            }
        }
    }
    out.retain(|f| match f.field.oneof {
        Some(group) => winner.get(group).map(|w| w.1) == Some(f.field.number),
        None => true,
    });
    Ok(out)
}

/// The encoding of the message of type `descriptor` in `bytes` without its unknown
/// fields, at every depth: what protobuf's `DiscardUnknownFields()` leaves. Values of
/// an enum that the enum does not declare go too (protobuf keeps them among the
/// unknown fields of a proto2 message).
///
/// # Errors
/// Malformed `bytes`; a type missing from `registry`.
pub fn discard_unknown_fields(
    bytes: &[u8],
    descriptor: &'static MessageDescriptor,
    registry: &TypeRegistry,
) -> Result<Vec<u8>> {
    let mut out = WireWriter::default();
    known_fields(bytes, &Fields::Message(descriptor), registry, &mut out, 0)?;
    Ok(out.buf)
}

fn known_fields(
    bytes: &[u8],
    fields: &Fields,
    registry: &TypeRegistry,
    out: &mut WireWriter,
    depth: usize,
) -> Result<()> {
    if depth > crate::MAX_ENCODE_DEPTH as usize {
        return Err(Error::new(ErrorKind::RecursionLimitExceeded {
            limit: crate::MAX_ENCODE_DEPTH,
        }));
    }
    for fv in list_fields(bytes, fields)? {
        let f = fv.field;
        if let Some(sub) = nested_fields(&f.kind, registry)? {
            let bodies: Vec<Cow<'_, [u8]>> = if f.label == Label::Repeated && fv.merged.is_none() {
                fv.values
                    .iter()
                    .filter_map(|v| match v {
                        Raw::Len(b) => Some(Cow::Borrowed(*b)),
                        _ => None,
                    })
                    .collect()
            } else {
                vec![fv.message_body()]
            };
            for body in bodies {
                let mut inner = WireWriter::default();
                known_fields(&body, &sub, registry, &mut inner, depth + 1)?;
                out.len_field(f.number, &inner.buf);
            }
            continue;
        }
        for v in &fv.values {
            if let FieldKind::Enum(_) = f.kind {
                if scalar(&f.kind, *v, registry)?.is_none() {
                    continue;
                }
            }
            match *v {
                Raw::Varint(x) => {
                    out.key(f.number, WireType::Varint);
                    out.varint(x);
                }
                Raw::Fixed32(x) => {
                    out.key(f.number, WireType::Fixed32);
                    out.buf.extend_from_slice(&x.to_le_bytes());
                }
                Raw::Fixed64(x) => {
                    out.key(f.number, WireType::Fixed64);
                    out.buf.extend_from_slice(&x.to_le_bytes());
                }
                Raw::Len(b) => out.len_field(f.number, b),
            }
        }
    }
    Ok(())
}

/// Writes encoded fields for the parsers.
#[derive(Default)]
pub(crate) struct WireWriter {
    pub buf: Vec<u8>,
}

impl WireWriter {
    fn varint(&mut self, v: u64) {
        let mut tmp = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(v, &mut tmp);
        self.buf.extend_from_slice(&tmp[..n]);
    }

    fn key(&mut self, number: u32, wire_type: WireType) {
        let key = FieldKey::new(number, wire_type).expect("field numbers come from descriptors");
        self.varint((u64::from(key.number) << 3) | key.wire_type as u64);
    }

    /// A length-delimited field (string, bytes or message body).
    pub(crate) fn len_field(&mut self, number: u32, body: &[u8]) {
        self.key(number, WireType::LengthDelimited);
        self.varint(body.len() as u64);
        self.buf.extend_from_slice(body);
    }

    /// A scalar field of `kind`, from a value already checked against its range.
    pub(crate) fn scalar(&mut self, number: u32, kind: &FieldKind, value: &ParsedScalar) {
        let wire = wire_type_of(kind);
        match (kind, value) {
            (FieldKind::Float, ParsedScalar::Float(v)) => {
                self.key(number, wire);
                self.buf.extend_from_slice(&(*v as f32).to_le_bytes());
            }
            (FieldKind::Double, ParsedScalar::Float(v)) => {
                self.key(number, wire);
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
            (FieldKind::Bool, ParsedScalar::Bool(b)) => {
                self.key(number, wire);
                self.varint(u64::from(*b));
            }
            (FieldKind::String | FieldKind::Bytes, ParsedScalar::Bytes(b)) => {
                self.len_field(number, b);
            }
            (_, ParsedScalar::Int(v)) => {
                let v = *v;
                self.key(number, wire);
                match kind {
                    FieldKind::SInt32 => {
                        let x = v as i32;
                        self.varint(u64::from(((x << 1) ^ (x >> 31)) as u32));
                    }
                    FieldKind::SInt64 => {
                        let x = v as i64;
                        self.varint(((x << 1) ^ (x >> 63)) as u64);
                    }
                    FieldKind::Fixed32 | FieldKind::SFixed32 => {
                        self.buf.extend_from_slice(&(v as u32).to_le_bytes());
                    }
                    FieldKind::Fixed64 | FieldKind::SFixed64 => {
                        self.buf.extend_from_slice(&(v as u64).to_le_bytes());
                    }
                    // int32 and enums as sign-extended 64-bit varints, as protobuf.
                    _ => self.varint(v as i64 as u64),
                }
            }
            _ => unreachable!("the parsers convert each value for its field's kind"),
        }
    }
}

/// A scalar read from text, converted for its field.
pub(crate) enum ParsedScalar {
    Int(i128),
    Float(f64),
    Bool(bool),
    Bytes(Vec<u8>),
}

/// The range of an integer kind, or `None` for a kind that is no integer.
pub(crate) fn int_range(kind: &FieldKind) -> Option<(i128, i128)> {
    Some(match kind {
        FieldKind::Int32 | FieldKind::SInt32 | FieldKind::SFixed32 | FieldKind::Enum(_) => {
            (i128::from(i32::MIN), i128::from(i32::MAX))
        }
        FieldKind::Int64 | FieldKind::SInt64 | FieldKind::SFixed64 => {
            (i128::from(i64::MIN), i128::from(i64::MAX))
        }
        FieldKind::UInt32 | FieldKind::Fixed32 => (0, i128::from(u32::MAX)),
        FieldKind::UInt64 | FieldKind::Fixed64 => (0, i128::from(u64::MAX)),
        _ => return None,
    })
}

/// True for the kinds protobuf's JSON writes as strings (64-bit integers).
pub(crate) fn is_64_bit_int(kind: &FieldKind) -> bool {
    matches!(
        kind,
        FieldKind::Int64
            | FieldKind::UInt64
            | FieldKind::SInt64
            | FieldKind::Fixed64
            | FieldKind::SFixed64
    )
}

/// The deepest nesting of messages the parsers accept, as protobuf's JSON parser
/// (`max_recursion_depth`) and this crate's decoder.
pub(crate) const MAX_DEPTH: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{DecodeOwned, Message};
    use crate::onnx::{Model, ModelProto};

    #[test]
    fn discarding_unknown_fields_reaches_every_depth_and_keeps_the_rest() {
        // ir_version 7, unknown field 100 = 5, graph { name "g", unknown 100 = 1,
        // initializer { dims 1, data_location 9 (undeclared) } }.
        let bytes = b"\x08\x07\xa0\x06\x05\x3a\x0c\x12\x01g\xa0\x06\x01\x2a\x04\x08\x01\x68\x09";
        let model = Model::decode_owned(bytes).unwrap();
        let kept = discard_unknown_fields(
            &model.encode_to_vec().unwrap(),
            ModelProto::DESCRIPTOR,
            TypeRegistry::onnx(),
        )
        .unwrap();
        assert_eq!(kept, b"\x08\x07\x3a\x07\x12\x01g\x2a\x02\x08\x01");
        let clean = Model::decode_owned(&kept).unwrap();
        assert_eq!(clean.encode_to_vec().unwrap(), kept);
    }
}
