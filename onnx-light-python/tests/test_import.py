"""Importing the package: quick for a script that only loads, edits and saves (no numpy
until an array is asked for), with every submodule reachable as in `onnx`."""

import subprocess
import sys
import textwrap

import onnx
from onnx import TensorProto, helper, numpy_helper
import numpy as np


def run(code: str) -> str:
    """Runs `code` in a fresh interpreter (this one's path), returns its stdout."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)},
    )
    return out.stdout.strip()


def small_model(path) -> None:
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [w],
    )
    onnx.save(helper.make_model(g), str(path))


def test_load_edit_save_without_numpy(tmp_path):
    path = tmp_path / "m.onnx"
    small_model(path)
    out = run(
        f"""
        import sys
        import onnx_light.onnx as ol
        m = ol.load({str(path)!r})
        m.graph.node[0].name = "renamed"
        ol.save(m, {str(tmp_path / "out.onnx")!r})
        print(sorted(k for k in ("numpy", "ml_dtypes") if k in sys.modules))
        """
    )
    assert out == "[]"
    saved = onnx.load(str(tmp_path / "out.onnx"))
    assert saved.graph.node[0].name == "renamed"


def test_submodules_reachable_as_attributes_and_imports(tmp_path):
    path = tmp_path / "m.onnx"
    small_model(path)
    out = run(
        f"""
        import onnx_light.onnx as ol
        from onnx_light.onnx import numpy_helper
        names = ["checker", "compose", "defs", "external_data_helper", "helper",
                 "inliner", "numpy_helper", "parser", "printer", "shape_inference",
                 "utils", "version_converter"]
        assert all(n in dir(ol) for n in names), [n for n in names if n not in dir(ol)]
        assert all(getattr(ol, n).__name__ == "onnx_light.onnx." + n for n in names)
        assert numpy_helper is ol.numpy_helper
        m = ol.load({str(path)!r})
        print(ol.numpy_helper.to_array(m.graph.initializer[0]).sum())
        print(ol.helper.make_node("Relu", ["a"], ["b"]).op_type)
        """
    )
    assert out.splitlines() == ["15.0", "Relu"]


def test_tensor_protocol_before_numpy_is_imported(tmp_path):
    # The protocol's methods are on the class from the start; numpy comes with the
    # first array.
    path = tmp_path / "m.onnx"
    small_model(path)
    out = run(
        f"""
        import sys
        import onnx_light.onnx as ol
        t = ol.load({str(path)!r}).graph.initializer[0]
        assert "numpy" not in sys.modules
        print(t.numpy().tolist(), t.nbytes, t.size)
        import numpy as np
        print(np.asarray(t).shape)
        """
    )
    assert out.splitlines() == ["[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] 24 6", "(2, 3)"]


def test_unknown_attribute_still_raises():
    out = run(
        """
        import onnx_light.onnx as ol
        try:
            ol.no_such_thing
        except AttributeError as e:
            print(e)
        """
    )
    assert out == "module 'onnx_light.onnx' has no attribute 'no_such_thing'"
