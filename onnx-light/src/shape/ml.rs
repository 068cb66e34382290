//! The inference rules of the `ai.onnx.ml` domain (traditional machine learning:
//! encoders, classifiers, regressors, tree ensembles), at every version `onnx` knows, as
//! its inference functions give them. Several operators have no inference function
//! (`FeatureVectorizer`, `Imputer`, `LinearRegressor`, `Normalizer`, `Scaler`,
//! `SVMRegressor`, the deprecated tree ensembles of version 5): their outputs stay
//! untyped. Where `onnx` crashes on an input without a type (`LabelEncoder`,
//! `DictVectorizer`, `TreeEnsemble`), the rule refuses the node.

use super::kit::*;
use super::types::{shape_of, tensor_type};
use crate::onnx::{
    AttributeProto, DataType, Dimension, TensorShapeProto, TypeProto, TypeProtoMap,
    TypeProtoSequence, TypeProtoTensor, TypeValue,
};

const FLOAT: i32 = DataType::Float as i32;
const INT64: i32 = DataType::Int64 as i32;
const STRING: i32 = DataType::String as i32;
const UINT8: i32 = DataType::Uint8 as i32;

/// The rule's outcome: `Ok(None)` when the operator is not of this family.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if n.domain != "ai.onnx.ml" {
        return Ok(None);
    }
    let v = n.version;
    let outputs = match n.node.op_type() {
        "ArrayFeatureExtractor" => array_feature_extractor(n)?,
        "Binarizer" => same_as_input(n, 0)?,
        "CastMap" => cast_map(n),
        "CategoryMapper" => category_mapper(n)?,
        "DictVectorizer" => dict_vectorizer(n)?,
        "LabelEncoder" if v < 2 => label_encoder_1(n)?,
        "LabelEncoder" if v < 4 => label_encoder_2(n)?,
        "LabelEncoder" => label_encoder_4(n)?,
        "LinearClassifier" => linear_classifier(n)?,
        "OneHotEncoder" => one_hot_encoder(n)?,
        "SVMClassifier" => class_labels_only(n),
        "TreeEnsembleClassifier" if v < 3 => class_labels_only(n),
        "TreeEnsembleClassifier" if v < 5 => tree_ensemble_classifier(n)?,
        "TreeEnsembleRegressor" if (3..5).contains(&v) => tree_ensemble_regressor(n)?,
        "TreeEnsemble" if v >= 5 => tree_ensemble(n)?,
        "ZipMap" => zip_map(n)?,
        "FeatureVectorizer"
        | "Imputer"
        | "LinearRegressor"
        | "Normalizer"
        | "Scaler"
        | "SVMRegressor"
        | "TreeEnsembleClassifier"
        | "TreeEnsembleRegressor"
        | "TreeEnsemble" => nothing(n),
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

fn nothing(n: &Node<'_, '_>) -> Outputs {
    vec![None; n.node.output.len()]
}

/// A tensor type whose element type is not set (as `onnx` leaves it for values it
/// does not recognize), without a shape.
fn untyped_tensor() -> TypeProto<'static> {
    TypeProto {
        value: Some(TypeValue::TensorType(TypeProtoTensor::default())),
        ..TypeProto::default()
    }
}

/// Sets output `i`; `onnx` fails when the node has no such output.
fn put(outputs: &mut Outputs, i: usize, t: TypeProto<'static>) -> Result<(), String> {
    match outputs.get_mut(i) {
        Some(slot) => {
            *slot = Some(t);
            Ok(())
        }
        None => Err(format!("Output {i} is out of bounds.")),
    }
}

/// The type of input 0, which `onnx` reads without checking it is there.
fn input_type<'n>(n: &'n Node<'_, '_>) -> Result<&'n TypeProto<'n>, String> {
    match n.inputs.first().copied().flatten() {
        Some(t) => Ok(t),
        None => Err("Input 0 has no type (onnx crashes on this node)".to_string()),
    }
}

/// The element type of a type that may not be a tensor (0 when it is not one or has
/// none).
fn tensor_elem(t: &TypeProto<'_>) -> i32 {
    match &t.value {
        Some(TypeValue::TensorType(tt)) => tt.elem_type_raw(),
        _ => 0,
    }
}

