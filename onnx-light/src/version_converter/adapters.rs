//! What each adapter does to a node, and the refusals that go with it.

use std::collections::VecDeque;

use super::ir::{AttrValue, Graph, Node, Origin, ValId};
use crate::field::Str;
use crate::onnx::{TensorProto, TypeProto, TypeValue};

/// How a node is carried across one opset step.
#[derive(Clone, Copy, Debug)]
pub(super) enum Adapter {
    /// Nothing changes but the version.
    Compatible,
    /// Refused when an input or output has one of these element types.
    Restrict(&'static [i32]),
    /// The older version accepts fewer types; `onnx` inserts casts (not supported here).
    ExtendTypes,
    BroadcastForward,
    BroadcastBackward,
    /// The `axes` attribute becomes a constant second input.
    AxesToInput,
    /// A constant `axes` input becomes the attribute.
    AxesToAttribute,
    /// The `axis` attribute becomes an input at (index, default when absent).
    AxisToInput(usize, i64),
    /// A constant `axis` input at (index) becomes the attribute (default when absent).
    AxisToAttribute(usize, i64),
    RemoveAttr(&'static str),
    /// Removed, refused unless it has this value.
    RemoveAttrIfInt(&'static str, i64),
    RemoveAttrIfStr(&'static str, &'static str),
    /// Removed, refused when it has this value.
    RemoveAttrUnlessInt(&'static str, i64),
    SetInt(&'static str, i64),
    SetInts(&'static str, &'static [i64]),
    SetStr(&'static str, &'static str),
    SetIntIfAbsent(&'static str, i64),
    /// The optional operators: refused element types, and whether an optional input,
    /// a plain input, and no input are allowed.
    Optional(&'static [i32], bool, bool, bool),
    /// The operator's first version: there is nothing to go down to.
    NoPreviousVersion,
    Special(Special),
}

/// The adapters with rules of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Special {
    Attention24To23,
    Attention25To24,
    BatchNormalization13To14,
    Cast28To27,
    Cast9To8,
    Clip10To11,
    DequantizeLinear21To20,
    Dropout11To12,
    Gemm6To7,
    Gemm7To6,
    GridSample19To20,
    MaxPool8To7,
    Mod28To27,
    Pad10To11,
    QuantizeLinear21To20,
    QuantizeLinear28To27,
    Range27To26,
    ReduceLogSum27To28,
    Reshape4To5,
    Reshape5To4,
    Resize10To11,
    Resize18To17,
    Scan8To9,
    Scan9To8,
    Scatter10To11,
    Scatter16To15,
    Scatter18To17,
    Slice9To10,
    Softmax12To13,
    Softmax13To12,
    Split12To13,
    Split13To12,
    Split17To18,
    Sum8To7,
    TopK9To10,
    Upsample6To7,
    Upsample8To9,
    Upsample9To10,
    Upsample9To8,
}

/// The nodes around the one being adapted: those before it (already converted in this
/// step, plus the ones adapters insert before it) and those after it.
pub(super) struct Around<'n, 'a> {
    pub before: &'n mut Vec<Node<'a>>,
    pub after: &'n mut VecDeque<Node<'a>>,
}

/// Why an adapter refused; the caller adds the operator, versions and node.
pub(super) type Refusal = String;

/// Element types (by `TensorProto.DataType` number) the adapters below and the table
/// both refuse: bfloat16; the float6 types opset 27 lacks; what Q/DQ of opset 20 lack.
pub(super) const BFLOAT16_NOT_ALLOWED: &[i32] = &[16]; // BFLOAT16
pub(super) const IR14_TYPES_NOT_IN_IR13: &[i32] = &[27, 28]; // FLOAT6E2M3, FLOAT6E3M2
pub(super) const Q_DQ_20_UNALLOWED_TYPES: &[i32] = &[4, 5, 21, 22]; // UINT16, INT16, UINT4, INT4

const INT64: i32 = 7;
const FLOAT: i32 = 1;

fn int64_tensor<'a>(dims: Vec<i64>, values: Vec<i64>) -> TensorProto<'a> {
    TensorProto {
        dims,
        data_type: Some(INT64),
        int64_data: values,
        ..TensorProto::default()
    }
}

fn float_tensor<'a>(dims: Vec<i64>, values: Vec<f32>) -> TensorProto<'a> {
    TensorProto {
        dims,
        data_type: Some(FLOAT),
        float_data: values,
        ..TensorProto::default()
    }
}

/// Inserts a `Constant` node holding `t` before the node being adapted; its output.
fn constant_before<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    t: TensorProto<'a>,
) -> ValId {
    let mut c = Node::new("Constant");
    let out = g.add_value(Origin::Node);
    c.outputs.push(out);
    c.set_attr("value", AttrValue::T(Box::new(t)));
    around.before.push(c);
    out
}

/// Inserts a node of `op_type` with `inputs` before the node being adapted; its output.
fn node_before<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    op_type: &'static str,
    inputs: Vec<ValId>,
    attrs: Vec<(&str, AttrValue<'a>)>,
) -> ValId {
    let mut n = Node::new(op_type);
    let out = g.add_value(Origin::Node);
    n.outputs.push(out);
    n.inputs = inputs;
    for (name, value) in attrs {
        n.set_attr(name, value);
    }
    around.before.push(n);
    out
}

/// Moves the ints attribute `name` into a new constant input (a 1-D int64 tensor made
/// just before the node), as the adapters that turn an attribute into an input do.
fn ints_attr_to_input<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    name: &str,
) -> Result<(), Refusal> {
    let v = ints(node, name)?;
    let c = constant_before(g, around, int64_tensor(vec![v.len() as i64], v));
    node.inputs.push(c);
    node.remove_attr(name);
    Ok(())
}

/// Moves the constant second input of the node, when it has one, into the ints
/// attribute `name`; `onnx`'s refusal when that input is not a constant.
fn input_to_ints_attr(
    g: &mut Graph<'_>,
    around: &mut Around<'_, '_>,
    node: &mut Node<'_>,
    name: &'static str,
) -> Result<(), Refusal> {
    if node.inputs.len() > 1 {
        match take_constant_input(g, around, node, 1, true)? {
            Some(v) => node.set_attr(name, AttrValue::Is(v)),
            None => return Err("No initializer or constant input to node found".into()),
        }
    }
    Ok(())
}

fn ints(node: &Node<'_>, name: &str) -> Result<Vec<i64>, Refusal> {
    match node.attr(name) {
        Some(AttrValue::Is(v)) => Ok(v.clone()),
        _ => Err(format!("required undefined attribute '{name}'")),
    }
}

fn int(node: &Node<'_>, name: &str) -> Result<i64, Refusal> {
    match node.attr(name) {
        Some(AttrValue::I(v)) => Ok(*v),
        _ => Err(format!("required undefined attribute '{name}'")),
    }
}

fn float(node: &Node<'_>, name: &str) -> Result<f32, Refusal> {
    match node.attr(name) {
        Some(AttrValue::F(v)) => Ok(*v),
        _ => Err(format!("required undefined attribute '{name}'")),
    }
}

fn string<'n>(node: &'n Node<'_>, name: &str) -> Result<&'n [u8], Refusal> {
    match node.attr(name) {
        Some(AttrValue::S(v)) => Ok(v.as_ref()),
        _ => Err(format!("required undefined attribute '{name}'")),
    }
}

/// The int64 values of a tensor, from its `int64_data` or its raw bytes.
fn read_int64s(t: &TensorProto<'_>) -> Result<Vec<i64>, Refusal> {
    if t.data_type != Some(INT64) {
        return Err(format!(
            "expected INT64 tensor, got elem_type={}",
            t.data_type.unwrap_or(0)
        ));
    }
    if t.lazy_data.is_some() {
        return Err("the tensor's weights are not loaded (structure-only model)".into());
    }
    match &t.raw_data {
        Some(raw) => {
            let count: i64 = t.dims.iter().product();
            if raw.len() as i64 != count.saturating_mul(8) {
                return Err(format!(
                    "INT64 tensor: {} raw bytes does not match dims ({count} elements)",
                    raw.len()
                ));
            }
            Ok(raw
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect())
        }
        None => Ok(t.int64_data.clone()),
    }
}

/// How many times `v` is used: by nodes of this graph, as a graph output, or by name
/// from a nested graph.
fn uses(g: &Graph<'_>, around: &Around<'_, '_>, node: &Node<'_>, v: ValId) -> usize {
    let name = g.values[v].name.as_str();
    let count_node = |n: &Node<'_>| {
        let direct = n.inputs.iter().filter(|&&i| i == v).count();
        let nested: usize = n
            .attrs
            .iter()
            .map(|a| match &a.value {
                AttrValue::G(sub) => captures(sub, name),
                AttrValue::Gs(subs) => subs.iter().map(|s| captures(s, name)).sum(),
                _ => 0,
            })
            .sum();
        direct + nested
    };
    around.before.iter().map(count_node).sum::<usize>()
        + around.after.iter().map(count_node).sum::<usize>()
        + count_node(node)
        + g.outputs.iter().filter(|&&o| o == v).count()
}

fn captures(g: &Graph<'_>, name: &str) -> usize {
    let direct = g
        .values
        .iter()
        .filter(|v| v.origin == Origin::Captured && v.name.as_str() == name)
        .count();
    let nested: usize = g
        .nodes
        .iter()
        .flat_map(|n| n.attrs.iter())
        .map(|a| match &a.value {
            AttrValue::G(sub) => captures(sub, name),
            AttrValue::Gs(subs) => subs.iter().map(|s| captures(s, name)).sum(),
            _ => 0,
        })
        .sum();
    direct + nested
}

/// The node before the adapted one that computes `v`, by position in `before`.
fn producer(around: &Around<'_, '_>, v: ValId) -> Option<usize> {
    around.before.iter().rposition(|n| n.outputs.contains(&v))
}

/// A constant input (a `Constant` node's value or an initializer) read as int64s and
/// detached from the node; the constant is removed when nothing else uses it. `None`
/// when the input is neither.
fn take_constant_input(
    g: &mut Graph<'_>,
    around: &mut Around<'_, '_>,
    node: &mut Node<'_>,
    index: usize,
    erase_input_too: bool,
) -> Result<Option<Vec<i64>>, Refusal> {
    let v = node.inputs[index];
    if g.values[v].origin == Origin::Node {
        if let Some(p) = producer(around, v) {
            if around.before[p].op_type.as_str() == "Constant" {
                let values = match around.before[p].attr("value") {
                    Some(AttrValue::T(t)) => read_int64s(t)?,
                    _ => return Err("required undefined attribute 'value'".into()),
                };
                node.inputs.remove(index);
                if uses(g, around, node, v) == 0 {
                    around.before.remove(p);
                }
                return Ok(Some(values));
            }
        }
        return Ok(None);
    }
    let name = g.values[v].name.clone();
    let Some(pos) = g
        .initializers
        .iter()
        .position(|t| t.name() == name.as_str())
    else {
        return Ok(None);
    };
    if erase_input_too || g.values[v].origin == Origin::Initializer {
        let values = read_int64s(&g.initializers[pos])?;
        node.inputs.remove(index);
        if uses(g, around, node, v) == 0 {
            g.initializers.retain(|t| t.name() != name.as_str());
            if erase_input_too {
                g.inputs.retain(|&i| i != v);
            }
        }
        return Ok(Some(values));
    }
    Ok(None)
}

fn restrict(
    g: &Graph<'_>,
    node: &Node<'_>,
    types: &[i32],
    op: &str,
    to: i64,
) -> Result<(), Refusal> {
    for &v in node.inputs.iter().chain(node.outputs.iter()) {
        let e = g.values[v].elem;
        if types.contains(&e) {
            return Err(format!(
                "DataType ({e}) of Input or Output of operator '{op}' is unallowed for Opset Version {to}."
            ));
        }
    }
    Ok(())
}

/// Applies `adapter` to `node` for the step to version `to`; the node that stands in
/// its place afterwards.
pub(super) fn adapt<'a>(
    adapter: Adapter,
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    to: i64,
) -> Result<(), Refusal> {
    let op = node.op_type.as_str().to_owned();
    match adapter {
        Adapter::Compatible => {}
        Adapter::Restrict(types) => restrict(g, node, types, &op, to)?,
        Adapter::RemoveAttr(name) => node.remove_attr(name),
        Adapter::RemoveAttrIfInt(name, value) => {
            if node.has_attr(name) {
                if int(node, name)? != value {
                    return Err(format!("Attribute {name} must have value {value}"));
                }
                node.remove_attr(name);
            }
        }
        Adapter::RemoveAttrIfStr(name, value) => {
            if node.has_attr(name) {
                if string(node, name)? != value.as_bytes() {
                    return Err(format!(
                        "Attribute {name} must have value {value} for this version conversion"
                    ));
                }
                node.remove_attr(name);
            }
        }
        Adapter::RemoveAttrUnlessInt(name, value) => {
            if node.has_attr(name) {
                if int(node, name)? == value {
                    return Err(format!("Attribute {name} must not have value {value}"));
                }
                node.remove_attr(name);
            }
        }
        Adapter::SetInt(name, value) => node.set_attr(name, AttrValue::I(value)),
        Adapter::SetInts(name, values) => node.set_attr(name, AttrValue::Is(values.to_vec())),
        Adapter::SetStr(name, value) => {
            node.set_attr(name, AttrValue::S(value.as_bytes().to_vec().into()))
        }
        Adapter::SetIntIfAbsent(name, value) => {
            if !node.has_attr(name) {
                node.set_attr(name, AttrValue::I(value));
            }
        }
        Adapter::AxesToInput => {
            if node.has_attr("axes") {
                ints_attr_to_input(g, around, node, "axes")?;
            }
        }
        Adapter::AxesToAttribute => {
            input_to_ints_attr(g, around, node, "axes")?;
        }
        Adapter::AxisToInput(index, default) => {
            let axis = if node.has_attr("axis") {
                let a = int(node, "axis")?;
                node.remove_attr("axis");
                a
            } else {
                default
            };
            while node.inputs.len() < index {
                let u = g.add_value(Origin::Undefined);
                let mut empty = Node::new("Undefined");
                empty.outputs.push(u);
                around.before.push(empty);
                node.inputs.push(u);
            }
            let c = constant_before(g, around, int64_tensor(vec![], vec![axis]));
            node.inputs.push(c);
        }
        Adapter::AxisToAttribute(index, default) => {
            let present = node.inputs.len() > index
                && g.values[node.inputs[index]].origin != Origin::Undefined;
            if !present {
                node.set_attr("axis", AttrValue::I(default));
            } else {
                match take_constant_input(g, around, node, index, false)? {
                    Some(values) => {
                        let Some(&first) = values.first() else {
                            return Err("Axis tensor must contain at least one element.".into());
                        };
                        node.set_attr("axis", AttrValue::I(first));
                    }
                    None => return Err(
                        "Axis input must be a constant or initializer for promotion to attribute."
                            .into(),
                    ),
                }
            }
        }
        Adapter::Optional(types, allow_optional, allow_plain, allow_none) => optional(
            g,
            node,
            &op,
            to,
            types,
            allow_optional,
            allow_plain,
            allow_none,
        )?,
        Adapter::BroadcastForward => broadcast_forward(g, around, node, &op)?,
        Adapter::ExtendTypes => extend_types(g, around, node, &op, to)?,
        Adapter::BroadcastBackward => {
            let sizes = int_sizes(g, node, &op, 2)?;
            match old_broadcast(&sizes[0], &sizes[1]) {
                None => {
                    return Err(format!(
                        "{op} being converted from {} to {to} does not have broadcastable inputs.",
                        to + 1
                    ))
                }
                Some(true) => node.set_attr("broadcast", AttrValue::I(1)),
                Some(false) => {}
            }
        }
        Adapter::NoPreviousVersion => return Err(format!("No Previous Version of {op} exists")),
        Adapter::Special(s) => return special(s, g, around, node, &op, to),
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn optional(
    g: &Graph<'_>,
    node: &Node<'_>,
    op: &str,
    to: i64,
    types: &[i32],
    allow_optional: bool,
    allow_plain: bool,
    allow_none: bool,
) -> Result<(), Refusal> {
    if !allow_none && node.inputs.is_empty() {
        return Err(format!(
            "No input to operator '{op}' is unallowed for Opset Version {to}"
        ));
    }
    let declared: Option<&TypeProto<'_>> = if node.inputs.is_empty() {
        match node.attr("type") {
            Some(AttrValue::Tp(t)) => Some(t),
            _ => return Ok(()),
        }
    } else {
        g.values[node.inputs[0]].ty.as_ref()
    };
    let elem = match declared {
        None => {
            if !allow_plain {
                return Err(format!(
                    "Non-Optional input to operator '{op}' is unallowed for Opset Version {to}"
                ));
            }
            g.values[node.inputs[0]].elem
        }
        Some(t) => {
            let is_optional = matches!(t.value, Some(TypeValue::OptionalType(_)));
            if !((allow_optional && is_optional) || (allow_plain && !is_optional)) {
                return Err(format!(
                    "Specified type of Input of operator '{op}' is unallowed for Opset Version {to}"
                ));
            }
            let elem_type = match &t.value {
                Some(TypeValue::OptionalType(o)) => o.elem_type.as_deref(),
                _ => Some(t),
            };
            let tensor = match elem_type.and_then(|e| e.value.as_ref()) {
                Some(TypeValue::SequenceType(s)) => s.elem_type.as_deref(),
                _ => elem_type,
            };
            match tensor.and_then(|t| t.value.as_ref()) {
                Some(TypeValue::TensorType(tt)) => tt.elem_type_raw.unwrap_or(0),
                Some(TypeValue::SparseTensorType(st)) => st.elem_type_raw.unwrap_or(0),
                _ => return Err(format!("unexpected input type of operator '{op}'")),
            }
        }
    };
    if types.contains(&elem) {
        return Err(format!(
            "DataType ({elem}) of Input of operator '{op}' is unallowed for Opset Version {to}"
        ));
    }
    Ok(())
}

fn special<'a>(
    s: Special,
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    op: &str,
    to: i64,
) -> Result<(), Refusal> {
    match s {
        Special::BatchNormalization13To14 => {
            if node.outputs.len() >= 4 {
                return Err(
                    "BatchNormalization outputs 4 and 5 are not supported in Opset 14.".into(),
                );
            }
        }
        Special::Split12To13 => {
            if node.has_attr("split") {
                ints_attr_to_input(g, around, node, "split")?;
            }
        }
        Special::Split13To12 => input_to_ints_attr(g, around, node, "split")?,
        Special::Split17To18 => {
            if !node.has_attr("num_outputs") && node.inputs.len() != 2 {
                node.set_attr("num_outputs", AttrValue::I(node.outputs.len() as i64));
            }
        }
        Special::Dropout11To12 => {
            let ratio = if node.has_attr("ratio") {
                let r = float(node, "ratio")?;
                node.remove_attr("ratio");
                r
            } else {
                0.5
            };
            let c = constant_before(g, around, float_tensor(vec![], vec![ratio]));
            node.inputs.push(c);
        }
        Special::Clip10To11 => {
            let has_min = node.has_attr("min");
            let has_max = node.has_attr("max");
            if has_min {
                let v = float(node, "min")?;
                let c = constant_before(g, around, float_tensor(vec![], vec![v]));
                node.inputs.push(c);
                node.remove_attr("min");
            }
            if has_max {
                if !has_min {
                    let c = constant_before(g, around, float_tensor(vec![], vec![f32::MIN]));
                    node.inputs.push(c);
                }
                let v = float(node, "max")?;
                let c = constant_before(g, around, float_tensor(vec![], vec![v]));
                node.inputs.push(c);
                node.remove_attr("max");
            }
        }
        Special::TopK9To10 => {
            let k = int(node, "k")?;
            let c = constant_before(g, around, int64_tensor(vec![1], vec![k]));
            node.inputs.push(c);
            node.remove_attr("k");
        }
        Special::Slice9To10 => {
            for name in ["starts", "ends"] {
                ints_attr_to_input(g, around, node, name)?;
            }
            if node.has_attr("axes") {
                ints_attr_to_input(g, around, node, "axes")?;
            }
        }
        Special::Pad10To11 => {
            let pads = ints(node, "pads")?;
            // The pads become an initializer named as the IR names it.
            let name = g.fresh_name();
            let mut t = int64_tensor(vec![pads.len() as i64], pads);
            t.name = Some(Str::from(name.clone()));
            let v = g.add_value(Origin::Initializer);
            g.values[v].name = Str::from(name);
            g.values[v].elem = INT64;
            g.values[v].sizes = Some(vec![super::ir::Dim::Value(t.dims[0])]);
            g.initializers.push(t);
            node.inputs.push(v);
            node.remove_attr("pads");
            let constant_mode = match node.attr("mode") {
                None => true,
                Some(AttrValue::S(m)) => m.as_ref() == b"constant",
                Some(_) => return Err("required undefined attribute 'mode'".into()),
            };
            if constant_mode {
                if !node.has_attr("value") {
                    node.set_attr("value", AttrValue::F(0.0));
                }
                let value = float(node, "value")?;
                let c = constant_before(g, around, float_tensor(vec![], vec![value]));
                node.inputs.push(c);
                node.remove_attr("value");
            }
        }
        Special::Resize10To11 => {
            if node.inputs.len() < 2 {
                return Err("Resize in opset 10 needs to have at least 2 inputs.".into());
            }
            let rank = g.values[node.inputs[0]]
                .sizes
                .as_ref()
                .map_or(0, |s| s.len());
            let scales = node.inputs[1];
            node.inputs.push(scales);
            let mut roi = vec![0.0f32; rank];
            roi.extend(std::iter::repeat_n(1.0f32, rank));
            let c = constant_before(g, around, float_tensor(vec![2 * rank as i64], roi));
            node.inputs[1] = c;
        }
        Special::Resize18To17 => {
            if node.has_attr("axes") {
                return Err(
                    "Resize axes is not supported when converting from opset 18 to opset 17."
                        .into(),
                );
            }
            if node.has_attr("coordinate_transformation_mode") {
                let v = string(node, "coordinate_transformation_mode")?;
                if v == b"half_pixel_symmetric" {
                    return Err("Resize coordinate_transformation_mode='half_pixel_symmetric' is not supported when converting to opset 17.".into());
                }
            }
            if node.has_attr("antialias") {
                let v = int(node, "antialias")?;
                if v != 0 {
                    return Err(format!("Resize antialias={v} is not supported when converting from opset 18 to opset 17."));
                }
            }
            if node.has_attr("keep_aspect_ratio_policy")
                && string(node, "keep_aspect_ratio_policy")? != b"stretch"
            {
                return Err("Resize keep_aspect_ratio_policy must be 'stretch' when converting from opset 18 to opset 17.".into());
            }
            node.remove_attr("antialias");
            node.remove_attr("keep_aspect_ratio_policy");
        }
        Special::Scatter16To15 => {
            restrict(g, node, BFLOAT16_NOT_ALLOWED, op, to)?;
            if node.has_attr("reduction") {
                if string(node, "reduction")? != b"none" {
                    return Err(
                        "Attribute reduction must have value none for this version conversion"
                            .into(),
                    );
                }
                node.remove_attr("reduction");
            }
        }
        Special::Scatter18To17 => {
            if node.has_attr("reduction") {
                let r = string(node, "reduction")?;
                if r == b"max" || r == b"min" {
                    return Err("Scatter reduction 'max' and 'min' are not supported when downgrading to opset 17".into());
                }
            }
        }
        Special::GridSample19To20 => {
            if let Some(AttrValue::S(m)) = node.attr("mode") {
                let new = match m.as_ref() {
                    b"bilinear" => Some("linear"),
                    b"bicubic" => Some("cubic"),
                    _ => None,
                };
                if let Some(new) = new {
                    node.set_attr("mode", AttrValue::S(new.as_bytes().to_vec().into()));
                }
            }
        }
        Special::QuantizeLinear21To20 | Special::DequantizeLinear21To20 => {
            restrict(g, node, Q_DQ_20_UNALLOWED_TYPES, op, to)?;
            if node.has_attr("block_size") {
                if int(node, "block_size")? != 0 {
                    return Err(format!(
                        "Blocked quantization is not supported for Opset Version {to}."
                    ));
                }
                node.remove_attr("block_size");
            }
            if s == Special::QuantizeLinear21To20 && node.has_attr("output_dtype") {
                if int(node, "output_dtype")? != 2 && node.inputs.len() < 3 {
                    return Err(format!("Attribute output_dtype is not supported for Opset Version {to}, supply a zero-point tensor instead"));
                }
                node.remove_attr("output_dtype");
            }
        }
        Special::Cast9To8 => {
            if node.inputs.is_empty() {
                return Err("Cast node must have at least 1 input".into());
            }
            if g.values[node.inputs[0]].elem == 8 || int(node, "to")? == 8 {
                return Err("Casting From/To STRING data type is not supported".into());
            }
        }
        Special::Softmax12To13 => return softmax_12_13(g, around, node),
        Special::Softmax13To12 => return softmax_13_12(g, around, node),
        Special::Scan9To8 => {
            // Opset 8 has the leading sequence-length input (left empty here) and a
            // batch axis of 1 on every scanned value; its directions attribute.
            if node.has_attr("scan_input_directions") {
                let directions = ints(node, "scan_input_directions")?;
                node.remove_attr("scan_input_directions");
                node.set_attr("directions", AttrValue::Is(directions));
            }
            for (name, what) in [
                ("scan_output_directions", "output direction"),
                ("scan_input_axes", "input axes"),
                ("scan_output_axes", "output axes"),
            ] {
                if node.has_attr(name) {
                    if ints(node, name)?.iter().any(|&x| x != 0) {
                        return Err(format!("Unsupported {what} for Version 8"));
                    }
                    node.remove_attr(name);
                }
            }
            let length = g.add_value(Origin::Node);
            g.values[length].name = Str::from("");
            g.values[length].elem = 6;
            node.inputs.insert(0, length);
            for i in 1..node.inputs.len() {
                let v = node.inputs[i];
                let mut sizes = vec![super::ir::Dim::Value(1)];
                sizes.extend(g.values[v].sizes.clone().unwrap_or_default());
                g.values[v].sizes = Some(sizes);
            }
            for &v in &node.outputs {
                let mut sizes = vec![super::ir::Dim::Value(1)];
                sizes.extend(g.values[v].sizes.clone().unwrap_or_default());
                g.values[v].sizes = Some(sizes);
            }
        }
        Special::Upsample9To8 => return upsample_9_8(g, around, node),
        Special::Attention24To23 => {
            if node.inputs.len() > 6 {
                return Err(format!("{op} being converted from 24 to 23 has nonpad_kv_seqlen input, which is not supported in opset 23. This conversion cannot be performed."));
            }
        }
        Special::Attention25To24 => {
            for name in ["left_window_size", "right_window_size"] {
                if node.has_attr(name) {
                    let v = int(node, name)?;
                    if v != -1 {
                        return Err(format!("Attention 25->24 downgrade: {name} must be -1 (disabled) for conversion to opset 24, got {v}. Windowed attention is not representable in opset 24."));
                    }
                    node.remove_attr(name);
                }
            }
        }
        Special::Gemm7To6 => {
            let (m, n, c) = gemm_sizes(g, node, op)?;
            let c = &c;
            match old_broadcast(&[m, n], c) {
                None => {
                    return Err(
                        "Gemm being converted from 7 to 6 does not have broadcastable inputs."
                            .into(),
                    )
                }
                Some(true) => node.set_attr("broadcast", AttrValue::I(1)),
                Some(false) => {}
            }
        }
        Special::Reshape5To4 => {
            if node.inputs.len() > 1 {
                match take_constant_input(g, around, node, 1, true)? {
                    Some(shape) => node.set_attr("shape", AttrValue::Is(shape)),
                    None => {
                        return Err("No initializer or constant input to Reshape node found".into())
                    }
                }
            }
        }
        Special::Cast28To27 => {
            restrict(g, node, IR14_TYPES_NOT_IN_IR13, op, to)?;
            let target = int(node, "to")?;
            if IR14_TYPES_NOT_IN_IR13.contains(&(target as i32)) {
                return Err(format!("Attribute to of operator 'Cast' uses DataType ({target}), which is unallowed for Opset Version {to}."));
            }
        }
        Special::QuantizeLinear28To27 => {
            restrict(g, node, IR14_TYPES_NOT_IN_IR13, op, to)?;
            if node.has_attr("output_dtype") {
                let dtype = int(node, "output_dtype")?;
                if IR14_TYPES_NOT_IN_IR13.contains(&(dtype as i32)) {
                    return Err(format!("Attribute output_dtype of operator 'QuantizeLinear' uses DataType ({dtype}), which is unallowed for Opset Version {to}."));
                }
            }
        }
        Special::ReduceLogSum27To28 => {
            const INTEGERS: &[i32] = &[12, 13, 6, 7];
            let checked = node.inputs.first().into_iter().chain(node.outputs.iter());
            for &v in checked {
                let e = g.values[v].elem;
                if INTEGERS.contains(&e) {
                    return Err(format!(
                        "DataType ({e}) of operator '{op}' is not supported in Opset Version {to}."
                    ));
                }
            }
        }
        Special::Mod28To27 => {
            const FLOATS: &[i32] = &[10, 1, 11, 16, 17, 18, 19, 20, 23, 24];
            let fmod = match node.attr("fmod") {
                None => 0,
                Some(_) => int(node, "fmod")?,
            };
            if fmod == 0 {
                let e = node.inputs.first().map_or(0, |&v| g.values[v].elem);
                if e == 0 {
                    return Err("Mod with fmod=0 and unknown input type cannot be downgraded to opset 27. Run shape inference or add value_info with the input type.".into());
                }
                if FLOATS.contains(&e) {
                    return Err("Mod with floating-point inputs and fmod=0 cannot be downgraded to opset 27.".into());
                }
            }
        }
        Special::MaxPool8To7 => {
            if node.outputs.len() == 2 {
                return Err("Opset version 7 of MaxPool cannot include Indices output".into());
            }
            node.remove_attr("storage_order");
        }
        Special::Sum8To7 => {
            let dims = |v: ValId| -> Vec<i64> {
                g.values[v].sizes.as_ref().map_or_else(Vec::new, |s| {
                    s.iter()
                        .map(|d| match d {
                            super::ir::Dim::Value(n) => *n,
                            _ => -1,
                        })
                        .collect()
                })
            };
            for pair in node.inputs.windows(2) {
                let (a, b) = (dims(pair[0]), dims(pair[1]));
                let (big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
                let axis = big.len() - small.len();
                if !small
                    .iter()
                    .zip(&big[axis..])
                    .all(|(x, y)| x == y || *x == 1 || *y == 1)
                {
                    return Err(
                        "the inputs' dimensions do not match, and neither's value is 1".into(),
                    );
                }
            }
        }
        Special::Upsample6To7 => {
            if !(node.has_attr("width_scale") && node.has_attr("height_scale")) {
                return Err(
                    "Upsample in opset 1 needs to have width_scale and height_scale attributes"
                        .into(),
                );
            }
            let width = float(node, "width_scale")?;
            let height = float(node, "height_scale")?;
            let Some(&input) = node.inputs.first() else {
                return Err("Upsample node must have at least 1 input".into());
            };
            if g.values[input].sizes.as_ref().map_or(0, |s| s.len()) != 4 {
                return Err("Upsample in opset 1 supports only 4D input tensor".into());
            }
            node.set_attr("scales", AttrValue::Fs(vec![1.0, 1.0, height, width]));
            node.remove_attr("width_scale");
            node.remove_attr("height_scale");
        }
        Special::Reshape4To5 => {
            node.remove_attr("consumed_inputs");
            ints_attr_to_input(g, around, node, "shape")?;
        }
        Special::Gemm6To7 => {
            let (m, n, c) = gemm_sizes(g, node, op)?;
            let c = &c;
            if !unidirectional_broadcast(&[m, n], c) {
                return Err(
                    "Gemm being converted from 6 to 7 does not have broadcastable inputs.".into(),
                );
            }
            node.remove_attr("broadcast");
        }
        Special::Upsample8To9 => {
            let scales = match node.attr("scales") {
                Some(AttrValue::Fs(v)) => v.clone(),
                _ => return Err("required undefined attribute 'scales'".into()),
            };
            let c = constant_before(g, around, float_tensor(vec![scales.len() as i64], scales));
            node.inputs.push(c);
            node.remove_attr("scales");
        }
        Special::Scan8To9 => {
            // Opset 9 drops Scan's leading sequence-length input and the batch axis of
            // the scanned values.
            let Some(&first) = node.inputs.first() else {
                return Err("Scan node in opset 8 must have at least 1 input".into());
            };
            if !g.values[first].name.as_str().is_empty() {
                return Err("Unsupported conversion to opset 9".into());
            }
            if node.has_attr("directions") {
                let directions = ints(node, "directions")?;
                node.remove_attr("directions");
                node.set_attr("scan_input_directions", AttrValue::Is(directions));
            }
            node.inputs.remove(0);
            for &v in node.inputs.iter().chain(node.outputs.iter()) {
                if let Some(sizes) = g.values[v].sizes.as_mut() {
                    if !sizes.is_empty() {
                        sizes.remove(0);
                    }
                }
            }
        }
        Special::Range27To26 => {
            for &v in node.inputs.iter().chain(node.outputs.iter()) {
                let e = g.values[v].elem;
                if e == 10 || e == 16 {
                    return Err(format!(
                        "DataType ({e}) of input or output of operator '{op}' is not supported in Opset Version {to}."
                    ));
                }
            }
            node.remove_attr("stash_type");
        }
        Special::Scatter10To11 => {
            if node.inputs.len() < 3 {
                return Err("Scatter in opset 10 needs to have at least 3 inputs.".into());
            }
            let axis = if node.has_attr("axis") {
                int(node, "axis")?
            } else {
                0
            };
            let mut new = Node::new("ScatterElements");
            new.set_attr("axis", AttrValue::I(axis));
            new.inputs = node.inputs[..3].to_vec();
            replace_node(g, around, node, new);
        }
        Special::Upsample9To10 => {
            if node.inputs.len() < 2 {
                return Err("Upsample node must have at least 2 inputs".into());
            }
            let mode = match node.attr("mode") {
                Some(AttrValue::S(m)) => m.clone(),
                Some(_) => return Err("required undefined attribute 'mode'".into()),
                None => b"nearest".to_vec().into(),
            };
            let mut new = Node::new("Resize");
            new.set_attr("mode", AttrValue::S(mode));
            new.inputs = node.inputs[..2].to_vec();
            replace_node(g, around, node, new);
        }
    }
    Ok(())
}

/// Softmax and LogSoftmax 12 -> 13: the axis now names one dimension, so a softmax
/// over the trailing dimensions from `axis` runs on the input flattened to 2-D there
/// and is reshaped back.
fn softmax_12_13<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
) -> Result<(), Refusal> {
    if node.inputs.is_empty() {
        return Err("Softmax node must have at least 1 input".into());
    }
    let input = node.inputs[0];
    let rank = g.values[input].sizes.as_ref().map_or(0, |s| s.len()) as i64;
    let mut axis = if node.has_attr("axis") {
        int(node, "axis")?
    } else {
        1
    };
    if axis < 0 {
        axis += rank;
    }
    if axis == rank - 1 {
        node.set_attr("axis", AttrValue::I(-1));
        return Ok(());
    }
    let shape = node_before(g, around, "Shape", vec![input], vec![]);
    let flat = node_before(
        g,
        around,
        "Flatten",
        vec![input],
        vec![("axis", AttrValue::I(axis))],
    );
    node.inputs[0] = flat;
    node.set_attr("axis", AttrValue::I(-1));
    let Some(&out) = node.outputs.first() else {
        return Err("Softmax node must have an output".into());
    };
    let original = g.values[out].name.clone();
    g.values[out].name = Str::from(format!("{}_intermediate", original.as_str()));
    let mut reshape = Node::new("Reshape");
    reshape.inputs = vec![out, shape];
    let r = g.add_value(Origin::Node);
    g.values[r].name = original.clone();
    reshape.outputs.push(r);
    let sizes = g.values[out].sizes.clone();
    if sizes.as_ref().is_some_and(|s| !s.is_empty()) {
        g.values[r].sizes = sizes;
    }
    g.values[r].elem = g.values[out].elem;
    g.values[out].sizes = None;
    // Every use, the graph's outputs included, now reads the reshaped value.
    replace_uses(g, around, out, r);
    around.after.push_front(reshape);
    Ok(())
}

/// Replaces `node` by `new` (given its inputs and attributes): `new` gets fresh
/// outputs that take over the types and uses of the old ones, and a graph output keeps
/// its name, as the IR's `replaceAllUsesWith` does.
fn replace_node<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    mut new: Node<'a>,
) {
    let olds = node.outputs.clone();
    for _ in &olds {
        let v = g.add_value(Origin::Node);
        new.outputs.push(v);
    }
    for (&old, &v) in olds.iter().zip(new.outputs.iter()) {
        if g.values[old].sizes.is_some() {
            g.values[v].sizes = g.values[old].sizes.clone();
        }
        if g.values[old].elem != 0 {
            g.values[v].elem = g.values[old].elem;
        }
        if g.outputs.contains(&old) {
            g.values[v].name = g.values[old].name.clone();
            g.values[old].name = Str::from(g.fresh_name());
        }
        replace_uses(g, around, old, v);
    }
    *node = new;
}

/// Every use of `old` in the graph (nodes and graph outputs) becomes a use of `new`.
fn replace_uses(g: &mut Graph<'_>, around: &mut Around<'_, '_>, old: ValId, new: ValId) {
    for n in around.before.iter_mut().chain(around.after.iter_mut()) {
        for i in n.inputs.iter_mut() {
            if *i == old {
                *i = new;
            }
        }
    }
    for o in g.outputs.iter_mut() {
        if *o == old {
            *o = new;
        }
    }
}

/// Softmax and LogSoftmax 13 -> 12: the axis is made non-negative; a `Flatten` feeding
/// the node (as the upgrade inserts) is removed; a `Reshape` reading its output is
/// refused, as `onnx` ends up refusing it.
fn softmax_13_12<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
) -> Result<(), Refusal> {
    if node.inputs.is_empty() {
        return Err("Softmax node must have at least 1 input".into());
    }
    let input = node.inputs[0];
    let rank = g.values[input].sizes.as_ref().map_or(0, |s| s.len()) as i64;
    let axis = if node.has_attr("axis") {
        int(node, "axis")?
    } else {
        -1
    };
    if axis == -1 {
        node.set_attr("axis", AttrValue::I(rank - 1));
    } else if axis < 0 {
        node.set_attr("axis", AttrValue::I(rank + axis));
    }
    if g.values[input].origin == Origin::Node {
        if let Some(p) = producer(around, input) {
            if around.before[p].op_type.as_str() == "Flatten" {
                let Some(&flat_input) = around.before[p].inputs.first() else {
                    return Err("Flatten node must have at least 1 input".into());
                };
                node.inputs[0] = flat_input;
                let flat_out = around.before[p].outputs.clone();
                if flat_out.iter().any(|&o| uses(g, around, node, o) > 0) {
                    return Err("the Flatten feeding the node has other uses".into());
                }
                around.before.remove(p);
            }
        }
    }
    if let Some(&out) = node.outputs.first() {
        if let Some(reshape) = around
            .after
            .iter()
            .find(|n| n.op_type.as_str() == "Reshape" && n.inputs.contains(&out))
        {
            // A Reshape without outputs fails `onnx`'s assertion; with one, `onnx`
            // rewires its readers and then fails to remove it (its output is still
            // read): the conversion is refused there too.
            if reshape.outputs.is_empty() {
                return Err("Reshape node must have at least 1 output".into());
            }
            return Err("the Reshape that reads the node's output cannot be removed".into());
        }
    }
    Ok(())
}

