"""``onnx.compose`` on the onnx-light core: merging graphs and models, prefixing the
names in a graph, and giving every output one more dimension, with the results and the
refusals of ``onnx.compose`` 1.23 (``GraphEditError``, a ``ValueError``, with ``onnx``'s
messages; ``TypeError`` for arguments of the wrong type).

The work is done in Rust (``onnx_light::compose``) without reading weights: parts of a
model loaded with ``structure_only=True`` keep their weights on disk, and a merged model
saved with ``save`` copies them from the source file. ``merge_models`` checks its result
with this package's checker, as ``onnx`` does with its own."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .. import _onnx_light as _native
from ._errors import GraphEditError

__all__ = [
    "GraphEditError",
    "add_prefix",
    "add_prefix_graph",
    "check_overlapping_names",
    "expand_out_dim",
    "expand_out_dim_graph",
    "merge_graphs",
    "merge_models",
]


def _message(obj: Any, proto_name: str, what: str) -> Any:
    """``obj`` as this package's message (a message of the ``onnx`` package is converted
    through its bytes); ``TypeError`` with ``onnx``'s words unless it is a ``proto_name``."""
    from . import Message, _adopt

    obj = _adopt(obj)
    if not isinstance(obj, Message) or obj._proto_name != f"onnx.{proto_name}":
        raise TypeError(what)
    return obj


def _copy_back(original: Any, edited: Any) -> None:
    """After an in-place edit of the converted copy of another package's message, the
    original takes the result."""
    if edited is not original:
        original.ParseFromString(edited.SerializeToString())


def _io_map(io_map: Optional[List[Tuple[str, str]]]) -> List[Tuple[str, str]]:
    # Indexed as onnx indexes the pairs (a short one raises IndexError there too).
    return [(str(pair[0]), str(pair[1])) for pair in (io_map or [])]


def _names(names: Optional[List[str]]) -> Optional[List[str]]:
    return None if names is None else [str(n) for n in names]


def check_overlapping_names(
    g1: Any, g2: Any, io_map: Optional[List[Tuple[str, str]]] = None
) -> List[Tuple[str, List[str]]]:
    """The names both graphs use, as ``[(category, names)]`` with category one of
    ``"edge"``, ``"value_info"``, ``"initializer"``, ``"sparse_initializer"`` (only those
    with a clash, in that order). Inputs of ``g2`` that ``io_map`` connects are not
    counted as its edges."""
    g1 = _message(g1, "GraphProto", "g1 argument is not an ONNX graph")
    g2 = _message(g2, "GraphProto", "g2 argument is not an ONNX graph")
    return [
        (category, names)
        for category, names in _native.check_overlapping_names(g1, g2, _io_map(io_map))
    ]


def merge_graphs(
    g1: Any,
    g2: Any,
    io_map: List[Tuple[str, str]],
    inputs: Optional[List[str]] = None,
    outputs: Optional[List[str]] = None,
    prefix1: Optional[str] = None,
    prefix2: Optional[str] = None,
    name: Optional[str] = None,
    doc_string: Optional[str] = None,
) -> Any:
    """One graph made of ``g1`` and ``g2``: each pair ``(out, in)`` of ``io_map`` connects
    output ``out`` of ``g1`` to input ``in`` of ``g2``. Inputs and outputs not connected
    remain (or only ``inputs`` / ``outputs``, the graphs then cut down to them);
    ``prefix1`` / ``prefix2`` are added to every name of ``g1`` / ``g2`` first (``io_map``
    names them unprefixed). ``name`` defaults to ``g1.name + "_" + g2.name``. The graphs
    given are not changed."""
    g1 = _message(g1, "GraphProto", "g1 argument is not an ONNX graph")
    g2 = _message(g2, "GraphProto", "g2 argument is not an ONNX graph")
    return _native.merge_graphs(
        g1, g2, _io_map(io_map), _names(inputs), _names(outputs),
        prefix1, prefix2, name, doc_string,
    )


