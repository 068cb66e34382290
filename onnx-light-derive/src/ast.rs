//! The derive input read into a syntax model: a message's fields with their shape
//! (optional, repeated, map, ...) and value type (scalar, string, bytes, enum, message), a
//! oneof's variants, an enum's values; the original syn nodes are kept for spans. Only
//! what cannot be read is reported here (to the `Ctxt`); whether it makes sense is
//! `check`'s question. Knows nothing of code generation.

use std::collections::BTreeMap;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{GenericArgument, Ident, Lifetime, PathArguments, Type};

use crate::attr::{self, ContainerAttrs, Encoding, FieldAttrs};
use crate::ctxt::Ctxt;

/// A Rust scalar type with a protobuf counterpart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scalar {
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Bool,
}

impl Scalar {
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
        }
    }

    /// The encodings a field of this Rust type may name.
    pub fn allows(self, e: Encoding) -> bool {
        use Encoding::*;
        matches!(
            (self, e),
            (Scalar::I32, Int32 | SInt32 | SFixed32)
                | (Scalar::I64, Int64 | SInt64 | SFixed64)
                | (Scalar::U32, UInt32 | Fixed32)
                | (Scalar::U64, UInt64 | Fixed64)
        )
    }
}

/// What one value of a field is.
#[derive(Clone)]
pub enum Value {
    Scalar(Scalar),
    /// `Str<'a>`
    Str,
    /// `String`
    String,
    /// `Bytes<'a>`
    Bytes,
    /// `Vec<u8>`
    VecBytes,
    /// `EnumValue<E>`: the enum type `E`.
    Enum(Type),
    /// Any other type: a message.
    Message(Type),
}

