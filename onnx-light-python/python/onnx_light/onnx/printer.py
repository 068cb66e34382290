"""``onnx.printer`` on the onnx-light core: the ONNX text syntax, character for
character what ``onnx.printer.to_text`` prints."""

from __future__ import annotations

from typing import Any

from .. import _onnx_light as _native

__all__ = ["to_text"]


def to_text(proto: Any) -> str:
    """The text form of a ``ModelProto``, ``GraphProto``, ``FunctionProto`` or
    ``NodeProto`` (the ``onnx`` package's messages too)."""
    from . import _adopt

    return _native.to_text(_adopt(proto))
