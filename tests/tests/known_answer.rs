//! Known-answer tests: onnx-light against bytes written by the official Python
//! `protobuf` package.
//!
//! `tests/fixtures/kat_vectors.txt` holds one serialized message per case, produced by
//! `tests/python/kat.py` from the `kat` schema (see `onnx_light_tests::kat`). For every
//! case a function below builds the same value with the Rust types and checks that
//! encoding it gives exactly the fixture bytes, and that decoding the fixture bytes in
//! borrow, copy and shared modes gives the value back (and re-encodes to the same
//! bytes). `fixtures_match_python_protobuf` reruns the script, proving that the
//! committed file is what protobuf writes.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Debug;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use onnx_light::prelude::*;
use onnx_light::wire::{FieldKey, WireType};
use onnx_light::{ByteOwner, DecodeOptions, ErrorKind, UnknownField};
use onnx_light_tests::kat::{Color, Node, NodeV1, NodeValue, Repeated, Scalars};
use onnx_light_tests::python::{python_dir, run_python, workspace_root};

// ---------------------------------------------------------------------------------------
// The fixture file.

fn fixture_path() -> PathBuf {
    workspace_root()
        .join("tests")
        .join("fixtures")
        .join("kat_vectors.txt")
}

fn hex_decode(name: &str, hex: &str) -> Vec<u8> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let digits = hex.as_bytes();
    assert!(
        digits.len().is_multiple_of(2),
        "{name}: odd number of hex digits"
    );
    digits
        .chunks(2)
        .map(|pair| match (nibble(pair[0]), nibble(pair[1])) {
            (Some(hi), Some(lo)) => hi << 4 | lo,
            _ => panic!(
                "{name}: not lowercase hex: {:?}",
                String::from_utf8_lossy(pair)
            ),
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The fixture's cases, in file order (sorted by name, checked).
fn fixture() -> Vec<(String, Vec<u8>)> {
    let path = fixture_path();
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: Vec<(String, Vec<u8>)> = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (name, hex) = line.split_once(' ').unwrap_or((line, ""));
            (name.to_owned(), hex_decode(name, hex))
        })
        .collect();
    assert!(!cases.is_empty(), "{} holds no cases", path.display());
    for pair in cases.windows(2) {
        assert!(
            pair[0].0 < pair[1].0,
            "fixture names not sorted or not unique: {} then {}",
            pair[0].0,
            pair[1].0
        );
    }
    cases
}

/// The bytes of one fixture case.
fn fixture_case(name: &str) -> Vec<u8> {
    fixture()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no fixture case {name}"))
        .1
}

// ---------------------------------------------------------------------------------------
// Checks shared by every case.

fn same<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

/// Equality by encoding, for values `PartialEq` cannot compare (NaN).
fn same_encoding<T: Message>(a: &T, b: &T) -> bool {
    a.encode_to_vec().unwrap() == b.encode_to_vec().unwrap()
}

fn assert_bytes(name: &str, what: &str, actual: &[u8], expected: &[u8]) {
    assert!(
        actual == expected,
        "{name}: {what} differs from protobuf\n  protobuf: {}\n  ours:     {}",
        hex(expected),
        hex(actual)
    );
}

fn shared_options(threshold: usize) -> DecodeOptions {
    DecodeOptions {
        shared_threshold: threshold,
        ..DecodeOptions::default()
    }
}

/// Decodes `bytes` in shared mode from a fresh owner.
fn decode_shared<O: DecodeOwned>(bytes: &[u8], options: &DecodeOptions) -> O {
    let owner: ByteOwner = Arc::new(bytes.to_vec());
    O::decode_shared(owner, options).unwrap()
}

/// The results of decoding one case in each mode.
struct Decoded<B, O> {
    borrowed: B,
    copied: O,
    shared: O,
}

