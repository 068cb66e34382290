use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(0)]
    a: i32,
}

fn main() {}
