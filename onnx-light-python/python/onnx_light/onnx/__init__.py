"""The ``onnx`` Python API on the onnx-light Rust core.

``import onnx_light.onnx as onnx`` gives the message classes (``ModelProto``,
``TensorProto``, ...), ``load`` / ``save`` and their variants, ``helper``,
``numpy_helper`` and ``external_data_helper``, plus what ``onnx`` lacks: no-copy loads,
split and aligned external data, encrypted models and tensor consolidation.

A message taken from another (``node = model.graph.node[0]``) is a live view: writes
through it change the model, and it keeps the model's data alive. Like protobuf's
objects, it follows its element when the list changes, and the view of a removed
element keeps that element as a message of its own.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import IO, Any, NamedTuple, Optional, Union

from .. import _onnx_light as _native
from . import _descriptor
from ._errors import (
    DataFileExistsError,
    DecodeError,
    EncryptionError,
    Error,
    ExternalDataError,
    FileError,
    FilePermissionError,
    GraphEditError,
    IsDirectoryError,
    NoSuchFileError,
    NotDirectoryError,
    OptionError,
    RefusedConnectionError,
    TensorDataError,
)

Message = _native.Message
RepeatedField = _native.RepeatedField
IR_VERSION: int = _native.IR_VERSION
# Whether the ai.onnx.ml operators are known: their schemas are always embedded.
ONNX_ML: bool = True


class EnumTypeWrapper:
    """An enum of the schema, with protobuf's ``Name`` / ``Value`` / ``items`` API."""

    def __init__(self, full_name: str, values: dict[str, int]):
        self._full_name = full_name
        self._values = dict(values)
        self._names = {}
        for k, v in values.items():
            self._names.setdefault(v, k)
        for k, v in values.items():
            setattr(self, k, v)

    def Name(self, number: int) -> str:  # noqa: N802 (protobuf's name)
        try:
            return self._names[number]
        except KeyError:
            raise ValueError(f"enum {self._full_name} has no value {number}") from None

    def Value(self, name: str) -> int:  # noqa: N802
        try:
            return self._values[name]
        except KeyError:
            raise ValueError(f"enum {self._full_name} has no value named {name!r}") from None

    def keys(self) -> list[str]:
        return list(self._values)

    def values(self) -> list[int]:
        return list(self._values.values())

    def items(self) -> list[tuple[str, int]]:
        return list(self._values.items())

    def __repr__(self) -> str:
        return f"<enum {self._full_name}>"


def _install_classes() -> None:
    classes = _native.MESSAGE_CLASSES
    g = globals()
    for full_name, cls in classes.items():
        parts = full_name.split(".")[1:]
        if len(parts) == 1:
            g[parts[0]] = cls
        else:
            setattr(classes["onnx." + ".".join(parts[:-1])], parts[-1], cls)
    for full_name, cls in classes.items():
        cls.DESCRIPTOR = _descriptor.descriptor(full_name)
    list_names = Message.ListFields

    def ListFields(self: Any) -> list[tuple[Any, Any]]:  # noqa: N802 (protobuf's name)
        """The set fields as ``(FieldDescriptor, value)`` pairs, in field-number order."""
        by_name = type(self).DESCRIPTOR.fields_by_name
        pairs = [(by_name[name], value) for name, value in list_names(self)]
        pairs.sort(key=lambda p: p[0].number)
        return pairs

    Message.ListFields = ListFields
    for full_name, values in _native.ENUMS.items():
        parts = full_name.split(".")[1:]
        wrapper = EnumTypeWrapper(full_name, values)
        if len(parts) == 1:
            g[parts[0]] = wrapper
            for k, v in values.items():
                g.setdefault(k, v)
        else:
            owner = classes["onnx." + ".".join(parts[:-1])]
            setattr(owner, parts[-1], wrapper)
            for k, v in values.items():
                setattr(owner, k, v)


ModelProto: Any
GraphProto: Any
NodeProto: Any
TensorProto: Any
FunctionProto: Any
_install_classes()


# `repr()` of the three large messages is a one-line summary, as `onnx` makes it
# (`str()` stays protobuf's text format): printing a model must not print its weights.
def _opsets(opset_import: Any) -> str:
    return repr({o.domain: o.version for o in opset_import})


