//! Parsing of `#[proto(...)]` attributes on containers, fields and variants. Only the
//! syntax is read here; whether the options make sense for the field's type is decided
//! in `check`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, LitInt, Token};

use crate::ctxt::Ctxt;

/// The largest field number protobuf allows.
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// An explicitly named scalar encoding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Encoding {
    Int32,
    Int64,
    UInt32,
    UInt64,
    SInt32,
    SInt64,
    Fixed32,
    Fixed64,
    SFixed32,
    SFixed64,
}

impl Encoding {
    pub fn from_name(name: &str) -> Option<Encoding> {
        Some(match name {
            "int32" => Encoding::Int32,
            "int64" => Encoding::Int64,
            "uint32" => Encoding::UInt32,
            "uint64" => Encoding::UInt64,
            "sint32" => Encoding::SInt32,
            "sint64" => Encoding::SInt64,
            "fixed32" => Encoding::Fixed32,
            "fixed64" => Encoding::Fixed64,
            "sfixed32" => Encoding::SFixed32,
            "sfixed64" => Encoding::SFixed64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Int32 => "int32",
            Encoding::Int64 => "int64",
            Encoding::UInt32 => "uint32",
            Encoding::UInt64 => "uint64",
            Encoding::SInt32 => "sint32",
            Encoding::SInt64 => "sint64",
            Encoding::Fixed32 => "fixed32",
            Encoding::Fixed64 => "fixed64",
            Encoding::SFixed32 => "sfixed32",
            Encoding::SFixed64 => "sfixed64",
        }
    }
}

/// A value with the span it was written at.
#[derive(Clone, Debug)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// Everything a field (or oneof variant) attribute may say.
#[derive(Default)]
pub struct FieldAttrs {
    /// Whether any `#[proto]` attribute was present.
    pub present: bool,
    pub number: Option<Spanned<u32>>,
    /// A number was written but refused (0, reserved, too large), or the attribute did
    /// not parse: already reported, so the field is not also "missing" its number.
    pub number_refused: bool,
    pub encoding: Option<Spanned<Encoding>>,
    pub packed: Option<Span>,
    pub name: Option<Spanned<String>>,
    pub default: Option<Expr>,
    pub key: Option<Spanned<Encoding>>,
    pub value: Option<Spanned<Encoding>>,
    pub oneof: Option<Spanned<Vec<Spanned<u32>>>>,
    pub unknown_fields: Option<Span>,
    pub skip: Option<Span>,
    /// Long runs of this repeated message field are decoded on several threads.
    pub parallel: Option<Span>,
}

/// Container (struct or enum) attributes.
#[derive(Default)]
pub struct ContainerAttrs {
    pub name: Option<Spanned<String>>,
    pub crate_path: Option<syn::Path>,
    /// `#[proto(nests)]`: the type is on a cycle of the schema, so the generated
    /// recursive walks guard the stack at each level of it.
    pub nests: bool,
    /// `#[proto(encode_check = "path")]`: a `fn(&Self) -> Result<()>` run before the
    /// message's fields are encoded, refusing values that must not be written.
    pub encode_check: Option<syn::Path>,
}

/// One item inside `#[proto(...)]`.
enum Item {
    Number(LitInt),
    Flag(Ident),
    KeyValue(Ident, Expr),
    List(Ident, Punctuated<LitInt, Token![,]>),
}

impl Parse for Item {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(LitInt) {
            return Ok(Item::Number(input.parse()?));
        }
        let ident = Ident::parse_any(input)?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            return Ok(Item::KeyValue(ident, input.parse()?));
        }
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            return Ok(Item::List(ident, Punctuated::parse_terminated(&content)?));
        }
        Ok(Item::Flag(ident))
    }
}

/// The items of one attribute; `None` (reported) when it does not parse.
fn proto_items(cx: &mut Ctxt, attr: &Attribute) -> Option<Vec<Item>> {
    match attr.parse_args_with(Punctuated::<Item, Token![,]>::parse_terminated) {
        Ok(items) => Some(items.into_iter().collect()),
        Err(e) => {
            cx.syn_error(e);
            None
        }
    }
}

