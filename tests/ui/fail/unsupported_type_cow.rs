use onnx_light::prelude::*;
use std::borrow::Cow;

#[derive(ProtoMessage, Default)]
struct Msg<'a> {
    #[proto(1)]
    name: Option<Cow<'a, str>>,
}

fn main() {}