def _counted(name: str, items: Any, noun: str) -> str:
    return f", {name}=<{len(items)} {noun}>" if items else ""


def _quoted(name: str, value: str) -> str:
    return f", {name}='{value}'" if value else ""


def _model_repr(self: Any) -> str:
    opsets = f", opset_import={_opsets(self.opset_import)}" if self.opset_import else ""
    return (
        f"ModelProto(ir_version={self.ir_version}{opsets}{_quoted('domain', self.domain)}"
        f"{_quoted('producer_name', self.producer_name)}"
        f"{_quoted('producer_version', self.producer_version)}, graph={self.graph!r}"
        f"{_counted('functions', self.functions, 'functions')})"
    )


def _graph_repr(self: Any) -> str:
    return (
        f"GraphProto('{self.name}'{_counted('input', self.input, 'inputs')}"
        f"{_counted('output', self.output, 'outputs')}"
        f"{_counted('initializer', self.initializer, 'initializers')}"
        f"{_counted('node', self.node, 'nodes')}"
        f"{_counted('value_info', self.value_info, 'value_info')})"
    )


def _function_repr(self: Any) -> str:
    opsets = f", opset_import={_opsets(self.opset_import)}" if self.opset_import else ""
    attributes = f", attribute={list(self.attribute)}" if self.attribute else ""
    return (
        f"FunctionProto('{self.name}'{_quoted('domain', self.domain)}"
        f"{_quoted('overload', self.overload)}{opsets}"
        f"{_counted('input', self.input, 'inputs')}{_counted('output', self.output, 'outputs')}"
        f"{attributes}{_counted('node', self.node, 'nodes')})"
    )


ModelProto.__repr__ = _model_repr
GraphProto.__repr__ = _graph_repr
FunctionProto.__repr__ = _function_repr

# --- options ------------------------------------------------------------------------


# Each class's defaults are the Rust library's (`TensorBufferOptions::default()`,
# `ParseOptions::default()`, `SerializeOptions::default()`): none is written here.
_DEFAULTS = _native.option_defaults()


def _default(cls: str, name: str) -> Any:
    return _DEFAULTS[cls][name]


@dataclass
class TensorBufferOptions:
    """Which payloads count as large and how their buffers are aligned: the base of
    ``ParseOptions`` and ``SerializeOptions``, and what ``consolidate_tensors_to_buffer``
    takes (either subclass too).

    ``load`` and ``save`` take one too, for these two fields (the others then keep
    the defaults of ``ParseOptions`` or ``SerializeOptions``).

    ``raw_data_threshold`` (default 0): payloads of at least this many bytes are large
    (shared by a no-copy load, written in parallel by a save, moved by a consolidation).
    ``alignment`` (default 0, none; else a power of two): where each large payload
    starts in a buffer the library allocates (a consolidation's buffer, a load that
    copies), and for a save the alignment of external data offsets."""

    raw_data_threshold: int = _default("TensorBufferOptions", "raw_data_threshold")
    alignment: int = _default("TensorBufferOptions", "alignment")


@dataclass
class ParseOptions(TensorBufferOptions):
    """Options of ``load``, a ``TensorBufferOptions`` with ``raw_data_threshold``
    1024: a no-copy load shares payloads of at least that size and copies smaller
    ones; ``alignment`` above 1 copies payloads into storage aligned to it. The keyword
    arguments of ``load`` override these.

    ``base_dir``: the directory external data locations are relative to (default: the
    model file's). ``recursion_limit`` (default 100, also the most this package
    accepts): how deep messages may nest. ``max_model_size`` and ``max_tensor_size``
    (bytes, default None: no limit): refuse larger inputs, and models with a larger
    tensor, before reading them."""

    raw_data_threshold: int = _default("ParseOptions", "raw_data_threshold")
    alignment: int = _default("ParseOptions", "alignment")
    load_external_data: bool = _default("ParseOptions", "load_external_data")
    no_copy: bool = _default("ParseOptions", "no_copy")
    num_threads: int = _default("ParseOptions", "num_threads")
    skip_raw_data: bool = _default("ParseOptions", "skip_raw_data")
    location: Optional[str] = _default("ParseOptions", "location")
    max_memory: Optional[int] = _default("ParseOptions", "max_memory")
    allow_aliasing: bool = _default("ParseOptions", "allow_aliasing")
    base_dir: Optional[str] = _default("ParseOptions", "base_dir")
    recursion_limit: int = _default("ParseOptions", "recursion_limit")
    max_model_size: Optional[int] = _default("ParseOptions", "max_model_size")
    max_tensor_size: Optional[int] = _default("ParseOptions", "max_tensor_size")


