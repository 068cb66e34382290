//! `#[derive(ProtoEnum)]`: a fieldless enum with explicit discriminants as a protobuf enum.

use proc_macro2::TokenStream;
use quote::quote;

use super::private;
use crate::ast::screaming_snake_case;
use crate::attr;
use crate::ctxt::Ctxt;

fn discriminant(cx: &mut Ctxt, v: &syn::Variant) -> Option<i32> {
    let Some((_, expr)) = &v.discriminant else {
        cx.error_spanned_by(
            &v.ident,
            "a protobuf enum value needs its number: write `Variant = N`",
        );
        return None;
    };
    let (neg, lit) = match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(l),
            ..
        }) => (false, l),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(l),
                ..
            }) => (true, l),
            _ => {
                cx.error_spanned_by(expr, "an enum value must be an integer literal");
                return None;
            }
        },
        other => {
            cx.error_spanned_by(other, "an enum value must be an integer literal");
            return None;
        }
    };
    let magnitude: i64 = match lit.base10_parse() {
        Ok(m) => m,
        Err(e) => {
            cx.syn_error(e);
            return None;
        }
    };
    let value = if neg { -magnitude } else { magnitude };
    match i32::try_from(value) {
        Ok(v) => Some(v),
        Err(_) => {
            cx.error_spanned_by(lit, "protobuf enum values are 32-bit signed integers");
            None
        }
    }
}

pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let mut cx = Ctxt::new();
    let cattrs = attr::container_attrs(&mut cx, &input.attrs);
    let krate = cattrs
        .crate_path
        .clone()
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::onnx_light));
    let p = private(&krate);
    let ident = &input.ident;
    let mut rows = Vec::new();
    match &input.data {
        syn::Data::Enum(data) => {
            if data.variants.is_empty() {
                cx.error_spanned_by(ident, "a protobuf enum needs at least one value");
            }
            if !input.generics.params.is_empty() {
                cx.error_spanned_by(
                    &input.generics,
                    "a protobuf enum takes no generic parameters",
                );
            }
            for v in &data.variants {
                if !matches!(v.fields, syn::Fields::Unit) {
                    cx.error_spanned_by(&v.ident, "protobuf enum values hold no data");
                    continue;
                }
                let name = attr::variant_name(&mut cx, &v.attrs)
                    .map(|n| n.value)
                    .unwrap_or_else(|| screaming_snake_case(&v.ident.to_string()));
                if let Some(n) = discriminant(&mut cx, v) {
                    rows.push((&v.ident, name, n));
                }
            }
        }
        _ => cx.error_spanned_by(ident, "#[derive(ProtoEnum)] works on fieldless enums"),
    }
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        let stub = stub(input, &p);
        return quote!(#errors #stub);
    }
    let proto_name = cattrs
        .name
        .map(|n| n.value)
        .unwrap_or_else(|| ident.to_string());
    let default = rows.first().map(|r| r.2).unwrap_or(0);
    let values = rows.iter().map(|(_, name, n)| quote!((#name, #n)));
    let from = rows
        .iter()
        .map(|(v, _, n)| quote!(#n => #p::Some(Self::#v),));
    let to = rows.iter().map(|(v, _, n)| quote!(Self::#v => #n,));
    let names = rows.iter().map(|(v, name, _)| quote!(Self::#v => #name,));
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

/// A `ProtoEnum` impl emitted next to the errors so that fields using the enum
/// (`EnumValue<E>`) do not add "trait not satisfied" errors of their own.
fn stub(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    if !matches!(input.data, syn::Data::Enum(_)) || !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let name = ident.to_string();
    quote! {
        #[allow(unused, clippy::all, non_local_definitions)]
        const _: () = {
            impl #p::ProtoEnum for #ident {
                const NAME: &'static str = #name;
                const VALUES: &'static [(&'static str, i32)] = &[];
                const DEFAULT: i32 = 0;
                fn from_i32(_: i32) -> #p::Option<Self> { #p::None }
                fn to_i32(self) -> i32 { 0 }
                fn proto_name(self) -> &'static str { "" }
            }
        };
    }
}
