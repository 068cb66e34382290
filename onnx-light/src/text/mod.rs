//! The ONNX text format: models, graphs, functions and nodes as people read and write
//! them, exactly as the official `onnx.printer` prints and `onnx.parser` reads them.
//!
//! ```
//! use onnx_light::onnx::*;
//! use onnx_light::text;
//!
//! let mut graph = GraphProto::named("g");
//! let dims = [Dimension::from("batch"), 3.into()];
//! graph.input.push(ValueInfoProto::tensor("x", DataType::Float, dims.clone()));
//! graph.output.push(ValueInfoProto::tensor("y", DataType::Float, dims));
//! graph.node.push(NodeProto::new("Relu", ["x"], ["y"]));
//! let model = ModelProto::new(graph, vec![OperatorSetIdProto::new("", 21)]);
//!
//! let text = text::to_text(&model)?;
//! assert_eq!(
//!     text,
//!     "<\n   ir_version: 14,\n   opset_import: [\"\" : 21]\n>\n\
//!      g (float[batch,3] x) => (float[batch,3] y) {\n   y = Relu (x)\n}"
//! );
//! # Ok::<(), onnx_light::Error>(())
//! ```
//!
//! [`parse_model`], [`parse_graph`], [`parse_function`] and [`parse_node`] read the
//! syntax back; parsing what [`to_text`] prints gives a model that prints the same again.
//!
//! # Printing
//!
//! [`to_text`] gives the characters `onnx.printer.to_text` (onnx 1.23) gives for the same
//! message: identifiers quoted when they are not `[A-Za-z_][A-Za-z0-9_]*`, numbers as
//! C++ `std::to_chars` writes them (the shortest digits that read back to the same value,
//! in fixed or scientific notation, whichever is shorter: `0.001`, `1e-04`, `1e+08`),
//! every tensor value written out (the printer elides nothing, so a model with large
//! weights gives a large text: [`to_text_with`] cuts each tensor after a number of
//! values instead), `...` for the element types the printer does not
//! write (complex, 4-, 2- and 6-bit types, strings in `raw_data`). What the syntax has no
//! place for is left out, as the printer leaves it: doc strings other than the model's,
//! sparse initializers, value infos and attribute defaults of functions, training
//! information. Like the printer, it fails when a tensor's `raw_data` does not hold
//! exactly the elements its dims describe (the error names the tensor). Bytes of
//! `bytes` fields (string attributes, string tensors) that are not UTF-8 become U+FFFD.

mod number;
mod parse;
mod print;

use crate::error::Result;
use crate::onnx::{FunctionProto, Graph, GraphProto, Model, ModelProto, NodeProto};

pub use parse::ParseError;

use print::Printer;

/// How [`to_text_with`] prints. The default prints exactly what `onnx.printer` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrintOptions {
    /// Print at most this many values of each tensor, then `... N more` (the text no
    /// longer parses then); `None` (the default) prints every value, as the printer does.
    pub max_tensor_values: Option<usize>,
}

impl PrintOptions {
    /// Print at most `n` values of each tensor (`None`: all).
    pub fn max_tensor_values(mut self, n: Option<usize>) -> Self {
        self.max_tensor_values = n;
        self
    }
}

/// A message the text format can print: [`ModelProto`], [`GraphProto`],
/// [`FunctionProto`] and [`NodeProto`], as `onnx.printer.to_text` accepts.
pub trait ToText {
    /// The message in the ONNX text syntax (see [`to_text`]).
    fn to_text(&self) -> Result<String> {
        self.to_text_with(&PrintOptions::default())
    }

    /// The message in the ONNX text syntax, printed as `options` say (see
    /// [`to_text_with`]).
    fn to_text_with(&self, options: &PrintOptions) -> Result<String>;
}

/// The message in the ONNX text syntax, exactly as `onnx.printer.to_text` prints it.
///
/// # Errors
/// [`ErrorKind::TensorDataMismatch`](crate::ErrorKind::TensorDataMismatch) when a
/// tensor's `raw_data` does not hold the elements its dims describe,
/// [`ErrorKind::ValueOutOfRange`](crate::ErrorKind::ValueOutOfRange) for a negative or
/// overflowing dimension of such a tensor (as `onnx.printer` refuses them), and
/// [`ErrorKind::IncompleteModel`](crate::ErrorKind::IncompleteModel) for weights left
/// unloaded by a structure-only load.
pub fn to_text<T: ToText + ?Sized>(message: &T) -> Result<String> {
    message.to_text()
}