impl Value {
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Scalar(_) => "a scalar",
            Value::Str | Value::String => "a string",
            Value::Bytes | Value::VecBytes => "a bytes value",
            Value::Enum(_) => "an enum",
            Value::Message(_) => "a message",
        }
    }

    /// Scalars and enums may be packed.
    pub fn packable(&self) -> bool {
        matches!(self, Value::Scalar(_) | Value::Enum(_))
    }

    /// The codec type for this value with an optional explicit encoding.
    pub fn codec(&self, krate: &TokenStream, encoding: Option<Encoding>) -> TokenStream {
        let p = quote::quote!(#krate::__private);
        match self {
            Value::Scalar(s) => {
                let name = match (s, encoding) {
                    (_, Some(e)) => match e {
                        Encoding::Int32 => "Int32",
                        Encoding::Int64 => "Int64",
                        Encoding::UInt32 => "UInt32",
                        Encoding::UInt64 => "UInt64",
                        Encoding::SInt32 => "SInt32",
                        Encoding::SInt64 => "SInt64",
                        Encoding::Fixed32 => "Fixed32",
                        Encoding::Fixed64 => "Fixed64",
                        Encoding::SFixed32 => "SFixed32",
                        Encoding::SFixed64 => "SFixed64",
                    },
                    (Scalar::I32, None) => "Int32",
                    (Scalar::I64, None) => "Int64",
                    (Scalar::U32, None) => "UInt32",
                    (Scalar::U64, None) => "UInt64",
                    (Scalar::F32, None) => "Float",
                    (Scalar::F64, None) => "Double",
                    (Scalar::Bool, None) => "Bool",
                };
                let ident = Ident::new(name, proc_macro2::Span::call_site());
                quote::quote!(#p::#ident)
            }
            Value::Str => quote::quote!(#p::StrCodec),
            Value::String => quote::quote!(#p::StringCodec),
            Value::Bytes => quote::quote!(#p::BytesCodec),
            Value::VecBytes => quote::quote!(#p::VecBytesCodec),
            Value::Enum(e) => quote::quote!(#p::EnumCodec<#e>),
            Value::Message(m) => quote::quote!(#p::MessageCodec<#m>),
        }
    }
}

/// How a field holds its values.
// A few per field, alive only while the derive runs: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Shape {
    /// `Option<T>`: proto2 optional.
    Optional(Value),
    /// `Option<Box<M>>`: optional message, boxed for recursion.
    Boxed(Value),
    /// `T`: implicit presence.
    Implicit(Value),
    /// `Vec<T>`.
    Repeated(Value),
    /// `BTreeMap<K, V>` / `HashMap<K, V>`.
    Map(Value, Value),
    /// `Option<E>` with `#[proto(oneof(...))]`.
    Oneof(Type),
    /// `UnknownFields<'a>` with `#[proto(unknown_fields)]`.
    Unknown,
    /// `#[proto(skip)]`: not encoded; `Default` on decode.
    Skip,
}

pub struct Field<'a> {
    pub member: syn::Member,
    pub ident: Option<&'a Ident>,
    pub ty: &'a Type,
    pub attrs: FieldAttrs,
    pub shape: Shape,
    /// The protobuf field name.
    pub proto_name: String,
    /// True when the type mentions the container's lifetime.
    pub borrows: bool,
}

impl Field<'_> {
    pub fn number(&self) -> Option<u32> {
        self.attrs.number.as_ref().map(|n| n.value)
    }
}

pub struct Container<'a> {
    pub ident: &'a Ident,
    pub generics: &'a syn::Generics,
    pub lifetime: Option<&'a Lifetime>,
    pub attrs: ContainerAttrs,
    pub fields: Vec<Field<'a>>,
    pub proto_name: String,
}

/// One variant of a `#[derive(ProtoOneof)]` enum: a field of the oneof.
pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub attrs: FieldAttrs,
    /// The type the variant holds, `Box` included.
    pub ty: &'a Type,
    /// The value type; `None` when it could not be read (already reported).
    pub value: Option<Value>,
    /// The value is a `Box<M>`.
    pub boxed: bool,
    /// True when the type mentions the enum's lifetime.
    pub borrows: bool,
    /// The protobuf field name.
    pub proto_name: String,
}

impl Variant<'_> {
    pub fn number(&self) -> Option<u32> {
        self.attrs.number.as_ref().map(|n| n.value)
    }
}

/// A `#[derive(ProtoOneof)]` enum.
pub struct Oneof<'a> {
    pub ident: &'a Ident,
    pub generics: &'a syn::Generics,
    pub lifetime: Option<&'a Lifetime>,
    pub attrs: ContainerAttrs,
    /// The variants that hold exactly one value, in declaration order.
    pub variants: Vec<Variant<'a>>,
    /// Every variant number that parsed, malformed variants included, with the variant's
    /// default name: the stub lists them, so that a message naming them in `oneof(...)`
    /// does not fail its own consistency check as well.
    pub numbers: BTreeMap<u32, String>,
}

/// One value of a `#[derive(ProtoEnum)]` enum.
pub struct EnumValue<'a> {
    pub ident: &'a Ident,
    /// The protobuf name: `#[proto(name = "...")]` or the variant in SCREAMING_SNAKE_CASE.
    pub name: String,
    pub number: i32,
}

/// A `#[derive(ProtoEnum)]` enum.
pub struct Enum<'a> {
    pub ident: &'a Ident,
    pub generics: &'a syn::Generics,
    pub attrs: ContainerAttrs,
    pub values: Vec<EnumValue<'a>>,
    pub proto_name: String,
}

/// Last path segment of a type, with its generic arguments.
fn last_segment(ty: &Type) -> Option<(&Ident, Vec<&GenericArgument>)> {
    let Type::Path(tp) = ty else { return None };
    if tp.qself.is_some() {
        return None;
    }
    let seg = tp.path.segments.last()?;
    let args = match &seg.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().collect(),
        PathArguments::None => Vec::new(),
        PathArguments::Parenthesized(_) => return None,
    };
    Some((&seg.ident, args))
}

fn type_args<'t>(args: &[&'t GenericArgument]) -> Vec<&'t Type> {
    args.iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// The one type argument of `Wrapper<T>` if `ty` is a `Wrapper`.
pub fn unwrap_single<'t>(ty: &'t Type, wrapper: &str) -> Option<&'t Type> {
    let (ident, args) = last_segment(ty)?;
    if ident != wrapper {
        return None;
    }
    match type_args(&args).as_slice() {
        [t] => Some(t),
        _ => None,
    }
}

