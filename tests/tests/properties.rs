//! Property tests: decode(encode(x)) == x for generated values of the custom schema in
//! every decode mode; encode(decode(b)) == b for canonical b; the same x from encodings
//! another encoder may write (fields shuffled, numbers packed or not, messages split in
//! two records); and no input, however malformed, makes any decode mode panic.

use std::collections::BTreeMap;
use std::sync::Arc;

use onnx_light::prelude::*;
use onnx_light::wire::{Reader, WireType};
use onnx_light::{ByteOwner, DecodeOptions};
use onnx_light_tests::kat::{Color, Node, NodeV1, NodeValue, Repeated, Scalars};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn text() -> impl Strategy<Value = Str<'static>> {
    "\\PC{0,12}".prop_map(Str::from)
}

fn bytes() -> impl Strategy<Value = Bytes<'static>> {
    vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

fn color() -> impl Strategy<Value = EnumValue<Color>> {
    prop_oneof![
        Just(EnumValue::from(Color::Red)),
        Just(EnumValue::from(Color::Negative)),
        any::<i32>().prop_map(EnumValue::from_raw),
    ]
}

/// Floats without NaN (NaN != NaN would make equality checks meaningless); -0.0 and
/// infinities included.
fn f32s() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>().prop_filter("not NaN", |f| !f.is_nan()),
        Just(-0.0f32),
        Just(f32::INFINITY)
    ]
}

fn f64s() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
        Just(-0.0f64),
        Just(f64::NEG_INFINITY)
    ]
}

prop_compose! {
    fn scalars()(
        ints in (any::<Option<i32>>(), any::<Option<i64>>(), any::<Option<u32>>(), any::<Option<u64>>(),
                 any::<Option<i32>>(), any::<Option<i64>>()),
        fixed in (any::<Option<u32>>(), any::<Option<u64>>(), any::<Option<i32>>(), any::<Option<i64>>()),
        fl in proptest::option::of(f32s()),
        db in proptest::option::of(f64s()),
        b in any::<Option<bool>>(),
        s in proptest::option::of(text()),
        by in proptest::option::of(bytes()),
        color in proptest::option::of(color()),
    ) -> Scalars<'static> {
        Scalars {
            i32: ints.0, i64: ints.1, u32: ints.2, u64: ints.3, s32: ints.4, s64: ints.5,
            f32: fixed.0, f64: fixed.1, sf32: fixed.2, sf64: fixed.3,
            fl, db, b, s, by, color, unknown: UnknownFields::new(),
        }
    }
}

prop_compose! {
    fn repeated()(
        ints in (vec(any::<i32>(), 0..5), vec(any::<i64>(), 0..5), vec(any::<u32>(), 0..5),
                 vec(any::<u64>(), 0..5), vec(any::<i32>(), 0..5), vec(any::<i64>(), 0..5)),
        fixed in (vec(any::<u32>(), 0..5), vec(any::<u64>(), 0..5), vec(any::<i32>(), 0..5),
                  vec(any::<i64>(), 0..5)),
        floats in (vec(f32s(), 0..5), vec(f64s(), 0..5)),
        b in vec(any::<bool>(), 0..5),
        s in vec(text(), 0..4),
        by in vec(bytes(), 0..4),
        colors in (vec(color(), 0..4), vec(color(), 0..4)),
    ) -> Repeated<'static> {
        Repeated {
            i32: ints.0, i64: ints.1, u32: ints.2, u64: ints.3, s32: ints.4, s64: ints.5,
            f32: fixed.0, f64: fixed.1, sf32: fixed.2, sf64: fixed.3,
            fl: floats.0, db: floats.1, b, s, by,
            color: colors.0, color_unpacked: colors.1, unknown: UnknownFields::new(),
        }
    }
}

fn node_value() -> impl Strategy<Value = NodeValue<'static>> {
    prop_oneof![
        any::<i64>().prop_map(NodeValue::IntValue),
        text().prop_map(NodeValue::TextValue),
        scalars().prop_map(|s| NodeValue::Scalars(Box::new(s))),
        bytes().prop_map(NodeValue::Blob),
        any::<i32>().prop_map(NodeValue::Zig),
    ]
}

