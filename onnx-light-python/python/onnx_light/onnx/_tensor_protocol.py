"""The tensor protocol of ``TensorProto``, as ``onnx_ir``'s tensors have it: ``numpy()``,
``__array__``, ``__dlpack__``, ``__dlpack_device__``, ``tobytes()``, ``nbytes`` and
``size``, so that NumPy, PyTorch and JAX take a tensor's values without a copy.

Bytes the tensor holds (``raw_data``: a mapped file, a ``bytes`` object loaded with
``no_copy=True``, a consolidated buffer, or the model's own copy) are viewed where they
are, aligned or not: the array is read-only and keeps them alive, and assigning the
tensor new data later leaves the array as it was. Values in a typed field
(``float_data``, ...) are decoded into a new, writable array; a payload a structure-only
load left on disk is read from its file for the call, without reading the rest of the
model. ``numpy_helper.to_array`` gives the same arrays.

``install`` puts these on the class; the package calls it once at import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import _native
from ._errors import ExternalDataError

if TYPE_CHECKING:
    import numpy as np

# DLPack's device type of CPU memory (``kDLCPU``), with device id 0.
_DLPACK_CPU = (1, 0)


def _array(tensor: Any) -> tuple[np.ndarray, bool]:
    """``numpy_helper._values``, with an error for external data that was never loaded
    (the tensor does not know the directory of its file)."""
    from .numpy_helper import _values  # numpy loads with the first array

    arr, shared = _values(tensor)
    if arr is None:
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        raise ExternalDataError(
            f"tensor {tensor.name!r}: its external data ({location!r}) was not loaded; load "
            "the model with load_external_data=True, call "
            "external_data_helper.load_external_data_for_tensor(tensor, base_dir), or use "
            "numpy_helper.to_array(tensor, base_dir)"
        )
    return arr, shared


def numpy(self: Any) -> np.ndarray:
    """The values as a NumPy array of shape ``dims``: a read-only view without a copy of
    the bytes the tensor holds (it keeps them alive), a new array for values in a typed
    field or unpacked from a sub-byte type. bfloat16, float8, float6, float4 and
    int4/uint4/int2/uint2 give ``ml_dtypes`` arrays (sub-byte values unpacked, one per
    element), strings an object array, as ``numpy_helper.to_array``. Raises
    ``ExternalDataError`` for external data that was never loaded, ``TensorDataError``
    when the data does not match the shape and type."""
    return _array(self)[0]


def __array__(  # noqa: N807
    self: Any, dtype: Any = None, copy: Optional[bool] = None
) -> np.ndarray:
    """NumPy's conversion (``np.asarray(tensor)``, ``np.array(tensor)``), with NumPy 2's
    ``copy``: None views the bytes when it can (as ``numpy()``, converted to ``dtype``
    if given); True always returns a new, writable array; False never copies and raises
    ``ValueError`` when a copy is needed (values in a typed field or unpacked from a
    sub-byte type, a payload read from a file for the call, a conversion to ``dtype``)."""
    arr, shared = _array(self)
    import numpy as np

    target = None if dtype is None else np.dtype(dtype)
    converts = target is not None and target != arr.dtype
    if copy is False:
        if converts:
            raise ValueError(
                f"converting the tensor's {arr.dtype} values to {target} needs a copy (copy=False)"
            )
        if not shared:
            raise ValueError(
                "this tensor's values are not held as bytes in memory (typed field, sub-byte "
                "type or a payload read from a file): an array of them needs a copy (copy=False)"
            )
        return arr
    if converts:
        return arr.astype(target)
    if copy and (shared or not arr.flags.writeable):
        return arr.copy()
    return arr


def __dlpack__(  # noqa: N807
    self: Any,
    *,
    stream: Any = None,
    max_version: Optional[tuple[int, int]] = None,
    dl_device: Optional[tuple[int, int]] = None,
    copy: Optional[bool] = None,
) -> Any:
    """The values as a DLPack capsule (CPU), for ``np.from_dlpack``,
    ``torch.from_dlpack`` or ``jax.dlpack.from_dlpack``, made by NumPy from ``numpy()``'s
    array: without a copy, read-only (flagged so for consumers of DLPack 1.0 and later;
    NumPy refuses older consumers a read-only array unless ``copy=True``). DLPack has no
    ``ml_dtypes`` types: bfloat16, float8 and the sub-byte types raise ``BufferError``,
    as NumPy does for them. ``copy=False`` raises ``BufferError`` where ``__array__``
    raises ``ValueError``."""
    arr, shared = _array(self)
    if copy is False and not shared:
        raise BufferError(
            "this tensor's values are not held as bytes in memory: exporting them needs a copy"
        )
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return arr.__dlpack__(stream=stream, **kwargs)


def __dlpack_device__(self: Any) -> tuple[int, int]:  # noqa: N807
    """``(1, 0)``: DLPack's CPU device, where every tensor's values are."""
    return _DLPACK_CPU


def tobytes(self: Any) -> bytes:
    """The values as bytes in ``raw_data`` layout, as ``onnx`` stores them: little-endian,
    sub-byte types packed (two int4 or four int2 to a byte, the first in the low bits;
    float6 four values to three bytes), whichever field holds them. Strings have no byte
    layout: a ``STRING`` tensor raises ``TypeError`` (read ``string_data``)."""
    _data_type, _dims, buffer, _shared = _native.tensor_data(self)
    if buffer is None:
        if self.data_type == self.STRING:
            raise TypeError("a STRING tensor has no byte layout: read its string_data")
        _array(self)  # raises the error of external data that was never loaded
    if isinstance(buffer, bytearray):
        return bytes(buffer)
    return buffer.tobytes()


def _nbytes(self: Any) -> int:
    """The size of the values in ``raw_data`` layout (sub-byte types packed, rounded up to
    whole bytes), from ``dims`` and ``data_type`` alone: ``len(tobytes())``. For strings,
    their total length."""
    return _native.tensor_sizes(self)[1]


def _size(self: Any) -> int:
    """The number of elements: the product of ``dims`` (1 for a scalar)."""
    return _native.tensor_sizes(self)[0]


def install(cls: Any) -> None:
    """Puts the tensor protocol on ``cls`` (``TensorProto``)."""
    cls.numpy = numpy
    cls.__array__ = __array__
    cls.__dlpack__ = __dlpack__
    cls.__dlpack_device__ = __dlpack_device__
    cls.tobytes = tobytes
    cls.nbytes = property(_nbytes)
    cls.size = property(_size)
