//! protobuf's JSON mapping, as the official Python runtime writes it
//! (`json_format.MessageToJson(message, preserving_proto_field_name=True)`, what `onnx`
//! saves) and reads it (`json_format.Parse(text, message)`).
//!
//! Printing: an object per message with the proto field names, fields in field-number
//! order, indented by two spaces as Python's `json.dumps(indent=2)`; 64-bit integers
//! as strings, `bytes` in base64, enums by name, `float` fields with the fewest digits
//! (from 6) that read back to the same value, `NaN` / `Infinity` / `-Infinity` as
//! strings, non-ASCII characters as `\u` escapes.
//!
//! Parsing accepts what `json_format.Parse` accepts: field names in proto or
//! lowerCamelCase form, integers as numbers or strings, floats as numbers or strings
//! (including `"NaN"`, `"Infinity"`), `bytes` in standard or URL-safe base64, enums
//! by name or number, `null` for an unset field. It refuses duplicate keys, unknown
//! fields, two members of a oneof and values out of their field's range; each error
//! names the field path and the line and column of the value.

use super::number::{
    integral, parse_python_float, parse_python_int_decimal, python_repr, shortest_float,
};
use super::{
    int_range, is_64_bit_int, list_fields, nested_fields, scalar, Fields, ParsedScalar, Raw,
    Scalar, TypeRegistry, WireWriter, MAX_DEPTH,
};
use crate::descriptor::{FieldDescriptor, FieldKind, Label, MessageDescriptor};
use crate::error::{Error, ErrorKind, Result, TextFormat};
use crate::message::{DecodeOwned, Message};

/// The message in protobuf's JSON mapping, as `onnx` saves it
/// (`json_format.MessageToJson(message, preserving_proto_field_name=True)`).
///
/// # Errors
/// A message or enum type missing from `registry`; errors of encoding the message.
pub fn to_string<M: Message>(message: &M, registry: &TypeRegistry) -> Result<String> {
    print_encoded(&message.encode_to_vec()?, M::DESCRIPTOR, registry)
}

/// The JSON of the message of type `descriptor` encoded in `bytes`.
///
/// # Errors
/// Malformed `bytes`; a type missing from `registry`; a `string` field that is not
/// UTF-8.
pub fn print_encoded(
    bytes: &[u8],
    descriptor: &'static MessageDescriptor,
    registry: &TypeRegistry,
) -> Result<String> {
    let tree = message_tree(bytes, &Fields::Message(descriptor), registry, 0)?;
    let mut out = String::new();
    write_json(&mut out, &tree, 0);
    Ok(out)
}

/// Reads a message from protobuf's JSON mapping (`json_format.Parse`).
///
/// # Errors
/// [`ErrorKind::InvalidText`] with the line and column for text that is not JSON or not
/// a JSON encoding of `M`; a type missing from `registry`.
pub fn from_str<M: DecodeOwned>(text: &str, registry: &TypeRegistry) -> Result<M> {
    M::decode_owned(&parse_to_encoded(text, M::DESCRIPTOR, registry)?)
}

/// Reads a message of type `descriptor` from protobuf's JSON mapping and gives its
/// binary encoding.
///
/// # Errors
/// As [`from_str`].
pub fn parse_to_encoded(
    text: &str,
    descriptor: &'static MessageDescriptor,
    registry: &TypeRegistry,
) -> Result<Vec<u8>> {
    let mut reader = JsonReader {
        text,
        pos: 0,
        line: 1,
        line_start: 0,
    };
    let value = reader.document()?;
    let short = descriptor
        .name
        .rsplit('.')
        .next()
        .unwrap_or(descriptor.name);
    let mut out = WireWriter::default();
    Converter { registry }.message(&value, &Fields::Message(descriptor), short, 0, &mut out)?;
    Ok(out.buf)
}

// --- printing -----------------------------------------------------------------------

