//! A custom proto2 schema (package `kat`) that exercises every field kind the derive
//! supports. `tests/python/kat.py` declares the same schema for the official Python
//! `protobuf` package, which produces the known-answer vectors.
//!
//! ```proto
//! enum Color { RED = 0; GREEN = 1; BLUE = 2; NEGATIVE = -5; }
//! message Scalars {
//!   optional int32 i32 = 1;   optional int64 i64 = 2;   optional uint32 u32 = 3;
//!   optional uint64 u64 = 4;  optional sint32 s32 = 5;  optional sint64 s64 = 6;
//!   optional fixed32 f32 = 7; optional fixed64 f64 = 8; optional sfixed32 sf32 = 9;
//!   optional sfixed64 sf64 = 10; optional float fl = 11; optional double db = 12;
//!   optional bool b = 13; optional string s = 14; optional bytes by = 15;
//!   optional Color color = 16;
//! }
//! message Repeated {
//!   repeated int32 i32 = 1;                 repeated int64 i64 = 2 [packed = true];
//!   repeated uint32 u32 = 3 [packed = true]; repeated uint64 u64 = 4;
//!   repeated sint32 s32 = 5 [packed = true]; repeated sint64 s64 = 6;
//!   repeated fixed32 f32 = 7 [packed = true]; repeated fixed64 f64 = 8;
//!   repeated sfixed32 sf32 = 9;              repeated sfixed64 sf64 = 10 [packed = true];
//!   repeated float fl = 11 [packed = true];  repeated double db = 12;
//!   repeated bool b = 13 [packed = true];    repeated string s = 14;
//!   repeated bytes by = 15;                  repeated Color color = 16 [packed = true];
//!   repeated Color color_unpacked = 17;
//! }
//! message Node {
//!   optional string name = 1;
//!   repeated Node children = 2;
//!   optional Node parent = 3;
//!   oneof value { int64 int_value = 4; string text_value = 5; Scalars scalars = 6;
//!                 bytes blob = 8; sint32 zig = 12; }
//!   map<string, int64> counts = 7;
//!   map<sint32, Scalars> by_id = 9;
//!   optional Repeated lists = 10;
//!   // field 11 is a group in the Python schema (Node.Legacy { optional int32 a = 1; }):
//!   // unknown here, so it exercises group skipping and unknown-field capture.
//! }
//! message NodeV1 { optional string name = 1; repeated NodeV1 children = 2; }
//! ```

use std::collections::BTreeMap;

use onnx_light::prelude::*;

#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq)]
#[proto(name = "kat.Color")]
pub enum Color {
    Red = 0,
    Green = 1,
    Blue = 2,
    Negative = -5,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "kat.Scalars")]
pub struct Scalars<'a> {
    #[proto(1)]
    pub i32: Option<i32>,
    #[proto(2)]
    pub i64: Option<i64>,
    #[proto(3)]
    pub u32: Option<u32>,
    #[proto(4)]
    pub u64: Option<u64>,
    #[proto(5, sint32)]
    pub s32: Option<i32>,
    #[proto(6, sint64)]
    pub s64: Option<i64>,
    #[proto(7, fixed32)]
    pub f32: Option<u32>,
    #[proto(8, fixed64)]
    pub f64: Option<u64>,
    #[proto(9, sfixed32)]
    pub sf32: Option<i32>,
    #[proto(10, sfixed64)]
    pub sf64: Option<i64>,
    #[proto(11)]
    pub fl: Option<f32>,
    #[proto(12)]
    pub db: Option<f64>,
    #[proto(13)]
    pub b: Option<bool>,
    #[proto(14)]
    pub s: Option<Str<'a>>,
    #[proto(15)]
    pub by: Option<Bytes<'a>>,
    #[proto(16)]
    pub color: Option<EnumValue<Color>>,
    #[proto(unknown_fields)]
    pub unknown: UnknownFields<'a>,
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "kat.Repeated")]
pub struct Repeated<'a> {
    #[proto(1)]
    pub i32: Vec<i32>,
    #[proto(2, packed)]
    pub i64: Vec<i64>,
    #[proto(3, packed)]
    pub u32: Vec<u32>,
    #[proto(4)]
    pub u64: Vec<u64>,
    #[proto(5, sint32, packed)]
    pub s32: Vec<i32>,
    #[proto(6, sint64)]
    pub s64: Vec<i64>,
    #[proto(7, fixed32, packed)]
    pub f32: Vec<u32>,
    #[proto(8, fixed64)]
    pub f64: Vec<u64>,
    #[proto(9, sfixed32)]
    pub sf32: Vec<i32>,
    #[proto(10, sfixed64, packed)]
    pub sf64: Vec<i64>,
    #[proto(11, packed)]
    pub fl: Vec<f32>,
    #[proto(12)]
    pub db: Vec<f64>,
    #[proto(13, packed)]
    pub b: Vec<bool>,
    #[proto(14)]
    pub s: Vec<Str<'a>>,
    #[proto(15)]
    pub by: Vec<Bytes<'a>>,
    #[proto(16, packed)]
    pub color: Vec<EnumValue<Color>>,
    #[proto(17)]
    pub color_unpacked: Vec<EnumValue<Color>>,
    #[proto(unknown_fields)]
    pub unknown: UnknownFields<'a>,
}

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
pub enum NodeValue<'a> {
    #[proto(4)]
    IntValue(i64),
    #[proto(5)]
    TextValue(Str<'a>),
    #[proto(6)]
    Scalars(Box<Scalars<'a>>),
    #[proto(8)]
    Blob(Bytes<'a>),
    #[proto(12, sint32)]
    Zig(i32),
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "kat.Node")]
pub struct Node<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(2)]
    pub children: Vec<Node<'a>>,
    #[proto(3)]
    pub parent: Option<Box<Node<'a>>>,
    #[proto(oneof(4, 5, 6, 8, 12))]
    pub value: Option<NodeValue<'a>>,
    #[proto(7)]
    pub counts: BTreeMap<Str<'a>, i64>,
    #[proto(9, key = sint32)]
    pub by_id: BTreeMap<i32, Scalars<'a>>,
    #[proto(10)]
    pub lists: Option<Repeated<'a>>,
    #[proto(unknown_fields)]
    pub unknown: UnknownFields<'a>,
}

/// An older version of `Node` that knows only fields 1 and 2: decoding a `Node`'s
/// bytes with it keeps everything else as unknown fields.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "kat.NodeV1")]
pub struct NodeV1<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    #[proto(2)]
    pub children: Vec<NodeV1<'a>>,
    #[proto(unknown_fields)]
    pub unknown: UnknownFields<'a>,
}

/// A message with no lifetime: every field owns its data.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "kat.OwnedOnly")]
pub struct OwnedOnly {
    #[proto(1)]
    pub name: String,
    #[proto(2)]
    pub data: Vec<u8>,
    #[proto(3)]
    pub values: Vec<u64>,
    #[proto(4)]
    pub nested: Option<Box<OwnedOnly>>,
    #[proto(5)]
    pub tags: std::collections::HashMap<String, String>,
    #[proto(6)]
    pub shared: Option<Bytes<'static>>,
}
