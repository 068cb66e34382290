//! `#[derive(ProtoMessage)]`: assembles the trait impls of a struct from the parts the
//! generators emit (`decode`, `encode`, `describe`, `owned`). Those know nothing of this
//! module.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::quote;

use super::{decode, describe, encode, owned};
use crate::ast::Shape;
use crate::model::Message;

/// Moves each oneof assertion (one `const _: () = assert!(...);` item per oneof field, in
/// field order) to the span of its field's `oneof(...)`, so that a mismatch is reported
/// there rather than at `#[derive(ProtoMessage)]`.
fn at_oneof_attributes(g: &Message<'_, '_>, checks: TokenStream) -> TokenStream {
    fn respan(ts: TokenStream, span: Span) -> TokenStream {
        ts.into_iter()
            .map(|tt| match tt {
                TokenTree::Group(g) => {
                    let mut ng = Group::new(g.delimiter(), respan(g.stream(), span));
                    ng.set_span(span);
                    TokenTree::Group(ng)
                }
                mut other => {
                    other.set_span(span);
                    other
                }
            })
            .collect()
    }
    let spans: Vec<Span> =
        g.c.fields
            .iter()
            .filter(|f| matches!(f.shape, Shape::Oneof(_)))
            .filter_map(|f| f.attrs.oneof.as_ref().map(|o| o.span))
            .collect();
    let mut items: Vec<TokenStream> = Vec::new();
    let mut current = Vec::new();
    for tt in checks.clone() {
        let end = matches!(&tt, TokenTree::Punct(p) if p.as_char() == ';');
        current.push(tt);
        if end {
            items.push(std::mem::take(&mut current).into_iter().collect());
        }
    }
    if items.len() != spans.len() || !current.is_empty() {
        return checks;
    }
    items
        .into_iter()
        .zip(spans)
        .map(|(item, span)| respan(item, span))
        .collect()
}

/// Wraps the descriptor so that it is built only when every `oneof(...)` list matches
/// its enum: a mismatch is then reported once, by the assertion `oneof_checks` emits,
/// and not a second time by `oneof_field` failing inside the descriptor.
fn guard_oneof_descriptor(g: &Message<'_, '_>, descriptor: TokenStream) -> TokenStream {
    let p = &g.p;
    let conds: Vec<_> = g
        .c
        .fields
        .iter()
        .filter_map(|f| {
            let Shape::Oneof(ty) = &f.shape else {
                return None;
            };
            let numbers = f
                .attrs
                .oneof
                .iter()
                .flat_map(|l| l.value.iter())
                .map(|n| n.value);
            Some(quote!(#p::field::oneof_numbers_match(<#ty as #p::Oneof>::FIELDS, &[#(#numbers),*])))
        })
        .collect();
    if conds.is_empty() {
        return descriptor;
    }
    let name = &g.c.proto_name;
    quote! {
        if #(#conds)&&* {
            #descriptor
        } else {
            &#p::MessageDescriptor { name: #name, fields: &[] }
        }
    }
}

/// The impls of a message that passed `check`.
pub fn impls(g: &Message<'_, '_>) -> TokenStream {
    let c = g.c;
    let p = &g.p;
    let ident = c.ident;
    let (impl_generics, ty_generics, _) = c.generics.split_for_impl();
    let name = &c.proto_name;
    let descriptor = guard_oneof_descriptor(g, describe::descriptor(g));
    let size_body = encode::size_body(g);
    let encode_body = encode::encode_body(g);
    let decode_impl = decode::decode_impl(g);
    let owned_impl = owned::into_owned_impl(g);
    let reborrow_impl = owned::reborrow_impl(g);
    let accessors = describe::accessors(g);
    let oneof_checks = at_oneof_attributes(g, describe::oneof_checks(g));
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
            #reborrow_impl
            #oneof_checks
        };
        #accessors
    }
}
