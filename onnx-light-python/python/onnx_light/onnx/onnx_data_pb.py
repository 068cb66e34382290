"""``onnx.onnx_data_pb``: the messages of ``onnx-data.proto`` (sequences, maps and
optionals), the package's own classes."""

from . import MapProto, OptionalProto, SequenceProto

__all__ = ["MapProto", "OptionalProto", "SequenceProto"]
