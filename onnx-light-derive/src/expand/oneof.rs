//! `#[derive(ProtoOneof)]`: an enum whose variants are the fields of one `oneof`.

use proc_macro2::TokenStream;
use quote::quote;

use super::{codec_lifetime_and_ctx, private};
use crate::ast::{self, lifetimes_in, unwrap_single, Value};
use crate::attr::{self, FieldAttrs};
use crate::ctxt::Ctxt;

struct Variant<'a> {
    ident: &'a syn::Ident,
    attrs: FieldAttrs,
    value: Value,
    boxed: bool,
    borrows: bool,
    proto_name: String,
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
    let lifetime = ast::message_lifetime(&mut cx, &input.generics);
    let mut variants = Vec::new();
    // Every variant number that parsed, for the stub's `FIELDS`: a message listing
    // them in `oneof(...)` then does not fail its own consistency check as well.
    let mut stub_numbers = std::collections::BTreeMap::new();
    match &input.data {
        syn::Data::Enum(data) => {
            if data.variants.is_empty() {
                cx.error_spanned_by(
                    &input.ident,
                    "malformed oneof: the enum needs at least one variant",
                );
            }
            let mut seen = std::collections::BTreeMap::new();
            for v in &data.variants {
                let vattrs = attr::field_attrs(&mut cx, &v.attrs);
                if let Some(n) = &vattrs.number {
                    stub_numbers
                        .entry(n.value)
                        .or_insert_with(|| ast::snake_case(&v.ident.to_string()));
                }
                let ty = match &v.fields {
                    syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => &u.unnamed[0].ty,
                    _ => {
                        cx.error_spanned_by(
                            &v.ident,
                            "malformed oneof: each variant holds exactly one value, e.g. `#[proto(4)] Count(i64)`",
                        );
                        continue;
                    }
                };
                match &vattrs.number {
                    None if vattrs.number_refused => {}
                    None => cx.error_spanned_by(
                        &v.ident,
                        "missing field number: write #[proto(N)] on the variant",
                    ),
                    Some(n) => {
                        if let Some(prev) = seen.insert(n.value, v.ident.to_string()) {
                            cx.error_at(
                                n.span,
                                format!(
                                    "duplicate field number {}: already used by `{prev}`",
                                    n.value
                                ),
                            );
                        }
                    }
                }
                for (what, span) in [
                    ("packed", vattrs.packed),
                    ("unknown_fields", vattrs.unknown_fields),
                    ("skip", vattrs.skip),
                ] {
                    if let Some(span) = span {
                        cx.error_at(span, format!("`{what}` does not apply to a oneof variant"));
                    }
                }
                if let Some(o) = &vattrs.oneof {
                    cx.error_at(o.span, "malformed oneof: oneofs do not nest");
                }
                if let Some(d) = &vattrs.default {
                    cx.error_spanned_by(d, "`default` does not apply to a oneof variant");
                }
                let (inner, boxed) = match unwrap_single(ty, "Box") {
                    Some(inner) => (inner, true),
                    None => (ty, false),
                };
                let Some(value) = value_of_variant(&mut cx, inner) else {
                    continue;
                };
                if boxed && !matches!(value, Value::Message(_)) {
                    cx.error_spanned_by(ty, "only message variants may be boxed");
                }
                if let Some(enc) = &vattrs.encoding {
                    match &value {
                        Value::Scalar(s) if s.allows(enc.value) => {}
                        _ => cx.error_at(
                            enc.span,
                            format!("`{}` does not fit this variant's type", enc.value.name()),
                        ),
                    }
                }
                let borrows =
                    lifetime.is_some_and(|lt| lifetimes_in(ty).iter().any(|l| l.ident == lt.ident));
                let proto_name = vattrs
                    .name
                    .as_ref()
                    .map(|n| n.value.clone())
                    .unwrap_or_else(|| ast::snake_case(&v.ident.to_string()));
                variants.push(Variant {
                    ident: &v.ident,
                    attrs: vattrs,
                    value,
                    boxed,
                    borrows,
                    proto_name,
                });
            }
        }
        _ => cx.error_spanned_by(&input.ident, "#[derive(ProtoOneof)] works on enums"),
    }
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        let stubs = stubs(input, &p, lifetime, &stub_numbers);
        return quote!(#errors #stubs);
    }

    let ident = &input.ident;
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let lt = match lifetime {
        Some(l) => quote!(#l),
        None => quote!('__a),
    };
    let mut fields = Vec::new();
    let mut size_arms = Vec::new();
    let mut encode_arms = Vec::new();
    let mut merge_arms = Vec::new();
    let mut owned_arms = Vec::new();
    let mut reborrow_arms = Vec::new();
    for v in &variants {
        let vi = v.ident;
        let n = v.attrs.number.as_ref().map(|n| n.value).unwrap_or(0);
        let codec = v
            .value
            .codec(&krate, v.attrs.encoding.as_ref().map(|e| e.value));
        let name = &v.proto_name;
        let (clt, ctx) = codec_lifetime_and_ctx(v.borrows, &lt, &p);
        let flt = if v.borrows {
            quote!(#lt)
        } else {
            quote!('static)
        };
        fields.push(quote! {
            #p::FieldDescriptor {
                name: #name,
                number: #n,
                kind: <#codec as #p::Codec<#flt>>::KIND,
                label: #p::Label::Optional,
                packed: false,
                oneof: #p::None,
            }
        });
        size_arms.push(quote! {
            Self::#vi(v) if number == #n => #p::key_len(#n) + <#codec as #p::Codec<'_>>::size(v, sizes),
        });
        encode_arms.push(quote! {
            Self::#vi(v) if number == #n => {
                #p::field::put_key(sink, #n, <#codec as #p::Codec<'_>>::WIRE_TYPE)?;
                <#codec as #p::Codec<'_>>::encode(v, sink, sizes)
            }
        });
        let target = if v.boxed { quote!(&mut **v) } else { quote!(v) };
        merge_arms.push(quote! {
            #n => {
                if key.wire_type != <#codec as #p::Codec<#clt>>::WIRE_TYPE {
                    return #p::Ok(false);
                }
                if !::core::matches!(slot, #p::Some(Self::#vi(_))) {
                    *slot = #p::Some(Self::#vi(::core::default::Default::default()));
                }
                if let #p::Some(Self::#vi(v)) = slot {
                    <#codec as #p::Codec<#clt>>::merge(#target, r, #ctx)
                        .map_err(|e| e.in_field("oneof", #name, #p::None))?;
                }
                #p::Ok(true)
            }
        });
        reborrow_arms.push(if v.borrows {
            quote!(Self::#vi(v) => #ident::#vi(#p::Reborrow::reborrow(v)),)
        } else {
            quote!(Self::#vi(v) => #ident::#vi(::core::clone::Clone::clone(v)),)
        });
        owned_arms.push(if v.borrows {
            quote!(Self::#vi(v) => #ident::#vi(#p::IntoOwned::into_owned(v)),)
        } else {
            quote!(Self::#vi(v) => #ident::#vi(v),)
        });
    }
    let decode_generics = quote!(<#lt>);
    let reborrow_impl = if lifetime.is_some() {
        quote! {
            impl #impl_generics #p::Reborrow for #ident #ty_generics {
                type Borrowed<'__m> = #ident<'__m> where Self: '__m;
                fn reborrow(&self) -> #ident<'_> {
                    match self {
                        #(#reborrow_arms)*
                    }
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let owned_ty = if lifetime.is_some() {
        quote!(#ident<'static>)
    } else {
        quote!(#ident)
    };
    quote! {
        #[allow(clippy::all, unused_qualifications, unused_variables, non_local_definitions)]
        const _: () = {
            impl #impl_generics #p::Oneof for #ident #ty_generics {
                const FIELDS: &'static [#p::FieldDescriptor] = &[#(#fields),*];

                #[inline]
                fn size_variant(&self, number: u32, sizes: &mut #p::SizeCache) -> u64 {
                    match self {
                        #(#size_arms)*
                        _ => 0,
                    }
                }

                #[inline]
                fn encode_variant<__S: #p::Sink + ?Sized>(
                    &self,
                    number: u32,
                    sink: &mut __S,
                    sizes: &mut #p::SizeCursor<'_>,
                ) -> #p::Result<()> {
                    match self {
                        #(#encode_arms)*
                        _ => #p::Ok(()),
                    }
                }
            }

            impl #decode_generics #p::OneofDecode<#lt> for #ident #ty_generics {
                #[inline]
                fn merge_variant<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                    slot: &mut #p::Option<Self>,
                    key: #p::FieldKey,
                    r: &mut #p::Reader<'__b>,
                    ctx: &mut __C,
                ) -> #p::Result<bool> {
                    match key.number {
                        #(#merge_arms)*
                        _ => #p::Ok(false),
                    }
                }
            }

            impl #impl_generics #p::IntoOwned for #ident #ty_generics {
                type Owned = #owned_ty;
                fn into_owned(self) -> #owned_ty {
                    match self {
                        #(#owned_arms)*
                    }
                }
            }

            #reborrow_impl
        };
    }
}

fn value_of_variant(cx: &mut Ctxt, ty: &syn::Type) -> Option<Value> {
    for wrapper in ["Option", "Vec"] {
        if unwrap_single(ty, wrapper).is_some() && !(wrapper == "Vec" && is_vec_u8(ty)) {
            cx.error_spanned_by(ty, format!("malformed oneof: a variant holds one value, not `{wrapper}<...>` (protobuf forbids repeated and optional fields in a oneof)"));
            return None;
        }
    }
    ast::variant_value(cx, ty)
}

fn is_vec_u8(ty: &syn::Type) -> bool {
    matches!(unwrap_single(ty, "Vec"), Some(syn::Type::Path(p)) if p.path.is_ident("u8"))
}

/// Minimal impls emitted next to the errors, so that a message holding this oneof does
/// not fail with unrelated "trait not implemented" or oneof-mismatch errors.
fn stubs(
    input: &syn::DeriveInput,
    p: &TokenStream,
    lifetime: Option<&syn::Lifetime>,
    numbers: &std::collections::BTreeMap<u32, String>,
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
    let into_owned = super::message::into_owned_stub(input, p);
    let reborrow = super::message::reborrow_stub(input, p);
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
