"""`numpy_helper.from_array(array, name, copy=False)`: a tensor over the array's own
memory; and the `ml_dtypes` types through `from_array`, `make_tensor` and `numpy()`,
byte for byte as `onnx` makes them."""

import gc

import numpy as np
import onnx
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import helper, numpy_helper

ml_dtypes = pytest.importorskip("ml_dtypes")


def _address(a):
    return a.__array_interface__["data"][0]


def _model(*tensors):
    graph = helper.make_graph([], "g", [], [], list(tensors))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_copy_false_shares_the_arrays_memory_and_keeps_it_alive():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = numpy_helper.from_array(a, "w", copy=False)
    assert (t.name, list(t.dims), t.data_type) == ("w", [3, 4], onnx.TensorProto.FLOAT)
    view = t.numpy()
    assert _address(view) == _address(a)
    np.testing.assert_array_equal(view, a)
    assert not view.flags.writeable
    # The tensor holds the only reference left; the memory stays valid.
    expected = a.copy()
    del a, view
    gc.collect()
    np.testing.assert_array_equal(numpy_helper.to_array(t), expected)


def test_writes_to_a_shared_array_show_in_the_tensor_and_what_it_saves(tmp_path):
    a = np.zeros(1024, dtype=np.int64)
    shared = numpy_helper.from_array(a, "s", copy=False)
    copied = numpy_helper.from_array(a, "c")
    m = _model(shared, copied)
    a[7] = 42
    assert shared.numpy()[7] == 42
    assert copied.numpy()[7] == 0
    assert m.graph.initializer[0].numpy()[7] == 42  # the model's copy shares it too
    ol.save(m, tmp_path / "m.onnx")
    back = ol.load(tmp_path / "m.onnx")
    assert back.graph.initializer[0].numpy()[7] == 42
    assert back.graph.initializer[1].numpy()[7] == 0
    # Assigning the tensor's bytes replaces them and leaves the array alone.
    shared.raw_data = np.ones(1024, dtype=np.int64).tobytes()
    assert a[0] == 0 and shared.numpy()[0] == 1


def test_a_shared_tensor_serializes_and_saves_as_onnxs_copy_does(tmp_path):
    a = np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32)
    t = numpy_helper.from_array(a, "w", copy=False)
    assert t.SerializeToString() == onnx.numpy_helper.from_array(a, "w").SerializeToString()
    m = _model(t)
    ol.save(m, tmp_path / "m.onnx", save_as_external_data=True, location="m.data")
    assert (tmp_path / "m.data").read_bytes() == a.tobytes()
    ref = onnx.load(str(tmp_path / "m.onnx"))
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(ref.graph.initializer[0]), a)


@pytest.mark.parametrize(
    "dtype",
    [np.uint8, np.int8, np.bool_, np.float16, "<i4", "<u8", np.complex64, ml_dtypes.bfloat16,
     ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2fnuz],
)
def test_copy_false_shares_every_type_stored_element_by_element(dtype):
    a = (np.arange(24) % 5).astype(dtype).reshape(2, 3, 4)
    t = numpy_helper.from_array(a, "x", copy=False)
    assert t.SerializeToString() == numpy_helper.from_array(a, "x").SerializeToString()
    assert _address(t.numpy()) == _address(a)


def test_copy_false_shares_views_and_memmaps_and_accepts_empty_arrays(tmp_path):
    base = np.arange(100, dtype=np.float64)
    view = base[10:30].reshape(4, 5)
    t = numpy_helper.from_array(view, copy=False)
    assert not t.HasField("name")
    assert _address(t.numpy()) == _address(view)
    mm = np.memmap(tmp_path / "w.bin", dtype=np.float32, mode="w+", shape=(256,))
    mm[:] = 3.0
    t = numpy_helper.from_array(mm, "m", copy=False)
    assert _address(t.numpy()) == _address(mm)
    np.testing.assert_array_equal(t.numpy(), np.full(256, 3.0, np.float32))
    e = numpy_helper.from_array(np.zeros((0, 3), np.float32), "e", copy=False)
    assert list(e.dims) == [0, 3] and e.raw_data == b"" and e.numpy().shape == (0, 3)