/// Checks `expected` against the fixture bytes of case `name`: encoding gives the bytes
/// exactly; decoding them in borrow, copy and shared modes (default threshold, and
/// threshold 1 so every non-empty payload is shared) gives `expected`, and each decoded
/// value encodes to the same bytes again.
fn check_modes<'b, B, O>(
    name: &str,
    bytes: &'b [u8],
    expected: &O,
    eq: fn(&O, &O) -> bool,
) -> Decoded<B, O>
where
    B: Decode<'b> + IntoOwned<Owned = O> + Clone + Debug,
    O: DecodeOwned + Clone + Debug,
{
    let encoded = expected.encode_to_vec().unwrap();
    assert_bytes(name, "encode_to_vec", &encoded, bytes);
    assert_eq!(
        expected.encoded_len(),
        bytes.len() as u64,
        "{name}: encoded_len"
    );
    let mut written = Vec::new();
    expected.write_to(&mut written).unwrap();
    assert_bytes(name, "write_to", &written, bytes);

    let reencode = |mode: &str, value: &dyn Fn() -> Vec<u8>| {
        assert_bytes(
            name,
            &format!("{mode} decode, encoded again"),
            &value(),
            bytes,
        );
    };

    let borrowed = B::decode(bytes).unwrap_or_else(|e| panic!("{name}: borrow decode: {e}"));
    reencode("borrow", &|| borrowed.encode_to_vec().unwrap());
    let owned = borrowed.clone().into_owned();
    assert!(
        eq(&owned, expected),
        "{name}: borrow decode gives\n{borrowed:#?}\nexpected\n{expected:#?}"
    );

    let copied = O::decode_owned(bytes).unwrap_or_else(|e| panic!("{name}: copy decode: {e}"));
    reencode("copy", &|| copied.encode_to_vec().unwrap());
    assert!(
        eq(&copied, expected),
        "{name}: copy decode gives\n{copied:#?}\nexpected\n{expected:#?}"
    );

    let shared: O = decode_shared(bytes, &DecodeOptions::default());
    reencode("shared", &|| shared.encode_to_vec().unwrap());
    assert!(
        eq(&shared, expected),
        "{name}: shared decode gives\n{shared:#?}\nexpected\n{expected:#?}"
    );

    let all_shared: O = decode_shared(bytes, &shared_options(1));
    reencode("shared (threshold 1)", &|| {
        all_shared.encode_to_vec().unwrap()
    });
    assert!(
        eq(&all_shared, expected),
        "{name}: shared decode (threshold 1) gives\n{all_shared:#?}\nexpected\n{expected:#?}"
    );

    Decoded {
        borrowed,
        copied,
        shared,
    }
}

/// Decodes a `Node`'s (or `Scalars`') bytes as the older `NodeV1`, in every mode:
/// everything but fields 1 and 2 must land in the unknown fields, in input order, with
/// these numbers and wire types, and encoding again must give the input back.
fn check_as_node_v1(name: &str, bytes: &[u8], unknown: &[(u32, WireType)]) -> NodeV1<'static> {
    let borrowed = NodeV1::decode(bytes).unwrap_or_else(|e| panic!("{name}: NodeV1: {e}"));
    let copied = NodeV1::decode_owned(bytes).unwrap_or_else(|e| panic!("{name}: NodeV1: {e}"));
    let shared: NodeV1<'static> = decode_shared(bytes, &shared_options(1));
    for (mode, value) in [
        ("borrow", &borrowed.clone().into_owned()),
        ("copy", &copied),
        ("shared", &shared),
    ] {
        let keys: Vec<(u32, WireType)> = value
            .unknown
            .iter()
            .map(|f| (f.number(), f.key().wire_type))
            .collect();
        assert_eq!(
            keys, unknown,
            "{name}: NodeV1 unknown fields ({mode} decode)"
        );
        assert_bytes(
            name,
            &format!("NodeV1 ({mode} decode) encoded again"),
            &value.encode_to_vec().unwrap(),
            bytes,
        );
        assert_eq!(value, &copied, "{name}: NodeV1 {mode} decode");
    }
    copied
}

/// Field 11 of the Python schema: `group Legacy = 11 { optional int32 a = 1; }`,
/// unknown to the Rust `Node`. `contents` are the group's fields.
fn legacy_group(contents: &[u8]) -> UnknownField<'static> {
    let key = FieldKey::new(11, WireType::StartGroup).unwrap();
    let mut raw = vec![0x5b]; // field 11, start group
    raw.extend_from_slice(contents);
    raw.push(0x5c); // field 11, end group
    UnknownField::from_raw(key, Bytes::from(raw))
}

