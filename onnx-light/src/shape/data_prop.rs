//! Data propagation, `onnx`'s `data_prop`: after a node's types are inferred, the values
//! of the small integer tensors it computes from shapes (`Shape`, `Size`, `Gather`,
//! `Concat`, `Slice`, `Squeeze`, `Unsqueeze`, `Cast`, `Add`, `Sub`, `Mul`) are worked out
//! as far as they can be, each value a size, a symbolic name or unknown. The rules that
//! take a shape as input (`Reshape`, `Expand`, `ConstantOfShape`, `Resize`'s sizes,
//! `AffineGrid`) then read these values when the input is not a constant (see
//! `kit::shape_input`).
//!
//! As in `onnx`, an operator propagates from the opset version its schema gained the
//! function (`Shape` and `Gather` always, `Add`, `Sub` and `Mul` from 14, the others
//! from 13), integer constants of rank 0 or 1 are values, and an input of type
//! `int64[n]` without known values is read as `n` unknown values (recorded, so later
//! nodes see it too). One table serves a graph and the graphs in its nodes, each seeing
//! the values the others found; a function's body starts with the values of its
//! caller's inputs and gives back those of its outputs.

use super::kit::{has_shape, Propagated};
use super::types::{shape_of, Constants};
use crate::onnx::{
    AttributeProto, DataType, Dimension, NodeProto, TensorShapeProto, TypeProto, TypeValue,
};

/// Why a node's data propagation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failure {
    /// The node's error, recorded as an inference error is.
    Node(String),
    /// An error that ends the whole inference in either mode, as in `onnx` (a node
    /// missing an input the propagation reads).
    Model(String),
}

/// The values propagated so far in a graph.
#[derive(Debug, Default)]
pub(super) struct Propagation {
    values: Propagated,
}

/// The most unknown values an input is read as from its length.
const MAX_LENGTH: i64 = 1024;

impl Propagation {
    /// The values found, by name.
    pub(super) fn values(&self) -> &Propagated {
        &self.values
    }

    /// The values a function's body starts with, called with `actuals` for its
    /// `formals`: those found for the caller's inputs, under the formal names.
    pub(super) fn for_call<A: AsRef<str>, F: AsRef<str>>(
        &self,
        actuals: &[A],
        formals: &[F],
    ) -> Propagation {
        let mut values = Propagated::new();
        for (actual, formal) in actuals.iter().zip(formals) {
            let actual = actual.as_ref();
            if let Some(v) = self.values.get(actual).filter(|_| !actual.is_empty()) {
                values.insert(formal.as_ref().to_string(), v.clone());
            }
        }
        Propagation { values }
    }

    /// Records the values `body` found for a function's `formals` outputs under the
    /// caller's `actuals` names (replacing any found before).
    pub(super) fn returned<A: AsRef<str>, F: AsRef<str>>(
        &mut self,
        body: &Propagation,
        formals: &[F],
        actuals: &[A],
    ) {
        for (formal, actual) in formals.iter().zip(actuals) {
            let actual = actual.as_ref();
            if let Some(v) = body
                .values
                .get(formal.as_ref())
                .filter(|_| !actual.is_empty())
            {
                self.values.insert(actual.to_string(), v.clone());
            }
        }
    }

