//! Validation of a parsed message, oneof or enum: everything that is syntactically fine but means
//! nothing (duplicate numbers, `packed` on a string, an encoding that does not fit the
//! Rust type, a borrow of a foreign lifetime). Each problem is reported at the attribute
//! token that causes it.

use std::collections::BTreeMap;

use proc_macro2::Span;

use crate::ast::{lifetimes_in, Container, Enum, Field, Oneof, Shape, Value};
use crate::attr::{Encoding, Spanned};
use crate::ctxt::Ctxt;

/// The field numbers claimed so far in one message or oneof, each with its owner: the
/// one duplicate-number check of both derives.
#[derive(Default)]
struct Numbers(BTreeMap<u32, String>);

impl Numbers {
    /// Claims `n` for `owner`, reporting it at its literal when it is taken already.
    fn claim(&mut self, cx: &mut Ctxt, n: &Spanned<u32>, owner: &str) {
        if let Some(prev) = self.0.get(&n.value) {
            cx.error_at(
                n.span,
                format!(
                    "duplicate field number {}: already used by `{prev}`",
                    n.value
                ),
            );
        } else {
            self.0.insert(n.value, owner.to_string());
        }
    }
}

/// Validates a `#[derive(ProtoMessage)]` struct.
pub fn container(cx: &mut Ctxt, c: &Container<'_>) {
    let mut numbers = Numbers::default();
    let mut unknown_seen = false;
    for f in &c.fields {
        field(cx, c, f);
        if let Some(n) = &f.attrs.number {
            numbers.claim(cx, n, &f.proto_name);
        }
        if let Some(list) = &f.attrs.oneof {
            for n in &list.value {
                numbers.claim(cx, n, &f.proto_name);
            }
        }
        if matches!(f.shape, Shape::Unknown) {
            if unknown_seen {
                cx.error_spanned_by(f.ty, "only one field may hold unknown fields");
            }
            unknown_seen = true;
        }
    }
}

/// Validates a `#[derive(ProtoOneof)]` enum: every variant has a number of its own and
/// only the options a oneof field takes.
pub fn oneof(cx: &mut Ctxt, o: &Oneof<'_>) {
    let mut numbers = Numbers::default();
    for v in &o.variants {
        let a = &v.attrs;
        match &a.number {
            None if a.number_refused => {}
            None => cx.error_spanned_by(
                v.ident,
                "missing field number: write #[proto(N)] on the variant",
            ),
            Some(n) => numbers.claim(cx, n, &v.ident.to_string()),
        }
        for (what, span) in [
            ("packed", a.packed),
            ("unknown_fields", a.unknown_fields),
            ("skip", a.skip),
        ] {
            refuse(cx, span, what, "does not apply to a oneof variant");
        }
        if let Some(o) = &a.oneof {
            cx.error_at(o.span, "malformed oneof: oneofs do not nest");
        }
        if let Some(d) = &a.default {
            cx.error_spanned_by(d, "`default` does not apply to a oneof variant");
        }
        let Some(value) = &v.value else { continue };
        if v.boxed && !matches!(value, Value::Message(_)) {
            cx.error_spanned_by(v.ty, "only message variants may be boxed");
        }
        if let Some(enc) = &a.encoding {
            match value {
                Value::Scalar(s) if s.allows(enc.value) => {}
                _ => cx.error_at(
                    enc.span,
                    format!("`{}` does not fit this variant's type", enc.value.name()),
                ),
            }
        }
    }
}

/// Validates a `#[derive(ProtoEnum)]` enum.
pub fn enumeration(cx: &mut Ctxt, e: &Enum<'_>) {
    if !e.generics.params.is_empty() {
        cx.error_spanned_by(e.generics, "a protobuf enum takes no generic parameters");
    }
}

fn refuse(cx: &mut Ctxt, span: Option<Span>, what: &str, why: &str) {
    if let Some(span) = span {
        cx.error_at(span, format!("`{what}` {why}"));
    }
}

