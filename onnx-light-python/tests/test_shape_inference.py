"""`shape_inference` and `check_model(full_check=True)`: the same models and the same
refusals as `onnx`'s, on models built here (the backend corpus is compared by the Rust
differential test)."""

import numpy as np
import onnx
import onnx.defs
import onnx.shape_inference
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import onnx_light.onnx as ol
from onnx_light.onnx import checker, shape_inference


def _model(nodes, inputs, outputs, inits=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _transformer_block():
    """MatMul, Add, Reshape with a constant shape, Transpose, Softmax, Concat, Shape:
    symbolic batch, an untyped output, a declared intermediate."""
    x = helper.make_tensor_value_info("x", T.FLOAT, ["batch", 8, 16])
    w = numpy_helper.from_array(np.ones((16, 16), np.float32), "w")
    b = numpy_helper.from_array(np.zeros(16, np.float32), "b")
    shape = numpy_helper.from_array(np.array([0, 8, 4, 4], np.int64), "shape")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["h"]),
        helper.make_node("Reshape", ["h", "shape"], ["heads"]),
        helper.make_node("Transpose", ["heads"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["t"], ["p"], axis=-1),
        helper.make_node("Concat", ["p", "p"], ["c"], axis=1),
        helper.make_node("Shape", ["c"], ["s"]),
    ]
    outputs = [helper.make_empty_tensor_value_info("c"), helper.make_tensor_value_info("s", T.INT64, None)]
    m = _model(nodes, [x], outputs, [w, b, shape])
    m.graph.value_info.append(helper.make_tensor_value_info("h", T.FLOAT, None))
    return m


@pytest.mark.parametrize("strict", [False, True])
def test_infer_shapes_gives_onnxs_model_byte_for_byte(strict):
    ref = _transformer_block()
    want = onnx.shape_inference.infer_shapes(ref, strict_mode=strict).SerializeToString()
    ours = ol.load_from_string(ref.SerializeToString())
    got = shape_inference.infer_shapes(ours, strict_mode=strict)
    assert got.SerializeToString() == want
    # The argument is not changed; bytes are accepted too.
    assert len(ours.graph.value_info) == 1
    assert shape_inference.infer_shapes(ref.SerializeToString()).SerializeToString() == want


def _shape_arithmetic_block():
    """Reshape, Expand and ConstantOfShape to shapes computed from ``Shape``: gathered,
    sliced, multiplied, concatenated; a symbolic batch."""
    x = helper.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4])
    consts = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([3], np.int64), "three"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"]),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["flat"], axis=0),
        helper.make_node("Reshape", ["x", "flat"], ["r"]),
        helper.make_node("Slice", ["s", "one", "three"], ["hw"]),
        helper.make_node("Mul", ["hw", "hw"], ["hw2"]),
        helper.make_node("Concat", ["n1", "hw2"], ["big"], axis=0),
        helper.make_node("ConstantOfShape", ["big"], ["z"]),
        helper.make_node("Expand", ["x", "s"], ["e"]),
    ]
    return _model(nodes, [x], [helper.make_empty_tensor_value_info("z")], consts)


@pytest.mark.parametrize("strict", [False, True])
def test_data_prop_gives_onnxs_model_byte_for_byte(strict):
    ref = _shape_arithmetic_block()
    want = onnx.shape_inference.infer_shapes(ref, strict_mode=strict, data_prop=True)
    ours = ol.load_from_string(ref.SerializeToString())
    got = shape_inference.infer_shapes(ours, strict_mode=strict, data_prop=True)
    assert got.SerializeToString() == want.SerializeToString()
    # The propagated values reach the shapes: the batch name survives the Reshape.
    types = {vi.name: vi.type for vi in got.graph.value_info}
    assert [d.dim_param or d.dim_value for d in types["r"].tensor_type.shape.dim][0] == "batch"
    assert [d.dim_value for d in types["z"].tensor_type.shape.dim][1:] == [9, 16]
    # Without data_prop, onnx and onnx-light both know only the ranks.
    plain = shape_inference.infer_shapes(ours, strict_mode=strict)
    assert plain.SerializeToString() == onnx.shape_inference.infer_shapes(ref, strict_mode=strict).SerializeToString()
    assert plain.SerializeToString() != got.SerializeToString()


def test_infer_shapes_path_propagates_data_when_asked(tmp_path):
    ref = _shape_arithmetic_block()
    path = tmp_path / "m.onnx"
    onnx.save(ref, str(path))
    shape_inference.infer_shapes_path(str(path), str(tmp_path / "out.onnx"), data_prop=True)
    want = onnx.shape_inference.infer_shapes(ref, data_prop=True)
    assert onnx.load(str(tmp_path / "out.onnx")).SerializeToString() == want.SerializeToString()