fn is_ident(ty: &Type, name: &str) -> bool {
    matches!(last_segment(ty), Some((i, args)) if i == name && args.is_empty())
}

/// Every lifetime named inside a type.
pub fn lifetimes_in(ty: &Type) -> Vec<Lifetime> {
    fn walk(ts: TokenStream, out: &mut Vec<Lifetime>) {
        let mut prev_tick = false;
        for tt in ts {
            match tt {
                TokenTree::Punct(p) if p.as_char() == '\'' => {
                    prev_tick = true;
                    continue;
                }
                TokenTree::Ident(i) if prev_tick => {
                    out.push(Lifetime::new(&format!("'{i}"), i.span()));
                }
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
            prev_tick = false;
        }
    }
    let mut out = Vec::new();
    walk(ty.to_token_stream(), &mut out);
    out
}

const UNSUPPORTED_INTS: &[&str] = &[
    "u8", "i8", "u16", "i16", "usize", "isize", "u128", "i128", "char",
];

/// Reads the value type of a oneof variant: one value, never a list or an optional.
fn oneof_value(cx: &mut Ctxt, ty: &Type) -> Option<Value> {
    for wrapper in ["Option", "Vec"] {
        let bytes = wrapper == "Vec" && unwrap_single(ty, "Vec").is_some_and(|t| is_ident(t, "u8"));
        if unwrap_single(ty, wrapper).is_some() && !bytes {
            cx.error_spanned_by(ty, format!("malformed oneof: a variant holds one value, not `{wrapper}<...>` (protobuf forbids repeated and optional fields in a oneof)"));
            return None;
        }
    }
    value_of(cx, ty)
}

/// True for a type the derive reads as a message: a type of the user's (a message, a
/// oneof or an enum) rather than a scalar, string, bytes or container.
fn is_user_type(ty: &Type) -> bool {
    matches!(value_of(&mut Ctxt::new(), ty), Some(Value::Message(_)))
}

/// Reads one value type.
fn value_of(cx: &mut Ctxt, ty: &Type) -> Option<Value> {
    if let Type::Reference(r) = ty {
        let hint = match &*r.elem {
            Type::Slice(_) => "use `Bytes<'a>` for borrowed bytes",
            Type::Path(p) if p.path.is_ident("str") => "use `Str<'a>` for borrowed strings",
            _ => "use an owned type, `Str<'a>` or `Bytes<'a>`",
        };
        cx.error_spanned_by(
            ty,
            format!("unsupported field type: references cannot be decoded into; {hint}"),
        );
        return None;
    }
    let Some((ident, args)) = last_segment(ty) else {
        cx.error_spanned_by(
            ty,
            "unsupported field type: expected i32, i64, u32, u64, f32, f64, bool, Str<'a>, String, Bytes<'a>, Vec<u8>, EnumValue<E> or a message type",
        );
        return None;
    };
    let name = ident.to_string();
    let scalar = match name.as_str() {
        "i32" => Some(Scalar::I32),
        "i64" => Some(Scalar::I64),
        "u32" => Some(Scalar::U32),
        "u64" => Some(Scalar::U64),
        "f32" => Some(Scalar::F32),
        "f64" => Some(Scalar::F64),
        "bool" => Some(Scalar::Bool),
        _ => None,
    };
    if let Some(s) = scalar {
        return Some(Value::Scalar(s));
    }
    if UNSUPPORTED_INTS.contains(&name.as_str()) {
        cx.error_spanned_by(
            ty,
            format!("unsupported field type `{name}`: protobuf integers are 32 or 64 bits; use i32, u32, i64 or u64"),
        );
        return None;
    }
    match name.as_str() {
        "String" if args.is_empty() => Some(Value::String),
        "Str" => Some(Value::Str),
        "Cow" => {
            cx.error_spanned_by(ty, "unsupported field type: use `Str<'a>` for strings that may borrow (16 bytes, short owned strings inline) and `Bytes<'a>` for bytes, not `Cow`");
            None
        }
        "Bytes" => Some(Value::Bytes),
        "Vec" => {
            if unwrap_single(ty, "Vec").is_some_and(|t| is_ident(t, "u8")) {
                Some(Value::VecBytes)
            } else {
                cx.error_spanned_by(ty, "unsupported field type: a list inside a list (only `Vec<u8>`, meaning bytes, may be nested)");
                None
            }
        }
        "EnumValue" => match type_args(&args).as_slice() {
            [e] if is_user_type(e) => Some(Value::Enum((*e).clone())),
            [e] => {
                cx.error_spanned_by(
                    e,
                    format!(
                        "`EnumValue` takes a `#[derive(ProtoEnum)]` enum, not `{}`",
                        e.to_token_stream()
                    ),
                );
                None
            }
            _ => {
                cx.error_spanned_by(ty, "`EnumValue` takes the enum type: `EnumValue<MyEnum>`");
                None
            }
        },
        "Option" | "Box" | "BTreeMap" | "HashMap" | "UnknownFields" => {
            cx.error_spanned_by(
                ty,
                format!("unsupported field type: `{name}` cannot be nested here"),
            );
            None
        }
        _ => Some(Value::Message(ty.clone())),
    }
}

/// Reads a field's shape from its type and attributes.
fn shape_of(cx: &mut Ctxt, ty: &Type, attrs: &FieldAttrs) -> Option<Shape> {
    if attrs.skip.is_some() {
        return Some(Shape::Skip);
    }
    if let Some(span) = attrs.unknown_fields {
        return match last_segment(ty) {
            Some((i, _)) if i == "UnknownFields" => Some(Shape::Unknown),
            _ => {
                cx.error_at(
                    span,
                    "`unknown_fields` goes on a field of type `UnknownFields<'a>`",
                );
                None
            }
        };
    }
    if let Some(oneof) = &attrs.oneof {
        return match unwrap_single(ty, "Option") {
            Some(inner) if is_user_type(inner) => Some(Shape::Oneof(inner.clone())),
            Some(inner) => {
                cx.error_spanned_by(
                    inner,
                    format!(
                        "malformed oneof: `{}` is not an enum; the field must be `Option<E>` where `E` derives `ProtoOneof`",
                        inner.to_token_stream()
                    ),
                );
                None
            }
            None => {
                cx.error_at(
                    oneof.span,
                    "malformed oneof: the field must be `Option<E>` where `E` derives `ProtoOneof`",
                );
                None
            }
        };
    }
    if let Some(inner) = unwrap_single(ty, "Option") {
        if let Some(boxed) = unwrap_single(inner, "Box") {
            let v = value_of(cx, boxed)?;
            if !matches!(v, Value::Message(_)) {
                cx.error_spanned_by(
                    ty,
                    "only messages may be boxed: use `Option<T>` for other types",
                );
                return None;
            }
            return Some(Shape::Boxed(v));
        }
        return value_of(cx, inner).map(Shape::Optional);
    }
    if let Some(inner) = unwrap_single(ty, "Vec") {
        if is_ident(inner, "u8") {
            return Some(Shape::Implicit(Value::VecBytes));
        }
        return value_of(cx, inner).map(Shape::Repeated);
    }
    if let Some((ident, args)) = last_segment(ty) {
        if ident == "BTreeMap" || ident == "HashMap" {
            let targs = type_args(&args);
            if targs.len() < 2 {
                cx.error_spanned_by(ty, "a map field needs key and value types");
                return None;
            }
            let k = value_of(cx, targs[0])?;
            let v = value_of(cx, targs[1])?;
            let key_ok = matches!(&k, Value::Scalar(s) if !matches!(s, Scalar::F32 | Scalar::F64))
                || matches!(k, Value::Str | Value::String);
            if !key_ok {
                cx.error_spanned_by(
                    targs[0],
                    "map keys must be integers, bools or strings (protobuf rule)",
                );
                return None;
            }
            return Some(Shape::Map(k, v));
        }
        if ident == "Box" {
            cx.error_spanned_by(
                ty,
                "a boxed message must be optional: write `Option<Box<M>>`",
            );
            return None;
        }
    }
    let v = value_of(cx, ty)?;
    if let Value::Message(_) = v {
        cx.error_spanned_by(
            ty,
            "a message field must be `Option<M>`, `Option<Box<M>>` or `Vec<M>` (proto2 messages have presence)",
        );
        return None;
    }
    Some(Shape::Implicit(v))
}

/// Splits `CamelCase` into words: a new word starts at an uppercase letter that follows
/// a lowercase one (`DimValue` -> dim, value; `Float8E4M3FN` stays one word).
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_uppercase() && prev_lower || out.is_empty() {
            out.push(String::new());
        }
        if let Some(w) = out.last_mut() {
            w.push(c);
        }
        prev_lower = c.is_lowercase();
    }
    out
}

