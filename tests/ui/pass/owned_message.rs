//! A message without a lifetime: every field owns its data, it decodes from a buffer
//! that does not outlive it, and it may hold itself recursively.

use std::collections::HashMap;

use onnx_light::prelude::*;

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "test.Owned")]
struct Owned {
    #[proto(1)]
    name: String,
    #[proto(2)]
    data: Vec<u8>,
    #[proto(3, packed)]
    values: Vec<u64>,
    #[proto(4)]
    child: Option<Box<Owned>>,
    #[proto(5)]
    tags: HashMap<String, String>,
    #[proto(6, sint32)]
    delta: i32,
    #[proto(7, fixed64)]
    hash: Option<u64>,
    #[proto(8, name = "ratio_value", default = 0.5)]
    ratio: Option<f32>,
    #[proto(skip)]
    cache: Vec<u8>,
}

fn decode_from_temporary() -> Owned {
    let buf = Owned {
        name: "temp".into(),
        ..Owned::default()
    }
    .encode_to_vec()
    .unwrap();
    // No lifetime: the result does not borrow `buf`.
    Owned::decode(&buf).unwrap()
}

fn main() {
    assert_eq!(<Owned as Message>::NAME, "test.Owned");
    let msg = Owned {
        name: "root".into(),
        data: vec![0, 255],
        values: vec![1, 300, u64::MAX],
        child: Some(Box::new(Owned {
            name: "leaf".into(),
            delta: -2,
            ..Owned::default()
        })),
        tags: HashMap::from([("k".to_string(), "v".to_string())]),
        delta: -1,
        hash: Some(0xdead_beef),
        ratio: None,
        cache: vec![9, 9, 9],
    };
    let buf = msg.encode_to_vec().unwrap();
    assert_eq!(buf.len() as u64, msg.encoded_len());
    let back = Owned::decode(&buf).unwrap();
    assert!(back.cache.is_empty(), "skipped fields are not encoded");
    assert_eq!(
        back,
        Owned {
            cache: Vec::new(),
            ..msg
        }
    );
    assert_eq!(back.ratio(), 0.5);
    assert_eq!(back.hash(), 0xdead_beef);
    assert_eq!(back.child.as_ref().unwrap().delta, -2);
    assert_eq!(decode_from_temporary().name, "temp");
    // sint32 -1 is zigzag 1: key (6 << 3 | 0) = 0x30, then 0x01.
    let only_delta = Owned {
        delta: -1,
        ..Owned::default()
    }
    .encode_to_vec()
    .unwrap();
    assert_eq!(only_delta, [0x30, 0x01]);
}
