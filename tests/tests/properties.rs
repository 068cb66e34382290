//! Property tests: decode(encode(x)) == x for generated values of the custom schema in
//! every decode mode; encode(decode(b)) == b for canonical b; and no input, however
//! malformed, makes any decode mode panic.

use std::collections::BTreeMap;
use std::sync::Arc;

use onnx_light::prelude::*;
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
                prop_assert_eq!(&a, &b);
                prop_assert_eq!(&a, &c);
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
