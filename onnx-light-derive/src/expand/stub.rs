//! Stub impls emitted next to the compile errors of an input that did not pass `ast` or
//! `check`, so that code using the type does not fail with dozens of unrelated "trait not
//! implemented" errors. They are built from the raw input, not from the model.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

/// Minimal impls emitted next to the errors, so that code using the type does not fail
/// with dozens of unrelated "trait not implemented" errors.
pub fn message(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
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
    // `Decode` requires `Default`, which `#[derive(Default)]` implements only for
    // `T: Default`: bound the stub the same way rather than report that too.
    let predicates = where_clause.map(|w| &w.predicates);
    let default_bound = (input.generics.type_params().next().is_some()
        || input.generics.const_params().next().is_some())
    .then(|| quote!(#ident #ty_generics: ::core::default::Default,));
    let decode_where = quote!(where #default_bound #predicates);
    // Not for an enum or union: it would only add "`Default` is not implemented".
    let decode = matches!(input.data, syn::Data::Struct(_)).then(|| {
        quote! {
            impl #decode_generics #p::Decode<#lt> for #ident #ty_generics #decode_where {
                fn merge_field<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                    &mut self, _: #p::FieldKey, _: &mut #p::Reader<'__b>, _: &mut __C,
                ) -> #p::Result<bool> { #p::Ok(false) }
            }
        }
    });
    let into_owned = into_owned(input, p);
    let reborrow = reborrow(input, p);
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
            #decode
            #into_owned
            #reborrow
        };
    }
}
/// Minimal impls emitted next to the errors, so that a message holding this oneof does
/// not fail with unrelated "trait not implemented" or oneof-mismatch errors.
pub fn oneof(
    input: &syn::DeriveInput,
    p: &TokenStream,
    lifetime: Option<&syn::Lifetime>,
    numbers: &BTreeMap<u32, String>,
) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let (decode_generics, lt) = match lifetime {
        Some(l) => (quote!(#impl_generics), quote!(#l)),
        None => {
            let params = input.generics.params.iter();
            (quote!(<'__a, #(#params),*>), quote!('__a))
        }
    };
    let into_owned = into_owned(input, p);
    let reborrow = reborrow(input, p);
    let fields = numbers.iter().map(|(n, name)| {
        quote! {
            #p::FieldDescriptor {
                name: #name,
                number: #n,
                kind: #p::FieldKind::Int64,
                label: #p::Label::Optional,
                packed: false,
                oneof: #p::None,
            }
        }
    });
    quote! {
        #[allow(unused, clippy::all, non_local_definitions)]
        const _: () = {
            impl #impl_generics #p::Oneof for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#p::FieldDescriptor] = &[#(#fields),*];
                fn size_variant(&self, _: u32, _: &mut #p::SizeCache) -> u64 { 0 }
                fn encode_variant<__S: #p::Sink + ?Sized>(
                    &self, _: u32, _: &mut __S, _: &mut #p::SizeCursor<'_>,
                ) -> #p::Result<()> { #p::Ok(()) }
            }
            impl #decode_generics #p::OneofDecode<#lt> for #ident #ty_generics #where_clause {
                fn merge_variant<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                    _: &mut #p::Option<Self>, _: #p::FieldKey, _: &mut #p::Reader<'__b>, _: &mut __C,
                ) -> #p::Result<bool> { #p::Ok(false) }
            }
            #into_owned
            #reborrow
        };
    }
}
/// A `ProtoEnum` impl emitted next to the errors so that fields using the enum
/// (`EnumValue<E>`) do not add "trait not satisfied" errors of their own.
pub fn enumeration(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
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
/// The type's generic arguments with every lifetime replaced by `lifetime`.
fn args_with_lifetime(generics: &syn::Generics, lifetime: TokenStream) -> Vec<TokenStream> {
    generics
        .params
        .iter()
        .map(|p| match p {
            syn::GenericParam::Lifetime(_) => lifetime.clone(),
            syn::GenericParam::Type(t) => {
                let i = &t.ident;
                quote!(#i)
            }
            syn::GenericParam::Const(c) => {
                let i = &c.ident;
                quote!(#i)
            }
        })
        .collect()
}

/// The `IntoOwned` impl of a stub: `Owned` is the type with every lifetime `'static`,
/// bounded like the real impl would need (`T: 'static` for a type parameter), so that
/// nothing about it is reported on top of the real error.
fn into_owned(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let args = args_with_lifetime(&input.generics, quote!('static));
    let owned = quote!(#ident<#(#args),*>);
    let static_bounds = input.generics.type_params().map(|t| {
        let i = &t.ident;
        quote!(#i: 'static,)
    });
    let predicates = where_clause.map(|w| &w.predicates);
    let body = if input.generics.lifetimes().next().is_some() {
        quote!(::core::unreachable!("stub emitted next to a compile error"))
    } else {
        quote!(self)
    };
    quote! {
        impl #impl_generics #p::IntoOwned for #ident #ty_generics where #(#static_bounds)* #predicates {
            type Owned = #owned;
            fn into_owned(self) -> #owned { #body }
        }
    }
}

/// A `Reborrow` stub for a type with a lifetime, so that messages holding it do not
/// report a missing view.
fn reborrow(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    if input.generics.lifetimes().next().is_none() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let args = args_with_lifetime(&input.generics, quote!('__m));
    let view = quote!(#ident<#(#args),*>);
    quote! {
        impl #impl_generics #p::Reborrow for #ident #ty_generics #where_clause {
            type Borrowed<'__m> = #view where Self: '__m;
            fn reborrow(&self) -> Self::Borrowed<'_> {
                ::core::unreachable!("stub emitted next to a compile error")
            }
        }
    }
}
