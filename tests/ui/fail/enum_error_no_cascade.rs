use onnx_light::prelude::*;

#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Color {
    Red = 0,
    Green,
}

#[derive(ProtoMessage, Debug, Default)]
struct Paint {
    #[proto(1)]
    color: Option<EnumValue<Color>>,
}

fn main() {
    let p = Paint::default();
    let _ = p.encode_to_vec();
    let _ = p.color();
}