@dataclass
class SerializeOptions(TensorBufferOptions):
    """Options of ``save``, a ``TensorBufferOptions`` with ``raw_data_threshold`` 64:
    payloads of at least that size are written in parallel. ``alignment`` aligns the
    offsets of external data (0, the default: 4096, the library's default for data
    files). The keyword arguments of ``save`` override these."""

    raw_data_threshold: int = _default("SerializeOptions", "raw_data_threshold")
    alignment: int = _default("SerializeOptions", "alignment")
    save_as_external_data: bool = _default("SerializeOptions", "save_as_external_data")
    all_tensors_to_one_file: bool = _default("SerializeOptions", "all_tensors_to_one_file")
    location: Optional[str] = _default("SerializeOptions", "location")
    size_threshold: int = _default("SerializeOptions", "size_threshold")
    convert_attribute: bool = _default("SerializeOptions", "convert_attribute")
    max_external_file_size: int = _default("SerializeOptions", "max_external_file_size")
    num_threads: int = _default("SerializeOptions", "num_threads")
    sync: bool = _default("SerializeOptions", "sync")
    replace_data_files: bool = _default("SerializeOptions", "replace_data_files")


_UNSET: Any = object()


def _merge(options: Any, cls: type, given: dict[str, Any]) -> Any:
    """``options`` (a ``cls``; or a plain ``TensorBufferOptions``, which sets the two
    fields it has and leaves the others at ``cls``'s defaults) with the keyword
    arguments that were given on top, as a new ``cls``."""
    if options is None:
        options = cls()
    elif type(options) is TensorBufferOptions:
        options = cls(raw_data_threshold=options.raw_data_threshold, alignment=options.alignment)
    elif not isinstance(options, cls):
        raise TypeError(
            f"options: expected a {cls.__name__} or a TensorBufferOptions, got {_type_name(options)}"
        )
    values = {k: getattr(options, k) for k in cls.__dataclass_fields__}
    values.update({k: v for k, v in given.items() if v is not _UNSET})
    return cls(**values)


def _read_source(f: Any) -> tuple[Optional[str], Optional[bytes]]:
    """A path, or the bytes of a binary file object."""
    if isinstance(f, (bytes, bytearray, memoryview)):
        return None, bytes(f)
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("expected a binary file object")
        return None, bytes(data)
    return os.fspath(f), None


# --- load -----------------------------------------------------------------------------


