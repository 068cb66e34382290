"""``onnx.checker`` on the onnx-light core: ``check_model`` applies the rules of
``onnx.checker.check_model(model, full_check=False)`` (IR version and opset imports,
names and single assignment, topological order, each node against its operator's
schema, tensor sizes, sparse indices, external data) and reports every problem found,
not only the first: one line each, in model order, the first 100 of each kind followed
by ``... and N more of this kind`` when there were more. ``full_check=True`` then
runs strict shape inference with type checks, as ``onnx`` does, and raises its
``InferenceError``.

``check_node``, ``check_graph``, ``check_function``, ``check_attribute``,
``check_tensor``, ``check_sparse_tensor`` and ``check_value_info`` check one part on its
own by the same rules, against a ``CheckerContext`` (the IR version and opset imports of
the model it would be in; ``DEFAULT_CONTEXT`` by default), with ``onnx``'s signatures."""

from __future__ import annotations

import os
import types
from collections.abc import Mapping
from typing import Any, Callable, Optional, Union

from .. import _onnx_light as _native
from ._errors import ValidationError

__all__ = [
    "check_attribute",
    "check_function",
    "check_graph",
    "check_model",
    "check_node",
    "check_sparse_tensor",
    "check_tensor",
    "check_value_info",
    "C",
    "CheckerContext",
    "DEFAULT_CONTEXT",
    "LEXICAL_SCOPE_CONTEXT",
    "LexicalScopeContext",
    "MAXIMUM_PROTOBUF",
    "ValidationError",
]

# The largest message protobuf parses (2 GiB - 1 byte), as ``onnx`` names it.
MAXIMUM_PROTOBUF = 2147483647

_INT32 = range(-(2**31), 2**31)


class CheckerContext:
    """What a part is checked against (``onnx``'s ``CheckerContext``): ``ir_version``
    (an ``int``, -1 by default) and ``opset_imports`` (``{domain: version}``, empty by
    default; reading it gives a copy)."""

    __slots__ = ("_ir_version", "_opset_imports")

    def __init__(self) -> None:
        self._ir_version = -1
        self._opset_imports: dict[str, int] = {}

    @property
    def ir_version(self) -> int:
        return self._ir_version

    @ir_version.setter
    def ir_version(self, value: int) -> None:
        if not isinstance(value, int) or value not in _INT32:
            raise TypeError(f"ir_version must be an int in the int32 range, not {value!r}")
        self._ir_version = int(value)

    @property
    def opset_imports(self) -> dict[str, int]:
        return dict(self._opset_imports)

    @opset_imports.setter
    def opset_imports(self, value: Mapping[str, int]) -> None:
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, int) and v in _INT32 for k, v in value.items()
        ):
            raise TypeError(
                f"opset_imports must be a mapping of str to int32 versions, not {value!r}"
            )
        self._opset_imports = {k: int(v) for k, v in value.items()}

    def __repr__(self) -> str:
        return f"CheckerContext(ir_version={self._ir_version}, opset_imports={self._opset_imports})"


class LexicalScopeContext:
    """The names defined by enclosing graphs (``onnx``'s ``LexicalScopeContext``, which
    Python code can only create empty)."""

    __slots__ = ()


def _default_context() -> CheckerContext:
    from . import IR_VERSION
    from .defs import onnx_opset_version

    ctx = CheckerContext()
    ctx.ir_version = IR_VERSION
    ctx.opset_imports = {"": onnx_opset_version()}
    return ctx


# The context of a part checked without one: the newest IR version and ai.onnx opset.
DEFAULT_CONTEXT = _default_context()
LEXICAL_SCOPE_CONTEXT = LexicalScopeContext()

def _min_ir_version(opset_import: Any) -> int:
    """``onnx.helper.find_min_ir_version_for(opset_import, ignore_unknown=True)``."""
    from .helper import find_min_ir_version_for

    return find_min_ir_version_for(list(opset_import), ignore_unknown=True)


def _part(proto: Any, proto_name: str) -> Any:
    """``proto`` as this package's message, or ``TypeError`` as ``onnx`` raises it when
    it is not a ``proto_name``."""
    from . import Message, _adopt

    proto = _adopt(proto)
    if not isinstance(proto, Message) or proto._proto_name != f"onnx.{proto_name}":
        raise TypeError(f"The proto message needs to be of type '{proto_name}'")
    return proto


def _check(proto: Any, ctx: Any, lexical_scope_ctx: Any = LEXICAL_SCOPE_CONTEXT) -> None:
    if not isinstance(ctx, CheckerContext):
        raise TypeError(f"ctx must be a CheckerContext, not {type(ctx).__name__}")
    if not isinstance(lexical_scope_ctx, LexicalScopeContext):
        raise TypeError(
            f"lexical_scope_ctx must be a LexicalScopeContext, not {type(lexical_scope_ctx).__name__}"
        )
    # External data locations are relative to the working directory, as in ``onnx``
    # (whose context names no model directory).
    problems = _native.check_part(
        proto, ctx.ir_version, list(ctx._opset_imports.items()), os.getcwd()
    )
    if problems:
        raise ValidationError("\n".join(problems))


def check_value_info(value_info: Any, ctx: CheckerContext = DEFAULT_CONTEXT) -> None:
    """Raises ``ValidationError`` unless ``value_info`` has a name and a type with its
    required fields (as a main graph's input or output)."""
    _check(_part(value_info, "ValueInfoProto"), ctx)


def check_tensor(tensor: Any, ctx: CheckerContext = DEFAULT_CONTEXT) -> None:
    """Raises ``ValidationError`` unless ``tensor`` has a data type and one data field
    holding enough values for its dims (or external data at a safe location: a file in
    the working directory)."""
    _check(_part(tensor, "TensorProto"), ctx)


