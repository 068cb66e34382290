//! `StringStringEntryProto`: the key-value pairs of metadata and external-data
//! references, used by tensors, graphs, nodes and models alike.

use crate::field::{Str, UnknownFields};
use crate::ProtoMessage;

/// A string key-value pair (metadata, external-data descriptions, bindings).
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx.StringStringEntryProto")]
pub struct StringStringEntryProto<'a> {
    #[proto(1)]
    pub key: Option<Str<'a>>,
    #[proto(2)]
    pub value: Option<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> StringStringEntryProto<'a> {
    /// A key-value pair.
    pub fn new(key: impl Into<Str<'a>>, value: impl Into<Str<'a>>) -> Self {
        StringStringEntryProto {
            key: Some(key.into()),
            value: Some(value.into()),
            ..StringStringEntryProto::default()
        }
    }
}