def load_model(
    f: Union[str, os.PathLike, bytes, IO[bytes]],
    format: Optional[str] = None,  # noqa: A002 (onnx's name)
    load_external_data: bool = _UNSET,
    *,
    no_copy: bool = _UNSET,
    num_threads: int = _UNSET,
    structure_only: bool = _UNSET,
    skip_raw_data: bool = _UNSET,
    raw_data_threshold: int = _UNSET,
    alignment: int = _UNSET,
    location: Optional[str] = _UNSET,
    max_memory: Optional[int] = _UNSET,
    allow_aliasing: bool = _UNSET,
    options: Optional[ParseOptions] = None,
    verify_checksums: bool = True,
) -> Any:
    """Loads a model from a path, a URL, ``bytes`` or a binary file object.

    A URL (``s3://``, ``gs://``, ``az://``, ``abfs://``, ``http(s)://``, ``file://``)
    is read through the object store's client, configured from the environment
    (``AWS_ENDPOINT``, ``AWS_ALLOW_HTTP``, ``AWS_ACCESS_KEY_ID``, ...): the model with
    parallel ranged requests, its external data from beside it (locations checked as on
    disk: nothing outside the model's prefix), or with ``structure_only`` the structure
    only, each payload fetched on first access. ``verify_checksums`` (URLs only, default
    true): check each external data file against the ``checksum`` its tensors record. A
    missing object raises ``FileNotFoundError``, a refused one ``PermissionError``, each
    with the URL as ``filename``.

    ``no_copy``: map the file (and its external data files) and share their bytes (no
    copy); for ``bytes`` (or the bytes read from a file object), share that object,
    which the model keeps alive. A mapped file must not be truncated or rewritten in
    place, by any program, while the model (or an array viewing its weights) is alive:
    the interpreter would die of ``SIGBUS`` or see the weights change, as with
    ``numpy.memmap``. Leave ``no_copy`` off (one read) for files others may change; a
    ``save`` of this package replaces a file by renaming a new one over it, which is
    safe.
    ``structure_only`` (``skip_raw_data``, onnx_light's name, is the same option): read
    the structure only and leave large payloads on disk, each read on first access (the
    Rust API's ``structure_only``). ``num_threads``: 0 (the default) = all cores, as in
    Rust and the command line (-1 means the same), 1 = the calling thread.
    ``location``: read all external data from this file (relative to the model).
    ``max_memory``: the most memory the decoded model may take, in bytes; -1 (the
    default) = 64 MiB + 16 times the model's size, None = no limit.
    ``allow_aliasing``: accept tensors whose external data ranges share bytes.
    A tensor whose external data is read loses its ``external_data`` entries and keeps
    ``data_location`` set to ``DEFAULT``, as ``onnx.load`` leaves it.

    ``format``: ``"protobuf"``, ``"textproto"``, ``"json"``, ``"onnxtxt"`` or one
    registered in ``serialization.registry``; by default the format of the file's
    extension (``serialization`` lists them), else ``"protobuf"``, as ``onnx`` does.
    The options above other than ``load_external_data`` apply to the binary format
    only: with a text format they raise ``OptionError``.
    """
    serializer = _serializer(format, f)
    if serializer is not serialization._PROTOBUF:
        _refuse_binary_options(
            serializer,
            options,
            no_copy=no_copy,
            num_threads=num_threads,
            structure_only=structure_only,
            skip_raw_data=skip_raw_data,
            raw_data_threshold=raw_data_threshold,
            alignment=alignment,
            location=location,
            max_memory=max_memory,
            allow_aliasing=allow_aliasing,
        )
        path, data = _read_source(f)
        if data is None:
            with open(path, "rb") as fh:
                data = fh.read()
        model = serializer.deserialize_proto(data, ModelProto())
        base_dir = _directory_of(f)
        if load_external_data is not False and base_dir is not None:
            from .external_data_helper import load_external_data_for_model as load_data

            load_data(model, base_dir)
        return model
    if structure_only is not _UNSET:
        if skip_raw_data is not _UNSET and bool(skip_raw_data) != bool(structure_only):
            raise ValueError("structure_only and skip_raw_data are one option: give one")
        skip_raw_data = structure_only
    o = _merge(
        options,
        ParseOptions,
        dict(
            load_external_data=load_external_data,
            no_copy=no_copy,
            num_threads=num_threads,
            skip_raw_data=skip_raw_data,
            raw_data_threshold=raw_data_threshold,
            alignment=alignment,
            location=location,
            max_memory=max_memory,
            allow_aliasing=allow_aliasing,
        ),
    )
    if isinstance(f, str) and _native.is_url(f):
        return _native.load_url(f, o, bool(verify_checksums))
    path, data = _read_source(f)
    if data is not None:
        base_dir = None
        name = getattr(f, "name", None)
        if isinstance(name, str):
            base_dir = os.path.dirname(os.path.abspath(name))
        if o.skip_raw_data:
            raise ValueError(
                "structure_only (skip_raw_data) applies to files: bytes hold their payloads already"
            )
        return _native.load_bytes(data, o, base_dir)
    return _native.load_path(path, o)


load = load_model


def load_model_from_string(
    s: Union[bytes, str],
    format: Optional[str] = None,  # noqa: A002
    *,
    num_threads: int = _UNSET,
    raw_data_threshold: int = _UNSET,
    alignment: int = _UNSET,
    max_memory: Optional[int] = _UNSET,
) -> Any:
    """Decodes a serialized model (external data is not loaded: there is no directory
    to resolve it from). ``max_memory`` as for ``load``; ``format`` (default
    ``"protobuf"``) as for ``load``, text (``str``) accepted for the text formats."""
    serializer = _serializer(format)
    if serializer is not serialization._PROTOBUF:
        _refuse_binary_options(
            serializer,
            None,
            num_threads=num_threads,
            raw_data_threshold=raw_data_threshold,
            alignment=alignment,
            max_memory=max_memory,
        )
        return serializer.deserialize_proto(s, ModelProto())
    o = _merge(
        None,
        ParseOptions,
        dict(
            load_external_data=False,
            num_threads=num_threads,
            raw_data_threshold=raw_data_threshold,
            alignment=alignment,
            max_memory=max_memory,
        ),
    )
    return _native.load_bytes(bytes(s), o, None)


