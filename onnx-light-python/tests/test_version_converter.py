"""onnx_light.onnx.version_converter against the official onnx.version_converter:
models built here (upgrades and downgrades through the adapters that rewrite nodes,
control flow, other domains, refusals) give the same bytes, refusals raise
ConvertError (a RuntimeError, as onnx raises), and the API checks its arguments as
onnx's does."""

import onnx
import onnx.version_converter as ref
import pytest
from onnx import TensorProto, helper

import onnx_light.onnx as ol
from onnx_light.onnx import version_converter

V = helper.make_tensor_value_info


def model(nodes, opset, inputs=None, outputs=None, initializers=(), extra_opsets=()):
    graph = helper.make_graph(
        nodes,
        "g",
        inputs or [V("x", TensorProto.FLOAT, [2, 3, 4])],
        outputs or [V(nodes[-1].output[0], TensorProto.FLOAT, None)],
        initializer=list(initializers),
    )
    opsets = [helper.make_opsetid("", opset), *extra_opsets]
    return helper.make_model(graph, opset_imports=opsets)


def results(m, target):
    """onnx's and onnx_light's results for the same model: bytes, or the exception."""
    data = m.SerializeToString()
    out = []
    for convert, load in (
        (ref.convert_version, onnx.load_from_string),
        (version_converter.convert_version, ol.load_from_string),
    ):
        try:
            out.append(convert(load(data), target).SerializeToString())
        except Exception as e:  # noqa: BLE001 (compared by the caller)
            out.append(e)
    return out


def assert_same(m, target):
    theirs, ours = results(m, target)
    if isinstance(theirs, Exception):
        assert isinstance(ours, version_converter.ConvertError), (theirs, ours)
        assert isinstance(ours, RuntimeError)
    else:
        assert not isinstance(ours, Exception), ours
        assert ours == theirs


CASES = [
    # Axes attribute <-> input.
    (model([helper.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0)], 11), 13),
    (model([helper.make_node("ReduceMean", ["x"], ["y"], axes=[0, 2])], 13), 18),
    (model([helper.make_node("Squeeze", ["x"], ["y"], axes=[0])], 11), 21),
    (
        model(
            [helper.make_node("Unsqueeze", ["x", "a"], ["y"])],
            13,
            initializers=[helper.make_tensor("a", TensorProto.INT64, [1], [0])],
        ),
        11,
    ),
    # Split, Softmax, Dropout, Clip, Pad, TopK, Slice, Resize.
    (model([helper.make_node("Split", ["x"], ["a", "b"], axis=2, split=[1, 3])], 11), 18),
    (model([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1)], 13), 18),
    (model([helper.make_node("Softmax", ["x"], ["y"], axis=1)], 11), 13),
    (model([helper.make_node("LogSoftmax", ["x"], ["y"])], 13), 11),
    (model([helper.make_node("Dropout", ["x"], ["y"], ratio=0.25)], 11), 13),
    (model([helper.make_node("Clip", ["x"], ["y"], max=6.0)], 10), 11),
    (model([helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 0, 1, 0], value=1.5)], 10), 11),
    (model([helper.make_node("TopK", ["x"], ["v", "i"], k=2)], 9), 11),
    (model([helper.make_node("Slice", ["x"], ["y"], starts=[0], ends=[1], axes=[1])], 9), 13),
    # Old opsets: broadcasting, Gemm, Upsample, Reshape, type extensions, Scan.
    (
        model(
            [helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)],
            6,
            inputs=[V("x", TensorProto.FLOAT, [2, 3, 4]), V("b", TensorProto.FLOAT, [3])],
        ),
        7,
    ),
    (
        model(
            [helper.make_node("Mul", ["x", "b"], ["y"])],
            7,
            inputs=[V("x", TensorProto.FLOAT, [2, 3, 4]), V("b", TensorProto.FLOAT, [4])],
        ),
        6,
    ),
    (
        model(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)],
            6,
            inputs=[
                V("a", TensorProto.FLOAT, [2, 3]),
                V("b", TensorProto.FLOAT, [5, 3]),
                V("c", TensorProto.FLOAT, [5]),
            ],
        ),
        7,
    ),
    (
        model(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"])],
            7,
            inputs=[
                V("a", TensorProto.FLOAT, [2, 3]),
                V("b", TensorProto.FLOAT, [3, 5]),
                V("c", TensorProto.FLOAT, [1, 5]),
            ],
        ),
        6,
    ),
    (
        model(
            [helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0])],
            8,
            inputs=[V("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        ),
        11,
    ),
    (model([helper.make_node("Reshape", ["x"], ["y"], shape=[6, 4])], 4), 5),
    (
        model(
            [helper.make_node("Reshape", ["x", "s"], ["y"])],
            5,
            initializers=[helper.make_tensor("s", TensorProto.INT64, [2], [6, 4])],
        ),
        4,
    ),
    (
        model(
            [
                helper.make_node(
                    "Constant", [], ["c"], value=helper.make_tensor("v", TensorProto.INT64, [2], [1, 2])
                ),
                helper.make_node("Identity", ["c"], ["y"]),
            ],
            9,
        ),
        8,
    ),
    (
        model(
            [helper.make_node("MatMul", ["a", "a"], ["y"])],
            9,
            inputs=[V("a", TensorProto.INT32, [2, 2])],
            outputs=[V("y", TensorProto.INT32, None)],
        ),
        8,
    ),
    (
        model(
            [helper.make_node("Upsample", ["x", "s"], ["y"])],
            9,
            inputs=[V("x", TensorProto.FLOAT, [1, 1, 2, 2])],
            initializers=[helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 2, 2])],
        ),
        8,
    ),
    (
        model(
            [
                helper.make_node(
                    "Scan",
                    ["init", "seq"],
                    ["last", "all"],
                    num_scan_inputs=1,
                    body=helper.make_graph(
                        [
                            helper.make_node("Add", ["s", "e"], ["s2"]),
                            helper.make_node("Identity", ["s2"], ["o"]),
                        ],
                        "body",
                        [V("s", TensorProto.FLOAT, [2]), V("e", TensorProto.FLOAT, [2])],
                        [V("s2", TensorProto.FLOAT, [2]), V("o", TensorProto.FLOAT, [2])],
                    ),
                )
            ],
            9,
            inputs=[V("init", TensorProto.FLOAT, [2]), V("seq", TensorProto.FLOAT, [3, 2])],
            outputs=[V("last", TensorProto.FLOAT, [2]), V("all", TensorProto.FLOAT, [3, 2])],
        ),
        8,
    ),
    # Control flow: the branches are converted with their node.
    (
        model(
            [
                helper.make_node(
                    "If",
                    ["c"],
                    ["y"],
                    then_branch=helper.make_graph(
                        [helper.make_node("Squeeze", ["x"], ["t"], axes=[0])],
                        "then",
                        [],
                        [V("t", TensorProto.FLOAT, None)],
                    ),
                    else_branch=helper.make_graph(
                        [helper.make_node("Squeeze", ["x"], ["e"], axes=[0])],
                        "else",
                        [],
                        [V("e", TensorProto.FLOAT, None)],
                    ),
                )
            ],
            11,
            inputs=[V("c", TensorProto.BOOL, []), V("x", TensorProto.FLOAT, [1, 3])],
        ),
        13,
    ),
    # Other domains are left alone.
    (
        model(
            [helper.make_node("Custom", ["x"], ["y"], domain="my.ops")],
            12,
            extra_opsets=[helper.make_opsetid("my.ops", 1)],
        ),
        13,
    ),
    # Refusals: no previous version, a type the older version lacks, no adapter.
    (model([helper.make_node("Gelu", ["x"], ["y"])], 20), 19),
    (
        model(
            [helper.make_node("Max", ["x", "x"], ["y"])],
            12,
            inputs=[V("x", TensorProto.INT32, [2])],
            outputs=[V("y", TensorProto.INT32, None)],
        ),
        11,
    ),
    (
        model(
            [helper.make_node("Softmax", ["x"], ["y"]), helper.make_node("Reshape", ["y", "s"], ["z"])],
            13,
            inputs=[V("x", TensorProto.FLOAT, [2, 3]), V("s", TensorProto.INT64, [1])],
        ),
        12,
    ),
    (model([helper.make_node("Relu", ["x"], ["y"])], 14), 99),
    (model([helper.make_node("Relu", ["x"], ["y"])], 14), 0),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_same_result_as_onnx(index):
    m, target = CASES[index]
    assert_same(m, target)


