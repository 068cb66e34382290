use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1, parallel)]
    values: Vec<i64>,
}

fn main() {}
