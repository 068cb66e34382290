//! protobuf's text format, as the official Python runtime writes it
//! (`text_format.MessageToString(message)`, also `str(message)`) and reads it
//! (`text_format.Parse(text, message)`).
//!
//! Printing: one `name: value` line per value, nested messages as `name {` ... `}`
//! indented by two spaces, fields in field-number order; strings with their non-ASCII
//! characters as they are and ASCII control characters, quotes and backslashes
//! escaped; bytes with every byte outside printable ASCII as a three-digit octal
//! escape; `float` fields with the fewest digits, from 6, that read back to the same
//! value, `double` fields as Python's `repr`; enums by name; map entries sorted by key.
//!
//! Parsing accepts the whole syntax protobuf's parser accepts: `#` comments, `:`
//! optional before a message, `{}` or `<>`, `[a, b]` lists for repeated fields,
//! adjacent string literals concatenated, C escapes (octal, `\x`, `\u`, `\U`),
//! integers in decimal, hex or octal, `inf`/`nan` and a trailing `f` on floats, enums
//! by name or number, `,` or `;` after a field. As `text_format.Parse` (not `Merge`),
//! it refuses a singular field given twice and two members of one oneof.

use super::number::{
    parse_python_float, parse_python_int_auto, python_repr, shortest_float, upb_double, upb_float,
};
use super::{
    int_range, list_fields, nested_fields, scalar, Fields, ParsedScalar, Raw, Scalar, TypeRegistry,
    WireWriter, MAX_DEPTH,
};
use crate::descriptor::{FieldDescriptor, FieldKind, Label, MessageDescriptor};
use crate::error::{Error, ErrorKind, Result, TextFormat};
use crate::message::{DecodeOwned, Message};

/// Which of protobuf's two printers of the text format to follow. They differ only in
/// how they write `float` and `double` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Style {
    /// `text_format.MessageToString` (what `onnx` saves as `textproto`): Python's
    /// `repr` of the value (`100.0`, `1e-05`), `float` fields with the fewest digits
    /// from 6 that read back to the same value.
    #[default]
    TextFormat,
    /// `str(message)` with protobuf's upb runtime: C's `%g` with 6 (then 9) digits for
    /// `float`, 15 (then 17) for `double` (`100`, `1e-05`).
    Upb,
}

/// The message in protobuf's text format (`text_format.MessageToString`).
///
/// # Errors
/// A message or enum type missing from `registry`; errors of encoding the message
/// (nesting too deep).
pub fn to_string<M: Message>(message: &M, registry: &TypeRegistry) -> Result<String> {
    print_encoded(
        &message.encode_to_vec()?,
        M::DESCRIPTOR,
        registry,
        Style::TextFormat,
    )
}

/// The message as `str(message)` shows it with protobuf's upb runtime: the text format
/// with C's number formatting ([`Style::Upb`]).
///
/// # Errors
/// As [`to_string`].
pub fn to_display_string<M: Message>(message: &M, registry: &TypeRegistry) -> Result<String> {
    print_encoded(
        &message.encode_to_vec()?,
        M::DESCRIPTOR,
        registry,
        Style::Upb,
    )
}

/// The text format of the message of type `descriptor` encoded in `bytes`, printed in
/// `style`.
///
/// # Errors
/// Malformed `bytes`; a type missing from `registry`; a `string` field that is not
/// UTF-8.
pub fn print_encoded(
    bytes: &[u8],
    descriptor: &'static MessageDescriptor,
    registry: &TypeRegistry,
    style: Style,
) -> Result<String> {
    let mut p = Printer {
        out: String::new(),
        registry,
        style,
    };
    p.fields(bytes, &Fields::Message(descriptor), 0, 0)?;
    Ok(p.out)
}

/// Reads a message from protobuf's text format (`text_format.Parse`).
///
/// # Errors
/// [`ErrorKind::InvalidText`] with the line and column for text that is not a valid
/// encoding of `M`; a type missing from `registry`.
pub fn from_str<M: DecodeOwned>(text: &str, registry: &TypeRegistry) -> Result<M> {
    M::decode_owned(&parse_to_encoded(text, M::DESCRIPTOR, registry)?)
}

