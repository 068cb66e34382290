//! `#[derive(ProtoMessage)]`, `#[derive(ProtoOneof)]` and `#[derive(ProtoEnum)]`: protobuf
//! parse / size / serialize code for plain Rust types. Use them through the `onnx-light`
//! crate, which re-exports them; its documentation describes the attributes.
//!
//! Every derive runs the same stages, like serde_derive, and dependencies point one way
//! down this list:
//!
//! * this file: the entry points, which run the stages in order;
//! * `expand`: code generation from the `model` (`message`, `oneof`, `enumeration`
//!   assemble the impls from the parts `decode`, `encode`, `describe`, `owned` emit;
//!   `stub` stands in after errors);
//! * `model`: the validated input with the paths and lifetimes generated code uses;
//! * `check`: validation of the `ast`;
//! * `ast`: the input read into fields, variants and values, keeping syn nodes for spans;
//! * `attr`: `#[proto(...)]` syntax;
//! * `ctxt`: the error collector.
//!
//! Errors are collected in `ctxt` and reported together, each at the offending token,
//! followed by stub impls so that one mistake does not cascade. Nothing here panics on
//! any input.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod model;

use proc_macro::TokenStream;
use quote::quote;

use ctxt::Ctxt;
use model::Paths;

/// Derives protobuf encoding and decoding for a struct. See the `onnx-light` crate docs.
#[proc_macro_derive(ProtoMessage, attributes(proto))]
pub fn derive_proto_message(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => message(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives a protobuf `oneof` for an enum whose variants each hold one field.
#[proc_macro_derive(ProtoOneof, attributes(proto))]
pub fn derive_proto_oneof(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => oneof(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives a protobuf enum for a fieldless enum with explicit discriminants.
#[proc_macro_derive(ProtoEnum, attributes(proto))]
pub fn derive_proto_enum(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => enumeration(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn message(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
    let mut cx = Ctxt::new();
    let container = ast::container(&mut cx, input);
    if let Some(c) = &container {
        check::container(&mut cx, c);
    }
    let crate_path = container.as_ref().and_then(|c| c.attrs.crate_path.as_ref());
    let paths = Paths::new(model::crate_path(crate_path));
    match &container {
        Some(c) if !cx.has_errors() => expand::message::impls(&model::Message::new(c, paths)),
        _ => {
            let errors = cx.into_compile_errors();
            let stubs = expand::stub::message(input, &paths.p);
            // The accessors of the fields that could be read, so that calls to them do
            // not fail as well.
            let accessors = container
                .as_ref()
                .map(|c| expand::describe::accessors(&model::Message::new(c, paths.clone())));
            quote!(#errors #stubs #accessors)
        }
    }
}

fn oneof(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
    let mut cx = Ctxt::new();
    let o = ast::oneof(&mut cx, input);
    check::oneof(&mut cx, &o);
    let paths = Paths::new(model::crate_path(o.attrs.crate_path.as_ref()));
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        let stubs = expand::stub::oneof(input, &paths.p, o.lifetime, &o.numbers);
        return quote!(#errors #stubs);
    }
    expand::oneof::impls(&model::OneofEnum::new(&o, paths))
}

fn enumeration(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
    let mut cx = Ctxt::new();
    let e = ast::enumeration(&mut cx, input);
    check::enumeration(&mut cx, &e);
    let paths = Paths::new(model::crate_path(e.attrs.crate_path.as_ref()));
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        let stub = expand::stub::enumeration(input, &paths.p);
        return quote!(#errors #stub);
    }
    expand::enumeration::impls(&model::ProtoEnum::new(&e, paths))
}
