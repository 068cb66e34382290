use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1, required)]
    a: i32,
}

fn main() {}
