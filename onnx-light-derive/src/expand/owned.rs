//! Emits `IntoOwned`: `T<'a>` to `T<'static>`, converting only fields that borrow.

use proc_macro2::TokenStream;
use quote::quote;

use super::message::Gen;

pub fn into_owned_impl(g: &Gen<'_, '_>) -> TokenStream {
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
    quote! {
        impl #impl_generics #p::IntoOwned for #ident #ty_generics {
            type Owned = #ident<'static>;
            fn into_owned(self) -> #ident<'static> {
                #ident { #(#fields,)* }
            }
        }
    }
}
