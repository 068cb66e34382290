"""``onnx.version_converter`` on the onnx-light core: converts a model between opset
versions of the ONNX domain (``""`` or ``"ai.onnx"``), with the adapters, refusals and
resulting model ``onnx.version_converter`` gives, without its 2 GiB limit.

Each node whose operator changes between two versions goes through ``onnx``'s adapter
for that step (an ``axes`` attribute becoming an input, ``Split``'s ``split``, ``Clip``'s
bounds, ...); what ``onnx`` cannot convert raises ``ConvertError`` (a ``RuntimeError``)
naming the operator, its domain, the versions and the node."""

from __future__ import annotations

from typing import Any

from .. import _onnx_light as _native
from ._errors import ConvertError

__all__ = ["ConvertError", "convert_version"]


def convert_version(model: Any, target_version: int) -> Any:
    """A new model: ``model`` converted to version ``target_version`` of the ONNX
    domain. ``model`` itself is not changed.

    Raises ``TypeError`` when ``model`` is not a ``ModelProto`` or ``target_version``
    not an ``int``, and ``ConvertError`` when the conversion is refused."""
    from . import ModelProto, _adopt

    model = _adopt(model)
    if not isinstance(model, ModelProto):
        raise TypeError(
            f"VersionConverter only accepts ModelProto as model, incorrect type: {type(model)}"
        )
    if not isinstance(target_version, int):
        raise TypeError(
            f"VersionConverter only accepts int as target_version, incorrect type: {type(target_version)}"
        )
    return _native.convert_version(model, target_version)
