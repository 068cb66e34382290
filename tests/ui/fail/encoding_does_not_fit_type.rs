use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1, sint64)]
    a: i32,
}

fn main() {}