def test_conflicts_raise_inference_error_in_strict_mode_only():
    x = helper.make_tensor_value_info("x", T.FLOAT, [2])
    ref = _model([helper.make_node("Relu", ["x"], ["r"], name="relu")], [x], [helper.make_tensor_value_info("r", T.FLOAT, [3])])
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(ref, strict_mode=True)
    ours = ol.load_from_string(ref.SerializeToString())
    with pytest.raises(shape_inference.InferenceError, match=r"Relu.*relu.*differ in dimension 0: \(2\) vs \(3\)"):
        shape_inference.infer_shapes(ours, strict_mode=True)
    assert shape_inference.infer_shapes(ours).SerializeToString() == onnx.shape_inference.infer_shapes(ref).SerializeToString()
    assert issubclass(shape_inference.InferenceError, ol.Error)


def test_check_type_refuses_what_the_schema_does_not_allow_in_either_mode():
    s = helper.make_tensor_value_info("s", T.STRING, [2])
    ref = _model([helper.make_node("Relu", ["s"], ["r"], name="n")], [s], [])
    ours = ol.load_from_string(ref.SerializeToString())
    for strict in (False, True):
        with pytest.raises(onnx.shape_inference.InferenceError):
            onnx.shape_inference.infer_shapes(ref, check_type=True, strict_mode=strict)
        with pytest.raises(shape_inference.InferenceError, match=r"X typestr: T, has unsupported type: tensor\(string\)"):
            shape_inference.infer_shapes(ours, check_type=True, strict_mode=strict)
    # Without check_type, both pass.
    onnx.shape_inference.infer_shapes(ref)
    shape_inference.infer_shapes(ours)


def test_infer_shapes_path_writes_in_place_or_elsewhere_and_keeps_external_data(tmp_path):
    ref = _transformer_block()
    want = onnx.shape_inference.infer_shapes(ref)
    src = tmp_path / "m.onnx"
    # The weights go external; the small shape stays in the model file (as `onnx`,
    # neither reads the values of an external tensor here).
    ol.save(ol.load_from_string(ref.SerializeToString()), str(src), save_as_external_data=True, location="m.data", size_threshold=64)
    data_before = (tmp_path / "m.data").read_bytes()
    out = tmp_path / "inferred.onnx"
    shape_inference.infer_shapes_path(src, out)
    got = ol.load(str(out))
    assert [v.name for v in got.graph.value_info] == [v.name for v in want.graph.value_info]
    assert got.graph.value_info[2].type == ol.load_from_string(want.SerializeToString()).graph.value_info[2].type
    assert ol.load(str(out), load_external_data=False).graph.initializer[0].data_location == ol.TensorProto.EXTERNAL
    # The weights stay where they were, untouched, and load through the new model.
    assert (tmp_path / "m.data").read_bytes() == data_before
    assert numpy_helper.to_array(onnx.load(str(out)).graph.initializer[0]).shape == (16, 16)
    # In place (the default output) while the source is mapped.
    shape_inference.infer_shapes_path(str(src))
    assert len(ol.load(str(src)).graph.value_info) == len(want.graph.value_info)
    with pytest.raises(FileNotFoundError):
        shape_inference.infer_shapes_path(tmp_path / "missing.onnx")
    with pytest.raises(TypeError):
        shape_inference.infer_shapes_path(ref)


def test_infer_node_outputs_as_onnx():
    schema = onnx.defs.get_schema("Reshape")
    node = helper.make_node("Reshape", ["a", "b"], ["c"])
    types = {"a": helper.make_tensor_type_proto(T.FLOAT, ["n", 3]), "b": helper.make_tensor_type_proto(T.INT64, [2])}
    data = {"b": helper.make_tensor("b", T.INT64, [2], [3, -1])}
    want = onnx.shape_inference.infer_node_outputs(schema, node, types, data)
    got = shape_inference.infer_node_outputs(schema, node, types, data)
    assert got["c"].SerializeToString() == want["c"].SerializeToString()
    with pytest.raises(KeyError):
        shape_inference.infer_node_outputs(schema, node, {"a": types["a"]})


