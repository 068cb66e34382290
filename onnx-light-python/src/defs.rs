//! Operator schemas for Python: `onnx_light.onnx.defs` (in `python/onnx_light/onnx/`)
//! wraps these handles in `onnx`'s `OpSchema` API.
//!
//! The schemas are the ones `onnx_light::checker::schema` embeds; a handle points at one
//! of them and converts a part of it to Python only when that part is asked for.

use std::sync::Arc;

use onnx_light::checker::schema::{
    self, AttributeSchema, FormalParameter, OpSchema, RegistryError, TypeConstraint,
};
use onnx_light::onnx::{AttributeProto, FunctionProto};
use pyo3::prelude::*;

use crate::message::{wrap, PyMessage};
use crate::shape::copy_of;

/// The schema a handle points at: one the library holds (embedded or registered), or
/// one made from Python and not registered (kept by the handle).
enum Held {
    Static(&'static OpSchema<'static>),
    Made(Arc<OpSchema<'static>>),
}

/// One operator schema (one version of one operator).
#[pyclass(frozen, module = "onnx_light._onnx_light")]
pub struct SchemaRef {
    held: Held,
}

impl SchemaRef {
    fn of(schema: &'static OpSchema<'static>) -> Self {
        SchemaRef {
            held: Held::Static(schema),
        }
    }

    fn get(&self) -> &OpSchema<'static> {
        match &self.held {
            Held::Static(s) => s,
            Held::Made(s) => s,
        }
    }
}

/// A formal input or output as `(name, type_str, option, is_homogeneous, min_arity,
/// differentiation_category, description)`.
type Formal = (String, String, i32, bool, i32, i32, String);

/// An attribute as `(name, type, required, default_value, description)`.
type Attribute = (String, i32, bool, Py<PyAny>, String);

fn formal(p: &FormalParameter<'_>) -> Formal {
    (
        p.name().to_owned(),
        p.type_str().to_owned(),
        p.option,
        p.is_homogeneous,
        p.min_arity,
        p.differentiation_category,
        p.description().to_owned(),
    )
}

/// A registry refusal as `onnx_light.onnx.defs.SchemaError`; an invalid schema as
/// `RuntimeError`, as `onnx` raises both.
fn schema_error(py: Python<'_>, error: RegistryError) -> PyErr {
    let message = error.to_string();
    if matches!(error, RegistryError::Invalid { .. }) {
        return pyo3::exceptions::PyRuntimeError::new_err(message);
    }
    match py
        .import("onnx_light.onnx.defs")
        .and_then(|m| m.getattr("SchemaError")?.call1((message.clone(),)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
    }
}

#[pymethods]
impl SchemaRef {
    #[getter]
    fn name(&self) -> &str {
        self.get().name()
    }

    #[getter]
    fn domain(&self) -> &str {
        self.get().domain()
    }

    #[getter]
    fn since_version(&self) -> i64 {
        self.get().since_version
    }

    #[getter]
    fn deprecated(&self) -> bool {
        self.get().deprecated
    }

    /// `(min_input, max_input, min_output, max_output)`.
    #[getter]
    fn counts(&self) -> (i32, i32, i32, i32) {
        let s = self.get();
        (s.min_input, s.max_input, s.min_output, s.max_output)
    }

    #[getter]
    fn inputs(&self) -> Vec<Formal> {
        self.get().inputs.iter().map(formal).collect()
    }

    #[getter]
    fn outputs(&self) -> Vec<Formal> {
        self.get().outputs.iter().map(formal).collect()
    }

    /// The attributes as `(name, type, required, default_value)`, sorted by name; the
    /// default is an `AttributeProto` (empty when the attribute has none, as in `onnx`).
    fn attributes(&self, py: Python<'_>) -> PyResult<Vec<Attribute>> {
        self.get()
            .attributes
            .iter()
            .map(|a| {
                let default: AttributeProto<'static> = a.default_value.clone().unwrap_or_default();
                let message = wrap(py, PyMessage::from_box(Box::new(default)))?;
                let description = a.description().to_owned();
                Ok((
                    a.name().to_owned(),
                    a.r#type,
                    a.required,
                    message,
                    description,
                ))
            })
            .collect()
    }

    /// The type constraints as `(type parameter, allowed types)`.
    #[getter]
    fn type_constraints(&self) -> Vec<(String, Vec<String>)> {
        self.get()
            .type_constraints
            .iter()
            .map(|c| {
                let allowed = c.allowed_types.iter().map(|t| t.to_string()).collect();
                (c.type_param().to_owned(), allowed)
            })
            .collect()
    }

    /// The opset versions the function bodies are defined from, increasing.
    #[getter]
    fn function_versions(&self) -> Vec<i64> {
        self.get()
            .functions
            .iter()
            .map(|f| f.opset_version)
            .collect()
    }

    /// The function body for a model importing `version` of the schema's domain: the one
    /// defined from the largest version not above it (`None`: the latest); `None` when
    /// there is none.
    #[pyo3(signature = (version = None))]
    fn function(&self, py: Python<'_>, version: Option<i64>) -> PyResult<Option<Py<PyAny>>> {
        let version = version.unwrap_or(i64::MAX);
        let body = self
            .get()
            .functions
            .iter()
            .rfind(|f| f.opset_version <= version);
        match body {
            Some(f) => {
                let function: FunctionProto<'static> = f.function.clone().unwrap_or_default();
                Ok(Some(wrap(py, PyMessage::from_box(Box::new(function)))?))
            }
            None => Ok(None),
        }
    }

    #[getter]
    fn context_dependent_function_versions(&self) -> Vec<i64> {
        self.get().context_dependent_function_versions.clone()
    }

    #[getter]
    fn has_inference(&self) -> bool {
        !self.get().without_inference
    }

    /// Whether two handles point at the same schema.
    fn same(&self, other: &SchemaRef) -> bool {
        std::ptr::eq(self.get(), other.get())
    }

    /// The documentation of a schema made from Python; `None` for the embedded ones
    /// (not embedded).
    #[getter]
    fn doc(&self) -> Option<&str> {
        self.get().doc.as_deref()
    }

    /// `onnx`'s node determinism: 0 unknown, 1 non-deterministic, 2 deterministic.
    #[getter]
    fn node_determinism(&self) -> i32 {
        self.get().node_determinism
    }

    /// `onnx`'s support level: 0 common, 1 experimental.
    #[getter]
    fn support_level(&self) -> i32 {
        self.get().support_level
    }

    /// Whether `onnx` has a data propagation function for this version.
    #[getter]
    fn has_data_propagation(&self) -> bool {
        self.get().has_data_propagation
    }

    /// The type constraints' descriptions, in order.
    #[getter]
    fn type_constraint_descriptions(&self) -> Vec<String> {
        let constraints = &self.get().type_constraints;
        constraints
            .iter()
            .map(|c| c.description().to_owned())
            .collect()
    }
}

/// The schema of `op_type` in `domain` (matched as written: `"ai.onnx"` is not `""`,
/// as in `onnx.defs`) with the largest `since_version` not above `max_inclusive_version`
/// (`None`: the latest version).
#[pyfunction]
#[pyo3(signature = (op_type, domain, max_inclusive_version = None))]
pub fn find_schema(
    op_type: &str,
    domain: &str,
    max_inclusive_version: Option<i64>,
) -> Option<SchemaRef> {
    let version = max_inclusive_version.unwrap_or(i64::MAX);
    schema::lookup_exact_domain(domain, op_type, version).map(SchemaRef::of)
}

/// Every schema (embedded and registered), sorted by domain, name and version;
/// `with_history=false`: only the latest version of each operator.
#[pyfunction]
pub fn all_schemas(with_history: bool) -> Vec<SchemaRef> {
    let all = schema::current();
    all.iter()
        .enumerate()
        .filter(|(i, s)| {
            with_history
                || all
                    .get(i + 1)
                    .is_none_or(|next| next.domain() != s.domain() || next.name() != s.name())
        })
        .map(|(_, schema)| SchemaRef::of(schema))
        .collect()
}

/// A formal parameter from Python as `(name, type_str, description, option,
/// is_homogeneous, min_arity, differentiation_category)`.
type FormalIn = (String, String, String, i32, bool, i32, i32);

/// An attribute from Python as `(name, type, description, required, default_value)`.
type AttributeIn<'py> = (String, i32, String, bool, Option<Bound<'py, PyAny>>);

