//! Code generation. Runs only on input that passed `check`; each submodule emits one
//! part of the generated code.

pub mod decode;
pub mod describe;
pub mod encode;
pub mod enumeration;
pub mod message;
pub mod oneof;
pub mod owned;

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{quote, ToTokens};

/// Replaces every lifetime except `'static` in `ty` with `'static`.
pub fn with_static_lifetimes(ty: &syn::Type) -> TokenStream {
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

/// The path through which generated code reaches the runtime.
pub fn private(krate: &TokenStream) -> TokenStream {
    quote!(#krate::__private)
}

/// The lifetime a field's codec is instantiated at, and the context expression to pass:
/// borrowing fields use the message's lifetime and the caller's context; all others
/// are `'static` through `ToStatic`, which copies anything the context would borrow.
pub fn codec_lifetime_and_ctx(
    borrows: bool,
    lifetime: &TokenStream,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    if borrows {
        (lifetime.clone(), quote!(ctx))
    } else {
        (quote!('static), quote!(&mut #p::ToStatic::new(&mut *ctx)))
    }
}