load_from_string = load_model_from_string


def _file_path(f: Any) -> Optional[str]:
    """The path ``f`` names, or the name of the file object ``f`` (as ``onnx`` finds
    the extension and the directory of external data), else None."""
    if isinstance(f, (str, os.PathLike)):
        return os.path.abspath(f)
    name = getattr(f, "name", None)
    if isinstance(name, (str, os.PathLike)):
        return os.path.abspath(name)
    return None


def _directory_of(f: Any) -> Optional[str]:
    path = _file_path(f)
    return os.path.dirname(path) if path is not None else None


def _serializer(format: Optional[str], f: Any = None) -> Any:  # noqa: A002
    """The serializer of ``format``, or of the extension of the file ``f`` names, or the
    binary one, as ``onnx`` chooses. ``"onnx"`` names the binary format too."""
    if format == "onnx":
        format = "protobuf"  # noqa: A001
    if format is None:
        path = None if isinstance(f, (bytes, bytearray, memoryview)) else _file_path(f)
        if path is not None:
            format = serialization.registry.get_format_from_file_extension(  # noqa: A001
                os.path.splitext(path)[1]
            )
    return serialization.registry.get(format or "protobuf")


def _refuse_binary_options(serializer: Any, options: Any, **given: Any) -> None:
    """``OptionError`` naming the options of the binary format that were given for a
    load in another format."""
    names = [k for k, v in given.items() if v is not _UNSET]
    if options is not None:
        names.append("options")
    if names:
        raise OptionError(
            f"{', '.join(names)}: option(s) of the binary protobuf format; the "
            f"{serializer.supported_format!r} format reads a message from its text"
        )


def load_tensor(f: Union[str, os.PathLike, IO[bytes]], format: Optional[str] = None) -> Any:  # noqa: A002
    """Loads a serialized ``TensorProto``; ``format`` as for ``load``."""
    serializer = _serializer(format, f)
    path, data = _read_source(f)
    if data is None:
        with open(path, "rb") as fh:
            data = fh.read()
    if serializer is serialization._PROTOBUF:
        return _native.decode_message("onnx.TensorProto", data)
    return serializer.deserialize_proto(data, TensorProto())


