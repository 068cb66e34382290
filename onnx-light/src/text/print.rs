//! The printer: models, graphs, functions and nodes in the ONNX text syntax, character
//! for character as `onnx.printer.to_text` (onnx 1.23) writes them.

use crate::error::{Error, ErrorKind, Result};
use crate::onnx::{
    AttributeProto, AttributeType, DataLocation, DataType, Dimension, DimensionValue,
    FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto,
    TensorProto, TensorShapeProto, TypeProto, TypeValue, ValueInfoProto,
};
use crate::ProtoEnum;

use super::number::{write_f32, write_f64, write_int};

/// True for what the parser reads as a bare identifier: an ASCII letter or `_`, then
/// ASCII letters, digits and `_`.
pub(crate) fn is_identifier(s: &[u8]) -> bool {
    match s.split_first() {
        Some((&first, rest)) => {
            (first.is_ascii_alphabetic() || first == b'_')
                && rest.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        }
        None => false,
    }
}

/// Writes the printer's name of an element type (its `Display` form); numbers this
/// schema does not know print `undefined`, as `UNDEFINED` does.
fn write_elem_type(out: &mut Vec<u8>, n: i32) {
    use std::io::Write as _;
    match DataType::from_i32(n) {
        // Writing to a Vec cannot fail.
        Some(dt) => drop(write!(out, "{dt}")),
        None => out.extend_from_slice(b"undefined"),
    }
}

/// The text syntax's name of an attribute type; `undefined` for 0 or unknown numbers.
pub(crate) fn attribute_type_name(n: i32) -> &'static str {
    use AttributeType::*;
    match AttributeType::from_i32(n) {
        Some(Float) => "float",
        Some(Int) => "int",
        Some(String) => "string",
        Some(Tensor) => "tensor",
        Some(Graph) => "graph",
        Some(SparseTensor) => "sparse_tensor",
        Some(TypeProto) => "type_proto",
        Some(Floats) => "floats",
        Some(Ints) => "ints",
        Some(Strings) => "strings",
        Some(Tensors) => "tensors",
        Some(Graphs) => "graphs",
        Some(SparseTensors) => "sparse_tensors",
        Some(TypeProtos) => "type_protos",
        Some(Undefined) | None => "undefined",
    }
}

pub(crate) struct Printer {
    pub(crate) out: Vec<u8>,
    indent: usize,
    /// The values printed of each tensor before the rest is elided (`None`: all).
    max_values: Option<usize>,
    /// Graphs and types entered and not yet left.
    depth: u32,
    /// Set when a graph or type nests deeper than [`MAX_NESTING`]: nothing below was
    /// printed, and the text is refused.
    too_deep: bool,
}

/// How deep graphs and types may nest in printed text: what the parser reads back.
pub(crate) const MAX_NESTING: u32 = 100;

impl Printer {
    pub(crate) fn new() -> Self {
        Printer {
            out: Vec::new(),
            indent: 3,
            max_values: None,
            depth: 0,
            too_deep: false,
        }
    }

    /// A printer that writes at most `max_values` values of each tensor (`None`: all).
    pub(crate) fn eliding(max_values: Option<usize>) -> Self {
        Printer {
            max_values,
            ..Printer::new()
        }
    }

    /// How many of `total` values to print.
    fn shown(&self, total: usize) -> usize {
        self.max_values.map_or(total, |m| total.min(m))
    }

    /// Closes an elided list: `, ... N more}`, or `}` when nothing was left out.
    fn close_values(&mut self, shown: usize, total: usize) {
        if shown < total {
            use std::io::Write as _;
            // Writing to a Vec cannot fail.
            let _ = write!(
                self.out,
                "{}... {} more",
                if shown > 0 { "," } else { "" },
                total - shown
            );
        }
        self.raw("}");
    }

