"""``onnx.checker`` on the onnx-light core: ``check_model`` applies the rules of
``onnx.checker.check_model(model, full_check=False)`` (IR version and opset imports,
names and single assignment, topological order, each node against its operator's
schema, tensor sizes, sparse indices, external data) and reports every problem found,
not only the first: one line each, in model order, the first 100 of each kind followed
by ``... and N more of this kind`` when there were more. ``full_check=True`` then
runs strict shape inference with type checks, as ``onnx`` does, and raises its
``InferenceError``."""

from __future__ import annotations

import os
from typing import Any, Union

from .. import _onnx_light as _native
from ._errors import ValidationError

__all__ = ["ValidationError", "check_model"]


def check_model(
    model: Union[Any, str, os.PathLike, bytes],
    full_check: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
) -> None:
    """Raises ``ValidationError`` (listing every problem) unless ``model`` is valid.

    ``model`` is a ``ModelProto``, serialized bytes, or a path (external data files are
    then checked next to it, without being loaded). ``full_check=True`` then runs shape
    inference on the valid model with ``strict_mode=True, check_type=True`` and raises
    ``shape_inference.InferenceError`` where it fails, as ``onnx`` does."""
    from . import _adopt, load_model, load_model_from_string

    model_dir = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        model_dir = os.path.dirname(os.path.abspath(path))
        model = load_model(path, load_external_data=False)
    elif isinstance(model, (bytes, bytearray, memoryview)):
        model = load_model_from_string(bytes(model))
    else:
        model = _adopt(model)
    problems = _native.check_model(
        model, model_dir, skip_opset_compatibility_check, check_custom_domain
    )
    if problems:
        raise ValidationError("\n".join(problems))
    if full_check:
        _native.infer_shapes(model, True, True)
