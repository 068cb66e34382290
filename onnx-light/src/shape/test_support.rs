//! What the rule families' unit tests share: dimensions written in short notation, and
//! strict inference of a model reported as `name: type` lines.

use crate::onnx::{Dimension, ModelProto};
use crate::shape::{infer_shapes, InferOptions};

/// A dimension from its notation: a number, `?` for unknown, else a name.
pub(super) fn dims(spec: &[&str]) -> Vec<Dimension<'static>> {
    spec.iter()
        .map(|d| match d.parse::<i64>() {
            Ok(v) => Dimension::value(v),
            Err(_) if *d == "?" => Dimension::unknown(),
            Err(_) => Dimension::param(d.to_string()),
        })
        .collect()
}

/// Infers `m` in strict mode; its `value_info` entries as `name: type`.
pub(super) fn strict_value_types(mut m: ModelProto<'_>) -> crate::Result<Vec<String>> {
    infer_shapes(&mut m, &InferOptions::default().strict_mode(true))?;
    Ok(m.graph
        .as_ref()
        .map(|g| {
            g.value_info
                .iter()
                .map(|vi| format!("{}: {}", vi.name(), vi.r#type.as_ref().unwrap()))
                .collect()
        })
        .unwrap_or_default())
}
