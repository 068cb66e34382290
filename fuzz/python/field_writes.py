"""Differential fuzzing of field writes through the Python API: a random value written
to a random field of a random message, by assignment, append, extend or slice, through
`onnx_light.onnx` and through `onnx` (upb). Both must accept it and serialize the same
bytes, or both must refuse it with the same exception type (and ours must leave the
message as it was). Run with atheris (see fuzz/README.md):

    python fuzz/python/field_writes.py -max_total_time=60
"""

import math
import sys

import atheris

with atheris.instrument_imports():
    import numpy as np
    import onnx

    from onnx_light import onnx as ol

# (message class name, field name, kind): kind is the protobuf type of the field's
# values; "rep_" marks repeated fields.
FIELDS = [
    ("ModelProto", "ir_version", "int64"),
    ("ModelProto", "producer_name", "string"),
    ("ModelProto", "model_version", "int64"),
    ("TensorProto", "data_type", "int32"),
    ("TensorProto", "raw_data", "bytes"),
    ("TensorProto", "dims", "rep_int64"),
    ("TensorProto", "float_data", "rep_float"),
    ("TensorProto", "int32_data", "rep_int32"),
    ("TensorProto", "double_data", "rep_double"),
    ("TensorProto", "uint64_data", "rep_uint64"),
    ("TensorProto", "string_data", "rep_bytes"),
    ("TensorProto", "data_location", "enum"),
    ("NodeProto", "input", "rep_string"),
    ("NodeProto", "op_type", "string"),
    ("AttributeProto", "f", "float"),
    ("AttributeProto", "i", "int64"),
    ("AttributeProto", "s", "bytes"),
    ("AttributeProto", "floats", "rep_float"),
    ("AttributeProto", "ints", "rep_int64"),
    ("AttributeProto", "strings", "rep_bytes"),
    ("AttributeProto", "type", "enum"),
    ("OperatorSetIdProto", "version", "int64"),
]

INTS = [0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32, 2**63 - 1, 2**63, -(2**63), 2**64, 2**70]
FLOATS = [0.0, -0.0, 0.5, 1e300, -1e-300, math.inf, -math.inf, math.nan, 3.4028235e38, 3.5e38]


def value(fdp, depth=0):
    """A random Python value of many kinds, containers included."""
    kind = fdp.ConsumeIntInRange(0, 17)
    if kind == 0:
        return fdp.PickValueInList(INTS)
    if kind == 1:
        return fdp.ConsumeInt(9)
    if kind == 2:
        return fdp.PickValueInList(FLOATS)
    if kind == 3:
        return fdp.ConsumeRegularFloat()
    if kind == 4:
        return fdp.ConsumeUnicodeNoSurrogates(6)
    if kind == 5:
        return fdp.ConsumeBytes(6)
    if kind == 6:
        return fdp.ConsumeBool()
    if kind == 7:
        return None
    if kind == 8:
        return bytearray(fdp.ConsumeBytes(4))
    if kind == 9:
        return memoryview(fdp.ConsumeBytes(4))
    if kind == 10:
        dtype = fdp.PickValueInList([np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, np.float64, np.bool_])
        return np.array([fdp.ConsumeIntInRange(-300, 300) for _ in range(fdp.ConsumeIntInRange(0, 3))]).astype(dtype)
    if kind == 11:
        dtype = fdp.PickValueInList([np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, np.float64, np.bool_])
        return np.array(fdp.ConsumeIntInRange(-300, 300)).astype(dtype)[()]
    if kind == 12:
        return np.bytes_(fdp.ConsumeBytes(3))
    if kind == 13:
        return complex(1, 2)
    if kind == 14 and depth < 2:
        return [value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    if kind == 15 and depth < 2:
        return tuple(value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3)))
    if kind == 16:
        return object()
    return fdp.ConsumeUnicode(4)


def apply(msg, field, repeated, op, v):
    if not repeated or op == 0:
        setattr(msg, field, v)
    elif op == 1:
        getattr(msg, field).append(v)
    elif op == 2:
        getattr(msg, field).extend(v)
    else:
        getattr(msg, field)[0:1] = v


def outcome(module, cls, field, repeated, op, v):
    msg = getattr(module, cls)()
    try:
        apply(msg, field, repeated, op, v)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e), msg.SerializeToString()
    return None, msg.SerializeToString()


def kinds(exc):
    """The exception categories that must agree: protobuf raises TypeError or
    ValueError; ours may raise a subclass."""
    if exc is None:
        return None
    for base in (TypeError, ValueError, OverflowError):
        if issubclass(exc, base):
            return base.__name__
    return exc.__name__


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    cls, field, kind = fdp.PickValueInList(FIELDS)
    repeated = kind.startswith("rep_")
    # Assigning a whole repeated field is refused by protobuf and taken by onnx_light as
    # "replace the contents": only the list operations are compared.
    op = fdp.ConsumeIntInRange(1, 3) if repeated else 0
    v = value(fdp)
    if op in (2, 3) and isinstance(v, (str, bytes)):
        # A lone string given as a sequence is refused on purpose (protobuf iterates its
        # characters).
        return
    theirs_exc, theirs = outcome(onnx, cls, field, repeated, op, v)
    ours_exc, ours = outcome(ol, cls, field, repeated, op, v)
    if kinds(theirs_exc) != kinds(ours_exc):
        raise AssertionError(
            f"{cls}.{field} op {op} value {v!r}: onnx {theirs_exc}, onnx_light {ours_exc}"
        )
    if ours_exc is not None:
        empty = getattr(ol, cls)().SerializeToString()
        if ours != empty:
            raise AssertionError(f"{cls}.{field} op {op} value {v!r}: a refused write changed the message")
    elif ours != theirs:
        raise AssertionError(f"{cls}.{field} op {op} value {v!r}: onnx {theirs!r}, onnx_light {ours!r}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
