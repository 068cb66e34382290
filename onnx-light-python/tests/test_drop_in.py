"""A script written for `onnx`, run with only the import changed: load, inspect, edit,
build, save (plain and external), and the outputs compared with what `onnx` produced."""

import numpy as np
import onnx as reference
import pytest


def user_script(onnx, workdir, source):
    """Typical user code; `onnx` is whichever module is passed in."""
    from_array = onnx.numpy_helper.from_array
    to_array = onnx.numpy_helper.to_array
    model = onnx.load(source)
    report = []
    for node in model.graph.node:
        report.append((node.op_type, list(node.input), list(node.output)))
        for attr in node.attribute:
            report.append((attr.name, onnx.helper.get_attribute_value(attr)))
    for vi in model.graph.input:
        report.append([d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim])
    weights = {t.name: to_array(t) for t in model.graph.initializer}
    report.append(sorted((k, float(v.sum())) for k, v in weights.items()))
    # Edits: rename, append a node, replace an initializer, delete an entry.
    model.graph.node[0].name = "renamed"
    model.graph.node.append(onnx.helper.make_node("Identity", ["Y"], ["Z"], name="extra"))
    model.graph.output[0].name = "Z"
    model.graph.initializer[0].CopyFrom(from_array(weights["w0"] * 2, "w0"))
    del model.graph.node[1:2]
    model.graph.node[1].input[0] = "h0"
    del model.metadata_props[:]
    model.ir_version = 10  # what the pinned onnxruntime accepts
    edited = model.SerializeToString()
    onnx.save(model, str(workdir / "plain.onnx"))
    onnx.save_model(model, str(workdir / "ext.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="ext.data", size_threshold=1024)
    return report, edited


def test_user_script_gives_the_same_results(tmp_path, ref_bytes):
    import onnx_light.onnx as light

    src = tmp_path / "src.onnx"
    src.write_bytes(ref_bytes)
    (tmp_path / "ref").mkdir()
    (tmp_path / "light").mkdir()
    ref_report, ref_out = user_script(reference, tmp_path / "ref", str(src))
    our_report, our_out = user_script(light, tmp_path / "light", str(src))
    assert our_report == ref_report
    assert our_out == ref_out
    assert (tmp_path / "light" / "plain.onnx").read_bytes() == (tmp_path / "ref" / "plain.onnx").read_bytes()
    a = reference.load(str(tmp_path / "light" / "ext.onnx"))
    b = reference.load(str(tmp_path / "ref" / "ext.onnx"))
    assert a.SerializeToString() == b.SerializeToString()
    ort = pytest.importorskip("onnxruntime")
    x = np.ones((64, 64), np.float32)
    outs = []
    for d in ["ref", "light"]:
        sess = ort.InferenceSession(str(tmp_path / d / "ext.onnx"), providers=["CPUExecutionProvider"])
        outs.append(sess.run(None, {"X": x})[0])
    np.testing.assert_array_equal(outs[0], outs[1])


def test_the_package_has_its_version():
    import importlib.metadata

    import onnx_light

    assert onnx_light.__version__ == importlib.metadata.version("onnx_light")
    assert onnx_light.__version__[0].isdigit()