@pytest.mark.parametrize(
    "array, why",
    [
        (np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2], "C-contiguous"),
        (np.asfortranarray(np.ones((3, 4), np.float32)), "C-contiguous"),
        (np.arange(6, dtype=">i4"), "big-endian"),
        (np.array([1, -2, 3], dtype=ml_dtypes.int4), "packed"),
        (np.array([1, 2], dtype=ml_dtypes.uint2), "packed"),
        (np.array([0.5, 1.0], dtype=ml_dtypes.float4_e2m1fn), "packed"),
        (np.array(["a", "b"]), "string"),
    ],
)
def test_copy_false_refuses_arrays_whose_memory_is_not_raw_data(array, why):
    with pytest.raises(ValueError, match=why):
        numpy_helper.from_array(array, "x", copy=False)
    # The default copies them, as onnx does.
    assert numpy_helper.from_array(array, "x") is not None


# Values every type holds exactly, per type (sub-byte integers need small ones).
_ML_TYPES = {
    "bfloat16": (onnx.TensorProto.BFLOAT16, [0.0, 1.5, -2.0, 3.0, 0.5, -0.25, 6.0]),
    "float8_e4m3fn": (onnx.TensorProto.FLOAT8E4M3FN, [0.0, 1.5, -2.0, 3.0, 0.5, -0.25, 6.0]),
    "float8_e4m3fnuz": (onnx.TensorProto.FLOAT8E4M3FNUZ, [0.0, 1.5, -2.0, 3.0, 0.5, -0.25, 6.0]),
    "float8_e5m2": (onnx.TensorProto.FLOAT8E5M2, [0.0, 1.5, -2.0, 3.0, 0.5, -0.25, 6.0]),
    "float8_e5m2fnuz": (onnx.TensorProto.FLOAT8E5M2FNUZ, [0.0, 1.5, -2.0, 3.0, 0.5, -0.25, 6.0]),
    "float8_e8m0fnu": (onnx.TensorProto.FLOAT8E8M0, [1.0, 2.0, 0.5, 4.0, 0.25, 8.0, 1.0]),
    "float4_e2m1fn": (onnx.TensorProto.FLOAT4E2M1, [0.0, 1.5, -2.0, 3.0, 0.5, -1.0, 6.0]),
    "int4": (onnx.TensorProto.INT4, [0, 1, -1, -8, 7, 3, -2]),
    "uint4": (onnx.TensorProto.UINT4, [0, 1, 15, 8, 7, 3, 2]),
    "int2": (onnx.TensorProto.INT2, [0, 1, -1, -2, 1, 0, -2]),
    "uint2": (onnx.TensorProto.UINT2, [0, 1, 2, 3, 1, 0, 2]),
}


@pytest.mark.parametrize("name", sorted(_ML_TYPES))
def test_ml_dtypes_arrays_give_onnxs_tensors_and_come_back(name):
    data_type, values = _ML_TYPES[name]
    # An odd element count: the packed types end in a part-filled byte.
    a = np.array(values).astype(getattr(ml_dtypes, name)).reshape(7, 1)
    ours = numpy_helper.from_array(a, "x")
    assert ours.data_type == data_type
    assert ours.SerializeToString() == onnx.numpy_helper.from_array(a, "x").SerializeToString()
    made = helper.make_tensor("x", data_type, [7, 1], a)
    assert made.SerializeToString() == onnx.helper.make_tensor("x", data_type, [7, 1], a).SerializeToString()
    for t in (ours, made):
        back = t.numpy()
        assert back.dtype == a.dtype and back.shape == a.shape
        np.testing.assert_array_equal(back.astype(np.float32), a.astype(np.float32))
        np.testing.assert_array_equal(numpy_helper.to_array(t).astype(np.float32), a.astype(np.float32))


def test_onnx_ir_reads_our_models(tmp_path):
    onnx_ir = pytest.importorskip(
        "onnx_ir", reason="onnx_ir is pinned in tests/python/requirements.txt; not installed here"
    )
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([1, 2, 3], dtype=ml_dtypes.bfloat16)
    node = helper.make_node("Add", ["X", "w"], ["Y"], name="add")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(w, "w", copy=False), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    ol.save(model, tmp_path / "m.onnx")
    for m in (model, ol.load(tmp_path / "m.onnx", no_copy=True)):
        ir = onnx_ir.serde.deserialize_model(m)
        assert [n.op_type for n in ir.graph] == ["Add"]
        assert ir.opset_imports == {"": 21}
        inits = ir.graph.initializers
        np.testing.assert_array_equal(inits["w"].const_value.numpy(), w)
        assert inits["b"].const_value.dtype == onnx_ir.DataType.BFLOAT16
        np.testing.assert_array_equal(inits["b"].const_value.numpy(), b)
        assert [v.name for v in ir.graph.inputs] == ["X"]
        assert ir.graph.outputs[0].shape == onnx_ir.Shape([3, 4])
