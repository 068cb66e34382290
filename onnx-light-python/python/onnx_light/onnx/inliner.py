"""``onnx.inliner`` on the onnx-light core: replaces calls to functions by the nodes of
their bodies, with the results ``onnx.inliner`` gives (the same names for the values it
renames, the same nodes, ``value_info`` and functions left).

Each call is replaced by the callee's nodes: formal inputs and outputs take the call's
names, every other name the body defines gets the suffix ``__N`` (``N`` counting the
calls inlined so far; ``_K`` is added when that name is taken), attribute references
take the call's attribute values (a reference the call does not satisfy is dropped: as
in ``onnx``, the function's default attribute values are not used), and the callee's
``value_info`` is appended to the graph's. Calls in the inlined nodes and in subgraphs
are inlined too. The model's ``opset_import`` is left as it is.

With ``inline_schema_functions=True``, the bodies ``CastLike``, ``Clip``, ``Gelu``,
``LayerNormalization``, ``RMSNormalization``, ``Range``, ``Softmax`` and
``LogSoftmax`` build per node are built as ``onnx`` builds them: shape
inference runs over the main graph built so far (what it finds stays in the graph) and
the node's input types are read from there.

With ``convert_version=True``, a local function that imports another version of the
ONNX domain than the model (and agrees with it on the other domains) is inlined too,
its nodes converted to the model's version at each call as ``onnx`` converts them:
shape inference runs over the main graph built so far (what it finds stays in the
graph), the function's nodes, with copies of the ``Constant`` nodes that make the
values the call reads, go through the version converter
(``onnx_light.onnx.version_converter``), and the initializers it adds are appended to
the main graph. As in ``onnx``, every value the call reads or writes must have a type
in the main graph's ``value_info``, inputs or outputs after that inference, else
``InlineError`` ("Type unknown for ..."); a conversion the converter refuses raises
``InlineError`` with the converter's reason.

Not implemented: the bodies other operators build per node (context-dependent
functions such as ``Attention``, ``SoftmaxCrossEntropyLoss``,
``NegativeLogLikelihoodLoss``). They raise ``InlineNotImplementedError`` (a
``NotImplementedError``) naming the operator. The input model is never changed."""

from __future__ import annotations

from typing import Any, List, Tuple

from .. import _onnx_light as _native
from ._errors import InlineError, InlineNotImplementedError

__all__ = [
    "InlineError",
    "InlineNotImplementedError",
    "inline_local_functions",
    "inline_selected_functions",
]


def _model(model: Any) -> Any:
    from . import ModelProto, _adopt

    model = _adopt(model)
    if not isinstance(model, ModelProto):
        raise TypeError(f"model must be a ModelProto, not {type(model).__name__}")
    return model


def inline_local_functions(model: Any, convert_version: bool = False) -> Any:
    """A new model: ``model`` with every call to a local function inlined
    (recursively), and those functions removed from ``model.functions``. A function
    that imports another version of a domain than the model is neither inlined nor
    removed, unless ``convert_version`` is true and the domain is the ONNX domain:
    its nodes are then converted to the model's version at each call, as ``onnx``
    converts them (see the module documentation).

    Raises ``checker.ValidationError`` when local functions call each other in a cycle
    or share a domain, name and overload, and ``InlineError`` (a ``RuntimeError``) when
    a call passes more inputs or outputs than its function declares, when the version
    converter refuses a function's nodes, or when a value a converted call reads or
    writes has no known type."""
    return _native.inline_local_functions(_model(model), bool(convert_version))


def inline_selected_functions(
    model: Any,
    function_ids: List[Tuple[str, str]],
    exclude: bool = False,
    inline_schema_functions: bool = False,
) -> Any:
    """A new model: ``model`` with the calls to the functions named in
    ``function_ids`` (``(domain, name)`` pairs; every other function when
    ``exclude`` is true) inlined, in the main graph and in the local functions that are
    kept, and the inlined local functions removed. ``inline_schema_functions``: calls
    of selected operators whose schema defines a function body for the model's opset
    version (``Softsign``, ``Selu``, ...) are inlined too.

    Raises ``InlineError`` (a ``RuntimeError``) when the functions' opset imports
    disagree with each other or with the model's (``"Model has functions with
    incompatible opset versions."``), ``checker.ValidationError`` for a cycle of calls,
    and ``InlineNotImplementedError`` for a selected operator whose body is built per
    node by code not implemented here (see the module documentation)."""
    ids = []
    for item in function_ids:
        domain, name = item
        if not isinstance(domain, str) or not isinstance(name, str):
            raise TypeError(f"function_ids must hold (domain, name) pairs of str, not {item!r}")
        ids.append((domain, name))
    return _native.inline_selected_functions(
        _model(model), ids, bool(exclude), bool(inline_schema_functions)
    )
