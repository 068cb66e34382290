"""``onnx.onnx_pb``: the messages and enums of ``onnx.proto`` (see ``onnx_ml_pb2``)."""

from .onnx_ml_pb2 import *  # noqa: F403
from .onnx_ml_pb2 import __all__  # noqa: F401