fn unknown_fields(fields: Vec<UnknownField<'static>>) -> UnknownFields<'static> {
    let mut out = UnknownFields::new();
    for f in fields {
        out.push(f);
    }
    out
}

/// `Legacy.a` set to `value` (field 1, varint).
fn legacy_a(value: i32) -> Vec<u8> {
    let field = UnknownField::varint(1, value as i64 as u64).unwrap();
    field.raw().to_vec()
}

fn assert_single_group(name: &str, node: &Node<'_>, contents: &[u8]) {
    assert_eq!(node.unknown.len(), 1, "{name}: unknown fields");
    let field = node.unknown.iter().next().unwrap();
    assert_eq!(field.number(), 11, "{name}");
    assert_eq!(field.key().wire_type, WireType::StartGroup, "{name}");
    assert_eq!(field.raw(), legacy_group(contents).raw(), "{name}");
}

fn s(text: &'static str) -> Option<Str<'static>> {
    Some(Str::borrowed(text))
}

fn by(data: &'static [u8]) -> Option<Bytes<'static>> {
    Some(Bytes::from(data))
}

fn color(c: Color) -> Option<EnumValue<Color>> {
    Some(c.into())
}

fn colors(cs: &[Color]) -> Vec<EnumValue<Color>> {
    cs.iter().map(|&c| c.into()).collect()
}

fn node(name: &'static str) -> Node<'static> {
    Node {
        name: s(name),
        ..Node::default()
    }
}

// ---------------------------------------------------------------------------------------
// The cases: one function per fixture line, named as the case.

fn scalars_empty(name: &str, bytes: &[u8]) {
    check_modes::<Scalars<'_>, _>(name, bytes, &Scalars::default(), same);
}

fn scalars_zero_present(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        i32: Some(0),
        i64: Some(0),
        u32: Some(0),
        u64: Some(0),
        s32: Some(0),
        s64: Some(0),
        f32: Some(0),
        f64: Some(0),
        sf32: Some(0),
        sf64: Some(0),
        fl: Some(0.0),
        db: Some(0.0),
        b: Some(false),
        s: s(""),
        by: by(b""),
        color: color(Color::Red),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
}

fn scalars_max(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        i32: Some(i32::MAX),
        i64: Some(i64::MAX),
        u32: Some(u32::MAX),
        u64: Some(u64::MAX),
        s32: Some(i32::MAX),
        s64: Some(i64::MAX),
        f32: Some(u32::MAX),
        f64: Some(u64::MAX),
        sf32: Some(i32::MAX),
        sf64: Some(i64::MAX),
        fl: Some(f32::MAX),
        db: Some(f64::MAX),
        b: Some(true),
        s: s("max"),
        by: by(b"\xff\xff\xff"),
        color: color(Color::Blue),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
}

fn scalars_min(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        i32: Some(i32::MIN),
        i64: Some(i64::MIN),
        u32: Some(1),
        u64: Some(1),
        s32: Some(i32::MIN),
        s64: Some(i64::MIN),
        f32: Some(1),
        f64: Some(1),
        sf32: Some(i32::MIN),
        sf64: Some(i64::MIN),
        fl: Some(f32::MIN),
        db: Some(f64::MIN),
        b: Some(false),
        s: s("min"),
        by: by(b"\x00"),
        color: color(Color::Negative),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
}

fn scalars_minus_one(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        i32: Some(-1),
        i64: Some(-1),
        u32: Some(128),
        u64: Some(1 << 63),
        s32: Some(-1),
        s64: Some(-1),
        f32: Some(1 << 31),
        f64: Some(1 << 63),
        sf32: Some(-1),
        sf64: Some(-1),
        fl: Some(-0.0),
        db: Some(-0.0),
        color: color(Color::Green),
        ..Scalars::default()
    };
    // int32 -1 is sign-extended to a 10-byte varint, as protobuf writes it.
    assert_eq!(
        &bytes[..11],
        b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
    );
    let d = check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
    for v in [&d.copied, &d.shared] {
        assert!(v.fl.unwrap().is_sign_negative() && v.db.unwrap().is_sign_negative());
    }
}

fn scalars_nan(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        fl: Some(f32::NAN),
        db: Some(f64::NAN),
        ..Scalars::default()
    };
    let d = check_modes::<Scalars<'_>, _>(name, bytes, &expected, same_encoding);
    for v in [&d.borrowed.clone().into_owned(), &d.copied, &d.shared] {
        assert_eq!(v.fl.map(f32::to_bits), Some(f32::NAN.to_bits()), "{name}");
        assert_eq!(v.db.map(f64::to_bits), Some(f64::NAN.to_bits()), "{name}");
    }
}

fn scalars_infinity(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        fl: Some(f32::INFINITY),
        db: Some(f64::NEG_INFINITY),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
}

fn scalars_subnormal(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        fl: Some(f32::from_bits(1)),
        db: Some(f64::from_bits(1)),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
}

fn scalars_unicode(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        s: s("a\u{e9}\u{4e16}\u{1f980}\u{0}\u{7f}\u{80}\u{ffff}\u{10ffff}"),
        ..Scalars::default()
    };
    let d = check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
    assert!(
        d.borrowed.s.as_ref().is_some_and(Str::is_borrowed),
        "{name}: borrow mode copied"
    );
    assert!(
        d.copied.s.as_ref().is_some_and(|s| !s.is_borrowed()),
        "{name}: copy mode borrowed"
    );
}

fn scalars_bytes_all_values(name: &str, bytes: &[u8]) {
    let all: Vec<u8> = (0..=255).collect();
    let expected = Scalars {
        by: Some(Bytes::from(all)),
        ..Scalars::default()
    };
    let d = check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
    let state = |v: &Scalars<'_>| {
        v.by.as_ref()
            .map(|b| (b.len(), b.is_borrowed(), b.is_owned()))
    };
    assert_eq!(
        state(&d.borrowed),
        Some((256, true, false)),
        "{name}: borrow mode"
    );
    assert_eq!(
        state(&d.copied),
        Some((256, false, true)),
        "{name}: copy mode"
    );
    // 256 bytes: below the default threshold (1024), so copied.
    assert_eq!(
        state(&d.shared),
        Some((256, false, true)),
        "{name}: shared mode"
    );

    // At the threshold the payload is shared: a slice of the owner, after the key
    // (0x7a) and the two-byte length (0x80 0x02).
    let at: Scalars<'static> = decode_shared(bytes, &shared_options(256));
    assert_eq!(at, expected);
    match &at.by {
        Some(Bytes::Shared(shared)) => {
            assert_eq!(shared.offset_in_owner(), 3, "{name}");
            assert_eq!(shared.owner().bytes(), bytes, "{name}");
            assert_eq!(shared.as_slice(), &bytes[3..], "{name}");
        }
        other => panic!("{name}: threshold 256 should share, got {other:?}"),
    }
    // One byte above: copied.
    let above: Scalars<'static> = decode_shared(bytes, &shared_options(257));
    assert!(
        above.by.as_ref().unwrap().is_owned(),
        "{name}: threshold 257"
    );
    assert_eq!(above, expected);
}

