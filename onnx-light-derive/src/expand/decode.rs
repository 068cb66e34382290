//! Emits `Decode::merge_field`: one match arm per field number. A field whose key
//! carries a wire type its codec does not read makes the arm return `Ok(false)`, like an
//! undeclared number, so that the field is kept as an unknown field (protobuf's rule).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{Shape, Value};
use crate::model::Message;

pub fn decode_impl(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let lt = &g.lt;
    let ident = g.c.ident;
    let (_, ty_generics, _) = g.c.generics.split_for_impl();
    let impl_generics = quote!(<#lt>);
    let mut arms = Vec::new();
    let mut unknown = None;
    for f in &g.c.fields {
        let m = &f.member;
        let name = &f.proto_name;
        let (_, ctx) = g.codec_lifetime_and_ctx(f);
        let at = quote!(.map_err(|e| e.in_field(<Self as #p::Message>::NAME, #name, #p::None))?);
        let arm = match &f.shape {
            Shape::Optional(v) => {
                let codec = g.codec(v, f);
                quote!(#p::field::merge_optional::<#codec, _>(&mut self.#m, key, r, #ctx) #at)
            }
            Shape::Boxed(v) => {
                let codec = g.codec(v, f);
                quote!(#p::field::merge_boxed::<#codec, _>(&mut self.#m, key, r, #ctx) #at)
            }
            Shape::Implicit(v) => {
                let codec = g.codec(v, f);
                quote!(#p::field::merge_implicit::<#codec, _>(&mut self.#m, key, r, #ctx) #at)
            }
            Shape::Repeated(v) => {
                let codec = g.codec(v, f);
                let func = if v.packable() {
                    quote!(merge_repeated_scalar)
                } else if f.attrs.parallel.is_some() {
                    quote!(merge_repeated_parallel)
                } else {
                    quote!(merge_repeated)
                };
                let index = if matches!(v, Value::Message(_)) {
                    quote!(#p::Some(self.#m.len()))
                } else {
                    quote!(#p::None)
                };
                quote! {
                    #p::field::#func::<#codec, _>(&mut self.#m, key, r, #ctx)
                        .map_err(|e| e.in_field(<Self as #p::Message>::NAME, #name, #index))?
                }
            }
            Shape::Map(k, v) => {
                let (kc, vc) = g.map_codecs(k, v, f);
                quote!(#p::field::merge_map::<#kc, #vc, _, _>(&mut self.#m, key, r, #ctx) #at)
            }
            Shape::Oneof(ty) => {
                let olt = g.field_lt(f);
                let numbers = f
                    .attrs
                    .oneof
                    .iter()
                    .flat_map(|l| l.value.iter())
                    .map(|n| n.value);
                arms.push(quote! {
                    #(#numbers)|* => {
                        if !<#ty as #p::OneofDecode<#olt>>::merge_variant(&mut self.#m, key, r, #ctx) #at {
                            return #p::Ok(false);
                        }
                    }
                });
                continue;
            }
            Shape::Unknown => {
                unknown = Some(if f.borrows {
                    quote!(self.#m.push(field);)
                } else {
                    quote!(self.#m.push(field.into_owned());)
                });
                continue;
            }
            Shape::Skip => continue,
        };
        let number = f.number().unwrap_or(0);
        arms.push(quote! {
            #number => {
                if !#arm {
                    return #p::Ok(false);
                }
            }
        });
    }
    let unknown_items = unknown.map(|push| {
        quote! {
            const KEEPS_UNKNOWN_FIELDS: bool = true;
            #[inline]
            fn push_unknown_field(&mut self, field: #p::UnknownField<#lt>) {
                #push
            }
        }
    });
    let ty = quote!(#ident #ty_generics);
    quote! {
        impl #impl_generics #p::Decode<#lt> for #ty {
            #[inline]
            fn merge_field<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                &mut self,
                key: #p::FieldKey,
                r: &mut #p::Reader<'__b>,
                ctx: &mut __C,
            ) -> #p::Result<bool> {
                match key.number {
                    #(#arms)*
                    _ => return #p::Ok(false),
                }
                #p::Ok(true)
            }
            #unknown_items
        }
    }
}
