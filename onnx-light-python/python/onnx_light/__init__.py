"""onnx_light: load, edit and save ONNX models without protobuf.

Use ``import onnx_light.onnx as onnx`` in place of ``import onnx``.
"""

from . import onnx
from ._onnx_light import __version__

__all__ = ["__version__", "onnx"]
