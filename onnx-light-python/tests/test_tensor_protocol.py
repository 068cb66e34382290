"""The tensor protocol of TensorProto (numpy, __array__, __dlpack__, tobytes, nbytes, size)
and numpy_helper.to_array: every data type against onnx.numpy_helper.to_array of the same
tensor, views without copies of bytes the tensor holds (aligned or not), their owners
kept alive, and NumPy 2's copy semantics."""

import gc
import os

import ml_dtypes  # noqa: F401 (onnx's and our arrays of the small types use it)
import numpy as np
import onnx
import onnx.numpy_helper as onh
import pytest
from onnx import TensorProto as T
from onnx import helper as oh

import onnx_light.onnx as ol
from onnx_light.onnx import numpy_helper

SIGNED_INTS = {T.INT8, T.INT16, T.INT32, T.INT64, T.INT4, T.INT2}
UNSIGNED_INTS = {T.UINT8, T.UINT16, T.UINT32, T.UINT64, T.UINT4, T.UINT2}
NON_NEGATIVE = {T.FLOAT8E8M0}
ALL_TYPES = [
    v for k, v in T.DataType.items() if k not in ("UNDEFINED", "STRING")
]
SUB_BYTE = {T.INT4, T.UINT4, T.INT2, T.UINT2, T.FLOAT4E2M1, T.FLOAT6E2M3, T.FLOAT6E3M2}
# Types that DLPack (NumPy's exporter) carries: NumPy's own, not ml_dtypes'.
NUMPY_NATIVE = {
    T.FLOAT, T.UINT8, T.INT8, T.UINT16, T.INT16, T.INT32, T.INT64, T.BOOL, T.FLOAT16,
    T.DOUBLE, T.UINT32, T.UINT64, T.COMPLEX64, T.COMPLEX128,
}


