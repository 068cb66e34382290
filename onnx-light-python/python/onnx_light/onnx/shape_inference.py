"""``onnx.shape_inference`` on the onnx-light core: the types of the values a graph
computes, inferred from its inputs, initializers and each operator's rules, recorded
in ``graph.value_info`` (and in graph outputs declared without a type), with the
results ``onnx.shape_inference`` gives, without its 2 GiB limit.

Every operator of ``ai.onnx`` and ``ai.onnx.ml`` at every opset version ``onnx`` 1.23
knows is covered, with the graphs of control-flow operators and model-local functions;
the README says how the results were compared. ``data_prop=True`` propagates the values
computed from shapes (``Shape``, ``Gather``, ``Concat``, ``Slice``, ...) into the
operators that take a shape (``Reshape``, ``Expand``, ``ConstantOfShape``, ...), as
``onnx`` does."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from .. import _onnx_light as _native
from ._errors import InferenceError

__all__ = [
    "InferenceError",
    "infer_function_output_types",
    "infer_node_outputs",
    "infer_shapes",
    "infer_shapes_path",
]


def infer_shapes(
    model: Union[Any, bytes],
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
) -> Any:
    """A new model: ``model`` (a ``ModelProto`` or its serialized bytes) with the
    inferred types recorded. ``model`` itself is not changed.

    ``strict_mode``: a node whose inferred types conflict with the declared ones, or
    that breaks its operator's rules, raises ``InferenceError`` (else it is skipped).
    ``check_type``: each node's input and output types (and their numbers) are checked
    against its operator's schema; a mismatch raises ``InferenceError`` in either mode,
    as in ``onnx``.
    ``data_prop``: the values of small integer tensors computed from shapes are
    propagated to the operators that take a shape, symbolic dimensions included."""
    from . import _adopt, load_model_from_string

    if isinstance(model, (bytes, bytearray, memoryview)):
        model = load_model_from_string(bytes(model))
    elif isinstance(model, (str, os.PathLike)):
        raise TypeError(
            "infer_shapes only accepts ModelProto or bytes, "
            "For Model paths (str or os.PathLike), use infer_shapes_path()."
        )
    else:
        model = _adopt(model)
    return _native.infer_shapes(model, bool(check_type), bool(strict_mode), bool(data_prop))


def infer_shapes_path(
    model_path: Union[str, os.PathLike],
    output_path: Union[str, os.PathLike] = "",
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
) -> None:
    """Infers the types of the model at ``model_path`` and writes the result to
    ``output_path`` (default: over ``model_path``, atomically). Any size, in bounded
    memory: the structure is read, and the weights are copied from the input file to
    the output file, never held in this process; external data is neither read nor
    moved (its references are written as they are, so ``output_path`` belongs in the
    same directory when the model has external data)."""
    from . import load_model, save_model

    if not isinstance(model_path, (str, os.PathLike)):
        raise TypeError(
            f"infer_shapes_path takes a path, not {type(model_path).__name__}"
        )
    source = os.fspath(model_path)
    target = os.fspath(output_path) if os.fspath(output_path) else source
    model = load_model(source, load_external_data=False, structure_only=True)
    inferred = infer_shapes(model, check_type, strict_mode, data_prop)
    del model
    save_model(inferred, target)


def infer_node_outputs(
    schema: Any,
    node: Any,
    input_types: Dict[str, Any],
    input_data: Optional[Dict[str, Any]] = None,
    input_sparse_data: Optional[Dict[str, Any]] = None,
    opset_imports: Optional[List[Any]] = None,
    ir_version: Optional[int] = None,
) -> Dict[str, Any]:
    """The types of ``node``'s outputs given its inputs' types (by input name; every
    input must have one) and, optionally, the values of some inputs (``input_data``:
    small tensors such as a ``Reshape``'s shape or a ``Resize``'s scales are read). Checks input types
    against the schema and raises ``InferenceError`` where the operator's rules do.
    ``schema`` is the operator's schema (``defs.get_schema(...)``, or ``onnx``'s; its
    ``domain`` and ``since_version`` give the default opset import);
    ``input_sparse_data`` is accepted and not used."""
    from . import IR_VERSION, helper

    del input_sparse_data
    passed = {name: input_types[name] for name in node.input if name != ""}
    domain = getattr(schema, "domain", node.domain)
    if opset_imports is None:
        version = getattr(schema, "since_version", None)
        if version is None:
            raise TypeError("infer_node_outputs needs a schema with since_version, or opset_imports")
        opset_imports = [helper.make_opsetid(domain, version)]
    inputs = []
    for name, t in passed.items():
        vi = helper.make_empty_tensor_value_info(name)
        vi.type.CopyFrom(t)
        inputs.append(vi)
    outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o != ""]
    graph = helper.make_graph(
        [node],
        "infer_node_outputs",
        inputs,
        outputs,
        initializer=list((input_data or {}).values()),
    )
    model = helper.make_model(
        graph,
        opset_imports=opset_imports,
        ir_version=IR_VERSION if ir_version is None else ir_version,
    )
    inferred = _native.infer_shapes(model, True, True)
    # A node's inference leaves unknown dimensions unnamed; the graph-level walk names
    # them (`unk__N`, never a name the inputs use): those names are taken out again.
    used = set()
    for t in passed.values():
        _collect_params(t, used)
    result = {}
    for o in inferred.graph.output:
        _unname_fresh_dims(o.type, used)
        result[o.name] = o.type
    return result


def _tensor_shapes(t: Any):
    """The shapes in a type: its own, or those of the types nested in it."""
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        inner = getattr(t, kind)
        if inner.HasField("shape"):
            yield inner.shape
    elif kind in ("sequence_type", "optional_type"):
        yield from _tensor_shapes(getattr(t, kind).elem_type)
    elif kind == "map_type":
        yield from _tensor_shapes(t.map_type.value_type)


def _collect_params(t: Any, used: set) -> None:
    for shape in _tensor_shapes(t):
        used.update(d.dim_param for d in shape.dim if d.dim_param)


def _unname_fresh_dims(t: Any, used: set) -> None:
    for shape in _tensor_shapes(t):
        for d in shape.dim:
            if d.dim_param.startswith("unk__") and d.dim_param not in used:
                d.ClearField("dim_param")


def infer_function_output_types(
    function: Any, input_types: Sequence[Any], attributes: Sequence[Any]
) -> List[Any]:
    """The types of ``function``'s outputs when it is called with inputs of
    ``input_types`` and the attributes ``attributes``, inferred through its body
    (attribute references bound to ``attributes``, else to the function's defaults);
    an output not inferred is an empty ``TypeProto``. The body is checked strictly:
    a conflict raises ``InferenceError``."""
    from . import _adopt

    return _native.infer_function_output_types(
        _adopt(function), [_adopt(t) for t in input_types], [_adopt(a) for a in attributes]
    )