/// A JSON value to print: strings are kept unescaped, numbers as their text.
enum Out {
    Object(Vec<(&'static str, Out)>),
    MapObject(Vec<(String, Out)>),
    Array(Vec<Out>),
    Str(String),
    Literal(String),
}

fn message_tree(
    bytes: &[u8],
    fields: &Fields,
    registry: &TypeRegistry,
    depth: usize,
) -> Result<Out> {
    if depth > crate::MAX_ENCODE_DEPTH as usize {
        return Err(Error::new(ErrorKind::RecursionLimitExceeded {
            limit: crate::MAX_ENCODE_DEPTH,
        }));
    }
    let mut members = Vec::new();
    for fv in list_fields(bytes, fields)? {
        let f = fv.field;
        let value = match f.kind {
            FieldKind::Message(_) => {
                let sub = nested_fields(&f.kind, registry)?.expect("a message kind");
                if f.label == Label::Repeated {
                    let mut items = Vec::new();
                    for v in &fv.values {
                        if let Raw::Len(body) = v {
                            items.push(message_tree(body, &sub, registry, depth + 1)?);
                        }
                    }
                    Out::Array(items)
                } else {
                    message_tree(&fv.message_body(), &sub, registry, depth + 1)?
                }
            }
            FieldKind::Map(k, v) => {
                let entry = Fields::MapEntry(k, v);
                let mut map: Vec<(String, Out)> = Vec::new();
                for raw in &fv.values {
                    let Raw::Len(body) = raw else { continue };
                    let listed = list_fields(body, &entry)?;
                    let key = match listed.iter().find(|x| x.field.number == 1) {
                        Some(x) => match scalar(k, x.values[0], registry)? {
                            Some(Scalar::Bool(b)) => b.to_string(),
                            Some(Scalar::Str(s)) => s.to_string(),
                            Some(Scalar::Signed(i)) => i.to_string(),
                            Some(Scalar::Unsigned(u)) => u.to_string(),
                            _ => continue,
                        },
                        None if *k == FieldKind::Bool => "false".into(),
                        None if *k == FieldKind::String => String::new(),
                        None => "0".into(),
                    };
                    let value = listed.iter().find(|x| x.field.number == 2);
                    let out = match v {
                        FieldKind::Message(_) => {
                            let sub = nested_fields(v, registry)?.expect("a message kind");
                            let body = value
                                .map(|x| x.message_body().into_owned())
                                .unwrap_or_default();
                            message_tree(&body, &sub, registry, depth + 1)?
                        }
                        _ => match value {
                            Some(x) => match scalar(v, x.values[0], registry)? {
                                Some(s) => scalar_json(v, &s),
                                None => continue,
                            },
                            None => default_json(v, registry)?,
                        },
                    };
                    match map.iter_mut().find(|(existing, _)| *existing == key) {
                        Some(slot) => slot.1 = out,
                        None => map.push((key, out)),
                    }
                }
                Out::MapObject(map)
            }
            _ => {
                let mut items = Vec::new();
                for v in &fv.values {
                    if let Some(s) = scalar(&f.kind, *v, registry)? {
                        items.push(scalar_json(&f.kind, &s));
                    }
                }
                if f.label == Label::Repeated {
                    if items.is_empty() {
                        continue;
                    }
                    Out::Array(items)
                } else {
                    match items.pop() {
                        Some(item) => item,
                        None => continue,
                    }
                }
            }
        };
        members.push((f.name, value));
    }
    Ok(Out::Object(members))
}

fn default_json(kind: &FieldKind, registry: &TypeRegistry) -> Result<Out> {
    Ok(match kind {
        FieldKind::Bool => Out::Literal("false".into()),
        FieldKind::String | FieldKind::Bytes => Out::Str(String::new()),
        FieldKind::Float | FieldKind::Double => Out::Literal("0.0".into()),
        FieldKind::Enum(name) => match registry.require_enum(name)?.first() {
            Some((n, _)) => Out::Str((*n).to_string()),
            None => Out::Literal("0".into()),
        },
        k if is_64_bit_int(k) => Out::Str("0".into()),
        _ => Out::Literal("0".into()),
    })
}

fn float_json(v: f64, repr: impl FnOnce(f64) -> String) -> Out {
    if v.is_nan() {
        Out::Str("NaN".into())
    } else if v.is_infinite() {
        Out::Str(if v < 0.0 { "-Infinity" } else { "Infinity" }.into())
    } else {
        Out::Literal(repr(v))
    }
}

fn scalar_json(kind: &FieldKind, s: &Scalar<'_>) -> Out {
    match s {
        Scalar::Signed(v) if is_64_bit_int(kind) => Out::Str(v.to_string()),
        Scalar::Unsigned(v) if is_64_bit_int(kind) => Out::Str(v.to_string()),
        Scalar::Signed(v) => Out::Literal(v.to_string()),
        Scalar::Unsigned(v) => Out::Literal(v.to_string()),
        Scalar::Float(v) => float_json(f64::from(*v), |_| python_repr(shortest_float(*v))),
        Scalar::Double(v) => float_json(*v, python_repr),
        Scalar::Bool(b) => Out::Literal(b.to_string()),
        Scalar::Str(s) => Out::Str((*s).to_string()),
        Scalar::Bytes(b) => Out::Str(base64_encode(b)),
        Scalar::Enum(name) => Out::Str((*name).to_string()),
    }
}

/// `json.dumps(value, indent=2)`.
fn write_json(out: &mut String, value: &Out, level: usize) {
    fn open(out: &mut String, bracket: char, level: usize, first: bool) {
        if first {
            out.push(bracket);
        } else {
            out.push(',');
        }
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', 2 * (level + 1)));
    }
    fn close(out: &mut String, bracket: char, level: usize) {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', 2 * level));
        out.push(bracket);
    }
    match value {
        Out::Object(members) if members.is_empty() => out.push_str("{}"),
        Out::MapObject(members) if members.is_empty() => out.push_str("{}"),
        Out::Array(items) if items.is_empty() => out.push_str("[]"),
        Out::Object(members) => {
            for (i, (name, v)) in members.iter().enumerate() {
                open(out, '{', level, i == 0);
                write_json_string(out, name);
                out.push_str(": ");
                write_json(out, v, level + 1);
            }
            close(out, '}', level);
        }
        Out::MapObject(members) => {
            for (i, (name, v)) in members.iter().enumerate() {
                open(out, '{', level, i == 0);
                write_json_string(out, name);
                out.push_str(": ");
                write_json(out, v, level + 1);
            }
            close(out, '}', level);
        }
        Out::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                open(out, '[', level, i == 0);
                write_json(out, v, level + 1);
            }
            close(out, ']', level);
        }
        Out::Str(s) => write_json_string(out, s),
        Out::Literal(s) => out.push_str(s),
    }
}

