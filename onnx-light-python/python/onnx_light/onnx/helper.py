"""``onnx.helper`` on onnx_light messages: building nodes, attributes, tensors, graphs,
functions and models with the same names, arguments and results as ``onnx.helper``."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np

from . import (
    IR_VERSION,
    AttributeProto,
    FunctionProto,
    GraphProto,
    MapProto,
    ModelProto,
    NodeProto,
    OperatorSetIdProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    StringStringEntryProto,
    TensorProto,
    TensorShapeProto,
    TrainingInfoProto,
    TypeProto,
    ValueInfoProto,
)
from ._tensor_types import (
    _HOLDER_FIELDS,
    _SPECIAL,
    _bits_per_element,
    _data_type_of,
    _holder_field,
    _little_endian_bytes,
    _ml_dtype,
    _ml_finfo,
    _pack,
    _pack_element_bytes,
    tensor_dtype_to_np_dtype,
)

# The default opset of `make_model`: the newest of the ai.onnx domain that the pinned
# `onnx` release knows.
DEFAULT_OPSET_VERSION = 28


VersionRowType = Union[tuple[str, int, int, int], tuple[str, int, int, int, int]]
VersionTableType = list[VersionRowType]
AssignmentBindingType = list[tuple[str, str]]
VersionMapType = dict[tuple[str, int], int]

# The onnx releases with the IR version and opset versions each introduced, as the
# pinned onnx release lists them (its documented versioning table).
VERSION_TABLE: VersionTableType = [
    # (onnx release, IR version, ai.onnx opset, ai.onnx.ml opset[, ai.onnx.training opset])
    ('1.0', 3, 1, 1),
    ('1.1', 3, 5, 1),
    ('1.1.2', 3, 6, 1),
    ('1.2', 3, 7, 1),
    ('1.3', 3, 8, 1),
    ('1.4.1', 4, 9, 1),
    ('1.5.0', 5, 10, 1),
    ('1.6.0', 6, 11, 2),
    ('1.7.0', 7, 12, 2, 1),
    ('1.8.0', 7, 13, 2, 1),
    ('1.8.1', 7, 13, 2, 1),
    ('1.9.0', 7, 14, 2, 1),
    ('1.10.0', 8, 15, 2, 1),
    ('1.10.1', 8, 15, 2, 1),
    ('1.10.2', 8, 15, 2, 1),
    ('1.11.0', 8, 16, 3, 1),
    ('1.12.0', 8, 17, 3, 1),
    ('1.13.0', 8, 18, 3, 1),
    ('1.13.1', 8, 18, 3, 1),
    ('1.14.0', 9, 19, 3, 1),
    ('1.14.1', 9, 19, 3, 1),
    ('1.15.0', 9, 20, 4, 1),
    ('1.16.0', 10, 21, 5, 1),
    ('1.16.1', 10, 21, 5, 1),
    ('1.16.2', 10, 21, 5, 1),
    ('1.17.0', 10, 22, 5, 1),
    ('1.18.0', 11, 23, 5, 1),
    ('1.19.0', 12, 24, 5, 1),
    ('1.19.1', 12, 24, 5, 1),
    ('1.20.0', 13, 25, 5, 1),
    ('1.20.1', 13, 25, 5, 1),
    ('1.21.0', 13, 26, 5, 1),
    ('1.22.0', 13, 27, 5, 1),
    ('1.23.0', 14, 28, 5, 1),
]


def _create_op_set_id_version_map(table: VersionTableType) -> VersionMapType:
    """(domain, opset version) to the first IR version that has it, from ``table``; the
    preview domains share the versions of ai.onnx and ai.onnx.training."""
    result: VersionMapType = {}
    for row in table:
        ir_version = row[1]
        for domain, version in zip(("ai.onnx", "ai.onnx.ml", "ai.onnx.training"), row[2:]):
            if (domain, version) in result:
                continue
            result[(domain, version)] = ir_version
            if domain == "ai.onnx":
                result[("ai.onnx.preview", version)] = ir_version
            elif domain == "ai.onnx.training":
                result[("ai.onnx.preview.training", version)] = ir_version
    return result


OP_SET_ID_VERSION_MAP = _create_op_set_id_version_map(VERSION_TABLE)


def find_min_ir_version_for(opsetidlist: Sequence[Any], ignore_unknown: bool = False) -> int:
    """The smallest IR version that supports every opset of ``opsetidlist``
    (``OperatorSetIdProto``s; an empty domain is ai.onnx); 3 for none. An opset the
    table lacks raises ``ValueError``, or counts as 3 with ``ignore_unknown``."""
    oldest = 3

    def needed(domain: Optional[str], version: int) -> int:
        key = (domain or "ai.onnx", version)
        if key in OP_SET_ID_VERSION_MAP:
            return OP_SET_ID_VERSION_MAP[key]
        if ignore_unknown:
            return oldest
        raise ValueError("Unsupported opset-version.")

    if opsetidlist:
        return max(needed(x.domain, x.version) for x in opsetidlist)
    return oldest


def make_opsetid(domain: str, version: int) -> Any:
    """An ``OperatorSetIdProto``."""
    opsetid = OperatorSetIdProto()
    opsetid.domain = domain
    opsetid.version = version
    return opsetid


def make_node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: Optional[str] = None,
    doc_string: Optional[str] = None,
    domain: Optional[str] = None,
    overload: Optional[str] = None,
    **kwargs: Any,
) -> Any:
    """A ``NodeProto``; keyword arguments become attributes, sorted by name."""
    node = NodeProto()
    node.op_type = op_type
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:
        node.name = name
    if doc_string:
        node.doc_string = doc_string
    if domain is not None:
        node.domain = domain
    if overload is not None:
        node.overload = overload
    if kwargs:
        node.attribute.extend(
            make_attribute(key, value) for key, value in sorted(kwargs.items()) if value is not None
        )
    return node


def _is_message(value: Any, cls: Any) -> bool:
    return isinstance(value, cls)


def make_attribute(
    key: str,
    value: Any,
    doc_string: Optional[str] = None,
    attr_type: Optional[int] = None,
) -> Any:
    """An ``AttributeProto`` whose type is inferred from ``value`` (or ``attr_type``)."""
    attr = AttributeProto()
    attr.name = key
    if doc_string:
        attr.doc_string = doc_string
    A = AttributeProto
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) or isinstance(value, (bool, np.bool_)):
        attr.i = int(value)
        attr.type = A.INT
    elif isinstance(value, numbers.Real):
        attr.f = float(value)
        attr.type = A.FLOAT
    elif isinstance(value, (str, bytes)):
        attr.s = value.encode("utf-8") if isinstance(value, str) else value
        attr.type = A.STRING
    elif isinstance(value, TensorProto):
        attr.t.CopyFrom(value)
        attr.type = A.TENSOR
    elif isinstance(value, SparseTensorProto):
        attr.sparse_tensor.CopyFrom(value)
        attr.type = A.SPARSE_TENSOR
    elif isinstance(value, GraphProto):
        attr.g.CopyFrom(value)
        attr.type = A.GRAPH
    elif isinstance(value, TypeProto):
        attr.tp.CopyFrom(value)
        attr.type = A.TYPE_PROTO
    elif isinstance(value, Iterable):
        values = list(value)
        if not values and attr_type is None:
            raise ValueError(
                f"Could not infer attribute `{key}` type from empty iterator"
            )
        kind = attr_type
        if kind is None:
            # The first kind every element's type belongs to (so ints and floats
            # mixed are FLOATS, and bools count as ints).
            types = {type(v) for v in values}
            for accepted, candidate in (
                (numbers.Integral, A.INTS),
                (numbers.Real, A.FLOATS),
                ((str, bytes), A.STRINGS),
                (TensorProto, A.TENSORS),
                (SparseTensorProto, A.SPARSE_TENSORS),
                (GraphProto, A.GRAPHS),
                (TypeProto, A.TYPE_PROTOS),
            ):
                if all(issubclass(t, accepted) for t in types):
                    kind = candidate
                    break
            else:
                raise ValueError(
                    "Could not infer the attribute type from the elements of the passed Iterable value."
                )
        # The repeated field checks each value's type, as onnx's protobuf fields do.
        if kind == A.STRINGS:
            attr.strings.extend(_utf8(v) for v in values)
        elif kind in _LIST_FIELDS:
            getattr(attr, _LIST_FIELDS[kind]).extend(values)
        else:
            # onnx fails an assertion for a given type that is no list type.
            raise AssertionError
        attr.type = kind
    else:
        raise TypeError(f"'{value}' is not an accepted attribute value.")
    if attr_type is not None and attr.type != attr_type:
        raise TypeError(
            f"Inferred attribute type '{_attr_type_to_str(attr.type)}'({attr.type}) mismatched with "
            f"specified type '{_attr_type_to_str(attr_type)}'({attr_type})"
        )
    return attr


def make_attribute_ref(
    name: str,
    attr_type: int,
    doc_string: Optional[str] = None,
    *,
    ref_attr_name: Optional[str] = None,
) -> Any:
    """An attribute named ``name`` of type ``attr_type`` without a value of its own: it
    takes the value of the enclosing function's attribute ``ref_attr_name`` (``name``
    when not given; an empty one raises ``ValueError``)."""
    if ref_attr_name is None:
        ref_attr_name = name
    if not ref_attr_name:
        raise ValueError("ref_attr_name must be non-empty")
    attr = AttributeProto()
    attr.name = name
    attr.type = attr_type
    attr.ref_attr_name = ref_attr_name
    if doc_string:
        attr.doc_string = doc_string
    return attr


# The repeated field of each list attribute type but STRINGS.
_LIST_FIELDS = {
    AttributeProto.INTS: "ints",
    AttributeProto.FLOATS: "floats",
    AttributeProto.TENSORS: "tensors",
    AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    AttributeProto.GRAPHS: "graphs",
    AttributeProto.TYPE_PROTOS: "type_protos",
}

_ATTRIBUTE_TYPE_NAMES = {v: k for k, v in AttributeProto.AttributeType.items()}


def _attr_type_to_str(attr_type: int) -> str:
    """The name of an attribute type; ``UNDEFINED`` for a number that is none."""
    return _ATTRIBUTE_TYPE_NAMES.get(attr_type, "UNDEFINED")


def get_attribute_value(attr: Any) -> Any:
    """The value of an ``AttributeProto``, by its type."""
    A = AttributeProto
    t = attr.type
    if attr.ref_attr_name:
        raise ValueError(f"Cannot get value of reference attribute: {attr}")
    if t == A.FLOAT:
        return attr.f
    if t == A.INT:
        return attr.i
    if t == A.STRING:
        return attr.s
    if t == A.TENSOR:
        return attr.t
    if t == A.SPARSE_TENSOR:
        return attr.sparse_tensor
    if t == A.GRAPH:
        return attr.g
    if t == A.TYPE_PROTO:
        return attr.tp
    if t == A.FLOATS:
        return list(attr.floats)
    if t == A.INTS:
        return list(attr.ints)
    if t == A.STRINGS:
        return list(attr.strings)
    if t == A.TENSORS:
        return list(attr.tensors)
    if t == A.SPARSE_TENSORS:
        return list(attr.sparse_tensors)
    if t == A.GRAPHS:
        return list(attr.graphs)
    if t == A.TYPE_PROTOS:
        return list(attr.type_protos)
    if t == A.UNDEFINED:
        return None
    raise ValueError(f"Unsupported ONNX attribute: {attr}")


def make_graph(
    nodes: Sequence[Any],
    name: str,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    initializer: Optional[Sequence[Any]] = None,
    doc_string: Optional[str] = None,
    value_info: Optional[Sequence[Any]] = None,
    sparse_initializer: Optional[Sequence[Any]] = None,
) -> Any:
    """A ``GraphProto``."""
    graph = GraphProto()
    graph.node.extend(nodes)
    graph.name = name
    graph.input.extend(inputs)
    graph.output.extend(outputs)
    graph.initializer.extend(initializer or [])
    graph.sparse_initializer.extend(sparse_initializer or [])
    graph.value_info.extend(value_info or [])
    if doc_string:
        graph.doc_string = doc_string
    return graph


def make_model(graph: Any, **kwargs: Any) -> Any:
    """A ``ModelProto`` with the current IR version and, unless ``opset_imports`` is
    given, the default opset."""
    model = ModelProto()
    model.ir_version = IR_VERSION
    model.graph.CopyFrom(graph)
    opset_imports = kwargs.pop("opset_imports", None)
    if opset_imports is not None:
        model.opset_import.extend(opset_imports)
    else:
        model.opset_import.add().version = DEFAULT_OPSET_VERSION
    functions = kwargs.pop("functions", None)
    if functions is not None:
        model.functions.extend(functions)
    for k, v in kwargs.items():
        setattr(model, k, v)
    return model


def make_model_gen_version(graph: Any, **kwargs: Any) -> Any:
    """``make_model`` with, unless ``ir_version`` is given, the smallest IR version the
    ``opset_imports`` need (``find_min_ir_version_for``)."""
    if "ir_version" not in kwargs:
        kwargs["ir_version"] = find_min_ir_version_for(kwargs.get("opset_imports", []))
    return make_model(graph, **kwargs)


def make_function(
    domain: str,
    fname: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    nodes: Sequence[Any],
    opset_imports: Sequence[Any],
    attributes: Optional[Sequence[str]] = None,
    attribute_protos: Optional[Sequence[Any]] = None,
    doc_string: Optional[str] = None,
    overload: Optional[str] = None,
    value_info: Optional[Sequence[Any]] = None,
) -> Any:
    """A ``FunctionProto``."""
    f = FunctionProto()
    f.domain = domain
    f.name = fname
    f.input.extend(inputs)
    f.output.extend(outputs)
    f.node.extend(nodes)
    f.opset_import.extend(opset_imports)
    if attributes:
        f.attribute.extend(attributes)
    if attribute_protos:
        f.attribute_proto.extend(attribute_protos)
    if doc_string:
        f.doc_string = doc_string
    if overload is not None:
        f.overload = overload
    if value_info:
        f.value_info.extend(value_info)
    return f


# The float8 types whose numbers make_tensor clips to the largest finite value before
# rounding, so that a number out of range saturates instead of becoming NaN or infinity.
_SATURATED = frozenset(
    [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ]
)


def _utf8(value: Any) -> Any:
    """A ``str`` as UTF-8 bytes; anything else as it is."""
    return value.encode("utf-8") if isinstance(value, str) else value


def _e8m0_codes(values: np.ndarray) -> np.ndarray:
    """FLOAT8E8M0 codes (a biased power-of-two exponent) of numbers: the sign is dropped,
    a number between two powers of two rounds up to the larger but never past the
    largest finite code, and NaN and infinities become NaN (0xFF)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    rounds_up = ((bits & 0x7FFFFF) != 0) & (exponent < 0xFE)
    return (exponent + rounds_up).astype(np.uint8)


