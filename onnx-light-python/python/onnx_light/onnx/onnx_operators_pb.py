"""``onnx.onnx_operators_pb``: the messages of ``onnx-operators.proto``, the package's
own classes."""

from . import OperatorProto, OperatorSetProto

__all__ = ["OperatorProto", "OperatorSetProto"]
