"""Shared fixtures: small models built with the official `onnx` package, so that each
test compares onnx_light against the reference on the same bytes."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def build_reference_model(num_nodes: int = 4, weight_elems: int = 4096) -> onnx.ModelProto:
    """A chain of Add nodes with one float weight each, plus a Conv-style node with
    attributes of several kinds, built with the official package."""
    nodes = []
    inits = []
    prev = "X"
    for i in range(num_nodes):
        w = np.arange(weight_elems, dtype=np.float32).reshape(-1, 64) * (i + 1)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = f"h{i}"
        nodes.append(helper.make_node("Add", [prev, f"w{i}"], [out], name=f"add{i}"))
        prev = out
    nodes.append(
        helper.make_node(
            "Transpose", [prev], ["Y"], name="t", perm=[1, 0], doc_string="swap"
        )
    )
    small = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.int64), "small")
    inits.append(small)
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [weight_elems // 64, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, "N"])],
        inits,
    )
    model = helper.make_model(graph, producer_name="tests", opset_imports=[helper.make_opsetid("", 17)])
    model.metadata_props.add(key="k", value="v")
    return model


@pytest.fixture
def ref_model() -> onnx.ModelProto:
    return build_reference_model()


@pytest.fixture
def ref_bytes(ref_model) -> bytes:
    return ref_model.SerializeToString()