    /// The text; bytes of `bytes` fields that are not UTF-8 become U+FFFD.
    ///
    /// # Errors
    /// `RecursionLimitExceeded` when graphs and types nest deeper than [`MAX_NESTING`].
    pub(crate) fn finish(self) -> Result<String> {
        if self.too_deep {
            return Err(Error::new(ErrorKind::RecursionLimitExceeded {
                limit: MAX_NESTING,
            }));
        }
        Ok(match String::from_utf8(self.out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Enters a nested graph or type: false (and it is not to be printed) past
    /// [`MAX_NESTING`], which `finish` then refuses.
    fn enter(&mut self) -> bool {
        if self.depth >= MAX_NESTING {
            self.too_deep = true;
            return false;
        }
        self.depth += 1;
        true
    }

    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn spaces(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(b' ', n));
    }

    fn quoted(&mut self, s: &[u8]) {
        self.out.push(b'"');
        for &c in s {
            if c == b'\\' || c == b'"' {
                self.out.push(b'\\');
            }
            self.out.push(c);
        }
        self.out.push(b'"');
    }

    fn id(&mut self, s: &str) {
        if is_identifier(s.as_bytes()) {
            self.raw(s);
        } else {
            self.quoted(s.as_bytes());
        }
    }

    fn ids(&mut self, open: &str, sep: &str, close: &str, ids: &[crate::Str<'_>]) {
        self.raw(open);
        for (i, s) in ids.iter().enumerate() {
            if i > 0 {
                self.raw(sep);
            }
            self.id(s);
        }
        self.raw(close);
    }

    fn list<T>(
        &mut self,
        open: &str,
        sep: &str,
        close: &str,
        items: &[T],
        mut f: impl FnMut(&mut Self, &T),
    ) {
        self.raw(open);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(sep);
            }
            f(self, item);
        }
        self.raw(close);
    }

    fn try_list<T>(
        &mut self,
        open: &str,
        sep: &str,
        close: &str,
        items: &[T],
        mut f: impl FnMut(&mut Self, &T) -> Result<()>,
    ) -> Result<()> {
        self.raw(open);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(sep);
            }
            f(self, item)?;
        }
        self.raw(close);
        Ok(())
    }

    fn dimension(&mut self, d: &Dimension<'_>) {
        match &d.value {
            Some(DimensionValue::DimValue(n)) => write_int(&mut self.out, *n),
            Some(DimensionValue::DimParam(s)) => self.id(s),
            None => self.raw("?"),
        }
    }

    fn shape(&mut self, s: &TensorShapeProto<'_>) {
        self.list("[", ",", "]", &s.dim, Self::dimension);
    }

    fn tensor_type(&mut self, elem: i32, shape: Option<&TensorShapeProto<'_>>) {
        write_elem_type(&mut self.out, elem);
        match shape {
            Some(s) if !s.dim.is_empty() => self.shape(s),
            Some(_) => {}
            None => self.raw("[]"),
        }
    }

    pub(crate) fn type_proto(&mut self, t: &TypeProto<'_>) {
        match &t.value {
            None => {}
            Some(TypeValue::TensorType(t)) => self.tensor_type(t.elem_type_raw(), t.shape.as_ref()),
            Some(TypeValue::SequenceType(s)) => {
                self.raw("seq(");
                self.opt_type(s.elem_type.as_deref());
                self.raw(")");
            }
            Some(TypeValue::MapType(m)) => {
                self.raw("map(");
                write_elem_type(&mut self.out, m.key_type_raw());
                self.raw(", ");
                self.opt_type(m.value_type.as_deref());
                self.raw(")");
            }
            Some(TypeValue::OptionalType(o)) => {
                self.raw("optional(");
                self.opt_type(o.elem_type.as_deref());
                self.raw(")");
            }
            Some(TypeValue::SparseTensorType(s)) => {
                self.raw("sparse_tensor(");
                self.tensor_type(s.elem_type_raw(), s.shape.as_ref());
                self.raw(")");
            }
            Some(TypeValue::OpaqueType(o)) => {
                self.raw("opaque(");
                if !o.domain().is_empty() {
                    self.raw(o.domain());
                    self.raw(",");
                }
                self.raw(o.name());
                self.raw(")");
            }
        }
    }

    fn opt_type(&mut self, t: Option<&TypeProto<'_>>) {
        if let Some(t) = t {
            if self.enter() {
                self.type_proto(t);
                self.depth -= 1;
            }
        }
    }

    fn entry(&mut self, e: &StringStringEntryProto<'_>) {
        self.quoted(e.key().as_bytes());
        self.raw(": ");
        self.quoted(e.value().as_bytes());
    }

    fn opset(&mut self, o: &OperatorSetIdProto<'_>) {
        self.quoted(o.domain().as_bytes());
        self.raw(" : ");
        write_int(&mut self.out, o.version());
    }

    fn numbers<T: Copy>(
        &mut self,
        values: impl ExactSizeIterator<Item = T>,
        mut f: impl FnMut(&mut Vec<u8>, T),
    ) {
        let total = values.len();
        let shown = self.shown(total);
        // Room for typical numbers up front: growing a buffer of hundreds of megabytes
        // by doubling costs more than writing the digits.
        self.out.reserve(shown.saturating_mul(12).min(1 << 30));
        self.raw(" {");
        for (i, v) in values.take(shown).enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            f(&mut self.out, v);
        }
        self.close_values(shown, total);
    }

    pub(crate) fn tensor(&mut self, t: &TensorProto<'_>, initializer: bool) -> Result<()> {
        write_elem_type(&mut self.out, t.data_type());
        if !t.dims.is_empty() {
            self.raw("[");
            for (i, d) in t.dims.iter().enumerate() {
                if i > 0 {
                    self.raw(",");
                }
                write_int(&mut self.out, *d);
            }
            self.raw("]");
        }
        if !t.name().is_empty() {
            self.raw(" ");
            self.id(t.name());
        }
        if initializer {
            self.raw(" = ");
        }
        if t.data_location.is_some() && t.data_location() == DataLocation::External {
            self.list("[", ", ", "]", &t.external_data, Self::entry);
            return Ok(());
        }
        let raw = match (&t.raw_data, &t.lazy_data) {
            (Some(r), _) => Some(r.as_slice()),
            (None, Some(_)) => {
                return Err(Error::new(ErrorKind::IncompleteModel {
                    reason: "the tensor's weights were not loaded (structure-only load)".into(),
                })
                .in_tensor(t.name()))
            }
            (None, None) => None,
        };
        use DataType::*;
        let dt = DataType::from_i32(t.data_type());
        if let Some(raw) = raw {
            macro_rules! raw_as {
                ($ty:ty, $f:expr) => {{
                    let width = std::mem::size_of::<$ty>();
                    let data = exact_raw(t, raw, width)?;
                    self.numbers(
                        data.chunks_exact(width)
                            .map(|c| <$ty>::from_le_bytes(c.try_into().unwrap_or_default())),
                        $f,
                    );
                }};
            }
            match dt {
                Some(Int8) => raw_as!(i8, write_int),
                Some(
                    Uint8 | Bool | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ
                    | Float8E8M0,
                ) => {
                    raw_as!(u8, write_int)
                }
                Some(Int16) => raw_as!(i16, write_int),
                Some(Uint16 | Float16 | Bfloat16) => raw_as!(u16, write_int),
                Some(Int32) => raw_as!(i32, write_int),
                Some(Uint32) => raw_as!(u32, write_int),
                Some(Int64) => raw_as!(i64, write_int),
                Some(Uint64) => raw_as!(u64, write_int),
                Some(Float) => raw_as!(f32, write_f32),
                Some(Double) => raw_as!(f64, write_f64),
                _ => self.raw("..."),
            }
        } else {
            match dt {
                Some(
                    Int8 | Int16 | Int32 | Uint8 | Uint16 | Bool | Float16 | Bfloat16
                    | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ | Float8E8M0,
                ) => self.numbers(t.int32_data.iter().copied(), write_int),
                Some(Int64) => self.numbers(t.int64_data.iter().copied(), write_int),
                Some(Uint32 | Uint64) => self.numbers(t.uint64_data.iter().copied(), write_int),
                Some(Float) => self.numbers(t.float_data.iter().copied(), write_f32),
                Some(Double) => self.numbers(t.double_data.iter().copied(), write_f64),
                Some(String) => {
                    let total = t.string_data.len();
                    let shown = self.shown(total);
                    if shown == 0 && total > 0 {
                        self.raw("{");
                    }
                    for (i, s) in t.string_data.iter().take(shown).enumerate() {
                        self.raw(if i == 0 { "{" } else { ", " });
                        self.quoted(s.as_slice());
                    }
                    self.close_values(shown, total);
                }
                _ => self.raw("..."),
            }
        }
        Ok(())
    }

    fn value_info(&mut self, v: &ValueInfoProto<'_>) {
        if let Some(t) = &v.r#type {
            self.type_proto(t);
        }
        self.raw(" ");
        self.id(v.name());
    }

    fn value_infos(&mut self, v: &[ValueInfoProto<'_>]) {
        self.list("(", ", ", ")", v, Self::value_info);
    }

    pub(crate) fn attribute(&mut self, a: &AttributeProto<'_>) -> Result<()> {
        let ty = a.r#type.map_or(0, |t| t.raw());
        self.raw(a.name());
        self.raw(": ");
        self.raw(attribute_type_name(ty));
        if let Some(r) = &a.ref_attr_name {
            self.raw(" = @");
            self.raw(r);
            return Ok(());
        }
        self.raw(" = ");
        use AttributeType::*;
        match AttributeType::from_i32(ty) {
            Some(Int) => write_int(&mut self.out, a.i()),
            Some(Ints) => self.list("[", ", ", "]", &a.ints, |p, v| write_int(&mut p.out, *v)),
            Some(Float) => write_f32(&mut self.out, a.f()),
            Some(Floats) => self.list("[", ", ", "]", &a.floats, |p, v| write_f32(&mut p.out, *v)),
            Some(String) => self.quoted(a.s.as_deref().unwrap_or_default()),
            Some(Strings) => {
                for (i, s) in a.strings.iter().enumerate() {
                    self.raw(if i == 0 { "[" } else { ", " });
                    self.quoted(s.as_slice());
                }
                self.raw("]");
            }
            Some(Graph) => {
                self.indent += 3;
                let r = match &a.g {
                    Some(g) => self.graph(g),
                    None => self.graph(&GraphProto::default()),
                };
                self.indent -= 3;
                r?;
            }
            Some(Graphs) => {
                self.indent += 3;
                let r = self.try_list("[", ", ", "]", &a.graphs, |p, g| p.graph(g));
                self.indent -= 3;
                r?;
            }
            Some(Tensor) => match &a.t {
                Some(t) => self.tensor(t, false)?,
                None => self.tensor(&TensorProto::default(), false)?,
            },
            Some(Tensors) => {
                self.try_list("[", ", ", "]", &a.tensors, |p, t| p.tensor(t, false))?
            }
            Some(TypeProto) => {
                if let Some(t) = &a.tp {
                    self.type_proto(t);
                }
            }
            Some(TypeProtos) => self.list("[", ", ", "]", &a.type_protos, Self::type_proto),
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn node(&mut self, n: &NodeProto<'_>) -> Result<()> {
        self.spaces(self.indent);
        if let Some(name) = &n.name {
            self.raw("[");
            self.id(name);
            self.raw("] ");
        }
        self.ids("", ", ", "", &n.output);
        self.raw(" = ");
        if !n.domain().is_empty() {
            self.raw(n.domain());
            self.raw(".");
        }
        self.raw(n.op_type());
        if !n.overload().is_empty() {
            self.raw(":");
            self.raw(n.overload());
        }
        let has_subgraph = n
            .attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty());
        if !has_subgraph && !n.attribute.is_empty() {
            self.try_list(" <", ", ", ">", &n.attribute, Self::attribute)?;
        }
        self.ids(" (", ", ", ")", &n.input);
        if has_subgraph && !n.attribute.is_empty() {
            self.try_list(" <", ", ", ">", &n.attribute, Self::attribute)?;
        }
        self.raw("\n");
        Ok(())
    }

    fn nodes(&mut self, nodes: &[NodeProto<'_>]) -> Result<()> {
        self.raw("{\n");
        for n in nodes {
            self.node(n)?;
        }
        if self.indent > 3 {
            self.spaces((self.indent - 3).max(3));
        }
        self.raw("}");
        Ok(())
    }

    pub(crate) fn graph(&mut self, g: &GraphProto<'_>) -> Result<()> {
        if !self.enter() {
            return Err(Error::new(ErrorKind::RecursionLimitExceeded {
                limit: MAX_NESTING,
            }));
        }
        let r = self.graph_body(g);
        self.depth -= 1;
        r
    }

    fn graph_body(&mut self, g: &GraphProto<'_>) -> Result<()> {
        self.id(g.name());
        self.raw(" ");
        self.value_infos(&g.input);
        self.raw(" => ");
        self.value_infos(&g.output);
        self.raw(" ");
        if !g.initializer.is_empty() || !g.value_info.is_empty() {
            self.raw("\n");
            self.spaces(self.indent);
            self.raw("<");
            let mut first = true;
            for t in &g.initializer {
                if !first {
                    self.raw(", ");
                }
                first = false;
                self.tensor(t, true)?;
            }
            for v in &g.value_info {
                if !first {
                    self.raw(", ");
                }
                first = false;
                self.value_info(v);
            }
            self.raw(">\n");
        }
        self.nodes(&g.node)
    }

    pub(crate) fn function(&mut self, f: &FunctionProto<'_>) -> Result<()> {
        self.raw("<\n  domain: ");
        self.quoted(f.domain().as_bytes());
        self.raw(",\n");
        if !f.overload().is_empty() {
            self.raw("  overload: ");
            self.quoted(f.overload().as_bytes());
            self.raw(",\n");
        }
        self.raw("  opset_import: ");
        self.list("[", ",", "]", &f.opset_import, Self::opset);
        self.raw("\n>\n");
        self.id(f.name());
        self.raw(" ");
        if !f.attribute.is_empty() {
            self.list("<", ",", ">", &f.attribute, |p, a| p.raw(a));
        }
        self.ids("(", ", ", ")", &f.input);
        self.raw(" => ");
        self.ids("(", ", ", ")", &f.output);
        self.raw("\n");
        self.nodes(&f.node)
    }

    fn key(&mut self, key: &str, first: bool) {
        if !first {
            self.raw(",\n");
        }
        self.spaces(self.indent);
        self.raw(key);
        self.raw(": ");
    }

    pub(crate) fn model(&mut self, m: &ModelProto<'_>) -> Result<()> {
        self.raw("<\n");
        self.key("ir_version", true);
        write_int(&mut self.out, m.ir_version());
        self.key("opset_import", false);
        self.list("[", ", ", "]", &m.opset_import, Self::opset);
        let strings = [
            ("producer_name", &m.producer_name),
            ("producer_version", &m.producer_version),
            ("domain", &m.domain),
        ];
        for (key, value) in strings {
            if let Some(v) = value {
                self.key(key, false);
                self.quoted(v.as_bytes());
            }
        }
        if let Some(v) = m.model_version {
            self.key("model_version", false);
            write_int(&mut self.out, v);
        }
        if let Some(v) = &m.doc_string {
            self.key("doc_string", false);
            self.quoted(v.as_bytes());
        }
        if !m.metadata_props.is_empty() {
            self.key("metadata_props", false);
            self.list("[", ", ", "]", &m.metadata_props, Self::entry);
        }
        self.raw("\n>\n");
        match &m.graph {
            Some(g) => self.graph(g)?,
            None => self.graph(&GraphProto::default())?,
        }
        for f in &m.functions {
            self.raw("\n");
            self.function(f)?;
        }
        Ok(())
    }
}

/// The raw bytes of a tensor whose `raw_data` must hold exactly one `width`-byte element
/// per element of its dims, as the printer requires.
fn exact_raw<'r>(t: &TensorProto<'_>, raw: &'r [u8], width: usize) -> Result<&'r [u8]> {
    let mut count: u64 = 1;
    for &d in &t.dims {
        let d = u64::try_from(d).map_err(|_| {
            Error::new(ErrorKind::ValueOutOfRange {
                what: "tensor dimension (negative)",
            })
            .in_tensor(t.name())
        })?;
        count = count
            .checked_mul(d)
            .filter(|&c| c <= i64::MAX as u64)
            .ok_or_else(|| {
                Error::new(ErrorKind::ValueOutOfRange {
                    what: "tensor element count (overflows int64)",
                })
                .in_tensor(t.name())
            })?;
    }
    let width = width as u64;
    if !(raw.len() as u64).is_multiple_of(width) || raw.len() as u64 / width != count {
        return Err(Error::new(ErrorKind::TensorDataMismatch {
            field: "raw_data",
            expected: count.saturating_mul(width),
            actual: raw.len() as u64,
        })
        .in_tensor(t.name()));
    }
    Ok(raw)
}