def merge_models(
    m1: Any,
    m2: Any,
    io_map: List[Tuple[str, str]],
    inputs: Optional[List[str]] = None,
    outputs: Optional[List[str]] = None,
    prefix1: Optional[str] = None,
    prefix2: Optional[str] = None,
    name: Optional[str] = None,
    doc_string: Optional[str] = None,
    producer_name: Optional[str] = "onnx.compose.merge_models",
    producer_version: Optional[str] = "1.0",
    domain: Optional[str] = "",
    model_version: Optional[int] = 1,
) -> Any:
    """One model made of ``m1`` and ``m2``, their graphs merged as ``merge_graphs`` does
    (prefixes rename local functions too). Both must have the same IR version and the
    same version of each operator set they import; metadata keys in both must agree; no
    local function name may be in both. The result is checked (``checker.check_model``,
    ``ValidationError``). ``producer_name``, ``producer_version``, ``domain`` and
    ``model_version`` set those fields (``None``: left unset)."""
    from . import checker

    m1 = _message(m1, "ModelProto", "m1 argument is not an ONNX model")
    m2 = _message(m2, "ModelProto", "m2 argument is not an ONNX model")
    model = _native.merge_models(
        m1, m2, _io_map(io_map), _names(inputs), _names(outputs),
        prefix1, prefix2, name, doc_string,
        producer_name, producer_version, domain,
        None if model_version is None else int(model_version),
    )
    checker.check_model(model)
    return model


def _flags(*flags: Optional[bool]) -> List[bool]:
    return [bool(f) for f in flags]


def add_prefix_graph(
    graph: Any,
    prefix: str,
    rename_nodes: Optional[bool] = True,
    rename_edges: Optional[bool] = True,
    rename_inputs: Optional[bool] = True,
    rename_outputs: Optional[bool] = True,
    rename_initializers: Optional[bool] = True,
    rename_value_infos: Optional[bool] = True,
    inplace: Optional[bool] = False,
    name_map: Optional[Dict[str, str]] = None,
) -> Any:
    """Adds ``prefix`` to the names in ``graph`` that the ``rename_*`` flags select (empty
    names stay empty) and to every use of them; ``rename_nodes`` also prefixes everything
    in the graphs of node attributes. A copy unless ``inplace``. ``name_map`` (old name
    to new) is applied too and receives the renames made, as in ``onnx``."""
    original = graph
    graph = _message(graph, "GraphProto", "graph argument is not an ONNX graph")
    given = [] if name_map is None else [(str(k), str(v)) for k, v in name_map.items()]
    copy, renames = _native.add_prefix_graph(
        graph,
        str(prefix),
        _flags(rename_nodes, rename_edges, rename_inputs, rename_outputs,
               rename_initializers, rename_value_infos),
        given,
        bool(inplace),
    )
    if name_map is not None:
        name_map.update(renames)
    if copy is not None:
        return copy
    _copy_back(original, graph)
    return original


def add_prefix(
    model: Any,
    prefix: str,
    rename_nodes: Optional[bool] = True,
    rename_edges: Optional[bool] = True,
    rename_inputs: Optional[bool] = True,
    rename_outputs: Optional[bool] = True,
    rename_initializers: Optional[bool] = True,
    rename_value_infos: Optional[bool] = True,
    rename_functions: Optional[bool] = True,
    inplace: Optional[bool] = False,
) -> Any:
    """``add_prefix_graph`` on the model's graph, and with ``rename_functions`` the names
    of its local functions and of the nodes calling them. A copy unless ``inplace``."""
    original = model
    model = _message(model, "ModelProto", "model argument is not an ONNX model")
    copy = _native.add_prefix(
        model,
        str(prefix),
        _flags(rename_nodes, rename_edges, rename_inputs, rename_outputs,
               rename_initializers, rename_value_infos, rename_functions),
        bool(inplace),
    )
    if copy is not None:
        return copy
    _copy_back(original, model)
    return original


def expand_out_dim_graph(graph: Any, dim_idx: int, inplace: Optional[bool] = False) -> Any:
    """Gives every output of ``graph`` an extra dimension of size 1 at ``dim_idx``
    (negative: from the back) with one ``Unsqueeze`` node each. A copy unless
    ``inplace``."""
    original = graph
    graph = _message(graph, "GraphProto", "graph argument is not an ONNX graph")
    copy = _native.expand_out_dim_graph(graph, int(dim_idx), bool(inplace))
    if copy is not None:
        return copy
    _copy_back(original, graph)
    return original


def expand_out_dim(model: Any, dim_idx: int, inplace: Optional[bool] = False) -> Any:
    """``expand_out_dim_graph`` on the model's graph. A copy unless ``inplace``."""
    original = model
    model = _message(model, "ModelProto", "model argument is not an ONNX model")
    copy = _native.expand_out_dim(model, int(dim_idx), bool(inplace))
    if copy is not None:
        return copy
    _copy_back(original, model)
    return original
