//! A mistake in a oneof enum is reported once: the message holding it, its decode,
//! encode and `into_owned` add no errors of their own.

use onnx_light::prelude::*;

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
enum Value<'a> {
    #[proto(1)]
    Int(i64),
    #[proto(2, packed)]
    Text(Str<'a>),
}

#[derive(ProtoMessage, Debug, Default)]
struct Msg<'a> {
    #[proto(3)]
    name: Option<Str<'a>>,
    #[proto(oneof(1, 2))]
    value: Option<Value<'a>>,
}

fn main() {
    let buf = Msg::default().encode_to_vec().unwrap();
    let view = Msg::decode(&buf).unwrap();
    let owned: Msg<'static> = view.into_owned();
    println!("{owned:?}");
}