/// A Gemm's output sizes `M` and `N` (its transposes applied) and the sizes of its
/// input C, which the old-broadcasting adapters check against them.
fn gemm_sizes(g: &Graph<'_>, node: &Node<'_>, op: &str) -> Result<(i64, i64, Vec<i64>), Refusal> {
    let mut sizes = int_sizes(g, node, op, 3)?;
    let c = sizes.pop().expect("three inputs");
    let (a, b) = (&sizes[0], &sizes[1]);
    if a.len() != 2 {
        return Err("Gemm input A must have exactly 2 dimensions".into());
    }
    if b.len() != 2 {
        return Err("Gemm input B must have exactly 2 dimensions".into());
    }
    let trans = |name: &str| matches!(node.attr(name), Some(AttrValue::I(1)));
    let m = if trans("transA") { a[1] } else { a[0] };
    let n = if trans("transB") { b[0] } else { b[1] };
    Ok((m, n, c))
}

/// The integer dimensions of the node's first `count` inputs, which must be exactly
/// that many, each with a known shape of sizes (no names, no unknowns).
fn int_sizes(
    g: &Graph<'_>,
    node: &Node<'_>,
    op: &str,
    count: usize,
) -> Result<Vec<Vec<i64>>, Refusal> {
    if node.inputs.len() != count {
        return Err(format!(
            "{op} in opset version 6 can only broadcast between {count} inputs"
        ));
    }
    let mut all = Vec::with_capacity(count);
    for (i, &v) in node.inputs.iter().enumerate() {
        let Some(sizes) = &g.values[v].sizes else {
            return Err(format!("Shape of input {i} is not available."));
        };
        let mut dims = Vec::with_capacity(sizes.len());
        for d in sizes {
            match d {
                super::ir::Dim::Value(n) => dims.push(*n),
                _ => return Err("Dimension is a param instead of an int.".into()),
            }
        }
        all.push(dims);
    }
    Ok(all)
}

