//! `#[derive(ProtoMessage)]`, `#[derive(ProtoOneof)]` and `#[derive(ProtoEnum)]`: protobuf
//! parse / size / serialize code for plain Rust types. Use them through the `onnx-light`
//! crate, which re-exports them; its documentation describes the attributes.
//!
//! The crate is staged like serde_derive: `attr` reads attributes, `ast` classifies
//! fields, `check` validates, `expand` generates. Errors are collected in `ctxt` and
//! reported together, each at the offending token, followed by stub impls so that one
//! mistake does not cascade. Nothing here panics on any input.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;

use proc_macro::TokenStream;

/// Derives protobuf encoding and decoding for a struct. See the `onnx-light` crate docs.
#[proc_macro_derive(ProtoMessage, attributes(proto))]
pub fn derive_proto_message(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => expand::message::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives a protobuf `oneof` for an enum whose variants each hold one field.
#[proc_macro_derive(ProtoOneof, attributes(proto))]
pub fn derive_proto_oneof(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => expand::oneof::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives a protobuf enum for a fieldless enum with explicit discriminants.
#[proc_macro_derive(ProtoEnum, attributes(proto))]
pub fn derive_proto_enum(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => expand::enumeration::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
