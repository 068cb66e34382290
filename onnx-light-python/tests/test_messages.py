"""Message classes: the protobuf Python API, byte-identical to `onnx`, live views."""

import copy
import pickle

import onnx
import pytest

import onnx_light.onnx as ol


def test_round_trip_is_byte_identical(ref_bytes):
    m = ol.ModelProto.FromString(ref_bytes)
    assert m.SerializeToString() == ref_bytes
    assert m.ByteSize() == len(ref_bytes)
    assert onnx.ModelProto.FromString(m.SerializeToString()) == onnx.ModelProto.FromString(ref_bytes)


def test_field_reads_match_onnx(ref_model, ref_bytes):
    m = ol.load_model_from_string(ref_bytes)
    assert m.ir_version == ref_model.ir_version
    assert m.producer_name == "tests"
    assert [n.op_type for n in m.graph.node] == [n.op_type for n in ref_model.graph.node]
    assert list(m.graph.node[0].input) == list(ref_model.graph.node[0].input)
    assert m.graph.node[-1].attribute[0].ints == [1, 0]
    assert m.graph.node[-1].attribute[0].type == ol.AttributeProto.INTS
    assert m.graph.input[0].type.tensor_type.elem_type == ol.TensorProto.FLOAT
    dims = m.graph.output[0].type.tensor_type.shape.dim
    assert dims[0].dim_value == 64 and dims[1].dim_param == "N"
    assert dims[1].WhichOneof("value") == "dim_param"
    assert m.opset_import[0].version == 17
    assert m.metadata_props[0].key == "k"


def test_nested_writes_change_the_model(ref_bytes):
    m = ol.load_model_from_string(ref_bytes)
    m.graph.node[0].input[1] = "renamed"
    node = m.graph.node[1]
    node.name = "second"
    node.attribute.add(name="alpha", f=0.5, type=ol.AttributeProto.FLOAT)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    ref = onnx.ModelProto.FromString(m.SerializeToString())
    assert ref.graph.node[0].input[1] == "renamed"
    assert ref.graph.node[1].name == "second"
    assert ref.graph.node[1].attribute[0].f == 0.5
    assert ref.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    # The same edits through onnx give the same bytes.
    ref2 = onnx.ModelProto.FromString(ref_bytes)
    ref2.graph.node[0].input[1] = "renamed"
    ref2.graph.node[1].name = "second"
    a = ref2.graph.node[1].attribute.add()
    a.name, a.f, a.type = "alpha", 0.5, onnx.AttributeProto.FLOAT
    ref2.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    assert m.SerializeToString() == ref2.SerializeToString()


def test_writes_create_unset_parents():
    m = ol.ModelProto()
    assert not m.HasField("graph")
    g = m.graph
    assert not m.HasField("graph")  # reading does not set it
    g.name = "g"
    assert m.HasField("graph") and m.graph.name == "g"
    ref = onnx.ModelProto()
    ref.graph.name = "g"
    assert m.SerializeToString() == ref.SerializeToString()


def test_views_outlive_their_parent():
    m = ol.ModelProto()
    m.graph.node.add(op_type="Relu", input=["x"])
    node = m.graph.node[0]
    del m
    assert node.op_type == "Relu"
    node.op_type = "Sigmoid"
    assert node.op_type == "Sigmoid"


def _graph(mod, n=5):
    g = mod.GraphProto(name="g")
    for i in range(n):
        node = g.node.add(name=f"n{i}", op_type="Relu", input=[f"x{i}"], output=[f"y{i}"])
        node.attribute.add(name="alpha", f=float(i), type=mod.AttributeProto.FLOAT)
    return g