    /// Propagates the values of `node`'s output (after its types were inferred and
    /// merged): `input_types` are its inputs' known types, `constants` the constants in
    /// reach, `version` the opset version of its domain.
    pub(super) fn run(
        &mut self,
        node: &NodeProto<'_>,
        version: i64,
        input_types: &[Option<&TypeProto<'_>>],
        constants: &Constants,
    ) -> Result<(), Failure> {
        if !matches!(node.domain(), "" | "ai.onnx") || version < 1 {
            return Ok(());
        }
        let mut ctx = Context {
            node,
            types: input_types,
            constants,
            values: &mut self.values,
        };
        match node.op_type() {
            "Shape" => shape(&mut ctx, version),
            "Gather" => gather(&mut ctx),
            "Size" if version >= 13 => size(&mut ctx),
            "Concat" if version >= 13 => concat(&mut ctx),
            "Slice" if version >= 13 => slice(&mut ctx),
            "Cast" | "Squeeze" | "Unsqueeze" if version >= 13 => copy(&mut ctx),
            "Add" | "Sub" | "Mul" if version >= 14 => arithmetic(&mut ctx),
            _ => Ok(()),
        }
    }
}

/// What a propagation function sees, as `onnx`'s `DataPropagationContext`.
struct Context<'c, 'a> {
    node: &'c NodeProto<'a>,
    types: &'c [Option<&'c TypeProto<'a>>],
    constants: &'c Constants,
    values: &'c mut Propagated,
}

fn node_error(reason: impl Into<String>) -> Failure {
    Failure::Node(reason.into())
}

impl Context<'_, '_> {
    /// The values of input `i` (`onnx`'s `getInputData`): propagated ones, else an
    /// integer constant's of rank 0 or 1, else as many unknown values as the length of
    /// an input of rank 1. The last two are recorded for later nodes too.
    fn input(&mut self, i: usize) -> Result<Option<TensorShapeProto<'static>>, Failure> {
        let Some(name) = self.node.input.get(i) else {
            return Err(Failure::Model(format!("Input {i} is out of bounds.")));
        };
        let name: &str = name.as_ref();
        if let Some(v) = self.values.get(name) {
            return Ok(Some(v.clone()));
        }
        if let Some(c) = self.constants.get(name).filter(|c| c.dims.len() <= 1) {
            // Only integers make values; a constant of another type has none.
            if !(c.is(DataType::Int64) || c.is(DataType::Int32)) {
                return Ok(None);
            }
            let Some(ints) = c.ints() else {
                return Ok(None);
            };
            let v = shape_of(ints.iter().map(|&x| Dimension::value(x)).collect());
            self.values.insert(name.to_string(), v.clone());
            return Ok(Some(v));
        }
        let length = match self.input_type(i).and_then(|t| t.value.as_ref()) {
            Some(TypeValue::TensorType(tt)) => tt
                .shape
                .as_ref()
                .filter(|s| s.dim.len() == 1)
                .and_then(|s| s.dim[0].as_value()),
            _ => None,
        };
        match length {
            Some(len) if len <= MAX_LENGTH => {
                let v = shape_of(vec![Dimension::unknown(); len.max(0) as usize]);
                self.values.insert(name.to_string(), v.clone());
                Ok(Some(v))
            }
            _ => Ok(None),
        }
    }

    fn input_type(&self, i: usize) -> Option<&TypeProto<'_>> {
        self.types.get(i).copied().flatten()
    }

    /// The attribute `name` (the last one so named, as `onnx` keeps it).
    fn attribute(&self, name: &str) -> Option<&AttributeProto<'_>> {
        self.node.attribute.iter().rev().find(|a| a.name() == name)
    }

    /// The integer of attribute `name`: `default` when it is absent, 0 when it holds no
    /// integer (as `onnx`'s `getAttribute`).
    fn attr_int(&self, name: &str, default: i64) -> i64 {
        self.attribute(name).map_or(default, |a| a.i.unwrap_or(0))
    }

    /// Records `value` for the node's first output.
    fn output(&mut self, value: TensorShapeProto<'static>) -> Result<(), Failure> {
        let Some(name) = self.node.output.first() else {
            return Err(Failure::Model("Input 0 is out of bounds.".to_string()));
        };
        if self.values.contains_key(name.as_ref() as &str) {
            return Err(node_error("Data for input  0 already exists."));
        }
        self.values.insert(name.to_string(), value);
        Ok(())
    }

    /// Whether the `axis` attribute names the first axis (`onnx`'s `axisIsZero`): a
    /// negative one only when input 0's rank is known.
    fn axis_is_zero(&self, default_zero: bool) -> Result<bool, Failure> {
        let Some(a) = self.attribute("axis") else {
            if default_zero {
                return Ok(true);
            }
            return Err(node_error("Required attribute axis is missing"));
        };
        // `onnx` holds the axis in an `int`.
        let axis = i64::from(a.i.unwrap_or(0) as i32);
        if axis >= 0 {
            return Ok(axis == 0);
        }
        let rank = match self.input_type(0).and_then(|t| t.value.as_ref()) {
            Some(TypeValue::TensorType(tt)) => match &tt.shape {
                Some(s) => s.dim.len() as i64,
                None => return Ok(false),
            },
            _ => return Ok(false),
        };
        if axis < -rank {
            return Err(node_error("axis must be in [-rank, rank-1]."));
        }
        Ok(axis + rank == 0)
    }
}

