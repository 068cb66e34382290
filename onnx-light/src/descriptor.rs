//! Static descriptions of message types, emitted by the derive: every field's name,
//! number, type, label and packing. The schema checks compare them with `schema/` and
//! with the official package.

use std::fmt;

/// A field's protobuf type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// `double`
    Double,
    /// `float`
    Float,
    /// `int64`
    Int64,
    /// `uint64`
    UInt64,
    /// `int32`
    Int32,
    /// `fixed64`
    Fixed64,
    /// `fixed32`
    Fixed32,
    /// `bool`
    Bool,
    /// `string`
    String,
    /// `bytes`
    Bytes,
    /// `uint32`
    UInt32,
    /// `sfixed32`
    SFixed32,
    /// `sfixed64`
    SFixed64,
    /// `sint32`
    SInt32,
    /// `sint64`
    SInt64,
    /// An enum, by fully qualified name.
    Enum(&'static str),
    /// A message, by fully qualified name.
    Message(&'static str),
    /// A map field (on the wire: repeated key/value entry messages).
    Map(&'static FieldKind, &'static FieldKind),
}

impl fmt::Display for FieldKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            FieldKind::Double => "double",
            FieldKind::Float => "float",
            FieldKind::Int64 => "int64",
            FieldKind::UInt64 => "uint64",
            FieldKind::Int32 => "int32",
            FieldKind::Fixed64 => "fixed64",
            FieldKind::Fixed32 => "fixed32",
            FieldKind::Bool => "bool",
            FieldKind::String => "string",
            FieldKind::Bytes => "bytes",
            FieldKind::UInt32 => "uint32",
            FieldKind::SFixed32 => "sfixed32",
            FieldKind::SFixed64 => "sfixed64",
            FieldKind::SInt32 => "sint32",
            FieldKind::SInt64 => "sint64",
            FieldKind::Enum(name) | FieldKind::Message(name) => name,
            FieldKind::Map(k, v) => return write!(f, "map<{k}, {v}>"),
        };
        f.write_str(s)
    }
}

/// Whether a field is single (with presence) or repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// proto2 `optional`: may be absent; written when set, even to the default.
    Optional,
    /// A single field without presence (proto3 style): written when not the default.
    Implicit,
    /// `repeated` (maps too).
    Repeated,
}

/// One field of a message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDescriptor {
    /// The protobuf field name.
    pub name: &'static str,
    /// The field number.
    pub number: u32,
    /// The protobuf type.
    pub kind: FieldKind,
    /// Single or repeated.
    pub label: Label,
    /// True when serialized packed.
    pub packed: bool,
    /// The oneof this field belongs to, if any.
    pub oneof: Option<&'static str>,
}

/// A message type: its name and its fields in field-number order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageDescriptor {
    /// Fully qualified protobuf name, e.g. `onnx.ModelProto`.
    pub name: &'static str,
    /// The declared fields, sorted by number.
    pub fields: &'static [FieldDescriptor],
}

impl MessageDescriptor {
    /// The field with this number.
    pub fn field(&self, number: u32) -> Option<&'static FieldDescriptor> {
        self.fields.iter().find(|f| f.number == number)
    }

    /// The field with this name.
    pub fn field_by_name(&self, name: &str) -> Option<&'static FieldDescriptor> {
        self.fields.iter().find(|f| f.name == name)
    }
}
