use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(oneof(1, 2))]
    value: Option<i64>,
}

fn main() {}
