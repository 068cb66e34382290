//! Round trips per field kind and per decode mode, and the protobuf merge rules a user
//! relies on when reading files written by other tools.

use std::sync::Arc;

use onnx_light::prelude::*;
use onnx_light::{ByteOwner, DecodeOptions, ErrorKind, UnknownField};
use onnx_light_tests::kat::{Color, Node, NodeV1, NodeValue, OwnedOnly, Repeated, Scalars};

/// Decodes `bytes` in all three modes and checks each equals `expected`.
fn check_all_modes(bytes: &[u8], expected: &Node<'_>) {
    let borrowed = Node::decode(bytes).expect("borrow mode");
    assert_eq!(&borrowed, expected, "borrow mode");
    let copied = Node::decode_owned(bytes).expect("copy mode");
    assert_eq!(&copied, expected, "copy mode");
    let owner: ByteOwner = Arc::new(bytes.to_vec());
    let shared = Node::decode_shared(owner, &DecodeOptions::default()).expect("shared mode");
    assert_eq!(&shared, expected, "shared mode");
}

fn every_kind<'a>() -> Node<'a> {
    let scalars = Scalars {
        i32: Some(-1),
        i64: Some(i64::MIN),
        u32: Some(u32::MAX),
        u64: Some(u64::MAX),
        s32: Some(i32::MIN),
        s64: Some(-2),
        f32: Some(7),
        f64: Some(1 << 40),
        sf32: Some(-3),
        sf64: Some(-4),
        fl: Some(-0.0),
        db: Some(f64::INFINITY),
        b: Some(false),
        s: Some("ünïcödé".into()),
        by: Some(Bytes::from(vec![0u8, 255, 1])),
        color: Some(Color::Negative.into()),
        unknown: UnknownFields::new(),
    };
    let lists = Repeated {
        i32: vec![-1, 0, 1],
        i64: vec![i64::MAX, -7],
        u32: vec![1, 300],
        u64: vec![u64::MAX],
        s32: vec![-1, 1],
        s64: vec![i64::MIN],
        f32: vec![1, 2],
        f64: vec![3],
        sf32: vec![-9],
        sf64: vec![9, -9],
        fl: vec![1.5, -2.5],
        db: vec![0.25],
        b: vec![true, false, true],
        s: vec!["a".into(), "".into(), "ccc".into()],
        by: vec![Bytes::from(vec![1u8]), Bytes::new()],
        color: vec![Color::Blue.into(), EnumValue::from_raw(99)],
        color_unpacked: vec![Color::Red.into(), EnumValue::from_raw(-100)],
        unknown: UnknownFields::new(),
    };
    let mut n = Node {
        name: Some("root".into()),
        children: vec![
            Node {
                name: Some("child".into()),
                value: Some(NodeValue::IntValue(5)),
                ..Node::default()
            },
            Node::default(),
        ],
        parent: Some(Box::new(Node {
            value: Some(NodeValue::Blob(Bytes::from(vec![9u8; 3000]))),
            ..Node::default()
        })),
        value: Some(NodeValue::Scalars(Box::new(scalars.clone()))),
        lists: Some(lists),
        ..Node::default()
    };
    n.counts.insert("x".into(), -1);
    n.counts.insert("a".into(), 2);
    n.by_id.insert(-3, scalars);
    n.by_id.insert(7, Scalars::default());
    n
}

#[test]
fn a_message_with_every_field_kind_round_trips_in_every_mode() {
    let value = every_kind();
    let bytes = value.encode_to_vec().unwrap();
    assert_eq!(bytes.len() as u64, value.encoded_len());
    check_all_modes(&bytes, &value);
    // And the re-encoding of each decoded form is byte-identical.
    assert_eq!(
        Node::decode(&bytes).unwrap().encode_to_vec().unwrap(),
        bytes
    );
    assert_eq!(
        Node::decode_owned(&bytes).unwrap().encode_to_vec().unwrap(),
        bytes
    );
}

#[test]
fn each_oneof_variant_round_trips() {
    let variants = [
        NodeValue::IntValue(-1),
        NodeValue::TextValue("t".into()),
        NodeValue::Scalars(Box::default()),
        NodeValue::Blob(Bytes::new()),
        NodeValue::Zig(i32::MIN),
    ];
    for v in variants {
        let n = Node {
            value: Some(v),
            ..Node::default()
        };
        check_all_modes(&n.encode_to_vec().unwrap(), &n);
    }
}