/// Reads a message of type `descriptor` from protobuf's text format and gives its
/// binary encoding.
///
/// # Errors
/// As [`from_str`].
pub fn parse_to_encoded(
    text: &str,
    descriptor: &'static MessageDescriptor,
    registry: &TypeRegistry,
) -> Result<Vec<u8>> {
    let mut parser = Parser {
        tok: Tokenizer::new(text),
        registry,
        depth: 0,
    };
    let mut out = WireWriter::default();
    parser.fields_until(&Fields::Message(descriptor), None, &mut out)?;
    Ok(out.buf)
}

// --- printing -----------------------------------------------------------------------

struct Printer<'r> {
    out: String,
    registry: &'r TypeRegistry,
    style: Style,
}

/// A map key, ordered as protobuf sorts the keys of a map it prints.
#[derive(PartialEq, Eq, PartialOrd, Ord, Clone)]
enum MapKey {
    Bool(bool),
    Int(i128),
    Str(String),
}

impl Printer<'_> {
    fn pad(&mut self, indent: usize) {
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn fields(&mut self, bytes: &[u8], fields: &Fields, indent: usize, depth: usize) -> Result<()> {
        if depth > crate::MAX_ENCODE_DEPTH as usize {
            return Err(Error::new(ErrorKind::RecursionLimitExceeded {
                limit: crate::MAX_ENCODE_DEPTH,
            }));
        }
        for fv in list_fields(bytes, fields)? {
            let f = fv.field;
            match f.kind {
                FieldKind::Message(_) => {
                    let sub = nested_fields(&f.kind, self.registry)?.expect("a message kind");
                    if f.label == Label::Repeated {
                        for v in &fv.values {
                            if let Raw::Len(body) = v {
                                self.message(f.name, body, &sub, indent, depth)?;
                            }
                        }
                    } else {
                        self.message(f.name, &fv.message_body(), &sub, indent, depth)?;
                    }
                }
                FieldKind::Map(k, v) => self.map(&f, &fv.values, k, v, indent, depth)?,
                _ => {
                    for v in &fv.values {
                        if let Some(s) = scalar(&f.kind, *v, self.registry)? {
                            self.pad(indent);
                            self.out.push_str(f.name);
                            self.out.push_str(": ");
                            self.scalar(&s);
                            self.out.push('\n');
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn message(
        &mut self,
        name: &str,
        body: &[u8],
        fields: &Fields,
        indent: usize,
        depth: usize,
    ) -> Result<()> {
        self.pad(indent);
        self.out.push_str(name);
        self.out.push_str(" {\n");
        self.fields(body, fields, indent + 2, depth + 1)?;
        self.pad(indent);
        self.out.push_str("}\n");
        Ok(())
    }

    /// A map field: one entry message per key, sorted by key, key and value always
    /// written (the printers build each entry from the key and the value).
    fn map(
        &mut self,
        f: &FieldDescriptor,
        entries: &[Raw<'_>],
        key_kind: &'static FieldKind,
        value_kind: &'static FieldKind,
        indent: usize,
        depth: usize,
    ) -> Result<()> {
        let entry_fields = Fields::MapEntry(key_kind, value_kind);
        // Each entry's key (to sort by) and its printed lines; a later key replaces.
        let mut rows: Vec<(MapKey, String)> = Vec::new();
        for raw in entries {
            let Raw::Len(body) = raw else { continue };
            let listed = list_fields(body, &entry_fields)?;
            let key = listed
                .iter()
                .find(|x| x.field.number == 1)
                .and_then(|x| x.values.last());
            let key = match key {
                Some(r) => scalar(key_kind, *r, self.registry)?,
                None => default_scalar(key_kind, self.registry)?,
            };
            let Some(key) = key else { continue };
            let sort = match &key {
                Scalar::Bool(b) => MapKey::Bool(*b),
                Scalar::Signed(v) => MapKey::Int(i128::from(*v)),
                Scalar::Unsigned(v) => MapKey::Int(i128::from(*v)),
                Scalar::Str(s) => MapKey::Str((*s).to_string()),
                _ => continue,
            };
            let saved = std::mem::take(&mut self.out);
            self.pad(indent);
            self.out.push_str(f.name);
            self.out.push_str(" {\n");
            self.pad(indent + 2);
            self.out.push_str("key: ");
            self.scalar(&key);
            self.out.push('\n');
            let value = listed.iter().find(|x| x.field.number == 2);
            if let FieldKind::Message(_) = value_kind {
                let sub = nested_fields(value_kind, self.registry)?.expect("a message kind");
                let body = value
                    .map(|v| v.message_body().into_owned())
                    .unwrap_or_default();
                self.message("value", &body, &sub, indent + 2, depth + 1)?;
            } else {
                let v = match value.and_then(|v| v.values.last()) {
                    Some(r) => scalar(value_kind, *r, self.registry)?,
                    None => default_scalar(value_kind, self.registry)?,
                };
                if let Some(v) = v {
                    self.pad(indent + 2);
                    self.out.push_str("value: ");
                    self.scalar(&v);
                    self.out.push('\n');
                }
            }
            self.pad(indent);
            self.out.push_str("}\n");
            let text = std::mem::replace(&mut self.out, saved);
            match rows.iter_mut().find(|r| r.0 == sort) {
                Some(row) => row.1 = text,
                None => rows.push((sort, text)),
            }
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, text) in rows {
            self.out.push_str(&text);
        }
        Ok(())
    }

    fn scalar(&mut self, s: &Scalar<'_>) {
        let out = &mut self.out;
        match s {
            Scalar::Signed(v) => out.push_str(&v.to_string()),
            Scalar::Unsigned(v) => out.push_str(&v.to_string()),
            Scalar::Float(v) => out.push_str(&match self.style {
                Style::TextFormat => python_repr(shortest_float(*v)),
                Style::Upb => upb_float(*v),
            }),
            Scalar::Double(v) => out.push_str(&match self.style {
                Style::TextFormat => python_repr(*v),
                Style::Upb => upb_double(*v),
            }),
            Scalar::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Scalar::Enum(name) => out.push_str(name),
            Scalar::Str(text) => {
                out.push('"');
                for c in text.chars() {
                    if c.is_ascii() {
                        escape_ascii(out, c as u8);
                    } else {
                        out.push(c);
                    }
                }
                out.push('"');
            }
            Scalar::Bytes(bytes) => {
                out.push('"');
                for &b in *bytes {
                    escape_ascii(out, b);
                }
                out.push('"');
            }
        }
    }
}

/// The proto default of a scalar kind (an enum's first value).
fn default_scalar(kind: &FieldKind, registry: &TypeRegistry) -> Result<Option<Scalar<'static>>> {
    Ok(Some(match kind {
        FieldKind::Float => Scalar::Float(0.0),
        FieldKind::Double => Scalar::Double(0.0),
        FieldKind::Bool => Scalar::Bool(false),
        FieldKind::String => Scalar::Str(""),
        FieldKind::Bytes => Scalar::Bytes(&[]),
        FieldKind::Enum(name) => match registry.require_enum(name)?.first() {
            Some((n, _)) => Scalar::Enum(n),
            None => return Ok(None),
        },
        _ => Scalar::Signed(0),
    }))
}

/// One byte as protobuf's `CEscape` writes it: printable ASCII as itself (quotes and
/// backslash escaped), `\t` `\n` `\r` by name, anything else as three octal digits.
fn escape_ascii(out: &mut String, b: u8) {
    match b {
        b'\t' => out.push_str("\\t"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'"' => out.push_str("\\\""),
        b'\'' => out.push_str("\\'"),
        b'\\' => out.push_str("\\\\"),
        32..=126 => out.push(b as char),
        _ => {
            out.push('\\');
            out.push(char::from(b'0' + (b >> 6)));
            out.push(char::from(b'0' + ((b >> 3) & 7)));
            out.push(char::from(b'0' + (b & 7)));
        }
    }
}

// --- parsing ------------------------------------------------------------------------

/// Python's `\s` in a `str` pattern (`str.isspace`).
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Splits the text into protobuf's tokens, line by line, as its Python tokenizer does:
/// identifiers, numbers, quoted strings (to the end of the line when unterminated) and
/// single characters; whitespace and `#` comments between them.
struct Tokenizer<'t> {
    lines: Vec<&'t str>,
    /// Index of the current line, and byte offset of the current token in it.
    line: usize,
    column: usize,
    token: &'t str,
    prev_line: usize,
    prev_column: usize,
}

impl<'t> Tokenizer<'t> {
    fn new(text: &'t str) -> Self {
        let mut t = Tokenizer {
            lines: text.split('\n').collect(),
            line: 0,
            column: 0,
            token: "",
            prev_line: 0,
            prev_column: 0,
        };
        t.skip_whitespace();
        t.read_token();
        t
    }

    fn current_line(&self) -> &'t str {
        self.lines.get(self.line).copied().unwrap_or("")
    }

    /// Moves past the end of exhausted lines.
    fn pop_line(&mut self) {
        while self.line < self.lines.len() && self.lines[self.line].len() <= self.column {
            self.line += 1;
            self.column = 0;
        }
    }

    fn skip_whitespace(&mut self) {
        loop {
            self.pop_line();
            let rest = &self.current_line()[self.column..];
            let Some(c) = rest.chars().next() else { return };
            if c == '#' {
                self.column += rest.len();
            } else if is_python_space(c) {
                self.column += c.len_utf8();
            } else {
                return;
            }
        }
    }

    fn read_token(&mut self) {
        if self.line >= self.lines.len() {
            self.token = "";
            return;
        }
        let line = self.current_line();
        let rest = &line[self.column..];
        let bytes = rest.as_bytes();
        let first = rest
            .chars()
            .next()
            .expect("skip_whitespace stops at a character");
        let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-');
        let len = if first.is_ascii_alphabetic() || first == '_' {
            1 + bytes[1..].iter().take_while(|&&b| word(b)).count()
        } else if first.is_ascii_digit()
            || first == '+'
            || first == '-'
            || (first == '.' && bytes.get(1).is_some_and(u8::is_ascii_digit))
        {
            1 + bytes[1..]
                .iter()
                .take_while(|&&b| word(b) || b == b'.')
                .count()
        } else if first == '"' || first == '\'' {
            let quote = first as u8;
            let mut i = 1;
            loop {
                match bytes.get(i) {
                    None => break,
                    Some(&b) if b == quote => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        i += 1;
                        if let Some(c) = rest[i..].chars().next() {
                            i += c.len_utf8();
                        }
                    }
                    Some(_) => i += rest[i..].chars().next().map_or(1, char::len_utf8),
                }
            }
            i
        } else {
            first.len_utf8()
        };
        self.token = &rest[..len];
    }

    fn next(&mut self) {
        self.prev_line = self.line;
        self.prev_column = self.column;
        self.column += self.token.len();
        self.skip_whitespace();
        self.read_token();
    }

    fn at_end(&self) -> bool {
        self.token.is_empty()
    }

    fn try_consume(&mut self, token: &str) -> bool {
        if self.token == token && !self.at_end() {
            self.next();
            true
        } else {
            false
        }
    }

    fn consume(&mut self, token: &str) -> Result<()> {
        if self.try_consume(token) {
            Ok(())
        } else {
            Err(self.error(format!("Expected \"{token}\".")))
        }
    }

    fn position(&self, line: usize, column: usize) -> (usize, usize) {
        let text = self.lines.get(line).copied().unwrap_or("");
        let chars = text.get(..column).map_or(column, |s| s.chars().count());
        (line + 1, chars + 1)
    }

    /// An error at the current token.
    fn error(&self, message: String) -> Error {
        let (line, column) = self.position(self.line, self.column);
        invalid(line, column, message)
    }

    /// An error at the token just consumed.
    fn error_previous(&self, message: String) -> Error {
        let (line, column) = self.position(self.prev_line, self.prev_column);
        invalid(line, column, message)
    }
}

fn invalid(line: usize, column: usize, message: String) -> Error {
    Error::new(ErrorKind::InvalidText {
        format: TextFormat::TextProto,
        line,
        column,
        message,
    })
}

/// What one message being parsed has seen: its set singular fields and oneof members.
#[derive(Default)]
struct Seen {
    singular: Vec<u32>,
    oneofs: Vec<(&'static str, &'static str)>,
}

struct Parser<'t, 'r> {
    tok: Tokenizer<'t>,
    registry: &'r TypeRegistry,
    depth: usize,
}

impl Parser<'_, '_> {
    /// Fields up to `end` (the closing bracket), or to the end of the text.
    fn fields_until(
        &mut self,
        fields: &Fields,
        end: Option<&str>,
        out: &mut WireWriter,
    ) -> Result<()> {
        let mut seen = Seen::default();
        loop {
            match end {
                Some(end) => {
                    if self.tok.try_consume(end) {
                        return Ok(());
                    }
                    if self.tok.at_end() {
                        return Err(self.tok.error_previous(format!("Expected \"{end}\".")));
                    }
                }
                None if self.tok.at_end() => return Ok(()),
                None => {}
            }
            self.field(fields, &mut seen, out)?;
        }
    }

    fn field(&mut self, fields: &Fields, seen: &mut Seen, out: &mut WireWriter) -> Result<()> {
        let full_name = fields.full_name();
        if self.tok.token == "[" {
            return Err(self.tok.error(format!(
                "Message type \"{full_name}\" does not have extensions."
            )));
        }
        let name = self.tok.token;
        if !name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            return Err(self
                .tok
                .error(format!("Expected identifier or number, got {name}.")));
        }
        self.tok.next();
        let Some(field) = fields.by_name(name) else {
            return Err(self.tok.error_previous(format!(
                "Message type \"{full_name}\" has no field named \"{name}\"."
            )));
        };
        if let Some(group) = field.oneof {
            if let Some((_, other)) = seen
                .oneofs
                .iter()
                .find(|(g, n)| *g == group && *n != field.name)
            {
                return Err(self.tok.error_previous(format!(
                    "Field \"{}\" is specified along with field \"{other}\", another member of oneof \"{group}\" for message type \"{full_name}\".",
                    field.name
                )));
            }
        }
        let is_message = matches!(field.kind, FieldKind::Message(_) | FieldKind::Map(..));
        if is_message {
            self.tok.try_consume(":");
        } else {
            self.tok.consume(":")?;
        }
        if field.label == Label::Repeated && self.tok.try_consume("[") {
            if !self.tok.try_consume("]") {
                loop {
                    self.value(fields, &field, seen, out)?;
                    if self.tok.try_consume("]") {
                        break;
                    }
                    self.tok.consume(",")?;
                }
            }
        } else {
            self.value(fields, &field, seen, out)?;
        }
        if !self.tok.try_consume(",") {
            self.tok.try_consume(";");
        }
        Ok(())
    }

    fn value(
        &mut self,
        fields: &Fields,
        field: &FieldDescriptor,
        seen: &mut Seen,
        out: &mut WireWriter,
    ) -> Result<()> {
        let duplicate = || {
            format!(
                "Message type \"{}\" should not have multiple \"{}\" fields.",
                fields.full_name(),
                field.name
            )
        };
        if let Some(sub) = nested_fields(&field.kind, self.registry)? {
            let end = if self.tok.try_consume("<") {
                ">"
            } else {
                self.tok.consume("{")?;
                "}"
            };
            if field.label != Label::Repeated && seen.singular.contains(&field.number) {
                return Err(self.tok.error_previous(duplicate()));
            }
            if self.depth >= MAX_DEPTH {
                return Err(self.tok.error_previous(format!(
                    "Message too deep: more than {MAX_DEPTH} levels of nested messages."
                )));
            }
            self.depth += 1;
            let mut body = WireWriter::default();
            self.fields_until(&sub, Some(end), &mut body)?;
            self.depth -= 1;
            out.len_field(field.number, &body.buf);
        } else {
            let value = self.scalar(field)?;
            if field.label != Label::Repeated {
                if seen.singular.contains(&field.number) {
                    return Err(self.tok.error_previous(duplicate()));
                }
                // A field without presence counts as given only with a non-default value.
                if field.label == Label::Implicit && is_default(&value) {
                    out.scalar(field.number, &field.kind, &value);
                    return Ok(());
                }
            }
            out.scalar(field.number, &field.kind, &value);
        }
        if field.label != Label::Repeated {
            seen.singular.push(field.number);
        }
        if let Some(group) = field.oneof {
            seen.oneofs.push((group, field.name));
        }
        Ok(())
    }

    fn scalar(&mut self, field: &FieldDescriptor) -> Result<ParsedScalar> {
        let token = self.tok.token;
        let value = match &field.kind {
            FieldKind::Float | FieldKind::Double => {
                ParsedScalar::Float(parse_float(token).map_err(|m| self.tok.error(m))?)
            }
            FieldKind::Bool => ParsedScalar::Bool(match token {
                "true" | "t" | "1" | "True" => true,
                "false" | "f" | "0" | "False" => false,
                _ => return Err(self.tok.error("Expected \"true\" or \"false\".".into())),
            }),
            FieldKind::String | FieldKind::Bytes => {
                let bytes = self.byte_string()?;
                if field.kind == FieldKind::String && std::str::from_utf8(&bytes).is_err() {
                    return Err(self
                        .tok
                        .error_previous("Couldn't parse string: the bytes are not UTF-8.".into()));
                }
                return Ok(ParsedScalar::Bytes(bytes));
            }
            FieldKind::Enum(name) => {
                let values = self.registry.require_enum(name)?;
                let number = match parse_python_int_auto(token, false) {
                    Some(n) => match n.and_then(|n| i32::try_from(n).ok()) {
                        Some(n) if values.iter().any(|(_, v)| *v == n) => n,
                        _ => {
                            return Err(self.tok.error(format!(
                                "Enum type \"{name}\" has no value with number {token}."
                            )))
                        }
                    },
                    None => match values.iter().find(|(n, _)| *n == token) {
                        Some((_, v)) => *v,
                        None => {
                            return Err(self.tok.error(format!(
                                "Enum type \"{name}\" has no value named {token}."
                            )))
                        }
                    },
                };
                ParsedScalar::Int(i128::from(number))
            }
            kind => {
                let (min, max) = int_range(kind).expect("the remaining kinds are integers");
                match parse_python_int_auto(token, true) {
                    None => return Err(self.tok.error(format!("Couldn't parse integer: {token}"))),
                    Some(Some(v)) if (min..=max).contains(&v) => ParsedScalar::Int(v),
                    Some(_) => return Err(self.tok.error(format!("Value out of range: {token}"))),
                }
            }
        };
        self.tok.next();
        Ok(value)
    }

    /// One or more adjacent string literals, unescaped and concatenated.
    fn byte_string(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut first = true;
        loop {
            let token = self.tok.token;
            let quote = token.chars().next().filter(|c| *c == '"' || *c == '\'');
            let Some(quote) = quote else {
                if first {
                    return Err(self
                        .tok
                        .error(format!("Expected string but found: {token:?}")));
                }
                return Ok(out);
            };
            if token.len() < 2 || !token.ends_with(quote) {
                return Err(self
                    .tok
                    .error(format!("String missing ending quote: {token:?}")));
            }
            unescape(&token[1..token.len() - 1], &mut out).map_err(|m| self.tok.error(m))?;
            self.tok.next();
            first = false;
        }
    }
}

fn is_default(v: &ParsedScalar) -> bool {
    match v {
        ParsedScalar::Int(i) => *i == 0,
        ParsedScalar::Float(f) => *f == 0.0,
        ParsedScalar::Bool(b) => !b,
        ParsedScalar::Bytes(b) => b.is_empty(),
    }
}

/// protobuf's `ParseFloat`: Python's `float()`, `inf`/`infinity`/`nan` in any case, an
/// optional trailing `f`; a leading zero followed by digits is refused (octal).
fn parse_float(token: &str) -> std::result::Result<f64, String> {
    let unsigned = token.strip_prefix('-').unwrap_or(token);
    if unsigned.len() > 1 && unsigned.starts_with('0') && unsigned.as_bytes()[1].is_ascii_digit() {
        return Err(format!("Invalid octal float: {token}"));
    }
    if let Some(v) = parse_python_float(token) {
        return Ok(v);
    }
    let lower = token.to_ascii_lowercase();
    let unsigned_lower = lower.strip_prefix('-').unwrap_or(&lower);
    if matches!(unsigned_lower, "inf" | "inff" | "infinity" | "infinityf") {
        return Ok(if lower.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if matches!(lower.as_str(), "nan" | "nanf") {
        return Ok(f64::NAN);
    }
    parse_python_float(token.trim_end_matches(['f', 'F']))
        .ok_or_else(|| format!("Couldn't parse float: {token}"))
}

/// protobuf's `CUnescape`: C escapes (`\n`, `\t`, ..., octal, `\x` with one or two hex
/// digits), `\u` and `\U` as UTF-8; other characters as UTF-8; an unknown escape stays
/// as written.
fn unescape(text: &str, out: &mut Vec<u8>) -> std::result::Result<(), String> {
    let mut chars = text.chars().peekable();
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let d = chars.next()?.to_digit(16)?;
            v = v * 16 + d;
        }
        Some(v)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some(e) = chars.next() else {
            return Err("Couldn't parse string: \\ at end of string".into());
        };
        match e {
            'n' => out.push(b'\n'),
            't' => out.push(b'\t'),
            'r' => out.push(b'\r'),
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'v' => out.push(11),
            '\\' | '\'' | '"' => out.push(e as u8),
            '0'..='7' => {
                let mut v = e.to_digit(8).expect("an octal digit");
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                let byte = u8::try_from(v).map_err(|_| {
                    format!("Couldn't parse string: octal escape \\{v:o} above \\377")
                })?;
                out.push(byte);
            }
            'x' => {
                let mut v = match chars.next().and_then(|c| c.to_digit(16)) {
                    Some(d) => d,
                    None => return Err("Couldn't parse string: truncated \\xXX escape".into()),
                };
                if let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                    v = v * 16 + d;
                    chars.next();
                }
                out.push(v as u8);
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let c = hex(&mut chars, n)
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("Couldn't parse string: invalid \\{e} escape"))?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            other => {
                out.push(b'\\');
                let mut buf = [0u8; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::*;

    fn registry() -> &'static TypeRegistry {
        TypeRegistry::onnx()
    }

    #[test]
    fn prints_nested_messages_enums_and_escapes() {
        let attr = AttributeProto {
            name: Some("a\u{e9}\n\"".into()),
            f: Some(1.5),
            r#type: Some(AttributeType::Float.into()),
            ..Default::default()
        };
        let mut node = NodeProto::new("Relu", ["x"], ["y"]);
        node.attribute.push(attr);
        let text = to_string(&node, registry()).unwrap();
        assert_eq!(
            text,
            "input: \"x\"\noutput: \"y\"\nop_type: \"Relu\"\nattribute {\n  name: \"a\u{e9}\\n\\\"\"\n  f: 1.5\n  type: FLOAT\n}\n"
        );
        assert_eq!(
            from_str::<NodeProto<'static>>(&text, registry()).unwrap(),
            node
        );
    }

    #[test]
    fn parses_the_whole_syntax() {
        let text =
            "# a comment\nname: 'a' \"b\" dims: [1, 0x10, 017] float_data: [inf, -1.5f, 2]\n\
                    data_type: 1; raw_data: \"\\x1\\101\\u00e9\" segment < begin: 3 >,";
        let t: Tensor = from_str(text, registry()).unwrap();
        assert_eq!(t.name(), "ab");
        assert_eq!(t.dims, vec![1, 16, 15]);
        assert_eq!(t.float_data, vec![f32::INFINITY, -1.5, 2.0]);
        assert_eq!(t.raw_data(), b"\x01A\xc3\xa9");
        assert_eq!(t.segment.as_ref().unwrap().begin(), 3);
    }

    #[test]
    fn refuses_bad_text_with_its_position() {
        let cases = [
            (
                "name: \"a\"\nname: \"b\"",
                2,
                7,
                "should not have multiple \"name\" fields",
            ),
            ("nope: 1", 1, 1, "has no field named \"nope\""),
            ("dims: 1.5", 1, 7, "Couldn't parse integer: 1.5"),
            ("data_type: 99999999999", 1, 12, "Value out of range"),
            ("name: \"abc", 1, 7, "String missing ending quote"),
            ("segment { begin: 1", 1, 18, "Expected \"}\"."),
            ("name: \"\\377\"", 1, 7, "not UTF-8"),
            ("data_location: 7", 1, 16, "has no value with number 7"),
            ("data_location: NOPE", 1, 16, "has no value named NOPE"),
            ("}", 1, 1, "Expected identifier or number, got }."),
            ("[ext]: 1", 1, 1, "does not have extensions"),
        ];
        for (text, line, column, what) in cases {
            let err = from_str::<Tensor>(text, registry()).unwrap_err();
            match err.kind() {
                ErrorKind::InvalidText {
                    line: l,
                    column: c,
                    message,
                    ..
                } => {
                    assert_eq!((*l, *c), (line, column), "{text}: {message}");
                    assert!(message.contains(what), "{text}: {message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn refuses_two_members_of_a_oneof() {
        let err = from_str::<TypeProto<'static>>(
            "tensor_type { elem_type: 1 } sequence_type { }",
            registry(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("another member of oneof"), "{err}");
    }

    #[test]
    fn refuses_nesting_past_the_limit() {
        let text = "sequence_type { elem_type { ".repeat(60) + &"} } ".repeat(60);
        let err = from_str::<TypeProto<'static>>(&text, registry()).unwrap_err();
        assert!(err.to_string().contains("too deep"), "{err}");
    }
}
