use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(536870911)]
    largest: i32,
    #[proto(536870912)]
    too_large: i32,
}

fn main() {}