#[test]
fn borrow_mode_borrows_and_copy_mode_owns() {
    let value = every_kind();
    let bytes = value.encode_to_vec().unwrap();
    let borrowed = Node::decode(&bytes).unwrap();
    assert!(borrowed.name.as_ref().is_some_and(Str::is_borrowed));
    let Some(NodeValue::Blob(blob)) = &borrowed.parent.as_ref().unwrap().value else {
        panic!("blob expected")
    };
    assert!(blob.is_borrowed());
    // The borrowed blob points into the input buffer: nothing was copied.
    let range = bytes.as_ptr_range();
    assert!(range.contains(&blob.as_ptr()));

    let owned = Node::decode_owned(&bytes).unwrap();
    assert!(owned.name.as_ref().is_some_and(|s| !s.is_borrowed()));
    let Some(NodeValue::Blob(blob)) = &owned.parent.as_ref().unwrap().value else {
        panic!("blob expected")
    };
    assert!(blob.is_owned());
}

#[test]
fn shared_mode_shares_payloads_at_or_above_the_threshold_only() {
    let mut value = every_kind();
    value.lists.as_mut().unwrap().by =
        vec![Bytes::from(vec![1u8; 100]), Bytes::from(vec![2u8; 99])];
    let bytes = value.encode_to_vec().unwrap();
    let owner: Arc<Vec<u8>> = Arc::new(bytes);
    let options = DecodeOptions {
        shared_threshold: 100,
        ..DecodeOptions::default()
    };
    let decoded = Node::decode_shared(owner.clone(), &options).unwrap();
    let by = &decoded.lists.as_ref().unwrap().by;
    assert!(by[0].is_shared());
    assert!(by[1].is_owned());
    assert_eq!(decoded, value);
    // The shared payload stays valid after every other handle to the buffer is gone.
    let payload = by[0].clone();
    drop(decoded);
    drop(owner);
    assert_eq!(&*payload, &[1u8; 100][..]);
}

#[test]
fn into_owned_turns_a_borrowed_message_into_an_equal_static_one() {
    let value = every_kind();
    let bytes = value.encode_to_vec().unwrap();
    let owned: Node<'static> = Node::decode(&bytes).unwrap().into_owned();
    drop(bytes);
    assert_eq!(owned, value);
}

#[test]
fn a_message_without_lifetime_round_trips_in_every_mode() {
    let mut m = OwnedOnly {
        name: "n".into(),
        data: vec![1, 2, 3],
        values: vec![0, u64::MAX],
        nested: Some(Box::new(OwnedOnly {
            name: "inner".into(),
            ..OwnedOnly::default()
        })),
        shared: Some(Bytes::from(vec![5u8; 2048])),
        ..OwnedOnly::default()
    };
    m.tags.insert("k2".into(), "v2".into());
    m.tags.insert("k1".into(), "v1".into());
    let bytes = m.encode_to_vec().unwrap();
    assert_eq!(OwnedOnly::decode(&bytes).unwrap(), m);
    assert_eq!(OwnedOnly::decode_owned(&bytes).unwrap(), m);
    let owner: ByteOwner = Arc::new(bytes.clone());
    let shared = OwnedOnly::decode_shared(owner, &DecodeOptions::default()).unwrap();
    assert!(shared.shared.as_ref().unwrap().is_shared());
    assert_eq!(shared, m);
    // HashMap entries are written sorted by key, so the encoding is deterministic.
    assert_eq!(m.clone().encode_to_vec().unwrap(), bytes);
}

#[test]
fn implicit_presence_fields_are_not_written_when_default() {
    assert!(OwnedOnly::default().encode_to_vec().unwrap().is_empty());
}

#[test]
fn optional_fields_set_to_the_default_are_written() {
    let s = Scalars {
        i32: Some(0),
        s: Some("".into()),
        ..Scalars::default()
    };
    // key(1, varint) 0, key(14, LEN) 0
    assert_eq!(s.encode_to_vec().unwrap(), vec![0x08, 0x00, 0x72, 0x00]);
    assert_eq!(
        Scalars::default().encode_to_vec().unwrap(),
        Vec::<u8>::new()
    );
}

#[test]
fn accessors_return_the_proto_default_when_unset() {
    let s = Scalars::default();
    assert_eq!(s.i64(), 0);
    assert_eq!(s.s(), "");
    assert_eq!(s.by(), b"");
    assert_eq!(s.color(), Color::Red);
    assert!(!s.b());
    let s = Scalars {
        i64: Some(4),
        s: Some("x".into()),
        ..Scalars::default()
    };
    assert_eq!((s.i64(), s.s()), (4, "x"));
}