fn string_attr<'n>(n: &'n Node<'_, '_>, name: &str) -> Option<&'n [u8]> {
    attribute(n, name).and_then(|a| a.s.as_ref().map(|s| s.as_slice()))
}

/// Whether a list attribute is set and not empty.
fn non_empty(n: &Node<'_, '_>, name: &str) -> bool {
    attribute(n, name).is_some_and(|a| !a.ints.is_empty() || !a.strings.is_empty())
}

/// The element type and length of an attribute holding a list (ints, floats,
/// strings) or a 1D tensor, as `onnx` reads them: an empty list has no type.
fn elem_and_length(a: &AttributeProto<'_>) -> Result<(i32, i64), String> {
    Ok(if !a.ints.is_empty() {
        (INT64, a.ints.len() as i64)
    } else if !a.floats.is_empty() {
        (FLOAT, a.floats.len() as i64)
    } else if !a.strings.is_empty() {
        (STRING, a.strings.len() as i64)
    } else if let Some(t) = &a.t {
        if t.dims.len() != 1 {
            return Err(format!(
                "Attribute {} expected to be a 1D tensor but was {}D",
                a.name(),
                t.dims.len()
            ));
        }
        (t.data_type(), t.dims[0])
    } else {
        (0, 0)
    })
}

/// The element type and length of the one attribute of `names` that is set; two set
/// (the first not empty) is an error.
fn one_of(n: &Node<'_, '_>, names: &[&str]) -> Result<(i32, i64), String> {
    let mut found = (0, 0);
    for name in names {
        if let Some(a) = attribute(n, name) {
            if found.0 != 0 {
                return Err(format!(
                    "One and only one attribute must be set out of {}",
                    names.join(", ")
                ));
            }
            found = elem_and_length(a)?;
        }
    }
    Ok(found)
}

fn array_feature_extractor(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = required_elem(n, 0)?;
    let Some(x) = shape_in(n, 0) else {
        return Ok(one(elem, None));
    };
    if x.dim.len() == 1 {
        return Ok(one(elem, None));
    }
    let mut dims: Vec<Dimension<'static>> = x
        .dim
        .iter()
        .take(x.dim.len().saturating_sub(1))
        .map(owned_dim)
        .collect();
    // The last dimension counts the indices; one symbolic dimension (the others 1)
    // keeps its name.
    let mut last = Dimension::unknown();
    if let Some(indices) = shape_in(n, 1).filter(|s| !s.dim.is_empty()) {
        let mut count: i64 = 1;
        let mut symbol: Option<&Dimension<'_>> = None;
        let mut known = true;
        for d in &indices.dim {
            if let Some(v) = d.as_value() {
                count = count.wrapping_mul(v);
            } else if d.as_param().is_some() && symbol.is_none() {
                symbol = Some(d);
            } else {
                known = false;
                break;
            }
        }
        if known {
            match symbol {
                None => last = Dimension::value(count),
                Some(s) if count == 1 => last = owned_dim(s),
                Some(_) => {}
            }
        }
    }
    dims.push(last);
    Ok(one(elem, Some(shape_of(dims))))
}

fn cast_map(n: &Node<'_, '_>) -> Outputs {
    let t = match string_attr(n, "cast_to") {
        None | Some(b"TO_FLOAT") => tensor_type(FLOAT, None),
        Some(b"TO_INT64") => tensor_type(INT64, None),
        Some(b"TO_STRING") => tensor_type(STRING, None),
        Some(_) => untyped_tensor(),
    };
    let mut outputs = nothing(n);
    if let Some(slot) = outputs.first_mut() {
        *slot = Some(t);
    }
    outputs
}