def test_onnx_messages_are_accepted_and_the_input_is_not_changed():
    m = model([helper.make_node("Squeeze", ["x"], ["y"], axes=[0])], 11)
    before = m.SerializeToString()
    out = version_converter.convert_version(m, 13)
    assert m.SerializeToString() == before
    assert [n.op_type for n in out.graph.node] == ["Constant", "Squeeze"]
    assert out.opset_import[0].version == 13


def test_arguments_are_checked_as_onnx_checks_them():
    m = ol.load_from_string(model([helper.make_node("Relu", ["x"], ["y"])], 14).SerializeToString())
    with pytest.raises(TypeError, match="only accepts ModelProto"):
        version_converter.convert_version(b"not a model", 13)
    with pytest.raises(TypeError, match="only accepts int"):
        version_converter.convert_version(m, "13")
    with pytest.raises(version_converter.ConvertError, match="No Previous Version of Gelu"):
        version_converter.convert_version(
            ol.load_from_string(model([helper.make_node("Gelu", ["x"], ["y"])], 20).SerializeToString()),
            19,
        )
    assert ol.version_converter is version_converter


def test_softmax_down_to_12_before_a_reshape_without_outputs_names_onnx_reason():
    # A Reshape of another domain with no outputs reads Softmax's output: onnx's adapter
    # asserts the Reshape has an output, and the refusal says so on both sides.
    m = model(
        [
            helper.make_node("Softmax", ["x"], ["y"], axis=-1),
            helper.make_node("Reshape", ["y"], [], domain="custom.domain"),
        ],
        13,
        inputs=[V("x", TensorProto.FLOAT, [1, 2])],
        outputs=[V("y", TensorProto.FLOAT, [1, 2])],
        extra_opsets=[helper.make_opsetid("custom.domain", 1)],
    )
    theirs, ours = results(m, 12)
    reason = "Reshape node must have at least 1 output"
    assert isinstance(theirs, RuntimeError) and reason in str(theirs)
    assert isinstance(ours, version_converter.ConvertError) and reason in str(ours)