/// The message in the ONNX text syntax, with tensors elided past
/// [`PrintOptions::max_tensor_values`]: what `onnx-light show` prints by default, so
/// that a model with large weights stays readable. With the default options, the same
/// as [`to_text`].
///
/// ```
/// use onnx_light::onnx::*;
/// use onnx_light::text::{self, PrintOptions};
///
/// let mut graph = GraphProto::named("g");
/// let w: Vec<f32> = (0..1000).map(|i| i as f32).collect();
/// graph.initializer.push(TensorProto::from_vec("w", [1000], w)?);
/// let text = text::to_text_with(&graph, &PrintOptions::default().max_tensor_values(Some(3)))?;
/// assert!(text.contains("float[1000] w =  {0,1,2,... 997 more}"));
/// # Ok::<(), onnx_light::Error>(())
/// ```
///
/// # Errors
/// As [`to_text`].
pub fn to_text_with<T: ToText + ?Sized>(message: &T, options: &PrintOptions) -> Result<String> {
    message.to_text_with(options)
}

impl ToText for ModelProto<'_> {
    fn to_text_with(&self, options: &PrintOptions) -> Result<String> {
        let mut p = Printer::eliding(options.max_tensor_values);
        p.model(self)?;
        p.finish()
    }
}

impl ToText for GraphProto<'_> {
    fn to_text_with(&self, options: &PrintOptions) -> Result<String> {
        let mut p = Printer::eliding(options.max_tensor_values);
        p.graph(self)?;
        p.finish()
    }
}

impl ToText for FunctionProto<'_> {
    fn to_text_with(&self, options: &PrintOptions) -> Result<String> {
        let mut p = Printer::eliding(options.max_tensor_values);
        p.function(self)?;
        p.finish()
    }
}

/// A node prints on one line of its own: three spaces of indent, a newline at the end.
impl ToText for NodeProto<'_> {
    fn to_text_with(&self, options: &PrintOptions) -> Result<String> {
        let mut p = Printer::eliding(options.max_tensor_values);
        p.node(self)?;
        p.finish()
    }
}

/// Reads a model in the ONNX text syntax, as `onnx.parser.parse_model` reads it: the
/// result encodes to the bytes `onnx.parser.parse_model(text).SerializeToString()` gives
/// (field presence included).
///
/// ```
/// use onnx_light::prelude::*;
/// use onnx_light::text;
///
/// let model = text::parse_model(
///     r#"<ir_version: 10, opset_import: ["" : 21]>
///        agraph (float[N, 128] X, float[128, 10] W) => (float[N, 10] C) {
///            T = MatMul(X, W)
///            C = Relu(T)
///        }"#,
/// )?;
/// let graph = model.graph.as_ref().unwrap();
/// assert_eq!(graph.node[1].op_type(), "Relu");
/// assert_eq!(graph.input[0].r#type.as_ref().unwrap().to_string(), "float[N,128]");
/// // Printing it gives the printer's layout of the same model.
/// assert!(text::to_text(&model)?.starts_with("<\n   ir_version: 10,"));
///
/// let err = text::parse_model("agraph (float[N] X) => (float[N] Y) {\n  Y = Relu(X\n}").unwrap_err();
/// assert_eq!((err.line(), err.column()), (3, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A [`ParseError`] with the line and column where the text stops making sense. Types and
/// graphs nested more than 100 levels deep are refused (the official parser has no limit
/// and overflows its stack instead); a NUL character is refused (the official parser
/// stops reading there). Everything else the official parser accepts is accepted,
/// including its leniencies: text after the last function is an error, a list attribute
/// keeps only its numbers and strings, `uint64` values read as C's `strtoull` reads them.
pub fn parse_model(text: &str) -> std::result::Result<Model, ParseError> {
    parse::parse_model(text)
}

/// Reads a graph in the ONNX text syntax, as `onnx.parser.parse_graph` reads it (text
/// after the graph is ignored, as it ignores it). Errors as for [`parse_model`].
pub fn parse_graph(text: &str) -> std::result::Result<Graph, ParseError> {
    parse::parse_graph(text)
}

/// Reads a function in the ONNX text syntax, as `onnx.parser.parse_function` reads it.
/// Errors as for [`parse_model`].
pub fn parse_function(text: &str) -> std::result::Result<FunctionProto<'static>, ParseError> {
    parse::parse_function(text)
}

/// Reads a node in the ONNX text syntax, as `onnx.parser.parse_node` reads it. Errors as
/// for [`parse_model`].
pub fn parse_node(text: &str) -> std::result::Result<NodeProto<'static>, ParseError> {
    parse::parse_node(text)
}
