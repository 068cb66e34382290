use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1)]
    a: i32,
    b: i64,
}

fn main() {}
