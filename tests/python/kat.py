"""Known-answer vectors for the `kat` test schema, written by the official `protobuf`.

Declares the schema of `tests/src/kat.rs` (proto2, package `kat`) without protoc -- a
`FileDescriptorProto` built field by field -- serializes a fixed list of messages with
`SerializeToString(deterministic=True)` and writes one line per case, `NAME HEX`, sorted
by name, to `tests/fixtures/kat_vectors.txt` (or to the path given as the only argument).
`tests/tests/known_answer.rs` checks onnx-light's encoder and decoder against every line
and reruns this script to prove the committed file is what protobuf writes.

Every case is serialized by two backends of the package -- upb (the default, C) and the
pure-Python one -- and the bytes must agree, with one known exception: the order of map
entries. `deterministic=True` promises a stable order, not a canonical one, and upb's is
neither ascending nor descending (for `node_maps`: "aa" before "a", sint32 keys by
descending unsigned value). The fixture takes `node_maps` from the pure-Python backend,
whose order (keys ascending) is the one the C++ library writes, and keeps upb's bytes as
`node_maps_upb_order`, a decode-only case.

The output depends on nothing but the protobuf version: run it twice, get the same file.
"""

import math
import os
import struct
import subprocess
import sys

IMPL_ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
# `kat.py --dump IMPL` prints this file's cases serialized by backend IMPL (internal).
DUMP = __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--dump"
if __name__ == "__main__":
    # The backend is chosen at import time, from the environment.
    os.environ[IMPL_ENV] = sys.argv[2] if DUMP else "upb"

import google.protobuf  # noqa: E402
from google.protobuf import (  # noqa: E402
    descriptor_pb2,
    descriptor_pool,
    message,
    message_factory,
)
from google.protobuf.internal import api_implementation  # noqa: E402

FDP = descriptor_pb2.FieldDescriptorProto

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U32_MAX, U64_MAX = 2**32 - 1, 2**64 - 1
F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
F32_MIN_SUBNORMAL = struct.unpack("<f", struct.pack("<I", 1))[0]
F64_MAX = sys.float_info.max
F64_MIN_SUBNORMAL = struct.unpack("<d", struct.pack("<Q", 1))[0]

# Scalar field layout shared by Scalars and Repeated: (name, number, type).
SCALAR_FIELDS = [
    ("i32", 1, FDP.TYPE_INT32),
    ("i64", 2, FDP.TYPE_INT64),
    ("u32", 3, FDP.TYPE_UINT32),
    ("u64", 4, FDP.TYPE_UINT64),
    ("s32", 5, FDP.TYPE_SINT32),
    ("s64", 6, FDP.TYPE_SINT64),
    ("f32", 7, FDP.TYPE_FIXED32),
    ("f64", 8, FDP.TYPE_FIXED64),
    ("sf32", 9, FDP.TYPE_SFIXED32),
    ("sf64", 10, FDP.TYPE_SFIXED64),
    ("fl", 11, FDP.TYPE_FLOAT),
    ("db", 12, FDP.TYPE_DOUBLE),
    ("b", 13, FDP.TYPE_BOOL),
    ("s", 14, FDP.TYPE_STRING),
    ("by", 15, FDP.TYPE_BYTES),
    ("color", 16, FDP.TYPE_ENUM),
]
# Repeated fields declared `[packed = true]` in kat.rs.
PACKED = {"i64", "u32", "s32", "f32", "sf64", "fl", "b", "color"}