/// Whether `small` broadcasts to `big` in one direction (old-style broadcasting).
fn unidirectional_broadcast(big: &[i64], small: &[i64]) -> bool {
    if big.len() < small.len() {
        return false;
    }
    let axis = big.len() - small.len();
    small
        .iter()
        .zip(&big[axis..])
        .all(|(s, b)| s == b || *s == 1)
}

/// Add, Sub, Mul, Div, Pow 6 -> 7: the `broadcast` and `axis` attributes go; an input
/// broadcast along a middle axis is unsqueezed to trailing ones, as numpy broadcasting
/// needs.
fn broadcast_forward<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    op: &str,
) -> Result<(), Refusal> {
    if node.has_attr("broadcast") {
        let sizes = int_sizes(g, node, op, 2)?;
        let (a, b) = (&sizes[0], &sizes[1]);
        if node.has_attr("axis") {
            let axis = int(node, "axis")?;
            let expected = (a.len().wrapping_sub(b.len())) as i32 as i64;
            if axis != expected {
                let extra = a.len().saturating_sub(b.len());
                let axes: Vec<i64> = (0..extra).map(|i| (b.len() + i) as i64).collect();
                let mut new_sizes: Vec<super::ir::Dim<'a>> =
                    b.iter().map(|&d| super::ir::Dim::Value(d)).collect();
                new_sizes.extend((0..extra).map(|_| super::ir::Dim::Value(1)));
                let out = node_before(
                    g,
                    around,
                    "Unsqueeze",
                    vec![node.inputs[1]],
                    vec![("axes", AttrValue::Is(axes))],
                );
                g.values[out].sizes = Some(new_sizes);
                node.inputs[1] = out;
            }
        }
        node.remove_attr("broadcast");
    }
    node.remove_attr("axis");
    let sizes = int_sizes(g, node, op, 2)?;
    let (a, b) = if sizes[0].len() >= sizes[1].len() {
        (&sizes[0], &sizes[1])
    } else {
        (&sizes[1], &sizes[0])
    };
    let axis = a.len() - b.len();
    if !b
        .iter()
        .zip(&a[axis..])
        .all(|(x, y)| x == y || *x == 1 || *y == 1)
    {
        return Err("the inputs' dimensions do not match, and neither's value is 1".into());
    }
    Ok(())
}