/// Parses a field number, reporting 0, reserved and out-of-range numbers at the literal.
pub fn field_number(cx: &mut Ctxt, lit: &LitInt) -> Option<Spanned<u32>> {
    let Ok(n) = lit.base10_parse::<u64>() else {
        cx.error_spanned_by(
            lit,
            format!(
                "field number {} is too large: the maximum is {MAX_FIELD_NUMBER} (2^29 - 1)",
                lit.base10_digits()
            ),
        );
        return None;
    };
    if n == 0 {
        cx.error_spanned_by(lit, "field number 0 is not allowed: numbers start at 1");
        return None;
    }
    if n > MAX_FIELD_NUMBER {
        cx.error_spanned_by(
            lit,
            format!("field number {n} is too large: the maximum is {MAX_FIELD_NUMBER} (2^29 - 1)"),
        );
        return None;
    }
    if (19_000..=19_999).contains(&n) {
        cx.error_spanned_by(
            lit,
            format!("field number {n} is reserved by protobuf (19000 ..= 19999)"),
        );
        return None;
    }
    Some(Spanned {
        value: n as u32,
        span: lit.span(),
    })
}

fn encoding_from_expr(cx: &mut Ctxt, what: &str, expr: &Expr) -> Option<Spanned<Encoding>> {
    if let Expr::Path(p) = expr {
        if let Some(ident) = p.path.get_ident() {
            if let Some(enc) = Encoding::from_name(&ident.to_string()) {
                return Some(Spanned {
                    value: enc,
                    span: ident.span(),
                });
            }
        }
    }
    cx.error_spanned_by(
        expr,
        format!("`{what}` takes an integer encoding: int32, int64, uint32, uint64, sint32, sint64, fixed32, fixed64, sfixed32 or sfixed64"),
    );
    None
}

fn lit_str(cx: &mut Ctxt, key: &Ident, expr: &Expr) -> Option<Spanned<String>> {
    if let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(s),
        ..
    }) = expr
    {
        return Some(Spanned {
            value: s.value(),
            span: s.span(),
        });
    }
    cx.error_spanned_by(
        expr,
        format!("`{key}` takes a string literal, e.g. {key} = \"...\""),
    );
    None
}

fn set_once<T>(
    cx: &mut Ctxt,
    slot: &mut Option<T>,
    value: T,
    tokens: &dyn quote::ToTokens,
    what: &str,
) {
    if slot.is_some() {
        cx.error_spanned_by(tokens, format!("`{what}` is given more than once"));
    } else {
        *slot = Some(value);
    }
}

const FIELD_KEYS: &str = "a field number, `packed`, `name = \"...\"`, `default = ...`, `oneof(...)`, `unknown_fields`, `skip`, `parallel`, `key = ...`, `value = ...`, or an encoding (sint32, sint64, fixed32, fixed64, sfixed32, sfixed64, int32, int64, uint32, uint64)";

/// Reads the `#[proto(...)]` attributes of a field or oneof variant.
pub fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("proto")) {
        out.present = true;
        let Some(items) = proto_items(cx, attr) else {
            out.number_refused = true;
            continue;
        };
        for item in items {
            match item {
                Item::Number(lit) => {
                    if out.number.is_some() {
                        cx.error_spanned_by(
                            &lit,
                            "a field has exactly one number; this is a second one",
                        );
                    } else if let Some(n) = field_number(cx, &lit) {
                        out.number = Some(n);
                    } else {
                        out.number_refused = true;
                    }
                }
                Item::Flag(ident) => {
                    let name = ident.to_string();
                    if let Some(enc) = Encoding::from_name(&name) {
                        if let Some(prev) = &out.encoding {
                            cx.error_spanned_by(
                                &ident,
                                format!(
                                    "conflicting encodings: `{}` and `{}`; a field has one encoding",
                                    prev.value.name(),
                                    enc.name()
                                ),
                            );
                        } else {
                            out.encoding = Some(Spanned {
                                value: enc,
                                span: ident.span(),
                            });
                        }
                        continue;
                    }
                    match name.as_str() {
                        "packed" => set_once(cx, &mut out.packed, ident.span(), &ident, "packed"),
                        "unknown_fields" => set_once(
                            cx,
                            &mut out.unknown_fields,
                            ident.span(),
                            &ident,
                            "unknown_fields",
                        ),
                        "skip" => set_once(cx, &mut out.skip, ident.span(), &ident, "skip"),
                        "parallel" => {
                            set_once(cx, &mut out.parallel, ident.span(), &ident, "parallel");
                        }
                        _ => cx.error_spanned_by(
                            &ident,
                            format!("unknown attribute `{name}`; expected {FIELD_KEYS}"),
                        ),
                    }
                }
                Item::KeyValue(key, expr) => match key.to_string().as_str() {
                    "name" => {
                        if let Some(s) = lit_str(cx, &key, &expr) {
                            set_once(cx, &mut out.name, s, &key, "name");
                        }
                    }
                    "default" => set_once(cx, &mut out.default, expr, &key, "default"),
                    "key" => {
                        if let Some(e) = encoding_from_expr(cx, "key", &expr) {
                            set_once(cx, &mut out.key, e, &key, "key");
                        }
                    }
                    "value" => {
                        if let Some(e) = encoding_from_expr(cx, "value", &expr) {
                            set_once(cx, &mut out.value, e, &key, "value");
                        }
                    }
                    other => cx.error_spanned_by(
                        &key,
                        format!("unknown attribute `{other} = ...`; expected {FIELD_KEYS}"),
                    ),
                },
                Item::List(key, list) => {
                    if key != "oneof" {
                        cx.error_spanned_by(
                            &key,
                            format!("unknown attribute `{key}(...)`; expected {FIELD_KEYS}"),
                        );
                        continue;
                    }
                    if list.is_empty() {
                        // Still recorded (empty) below, so the field is read as a oneof
                        // and not also reported as missing its number.
                        cx.error_spanned_by(
                            &key,
                            "malformed oneof: list the variants' field numbers, e.g. oneof(1, 2)",
                        );
                    }
                    let numbers: Vec<_> = list.iter().filter_map(|l| field_number(cx, l)).collect();
                    set_once(
                        cx,
                        &mut out.oneof,
                        Spanned {
                            value: numbers,
                            span: key.span(),
                        },
                        &key,
                        "oneof",
                    );
                }
            }
        }
    }
    out
}

