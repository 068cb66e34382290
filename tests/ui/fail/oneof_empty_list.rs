use onnx_light::prelude::*;

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
enum Value {
    #[proto(1)]
    Int(i64),
}

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(oneof())]
    value: Option<Value>,
}

fn main() {}
