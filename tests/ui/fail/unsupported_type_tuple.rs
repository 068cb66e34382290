use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1)]
    point: (i32, i32),
}

fn main() {}
