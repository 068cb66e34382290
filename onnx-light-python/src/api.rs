//! The module-level functions: load, save, encryption, consolidation. Each converts its
//! arguments to the library's options, runs the library call with the GIL released and
//! returns message objects; `onnx_light/onnx/__init__.py` adds the `onnx`-style
//! signatures (paths, file objects, defaults) on top.

use std::path::PathBuf;
use std::sync::Arc;

use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, EncryptionFormat, Passphrase};
use onnx_light::io::external::{self, ExternalDataOptions, VerifyOptions};
use onnx_light::io::{self, ParseOptions, SerializeOptions, TensorBufferOptions};
use onnx_light::onnx::{DataLocation, Model, ModelProto};
use onnx_light::{ByteOwner, SharedOwner};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

use crate::errors::to_py_err;
use crate::message::{wrap, PyMessage};
use crate::reflect::MAX_NESTING;

/// `num_threads` as the library takes it: `0` is all cores there and here (`-1`, the
/// usual Python spelling, means the same); another negative count is an `OptionError`
/// (the library refuses counts past its maximum).
fn threads(n: i64) -> PyResult<usize> {
    match n {
        -1 => Ok(0),
        n => usize::try_from(n).map_err(|_| {
            to_py_err(onnx_light::Error::invalid_option(
                "num_threads",
                format!("{n} threads; give 0 for all cores, or a count"),
            ))
        }),
    }
}

/// The Python option dataclasses, read attribute by attribute; named as in Python, so
/// that an argument of the wrong type is reported as, say, `ParseOptions.num_threads`.
mod dataclass {
    use pyo3::prelude::*;

    /// `onnx_light.onnx.ParseOptions`.
    #[derive(FromPyObject)]
    pub struct ParseOptions {
        pub load_external_data: bool,
        pub no_copy: bool,
        pub num_threads: i64,
        pub skip_raw_data: bool,
        pub raw_data_threshold: usize,
        pub alignment: usize,
        pub location: Option<String>,
        pub max_memory: Option<i64>,
        pub allow_aliasing: bool,
    }

    /// `onnx_light.onnx.SerializeOptions` (its `save_as_external_data` and `location`
    /// arrive as one `external_location` argument).
    #[derive(FromPyObject)]
    pub struct SerializeOptions {
        pub all_tensors_to_one_file: bool,
        pub size_threshold: usize,
        pub convert_attribute: bool,
        pub max_external_file_size: u64,
        pub alignment: usize,
        pub num_threads: i64,
        pub sync: bool,
        pub replace_data_files: bool,
    }
}

/// `max_memory` as Python gives it: `None` for no limit, `-1` for the library's
/// default (which depends on the input's size), or a number of bytes.
fn memory_limit(o: ParseOptions, max_memory: Option<i64>) -> PyResult<ParseOptions> {
    match max_memory {
        None => Ok(o.max_memory(u64::MAX)),
        Some(-1) => Ok(o),
        Some(n) => u64::try_from(n).map(|n| o.max_memory(n)).map_err(|_| {
            to_py_err(onnx_light::Error::invalid_option(
                "max_memory",
                format!("{n} bytes; give None for no limit, -1 for the default, or a size"),
            ))
        }),
    }
}

impl dataclass::ParseOptions {
    /// Whether a load of a path maps it: `no_copy`, unless `skip_raw_data` leaves the
    /// weights on disk instead (it wins, as it always has).
    fn maps(&self) -> bool {
        self.no_copy && !self.skip_raw_data
    }

    fn parse_options(self, base_dir: Option<PathBuf>) -> PyResult<ParseOptions> {
        // The metadata of tensors whose data is read stays for `mark_loaded_inline`,
        // which records them as `onnx` does.
        let mut o = memory_limit(ParseOptions::default(), self.max_memory)?
            .allow_aliasing(self.allow_aliasing)
            .load_external_data(self.load_external_data)
            .keep_external_metadata(true)
            .structure_only(self.skip_raw_data)
            .num_threads(threads(self.num_threads)?)
            .raw_data_threshold(self.raw_data_threshold)
            .alignment(self.alignment);
        if let Some(loc) = self.location {
            o = o.external_data_location(loc);
        }
        if let Some(dir) = base_dir {
            o = o.external_data_dir(dir);
        }
        Ok(o)
    }
}

