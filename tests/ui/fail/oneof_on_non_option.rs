use onnx_light::prelude::*;

#[derive(ProtoOneof, Debug, Clone, PartialEq)]
enum Value {
    #[proto(1)]
    Int(i64),
    #[proto(2)]
    Text(String),
}

impl Default for Value {
    fn default() -> Self {
        Value::Int(0)
    }
}

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(oneof(1, 2))]
    value: Value,
}

fn main() {}
