//! `#[derive(ProtoMessage)]`: assembles the trait impls for a struct from the parts the
//! sibling modules emit, or stubs when the input had errors.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::quote;

use crate::ast::{self, Container, Field, Shape, Value};
use crate::ctxt::Ctxt;
use crate::{check, expand};

/// One entry of the field-number-ordered list that sizing, encoding and the descriptor
/// walk: an ordinary field, or one variant of a oneof.
pub enum Item<'f, 'a> {
    Field(&'f Field<'a>),
    Variant(&'f Field<'a>, u32),
}

impl Item<'_, '_> {
    pub fn number(&self) -> u32 {
        match self {
            Item::Field(f) => f.number().unwrap_or(0),
            Item::Variant(_, n) => *n,
        }
    }
}

/// Everything the generators need about the container.
pub struct Gen<'c, 'a> {
    pub c: &'c Container<'a>,
    pub krate: TokenStream,
    pub p: TokenStream,
    /// The message's lifetime, or `'__a` for a struct without one (in `Decode` impls).
    pub lt: TokenStream,
}

impl<'c, 'a> Gen<'c, 'a> {
    pub fn items(&self) -> Vec<Item<'c, 'a>> {
        let mut items = Vec::new();
        for f in &self.c.fields {
            match &f.shape {
                Shape::Oneof(_) => {
                    for n in f.attrs.oneof.iter().flat_map(|l| l.value.iter()) {
                        items.push(Item::Variant(f, n.value));
                    }
                }
                Shape::Unknown | Shape::Skip => {}
                _ => items.push(Item::Field(f)),
            }
        }
        items.sort_by_key(Item::number);
        items
    }

    /// The codec type of a single-valued, repeated or boxed field.
    pub fn codec(&self, v: &Value, f: &Field<'_>) -> TokenStream {
        v.codec(&self.krate, f.attrs.encoding.as_ref().map(|e| e.value))
    }

    /// Codec types of a map field's key and value.
    pub fn map_codecs(&self, k: &Value, v: &Value, f: &Field<'_>) -> (TokenStream, TokenStream) {
        (
            k.codec(&self.krate, f.attrs.key.as_ref().map(|e| e.value)),
            v.codec(&self.krate, f.attrs.value.as_ref().map(|e| e.value)),
        )
    }

    /// The lifetime at which a field's codec is instantiated.
    pub fn field_lt(&self, f: &Field<'_>) -> TokenStream {
        if f.borrows {
            self.lt.clone()
        } else {
            quote!('static)
        }
    }
}

pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let mut cx = Ctxt::new();
    let container = ast::container(&mut cx, input);
    if let Some(c) = &container {
        check::container(&mut cx, c);
    }
    let krate = container
        .as_ref()
        .and_then(|c| c.attrs.crate_path.clone())
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::onnx_light));
    match container {
        Some(c) if !cx.has_errors() => expand_ok(&c, krate),
        _ => {
            let errors = cx.into_compile_errors();
            let stubs = stubs(input, &krate);
            // The accessors of the fields that could be read, so that calls to them do
            // not fail as well.
            let accessors = container.as_ref().map(|c| {
                expand::describe::accessors(&Gen {
                    c,
                    krate: krate.clone(),
                    p: expand::private(&krate),
                    lt: quote!('__a),
                })
            });
            quote!(#errors #stubs #accessors)
        }
    }
}

/// Moves each oneof assertion (one `const _: () = assert!(...);` item per oneof field, in
/// field order) to the span of its field's `oneof(...)`, so that a mismatch is reported
/// there rather than at `#[derive(ProtoMessage)]`.
fn at_oneof_attributes(g: &Gen<'_, '_>, checks: TokenStream) -> TokenStream {
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
fn guard_oneof_descriptor(g: &Gen<'_, '_>, descriptor: TokenStream) -> TokenStream {
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

fn expand_ok(c: &Container<'_>, krate: TokenStream) -> TokenStream {
    let p = expand::private(&krate);
    let lt = match c.lifetime {
        Some(l) => quote!(#l),
        None => quote!('__a),
    };
    let g = Gen {
        c,
        krate: krate.clone(),
        p: p.clone(),
        lt,
    };
    let ident = c.ident;
    let (impl_generics, ty_generics, _) = c.generics.split_for_impl();
    let name = &c.proto_name;
    let descriptor = guard_oneof_descriptor(&g, expand::describe::descriptor(&g));
    let size_body = expand::encode::size_body(&g);
    let encode_body = expand::encode::encode_body(&g);
    let decode_impl = expand::decode::decode_impl(&g);
    let owned_impl = expand::owned::into_owned_impl(&g);
    let reborrow_impl = expand::owned::reborrow_impl(&g);
    let accessors = expand::describe::accessors(&g);
    let oneof_checks = at_oneof_attributes(&g, expand::describe::oneof_checks(&g));
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

/// The `IntoOwned` impl of a stub: `Owned` is the type with every lifetime `'static`,
/// bounded like the real impl would need (`T: 'static` for a type parameter), so that
/// nothing about it is reported on top of the real error.
pub fn into_owned_stub(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let args = input.generics.params.iter().map(|p| match p {
        syn::GenericParam::Lifetime(_) => quote!('static),
        syn::GenericParam::Type(t) => {
            let i = &t.ident;
            quote!(#i)
        }
        syn::GenericParam::Const(c) => {
            let i = &c.ident;
            quote!(#i)
        }
    });
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
pub fn reborrow_stub(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    if input.generics.lifetimes().next().is_none() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let args = input.generics.params.iter().map(|p| match p {
        syn::GenericParam::Lifetime(_) => quote!('__m),
        syn::GenericParam::Type(t) => {
            let i = &t.ident;
            quote!(#i)
        }
        syn::GenericParam::Const(c) => {
            let i = &c.ident;
            quote!(#i)
        }
    });
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

/// Minimal impls emitted next to the errors, so that code using the type does not fail
/// with dozens of unrelated "trait not implemented" errors.
fn stubs(input: &syn::DeriveInput, krate: &TokenStream) -> TokenStream {
    let p = expand::private(krate);
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
    let into_owned = into_owned_stub(input, &p);
    let reborrow = reborrow_stub(input, &p);
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