fn model_object(py: Python<'_>, model: Model) -> PyResult<Py<PyAny>> {
    wrap(py, PyMessage::from_box(Box::new(model)))
}

/// Records the external tensors of `model` whose bytes are now in memory as `onnx`'s
/// loaders leave them: `external_data` gone and `data_location` set to `DEFAULT` (set,
/// not absent, so `HasField("data_location")` is true and a save writes it, as with
/// `onnx`). Tensors whose data was not read keep their external metadata.
fn mark_loaded_inline(model: &mut ModelProto<'_>) {
    model.visit_tensors_mut(|_, t| {
        if t.is_external() && t.raw_data.is_some() {
            t.data_location = Some(DataLocation::Default.into());
            t.external_data.clear();
        }
    });
}

/// Runs `f` on the `ModelProto` behind `model`, with the GIL released.
fn with_model<R: Send>(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    f: impl FnOnce(&mut ModelProto<'static>) -> onnx_light::Result<R> + Send,
) -> PyResult<R> {
    let msg = model
        .cast::<PyMessage>()
        .map_err(|_| PyTypeError::new_err("expected a ModelProto"))?;
    let view = msg.borrow().view_ref();
    let done = py.detach(|| {
        view.with_detached(true, |m| {
            let m = m.expect("created");
            let model = m
                .as_any_mut()
                .downcast_mut::<ModelProto<'static>>()
                .ok_or_else(|| PyTypeError::new_err("expected a ModelProto"))?;
            Ok(f(model)?)
        })
    });
    Ok(done?)
}

#[pyfunction]
pub fn load_path(
    py: Python<'_>,
    path: PathBuf,
    options: dataclass::ParseOptions,
) -> PyResult<Py<PyAny>> {
    let maps = options.maps();
    let structure_only = options.skip_raw_data;
    let o = options.parse_options(None)?;
    let model = py
        .detach(|| {
            let mut model = match maps {
                true => crate::mapped::load_mapped(&path, &o),
                false => io::load_with(&path, &o),
            }?;
            mark_loaded_inline(&mut model);
            Ok(model)
        })
        .map_err(to_py_err)?;
    if structure_only {
        return wrap(py, PyMessage::from_structure_only(model));
    }
    model_object(py, model)
}

/// The bytes of a Python `bytes` object, kept alive (and unchanged: `bytes` is
/// immutable) for as long as a model shares them.
struct PythonBytes(PyBackedBytes);

impl SharedOwner for PythonBytes {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

#[pyfunction]
#[pyo3(signature = (data, options, base_dir))]
pub fn load_bytes(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    options: dataclass::ParseOptions,
    base_dir: Option<PathBuf>,
) -> PyResult<Py<PyAny>> {
    let no_copy = options.no_copy;
    // Without a base directory there is nowhere to resolve external files from; a
    // no-copy load from bytes shares the object itself, not a map.
    let options = dataclass::ParseOptions {
        load_external_data: options.load_external_data && base_dir.is_some(),
        no_copy: false,
        skip_raw_data: false,
        ..options
    };
    let o = options.parse_options(base_dir)?;
    let mut model = if no_copy {
        // Large payloads become slices of the `bytes` object itself, which the model
        // keeps alive.
        let backed: PyBackedBytes = data.extract()?;
        let owner: ByteOwner = Arc::new(PythonBytes(backed));
        py.detach(|| io::load_from_owner(owner, &o))
    } else {
        let bytes = data.cast::<PyBytes>()?;
        let slice = bytes.as_bytes();
        py.detach(|| io::load_from_bytes(slice, &o))
    }
    .map_err(to_py_err)?;
    mark_loaded_inline(&mut model);
    model_object(py, model)
}

/// Marks the tensors of `model` that the options select as external at once, as
/// `onnx`'s `convert_model_to_external_data` does: `data_location = EXTERNAL` and a
/// `location` entry, the bytes kept in memory until a save writes them to that file.
#[pyfunction]
#[pyo3(signature = (model, location, all_tensors_to_one_file, size_threshold, convert_attribute))]
pub fn mark_external_data(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    location: String,
    all_tensors_to_one_file: bool,
    size_threshold: usize,
    convert_attribute: bool,
) -> PyResult<()> {
    let options = ExternalDataOptions::new(location)
        .size_threshold(size_threshold)
        .one_file_per_tensor(!all_tensors_to_one_file)
        .convert_attributes(convert_attribute);
    with_model(py, model, |m| {
        onnx_light::io::external::convert_model_to_external_data(m, &options)
    })
}

#[pyfunction]
pub fn save_path(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    path: PathBuf,
    options: dataclass::SerializeOptions,
    external_location: Option<String>,
) -> PyResult<()> {
    let mut o = SerializeOptions::default()
        .num_threads(threads(options.num_threads)?)
        .sync(options.sync)
        .replace_data_files(options.replace_data_files);
    if let Some(location) = external_location {
        let mut e = ExternalDataOptions::new(location)
            .size_threshold(options.size_threshold)
            .alignment(options.alignment.max(1))
            .one_file_per_tensor(!options.all_tensors_to_one_file)
            .convert_attributes(options.convert_attribute);
        if options.max_external_file_size > 0 {
            e = e.max_file_size(options.max_external_file_size);
        }
        o = o.external_data(e);
    }
    with_model(py, model, |m| io::save(m, &path, &o).map(drop))
}

#[pyfunction]
#[pyo3(signature = (model, num_threads))]
pub fn save_bytes<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    num_threads: i64,
) -> PyResult<Bound<'py, PyBytes>> {
    let o = SerializeOptions::default().num_threads(threads(num_threads)?);
    let bytes = with_model(py, model, |m| io::save_to_vec(m, &o))?;
    Ok(PyBytes::new(py, &bytes))
}