/// A `Cast` of `input` to `to`, its output named `name` with `sizes` (a scalar shape
/// when unknown, as the IR copies an absent shape).
fn cast_node<'a>(g: &mut Graph<'a>, input: ValId, to: i32, name: String) -> Node<'a> {
    let mut cast = Node::new("Cast");
    cast.inputs.push(input);
    cast.set_attr("to", AttrValue::I(i64::from(to)));
    let out = g.add_value(Origin::Node);
    g.values[out].name = Str::from(name);
    g.values[out].sizes = Some(g.values[input].sizes.clone().unwrap_or_default());
    g.values[out].elem = to;
    cast.outputs.push(out);
    cast
}

/// 9 -> 8 for operators whose opset-9 version accepts more types: inputs of other types
/// than float, float16 and double are cast to float, and the output is cast back.
fn extend_types<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
    op: &str,
    to: i64,
) -> Result<(), Refusal> {
    const SUPPORTED: &[i32] = &[1, 10, 11];
    const UNSUPPORTED: &[i32] = &[15, 14, 8];
    if node.outputs.len() != 1 {
        return Err(format!(
            "{op} being converted from {} to {to} must have exactly one output, but found {}.",
            to + 1,
            node.outputs.len()
        ));
    }
    let out = node.outputs[0];
    let input_type = node.inputs.first().map_or(-1, |&v| g.values[v].elem);
    let output_type = g.values[out].elem;
    if UNSUPPORTED.contains(&input_type) {
        return Err("Unsupported Input Type".into());
    }
    if UNSUPPORTED.contains(&output_type) {
        return Err("Unsupported Output Type".into());
    }
    let cast_input = op != "Constant";
    let cast_output = op != "Greater" && op != "Less";
    if cast_input && !SUPPORTED.contains(&input_type) {
        for i in 0..node.inputs.len() {
            let cast = cast_node(g, node.inputs[i], 1, format!("pre_cast_{i}"));
            node.inputs[i] = cast.outputs[0];
            around.before.push(cast);
        }
    }
    if cast_output && !SUPPORTED.contains(&output_type) {
        let original = g.values[out].name.as_str().to_owned();
        g.values[out].elem = 1;
        g.values[out].name = Str::from(format!("{original}_intermediate_output"));
        let cast = cast_node(g, out, output_type, original);
        let new = cast.outputs[0];
        replace_uses(g, around, out, new);
        around.after.push_front(cast);
    }
    Ok(())
}