fn scalars_fields_3_to_16(name: &str, bytes: &[u8]) {
    let expected = Scalars {
        u32: Some(300),
        u64: Some(1 << 40),
        s32: Some(-3),
        s64: Some(3),
        f32: Some(0xdead_beef),
        f64: Some(0x0123_4567_89ab_cdef),
        sf32: Some(-2),
        sf64: Some(-3),
        fl: Some(1.5),
        db: Some(-2.25),
        b: Some(true),
        s: s("x"),
        by: by(b"\x01\x02"),
        color: color(Color::Negative),
        ..Scalars::default()
    };
    check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);

    // As NodeV1 every field is unknown: all four non-group wire types.
    use WireType::{Fixed32, Fixed64, LengthDelimited as Ld, Varint};
    let v1 = check_as_node_v1(
        name,
        bytes,
        &[
            (3, Varint),
            (4, Varint),
            (5, Varint),
            (6, Varint),
            (7, Fixed32),
            (8, Fixed64),
            (9, Fixed32),
            (10, Fixed64),
            (11, Fixed32),
            (12, Fixed64),
            (13, Varint),
            (14, Ld),
            (15, Ld),
            (16, Varint),
        ],
    );
    // The same fields built with UnknownField's constructors are protobuf's bytes.
    let zigzag = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    let built = NodeV1 {
        unknown: unknown_fields(vec![
            UnknownField::varint(3, 300).unwrap(),
            UnknownField::varint(4, 1 << 40).unwrap(),
            UnknownField::varint(5, zigzag(-3)).unwrap(),
            UnknownField::varint(6, zigzag(3)).unwrap(),
            UnknownField::fixed32(7, 0xdead_beef).unwrap(),
            UnknownField::fixed64(8, 0x0123_4567_89ab_cdef).unwrap(),
            UnknownField::fixed32(9, -2i32 as u32).unwrap(),
            UnknownField::fixed64(10, -3i64 as u64).unwrap(),
            UnknownField::fixed32(11, 1.5f32.to_bits()).unwrap(),
            UnknownField::fixed64(12, (-2.25f64).to_bits()).unwrap(),
            UnknownField::varint(13, 1).unwrap(),
            UnknownField::length_delimited(14, b"x").unwrap(),
            UnknownField::length_delimited(15, b"\x01\x02").unwrap(),
            UnknownField::varint(16, -5i64 as u64).unwrap(),
        ]),
        ..NodeV1::default()
    };
    assert_eq!(v1, built, "{name}");
    assert_bytes(
        name,
        "NodeV1 built from UnknownFields",
        &built.encode_to_vec().unwrap(),
        bytes,
    );
    let f7 = v1.unknown.iter().find(|f| f.number() == 7).unwrap();
    assert_eq!(f7.value_bytes(), 0xdead_beef_u32.to_le_bytes(), "{name}");
}

