"""``onnx.numpy_helper`` on onnx_light messages: ``to_array`` and ``from_array`` for
every element type. bfloat16, float8, float6, float4 and int4/int2 become ``ml_dtypes``
arrays when ``ml_dtypes`` is installed, raw integer arrays (the stored bit patterns, one
element per value) otherwise; strings become object arrays of ``bytes``."""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

from . import TensorProto, _native
from ._tensor_types import (
    _MAP,
    _OPTIONAL,
    _PLAIN,
    _SEQUENCE,
    _SIGNED_PACKED,
    _SPECIAL,
    _TENSOR,
    _UNDEFINED,
    _data_type_of,
    _element_type,
    _holder_field,
    _pack,
    _pack_element_bytes,
    _special_dtype,
    _ml,
    _unpack,
    tensor_dtype_to_np_dtype,
)
from .helper import make_map

_T = TensorProto


def _decode(value: bytes) -> Any:
    """Strings as ``str`` when they are UTF-8 (as ``onnx`` returns them), else ``bytes``."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value


def _pack_4bitx2(array: np.ndarray) -> np.ndarray:
    """The low 4 bits of each byte of ``array``'s elements, two to a byte (the first in
    the low half), as ``uint8``: how ``raw_data`` holds INT4, UINT4 and FLOAT4E2M1."""
    return _packed(array, 4)


def _pack_2bitx4(array: np.ndarray) -> np.ndarray:
    """The low 2 bits of each byte of ``array``'s elements, four to a byte (the first in
    the lowest bits), as ``uint8``: how ``raw_data`` holds INT2 and UINT2."""
    return _packed(array, 2)


def _pack_6bit(values: np.ndarray) -> np.ndarray:
    """The low 6 bits of each value (converted to ``uint8``), four values to three
    bytes, least significant bit first, as ``uint8``: how ``raw_data`` holds the
    FLOAT6 types."""
    codes = np.asarray(values).astype(np.uint8, copy=False).reshape(-1)
    return np.frombuffer(_pack(codes, 6), dtype=np.uint8).copy()


def _packed(array: np.ndarray, bits: int) -> np.ndarray:
    """``_pack_element_bytes`` as a writable ``uint8`` array."""
    return np.frombuffer(_pack_element_bytes(np.asarray(array), bits), dtype=np.uint8).copy()


def _unpack_4bit(data: np.ndarray, dims: Any) -> np.ndarray:
    """The 4-bit codes packed in ``data`` (see ``_pack_4bitx2``), one ``uint8`` each, in
    shape ``dims``; ``ValueError`` when ``data`` holds too few."""
    return _unpacked(data, dims, 4)


def _unpack_2bit(data: np.ndarray, dims: Any) -> np.ndarray:
    """The 2-bit codes packed in ``data`` (see ``_pack_2bitx4``), one ``uint8`` each, in
    shape ``dims``; ``ValueError`` when ``data`` holds too few."""
    return _unpacked(data, dims, 2)


def _unpack_6bit(data: np.ndarray, dims: Any) -> np.ndarray:
    """The 6-bit codes packed in ``data`` (see ``_pack_6bit``), one ``uint8`` each, in
    shape ``dims``; ``ValueError`` when ``data`` holds too few."""
    return _unpacked(data, dims, 6)


def _unpacked(data: np.ndarray, dims: Any, bits: int) -> np.ndarray:
    count = int(np.prod(dims, dtype=np.int64))
    raw = np.asarray(data).astype(np.uint8, copy=False).reshape(-1)
    if raw.size * 8 // bits < count:
        raise ValueError(
            f"Packed {bits}-bit data ({raw.size} bytes) is too small for the declared shape "
            f"{list(dims)} ({count} elements required)."
        )
    return _unpack(raw, bits, count, False).reshape(tuple(dims))


def _payload_array(buffer: Any) -> np.ndarray:
    """A ``uint8`` array over the bytes ``_native.tensor_data`` gives: a writable one over
    a ``bytearray`` (made for the call), a read-only view of a shared ``Payload`` (it
    stays the array's base, keeping the bytes alive)."""
    if isinstance(buffer, bytearray):
        return np.frombuffer(buffer, dtype=np.uint8)
    if len(buffer) == 0:
        empty = np.empty(0, dtype=np.uint8)
        empty.flags.writeable = False
        return empty
    return np.asarray(buffer)


def _decode_raw(raw: np.ndarray, data_type: int, dims: tuple) -> tuple[np.ndarray, bool]:
    """The values in ``raw`` (``uint8``, ``raw_data`` layout: little-endian, sub-byte types
    packed, length already checked) as an array of shape ``dims``, and whether that array
    is new memory rather than a view of ``raw``. Every type numpy or ``ml_dtypes`` has
    is a view on a little-endian host, aligned or not; sub-byte types are unpacked (one
    value per element)."""
    big = sys.byteorder == "big"
    if data_type in _PLAIN:
        arr = raw.view(_PLAIN[data_type])
        if big and arr.dtype.byteorder == "<":
            return arr.astype(arr.dtype.newbyteorder("=")).reshape(dims), True
        return arr.reshape(dims), False
    if data_type not in _SPECIAL:
        raise ValueError(f"unsupported data type {data_type}")
    _name, storage, bits = _SPECIAL[data_type]
    target = _special_dtype(data_type)
    if bits >= 8:
        codes = raw.view("<u2" if bits == 16 else np.uint8)
        made = big and bits == 16
        if made:
            codes = codes.astype(np.uint16)
        return codes.view(target).reshape(dims), made
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    signed = data_type in _SIGNED_PACKED
    stored = _unpack(raw, bits, count, signed)
    if target == storage:
        return stored.astype(storage, copy=False).reshape(dims), True
    if signed or data_type in (_T.UINT4, _T.UINT2):
        return stored.astype(target).reshape(dims), True  # by value
    return stored.view(target).reshape(dims), True  # float4 and float6 codes


def _values(tensor: Any) -> tuple[Optional[np.ndarray], bool]:
    """One of this package's tensors as an array of shape ``dims``, and whether the array
    views bytes that existed before the call (``raw_data``, or a payload mapped from its
    file) rather than memory made for the call. The
    array is None when the tensor's data is external and was never loaded. Views are
    read-only and keep the bytes' owner (mapping, buffer, the caller's ``bytes``)
    alive; arrays decoded from a typed field (``float_data``, ...) are writable."""
    data_type, dims, buffer, shared = _native.tensor_data(tensor)
    dims = tuple(dims)
    if data_type == _T.STRING:
        values = [_decode(v) for v in tensor.string_data]
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        return arr.reshape(dims), False
    if buffer is None:
        return None, False
    arr, made = _decode_raw(_payload_array(buffer), data_type, dims)
    return arr, shared and not made


def to_array(tensor: Any, base_dir: str = "") -> np.ndarray:
    """The tensor's values as a numpy array of shape ``tensor.dims`` (the ``onnx``
    package's ``TensorProto`` too). Bytes the tensor holds (``raw_data``, a mapped or
    shared payload) are viewed without a copy, aligned or not: the array is read-only
    and keeps them alive; assigning the tensor new data later leaves the array as it
    was. The data of a tensor whose data is in an external file that was not loaded is
    read from that file in ``base_dir`` (the current directory by default, as in
    ``onnx``; a URL such as ``s3://bucket/models/`` reads the object there), without
    changing the tensor."""
    from . import _adopt
    from .external_data_helper import load_external_data_for_tensor

    tensor = _adopt(tensor)
    arr, _shared = _values(tensor)
    if arr is None:
        loaded = _T()
        loaded.CopyFrom(tensor)
        load_external_data_for_tensor(loaded, base_dir or ".")
        arr, _shared = _values(loaded)
    return arr


def from_array(array: Any, /, name: Optional[str] = None, copy: bool = True) -> Any:
    """A ``TensorProto`` holding ``array`` (``raw_data``, little-endian; sub-byte types
    packed). Strings (a ``str`` array, or an object array of ``str`` and ``bytes``) go in
    ``string_data``; an object array holding anything else raises
    ``NotImplementedError``, as in ``onnx``. ``ml_dtypes`` arrays (bfloat16, the float8,
    float6 and float4 types, int4/uint4, int2/uint2) give their ONNX types.

    ``copy=True`` (the default) copies the values, as ``onnx`` does, once: copies of
    the tensor (into a graph, a model) share that copy. ``copy=False``
    shares the array's memory instead, whatever its size, in constant time: the tensor's
    ``raw_data`` is the array's buffer, which the tensor (and every copy of it put into
    a model) keeps alive, and saves write from it directly, so a model of large arrays
    is built and saved without a second copy of its weights. Writing to the array
    afterwards changes the tensor's values: ``to_array``/``numpy()`` and the next save
    or ``SerializeToString`` see the new values. Do not write to it while a save or a
    serialization of the model runs (in another thread), which would write a mix of old
    and new bytes, nor resize it in place with ``refcheck=False``, which frees the
    memory the tensor reads (NumPy documents that as unsafe). Assigning the tensor's
    ``raw_data`` replaces its bytes and leaves the array alone. ``copy=False`` needs the
    bytes to be ``raw_data`` already: a C-contiguous array of a type stored one element
    after the other, little-endian (or one byte wide). A non-contiguous or big-endian
    array, and strings and the packed types (int4, uint4, int2, uint2, float4, float6),
    raise ``ValueError`` rather than copy behind the caller's back, as NumPy's
    ``copy=False`` does; ``np.ascontiguousarray(a, a.dtype.newbyteorder("<"))`` makes
    one that can be shared."""
    arr = np.asarray(array)
    if not copy:
        return _sharing(arr, name)
    data_type = _data_type_of(arr.dtype)
    if data_type != _T.STRING and not (data_type in _SPECIAL and _SPECIAL[data_type][2] < 8):
        # One copy, C-ordered and little-endian whatever the array's layout (a ">i4"
        # array too), which the tensor then holds as it holds a shared array: copies of
        # the tensor (into a graph, a model) share it instead of copying it again.
        private = np.array(arr, dtype=arr.dtype.newbyteorder("<"), order="C", copy=True)
        return _sharing(private, name)
    tensor = TensorProto()
    tensor.dims.extend(arr.shape)
    if name:
        tensor.name = name
    tensor.data_type = data_type
    if data_type == _T.STRING:
        values = []
        for v in arr.reshape(-1):
            if isinstance(v, str):
                values.append(v.encode("utf-8"))
            elif isinstance(v, (bytes, np.bytes_)):
                values.append(bytes(v))
            else:
                raise NotImplementedError(
                    "Unrecognized object in the object array, expect a string, or array of bytes: "
                    f"{type(v)}"
                )
        tensor.string_data.extend(values)
        return tensor
    # The packed types: every other type returned above.
    bits = _SPECIAL[data_type][2]
    if data_type in (_T.INT4, _T.UINT4, _T.INT2, _T.UINT2):
        stored = arr.astype(np.int8)  # by value; _pack keeps the low bits
    else:
        stored = arr.view(np.uint8)
    tensor.raw_data = _pack(stored, bits)
    return tensor


def _sharing(arr: np.ndarray, name: Optional[str]) -> Any:
    """``from_array(arr, name, copy=False)``: a tensor whose ``raw_data`` is ``arr``'s
    memory, or ``ValueError`` saying why that memory is not ``raw_data`` as it is."""
    data_type = _data_type_of(arr.dtype)
    if data_type == _T.STRING:
        raise ValueError("from_array(copy=False): strings are stored in string_data, not shared")
    if data_type in _SPECIAL and _SPECIAL[data_type][2] < 8:
        raise ValueError(
            f"from_array(copy=False): {arr.dtype} values are stored packed "
            f"({_SPECIAL[data_type][2]} bits each), so they cannot share the array's memory; "
            "use copy=True"
        )
    order = arr.dtype.byteorder
    if order == ">" or (order == "=" and sys.byteorder == "big"):
        raise ValueError(
            "from_array(copy=False): the array is big-endian and raw_data is little-endian; "
            "use copy=True, or share a little-endian copy (arr.astype(arr.dtype.newbyteorder('<')))"
        )
    if not arr.flags.c_contiguous:
        raise ValueError(
            "from_array(copy=False): the array is not C-contiguous; use copy=True, or share "
            "np.ascontiguousarray(arr)"
        )
    if type(arr) is not np.ndarray:
        arr = arr.view(np.ndarray)
    return _native.tensor_sharing_array(arr, data_type, list(arr.shape), name or None)


def _convert(value: Any, elem_type: int, to_python: bool) -> Any:
    """One element of a sequence or optional of type ``elem_type``: its Python form
    (``to_python``), or its message from its Python form."""
    converters = {
        _TENSOR: (to_array, lambda v: from_array(np.asarray(v))),
        _SEQUENCE: (to_list, from_list),
        _MAP: (to_dict, from_dict),
        _OPTIONAL: (to_optional, from_optional),
    }
    pair = converters.get(elem_type)
    if pair is None:
        raise TypeError(f"elements of type {elem_type} have no numpy form")
    return pair[0 if to_python else 1](value)


def to_list(sequence: Any) -> list:
    """The elements of a ``SequenceProto`` as a list: arrays for tensors, lists for
    sequences, dicts for maps, values or None for optionals."""
    from . import _adopt

    sequence = _adopt(sequence)
    if sequence.elem_type == _UNDEFINED:
        return []
    field = _holder_field(sequence.elem_type, False, "a sequence")
    return [_convert(v, sequence.elem_type, True) for v in getattr(sequence, field)]


def from_list(lst: list, name: Optional[str] = None, dtype: Optional[int] = None) -> Any:
    """A ``SequenceProto`` of the values of ``lst``: arrays (and anything ``np.asarray``
    takes) as tensors, lists as sequences, dicts as maps. The element type is ``dtype``,
    else that of the first value (tensors for an empty list). Values of different Python
    types raise ``TypeError``."""
    from . import SequenceProto

    elem_type = dtype if dtype is not None else (_element_type(lst[0]) if lst else _TENSOR)
    sequence = SequenceProto(elem_type=elem_type)
    if name:
        sequence.name = name
    if lst and not all(isinstance(v, type(lst[0])) for v in lst):
        raise TypeError(
            "The element type in the input list is not the same "
            "for all elements and therefore is not supported as a sequence."
        )
    field = _holder_field(elem_type, False, "a sequence")
    getattr(sequence, field).extend(_convert(v, elem_type, False) for v in lst)
    return sequence


def to_dict(map_proto: Any) -> dict:
    """A ``MapProto`` as a dict: its keys (``bytes`` for string keys) to the Python form
    of its values. A map with more or fewer values than keys raises ``IndexError``."""
    from . import _adopt

    map_proto = _adopt(map_proto)
    keys = list(map_proto.string_keys) if map_proto.key_type == _T.STRING else list(map_proto.keys)
    values = to_list(map_proto.values)
    if len(keys) != len(values):
        raise IndexError(
            f"Length of keys and values for MapProto (map name: {map_proto.name}) are not the same."
        )
    return dict(zip(keys, values))


# The integer key types a MapProto may have (besides STRING).
_INT_KEY_TYPES = frozenset([_T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.UINT8, _T.UINT16, _T.UINT32, _T.UINT64])


def _value_kind(value: Any) -> Any:
    """What must agree between the values of one map: the container kind of lists and
    dicts, the numpy type of anything else (strings of any length alike)."""
    if isinstance(value, (list, dict)):
        return type(value)
    dtype = np.asarray(value).dtype
    return dtype.kind if dtype.kind in "USO" else dtype


def from_dict(dict_: dict, name: Optional[str] = None) -> Any:
    """A ``MapProto`` of ``dict_``: integer keys (their numpy type gives the key type) or
    string keys (``str`` stored as UTF-8, or ``bytes``), and values as ``from_list``
    takes them. As in ``onnx``, an empty dict raises ``ValueError``; keys or values of
    different types, and keys of another type (floats, bools), raise ``TypeError``."""
    if not dict_:
        raise ValueError("Cannot convert an empty dictionary to MapProto.")
    keys = list(dict_)
    if all(isinstance(k, (str, bytes)) for k in keys):
        key_type = _T.STRING
        keys = [k.encode("utf-8") if isinstance(k, str) else k for k in keys]
    else:
        key_dtype = np.result_type(keys[0])
        if any(isinstance(k, (str, bytes)) or np.result_type(k) != key_dtype for k in keys):
            raise TypeError(
                "The key type in the input dictionary is not the same "
                "for all keys and therefore is not valid as a map."
            )
        key_type = _data_type_of(key_dtype)
        if key_type not in _INT_KEY_TYPES:
            raise TypeError(f"Unsupported map key type: {key_type}")
    values = list(dict_.values())
    kind = _value_kind(values[0])
    if any(_value_kind(v) != kind for v in values):
        raise TypeError(
            "The value type in the input dictionary is not the same "
            "for all values and therefore is not valid as a map."
        )
    return make_map(name or None, key_type, keys, from_list(values))


def to_optional(optional: Any) -> Any:
    """The value of an ``OptionalProto`` in its Python form, or None when it holds
    nothing."""
    from . import _adopt

    optional = _adopt(optional)
    if optional.elem_type == _UNDEFINED:
        return None
    field = _holder_field(optional.elem_type, True, "an optional")
    return _convert(getattr(optional, field), optional.elem_type, True)


def from_optional(opt: Any, name: Optional[str] = None, dtype: Optional[int] = None) -> Any:
    """An ``OptionalProto`` holding ``opt`` (as ``from_list`` takes values) or nothing
    when it is None. The element type is ``dtype``, else that of ``opt``."""
    from . import OptionalProto

    if dtype is not None and dtype not in OptionalProto.DataType.values():
        raise TypeError(f"{dtype} must be a valid OptionalProto.DataType.")
    elem_type = dtype if dtype is not None else _element_type(opt)
    optional = OptionalProto(elem_type=elem_type)
    if name:
        optional.name = name
    if opt is None or elem_type == _UNDEFINED:
        return optional
    field = _holder_field(elem_type, True, "an optional")
    getattr(optional, field).CopyFrom(_convert(opt, elem_type, False))
    return optional


def tobytes_little_endian(array: np.ndarray) -> bytes:
    """The bytes of ``array`` (C order) with each element little-endian, as ``onnx``
    stores them in ``raw_data``; a big-endian array is converted first."""
    order = array.dtype.byteorder
    if order == ">" or (order == "=" and sys.byteorder == "big"):
        array = array.astype(array.dtype.newbyteorder("<"))
    return array.tobytes()


def to_float8e8m0(x: np.ndarray, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """FLOAT8E8M0 values of ``x`` (converted to float32 first): the biased exponent of
    each number, its sign and mantissa dropped. ``round_mode`` is ``"up"`` (a number
    between two powers of two takes the larger), ``"down"`` (the smaller) or
    ``"nearest"`` (``onnx``'s guard/round/sticky rule); with ``saturate``, rounding never
    passes the largest finite code. NaN and infinities become NaN. The result is an
    ``ml_dtypes.float8_e8m0fnu`` array, or its ``uint8`` codes without ``ml_dtypes``."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    # A wider type than the 8-bit code so that the largest exponent plus one is seen.
    exponent = ((bits >> 23) & 0xFF).astype(np.uint16)
    special = exponent == 0xFF
    if round_mode == "up":
        step = ((bits & 0x7FFFFF) != 0) & ~special
    elif round_mode == "nearest":
        guard = (bits & 0x400000) != 0
        round_bit = (bits & 0x200000) != 0
        sticky = (bits & 0x1FFFFF) != 0
        step = guard & (round_bit | sticky | (exponent > 0)) & ~special
    elif round_mode == "down":
        step = np.zeros(exponent.shape, dtype=bool)
    else:
        raise ValueError(f"Unsupported rounding mode: {round_mode}")
    if saturate:
        step = step & (exponent != 0xFE)
    codes = np.where(special, 0xFF, exponent + step).astype(np.uint8)
    if _ml is None:
        return codes
    return codes.view(_ml.float8_e8m0fnu)


# The integer dtypes create_random_int makes; their values stay within int32's range.
_RANDOM_INT_DTYPES = (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64)


def create_random_int(input_shape: tuple[int], dtype: np.dtype, seed: int = 1) -> np.ndarray:
    """An array of shape ``input_shape`` and integer type ``dtype`` of random values
    between the type's limits (clipped to int32's), drawn after seeding numpy's global
    generator with ``seed``, so the same arguments give the same values as ``onnx``.
    Another dtype raises ``TypeError``."""
    np.random.seed(seed)
    if dtype in _RANDOM_INT_DTYPES:
        low = max(np.iinfo(dtype).min, np.iinfo(np.int32).min)
        high = min(np.iinfo(dtype).max, np.iinfo(np.int32).max)
        return np.random.randint(low, high, size=input_shape).astype(dtype)
    raise TypeError(f"{dtype} is not supported by create_random_int.")


def saturate_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` as ``dtype``, values out of its range clipped to its limits (integers
    rounded to the nearest first, ties to even). The ``ml_dtypes`` types (float8, int4,
    ...) need that package."""
    small_ints = () if _ml is None else (_ml.int4, _ml.uint4, _ml.int2, _ml.uint2)
    if np.issubdtype(dtype, np.integer) or dtype in small_ints:
        limits = _ml.iinfo(dtype) if _ml is not None else np.iinfo(dtype)
        x = np.round(x)
    else:
        limits = _ml.finfo(dtype) if _ml is not None else np.finfo(dtype)
    return np.clip(x, limits.min, limits.max).astype(dtype)


__all__ = [
    "create_random_int",
    "from_array",
    "from_dict",
    "from_list",
    "from_optional",
    "saturate_cast",
    "tensor_dtype_to_np_dtype",
    "to_array",
    "to_dict",
    "to_float8e8m0",
    "to_list",
    "to_optional",
    "tobytes_little_endian",
]