/// `DimValue` -> `dim_value` (default protobuf names of oneof variants).
pub fn snake_case(s: &str) -> String {
    words(s).join("_").to_lowercase()
}

/// `DataLocation` -> `DATA_LOCATION` (default protobuf names of enum values).
pub fn screaming_snake_case(s: &str) -> String {
    words(s).join("_").to_uppercase()
}

/// Reads a struct.
pub fn container<'a>(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Option<Container<'a>> {
    let attrs = attr::container_attrs(cx, &input.attrs);
    let syn::Data::Struct(data) = &input.data else {
        cx.error_spanned_by(
            &input.ident,
            "#[derive(ProtoMessage)] works on structs; use ProtoOneof or ProtoEnum for enums",
        );
        return None;
    };
    let lifetime = message_lifetime(cx, &input.generics);
    let mut fields = Vec::new();
    for (i, f) in data.fields.iter().enumerate() {
        let fattrs = attr::field_attrs(cx, &f.attrs);
        let member = match &f.ident {
            Some(id) => syn::Member::Named(id.clone()),
            None => syn::Member::Unnamed(i.into()),
        };
        if !fattrs.present {
            cx.error_spanned_by(
                f.ident
                    .as_ref()
                    .map(|i| i.to_token_stream())
                    .unwrap_or_else(|| f.ty.to_token_stream()),
                "missing field number: add #[proto(N)] (or #[proto(skip)] to leave the field out)",
            );
            continue;
        }
        let Some(shape) = shape_of(cx, &f.ty, &fattrs) else {
            continue;
        };
        let rust_name = f
            .ident
            .as_ref()
            .map(|i| i.to_string().trim_start_matches("r#").to_string())
            .unwrap_or_else(|| format!("field_{i}"));
        let proto_name = fattrs
            .name
            .as_ref()
            .map(|n| n.value.clone())
            .unwrap_or(rust_name);
        let borrows =
            lifetime.is_some_and(|lt| lifetimes_in(&f.ty).iter().any(|l| l.ident == lt.ident));
        fields.push(Field {
            member,
            ident: f.ident.as_ref(),
            ty: &f.ty,
            attrs: fattrs,
            shape,
            proto_name,
            borrows,
        });
    }
    let proto_name = attrs
        .name
        .as_ref()
        .map(|n| n.value.clone())
        .unwrap_or_else(|| input.ident.to_string());
    Some(Container {
        ident: &input.ident,
        generics: &input.generics,
        lifetime,
        attrs,
        fields,
        proto_name,
    })
}