fn handmade_scalars_unknown_enum(name: &str, bytes: &[u8]) {
    // protobuf (closed proto2 enum) keeps 99 as an unknown field; our open enum keeps it
    // in the field. Both write the same bytes back.
    let expected = Scalars {
        color: Some(EnumValue::from_raw(99)),
        ..Scalars::default()
    };
    let d = check_modes::<Scalars<'_>, _>(name, bytes, &expected, same);
    let c = d.copied.color.unwrap();
    assert!(!c.is_known() && c.raw() == 99, "{name}");
    assert!(d.copied.unknown.is_empty(), "{name}");
}

fn handmade_repeated_unknown_enum(name: &str, bytes: &[u8]) {
    let expected = Repeated {
        color_unpacked: vec![EnumValue::from_raw(99), EnumValue::from_raw(-100)],
        ..Repeated::default()
    };
    let d = check_modes::<Repeated<'_>, _>(name, bytes, &expected, same);
    assert!(
        d.copied.color_unpacked.iter().all(|c| !c.is_known()),
        "{name}"
    );
}

fn repeated_empty(name: &str, bytes: &[u8]) {
    check_modes::<Repeated<'_>, _>(name, bytes, &Repeated::default(), same);
}

fn repeated_all(name: &str, bytes: &[u8]) {
    let expected = Repeated {
        i32: vec![0, 1, -1, i32::MAX, i32::MIN],
        i64: vec![0, -1, i64::MAX, i64::MIN],
        u32: vec![0, 127, 128, 16383, 16384, u32::MAX],
        u64: vec![0, 1, (1 << 32) - 1, 1 << 32, 1 << 63, u64::MAX],
        s32: vec![0, -1, 1, i32::MIN, i32::MAX],
        s64: vec![0, -1, 1, i64::MIN, i64::MAX],
        f32: vec![0, 1, u32::MAX],
        f64: vec![0, u64::MAX],
        sf32: vec![-1, i32::MIN],
        sf64: vec![-1, i64::MAX],
        fl: vec![0.0, -0.0, 1.5, f32::INFINITY],
        db: vec![0.0, -2.25, f64::NEG_INFINITY, f64::from_bits(1)],
        b: vec![true, false, true],
        s: vec!["".into(), "a".into(), "\u{fc}".into()],
        by: vec![Bytes::new(), Bytes::from(b"\x00"), Bytes::from(b"\xff\xfe")],
        color: colors(&[Color::Red, Color::Green, Color::Blue, Color::Negative]),
        color_unpacked: colors(&[Color::Negative, Color::Red]),
        ..Repeated::default()
    };
    check_modes::<Repeated<'_>, _>(name, bytes, &expected, same);
}