/// A JSON string as Python's `json.dumps(ensure_ascii=True)` writes it.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
        }
    }
    out.push('"');
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard or URL-safe base64, padding optional; `None` for other characters or a
/// length no encoding gives.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if body.len() % 4 == 1 {
        return None;
    }
    Some(out)
}

// --- parsing ------------------------------------------------------------------------

/// A JSON value with the position (line, column, from 1) where it starts.
struct Json {
    value: JsonValue,
    line: usize,
    column: usize,
}

enum JsonValue {
    Null,
    Bool(bool),
    /// The number's text; `integral` when it has no fraction and no exponent (Python's
    /// `json` reads those as `int`).
    Number {
        text: String,
        integral: bool,
    },
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl JsonValue {
    /// The value as Python's `str()` shows it in protobuf's messages.
    fn describe(&self) -> String {
        match self {
            JsonValue::Null => "None".into(),
            JsonValue::Bool(b) => if *b { "True" } else { "False" }.into(),
            JsonValue::Number { text, .. } => text.clone(),
            JsonValue::String(s) => s.clone(),
            JsonValue::Array(_) => "a list".into(),
            JsonValue::Object(_) => "an object".into(),
        }
    }
}

/// The deepest nesting of arrays and objects the reader follows.
const MAX_JSON_NESTING: usize = 512;

/// Reads JSON as Python's `json.loads` does (with `NaN`, `Infinity` and `-Infinity`),
/// refusing duplicate keys as protobuf's parser does.
struct JsonReader<'t> {
    text: &'t str,
    pos: usize,
    line: usize,
    line_start: usize,
}

