use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1)]
    small: u8,
}

fn main() {}