/// Strings to integers and back: the other type of the two, the input's shape.
fn category_mapper(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let (Some(ints), Some(strings)) = (attribute(n, "cats_int64s"), attribute(n, "cats_strings"))
    else {
        return Err("Attributes 'cats_int64s' and 'cats_strings' are required.".to_string());
    };
    if ints.ints.len() != strings.strings.len() {
        return Err(
            "Attributes 'cats_int64s' and 'cats_strings' are required to be the same length."
                .to_string(),
        );
    }
    let Some(x) = n.inputs.first().copied().flatten() else {
        return Ok(nothing(n));
    };
    let Some(TypeValue::TensorType(tt)) = &x.value else {
        return Err("Mismatch between inferred and declared type.".to_string());
    };
    let elem = match tt.elem_type_raw() {
        e if e == STRING => Some(INT64),
        e if e == INT64 => Some(STRING),
        _ => None,
    };
    let mut outputs = nothing(n);
    match (elem, &tt.shape) {
        (Some(e), shape) => put(&mut outputs, 0, tensor_type(e, shape.as_ref().map(owned)))?,
        (None, Some(_)) => {
            return Err("Mismatch between inferred and declared type.".to_string());
        }
        (None, None) => {}
    }
    Ok(outputs)
}

/// The map's value type as the element type (0 when the input is not a map of
/// tensors), no shape.
fn dict_vectorizer(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match &input_type(n)?.value {
        Some(TypeValue::MapType(m)) => m.value_type.as_deref().map_or(0, tensor_elem),
        _ => 0,
    };
    let mut outputs = nothing(n);
    put(&mut outputs, 0, tensor_type(elem, None))?;
    Ok(outputs)
}

/// Version 1: strings become integers and integers strings; no shape.
fn label_encoder_1(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let t = match tensor_elem(input_type(n)?) {
        e if e == STRING => tensor_type(INT64, None),
        e if e == INT64 => tensor_type(STRING, None),
        _ => untyped_tensor(),
    };
    let mut outputs = nothing(n);
    put(&mut outputs, 0, t)?;
    Ok(outputs)
}

/// Versions 2 and 3: one `keys_*` list matching the input's type, one `values_*` list
/// giving the output's; the input's shape.
fn label_encoder_2(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let kinds = [("strings", STRING), ("int64s", INT64), ("floats", FLOAT)];
    let set = |prefix: &str| -> Vec<i32> {
        kinds
            .iter()
            .filter(|(k, _)| attribute(n, &format!("{prefix}_{k}")).is_some())
            .map(|&(_, e)| e)
            .collect()
    };
    let (keys, values) = (set("keys"), set("values"));
    if keys.len() != 1 {
        return Err("Only one of keys_*'s can be set in label encoder.".to_string());
    }
    if values.len() != 1 {
        return Err("Only one of values_*'s can be set in label encoder.".to_string());
    }
    let x = input_type(n)?;
    if tensor_elem(x) != keys[0] {
        return Err("Input type does not match the keys_* attribute set".to_string());
    }
    let shape = shape_in(n, 0).map(owned);
    Ok(vec_with_first(n, tensor_type(values[0], shape)))
}

/// Version 4: keys and values as lists or 1D tensors of one length, the keys of the
/// input's type; a default tensor must be one value of the values' type.
fn label_encoder_4(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let (key_type, key_len) = one_of(
        n,
        &["keys_tensor", "keys_strings", "keys_int64s", "keys_floats"],
    )?;
    if key_type == 0 {
        return Err(
            "At least one of keys_tensor, keys_strings, keys_int64s, keys_floats must be set."
                .to_string(),
        );
    }
    if key_type != tensor_elem(input_type(n)?) {
        return Err(format!(
            "The input type and the key type {key_type} are different, which is not permitted for LabelEncoders."
        ));
    }
    let (value_type, value_len) = one_of(
        n,
        &[
            "values_tensor",
            "values_strings",
            "values_int64s",
            "values_floats",
        ],
    )?;
    if value_type == 0 {
        return Err(
            "At least one of values_tensor, values_strings, values_int64s, values_floats must be set."
                .to_string(),
        );
    }
    // Only a default tensor is checked (the scalar defaults may be set beside it).
    if let Some(t) = attribute(n, "default_tensor").and_then(|a| a.t.as_deref()) {
        if t.data_type() != value_type {
            return Err(format!(
                "The default tensor type {} and the value type {value_type} must be the same in the LabelEncoder.",
                t.data_type()
            ));
        }
        if t.dims != [1] {
            return Err("The default tensor must be a singleton 1D tensor.".to_string());
        }
    }
    if key_len != value_len {
        return Err(format!(
            "The number of keys {key_len} and the number of values {value_len} must be the same in the LabelEncoder."
        ));
    }
    let shape = shape_in(n, 0).map(owned);
    Ok(vec_with_first(n, tensor_type(value_type, shape)))
}