impl JsonReader<'_> {
    fn error_at(&self, line: usize, column: usize, message: String) -> Error {
        Error::new(ErrorKind::InvalidText {
            format: TextFormat::Json,
            line,
            column,
            message,
        })
    }

    fn column(&self) -> usize {
        self.text[self.line_start..self.pos].chars().count() + 1
    }

    fn error(&self, message: impl Into<String>) -> Error {
        self.error_at(self.line, self.column(), message.into())
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.text.as_bytes().get(self.pos) {
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                _ => break,
            }
        }
    }

    fn document(&mut self) -> Result<Json> {
        self.skip_space();
        let v = self.value(0)?;
        self.skip_space();
        if self.pos < self.text.len() {
            return Err(self.error("Failed to load JSON: Extra data."));
        }
        Ok(v)
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, nesting: usize) -> Result<Json> {
        if nesting > MAX_JSON_NESTING {
            return Err(self.error("Failed to load JSON: nested too deeply."));
        }
        let (line, column) = (self.line, self.column());
        let value = match self.text.as_bytes().get(self.pos) {
            None => return Err(self.error("Failed to load JSON: Expecting value.")),
            Some(b'{') => {
                self.pos += 1;
                let mut members: Vec<(String, Json)> = Vec::new();
                self.skip_space();
                if !self.eat("}") {
                    loop {
                        self.skip_space();
                        if self.text.as_bytes().get(self.pos) != Some(&b'"') {
                            return Err(self.error(
                                "Failed to load JSON: Expecting property name enclosed in double quotes.",
                            ));
                        }
                        let (kl, kc) = (self.line, self.column());
                        let key = self.string()?;
                        if members.iter().any(|(k, _)| *k == key) {
                            return Err(self.error_at(
                                kl,
                                kc,
                                format!("Failed to load JSON: duplicate key {key}."),
                            ));
                        }
                        self.skip_space();
                        if !self.eat(":") {
                            return Err(self.error("Failed to load JSON: Expecting ':' delimiter."));
                        }
                        self.skip_space();
                        let v = self.value(nesting + 1)?;
                        members.push((key, v));
                        self.skip_space();
                        if self.eat("}") {
                            break;
                        }
                        if !self.eat(",") {
                            return Err(self.error("Failed to load JSON: Expecting ',' delimiter."));
                        }
                    }
                }
                JsonValue::Object(members)
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_space();
                if !self.eat("]") {
                    loop {
                        self.skip_space();
                        items.push(self.value(nesting + 1)?);
                        self.skip_space();
                        if self.eat("]") {
                            break;
                        }
                        if !self.eat(",") {
                            return Err(self.error("Failed to load JSON: Expecting ',' delimiter."));
                        }
                    }
                }
                JsonValue::Array(items)
            }
            Some(b'"') => JsonValue::String(self.string()?),
            Some(_) if self.eat("true") => JsonValue::Bool(true),
            Some(_) if self.eat("false") => JsonValue::Bool(false),
            Some(_) if self.eat("null") => JsonValue::Null,
            Some(_) if self.eat("NaN") => JsonValue::Number {
                text: "NaN".into(),
                integral: false,
            },
            Some(_) if self.eat("Infinity") => JsonValue::Number {
                text: "Infinity".into(),
                integral: false,
            },
            Some(_) if self.eat("-Infinity") => JsonValue::Number {
                text: "-Infinity".into(),
                integral: false,
            },
            Some(_) => self.number()?,
        };
        Ok(Json {
            value,
            line,
            column,
        })
    }

    fn number(&mut self) -> Result<JsonValue> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let digits = |p: &mut usize| {
            let s = *p;
            while bytes.get(*p).is_some_and(u8::is_ascii_digit) {
                *p += 1;
            }
            *p - s
        };
        let mut p = self.pos;
        if bytes.get(p) == Some(&b'-') {
            p += 1;
        }
        match bytes.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                digits(&mut p);
            }
            _ => return Err(self.error("Failed to load JSON: Expecting value.")),
        }
        let mut integral = true;
        if bytes.get(p) == Some(&b'.') && bytes.get(p + 1).is_some_and(u8::is_ascii_digit) {
            p += 1;
            digits(&mut p);
            integral = false;
        }
        if matches!(bytes.get(p), Some(b'e' | b'E')) {
            let mut q = p + 1;
            if matches!(bytes.get(q), Some(b'+' | b'-')) {
                q += 1;
            }
            if digits(&mut q) > 0 {
                p = q;
                integral = false;
            }
        }
        self.pos = p;
        Ok(JsonValue::Number {
            text: self.text[start..p].to_string(),
            integral,
        })
    }

    /// A string literal; lone surrogates (which Python keeps) become U+FFFD marked as
    /// unpaired by `Err` later, so they are refused as protobuf refuses them.
    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(self.error("Failed to load JSON: Unterminated string."));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let e = rest[1..].chars().next();
                    self.pos += 2;
                    match e {
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        Some('/') => out.push('/'),
                        Some('b') => out.push('\u{8}'),
                        Some('f') => out.push('\u{c}'),
                        Some('n') => out.push('\n'),
                        Some('r') => out.push('\r'),
                        Some('t') => out.push('\t'),
                        Some('u') => {
                            self.pos -= 2;
                            let unit = self.unicode_unit()?;
                            let c = if (0xD800..0xDC00).contains(&unit)
                                && self.text[self.pos..].starts_with("\\u")
                            {
                                let save = self.pos;
                                let low = self.unicode_unit()?;
                                if (0xDC00..0xE000).contains(&low) {
                                    char::from_u32(
                                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                                    )
                                } else {
                                    self.pos = save;
                                    None
                                }
                            } else {
                                char::from_u32(unit)
                            };
                            match c {
                                Some(c) => out.push(c),
                                None => return Err(self.error("Unpaired surrogate")),
                            }
                        }
                        _ => return Err(self.error("Failed to load JSON: Invalid \\escape.")),
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Failed to load JSON: Invalid control character."));
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                    if c == '\n' {
                        self.line += 1;
                        self.line_start = self.pos;
                    }
                }
            }
        }
    }

    /// `\uXXXX` at the current position.
    fn unicode_unit(&mut self) -> Result<u32> {
        let hex = self.text.get(self.pos + 2..self.pos + 6);
        match hex.and_then(|h| {
            u32::from_str_radix(h, 16)
                .ok()
                .filter(|_| h.bytes().all(|b| b.is_ascii_hexdigit()))
        }) {
            Some(v) => {
                self.pos += 6;
                Ok(v)
            }
            None => Err(self.error("Failed to load JSON: Invalid \\uXXXX escape.")),
        }
    }
}

