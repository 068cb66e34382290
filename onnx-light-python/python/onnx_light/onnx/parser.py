"""``onnx.parser`` on the onnx-light core: reads the ONNX text syntax into messages
that serialize to the same bytes as ``onnx.parser``'s. Errors raise ``ParseError``
with the line and column."""

from __future__ import annotations

from typing import Any

from .. import _onnx_light as _native
from ._errors import ParseError

__all__ = ["ParseError", "parse_function", "parse_graph", "parse_model", "parse_node"]


def parse_model(text: str) -> Any:
    """A ``ModelProto`` from its text form."""
    return _native.parse_text("model", text)


def parse_graph(text: str) -> Any:
    """A ``GraphProto`` from its text form."""
    return _native.parse_text("graph", text)


def parse_function(text: str) -> Any:
    """A ``FunctionProto`` from its text form."""
    return _native.parse_text("function", text)


def parse_node(text: str) -> Any:
    """A ``NodeProto`` from its text form."""
    return _native.parse_text("node", text)
