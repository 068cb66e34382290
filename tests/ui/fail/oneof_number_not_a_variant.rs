use onnx_light::prelude::*;

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
enum Value {
    #[proto(1)]
    Int(i64),
    #[proto(2)]
    Text(String),
}

#[derive(ProtoMessage, Default)]
struct Msg {
    // 3 is not a variant of `Value` (and its variant 2 is not listed).
    #[proto(oneof(1, 3))]
    value: Option<Value>,
}

fn main() {}