/// protobuf's `json_name` of a field: lowerCamelCase of the proto name.
fn json_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

struct Converter<'r> {
    registry: &'r TypeRegistry,
}

fn err(at: &Json, message: String) -> Error {
    Error::new(ErrorKind::InvalidText {
        format: TextFormat::Json,
        line: at.line,
        column: at.column,
        message,
    })
}

impl Converter<'_> {
    fn message(
        &self,
        value: &Json,
        fields: &Fields,
        path: &str,
        depth: usize,
        out: &mut WireWriter,
    ) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(err(
                value,
                format!("Message too deep. Max recursion depth is {MAX_DEPTH}"),
            ));
        }
        let JsonValue::Object(members) = &value.value else {
            return Err(err(
                value,
                format!(
                    "Expected a JSON object for message type \"{}\" at \"{path}\", got {}.",
                    fields.full_name(),
                    value.value.describe()
                ),
            ));
        };
        let all = fields.all();
        // Encoded fields in the order given; a field given again replaces (scalars,
        // repeated fields) or merges into (messages) what was there.
        let mut chunks: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut oneofs: Vec<&str> = Vec::new();
        for (name, v) in members {
            let field = all
                .iter()
                .find(|f| json_name(f.name) == *name)
                .or_else(|| all.iter().find(|f| f.name == name))
                .copied();
            let Some(field) = field else {
                let names: Vec<String> = all
                    .iter()
                    .map(|f| format!("'{}'", json_name(f.name)))
                    .collect();
                return Err(err(
                    v,
                    format!(
                        "Message type \"{}\" has no field named \"{name}\" at \"{path}\".\n Available Fields(except extensions): \"[{}]\"",
                        fields.full_name(),
                        names.join(", ")
                    ),
                ));
            };
            let here = format!("{path}.{name}");
            if let (Some(group), false) = (field.oneof, matches!(v.value, JsonValue::Null)) {
                if oneofs.contains(&group) {
                    return Err(err(
                        v,
                        format!(
                            "Message type \"{}\" should not have multiple \"{group}\" oneof fields at \"{path}\".",
                            fields.full_name()
                        ),
                    ));
                }
                oneofs.push(group);
            }
            let number = field.number;
            if matches!(v.value, JsonValue::Null) {
                chunks.retain(|(n, _)| *n != number);
                continue;
            }
            let mut w = WireWriter::default();
            let fail = |e: Error| -> Error {
                match e.kind() {
                    ErrorKind::InvalidText {
                        message,
                        line,
                        column,
                        ..
                    } => Error::new(ErrorKind::InvalidText {
                        format: TextFormat::Json,
                        line: *line,
                        column: *column,
                        message: format!("Failed to parse {name} field: {message}"),
                    }),
                    _ => e,
                }
            };
            match (&field.kind, field.label) {
                (FieldKind::Map(k, val), _) => {
                    let JsonValue::Object(entries) = &v.value else {
                        return Err(fail(err(
                            v,
                            format!(
                                "Map field {} must be in a dict which is {} at {here}",
                                field.name,
                                v.value.describe()
                            ),
                        )));
                    };
                    for (key, item) in entries {
                        let key_json = Json {
                            value: JsonValue::String(key.clone()),
                            line: item.line,
                            column: item.column,
                        };
                        let mut entry = WireWriter::default();
                        let key_field = Fields::MapEntry(k, val).by_number(1).expect("key");
                        let key_value = self
                            .scalar(&key_json, &key_field, &format!("{here}.key"), true)
                            .map_err(fail)?;
                        entry.scalar(1, k, &key_value);
                        let value_field = Fields::MapEntry(k, val).by_number(2).expect("value");
                        self.value(
                            item,
                            &value_field,
                            &format!("{here}[{key}]"),
                            depth,
                            &mut entry,
                        )
                        .map_err(fail)?;
                        w.len_field(number, &entry.buf);
                    }
                    chunks.retain(|(n, _)| *n != number);
                }
                (_, Label::Repeated) => {
                    let JsonValue::Array(items) = &v.value else {
                        return Err(fail(err(
                            v,
                            format!(
                                "repeated field {name} must be in [] which is {} at {path}",
                                v.value.describe()
                            ),
                        )));
                    };
                    for (i, item) in items.iter().enumerate() {
                        let at = format!("{path}.{name}[{i}]");
                        if matches!(item.value, JsonValue::Null) {
                            return Err(fail(err(
                                item,
                                format!("null is not allowed to be used as an element in a repeated field at {at}."),
                            )));
                        }
                        self.value(item, &field, &at, depth, &mut w).map_err(fail)?;
                    }
                    chunks.retain(|(n, _)| *n != number);
                }
                (FieldKind::Message(_), _) => {
                    self.value(v, &field, &here, depth, &mut w).map_err(fail)?;
                }
                _ => {
                    self.value(v, &field, &here, depth, &mut w).map_err(fail)?;
                    chunks.retain(|(n, _)| *n != number);
                }
            }
            chunks.push((number, w.buf));
        }
        for (_, bytes) in chunks {
            out.buf.extend_from_slice(&bytes);
        }
        Ok(())
    }

    /// One value of `field` (an element, for a repeated field), written to `out`.
    fn value(
        &self,
        v: &Json,
        field: &FieldDescriptor,
        path: &str,
        depth: usize,
        out: &mut WireWriter,
    ) -> Result<()> {
        if let Some(sub) = nested_fields(&field.kind, self.registry)? {
            let mut body = WireWriter::default();
            self.message(v, &sub, path, depth + 1, &mut body)?;
            out.len_field(field.number, &body.buf);
        } else {
            let s = self.scalar(v, field, path, false)?;
            out.scalar(field.number, &field.kind, &s);
        }
        Ok(())
    }

    fn scalar(
        &self,
        v: &Json,
        field: &FieldDescriptor,
        path: &str,
        key: bool,
    ) -> Result<ParsedScalar> {
        let at = |m: String| err(v, format!("{m} at {path}"));
        Ok(match &field.kind {
            FieldKind::Bool => match (&v.value, key) {
                (JsonValue::String(s), true) if s == "true" => ParsedScalar::Bool(true),
                (JsonValue::String(s), true) if s == "false" => ParsedScalar::Bool(false),
                (_, true) => {
                    return Err(at(format!(
                        "Expected \"true\" or \"false\", not {}",
                        v.value.describe()
                    )))
                }
                (JsonValue::Bool(b), false) => ParsedScalar::Bool(*b),
                _ => return Err(at("Expected true or false without quotes".into())),
            },
            FieldKind::Float | FieldKind::Double => {
                ParsedScalar::Float(float_value(v, field, &at)?)
            }
            FieldKind::String => match &v.value {
                JsonValue::String(s) => ParsedScalar::Bytes(s.clone().into_bytes()),
                other => return Err(at(format!("expected a string, got {}", other.describe()))),
            },
            FieldKind::Bytes => match &v.value {
                JsonValue::String(s) => ParsedScalar::Bytes(
                    base64_decode(s).ok_or_else(|| at("Invalid base64-encoded string".into()))?,
                ),
                other => {
                    return Err(at(format!(
                        "expected a base64 string, got {}",
                        other.describe()
                    )))
                }
            },
            FieldKind::Enum(name) => {
                let values = self.registry.require_enum(name)?;
                if let JsonValue::String(s) = &v.value {
                    if let Some((_, n)) = values.iter().find(|(n, _)| n == s) {
                        return Ok(ParsedScalar::Int(i128::from(*n)));
                    }
                }
                let number = match &v.value {
                    JsonValue::String(s) => parse_python_int_decimal(s.trim()).flatten(),
                    JsonValue::Number {
                        text,
                        integral: true,
                    } => parse_python_int_decimal(text).flatten(),
                    JsonValue::Number { text, .. } => parse_python_float(text).and_then(integral),
                    JsonValue::Bool(b) => Some(i128::from(*b)),
                    _ => None,
                };
                match number.and_then(|n| i32::try_from(n).ok()) {
                    Some(n) if values.iter().any(|(_, x)| *x == n) => {
                        ParsedScalar::Int(i128::from(n))
                    }
                    _ => {
                        return Err(at(format!(
                            "Invalid enum value {} for enum type {name}",
                            v.value.describe()
                        )))
                    }
                }
            }
            kind => {
                let (min, max) = int_range(kind).expect("the remaining kinds are integers");
                let n = int_value(v, &at)?;
                match n {
                    Some(n) if (min..=max).contains(&n) => ParsedScalar::Int(n),
                    _ => return Err(at(format!("Value out of range: {}", v.value.describe()))),
                }
            }
        })
    }
}

