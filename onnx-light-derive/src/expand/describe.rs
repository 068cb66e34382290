//! Emits the static `MessageDescriptor`, the compile-time oneof consistency checks and the
//! default-returning accessors.

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};

use crate::ast::{Shape, Value};
use crate::model::{Item, Message};

pub fn descriptor(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let name = &g.c.proto_name;
    let entries = g.items().into_iter().map(|item| match item {
        Item::Variant(f, n) => {
            let ty = match &f.shape {
                Shape::Oneof(ty) => ty,
                _ => unreachable!("variants come from oneof fields"),
            };
            let oneof = &f.proto_name;
            quote!(#p::field::oneof_field(<#ty as #p::Oneof>::FIELDS, #n, #oneof))
        }
        Item::Field(f) => {
            let fname = &f.proto_name;
            let n = f.number().unwrap_or(0);
            let lt = g.field_lt(f);
            let packed = f.attrs.packed.is_some();
            let (kind, label) = match &f.shape {
                Shape::Optional(v) | Shape::Boxed(v) => {
                    let c = g.codec(v, f);
                    (quote!(<#c as #p::Codec<#lt>>::KIND), quote!(Optional))
                }
                Shape::Implicit(v) => {
                    let c = g.codec(v, f);
                    (quote!(<#c as #p::Codec<#lt>>::KIND), quote!(Implicit))
                }
                Shape::Repeated(v) => {
                    let c = g.codec(v, f);
                    (quote!(<#c as #p::Codec<#lt>>::KIND), quote!(Repeated))
                }
                Shape::Map(k, v) => {
                    let (kc, vc) = g.map_codecs(k, v, f);
                    (
                        quote!(#p::FieldKind::Map(&<#kc as #p::Codec<#lt>>::KIND, &<#vc as #p::Codec<#lt>>::KIND)),
                        quote!(Repeated),
                    )
                }
                Shape::Oneof(_) | Shape::Unknown | Shape::Skip => unreachable!("not items"),
            };
            quote! {
                #p::FieldDescriptor {
                    name: #fname,
                    number: #n,
                    kind: #kind,
                    label: #p::Label::#label,
                    packed: #packed,
                    oneof: #p::None,
                }
            }
        }
    });
    quote!(&#p::MessageDescriptor { name: #name, fields: &[#(#entries),*] })
}

/// A build-time assertion per oneof field that the numbers listed in `oneof(...)` are
/// exactly the enum's variants.
pub fn oneof_checks(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let checks = g.c.fields.iter().filter_map(|f| {
        let Shape::Oneof(ty) = &f.shape else { return None };
        let ty = with_static_lifetimes(ty);
        let numbers = f.attrs.oneof.iter().flat_map(|l| l.value.iter()).map(|n| n.value);
        let msg = format!(
            "the numbers in #[proto(oneof(...))] on `{}` must be exactly the field numbers of the oneof enum's variants",
            f.proto_name
        );
        Some(quote! {
            const _: () = assert!(
                #p::field::oneof_numbers_match(<#ty as #p::Oneof>::FIELDS, &[#(#numbers),*]),
                #msg
            );
        })
    });
    quote!(#(#checks)*)
}

/// Replaces every lifetime except `'static` in `ty` with `'static`.
fn with_static_lifetimes(ty: &syn::Type) -> TokenStream {
    fn walk(ts: TokenStream) -> TokenStream {
        let mut out = Vec::new();
        let mut prev_tick = false;
        for tt in ts {
            match tt {
                TokenTree::Punct(p) if p.as_char() == '\'' => {
                    prev_tick = true;
                    out.push(TokenTree::Punct(p));
                    continue;
                }
                TokenTree::Ident(i) if prev_tick => {
                    out.push(TokenTree::Ident(proc_macro2::Ident::new(
                        "static",
                        i.span(),
                    )));
                }
                TokenTree::Group(g) => {
                    let mut ng = Group::new(g.delimiter(), walk(g.stream()));
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                }
                other => out.push(other),
            }
            prev_tick = false;
        }
        out.into_iter().collect()
    }
    walk(ty.to_token_stream())
}

pub fn accessors(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let ident = g.c.ident;
    let (impl_generics, ty_generics, _) = g.c.generics.split_for_impl();
    let mut methods = Vec::new();
    for f in &g.c.fields {
        let (Shape::Optional(v), Some(field_ident)) = (&f.shape, f.ident) else {
            continue;
        };
        let doc = format!(
            "The value of `{}`, or the protobuf default when it is unset.",
            f.proto_name
        );
        let m = &f.member;
        let default = f.attrs.default.as_ref();
        let method = match v {
            Value::Scalar(s) => {
                let ty = format_ident!("{}", s.rust_name());
                let fallback = default
                    .map(|d| quote!(#d))
                    .unwrap_or_else(|| quote!(<#ty as ::core::default::Default>::default()));
                quote!(pub fn #field_ident(&self) -> #ty { match self.#m { #p::Some(v) => v, #p::None => #fallback } })
            }
            Value::Enum(e) => quote! {
                pub fn #field_ident(&self) -> #p::EnumValue<#e> { self.#m.unwrap_or_default() }
            },
            Value::Str | Value::String => {
                let fallback = default.map(|d| quote!(#d)).unwrap_or_else(|| quote!(""));
                quote!(pub fn #field_ident(&self) -> &str { match &self.#m { #p::Some(v) => v, #p::None => #fallback } })
            }
            Value::Bytes | Value::VecBytes => quote! {
                pub fn #field_ident(&self) -> &[u8] { match &self.#m { #p::Some(v) => v, #p::None => &[] } }
            },
            Value::Message(_) => continue,
        };
        methods.push(quote! {
            #[doc = #doc]
            #[inline]
            #[allow(clippy::all)]
            #method
        });
    }
    if methods.is_empty() {
        return TokenStream::new();
    }
    quote! {
        impl #impl_generics #ident #ty_generics {
            #(#methods)*
        }
    }
}