fn encryption_format(format: Option<&str>) -> PyResult<EncryptionFormat> {
    Ok(match format.map(|f| f.to_ascii_lowercase()) {
        None => EncryptionFormat::default(),
        Some(f) if f == "onnxae01" || f == "authenticated" => EncryptionFormat::OnnxAe01,
        Some(f) if f == "onnxcry1" => EncryptionFormat::OnnxCry1,
        Some(f) if f == "onnxcry2" => EncryptionFormat::OnnxCry2,
        Some(f) => {
            return Err(PyValueError::new_err(format!(
            "unknown encryption format {f:?} (expected \"onnxae01\", \"onnxcry1\" or \"onnxcry2\")"
        )))
        }
    })
}

#[pyfunction]
#[pyo3(signature = (model, path, key, format, num_threads))]
pub fn save_encrypted_path(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    path: PathBuf,
    key: String,
    format: Option<&str>,
    num_threads: i64,
) -> PyResult<()> {
    let o = EncryptOptions::default()
        .format(encryption_format(format)?)
        .num_threads(threads(num_threads)?);
    let key = Passphrase::new(key);
    with_model(py, model, |m| crypto::save_encrypted(m, &path, &key, &o))
}

#[pyfunction]
#[pyo3(signature = (model, key, format, num_threads))]
pub fn save_encrypted_bytes<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    key: String,
    format: Option<&str>,
    num_threads: i64,
) -> PyResult<Bound<'py, PyBytes>> {
    let o = EncryptOptions::default()
        .format(encryption_format(format)?)
        .num_threads(threads(num_threads)?);
    let key = Passphrase::new(key);
    let bytes = with_model(py, model, |m| crypto::encrypt_model(m, &key, &o))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The options of the encrypted loads: decryption and decoding on `num_threads`.
fn decrypt_options(
    allow_unauthenticated: bool,
    num_threads: i64,
    max_memory: Option<i64>,
) -> PyResult<(DecryptOptions, ParseOptions)> {
    let d = DecryptOptions::default()
        .allow_unauthenticated(allow_unauthenticated)
        .num_threads(threads(num_threads)?);
    let p = memory_limit(ParseOptions::default(), max_memory)?;
    Ok((d, p.num_threads(threads(num_threads)?)))
}

