//! Graph surgery for Python: `onnx_light.onnx.compose` and `onnx_light.onnx.utils` (in
//! `python/onnx_light/onnx/`) call these. Inputs are copied out of their models (weights a
//! structure-only load left on disk stay there), or edited in place when asked.

use std::path::PathBuf;

use onnx_light::compose::{self, MergeOptions, NameMap, PrefixOptions};
use onnx_light::extract::{self, ExtractOptions, Extractor};
use onnx_light::onnx::{
    GraphProto, ModelProto, NodeProto, SparseTensorProto, TensorProto, ValueInfoProto,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::to_py_err;
use crate::message::{wrap, PyMessage};
use crate::shape::copy_of;
use crate::tools::with_message;

/// Runs `f` on the message behind `obj` (created if unset), which must be a `T`, to
/// change it in place (GIL released).
fn edit<T: Send + 'static, R: Send>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &'static str,
    f: impl FnOnce(&mut T) -> R + Send,
) -> PyResult<R> {
    let msg = obj
        .cast::<PyMessage>()
        .map_err(|_| PyTypeError::new_err(format!("expected a {what}")))?;
    let view = msg.borrow().view_ref();
    let done = py.detach(|| {
        view.with_detached(true, |m| {
            let m = m.expect("created");
            let t = m
                .as_any_mut()
                .downcast_mut::<T>()
                .ok_or_else(|| PyTypeError::new_err(format!("expected a {what}")))?;
            Ok(f(t))
        })
    });
    Ok(done?)
}

/// A new Python message holding `msg` (weights left on disk read on first need).
fn new_object<T: crate::reflect::Reflect>(py: Python<'_>, msg: T) -> PyResult<Py<PyAny>> {
    wrap(py, PyMessage::from_box_lazy(Box::new(msg)))
}

/// Runs `f` on the message behind `obj` (a `T`) in place, returning `None`, or on a
/// copy of it, returning the copy: `onnx.compose`'s `inplace` argument.
fn in_place_or_copy<T, R: Send>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &'static str,
    inplace: bool,
    f: impl FnOnce(&mut T) -> R + Send,
) -> PyResult<Option<Py<PyAny>>>
where
    T: crate::reflect::Reflect + Clone + Send + 'static,
{
    if inplace {
        edit(py, obj, what, f)?;
        return Ok(None);
    }
    let mut copy: T = copy_of(py, obj, what)?;
    py.detach(|| f(&mut copy));
    Ok(Some(new_object(py, copy)?))
}

/// Runs `f` on the message behind `obj`, which must be a `T`, borrowed (GIL released).
fn with_typed<T: 'static, R: Send>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &'static str,
    f: impl FnOnce(&T) -> Result<R, crate::errors::Failure> + Send,
) -> PyResult<R> {
    with_message(py, obj, |m| {
        let t = m
            .as_any()
            .downcast_ref::<T>()
            .ok_or_else(|| PyTypeError::new_err(format!("expected a {what}")))?;
        f(t)
    })
}

/// The names of `graph` that [`compose::check_overlapping_names`] compares, without
/// anything else (no attribute, no tensor data).
fn names_of(graph: &GraphProto<'static>) -> GraphProto<'static> {
    let named = |t: &TensorProto<'static>| TensorProto {
        name: t.name.clone(),
        ..TensorProto::default()
    };
    GraphProto {
        node: graph
            .node
            .iter()
            .map(|n| NodeProto {
                input: n.input.clone(),
                output: n.output.clone(),
                ..NodeProto::default()
            })
            .collect(),
        value_info: graph
            .value_info
            .iter()
            .map(|v| ValueInfoProto {
                name: v.name.clone(),
                ..ValueInfoProto::default()
            })
            .collect(),
        initializer: graph.initializer.iter().map(named).collect(),
        sparse_initializer: graph
            .sparse_initializer
            .iter()
            .map(|s| SparseTensorProto {
                values: s.values.as_ref().map(named),
                indices: s.indices.as_ref().map(named),
                ..SparseTensorProto::default()
            })
            .collect(),
        ..GraphProto::default()
    }
}

