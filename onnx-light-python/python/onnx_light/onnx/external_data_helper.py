"""``onnx.external_data_helper`` on onnx_light. As in ``onnx``,
``convert_model_to_external_data`` marks tensors as external at once (their bytes stay
in memory) and the next ``save`` writes them to the files they name; the marking, the
path checks and that writing are the library's. ``write_external_data_tensors`` and
``save_external_data`` append to the data files themselves, as ``onnx``'s do."""

from __future__ import annotations

import os
import stat
import uuid
import warnings
from typing import Any, Iterator, NamedTuple, Optional

from . import _UNSET, AttributeProto, ModelProto, TensorProto, _as_model, _native
from ._errors import ValidationError

# The external_data keys the format defines; ExternalDataInfo ignores others.
_ALLOWED_EXTERNAL_DATA_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})

# The largest gap of zeros save_external_data writes to move a tensor to the offset its
# external_data asks for (an alignment boundary).
_MAX_EXTERNAL_DATA_PADDING = 64 * 1024


class ExternalDataInfo:
    """The ``external_data`` entries of a tensor as attributes: ``location`` and
    ``basepath`` (``""`` when absent), ``offset`` and ``length`` (ints, None when
    absent; a negative one raises ``ValueError``) and ``checksum`` (None when absent).
    Other keys are ignored with a warning naming them (at most ten, 100 characters
    each)."""

    def __init__(self, tensor: Any) -> None:
        self.location: str = ""
        self.offset: Any = None
        self.length: Any = None
        self.checksum: Optional[str] = None
        self.basepath: str = ""
        shown: set[str] = set()
        unknown = 0
        for entry in tensor.external_data:
            if entry.key in _ALLOWED_EXTERNAL_DATA_KEYS:
                setattr(self, entry.key, entry.value)
                continue
            unknown += 1
            if len(shown) < 10:
                key = entry.key[:100] + ("..." if len(entry.key) > 100 else "")
                shown.add(key)
        if shown:
            names = repr(sorted(shown))
            if unknown > len(shown):
                names += f" and {unknown - len(shown)} more"
            warnings.warn(
                f"Ignoring unknown external data key(s) {names} for tensor {tensor.name!r}. "
                f"Allowed keys: {sorted(_ALLOWED_EXTERNAL_DATA_KEYS)}",
                stacklevel=2,
            )
        for key in ("offset", "length"):
            value = getattr(self, key)
            if value is None:
                continue
            value = int(value)
            setattr(self, key, value)
            if value < 0:
                raise ValueError(
                    f"External data {key} must be non-negative, got {value} for tensor {tensor.name!r}"
                )


def set_external_data(
    tensor: Any,
    location: str,
    offset: Optional[int] = None,
    length: Optional[int] = None,
    checksum: Optional[str] = None,
    basepath: Optional[str] = None,
) -> None:
    """Marks ``tensor`` as external (``data_location = EXTERNAL``) and replaces its
    ``external_data`` with the given entries, in the order location, offset, length,
    checksum, basepath (None ones left out; values as text). Its ``raw_data`` stays; a
    tensor without ``raw_data`` raises ``ValueError``."""
    if not tensor.HasField("raw_data"):
        raise ValueError(
            f"Tensor {tensor.name} does not have raw_data field. Cannot set external data for this tensor."
        )
    del tensor.external_data[:]
    tensor.data_location = TensorProto.EXTERNAL
    entries = (
        ("location", location),
        ("offset", None if offset is None else int(offset)),
        ("length", None if length is None else int(length)),
        ("checksum", checksum),
        ("basepath", basepath),
    )
    for key, value in entries:
        if value is not None:
            entry = tensor.external_data.add()
            entry.key = key
            entry.value = str(value)


def remove_external_data_field(tensor: Any, field_key: str) -> None:
    """Removes the ``external_data`` entries of ``tensor`` whose key is ``field_key``."""
    keep = [(e.key, e.value) for e in tensor.external_data if e.key != field_key]
    if len(keep) == len(tensor.external_data):
        return
    del tensor.external_data[:]
    for key, value in keep:
        entry = tensor.external_data.add()
        entry.key = key
        entry.value = value