def sample(data_type, shape):
    """Values of ``data_type`` (onnx's numpy dtype for it) that every type represents
    exactly: small integers, and floats the 4-bit float has."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n)
    if data_type == T.BOOL:
        values = i % 3 == 1
    elif data_type in SIGNED_INTS:
        values = i % 4 - 2
    elif data_type in NON_NEGATIVE:
        values = np.array([0.5, 1.0, 2.0, 4.0])[i % 4]
    elif data_type in (T.COMPLEX64, T.COMPLEX128):
        values = np.array([1.5, -0.5, 2.0])[i % 3] + 1j * np.array([0.0, 3.0])[i % 2]
    elif data_type in UNSIGNED_INTS:
        values = i % 4
    else:
        values = np.array([-1.5, 0.5, 2.0, 3.0, -6.0, 0.0])[i % 6]
    return np.asarray(values).astype(oh.tensor_dtype_to_np_dtype(data_type)).reshape(shape)


def reference_tensors(data_type, shape):
    """The same values in ``raw_data`` (onnx's from_array) and in the typed field
    (onnx's make_tensor with raw=False), as onnx's messages."""
    values = sample(data_type, shape)
    raw = onh.from_array(values, "r")
    assert raw.data_type == data_type
    typed = oh.make_tensor("t", data_type, list(shape), values.reshape(-1), raw=False)
    assert not typed.HasField("raw_data")
    return raw, typed


def ours(ref):
    return ol.TensorProto.FromString(ref.SerializeToString())


def assert_same_array(got, want):
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if got.dtype == object:
        assert got.tolist() == want.tolist()
    else:
        assert got.tobytes() == want.tobytes()


def owner_of(arr):
    """The object at the end of an array's base chain."""
    while isinstance(arr, np.ndarray) and arr.base is not None:
        arr = arr.base
    return arr


@pytest.mark.parametrize("shape", [(3, 5), (), (0, 4)])
@pytest.mark.parametrize("data_type", ALL_TYPES, ids=lambda d: T.DataType.Name(d))
def test_every_type_gives_onnxs_array_from_raw_and_typed_fields(data_type, shape):
    for ref in reference_tensors(data_type, shape):
        want = onh.to_array(ref)
        t = ours(ref)
        for got in (t.numpy(), np.asarray(t), numpy_helper.to_array(t), numpy_helper.to_array(ref)):
            assert_same_array(got, want)
        assert t.size == want.size
        # tobytes: raw_data layout (little-endian, sub-byte types packed), as onnx stores it
        # in raw_data, whichever field holds the values.
        assert t.tobytes() == onh.from_array(want).raw_data
        assert t.nbytes == len(t.tobytes())


@pytest.mark.parametrize("data_type", ALL_TYPES, ids=lambda d: T.DataType.Name(d))
def test_raw_payloads_are_read_only_views_and_typed_fields_new_arrays(data_type):
    raw, typed = (ours(r) for r in reference_tensors(data_type, (4, 6)))
    a, b = raw.numpy(), raw.numpy()
    if data_type in SUB_BYTE:
        # Unpacked: one value per element, a new array each time.
        assert a.flags.writeable and not np.shares_memory(a, b)
    else:
        assert not a.flags.writeable and np.shares_memory(a, b)
        assert type(owner_of(a)).__name__ == "Payload"
        assert np.shares_memory(a, np.asarray(raw, copy=False))
    c, d = typed.numpy(), typed.numpy()
    assert c.flags.writeable and not np.shares_memory(c, d)


def test_strings_as_onnx_gives_them():
    ref = oh.make_tensor("s", T.STRING, [2, 2], [b"a", "\u00e9".encode(), b"bc", b""])
    t = ours(ref)
    assert_same_array(t.numpy(), onh.to_array(ref))
    assert list(t.numpy().reshape(-1)) == list(onh.to_array(ref).reshape(-1))
    assert t.size == 4 and t.nbytes == 1 + 2 + 2 + 0
    with pytest.raises(TypeError, match="string_data"):
        t.tobytes()


def unaligned_model(count=6):
    """A model whose float and int64 initializers sit at different offsets of the
    serialized bytes (names of different lengths shift them)."""
    inits = [
        onh.from_array(np.arange(300, dtype=np.float32) * (k + 1), "w" * (k + 1))
        for k in range(count)
    ] + [onh.from_array(np.arange(200, dtype=np.int64) - k, "i" * (k + 2)) for k in range(count)]
    graph = oh.make_graph([], "g", [], [], inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def test_unaligned_payloads_of_a_no_copy_load_are_views_of_the_callers_bytes():
    ref = unaligned_model()
    data = bytes(bytearray(ref.SerializeToString()))
    m = ol.load(data, no_copy=True)
    whole = np.frombuffer(data, dtype=np.uint8)
    arrays = [t.numpy() for t in m.graph.initializer]
    helper_arrays = [numpy_helper.to_array(t) for t in m.graph.initializer]
    for a, h, r in zip(arrays, helper_arrays, ref.graph.initializer):
        assert_same_array(a, onh.to_array(r))
        assert_same_array(h, onh.to_array(r))
        assert np.shares_memory(a, whole) and np.shares_memory(h, whole)  # no copy
        assert not a.flags.writeable and not h.flags.writeable
    # The point of the test: some of them are not aligned for their type.
    assert not all(a.flags.aligned for a in arrays)
    with pytest.raises(ValueError):
        next(a for a in arrays if not a.flags.aligned).flags.writeable = True
    assert not all(np.asarray(t, copy=False).flags.aligned for t in m.graph.initializer)


def test_views_keep_their_bytes_alive_after_the_model_is_gone(tmp_path):
    ref = unaligned_model()
    want = [onh.to_array(r) for r in ref.graph.initializer]
    data = bytes(bytearray(ref.SerializeToString()))
    m = ol.load(data, no_copy=True)
    from_bytes = [t.numpy() for t in m.graph.initializer]
    path = tmp_path / "m.onnx"
    onnx.save(ref, path)
    mapped_model = ol.load(path, no_copy=True)
    mapped = [t.numpy() for t in mapped_model.graph.initializer]
    copied_model = ol.load(path)
    copied = [np.asarray(t) for t in copied_model.graph.initializer]
    del m, data, mapped_model, copied_model
    gc.collect()
    os.remove(path)  # the mapping outlives the file's name
    for arrays in (from_bytes, mapped, copied):
        for a, w in zip(arrays, want):
            assert_same_array(a, w)
            assert type(owner_of(a)).__name__ == "Payload"


def test_replacing_a_tensors_data_leaves_earlier_arrays_as_they_were():
    t = ours(onh.from_array(np.arange(12, dtype=np.float32), "x"))
    before = t.numpy()
    t.raw_data = np.zeros(12, np.float32).tobytes()
    np.testing.assert_array_equal(before, np.arange(12, dtype=np.float32))
    np.testing.assert_array_equal(t.numpy(), np.zeros(12, np.float32))


def test_array_protocol_copy_semantics():
    raw = ours(onh.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x"))
    view = np.asarray(raw)  # copy=None: a view when the bytes are held
    assert np.shares_memory(view, raw.numpy()) and not view.flags.writeable
    assert np.shares_memory(np.asarray(raw, copy=False), view)
    fresh = np.array(raw)  # copy=True: a new, writable array
    assert fresh.flags.writeable and not np.shares_memory(fresh, view)
    fresh[0, 0] = 7
    assert raw.numpy()[0, 0] == 0
    wide = np.asarray(raw, dtype=np.float64)
    assert wide.dtype == np.float64 and wide.tolist() == view.tolist()
    with pytest.raises(ValueError, match="copy"):
        np.asarray(raw, dtype=np.float64, copy=False)
    # Values that are not held as bytes need a copy.
    typed = ours(oh.make_tensor("t", T.FLOAT, [3], [1.0, 2.0, 3.0]))
    packed = ours(onh.from_array(np.array([1, -2, 3], dtype=ml_dtypes.int4), "p"))
    for t in (typed, packed):
        with pytest.raises(ValueError, match="copy"):
            np.asarray(t, copy=False)
        a = np.array(t)
        assert a.flags.writeable
        assert_same_array(np.asarray(t), a)
    assert raw.__array__(None, True).flags.writeable
    assert raw.__array__(np.dtype(np.float32), None).base is not None


def test_dlpack_exports_a_read_only_view_on_the_cpu():
    t = ours(unaligned_model().graph.initializer[1])
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy()) and not a.flags.writeable
    assert_same_array(a, onh.to_array(unaligned_model().graph.initializer[1]))
    # A consumer that cannot be told "read-only" gets a copy only when it asks for one.
    with pytest.raises(BufferError):
        t.__dlpack__()
    assert np.from_dlpack(t, copy=True).flags.writeable
    typed = ours(oh.make_tensor("t", T.INT64, [2], [4, 5]))
    assert np.from_dlpack(typed).tolist() == [4, 5]
    with pytest.raises(BufferError):
        typed.__dlpack__(max_version=(1, 0), copy=False)
    bf16 = ours(onh.from_array(np.ones(3, dtype=ml_dtypes.bfloat16), "b"))
    with pytest.raises(BufferError):
        np.from_dlpack(bf16)


def test_external_data_left_on_disk_and_never_loaded(tmp_path):
    ref = unaligned_model(3)
    want = [onh.to_array(r) for r in ref.graph.initializer]
    path = tmp_path / "m.onnx"
    onnx.save(ref, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="m.data", size_threshold=0)
    # A structure-only load reads a tensor's payload when its values are asked for.
    lazy = ol.load(path, structure_only=True)
    for t, w in zip(lazy.graph.initializer, want):
        assert_same_array(t.numpy(), w)
        assert_same_array(numpy_helper.to_array(t), w)
        assert t.tobytes() == w.tobytes()
    # Never loaded: the tensor does not know its directory; to_array takes it.
    bare = ol.load(path, load_external_data=False).graph.initializer[0]
    with pytest.raises(ol.ExternalDataError, match="m.data"):
        bare.numpy()
    with pytest.raises(ol.ExternalDataError):
        bare.tobytes()
    assert bare.size == want[0].size and bare.nbytes == want[0].nbytes
    assert_same_array(numpy_helper.to_array(bare, str(tmp_path)), want[0])
    assert bare.data_location == ol.TensorProto.EXTERNAL  # unchanged


def test_bad_data_raises_typed_errors():
    short = ol.TensorProto(name="x", data_type=T.FLOAT, dims=[4], raw_data=b"\0" * 12)
    with pytest.raises(ol.TensorDataError, match="x"):
        short.numpy()
    with pytest.raises(ol.TensorDataError):
        np.asarray(short)
    few = ol.TensorProto(name="y", data_type=T.FLOAT, dims=[3], float_data=[1.0])
    with pytest.raises(ol.TensorDataError, match="y"):
        few.numpy()
    unknown = ol.TensorProto(name="z", data_type=99, dims=[1], raw_data=b"\0")
    with pytest.raises(ol.TensorDataError):
        unknown.numpy()
    with pytest.raises(ol.TensorDataError):
        _ = unknown.nbytes
    negative = ol.TensorProto(name="n", data_type=T.FLOAT, dims=[-1])
    with pytest.raises(ValueError, match="negative"):
        _ = negative.size
    segmented = ol.TensorProto(name="s", data_type=T.FLOAT, dims=[1], float_data=[1.0])
    segmented.segment.begin = 0
    with pytest.raises(ValueError, match="segment"):
        segmented.numpy()
