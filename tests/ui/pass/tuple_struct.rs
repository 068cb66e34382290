//! Tuple structs derive too: fields are numbered by their attributes, not their
//! position.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Pair<'a>(#[proto(2)] Option<Str<'a>>, #[proto(1, sint64)] i64);

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Wrapper(#[proto(1)] Vec<Pair<'static>>);

fn main() {
    let pair = Pair(Some("two".into()), -1);
    let buf = pair.encode_to_vec().unwrap();
    // Field 1 (sint64 -1 = zigzag 1) is written before field 2.
    assert_eq!(buf, [0x08, 0x01, 0x12, 0x03, b't', b'w', b'o']);
    let back = Pair::decode(&buf).unwrap();
    assert_eq!(back, pair);

    let w = Wrapper(vec![pair.clone().into_owned(), Pair::default()]);
    let bytes = w.encode_to_vec().unwrap();
    assert_eq!(Wrapper::decode(&bytes).unwrap(), w);
}
