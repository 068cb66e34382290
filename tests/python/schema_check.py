"""Compares onnx-light's schema/ (given as a serialized FileDescriptorSet compiled from
schema/onnx.proto) with the descriptors of the installed official `onnx` package.

Usage: python schema_check.py SCHEMA.fds
Prints one line per difference and exits 1 if there is any; prints a summary and exits 0
when both describe the same messages, fields and enums.
"""

import sys

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor

import onnx
from onnx import onnx_data_pb2, onnx_ml_pb2, onnx_operators_ml_pb2


def official():
    """(messages, enums) of the official package, keyed by full name."""
    messages, enums = {}, {}

    def add_enum(e):
        enums[e.full_name] = [(v.name, v.number) for v in e.values]

    def add_message(m):
        fields = {}
        for f in m.fields:
            type_name = ""
            if f.message_type is not None:
                type_name = f.message_type.full_name
            elif f.enum_type is not None:
                type_name = f.enum_type.full_name
            packed = f.has_options and f.GetOptions().packed
            fields[f.number] = (
                f.name,
                f.type,
                "repeated" if f.is_repeated else "optional",
                type_name,
                bool(packed),
                f.containing_oneof.name if f.containing_oneof else "",
            )
        messages[m.full_name] = fields
        for e in m.enum_types:
            add_enum(e)
        for n in m.nested_types:
            add_message(n)

    for module in (onnx_ml_pb2, onnx_data_pb2, onnx_operators_ml_pb2):
        fd = module.DESCRIPTOR
        for e in fd.enum_types_by_name.values():
            add_enum(e)
        for m in fd.message_types_by_name.values():
            add_message(m)
    return messages, enums


def ours(path):
    """(messages, enums) of schema/, from its compiled FileDescriptorSet."""
    with open(path, "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    messages, enums = {}, {}
    label_name = {
        descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL: "optional",
        descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED: "required",
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED: "repeated",
    }

    def add_enum(prefix, e):
        enums[prefix + e.name] = [(v.name, v.number) for v in e.value]

    def add_message(prefix, m):
        name = prefix + m.name
        fields = {}
        for f in m.field:
            oneof = m.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else ""
            fields[f.number] = (
                f.name,
                f.type,
                label_name[f.label],
                f.type_name.lstrip("."),
                bool(f.options.packed) if f.HasField("options") else False,
                oneof,
            )
        messages[name] = fields
        for e in m.enum_type:
            add_enum(name + ".", e)
        for n in m.nested_type:
            add_message(name + ".", n)

    for fd in fds.file:
        prefix = fd.package + "." if fd.package else ""
        for e in fd.enum_type:
            add_enum(prefix, e)
        for m in fd.message_type:
            add_message(prefix, m)
    return messages, enums


TYPE_NAMES = {v: k[5:].lower() for k, v in vars(FieldDescriptor).items() if k.startswith("TYPE_")}
COLUMNS = ("name", "type", "label", "type_name", "packed", "oneof")


def describe(field):
    name, ty, label, type_name, packed, oneof = field
    text = f"{label} {TYPE_NAMES.get(ty, ty)} {name}"
    if type_name:
        text += f" ({type_name})"
    if packed:
        text += " [packed]"
    if oneof:
        text += f" in oneof {oneof}"
    return text


def main():
    theirs_m, theirs_e = official()
    ours_m, ours_e = ours(sys.argv[1])
    diffs = []
    for name in sorted(set(theirs_m) | set(ours_m)):
        if name not in ours_m:
            diffs.append(f"message {name}: in onnx {onnx.__version__}, missing from schema/")
            continue
        if name not in theirs_m:
            diffs.append(f"message {name}: in schema/, not in onnx {onnx.__version__}")
            continue
        a, b = theirs_m[name], ours_m[name]
        for number in sorted(set(a) | set(b)):
            if number not in b:
                diffs.append(f"{name} field {number}: onnx has `{describe(a[number])}`, schema/ has nothing")
            elif number not in a:
                diffs.append(f"{name} field {number}: schema/ has `{describe(b[number])}`, onnx has nothing")
            elif a[number] != b[number]:
                diffs.append(f"{name} field {number}: onnx has `{describe(a[number])}`, schema/ has `{describe(b[number])}`")
    for name in sorted(set(theirs_e) | set(ours_e)):
        if theirs_e.get(name) != ours_e.get(name):
            diffs.append(f"enum {name}: onnx has {theirs_e.get(name)}, schema/ has {ours_e.get(name)}")
    for d in diffs:
        print(d)
    if diffs:
        print(f"{len(diffs)} difference(s) between schema/ and onnx {onnx.__version__}")
        return 1
    print(f"schema/ matches onnx {onnx.__version__}: {len(ours_m)} messages, {len(ours_e)} enums")
    return 0


if __name__ == "__main__":
    sys.exit(main())