fn repeated_single(name: &str, bytes: &[u8]) {
    let expected = Repeated {
        i32: vec![7],
        i64: vec![7],
        u32: vec![7],
        u64: vec![7],
        s32: vec![7],
        s64: vec![7],
        f32: vec![7],
        f64: vec![7],
        sf32: vec![7],
        sf64: vec![7],
        fl: vec![7.0],
        db: vec![7.0],
        b: vec![false],
        s: vec!["7".into()],
        by: vec![Bytes::from(b"7")],
        color: colors(&[Color::Blue]),
        color_unpacked: colors(&[Color::Green]),
        ..Repeated::default()
    };
    check_modes::<Repeated<'_>, _>(name, bytes, &expected, same);
}

fn repeated_long_packed(name: &str, bytes: &[u8]) {
    let expected = Repeated {
        i64: (-100..100).collect(),
        fl: (0..64u8).map(|i| f32::from(i) / 4.0).collect(),
        b: (0..130).map(|i| i % 3 == 0).collect(),
        ..Repeated::default()
    };
    check_modes::<Repeated<'_>, _>(name, bytes, &expected, same);
}

fn node_empty(name: &str, bytes: &[u8]) {
    check_modes::<Node<'_>, _>(name, bytes, &Node::default(), same);
}

fn node_oneof_int_zero(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::IntValue(0)),
        ..node("int")
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_oneof_text_empty(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::TextValue("".into())),
        ..Node::default()
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_oneof_scalars_empty(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::Scalars(Box::default())),
        ..Node::default()
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_oneof_scalars(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::Scalars(Box::new(Scalars {
            i32: Some(-1),
            s: s("in oneof"),
            color: color(Color::Negative),
            ..Scalars::default()
        }))),
        ..node("s")
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_oneof_blob(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::Blob(Bytes::from(b"\x00blob\xff"))),
        ..Node::default()
    };
    let d = check_modes::<Node<'_>, _>(name, bytes, &expected, same);
    match &d.borrowed.value {
        Some(NodeValue::Blob(b)) => assert!(b.is_borrowed(), "{name}: borrow mode copied"),
        other => panic!("{name}: {other:?}"),
    }
}

fn node_oneof_zig_min(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::Zig(i32::MIN)),
        ..Node::default()
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_empty_submessages(name: &str, bytes: &[u8]) {
    let expected = Node {
        parent: Some(Box::default()),
        lists: Some(Repeated::default()),
        ..node("")
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_maps_value() -> Node<'static> {
    let counts: BTreeMap<Str<'static>, i64> = [
        ("b", -1),
        ("a", 1),
        ("", 0),
        ("\u{fc}", i64::MAX),
        ("aa", i64::MIN),
    ]
    .into_iter()
    .map(|(k, v)| (Str::borrowed(k), v))
    .collect();
    let by_id = BTreeMap::from([
        (
            5,
            Scalars {
                s: s("five"),
                color: color(Color::Negative),
                ..Scalars::default()
            },
        ),
        (0, Scalars::default()),
        (
            -1,
            Scalars {
                i32: Some(1),
                ..Scalars::default()
            },
        ),
        (
            i32::MIN,
            Scalars {
                b: Some(false),
                ..Scalars::default()
            },
        ),
    ]);
    Node {
        counts,
        by_id,
        ..node("maps")
    }
}

fn node_maps(name: &str, bytes: &[u8]) {
    // Map entries in ascending key order: bytewise for strings, numeric for integers.
    check_modes::<Node<'_>, _>(name, bytes, &node_maps_value(), same);
}

fn node_maps_upb_order(name: &str, bytes: &[u8]) {
    // The same maps in the order protobuf's upb backend writes them (see kat.py):
    // decoding does not depend on entry order, and encoding again gives node_maps.
    let expected = node_maps_value();
    let canonical = fixture_case("node_maps");
    let borrowed = Node::decode(bytes).unwrap().into_owned();
    let copied = Node::decode_owned(bytes).unwrap();
    let shared: Node<'static> = decode_shared(bytes, &shared_options(1));
    for (mode, value) in [("borrow", borrowed), ("copy", copied), ("shared", shared)] {
        assert_eq!(value, expected, "{name}: {mode} decode");
        let again = value.encode_to_vec().unwrap();
        assert_bytes(
            name,
            &format!("{mode} decode, encoded again"),
            &again,
            &canonical,
        );
    }
}