/// `onnx.compose.check_overlapping_names`: `[(category, names)]`. Only the names of the
/// graphs are copied.
#[pyfunction]
pub fn check_overlapping_names(
    py: Python<'_>,
    g1: &Bound<'_, PyAny>,
    g2: &Bound<'_, PyAny>,
    io_map: Vec<(String, String)>,
) -> PyResult<Vec<(&'static str, Vec<String>)>> {
    let g1 = with_typed(py, g1, "GraphProto", |g| Ok(names_of(g)))?;
    let g2 = with_typed(py, g2, "GraphProto", |g| Ok(names_of(g)))?;
    let found = py.detach(|| compose::check_overlapping_names(&g1, &g2, &io_map));
    Ok(found.into_iter().map(|(c, n)| (c.as_str(), n)).collect())
}

/// The arguments `merge_graphs` and `merge_models` share, as `MergeOptions`.
#[allow(clippy::too_many_arguments)]
fn merge_options(
    inputs: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
    prefix1: Option<String>,
    prefix2: Option<String>,
    name: Option<String>,
    doc_string: Option<String>,
) -> MergeOptions {
    let mut o = MergeOptions::default()
        .inputs(inputs.unwrap_or_default())
        .outputs(outputs.unwrap_or_default())
        .prefix1(prefix1.unwrap_or_default())
        .prefix2(prefix2.unwrap_or_default());
    o.name = name;
    o.doc_string = doc_string;
    o
}

/// `onnx.compose.merge_graphs`: a new graph.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn merge_graphs(
    py: Python<'_>,
    g1: &Bound<'_, PyAny>,
    g2: &Bound<'_, PyAny>,
    io_map: Vec<(String, String)>,
    inputs: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
    prefix1: Option<String>,
    prefix2: Option<String>,
    name: Option<String>,
    doc_string: Option<String>,
) -> PyResult<Py<PyAny>> {
    // The second graph is copied, the first borrowed (it may be the same message, whose
    // lock is then taken once at a time): the merge copies what it keeps once more.
    let g2: GraphProto<'static> = copy_of(py, g2, "GraphProto")?;
    let options = merge_options(inputs, outputs, prefix1, prefix2, name, doc_string);
    let merged = with_typed(py, g1, "GraphProto", |g1: &GraphProto<'static>| {
        Ok(compose::merge_graphs(g1, &g2, &io_map, &options)?)
    })?;
    new_object(py, merged)
}

/// `onnx.compose.merge_models` without its final check: a new model.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn merge_models(
    py: Python<'_>,
    m1: &Bound<'_, PyAny>,
    m2: &Bound<'_, PyAny>,
    io_map: Vec<(String, String)>,
    inputs: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
    prefix1: Option<String>,
    prefix2: Option<String>,
    name: Option<String>,
    doc_string: Option<String>,
    producer_name: Option<String>,
    producer_version: Option<String>,
    domain: Option<String>,
    model_version: Option<i64>,
) -> PyResult<Py<PyAny>> {
    // As in `merge_graphs`: the second copied, the first borrowed.
    let m2: ModelProto<'static> = copy_of(py, m2, "ModelProto")?;
    let options = merge_options(inputs, outputs, prefix1, prefix2, name, doc_string)
        .producer_name(producer_name)
        .producer_version(producer_version)
        .domain(domain)
        .model_version(model_version);
    let merged = with_typed(py, m1, "ModelProto", |m1: &ModelProto<'static>| {
        Ok(compose::merge_models(m1, &m2, &io_map, &options)?)
    })?;
    new_object(py, merged)
}

/// The `rename_*` flags, in `onnx`'s order: nodes, edges, inputs, outputs,
/// initializers, value infos, functions.
fn prefix_options(flags: [bool; 7]) -> PrefixOptions {
    PrefixOptions::default()
        .nodes(flags[0])
        .edges(flags[1])
        .inputs(flags[2])
        .outputs(flags[3])
        .initializers(flags[4])
        .value_infos(flags[5])
        .functions(flags[6])
}

