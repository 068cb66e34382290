"""helper / numpy_helper: the same results as `onnx`'s, byte for byte."""

import numpy as np
import onnx
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import helper, numpy_helper

ml_dtypes = pytest.importorskip("ml_dtypes")


def same(ours, theirs):
    assert ours.SerializeToString() == theirs.SerializeToString()


def test_make_functions_match_onnx():
    same(helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3], alpha=0.1, mode="same"),
         onnx.helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3], alpha=0.1, mode="same"))
    same(helper.make_tensor_value_info("x", 1, [None, "N", 3]),
         onnx.helper.make_tensor_value_info("x", 1, [None, "N", 3]))
    same(helper.make_tensor_value_info("s", 1, []), onnx.helper.make_tensor_value_info("s", 1, []))
    same(helper.make_opsetid("ai.onnx.ml", 3), onnx.helper.make_opsetid("ai.onnx.ml", 3))
    for dt, vals in [(1, [1.5, 2.5]), (7, [1, -2]), (6, [3, 4]), (10, [0.5, 1.0]), (16, [1.0, 2.0]),
                     (11, [1.25, 2.5]), (9, [True, False]), (12, [1, 2]), (8, ["a", "bc"]), (14, [1 + 2j])]:
        same(helper.make_tensor("t", dt, [len(vals)], vals), onnx.helper.make_tensor("t", dt, [len(vals)], vals))
    same(helper.make_tensor("r", 1, [2], np.array([1, 2], np.float32).tobytes(), raw=True),
         onnx.helper.make_tensor("r", 1, [2], np.array([1, 2], np.float32).tobytes(), raw=True))
    body = [helper.make_node("Relu", ["a"], ["b"])]
    same(helper.make_function("dom", "f", ["a"], ["b"], body, [helper.make_opsetid("", 17)], attributes=["k"]),
         onnx.helper.make_function("dom", "f", ["a"], ["b"], [onnx.helper.make_node("Relu", ["a"], ["b"])],
                                   [onnx.helper.make_opsetid("", 17)], attributes=["k"]))


def test_make_model_matches_onnx():
    def build(h, nh):
        x = h.make_tensor_value_info("x", 1, [2])
        w = nh.from_array(np.ones(2, np.float32), "w")
        g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "g", [x],
                         [h.make_tensor_value_info("y", 1, [2])], [w], doc_string="d")
        return h.make_model(g, producer_name="p", model_version=3)

    same(build(helper, numpy_helper), build(onnx.helper, onnx.numpy_helper))


def test_attribute_values_round_trip():
    g = helper.make_graph([], "sub", [], [])
    for value in [1, 2.5, "s", b"b", [1, 2], [1.5], ["a", "b"], g, numpy_helper.from_array(np.ones(2))]:
        a = helper.make_attribute("a", value)
        ref = onnx.helper.make_attribute(
            "a", onnx.GraphProto.FromString(value.SerializeToString()) if isinstance(value, ol.GraphProto)
            else onnx.TensorProto.FromString(value.SerializeToString()) if isinstance(value, ol.TensorProto)
            else value)
        same(a, ref)
        got = helper.get_attribute_value(a)
        want = onnx.helper.get_attribute_value(ref)
        if hasattr(want, "SerializeToString"):
            assert got.SerializeToString() == want.SerializeToString()
        else:
            assert got == want


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.arange(6, dtype=np.int64),
        np.array([True, False]),
        np.arange(4, dtype=np.float16),
        np.arange(4, dtype=np.uint8),
        np.arange(4, dtype=np.int8) - 2,
        np.arange(4, dtype=np.uint16),
        np.arange(4, dtype=np.int16),
        np.arange(4, dtype=np.uint32),
        np.arange(4, dtype=np.uint64),
        np.arange(4, dtype=np.float64),
        np.array([1 + 2j], dtype=np.complex64),
        np.array([1 + 2j], dtype=np.complex128),
        np.array(3.5, dtype=np.float32),
        np.array([b"a", b"bc"], dtype=object),
    ],
)
def test_numpy_round_trip_matches_onnx(array):
    ours = numpy_helper.from_array(array, "t")
    theirs = onnx.numpy_helper.from_array(array, "t")
    same(ours, theirs)
    back = numpy_helper.to_array(ours)
    np.testing.assert_array_equal(back, onnx.numpy_helper.to_array(theirs))
    assert back.dtype == onnx.numpy_helper.to_array(theirs).dtype


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4", "float4_e2m1fn",
                                  "int2", "uint2", "float6_e2m3fn", "float6_e3m2fn"])
def test_ml_dtypes_round_trip_matches_onnx(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    array = np.array([0, 1, 2, 3, 4, 5, -1 if "uint" not in name else 6], dtype=np.float32).astype(dtype)
    ours = numpy_helper.from_array(array, "t")
    theirs = onnx.numpy_helper.from_array(array, "t")
    same(ours, theirs)
    back = numpy_helper.to_array(ours)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.astype(np.float32), array.astype(np.float32))


