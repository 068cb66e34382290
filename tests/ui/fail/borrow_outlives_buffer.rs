//! Borrow mode ties the message to its input: using it after the buffer is gone must
//! not compile.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg<'a> {
    #[proto(1)]
    name: Option<Str<'a>>,
}

fn main() {
    let msg = {
        let buf = Msg {
            name: Some("x".into()),
        }
        .encode_to_vec()
        .unwrap();
        Msg::decode(&buf).unwrap()
    };
    println!("{}", msg.name());
}
