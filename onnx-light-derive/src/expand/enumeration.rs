//! `#[derive(ProtoEnum)]`: the `ProtoEnum` impl of a fieldless enum with explicit
//! discriminants.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::ProtoEnum;

/// The impl of an enum that passed `check`.
pub fn impls(e: &ProtoEnum<'_, '_>) -> TokenStream {
    let p = &e.p;
    let ident = e.e.ident;
    let proto_name = &e.e.proto_name;
    let default = e.default_value();
    let rows = &e.e.values;
    let values = rows.iter().map(|r| {
        let (name, n) = (&r.name, r.number);
        quote!((#name, #n))
    });
    let from = rows.iter().map(|r| {
        let (v, n) = (r.ident, r.number);
        quote!(#n => #p::Some(Self::#v),)
    });
    let to = rows.iter().map(|r| {
        let (v, n) = (r.ident, r.number);
        quote!(Self::#v => #n,)
    });
    let names = rows.iter().map(|r| {
        let (v, name) = (r.ident, &r.name);
        quote!(Self::#v => #name,)
    });
    quote! {
        #[allow(clippy::all, non_local_definitions)]
        const _: () = {
            impl #p::ProtoEnum for #ident {
                const NAME: &'static str = #proto_name;
                const VALUES: &'static [(&'static str, i32)] = &[#(#values),*];
                const DEFAULT: i32 = #default;
                fn from_i32(value: i32) -> #p::Option<Self> {
                    match value {
                        #(#from)*
                        _ => #p::None,
                    }
                }
                fn to_i32(self) -> i32 {
                    match self { #(#to)* }
                }
                fn proto_name(self) -> &'static str {
                    match self { #(#names)* }
                }
            }
        };
    }
}
