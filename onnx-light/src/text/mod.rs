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
//! # Printing
//!
//! [`to_text`] gives the characters `onnx.printer.to_text` (onnx 1.23) gives for the same
//! message: identifiers quoted when they are not `[A-Za-z_][A-Za-z0-9_]*`, numbers as
//! C++ `std::to_chars` writes them (the shortest digits that read back to the same value,
//! in fixed or scientific notation, whichever is shorter: `0.001`, `1e-04`, `1e+08`),
//! every tensor value written out (the printer elides nothing, so a model with large
//! weights gives a large text), `...` for the element types the printer does not
//! write (complex, 4-, 2- and 6-bit types, strings in `raw_data`). What the syntax has no
//! place for is left out, as the printer leaves it: doc strings other than the model's,
//! sparse initializers, value infos and attribute defaults of functions, training
//! information. Like the printer, it fails when a tensor's `raw_data` does not hold
//! exactly the elements its dims describe (the error names the tensor). Bytes of
//! `bytes` fields (string attributes, string tensors) that are not UTF-8 become U+FFFD.

mod number;
mod print;

use crate::error::Result;
use crate::onnx::{FunctionProto, GraphProto, ModelProto, NodeProto};

use print::Printer;

/// A message the text format can print: [`ModelProto`], [`GraphProto`],
/// [`FunctionProto`] and [`NodeProto`], as `onnx.printer.to_text` accepts.
pub trait ToText {
    /// The message in the ONNX text syntax (see [`to_text`]).
    fn to_text(&self) -> Result<String>;
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

impl ToText for ModelProto<'_> {
    fn to_text(&self) -> Result<String> {
        let mut p = Printer::new();
        p.model(self)?;
        Ok(p.finish())
    }
}

impl ToText for GraphProto<'_> {
    fn to_text(&self) -> Result<String> {
        let mut p = Printer::new();
        p.graph(self)?;
        Ok(p.finish())
    }
}

impl ToText for FunctionProto<'_> {
    fn to_text(&self) -> Result<String> {
        let mut p = Printer::new();
        p.function(self)?;
        Ok(p.finish())
    }
}

/// A node prints on one line of its own: three spaces of indent, a newline at the end.
impl ToText for NodeProto<'_> {
    fn to_text(&self) -> Result<String> {
        let mut p = Printer::new();
        p.node(self)?;
        Ok(p.finish())
    }
}
