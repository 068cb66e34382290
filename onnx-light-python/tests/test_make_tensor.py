"""helper.make_tensor against `onnx`'s, differentially: for every element type, a grid of
value lists (in range, out of range, special floats, fractions, bools, numpy scalars,
nested lists, arrays, strings, raw bytes) either gives the same serialized tensor or
raises the same exception type."""

import warnings

import numpy as np
import onnx
import pytest

from onnx_light.onnx import _tensor_types, helper

ml_dtypes = pytest.importorskip("ml_dtypes")

NAN = float("nan")
INF = float("inf")

# Every element type of the pinned onnx, UNDEFINED included (it has no numpy dtype).
ELEMENT_TYPES = sorted(onnx.TensorProto.DataType.items(), key=lambda item: item[1])

# (label, dims, values) given to make_tensor with raw=False. Each list goes to every
# element type, so a list aimed at one type (float8 saturation, say) also checks that
# the others convert it or refuse it as onnx does.
TYPED_VALUES = [
    ("small-ints", [4], [0, 1, 2, 3]),
    ("negative-ints", [3], [-1, -8, -128]),
    ("int8-overflow", [1], [300]),
    ("int8-underflow", [1], [-129]),
    ("int16-edges", [2], [32767, -32769]),
    ("int32-overflow", [1], [2**31]),
    ("int32-underflow", [1], [-(2**31) - 1]),
    ("uint32-overflow", [1], [2**32]),
    ("int64-overflow", [1], [2**63]),
    ("int64-underflow", [1], [-(2**63) - 1]),
    ("uint64-overflow", [1], [2**64]),
    ("uint64-max", [1], [2**64 - 1]),
    ("fractions", [5], [0.5, 1.5, 2.5, -0.5, -2.5]),
    ("nan-inf", [3], [NAN, INF, -INF]),
    ("huge-floats", [4], [1e10, 1e39, -1e300, 2.0**64]),
    ("tiny-floats", [3], [1e-8, -1e-10, 5e-324]),
    ("truthiness", [3], [0.5, 2**40, NAN]),
    ("bools", [2], [True, False]),
    ("numpy-scalars", [5], [np.float64(2.5), np.int64(300), np.float32(1e6), np.bool_(True), np.uint8(255)]),
    ("numpy-int-scalars", [3], [np.int64(-1), np.int32(70000), np.uint64(2**64 - 1)]),
    ("nested", [2, 2], [[1, 2], [3, 4]]),
    ("float64-array", [1, 2], np.array([[1.5, -2.5]], dtype=np.float64)),
    ("int64-array", [3], np.array([-1, 300, 2**40], dtype=np.int64)),
    ("float8-saturation", [5], [1000, -1000, 448, 57344, 1e6]),
    ("e8m0-rounding", [7], [2.5, 0.75, 3.0, 1e-40, 0.0, -4.0, 2.0**127 * 1.5]),
    ("fp4-values", [5], [0.25, 5.5, 7, -7, 100]),
    ("odd-count", [3], [1, 2, 3]),
    ("five-values", [5], [1, 0, 3, 2, 1]),
    ("float16-range", [3], [70000.0, 65504.0, 6e-8]),
    ("bfloat16-rounding", [3], [1.00390625, 3.0e38, 1e-40]),
    ("float6-values", [5], [0.5, -7.5, 28.0, 1e3, -0.1]),
    ("uint64-floats", [2], [2.0**63, 1.8e19]),
    ("complex", [3], [1 + 2j, -0.5j, complex(NAN, INF)]),
    ("strings", [3], ["a", "é", b"\xff"]),
    ("string-trailing-nul", [2], ["x\x00", b"y\x00"]),
    ("nested-strings", [2, 1], [["a"], ["bc"]]),
    ("none", [1], [None]),
    ("numeric-strings", [2], ["1", "2.5"]),
    ("scalar", [], 3.5),
    ("empty", [0], []),
    ("too-many-values", [2], [1, 2, 3]),
    ("too-few-values", [2, 2], [1, 2, 3]),
    ("dims-not-ints", [2.0], [1, 2]),
]

# (label, dims, payload) given to make_tensor with raw=True: bytes of several lengths
# ("bytes-NxM": N bytes for M values; some fit the type's size, most do not), arrays of
# several dtypes and shapes, and payloads that are neither bytes nor an array.
RAW_VALUES = [
    ("bytes-1x1", [1], b"\x01"),
    ("bytes-2x1", [2], b"\x01\x02"),
    ("bytes-4x1", [1], bytes(range(1, 5))),
    ("bytes-8x1", [1], bytes(range(1, 9))),
    ("bytes-16x2", [2], bytes(range(16))),
    ("bytes-3x4", [4], b"\x12\x34\x56"),
    ("bytes-empty", [0], b""),
    ("bytes-short", [3], b"\x01"),
    ("uint8-array", [3], np.array([1, 2, 3], dtype=np.uint8)),
    ("int8-array", [3], np.array([-1, 7, -8], dtype=np.int8)),
    ("float32-array", [2], np.array([1.5, -2.5], dtype=np.float32)),
    ("big-endian-array", [2], np.array([1, -2], dtype=">i4")),
    ("bfloat16-array", [2], np.array([1.5, 3.0], dtype=ml_dtypes.bfloat16)),
    ("int4-array", [3], np.array([-8, 7, 1], dtype=ml_dtypes.int4)),
    ("2d-uint8-array", [2, 2], np.array([[1, 2], [3, 4]], dtype=np.uint8)),
    ("uint8-array-five", [5], np.array([1, 2, 3, 4, 63], dtype=np.uint8)),
    ("float32-array-one", [1], np.array([1.5], dtype=np.float32)),
    ("int16-array-three", [3], np.array([1, -2, 3], dtype=np.int16)),
    ("transposed-float32-array", [3, 2], np.arange(6, dtype=np.float32).reshape(2, 3).T),
    ("0d-float32-array", [], np.array(1.5, dtype=np.float32)),
    ("float6-array", [5], np.array([0.5, -1.0, 7.5, 3.0, 2.0], dtype=ml_dtypes.float6_e2m3fn)),
    ("list", [2], [1, 2]),
    ("bytearray", [1], bytearray(b"\x01")),
    ("str", [2], "ab"),
]