def test_typed_fields_read_like_onnx():
    for dt, vals in [(1, [1.5, 2.5]), (7, [1, -2]), (6, [3, 4]), (10, [0.5, 1.0]), (16, [1.0, 2.0]),
                     (11, [1.25, 2.5]), (9, [True, False]), (13, [1, 2]), (3, [-1, 2]), (17, [1.0, 2.0]),
                     (22, [1, -2, 3]), (21, [1, 2, 3]), (27, [0.5, -1.0, 7.5]), (28, [0.25, -28.0, 1.5])]:
        ref = onnx.helper.make_tensor("t", dt, [len(vals)], vals)
        ours = ol.TensorProto.FromString(ref.SerializeToString())
        np.testing.assert_array_equal(numpy_helper.to_array(ours).astype(np.float64),
                                      onnx.numpy_helper.to_array(ref).astype(np.float64))


def test_type_value_info_sparse_and_training_helpers_match_onnx():
    for mod_ours, mod_ref in [(helper, onnx.helper)]:
        same(mod_ours.make_operatorsetid("", 17), mod_ref.make_operatorsetid("", 17))
        same(mod_ours.make_sparse_tensor_value_info("s", 1, [4, "N"], "doc", ["a", "b"]),
             mod_ref.make_sparse_tensor_value_info("s", 1, [4, "N"], "doc", ["a", "b"]))
        same(mod_ours.make_tensor_sequence_value_info("q", 7, [None, 3]),
             mod_ref.make_tensor_sequence_value_info("q", 7, [None, 3]))
        same(mod_ours.make_empty_tensor_value_info("e"), mod_ref.make_empty_tensor_value_info("e"))
        inner = lambda m: m.make_tensor_type_proto(1, [2])  # noqa: E731
        same(mod_ours.make_optional_type_proto(inner(mod_ours)), mod_ref.make_optional_type_proto(inner(mod_ref)))
        same(mod_ours.make_map_type_proto(7, inner(mod_ours)), mod_ref.make_map_type_proto(7, inner(mod_ref)))
        same(mod_ours.make_sequence_type_proto(mod_ours.make_sparse_tensor_type_proto(1, [3])),
             mod_ref.make_sequence_type_proto(mod_ref.make_sparse_tensor_type_proto(1, [3])))
    values = [1.5, 2.5]
    same(helper.make_sparse_tensor(helper.make_tensor("v", 1, [2], values),
                                   helper.make_tensor("i", 7, [2], [1, 5]), [2, 4]),
         onnx.helper.make_sparse_tensor(onnx.helper.make_tensor("v", 1, [2], values),
                                        onnx.helper.make_tensor("i", 7, [2], [1, 5]), [2, 4]))
    g = lambda m: m.make_graph([m.make_node("Relu", ["x"], ["y"])], "g", [], [])  # noqa: E731
    same(helper.make_training_info(g(helper), [("a", "b")], g(helper), [("c", "d")]),
         onnx.helper.make_training_info(g(onnx.helper), [("a", "b")], g(onnx.helper), [("c", "d")]))


def test_metadata_doc_strings_and_node_attributes_match_onnx():
    def build(m, h):
        node = h.make_node("Conv", ["x"], ["y"], doc_string="node doc", kernel_shape=[3, 3])
        graph = h.make_graph([node], "g", [], [], doc_string="graph doc")
        model = h.make_model(graph, doc_string="model doc")
        h.set_metadata_props(model, {"k": "v", "k2": "v2"})
        return model

    ours, ref = build(ol, helper), build(onnx, onnx.helper)
    same(ours, ref)
    helper.strip_doc_string(ours)
    onnx.helper.strip_doc_string(ref)
    same(ours, ref)
    assert helper.get_node_attr_value(ours.graph.node[0], "kernel_shape") == [3, 3]
    with pytest.raises(ValueError):
        helper.get_node_attr_value(ours.graph.node[0], "pads")


def test_data_type_tables_match_onnx():
    assert sorted(helper.get_all_tensor_dtypes()) == sorted(onnx.helper.get_all_tensor_dtypes())
    for dt in onnx.helper.get_all_tensor_dtypes():
        assert helper.tensor_dtype_to_string(dt) == onnx.helper.tensor_dtype_to_string(dt)
        assert helper.tensor_dtype_to_field(dt) == onnx.helper.tensor_dtype_to_field(dt), dt
        assert helper.tensor_dtype_to_storage_tensor_dtype(dt) == onnx.helper.tensor_dtype_to_storage_tensor_dtype(dt), dt
    for np_dtype in ["float32", "float64", "int8", "uint16", "int64", "bool", "float16", "complex64",
                     ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4]:
        assert helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype)) == onnx.helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype))


@pytest.mark.parametrize("dtype", [">i4", ">f8", ">f2", ">u2", ">c8", "<i8", "=f4"])
def test_from_array_stores_any_byte_order_little_endian(dtype):
    array = np.array([[1, -2, 3], [400, 5, 6000]]).astype(dtype)
    native = array.astype(array.dtype.newbyteorder("="))
    ours = numpy_helper.from_array(array, "t")
    # onnx refuses a non-native byte order; the native array's tensor is the reference.
    same(ours, onnx.numpy_helper.from_array(native, "t"))
    np.testing.assert_array_equal(numpy_helper.to_array(ours), native)


