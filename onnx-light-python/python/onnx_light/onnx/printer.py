"""``onnx.printer`` on the onnx-light core: the ONNX text syntax, character for
character what ``onnx.printer.to_text`` prints."""

from __future__ import annotations

from typing import Any

from .. import _onnx_light as _native
from ._errors import InferenceError, TensorDataError

__all__ = ["to_text"]


class TensorDataSizeError(TensorDataError, InferenceError):
    """A tensor the printer cannot print: its ``raw_data`` does not hold one element per
    element of its dims (text printed from it would parse back as another tensor). It
    is the library's ``TensorDataError`` and, as ``onnx`` raises it from its printer,
    a ``shape_inference.InferenceError``."""


def to_text(proto: Any) -> str:
    """The text form of a ``ModelProto``, ``GraphProto``, ``FunctionProto`` or
    ``NodeProto`` (the ``onnx`` package's messages too). A tensor whose ``raw_data``
    size does not match its dims and data type raises ``TensorDataSizeError``."""
    from . import _adopt

    try:
        return _native.to_text(_adopt(proto))
    except TensorDataError as error:
        # The printer's only tensor data error is a raw_data size mismatch.
        raise TensorDataSizeError(f"Data size mismatch: {error}") from None
