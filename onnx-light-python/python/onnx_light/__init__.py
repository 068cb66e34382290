"""onnx_light: load, edit and save ONNX models without protobuf.

Use ``import onnx_light.onnx as onnx`` in place of ``import onnx``.
"""

from . import onnx

__all__ = ["onnx"]
