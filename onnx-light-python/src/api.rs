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
use onnx_light::remote::{self, RemoteOptions};
use onnx_light::{ByteOwner, SharedOwner};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

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

/// Attribute `name` of the Python options object `obj` (of class `class`), converted;
/// an attribute of the wrong type is reported as, say, `ParseOptions.num_threads`.
fn field<'py, T: for<'a> FromPyObject<'a, 'py>>(
    obj: &Bound<'py, PyAny>,
    class: &str,
    name: &str,
) -> PyResult<T> {
    obj.getattr(name)?.extract::<T>().map_err(|e| {
        let (e, py): (PyErr, _) = (e.into(), obj.py());
        PyErr::from_type(e.get_type(py), format!("{class}.{name}: {}", e.value(py)))
    })
}

/// The defaults of `onnx_light.onnx`'s three option classes, read from the library's
/// structs (`TensorBufferOptions::default()`, `ParseOptions::default()`,
/// `SerializeOptions::default()` and `ExternalDataOptions`' defaults for the external
/// data fields of a save), so that the Python classes define no default of their own.
#[pyfunction]
pub fn option_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let base = TensorBufferOptions::default();
    let load = ParseOptions::default();
    let save = SerializeOptions::default();
    let external = ExternalDataOptions::default();
    let buffer = |b: TensorBufferOptions| -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("raw_data_threshold", b.raw_data_threshold)?;
        d.set_item("alignment", b.alignment)?;
        Ok(d)
    };
    let p = buffer(load.buffer)?;
    p.set_item("load_external_data", load.load_external_data)?;
    // The library's loads copy unless the caller picks the mapping `load_mapped`.
    p.set_item("no_copy", false)?;
    p.set_item("num_threads", load.num_threads)?;
    p.set_item("skip_raw_data", load.mode == io::LoadMode::StructureOnly)?;
    p.set_item("location", load.external_data_location)?;
    // -1 stands for the library's default budget (`max_memory: None`), None for none.
    p.set_item("max_memory", load.max_memory.map_or(-1, |m| m as i128))?;
    p.set_item("allow_aliasing", load.allow_aliasing)?;
    p.set_item("base_dir", load.external_data_dir)?;
    p.set_item("recursion_limit", load.recursion_limit)?;
    p.set_item("max_model_size", load.max_model_size)?;
    p.set_item("max_tensor_size", load.max_tensor_size)?;
    let s = buffer(save.buffer)?;
    s.set_item("save_as_external_data", save.external_data.is_some())?;
    s.set_item("all_tensors_to_one_file", !external.one_file_per_tensor)?;
    s.set_item("location", py.None())?;
    s.set_item("size_threshold", external.size_threshold)?;
    s.set_item("convert_attribute", external.convert_attributes)?;
    s.set_item(
        "max_external_file_size",
        external.max_file_size.unwrap_or(0),
    )?;
    s.set_item("num_threads", save.num_threads)?;
    s.set_item("sync", save.sync)?;
    s.set_item("replace_data_files", save.replace_data_files)?;
    let all = PyDict::new(py);
    all.set_item("TensorBufferOptions", buffer(base)?)?;
    all.set_item("ParseOptions", p)?;
    all.set_item("SerializeOptions", s)?;
    Ok(all)
}

/// The `raw_data_threshold` and `alignment` of any `TensorBufferOptions` (a
/// `ParseOptions` or a `SerializeOptions` too).
fn buffer_options(obj: &Bound<'_, PyAny>) -> PyResult<TensorBufferOptions> {
    const CLASS: &str = "TensorBufferOptions";
    Ok(TensorBufferOptions {
        raw_data_threshold: field(obj, CLASS, "raw_data_threshold")?,
        alignment: field(obj, CLASS, "alignment")?,
    })
}

/// An `onnx_light.onnx.ParseOptions` as the library's options, with whether a load of a
/// path maps the file (`no_copy`, unless `skip_raw_data` leaves the weights on disk
/// instead: it wins, as it always has) and whether the load is structure-only.
struct LoadRequest {
    options: ParseOptions,
    no_copy: bool,
    structure_only: bool,
}

impl LoadRequest {
    fn from_python(obj: &Bound<'_, PyAny>, base_dir: Option<PathBuf>) -> PyResult<Self> {
        const CLASS: &str = "ParseOptions";
        let structure_only: bool = field(obj, CLASS, "skip_raw_data")?;
        let location: Option<String> = field(obj, CLASS, "location")?;
        // The metadata of tensors whose data is read stays for `mark_loaded_inline`,
        // which records them as `onnx` does.
        let mut o = memory_limit(ParseOptions::default(), field(obj, CLASS, "max_memory")?)?
            .allow_aliasing(field(obj, CLASS, "allow_aliasing")?)
            .load_external_data(field(obj, CLASS, "load_external_data")?)
            .keep_external_metadata(true)
            .structure_only(structure_only)
            .num_threads(threads(field(obj, CLASS, "num_threads")?)?);
        o.buffer = buffer_options(obj)?;
        if let Some(loc) = location {
            o = o.external_data_location(loc);
        }
        // The options' directory wins over the one the caller's file name suggests.
        let dir: Option<PathBuf> = field(obj, CLASS, "base_dir")?;
        if let Some(dir) = dir.or(base_dir) {
            o = o.external_data_dir(dir);
        }
        if let Some(bytes) = field(obj, CLASS, "max_model_size")? {
            o = o.max_model_size(bytes);
        }
        if let Some(bytes) = field(obj, CLASS, "max_tensor_size")? {
            o = o.max_tensor_size(bytes);
        }
        let levels: u32 = field(obj, CLASS, "recursion_limit")?;
        if levels as usize > MAX_NESTING {
            // Message objects reach at most that deep: a deeper model could not be
            // walked, copied or saved from Python.
            return Err(to_py_err(onnx_light::Error::invalid_option(
                "recursion_limit",
                format!("{levels} levels; this package handles messages nested at most {MAX_NESTING} deep"),
            )));
        }
        o = o.recursion_limit(levels);
        Ok(LoadRequest {
            options: o,
            no_copy: field(obj, CLASS, "no_copy")?,
            structure_only,
        })
    }