fn field(cx: &mut Ctxt, c: &Container<'_>, f: &Field<'_>) {
    let a = &f.attrs;
    let special = matches!(f.shape, Shape::Oneof(_) | Shape::Unknown | Shape::Skip);

    // Numbers: exactly one for ordinary fields, none for special ones.
    let ty = f.ty;
    match (&a.number, special) {
        (None, false) if a.number_refused => {}
        (None, false) => cx.error_spanned_by(
            f.ident.map(|i| quote::quote!(#i)).unwrap_or_else(|| quote::quote!(#ty)),
            "missing field number: write #[proto(N, ...)] with N in 1 ..= 536870911",
        ),
        (Some(n), true) => cx.error_at(
            n.span,
            "this field takes no number of its own (oneof numbers go in `oneof(...)`; unknown and skipped fields have none)",
        ),
        _ => {}
    }

    // Options that only some shapes take.
    let value = match &f.shape {
        Shape::Optional(v) | Shape::Implicit(v) | Shape::Repeated(v) | Shape::Boxed(v) => Some(v),
        _ => None,
    };
    if let Some(span) = a.packed {
        match &f.shape {
            Shape::Repeated(v) if v.packable() => {}
            // Reported below as not combining with `skip`.
            Shape::Skip => {}
            Shape::Repeated(v) => cx.error_at(
                span,
                format!(
                    "`packed` applies only to repeated scalar or enum fields, and this field repeats {} (written one value at a time, never packed): remove `packed`",
                    v.describe()
                ),
            ),
            _ => cx.error_at(span, "`packed` applies only to repeated (`Vec<T>`) scalar fields"),
        }
    }
    if let Some(span) = a.parallel {
        match &f.shape {
            Shape::Repeated(Value::Message(_)) | Shape::Skip => {}
            _ => cx.error_at(
                span,
                "`parallel` applies only to repeated message fields (`Vec<M>` of a message type): long lists of messages are what is split across threads",
            ),
        }
    }
    if let Some(enc) = &a.encoding {
        match value {
            Some(Value::Scalar(s)) if s.allows(enc.value) => {}
            Some(Value::Scalar(s)) => cx.error_at(
                enc.span,
                format!(
                    "`{}` does not fit a field of Rust type `{}`; {}",
                    enc.value.name(),
                    s.rust_name(),
                    encoding_hint(enc.value)
                ),
            ),
            Some(v) => cx.error_at(
                enc.span,
                format!(
                    "`{}` applies to integer fields; this is {}",
                    enc.value.name(),
                    v.describe()
                ),
            ),
            None => cx.error_at(
                enc.span,
                format!(
                    "`{}` applies to integer fields; for a map write `key = {0}` or `value = {0}`",
                    enc.value.name()
                ),
            ),
        }
    }
    for (which, opt) in [("key", &a.key), ("value", &a.value)] {
        let Some(enc) = opt else { continue };
        match &f.shape {
            Shape::Map(k, v) => {
                let target = if which == "key" { k } else { v };
                match target {
                    Value::Scalar(s) if s.allows(enc.value) => {}
                    Value::Scalar(s) => cx.error_at(
                        enc.span,
                        format!(
                            "`{which} = {}` does not fit the map's {which} type `{}`; {}",
                            enc.value.name(),
                            s.rust_name(),
                            encoding_hint(enc.value)
                        ),
                    ),
                    other => cx.error_at(
                        enc.span,
                        format!("`{which} = ...` names an integer encoding, but the map's {which} is {}", other.describe()),
                    ),
                }
            }
            _ => cx.error_at(
                enc.span,
                format!("`{which} = ...` applies only to map fields"),
            ),
        }
    }
    if let Some(d) = &a.default {
        let ok = matches!(
            &f.shape,
            Shape::Optional(Value::Scalar(_) | Value::Str | Value::String)
        );
        if !ok {
            cx.error_spanned_by(
                d,
                "`default` applies only to optional scalar or string fields (`Option<T>`)",
            );
        }
    }
    if let Some(name) = &a.name {
        if name.value.is_empty()
            || !name
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            cx.error_at(
                name.span,
                "a protobuf field name is letters, digits and underscores",
            );
        }
    }
    if matches!(f.shape, Shape::Skip) {
        for (what, span) in [
            ("packed", a.packed),
            ("unknown_fields", a.unknown_fields),
            ("parallel", a.parallel),
        ] {
            refuse(cx, span, what, "cannot be combined with `skip`");
        }
    }

    // Lifetimes: only the message's own, or 'static.
    for lt in lifetimes_in(f.ty) {
        let own = c.lifetime.is_some_and(|l| l.ident == lt.ident);
        if !own && lt.ident != "static" && lt.ident != "_" {
            cx.error_spanned_by(
                &lt,
                match c.lifetime {
                    Some(l) => format!(
                        "lifetime misuse: `{lt}` is not the message's lifetime `{l}`; fields borrow only from the buffer the message is decoded from"
                    ),
                    None => format!(
                        "lifetime misuse: `{lt}` is not declared; add a lifetime parameter to the struct to borrow from the input"
                    ),
                },
            );
        }
        if lt.ident == "_" {
            cx.error_spanned_by(
                &lt,
                "lifetime misuse: write the message's lifetime (or 'static) instead of '_",
            );
        }
    }
}

fn encoding_hint(e: Encoding) -> &'static str {
    match e {
        Encoding::Int32 | Encoding::SInt32 | Encoding::SFixed32 => "it needs i32",
        Encoding::Int64 | Encoding::SInt64 | Encoding::SFixed64 => "it needs i64",
        Encoding::UInt32 | Encoding::Fixed32 => "it needs u32",
        Encoding::UInt64 | Encoding::Fixed64 => "it needs u64",
    }
}