/// Reads the `#[proto(...)]` attributes of a struct or enum.
pub fn container_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("proto")) {
        for item in proto_items(cx, attr).unwrap_or_default() {
            match item {
                Item::KeyValue(key, expr) if key == "name" => {
                    if let Some(s) = lit_str(cx, &key, &expr) {
                        set_once(cx, &mut out.name, s, &key, "name");
                    }
                }
                Item::KeyValue(key, expr) if key == "crate" => {
                    match lit_str(cx, &key, &expr).map(|s| syn::parse_str::<syn::Path>(&s.value)) {
                        Some(Ok(path)) => out.crate_path = Some(path),
                        Some(Err(e)) => cx.error_spanned_by(&expr, format!("invalid crate path: {e}")),
                        None => {}
                    }
                }
                Item::Flag(i) if i == "nests" => out.nests = true,
                Item::KeyValue(key, expr) if key == "encode_check" => {
                    match lit_str(cx, &key, &expr).map(|s| syn::parse_str::<syn::Path>(&s.value)) {
                        Some(Ok(path)) => out.encode_check = Some(path),
                        Some(Err(e)) => cx.error_spanned_by(&expr, format!("invalid function path: {e}")),
                        None => {}
                    }
                }
                Item::Number(lit) => cx.error_spanned_by(
                    &lit,
                    "a field number belongs on a field, not on the type; the type takes `name = \"...\"` and `crate = \"...\"`",
                ),
                Item::Flag(i) | Item::KeyValue(i, _) | Item::List(i, _) => cx.error_spanned_by(
                    &i,
                    format!("unknown attribute `{i}` on a type; expected `name = \"...\"`, `crate = \"...\"`, `nests` or `encode_check = \"...\"`"),
                ),
            }
        }
    }
    out
}

/// `#[proto(name = "...")]` on an enum variant.
pub fn variant_name(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<Spanned<String>> {
    let mut name = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("proto")) {
        for item in proto_items(cx, attr).unwrap_or_default() {
            match item {
                Item::KeyValue(key, expr) if key == "name" => {
                    if let Some(s) = lit_str(cx, &key, &expr) {
                        set_once(cx, &mut name, s, &key, "name");
                    }
                }
                Item::Number(l) => cx.error_spanned_by(
                    &l,
                    "an enum variant's number is its discriminant: write `Variant = 3`",
                ),
                Item::Flag(i) | Item::KeyValue(i, _) | Item::List(i, _) => cx.error_spanned_by(
                    &i,
                    format!(
                        "unknown attribute `{i}` on an enum variant; expected `name = \"...\"`"
                    ),
                ),
            }
        }
    }
    name
}
