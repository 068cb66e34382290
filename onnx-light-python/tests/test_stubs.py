"""The type stubs cover every public name and every message field of the module."""

import ast
import pathlib

import onnx_light.onnx as ol
from onnx_light import _onnx_light as native


def stub_tree():
    path = pathlib.Path(ol.__file__).with_name("__init__.pyi")
    return ast.parse(path.read_text())


def names_defined(body):
    out = {}
    for node in body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                out[alias.asname or alias.name] = node
    return out


def test_every_public_name_has_a_stub():
    defined = names_defined(stub_tree().body)
    missing = [n for n in ol.__all__ if n not in defined]
    assert not missing, f"not in __init__.pyi: {missing}"


def test_every_message_field_has_a_stub():
    top = names_defined(stub_tree().body)
    for full, fields in native.MESSAGE_FIELDS.items():
        parts = full.split(".")[1:]
        node = top[parts[0]]
        for part in parts[1:]:
            node = names_defined(node.body)[part]
        members = names_defined(node.body)
        missing = [f[0] for f in fields if f[0] not in members]
        assert not missing, f"{full}: fields missing from the stub: {missing}"
