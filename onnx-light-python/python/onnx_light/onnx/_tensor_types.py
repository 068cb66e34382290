"""Tables and conversions that ``helper`` and ``numpy_helper`` share: the numpy dtype of
each tensor data type, packing of sub-byte values, and the fields of sequences and
optionals. Both modules import from here; nothing here imports either of them."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import TensorProto

try:  # optional
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - depends on the environment
    _ml = None

_T = TensorProto

# data type -> numpy dtype of the stored bytes, for the types numpy has.
_PLAIN = {
    _T.FLOAT: np.dtype("<f4"),
    _T.UINT8: np.dtype("u1"),
    _T.INT8: np.dtype("i1"),
    _T.UINT16: np.dtype("<u2"),
    _T.INT16: np.dtype("<i2"),
    _T.INT32: np.dtype("<i4"),
    _T.INT64: np.dtype("<i8"),
    _T.BOOL: np.dtype("?"),
    _T.FLOAT16: np.dtype("<f2"),
    _T.DOUBLE: np.dtype("<f8"),
    _T.UINT32: np.dtype("<u4"),
    _T.UINT64: np.dtype("<u8"),
    _T.COMPLEX64: np.dtype("<c8"),
    _T.COMPLEX128: np.dtype("<c16"),
}

# data type -> (ml_dtypes name, storage dtype without ml_dtypes, bits per element)
_SPECIAL = {
    _T.BFLOAT16: ("bfloat16", np.dtype("<u2"), 16),
    _T.FLOAT8E4M3FN: ("float8_e4m3fn", np.dtype("u1"), 8),
    _T.FLOAT8E4M3FNUZ: ("float8_e4m3fnuz", np.dtype("u1"), 8),
    _T.FLOAT8E5M2: ("float8_e5m2", np.dtype("u1"), 8),
    _T.FLOAT8E5M2FNUZ: ("float8_e5m2fnuz", np.dtype("u1"), 8),
    _T.FLOAT8E8M0: ("float8_e8m0fnu", np.dtype("u1"), 8),
    _T.UINT4: ("uint4", np.dtype("u1"), 4),
    _T.INT4: ("int4", np.dtype("i1"), 4),
    _T.FLOAT4E2M1: ("float4_e2m1fn", np.dtype("u1"), 4),
    _T.UINT2: ("uint2", np.dtype("u1"), 2),
    _T.INT2: ("int2", np.dtype("i1"), 2),
    _T.FLOAT6E2M3: ("float6_e2m3fn", np.dtype("u1"), 6),
    _T.FLOAT6E3M2: ("float6_e3m2fn", np.dtype("u1"), 6),
}
_SIGNED_PACKED = {_T.INT4, _T.INT2}


def _special_dtype(data_type: int) -> np.dtype:
    name, storage, _bits = _SPECIAL[data_type]
    if _ml is not None and hasattr(_ml, name):
        return np.dtype(getattr(_ml, name))
    return storage


def _ml_dtype(data_type: int) -> np.dtype:
    """The ``ml_dtypes`` dtype of a data type numpy lacks; ``ImportError`` without
    ``ml_dtypes``, since converting numbers to it needs that package's rounding."""
    name = _SPECIAL[data_type][0]
    if _ml is None or not hasattr(_ml, name):
        raise ImportError(f"converting numbers to {name} needs the ml_dtypes package")
    return np.dtype(getattr(_ml, name))


def _ml_finfo(dtype: np.dtype) -> Any:
    """The limits of an ``ml_dtypes`` float dtype (``_ml_dtype`` checked the package)."""
    return _ml.finfo(dtype)


def tensor_dtype_to_np_dtype(data_type: int) -> np.dtype:
    """The numpy dtype of ``to_array``'s result for a ``TensorProto`` data type
    (``KeyError`` for a number that is no data type, or ``UNDEFINED``)."""
    if data_type in _PLAIN:
        return _PLAIN[data_type].newbyteorder("=")
    if data_type in _SPECIAL:
        return _special_dtype(data_type)
    if data_type == _T.STRING:
        return np.dtype(object)
    raise KeyError(data_type)


def _bits_per_element(data_type: int) -> int:
    """How many bits one value of ``data_type`` takes in ``raw_data``."""
    if data_type in _SPECIAL:
        return _SPECIAL[data_type][2]
    return _PLAIN[data_type].itemsize * 8