def add_field(msg, name, number, ftype, label=FDP.LABEL_OPTIONAL, type_name=None,
              packed=False, oneof_index=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name is not None:
        f.type_name = type_name
    elif ftype == FDP.TYPE_ENUM:
        f.type_name = ".kat.Color"
    if packed:
        f.options.packed = True
    if oneof_index is not None:
        f.oneof_index = oneof_index
    return f


def add_map_entry(msg, entry_name, key_type, value_type, value_type_name=None):
    entry = msg.nested_type.add()
    entry.name = entry_name
    entry.options.map_entry = True
    add_field(entry, "key", 1, key_type)
    add_field(entry, "value", 2, value_type, type_name=value_type_name)


def build_file():
    """The kat schema, as in the doc comment of tests/src/kat.rs."""
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "kat.proto"
    fd.package = "kat"
    fd.syntax = "proto2"

    color = fd.enum_type.add()
    color.name = "Color"
    for name, number in [("RED", 0), ("GREEN", 1), ("BLUE", 2), ("NEGATIVE", -5)]:
        v = color.value.add()
        v.name = name
        v.number = number

    scalars = fd.message_type.add()
    scalars.name = "Scalars"
    for name, number, ftype in SCALAR_FIELDS:
        add_field(scalars, name, number, ftype)

    repeated = fd.message_type.add()
    repeated.name = "Repeated"
    for name, number, ftype in SCALAR_FIELDS:
        add_field(repeated, name, number, ftype, FDP.LABEL_REPEATED, packed=name in PACKED)
    add_field(repeated, "color_unpacked", 17, FDP.TYPE_ENUM, FDP.LABEL_REPEATED)

    node = fd.message_type.add()
    node.name = "Node"
    node.oneof_decl.add().name = "value"
    add_map_entry(node, "CountsEntry", FDP.TYPE_STRING, FDP.TYPE_INT64)
    add_map_entry(node, "ByIdEntry", FDP.TYPE_SINT32, FDP.TYPE_MESSAGE, ".kat.Scalars")
    legacy = node.nested_type.add()
    legacy.name = "Legacy"
    add_field(legacy, "a", 1, FDP.TYPE_INT32)
    add_field(node, "name", 1, FDP.TYPE_STRING)
    add_field(node, "children", 2, FDP.TYPE_MESSAGE, FDP.LABEL_REPEATED, ".kat.Node")
    add_field(node, "parent", 3, FDP.TYPE_MESSAGE, type_name=".kat.Node")
    add_field(node, "int_value", 4, FDP.TYPE_INT64, oneof_index=0)
    add_field(node, "text_value", 5, FDP.TYPE_STRING, oneof_index=0)
    add_field(node, "scalars", 6, FDP.TYPE_MESSAGE, type_name=".kat.Scalars", oneof_index=0)
    add_field(node, "counts", 7, FDP.TYPE_MESSAGE, FDP.LABEL_REPEATED, ".kat.Node.CountsEntry")
    add_field(node, "blob", 8, FDP.TYPE_BYTES, oneof_index=0)
    add_field(node, "by_id", 9, FDP.TYPE_MESSAGE, FDP.LABEL_REPEATED, ".kat.Node.ByIdEntry")
    add_field(node, "lists", 10, FDP.TYPE_MESSAGE, type_name=".kat.Repeated")
    add_field(node, "legacy", 11, FDP.TYPE_GROUP, type_name=".kat.Node.Legacy")
    add_field(node, "zig", 12, FDP.TYPE_SINT32, oneof_index=0)

    node_v1 = fd.message_type.add()
    node_v1.name = "NodeV1"
    add_field(node_v1, "name", 1, FDP.TYPE_STRING)
    add_field(node_v1, "children", 2, FDP.TYPE_MESSAGE, FDP.LABEL_REPEATED, ".kat.NodeV1")
    return fd


POOL = descriptor_pool.DescriptorPool()
POOL.AddSerializedFile(build_file().SerializeToString())
Scalars = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kat.Scalars"))
Repeated = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kat.Repeated"))
Node = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kat.Node"))
NodeV1 = message_factory.GetMessageClass(POOL.FindMessageTypeByName("kat.NodeV1"))
RED, GREEN, BLUE, NEGATIVE = 0, 1, 2, -5


def varint(value):
    value &= U64_MAX
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number, wire_type):
    return varint(number << 3 | wire_type)


# ---------------------------------------------------------------------------------------
# The cases. Each returns the message whose serialization is the vector; the Rust test
# builds the same value under the same name.

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def scalars_empty():
    return Scalars()


@case
def scalars_zero_present():
    # proto2 presence: every field set, to its default; all of them are written.
    return Scalars(i32=0, i64=0, u32=0, u64=0, s32=0, s64=0, f32=0, f64=0, sf32=0, sf64=0,
                   fl=0.0, db=0.0, b=False, s="", by=b"", color=RED)


@case
def scalars_max():
    return Scalars(i32=I32_MAX, i64=I64_MAX, u32=U32_MAX, u64=U64_MAX, s32=I32_MAX,
                   s64=I64_MAX, f32=U32_MAX, f64=U64_MAX, sf32=I32_MAX, sf64=I64_MAX,
                   fl=F32_MAX, db=F64_MAX, b=True, s="max", by=b"\xff\xff\xff", color=BLUE)


@case
def scalars_min():
    return Scalars(i32=I32_MIN, i64=I64_MIN, u32=1, u64=1, s32=I32_MIN, s64=I64_MIN, f32=1,
                   f64=1, sf32=I32_MIN, sf64=I64_MIN, fl=-F32_MAX, db=-F64_MAX, b=False,
                   s="min", by=b"\x00", color=NEGATIVE)