# Cases where onnx fails by accident and ours builds the tensor; each has its own test
# below, which checks that onnx still fails.
DIVERGENT = {("FLOAT8E8M0", "scalar")}


def _cases():
    for type_name, data_type in ELEMENT_TYPES:
        for label, dims, values in TYPED_VALUES:
            if (type_name, label) in DIVERGENT:
                continue
            yield pytest.param(data_type, dims, values, False, id=f"{type_name}-{label}")
        for label, dims, values in RAW_VALUES:
            yield pytest.param(data_type, dims, values, True, id=f"{type_name}-raw-{label}")


def _outcome(make_tensor, data_type, dims, values, raw):
    """The serialized tensor, or the type of the exception make_tensor raised."""
    with warnings.catch_warnings():
        # Casting NaN or an out-of-range float to an integer warns; the result is
        # what is compared.
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            tensor = make_tensor("t", data_type, dims, values, raw=raw)
        except Exception as error:  # noqa: BLE001 - the type is the result
            return type(error)
    return tensor.SerializeToString()


def _describe(outcome):
    """An outcome as text: the exception's name, or the tensor's fields."""
    if isinstance(outcome, bytes):
        return str(onnx.TensorProto.FromString(outcome)).replace("\n", " ")
    return outcome.__name__


@pytest.mark.parametrize(("data_type", "dims", "values", "raw"), list(_cases()))
def test_make_tensor_matches_onnx(data_type, dims, values, raw):
    expected = _outcome(onnx.helper.make_tensor, data_type, dims, values, raw)
    actual = _outcome(helper.make_tensor, data_type, dims, values, raw)
    assert actual == expected, f"ours: {_describe(actual)}\nonnx: {_describe(expected)}"


def test_grid_exercises_both_outcomes_for_each_type():
    """Each element type both builds a tensor and refuses some inputs, so the grid
    compares values as well as errors for every type."""
    for type_name, data_type in ELEMENT_TYPES:
        if data_type == onnx.TensorProto.UNDEFINED:
            continue
        outcomes = [
            _outcome(onnx.helper.make_tensor, data_type, dims, values, False)
            for _label, dims, values in TYPED_VALUES
        ]
        assert any(isinstance(o, bytes) for o in outcomes), type_name
        assert any(not isinstance(o, bytes) for o in outcomes), type_name


def test_e8m0_of_a_0d_value_is_built_where_onnx_fails():
    """onnx's FLOAT8E8M0 conversion cannot take a 0-d array (it assigns into a numpy
    bool scalar); ours converts the value as onnx converts it from a list."""
    e8m0 = onnx.TensorProto.FLOAT8E8M0
    with pytest.raises(TypeError):
        onnx.helper.make_tensor("t", e8m0, [], 3.5)
    expected = onnx.helper.make_tensor("t", e8m0, [], [3.5])
    assert helper.make_tensor("t", e8m0, [], 3.5).SerializeToString() == expected.SerializeToString()


def test_types_numpy_lacks_need_ml_dtypes(monkeypatch):
    """Without ml_dtypes, numbers are not converted to the types it provides (no wrong
    bit patterns); numpy's own types, FLOAT8E8M0 and raw bytes need nothing else."""
    monkeypatch.setattr(_tensor_types, "_ml", None)
    T = onnx.TensorProto
    for data_type in [T.BFLOAT16, T.FLOAT8E4M3FN, T.FLOAT8E5M2FNUZ, T.FLOAT6E3M2, T.FLOAT4E2M1, T.INT4, T.UINT2]:
        with pytest.raises(ImportError, match="ml_dtypes"):
            helper.make_tensor("t", data_type, [1], [1.5])
    for data_type, vals, raw in [(T.FLOAT16, [1.5], False), (T.FLOAT8E8M0, [2.5], False),
                                 (T.BFLOAT16, b"\xc0\x3f", True), (T.INT4, np.array([1, -2], np.int8), True)]:
        dims = [1] if not raw or data_type == T.BFLOAT16 else [2]
        expected = onnx.helper.make_tensor("t", data_type, dims, vals, raw=raw)
        assert helper.make_tensor("t", data_type, dims, vals, raw=raw).SerializeToString() == expected.SerializeToString()
