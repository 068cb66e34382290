//! Every mistake in a struct is reported in one compile, each at its own token.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Default)]
struct Msg {
    #[proto(0)]
    zero: i32,
    #[proto(2, packed)]
    name: String,
    #[proto(3, fixed64)]
    small: i32,
    #[proto(3)]
    dup: u64,
    #[proto(4, frobnicate)]
    unknown_key: bool,
    no_attr: f64,
}

fn main() {}