fn vec_with_first(n: &Node<'_, '_>, t: TypeProto<'static>) -> Outputs {
    let mut outputs = nothing(n);
    if let Some(slot) = outputs.first_mut() {
        *slot = Some(t);
    }
    outputs
}

/// The class labels' type (strings when `classlabels_strings` is not empty, else
/// integers).
fn label_elem(n: &Node<'_, '_>) -> i32 {
    if non_empty(n, "classlabels_strings") {
        STRING
    } else {
        INT64
    }
}

/// `SVMClassifier` and `TreeEnsembleClassifier` 1: the labels' element type, nothing
/// else.
fn class_labels_only(n: &Node<'_, '_>) -> Outputs {
    vec_with_first(n, tensor_type(label_elem(n), None))
}

/// The batch size of a classifier's `[N, C]` (or `[C]`, one example) input.
fn linear_classifier(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let strings = non_empty(n, "classlabels_strings");
    let labels = if strings {
        attribute(n, "classlabels_strings").map_or(0, |a| a.strings.len())
    } else {
        attribute(n, "classlabels_ints").map_or(0, |a| a.ints.len())
    };
    let intercepts = attribute(n, "intercepts").map_or(0, |a| a.floats.len());
    let classes = if intercepts == 1 && labels == 2 {
        2
    } else {
        intercepts
    };
    let mut outputs = nothing(n);
    put(&mut outputs, 0, tensor_type(label_elem(n), None))?;
    put(&mut outputs, 1, tensor_type(FLOAT, None))?;
    let batch = match shape_in(n, 0) {
        None => Dimension::unknown(),
        Some(x) if x.dim.len() == 1 => Dimension::value(1),
        Some(x) if x.dim.len() == 2 => owned_dim(&x.dim[0]),
        Some(_) => return Err("Input's shape should be 1D or 2D".to_string()),
    };
    let classes = Dimension::value(i64::try_from(classes).unwrap_or(i64::MAX));
    outputs[0] = Some(tensor_type(
        label_elem(n),
        Some(shape_of(vec![batch.clone()])),
    ));
    outputs[1] = Some(tensor_type(FLOAT, Some(shape_of(vec![batch, classes]))));
    Ok(outputs)
}

/// The input's shape and one more dimension, the number of categories.
fn one_hot_encoder(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let (ints, strings) = (attribute(n, "cats_int64s"), attribute(n, "cats_strings"));
    if ints.is_some() == strings.is_some() {
        return Err("Exactly one of 'cats_*' attributes must be provided.".to_string());
    }
    let Some(x) = shape_in(n, 0) else {
        return Ok(nothing(n));
    };
    let count = ints
        .map_or(0, |a| a.ints.len())
        .max(strings.map_or(0, |a| a.strings.len()));
    let mut dims: Vec<Dimension<'static>> = x.dim.iter().map(owned_dim).collect();
    dims.push(Dimension::value(i64::try_from(count).unwrap_or(i64::MAX)));
    Ok(vec_with_first(n, tensor_type(FLOAT, Some(shape_of(dims)))))
}

/// Refuses the attributes given both as a list and as a tensor.
fn exclusive(n: &Node<'_, '_>, names: &[&str]) -> Result<(), String> {
    for name in names {
        let tensor = format!("{name}_as_tensor");
        if attribute(n, name).is_some() && attribute(n, &tensor).is_some() {
            return Err(format!(
                "Only one of the attributes '{name}', '{tensor}' should be specified."
            ));
        }
    }
    Ok(())
}

