"""Field writes compared with `onnx` (upb) value by value: the same values accepted,
with the same bytes, and the same refused, with the same kind of exception and the
message left as it was. `fuzz/python/field_writes.py` explores the same space at random."""

import math

import numpy as np
import onnx
import pytest

from onnx_light import onnx as ol

FIELDS = [
    ("ModelProto", "ir_version", False),
    ("ModelProto", "producer_name", False),
    ("TensorProto", "data_type", False),
    ("TensorProto", "raw_data", False),
    ("TensorProto", "data_location", False),
    ("TensorProto", "dims", True),
    ("TensorProto", "float_data", True),
    ("TensorProto", "int32_data", True),
    ("TensorProto", "uint64_data", True),
    ("TensorProto", "string_data", True),
    ("NodeProto", "input", True),
    ("AttributeProto", "f", False),
    ("AttributeProto", "s", False),
    ("AttributeProto", "type", False),
]

VALUES = [
    0, -1, 2**31, -(2**31) - 1, 2**63, 2**64, 0.5, math.nan, math.inf, 3.5e38, "", "ab",
    "EXTERNAL", "FLOAT", b"ab", True, None, bytearray(b"ab"), memoryview(b"ab"),
    np.array([1, 2], np.int32), np.int8(-44), np.uint64(2**63), np.float32(1.5),
    np.bool_(True), np.bytes_(b"x"), complex(1, 2), [1, 2], [1.5], ["a"], [b"a"], [None],
    [2**70], ["a", 1], object(),
]


def write(module, cls, field, repeated, op, value):
    msg = getattr(module, cls)()
    try:
        if not repeated:
            setattr(msg, field, value)
        elif op == "append":
            getattr(msg, field).append(value)
        else:
            getattr(msg, field).extend(value)
    except (TypeError, ValueError) as e:
        return (TypeError if isinstance(e, TypeError) else ValueError), msg.SerializeToString()
    return None, msg.SerializeToString()


@pytest.mark.parametrize("cls,field,repeated", FIELDS, ids=[f"{c}.{f}" for c, f, _ in FIELDS])
def test_field_writes_accept_and_refuse_what_onnx_does(cls, field, repeated):
    differ = []
    for op in ("append", "extend") if repeated else ("set",):
        for value in VALUES:
            if op == "extend" and isinstance(value, (str, bytes)):
                continue  # a lone string as a sequence is refused on purpose
            theirs = write(onnx, cls, field, repeated, op, value)
            ours = write(ol, cls, field, repeated, op, value)
            if ours[0] is not None and ours[1] != getattr(ol, cls)().SerializeToString():
                differ.append((op, value, "a refused write changed the message"))
            elif ours != theirs:
                differ.append((op, value, theirs, ours))
    assert not differ, differ
