//! The inference rules of the sequence and optional operators: making, reading and
//! changing sequences of tensors (`SequenceEmpty`, `SequenceConstruct`, `SequenceInsert`,
//! `SequenceAt`, `SequenceErase`, `SequenceLength`, `SplitToSequence`,
//! `ConcatFromSequence`) and wrapping values in optionals (`Optional`,
//! `OptionalHasElement`, `OptionalGetElement`), at each opset, as their `onnx` inference
//! functions give them. Like those, the rules read a type of the wrong kind as an empty
//! one (a tensor's element type 0, a sequence's element unset) rather than refuse it:
//! that is `check_type`'s to refuse.

use super::kit::*;
use super::types::{shape_of, tensor_type};
use crate::onnx::{DataType, Dimension, DimensionValue, TensorShapeProto, TypeProto, TypeValue};
use crate::ProtoEnum;

/// The rule's outcome: `Ok(None)` for an operator of another family, or one the opset
/// does not have yet.
pub(super) fn infer(n: &Node<'_, '_>) -> Result<Option<Outputs>, String> {
    if !n.domain.is_empty() {
        return Ok(None);
    }
    let op = n.node.op_type();
    // The sequence operators came with opset 11, the optional ones with opset 15.
    let since = match op {
        "Optional" | "OptionalHasElement" | "OptionalGetElement" => 15,
        _ => 11,
    };
    if n.version < since {
        return Ok(None);
    }
    let outputs = match op {
        "SequenceEmpty" => sequence_empty(n)?,
        "SequenceConstruct" => sequence_construct(n)?,
        "SequenceInsert" => sequence_insert(n)?,
        "SequenceAt" => {
            let t = required(n, 0)?;
            let elem = sequence_elem(t).map(owned_type).unwrap_or_default();
            vec![Some(elem)]
        }
        "SequenceErase" => vec![Some(owned_type(required(n, 0)?))],
        "SequenceLength" => one(DataType::Int64.to_i32(), Some(shape_of(vec![]))),
        "SplitToSequence" => split_to_sequence(n)?,
        "ConcatFromSequence" => concat_from_sequence(n)?,
        "Optional" => optional(n)?,
        "OptionalHasElement" => optional_has_element(n)?,
        "OptionalGetElement" => optional_get_element(n)?,
        _ => return Ok(None),
    };
    Ok(Some(outputs))
}

/// The type of input `i`, with the message the sequence rules give when it is unknown.
fn required<'n, 'a>(n: &Node<'n, 'a>, i: usize) -> Result<&'n TypeProto<'a>, String> {
    n.inputs
        .get(i)
        .copied()
        .flatten()
        .ok_or_else(|| format!("Input type for input at index {i} is null. Type info is expected."))
}

/// The element type of a sequence type; `None` for another kind or an unset element.
fn sequence_elem<'t, 'a>(t: &'t TypeProto<'a>) -> Option<&'t TypeProto<'a>> {
    match &t.value {
        Some(TypeValue::SequenceType(s)) => s.elem_type.as_deref(),
        _ => None,
    }
}

/// The element type and shape of the tensors of a sequence type, read as `onnx` reads
/// them (element type 0 and no shape when the type is not a sequence of tensors).
fn sequence_tensor<'t, 'a>(t: &'t TypeProto<'a>) -> (i32, Option<&'t TensorShapeProto<'a>>) {
    sequence_elem(t).map_or((0, None), as_tensor)
}

/// One output: a sequence of tensors of element type `elem` and `shape`.
fn sequence_of_tensors(elem: i32, shape: Option<TensorShapeProto<'static>>) -> Outputs {
    vec![Some(sequence_of(tensor_type(elem, shape)))]
}

/// An empty sequence of tensors of the `dtype` attribute's element type (float when it
/// is not given).
fn sequence_empty(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let elem = match attribute(n, "dtype") {
        None => DataType::Float.to_i32(),
        Some(a) => match a.i {
            // `onnx` stores the attribute's integer as a 32-bit element type.
            Some(i) => i as i32,
            None => {
                return Err("Attribute dtype should be of integer type and specify a type.".into())
            }
        },
    };
    Ok(sequence_of_tensors(elem, None))
}