/// The batch dimension of a tree ensemble's `[N, F]` input (rank 2 when known).
fn tree_batch(n: &Node<'_, '_>) -> Result<Dimension<'static>, String> {
    match shape_in(n, 0) {
        Some(x) if x.dim.len() != 2 => Err(format!(
            "Input 0 expected to have rank 2 but has rank {}",
            x.dim.len()
        )),
        Some(x) => Ok(owned_dim(&x.dim[0])),
        None => Ok(Dimension::unknown()),
    }
}

/// Versions 3 and 4: `[N]` labels, `[N, E]` scores for the `E` classes.
fn tree_ensemble_classifier(n: &Node<'_, '_>) -> Result<Outputs, String> {
    exclusive(
        n,
        &[
            "nodes_values",
            "nodes_hitrates",
            "class_weights",
            "base_values",
        ],
    )?;
    let mut outputs = nothing(n);
    let elem = label_elem(n);
    put(&mut outputs, 0, tensor_type(elem, None))?;
    put(&mut outputs, 1, tensor_type(FLOAT, None))?;
    let batch = tree_batch(n)?;
    let classes = if elem == STRING {
        attribute(n, "classlabels_strings").map_or(0, |a| a.strings.len())
    } else {
        match attribute(n, "classlabels_int64s").map(|a| a.ints.len()) {
            Some(c) if c > 0 => c,
            _ => return Err("Non of classlabels_int64s or classlabels_strings is set.".to_string()),
        }
    };
    let classes = Dimension::value(i64::try_from(classes).unwrap_or(i64::MAX));
    outputs[0] = Some(tensor_type(elem, Some(shape_of(vec![batch.clone()]))));
    outputs[1] = Some(tensor_type(FLOAT, Some(shape_of(vec![batch, classes]))));
    Ok(outputs)
}

/// Versions 3 and 4: `[N, n_targets]` floats.
fn tree_ensemble_regressor(n: &Node<'_, '_>) -> Result<Outputs, String> {
    exclusive(
        n,
        &[
            "nodes_values",
            "nodes_hitrates",
            "target_weights",
            "base_values",
        ],
    )?;
    tree_targets(n, FLOAT)
}

/// `TreeEnsemble` (version 5): the node attributes must all describe as many nodes
/// as `nodes_splits` holds, splits and leaf weights of the input's type; the output is
/// `[N, n_targets]` of the input's type.
fn tree_ensemble(n: &Node<'_, '_>) -> Result<Outputs, String> {
    tree_batch(n)?;
    let Some(splits) = attribute(n, "nodes_splits") else {
        return Err("Attribute 'nodes_splits' is required.".to_string());
    };
    let split_dims = splits.t.as_deref().map_or(&[][..], |t| t.dims.as_slice());
    if split_dims.len() != 1 {
        return Err("Attribute 'nodes_splits' must be 1D.".to_string());
    }
    let elem = tensor_elem(input_type(n)?);
    let split_elem = splits.t.as_deref().map_or(0, |t| t.data_type());
    if elem != split_elem {
        return Err(format!(
            "Attribute 'nodes_splits' must have same type as input. Input type is {elem} and attribute type is {split_elem}"
        ));
    }
    let count = split_dims[0];
    for (name, expected, required) in [
        ("nodes_featureids", INT64, true),
        ("nodes_hitrates", FLOAT, false),
        ("nodes_modes", UINT8, true),
        ("nodes_truenodeids", INT64, true),
        ("nodes_falsenodeids", INT64, true),
        ("nodes_trueleafs", INT64, true),
        ("nodes_falseleafs", INT64, true),
        ("nodes_missing_value_tracks_true", INT64, false),
    ] {
        check_nodes_attribute(n, name, count, expected, required)?;
    }
    if let Some(m) = attribute(n, "membership_values") {
        if m.t.as_deref().map_or(0, |t| t.data_type()) != elem {
            return Err("Attribute 'membership_values' must have same type as input.".to_string());
        }
    }
    check_nodes_attribute(n, "nodes_splits", count, elem, true)?;
    let (Some(targets), Some(weights)) = (
        attribute(n, "leaf_targetids"),
        attribute(n, "leaf_weights").and_then(|a| a.t.as_deref()),
    ) else {
        return Err("Attributes 'leaf_targetids' and 'leaf_weights' must both be set.".to_string());
    };
    if weights.dims.first().copied() != Some(targets.ints.len() as i64) {
        return Err(
            "Attribute 'leaf_targetids' must have same length as attribute 'leaf_weights'."
                .to_string(),
        );
    }
    if weights.data_type() != elem {
        return Err("Attribute 'leaf_weights' must have same type as input.".to_string());
    }
    tree_targets(n, elem)
}

