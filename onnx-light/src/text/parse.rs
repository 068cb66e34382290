//! The parser: the ONNX text syntax read as `onnx.parser` (onnx 1.23) reads it, giving
//! the same messages (field for field, presence included) for every text it accepts.
//!
//! The structure follows the grammar one function per construct, each filling the
//! message it is given in the order the official parser does, so that its quirks are
//! kept: a list attribute keeps only its numbers and strings, an attribute of a
//! function's attribute list that fails to parse is skipped, `uint64` values read as C's
//! `strtoull` reads them (`-1` is 2^64 - 1).

use std::fmt;

use crate::field::Str;
use crate::onnx::{
    AttributeProto, AttributeType, DataLocation, DataType, Dimension, FunctionProto, GraphProto,
    Model, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto, TensorProto,
    TensorShapeProto, TypeProto, TypeProtoMap, TypeProtoOpaque, TypeProtoOptional,
    TypeProtoSequence, TypeProtoSparseTensor, TypeProtoTensor, TypeValue, ValueInfoProto,
};
use crate::{EnumValue, ProtoEnum};

/// How deeply types and graphs may nest in a text (the official parser has no limit and
/// overflows its stack on hostile input).
const MAX_NESTING: u32 = 100;

/// A text the parser refuses: what was expected, and where (1-based line and column,
/// the column counted in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    line: usize,
    column: usize,
    offset: usize,
    message: String,
    context: String,
}

impl ParseError {
    /// The line of the error, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column of the error, from 1, in characters.
    pub fn column(&self) -> usize {
        self.column
    }