// ---- merge rules ----------------------------------------------------------------------

#[test]
fn a_scalar_seen_twice_keeps_the_last_value() {
    // field 2 (int64) = 1, then = 2; field 14 (string) "a" then "b".
    let bytes = [0x10, 1, 0x10, 2, 0x72, 1, b'a', 0x72, 1, b'b'];
    let s = Scalars::decode(&bytes).unwrap();
    assert_eq!(s.i64, Some(2));
    assert_eq!(s.s.as_deref(), Some("b"));
}

#[test]
fn a_sub_message_seen_twice_is_merged() {
    let a = Node {
        lists: Some(Repeated {
            i32: vec![1],
            s: vec!["x".into()],
            ..Repeated::default()
        }),
        name: Some("first".into()),
        ..Node::default()
    };
    let b = Node {
        lists: Some(Repeated {
            i32: vec![2],
            ..Repeated::default()
        }),
        ..Node::default()
    };
    let mut bytes = a.encode_to_vec().unwrap();
    bytes.extend(b.encode_to_vec().unwrap());
    let merged = Node::decode(&bytes).unwrap();
    assert_eq!(merged.name.as_deref(), Some("first"));
    let lists = merged.lists.unwrap();
    assert_eq!(lists.i32, vec![1, 2]);
    assert_eq!(lists.s, vec![Str::from("x")]);
}

#[test]
fn a_oneof_message_variant_seen_twice_merges_and_another_variant_replaces() {
    let first = Node {
        value: Some(NodeValue::Scalars(Box::new(Scalars {
            i32: Some(1),
            ..Scalars::default()
        }))),
        ..Node::default()
    };
    let second = Node {
        value: Some(NodeValue::Scalars(Box::new(Scalars {
            i64: Some(2),
            ..Scalars::default()
        }))),
        ..Node::default()
    };
    let mut bytes = first.encode_to_vec().unwrap();
    bytes.extend(second.encode_to_vec().unwrap());
    let Some(NodeValue::Scalars(s)) = Node::decode(&bytes).unwrap().value else {
        panic!("scalars expected")
    };
    assert_eq!((s.i32, s.i64), (Some(1), Some(2)));
    bytes.extend(
        Node {
            value: Some(NodeValue::IntValue(3)),
            ..Node::default()
        }
        .encode_to_vec()
        .unwrap(),
    );
    assert_eq!(
        Node::decode(&bytes).unwrap().value,
        Some(NodeValue::IntValue(3))
    );
}

#[test]
fn packed_and_unpacked_encodings_of_every_repeated_scalar_parse_the_same() {
    let value = every_kind().lists.unwrap();
    let canonical = value.encode_to_vec().unwrap();
    // Re-encode each repeated scalar field the other way (packed <-> unpacked) and mix
    // both encodings in one message: the decoded values must not change.
    let mut flipped = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    let mut r = onnx_light::wire::Reader::new(&canonical);
    while !r.is_empty() {
        let start = r.position();
        let key = r.read_key().unwrap();
        r.skip(key).unwrap();
        let (raw, _) = r.consumed_since(start);
        let scalar = !matches!(key.number, 14 | 15);
        // An unpacked field has one key per element: flip the whole field once.
        if scalar && !done.insert(key.number) {
            continue;
        }
        flipped.extend_from_slice(&flip_packing(&value, key.number, raw));
    }
    assert_ne!(flipped, canonical);
    assert_eq!(Repeated::decode(&flipped).unwrap(), value);
    // Mixed: the canonical encoding followed by the flipped one appends everything.
    let mut mixed = canonical.clone();
    mixed.extend_from_slice(&flipped);
    let twice = Repeated::decode(&mixed).unwrap();
    assert_eq!(twice.i64.len(), value.i64.len() * 2);
    assert_eq!(twice.color_unpacked.len(), value.color_unpacked.len() * 2);
}

