//! `#[derive(ProtoOneof)]`: the impls of an enum whose variants are the fields of one
//! `oneof` — `Oneof` (field descriptors, size, encode), `OneofDecode`, `IntoOwned` and,
//! for an enum with a lifetime, `Reborrow`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::OneofEnum;

/// The impls of a oneof that passed `check`.
pub fn impls(o: &OneofEnum<'_, '_>) -> TokenStream {
    let oneof_impl = oneof_impl(o);
    let decode_impl = decode_impl(o);
    let owned_impl = into_owned_impl(o);
    let reborrow_impl = reborrow_impl(o);
    quote! {
        #[allow(clippy::all, unused_qualifications, unused_variables, non_local_definitions)]
        const _: () = {
            #oneof_impl

            #decode_impl

            #owned_impl

            #reborrow_impl
        };
    }
}

/// `Oneof`: the variants' field descriptors, and the size and encoding of the variant
/// that is set, each at the number the message asks for.
fn oneof_impl(o: &OneofEnum<'_, '_>) -> TokenStream {
    let p = &o.p;
    let ident = o.o.ident;
    let (impl_generics, ty_generics, _) = o.o.generics.split_for_impl();
    let mut fields = Vec::new();
    let mut size_arms = Vec::new();
    let mut encode_arms = Vec::new();
    for v in o.variants() {
        let vi = v.v.ident;
        let n = v.number;
        let codec = o.codec(&v);
        let name = &v.v.proto_name;
        let flt = o.variant_lt(&v);
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
    }
    quote! {
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
    }
}

/// `OneofDecode::merge_variant`: one arm per variant number. A key with a wire type the
/// variant's codec does not read returns `Ok(false)`, so that the field is kept as an
/// unknown field.
fn decode_impl(o: &OneofEnum<'_, '_>) -> TokenStream {
    let p = &o.p;
    let lt = &o.lt;
    let ident = o.o.ident;
    let (_, ty_generics, _) = o.o.generics.split_for_impl();
    let arms = o.variants().map(|v| {
        let vi = v.v.ident;
        let n = v.number;
        let codec = o.codec(&v);
        let name = &v.v.proto_name;
        let (clt, ctx) = o.codec_lifetime_and_ctx(&v);
        let target = if v.v.boxed {
            quote!(&mut **v)
        } else {
            quote!(v)
        };
        quote! {
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
        }
    });
    quote! {
        impl <#lt> #p::OneofDecode<#lt> for #ident #ty_generics {
            #[inline]
            fn merge_variant<'__b, __C: #p::DecodeContext<'__b, #lt>>(
                slot: &mut #p::Option<Self>,
                key: #p::FieldKey,
                r: &mut #p::Reader<'__b>,
                ctx: &mut __C,
            ) -> #p::Result<bool> {
                match key.number {
                    #(#arms)*
                    _ => #p::Ok(false),
                }
            }
        }
    }
}

/// `IntoOwned`: converts the variant's value when it borrows, moves it otherwise.
fn into_owned_impl(o: &OneofEnum<'_, '_>) -> TokenStream {
    let p = &o.p;
    let ident = o.o.ident;
    let (impl_generics, ty_generics, _) = o.o.generics.split_for_impl();
    let arms = o.variants().map(|v| {
        let vi = v.v.ident;
        if v.v.borrows {
            quote!(Self::#vi(v) => #ident::#vi(#p::IntoOwned::into_owned(v)),)
        } else {
            quote!(Self::#vi(v) => #ident::#vi(v),)
        }
    });
    let owned_ty = if o.o.lifetime.is_some() {
        quote!(#ident<'static>)
    } else {
        quote!(#ident)
    };
    quote! {
        impl #impl_generics #p::IntoOwned for #ident #ty_generics {
            type Owned = #owned_ty;
            fn into_owned(self) -> #owned_ty {
                match self {
                    #(#arms)*
                }
            }
        }
    }
}

/// `Reborrow` for an enum with a lifetime: a view of the variant's value, borrowed when
/// it borrows and cloned otherwise. Enums without a lifetime get no view.
fn reborrow_impl(o: &OneofEnum<'_, '_>) -> TokenStream {
    if o.o.lifetime.is_none() {
        return TokenStream::new();
    }
    let p = &o.p;
    let ident = o.o.ident;
    let (impl_generics, ty_generics, _) = o.o.generics.split_for_impl();
    let arms = o.variants().map(|v| {
        let vi = v.v.ident;
        if v.v.borrows {
            quote!(Self::#vi(v) => #ident::#vi(#p::Reborrow::reborrow(v)),)
        } else {
            quote!(Self::#vi(v) => #ident::#vi(::core::clone::Clone::clone(v)),)
        }
    });
    quote! {
        impl #impl_generics #p::Reborrow for #ident #ty_generics {
            type Borrowed<'__m> = #ident<'__m> where Self: '__m;
            fn reborrow(&self) -> #ident<'_> {
                match self {
                    #(#arms)*
                }
            }
        }
    }
}