/// An attribute describing each tree node: of type `expected` and `count` long.
fn check_nodes_attribute(
    n: &Node<'_, '_>,
    name: &str,
    count: i64,
    expected: i32,
    required: bool,
) -> Result<(), String> {
    let Some(a) = attribute(n, name) else {
        return match required {
            true => Err("Unspecified required attribute.".to_string()),
            false => Ok(()),
        };
    };
    let (elem, length) = elem_and_length(a)?;
    if elem != expected {
        return Err(format!("Attribute '{name}' must have type {expected}."));
    }
    // `onnx` compares the lengths as 32-bit integers.
    if length as i32 != count as i32 {
        return Err(format!("Attribute '{name}' must have {count} elements."));
    }
    Ok(())
}

/// A sequence of maps from the labels (strings or integers) to float scalars.
fn zip_map(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if let Some(x) = shape_in(n, 0) {
        if x.dim.len() != 1 && x.dim.len() != 2 {
            return Err("ZipMap input shape should be 1D or 2D.".to_string());
        }
    }
    let key = if non_empty(n, "classlabels_int64s") {
        Some(INT64)
    } else if non_empty(n, "classlabels_strings") {
        Some(STRING)
    } else {
        None
    };
    let map = TypeProto {
        value: Some(TypeValue::MapType(Box::new(TypeProtoMap {
            key_type_raw: key,
            value_type: Some(Box::new(tensor_type(
                FLOAT,
                Some(TensorShapeProto::default()),
            ))),
            ..TypeProtoMap::default()
        }))),
        ..TypeProto::default()
    };
    let seq = TypeProto {
        value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(map)),
            ..TypeProtoSequence::default()
        }))),
        ..TypeProto::default()
    };
    let mut outputs = nothing(n);
    put(&mut outputs, 0, seq)?;
    Ok(outputs)
}