/// Encodes field `number` of `value` with the opposite packing to `raw`'s.
fn flip_packing(value: &Repeated<'_>, number: u32, raw: &[u8]) -> Vec<u8> {
    fn varints(n: u32, vals: &[u64], packed: bool) -> Vec<u8> {
        let mut body = Vec::new();
        for &v in vals {
            put_varint(&mut body, v);
        }
        wrap(n, 0, vals.len(), &body, packed, |_, i| {
            let mut b = Vec::new();
            put_varint(&mut b, vals[i]);
            b
        })
    }
    fn fixed(n: u32, wt: u8, vals: &[Vec<u8>], packed: bool) -> Vec<u8> {
        let body: Vec<u8> = vals.concat();
        wrap(n, wt, vals.len(), &body, packed, |_, i| vals[i].clone())
    }
    fn wrap(
        n: u32,
        wt: u8,
        count: usize,
        body: &[u8],
        packed: bool,
        one: impl Fn(u32, usize) -> Vec<u8>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        if packed {
            put_varint(&mut out, u64::from(n) << 3 | 2);
            put_varint(&mut out, body.len() as u64);
            out.extend_from_slice(body);
        } else {
            for i in 0..count {
                put_varint(&mut out, u64::from(n) << 3 | u64::from(wt));
                out.extend(one(n, i));
            }
        }
        out
    }
    let was_packed = raw.len() > 1 && raw[0] & 7 == 2;
    let pack = !was_packed;
    let zz32 = |v: i32| u64::from(((v << 1) ^ (v >> 31)) as u32);
    let zz64 = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    match number {
        1 => varints(
            1,
            &value
                .i32
                .iter()
                .map(|&v| v as i64 as u64)
                .collect::<Vec<_>>(),
            pack,
        ),
        2 => varints(
            2,
            &value.i64.iter().map(|&v| v as u64).collect::<Vec<_>>(),
            pack,
        ),
        3 => varints(
            3,
            &value.u32.iter().map(|&v| u64::from(v)).collect::<Vec<_>>(),
            pack,
        ),
        4 => varints(4, &value.u64, pack),
        5 => varints(
            5,
            &value.s32.iter().map(|&v| zz32(v)).collect::<Vec<_>>(),
            pack,
        ),
        6 => varints(
            6,
            &value.s64.iter().map(|&v| zz64(v)).collect::<Vec<_>>(),
            pack,
        ),
        7 => fixed(
            7,
            5,
            &value
                .f32
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        8 => fixed(
            8,
            1,
            &value
                .f64
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        9 => fixed(
            9,
            5,
            &value
                .sf32
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        10 => fixed(
            10,
            1,
            &value
                .sf64
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        11 => fixed(
            11,
            5,
            &value
                .fl
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        12 => fixed(
            12,
            1,
            &value
                .db
                .iter()
                .map(|v| v.to_le_bytes().to_vec())
                .collect::<Vec<_>>(),
            pack,
        ),
        13 => varints(
            13,
            &value.b.iter().map(|&v| u64::from(v)).collect::<Vec<_>>(),
            pack,
        ),
        16 => varints(
            16,
            &value
                .color
                .iter()
                .map(|v| v.raw() as i64 as u64)
                .collect::<Vec<_>>(),
            pack,
        ),
        17 => varints(
            17,
            &value
                .color_unpacked
                .iter()
                .map(|v| v.raw() as i64 as u64)
                .collect::<Vec<_>>(),
            pack,
        ),
        // strings and bytes cannot be packed
        _ => raw.to_vec(),
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

// ---- unknown fields -------------------------------------------------------------------

#[test]
fn fields_of_a_newer_schema_survive_a_round_trip_through_an_older_one() {
    let value = every_kind();
    let bytes = value.encode_to_vec().unwrap();
    let old = NodeV1::decode(&bytes).unwrap();
    assert!(!old.unknown.is_empty());
    assert_eq!(old.encode_to_vec().unwrap(), bytes);
    assert_eq!(
        NodeV1::decode_owned(&bytes)
            .unwrap()
            .encode_to_vec()
            .unwrap(),
        bytes
    );
    let owner: ByteOwner = Arc::new(bytes.clone());
    let shared = NodeV1::decode_shared(owner, &DecodeOptions::default()).unwrap();
    assert_eq!(shared.encode_to_vec().unwrap(), bytes);
}

#[test]
fn unknown_fields_of_every_wire_type_are_kept_verbatim_and_written_last() {
    let mut bytes = Scalars {
        i32: Some(1),
        ..Scalars::default()
    }
    .encode_to_vec()
    .unwrap();
    let extra: Vec<UnknownField<'static>> = vec![
        UnknownField::varint(100, 1 << 40).unwrap(),
        UnknownField::fixed64(101, 7).unwrap(),
        UnknownField::length_delimited(102, b"future").unwrap(),
        UnknownField::fixed32(103, 9).unwrap(),
    ];
    for f in &extra {
        bytes.extend_from_slice(f.raw());
    }
    // A group with a nested group and a varint inside: start(104) [start(1) end(1)] 5 end(104)
    let group = [0xc3, 0x06, 0x0b, 0x0c, 0x10, 0x05, 0xc4, 0x06];
    bytes.extend_from_slice(&group);
    let s = Scalars::decode(&bytes).unwrap();
    assert_eq!(s.i32, Some(1));
    let numbers: Vec<u32> = s.unknown.iter().map(|f| f.number()).collect();
    assert_eq!(numbers, vec![100, 101, 102, 103, 104]);
    assert_eq!(s.unknown.iter().last().unwrap().raw(), &group);
    assert_eq!(s.encode_to_vec().unwrap(), bytes);
}

// ---- errors ---------------------------------------------------------------------------

#[test]
fn errors_name_the_field_path_and_offset() {
    let mut n = every_kind();
    n.children[0].name = Some("bad".into());
    let mut bytes = n.encode_to_vec().unwrap();
    let pos = bytes.windows(3).position(|w| w == b"bad").unwrap();
    bytes[pos] = 0xff;
    for err in [
        Node::decode(&bytes).unwrap_err(),
        Node::decode_owned(&bytes).unwrap_err(),
    ] {
        assert_eq!(err.kind(), &ErrorKind::InvalidUtf8);
        assert_eq!(err.offset(), Some(pos as u64));
        assert_eq!(err.path_string(), "kat.Node.children[0].name");
    }
}

/// The field in `bytes` (key and value) as its message's unknown-field set shows it.
fn one_unknown(bytes: &[u8]) -> UnknownFields<'static> {
    let mut r = onnx_light::wire::Reader::new(bytes);
    let key = r.read_key().unwrap();
    let mut set = UnknownFields::new();
    set.push(UnknownField::from_raw(key, Bytes::from(bytes.to_vec())));
    set
}

#[test]
fn a_known_field_with_the_wrong_wire_type_is_kept_as_an_unknown_field() {
    // Each field's number is declared but its wire type is not its codec's: protobuf
    // keeps it as an unknown field, the declared field stays as it was, and it is
    // written back after the known fields.
    let fields: [&[u8]; 4] = [
        &[0x70, 0x01],                   // Scalars.s (string) as a varint
        &[0x85, 0x01, 1, 0, 0, 0],       // Scalars.color (enum) as fixed32
        &[0x09, 0, 0, 0, 0, 0, 0, 0, 0], // Scalars.i32 as fixed64
        &[0x5a, 0x00],                   // Scalars.fl (float) as LEN
    ];
    for field in fields {
        let input = [&[0x08, 0x07][..], field].concat(); // i32 = 7 first
        let expected = Scalars {
            i32: Some(7),
            unknown: one_unknown(field),
            ..Scalars::default()
        };
        assert_eq!(Scalars::decode(&input).unwrap(), expected, "{field:02x?}");
        assert_eq!(Scalars::decode_owned(&input).unwrap(), expected);
        assert_eq!(expected.encode_to_vec().unwrap(), input);
    }
    // Repeated fields: a repeated scalar takes its element's wire type and LEN (packed),
    // anything else is unknown; so is anything but LEN for strings and messages.
    let fields: [&[u8]; 4] = [
        &[0x0d, 1, 0, 0, 0],             // Repeated.i32 (unpacked int32) as fixed32
        &[0x85, 0x01, 1, 0, 0, 0],       // Repeated.color (packed enum) as fixed32
        &[0x59, 0, 0, 0, 0, 0, 0, 0, 0], // Repeated.fl (packed float) as fixed64
        &[0x70, 0x05],                   // Repeated.s (repeated string) as a varint
    ];
    for field in fields {
        let input = [&[0x0a, 0x02, 0x01, 0x02][..], field].concat(); // i32 packed [1, 2]
        let expected = Repeated {
            i32: vec![1, 2],
            unknown: one_unknown(field),
            ..Repeated::default()
        };
        assert_eq!(Repeated::decode(&input).unwrap(), expected, "{field:02x?}");
    }
    // Node: a repeated message, a boxed message, a map, oneof members. A oneof member
    // with the wrong wire type leaves the oneof as it was.
    let fields: [&[u8]; 6] = [
        &[0x11, 0, 0, 0, 0, 0, 0, 0, 0], // children as fixed64
        &[0x18, 0x01],                   // parent (boxed) as a varint
        &[0x38, 0x01],                   // counts (map) as a varint
        &[0x22, 0x01, 0x05],             // oneof int_value as LEN
        &[0x2d, 0x61, 0x62, 0x63, 0x64], // oneof text_value as fixed32
        &[0x33, 0x34],                   // oneof scalars as an (empty) group
    ];
    for field in fields {
        let input = [&[0x20, 0x07][..], field].concat(); // int_value = 7 first
        let expected = Node {
            value: Some(NodeValue::IntValue(7)),
            unknown: one_unknown(field),
            ..Node::default()
        };
        check_all_modes(&input, &expected);
        assert_eq!(expected.encode_to_vec().unwrap(), input, "{field:02x?}");
    }
    // Inside a map entry a key or value with the wrong wire type is skipped like any
    // other field of the entry (entries keep no unknown fields): the default is used.
    let entry = [0x0a, 0x01, b'a', 0x15, 9, 0, 0, 0]; // key "a", value as fixed32
    let input = [&[0x3a, entry.len() as u8][..], &entry].concat();
    let node = Node::decode(&input).unwrap();
    assert_eq!(
        node.counts.into_iter().collect::<Vec<_>>(),
        [("a".into(), 0)]
    );
}

#[test]
fn nesting_is_limited_to_100_levels_by_default() {
    fn nested(depth: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for _ in 0..depth {
            let mut outer = vec![0x1a]; // field 3 (parent), LEN
            put_varint(&mut outer, bytes.len() as u64);
            outer.extend_from_slice(&bytes);
            bytes = outer;
        }
        bytes
    }
    assert!(Node::decode(&nested(100)).is_ok());
    let err = Node::decode(&nested(101)).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::RecursionLimitExceeded { limit: 100 }
    );
    let options = DecodeOptions {
        recursion_limit: 200,
        ..DecodeOptions::default()
    };
    assert!(Node::decode_with(&nested(150), &options).is_ok());
}

#[test]
fn descriptors_describe_every_field_in_number_order() {
    let d = Node::DESCRIPTOR;
    assert_eq!(d.name, "kat.Node");
    let numbers: Vec<u32> = d.fields.iter().map(|f| f.number).collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    let zig = d.field(12).unwrap();
    assert_eq!(
        (zig.name, zig.kind, zig.oneof),
        ("zig", onnx_light::FieldKind::SInt32, Some("value"))
    );
    let counts = d.field_by_name("counts").unwrap();
    assert_eq!(counts.kind.to_string(), "map<string, int64>");
    assert_eq!(
        d.field(3).unwrap().kind,
        onnx_light::FieldKind::Message("kat.Node")
    );
    let r = Repeated::DESCRIPTOR;
    assert!(r.field(2).unwrap().packed);
    assert!(!r.field(1).unwrap().packed);
    assert_eq!(
        r.field(16).unwrap().kind,
        onnx_light::FieldKind::Enum("kat.Color")
    );
}

#[test]
fn the_full_nesting_limit_decodes_on_a_small_stack_even_in_debug_builds() {
    fn nested(tag: u8, depth: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for _ in 0..depth {
            let mut outer = vec![tag];
            put_varint(&mut outer, bytes.len() as u64);
            outer.extend_from_slice(&bytes);
            bytes = outer;
        }
        bytes
    }
    let worker = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            for tag in [0x12u8 /* children */, 0x1a /* parent */] {
                assert!(Node::decode(&nested(tag, 100)).is_ok());
                assert!(Node::decode_owned(&nested(tag, 100)).is_ok());
                assert!(Node::decode(&nested(tag, 5000)).is_err());
            }
        })
        .unwrap();
    worker.join().expect("decoding overflowed a 512 KiB stack");
}

#[test]
fn a_reborrowed_view_is_equal_encodes_identically_and_copies_no_payload() {
    use onnx_light::Reborrow;
    let value = every_kind();
    let view: Node<'_> = value.reborrow();
    assert_eq!(view, value);
    assert_eq!(
        view.encode_to_vec().unwrap(),
        value.encode_to_vec().unwrap()
    );
    let (Some(NodeValue::Blob(a)), Some(NodeValue::Blob(b))) = (
        &value.parent.as_ref().unwrap().value,
        &view.parent.as_ref().unwrap().value,
    ) else {
        panic!("blob expected")
    };
    assert!(b.is_borrowed());
    assert_eq!(a.as_ptr(), b.as_ptr());
    assert!(view.name.as_ref().is_some_and(Str::is_borrowed));
}
