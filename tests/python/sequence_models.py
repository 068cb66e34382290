"""Models of the sequence and optional operators (and of Identity and CastLike on
sequences and optionals), for the differential test of onnx-light's shape inference
(`tests/tests/shape_inference.rs`): the edge cases the backend node tests do not reach,
each a small graph written as `NNNN_label_opsetK.onnx` into the given directory.

Shapes, element types, attributes, constant inputs, missing or empty inputs, inputs of
the wrong kind, declared outputs that conflict, and the opsets where the operators
change: every case is one onnx infers, or one it refuses.
"""

import itertools
import sys
from pathlib import Path

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def tensor(elem, shape):
    return h.make_tensor_type_proto(elem, shape)


def seq(elem, shape):
    return h.make_sequence_type_proto(tensor(elem, shape))


def opt(inner):
    return h.make_optional_type_proto(inner)


def value(name, type_proto):
    return h.make_value_info(name, type_proto)


def x(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def untyped(name):
    v = onnx.ValueInfoProto()
    v.name = name
    return v


def bare(name, kind):
    """A value of a sequence or optional type with no element type."""
    v = onnx.ValueInfoProto()
    v.name = name
    getattr(v.type, kind).SetInParent()
    return v


def node(op, inputs, outputs, **attrs):
    return h.make_node(op, inputs, outputs, **attrs)


class Writer:
    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def __call__(self, label, nodes, inputs, outputs, opset, initializers=()):
        graph = h.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
        path = self.directory / f"{self.count:04d}_{label}_opset{opset}.onnx"
        path.write_bytes(model.SerializeToString())
        self.count += 1


def sequence_making(emit):
    for opset in (11, 20):
        emit("empty", [node("SequenceEmpty", [], ["s"])], [], [untyped("s")], opset)
        for dtype in (T.INT64, T.STRING, 0, 100, T.FLOAT8E4M3FN, T.BFLOAT16):
            emit(f"empty_dtype{dtype}", [node("SequenceEmpty", [], ["s"], dtype=dtype)], [], [untyped("s")], opset)
    emit("empty_float_dtype", [node("SequenceEmpty", [], ["s"], dtype=1.0)], [], [untyped("s")], 11)
    emit("empty_before_opset11", [node("SequenceEmpty", [], ["s"])], [], [untyped("s")], 10)
    emit("empty_declared_int64", [node("SequenceEmpty", [], ["s"])], [], [value("s", seq(T.INT64, [2]))], 11)
    emit("empty_declared_shape", [node("SequenceEmpty", [], ["s"])], [], [value("s", seq(T.FLOAT, ["a", 2]))], 11)

    shapes = [[2, 3], [2, 4], ["N", 3], ["M", 3], [None, 3], [2], None, [], [2, 3, 4]]
    for i, (a, b) in enumerate(itertools.product(shapes, shapes)):
        if i % 3 and a is not None and b is not None:
            continue
        emit("construct", [node("SequenceConstruct", ["x", "y"], ["s"])], [x("x", T.FLOAT, a), x("y", T.FLOAT, b)], [untyped("s")], 11)
    three = [x("x", T.FLOAT, ["N", 3, "K"]), x("y", T.FLOAT, ["N", 3, "K"]), x("z", T.FLOAT, ["N", 4, "L"])]
    emit("construct_three", [node("SequenceConstruct", ["x", "y", "z"], ["s"])], three, [untyped("s")], 11)
    emit("construct_one", [node("SequenceConstruct", ["x"], ["s"])], [x("x", T.INT32, ["N", None])], [untyped("s")], 11)
    two = [node("SequenceConstruct", ["x", "y"], ["s"])]
    emit("construct_elem_mismatch", two, [x("x", T.FLOAT, [2]), x("y", T.INT64, [2])], [untyped("s")], 11)
    emit("construct_unknown_input", [node("SequenceConstruct", ["x", "q"], ["s"])], [x("x", T.FLOAT, [2])], [untyped("s")], 11)
    emit("construct_empty_name", [node("SequenceConstruct", ["x", ""], ["s"])], [x("x", T.FLOAT, [2])], [untyped("s")], 11)
    emit("construct_no_input", [node("SequenceConstruct", [], ["s"])], [], [untyped("s")], 11)
    emit("construct_of_sequences", two, [value("x", seq(T.FLOAT, [2])), value("y", seq(T.FLOAT, [3]))], [untyped("s")], 11)
    emit("construct_mixed_kinds", two, [x("x", T.FLOAT, [2]), value("y", seq(T.FLOAT, [3]))], [untyped("s")], 11)
    pair = [x("x", T.FLOAT, [2, 3]), x("y", T.FLOAT, [2, 4])]
    emit("construct_declared", two, pair, [value("s", seq(T.FLOAT, [2, "w"]))], 11)
    emit("construct_declared_conflict", two, [x("x", T.FLOAT, [2, 3]), x("y", T.FLOAT, [2, 3])], [value("s", seq(T.FLOAT, [2, 5]))], 11)
    emit("construct_declared_tensor", [node("SequenceConstruct", ["x"], ["s"])], [x("x", T.FLOAT, [2, 3])], [x("s", T.FLOAT, [2, 3])], 11)


def sequence_changing(emit):
    insert = [node("SequenceInsert", ["s", "x"], ["o"])]
    for a in ([2, 3], ["N", 3], [None, 3], None, [2]):
        for b in ([2, 3], [4, 3], ["N", 3], None, [2, 3, 1]):
            emit("insert", insert, [value("s", seq(T.FLOAT, a)), x("x", T.FLOAT, b)], [untyped("o")], 11)
    at = [node("SequenceInsert", ["s", "x", "p"], ["o"])]
    emit("insert_at", at, [value("s", seq(T.FLOAT, [2])), x("x", T.FLOAT, [2]), x("p", T.INT64, [])], [untyped("o")], 11)
    emit("insert_at_float", at, [value("s", seq(T.FLOAT, [2])), x("x", T.FLOAT, [2]), x("p", T.FLOAT, [])], [untyped("o")], 11)
    emit("insert_elem_mismatch", insert, [value("s", seq(T.FLOAT, [2])), x("x", T.INT64, [2])], [untyped("o")], 11)
    emit("insert_unknown_sequence", insert, [x("x", T.INT64, [2])], [untyped("o")], 11)
    emit("insert_into_tensor", insert, [x("s", T.FLOAT, [2]), x("x", T.FLOAT, [2])], [untyped("o")], 11)
    into_empty = [node("SequenceEmpty", [], ["e"], dtype=T.INT64), node("SequenceInsert", ["e", "x"], ["o"])]
    emit("insert_into_empty", into_empty, [x("x", T.INT64, ["N"])], [untyped("o")], 11)
    chain = [
        node("SequenceConstruct", ["x", "y"], ["s"]),
        node("SequenceInsert", ["s", "z"], ["o"]),
        node("SequenceAt", ["o", "p"], ["a"]),
        node("SequenceLength", ["o"], ["l"]),
        node("SequenceErase", ["o"], ["r"]),
    ]
    chain_inputs = [x("x", T.FLOAT, ["N", 3]), x("y", T.FLOAT, ["N", 3]), x("z", T.FLOAT, ["M", 3]), x("p", T.INT64, [])]
    emit("chain", chain, chain_inputs, [untyped("a"), untyped("l"), untyped("r")], 11)

    p = [x("p", T.INT64, [])]
    for op, inputs in (("SequenceAt", ["s", "p"]), ("SequenceErase", ["s"]), ("SequenceErase", ["s", "p"]), ("SequenceLength", ["s"])):
        n = [node(op, inputs, ["o"])]
        label = op.lower()
        emit(label, n, [value("s", seq(T.FLOAT, ["N", 2]))] + p, [untyped("o")], 11)
        emit(label + "_no_shape", n, [value("s", seq(T.INT32, None))] + p, [untyped("o")], 11)
        emit(label + "_no_element_type", n, [bare("s", "sequence_type")] + p, [untyped("o")], 11)
        emit(label + "_of_tensor", n, [x("s", T.FLOAT, [2])] + p, [untyped("o")], 11)
        emit(label + "_unknown", n, p, [untyped("o")], 11)
        emit(label + "_of_optional", n, [value("s", opt(seq(T.FLOAT, [2])))] + p, [untyped("o")], 18)
    emit("at_one_input", [node("SequenceAt", ["s"], ["o"])], [value("s", seq(T.FLOAT, [2]))], [untyped("o")], 11)
    at = [node("SequenceAt", ["s", "p"], ["o"])]
    emit("at_declared", at, [value("s", seq(T.FLOAT, [2, None])), x("p", T.INT32, [])], [x("o", T.FLOAT, [None, 5])], 11)
    nested = value("s", h.make_sequence_type_proto(seq(T.FLOAT, [2])))
    emit("at_of_nested_sequence", at, [nested, x("p", T.INT32, [])], [untyped("o")], 11)
    length = [node("SequenceLength", ["s"], ["o"])]
    emit("length_declared_conflict", length, [value("s", seq(T.FLOAT, [2]))], [x("o", T.INT64, [1])], 11)


def splitting_and_concatenating(emit):
    for opset in (11, 24):
        for shape in ([6, "N"], ["N", 6], [None, 4], None, [], [5]):
            for axis in (None, 0, 1, -1, -2, 2):
                attrs = {} if axis is None else {"axis": axis}
                inputs = [x("x", T.FLOAT, shape)]
                emit("split", [node("SplitToSequence", ["x"], ["s"], **attrs)], inputs, [untyped("s")], opset)
                dropped = [node("SplitToSequence", ["x"], ["s"], keepdims=0, **attrs)]
                emit("split_dropping", dropped, inputs, [untyped("s")], opset)
    sizes = [([2], []), ([4], []), ([0], []), ([-1], []), ([2, 2, 2], [3]), ([1, 2, 3], [3]), ([3, 4], [2]), ([], [0]), ([3, 3], [2])]
    for values, dims in sizes:
        for dtype in (T.INT64, T.INT32):
            for shape in ([6, "N"], ["N", 6]):
                split = h.make_tensor("sp", dtype, dims, values)
                n = [node("SplitToSequence", ["x", "sp"], ["s"], keepdims=0)]
                emit("split_sizes", n, [x("x", T.FLOAT, shape)], [untyped("s")], 11, [split])
    n = [node("SplitToSequence", ["x", "sp"], ["s"])]
    emit("split_sizes_at_run_time", n, [x("x", T.FLOAT, [6, 2]), x("sp", T.INT64, [2])], [untyped("s")], 11)
    emit("split_sizes_unknown_shape", n, [x("x", T.FLOAT, [6, 2]), x("sp", T.INT64, None)], [untyped("s")], 11)
    n = [node("SplitToSequence", ["x", ""], ["s"], keepdims=0)]
    emit("split_sizes_empty_name", n, [x("x", T.FLOAT, [6, 2])], [untyped("s")], 11)
    for label, constant in (("int", {"value_int": 3}), ("ints", {"value_ints": [4, 5]})):
        n = [node("Constant", [], ["sp"], **constant), node("SplitToSequence", ["x", "sp"], ["s"], axis=1)]
        emit(f"split_sizes_constant_{label}", n, [x("x", T.FLOAT, [2, 9])], [untyped("s")], 13)
    emit("split_sequence", [node("SplitToSequence", ["x"], ["s"])], [value("x", seq(T.FLOAT, [3]))], [untyped("s")], 11)
    emit("split_unknown", [node("SplitToSequence", ["x"], ["s"])], [], [untyped("s")], 11)
    declared = [value("s", seq(T.FLOAT, [None, 3]))]
    emit("split_declared", [node("SplitToSequence", ["x"], ["s"])], [x("x", T.FLOAT, [4, "a"])], declared, 11)

    for shape in ([2, 3], ["N", 3], None, [], [4]):
        for axis in (None, 0, 1, -1, -2, 2, -3):
            for new_axis in (None, 0, 1, 2):
                attrs = {}
                if axis is not None:
                    attrs["axis"] = axis
                if new_axis is not None:
                    attrs["new_axis"] = new_axis
                n = [node("ConcatFromSequence", ["s"], ["y"], **attrs)]
                emit("concat", n, [value("s", seq(T.FLOAT, shape))], [untyped("y")], 11)
    n = [node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    emit("concat_unknown", n, [], [untyped("y")], 11)
    emit("concat_tensor", n, [x("s", T.FLOAT, [2])], [untyped("y")], 11)
    emit("concat_no_element_type", n, [bare("s", "sequence_type")], [untyped("y")], 11)
    both = [node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0), node("ConcatFromSequence", ["s"], ["y"], axis=1, new_axis=1)]
    emit("split_then_stack", both, [x("x", T.FLOAT, ["B", 5, 7])], [untyped("y")], 11)


def optionals(emit):
    for opset in (15, 18, 28):
        wrap = [node("Optional", ["x"], ["o"])]
        emit("optional_of_tensor", wrap, [x("x", T.FLOAT, ["N", 2])], [untyped("o")], opset)
        emit("optional_of_sequence", wrap, [value("x", seq(T.INT64, [3]))], [untyped("o")], opset)
        emit("optional_of_optional", wrap, [value("x", opt(tensor(T.INT64, [3])))], [untyped("o")], opset)
        kinds = [
            ("tensor", tensor(T.FLOAT, [2, "k"])),
            ("sequence", seq(T.FLOAT, None)),
            ("optional", opt(tensor(T.FLOAT, [2]))),
            ("map", h.make_map_type_proto(T.INT64, tensor(T.FLOAT, []))),
        ]
        for label, type_proto in kinds:
            emit(f"optional_type_{label}", [node("Optional", [], ["o"], type=type_proto)], [], [untyped("o")], opset)
        emit("optional_neither", [node("Optional", [], ["o"])], [], [untyped("o")], opset)
        both = [node("Optional", ["x"], ["o"], type=tensor(T.INT64, [2]))]
        emit("optional_both", both, [x("x", T.FLOAT, [2])], [untyped("o")], opset)
        empty_name = [node("Optional", [""], ["o"], type=tensor(T.INT64, [2]))]
        emit("optional_empty_name", empty_name, [], [untyped("o")], opset)
        emit("optional_unknown", [node("Optional", ["q"], ["o"])], [], [untyped("o")], opset)
        emit("optional_int_type", [node("Optional", [], ["o"], type=3)], [], [untyped("o")], opset)
        two = [node("Optional", ["x"], ["o", "p"])]
        emit("optional_two_outputs", two, [x("x", T.FLOAT, [2])], [untyped("o")], opset)
        declared = [value("o", opt(tensor(T.FLOAT, [7, None])))]
        emit("optional_declared", wrap, [x("x", T.FLOAT, [None, 2])], declared, opset)
        conflict = [value("o", opt(tensor(T.INT32, [2])))]
        emit("optional_declared_conflict", wrap, [x("x", T.FLOAT, [2])], conflict, opset)
        inputs = [
            ("optional_tensor", value("x", opt(tensor(T.FLOAT, ["N"])))),
            ("optional_sequence", value("x", opt(seq(T.FLOAT, [2])))),
            ("tensor", x("x", T.FLOAT, [2, "N"])),
            ("sequence", value("x", seq(T.INT64, None))),
            ("bare_optional", bare("x", "optional_type")),
        ]
        for label, input_value in inputs:
            has = [node("OptionalHasElement", ["x"], ["b"])]
            emit(f"has_element_{label}", has, [input_value], [untyped("b")], opset)
            get = [node("OptionalGetElement", ["x"], ["y"])]
            emit(f"get_element_{label}", get, [input_value], [untyped("y")], opset)
        o = [value("x", opt(tensor(T.FLOAT, [2])))]
        emit("has_element_no_input", [node("OptionalHasElement", [], ["b"])], [], [untyped("b")], opset)
        emit("has_element_empty_name", [node("OptionalHasElement", [""], ["b"])], [], [untyped("b")], opset)
        emit("has_element_two_inputs", [node("OptionalHasElement", ["x", "x"], ["b"])], o, [untyped("b")], opset)
        emit("has_element_two_outputs", [node("OptionalHasElement", ["x"], ["b", "c"])], o, [untyped("b")], opset)
        emit("get_element_no_input", [node("OptionalGetElement", [], ["y"])], [], [untyped("y")], opset)
        emit("get_element_unknown", [node("OptionalGetElement", ["q"], ["y"])], [], [untyped("y")], opset)
        chain = [
            node("Optional", ["x"], ["o"]),
            node("OptionalHasElement", ["o"], ["b"]),
            node("OptionalGetElement", ["o"], ["y"]),
            node("Identity", ["o"], ["z"]),
        ]
        emit("optional_chain", chain, [x("x", T.FLOAT, ["N", 2])], [untyped("b"), untyped("y"), untyped("z")], opset)


def identity_and_cast_like(emit):
    kinds = [
        ("sequence", lambda: value("x", seq(T.FLOAT, ["a", 2]))),
        ("sequence_no_shape", lambda: value("x", seq(T.FLOAT, None))),
        ("optional", lambda: value("x", opt(tensor(T.INT64, [2])))),
        ("optional_sequence", lambda: value("x", opt(seq(T.INT64, [2])))),
        ("map", lambda: value("x", h.make_map_type_proto(T.INT64, tensor(T.FLOAT, [3])))),
        ("sparse", lambda: value("x", h.make_sparse_tensor_type_proto(T.FLOAT, [2, 3]))),
        ("tensor_no_element_type", lambda: value("x", tensor(0, [2]))),
        ("bare_sequence", lambda: bare("x", "sequence_type")),
        ("tensor_no_shape", lambda: x("x", T.FLOAT, None)),
    ]
    for opset in (13, 14, 16, 21, 25):
        for label, make in kinds:
            emit(f"identity_{label}", [node("Identity", ["x"], ["y"])], [make()], [untyped("y")], opset)
        emit("identity_unknown", [node("Identity", ["q"], ["y"])], [], [untyped("y")], opset)
    pairs = [
        ("tensors", x("x", T.FLOAT, [2, "N"]), x("t", T.INT64, [5])),
        ("input_no_shape", x("x", T.FLOAT, None), x("t", T.INT64, [5])),
        ("input_unknown", None, x("t", T.INT64, [5])),
        ("target_unknown", x("x", T.FLOAT, [2]), None),
        ("target_sequence", x("x", T.FLOAT, [2]), value("t", seq(T.INT64, [1]))),
        ("sequences", value("x", seq(T.FLOAT, [3])), value("t", seq(T.INT64, [1]))),
        ("input_sequence", value("x", seq(T.FLOAT, [3])), x("t", T.INT64, [1])),
        ("input_sequence_no_shape", value("x", seq(T.FLOAT, None)), x("t", T.INT64, [1])),
    ]
    for opset in (15, 21):
        for label, a, b in pairs:
            inputs = [v for v in (a, b) if v is not None]
            emit(f"cast_like_{label}", [node("CastLike", ["x", "t"], ["y"])], inputs, [untyped("y")], opset)


def main(directory):
    emit = Writer(directory)
    sequence_making(emit)
    sequence_changing(emit)
    splitting_and_concatenating(emit)
    optionals(emit)
    identity_and_cast_like(emit)


if __name__ == "__main__":
    main(sys.argv[1])
