use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(1, packed)]
    names: Vec<String>,
}

fn main() {}