/// protobuf's `_ConvertInteger`: an integral number, or a string holding one (or an
/// integral float); `Ok(None)` for one too large for 128 bits.
fn int_value(v: &Json, at: &dyn Fn(String) -> Error) -> Result<Option<i128>> {
    match &v.value {
        JsonValue::Number {
            text,
            integral: true,
        } => Ok(parse_python_int_decimal(text).flatten()),
        JsonValue::Number { text, .. } => {
            let f = parse_python_float(text).unwrap_or(f64::NAN);
            if f.is_finite() && f.fract() == 0.0 {
                Ok(integral(f))
            } else {
                Err(at(format!(
                    "Couldn't parse integer: {}",
                    python_float_text(text)
                )))
            }
        }
        JsonValue::String(s) => {
            if s.contains(' ') {
                return Err(at(format!("Couldn't parse integer: \"{s}\"")));
            }
            let trimmed = s.trim();
            if let Some(n) = parse_python_int_decimal(trimmed) {
                return Ok(n);
            }
            match parse_python_float(trimmed) {
                Some(f) if f.is_finite() && f.fract() == 0.0 => Ok(integral(f)),
                Some(_) => Err(at(format!("Couldn't parse non-integer string: \"{s}\""))),
                None => Err(at(format!("invalid literal for int() with base 10: '{s}'"))),
            }
        }
        JsonValue::Bool(b) => Err(at(format!(
            "Bool value {} is not acceptable for integer field",
            if *b { "True" } else { "False" }
        ))),
        other => Err(at(format!("expected an integer, got {}", other.describe()))),
    }
}