def _check_count(given: int, count: int) -> None:
    if given != count:
        raise ValueError(
            f"Number of values ({given}) does not match tensor dimensions requiring {count} elements."
        )


def _raw_payload(data_type: int, vals: Any, count: int) -> bytes:
    """``raw_data`` for ``count`` values of ``data_type``: ``vals`` as bytes, or a numpy
    array's elements as they are (sub-byte types packed); the size must fit ``count``."""
    bits = _bits_per_element(data_type)
    if isinstance(vals, np.ndarray):
        if bits == 6:
            # Viewed before it is flattened, so that a 0-d or non-contiguous array of a
            # wider dtype is refused, as onnx refuses it.
            payload = _pack(vals.view(np.uint8), bits)
        elif bits < 8:
            payload = _pack_element_bytes(vals, bits)
        else:
            payload = _little_endian_bytes(vals)
    elif isinstance(vals, bytes):
        payload = vals
    else:
        raise TypeError(f"Raw data must be bytes or numpy.ndarray, but got {type(vals)}.")
    expected = -(-count * bits // 8)
    if len(payload) != expected:
        raise ValueError(
            f"Raw data size does not match tensor's size. Expected {expected} bytes, but got {len(payload)} bytes."
        )
    return payload


def make_tensor(
    name: str,
    data_type: int,
    dims: Sequence[int],
    vals: Any,
    raw: bool = False,
) -> Any:
    """A ``TensorProto``: ``vals`` (bytes or a numpy array) as ``raw_data`` when ``raw``,
    else converted as ``onnx`` converts them into the typed field for ``data_type``:
    integers out of range raise ``OverflowError``, float8 saturates, FLOAT8E8M0 rounds
    up, bools are truthiness. A count of values other than the dims' raises
    ``ValueError``; converting to bfloat16, float8 (but E8M0), float6, float4 or the
    int4/int2 types needs ``ml_dtypes``."""
    T = TensorProto
    tensor = T()
    tensor.data_type = data_type
    tensor.name = name
    tensor.dims.extend(dims)
    if data_type == T.STRING and raw:
        raise TypeError("Can not use raw_data to store string type.")
    count = math.prod(tensor.dims)
    if raw:
        tensor.raw_data = _raw_payload(data_type, vals, count)
        return tensor
    if data_type == T.STRING:
        flat = np.array(vals).flatten()
        if flat.size:
            # vectorize types its result by the first element (fixed-width bytes drop
            # trailing NULs), as onnx's conversion does.
            flat = np.vectorize(_utf8)(flat)
        _check_count(flat.size, count)
        items = flat.tolist()
        for item in items:
            if not isinstance(item, bytes):
                raise TypeError(f"a STRING tensor holds str or bytes, not {type(item).__name__}")
        tensor.string_data.extend(items)
        return tensor
    if data_type in _SATURATED:
        dtype = _ml_dtype(data_type)
        limits = _ml_finfo(dtype)
        flat = np.clip(np.asarray(vals), limits.min, limits.max).astype(dtype).flatten()
    elif data_type == T.FLOAT8E8M0:
        flat = _e8m0_codes(np.asarray(vals)).flatten()
    elif data_type in _SPECIAL:
        flat = np.asarray(vals, dtype=_ml_dtype(data_type)).flatten()
    else:
        flat = np.asarray(vals, dtype=tensor_dtype_to_np_dtype(data_type)).flatten()
    _check_count(flat.size, count)
    # The typed field's form of each value: complex numbers as (real, imaginary)
    # pairs, 16-bit and smaller floats as their bit patterns, sub-byte values packed.
    if data_type == T.COMPLEX64:
        flat = flat.view(np.float32)
    elif data_type == T.COMPLEX128:
        flat = flat.view(np.float64)
    elif data_type in (T.FLOAT16, T.BFLOAT16):
        flat = flat.view(np.uint16)
    elif data_type in _SPECIAL and _bits_per_element(data_type) in (2, 4):
        flat = np.frombuffer(_pack(flat.view(np.uint8), _bits_per_element(data_type)), np.uint8)
    elif data_type in _SPECIAL or data_type == T.BOOL:
        flat = flat.view(np.uint8)
    getattr(tensor, tensor_dtype_to_field(data_type)).extend(flat.tolist())
    return tensor


def _shape_into(shape_proto: Any, shape: Sequence[Union[str, int, None]], denotation: Optional[list[str]]) -> None:
    """Fills a ``TensorShapeProto`` (ints are values, strings parameters, None unknown)."""
    if denotation and len(denotation) != len(shape):
        raise ValueError("Invalid shape_denotation. Must be of the same length as shape.")
    shape_proto.dim.extend([])
    for i, d in enumerate(shape):
        dim = shape_proto.dim.add()
        if d is None:
            pass
        elif isinstance(d, numbers.Integral):
            dim.dim_value = int(d)
        elif isinstance(d, str):
            dim.dim_param = d
        else:
            raise ValueError(f"Invalid item in shape: {d}. Needs to be of int or str.")
        if denotation:
            dim.denotation = denotation[i]


def make_tensor_type_proto(
    elem_type: int,
    shape: Optional[Sequence[Union[str, int, None]]],
    shape_denotation: Optional[list[str]] = None,
) -> Any:
    """A ``TypeProto`` of a tensor type."""
    return _shaped_type("tensor_type", elem_type, shape, shape_denotation)


def _shaped_type(which: str, elem_type: int, shape: Any, shape_denotation: Any) -> Any:
    """A ``TypeProto`` whose ``which`` (a tensor or sparse tensor type) has this element
    type and, unless ``shape`` is None, this shape."""
    type_proto = TypeProto()
    typed = getattr(type_proto, which)
    typed.elem_type = elem_type
    if shape is not None:
        _shape_into(typed.shape, shape, shape_denotation)
    return type_proto


def make_tensor_value_info(
    name: str,
    elem_type: int,
    shape: Optional[Sequence[Union[str, int, None]]],
    doc_string: str = "",
    shape_denotation: Optional[list[str]] = None,
) -> Any:
    """A ``ValueInfoProto`` of a tensor."""
    return make_value_info(name, make_tensor_type_proto(elem_type, shape, shape_denotation), doc_string)


def make_value_info(name: str, type_proto: Any, doc_string: str = "") -> Any:
    """A ``ValueInfoProto`` of any type."""
    value_info = ValueInfoProto()
    value_info.name = name
    if doc_string:
        value_info.doc_string = doc_string
    value_info.type.CopyFrom(type_proto)
    return value_info


def set_model_props(model: Any, dict_value: dict[str, str]) -> None:
    """Replaces the model's ``metadata_props``."""
    del model.metadata_props[:]
    for k, v in dict_value.items():
        entry = StringStringEntryProto()
        entry.key = k
        entry.value = v
        model.metadata_props.append(entry)



make_operatorsetid = make_opsetid


def set_metadata_props(proto: Any, dict_value: dict[str, str]) -> None:
    """Replaces the ``metadata_props`` of a model, graph, function, node, tensor or
    value info."""
    del proto.metadata_props[:]
    for k, v in dict_value.items():
        proto.metadata_props.add(key=k, value=v)


def make_sparse_tensor(values: Any, indices: Any, dims: Sequence[int]) -> Any:
    """A ``SparseTensorProto`` of shape ``dims`` from its non-zero ``values`` and their
    ``indices`` (both ``TensorProto``)."""
    sparse = SparseTensorProto()
    sparse.values.CopyFrom(values)
    sparse.indices.CopyFrom(indices)
    sparse.dims.extend(dims)
    return sparse


# The key types a MapProto may have: the integer types and STRING.
_MAP_KEY_TYPES = frozenset(
    [
        TensorProto.INT8,
        TensorProto.INT16,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.UINT8,
        TensorProto.UINT16,
        TensorProto.UINT32,
        TensorProto.UINT64,
        TensorProto.STRING,
    ]
)


def make_sequence(name: str, elem_type: int, values: Sequence[Any]) -> Any:
    """A ``SequenceProto`` named ``name`` holding ``values`` (messages of the element
    type ``elem_type`` names, copied); ``UNDEFINED`` makes an empty one, and an element
    type it cannot hold raises ``TypeError``."""
    sequence = SequenceProto(name=name, elem_type=elem_type)
    if elem_type != SequenceProto.UNDEFINED:
        getattr(sequence, _holder_field(elem_type, False, "a sequence")).extend(values)
    return sequence


def make_map(name: Optional[str], key_type: int, keys: Sequence[Any], values: Any) -> Any:
    """A ``MapProto`` named ``name`` from ``keys`` (of the data type ``key_type``: an
    integer type or ``STRING``) and ``values``, a ``SequenceProto`` with one value per
    key. Another key type, or as many values as keys missing, raises ``ValueError``."""
    if key_type not in _MAP_KEY_TYPES:
        raise ValueError(f"a map key cannot be of data type {key_type}")
    fields = _HOLDER_FIELDS.get(values.elem_type)
    count = len(getattr(values, fields[0])) if fields is not None else 0
    if count != len(keys):
        raise ValueError(f"a map needs one value per key: {len(keys)} keys, {count} values")
    mapping = MapProto(key_type=key_type)
    if name is not None:
        mapping.name = name
    if key_type == TensorProto.STRING:
        mapping.string_keys.extend(k.encode("utf-8") if isinstance(k, str) else k for k in keys)
    else:
        mapping.keys.extend(keys)
    mapping.values.CopyFrom(values)
    return mapping


def make_optional(name: str, elem_type: int, value: Optional[Any]) -> Any:
    """An ``OptionalProto`` named ``name`` holding ``value`` (a message of the element
    type ``elem_type`` names, copied), or holding nothing when ``elem_type`` is
    ``UNDEFINED``; an element type it cannot hold, or a missing value, raises."""
    optional = OptionalProto(name=name, elem_type=elem_type)
    if elem_type == OptionalProto.UNDEFINED:
        return optional
    field = _holder_field(elem_type, True, "an optional")
    if value is None:
        raise ValueError("an optional of a defined element type needs a value")
    getattr(optional, field).CopyFrom(value)
    return optional


def make_sparse_tensor_type_proto(
    elem_type: int,
    shape: Optional[Sequence[Union[str, int, None]]],
    shape_denotation: Optional[list[str]] = None,
) -> Any:
    """A ``TypeProto`` of a sparse tensor type."""
    return _shaped_type("sparse_tensor_type", elem_type, shape, shape_denotation)


def make_sequence_type_proto(inner_type_proto: Any) -> Any:
    """A ``TypeProto`` of a sequence of ``inner_type_proto``."""
    type_proto = TypeProto()
    type_proto.sequence_type.elem_type.CopyFrom(inner_type_proto)
    return type_proto


def make_optional_type_proto(inner_type_proto: Any) -> Any:
    """A ``TypeProto`` of an optional ``inner_type_proto``."""
    type_proto = TypeProto()
    type_proto.optional_type.elem_type.CopyFrom(inner_type_proto)
    return type_proto


def make_map_type_proto(key_type: int, value_type: Any) -> Any:
    """A ``TypeProto`` of a map from ``key_type`` (a data type) to ``value_type``."""
    type_proto = TypeProto()
    type_proto.map_type.key_type = key_type
    type_proto.map_type.value_type.CopyFrom(value_type)
    return type_proto


def make_sparse_tensor_value_info(
    name: str,
    elem_type: int,
    shape: Optional[Sequence[Union[str, int, None]]],
    doc_string: str = "",
    shape_denotation: Optional[list[str]] = None,
) -> Any:
    """A ``ValueInfoProto`` of a sparse tensor."""
    return make_value_info(name, make_sparse_tensor_type_proto(elem_type, shape, shape_denotation), doc_string)


def make_tensor_sequence_value_info(
    name: str,
    elem_type: int,
    shape: Optional[Sequence[Union[str, int, None]]],
    doc_string: str = "",
    elem_shape_denotation: Optional[list[str]] = None,
) -> Any:
    """A ``ValueInfoProto`` of a sequence of tensors."""
    inner = make_tensor_type_proto(elem_type, shape, elem_shape_denotation)
    return make_value_info(name, make_sequence_type_proto(inner), doc_string)


def make_empty_tensor_value_info(name: str) -> Any:
    """A ``ValueInfoProto`` with a name and no type (an unused optional input)."""
    value_info = ValueInfoProto()
    value_info.name = name
    return value_info


def make_training_info(
    algorithm: Any,
    algorithm_bindings: Sequence[tuple[str, str]],
    initialization: Optional[Any],
    initialization_bindings: Optional[Sequence[tuple[str, str]]],
) -> Any:
    """A ``TrainingInfoProto``: the training algorithm and initialization graphs with
    their ``(key, value)`` update bindings."""
    info = TrainingInfoProto()
    info.algorithm.CopyFrom(algorithm)
    for k, v in algorithm_bindings:
        info.update_binding.add(key=k, value=v)
    if initialization:
        info.initialization.CopyFrom(initialization)
    for k, v in initialization_bindings or ():
        info.initialization_binding.add(key=k, value=v)
    return info


def get_node_attr_value(node: Any, attr_name: str) -> Any:
    """The value of the node's attribute ``attr_name`` (``ValueError`` when it has none
    or several)."""
    matching = [a for a in node.attribute if a.name == attr_name]
    if len(matching) > 1:
        raise ValueError(f"Node has multiple attributes with name {attr_name}")
    if not matching:
        raise ValueError(f"Node has no attribute with name {attr_name}")
    return get_attribute_value(matching[0])


def strip_doc_string(proto: Any) -> None:
    """Clears ``doc_string`` in ``proto`` and every message inside it."""
    for field, value in proto.ListFields():
        if field.name == "doc_string":
            proto.ClearField(field.name)
        elif hasattr(value, "ListFields"):
            strip_doc_string(value)
        elif isinstance(value, (list, tuple)) or type(value).__name__ == "RepeatedField":
            for item in value:
                if hasattr(item, "ListFields"):
                    strip_doc_string(item)


def np_dtype_to_tensor_dtype(np_dtype: Any) -> int:
    """The ``TensorProto`` data type of a numpy dtype (``ml_dtypes`` types included when
    installed)."""
    return _data_type_of(np.dtype(np_dtype))


_DATA_TYPE_NAMES = {v: k for k, v in TensorProto.DataType.items()}


def tensor_dtype_to_string(tensor_dtype: int) -> str:
    """``TensorProto.FLOAT`` for 1, and so on."""
    return f"TensorProto.{_DATA_TYPE_NAMES[tensor_dtype]}"


def get_all_tensor_dtypes() -> Sequence[int]:
    """Every ``TensorProto`` data type except ``UNDEFINED``."""
    return [v for v in TensorProto.DataType.values() if v != TensorProto.UNDEFINED]


# The field a data type's values go in when not in raw_data, and the data type that
# field stores them as.
_STORAGE = {
    TensorProto.FLOAT: ("float_data", TensorProto.FLOAT),
    TensorProto.COMPLEX64: ("float_data", TensorProto.FLOAT),
    TensorProto.DOUBLE: ("double_data", TensorProto.DOUBLE),
    TensorProto.COMPLEX128: ("double_data", TensorProto.DOUBLE),
    TensorProto.INT64: ("int64_data", TensorProto.INT64),
    TensorProto.UINT32: ("uint64_data", TensorProto.UINT64),
    TensorProto.UINT64: ("uint64_data", TensorProto.UINT64),
    TensorProto.STRING: ("string_data", TensorProto.STRING),
}


def tensor_dtype_to_field(tensor_dtype: int) -> str:
    """The ``TensorProto`` field that holds values of ``tensor_dtype`` outside
    ``raw_data``."""
    if tensor_dtype not in _DATA_TYPE_NAMES or tensor_dtype == TensorProto.UNDEFINED:
        raise KeyError(tensor_dtype)
    return _STORAGE.get(tensor_dtype, ("int32_data", TensorProto.INT32))[0]


def tensor_dtype_to_storage_tensor_dtype(tensor_dtype: int) -> int:
    """The data type of the values as stored in that field (``INT32`` for the small
    types packed into ``int32_data``)."""
    if tensor_dtype not in _DATA_TYPE_NAMES or tensor_dtype == TensorProto.UNDEFINED:
        raise KeyError(tensor_dtype)
    return _STORAGE.get(tensor_dtype, ("int32_data", TensorProto.INT32))[1]


def _sanitize_str(s: Any) -> str:
    """Text for a printed string attribute: bytes decoded as UTF-8 (bad bytes dropped),
    cut after 64 characters with the count of the rest."""
    if isinstance(s, bytes):
        text = s.decode("utf-8", errors="ignore")
    else:
        text = s if isinstance(s, str) else str(s)
    if len(text) < 64:
        return text
    return text[:64] + f"...<+len={len(text) - 64}>"


def _float_text(f: float) -> str:
    """A float with 15 significant digits, the same on every Python version."""
    return f"{f:.15g}"


def printable_attribute(attr: Any, subgraphs: bool = False) -> Union[str, tuple[str, list[Any]]]:
    """``name = value`` for an attribute, as ``onnx`` prints it in ``printable_node``
    (tensors and graphs by a placeholder). With ``subgraphs``, a pair of that text and
    the list of graphs the attribute holds."""
    parts = [attr.name, "="]
    graphs: list[Any] = []
    # Which value is set decides, whatever attr.type says.
    if attr.HasField("f"):
        parts.append(_float_text(attr.f))
    elif attr.HasField("i"):
        parts.append(str(attr.i))
    elif attr.HasField("s"):
        parts.append(repr(_sanitize_str(attr.s)))
    elif attr.HasField("t"):
        if len(attr.t.dims) > 0:
            parts.append("<Tensor>")
        else:
            values = getattr(attr.t, tensor_dtype_to_field(attr.t.data_type))
            parts.append(f"<Scalar Tensor {values}>")
    elif attr.HasField("g"):
        parts.append(f"<graph {attr.g.name}>")
        graphs.append(attr.g)
    elif attr.HasField("tp"):
        parts.append(f"<Type Proto {attr.tp}>")
    elif attr.HasField("sparse_tensor"):
        parts.append("<Sparse Tensor>")
    elif attr.floats:
        parts.append("[" + ", ".join(_float_text(f) for f in attr.floats) + "]")
    elif attr.ints:
        parts.append("[" + ", ".join(str(i) for i in attr.ints) + "]")
    elif attr.strings:
        parts.append(str([_sanitize_str(v) for v in attr.strings]))
    elif attr.tensors:
        parts.append("[<Tensor>, ...]")
    elif attr.sparse_tensors:
        parts.append("[<Sparse Tensor>, ...]")
    elif attr.type_protos:
        last = len(attr.type_protos) - 1
        parts.append("[")
        parts.extend(f"<Type Proto {tp}>{',' if i != last else ''}" for i, tp in enumerate(attr.type_protos))
        parts.append("]")
    elif attr.graphs:
        last = len(attr.graphs) - 1
        parts.append("[")
        parts.extend(f"<graph {g.name}>{',' if i != last else ''}" for i, g in enumerate(attr.graphs))
        parts.append("]")
        graphs.extend(attr.graphs)
    else:
        parts.append("<Unknown>")
    text = " ".join(parts)
    return (text, graphs) if subgraphs else text


def printable_dim(dim: Any) -> str:
    """A dimension's value or parameter, ``?`` when it has neither."""
    which = dim.WhichOneof("value")
    return "?" if which is None else str(getattr(dim, which))


def printable_type(t: Any) -> str:
    """A tensor type as ``FLOAT, 2xNx?`` (``, scalar`` for an empty shape, nothing for
    no shape); ``""`` for no type, ``Unknown type <kind>`` for other kinds."""
    which = t.WhichOneof("value")
    if which == "tensor_type":
        text = TensorProto.DataType.Name(t.tensor_type.elem_type)
        if t.tensor_type.HasField("shape"):
            dims = t.tensor_type.shape.dim
            text += ", " + "x".join(printable_dim(d) for d in dims) if len(dims) else ", scalar"
        return text
    if which is None:
        return ""
    return f"Unknown type {which}"


def printable_value_info(v: Any) -> str:
    """``%name[type]`` (see ``printable_type``)."""
    return f"%{v.name}[{printable_type(v.type)}]"


def printable_tensor_proto(t: Any) -> str:
    """``%name[FLOAT, 2x3]`` (``, scalar`` without dims)."""
    dims = ", " + "x".join(str(d) for d in t.dims) if len(t.dims) else ", scalar"
    return f"%{t.name}[{TensorProto.DataType.Name(t.data_type)}{dims}]"


def printable_node(node: Any, prefix: str = "", subgraphs: bool = False) -> Union[str, tuple[str, list[Any]]]:
    """``%y = Op[attributes sorted](%x, ...)`` after ``prefix``. With ``subgraphs``, a
    pair of that text and the graphs of the node's attributes."""
    parts = []
    if len(node.output):
        parts.append(", ".join(f"%{name}" for name in node.output))
        parts.append("=")
    graphs: list[Any] = []
    printed = []
    for attr in node.attribute:
        if subgraphs:
            text, inner = printable_attribute(attr, True)
            graphs.extend(inner)
        else:
            text = printable_attribute(attr)
        printed.append(text)
    inputs = ", ".join(f"%{name}" for name in node.input)
    if len(node.attribute):
        parts.append(f"{node.op_type}[{', '.join(sorted(printed))}]({inputs})")
    else:
        parts.append(f"{node.op_type}({inputs})")
    text = prefix + " ".join(parts)
    return (text, graphs) if subgraphs else text


def _graph_lines(graph: Any, prefix: str) -> str:
    """``printable_graph``'s text, without its deprecation warning (for subgraphs)."""
    lines = []
    indent = prefix + "  "
    header = ["graph", graph.name]
    initializers = {t.name for t in graph.initializer}
    if len(graph.input):
        header.append("(")
        plain = [printable_value_info(i) for i in graph.input if i.name not in initializers]
        with_default = [printable_value_info(i) for i in graph.input if i.name in initializers]
        if plain:
            lines.append(prefix + " ".join(header))
            header = []
            lines.extend(prefix + "  " + line for line in plain)
        header.append(")")
        if with_default:
            header.append("optional inputs with matching initializers (")
            lines.append(prefix + " ".join(header))
            header = []
            lines.extend(prefix + "  " + line for line in with_default)
            header.append(")")
        # Initializers that are no graph input (allowed from IR 4) are listed too.
        if len(with_default) < len(initializers):
            input_names = {i.name for i in graph.input}
            header.append("initializers (")
            lines.append(prefix + " ".join(header))
            header = []
            lines.extend(
                prefix + "  " + printable_tensor_proto(t) for t in graph.initializer if t.name not in input_names
            )
            header.append(")")
    header.append("{")
    lines.append(prefix + " ".join(header))
    subgraphs: list[Any] = []
    for node in graph.node:
        text, inner = printable_node(node, indent, subgraphs=True)
        lines.append(text)
        subgraphs.extend(inner)
    tail = ["return"]
    if len(graph.output):
        tail.append(", ".join(f"%{out.name}" for out in graph.output))
    lines.append(indent + " ".join(tail))
    lines.append(prefix + "}")
    # Subgraphs follow, unindented, each after an empty line.
    lines.extend("\n" + _graph_lines(g, "") for g in subgraphs)
    return "\n".join(lines)


def printable_graph(graph: Any, prefix: str = "") -> str:
    """The graph as ``onnx``'s readable summary: inputs, initializers, one line per
    node, outputs, then each subgraph; every line after ``prefix``. Deprecated in
    ``onnx`` (use ``onnx.printer.to_text``): warns ``DeprecationWarning`` as it does."""
    warnings.warn(
        "Deprecated since 1.19. Consider using onnx.printer.to_text() instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _graph_lines(graph, prefix)


__all__ = [
    "OP_SET_ID_VERSION_MAP",
    "VERSION_TABLE",
    "find_min_ir_version_for",
    "get_all_tensor_dtypes",
    "get_attribute_value",
    "get_node_attr_value",
    "make_attribute",
    "make_attribute_ref",
    "make_empty_tensor_value_info",
    "make_function",
    "make_graph",
    "make_map",
    "make_map_type_proto",
    "make_model",
    "make_model_gen_version",
    "make_node",
    "make_operatorsetid",
    "make_opsetid",
    "make_optional",
    "make_optional_type_proto",
    "make_sequence",
    "make_sequence_type_proto",
    "make_sparse_tensor",
    "make_sparse_tensor_type_proto",
    "make_sparse_tensor_value_info",
    "make_tensor",
    "make_tensor_sequence_value_info",
    "make_tensor_type_proto",
    "make_tensor_value_info",
    "make_training_info",
    "make_value_info",
    "np_dtype_to_tensor_dtype",
    "printable_attribute",
    "printable_dim",
    "printable_graph",
    "printable_node",
    "printable_tensor_proto",
    "printable_type",
    "printable_value_info",
    "set_metadata_props",
    "set_model_props",
    "strip_doc_string",
    "tensor_dtype_to_field",
    "tensor_dtype_to_np_dtype",
    "tensor_dtype_to_storage_tensor_dtype",
    "tensor_dtype_to_string",
]