/// `onnx.compose.add_prefix_graph`: prefixes `graph` in place (`inplace`) or a copy of
/// it, starting from the renames `name_map`. Returns the copy (`None` in place) and the
/// renames, old names first-given first.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn add_prefix_graph(
    py: Python<'_>,
    graph: &Bound<'_, PyAny>,
    prefix: String,
    flags: [bool; 6],
    name_map: Vec<(String, String)>,
    inplace: bool,
) -> PyResult<(Option<Py<PyAny>>, Vec<(String, String)>)> {
    let options = prefix_options([
        flags[0], flags[1], flags[2], flags[3], flags[4], flags[5], false,
    ]);
    let mut names: NameMap = name_map.into_iter().collect();
    let run = |g: &mut GraphProto<'static>, names: &mut NameMap| {
        compose::add_prefix_graph_with(g, &prefix, &options, names)
    };
    let copy = in_place_or_copy(
        py,
        graph,
        "GraphProto",
        inplace,
        |g: &mut GraphProto<'static>| run(g, &mut names),
    )?;
    let renames = names
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    Ok((copy, renames))
}

/// `onnx.compose.add_prefix`: prefixes `model` in place (`inplace`, returns `None`) or a
/// copy of it (returned).
#[pyfunction]
pub fn add_prefix(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    prefix: String,
    flags: [bool; 7],
    inplace: bool,
) -> PyResult<Option<Py<PyAny>>> {
    let options = prefix_options(flags);
    in_place_or_copy(
        py,
        model,
        "ModelProto",
        inplace,
        |m: &mut ModelProto<'static>| compose::add_prefix(m, &prefix, &options),
    )
}

/// `onnx.compose.expand_out_dim_graph`: in place (returns `None`) or on a copy.
#[pyfunction]
pub fn expand_out_dim_graph(
    py: Python<'_>,
    graph: &Bound<'_, PyAny>,
    dim_idx: i64,
    inplace: bool,
) -> PyResult<Option<Py<PyAny>>> {
    in_place_or_copy(
        py,
        graph,
        "GraphProto",
        inplace,
        |g: &mut GraphProto<'static>| compose::expand_out_dim_graph(g, dim_idx),
    )
}

/// `onnx.compose.expand_out_dim`: in place (returns `None`) or on a copy.
#[pyfunction]
pub fn expand_out_dim(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    dim_idx: i64,
    inplace: bool,
) -> PyResult<Option<Py<PyAny>>> {
    in_place_or_copy(
        py,
        model,
        "ModelProto",
        inplace,
        |m: &mut ModelProto<'static>| compose::expand_out_dim(m, dim_idx),
    )
}

/// Refuses a model `Extractor` cannot work on (a name written twice).
#[pyfunction]
pub fn extractor_check(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<()> {
    with_message(py, model, |m| {
        let model = m
            .as_any()
            .downcast_ref::<ModelProto<'static>>()
            .ok_or_else(|| PyTypeError::new_err("expected a ModelProto"))?;
        Extractor::new(model)?;
        Ok(())
    })
}

/// The indices of the nodes between `inputs` and `outputs`, in graph order.
#[pyfunction]
pub fn extract_reachable(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    inputs: Vec<String>,
    outputs: Vec<String>,
) -> PyResult<Vec<usize>> {
    with_message(py, model, |m| {
        let model = m
            .as_any()
            .downcast_ref::<ModelProto<'static>>()
            .ok_or_else(|| PyTypeError::new_err("expected a ModelProto"))?;
        Ok(Extractor::new(model)?.reachable_nodes(&inputs, &outputs))
    })
}

/// `onnx.utils.Extractor(model).extract_model(inputs, outputs)`: a new model.
#[pyfunction]
pub fn extract_model(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    inputs: Vec<String>,
    outputs: Vec<String>,
) -> PyResult<Py<PyAny>> {
    let extracted = with_message(py, model, |m| {
        let model = m
            .as_any()
            .downcast_ref::<ModelProto<'static>>()
            .ok_or_else(|| PyTypeError::new_err("expected a ModelProto"))?;
        Ok(Extractor::new(model)?.extract_model(&inputs, &outputs)?)
    })?;
    new_object(py, extracted)
}

/// `onnx.utils.extract_model` between its checks: file to file, reading only the
/// weights kept.
#[pyfunction]
pub fn extract_model_path(
    py: Python<'_>,
    input_path: PathBuf,
    output_path: PathBuf,
    inputs: Vec<String>,
    outputs: Vec<String>,
    infer_shapes: bool,
) -> PyResult<()> {
    let options = ExtractOptions::default().infer_shapes(infer_shapes);
    py.detach(|| {
        extract::extract_model_file(&input_path, &output_path, &inputs, &outputs, &options)
    })
    .map_err(to_py_err)?;
    Ok(())
}