fn node_tree(name: &str, bytes: &[u8]) {
    let expected = Node {
        children: vec![
            Node {
                children: vec![node("a1"), Node::default()],
                ..node("a")
            },
            Node {
                value: Some(NodeValue::IntValue(2)),
                ..node("b")
            },
        ],
        parent: Some(Box::new(Node {
            parent: Some(Box::new(node("upper"))),
            ..node("up")
        })),
        ..node("root")
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_deep(name: &str, bytes: &[u8]) {
    // 100 messages nested below the top level: the most protobuf and we accept.
    let names: Vec<String> = (1..100).map(|i| i.to_string()).collect();
    let mut n = node("leaf");
    for i in (1..100).rev() {
        n = Node {
            name: Some(Str::from(names[i - 1].clone())),
            parent: Some(Box::new(n)),
            ..Node::default()
        };
    }
    let expected = Node {
        children: vec![n],
        ..Node::default()
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);

    // One level more is past the limit (kat.py checks that protobuf refuses it too).
    let deeper = Node {
        parent: Some(Box::new(expected)),
        ..Node::default()
    }
    .encode_to_vec()
    .unwrap();
    let too_deep = |r: onnx_light::Result<()>| {
        let e = r.expect_err("101 nested messages accepted");
        assert!(
            matches!(e.kind(), ErrorKind::RecursionLimitExceeded { .. }),
            "{name}: {e}"
        );
    };
    too_deep(Node::decode(&deeper).map(drop));
    too_deep(Node::decode_owned(&deeper).map(drop));
    too_deep(Node::decode_shared(Arc::new(deeper.clone()), &DecodeOptions::default()).map(drop));
}

fn node_lists(name: &str, bytes: &[u8]) {
    let expected = Node {
        lists: Some(Repeated {
            i32: vec![1, -1],
            s: vec!["x".into()],
            color: colors(&[Color::Blue, Color::Negative]),
            ..Repeated::default()
        }),
        value: Some(NodeValue::Zig(-1)),
        ..node("lists")
    };
    check_modes::<Node<'_>, _>(name, bytes, &expected, same);
}

fn node_legacy_group(name: &str, bytes: &[u8]) {
    let expected = Node {
        value: Some(NodeValue::TextValue("t".into())),
        children: vec![Node {
            unknown: unknown_fields(vec![legacy_group(b"")]),
            ..node("c")
        }],
        unknown: unknown_fields(vec![legacy_group(&legacy_a(-1))]),
        ..node("legacy")
    };
    let d = check_modes::<Node<'_>, _>(name, bytes, &expected, same);
    for v in [&d.borrowed.clone().into_owned(), &d.copied, &d.shared] {
        assert_single_group(name, v, &legacy_a(-1));
        assert_single_group(name, &v.children[0], b"");
    }
    use WireType::{LengthDelimited as Ld, StartGroup};
    check_as_node_v1(name, bytes, &[(5, Ld), (11, StartGroup)]);
}

fn node_full(name: &str, bytes: &[u8]) {
    let expected = Node {
        children: vec![Node {
            lists: Some(Repeated {
                i32: vec![1],
                ..Repeated::default()
            }),
            unknown: unknown_fields(vec![legacy_group(&legacy_a(3))]),
            ..node("kid")
        }],
        parent: Some(Box::new(node("p"))),
        value: Some(NodeValue::IntValue(-1)),
        counts: BTreeMap::from([("k".into(), 7), ("j".into(), -7)]),
        by_id: BTreeMap::from([(
            3,
            Scalars {
                fl: Some(0.5),
                ..Scalars::default()
            },
        )]),
        lists: Some(Repeated {
            sf64: vec![1, -1],
            ..Repeated::default()
        }),
        unknown: unknown_fields(vec![legacy_group(&legacy_a(42))]),
        ..node("full")
    };
    let d = check_modes::<Node<'_>, _>(name, bytes, &expected, same);
    assert_single_group(name, &d.copied, &legacy_a(42));
    assert_single_group(name, &d.copied.children[0], &legacy_a(3));

    // As NodeV1: every field above 2 is unknown, of every wire type a Node has.
    use WireType::{LengthDelimited as Ld, StartGroup, Varint};
    let v1 = check_as_node_v1(
        name,
        bytes,
        &[
            (3, Ld),
            (4, Varint),
            (7, Ld),
            (7, Ld),
            (9, Ld),
            (10, Ld),
            (11, StartGroup),
        ],
    );
    assert_eq!(v1.name.as_deref(), Some("full"));
    let kid = &v1.children[0];
    assert_eq!(kid.name.as_deref(), Some("kid"));
    let kid_keys: Vec<_> = kid
        .unknown
        .iter()
        .map(|f| (f.number(), f.key().wire_type))
        .collect();
    assert_eq!(kid_keys, [(10, Ld), (11, StartGroup)], "{name}: kid");
    let group = v1.unknown.iter().last().unwrap();
    assert_eq!(group.raw(), legacy_group(&legacy_a(42)).raw(), "{name}");
}

type Case = fn(&str, &[u8]);

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        fn cases() -> Vec<(&'static str, Case)> {
            vec![$((stringify!($name), $name as Case)),*]
        }
    };
}

