//! Emits `Message::compute_size` and `Message::encode_fields`. Both walk the fields in
//! field-number order (oneof variants at their own numbers) so that the nested sizes the
//! first records are met in the same order by the second.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Shape;
use crate::model::{Item, Message};

fn unknown_member<'g>(g: &'g Message<'_, '_>) -> Option<&'g syn::Member> {
    g.c.fields
        .iter()
        .find(|f| matches!(f.shape, Shape::Unknown))
        .map(|f| &f.member)
}

pub fn size_body(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let mut parts = Vec::new();
    for item in g.items() {
        let part = match item {
            Item::Variant(f, n) => {
                let m = &f.member;
                quote! {
                    if let #p::Some(v) = &self.#m {
                        n += #p::Oneof::size_variant(v, #n, sizes);
                    }
                }
            }
            Item::Field(f) => {
                let m = &f.member;
                let n = f.number().unwrap_or(0);
                match &f.shape {
                    Shape::Optional(v) => {
                        let c = g.codec(v, f);
                        quote!(n += #p::field::size_optional::<#c>(#n, &self.#m, sizes);)
                    }
                    Shape::Boxed(v) => {
                        let c = g.codec(v, f);
                        quote!(n += #p::field::size_boxed::<#c>(#n, &self.#m, sizes);)
                    }
                    Shape::Implicit(v) => {
                        let c = g.codec(v, f);
                        quote!(n += #p::field::size_implicit::<#c>(#n, &self.#m, sizes);)
                    }
                    Shape::Repeated(v) if f.attrs.packed.is_some() => {
                        let c = g.codec(v, f);
                        quote!(n += #p::field::size_packed::<#c>(#n, &self.#m);)
                    }
                    Shape::Repeated(v) => {
                        let c = g.codec(v, f);
                        quote!(n += #p::field::size_repeated::<#c>(#n, &self.#m, sizes);)
                    }
                    Shape::Map(k, v) => {
                        let (kc, vc) = g.map_codecs(k, v, f);
                        quote!(n += #p::field::size_map::<#kc, #vc, _>(#n, &self.#m, sizes);)
                    }
                    Shape::Oneof(_) | Shape::Unknown | Shape::Skip => continue,
                }
            }
        };
        parts.push(part);
    }
    let unknown = unknown_member(g).map(|m| quote!(n += self.#m.encoded_len();));
    quote! {
        let mut n: u64 = 0;
        #(#parts)*
        #unknown
        n
    }
}

pub fn encode_body(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let mut parts = Vec::new();
    for item in g.items() {
        let part = match item {
            Item::Variant(f, n) => {
                let m = &f.member;
                quote! {
                    if let #p::Some(v) = &self.#m {
                        #p::Oneof::encode_variant(v, #n, sink, sizes)?;
                    }
                }
            }
            Item::Field(f) => {
                let m = &f.member;
                let n = f.number().unwrap_or(0);
                match &f.shape {
                    Shape::Optional(v) => {
                        let c = g.codec(v, f);
                        quote!(#p::field::encode_optional::<#c, _>(#n, &self.#m, sink, sizes)?;)
                    }
                    Shape::Boxed(v) => {
                        let c = g.codec(v, f);
                        quote!(#p::field::encode_boxed::<#c, _>(#n, &self.#m, sink, sizes)?;)
                    }
                    Shape::Implicit(v) => {
                        let c = g.codec(v, f);
                        quote!(#p::field::encode_implicit::<#c, _>(#n, &self.#m, sink, sizes)?;)
                    }
                    Shape::Repeated(v) if f.attrs.packed.is_some() => {
                        let c = g.codec(v, f);
                        quote!(#p::field::encode_packed::<#c, _>(#n, &self.#m, sink)?;)
                    }
                    Shape::Repeated(v) => {
                        let c = g.codec(v, f);
                        quote!(#p::field::encode_repeated::<#c, _>(#n, &self.#m, sink, sizes)?;)
                    }
                    Shape::Map(k, v) => {
                        let (kc, vc) = g.map_codecs(k, v, f);
                        quote!(#p::field::encode_map::<#kc, #vc, _, _>(#n, &self.#m, sink, sizes)?;)
                    }
                    Shape::Oneof(_) | Shape::Unknown | Shape::Skip => continue,
                }
            }
        };
        parts.push(part);
    }
    let unknown = unknown_member(g).map(|m| quote!(self.#m.encode(sink)?;));
    let check = g.c.attrs.encode_check.as_ref().map(|f| quote!(#f(self)?;));
    quote! {
        #check
        #(#parts)*
        #unknown
        #p::Ok(())
    }
}