/// A tree ensemble's one output: `elem` values of shape `[batch, n_targets]`.
fn tree_targets(n: &Node<'_, '_>, elem: i32) -> Result<Outputs, String> {
    let batch = tree_batch(n)?;
    let targets = match attribute(n, "n_targets") {
        Some(a) => Dimension::value(a.i.unwrap_or(0)),
        None => Dimension::unknown(),
    };
    let mut outputs = nothing(n);
    put(
        &mut outputs,
        0,
        tensor_type(elem, Some(shape_of(vec![batch, targets]))),
    )?;
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use crate::onnx::{
        AttributeProto, DataType, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
        TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
    };

    /// The types strict inference gives a one-node `ai.onnx.ml` model's values
    /// (`name: type`), or its error. Dimensions: a number is a size, `?` unknown,
    /// anything else a name; `None` for an unknown shape.
    fn run(
        op: &str,
        version: i64,
        attributes: Vec<AttributeProto<'static>>,
        inputs: &[(&str, DataType, Option<&[&str]>)],
        outputs: &[&str],
    ) -> Result<Vec<String>, String> {
        let mut g = GraphProto::named("g");
        for &(name, elem, dims) in inputs {
            let shape = dims.map(|ds| {
                TensorShapeProto::new(ds.iter().map(|d| match d.parse::<i64>() {
                    Ok(v) => Dimension::value(v),
                    Err(_) if *d == "?" => Dimension::unknown(),
                    Err(_) => Dimension::param(d.to_string()),
                }))
            });
            g.input.push(ValueInfoProto {
                name: Some(name.to_string().into()),
                r#type: Some(TypeProto::tensor(elem, shape)),
                ..ValueInfoProto::default()
            });
        }
        let mut node = NodeProto::new(
            op.to_string(),
            inputs.iter().map(|i| i.0.to_string()),
            outputs.iter().map(|s| s.to_string()),
        );
        node.domain = Some("ai.onnx.ml".into());
        node.attribute = attributes;
        g.node.push(node);
        let opsets = vec![
            OperatorSetIdProto::new("", 21),
            OperatorSetIdProto::new("ai.onnx.ml", version),
        ];
        let m = ModelProto::new(g, opsets);
        crate::shape::test_support::strict_value_types(m).map_err(|e| e.to_string())
    }

    fn strings(name: &str, values: &[&str]) -> AttributeProto<'static> {
        AttributeProto::strings(
            name.to_string(),
            values
                .iter()
                .map(|s| s.as_bytes().to_vec().into())
                .collect(),
        )
    }

    const F: DataType = DataType::Float;
    const I: DataType = DataType::Int64;
    const S: DataType = DataType::String;

    #[test]
    fn label_encoder_by_version() {
        let x: (&str, DataType, Option<&[&str]>) = ("x", S, Some(&["n", "3"]));
        let attrs = || {
            vec![
                strings("keys_strings", &["a", "b"]),
                AttributeProto::ints("values_int64s", vec![1, 2]),
            ]
        };
        // Version 1 maps strings to integers and back, without a shape.
        let v1 = vec![strings("classes_strings", &["a"])];
        assert_eq!(
            run("LabelEncoder", 1, v1, &[x], &["y"]).unwrap(),
            ["y: int64[]"]
        );
        assert_eq!(
            run("LabelEncoder", 2, attrs(), &[x], &["y"]).unwrap(),
            ["y: int64[n,3]"]
        );
        assert_eq!(
            run("LabelEncoder", 4, attrs(), &[x], &["y"]).unwrap(),
            ["y: int64[n,3]"]
        );
        // Version 4 wants as many keys as values, keys of the input's type.
        let short = vec![
            strings("keys_strings", &["a", "b"]),
            AttributeProto::ints("values_int64s", vec![1]),
        ];
        assert!(run("LabelEncoder", 4, short.clone(), &[x], &["y"]).is_err());
        assert!(run("LabelEncoder", 2, short, &[x], &["y"]).is_ok());
        let ints = ("x", I, Some(&["3"][..]));
        assert!(run("LabelEncoder", 4, attrs(), &[ints], &["y"]).is_err());
        // Keys as a tensor; a default tensor must be one value, the scalar defaults are
        // not checked against it.
        let keys = TensorProto::from_vec("", [2], vec![1i64, 2]).unwrap();
        let with_default = |dims: Vec<i64>| {
            let mut default = TensorProto::from_vec("", [1], vec![0i64]).unwrap();
            default.dims = dims;
            vec![
                AttributeProto::tensor("keys_tensor", keys.clone()),
                strings("values_strings", &["a", "b"]),
                AttributeProto::tensor("default_tensor", default),
                AttributeProto::int("default_int64", 3),
            ]
        };
        assert!(run("LabelEncoder", 4, with_default(vec![1]), &[ints], &["y"]).is_err());
        let mut string_default = with_default(vec![1]);
        string_default[2] = AttributeProto::tensor(
            "default_tensor",
            TensorProto::from_strings("", [1], vec![b"z".to_vec()]).unwrap(),
        );
        assert_eq!(
            run("LabelEncoder", 4, string_default, &[ints], &["y"]).unwrap(),
            ["y: string[3]"]
        );
    }

    #[test]
    fn classifiers_give_labels_and_scores() {
        let x: (&str, DataType, Option<&[&str]>) = ("x", F, Some(&["n", "4"]));
        let labels = || strings("classlabels_strings", &["a", "b"]);
        let linear = vec![
            AttributeProto::floats("coefficients", vec![1.0; 8]),
            AttributeProto::floats("intercepts", vec![0.5]),
            labels(),
        ];
        // One intercept for two labels: two classes.
        assert_eq!(
            run("LinearClassifier", 1, linear, &[x], &["y", "z"]).unwrap(),
            ["y: string[n]", "z: float[n,2]"]
        );
        assert_eq!(
            run(
                "TreeEnsembleClassifier",
                3,
                vec![labels()],
                &[x],
                &["y", "z"]
            )
            .unwrap(),
            ["y: string[n]", "z: float[n,2]"]
        );
        // Version 1 gives the labels' type only; version 5 nothing.
        assert_eq!(
            run(
                "TreeEnsembleClassifier",
                1,
                vec![labels()],
                &[x],
                &["y", "z"]
            )
            .unwrap(),
            ["y: string[]"]
        );
        assert!(run(
            "TreeEnsembleClassifier",
            5,
            vec![labels()],
            &[x],
            &["y", "z"]
        )
        .unwrap()
        .is_empty());
        let flat = ("x", F, Some(&["4"][..]));
        assert!(run(
            "TreeEnsembleClassifier",
            3,
            vec![labels()],
            &[flat],
            &["y", "z"]
        )
        .is_err());
        let targets = vec![AttributeProto::int("n_targets", 3)];
        assert_eq!(
            run("TreeEnsembleRegressor", 3, targets, &[x], &["y"]).unwrap(),
            ["y: float[n,3]"]
        );
    }

    #[test]
    fn encoders_and_maps() {
        let x: (&str, DataType, Option<&[&str]>) = ("x", F, Some(&["n", "5"]));
        let indices = ("i", I, Some(&["1", "k"][..]));
        assert_eq!(
            run("ArrayFeatureExtractor", 1, vec![], &[x, indices], &["y"]).unwrap(),
            ["y: float[n,k]"]
        );
        let cats = vec![AttributeProto::ints("cats_int64s", vec![4, 5, 6])];
        assert_eq!(
            run("OneHotEncoder", 1, cats, &[x], &["y"]).unwrap(),
            ["y: float[n,5,3]"]
        );
        assert!(run("OneHotEncoder", 1, vec![], &[x], &["y"]).is_err());
        let labels = vec![AttributeProto::ints("classlabels_int64s", vec![1, 2])];
        assert_eq!(
            run("ZipMap", 1, labels, &[x], &["z"]).unwrap(),
            ["z: seq(map(int64, float))"]
        );
        let mapper = vec![
            AttributeProto::ints("cats_int64s", vec![1, 2]),
            strings("cats_strings", &["a", "b"]),
        ];
        let words = ("w", S, Some(&["n"][..]));
        assert_eq!(
            run("CategoryMapper", 1, mapper, &[words], &["y"]).unwrap(),
            ["y: int64[n]"]
        );
        // No inference function: nothing.
        assert!(run("Scaler", 1, vec![], &[x], &["y"]).unwrap().is_empty());
    }

    #[test]
    fn tree_ensemble_checks_its_node_attributes() {
        let x: (&str, DataType, Option<&[&str]>) = ("x", F, Some(&["n", "4"]));
        let tensor = |name: &str, dt: DataType, len: usize| {
            let mut t = TensorProto::from_vec("", [len as i64], vec![0f32; len]).unwrap();
            t.data_type = Some(dt as i32);
            AttributeProto::tensor(name.to_string(), t)
        };
        let attrs = |modes: usize| {
            vec![
                tensor("nodes_splits", DataType::Float, 2),
                AttributeProto::ints("nodes_featureids", vec![0, 1]),
                tensor("nodes_modes", DataType::Uint8, modes),
                AttributeProto::ints("nodes_truenodeids", vec![0, 1]),
                AttributeProto::ints("nodes_falsenodeids", vec![0, 1]),
                AttributeProto::ints("nodes_trueleafs", vec![0, 1]),
                AttributeProto::ints("nodes_falseleafs", vec![0, 1]),
                AttributeProto::ints("leaf_targetids", vec![0, 1, 0]),
                tensor("leaf_weights", DataType::Float, 3),
                AttributeProto::int("n_targets", 2),
            ]
        };
        assert_eq!(
            run("TreeEnsemble", 5, attrs(2), &[x], &["y"]).unwrap(),
            ["y: float[n,2]"]
        );
        assert!(run("TreeEnsemble", 5, attrs(3), &[x], &["y"]).is_err());
    }
}