/// The dimensions of a tensor type's shape; none for any other type (`onnx` reads the
/// tensor type's shape, empty when the type is another).
fn tensor_dims<'t>(t: &'t TypeProto<'_>) -> &'t [Dimension<'t>] {
    match &t.value {
        Some(TypeValue::TensorType(tt)) => tt.shape.as_ref().map_or(&[], |s| s.dim.as_slice()),
        _ => &[],
    }
}

fn owned(d: &Dimension<'_>) -> Dimension<'static> {
    crate::IntoOwned::into_owned(crate::Reborrow::reborrow(d))
}

/// `Shape`: the input's dimensions (from opset 15, those from `start` to `end`).
fn shape(ctx: &mut Context<'_, '_>, version: i64) -> Result<(), Failure> {
    let Some(t) = ctx.input_type(0).filter(|t| has_shape(t)) else {
        return Ok(());
    };
    if version < 15 {
        let Some(TypeValue::TensorType(tt)) = &t.value else {
            return Ok(());
        };
        let Some(s) = &tt.shape else {
            return Ok(());
        };
        let dims = s.dim.iter().map(owned).collect();
        return ctx.output(shape_of(dims));
    }
    let dims = tensor_dims(t);
    let rank = dims.len() as i64;
    let clamp = |v: i64| {
        let v = if v < 0 { v + rank } else { v };
        v.clamp(0, rank)
    };
    let start = clamp(ctx.attr_int("start", 0));
    let end = clamp(ctx.attr_int("end", rank));
    let kept = (start..end).map(|d| owned(&dims[d as usize])).collect();
    ctx.output(shape_of(kept))
}

/// `Size`: the number of values of the input.
fn size(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    if let Some(v) = ctx.input(0)? {
        let count = Dimension::value(v.dim.len() as i64);
        ctx.output(shape_of(vec![count]))?;
    }
    Ok(())
}

/// `Concat` along the first axis: the inputs' values one after the other.
fn concat(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    if !ctx.axis_is_zero(false)? {
        return Ok(());
    }
    let mut dims = Vec::new();
    for i in 0..ctx.node.input.len() {
        let Some(v) = ctx.input(i)? else {
            return Ok(());
        };
        dims.extend(v.dim);
    }
    if dims.is_empty() {
        return Ok(());
    }
    ctx.output(shape_of(dims))
}

/// `Gather` along the first axis: the values at the known indices.
fn gather(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    if !ctx.axis_is_zero(true)? {
        return Ok(());
    }
    let Some(data) = ctx.input(0)? else {
        return Ok(());
    };
    let Some(indices) = ctx.input(1)? else {
        return Ok(());
    };
    let len = data.dim.len() as i64;
    let mut dims = Vec::with_capacity(indices.dim.len());
    for index in &indices.dim {
        let Some(at) = index.as_value() else {
            return Ok(());
        };
        // `onnx` narrows the index to an `int` first.
        if i32::try_from(at).is_err() {
            return Err(node_error(format!(
                "narrow: value {at} cannot be represented in target type"
            )));
        }
        if at >= len || at < -len {
            return Err(node_error("indices must be in [-rank, rank-1]."));
        }
        let at = if at < 0 { at + len } else { at };
        dims.push(data.dim[at as usize].clone());
    }
    if dims.is_empty() {
        return Ok(());
    }
    ctx.output(shape_of(dims))
}

/// `onnx`'s clamping of a slice's bounds to a length, as its `Slice` rule does it.
fn slice_bounds(len: i64, start: i64, end: i64, step: i64) -> Result<(i64, i64), Failure> {
    if step == 0 {
        return Err(node_error("'step' cannot be 0 for Slice"));
    }
    if len == 0 {
        return Ok((0, 0));
    }
    let start = if start < 0 {
        start.saturating_add(len)
    } else {
        start
    };
    let end = if end < 0 {
        end.saturating_add(len)
    } else {
        end
    };
    if step < 0 {
        Ok((start.clamp(0, len - 1), end.clamp(-1, len - 1)))
    } else {
        Ok((start.clamp(0, len), end.clamp(0, len)))
    }
}

/// `Slice` of one range along the first axis. An unknown start, end or axis reads as 0,
/// as in `onnx`.
fn slice(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    let data = ctx.input(0)?;
    let starts = ctx.input(1)?;
    let ends = ctx.input(2)?;
    let count = ctx.node.input.len();
    let axes = if count >= 4 {
        match ctx.input(3)? {
            Some(a) => Some(a),
            None => return Ok(()),
        }
    } else {
        None
    };
    let steps = if count >= 5 {
        match ctx.input(4)? {
            Some(s) => Some(s),
            None => return Ok(()),
        }
    } else {
        None
    };
    let (Some(data), Some(starts), Some(ends)) = (data, starts, ends) else {
        return Ok(());
    };
    if starts.dim.len() != ends.dim.len() {
        return Err(node_error(format!(
            "Input rank for starts and ends should be the same: ({}) vs ({}).",
            starts.dim.len(),
            ends.dim.len()
        )));
    }
    let value = |d: &Dimension<'_>| d.as_value().unwrap_or(0);
    let first_axis = axes
        .as_ref()
        .is_none_or(|a| a.dim.len() == 1 && value(&a.dim[0]) == 0);
    if !(first_axis && starts.dim.len() == 1 && ends.dim.len() == 1) {
        return Ok(());
    }
    let step = match &steps {
        None => 1,
        Some(s) if s.dim.len() != 1 => return Ok(()),
        Some(s) => match s.dim[0].as_value() {
            Some(v) => v,
            None => return Ok(()),
        },
    };
    let len = data.dim.len() as i64;
    let (start, end) = slice_bounds(len, value(&starts.dim[0]), value(&ends.dim[0]), step)?;
    let mut dims = Vec::new();
    let mut i = start;
    while (step > 0 && i < end) || (step < 0 && i > end) {
        dims.push(data.dim[i as usize].clone());
        i += step;
    }
    if dims.is_empty() {
        return Ok(());
    }
    ctx.output(shape_of(dims))
}

/// `Cast`, `Squeeze`, `Unsqueeze`: the input's values unchanged.
fn copy(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    match ctx.input(0)? {
        Some(v) => ctx.output(v),
        None => Ok(()),
    }
}

/// `Add`, `Sub`, `Mul` of two lists of values (one of them may be a single value):
/// known sizes combine, anything else is unknown.
fn arithmetic(ctx: &mut Context<'_, '_>) -> Result<(), Failure> {
    let a = ctx.input(0)?;
    let b = ctx.input(1)?;
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(());
    };
    let op = ctx.node.op_type();
    let (la, lb) = (a.dim.len(), b.dim.len());
    if la != lb && la != 1 && lb != 1 {
        return Err(node_error(format!(
            "Invalid rank for {op} broadcasting: ({la}) vs ({lb})."
        )));
    }
    let len = if la == 1 { lb } else { la };
    let mut dims = Vec::with_capacity(len);
    for i in 0..len {
        let x = &a.dim[if la == 1 { 0 } else { i }];
        let y = &b.dim[if lb == 1 { 0 } else { i }];
        let (Some(x), Some(y)) = (x.as_value(), y.as_value()) else {
            dims.push(Dimension::unknown());
            continue;
        };
        let v = match op {
            "Add" => x.checked_add(y),
            "Sub" => x.checked_sub(y),
            _ => x.checked_mul(y),
        };
        let v = v.ok_or_else(|| {
            node_error(format!("Integer overflow in {op} during data propagation"))
        })?;
        dims.push(Dimension::value(v));
    }
    ctx.output(shape_of(dims))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::dims;
    use super::super::test_support::node;
    use crate::onnx::*;
    use crate::shape::{infer_shapes, InferOptions};

    /// A model of `nodes` with the given inputs (`name`, element type, dimensions) and
    /// int64 initializers, in opset `opset`.
    fn model(
        opset: i64,
        nodes: Vec<NodeProto<'static>>,
        inputs: &[(&str, DataType, &[&str])],
        initializers: &[(&str, &[i64], &[i64])],
    ) -> ModelProto<'static> {
        let mut g = GraphProto::named("g");
        for (name, elem, shape) in inputs {
            g.input
                .push(ValueInfoProto::tensor(name.to_string(), *elem, dims(shape)));
        }
        for (name, shape, values) in initializers {
            let t = TensorProto::from_vec(name.to_string(), shape.to_vec(), values.to_vec());
            g.initializer.push(t.unwrap());
        }
        g.node = nodes;
        ModelProto::new(g, vec![OperatorSetIdProto::new("", opset)])
    }

    /// The `value_info` entries as `name: type` after inference with `options`, or the
    /// error's text.
    fn infer(mut m: ModelProto<'static>, options: &InferOptions) -> Result<Vec<String>, String> {
        infer_shapes(&mut m, options).map_err(|e| e.to_string())?;
        let g = m.graph.unwrap();
        Ok(g.value_info
            .iter()
            .map(|vi| format!("{}: {}", vi.name(), vi.r#type.as_ref().unwrap()))
            .collect())
    }

    fn strict() -> InferOptions {
        InferOptions::default().strict_mode(true).data_prop(true)
    }

    /// The last `value_info` entry.
    fn last(got: Result<Vec<String>, String>) -> String {
        got.unwrap().pop().unwrap()
    }

    #[test]
    fn a_shape_gathered_and_concatenated_gives_reshape_its_symbolic_dimension() {
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Gather", &["s", "zero"], &["n"]),
                node("Unsqueeze", &["n", "axes"], &["u"]),
                node("Concat", &["u", "m1"], &["c"]).with_attribute(AttributeProto::int("axis", 0)),
                node("Reshape", &["x", "c"], &["y"]),
            ],
            &[("x", DataType::Float, &["N", "3", "4"])],
            &[
                ("zero", &[], &[0]),
                ("axes", &[1], &[0]),
                ("m1", &[1], &[-1]),
            ],
        );
        assert_eq!(last(infer(m.clone(), &strict())), "y: float[N,unk__0]");
        // Without data propagation only the rank is known.
        let without = InferOptions::default().strict_mode(true);
        assert_eq!(last(infer(m, &without)), "y: float[unk__0,unk__1]");
    }

    #[test]
    fn shape_slices_arithmetic_and_sizes_propagate_known_and_symbolic_values() {
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Slice", &["s", "one", "three"], &["hw"]),
                node("Mul", &["hw", "two"], &["hw2"]),
                node("Slice", &["s", "zero", "one"], &["n"]),
                node("Concat", &["n", "hw2"], &["c"])
                    .with_attribute(AttributeProto::int("axis", 0)),
                node("ConstantOfShape", &["c"], &["o"]),
                node("Size", &["c"], &["size"]),
                node("Unsqueeze", &["size", "zero"], &["su"]),
                node("ConstantOfShape", &["su"], &["p"]),
            ],
            &[("x", DataType::Float, &["N", "3", "5"])],
            &[
                ("zero", &[1], &[0]),
                ("one", &[1], &[1]),
                ("three", &[1], &[3]),
                ("two", &[1], &[2]),
            ],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[5], "o: float[N,6,10]");
        assert_eq!(got[8], "p: float[3]");
    }

    #[test]
    fn shape_start_and_negative_slice_steps_pick_the_dimensions() {
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]).with_attribute(AttributeProto::int("start", 1)),
                node("ConstantOfShape", &["s"], &["c"]),
                node("Shape", &["x"], &["t"]),
                node("Expand", &["b", "t"], &["e"]),
                node("Slice", &["t", "st", "en", "ax", "sp"], &["r"]),
                node("ConstantOfShape", &["r"], &["o"]),
            ],
            &[
                ("x", DataType::Float, &["N", "3", "W"]),
                ("b", DataType::Float, &["1"]),
            ],
            &[
                ("st", &[1], &[-1]),
                ("en", &[1], &[-10]),
                ("ax", &[1], &[0]),
                ("sp", &[1], &[-2]),
            ],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[1], "c: float[3,W]");
        assert_eq!(got[3], "e: float[N,3,W]");
        assert_eq!(got[5], "o: float[W,N]");
    }

    #[test]
    fn a_constant_node_and_an_input_of_known_length_give_values() {
        // `value_ints` makes values; an int64[2] input reads as two unknown values.
        let k = node("Constant", &[], &["k"])
            .with_attribute(AttributeProto::ints("value_ints", [2, -1]));
        let m = model(
            21,
            vec![
                k,
                node("Shape", &["x"], &["s"]),
                node("Gather", &["s", "i"], &["g"]),
                node("Concat", &["g", "k"], &["c"]).with_attribute(AttributeProto::int("axis", 0)),
                node("Reshape", &["x", "c"], &["y"]),
                node("Concat", &["p", "k"], &["q"]).with_attribute(AttributeProto::int("axis", 0)),
                node("Reshape", &["x", "q"], &["z"]),
            ],
            &[
                ("x", DataType::Float, &["B", "4", "6"]),
                ("p", DataType::Int64, &["2"]),
            ],
            &[("i", &[1], &[0])],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[4], "y: float[B,2,unk__0]");
        assert_eq!(got[6], "z: float[unk__1,unk__2,2,unk__3]");
    }

    #[test]
    fn operators_without_propagation_in_the_opset_stop_it() {
        // `Div` never propagates; a negative `Concat` axis is the first one for rank 1.
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Concat", &["s", "s"], &["c"]).with_attribute(AttributeProto::int("axis", -1)),
                node("Div", &["c", "one"], &["d"]),
                node("Reshape", &["z", "d"], &["y"]),
                node("Reshape", &["z", "c"], &["y2"]),
            ],
            &[
                ("x", DataType::Float, &["2", "3"]),
                ("z", DataType::Float, &["36"]),
            ],
            &[("one", &[1], &[1])],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[3], "y: float[unk__0,unk__1,unk__2,unk__3]");
        assert_eq!(got[4], "y2: float[2,3,2,3]");
        // `Concat` propagates from opset 13 only; `Shape` always.
        let m = model(
            12,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Concat", &["s", "s"], &["c"]).with_attribute(AttributeProto::int("axis", 0)),
                node("ConstantOfShape", &["c"], &["y"]),
                node("ConstantOfShape", &["s"], &["y2"]),
            ],
            &[("x", DataType::Float, &["2", "3"])],
            &[],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[2], "y: float[unk__0,unk__1,unk__2,unk__3]");
        assert_eq!(got[3], "y2: float[2,3]");
    }

    #[test]
    fn resize_sizes_and_affine_grid_size_take_propagated_values() {
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Resize", &["x", "", "", "s"], &["r"]),
            ],
            &[("x", DataType::Float, &["N", "3", "8", "8"])],
            &[],
        );
        // A symbolic size is not a size: Resize leaves it unknown.
        assert_eq!(last(infer(m, &strict())), "r: float[unk__0,3,8,8]");
        let m = model(
            20,
            vec![
                node("Concat", &["nc", "hw"], &["size"])
                    .with_attribute(AttributeProto::int("axis", 0)),
                node("AffineGrid", &["theta", "size"], &["g"]),
            ],
            &[
                ("theta", DataType::Float, &["N", "2", "3"]),
                ("nc", DataType::Int64, &["2"]),
            ],
            &[("hw", &[2], &[16, 16])],
        );
        assert_eq!(last(infer(m, &strict())), "g: float[unk__0,16,16,2]");
    }

    #[test]
    fn propagation_errors_are_node_errors_or_end_the_inference() {
        let gather = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Gather", &["s", "i"], &["g"]),
            ],
            &[("x", DataType::Float, &["N", "3"])],
            &[("i", &[1], &[5])],
        );
        let e = infer(gather.clone(), &strict()).unwrap_err();
        assert!(e.contains("indices must be in [-rank, rank-1]."), "{e}");
        // Lax: the node's types stay.
        let lax = InferOptions::default().data_prop(true);
        assert_eq!(last(infer(gather, &lax)), "g: int64[1]");
        let overflow = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Mul", &["s", "four"], &["m"]),
            ],
            &[("x", DataType::Float, &["4611686018427387904"])],
            &[("four", &[1], &[4])],
        );
        let e = infer(overflow, &strict()).unwrap_err();
        assert!(
            e.contains("Integer overflow in Mul during data propagation"),
            "{e}"
        );
        // An `Add` missing its second input ends the inference even when lax.
        let add = model(
            21,
            vec![node("Shape", &["x"], &["s"]), node("Add", &["s"], &["a"])],
            &[("x", DataType::Float, &["N", "3"])],
            &[],
        );
        let e = infer(add.clone(), &lax).unwrap_err();
        assert!(e.contains("Input 1 is out of bounds."), "{e}");
        infer(add, &InferOptions::default()).unwrap();
    }

    #[test]
    fn graphs_in_nodes_share_the_values_with_the_graph_around_them() {
        // The `else` branch reads `c`, found outside; `after` reads `ec`, found inside.
        let mut then_branch = GraphProto::named("then");
        then_branch.node.push(node("Reshape", &["x", "c"], &["ty"]));
        then_branch.output.push(ValueInfoProto {
            name: Some("ty".into()),
            ..Default::default()
        });
        let mut else_branch = GraphProto::named("else");
        else_branch.node = vec![
            node("Shape", &["x"], &["es"]),
            node("Concat", &["es", "c"], &["ec"]).with_attribute(AttributeProto::int("axis", 0)),
            node("Reshape", &["x", "c"], &["ey"]),
        ];
        else_branch.output.push(ValueInfoProto {
            name: Some("ey".into()),
            ..Default::default()
        });
        let branch = node("If", &["cond"], &["y"])
            .with_attribute(AttributeProto::graph("then_branch", then_branch))
            .with_attribute(AttributeProto::graph("else_branch", else_branch));
        let m = model(
            21,
            vec![
                node("Shape", &["x"], &["s"]),
                node("Gather", &["s", "zero"], &["n"]),
                node("Concat", &["n", "m1"], &["c"]).with_attribute(AttributeProto::int("axis", 0)),
                branch,
                node("Reshape", &["x", "ec"], &["after"]),
            ],
            &[
                ("x", DataType::Float, &["B", "3", "4"]),
                ("cond", DataType::Bool, &[]),
            ],
            &[("zero", &[1], &[0]), ("m1", &[1], &[-1])],
        );
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[3], "y: float[B,unk__2]");
        assert_eq!(got[4], "after: float[B,3,4,B,unk__3]");
    }

    #[test]
    fn a_local_function_gets_its_callers_values_and_returns_its_own() {
        let function =
            |name: &str, input: &str, output: &str, body: Vec<NodeProto<'static>>| FunctionProto {
                name: Some(name.to_string().into()),
                domain: Some("local".into()),
                input: vec![input.to_string().into()],
                output: vec![output.to_string().into()],
                node: body,
                opset_import: vec![OperatorSetIdProto::new("", 21)],
                ..Default::default()
            };
        let call = |op: &str, input: &str, output: &str| {
            let mut n = node(op, &[input], &[output]);
            n.domain = Some("local".into());
            n
        };
        let ints = |name: &str, values: Vec<i64>| {
            node("Constant", &[], &[name])
                .with_attribute(AttributeProto::ints("value_ints", values))
        };
        let mut m = model(
            21,
            vec![
                call("Dims", "x", "d"),
                node("ConstantOfShape", &["d"], &["z"]),
                node("Shape", &["x"], &["s"]),
                call("First", "s", "f"),
                node("ConstantOfShape", &["f"], &["z2"]),
            ],
            &[("x", DataType::Float, &["B", "3", "W"])],
            &[],
        );
        m.opset_import.push(OperatorSetIdProto::new("local", 1));
        // `Dims` computes its values inside; `First` gathers from the caller's.
        m.functions.push(function(
            "Dims",
            "x",
            "o",
            vec![
                node("Shape", &["x"], &["o0"]),
                ints("one", vec![1]),
                ints("three", vec![3]),
                node("Slice", &["o0", "one", "three"], &["o"]),
            ],
        ));
        m.functions.push(function(
            "First",
            "s",
            "r",
            vec![ints("k", vec![0]), node("Gather", &["s", "k"], &["r"])],
        ));
        let got = infer(m, &strict()).unwrap();
        assert_eq!(got[1], "z: float[3,W]");
        assert_eq!(got[4], "z2: float[B]");
    }

    #[test]
    fn a_float_constant_has_no_values_while_a_typed_input_has_unknown_ones() {
        let floats = TensorProto::from_vec("f", [2], vec![6.0f32, 2.0]).unwrap();
        let mut m = model(
            21,
            vec![
                node("Cast", &["f"], &["c"]).with_attribute(AttributeProto::int("to", 7)),
                node("Concat", &["c", "m1"], &["cc"])
                    .with_attribute(AttributeProto::int("axis", 0)),
                node("Reshape", &["x", "cc"], &["y"]),
            ],
            &[("x", DataType::Float, &["2", "3", "4"])],
            &[("m1", &[1], &[-1])],
        );
        m.graph.as_mut().unwrap().initializer.push(floats);
        assert_eq!(last(infer(m, &strict())), "y: float[unk__0,unk__1,unk__2]");
    }
}
