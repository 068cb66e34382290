"""A read-only subset of protobuf's descriptor API (``Message.DESCRIPTOR``,
``ListFields`` pairs), built from the schema tables of the native module: enough for
code that walks a message by its fields (``fd.name``, ``fd.type``, ``fd.label``,
``fd.message_type``)."""

from __future__ import annotations

from typing import Any, Optional

from .. import _onnx_light as _native

# protobuf's type numbers for the scalar kinds of the schema.
_SCALAR_TYPES = {
    "double": 1,
    "float": 2,
    "int64": 3,
    "uint64": 4,
    "int32": 5,
    "bool": 8,
    "string": 9,
    "bytes": 12,
    "uint32": 13,
}


class EnumValueDescriptor:
    def __init__(self, name: str, number: int):
        self.name = name
        self.number = number


class EnumDescriptor:
    """An enum type: ``name``, ``full_name``, ``values_by_name``, ``values_by_number``."""

    def __init__(self, full_name: str, values: dict[str, int]):
        self.full_name = full_name
        self.name = full_name.rsplit(".", 1)[-1]
        self.values = [EnumValueDescriptor(k, v) for k, v in values.items()]
        self.values_by_name = {v.name: v for v in self.values}
        self.values_by_number: dict[int, EnumValueDescriptor] = {}
        for v in self.values:
            self.values_by_number.setdefault(v.number, v)


class FieldDescriptor:
    """One field: ``name``, ``full_name``, ``number``, ``label``, ``type``,
    ``message_type`` / ``enum_type`` and ``containing_type``."""

    LABEL_OPTIONAL = 1
    LABEL_REQUIRED = 2
    LABEL_REPEATED = 3
    TYPE_DOUBLE = 1
    TYPE_FLOAT = 2
    TYPE_INT64 = 3
    TYPE_UINT64 = 4
    TYPE_INT32 = 5
    TYPE_BOOL = 8
    TYPE_STRING = 9
    TYPE_MESSAGE = 11
    TYPE_BYTES = 12
    TYPE_UINT32 = 13
    TYPE_ENUM = 14

    def __init__(self, containing: "Descriptor", name: str, number: int, repeated: bool, kind: str):
        self.containing_type = containing
        self.name = name
        self.full_name = f"{containing.full_name}.{name}"
        self.number = number
        self.label = self.LABEL_REPEATED if repeated else self.LABEL_OPTIONAL
        self._kind = kind
        if kind in _SCALAR_TYPES:
            self.type = _SCALAR_TYPES[kind]
        elif kind in _native.ENUMS:
            self.type = self.TYPE_ENUM
        else:
            self.type = self.TYPE_MESSAGE

    @property
    def is_repeated(self) -> bool:
        return self.label == self.LABEL_REPEATED

    @property
    def message_type(self) -> Optional["Descriptor"]:
        return descriptor(self._kind) if self.type == self.TYPE_MESSAGE else None

    @property
    def enum_type(self) -> Optional[EnumDescriptor]:
        if self.type != self.TYPE_ENUM:
            return None
        return EnumDescriptor(self._kind, _native.ENUMS[self._kind])

    def __repr__(self) -> str:
        return f"<FieldDescriptor {self.full_name}>"


class Descriptor:
    """A message type: ``name``, ``full_name``, ``fields``, ``fields_by_name``,
    ``fields_by_number``."""

    def __init__(self, full_name: str):
        self.full_name = full_name
        self.name = full_name.rsplit(".", 1)[-1]
        self.fields = [FieldDescriptor(self, *f) for f in _native.MESSAGE_FIELDS[full_name]]
        self.fields_by_name = {f.name: f for f in self.fields}
        self.fields_by_number = {f.number: f for f in self.fields}

    @property
    def _concrete_class(self) -> Any:
        return _native.MESSAGE_CLASSES[self.full_name]

    def __repr__(self) -> str:
        return f"<Descriptor {self.full_name}>"


_DESCRIPTORS: dict[str, Descriptor] = {}


def descriptor(full_name: str) -> Descriptor:
    """The descriptor of a message type, made once."""
    d = _DESCRIPTORS.get(full_name)
    if d is None:
        d = _DESCRIPTORS[full_name] = Descriptor(full_name)
    return d