def test_infer_function_output_types_as_onnx():
    perm = onnx.AttributeProto(name="perm", ref_attr_name="p", type=onnx.AttributeProto.INTS)
    transpose = helper.make_node("Transpose", ["s"], ["z"])
    transpose.attribute.append(perm)
    f = helper.make_function(
        "local", "F", ["x", "y"], ["z", "w"],
        [helper.make_node("Add", ["x", "y"], ["s"]), transpose, helper.make_node("Foo", ["s"], ["w"])],
        [helper.make_opsetid("", 18)], attributes=["p"],
    )
    tx = helper.make_tensor_type_proto(T.FLOAT, ["n", 3])
    ty = helper.make_tensor_type_proto(T.FLOAT, [3])
    for attrs in ([helper.make_attribute("p", [1, 0])], []):
        want = onnx.shape_inference.infer_function_output_types(f, [tx, ty], attrs)
        got = shape_inference.infer_function_output_types(f, [tx, ty], attrs)
        assert [t.SerializeToString() for t in got] == [t.SerializeToString() for t in want]
    bad = helper.make_tensor_type_proto(T.INT32, [3])
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_function_output_types(f, [tx, bad], [])
    with pytest.raises(shape_inference.InferenceError, match="inconsistent type"):
        shape_inference.infer_function_output_types(f, [tx, bad], [])


def test_full_check_verdicts_match_onnx():
    untyped_output = _transformer_block()
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(untyped_output, full_check=True)
    with pytest.raises(checker.ValidationError):
        checker.check_model(ol.load_from_string(untyped_output.SerializeToString()), full_check=True)
    good = _transformer_block()
    good.graph.output[0].CopyFrom(helper.make_tensor_value_info("c", T.FLOAT, ["batch", 8, 8, 4]))
    good.graph.output[1].CopyFrom(helper.make_tensor_value_info("s", T.INT64, [4]))
    x = helper.make_tensor_value_info("x", T.FLOAT, [2])
    conflicting = _model([helper.make_node("Relu", ["x"], ["r"])], [x], [helper.make_tensor_value_info("r", T.FLOAT, [3])])
    s = helper.make_tensor_value_info("s", T.STRING, [2])
    wrong_type = _model([helper.make_node("Relu", ["s"], ["r"])], [s], [helper.make_tensor_value_info("r", T.STRING, [2])])
    for ref, fails in ((good, False), (conflicting, True), (wrong_type, True)):
        ours = ol.load_from_string(ref.SerializeToString())
        if fails:
            with pytest.raises(onnx.shape_inference.InferenceError):
                onnx.checker.check_model(ref, full_check=True)
            with pytest.raises(shape_inference.InferenceError):
                checker.check_model(ours, full_check=True)
        else:
            onnx.checker.check_model(ref, full_check=True)
            checker.check_model(ours, full_check=True)
    # A model the checker refuses is refused before inference, with ValidationError.
    broken = ol.load_from_string(good.SerializeToString())
    broken.graph.node[0].op_type = "NoSuchOp"
    with pytest.raises(checker.ValidationError):
        checker.check_model(broken, full_check=True)


def test_infer_shapes_path_does_not_hold_the_weights_in_memory(tmp_path):
    # A 256 MiB single-file model, inferred in place in a fresh process: the weights
    # are copied file to file, so the process stays far below the file's size.
    import subprocess
    import sys

    weight = numpy_helper.from_array(np.ones((64, 1024, 1024), dtype=np.float32), "w")
    model = _model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        [helper.make_tensor_value_info("x", T.FLOAT, [64, 1024, 1024])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)],
        [weight],
    )
    path = tmp_path / "big.onnx"
    onnx.save(model, str(path))
    del model, weight
    # The peak resident set of the new process alone (`VmHWM`; `ru_maxrss` would carry
    # this test's own peak over the fork).
    script = (
        "import sys\n"
        "from onnx_light.onnx import shape_inference\n"
        "shape_inference.infer_shapes_path(sys.argv[1])\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "print(int(status.split()[0]) // 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], check=True, capture_output=True, text=True
    )
    assert int(out.stdout.strip()) < 160, out.stdout
    inferred = onnx.load(str(path))
    assert inferred.graph.output[0].type.tensor_type.shape.dim[2].dim_value == 1024
    assert numpy_helper.to_array(inferred.graph.initializer[0]).sum() == 64 * 1024 * 1024


def test_flatten_keeps_a_lone_symbolic_dimension_as_onnx_does():
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[N, 3, M] X, float[1, K, 2] W) => (float[A, B] Y) {
        Y = Flatten <axis = 1> (X) Z = Flatten <axis = 2> (W) V = Flatten <axis = 2> (X)
    }
    """
    ours = ol.shape_inference.infer_shapes(ol.parser.parse_model(text))
    theirs = onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text))
    assert ours.SerializeToString() == theirs.SerializeToString()
    assert [d.dim_param for d in ours.graph.value_info[0].type.tensor_type.shape.dim] == ["K", ""]
