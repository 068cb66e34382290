//! Collects every error found while reading a derive input, so that one compile reports
//! all of them, each at its own span.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// The error collector. Parsing and checking push into it; expansion runs only when it
/// is empty.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// An error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.errors
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error at a span.
    pub fn error_at<M: Display>(&mut self, span: proc_macro2::Span, message: M) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// A syn error as it is.
    pub fn syn_error(&mut self, err: syn::Error) {
        self.errors.push(err);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Every collected error as `compile_error!` invocations.
    pub fn into_compile_errors(self) -> TokenStream {
        self.errors
            .into_iter()
            .map(|e| e.to_compile_error())
            .collect()
    }
}
