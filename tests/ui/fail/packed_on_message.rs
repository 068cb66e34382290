use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Inner {
    #[proto(1)]
    a: i32,
}

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1, packed)]
    items: Vec<Inner>,
}

fn main() {}