cases![
    handmade_repeated_unknown_enum,
    handmade_scalars_unknown_enum,
    node_deep,
    node_empty,
    node_empty_submessages,
    node_full,
    node_legacy_group,
    node_lists,
    node_maps,
    node_maps_upb_order,
    node_oneof_blob,
    node_oneof_int_zero,
    node_oneof_scalars,
    node_oneof_scalars_empty,
    node_oneof_text_empty,
    node_oneof_zig_min,
    node_tree,
    repeated_all,
    repeated_empty,
    repeated_long_packed,
    repeated_single,
    scalars_bytes_all_values,
    scalars_empty,
    scalars_fields_3_to_16,
    scalars_infinity,
    scalars_max,
    scalars_min,
    scalars_minus_one,
    scalars_nan,
    scalars_subnormal,
    scalars_unicode,
    scalars_zero_present,
];

// ---------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_fixture_case_has_a_rust_check() {
    let fixture: Vec<String> = fixture().into_iter().map(|(name, _)| name).collect();
    let mut rust: Vec<&str> = cases().into_iter().map(|(name, _)| name).collect();
    rust.sort_unstable();
    let missing: Vec<&String> = fixture
        .iter()
        .filter(|n| !rust.contains(&n.as_str()))
        .collect();
    let stale: Vec<&&str> = rust
        .iter()
        .filter(|n| !fixture.iter().any(|f| f == *n))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "fixture cases without a Rust check: {missing:?}; Rust checks without a fixture case: {stale:?}"
    );
}

#[test]
fn encoder_and_decoder_match_python_protobuf() {
    let checks = cases();
    let mut failed = Vec::new();
    let mut checked = 0;
    for (name, bytes) in fixture() {
        let Some((_, check)) = checks.iter().find(|(n, _)| *n == name) else {
            continue; // reported by every_fixture_case_has_a_rust_check
        };
        // Run every case, then report all failures (each one's message is printed).
        if panic::catch_unwind(AssertUnwindSafe(|| check(&name, &bytes))).is_err() {
            failed.push(name);
        }
        checked += 1;
    }
    assert!(
        failed.is_empty(),
        "cases differing from protobuf: {failed:?}"
    );
    assert_eq!(checked, checks.len(), "every Rust check ran");
}

#[test]
fn fixtures_match_python_protobuf() {
    let out = std::env::temp_dir().join(format!(
        "onnx-light-kat-vectors-{}-{}.txt",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    run_python(&python_dir().join("kat.py"), &[OsStr::new(&out)]);
    let generated = fs::read_to_string(&out);
    let _ = fs::remove_file(&out);
    let generated = generated.unwrap_or_else(|e| panic!("cannot read {}: {e}", out.display()));
    let committed = fs::read_to_string(fixture_path()).unwrap();
    if generated != committed {
        let diff = generated
            .lines()
            .zip(committed.lines())
            .find(|(g, c)| g != c)
            .map_or_else(
                || "one file has more lines".to_owned(),
                |(g, c)| format!("first differing line:\n  protobuf:  {g}\n  committed: {c}"),
            );
        panic!(
            "{} is not what tests/python/kat.py writes; rerun the script to regenerate it. {diff}",
            fixture_path().display()
        );
    }
}