    /// The byte offset of the error in the text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What went wrong, e.g. `Expected character ) not found.`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The line of text the error is reported on (the last line with text before the
    /// error position, as `onnx.parser` shows it).
    pub fn context(&self) -> &str {
        &self.context
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )?;
        if !self.context.is_empty() {
            write!(f, " (in `{}`)", self.context)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

/// A failure: `Status` is a parse error the official parser returns, `Exception` one it
/// throws (a number out of range, a malformed number). The difference matters in one
/// place: a function's attribute list ignores the first kind and not the second.
enum Fail {
    Status(Box<ParseError>),
    Exception(Box<ParseError>),
}

impl Fail {
    fn into_error(self) -> ParseError {
        match self {
            Fail::Status(e) | Fail::Exception(e) => *e,
        }
    }
}

type PResult<T> = Result<T, Fail>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiteralKind {
    Undefined,
    Int,
    Float,
    String,
}

struct Literal {
    kind: LiteralKind,
    value: String,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The element type of a type name (`float`, `int64`, `float8e4m3fn`, ...); `undefined`
/// is not a type name.
fn data_type_named(id: &str) -> Option<i32> {
    if id.bytes().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    <DataType as ProtoEnum>::VALUES
        .iter()
        .find(|(name, n)| *n != 0 && name.eq_ignore_ascii_case(id))
        .map(|&(_, n)| n)
}

fn attribute_type_named(id: &str) -> Option<AttributeType> {
    use AttributeType::*;
    Some(match id {
        "float" => Float,
        "int" => Int,
        "string" => String,
        "tensor" => Tensor,
        "graph" => Graph,
        "sparse_tensor" => SparseTensor,
        "type_proto" => TypeProto,
        "floats" => Floats,
        "ints" => Ints,
        "strings" => Strings,
        "tensors" => Tensors,
        "graphs" => Graphs,
        "sparse_tensors" => SparseTensors,
        "type_protos" => TypeProtos,
        _ => return None,
    })
}

/// The `AttributeProto.AttributeType` name an error message shows (`INT`, `FLOAT`, ...).
fn attribute_type_label(n: i32) -> &'static str {
    AttributeType::from_i32(n).map_or("", |t| t.proto_name())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    IrVersion,
    OpsetImport,
    ProducerName,
    ProducerVersion,
    Domain,
    ModelVersion,
    DocString,
    MetadataProps,
    Seq,
    Map,
    Optional,
    SparseTensor,
    Opaque,
    Overload,
}

fn keyword(id: &str) -> Option<Keyword> {
    use Keyword::*;
    Some(match id {
        "ir_version" => IrVersion,
        "opset_import" => OpsetImport,
        "producer_name" => ProducerName,
        "producer_version" => ProducerVersion,
        "domain" => Domain,
        "model_version" => ModelVersion,
        "doc_string" => DocString,
        "metadata_props" => MetadataProps,
        "seq" => Seq,
        "map" => Map,
        "optional" => Optional,
        "sparse_tensor" => SparseTensor,
        "opaque" => Opaque,
        "overload" => Overload,
        _ => return None,
    })
}

struct Parser<'t> {
    text: &'t str,
    s: &'t [u8],
    pos: usize,
    depth: u32,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Result<Self, ParseError> {
        let p = Parser {
            text,
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        if let Some(at) = p.s.iter().position(|&c| c == 0) {
            let q = Parser { pos: at, ..p };
            return Err(q.error("NUL character in the text.").into_error());
        }
        Ok(p)
    }

    // ---------------------------------------------------------------------------------
    // Positions and errors.

    fn error_at(&self, message: String) -> ParseError {
        let pos = self.pos.min(self.s.len());
        let before = &self.text.as_bytes()[..pos];
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        // Characters, not bytes: count the bytes that start a UTF-8 sequence.
        let column = 1 + before[line_start..]
            .iter()
            .filter(|&&c| (c & 0xc0) != 0x80)
            .count();
        ParseError {
            line,
            column,
            offset: pos,
            message,
            context: self.context(),
        }
    }

    /// The line holding the last non-space character at or before the position.
    fn context(&self) -> String {
        if self.s.is_empty() {
            return String::new();
        }
        let mut p = self.pos.min(self.s.len() - 1);
        while p > 0 && is_space(self.s[p]) {
            p -= 1;
        }
        while p > 0 && self.s[p] != b'\n' {
            p -= 1;
        }
        let start = if p > 0 { p + 1 } else { 0 };
        let end = self.s[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.s.len(), |i| start + i);
        String::from_utf8_lossy(&self.s[start..end]).into_owned()
    }

    fn error(&self, message: impl Into<String>) -> Fail {
        Fail::Status(Box::new(self.error_at(message.into())))
    }

    fn exception(&self, message: impl Into<String>) -> Fail {
        Fail::Exception(Box::new(self.error_at(message.into())))
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING {
            return Err(self.exception(format!(
                "Types and graphs nest more than {MAX_NESTING} levels deep."
            )));
        }
        self.depth += 1;
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Characters.

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn cur(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }

    fn skip_space(&mut self) {
        loop {
            while !self.at_end() && is_space(self.cur()) {
                self.pos += 1;
            }
            if self.at_end() || self.cur() != b'#' {
                return;
            }
            self.pos = self.s[self.pos..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(self.s.len(), |i| self.pos + i);
        }
    }

    fn next_char(&mut self) -> u8 {
        self.skip_space();
        self.cur()
    }

    fn matches(&mut self, ch: u8) -> bool {
        self.skip_space();
        self.matches_here(ch)
    }

    fn matches_here(&mut self, ch: u8) -> bool {
        if !self.at_end() && self.cur() == ch {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: u8) -> PResult<()> {
        if self.matches(ch) {
            Ok(())
        } else {
            Err(self.error(format!("Expected character {} not found.", ch as char)))
        }
    }

    /// `ch` right at the position, whitespace not skipped (the `>` of `=>`).
    fn expect_here(&mut self, ch: u8) -> PResult<()> {
        if self.matches_here(ch) {
            Ok(())
        } else {
            Err(self.error(format!("Expected character {} not found.", ch as char)))
        }
    }

    fn end_of_input(&mut self) -> bool {
        self.skip_space();
        self.at_end()
    }

    fn slice(&self, from: usize, to: usize) -> &'t str {
        // Positions only ever stop next to ASCII bytes, so the slice is on char boundaries.
        self.text.get(from..to).unwrap_or("")
    }

    // ---------------------------------------------------------------------------------
    // Tokens.

    fn literal(&mut self) -> PResult<Literal> {
        let mut next = self.next_char();
        let from = self.pos;
        if next == b'"' {
            self.pos += 1;
            let mut escaped = false;
            while !self.at_end() && self.cur() != b'"' {
                if self.cur() == b'\\' {
                    escaped = true;
                    self.pos += 1;
                    if self.at_end() {
                        return Err(self.error("Incomplete string literal."));
                    }
                }
                self.pos += 1;
            }
            if self.at_end() {
                return Err(self.error("Incomplete string literal."));
            }
            self.pos += 1;
            let inner = &self.s[from + 1..self.pos - 1];
            let value = if escaped {
                let mut out = Vec::with_capacity(inner.len());
                let mut i = 0;
                while i < inner.len() {
                    if inner[i] == b'\\' {
                        i += 1;
                    }
                    if let Some(&c) = inner.get(i) {
                        out.push(c);
                    }
                    i += 1;
                }
                // Only ASCII backslashes were removed, so the bytes are still UTF-8.
                String::from_utf8_lossy(&out).into_owned()
            } else {
                String::from_utf8_lossy(inner).into_owned()
            };
            return Ok(Literal {
                kind: LiteralKind::String,
                value,
            });
        }
        if next == b'-' {
            self.pos += 1;
            next = self.next_char();
        }
        if next.is_ascii_alphabetic() {
            if !self.next_is_float_word() {
                return Err(self.error("Encountered invalid float literal!"));
            }
            while !self.at_end() && self.cur().is_ascii_alphabetic() {
                self.pos += 1;
            }
            let value = self.slice(from, self.pos).to_string();
            if to_f32(&value).is_none() {
                return Err(self.error("Encountered invalid float literal!"));
            }
            return Ok(Literal {
                kind: LiteralKind::Float,
                value,
            });
        }
        let mut kind = LiteralKind::Undefined;
        if next.is_ascii_digit() {
            self.pos += 1;
            let mut point = false;
            while !self.at_end() && (self.cur().is_ascii_digit() || self.cur() == b'.') {
                if self.cur() == b'.' {
                    if point {
                        break;
                    }
                    point = true;
                }
                self.pos += 1;
            }
            if !self.at_end() && matches!(self.cur(), b'e' | b'E') {
                point = true;
                self.pos += 1;
                if !self.at_end() && matches!(self.cur(), b'+' | b'-') {
                    self.pos += 1;
                }
                while !self.at_end() && self.cur().is_ascii_digit() {
                    self.pos += 1;
                }
            }
            kind = if point {
                LiteralKind::Float
            } else {
                LiteralKind::Int
            };
        }
        let value = if kind == LiteralKind::Undefined {
            String::new()
        } else {
            self.slice(from, self.pos).to_string()
        };
        Ok(Literal { kind, value })
    }

    /// True when a word of letters `inf`, `infinity` or `nan` (any case) comes next, not
    /// followed by a digit. The position does not move.
    fn next_is_float_word(&mut self) -> bool {
        let next = self.next_char();
        if !next.is_ascii_alphabetic() {
            return false;
        }
        let from = self.pos;
        let mut end = from;
        while end < self.s.len() && self.s[end].is_ascii_alphabetic() && end - from <= 8 {
            end += 1;
        }
        if end < self.s.len() && self.s[end].is_ascii_digit() {
            return false;
        }
        let word = &self.s[from..end];
        [&b"inf"[..], b"infinity", b"nan"]
            .iter()
            .any(|w| word.eq_ignore_ascii_case(w))
    }

    fn int64(&mut self) -> PResult<i64> {
        let lit = self.literal()?;
        if lit.kind != LiteralKind::Int {
            return Err(self.error("Integer value expected, but not found."));
        }
        to_i64(&lit.value)
            .ok_or_else(|| self.exception(format!("Integer out of range: {}", lit.value)))
    }

    fn uint64(&mut self) -> PResult<u64> {
        let lit = self.literal()?;
        if lit.kind != LiteralKind::Int {
            return Err(self.error("Integer value expected, but not found."));
        }
        to_u64_like_strtoull(&lit.value)
            .ok_or_else(|| self.exception(format!("Integer out of range: {}", lit.value)))
    }

    fn float32(&mut self) -> PResult<f32> {
        let lit = self.literal()?;
        match lit.kind {
            LiteralKind::Int | LiteralKind::Float => self.f32_of(&lit.value),
            _ => Err(self.error("Unexpected literal type.")),
        }
    }

    fn float64(&mut self) -> PResult<f64> {
        let lit = self.literal()?;
        match lit.kind {
            LiteralKind::Int | LiteralKind::Float => to_f64(&lit.value).ok_or_else(|| {
                self.exception(format!("Failed to parse double from string: {}", lit.value))
            }),
            _ => Err(self.error("Unexpected literal type.")),
        }
    }

    fn f32_of(&self, text: &str) -> PResult<f32> {
        to_f32(text)
            .ok_or_else(|| self.exception(format!("Failed to parse float from string: {text}")))
    }

    fn string(&mut self) -> PResult<String> {
        let lit = self.literal()?;
        if lit.kind != LiteralKind::String {
            return Err(self.error("String value expected, but not found."));
        }
        Ok(lit.value)
    }

    fn optional_identifier(&mut self) -> &'t str {
        self.skip_space();
        let from = self.pos;
        if !self.at_end() && (self.cur().is_ascii_alphabetic() || self.cur() == b'_') {
            self.pos += 1;
            while !self.at_end() && (self.cur().is_ascii_alphanumeric() || self.cur() == b'_') {
                self.pos += 1;
            }
        }
        self.slice(from, self.pos)
    }

    fn identifier(&mut self) -> PResult<&'t str> {
        let id = self.optional_identifier();
        if id.is_empty() {
            return Err(self.error("Identifier expected but not found."));
        }
        Ok(id)
    }

    fn quotable_identifier(&mut self) -> PResult<String> {
        if self.next_char() == b'"' {
            return self.string();
        }
        self.identifier().map(str::to_string)
    }

    fn optional_quotable_identifier(&mut self) -> PResult<String> {
        if self.next_char() == b'"' {
            return self.string();
        }
        Ok(self.optional_identifier().to_string())
    }

    /// An identifier that may be empty when a comma follows (`Op(,x)`), and whether one
    /// was found.
    fn list_identifier(&mut self) -> PResult<(String, bool)> {
        if self.next_char() == b'"' {
            return Ok((self.string()?, true));
        }
        let id = self.optional_identifier().to_string();
        let found = !id.is_empty() || self.next_char() == b',';
        Ok((id, found))
    }

    fn peek_identifier(&mut self) -> &'t str {
        let saved = self.pos;
        let id = self.optional_identifier();
        self.pos = saved;
        id
    }

    fn keyword(&mut self) -> PResult<Option<Keyword>> {
        Ok(keyword(self.identifier()?))
    }

    fn next_is_type(&mut self) -> bool {
        let id = self.peek_identifier();
        data_type_named(id).is_some()
            || matches!(
                keyword(id),
                Some(
                    Keyword::Seq
                        | Keyword::Map
                        | Keyword::Optional
                        | Keyword::SparseTensor
                        | Keyword::Opaque
                )
            )
    }

    // ---------------------------------------------------------------------------------
    // Lists of names.

    fn id_list(&mut self, list: &mut Vec<Str<'static>>) -> PResult<()> {
        list.clear();
        let (id, found) = self.list_identifier()?;
        if !found {
            return Ok(());
        }
        list.push(id.into());
        while self.matches(b',') {
            let (id, found) = self.list_identifier()?;
            if !found {
                break;
            }
            list.push(id.into());
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Types.

    fn shape(&mut self, shape: &mut TensorShapeProto<'static>) -> PResult<()> {
        shape.dim.clear();
        loop {
            if self.matches(b'?') {
                shape.dim.push(Dimension::unknown());
            } else if self.next_char() == b'"' {
                let name = self.string()?;
                shape.dim.push(Dimension::param(name));
            } else {
                let id = self.optional_identifier();
                if !id.is_empty() {
                    shape.dim.push(Dimension::param(id.to_string()));
                } else {
                    let v = self.int64()?;
                    shape.dim.push(Dimension::value(v));
                }
            }
            if !self.matches(b',') {
                return Ok(());
            }
        }
    }

    /// `[dims]`, `[]` (unknown rank: no shape) or nothing (a scalar: an empty shape).
    fn tensor_shape(&mut self) -> PResult<Option<TensorShapeProto<'static>>> {
        if self.matches(b'[') {
            if self.matches(b']') {
                return Ok(None);
            }
            let mut shape = TensorShapeProto::default();
            let r = self.shape(&mut shape);
            r?;
            self.expect(b']')?;
            Ok(Some(shape))
        } else {
            Ok(Some(TensorShapeProto::default()))
        }
    }

    fn type_proto(&mut self, t: &mut TypeProto<'static>) -> PResult<()> {
        self.enter()?;
        let r = self.type_proto_inner(t);
        self.depth -= 1;
        r
    }

    /// `( TYPE )` after `seq` or `optional`: `t` gets `wrap(TYPE)`, with what was read of
    /// the inner type even when it fails part-way.
    fn wrapped_type(
        &mut self,
        t: &mut TypeProto<'static>,
        wrap: impl FnOnce(TypeProto<'static>) -> TypeValue<'static>,
    ) -> PResult<()> {
        self.expect(b'(')?;
        let mut inner = TypeProto::default();
        let r = self.type_proto(&mut inner);
        t.value = Some(wrap(inner));
        r?;
        self.expect(b')')
    }

    fn type_proto_inner(&mut self, t: &mut TypeProto<'static>) -> PResult<()> {
        let id = self.identifier()?;
        if let Some(elem) = data_type_named(id) {
            let mut tt = TypeProtoTensor {
                elem_type_raw: Some(elem),
                ..TypeProtoTensor::default()
            };
            let shape = self.tensor_shape();
            if let Ok(s) = &shape {
                tt.shape = s.clone();
            }
            t.value = Some(TypeValue::TensorType(tt));
            shape.map(drop)
        } else {
            match keyword(id) {
                Some(Keyword::Seq) => self.wrapped_type(t, |inner| {
                    TypeValue::SequenceType(Box::new(TypeProtoSequence {
                        elem_type: Some(Box::new(inner)),
                        ..TypeProtoSequence::default()
                    }))
                }),
                Some(Keyword::Map) => {
                    self.expect(b'(')?;
                    t.value = Some(TypeValue::MapType(Box::default()));
                    let key = self.identifier()?;
                    let Some(key) = data_type_named(key) else {
                        return Err(self.error("Expecting primitive type as map key type."));
                    };
                    let mut map = TypeProtoMap {
                        key_type_raw: Some(key),
                        ..TypeProtoMap::default()
                    };
                    let r = self.expect(b',');
                    if r.is_err() {
                        t.value = Some(TypeValue::MapType(Box::new(map)));
                        return r;
                    }
                    let mut inner = TypeProto::default();
                    let r = self.type_proto(&mut inner);
                    map.value_type = Some(Box::new(inner));
                    t.value = Some(TypeValue::MapType(Box::new(map)));
                    r?;
                    self.expect(b')')
                }
                Some(Keyword::Optional) => self.wrapped_type(t, |inner| {
                    TypeValue::OptionalType(Box::new(TypeProtoOptional {
                        elem_type: Some(Box::new(inner)),
                        ..TypeProtoOptional::default()
                    }))
                }),
                Some(Keyword::SparseTensor) => {
                    self.expect(b'(')?;
                    let id = self.identifier()?;
                    let Some(elem) = data_type_named(id) else {
                        return Err(self.error("Unexpected type in sparse-tensor element type."));
                    };
                    let mut st = TypeProtoSparseTensor {
                        elem_type_raw: Some(elem),
                        ..TypeProtoSparseTensor::default()
                    };
                    let shape = self.tensor_shape();
                    if let Ok(s) = &shape {
                        st.shape = s.clone();
                    }
                    t.value = Some(TypeValue::SparseTensorType(st));
                    shape?;
                    self.expect(b')')
                }
                Some(Keyword::Opaque) => {
                    self.expect(b'(')?;
                    let mut o = TypeProtoOpaque::default();
                    let r = self.opaque(&mut o);
                    t.value = Some(TypeValue::OpaqueType(o));
                    r
                }
                _ => Err(self.error("Unexpected type.")),
            }
        }
    }

    /// `)`, `name)` or `domain,name)`; a dotted identifier alone is the name.
    fn opaque(&mut self, o: &mut TypeProtoOpaque<'static>) -> PResult<()> {
        if self.matches(b')') {
            return Ok(());
        }
        let mut first = self.identifier()?.to_string();
        while self.matches(b'.') {
            let next = self.identifier()?;
            first.push('.');
            first.push_str(next);
        }
        if self.matches(b',') {
            o.domain = Some(first.into());
            let name = self.identifier()?;
            o.name = Some(name.to_string().into());
        } else {
            o.name = Some(first.into());
        }
        self.expect(b')')
    }

    fn value_info(&mut self, vi: &mut ValueInfoProto<'static>) -> PResult<()> {
        if self.next_is_type() {
            let mut t = TypeProto::default();
            let r = self.type_proto(&mut t);
            vi.r#type = Some(t);
            r?;
        }
        let name = self.quotable_identifier()?;
        vi.name = Some(name.into());
        Ok(())
    }

    /// `(vi, vi, ...)` (or `()`).
    fn value_info_list(
        &mut self,
        open: u8,
        list: &mut Vec<ValueInfoProto<'static>>,
        close: u8,
    ) -> PResult<()> {
        self.expect(open)?;
        if !self.matches(close) {
            loop {
                list.push(ValueInfoProto::default());
                let last = list.len() - 1;
                self.value_info(&mut list[last])?;
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(close)?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Tensors.

    /// The value of a tensor of type `t` (`= {...}`, `[external data]` or nothing), into
    /// `tensor`, whose name is already set.
    fn tensor_value(
        &mut self,
        tensor: &mut TensorProto<'static>,
        t: &TypeProto<'_>,
    ) -> PResult<()> {
        let Some(TypeValue::TensorType(tt)) = &t.value else {
            return Err(self.error("Error parsing TensorProto (expected a tensor type)."));
        };
        let elem = tt.elem_type_raw();
        tensor.data_type = Some(elem);
        let Some(shape) = &tt.shape else {
            return Err(self.error("Error parsing TensorProto (expected a tensor shape)."));
        };
        for d in &shape.dim {
            let Some(v) = d.as_value() else {
                return Err(
                    self.error("Error parsing TensorProto shape (expected numeric dimension).")
                );
            };
            tensor.dims.push(v);
        }
        if self.matches(b'{') {
            if !self.matches(b'}') {
                loop {
                    self.tensor_element(tensor, elem)?;
                    if !self.matches(b',') {
                        break;
                    }
                }
                self.expect(b'}')?;
            }
        } else if self.matches(b'[') {
            tensor.data_location = Some(EnumValue::from(DataLocation::External));
            self.entries(&mut tensor.external_data)?;
            self.expect(b']')?;
        }
        Ok(())
    }

    fn tensor_element(&mut self, tensor: &mut TensorProto<'static>, elem: i32) -> PResult<()> {
        use DataType::*;
        match DataType::from_i32(elem) {
            Some(
                Int2 | Int4 | Int8 | Int16 | Int32 | Uint2 | Uint4 | Uint8 | Uint16 | Float16
                | Bfloat16 | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ
                | Float6E2M3 | Float6E3M2 | Float8E8M0 | Bool | Float4E2M1,
            ) => {
                let v = self.int64()?;
                let Ok(v) = i32::try_from(v) else {
                    return Err(
                        self.error(format!("Mismatch between data type and value: {elem}, {v}"))
                    );
                };
                tensor.int32_data.push(v);
            }
            Some(Int64) => {
                let v = self.int64()?;
                tensor.int64_data.push(v);
            }
            Some(Uint32 | Uint64) => {
                let v = self.uint64()?;
                tensor.uint64_data.push(v);
            }
            Some(Complex64 | Float) => {
                let v = self.float32()?;
                tensor.float_data.push(v);
            }
            Some(Complex128 | Double) => {
                let v = self.float64()?;
                tensor.double_data.push(v);
            }
            Some(String) => {
                let v = self.string()?;
                tensor.string_data.push(v.into_bytes().into());
            }
            _ => return Err(self.error(format!("Unhandled type: {elem}"))),
        }
        Ok(())
    }

    /// `"key": "value", ...` (at least one entry).
    fn entries(&mut self, list: &mut Vec<StringStringEntryProto<'static>>) -> PResult<()> {
        loop {
            list.push(StringStringEntryProto::default());
            let last = list.len() - 1;
            let key = self.string()?;
            list[last].key = Some(key.into());
            self.expect(b':')?;
            let value = self.string()?;
            list[last].value = Some(value.into());
            if !self.matches(b',') {
                return Ok(());
            }
        }
    }

    // ---------------------------------------------------------------------------------
    // Attributes.

    fn single_attribute_value(
        &mut self,
        attr: &mut AttributeProto<'static>,
        expected: i32,
    ) -> PResult<()> {
        let next = self.next_char();
        if next.is_ascii_alphabetic() || next == b'_' {
            if self.next_is_type() {
                let mut t = TypeProto::default();
                self.type_proto(&mut t)?;
                let next = self.next_char();
                if next == b'{' || next == b'=' || !self.peek_identifier().is_empty() {
                    attr.r#type = Some(AttributeType::Tensor.into());
                    let mut tensor = TensorProto::default();
                    let r = self.attribute_tensor(&mut tensor, &t);
                    attr.t = Some(Box::new(tensor));
                    r?;
                } else {
                    attr.r#type = Some(AttributeType::TypeProto.into());
                    attr.tp = Some(Box::new(t));
                }
            } else if self.next_is_float_word() {
                let lit = self.literal()?;
                attr.r#type = Some(AttributeType::Float.into());
                attr.f = Some(self.f32_of(&lit.value)?);
            } else {
                attr.r#type = Some(AttributeType::Graph.into());
                let mut g = GraphProto::default();
                let r = self.graph(&mut g);
                attr.g = Some(Box::new(g));
                r?;
            }
        } else if self.matches(b'@') {
            let name = self.quotable_identifier()?;
            attr.ref_attr_name = Some(name.into());
        } else {
            let lit = self.literal()?;
            match lit.kind {
                LiteralKind::Undefined => return Err(self.error("Internal error")),
                LiteralKind::Int if expected == AttributeType::Float.to_i32() => {
                    attr.r#type = Some(AttributeType::Float.into());
                    attr.f = Some(self.f32_of(&lit.value)?);
                }
                LiteralKind::Int => {
                    attr.r#type = Some(AttributeType::Int.into());
                    attr.i = Some(to_i64(&lit.value).ok_or_else(|| {
                        self.exception(format!("Integer out of range: {}", lit.value))
                    })?);
                }
                LiteralKind::Float => {
                    attr.r#type = Some(AttributeType::Float.into());
                    attr.f = Some(self.f32_of(&lit.value)?);
                }
                LiteralKind::String => {
                    attr.r#type = Some(AttributeType::String.into());
                    attr.s = Some(lit.value.into_bytes().into());
                }
            }
        }
        let actual = attr.r#type.map_or(0, |t| t.raw());
        if expected != 0 && expected != actual {
            return Err(self.error(format!(
                "Mismatch between expected type {} and specified value's type{}",
                attribute_type_label(expected),
                attribute_type_label(actual)
            )));
        }
        Ok(())
    }

    fn attribute_tensor(
        &mut self,
        tensor: &mut TensorProto<'static>,
        t: &TypeProto<'_>,
    ) -> PResult<()> {
        let name = self.optional_quotable_identifier()?;
        tensor.name = Some(name.into());
        self.matches(b'=');
        self.tensor_value(tensor, t)
    }

    /// `name[: type] = value` after the name, into `attr`.
    fn attribute_after_name(
        &mut self,
        attr: &mut AttributeProto<'static>,
        name: String,
    ) -> PResult<()> {
        attr.name = Some(name.into());
        if self.matches(b':') {
            let ty = self.identifier()?;
            match attribute_type_named(ty) {
                Some(t) => attr.r#type = Some(t.into()),
                None => return Err(self.error("Unexpected attribute type.")),
            }
        }
        self.expect(b'=')?;
        if self.next_char() == b'[' {
            self.expect(b'[')?;
            if self.next_char() != b']' {
                loop {
                    let mut item = AttributeProto::default();
                    let expected = singleton(attr.r#type.map_or(0, |t| t.raw()));
                    self.single_attribute_value(&mut item, expected)?;
                    match item.r#type.and_then(|t| t.get()) {
                        Some(AttributeType::Int) => {
                            attr.r#type = Some(AttributeType::Ints.into());
                            attr.ints.push(item.i());
                        }
                        Some(AttributeType::Float) => {
                            attr.r#type = Some(AttributeType::Floats.into());
                            attr.floats.push(item.f());
                        }
                        Some(AttributeType::String) => {
                            attr.strings.push(item.s.unwrap_or_default());
                            attr.r#type = Some(AttributeType::Strings.into());
                        }
                        _ => {}
                    }
                    if !self.matches(b',') {
                        break;
                    }
                }
            } else {
                let ty = attr.r#type.map_or(0, |t| t.raw());
                if ty == 0 {
                    return Err(self.error("Empty list attribute value requires type annotation."));
                }
                if is_singleton(ty) {
                    return Err(
                        self.error("Singleton attribute value cannot be specified as a list.")
                    );
                }
            }
            self.expect(b']')
        } else {
            let expected = attr.r#type.map_or(0, |t| t.raw());
            self.single_attribute_value(attr, expected)
        }
    }

    fn attribute(&mut self, attr: &mut AttributeProto<'static>) -> PResult<()> {
        let name = self.identifier()?.to_string();
        self.attribute_after_name(attr, name)
    }

    /// `<attr, attr, ...>` if present.
    fn attribute_list(&mut self, list: &mut Vec<AttributeProto<'static>>) -> PResult<()> {
        list.clear();
        if self.matches(b'<') {
            loop {
                list.push(AttributeProto::default());
                let last = list.len() - 1;
                self.attribute(&mut list[last])?;
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b'>')?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Nodes, graphs, functions, models.

    fn node(&mut self, node: &mut NodeProto<'static>) -> PResult<()> {
        if self.matches(b'[') {
            let name = self.optional_quotable_identifier()?;
            node.name = Some(name.into());
            self.expect(b']')?;
        }
        self.id_list(&mut node.output)?;
        self.expect(b'=')?;
        let mut domain = String::new();
        let mut id = self.optional_identifier();
        while self.matches(b'.') {
            if !domain.is_empty() {
                domain.push('.');
            }
            domain.push_str(id);
            id = self.identifier()?;
        }
        node.domain = Some(domain.into());
        node.op_type = Some(id.to_string().into());
        if self.matches(b':') {
            let overload = self.identifier()?;
            node.overload = Some(overload.to_string().into());
        }
        self.attribute_list(&mut node.attribute)?;
        self.expect(b'(')?;
        self.id_list(&mut node.input)?;
        self.expect(b')')?;
        if node.attribute.is_empty() {
            // Attributes may come before or after the inputs.
            self.attribute_list(&mut node.attribute)?;
        }
        Ok(())
    }

    fn nodes(&mut self, list: &mut Vec<NodeProto<'static>>) -> PResult<()> {
        list.clear();
        self.expect(b'{')?;
        while !self.matches(b'}') {
            list.push(NodeProto::default());
            let last = list.len() - 1;
            self.node(&mut list[last])?;
        }
        Ok(())
    }

    fn graph(&mut self, g: &mut GraphProto<'static>) -> PResult<()> {
        self.enter()?;
        let r = self.graph_inner(g);
        self.depth -= 1;
        r
    }

    fn graph_inner(&mut self, g: &mut GraphProto<'static>) -> PResult<()> {
        let name = self.quotable_identifier()?;
        g.name = Some(name.into());
        g.initializer.clear();
        // Inputs, each with an optional `= value` that becomes an initializer.
        g.input.clear();
        if self.matches(b'(') && !self.matches(b')') {
            loop {
                let mut vi = ValueInfoProto::default();
                self.value_info(&mut vi)?;
                g.input.push(vi.clone());
                if self.matches(b'=') {
                    g.initializer.push(TensorProto {
                        name: Some(vi.name().to_string().into()),
                        ..TensorProto::default()
                    });
                    let last = g.initializer.len() - 1;
                    let t = vi.r#type.clone().unwrap_or_default();
                    self.tensor_value(&mut g.initializer[last], &t)?;
                }
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b')')?;
        }
        self.expect(b'=')?;
        self.expect_here(b'>')?;
        g.output.clear();
        self.value_info_list(b'(', &mut g.output, b')')?;
        // `<...>`: value infos, and initializers (`type name = value`).
        g.value_info.clear();
        if self.matches(b'<') && !self.matches(b'>') {
            loop {
                let mut vi = ValueInfoProto::default();
                self.value_info(&mut vi)?;
                if self.matches(b'=') {
                    g.initializer.push(TensorProto {
                        name: Some(vi.name().to_string().into()),
                        ..TensorProto::default()
                    });
                    let last = g.initializer.len() - 1;
                    let t = vi.r#type.clone().unwrap_or_default();
                    self.tensor_value(&mut g.initializer[last], &t)?;
                } else {
                    g.value_info.push(vi);
                }
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b'>')?;
        }
        self.nodes(&mut g.node)
    }

    fn opsets(&mut self, list: &mut Vec<OperatorSetIdProto<'static>>) -> PResult<()> {
        self.expect(b'[')?;
        if !self.matches(b']') {
            loop {
                list.push(OperatorSetIdProto::default());
                let last = list.len() - 1;
                let domain = self.string()?;
                list[last].domain = Some(domain.into());
                self.expect(b':')?;
                let version = self.int64()?;
                list[last].version = Some(version);
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b']')?;
        }
        Ok(())
    }

    /// A function's inputs or outputs: names, each optionally preceded by a type (which
    /// adds a value info).
    fn function_io(
        &mut self,
        names: &mut Vec<Str<'static>>,
        infos: &mut Vec<ValueInfoProto<'static>>,
    ) -> PResult<()> {
        names.clear();
        self.expect(b'(')?;
        if !self.matches(b')') {
            loop {
                names.push(Str::default());
                let at = names.len() - 1;
                let mut vi_at = None;
                if self.next_is_type() {
                    infos.push(ValueInfoProto::default());
                    let last = infos.len() - 1;
                    vi_at = Some(last);
                    let mut t = TypeProto::default();
                    let r = self.type_proto(&mut t);
                    infos[last].r#type = Some(t);
                    r?;
                }
                let name = self.quotable_identifier()?;
                if let Some(i) = vi_at {
                    infos[i].name = Some(name.clone().into());
                }
                names[at] = name.into();
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b')')?;
        }
        Ok(())
    }

    /// `<a, b: int = 3>` of a function: attribute names, and attributes with defaults.
    /// An attribute that fails to parse is skipped, as the official parser skips it.
    fn function_attributes(&mut self, f: &mut FunctionProto<'static>) -> PResult<()> {
        f.attribute.clear();
        f.attribute_proto.clear();
        loop {
            let id = self.quotable_identifier()?;
            let next = self.next_char();
            if next == b':' || next == b'=' {
                f.attribute_proto.push(AttributeProto::default());
                let last = f.attribute_proto.len() - 1;
                match self.attribute_after_name(&mut f.attribute_proto[last], id) {
                    Ok(()) | Err(Fail::Status(_)) => {}
                    Err(e @ Fail::Exception(_)) => return Err(e),
                }
            } else {
                f.attribute.push(id.into());
            }
            if !self.matches(b',') {
                return Ok(());
            }
        }
    }

    fn function(&mut self, f: &mut FunctionProto<'static>) -> PResult<()> {
        *f = FunctionProto::default();
        if self.matches(b'<') {
            loop {
                let kw = self.keyword()?;
                self.expect(b':')?;
                match kw {
                    Some(Keyword::OpsetImport) => self.opsets(&mut f.opset_import)?,
                    Some(Keyword::DocString) => f.doc_string = Some(self.string()?.into()),
                    Some(Keyword::Domain) => f.domain = Some(self.string()?.into()),
                    Some(Keyword::Overload) => f.overload = Some(self.string()?.into()),
                    _ => return Err(self.error("Unhandled keyword.")),
                }
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b'>')?;
        }
        let name = self.quotable_identifier()?;
        f.name = Some(name.into());
        if self.matches(b'<') {
            self.function_attributes(f)?;
            self.expect(b'>')?;
        } else {
            f.attribute.clear();
            f.attribute_proto.clear();
        }
        f.value_info.clear();
        let mut infos = Vec::new();
        let mut names = Vec::new();
        let r = self.function_io(&mut names, &mut infos);
        f.input = std::mem::take(&mut names);
        f.value_info = std::mem::take(&mut infos);
        r?;
        self.expect(b'=')?;
        self.expect_here(b'>')?;
        let mut infos = std::mem::take(&mut f.value_info);
        let r = self.function_io(&mut names, &mut infos);
        f.output = names;
        f.value_info = infos;
        r?;
        if self.next_char() == b'<' {
            self.value_info_list(b'<', &mut f.value_info, b'>')?;
        }
        self.nodes(&mut f.node)
    }

    fn model(&mut self, m: &mut ModelProto<'static>) -> PResult<()> {
        *m = ModelProto::default();
        if self.matches(b'<') {
            loop {
                let kw = self.keyword()?;
                self.expect(b':')?;
                match kw {
                    Some(Keyword::IrVersion) => m.ir_version = Some(self.int64()?),
                    Some(Keyword::OpsetImport) => self.opsets(&mut m.opset_import)?,
                    Some(Keyword::ProducerName) => m.producer_name = Some(self.string()?.into()),
                    Some(Keyword::ProducerVersion) => {
                        m.producer_version = Some(self.string()?.into())
                    }
                    Some(Keyword::Domain) => m.domain = Some(self.string()?.into()),
                    Some(Keyword::ModelVersion) => m.model_version = Some(self.int64()?),
                    Some(Keyword::DocString) => m.doc_string = Some(self.string()?.into()),
                    Some(Keyword::MetadataProps) => {
                        self.expect(b'[')?;
                        if !self.matches(b']') {
                            self.entries(&mut m.metadata_props)?;
                            self.expect(b']')?;
                        }
                    }
                    _ => return Err(self.error("Unhandled keyword.")),
                }
                if !self.matches(b',') {
                    break;
                }
            }
            self.expect(b'>')?;
        }
        let mut g = GraphProto::default();
        let r = self.graph(&mut g);
        m.graph = Some(g);
        r?;
        while !self.end_of_input() {
            m.functions.push(FunctionProto::default());
            let last = m.functions.len() - 1;
            self.function(&mut m.functions[last])?;
        }
        Ok(())
    }
}

/// The element type of a list attribute type (`INTS` -> `INT`); others unchanged.
fn singleton(ty: i32) -> i32 {
    use AttributeType::*;
    match AttributeType::from_i32(ty) {
        Some(Floats) => Float.to_i32(),
        Some(Ints) => Int.to_i32(),
        Some(Strings) => String.to_i32(),
        Some(Tensors) => Tensor.to_i32(),
        Some(Graphs) => Graph.to_i32(),
        Some(SparseTensors) => SparseTensor.to_i32(),
        Some(TypeProtos) => TypeProto.to_i32(),
        _ => ty,
    }
}

fn is_singleton(ty: i32) -> bool {
    use AttributeType::*;
    matches!(
        AttributeType::from_i32(ty),
        Some(Float | Int | String | Tensor | Graph | SparseTensor | TypeProto)
    )
}

/// An integer literal (`-?digits`) as C's `strtoll` reads it; `None` when it is out of
/// range or has anything between the sign and the digits.
fn to_i64(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// An integer literal as C's `strtoull` reads it: a negative value wraps around
/// (`-1` is 2^64 - 1); `None` when the magnitude exceeds 2^64 - 1.
fn to_u64_like_strtoull(s: &str) -> Option<u64> {
    match s.strip_prefix('-') {
        Some(digits) if digits.bytes().next().is_some_and(|c| c.is_ascii_digit()) => {
            digits.parse::<u64>().ok().map(u64::wrapping_neg)
        }
        Some(_) => None,
        None => s.parse().ok(),
    }
}

/// A float literal as `onnx.parser` reads it: the whole text must be a number;
/// overflow to infinity is refused, underflow rounds to zero or a subnormal.
fn to_f32(s: &str) -> Option<f32> {
    let v: f32 = s.parse().ok()?;
    (!v.is_infinite() || is_infinity_word(s)).then_some(v)
}

fn to_f64(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (!v.is_infinite() || is_infinity_word(s)).then_some(v)
}

fn is_infinity_word(s: &str) -> bool {
    let w = s.strip_prefix('-').unwrap_or(s);
    w.eq_ignore_ascii_case("inf") || w.eq_ignore_ascii_case("infinity")
}

/// Parses a whole model text.
pub(crate) fn parse_model(text: &str) -> Result<Model, ParseError> {
    let mut p = Parser::new(text)?;
    let mut m = ModelProto::default();
    p.model(&mut m).map_err(Fail::into_error)?;
    Ok(m)
}

/// Parses a graph; text after it is ignored, as `onnx.parser.parse_graph` ignores it.
pub(crate) fn parse_graph(text: &str) -> Result<GraphProto<'static>, ParseError> {
    let mut p = Parser::new(text)?;
    let mut g = GraphProto::default();
    p.graph(&mut g).map_err(Fail::into_error)?;
    Ok(g)
}

/// Parses a function; text after it is ignored.
pub(crate) fn parse_function(text: &str) -> Result<FunctionProto<'static>, ParseError> {
    let mut p = Parser::new(text)?;
    let mut f = FunctionProto::default();
    p.function(&mut f).map_err(Fail::into_error)?;
    Ok(f)
}

/// Parses a node; text after it is ignored.
pub(crate) fn parse_node(text: &str) -> Result<NodeProto<'static>, ParseError> {
    let mut p = Parser::new(text)?;
    let mut n = NodeProto::default();
    p.node(&mut n).map_err(Fail::into_error)?;
    Ok(n)
}
