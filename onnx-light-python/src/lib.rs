//! The native part of the Python package `onnx_light`: ONNX message classes backed by
//! the `onnx-light` runtime, and the load/save/encryption functions. The Python modules
//! in `python/onnx_light/` give them the `onnx` package's names and signatures.

// Python classes show themselves through `__repr__`; a Rust `Debug` would never be seen.
#![allow(missing_debug_implementations)]

mod api;
mod compose;
mod defs;
mod errors;
mod inline;
mod mapped;
mod message;
mod payload;
mod reflect;
mod shape;
mod text;
mod tools;
mod version_converter;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The enums of the schema as `{full name: {value name: number}}`.
fn enums(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, values) in onnx_light::onnx::enum_descriptors() {
        let d = PyDict::new(py);
        for (k, v) in values {
            d.set_item(*k, *v)?;
        }
        out.set_item(name, d)?;
    }
    Ok(out)
}

/// The message classes as `{protobuf name: class}`.
fn message_classes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, class) in message::classes(py) {
        out.set_item(name, class)?;
    }
    Ok(out)
}

/// Every message type's fields as `{protobuf name: [(field, number, repeated, kind)]}`.
fn message_fields(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for name in reflect::message_names() {
        let desc = reflect::descriptor(name).expect("listed");
        let fields: Vec<(&str, u32, bool, String)> = desc
            .fields
            .iter()
            .map(|f| {
                (
                    f.name,
                    f.number,
                    f.label == onnx_light::Label::Repeated,
                    f.kind.to_string(),
                )
            })
            .collect();
        out.set_item(name, fields)?;
    }
    Ok(out)
}

#[pymodule]
fn _onnx_light(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    message::add_classes(m)?;
    m.add("ENUMS", enums(py)?)?;
    m.add("MESSAGE_CLASSES", message_classes(py)?)?;
    m.add("MESSAGE_FIELDS", message_fields(py)?)?;
    m.add("IR_VERSION", onnx_light::onnx::IR_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(api::load_path, m)?)?;
    m.add_function(wrap_pyfunction!(api::load_url, m)?)?;
    m.add_function(wrap_pyfunction!(api::is_url, m)?)?;
    m.add_function(wrap_pyfunction!(api::save_url, m)?)?;
    m.add_function(wrap_pyfunction!(api::load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(api::save_path, m)?)?;
    m.add_function(wrap_pyfunction!(api::mark_external_data, m)?)?;
    m.add_function(wrap_pyfunction!(api::save_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(api::save_encrypted_path, m)?)?;
    m.add_function(wrap_pyfunction!(api::save_encrypted_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(api::load_encrypted_path, m)?)?;
    m.add_function(wrap_pyfunction!(api::load_encrypted_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(api::consolidate, m)?)?;
    m.add_function(wrap_pyfunction!(api::option_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(api::load_external_data_for_model, m)?)?;
    m.add_function(wrap_pyfunction!(api::inline_external_data, m)?)?;
    m.add_function(wrap_pyfunction!(api::tensors_to_write, m)?)?;
    m.add_function(wrap_pyfunction!(api::verify_external_data, m)?)?;
    m.add_function(wrap_pyfunction!(api::decode_message, m)?)?;
    m.add_function(wrap_pyfunction!(tools::check_model, m)?)?;
    m.add_function(wrap_pyfunction!(tools::check_part, m)?)?;
    m.add_class::<defs::SchemaRef>()?;
    m.add_function(wrap_pyfunction!(defs::find_schema, m)?)?;
    m.add_function(wrap_pyfunction!(defs::all_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(defs::make_schema, m)?)?;
    m.add_function(wrap_pyfunction!(defs::register_schema, m)?)?;
    m.add_function(wrap_pyfunction!(defs::deregister_schema, m)?)?;
    m.add_function(wrap_pyfunction!(shape::infer_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(shape::infer_function_output_types, m)?)?;
    m.add_function(wrap_pyfunction!(version_converter::convert_version, m)?)?;
    m.add_function(wrap_pyfunction!(inline::inline_local_functions, m)?)?;
    m.add_function(wrap_pyfunction!(inline::inline_selected_functions, m)?)?;
    m.add_function(wrap_pyfunction!(tools::to_text, m)?)?;
    m.add_function(wrap_pyfunction!(text::message_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(text::message_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(compose::check_overlapping_names, m)?)?;
    m.add_function(wrap_pyfunction!(compose::merge_graphs, m)?)?;
    m.add_function(wrap_pyfunction!(compose::merge_models, m)?)?;
    m.add_function(wrap_pyfunction!(compose::add_prefix_graph, m)?)?;
    m.add_function(wrap_pyfunction!(compose::add_prefix, m)?)?;
    m.add_function(wrap_pyfunction!(compose::expand_out_dim_graph, m)?)?;
    m.add_function(wrap_pyfunction!(compose::expand_out_dim, m)?)?;
    m.add_function(wrap_pyfunction!(compose::extractor_check, m)?)?;
    m.add_function(wrap_pyfunction!(compose::extract_reachable, m)?)?;
    m.add_function(wrap_pyfunction!(compose::extract_model, m)?)?;
    m.add_function(wrap_pyfunction!(compose::extract_model_path, m)?)?;
    m.add_function(wrap_pyfunction!(tools::parse_text, m)?)?;
    m.add_class::<payload::Payload>()?;
    m.add_function(wrap_pyfunction!(payload::tensor_payload, m)?)?;
    m.add_function(wrap_pyfunction!(payload::tensor_data, m)?)?;
    m.add_function(wrap_pyfunction!(payload::tensor_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(payload::tensor_sharing_array, m)?)?;
    Ok(())
}