def test_messages_of_the_onnx_package_are_accepted_by_their_bytes(tmp_path):
    X = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    Y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    node = onnx.helper.make_node("Relu", ["x"], ["y"], name="r")
    theirs = onnx.helper.make_model(onnx.helper.make_graph([node], "g", [X], [Y]))
    want = theirs.SerializeToString()
    # Saved, checked and printed as they are.
    ol.save(theirs, tmp_path / "m.onnx")
    assert (tmp_path / "m.onnx").read_bytes() == want
    ol.checker.check_model(theirs)
    assert ol.printer.to_text(theirs) == onnx.printer.to_text(theirs)
    w = onnx.numpy_helper.from_array(np.arange(3, dtype=np.float32), "w")
    np.testing.assert_array_equal(numpy_helper.to_array(w), np.arange(3, dtype=np.float32))
    # Assigned, appended and copied into this package's messages.
    ours = ol.load_from_string(want)
    ours.graph.node.append(node)
    ours.graph.node.extend([node])
    ours.graph.initializer.append(w)
    assert [n.name for n in ours.graph.node] == ["r", "r", "r"]
    graph = helper.make_graph([node], "g2", [X], [Y])
    assert graph.node[0].op_type == "Relu"
    copy = ol.ModelProto()
    copy.CopyFrom(theirs)
    assert copy.SerializeToString() == want
    # The wrong message type is still a TypeError that names both.
    with pytest.raises(TypeError) as info:
        ours.graph.node.append(w)
    assert "NodeProto" in str(info.value) and "TensorProto" in str(info.value)
    with pytest.raises(TypeError) as info:
        ours.graph.node.append(object())
    assert "builtins.object" in str(info.value)


def _same_repr(a, b):
    # Arrays, lists, dicts and None compared by their repr, dtypes included.
    assert repr(a) == repr(b)


@pytest.mark.parametrize(
    "build",
    [
        lambda nh: nh.from_list([np.arange(3, dtype=np.float32), np.ones(2, np.int64)], "l"),
        lambda nh: nh.from_list([np.ones(1)]),
        lambda nh: nh.from_list([[np.ones(1, np.float32)], [np.ones(2, np.float32)]], "n"),
        lambda nh: nh.from_list([{1: np.ones(1, np.float32)}], "lm"),
        lambda nh: nh.from_list([], "e"),
        lambda nh: nh.from_list([np.float32(1)], "scalar"),
        lambda nh: nh.from_dict({1: np.arange(2, dtype=np.float32), 2: np.ones(2, np.float32)}, "d"),
        lambda nh: nh.from_dict({np.int32(1): np.ones(2, np.float32)}),
        lambda nh: nh.from_optional(np.arange(2, dtype=np.float32), "o"),
        lambda nh: nh.from_optional(None, "none"),
        lambda nh: nh.from_optional([np.ones(1, np.float32)], "ol"),
        lambda nh: nh.from_optional({1: np.ones(1, np.float32)}, "om"),
    ],
)
def test_sequences_maps_and_optionals_match_onnx(build):
    ours, theirs = build(numpy_helper), build(onnx.numpy_helper)
    same(ours, theirs)
    back = {"SequenceProto": "to_list", "MapProto": "to_dict", "OptionalProto": "to_optional"}
    name = back[type(theirs).__name__]
    want = getattr(onnx.numpy_helper, name)(theirs)
    _same_repr(getattr(numpy_helper, name)(ours), want)
    _same_repr(getattr(numpy_helper, name)(theirs), want)  # an onnx message too


def test_make_sequence_map_and_optional_match_onnx():
    def tensors(h):
        return [h.make_tensor(f"t{i}", 1, [i + 1], [1.0] * (i + 1)) for i in range(2)]

    s, ts = (h.make_sequence("s", 1, tensors(h)) for h in (helper, onnx.helper))
    same(s, ts)
    same(helper.make_map("m", 7, [1, 2], s), onnx.helper.make_map("m", 7, [1, 2], ts))
    same(helper.make_map("m", 8, [b"a", b"b"], s), onnx.helper.make_map("m", 8, [b"a", b"b"], ts))
    m, tm = helper.make_map("m", 7, [1, 2], s), onnx.helper.make_map("m", 7, [1, 2], ts)
    same(helper.make_optional("o", 4, m), onnx.helper.make_optional("o", 4, tm))
    same(helper.make_optional("e", 0, None), onnx.helper.make_optional("e", 0, None))
    same(helper.make_sequence("u", 0, []), onnx.helper.make_sequence("u", 0, []))
    # What onnx builds without a word, and no ONNX consumer accepts, is refused here.
    with pytest.raises(ValueError, match="key"):
        helper.make_map("m", ol.TensorProto.FLOAT, [1.0], helper.make_sequence("s", 1, []))
    with pytest.raises(ValueError, match="one value per key"):
        helper.make_map("m", 7, [1, 2], helper.make_sequence("s", 1, []))
    with pytest.raises(TypeError):
        helper.make_sequence("s", 9, [])
