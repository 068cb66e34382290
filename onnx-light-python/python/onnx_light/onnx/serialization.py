"""The formats ``load`` / ``save`` read and write, as ``onnx.serialization`` has them.

``registry.get(format)`` gives the serializer of a format, ``registry.register(s)``
adds one, ``registry.get_format_from_file_extension(".json")`` names the format of an
extension. Four are built in, with ``onnx``'s names and extensions:

* ``"protobuf"`` (``.onnx``, ``.pb``): the binary encoding; ``load`` and ``save`` read
  and write it with every option of this package (external data, no-copy, limits).
* ``"textproto"`` (``.textproto``, ``.prototxt``, ``.txtpb``, ``.pbtxt``): protobuf's
  text format, the characters ``google.protobuf.text_format`` writes and reads.
* ``"json"`` (``.json``, ``.onnxjson``): protobuf's JSON mapping with the proto field
  names, as ``google.protobuf.json_format`` writes and reads it.
* ``"onnxtxt"`` (``.onnxtxt``, ``.onnxtext``): the ONNX text syntax of ``printer`` and
  ``parser`` (models, graphs, functions and nodes).

The text encodings are read and written by the Rust core (``onnx_light::formats``);
protobuf itself is not needed. Text that does not parse raises ``TextProtoParseError``
or ``JsonParseError`` (``ValueError``; with protobuf installed also
``google.protobuf.text_format.ParseError`` / ``json_format.ParseError``, as ``onnx``
raises).
"""

from __future__ import annotations

import warnings
from typing import Any, Collection, Protocol, TypeVar

from .. import _onnx_light as _native

__all__ = [
    "registry",
]

_Proto = TypeVar("_Proto")
# The encoding of the text formats.
_ENCODING = "utf-8"


class ProtoSerializer(Protocol):
    """A serializer-deserializer to and from in-memory messages."""

    # The format's name, e.g. "protobuf".
    supported_format: str
    # The file extensions of the format, with the dot, e.g. frozenset({".onnx", ".pb"}).
    file_extensions: Collection[str]

    def serialize_proto(self, proto: _Proto) -> Any:
        """Serializes a message."""

    def deserialize_proto(self, serialized: Any, proto: _Proto) -> _Proto:
        """Reads a serialized message into ``proto`` and returns it."""


class _Registry:
    def __init__(self) -> None:
        self._serializers: dict[str, ProtoSerializer] = {}
        self._extension_to_format: dict[str, str] = {}

    def register(self, serializer: ProtoSerializer) -> None:
        """Adds (or replaces) the serializer of ``serializer.supported_format`` and maps
        its file extensions to it."""
        self._serializers[serializer.supported_format] = serializer
        self._extension_to_format.update(
            dict.fromkeys(serializer.file_extensions, serializer.supported_format)
        )

    def get(self, fmt: str) -> ProtoSerializer:
        """The serializer of format ``fmt``; ``ValueError`` for a format nobody
        registered."""
        try:
            return self._serializers[fmt]
        except KeyError:
            raise ValueError(
                f"Unsupported format: '{fmt}'. Supported formats are: {self._serializers.keys()}"
            ) from None

    def get_format_from_file_extension(self, file_extension: str) -> str | None:
        """The format of a file extension (with its dot), or None."""
        return self._extension_to_format.get(file_extension)


def _text(serialized: Any) -> str:
    if not isinstance(serialized, (bytes, str)):
        raise TypeError(
            f"Parameter 'serialized' must be bytes or str, but got type: {type(serialized)}"
        )
    if isinstance(serialized, bytes):
        return serialized.decode(_ENCODING)
    return serialized


def _proto_name(proto: Any) -> str:
    name = getattr(proto, "_proto_name", None)
    if name is None:
        name = getattr(getattr(type(proto), "DESCRIPTOR", None), "full_name", None)
    if name not in _native.MESSAGE_CLASSES:
        raise TypeError(f"expected an ONNX message, got {type(proto).__qualname__}")
    return name


def _ours(proto: Any) -> Any:
    """``proto`` as this package's message (one of the ``onnx`` package's is converted
    through its bytes)."""
    if isinstance(proto, _native.Message):
        return proto
    return _native.decode_message(_proto_name(proto), proto.SerializeToString())


def _merge_into(proto: Any, parsed: Any) -> Any:
    """Merges ``parsed`` into ``proto`` (what protobuf's text parsers do with the
    message they are given) and returns ``proto``."""
    if isinstance(proto, _native.Message):
        proto.MergeFrom(parsed)
    else:
        proto.MergeFromString(parsed.SerializeToString())
    return proto


class _ProtobufSerializer(ProtoSerializer):
    """The binary protobuf encoding."""

    supported_format = "protobuf"
    file_extensions = frozenset({".onnx", ".pb"})

    def serialize_proto(self, proto: Any) -> bytes:
        if hasattr(proto, "SerializeToString") and callable(proto.SerializeToString):
            return proto.SerializeToString()
        raise TypeError(f"No SerializeToString method is detected.\ntype is {type(proto)}")

    def deserialize_proto(self, serialized: bytes, proto: Any) -> Any:
        if not isinstance(serialized, bytes):
            raise TypeError(
                f"Parameter 'serialized' must be bytes, but got type: {type(serialized)}"
            )
        proto.ParseFromString(serialized)
        return proto


class _TextProtoSerializer(ProtoSerializer):
    """protobuf's text format."""

    supported_format = "textproto"
    file_extensions = frozenset({".txtpb", ".textproto", ".prototxt", ".pbtxt"})

    def serialize_proto(self, proto: Any) -> bytes:
        return _native.message_to_text(_ours(proto), "textproto").encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        parsed = _native.message_from_text(_proto_name(proto), _text(serialized), "textproto")
        return _merge_into(proto, parsed)


class _JsonSerializer(ProtoSerializer):
    """protobuf's JSON mapping, with the proto field names."""

    supported_format = "json"
    file_extensions = frozenset({".json", ".onnxjson"})

    def serialize_proto(self, proto: Any) -> bytes:
        return _native.message_to_text(_ours(proto), "json").encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        parsed = _native.message_from_text(_proto_name(proto), _text(serialized), "json")
        return _merge_into(proto, parsed)


class _TextualSerializer(ProtoSerializer):
    """The ONNX text syntax (``printer`` / ``parser``)."""

    supported_format = "onnxtxt"
    file_extensions = frozenset({".onnxtxt", ".onnxtext"})

    def serialize_proto(self, proto: Any) -> bytes:
        from . import printer

        return printer.to_text(proto).encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        from . import parser

        warnings.warn(
            "The onnxtxt format is experimental. Please report any errors to the ONNX GitHub repository.",
            stacklevel=2,
        )
        text = _text(serialized)
        parse = {
            "onnx.ModelProto": parser.parse_model,
            "onnx.GraphProto": parser.parse_graph,
            "onnx.FunctionProto": parser.parse_function,
            "onnx.NodeProto": parser.parse_node,
        }.get(getattr(proto, "_proto_name", None))
        if parse is None:
            raise ValueError(f"Unsupported proto type: {type(proto)}")
        return parse(text)


# The built-in binary serializer: ``load`` and ``save`` read and write this format
# themselves (with their options) while it is the one registered for "protobuf".
_PROTOBUF = _ProtobufSerializer()

registry = _Registry()
registry.register(_PROTOBUF)
registry.register(_TextProtoSerializer())
registry.register(_JsonSerializer())
registry.register(_TextualSerializer())
