//! The validated description of a derive input that code generation consumes: the AST
//! that passed `check`, with the paths and lifetimes the generated code is written in.
//! It knows nothing of how impls are assembled; the generators in `expand` read it and
//! nothing here reads them.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{Container, Enum, Field, Oneof, Shape, Value, Variant};

/// The path through which generated code reaches the runtime.
fn private(krate: &TokenStream) -> TokenStream {
    quote!(#krate::__private)
}

/// The runtime crate's path: `#[proto(crate = "...")]`, or `::onnx_light`.
pub fn crate_path(path: Option<&syn::Path>) -> TokenStream {
    path.map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::onnx_light))
}

/// The paths generated code names: the runtime crate and its `__private` module.
#[derive(Clone)]
pub struct Paths {
    pub krate: TokenStream,
    pub p: TokenStream,
}

impl Paths {
    pub fn new(krate: TokenStream) -> Self {
        let p = private(&krate);
        Paths { krate, p }
    }
}

/// The lifetime a `Decode` impl is written for: the type's own, or `'__a` for a type
/// without one.
fn decode_lifetime(lifetime: Option<&syn::Lifetime>) -> TokenStream {
    match lifetime {
        Some(l) => quote!(#l),
        None => quote!('__a),
    }
}

/// One entry of the field-number-ordered list that sizing, encoding and the descriptor
/// walk: an ordinary field, or one variant of a oneof.
pub enum Item<'f, 'a> {
    Field(&'f Field<'a>),
    Variant(&'f Field<'a>, u32),
}

impl Item<'_, '_> {
    pub fn number(&self) -> u32 {
        match self {
            Item::Field(f) => f.number().unwrap_or(0),
            Item::Variant(_, n) => *n,
        }
    }
}

/// A `#[derive(ProtoMessage)]` struct, ready for code generation.
pub struct Message<'c, 'a> {
    pub c: &'c Container<'a>,
    pub krate: TokenStream,
    pub p: TokenStream,
    /// The message's lifetime, or `'__a` for a struct without one (in `Decode` impls).
    pub lt: TokenStream,
}

impl<'c, 'a> Message<'c, 'a> {
    pub fn new(c: &'c Container<'a>, paths: Paths) -> Self {
        Message {
            c,
            krate: paths.krate,
            p: paths.p,
            lt: decode_lifetime(c.lifetime),
        }
    }

    pub fn items(&self) -> Vec<Item<'c, 'a>> {
        let mut items = Vec::new();
        for f in &self.c.fields {
            match &f.shape {
                Shape::Oneof(_) => {
                    for n in f.attrs.oneof.iter().flat_map(|l| l.value.iter()) {
                        items.push(Item::Variant(f, n.value));
                    }
                }
                Shape::Unknown | Shape::Skip => {}
                _ => items.push(Item::Field(f)),
            }
        }
        items.sort_by_key(Item::number);
        items
    }

    /// The codec type of a single-valued, repeated or boxed field.
    pub fn codec(&self, v: &Value, f: &Field<'_>) -> TokenStream {
        v.codec(&self.krate, f.attrs.encoding.as_ref().map(|e| e.value))
    }

    /// Codec types of a map field's key and value.
    pub fn map_codecs(&self, k: &Value, v: &Value, f: &Field<'_>) -> (TokenStream, TokenStream) {
        (
            k.codec(&self.krate, f.attrs.key.as_ref().map(|e| e.value)),
            v.codec(&self.krate, f.attrs.value.as_ref().map(|e| e.value)),
        )
    }

    /// The lifetime at which a field's codec is instantiated.
    pub fn field_lt(&self, f: &Field<'_>) -> TokenStream {
        if f.borrows {
            self.lt.clone()
        } else {
            quote!('static)
        }
    }

    /// The lifetime and context expression a field's codec is called with.
    pub fn codec_lifetime_and_ctx(&self, f: &Field<'_>) -> (TokenStream, TokenStream) {
        codec_lifetime_and_ctx(f.borrows, &self.lt, &self.p)
    }
}

/// One variant of a oneof that passed `check`: it holds exactly one readable value.
pub struct OneofVariant<'v, 'a> {
    pub v: &'v Variant<'a>,
    pub value: &'v Value,
    pub number: u32,
}

/// A `#[derive(ProtoOneof)]` enum, ready for code generation.
pub struct OneofEnum<'o, 'a> {
    pub o: &'o Oneof<'a>,
    pub krate: TokenStream,
    pub p: TokenStream,
    /// The enum's lifetime, or `'__a` for an enum without one (in `OneofDecode` impls).
    pub lt: TokenStream,
}

impl<'o, 'a> OneofEnum<'o, 'a> {
    pub fn new(o: &'o Oneof<'a>, paths: Paths) -> Self {
        OneofEnum {
            o,
            krate: paths.krate,
            p: paths.p,
            lt: decode_lifetime(o.lifetime),
        }
    }

    /// The variants in declaration order.
    pub fn variants(&self) -> impl Iterator<Item = OneofVariant<'o, 'a>> + '_ {
        self.o.variants.iter().filter_map(|v| {
            Some(OneofVariant {
                v,
                value: v.value.as_ref()?,
                number: v.number()?,
            })
        })
    }

    /// The codec type of a variant.
    pub fn codec(&self, v: &OneofVariant<'_, '_>) -> TokenStream {
        v.value
            .codec(&self.krate, v.v.attrs.encoding.as_ref().map(|e| e.value))
    }

    /// The lifetime at which a variant's codec is instantiated in the descriptor.
    pub fn variant_lt(&self, v: &OneofVariant<'_, '_>) -> TokenStream {
        if v.v.borrows {
            self.lt.clone()
        } else {
            quote!('static)
        }
    }

    /// The lifetime and context expression a variant's codec is called with.
    pub fn codec_lifetime_and_ctx(&self, v: &OneofVariant<'_, '_>) -> (TokenStream, TokenStream) {
        codec_lifetime_and_ctx(v.v.borrows, &self.lt, &self.p)
    }
}

/// A `#[derive(ProtoEnum)]` enum, ready for code generation.
pub struct ProtoEnum<'e, 'a> {
    pub e: &'e Enum<'a>,
    pub p: TokenStream,
}

impl<'e, 'a> ProtoEnum<'e, 'a> {
    pub fn new(e: &'e Enum<'a>, paths: Paths) -> Self {
        ProtoEnum { e, p: paths.p }
    }

    /// The value a field holds when it is unset: the first one declared.
    pub fn default_value(&self) -> i32 {
        self.e.values.first().map(|v| v.number).unwrap_or(0)
    }
}

/// The lifetime a field's codec is instantiated at, and the context expression to pass:
/// borrowing fields use the message's lifetime and the caller's context; all others
/// are `'static` through `ToStatic`, which copies anything the context would borrow.
fn codec_lifetime_and_ctx(
    borrows: bool,
    lifetime: &TokenStream,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    if borrows {
        (lifetime.clone(), quote!(ctx))
    } else {
        (quote!('static), quote!(&mut #p::ToStatic::new(&mut *ctx)))
    }
}