def _open_data_file(base_path: str, location: str, tensor_name: str) -> int:
    """A read-write descriptor of the file ``location`` names under ``base_path``,
    created if missing. The location must be relative, without ``..``, and every
    component must be a real directory or, last, a regular file: no symbolic link is
    followed (each is opened relative to its parent with ``O_NOFOLLOW``)."""
    if not location or os.path.isabs(location):
        raise ValidationError(f"External data location for tensor {tensor_name} is empty or absolute: {location}")
    parts = [p for p in location.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValidationError(f"External data location for tensor {tensor_name} contains '..': {location}")
    if not parts:
        raise ValidationError(f"External data location for tensor {tensor_name} names no file: {location}")
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        dir_fd = os.open(base_path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as err:
        raise ValidationError(f"Cannot open external data for tensor {tensor_name} ({err.strerror})") from None
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = inner
        fd = os.open(parts[-1], os.O_RDWR | os.O_CREAT | nofollow, 0o666, dir_fd=dir_fd)
    except OSError as err:
        raise ValidationError(f"Cannot open external data for tensor {tensor_name} ({err.strerror})") from None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValidationError(f"Cannot open external data for tensor {tensor_name} (not a regular file)")
    return fd


def save_external_data(tensor: Any, base_path: str) -> None:
    """Appends the ``raw_data`` of ``tensor`` to the file its ``location`` names in the
    directory ``base_path`` (created if missing) and records where: its ``offset`` and
    ``length`` entries are set, other entries but the location dropped, ``raw_data``
    kept. An ``offset`` already in ``external_data`` places the bytes there, after a gap
    of zeros of at most 64 KiB past the file's end; one before the end or further
    raises ``ValidationError``. So does a tensor without ``raw_data``, and a location
    that is absolute, has a ``..`` component, or leads through a symbolic link."""
    info = ExternalDataInfo(tensor)
    if not tensor.HasField("raw_data"):
        raise ValidationError("raw_data field doesn't exist.")
    fd = _open_data_file(os.fspath(base_path), info.location, tensor.name)
    with os.fdopen(fd, "r+b") as data_file:
        end = data_file.seek(0, os.SEEK_END)
        if info.offset is not None:
            padding = info.offset - end
            if not 0 <= padding <= _MAX_EXTERNAL_DATA_PADDING:
                raise ValidationError(
                    f"External data offset ({info.offset}) for tensor {tensor.name!r} must be between "
                    f"the current file size ({end}) and {end + _MAX_EXTERNAL_DATA_PADDING}."
                )
            data_file.write(b"\0" * padding)
        start = data_file.tell()
        # One of our tensors' payload is written from its own memory, without a copy;
        # an onnx package's tensor gives its bytes.
        payload = _native.tensor_payload(tensor) if isinstance(tensor, _native.Message) else None
        if payload is not None:
            import numpy as np

            data_file.write(np.asarray(payload))
        else:
            data_file.write(tensor.raw_data)
        set_external_data(tensor, info.location, start, data_file.tell() - start)


def _graph_initializers(graph: Any) -> Iterator[Any]:
    """The initializers of ``graph`` and of the subgraphs in its nodes' attributes."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            for sub in _subgraphs(attr):
                yield from _graph_initializers(sub)


def _subgraphs(attr: Any) -> list[Any]:
    """The graphs an attribute holds, by its type."""
    if attr.type == AttributeProto.GRAPH:
        return [attr.g]
    if attr.type == AttributeProto.GRAPHS:
        return list(attr.graphs)
    return []


def _attribute_tensors(graph: Any) -> Iterator[Any]:
    """The tensors in the attributes of the nodes of ``graph`` (or a function) and of
    its subgraphs."""
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            for sub in _subgraphs(attr):
                yield from _attribute_tensors(sub)


def _get_all_tensors(onnx_model_proto: Any) -> Iterator[Any]:
    """Every tensor of the model, in ``onnx``'s order: the initializers of the graph
    and its subgraphs, then the attribute tensors of the graph and of the functions."""
    model = onnx_model_proto
    yield from _graph_initializers(model.graph)
    yield from _attribute_tensors(model.graph)
    for function in model.functions:
        yield from _attribute_tensors(function)


def uses_external_data(tensor: Any) -> bool:
    """True when the tensor's data is stored in an external file."""
    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def convert_model_to_external_data(
    model: Any,
    all_tensors_to_one_file: bool = _UNSET,
    location: Optional[str] = _UNSET,
    size_threshold: int = _UNSET,
    convert_attribute: bool = _UNSET,
    *,
    options: Any = None,
) -> None:
    """Marks the tensors of ``model`` holding at least ``size_threshold`` bytes of
    ``raw_data`` as external, as ``onnx`` does: ``data_location = EXTERNAL`` and a
    ``location`` entry, the bytes kept in memory. The next ``save`` writes them to that
    file, next to the model.

    With ``all_tensors_to_one_file``, every tensor goes to ``location`` (default: a new
    unique ``<uuid>.data`` name, as in ``onnx``); otherwise each goes to a file named
    after the tensor. ``location`` is relative to the model's directory (it may name
    subdirectories, created by the save); an absolute path, a ``..`` component or a
    hostile name is refused here (``OptionError``), not when the model is saved. Attribute
    tensors are included with ``convert_attribute``. The size counted is the length of
    ``raw_data`` (``onnx`` compares ``sys.getsizeof``, 33 bytes more).

    ``options``: a ``SerializeOptions`` whose external-data fields (the four above)
    apply; the arguments given override them. The defaults are ``SerializeOptions()``'s
    (``size_threshold`` 1024, as in ``onnx``)."""
    from . import SerializeOptions, _merge

    o = _merge(
        options,
        SerializeOptions,
        dict(
            all_tensors_to_one_file=all_tensors_to_one_file,
            location=location,
            size_threshold=size_threshold,
            convert_attribute=convert_attribute,
        ),
    )
    model = _as_model(model)
    location = o.location if o.location is not None else f"{uuid.uuid1()}.data"
    _native.mark_external_data(
        model, location, o.all_tensors_to_one_file, o.size_threshold, o.convert_attribute
    )


def convert_model_from_external_data(model: Any) -> None:
    """Makes every tensor of ``model`` inline again, as ``onnx`` does: tensors whose
    external data is loaded lose their ``external_data`` and get ``data_location``
    ``DEFAULT``. A tensor whose data was not loaded raises ``ExternalDataError`` (a
    ``ValueError``, as in ``onnx``) and nothing is changed."""
    _native.inline_external_data(_as_model(model))


def load_external_data_for_model(model: Any, base_dir: str) -> None:
    """Reads the external data of every tensor of ``model`` from files in ``base_dir``
    (paths are checked: no absolute paths, ``..`` or links out of the directory), or
    from the objects under ``base_dir`` when it is a URL (``s3://bucket/models/``,
    ``https://host/dir``: fetched in parallel, ``checksum``s verified); each
    such tensor then has ``data_location`` ``DEFAULT`` and no ``external_data``, as with
    ``onnx``. A refused location raises ``ExternalDataError``, a
    ``checker.ValidationError``."""
    _native.load_external_data_for_model(model, os.fspath(base_dir), -1)


def load_external_data_for_tensor(tensor: Any, base_dir: str) -> None:
    """Reads the data of ``tensor`` from its external file in ``base_dir`` into
    ``raw_data``; the tensor then no longer refers to the file (``external_data`` and
    ``data_location`` cleared, as after a load). The location is checked as for a model
    (no absolute paths, ``..`` or links out of ``base_dir``) and so is the range."""
    holder = ModelProto()
    holder.graph.initializer.append(tensor)
    _native.load_external_data_for_model(holder, os.fspath(base_dir), 1)
    tensor.CopyFrom(holder.graph.initializer[0])


class ExternalDataProblem(NamedTuple):
    """One broken rule found by ``verify_external_data``."""

    tensor: str
    """The tensor's name."""
    rule: str
    """The rule: ``"metadata"``, ``"location"``, ``"symbolic_link"``,
    ``"outside_directory"``, ``"not_regular_file"``, ``"missing_file"``,
    ``"unreadable"``, ``"out_of_range"``, ``"length_mismatch"``,
    ``"checksum_mismatch"`` or ``"aliasing"``."""
    message: str
    """What a load would say."""


def verify_external_data(
    model: Any, base_dir: str, checksums: bool = False, allow_aliasing: bool = False
) -> list[ExternalDataProblem]:
    """Checks the external data of ``model`` against the files in ``base_dir`` with the
    rules of a load, without loading anything, and returns every broken rule (an empty
    list: the data would load). ``checksums`` also reads each file whose tensors record
    a ``checksum`` and compares its SHA-1; ``allow_aliasing`` accepts tensors whose
    ranges share bytes, as ``load`` does with it."""
    found = _native.verify_external_data(model, os.fspath(base_dir), checksums, allow_aliasing)
    return [ExternalDataProblem(*p) for p in found]


def write_external_data_tensors(model: Any, filepath: str) -> Any:
    """Writes the data of the tensors of ``model`` marked external that hold their bytes
    (see ``convert_model_to_external_data``) to the files their ``location`` names in
    the directory ``filepath``, as ``onnx`` does: each is appended to its file
    (``save_external_data``: created if missing, an existing file is added to, never
    overwritten), its ``offset`` and ``length`` recorded and its ``raw_data`` cleared.
    Returns ``model``. A location that is absolute, has a ``..`` component or leads
    through a symbolic link raises ``ValidationError``."""
    if isinstance(model, _native.Message):
        # The library finds the tensors to write (in onnx's order), so that a model of
        # many nodes is not walked node by node in Python.
        tensors = [_follow(model, path) for path in _native.tensors_to_write(model)]
    else:
        tensors = [t for t in _get_all_tensors(model) if uses_external_data(t) and t.HasField("raw_data")]
    for tensor in tensors:
        save_external_data(tensor, filepath)
        tensor.ClearField("raw_data")
    return model


def _follow(message: Any, path: list) -> Any:
    """The message ``path`` leads to from ``message`` (field names and list indices)."""
    for step in path:
        message = message[step] if isinstance(step, int) else getattr(message, step)
    return message


__all__ = [
    "ExternalDataInfo",
    "convert_model_from_external_data",
    "convert_model_to_external_data",
    "load_external_data_for_model",
    "load_external_data_for_tensor",
    "remove_external_data_field",
    "save_external_data",
    "set_external_data",
    "uses_external_data",
    "write_external_data_tensors",
]