fn leaf() -> impl Strategy<Value = Node<'static>> {
    (
        proptest::option::of(text()),
        proptest::option::of(node_value()),
        btree_map(text(), any::<i64>(), 0..3),
        btree_map(any::<i32>(), scalars(), 0..2),
        proptest::option::of(repeated()),
    )
        .prop_map(|(name, value, counts, by_id, lists)| Node {
            name,
            value,
            counts,
            by_id,
            lists,
            ..Node::default()
        })
}

fn node() -> impl Strategy<Value = Node<'static>> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        (
            leaf(),
            vec(inner.clone(), 0..3),
            proptest::option::of(inner),
        )
            .prop_map(|(mut n, children, parent)| {
                n.children = children;
                n.parent = parent.map(Box::new);
                n
            })
    })
}

fn decode_all_modes(bytes: &[u8]) -> [Result<Node<'_>, onnx_light::Error>; 3] {
    let owner: ByteOwner = Arc::new(bytes.to_vec());
    let small = DecodeOptions {
        shared_threshold: 4,
        ..DecodeOptions::default()
    };
    [
        Node::decode(bytes),
        Node::decode_owned(bytes),
        Node::decode_shared(owner, &small),
    ]
}

/// Runs a property on a thread with a large stack: proptest's generated strategy code
/// for these nested types needs far more than the 2 MiB test threads get in debug builds.
/// (The decoder itself handles the full nesting limit on a 256 KiB stack.)
fn check<S, F>(cases: u32, strategy: fn() -> S, test: F)
where
    S: Strategy + 'static,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
{
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
                cases,
                ..ProptestConfig::default()
            });
            runner.run(&strategy(), test).map_err(|e| e.to_string())
        })
        .expect("spawn property thread");
    match handle.join() {
        Ok(Ok(())) => {}
        Ok(Err(failure)) => panic!("{failure}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[test]
fn decode_of_encode_is_identity_in_every_mode() {
    check(256, node, |n| {
        let bytes = n.encode_to_vec().unwrap();
        prop_assert_eq!(bytes.len() as u64, n.encoded_len());
        for decoded in decode_all_modes(&bytes) {
            prop_assert_eq!(&decoded.unwrap(), &n);
        }
        Ok(())
    });
}

#[test]
fn encode_of_decode_is_identity_on_canonical_bytes() {
    check(256, node, |n| {
        let bytes = n.encode_to_vec().unwrap();
        for decoded in decode_all_modes(&bytes) {
            prop_assert_eq!(decoded.unwrap().encode_to_vec().unwrap(), bytes.clone());
        }
        // Through an older schema that sees most fields as unknown, too.
        prop_assert_eq!(
            NodeV1::decode(&bytes).unwrap().encode_to_vec().unwrap(),
            bytes.clone()
        );
        prop_assert_eq!(
            NodeV1::decode_owned(&bytes)
                .unwrap()
                .encode_to_vec()
                .unwrap(),
            bytes
        );
        Ok(())
    });
}

#[test]
fn encode_to_slice_and_write_to_agree_with_encode_to_vec() {
    check(128, node, |n| {
        let bytes = n.encode_to_vec().unwrap();
        let mut buf = vec![0u8; bytes.len()];
        n.encode_to_slice(&mut buf).unwrap();
        prop_assert_eq!(&buf, &bytes);
        let mut out = Vec::new();
        prop_assert_eq!(n.write_to(&mut out).unwrap(), bytes.len() as u64);
        prop_assert_eq!(out, bytes);
        Ok(())
    });
}

#[test]
fn arbitrary_bytes_never_panic_in_any_mode() {
    check(
        2048,
        || vec(any::<u8>(), 0..512),
        |bytes| {
            let _ = decode_all_modes(&bytes);
            let _ = NodeV1::decode(&bytes);
            let _ = Repeated::decode_owned(&bytes);
            let _ = Scalars::decode(&bytes);
            Ok(())
        },
    );
}

fn corrupted() -> impl Strategy<Value = Vec<u8>> {
    (
        node(),
        vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(n, flips, cut)| {
            let mut bytes = n.encode_to_vec().unwrap();
            if !bytes.is_empty() {
                for (at, value) in flips {
                    let i = at.index(bytes.len());
                    bytes[i] = value;
                }
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            bytes
        })
}

#[test]
fn corrupted_valid_encodings_never_panic_and_agree_across_modes() {
    check(512, corrupted, |bytes| {
        let [a, b, c] = decode_all_modes(&bytes);
        // All modes accept or reject the same input, with the same error.
        match (a, b, c) {
            (Ok(a), Ok(b), Ok(c)) => {
                // Compared by their encodings: flipped bytes can make a float NaN, which
                // is not equal to itself.
                let a = a.encode_to_vec().unwrap();
                prop_assert_eq!(&a, &b.encode_to_vec().unwrap());
                prop_assert_eq!(&a, &c.encode_to_vec().unwrap());
            }
            (Err(a), Err(b), Err(c)) => {
                prop_assert_eq!(a.kind(), b.kind());
                prop_assert_eq!(a.kind(), c.kind());
                prop_assert_eq!(a.offset(), b.offset());
                prop_assert_eq!(a.offset(), c.offset());
            }
            (a, b, c) => {
                prop_assert!(
                    false,
                    "modes disagree: {:?} {:?} {:?}",
                    a.is_ok(),
                    b.is_ok(),
                    c.is_ok()
                )
            }
        }
        Ok(())
    });
}

#[test]
fn maps_with_duplicate_keys_keep_the_last_entry() {
    let mut first = Node::default();
    first.counts.insert("k".into(), 1);
    let mut second = Node::default();
    second.counts.insert("k".into(), 2);
    let mut bytes = first.encode_to_vec().unwrap();
    bytes.extend(second.encode_to_vec().unwrap());
    let decoded = Node::decode(&bytes).unwrap();
    assert_eq!(decoded.counts, BTreeMap::from([(Str::from("k"), 2)]));
}

// ---- other encoders' encodings -----------------------------------------------------------

/// A small deterministic generator, seeded by proptest, for the choices below.
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, number: u32, wire_type: WireType) {
    put_varint(out, u64::from(number) << 3 | wire_type as u64);
}

fn put_len(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
    put_key(out, number, WireType::LengthDelimited);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// One record of a message: its number, wire type, and value bytes (for LEN, the payload
/// without its length prefix).
struct Record {
    number: u32,
    wire_type: WireType,
    value: Vec<u8>,
}

fn records(bytes: &[u8]) -> Vec<Record> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        let key = r.read_key().unwrap();
        let value = if key.wire_type == WireType::LengthDelimited {
            r.read_length_delimited().unwrap().0.to_vec()
        } else {
            let start = r.position();
            r.skip(key).unwrap();
            r.consumed_since(start).0.to_vec()
        };
        out.push(Record {
            number: key.number,
            wire_type: key.wire_type,
            value,
        });
    }
    out
}

fn put_record(out: &mut Vec<u8>, r: &Record) {
    if r.wire_type == WireType::LengthDelimited {
        put_len(out, r.number, &r.value);
    } else {
        put_key(out, r.number, r.wire_type);
        out.extend_from_slice(&r.value);
    }
}

/// The records in a random interleaving that keeps the order of each field's own
/// records (which carries meaning for repeated fields).
fn interleave(records: Vec<Record>, c: &mut Choices) -> Vec<Record> {
    let mut queues: BTreeMap<u32, std::collections::VecDeque<Record>> = BTreeMap::new();
    for r in records {
        queues.entry(r.number).or_default().push_back(r);
    }
    let mut out = Vec::new();
    while !queues.is_empty() {
        let numbers: Vec<u32> = queues.keys().copied().collect();
        let n = numbers[c.below(numbers.len())];
        let q = queues.get_mut(&n).unwrap();
        out.extend(q.pop_front());
        if q.is_empty() {
            queues.remove(&n);
        }
    }
    out
}

/// A singular message field's payload, sometimes written as two records (protobuf
/// merges them back) split at a record boundary.
fn put_message(out: &mut Vec<u8>, number: u32, payload: &[u8], c: &mut Choices) {
    let bounds: Vec<usize> = {
        let mut r = Reader::new(payload);
        let mut b = Vec::new();
        while !r.is_empty() {
            let key = r.read_key().unwrap();
            r.skip(key).unwrap();
            b.push(r.position());
        }
        b
    };
    if bounds.len() > 1 && c.coin() {
        let at = bounds[c.below(bounds.len() - 1)];
        put_len(out, number, &payload[..at]);
        put_len(out, number, &payload[at..]);
    } else {
        put_len(out, number, payload);
    }
}

/// The element wire type of `Repeated`'s scalar fields.
fn repeated_scalar(number: u32) -> Option<WireType> {
    match number {
        1..=6 | 13 | 16 | 17 => Some(WireType::Varint),
        7 | 9 | 11 => Some(WireType::Fixed32),
        8 | 10 | 12 => Some(WireType::Fixed64),
        _ => None,
    }
}

/// A `Repeated` as another encoder may write it: every scalar field's elements packed
/// or not, in runs of random length, fields interleaved.
fn reshape_repeated(bytes: &[u8], c: &mut Choices) -> Vec<u8> {
    // Every element on its own, unpacked.
    let mut elements = Vec::new();
    for r in records(bytes) {
        match repeated_scalar(r.number) {
            Some(wt) if r.wire_type == WireType::LengthDelimited => {
                let mut p = Reader::new(&r.value);
                while !p.is_empty() {
                    let start = p.position();
                    match wt {
                        WireType::Fixed32 => drop(p.read_fixed32().unwrap()),
                        WireType::Fixed64 => drop(p.read_fixed64().unwrap()),
                        _ => drop(p.read_varint().unwrap()),
                    }
                    elements.push(Record {
                        number: r.number,
                        wire_type: wt,
                        value: r.value[start..p.position()].to_vec(),
                    });
                }
            }
            _ => elements.push(r),
        }
    }
    let mut out = Vec::new();
    let mut records = interleave(elements, c).into_iter().peekable();
    while let Some(r) = records.next() {
        if repeated_scalar(r.number).is_none() || c.coin() {
            put_record(&mut out, &r);
            continue;
        }
        // A packed run of this element and some of the next ones of the same field.
        let mut run = r.value;
        while c.coin() {
            match records.next_if(|n| n.number == r.number && n.wire_type == r.wire_type) {
                Some(n) => run.extend(n.value),
                None => break,
            }
        }
        put_len(&mut out, r.number, &run);
    }
    out
}

/// A `Node` as another encoder may write it: fields interleaved, nested messages
/// reshaped too, singular messages sometimes split in two records.
fn reshape_node(bytes: &[u8], c: &mut Choices) -> Vec<u8> {
    let mut out = Vec::new();
    for r in interleave(records(bytes), c) {
        match r.number {
            2 => put_len(&mut out, 2, &reshape_node(&r.value, c)),
            3 => {
                let payload = reshape_node(&r.value, c);
                put_message(&mut out, 3, &payload, c);
            }
            6 => {
                let payload: Vec<u8> = interleave(records(&r.value), c)
                    .iter()
                    .flat_map(|s| {
                        let mut v = Vec::new();
                        put_record(&mut v, s);
                        v
                    })
                    .collect();
                put_message(&mut out, 6, &payload, c);
            }
            10 => {
                let payload = reshape_repeated(&r.value, c);
                put_message(&mut out, 10, &payload, c);
            }
            _ => put_record(&mut out, &r),
        }
    }
    out
}

#[test]
fn other_encoders_encodings_decode_to_the_same_value() {
    check(
        256,
        || (node(), any::<u64>()),
        |(n, seed)| {
            let canonical = n.encode_to_vec().unwrap();
            let mut c = Choices(seed | 1);
            let reshaped = reshape_node(&canonical, &mut c);
            for (mode, decoded) in ["borrow", "copy", "shared"]
                .into_iter()
                .zip(decode_all_modes(&reshaped))
            {
                let decoded = decoded.map_err(|e| TestCaseError::fail(format!("{mode}: {e}")))?;
                prop_assert_eq!(&decoded, &n, "{} mode", mode);
                prop_assert_eq!(decoded.encode_to_vec().unwrap(), canonical.clone());
            }
            Ok(())
        },
    );
}
