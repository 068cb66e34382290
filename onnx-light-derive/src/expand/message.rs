//! `#[derive(ProtoMessage)]`: assembles the trait impls for a struct from the parts the
//! sibling modules emit, or stubs when the input had errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{self, Container, Field, Shape, Value};
use crate::ctxt::Ctxt;
use crate::{check, expand};

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

/// Everything the generators need about the container.
pub struct Gen<'c, 'a> {
    pub c: &'c Container<'a>,
    pub krate: TokenStream,
    pub p: TokenStream,
    /// The message's lifetime, or `'__a` for a struct without one (in `Decode` impls).
    pub lt: TokenStream,
}

impl<'c, 'a> Gen<'c, 'a> {
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
}

pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let mut cx = Ctxt::new();
    let container = ast::container(&mut cx, input);
    if let Some(c) = &container {
        check::container(&mut cx, c);
    }
    let krate = container
        .as_ref()
        .and_then(|c| c.attrs.crate_path.clone())
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::onnx_light));
    match container {
        Some(c) if !cx.has_errors() => expand_ok(&c, krate),
        _ => {
            let errors = cx.into_compile_errors();
            let stubs = stubs(input, &krate);
            quote!(#errors #stubs)
        }
    }
}

fn expand_ok(c: &Container<'_>, krate: TokenStream) -> TokenStream {
    let p = expand::private(&krate);
    let lt = match c.lifetime {
        Some(l) => quote!(#l),
        None => quote!('__a),
    };
    let g = Gen {
        c,
        krate: krate.clone(),
        p: p.clone(),
        lt,
    };
    let ident = c.ident;
    let (impl_generics, ty_generics, _) = c.generics.split_for_impl();
    let name = &c.proto_name;
    let descriptor = expand::describe::descriptor(&g);
    let size_body = expand::encode::size_body(&g);
    let encode_body = expand::encode::encode_body(&g);
    let decode_impl = expand::decode::decode_impl(&g);
    let owned_impl = expand::owned::into_owned_impl(&g);
    let accessors = expand::describe::accessors(&g);
    let oneof_checks = expand::describe::oneof_checks(&g);
    quote! {
        #[allow(clippy::all, unused_qualifications, unused_variables, unused_mut, non_local_definitions)]
        const _: () = {
            impl #impl_generics #p::Message for #ident #ty_generics {
                const NAME: &'static str = #name;
                const DESCRIPTOR: &'static #p::MessageDescriptor = #descriptor;

                #[inline]
                fn compute_size(&self, sizes: &mut #p::SizeCache) -> u64 {
                    #size_body
                }

                #[inline]
                fn encode_fields<__S: #p::Sink + ?Sized>(
                    &self,
                    sink: &mut __S,
                    sizes: &mut #p::SizeCursor<'_>,
                ) -> #p::Result<()> {
                    #encode_body
                }
            }
            #decode_impl
            #owned_impl
            #oneof_checks
        };
        #accessors
    }
}

/// Minimal impls emitted next to the errors, so that code using the type does not fail
/// with dozens of unrelated "trait not implemented" errors.
fn stubs(input: &syn::DeriveInput, krate: &TokenStream) -> TokenStream {
    let p = expand::private(krate);
    let ident = &input.ident;
    let name = ident.to_string();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let first_lt = input.generics.lifetimes().next().map(|l| &l.lifetime);
    let (decode_generics, lt) = match first_lt {
        Some(l) => (quote!(#impl_generics), quote!(#l)),
        None => {
            let params = input.generics.params.iter();
            (quote!(<'__a, #(#params),*>), quote!('__a))
        }
    };
    quote! {
        #[allow(unused, clippy::all, non_local_definitions)]
        const _: () = {
            impl #impl_generics #p::Message for #ident #ty_generics #where_clause {
                const NAME: &'static str = #name;
                const DESCRIPTOR: &'static #p::MessageDescriptor =
                    &#p::MessageDescriptor { name: #name, fields: &[] };
                fn compute_size(&self, _: &mut #p::SizeCache) -> u64 { 0 }
                fn encode_fields<__S: #p::Sink + ?Sized>(
                    &self, _: &mut __S, _: &mut #p::SizeCursor<'_>,
                ) -> #p::Result<()> { #p::Ok(()) }
            }
            impl #decode_generics #p::Decode<#lt> for #ident #ty_generics #where_clause {
                fn merge_field<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                    &mut self, _: #p::FieldKey, _: &mut #p::Reader<'__b>, _: &mut __C,
                ) -> #p::Result<bool> { #p::Ok(false) }
            }
        };
    }
}
