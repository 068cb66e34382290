//! Dropping (moving out) the buffer while a borrow-mode message still uses it must not
//! compile.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg<'a> {
    #[proto(1)]
    data: Option<Bytes<'a>>,
}

fn main() {
    let buf = Msg {
        data: Some(Bytes::from(vec![1u8, 2])),
    }
    .encode_to_vec()
    .unwrap();
    let msg = Msg::decode(&buf).unwrap();
    drop(buf);
    assert_eq!(msg.data(), [1, 2]);
}