def check_sparse_tensor(sparse: Any, ctx: CheckerContext = DEFAULT_CONTEXT) -> None:
    """Raises ``ValidationError`` unless ``sparse`` has valid values and indices: rank 1
    values, positive dims, INT64 indices in range and sorted."""
    _check(_part(sparse, "SparseTensorProto"), ctx)


def check_attribute(
    attr: Any,
    ctx: CheckerContext = DEFAULT_CONTEXT,
    lexical_scope_ctx: LexicalScopeContext = LEXICAL_SCOPE_CONTEXT,
) -> None:
    """Raises ``ValidationError`` unless ``attr`` has a name, a type matching its one
    value field, and valid tensors and graphs."""
    _check(_part(attr, "AttributeProto"), ctx, lexical_scope_ctx)


def check_node(
    node: Any,
    ctx: CheckerContext = DEFAULT_CONTEXT,
    lexical_scope_ctx: LexicalScopeContext = LEXICAL_SCOPE_CONTEXT,
) -> None:
    """Raises ``ValidationError`` unless ``node``'s operator exists in the opset ``ctx``
    imports for its domain and the node fits its schema (inputs, outputs, attributes),
    with valid attributes."""
    _check(_part(node, "NodeProto"), ctx, lexical_scope_ctx)


def check_function(
    function: Any,
    ctx: Optional[CheckerContext] = None,
    lexical_scope_ctx: LexicalScopeContext = LEXICAL_SCOPE_CONTEXT,
) -> None:
    """Raises ``ValidationError`` unless ``function`` is valid under its own opset
    imports, each operator resolving as under ``ctx``'s. Without ``ctx``, the context is
    the function's imports at the lowest IR version they need, as in ``onnx``."""
    function = _part(function, "FunctionProto")
    if ctx is None:
        ctx = CheckerContext()
        ctx.ir_version = _min_ir_version(function.opset_import)
        ctx.opset_imports = {o.domain: o.version for o in function.opset_import}
    _check(function, ctx, lexical_scope_ctx)


def check_graph(
    graph: Any,
    ctx: CheckerContext = DEFAULT_CONTEXT,
    lexical_scope_ctx: LexicalScopeContext = LEXICAL_SCOPE_CONTEXT,
) -> None:
    """Raises ``ValidationError`` unless ``graph`` is a valid main graph: typed inputs
    and outputs, single assignment, nodes in topological order, each node and
    initializer valid."""
    _check(_part(graph, "GraphProto"), ctx, lexical_scope_ctx)


def check_model(
    model: Union[Any, str, os.PathLike, bytes],
    full_check: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
) -> None:
    """Raises ``ValidationError`` (listing every problem) unless ``model`` is valid.

    ``model`` is a ``ModelProto``, serialized bytes, or a path (read structure-only:
    weights are not loaded, and external data files are checked next to it). ``full_check=True`` then runs shape
    inference on the valid model with ``strict_mode=True, check_type=True`` and raises
    ``shape_inference.InferenceError`` where it fails, as ``onnx`` does."""
    from . import _adopt, load_model, load_model_from_string

    model_dir = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        model_dir = os.path.dirname(os.path.abspath(path))
        # Structure-only: the weights stay on disk, and the rules that need bytes of
        # one (the last byte of a packed FLOAT6 tensor, sparse indices) read just those.
        model = load_model(path, load_external_data=False, structure_only=True)
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


def _bytes_checker(proto_name: str, check: Callable[..., None], n_contexts: int) -> Callable[..., None]:
    """``onnx.checker.C``'s form of ``check``: the part as serialized bytes, then every
    context positionally (``TypeError`` otherwise, as there)."""

    def checker(data: bytes, *contexts: Any) -> None:
        if not isinstance(data, bytes) or len(contexts) != n_contexts:
            raise TypeError(
                f"{check.__name__}() takes the bytes of a {proto_name} and {n_contexts} context(s)"
            )
        if not isinstance(contexts[0], CheckerContext):
            raise TypeError(f"{check.__name__}() takes a CheckerContext")
        check(_native.decode_message(f"onnx.{proto_name}", data), *contexts)

    checker.__name__ = check.__name__
    return checker


def _check_model_bytes(
    data: bytes,
    full_check: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
) -> None:
    if not isinstance(data, bytes):
        raise TypeError("check_model() takes the bytes of a ModelProto")
    check_model(data, full_check, skip_opset_compatibility_check, check_custom_domain)


def _check_model_path(
    path: str,
    full_check: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
) -> None:
    if not isinstance(path, str):
        raise TypeError("check_model_path() takes a path as str")
    check_model(path, full_check, skip_opset_compatibility_check, check_custom_domain)


# ``onnx.checker.C``, the checks on serialized parts that ``onnx``'s Python functions
# call, and its context types.
C = types.SimpleNamespace(
    CheckerContext=CheckerContext,
    LexicalScopeContext=LexicalScopeContext,
    ValidationError=ValidationError,
    check_value_info=_bytes_checker("ValueInfoProto", check_value_info, 1),
    check_tensor=_bytes_checker("TensorProto", check_tensor, 1),
    check_sparse_tensor=_bytes_checker("SparseTensorProto", check_sparse_tensor, 1),
    check_attribute=_bytes_checker("AttributeProto", check_attribute, 2),
    check_node=_bytes_checker("NodeProto", check_node, 2),
    check_function=_bytes_checker("FunctionProto", check_function, 2),
    check_graph=_bytes_checker("GraphProto", check_graph, 2),
    check_model=_check_model_bytes,
    check_model_path=_check_model_path,
)