/// A sequence of the input tensors, which must share one element type; its shape is
/// the union of theirs when every one is known.
fn sequence_construct(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.inputs.is_empty() {
        return Err("SequenceConstruct is expected to have at least 1 input.".into());
    }
    let mut types = Vec::with_capacity(n.inputs.len());
    for i in 0..n.inputs.len() {
        types.push(required(n, i)?);
    }
    let elem = as_tensor(types[0]).0;
    if types.iter().any(|t| as_tensor(t).0 != elem) {
        return Err("Element type of inputs are expected to be the same.".into());
    }
    if !types.iter().all(|t| has_shape(t)) {
        return Ok(sequence_of_tensors(elem, None));
    }
    let mut united = tensor_read(types[0]);
    for t in &types[1..] {
        union_types(&tensor_read(t), &mut united)?;
    }
    Ok(vec![Some(sequence_of(united))])
}

/// A type read as a tensor with a shape, as `onnx` reads an input it knows has one
/// (element type 0 and rank 0 for a type of another kind).
fn tensor_read(t: &TypeProto<'_>) -> TypeProto<'static> {
    let (elem, shape) = as_tensor(t);
    tensor_type(elem, Some(shape.map(owned).unwrap_or_default()))
}

/// The input sequence with the tensor inserted: the element types must agree; the
/// shape is the union of the sequence's and the tensor's when both are known.
fn sequence_insert(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.inputs.len() < 2 {
        return Err("Input 1 is out of bounds.".into());
    }
    let (Some(seq), Some(tensor)) = (n.inputs[0], n.inputs[1]) else {
        return Err(
            "Input Sequence and Tensor are expected to have type info. Current type is null."
                .into(),
        );
    };
    let (seq_elem, seq_shape) = sequence_tensor(seq);
    let tensor_elem = as_tensor(tensor).0;
    if seq_elem != tensor_elem {
        return Err(format!(
            "Input Sequence and Tensor are expected to have the same elem type. Sequence={seq_elem} Tensor={tensor_elem}"
        ));
    }
    if !(has_shape(seq) && has_shape(tensor)) {
        return Ok(sequence_of_tensors(seq_elem, None));
    }
    let mut united = tensor_type(seq_elem, Some(seq_shape.map(owned).unwrap_or_default()));
    union_types(&tensor_read(tensor), &mut united)?;
    Ok(vec![Some(sequence_of(united))])
}

/// A sequence of the input's pieces along `axis`: each piece has the input's shape with
/// the split dimension of the common piece size when every piece has the same one
/// (known only from a constant `split`), or unknown; without `split` and with
/// `keepdims` 0 the split dimension is dropped.
fn split_to_sequence(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let input = required(n, 0)?;
    let (elem, shape) = as_tensor(input);
    if !has_shape(input) {
        return Ok(sequence_of_tensors(elem, None));
    }
    let empty = TensorShapeProto::default();
    let shape = shape.unwrap_or(&empty);
    let rank = shape.dim.len() as i32;
    // `onnx` reads the axis as a 32-bit integer.
    let mut axis = attr_int(n, "axis", 0) as i32;
    if axis < -rank || axis > rank - 1 {
        return Err(format!(
            "Invalid value of attribute 'axis'. Rank={rank} Value={axis}"
        ));
    }
    if axis < 0 {
        axis += rank;
    }
    let axis = axis as usize;
    let (piece, keepdims) = if n.inputs.len() == 1 {
        (1, attr_int(n, "keepdims", 1) != 0)
    } else {
        (split_piece(n, shape.dim[axis].as_value())?, true)
    };
    let mut out = owned(shape);
    if keepdims {
        let dim = &mut out.dim[axis];
        if piece > 0 {
            dim.value = Some(DimensionValue::DimValue(piece));
        } else {
            // Only the size or name is cleared: the dimension keeps its denotation.
            dim.value = None;
        }
    } else {
        out.dim.remove(axis);
    }
    Ok(sequence_of_tensors(elem, Some(out)))
}

/// The size of every piece `SplitToSequence`'s `split` input makes of a dimension of
/// size `dim`, when they are all the same and known; -1 otherwise.
fn split_piece(n: &Node<'_, '_>, dim: Option<i64>) -> Result<i64, String> {
    let Some(split_shape) = n.inputs[1].filter(|t| has_shape(t)) else {
        return Ok(-1);
    };
    let Some(sizes) = input_values(n, 1) else {
        return Ok(-1);
    };
    if sizes.is_empty() {
        return Err("Input 'split' can not be empty.".into());
    }
    let Some(dim) = dim else {
        return Ok(-1);
    };
    let scalar = as_tensor(split_shape).1.is_none_or(|s| s.dim.is_empty());
    if scalar {
        if sizes[0] <= 0 {
            return Err("Scalar input 'split' must be greater than zero.".into());
        }
        return Ok(if dim % sizes[0] == 0 { sizes[0] } else { -1 });
    }
    let sum = sizes.iter().fold(0i64, |acc, &s| acc.wrapping_add(s));
    if dim != sum {
        return Err(format!(
            "Sum of split values not equal to 'input' dim size on 'axis'. 'axis' dim size={dim} sum of split values={sum}"
        ));
    }
    Ok(if sizes.iter().all(|&s| s == sizes[0]) {
        sizes[0]
    } else {
        -1
    })
}

/// The tensors of a sequence concatenated along `axis` (or stacked along a new one):
/// the tensors' shape with the concatenated dimension unknown.
fn concat_from_sequence(n: &Node<'_, '_>) -> Result<Outputs, String> {
    let input = required(n, 0)?;
    let (elem, shape) = sequence_tensor(input);
    if !has_shape(input) {
        return Ok(one(elem, None));
    }
    let Some(axis) = attribute(n, "axis") else {
        return Err("Required attribute axis is missing".into());
    };
    // `onnx` reads both attributes as 32-bit integers.
    let mut axis = axis.i.unwrap_or(0) as i32;
    let new_axis = attr_int(n, "new_axis", 0) as i32;
    let empty = TensorShapeProto::default();
    let shape = shape.unwrap_or(&empty);
    let rank = shape.dim.len() as i32;
    if new_axis != 0 && new_axis != 1 {
        return Err("new_axis must be either 0 or 1".into());
    }
    let upper = if new_axis == 1 { rank } else { rank - 1 };
    let lower = if new_axis == 1 { -rank - 1 } else { -rank };
    if axis < lower || axis > upper {
        return Err(format!(
            "Invalid value of attribute 'axis'. Accepted range=[{lower}, {upper}], Value={axis}"
        ));
    }
    if axis < 0 {
        axis += upper + 1;
    }
    let dims = (0..=upper)
        .map(|i| {
            if i == axis {
                Dimension::unknown()
            } else {
                let from = if i > axis && new_axis == 1 { i - 1 } else { i };
                owned_dim(&shape.dim[from as usize])
            }
        })
        .collect();
    Ok(one(elem, Some(shape_of(dims))))
}

/// An optional of the input's type, or of the `type` attribute's when there is no input.
fn optional(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.node.output.len() != 1 {
        return Err("Optional is expected to have an output.".into());
    }
    let elem = match (n.inputs.len(), attribute(n, "type")) {
        (0, Some(a)) => match a.tp.as_deref() {
            Some(tp) => owned_type(tp),
            None => {
                return Err(
                    "Attribute 'type' should be a TypeProto and it should specify a type.".into(),
                )
            }
        },
        (1, _) => match n.inputs[0] {
            Some(t) => owned_type(t),
            None => {
                return Err(
                    "Input type is null. Type information is expected for the input.".into(),
                )
            }
        },
        _ => {
            return Err(
                "Optional is expected to have either an input or the type attribute set.".into(),
            )
        }
    };
    Ok(vec![Some(optional_of(elem))])
}

/// A boolean scalar; from opset 18 the input may be absent.
fn optional_has_element(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.version < 18 {
        if n.inputs.len() != 1 {
            return Err("OptionalHasElement is expected to have 1 input.".into());
        }
    } else if n.inputs.len() > 1 {
        return Err("OptionalHasElement is expected to have 0 or 1 input.".into());
    }
    if n.node.output.len() != 1 {
        return Err("OptionalHasElement is expected to have 1 output.".into());
    }
    Ok(one(DataType::Bool.to_i32(), Some(shape_of(vec![]))))
}

/// The optional input's element type; from opset 18 a tensor or sequence input passes
/// through as it is.
fn optional_get_element(n: &Node<'_, '_>) -> Result<Outputs, String> {
    if n.inputs.len() != 1 {
        return Err("OptionalGetElement must have an input element.".into());
    }
    let Some(t) = n.inputs[0] else {
        return Err("Input type is null. Input must have Type information.".into());
    };
    let elem = match &t.value {
        Some(TypeValue::OptionalType(o)) => o.elem_type.as_deref(),
        _ if n.version >= 18 => return propagate_first_input(n),
        _ => None,
    };
    match elem {
        Some(e) => Ok(vec![Some(owned_type(e))]),
        None if n.version >= 18 => {
            Err("Optional-type input must contain an element with type information.".into())
        }
        None => Err(
            "Input must be an optional-type value containing an element with type information."
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::kit::{optional_of, sequence_of, union_types};
    use super::super::test_support::node;
    use super::super::test_support::{dims, model, strict_types};
    use super::super::types::tensor_type;
    use crate::onnx::{
        AttributeProto, AttributeType, DataType, ModelProto, NodeProto, TensorProto,
        TensorShapeProto, TypeProto, ValueInfoProto,
    };
    use crate::shape::{infer_shapes, InferOptions};
    use crate::ProtoEnum;

    /// A tensor type of `elem` and shape `spec` (`None`: unknown rank).
    fn tensor(elem: DataType, spec: Option<&[&str]>) -> TypeProto<'static> {
        tensor_type(elem.to_i32(), spec.map(|s| TensorShapeProto::new(dims(s))))
    }

    fn value(name: &str, t: TypeProto<'static>) -> ValueInfoProto<'static> {
        ValueInfoProto {
            name: Some(name.to_string().into()),
            r#type: Some(t),
            ..ValueInfoProto::default()
        }
    }

    /// The inferred types (strict mode) of the values the nodes compute, or the error.
    fn infer(
        opset: i64,
        nodes: Vec<NodeProto<'static>>,
        inputs: Vec<ValueInfoProto<'static>>,
        initializers: Vec<TensorProto<'static>>,
    ) -> Result<Vec<String>, String> {
        strict_types(opset, nodes, inputs, initializers)
    }

    /// The reason of a strict inference's error, without the node's description.
    fn reason(result: Result<Vec<String>, String>) -> String {
        let e = result.expect_err("inference should fail");
        e.split_once("): ")
            .map_or(e.clone(), |(_, r)| r.to_string())
    }

    fn ints(name: &str, shape: &[i64], values: Vec<i64>) -> TensorProto<'static> {
        TensorProto::from_vec(name.to_string(), shape.to_vec(), values).unwrap()
    }

    fn type_attribute(name: &str, t: TypeProto<'static>) -> AttributeProto<'static> {
        AttributeProto {
            name: Some(name.to_string().into()),
            r#type: Some(AttributeType::TypeProto.into()),
            tp: Some(Box::new(t)),
            ..AttributeProto::default()
        }
    }

    #[test]
    fn a_constructed_sequence_unites_its_tensors_shapes() {
        let x = |a: &[&str], b: Option<&[&str]>| {
            vec![
                value("x", tensor(DataType::Float, Some(a))),
                value("y", tensor(DataType::Float, b)),
            ]
        };
        let construct = || vec![node("SequenceConstruct", &["x", "y"], &["s"])];
        assert_eq!(
            infer(11, construct(), x(&["N", "3"], Some(&["N", "4"])), vec![]),
            Ok(vec!["s: seq(float[N,unk__0])".into()])
        );
        // Another rank, or a tensor of unknown shape: the shape is unknown.
        assert_eq!(
            infer(
                11,
                construct(),
                x(&["2", "3"], Some(&["2", "3", "4"])),
                vec![]
            ),
            Ok(vec!["s: seq(float[])".into()])
        );
        assert_eq!(
            infer(11, construct(), x(&["2", "3"], None), vec![]),
            Ok(vec!["s: seq(float[])".into()])
        );
        let mixed = vec![
            value("x", tensor(DataType::Float, Some(&["2"]))),
            value("y", tensor(DataType::Int64, Some(&["2"]))),
        ];
        assert_eq!(
            reason(infer(11, construct(), mixed, vec![])),
            "Element type of inputs are expected to be the same."
        );
        let unknown = vec![value("x", tensor(DataType::Float, Some(&["2"])))];
        assert_eq!(
            reason(infer(11, construct(), unknown, vec![])),
            "Input type for input at index 1 is null. Type info is expected."
        );
    }

    #[test]
    fn an_insertion_unites_the_tensor_with_the_sequence() {
        let inputs = |elem: DataType| {
            vec![
                value("s", sequence_of(tensor(DataType::Float, Some(&["2", "3"])))),
                value("x", tensor(elem, Some(&["4", "3"]))),
            ]
        };
        let insert = || vec![node("SequenceInsert", &["s", "x"], &["o"])];
        assert_eq!(
            infer(11, insert(), inputs(DataType::Float), vec![]),
            Ok(vec!["o: seq(float[unk__0,3])".into()])
        );
        assert_eq!(
            reason(infer(11, insert(), inputs(DataType::Int64), vec![])),
            "Input Sequence and Tensor are expected to have the same elem type. Sequence=1 Tensor=7"
        );
        // Into an empty sequence (of no known shape): the shape stays unknown.
        let empty = node("SequenceEmpty", &[], &["e"]).with_attribute(AttributeProto::int(
            "dtype",
            DataType::Int64.to_i32().into(),
        ));
        let x = value("x", tensor(DataType::Int64, Some(&["N"])));
        assert_eq!(
            infer(
                11,
                vec![empty, node("SequenceInsert", &["e", "x"], &["o"])],
                vec![x],
                vec![]
            ),
            Ok(vec!["e: seq(int64[])".into(), "o: seq(int64[])".into()])
        );
    }

    #[test]
    fn reading_erasing_and_counting_keep_the_element_type() {
        let inputs = vec![
            value("s", sequence_of(tensor(DataType::Float, Some(&["N", "2"])))),
            value("p", tensor(DataType::Int64, Some(&[]))),
        ];
        let nodes = vec![
            node("SequenceAt", &["s", "p"], &["a"]),
            node("SequenceErase", &["s"], &["r"]),
            node("SequenceLength", &["s"], &["l"]),
        ];
        assert_eq!(
            infer(11, nodes, inputs, vec![]),
            Ok(vec![
                "a: float[N,2]".into(),
                "r: seq(float[N,2])".into(),
                "l: int64".into()
            ])
        );
        let p = vec![value("p", tensor(DataType::Int64, Some(&[])))];
        assert_eq!(
            reason(infer(
                11,
                vec![node("SequenceAt", &["q", "p"], &["a"])],
                p,
                vec![]
            )),
            "Input type for input at index 0 is null. Type info is expected."
        );
        // A sequence of no known element type: so is the copy, whose element type
        // `onnx` leaves set but empty.
        let bare = TypeProto {
            value: Some(crate::onnx::TypeValue::SequenceType(Box::default())),
            ..TypeProto::default()
        };
        let mut m = model(
            11,
            vec![node("SequenceErase", &["s"], &["r"])],
            vec![value("s", bare)],
            vec![],
        );
        infer_shapes(&mut m, &InferOptions::default().strict_mode(true)).unwrap();
        let g = m.graph.unwrap();
        assert_eq!(
            g.value_info[0].r#type,
            Some(sequence_of(TypeProto::default()))
        );
        // Before opset 11 there are no sequence operators: nothing is inferred.
        let empty = vec![node("SequenceEmpty", &[], &["e"])];
        assert_eq!(infer(10, empty.clone(), vec![], vec![]), Ok(vec![]));
        assert_eq!(
            infer(11, empty, vec![], vec![]),
            Ok(vec!["e: seq(float[])".into()])
        );
    }

    #[test]
    fn split_pieces_have_a_size_only_when_all_are_alike() {
        let x = || vec![value("x", tensor(DataType::Float, Some(&["6", "N"])))];
        let split = |inputs: &[&str]| node("SplitToSequence", inputs, &["s"]);
        let run = |opset, n: NodeProto<'static>, init: Vec<TensorProto<'static>>| {
            infer(opset, vec![n], x(), init)
        };
        assert_eq!(
            run(11, split(&["x"]), vec![]),
            Ok(vec!["s: seq(float[1,N])".into()])
        );
        let dropped = split(&["x"])
            .with_attribute(AttributeProto::int("keepdims", 0))
            .with_attribute(AttributeProto::int("axis", -1));
        assert_eq!(
            run(11, dropped, vec![]),
            Ok(vec!["s: seq(float[6])".into()])
        );
        // A scalar split size: known when it divides the dimension.
        assert_eq!(
            run(24, split(&["x", "sp"]), vec![ints("sp", &[], vec![2])]),
            Ok(vec!["s: seq(float[2,N])".into()])
        );
        assert_eq!(
            run(24, split(&["x", "sp"]), vec![ints("sp", &[], vec![4])]),
            Ok(vec!["s: seq(float[unk__0,N])".into()])
        );
        // Sizes of a list: known when all are equal; keepdims does not apply.
        let equal = TensorProto::from_vec("sp", [3], vec![2i32, 2, 2]).unwrap();
        let keep = split(&["x", "sp"]).with_attribute(AttributeProto::int("keepdims", 0));
        assert_eq!(
            run(11, keep, vec![equal]),
            Ok(vec!["s: seq(float[2,N])".into()])
        );
        assert_eq!(
            run(
                11,
                split(&["x", "sp"]),
                vec![ints("sp", &[3], vec![1, 2, 3])]
            ),
            Ok(vec!["s: seq(float[unk__0,N])".into()])
        );
        // On a symbolic dimension the sizes cannot be checked.
        let on_n = split(&["x", "sp"]).with_attribute(AttributeProto::int("axis", 1));
        assert_eq!(
            run(11, on_n, vec![ints("sp", &[2], vec![1, 2])]),
            Ok(vec!["s: seq(float[6,unk__0])".into()])
        );
        let refused = [
            (
                ints("sp", &[2], vec![1, 2]),
                "Sum of split values not equal to 'input' dim size on 'axis'. 'axis' dim size=6 sum of split values=3",
            ),
            (
                ints("sp", &[], vec![0]),
                "Scalar input 'split' must be greater than zero.",
            ),
            (ints("sp", &[0], vec![]), "Input 'split' can not be empty."),
        ];
        for (sizes, message) in refused {
            assert_eq!(reason(run(11, split(&["x", "sp"]), vec![sizes])), message);
        }
        let far = split(&["x"]).with_attribute(AttributeProto::int("axis", 2));
        assert_eq!(
            reason(run(11, far, vec![])),
            "Invalid value of attribute 'axis'. Rank=2 Value=2"
        );
    }

    #[test]
    fn concatenation_leaves_the_joined_dimension_unknown() {
        let s = || {
            vec![value(
                "s",
                sequence_of(tensor(DataType::Float, Some(&["N", "3"]))),
            )]
        };
        let concat = |axis: Option<i64>, new_axis: Option<i64>| {
            let mut n = node("ConcatFromSequence", &["s"], &["y"]);
            if let Some(a) = axis {
                n = n.with_attribute(AttributeProto::int("axis", a));
            }
            if let Some(a) = new_axis {
                n = n.with_attribute(AttributeProto::int("new_axis", a));
            }
            vec![n]
        };
        assert_eq!(
            infer(11, concat(Some(1), None), s(), vec![]),
            Ok(vec!["y: float[N,unk__0]".into()])
        );
        assert_eq!(
            infer(11, concat(Some(-1), Some(1)), s(), vec![]),
            Ok(vec!["y: float[N,3,unk__0]".into()])
        );
        assert_eq!(
            infer(11, concat(Some(0), Some(1)), s(), vec![]),
            Ok(vec!["y: float[unk__0,N,3]".into()])
        );
        assert_eq!(
            reason(infer(11, concat(None, None), s(), vec![])),
            "Required attribute axis is missing"
        );
        assert_eq!(
            reason(infer(11, concat(Some(2), None), s(), vec![])),
            "Invalid value of attribute 'axis'. Accepted range=[-2, 1], Value=2"
        );
        assert_eq!(
            reason(infer(11, concat(Some(0), Some(2)), s(), vec![])),
            "new_axis must be either 0 or 1"
        );
        // Tensors of unknown shape: only the element type, and no attribute is read.
        let unknown = vec![value("s", sequence_of(tensor(DataType::Int32, None)))];
        assert_eq!(
            infer(11, concat(None, None), unknown, vec![]),
            Ok(vec!["y: int32[]".into()])
        );
    }

    #[test]
    fn optionals_wrap_and_unwrap_their_element_type() {
        let x = || vec![value("x", tensor(DataType::Float, Some(&["N", "2"])))];
        let nodes = vec![
            node("Optional", &["x"], &["o"]),
            node("OptionalHasElement", &["o"], &["b"]),
            node("OptionalGetElement", &["o"], &["g"]),
        ];
        assert_eq!(
            infer(15, nodes, x(), vec![]),
            Ok(vec![
                "o: optional(float[N,2])".into(),
                "b: bool".into(),
                "g: float[N,2]".into()
            ])
        );
        let typed = node("Optional", &[], &["o"]).with_attribute(type_attribute(
            "type",
            sequence_of(tensor(DataType::Int64, Some(&["3"]))),
        ));
        assert_eq!(
            infer(15, vec![typed], vec![], vec![]),
            Ok(vec!["o: optional(seq(int64[3]))".into()])
        );
        assert_eq!(
            reason(infer(
                15,
                vec![node("Optional", &[], &["o"])],
                vec![],
                vec![]
            )),
            "Optional is expected to have either an input or the type attribute set."
        );
        // From opset 18 the input of OptionalHasElement may be absent, and
        // OptionalGetElement passes a tensor through.
        let has = || vec![node("OptionalHasElement", &[], &["b"])];
        assert_eq!(
            reason(infer(15, has(), vec![], vec![])),
            "OptionalHasElement is expected to have 1 input."
        );
        assert_eq!(infer(18, has(), vec![], vec![]), Ok(vec!["b: bool".into()]));
        let get = || vec![node("OptionalGetElement", &["x"], &["g"])];
        assert_eq!(
            reason(infer(15, get(), x(), vec![])),
            "Input must be an optional-type value containing an element with type information."
        );
        assert_eq!(
            infer(18, get(), x(), vec![]),
            Ok(vec!["g: float[N,2]".into()])
        );
    }

    #[test]
    fn identity_and_cast_like_carry_sequences_and_optionals() {
        let s = value("s", sequence_of(tensor(DataType::Float, Some(&["N", "?"]))));
        assert_eq!(
            infer(16, vec![node("Identity", &["s"], &["y"])], vec![s], vec![]),
            Ok(vec!["y: seq(float[N,unk__0])".into()])
        );
        let o = value(
            "o",
            optional_of(sequence_of(tensor(DataType::Float, Some(&["2"])))),
        );
        assert_eq!(
            infer(16, vec![node("Identity", &["o"], &["y"])], vec![o], vec![]),
            Ok(vec!["y: optional(seq(float[2]))".into()])
        );
        let cast = || vec![node("CastLike", &["x", "t"], &["y"])];
        let t = || value("t", tensor(DataType::Int64, Some(&["5"])));
        let x = value("x", tensor(DataType::Float, Some(&["2", "N"])));
        assert_eq!(
            infer(15, cast(), vec![x, t()], vec![]),
            Ok(vec!["y: int64[2,N]".into()])
        );
        // The input's type unknown: the target's element type, no shape.
        assert_eq!(
            infer(15, cast(), vec![t()], vec![]),
            Ok(vec!["y: int64[]".into()])
        );
        let x = || value("x", tensor(DataType::Float, Some(&["2"])));
        assert_eq!(
            reason(infer(15, cast(), vec![x()], vec![])),
            "Input 1 expected to have type but instead is null"
        );
        let seq = value("x", sequence_of(tensor(DataType::Float, Some(&["3"]))));
        assert_eq!(
            reason(infer(15, cast(), vec![seq, t()], vec![])),
            "Mismatch between inferred and declared type. Inferred=4 Declared=1"
        );
    }

    #[test]
    fn check_type_refuses_sequences_and_optionals_the_schema_does_not_allow() {
        let full = |m: ModelProto<'static>| {
            let mut m = m;
            infer_shapes(
                &mut m,
                &InferOptions::default().strict_mode(true).check_type(true),
            )
            .map_err(|e| e.to_string())
        };
        let empty = |dtype: DataType| {
            let n = node("SequenceEmpty", &[], &["s"])
                .with_attribute(AttributeProto::int("dtype", dtype.to_i32().into()));
            model(11, vec![n], vec![], vec![])
        };
        assert_eq!(full(empty(DataType::Float)), Ok(()));
        // Inference alone gives a sequence of bfloat16; its schema allows none.
        assert_eq!(
            infer(
                11,
                empty(DataType::Bfloat16).graph.unwrap().node,
                vec![],
                vec![]
            ),
            Ok(vec!["s: seq(bfloat16[])".into()])
        );
        let e = full(empty(DataType::Bfloat16)).unwrap_err();
        assert!(
            e.ends_with("output has unsupported type seq(tensor(bfloat16))"),
            "{e}"
        );
        let nested = node("Optional", &[], &["o"]).with_attribute(type_attribute(
            "type",
            optional_of(tensor(DataType::Float, Some(&["2"]))),
        ));
        let e = full(model(18, vec![nested], vec![], vec![])).unwrap_err();
        assert!(
            e.ends_with("output has unsupported type optional(optional(tensor(float)))"),
            "{e}"
        );
        let s = value("s", sequence_of(tensor(DataType::Float, Some(&["2"]))));
        let e = full(model(
            11,
            vec![node("SequenceAt", &["s"], &["a"])],
            vec![s],
            vec![],
        ))
        .unwrap_err();
        assert!(
            e.ends_with(
                "Node with schema(::SequenceAt:11) has input size 1 not in range [min=2, max=2]."
            ),
            "{e}"
        );
    }

    #[test]
    fn union_of_types_keeps_what_both_share() {
        let float = |spec: Option<&[&str]>| tensor(DataType::Float, spec);
        let unite = |a: TypeProto<'static>, mut b: TypeProto<'static>| {
            union_types(&a, &mut b).map(|()| b.to_string())
        };
        assert_eq!(
            unite(float(Some(&["N", "3", "?"])), float(Some(&["N", "4", "?"]))),
            Ok("float[N,?,?]".into())
        );
        assert_eq!(
            unite(float(Some(&["M", "3"])), float(Some(&["N", "3"]))),
            Ok("float[?,3]".into())
        );
        assert_eq!(
            unite(float(Some(&["2"])), float(Some(&["2", "3"]))),
            Ok("float[]".into())
        );
        assert_eq!(
            unite(float(None), float(Some(&["2"]))),
            Ok("float[]".into())
        );
        assert_eq!(
            unite(
                sequence_of(float(Some(&["2", "3"]))),
                sequence_of(float(Some(&["2", "5"])))
            ),
            Ok("seq(float[2,?])".into())
        );
        assert_eq!(
            unite(float(Some(&["2"])), tensor(DataType::Int64, Some(&["2"]))),
            Err("Mismatched tensor element type: inferred=float declared=int64".into())
        );
        assert_eq!(
            unite(float(Some(&["2"])), sequence_of(float(Some(&["2"])))),
            Err("Mismatched type: inferred=1 declared=4".into())
        );
        let bare_sequence = TypeProto {
            value: Some(crate::onnx::TypeValue::SequenceType(Box::default())),
            ..TypeProto::default()
        };
        assert_eq!(
            unite(bare_sequence, sequence_of(float(None))),
            Err("source sequence type missing element type.".into())
        );
    }
}
