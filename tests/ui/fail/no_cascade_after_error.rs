//! One bad attribute: that error alone is reported. The stub impls emitted next to it
//! keep the uses below (encoding, decoding, `into_owned`, accessors, a message holding
//! this one) from adding "trait not implemented" or "no method" errors.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Debug, Default)]
struct Msg<'a> {
    #[proto(1, sint32)]
    name: Option<Str<'a>>,
    #[proto(2)]
    count: Option<i64>,
}

#[derive(ProtoMessage, Debug, Default)]
struct Outer<'a> {
    #[proto(1)]
    inner: Option<Msg<'a>>,
    #[proto(2)]
    list: Vec<Msg<'a>>,
}

fn main() {
    let buf = Msg::default().encode_to_vec().unwrap();
    let view = Msg::decode(&buf).unwrap();
    println!("{} {} {}", view.name(), view.count(), view.encoded_len());
    let owned: Msg<'static> = view.into_owned();
    let copied: Msg<'static> = Msg::decode_owned(&buf).unwrap();
    println!("{owned:?} {copied:?}");
    let outer = Outer::decode(&buf).unwrap().into_owned();
    println!("{outer:?}");
}
