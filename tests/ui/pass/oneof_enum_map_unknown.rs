//! Everything together: a oneof (with a boxed recursive variant), an open enum, maps,
//! unknown fields kept by an older schema, and a recursive boxed message.

use std::collections::BTreeMap;

use onnx_light::prelude::*;

#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq)]
#[proto(name = "test.Kind")]
enum Kind {
    Leaf = 0,
    Branch = 1,
    #[proto(name = "MINUS_ONE")]
    Negative = -1,
}

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
enum Payload<'a> {
    #[proto(4)]
    Number(i64),
    #[proto(5)]
    Text(Str<'a>),
    #[proto(6)]
    Subtree(Box<Tree<'a>>),
    #[proto(8, sint32)]
    Zig(i32),
}

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "test.Tree")]
struct Tree<'a> {
    #[proto(1)]
    name: Option<Str<'a>>,
    #[proto(2)]
    kind: Option<EnumValue<Kind>>,
    #[proto(3)]
    parent: Option<Box<Tree<'a>>>,
    #[proto(oneof(4, 5, 6, 8))]
    payload: Option<Payload<'a>>,
    #[proto(7)]
    counts: BTreeMap<Str<'a>, i64>,
    #[proto(9, key = sint32, value = fixed64)]
    by_id: BTreeMap<i32, u64>,
    #[proto(10, packed)]
    kinds: Vec<EnumValue<Kind>>,
    #[proto(unknown_fields)]
    unknown: UnknownFields<'a>,
}

/// The same message as an older schema knew it: fields 1 and 3 only.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "test.Tree")]
struct TreeV1<'a> {
    #[proto(1)]
    name: Option<Str<'a>>,
    #[proto(3)]
    parent: Option<Box<TreeV1<'a>>>,
    #[proto(unknown_fields)]
    unknown: UnknownFields<'a>,
}

fn main() {
    let tree = Tree {
        name: Some("root".into()),
        kind: Some(Kind::Branch.into()),
        parent: Some(Box::new(Tree {
            name: Some("up".into()),
            kind: Some(EnumValue::from_raw(42)), // unknown to this schema: kept
            ..Tree::default()
        })),
        payload: Some(Payload::Subtree(Box::new(Tree {
            payload: Some(Payload::Text("inner".into())),
            ..Tree::default()
        }))),
        counts: BTreeMap::from([("x".into(), 1), ("y".into(), -1)]),
        by_id: BTreeMap::from([(-3, 3)]),
        kinds: vec![Kind::Leaf.into(), Kind::Negative.into()],
        unknown: UnknownFields::default(),
    };
    let buf = tree.encode_to_vec().unwrap();
    let back = Tree::decode(&buf).unwrap();
    assert_eq!(back, tree);
    assert_eq!(back.kind(), Kind::Branch);
    let parent_kind = back.parent.as_ref().unwrap().kind();
    assert!(!parent_kind.is_known());
    assert_eq!(parent_kind.raw(), 42);
    match &back.payload {
        Some(Payload::Subtree(t)) => {
            assert!(matches!(&t.payload, Some(Payload::Text(s)) if s == "inner"));
        }
        other => panic!("wrong variant: {other:?}"),
    }

    // The old schema keeps what it does not know and writes it back (after its known
    // fields, as protobuf does): nothing is lost.
    let old = TreeV1::decode(&buf).unwrap();
    assert_eq!(old.name.as_deref(), Some("root"));
    assert_eq!(old.unknown.len(), 6);
    let rewritten = old.encode_to_vec().unwrap();
    assert_eq!(rewritten.len(), buf.len());
    assert_eq!(Tree::decode(&rewritten).unwrap(), tree);

    // The last oneof variant on the wire wins.
    let zig = Tree {
        payload: Some(Payload::Zig(-5)),
        ..Tree::default()
    };
    let num = Tree {
        payload: Some(Payload::Number(5)),
        ..Tree::default()
    };
    let mut both = zig.encode_to_vec().unwrap();
    both.extend(num.encode_to_vec().unwrap());
    assert_eq!(
        Tree::decode(&both).unwrap().payload,
        Some(Payload::Number(5))
    );

    let owned: Tree<'static> = back.into_owned();
    drop(buf);
    assert_eq!(owned, tree);
}
