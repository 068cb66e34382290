use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg<'a, 'b> {
    #[proto(1)]
    a: Option<Str<'a>>,
    #[proto(2)]
    b: Option<Str<'b>>,
}

fn main() {}
