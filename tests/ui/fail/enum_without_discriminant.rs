use onnx_light::prelude::*;

#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Color {
    Red = 0,
    Green,
}

fn main() {}