fn formal_in(
    (name, type_str, description, option, homogeneous, min_arity, category): FormalIn,
) -> FormalParameter<'static> {
    FormalParameter {
        name: Some(name.into()),
        type_str: Some(type_str.into()),
        option,
        is_homogeneous: homogeneous,
        min_arity,
        differentiation_category: category,
        description: Some(description.into()),
        ..FormalParameter::default()
    }
}

/// A schema made from its parts (as `onnx.defs.OpSchema(...)` makes one), with the
/// counts and determinism its parameters imply; not registered.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn make_schema(
    py: Python<'_>,
    name: String,
    domain: String,
    since_version: i64,
    doc: String,
    inputs: Vec<FormalIn>,
    outputs: Vec<FormalIn>,
    type_constraints: Vec<(String, Vec<String>, String)>,
    attributes: Vec<AttributeIn<'_>>,
) -> PyResult<SchemaRef> {
    let attributes = attributes
        .into_iter()
        .map(|(name, kind, description, required, default)| {
            let default_value = match default {
                Some(d) => Some(copy_of::<AttributeProto<'static>>(
                    py,
                    &d,
                    "AttributeProto",
                )?),
                None => None,
            };
            Ok(AttributeSchema {
                name: Some(name.into()),
                r#type: kind,
                required,
                default_value,
                description: Some(description.into()),
                ..AttributeSchema::default()
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut schema = OpSchema {
        name: Some(name.into()),
        domain: Some(domain.into()),
        since_version,
        doc: Some(doc.into()),
        inputs: inputs.into_iter().map(formal_in).collect(),
        outputs: outputs.into_iter().map(formal_in).collect(),
        type_constraints: type_constraints
            .into_iter()
            .map(|(param, allowed, description)| TypeConstraint {
                type_param: Some(param.into()),
                allowed_types: allowed.into_iter().map(Into::into).collect(),
                description: Some(description.into()),
                ..TypeConstraint::default()
            })
            .collect(),
        attributes,
        // Python gives no inference function: inference leaves its outputs unknown.
        without_inference: true,
        ..OpSchema::default()
    };
    schema.finalize().map_err(|e| schema_error(py, e))?;
    Ok(SchemaRef {
        held: Held::Made(Arc::new(schema)),
    })
}

/// Adds the schema behind `schema` to the registry every lookup sees.
#[pyfunction]
pub fn register_schema(py: Python<'_>, schema: &SchemaRef) -> PyResult<()> {
    schema::register(schema.get().clone()).map_err(|e| schema_error(py, e))?;
    Ok(())
}

/// Removes a schema (embedded or registered) from what lookups see.
#[pyfunction]
pub fn deregister_schema(
    py: Python<'_>,
    op_type: &str,
    version: i64,
    domain: &str,
) -> PyResult<()> {
    schema::deregister(op_type, version, domain).map_err(|e| schema_error(py, e))
}