    fn maps(&self) -> bool {
        self.no_copy && !self.structure_only
    }
}

/// An `onnx_light.onnx.SerializeOptions` as the library's options; `external_location`
/// (the file its `save_as_external_data` and `location` settle on) turns on external
/// data. Alignment 0 leaves external data at the library's default alignment.
fn serialize_options(
    obj: &Bound<'_, PyAny>,
    external_location: Option<String>,
) -> PyResult<SerializeOptions> {
    const CLASS: &str = "SerializeOptions";
    let mut o = SerializeOptions::default()
        .num_threads(threads(field(obj, CLASS, "num_threads")?)?)
        .sync(field(obj, CLASS, "sync")?)
        .replace_data_files(field(obj, CLASS, "replace_data_files")?);
    o.buffer = buffer_options(obj)?;
    if let Some(location) = external_location {
        let mut e = ExternalDataOptions::new(location)
            .size_threshold(field(obj, CLASS, "size_threshold")?)
            .one_file_per_tensor(!field::<bool>(obj, CLASS, "all_tensors_to_one_file")?)
            .convert_attributes(field(obj, CLASS, "convert_attribute")?);
        if o.buffer.alignment > 0 {
            e = e.alignment(o.buffer.alignment);
        }
        let max_size: u64 = field(obj, CLASS, "max_external_file_size")?;
        if max_size > 0 {
            e = e.max_file_size(max_size);
        }
        o = o.external_data(e);
    }
    Ok(o)
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
pub fn load_path(py: Python<'_>, path: PathBuf, options: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let request = LoadRequest::from_python(options, None)?;
    let (maps, structure_only, o) = (request.maps(), request.structure_only, request.options);
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
    loaded(py, model, structure_only)
}

/// True when `text` is a URL that `load_url` reads (`s3://`, `gs://`, `az://`,
/// `abfs://`, `http(s)://`, `file://`, ...), not a local path.
#[pyfunction]
pub fn is_url(text: &str) -> bool {
    remote::is_url(text)
}

/// Loads the model at `url` through the library's `remote` module: as `load_path` does
/// a file (structure only: payloads fetched on first access), the external data beside
/// it in the store, its `checksum`s verified unless `verify_checksums` is false.
#[pyfunction]
#[pyo3(signature = (url, options, verify_checksums))]
pub fn load_url(
    py: Python<'_>,
    url: String,
    options: &Bound<'_, PyAny>,
    verify_checksums: bool,
) -> PyResult<Py<PyAny>> {
    let request = LoadRequest::from_python(options, None)?;
    if request.no_copy {
        return Err(PyValueError::new_err(
            "no_copy maps files: a model read from a URL is copied (or left on the server with structure_only)",
        ));
    }
    let o = RemoteOptions::default()
        .parse(request.options)
        .verify_checksums(verify_checksums);
    let model = py
        .detach(|| {
            let mut model = remote::load_with(&url, &o)?;
            mark_loaded_inline(&mut model);
            Ok(model)
        })
        .map_err(to_py_err)?;
    loaded(py, model, request.structure_only)
}

/// The Python object for a model just loaded: a structure-only one fetches its weights
/// at the first operation that needs them.
fn loaded(py: Python<'_>, model: Model, structure_only: bool) -> PyResult<Py<PyAny>> {
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
    options: &Bound<'_, PyAny>,
    base_dir: Option<PathBuf>,
) -> PyResult<Py<PyAny>> {
    // Without a base directory there is nowhere to resolve external files from; a
    // no-copy load from bytes shares the object itself, not a map.
    let request = LoadRequest::from_python(options, base_dir)?;
    let has_dir = request.options.external_data_dir.is_some();
    let no_copy = request.no_copy;
    let external = request.options.load_external_data && has_dir;
    let o = request
        .options
        .structure_only(false)
        .load_external_data(external);
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
    options: &Bound<'_, PyAny>,
    external_location: Option<String>,
) -> PyResult<()> {
    let o = serialize_options(options, external_location)?;
    with_model(py, model, |m| io::save(m, &path, &o).map(drop))
}

/// Saves the model to `url` through the library's `remote` module, with the options of
/// `save_path`: the objects are the files a save to disk writes.
#[pyfunction]
pub fn save_url(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    url: String,
    options: &Bound<'_, PyAny>,
    external_location: Option<String>,
) -> PyResult<()> {
    let o = serialize_options(options, external_location)?;
    with_model(py, model, |m| remote::save(m, &url, &o).map(drop))
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

/// Moves every large payload of `model` into one aligned buffer, as `options` (any
/// `TensorBufferOptions`) say; returns the number of tensors moved and the buffer's size.
#[pyfunction]
#[pyo3(signature = (model, options))]
pub fn consolidate(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    options: &Bound<'_, PyAny>,
) -> PyResult<(usize, usize)> {
    let o = buffer_options(options)?;
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
    // A URL is a directory of the store: the data objects are in it.
    let url = base_dir
        .to_str()
        .filter(|s| remote::is_url(s))
        .map(|s| format!("{}/", s.trim_end_matches('/')));
    with_model(py, model, |m| {
        match &url {
            Some(url) => remote::load_external_data_for_model(
                m,
                url,
                &RemoteOptions::default().parse(o.clone()),
            )?,
            None => io::load_external_data_for_model(m, &base_dir, &o)?,
        }
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