def load_tensor_from_string(s: Union[bytes, str], format: Optional[str] = None) -> Any:  # noqa: A002
    """Decodes a serialized ``TensorProto``; ``format`` (default ``"protobuf"``) as for
    ``load``."""
    serializer = _serializer(format)
    if serializer is serialization._PROTOBUF:
        if not isinstance(s, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, got {_type_name(s)}")
        return _native.decode_message("onnx.TensorProto", bytes(s))
    return serializer.deserialize_proto(s, TensorProto())


# --- save -----------------------------------------------------------------------------


def _adopt(obj: Any) -> Any:
    """A message of another protobuf implementation (the ``onnx`` package's classes) as
    this package's class of the same protobuf name, through its serialized bytes;
    anything else unchanged."""
    if isinstance(obj, Message):
        return obj
    name = getattr(getattr(type(obj), "DESCRIPTOR", None), "full_name", None)
    if name in _native.MESSAGE_CLASSES and callable(getattr(obj, "SerializeToString", None)):
        return _native.decode_message(name, obj.SerializeToString())
    return obj


def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _as_model(proto: Any) -> Any:
    if isinstance(proto, (bytes, bytearray, memoryview)):
        return load_model_from_string(bytes(proto))
    proto = _adopt(proto)
    if not isinstance(proto, Message) or proto._proto_name != "onnx.ModelProto":
        raise TypeError(f"expected a ModelProto, got {_type_name(proto)}")
    return proto


def save_model(
    proto: Any,
    f: Union[str, os.PathLike, IO[bytes]],
    format: Optional[str] = None,  # noqa: A002
    *,
    save_as_external_data: bool = _UNSET,
    all_tensors_to_one_file: bool = _UNSET,
    location: Optional[str] = _UNSET,
    size_threshold: int = _UNSET,
    convert_attribute: bool = _UNSET,
    max_external_file_size: int = _UNSET,
    alignment: int = _UNSET,
    num_threads: int = _UNSET,
    sync: bool = _UNSET,
    replace_data_files: bool = _UNSET,
    options: Optional[SerializeOptions] = None,
) -> None:
    """Saves a model to a path or a binary file object, atomically for paths.

    ``sync`` (default True): flush the files to disk before the new model replaces the
    old one, so a crash leaves one or the other whole; ``onnx.save`` does not, and
    ``sync=False`` saves the same way, leaving the flush to the system.

    With ``save_as_external_data``, tensors of at least ``size_threshold`` bytes go to
    ``location`` (default: the model's file name + ``.data``), split into ``.1``, ``.2``
    ... files past ``max_external_file_size`` bytes (0: no limit), each payload aligned
    to ``alignment`` bytes. ``location`` is relative to the model's directory and may
    name subdirectories (``"weights/m.data"``, created as needed, as ``onnx`` does); an
    absolute path or a ``..`` component raises ``OptionError`` before anything is
    written. Saving again keeps the names: the data of an earlier save to the same path
    is replaced (not appended to, as ``onnx`` does). A file already at a data file's
    name that the model being replaced does not use (usually another model's data)
    raises ``DataFileExistsError`` (a ``FileExistsError``) before anything is written,
    unless ``replace_data_files``.

    ``format`` as for ``load``: by default the format of the file's extension (a
    ``proto`` given as ``bytes`` is always read as binary protobuf). In a text format,
    external data works as in the binary one: the data files are written with the
    options above and the text refers to them.

    ``f`` may be an ``s3://``, ``gs://``, ``az://`` or ``file://`` URL (binary protobuf):
    the model is saved with the same keywords to a private temporary directory, then
    uploaded, data objects first, beside the model under its prefix, and the model
    object last, so no reader finds a model whose data is missing. The objects are the
    files of the same save to disk, byte for byte. Objects at the data objects' names
    are replaced. An ``http(s)://`` URL is read-only (``FileError``); credentials and
    endpoints come from the environment as for ``load``.
    """
    model = _as_model(proto)
    serializer = _serializer(format, f)
    given = dict(
        save_as_external_data=save_as_external_data,
        all_tensors_to_one_file=all_tensors_to_one_file,
        location=location,
        size_threshold=size_threshold,
        convert_attribute=convert_attribute,
        max_external_file_size=max_external_file_size,
        alignment=alignment,
        num_threads=num_threads,
        sync=sync,
        replace_data_files=replace_data_files,
    )
    o = _merge(options, SerializeOptions, given)
    if hasattr(f, "write"):
        if o.save_as_external_data:
            raise ValueError("save_as_external_data needs a path, not a file object")
        if serializer is serialization._PROTOBUF:
            f.write(_native.save_bytes(model, o.num_threads))
        else:
            f.write(serializer.serialize_proto(model))
        return
    path = os.fspath(f)
    if _native.is_url(path):
        if serializer is not serialization._PROTOBUF:
            raise ValueError("a save to a URL writes binary protobuf only")
        external = None
        if o.save_as_external_data:
            external = o.location or path.rstrip("/").rsplit("/", 1)[-1] + ".data"
        _native.save_url(model, path, o, external)
        return
    if serializer is not serialization._PROTOBUF:
        _save_in_format(model, path, serializer, o)
        return
    if not o.save_as_external_data and _is_device_or_pipe(path):
        # As onnx does: the bytes are written into it (a save renames a new file over
        # a regular file, which would replace the device node).
        with open(path, "wb") as fh:
            fh.write(_native.save_bytes(model, o.num_threads))
        return
    external = None
    if o.save_as_external_data:
        external = o.location or os.path.basename(path) + ".data"
    _native.save_path(model, path, o, external)


def _save_in_format(model: Any, path: str, serializer: Any, o: SerializeOptions) -> None:
    """Saves ``model`` to ``path`` in a format other than the binary one. The binary
    save first writes the model to a temporary file next to ``path``, with the external
    data files its options and the model's marked tensors ask for (with its checks),
    and the text is made from that file's model, which refers to them: tensor data
    goes to data files in every format alike. A data file already there that the save
    would write raises ``DataFileExistsError`` unless ``replace_data_files`` (the model
    file being replaced is text, so it is not read to learn its data files)."""
    if _is_device_or_pipe(path):
        with open(path, "wb") as fh:
            fh.write(serializer.serialize_proto(model))
        return
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=".save-", suffix=".onnx", dir=directory)
    os.close(fd)
    try:
        external = None
        if o.save_as_external_data:
            external = o.location or os.path.basename(path) + ".data"
        _native.save_path(model, temporary, o, external)
        written = load_model(temporary, load_external_data=False)
    finally:
        os.unlink(temporary)
    data = serializer.serialize_proto(written)
    with open(path, "wb") as fh:
        fh.write(data)


