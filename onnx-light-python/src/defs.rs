//! Operator schemas for Python: `onnx_light.onnx.defs` (in `python/onnx_light/onnx/`)
//! wraps these handles in `onnx`'s `OpSchema` API.
//!
//! The schemas are the ones `onnx_light::checker::schema` embeds; a handle points at one
//! of them and converts a part of it to Python only when that part is asked for.

use onnx_light::checker::schema::{self, FormalParameter, OpSchema};
use onnx_light::onnx::{AttributeProto, FunctionProto};
use pyo3::prelude::*;

use crate::message::{wrap, PyMessage};

/// One embedded operator schema (one version of one operator).
#[pyclass(frozen, module = "onnx_light._onnx_light")]
pub struct SchemaRef {
    schema: &'static OpSchema<'static>,
}

/// A formal input or output as `(name, type_str, option, is_homogeneous, min_arity,
/// differentiation_category)`.
type Formal = (String, String, i32, bool, i32, i32);

/// An attribute as `(name, type, required, default_value)`.
type Attribute = (String, i32, bool, Py<PyAny>);

fn formal(p: &FormalParameter<'_>) -> Formal {
    (
        p.name().to_owned(),
        p.type_str().to_owned(),
        p.option,
        p.is_homogeneous,
        p.min_arity,
        p.differentiation_category,
    )
}

#[pymethods]
impl SchemaRef {
    #[getter]
    fn name(&self) -> &str {
        self.schema.name()
    }

    #[getter]
    fn domain(&self) -> &str {
        self.schema.domain()
    }

    #[getter]
    fn since_version(&self) -> i64 {
        self.schema.since_version
    }

    #[getter]
    fn deprecated(&self) -> bool {
        self.schema.deprecated
    }

    /// `(min_input, max_input, min_output, max_output)`.
    #[getter]
    fn counts(&self) -> (i32, i32, i32, i32) {
        let s = self.schema;
        (s.min_input, s.max_input, s.min_output, s.max_output)
    }

    #[getter]
    fn inputs(&self) -> Vec<Formal> {
        self.schema.inputs.iter().map(formal).collect()
    }

    #[getter]
    fn outputs(&self) -> Vec<Formal> {
        self.schema.outputs.iter().map(formal).collect()
    }

    /// The attributes as `(name, type, required, default_value)`, sorted by name; the
    /// default is an `AttributeProto` (empty when the attribute has none, as in `onnx`).
    fn attributes(&self, py: Python<'_>) -> PyResult<Vec<Attribute>> {
        self.schema
            .attributes
            .iter()
            .map(|a| {
                let default: AttributeProto<'static> = a.default_value.clone().unwrap_or_default();
                let message = wrap(py, PyMessage::from_box(Box::new(default)))?;
                Ok((a.name().to_owned(), a.r#type, a.required, message))
            })
            .collect()
    }

    /// The type constraints as `(type parameter, allowed types)`.
    #[getter]
    fn type_constraints(&self) -> Vec<(String, Vec<String>)> {
        self.schema
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
        self.schema
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
            .schema
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
        self.schema.context_dependent_function_versions.clone()
    }

    #[getter]
    fn has_inference(&self) -> bool {
        !self.schema.without_inference
    }

    /// Whether two handles point at the same schema.
    fn same(&self, other: &SchemaRef) -> bool {
        std::ptr::eq(self.schema, other.schema)
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
    schema::lookup_exact_domain(domain, op_type, version).map(|schema| SchemaRef { schema })
}

/// Every schema, sorted by domain, name and version; `with_history=false`: only the
/// latest version of each operator.
#[pyfunction]
pub fn all_schemas(with_history: bool) -> Vec<SchemaRef> {
    let all = &schema::all().schema;
    all.iter()
        .enumerate()
        .filter(|(i, s)| {
            with_history
                || all
                    .get(i + 1)
                    .is_none_or(|next| next.domain() != s.domain() || next.name() != s.name())
        })
        .map(|(_, schema)| SchemaRef { schema })
        .collect()
}