@case
def scalars_minus_one():
    # int32 -1 is a 10-byte varint; sint -1 zigzags to 1; -0.0 keeps its sign bit.
    return Scalars(i32=-1, i64=-1, u32=128, u64=2**63, s32=-1, s64=-1, f32=2**31,
                   f64=2**63, sf32=-1, sf64=-1, fl=-0.0, db=-0.0, color=GREEN)


@case
def scalars_nan():
    return Scalars(fl=math.nan, db=math.nan)


@case
def scalars_infinity():
    return Scalars(fl=math.inf, db=-math.inf)


@case
def scalars_subnormal():
    return Scalars(fl=F32_MIN_SUBNORMAL, db=F64_MIN_SUBNORMAL)


@case
def scalars_unicode():
    return Scalars(s="a\u00e9\u4e16\U0001f980\x00\x7f\x80\uffff\U0010ffff")


@case
def scalars_bytes_all_values():
    return Scalars(by=bytes(range(256)))


@case
def scalars_fields_3_to_16():
    # Decoded as NodeV1 (which declares only 1 and 2), every field is unknown: varint,
    # fixed32, fixed64 and length-delimited wire types.
    return Scalars(u32=300, u64=2**40, s32=-3, s64=3, f32=0xDEADBEEF, f64=0x0123456789ABCDEF,
                   sf32=-2, sf64=-3, fl=1.5, db=-2.25, b=True, s="x", by=b"\x01\x02",
                   color=NEGATIVE)


@case
def repeated_empty():
    return Repeated()


@case
def repeated_all():
    return Repeated(
        i32=[0, 1, -1, I32_MAX, I32_MIN],
        i64=[0, -1, I64_MAX, I64_MIN],
        u32=[0, 127, 128, 16383, 16384, U32_MAX],
        u64=[0, 1, 2**32 - 1, 2**32, 2**63, U64_MAX],
        s32=[0, -1, 1, I32_MIN, I32_MAX],
        s64=[0, -1, 1, I64_MIN, I64_MAX],
        f32=[0, 1, U32_MAX],
        f64=[0, U64_MAX],
        sf32=[-1, I32_MIN],
        sf64=[-1, I64_MAX],
        fl=[0.0, -0.0, 1.5, math.inf],
        db=[0.0, -2.25, -math.inf, F64_MIN_SUBNORMAL],
        b=[True, False, True],
        s=["", "a", "\u00fc"],
        by=[b"", b"\x00", b"\xff\xfe"],
        color=[RED, GREEN, BLUE, NEGATIVE],
        color_unpacked=[NEGATIVE, RED],
    )


@case
def repeated_single():
    # One element each: packed fields still get a length prefix.
    return Repeated(i32=[7], i64=[7], u32=[7], u64=[7], s32=[7], s64=[7], f32=[7], f64=[7],
                    sf32=[7], sf64=[7], fl=[7.0], db=[7.0], b=[False], s=["7"], by=[b"7"],
                    color=[BLUE], color_unpacked=[GREEN])


@case
def repeated_long_packed():
    # Packed payloads longer than 127 bytes: two-byte length prefixes.
    return Repeated(i64=list(range(-100, 100)), fl=[i / 4 for i in range(64)],
                    b=[i % 3 == 0 for i in range(130)])


@case
def node_empty():
    return Node()


@case
def node_oneof_int_zero():
    # A oneof member set to its default is written.
    return Node(name="int", int_value=0)


@case
def node_oneof_text_empty():
    return Node(text_value="")


@case
def node_oneof_scalars_empty():
    n = Node()
    n.scalars.SetInParent()
    return n


@case
def node_oneof_scalars():
    return Node(name="s", scalars=Scalars(i32=-1, s="in oneof", color=NEGATIVE))


@case
def node_oneof_blob():
    return Node(blob=b"\x00blob\xff")


@case
def node_oneof_zig_min():
    return Node(zig=I32_MIN)


@case
def node_empty_submessages():
    # Optional messages set to empty values are written as zero-length fields.
    n = Node(name="")
    n.parent.SetInParent()
    n.lists.SetInParent()
    return n


@case
def node_maps():
    n = Node(name="maps")
    for k, v in [("b", -1), ("a", 1), ("", 0), ("\u00fc", I64_MAX), ("aa", I64_MIN)]:
        n.counts[k] = v
    n.by_id.get_or_create(5).CopyFrom(Scalars(s="five", color=NEGATIVE))
    n.by_id.get_or_create(0)
    n.by_id.get_or_create(-1).i32 = 1
    n.by_id.get_or_create(I32_MIN).b = False
    return n


@case
def node_tree():
    return Node(
        name="root",
        children=[
            Node(name="a", children=[Node(name="a1"), Node()]),
            Node(name="b", int_value=2),
        ],
        parent=Node(name="up", parent=Node(name="upper")),
    )


