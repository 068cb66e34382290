"""Writes the message-class part of python/onnx_light/onnx/__init__.pyi from the built
module's schema (run after changing the ONNX types; tests/test_stubs.py fails when the
stubs and the module disagree).

    python tools/generate_stubs.py   # with onnx_light importable
"""

import pathlib
import re

from onnx_light import _onnx_light as native

HERE = pathlib.Path(__file__).resolve().parent.parent
STUB = HERE / "python" / "onnx_light" / "onnx" / "__init__.pyi"
BEGIN = "# --- generated message classes (tools/generate_stubs.py) ---\n"
END = "# --- end of generated message classes ---\n"

SCALARS = {
    "double": "float", "float": "float", "int64": "int", "uint64": "int", "int32": "int",
    "fixed64": "int", "fixed32": "int", "bool": "bool", "string": "str", "bytes": "bytes",
    "uint32": "int", "sfixed32": "int", "sfixed64": "int", "sint32": "int", "sint64": "int",
}


# What the package adds to a message class in Python (the tensor protocol of
# `_tensor_protocol`), written after the class's fields.
EXTRA = {
    "onnx.TensorProto": [
        "def numpy(self) -> Any: ...",
        "def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any: ...",
        "def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None, "
        "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any: ...",
        "def __dlpack_device__(self) -> tuple[int, int]: ...",
        "def tobytes(self) -> bytes: ...",
        "@property",
        "def nbytes(self) -> int: ...",
        "@property",
        "def size(self) -> int: ...",
    ],
}


def py_type(kind: str) -> str:
    if kind in SCALARS:
        return SCALARS[kind]
    if kind.startswith("onnx.") and kind in native.MESSAGE_CLASSES:
        return kind[len("onnx."):]
    return "int"  # enums


def class_block(full: str, nested: dict, indent: str) -> list[str]:
    name = full.split(".")[-1]
    lines = [f"{indent}class {name}(Message):"]
    inner = indent + "    "
    for enum_name, values in native.ENUMS.items():
        if enum_name.rsplit(".", 1)[0] == full:
            lines.append(f"{inner}{enum_name.split('.')[-1]}: EnumTypeWrapper")
            lines.extend(f"{inner}{k}: int" for k in values)
    for child in nested.get(full, []):
        lines.extend(class_block(child, nested, inner))
    kwargs = []
    for field, _number, repeated, kind in native.MESSAGE_FIELDS[full]:
        t = py_type(kind)
        attr = f"RepeatedField[{t}]" if repeated else t
        lines.append(f"{inner}{field}: {attr}")
        kwargs.append(f"{field}: {'Iterable[' + t + ']' if repeated else t} | None = ...")
    lines.append(f"{inner}def __init__(self, *, {', '.join(kwargs)}) -> None: ..." if kwargs
                 else f"{inner}def __init__(self) -> None: ...")
    lines.extend(inner + line for line in EXTRA.get(full, []))
    return lines


def main() -> None:
    names = sorted(native.MESSAGE_CLASSES)
    nested: dict = {}
    top = []
    for full in names:
        parent = full.rsplit(".", 1)[0]
        if parent == "onnx":
            top.append(full)
        else:
            nested.setdefault(parent, []).append(full)
    out = []
    for full in top:
        out.extend(class_block(full, nested, ""))
        out.append("")
    for enum_name, values in native.ENUMS.items():
        if enum_name.count(".") == 1:
            out.append(f"{enum_name.split('.')[-1]}: EnumTypeWrapper")
            out.extend(f"{k}: int" for k in values)
    text = STUB.read_text()
    generated = BEGIN + "\n".join(out) + "\n" + END
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _m: generated, text, flags=re.S)
    STUB.write_text(text)


if __name__ == "__main__":
    main()