def _is_device_or_pipe(path: str) -> bool:
    """True for a character device (``/dev/null``) or a FIFO at ``path``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


save = save_model


def save_tensor(
    proto: Any, f: Union[str, os.PathLike, IO[bytes]], format: Optional[str] = None  # noqa: A002
) -> None:
    """Writes a serialized ``TensorProto``; ``format`` as for ``save``."""
    serializer = _serializer(format, f)
    if serializer is serialization._PROTOBUF:
        data = proto.SerializeToString()
    else:
        data = serializer.serialize_proto(proto)
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(os.fspath(f), "wb") as fh:
            fh.write(data)


# --- encryption -----------------------------------------------------------------------


def save_encrypted(
    model: Any,
    f: Union[str, os.PathLike],
    key: str,
    *,
    format: Optional[str] = None,  # noqa: A002
    num_threads: int = 0,
) -> None:
    """Encrypts a model to a file. ``format``: None (the authenticated ``ONNXAE01``),
    ``"onnxcry1"`` (onnx_light's AES-CBC, no integrity) or ``"onnxcry2"``."""
    if hasattr(f, "write"):
        f.write(save_encrypted_string(model, key, format=format, num_threads=num_threads))
        return
    _native.save_encrypted_path(_as_model(model), os.fspath(f), key, format, num_threads)


def save_encrypted_string(
    model: Any, key: str, *, format: Optional[str] = None, num_threads: int = 0  # noqa: A002
) -> bytes:
    """Encrypts a model to bytes."""
    return _native.save_encrypted_bytes(_as_model(model), key, format, num_threads)


def load_encrypted(
    f: Union[str, os.PathLike, IO[bytes]],
    key: str,
    *,
    allow_unauthenticated: bool = True,
    num_threads: int = 0,
    max_memory: Optional[int] = -1,
) -> Any:
    """Decrypts and loads a model; the format is detected. ``allow_unauthenticated=False``
    refuses ``ONNXCRY1`` (which has no integrity protection). ``max_memory`` as for
    ``load``."""
    path, data = _read_source(f)
    if data is not None:
        return load_encrypted_string(
            data,
            key,
            allow_unauthenticated=allow_unauthenticated,
            num_threads=num_threads,
            max_memory=max_memory,
        )
    return _native.load_encrypted_path(path, key, allow_unauthenticated, num_threads, max_memory)


def load_encrypted_string(
    s: bytes,
    key: str,
    *,
    allow_unauthenticated: bool = True,
    num_threads: int = 0,
    max_memory: Optional[int] = -1,
) -> Any:
    """Decrypts and loads a model from bytes."""
    return _native.load_encrypted_bytes(
        bytes(s), key, allow_unauthenticated, num_threads, max_memory
    )


# --- consolidation --------------------------------------------------------------------


class ConsolidatedBuffer(NamedTuple):
    """What ``consolidate_tensors_to_buffer`` did: tensors moved, buffer size in bytes."""

    tensor_count: int
    nbytes: int


def consolidate_tensors_to_buffer(
    model: Any,
    opts: Optional[TensorBufferOptions] = None,
    *,
    raw_data_threshold: int = _UNSET,
    alignment: int = _UNSET,
) -> ConsolidatedBuffer:
    """Moves every payload of at least ``raw_data_threshold`` bytes into one buffer,
    each aligned to ``alignment`` (0: packed); the tensors then share that buffer.
    ``opts`` is any ``TensorBufferOptions`` (a ``ParseOptions`` or ``SerializeOptions``
    too: their thresholds apply), ``TensorBufferOptions()`` by default (every non-empty
    payload, packed); the keyword arguments override it."""
    base = opts if opts is not None else TensorBufferOptions()
    if not isinstance(base, TensorBufferOptions):
        raise TypeError(f"opts: expected a TensorBufferOptions, got {_type_name(base)}")
    o = TensorBufferOptions(
        raw_data_threshold=(
            base.raw_data_threshold if raw_data_threshold is _UNSET else raw_data_threshold
        ),
        alignment=base.alignment if alignment is _UNSET else alignment,
    )
    count, nbytes = _native.consolidate(_as_model(model), o)
    return ConsolidatedBuffer(count, nbytes)


def raw_data_view(tensor: Any) -> Optional[memoryview]:
    """A read-only ``memoryview`` of ``tensor.raw_data`` without a copy (``None`` when
    ``raw_data`` is unset). It shares the bytes the model holds (a mapped file, a
    ``bytes`` object loaded with ``no_copy=True``, a consolidated buffer) and keeps them
    alive; assigning ``raw_data`` later replaces the tensor's bytes, not the view's.

    ``tensor.raw_data`` itself reads as ``bytes``, a copy, as in ``onnx``: the buffer
    protocol on a class of our own needs the stable ABI of Python 3.11, and this
    package supports 3.9."""
    import numpy as np

    payload = _native.tensor_payload(tensor)
    if payload is None:
        return None
    return memoryview(np.asarray(payload))


# Submodules that import on first use: `import onnx_light.onnx` stays quick for a script
# that only loads, edits and saves (numpy, for one, comes in with `helper` and
# `numpy_helper` only). `onnx_light.onnx.helper` and `from onnx_light.onnx import helper`
# work as for any submodule.
_LAZY_SUBMODULES = frozenset(
    {
        "checker",
        "compose",
        "defs",
        "helper",
        "inliner",
        "numpy_helper",
        "parser",
        "printer",
        "shape_inference",
        "utils",
        "version_converter",
    }
)


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    # The parse errors of the text formats, made on first use (see `_errors`).
    if name in ("TextProtoParseError", "JsonParseError"):
        from . import _errors

        return getattr(_errors, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | _LAZY_SUBMODULES)


from . import serialization  # noqa: E402 (the load and save functions above use it)
from . import external_data_helper  # noqa: E402
from . import _tensor_protocol  # noqa: E402 (it needs TensorProto)

_tensor_protocol.install(TensorProto)

from .external_data_helper import (  # noqa: E402 (onnx exports these at the top too)
    convert_model_to_external_data,
    load_external_data_for_model,
    write_external_data_tensors,
)

__all__ = [
    "ConsolidatedBuffer",
    "DataFileExistsError",
    "DecodeError",
    "EncryptionError",
    "EnumTypeWrapper",
    "Error",
    "ExternalDataError",
    "FileError",
    "FilePermissionError",
    "GraphEditError",
    "IR_VERSION",
    "IsDirectoryError",
    "Message",
    "NoSuchFileError",
    "NotDirectoryError",
    "OptionError",
    "ParseOptions",
    "RefusedConnectionError",
    "RepeatedField",
    "SerializeOptions",
    "TensorBufferOptions",
    "TensorDataError",
    "checker",
    "compose",
    "consolidate_tensors_to_buffer",
    "convert_model_to_external_data",
    "defs",
    "external_data_helper",
    "helper",
    "load",
    "load_encrypted",
    "load_external_data_for_model",
    "load_encrypted_string",
    "load_from_string",
    "load_model",
    "load_model_from_string",
    "load_tensor",
    "load_tensor_from_string",
    "numpy_helper",
    "parser",
    "printer",
    "raw_data_view",
    "save",
    "save_encrypted",
    "save_encrypted_string",
    "save_model",
    "save_tensor",
    "serialization",
    "shape_inference",
    "utils",
    "version_converter",
    "write_external_data_tensors",
] + sorted(k.split(".")[-1] for k in _native.MESSAGE_CLASSES if k.count(".") == 1)
