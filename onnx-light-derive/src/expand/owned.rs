//! Emits `IntoOwned`: `T<'a>` to `T<'static>`, converting only fields that borrow.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Message;

pub fn into_owned_impl(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let ident = g.c.ident;
    let (impl_generics, ty_generics, _) = g.c.generics.split_for_impl();
    if g.c.lifetime.is_none() {
        return quote! {
            impl #p::IntoOwned for #ident {
                type Owned = #ident;
                #[inline]
                fn into_owned(self) -> #ident { self }
            }
        };
    }
    let fields = g.c.fields.iter().map(|f| {
        let m = &f.member;
        if f.borrows {
            quote!(#m: #p::IntoOwned::into_owned(self.#m))
        } else {
            quote!(#m: self.#m)
        }
    });
    let body = stack_guard(g, quote!(#ident { #(#fields,)* }));
    quote! {
        impl #impl_generics #p::IntoOwned for #ident #ty_generics {
            type Owned = #ident<'static>;
            fn into_owned(self) -> #ident<'static> {
                #body
            }
        }
    }
}

/// Emits `Reborrow` for a message with a lifetime: a view that borrows every string and
/// payload of `self` (nothing is copied) and clones the fields that do not borrow.
/// Messages without a lifetime own everything and get no view.
pub fn reborrow_impl(g: &Message<'_, '_>) -> TokenStream {
    let p = &g.p;
    let ident = g.c.ident;
    if g.c.lifetime.is_none() {
        return TokenStream::new();
    }
    let (impl_generics, ty_generics, _) = g.c.generics.split_for_impl();
    let fields = g.c.fields.iter().map(|f| {
        let m = &f.member;
        if f.borrows {
            quote!(#m: #p::Reborrow::reborrow(&self.#m))
        } else {
            quote!(#m: ::core::clone::Clone::clone(&self.#m))
        }
    });
    let body = stack_guard(g, quote!(#ident { #(#fields,)* }));
    quote! {
        impl #impl_generics #p::Reborrow for #ident #ty_generics {
            type Borrowed<'__m> = #ident<'__m> where Self: '__m;
            fn reborrow(&self) -> #ident<'_> {
                #body
            }
        }
    }
}

/// `body` of a recursive walk, run on a fresh stack segment when the thread's runs
/// low for a type marked `#[proto(nests)]`; as it is otherwise.
fn stack_guard(g: &Message<'_, '_>, body: TokenStream) -> TokenStream {
    let p = &g.p;
    if g.c.attrs.nests {
        quote!(#p::guarded(move || #body))
    } else {
        body
    }
}