def _list_scenarios(mod):
    """Views held across list changes, observed the same way for any message module."""
    seen = []
    g = _graph(mod)
    later, removed, attr, inputs = g.node[3], g.node[0], g.node[4].attribute[0], g.node[2].input
    twin = g.node[0]
    del g.node[0]  # later elements shift; the removed one goes with its views
    seen.append((later.name, removed.name, attr.f, list(inputs)))
    later.name = "renamed"  # writes through a shifted view reach the model
    removed.name = "gone"  # ... and through a removed one, only the removed element
    seen.append(([n.name for n in g.node], twin.name))
    g.node.insert(0, mod.NodeProto(name="first"))
    seen.append((later.name, attr.f, [n.name for n in g.node]))
    popped = g.node.pop(1)
    popped.name = "popped"
    seen.append((popped.name, [n.name for n in g.node], later.name))
    kept = g.node[1]
    g.ClearField("node")
    seen.append((kept.name, len(g.node)))
    g = _graph(mod)
    kept, kept_attr = g.node[2], g.node[2].attribute[0]
    g.CopyFrom(_graph(mod, 2))
    kept_attr.f = 9.0
    seen.append((kept.name, kept_attr.f, kept.attribute[0].f, [n.name for n in g.node]))
    g = _graph(mod)
    kept = g.node[1]
    del g.node[1:3]
    seen.append((kept.name, [n.name for n in g.node]))
    m = mod.ModelProto()
    m.graph.CopyFrom(_graph(mod))
    kept = m.graph.node[4]
    m.ParseFromString(mod.ModelProto().SerializeToString())
    seen.append((kept.name, len(m.graph.node)))
    g = _graph(mod)
    first, last_attr = g.node[0], g.node[4].attribute[0]
    g.node.sort(key=lambda n: -n.attribute[0].f)  # views follow their elements
    first.name = "was first"
    last_attr.f = 40.0
    seen.append(([n.name for n in g.node], g.node[0].attribute[0].f, first.name))
    g.node.reverse()
    first.op_type = "Tanh"
    seen.append(([(n.name, n.op_type) for n in g.node], last_attr.f))
    g.node[0].input.extend(["c", "a", "b"])
    g.node[0].input.sort(reverse=True)
    seen.append(list(g.node[0].input))
    return seen


def test_views_follow_their_element_as_in_onnx():
    assert _list_scenarios(ol) == _list_scenarios(onnx)


def test_a_failed_parse_leaves_the_model_and_its_views_alone():
    g = _graph(ol)
    n = g.node[1]
    with pytest.raises(ol.DecodeError):
        g.ParseFromString(b"\x0a\xff")  # a field longer than the input
    assert [x.name for x in g.node] == [f"n{i}" for i in range(5)]
    n.name = "still live"
    assert g.node[1].name == "still live"


def test_views_of_a_walked_model_do_not_pile_up():
    g = _graph(ol, 2000)
    for _ in range(20):
        for node in g.node:
            _ = node.attribute[0].f
    kept = g.node[1999]
    del g.node[0]
    assert kept.name == "n1999" and len(g.node) == 1999


def test_repeated_scalars_behave_like_lists():
    n = ol.NodeProto()
    n.input.append("a")
    n.input.extend(["b", "c", "d"])
    n.input.insert(0, "z")
    assert list(n.input) == ["z", "a", "b", "c", "d"]
    assert n.input[-1] == "d" and n.input[1:3] == ["a", "b"]
    del n.input[0]
    n.input.remove("c")
    assert n.input == ["a", "b", "d"]
    n.input[1:2] = ["x", "y"]
    assert n.input == ["a", "x", "y", "d"]
    del n.input[::2]
    assert n.input == ["x", "d"]
    assert len(n.input) == 2 and "x" in n.input
    with pytest.raises(IndexError):
        n.input[5]
    with pytest.raises(TypeError):
        n.input.append(3)
    n.input.extend(["b", "a"])
    n.input.sort()
    assert n.input == ["a", "b", "d", "x"]
    n.input.reverse()
    assert n.input == ["x", "d", "b", "a"]
    with pytest.raises(TypeError):
        n.input.sort(len)  # key is keyword-only, as in protobuf


def test_sort_keys_that_fail_or_edit_the_list_leave_it_alone():
    g = _graph(ol)
    with pytest.raises(TypeError):
        g.node.sort()  # messages do not order, as in protobuf
    with pytest.raises(ZeroDivisionError):
        g.node.sort(key=lambda n: 1 / 0)

    def shrinking(n):
        if len(g.node) == 5:
            del g.node[0]
        return n.name

    with pytest.raises(RuntimeError, match="changed while sorting"):
        g.node.sort(key=shrinking)
    assert [n.name for n in g.node] == ["n1", "n2", "n3", "n4"]


def test_integers_out_of_range_are_value_errors_as_in_protobuf():
    for mod in (onnx, ol):
        m = mod.ModelProto()
        with pytest.raises(ValueError):
            m.ir_version = 2**70
        with pytest.raises(ValueError):
            mod.TensorProto().dims.append(-(2**64))
        with pytest.raises(TypeError):
            m.ir_version = "7"
        with pytest.raises(TypeError):
            m.ir_version = 7.0


def test_repeated_messages_copy_on_append():
    g = ol.GraphProto()
    n = ol.NodeProto(op_type="Relu")
    g.node.append(n)
    n.op_type = "changed"
    assert g.node[0].op_type == "Relu"
    g.node.extend([ol.NodeProto(name="a"), ol.NodeProto(name="b")])
    assert [x.name for x in g.node] == ["", "a", "b"]
    g.node.insert(0, ol.NodeProto(name="first"))
    assert g.node[0].name == "first"
    popped = g.node.pop()
    assert popped.name == "b" and len(g.node) == 3
    with pytest.raises(TypeError):
        g.node.append(ol.TensorProto())


