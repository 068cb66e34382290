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
    // Variant 2 of `Value` is not listed.
    #[proto(oneof(1))]
    value: Option<Value>,
}

fn main() {}
