//! The checker and the ONNX text format for Python: `onnx_light.onnx.checker`,
//! `printer` and `parser` (in `python/onnx_light/onnx/`) call these.

use std::path::PathBuf;

use onnx_light::checker::{self, CheckOptions, PartContext};
use onnx_light::onnx::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, SparseTensorProto,
    TensorProto, ValueInfoProto,
};
use onnx_light::text;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::Failure;
use crate::message::{wrap, PyMessage};
use crate::reflect::Reflect;

/// Runs `f` on the message behind `obj` (GIL released; its errors are converted once
/// the GIL is held again, see [`Failure`]).
pub(crate) fn with_message<R: Send>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&dyn Reflect) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    let msg = obj
        .cast::<PyMessage>()
        .map_err(|_| PyTypeError::new_err("expected an ONNX message"))?;
    let (view, name) = {
        let m = msg.borrow();
        (m.view_ref(), m.name)
    };
    let done = py.detach(|| {
        view.with_detached(false, |m| match m {
            Some(m) => f(m),
            None => f(&*crate::reflect::new_message(name).expect("known type")),
        })
    });
    Ok(done?)
}

/// The problems `onnx_light::checker` finds in `model`, one line each, in model order
/// (empty: valid). A problem past which more of its kind were only counted is followed
/// by the line `... and N more of this kind`.
#[pyfunction]
#[pyo3(signature = (model, model_dir, skip_opset_compatibility_check, check_custom_domain))]
pub fn check_model(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    model_dir: Option<PathBuf>,
    skip_opset_compatibility_check: bool,
    check_custom_domain: bool,
) -> PyResult<Vec<String>> {
    let mut options = CheckOptions::default()
        .skip_opset_compatibility_check(skip_opset_compatibility_check)
        .check_custom_domain(check_custom_domain);
    if let Some(dir) = model_dir {
        options = options.model_dir(dir);
    }
    with_message(py, model, |m| {
        let model = m
            .as_any()
            .downcast_ref::<ModelProto<'static>>()
            .ok_or_else(|| PyTypeError::new_err("check_model takes a ModelProto"))?;
        Ok(problem_lines(checker::check_model_with(model, &options)))
    })
}

/// The problems `onnx_light::checker` finds in `part` (a node, graph, function,
/// attribute, tensor, sparse tensor or value info) checked on its own against a model of
/// IR version `ir_version` importing `opset_imports`, one line each (empty: valid).
/// External data files are looked for in `model_dir` when it is given.
#[pyfunction]
pub fn check_part(
    py: Python<'_>,
    part: &Bound<'_, PyAny>,
    ir_version: i32,
    opset_imports: Vec<(String, i64)>,
    model_dir: Option<PathBuf>,
) -> PyResult<Vec<String>> {
    let mut options = CheckOptions::default();
    if let Some(dir) = model_dir {
        options = options.model_dir(dir);
    }
    let ctx = PartContext::new(ir_version, opset_imports).options(options);
    with_message(py, part, |m| {
        let any = m.as_any();
        let checked = if let Some(x) = any.downcast_ref::<NodeProto<'static>>() {
            checker::check_node(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<GraphProto<'static>>() {
            checker::check_graph(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<FunctionProto<'static>>() {
            checker::check_function(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<AttributeProto<'static>>() {
            checker::check_attribute(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<TensorProto<'static>>() {
            checker::check_tensor(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<SparseTensorProto<'static>>() {
            checker::check_sparse_tensor(x, &ctx)
        } else if let Some(x) = any.downcast_ref::<ValueInfoProto<'static>>() {
            checker::check_value_info(x, &ctx)
        } else {
            return Err(PyTypeError::new_err(format!(
                "cannot check a {} on its own",
                m.proto_name()
            ))
            .into());
        };
        Ok(problem_lines(checked))
    })
}

/// One line per problem kept, each followed by its `... and N more of this kind` line
/// when more were counted (empty: no problem).
fn problem_lines(checked: Result<(), checker::Problems>) -> Vec<String> {
    match checked {
        Ok(()) => Vec::new(),
        Err(problems) => problems
            .iter()
            .flat_map(|p| [Some(p.to_string()), p.more_of_this_kind()])
            .flatten()
            .collect(),
    }
}

/// `onnx.printer.to_text` of a model, graph, function or node.
#[pyfunction]
pub fn to_text(py: Python<'_>, proto: &Bound<'_, PyAny>) -> PyResult<String> {
    with_message(py, proto, |m| {
        let any = m.as_any();
        let printed = if let Some(x) = any.downcast_ref::<ModelProto<'static>>() {
            text::to_text(x)
        } else if let Some(x) = any.downcast_ref::<GraphProto<'static>>() {
            text::to_text(x)
        } else if let Some(x) = any.downcast_ref::<FunctionProto<'static>>() {
            text::to_text(x)
        } else if let Some(x) = any.downcast_ref::<NodeProto<'static>>() {
            text::to_text(x)
        } else {
            return Err(PyTypeError::new_err(format!(
                "to_text takes a ModelProto, GraphProto, FunctionProto or NodeProto, not {}",
                m.proto_name()
            ))
            .into());
        };
        Ok(printed?)
    })
}

/// Parses the ONNX text format into a message of `kind` (`model`, `graph`, `function`
/// or `node`); a syntax error raises `onnx_light.onnx.parser.ParseError` with its line
/// and column.
#[pyfunction]
pub fn parse_text(py: Python<'_>, kind: &str, source: &str) -> PyResult<Py<PyAny>> {
    if !matches!(kind, "model" | "graph" | "function" | "node") {
        return Err(PyValueError::new_err(format!("unknown text kind {kind:?}")));
    }
    let parsed: Result<Box<dyn Reflect>, text::ParseError> = py.detach(|| match kind {
        "model" => text::parse_model(source).map(|m| Box::new(m) as Box<dyn Reflect>),
        "graph" => text::parse_graph(source).map(|m| Box::new(m) as Box<dyn Reflect>),
        "function" => text::parse_function(source).map(|m| Box::new(m) as Box<dyn Reflect>),
        _ => text::parse_node(source).map(|m| Box::new(m) as Box<dyn Reflect>),
    });
    match parsed {
        Ok(msg) => wrap(py, PyMessage::from_box(msg)),
        Err(e) => {
            let class = py
                .import("onnx_light.onnx._errors")
                .and_then(|m| m.getattr("ParseError"))
                .map_err(|_| PyRuntimeError::new_err(e.to_string()))?;
            Err(PyErr::from_value(class.call1((e.to_string(),))?))
        }
    }
}
