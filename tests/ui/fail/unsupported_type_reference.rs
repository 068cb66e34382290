use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg<'a> {
    #[proto(1)]
    name: Option<&'a str>,
}

fn main() {}