/// The one lifetime a message or oneof may have; type and const parameters are refused.
pub fn message_lifetime<'a>(cx: &mut Ctxt, generics: &'a syn::Generics) -> Option<&'a Lifetime> {
    let mut lifetime = None;
    for p in &generics.params {
        match p {
            syn::GenericParam::Lifetime(l) => {
                if lifetime.is_some() {
                    cx.error_spanned_by(
                        &l.lifetime,
                        "lifetime misuse: a message has at most one lifetime parameter (the input buffer's)",
                    );
                } else {
                    lifetime = Some(&l.lifetime);
                    if !l.bounds.is_empty() {
                        cx.error_spanned_by(
                            &l.bounds,
                            "lifetime misuse: the message lifetime takes no bounds",
                        );
                    }
                }
            }
            syn::GenericParam::Type(t) => cx.error_spanned_by(
                &t.ident,
                "generic type parameters are not supported on protobuf messages",
            ),
            syn::GenericParam::Const(c) => cx.error_spanned_by(
                &c.ident,
                "const generic parameters are not supported on protobuf messages",
            ),
        }
    }
    if let Some(w) = &generics.where_clause {
        cx.error_spanned_by(w, "where clauses are not supported on protobuf messages");
    }
    lifetime
}

/// Reads a `#[derive(ProtoOneof)]` enum. A variant that does not hold exactly one value
/// is reported and left out.
pub fn oneof<'a>(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Oneof<'a> {
    let attrs = attr::container_attrs(cx, &input.attrs);
    let lifetime = message_lifetime(cx, &input.generics);
    let mut variants = Vec::new();
    let mut numbers = BTreeMap::new();
    let syn::Data::Enum(data) = &input.data else {
        cx.error_spanned_by(&input.ident, "#[derive(ProtoOneof)] works on enums");
        return Oneof {
            ident: &input.ident,
            generics: &input.generics,
            lifetime,
            attrs,
            variants,
            numbers,
        };
    };
    if data.variants.is_empty() {
        cx.error_spanned_by(
            &input.ident,
            "malformed oneof: the enum needs at least one variant",
        );
    }
    for v in &data.variants {
        let vattrs = attr::field_attrs(cx, &v.attrs);
        if let Some(n) = &vattrs.number {
            numbers
                .entry(n.value)
                .or_insert_with(|| snake_case(&v.ident.to_string()));
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
        let (inner, boxed) = match unwrap_single(ty, "Box") {
            Some(inner) => (inner, true),
            None => (ty, false),
        };
        let value = oneof_value(cx, inner);
        let borrows =
            lifetime.is_some_and(|lt| lifetimes_in(ty).iter().any(|l| l.ident == lt.ident));
        let proto_name = vattrs
            .name
            .as_ref()
            .map(|n| n.value.clone())
            .unwrap_or_else(|| snake_case(&v.ident.to_string()));
        variants.push(Variant {
            ident: &v.ident,
            attrs: vattrs,
            ty,
            value,
            boxed,
            borrows,
            proto_name,
        });
    }
    Oneof {
        ident: &input.ident,
        generics: &input.generics,
        lifetime,
        attrs,
        variants,
        numbers,
    }
}

/// Reads a `#[derive(ProtoEnum)]` enum. A value whose number cannot be read is reported
/// and left out.
pub fn enumeration<'a>(cx: &mut Ctxt, input: &'a syn::DeriveInput) -> Enum<'a> {
    let attrs = attr::container_attrs(cx, &input.attrs);
    let ident = &input.ident;
    let mut values = Vec::new();
    match &input.data {
        syn::Data::Enum(data) => {
            if data.variants.is_empty() {
                cx.error_spanned_by(ident, "a protobuf enum needs at least one value");
            }
            for v in &data.variants {
                if !matches!(v.fields, syn::Fields::Unit) {
                    cx.error_spanned_by(&v.ident, "protobuf enum values hold no data");
                    continue;
                }
                let name = attr::variant_name(cx, &v.attrs)
                    .map(|n| n.value)
                    .unwrap_or_else(|| screaming_snake_case(&v.ident.to_string()));
                if let Some(number) = enum_number(cx, v) {
                    values.push(EnumValue {
                        ident: &v.ident,
                        name,
                        number,
                    });
                }
            }
        }
        _ => cx.error_spanned_by(ident, "#[derive(ProtoEnum)] works on fieldless enums"),
    }
    let proto_name = attrs
        .name
        .as_ref()
        .map(|n| n.value.clone())
        .unwrap_or_else(|| ident.to_string());
    Enum {
        ident,
        generics: &input.generics,
        attrs,
        values,
        proto_name,
    }
}

/// An enum value's number: its discriminant, an integer literal that fits an `i32`.
fn enum_number(cx: &mut Ctxt, v: &syn::Variant) -> Option<i32> {
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