#[pyfunction]
#[pyo3(signature = (path, key, allow_unauthenticated, num_threads, max_memory))]
pub fn load_encrypted_path(
    py: Python<'_>,
    path: PathBuf,
    key: String,
    allow_unauthenticated: bool,
    num_threads: i64,
    max_memory: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let (d, p) = decrypt_options(allow_unauthenticated, num_threads, max_memory)?;
    let key = Passphrase::new(key);
    let out = py
        .detach(|| crypto::load_encrypted_with(&path, &key, &d, &p))
        .map_err(to_py_err)?;
    model_object(py, out.model)
}

#[pyfunction]
#[pyo3(signature = (data, key, allow_unauthenticated, num_threads, max_memory))]
pub fn load_encrypted_bytes(
    py: Python<'_>,
    data: &[u8],
    key: String,
    allow_unauthenticated: bool,
    num_threads: i64,
    max_memory: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let (d, p) = decrypt_options(allow_unauthenticated, num_threads, max_memory)?;
    let key = Passphrase::new(key);
    let out = py
        .detach(|| crypto::load_encrypted_from_bytes(data, &key, &d, &p))
        .map_err(to_py_err)?;
    model_object(py, out.model)
}

/// Moves every large payload of `model` into one aligned buffer; returns the number of
/// tensors moved and the buffer's size.
#[pyfunction]
#[pyo3(signature = (model, raw_data_threshold, alignment))]
pub fn consolidate(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    raw_data_threshold: usize,
    alignment: usize,
) -> PyResult<(usize, usize)> {
    let mut o = TensorBufferOptions::LOAD;
    o.raw_data_threshold = raw_data_threshold;
    o.alignment = alignment;
    with_model(py, model, |m| {
        io::consolidate_tensors_to_buffer(m, &o).map(|b| (b.tensor_count(), b.len()))
    })
}

#[pyfunction]
#[pyo3(signature = (model, base_dir, num_threads))]
pub fn load_external_data_for_model(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    base_dir: PathBuf,
    num_threads: i64,
) -> PyResult<()> {
    let o = ParseOptions::default()
        .num_threads(threads(num_threads)?)
        .keep_external_metadata(true);
    with_model(py, model, |m| {
        io::load_external_data_for_model(m, &base_dir, &o)?;
        mark_loaded_inline(m);
        Ok(())
    })
}