def test_has_clear_copy_merge():
    t = ol.TensorProto(name="t", dims=[2, 3])
    assert t.HasField("name") and not t.HasField("raw_data")
    t.ClearField("name")
    assert not t.HasField("name") and t.name == ""
    u = ol.TensorProto()
    u.CopyFrom(t)
    assert u == t
    u.MergeFrom(ol.TensorProto(dims=[4], name="x"))
    ref = onnx.TensorProto(dims=[2, 3])
    ref.MergeFrom(onnx.TensorProto(dims=[4], name="x"))
    assert u.SerializeToString() == ref.SerializeToString()
    with pytest.raises(ValueError):
        t.HasField("dims")
    with pytest.raises(AttributeError):
        t.no_such_field


def test_enum_constants_and_wrappers():
    assert ol.TensorProto.FLOAT == onnx.TensorProto.FLOAT
    assert ol.TensorProto.EXTERNAL == onnx.TensorProto.EXTERNAL
    assert ol.AttributeProto.GRAPH == onnx.AttributeProto.GRAPH
    assert ol.TensorProto.DataType.Name(16) == "BFLOAT16"
    assert ol.TensorProto.DataType.Value("INT64") == 7
    assert ol.TensorProto.Segment is not None and ol.TypeProto.Tensor is not None


def test_unknown_fields_are_kept():
    ref = onnx.NodeProto(op_type="Relu")
    data = ref.SerializeToString() + bytes([0xF8, 0x06, 0x2A])  # field 111, varint 42
    n = ol.NodeProto.FromString(data)
    assert n.SerializeToString() == data


def test_repr_matches_protobuf_text_format(ref_model, ref_bytes):
    m = ol.load_model_from_string(ref_bytes)
    assert str(m.graph.node[0]) == str(ref_model.graph.node[0])
    assert str(m.graph.input[0]) == str(ref_model.graph.input[0])


def test_copy_pickle_and_equality(ref_bytes):
    m = ol.load_model_from_string(ref_bytes)
    c = copy.deepcopy(m)
    assert c == m
    c.graph.name = "other"
    assert c != m
    p = pickle.loads(pickle.dumps(m))
    assert p.SerializeToString() == ref_bytes
    assert isinstance(m.graph.node[0], ol.NodeProto)


def test_hostile_bytes_raise_typed_errors():
    with pytest.raises(ol.DecodeError):
        ol.ModelProto.FromString(b"\x0a\xff\xff\xff\xff\x0f")
    with pytest.raises(ol.Error):
        ol.load_model_from_string(b"\x3a\x05\x0a\x03abc\x00")
    for data in [b"\xff" * 11, b"\x07", b"\x0a", bytes(range(256))]:
        with pytest.raises(ol.Error):
            ol.ModelProto.FromString(data)


def _backend_models():
    import pathlib

    root = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data"
    return sorted(root.rglob("*.onnx")), sorted(root.rglob("*.pb"))


def test_onnx_backend_models_match_onnx_byte_and_text():
    """Every model the `onnx` package ships for its backend tests: the same bytes back,
    the same text format as onnx's `str`, and equal after onnx re-parses ours."""
    paths, tensors = _backend_models()
    assert len(paths) > 100 and len(tensors) > 100
    for path in tensors:
        data = path.read_bytes()
        try:
            ref = onnx.TensorProto.FromString(data)
        except Exception:
            continue  # a sequence or optional, not a tensor
        ours = ol.TensorProto.FromString(data)
        assert ours.SerializeToString() == ref.SerializeToString(), path
    for path in paths:
        data = path.read_bytes()
        ours = ol.load(path)
        ref = onnx.load_model_from_string(data)
        assert ours.SerializeToString() == data, path
        assert str(ours) == str(ref), path
        assert ours.ByteSize() == ref.ByteSize(), path