def _data_type_of(dtype: np.dtype) -> int:
    for dt, np_dtype in _PLAIN.items():
        if np_dtype.newbyteorder("=") == dtype.newbyteorder("="):
            return dt
    if _ml is not None:
        for dt, (name, _storage, _bits) in _SPECIAL.items():
            if hasattr(_ml, name) and np.dtype(getattr(_ml, name)) == dtype:
                return dt
    if dtype.kind in ("O", "U", "S"):
        return _T.STRING
    raise ValueError(f"numpy dtype {dtype} has no ONNX data type")


def _pack(values: np.ndarray, bits: int) -> bytes:
    """Packs the low ``bits`` of each value, low bits first; zero bits pad the last byte."""
    mask = (1 << bits) - 1
    v = (values.astype(np.int64).reshape(-1) & mask).astype(np.uint8)
    if 8 % bits:
        # Values that straddle bytes (6 bits) go through one array element per bit.
        each = np.unpackbits(v[:, None], axis=1, bitorder="little")[:, :bits]
        return np.packbits(each.reshape(-1), bitorder="little").tobytes()
    per = 8 // bits
    pad = (-len(v)) % per
    if pad:
        v = np.concatenate([v, np.zeros(pad, np.uint8)])
    v = v.reshape(-1, per)
    out = np.zeros(len(v), np.uint8)
    for k in range(per):
        out |= v[:, k] << (bits * k)
    return out.tobytes()


def _pack_element_bytes(values: np.ndarray, bits: int) -> bytes:
    """``_pack`` (2 or 4 bits) of the bytes of ``values``'s elements, as ``onnx`` packs an
    array: the bytes of every element (one per value for the 8-bit types), and, when the
    values do not fill the last byte, that byte list padded with zeros or cut to the next
    multiple of the values per byte, which cuts the bytes of a wider dtype short."""
    codes = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    per = 8 // bits
    if values.size % per:
        wanted = values.size + per - values.size % per
        codes = np.concatenate([codes[:wanted], np.zeros(max(0, wanted - codes.size), np.uint8)])
    return _pack(codes, bits)


def _unpack(raw: np.ndarray, bits: int, count: int, signed: bool) -> np.ndarray:
    """Splits packed sub-byte values (low bits first) into one byte per value."""
    if 8 % bits:
        stream = np.unpackbits(np.asarray(raw, np.uint8), bitorder="little")[: count * bits]
        if len(stream) < count * bits:
            raise ValueError(f"{len(raw)} bytes hold fewer than {count} values of {bits} bits")
        out = np.packbits(stream.reshape(count, bits), axis=1, bitorder="little").reshape(-1)
    else:
        per = 8 // bits
        mask = (1 << bits) - 1
        parts = [(raw >> (bits * k)) & mask for k in range(per)]
        out = np.stack(parts, axis=-1).reshape(-1)[:count].astype(np.uint8)
    if signed:
        out = out.astype(np.int8)
        out = np.where(out >= (1 << (bits - 1)), out - (1 << bits), out).astype(np.int8)
    return out


def _little_endian_bytes(arr: np.ndarray) -> bytes:
    """The array's elements in C order, each little-endian whatever the array's byte
    order."""
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(arr).tobytes()


# Element types of SequenceProto and OptionalProto (both number them alike), and the
# fields that hold values of each: (the sequence's repeated one, the optional's).
_UNDEFINED, _TENSOR, _SPARSE, _SEQUENCE, _MAP, _OPTIONAL = range(6)
_HOLDER_FIELDS = {
    _TENSOR: ("tensor_values", "tensor_value"),
    _SPARSE: ("sparse_tensor_values", "sparse_tensor_value"),
    _SEQUENCE: ("sequence_values", "sequence_value"),
    _MAP: ("map_values", "map_value"),
    _OPTIONAL: ("optional_values", "optional_value"),
}


def _holder_field(elem_type: int, optional: bool, what: str) -> str:
    """The field of a sequence (or an optional) that holds ``elem_type`` values."""
    fields = _HOLDER_FIELDS.get(elem_type)
    if fields is None:
        raise TypeError(f"{what} cannot hold elements of type {elem_type}")
    return fields[optional]


def _element_type(value: Any) -> int:
    """The element type a Python value becomes in a sequence or an optional."""
    if value is None:
        return _UNDEFINED
    if isinstance(value, list):
        return _SEQUENCE
    if isinstance(value, dict):
        return _MAP
    return _TENSOR
