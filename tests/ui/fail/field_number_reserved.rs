use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(19000)]
    a: i32,
}

fn main() {}
