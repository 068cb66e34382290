"""Writes through the Python API that once crashed, hung or stored wrong values: deep
nesting, writes racing a parse, conversions that read the model being written, values
that are not bytes, assignments that fail half-way."""

import array
import copy
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from onnx_light import onnx as ol


def _if_node(g):
    node = ol.NodeProto(op_type="If", input=["c"], output=["y"])
    attr = node.attribute.add()
    attr.name = "then_branch"
    attr.type = ol.AttributeProto.GRAPH
    attr.g.CopyFrom(g)
    return node


def _nest(levels):
    """A graph holding `levels` nested `If` subgraphs, or the RecursionError that
    stopped the nesting and the number of levels built before it."""
    g = ol.GraphProto(name="g0")
    for i in range(levels):
        try:
            node = _if_node(g)
        except RecursionError as e:
            return g, i, e
        g = ol.GraphProto(name=f"g{i + 1}")
        g.node.append(node)
    return g, levels, None


def test_nesting_stops_at_the_load_limit_with_a_clear_error():
    g, built, err = _nest(4500)
    assert err is not None, "4500 nested graphs were built"
    assert "100 levels" in str(err)
    # Whatever was built compares, copies, serializes and loads back.
    m = ol.ModelProto(graph=g)
    assert m == m
    assert copy.deepcopy(m) == m
    data = m.SerializeToString()
    assert ol.load_from_string(data) == m
    assert 25 <= built < 40  # three messages per level, a hundred in all


def test_every_way_of_nesting_is_bounded():
    g, _, _ = _nest(200)
    m = ol.ModelProto(graph=g)
    deepest = m.graph
    while deepest.node:
        deepest = deepest.node[0].attribute[0].g
    with pytest.raises(RecursionError):
        deepest.node.add().attribute.add().g.node.add().name = "x"
    before = m.SerializeToString()
    with pytest.raises(RecursionError):
        deepest.node.append(_if_node(ol.GraphProto()))
    with pytest.raises(RecursionError):
        deepest.node.extend([ol.NodeProto(), _if_node(ol.GraphProto())])
    with pytest.raises(RecursionError):
        m.graph.node[0].attribute[0].g.CopyFrom(g)
    with pytest.raises(RecursionError):
        m.graph.node[0].attribute[0].g.MergeFrom(g)
    with pytest.raises(Exception):
        m.graph.node[0].attribute[0].g.ParseFromString(g.SerializeToString())
    assert m.SerializeToString() == before, "a refused write changed the model"


def test_a_write_through_a_view_lands_where_the_view_reads():
    def model(name, n):
        m = ol.ModelProto()
        m.graph.node.extend([ol.NodeProto(name=name, input=["a", "b"])] * n)
        return m

    m = model("old", 1)
    # A parse long enough that writes keep arriving while it holds the model.
    other = model("new", 2000).graph.SerializeToString()
    stop = threading.Event()
    parses = []
    wrong = []

    def parse():
        while not stop.is_set():
            m.graph.ParseFromString(other)
            parses.append(1)

    t = threading.Thread(target=parse)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between any two steps of a write
    t.start()
    try:
        i = 0
        deadline = time.monotonic() + 20
        while len(parses) < 400 and time.monotonic() < deadline:
            v = m.graph.node[0]
            x = ol.NodeProto(name=f"x{i}")
            v.CopyFrom(x)
            if v.name != x.name:
                wrong.append((i, v.name))
            i += 1
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)
    assert not wrong, f"{len(wrong)} writes of {i} landed elsewhere: {wrong[:5]}"


_READS_THE_MODEL = """
from onnx_light import onnx as ol
m = ol.ModelProto(ir_version=3)
class Reads:
    def __index__(self):
        return m.ir_version + 4
    def __float__(self):
        return float(m.ir_version)
m.ir_version = Reads()
t = m.graph.initializer.add()
t.dims.append(Reads())
t.dims.extend([Reads(), Reads()])
t.dims[0] = Reads()
t.dims = [Reads()]
a = m.graph.node.add().attribute.add()
a.f = Reads()
print(m.ir_version, list(m.graph.initializer[0].dims), m.graph.node[0].attribute[0].f)
"""


def test_values_that_read_the_model_do_not_deadlock():
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_READS_THE_MODEL)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["7", "[11]", "7.0"]


@pytest.mark.parametrize(
    "value",
    [
        np.array([1, 2, 3], np.int32),
        np.array([1, 2, 300], np.int32),
        np.frombuffer(b"ab", np.uint8),
        memoryview(array.array("i", [1, 2])),
        memoryview(b"ab"),
        bytearray(b"ab"),
        "ab",
        [1, 2],
    ],
    ids=lambda v: type(v).__name__,
)
def test_bytes_fields_take_bytes_only(value):
    t = ol.TensorProto(raw_data=b"kept")
    with pytest.raises(TypeError):
        t.raw_data = value
    with pytest.raises(TypeError):
        t.string_data.append(value)
    assert t.raw_data == b"kept" and len(t.string_data) == 0


def test_bytes_subclasses_are_bytes():
    t = ol.TensorProto()
    t.raw_data = np.bytes_(b"xy")
    assert t.raw_data == b"xy"


def test_a_failed_assignment_changes_nothing():
    t = ol.TensorProto(dims=[5, 6])
    with pytest.raises(TypeError):
        t.dims = [1, 2, "x"]
    assert list(t.dims) == [5, 6]
    with pytest.raises(TypeError):
        t.dims.extend([1, "x"])
    assert list(t.dims) == [5, 6]
    with pytest.raises(TypeError):
        t.dims[0:1] = [7, "x"]
    assert list(t.dims) == [5, 6]
    with pytest.raises(ValueError):
        t.dims[::2] = [2**70]
    assert list(t.dims) == [5, 6]
    g = ol.GraphProto()
    g.node.add(name="a")
    with pytest.raises(TypeError):
        g.node = [ol.NodeProto(name="b"), ol.TensorProto()]
    with pytest.raises(TypeError):
        g.node.extend([ol.NodeProto(name="b"), 3])
    assert [n.name for n in g.node] == ["a"]