@case
def node_deep():
    # 100 nested messages below the top level: protobuf's default recursion limit.
    n = Node(name="leaf")
    for i in range(99, -1, -1):
        n = Node(name=str(i), parent=n) if i else Node(children=[n])
    return n


@case
def node_lists():
    return Node(name="lists", lists=Repeated(i32=[1, -1], s=["x"], color=[BLUE, NEGATIVE]),
                zig=-1)


@case
def node_legacy_group():
    # Field 11 is a group Rust's Node does not declare: skipped and kept as an unknown
    # field. It is the highest field set, so written back last it lands where it was.
    n = Node(name="legacy", text_value="t", children=[Node(name="c")])
    n.legacy.a = -1
    n.children[0].legacy.SetInParent()
    return n


@case
def node_full():
    # Decoded as NodeV1, fields 3..11 are unknown: length-delimited, varint and group.
    n = Node(
        name="full",
        children=[Node(name="kid", lists=Repeated(i32=[1]))],
        parent=Node(name="p"),
        int_value=-1,
        lists=Repeated(sf64=[1, -1]),
    )
    n.children[0].legacy.a = 3
    n.counts["k"] = 7
    n.counts["j"] = -7
    n.by_id.get_or_create(3).fl = 0.5
    n.legacy.a = 42
    return n


# Hand-made bytes: proto2 enums are closed in protobuf, so an unknown enum value cannot
# be set on a message; it can only arrive in the input, where protobuf keeps it as an
# unknown field. These bytes are checked below to parse and re-serialize unchanged.
HANDMADE = {
    "handmade_scalars_unknown_enum": (Scalars, key(16, 0) + varint(99)),
    "handmade_repeated_unknown_enum": (
        Repeated, key(17, 0) + varint(99) + key(17, 0) + varint(-100)),
}


# Cases with maps, whose entry order differs between backends (see the module docs).
MAP_CASES = {"node_maps"}


def serialize(msg):
    return msg.SerializeToString(deterministic=True)


def serialized_cases():
    """Every case of CASES serialized by the backend in use, checked to parse back."""
    out = {}
    for name, build in CASES.items():
        msg = build()
        data = serialize(msg)
        again = type(msg).FromString(data)
        assert again == msg or name == "scalars_nan", name
        assert serialize(again) == data, name
        out[name] = data
    return out


def pure_python_cases():
    """serialized_cases() of the pure-Python backend, from a child process."""
    env = dict(os.environ, **{IMPL_ENV: "python"})
    dump = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--dump", "python"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout
    return {name: bytes.fromhex(h) for name, h in (line.split(" ") for line in dump.splitlines())}


def vectors():
    assert api_implementation.Type() == "upb", api_implementation.Type()
    upb = serialized_cases()
    pure = pure_python_cases()
    assert upb.keys() == pure.keys()
    out = {}
    for name, data in upb.items():
        if name in MAP_CASES:
            out[name] = pure[name]
            out[name + "_upb_order"] = data
            assert Node.FromString(data) == Node.FromString(pure[name]), name
        else:
            assert data == pure[name], f"{name}: upb and pure-Python backends disagree"
            out[name] = data
    for name, (cls, data) in HANDMADE.items():
        msg = cls.FromString(data)
        assert msg.ListFields() == [], name  # nothing known: the values are unknown fields
        assert serialize(msg) == data, name
        out[name] = data
    # One level deeper than node_deep is past protobuf's recursion limit.
    try:
        Node.FromString(serialize(Node(parent=Node.FromString(out["node_deep"]))))
    except message.DecodeError:
        pass
    else:
        raise AssertionError("protobuf accepted 101 nested messages")
    # An older schema keeps what it does not know and writes it back unchanged.
    for name in ["node_full", "node_legacy_group", "scalars_fields_3_to_16"]:
        assert serialize(NodeV1.FromString(out[name])) == out[name], name
    return out


def main(argv):
    if DUMP:
        assert api_implementation.Type() == argv[2], api_implementation.Type()
        for name, data in serialized_cases().items():
            print(name, data.hex())
        return
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, os.pardir, "fixtures", "kat_vectors.txt")
    path = argv[1] if len(argv) > 1 else default
    lines = [
        "# Known-answer vectors for the kat schema (tests/src/kat.rs), written by "
        f"tests/python/kat.py with protobuf {google.protobuf.__version__} "
        "(upb backend, cross-checked against the pure-Python one; see kat.py). "
        "One case per line: NAME HEX (serialized bytes; no HEX for an empty message).",
    ]
    for name, data in sorted(vectors().items()):
        lines.append(f"{name} {data.hex()}" if data else name)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
