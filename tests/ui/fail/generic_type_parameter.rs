use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg<T> {
    #[proto(1)]
    value: Option<T>,
}

fn main() {}