fn python_float_text(text: &str) -> String {
    parse_python_float(text).map_or_else(|| text.to_string(), python_repr)
}

/// protobuf's `_ConvertFloat`.
fn float_value(v: &Json, field: &FieldDescriptor, at: &dyn Fn(String) -> Error) -> Result<f64> {
    let is_float32 = field.kind == FieldKind::Float;
    match &v.value {
        JsonValue::Number { text, integral } => {
            let f = parse_python_float(text).unwrap_or(f64::NAN);
            if *integral {
                if f.is_infinite() {
                    return Err(at("int too large to convert to float".into()));
                }
                return Ok(f);
            }
            if f.is_nan() {
                return Err(at("Couldn't parse NaN, use quoted \"NaN\" instead".into()));
            }
            if f.is_infinite() {
                return Err(at(if f > 0.0 {
                    "Couldn't parse Infinity or value too large, use quoted \"Infinity\" instead"
                        .into()
                } else {
                    "Couldn't parse -Infinity or value too small, use quoted \"-Infinity\" instead"
                        .into()
                }));
            }
            if is_float32 && f > f64::from(f32::MAX) {
                return Err(at("Float value too large".into()));
            }
            if is_float32 && f < f64::from(f32::MIN) {
                return Err(at("Float value too small".into()));
            }
            Ok(f)
        }
        JsonValue::String(s) => {
            if s == "nan" {
                return Err(at(
                    "Couldn't parse float \"nan\", use \"NaN\" instead".into()
                ));
            }
            parse_python_float(s.trim()).ok_or_else(|| at(format!("Couldn't parse float: {s}")))
        }
        // Python's float(True) is 1.0, which protobuf's parser lets through.
        JsonValue::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        other => Err(at(format!("expected a number, got {}", other.describe()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::*;

    fn registry() -> &'static TypeRegistry {
        TypeRegistry::onnx()
    }

    #[test]
    fn prints_as_json_dumps_with_indent_2() {
        let t = Tensor {
            dims: vec![2, -1],
            name: Some("\u{e9}\"\n".into()),
            float_data: vec![0.1, f32::NAN, f32::NEG_INFINITY],
            raw_data: Some(b"\x00\xffab".to_vec().into()),
            data_location: Some(DataLocation::External.into()),
            ..Default::default()
        };
        let json = to_string(&t, registry()).unwrap();
        assert_eq!(
            json,
            "{\n  \"dims\": [\n    \"2\",\n    \"-1\"\n  ],\n  \"float_data\": [\n    0.1,\n    \"NaN\",\n    \"-Infinity\"\n  ],\n  \"name\": \"\\u00e9\\\"\\n\",\n  \"raw_data\": \"AP9hYg==\",\n  \"data_location\": \"EXTERNAL\"\n}"
        );
        let back: Tensor = from_str(&json, registry()).unwrap();
        assert_eq!(back.encode_to_vec().unwrap(), t.encode_to_vec().unwrap());
        assert_eq!(to_string(&Tensor::default(), registry()).unwrap(), "{}");
    }

    #[test]
    fn reads_camel_case_names_strings_for_numbers_and_url_safe_base64() {
        let t: Tensor = from_str(
            r#"{"dims": ["3", 4, 5.0], "dataType": "1", "rawData": "-_8", "doubleData": ["Infinity", "1e3", 2], "dataLocation": 1, "name": null}"#,
            registry(),
        )
        .unwrap();
        assert_eq!(t.dims, vec![3, 4, 5]);
        assert_eq!(t.data_type(), 1);
        assert_eq!(t.raw_data(), b"\xfb\xff");
        assert_eq!(t.double_data, vec![f64::INFINITY, 1000.0, 2.0]);
        assert_eq!(t.data_location(), DataLocation::External);
        assert!(t.name.is_none());
    }

    #[test]
    fn refuses_bad_json_with_its_position_and_path() {
        let cases = [
            ("{\"dims\": [1,]}", "Expecting value"),
            ("{\"name\": \"a\", \"name\": \"b\"}", "duplicate key name"),
            (
                "{\"nope\": 1}",
                "has no field named \"nope\" at \"TensorProto\"",
            ),
            ("{\"dims\": 1}", "repeated field dims must be in []"),
            ("{\"dims\": [null]}", "null is not allowed"),
            ("{\"data_type\": 1.5}", "Couldn't parse integer: 1.5"),
            ("{\"data_type\": 4294967296}", "Value out of range"),
            ("{\"data_type\": true}", "Bool value True is not acceptable"),
            ("{\"float_data\": [NaN]}", "use quoted \"NaN\""),
            ("{\"float_data\": [1e39]}", "Float value too large"),
            ("{\"float_data\": [\"nan\"]}", "use \"NaN\" instead"),
            ("{\"data_location\": \"NOPE\"}", "Invalid enum value NOPE"),
            ("{\"data_location\": 5}", "Invalid enum value 5"),
            ("{\"raw_data\": \"a\"}", "Invalid base64"),
            ("{\"segment\": 3}", "Expected a JSON object"),
            ("{\"name\": \"\\ud800\"}", "Unpaired surrogate"),
            ("[]", "Expected a JSON object"),
            ("{} x", "Extra data"),
        ];
        for (text, what) in cases {
            let e = from_str::<Tensor>(text, registry()).unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::InvalidText { .. }),
                "{text}: {e:?}"
            );
            assert!(e.to_string().contains(what), "{text}: {e}");
        }
        let e = from_str::<Tensor>("{\n  \"dims\": [\n    \"x\"]}", registry()).unwrap_err();
        assert!(e.to_string().contains(" 3:5: "), "{e}");
        assert!(e.to_string().contains("TensorProto.dims[0]"), "{e}");
    }

    #[test]
    fn refuses_two_members_of_a_oneof_and_deep_nesting() {
        let e = from_str::<TypeProto<'static>>(
            r#"{"tensor_type": {}, "sequence_type": {}}"#,
            registry(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("multiple \"value\" oneof fields"),
            "{e}"
        );
        let deep = "{\"sequence_type\": {\"elem_type\": ".repeat(60) + "{}" + &"}}".repeat(60);
        let e = from_str::<TypeProto<'static>>(&deep, registry()).unwrap_err();
        assert!(e.to_string().contains("too deep"), "{e}");
        let nested = "[".repeat(10_000);
        assert!(from_str::<TypeProto<'static>>(&nested, registry()).is_err());
    }

    #[test]
    fn base64_round_trips_every_length() {
        for n in 0..20 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
    }
}