@pytest.mark.parametrize(
    "value",
    [1.0, 0.1, 1e-5, 1e20, 1.5, 100.0, 123456789.0, 1e16, 1e15, 1e-4, -2.0, 3.4028234663852886e38,
     float("inf"), float("-inf"), 1e-45, -0.0],
)
def test_text_format_of_floats_matches_protobuf(value):
    assert str(ol.AttributeProto(f=value)) == str(onnx.AttributeProto(f=value))
    assert str(ol.TensorProto(double_data=[value])) == str(onnx.TensorProto(double_data=[value]))
    s = ol.AttributeProto(s=b"it's \"q\" \xff\n")
    assert str(s) == str(onnx.AttributeProto(s=b"it's \"q\" \xff\n"))


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ld(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def test_deep_nesting_is_an_error_not_a_crash():
    inner = b""
    for _ in range(5000):  # graph.node -> node.attribute -> attribute.g -> graph ...
        inner = _ld(1, _ld(5, _ld(6, inner)))
    data = _ld(7, inner)
    with pytest.raises(ol.DecodeError) as info:
        ol.load_model_from_string(data)
    assert "recursion" in str(info.value).lower() or "nest" in str(info.value).lower()
    with pytest.raises(ol.DecodeError):
        ol.ModelProto.FromString(data)


def test_mutated_models_raise_or_round_trip(ref_bytes):
    import random

    rng = random.Random(1234)
    for _ in range(400):
        data = bytearray(ref_bytes[:4000])
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            m = ol.ModelProto.FromString(bytes(data))
        except ol.Error:
            continue
        # Whatever parsed must serialize and parse again to an equal message.
        assert ol.ModelProto.FromString(m.SerializeToString()) == m
        str(m)


def test_descriptors_describe_the_schema_as_onnx_does():
    from onnx_light import _onnx_light as native

    checked = 0
    for full_name in native.MESSAGE_CLASSES:
        ours = ol
        for part in full_name.split(".")[1:]:
            ours = getattr(ours, part)
        theirs = onnx
        for part in full_name.split(".")[1:]:
            theirs = getattr(theirs, part, None)
        if theirs is None:
            continue
        a, b = ours.DESCRIPTOR, theirs.DESCRIPTOR
        assert (a.name, a.full_name) == (b.name, b.full_name)
        assert set(a.fields_by_name) == set(b.fields_by_name), full_name
        for name, f in a.fields_by_name.items():
            g = b.fields_by_name[name]
            assert (f.number, f.type, f.is_repeated, f.full_name) == (g.number, g.type, g.is_repeated, g.full_name), f
            assert (f.message_type and f.message_type.full_name) == (g.message_type and g.message_type.full_name)
            assert (f.enum_type and f.enum_type.full_name) == (g.enum_type and g.enum_type.full_name)
        checked += 1
    assert checked >= 25
    assert ol.ModelProto().DESCRIPTOR is ol.ModelProto.DESCRIPTOR


def test_list_fields_gives_descriptors_in_number_order(ref_bytes):
    ours = ol.load_from_string(ref_bytes)
    theirs = onnx.load_model_from_string(ref_bytes)
    assert [f.name for f, _ in ours.ListFields()] == [f.name for f, _ in theirs.ListFields()]
    t = ol.TensorProto(name="t", data_type=1, dims=[2])
    assert [(f.name, f.number) for f, _ in t.ListFields()] == [("dims", 1), ("data_type", 2), ("name", 8)]
    assert dict((f.name, v) for f, v in t.ListFields())["name"] == "t"


_THREADS_SCRIPT = r"""
import sys, threading, time
import onnx_light.onnx as ol

m = ol.ModelProto()
for i in range(2000):
    m.graph.node.add(name=f"n{i}", op_type="Relu", input=["x"], output=["y"])
t = m.graph.initializer.add(name="w")
stop = False

class SlowIndex:
    # Python code run while a write holds the model: the interpreter may switch
    # threads in the middle of it.
    def __index__(self):
        return sum(range(2000)) % 7

def failing_saves():
    while not stop:
        try:
            ol.save(m, sys.argv[1])  # a missing directory: the error path, every time
        except ol.FileError:
            pass

def writes():
    while not stop:
        t.dims.append(SlowIndex())
        del t.dims[:]

def reads():
    while not stop:
        _ = m.graph.node[1999].name

threads = [threading.Thread(target=f) for f in (failing_saves, writes, reads, reads)]
for th in threads:
    th.start()
time.sleep(3)
stop = True
for th in threads:
    th.join()
print("done")
"""


def test_threads_sharing_a_model_do_not_deadlock(tmp_path):
    # A save that fails while another thread waits for the model, and a write that runs
    # Python code while others wait: each deadlocks unless locks are waited for without
    # the GIL and errors become exceptions after the lock is released.
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _THREADS_SCRIPT, str(tmp_path / "missing" / "m.onnx")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr


def test_a_message_answers_its_type_name_as_protobufs_do():
    # pytest and logging code read `__name__` from protobuf message instances.
    import onnx

    for name in ("TensorProto", "NodeProto", "ModelProto", "TypeProto"):
        ours = getattr(ol, name)()
        assert ours.__name__ == getattr(onnx, name)().__name__ == name
        assert getattr(ol, name).__name__ == name