/// Old-style broadcasting of `small` to `big`: `None` when it does not broadcast, else
/// whether it needs to (`big` has more dimensions, or a dimension of `small` is 1 where
/// `big`'s is not).
fn old_broadcast(big: &[i64], small: &[i64]) -> Option<bool> {
    if big.len() < small.len() {
        return None;
    }
    let axis = big.len() - small.len();
    let mut needed = false;
    for (s, b) in small.iter().zip(&big[axis..]) {
        if s != b && *s != 1 {
            return None;
        }
        needed |= s != b;
    }
    Some(big.len() > small.len() || needed)
}

/// The float values of a tensor, from its `float_data` or its raw bytes.
fn read_floats(t: &TensorProto<'_>) -> Result<Vec<f32>, Refusal> {
    if t.lazy_data.is_some() {
        return Err("the tensor's weights are not loaded (structure-only model)".into());
    }
    match &t.raw_data {
        Some(raw) => Ok(raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()),
        None => Ok(t.float_data.clone()),
    }
}

/// Upsample 9 -> 8: the `scales` input, an initializer or a `Constant`, becomes the
/// attribute again, and the constant is removed.
fn upsample_9_8<'a>(
    g: &mut Graph<'a>,
    around: &mut Around<'_, 'a>,
    node: &mut Node<'a>,
) -> Result<(), Refusal> {
    if node.inputs.len() != 2 {
        return Err("Upsample in opset 9 needs to have 2 inputs.".into());
    }
    let scales = node.inputs[1];
    let name = g.values[scales].name.as_str().to_owned();
    if let Some(t) = g.initializers.iter().find(|t| t.name() == name) {
        let values = read_floats(t)?;
        node.set_attr("scales", AttrValue::Fs(values));
        node.inputs.remove(1);
        g.initializers.retain(|t| t.name() != name);
        if let Some(i) = g
            .inputs
            .iter()
            .position(|&v| g.values[v].name.as_str() == name)
        {
            g.inputs.remove(i);
        }
        return Ok(());
    }
    let is_scales = |n: &Node<'_>| {
        n.op_type.as_str() == "Constant"
            && n.outputs
                .first()
                .is_some_and(|&o| g.values[o].name.as_str() == name)
    };
    let found = around
        .before
        .iter()
        .position(is_scales)
        .map(|i| (true, i))
        .or_else(|| around.after.iter().position(is_scales).map(|i| (false, i)));
    let Some((in_before, i)) = found else {
        return Err("Unsupported conversion due to unavailable input: scale".into());
    };
    let constant = if in_before {
        &around.before[i]
    } else {
        &around.after[i]
    };
    let values = match constant.attr("value") {
        Some(AttrValue::T(t)) => read_floats(t)?,
        _ => return Err("required undefined attribute 'value'".into()),
    };
    let out = constant.outputs[0];
    node.set_attr("scales", AttrValue::Fs(values));
    node.inputs.remove(1);
    if uses(g, around, node, out) > 0 {
        return Err("the scales constant has other uses".into());
    }
    if in_before {
        around.before.remove(i);
    } else {
        around.after.remove(i);
    }
    Ok(())
}