/// One step of the way from a model to one of its messages: a field, or an index into
/// a repeated field (`("graph", "node", 3, "attribute", 0, "t")` in Python).
#[derive(IntoPyObject, Clone)]
pub enum Step {
    Field(&'static str),
    Index(usize),
}

/// The tensors `write_external_data_tensors` writes: those marked external whose bytes
/// are in memory, as paths from the model, in `onnx`'s order (the initializers of the
/// graph and its subgraphs, then the attribute tensors of the graph, its subgraphs and
/// the functions), which decides where each lands in a shared file. The walk is here,
/// not in Python, so that a model of many nodes costs no Python object per node.
#[pyfunction]
pub fn tensors_to_write(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<Step>>> {
    use onnx_light::onnx::{AttributeType, GraphProto, NodeProto, TensorProto};

    fn wanted(t: &TensorProto<'_>) -> bool {
        t.is_external() && t.raw_data.is_some()
    }
    fn at(path: &[Step], more: impl IntoIterator<Item = Step>) -> Vec<Step> {
        let mut out = path.to_vec();
        out.extend(more);
        out
    }
    /// The graphs an attribute holds, by its declared type (as `onnx` finds them), with
    /// the steps from the attribute to each.
    fn subgraphs<'g, 'a>(
        a: &'g onnx_light::onnx::AttributeProto<'a>,
    ) -> Vec<(&'g GraphProto<'a>, Vec<Step>)> {
        match a.r#type.and_then(|t| t.get()) {
            Some(AttributeType::Graph) => {
                a.g.as_deref()
                    .map(|g| vec![(g, vec![Step::Field("g")])])
                    .unwrap_or_default()
            }
            Some(AttributeType::Graphs) => a
                .graphs
                .iter()
                .enumerate()
                .map(|(k, g)| (g, vec![Step::Field("graphs"), Step::Index(k)]))
                .collect(),
            _ => Vec::new(),
        }
    }
    fn initializers(g: &GraphProto<'_>, path: &[Step], out: &mut Vec<Vec<Step>>) {
        for (i, t) in g.initializer.iter().enumerate() {
            if wanted(t) {
                out.push(at(path, [Step::Field("initializer"), Step::Index(i)]));
            }
        }
        for (i, n) in g.node.iter().enumerate() {
            for (j, a) in n.attribute.iter().enumerate() {
                for (sub, steps) in subgraphs(a) {
                    let here = at(
                        path,
                        [
                            Step::Field("node"),
                            Step::Index(i),
                            Step::Field("attribute"),
                            Step::Index(j),
                        ]
                        .into_iter()
                        .chain(steps),
                    );
                    initializers(sub, &here, out);
                }
            }
        }
    }
    fn attribute_tensors(nodes: &[NodeProto<'_>], path: &[Step], out: &mut Vec<Vec<Step>>) {
        for (i, n) in nodes.iter().enumerate() {
            for (j, a) in n.attribute.iter().enumerate() {
                let attr = at(
                    path,
                    [
                        Step::Field("node"),
                        Step::Index(i),
                        Step::Field("attribute"),
                        Step::Index(j),
                    ],
                );
                if a.t.as_deref().is_some_and(wanted) {
                    out.push(at(&attr, [Step::Field("t")]));
                }
                for (k, t) in a.tensors.iter().enumerate() {
                    if wanted(t) {
                        out.push(at(&attr, [Step::Field("tensors"), Step::Index(k)]));
                    }
                }
                for (sub, steps) in subgraphs(a) {
                    attribute_tensors(&sub.node, &at(&attr, steps), out);
                }
            }
        }
    }
    with_model(py, model, |m| {
        let mut out = Vec::new();
        if let Some(graph) = &m.graph {
            initializers(graph, &[Step::Field("graph")], &mut out);
            attribute_tensors(&graph.node, &[Step::Field("graph")], &mut out);
        }
        for (f, function) in m.functions.iter().enumerate() {
            attribute_tensors(
                &function.node,
                &[Step::Field("functions"), Step::Index(f)],
                &mut out,
            );
        }
        Ok(out)
    })
}

/// Checks the external data of `model` against the files in `base_dir` with the rules of
/// a load (`io::external::verify`): every problem as (tensor, rule name, message).
#[pyfunction]
pub fn verify_external_data(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    base_dir: PathBuf,
    checksums: bool,
    allow_aliasing: bool,
) -> PyResult<Vec<(String, &'static str, String)>> {
    let options = VerifyOptions::default()
        .checksums(checksums)
        .allow_aliasing(allow_aliasing);
    let report = with_model(py, model, |m| external::verify(m, &base_dir, &options))?;
    Ok(report
        .problems
        .iter()
        .map(|p| (p.tensor.clone(), p.rule.name(), p.error.to_string()))
        .collect())
}

/// Makes every external tensor of `model` whose data is loaded (or lazily attached)
/// inline, as `onnx`'s `convert_model_from_external_data` does: its `external_data`
/// goes and `data_location` becomes `DEFAULT`. One whose data was not loaded is an error
/// naming it, and nothing is changed.
#[pyfunction]
pub fn inline_external_data(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<()> {
    with_model(py, model, |m| {
        m.try_visit_tensors(|_, t| {
            if t.is_external() && t.raw_data.is_none() && t.lazy_data.is_none() {
                let location = t.external_data_value("location").unwrap_or_default();
                return Err(
                    onnx_light::Error::new(onnx_light::ErrorKind::ExternalDataNotLoaded {
                        location: location.to_string(),
                    })
                    .in_tensor(t.name()),
                );
            }
            Ok(())
        })?;
        m.visit_tensors_mut(|_, t| {
            if t.is_external() {
                t.data_location = Some(DataLocation::Default.into());
                t.external_data.clear();
            }
        });
        Ok(())
    })
}

/// Decodes bytes as a message of type `name` (hostile input gives a typed error).
#[pyfunction]
pub fn decode_message(py: Python<'_>, name: &str, data: &[u8]) -> PyResult<Py<PyAny>> {
    let msg = PyMessage::new_root(name)?;
    let (root, _) = msg.locate();
    py.detach(|| root.lock().decode_into(data, MAX_NESTING as u32))
        .map_err(to_py_err)?;

    wrap(py, msg)
}
