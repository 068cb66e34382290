"""`compose` and `utils` (`Extractor`, `extract_model`): the same models, byte for byte,
and the same refusals (types and messages) as `onnx.compose` / `onnx.utils` on models
built here; structure-only models and large files without reading unused weights."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.compose
import onnx.utils
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import onnx_light.onnx as ol
from onnx_light.onnx import compose, shape_inference, utils


def _ours(m):
    """The same message, as onnx_light's."""
    name = type(m).DESCRIPTOR.full_name
    return ol._native.decode_message(name, m.SerializeToString())


def _same(theirs, ours):
    assert ours.SerializeToString() == theirs.SerializeToString()


def _vi(name, shape=(2, "n")):
    return helper.make_tensor_value_info(name, T.FLOAT, list(shape))


def _sub_model(tag, opset=18, ir=9, extra_out=False):
    """`x -> Relu -> h -> Add(w) -> y` (and `z = Neg(h)`), named after `tag`; an `If`
    whose branches read an outer value; a local function call; metadata."""
    x, h, y, z = (f"{tag}_x", f"{tag}_h", f"{tag}_y", f"{tag}_z")
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), f"{tag}_w")
    branch = lambda k: helper.make_graph(  # noqa: E731
        [helper.make_node("Identity", [h], [f"{tag}_{k}_o"], name=f"{tag}_{k}_id")],
        f"{tag}_{k}", [], [_vi(f"{tag}_{k}_o")],
    )
    nodes = [
        helper.make_node("Relu", [x], [h], name=f"{tag}_relu"),
        helper.make_node("Add", [h, f"{tag}_w"], [y]),
        helper.make_node("Neg", [h], [z], name=f"{tag}_neg"),
        helper.make_node("ReduceMax", [h], [f"{tag}_c"], keepdims=0),
        helper.make_node("Cast", [f"{tag}_c"], [f"{tag}_b"], to=T.BOOL),
        helper.make_node("If", [f"{tag}_b"], [f"{tag}_i"], then_branch=branch("t"), else_branch=branch("e")),
        helper.make_node(f"{tag}_fn", [h], [f"{tag}_f"], domain="local"),
    ]
    outputs = [_vi(y, (2, 3)), _vi(f"{tag}_i"), _vi(f"{tag}_f")]
    if extra_out:
        outputs.append(_vi(z))
    graph = helper.make_graph(
        nodes, f"graph_{tag}", [_vi(x, (2, 3))], outputs, [w],
        doc_string=f"doc of {tag}", value_info=[_vi(h, (2, 3))],
    )
    fn = helper.make_function(
        "local", f"{tag}_fn", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
        [helper.make_opsetid("", opset)],
    )
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("local", 1)],
        ir_version=ir, functions=[fn],
    )
    helper.set_model_props(m, {f"{tag}_key": "v", "shared": "same"})
    return m


MERGES = [
    dict(io_map=[("a_y", "b_x")]),
    dict(io_map=[("a_y", "b_x")], name="merged", doc_string="", producer_name="me", model_version=7),
    dict(io_map=[("a_y", "b_x")], outputs=["b_y", "a_z"]),
    dict(io_map=[("a_y", "b_x")], inputs=["a_x"], outputs=["b_i"]),
]


@pytest.mark.parametrize("kwargs", MERGES)
def test_merge_models_gives_onnxs_model(kwargs):
    m1, m2 = _sub_model("a", extra_out=True), _sub_model("b")
    _same(onnx.compose.merge_models(m1, m2, **kwargs), compose.merge_models(_ours(m1), _ours(m2), **kwargs))
    g1, g2 = m1.graph, m2.graph
    graph_kwargs = {k: v for k, v in kwargs.items() if k in ("io_map", "inputs", "outputs", "name", "doc_string")}
    _same(onnx.compose.merge_graphs(g1, g2, **graph_kwargs), compose.merge_graphs(_ours(g1), _ours(g2), **graph_kwargs))


def test_prefixes_in_merges_rename_functions_and_follow_io_map():
    m = _sub_model("a")
    kwargs = dict(io_map=[("a_y", "a_x")], prefix1="p/", prefix2="q/")
    _same(onnx.compose.merge_models(m, m, **kwargs), compose.merge_models(_ours(m), _ours(m), **kwargs))
    _same(
        onnx.compose.merge_graphs(m.graph, m.graph, **kwargs),
        compose.merge_graphs(_ours(m.graph), _ours(m.graph), **kwargs),
    )


def test_a_model_merges_with_itself_and_its_own_views(tmp_path):
    # One message on both sides (one lock): in a fresh process, so that a deadlock
    # would fail the test by its timeout instead of hanging the run.
    m = _sub_model("a")
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    script = (
        "import sys\n"
        "import onnx_light.onnx as ol\n"
        "from onnx_light.onnx import compose\n"
        "m = ol.load(sys.argv[1])\n"
        "kw = dict(io_map=[('a_y', 'a_x')], prefix1='p/', prefix2='q/')\n"
        "print(compose.merge_models(m, m, **kw).SerializeToString().hex())\n"
        "print(compose.merge_graphs(m.graph, m.graph, **kw).SerializeToString().hex())\n"
        "print(len(compose.check_overlapping_names(m.graph, m.graph)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], check=True, capture_output=True, text=True, timeout=60
    ).stdout.split()
    kw = dict(io_map=[("a_y", "a_x")], prefix1="p/", prefix2="q/")
    assert out[0] == onnx.compose.merge_models(m, m, **kw).SerializeToString().hex()
    assert out[1] == onnx.compose.merge_graphs(m.graph, m.graph, **kw).SerializeToString().hex()
    assert out[2] == str(len(onnx.compose.check_overlapping_names(m.graph, m.graph)))


FLAGS = ["rename_nodes", "rename_edges", "rename_inputs", "rename_outputs", "rename_initializers", "rename_value_infos"]


@pytest.mark.parametrize("off", [None, *FLAGS, "rename_functions"])
def test_add_prefix_gives_onnxs_names(off):
    m = _sub_model("a", extra_out=True)
    # An optional output left empty, and an unnamed value info: empty names stay empty.
    m.graph.node[0].output.append("")
    m.graph.value_info.add()
    m.graph.sparse_initializer.append(
        helper.make_sparse_tensor(
            numpy_helper.from_array(np.array([1.0], np.float32), "sv"),
            numpy_helper.from_array(np.array([1], np.int64), "si"),
            [3],
        )
    )
    kwargs = {} if off is None else {off: False}
    _same(onnx.compose.add_prefix(m, "p/", **kwargs), compose.add_prefix(_ours(m), "p/", **kwargs))
    if off != "rename_functions":
        theirs_map, ours_map = {"outer": "renamed"}, {"outer": "renamed"}
        _same(
            onnx.compose.add_prefix_graph(m.graph, "p/", name_map=theirs_map, **kwargs),
            compose.add_prefix_graph(_ours(m.graph), "p/", name_map=ours_map, **kwargs),
        )
        assert ours_map == theirs_map


def test_inplace_edits_change_the_message_given_and_return_it():
    m = _sub_model("a")
    ours = _ours(m)
    graph = ours.graph
    assert compose.add_prefix(ours, "p/", inplace=True) is ours
    onnx.compose.add_prefix(m, "p/", inplace=True)
    _same(m, ours)
    # A view of the graph sees the change; editing through it changes the model.
    assert graph.node[0].name == "p/a_relu"
    assert compose.expand_out_dim_graph(graph, 1, inplace=True) is graph
    onnx.compose.expand_out_dim_graph(m.graph, 1, inplace=True)
    _same(m, ours)
    # A copy leaves the original alone.
    before = ours.SerializeToString()
    compose.add_prefix_graph(ours.graph, "q/")
    assert ours.SerializeToString() == before
    # An `onnx` message edited in place is changed too.
    theirs = _sub_model("b")
    assert compose.add_prefix(theirs, "r/", inplace=True) is theirs
    assert theirs.graph.input[0].name == "r/b_x"


@pytest.mark.parametrize("dim_idx", [0, 1, 2, -1, -3, 9, -9])
def test_expand_out_dim_gives_onnxs_model(dim_idx):
    m = _sub_model("a")
    m.graph.output.append(helper.make_tensor_sequence_value_info("a_seq", T.FLOAT, [2]))
    _same(onnx.compose.expand_out_dim(m, dim_idx), compose.expand_out_dim(_ours(m), dim_idx))


def test_check_overlapping_names_finds_what_onnx_finds():
    m = _sub_model("a")
    for io_map in (None, [("a_y", "a_x")]):
        theirs = onnx.compose.check_overlapping_names(m.graph, m.graph, io_map)
        ours = compose.check_overlapping_names(_ours(m.graph), _ours(m.graph), io_map)
        assert [(c, sorted(n)) for c, n in ours] == [(c, sorted(n)) for c, n in theirs]


def _raised(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e), str(e)
    return None


def _refusals_match(theirs, ours, same_message=True):
    t, o = _raised(theirs), _raised(ours)
    assert t is not None and o is not None, (t, o)
    # onnx's own exception classes (ValidationError) have namesakes here.
    assert issubclass(o[0], t[0]) or o[0].__name__ == t[0].__name__, (t, o)
    if same_message:
        assert o[1] == t[1]


def test_merges_refuse_what_onnx_refuses_with_its_messages():
    m1, m2 = _sub_model("a"), _sub_model("b")
    o1, o2 = _ours(m1), _ours(m2)
    cases = [
        dict(io_map=[("nope", "b_x")]),
        dict(io_map=[("a_y", "nope")]),
    ]
    for kwargs in cases:
        _refusals_match(lambda: onnx.compose.merge_models(m1, m2, **kwargs), lambda: compose.merge_models(o1, o2, **kwargs))
        _refusals_match(
            lambda: onnx.compose.merge_graphs(m1.graph, m2.graph, **kwargs),
            lambda: compose.merge_graphs(o1.graph, o2.graph, **kwargs),
        )
    # One clashing name: the message is deterministic.
    clash = _sub_model("b")
    clash.graph.node[1].output[0] = "a_h"
    _refusals_match(
        lambda: onnx.compose.merge_graphs(m1.graph, clash.graph, [("a_y", "b_x")]),
        lambda: compose.merge_graphs(o1.graph, _ours(clash.graph), [("a_y", "b_x")]),
    )
    # Several: the names are listed in another order than onnx's sets give.
    _refusals_match(
        lambda: onnx.compose.merge_models(m1, m1, [("a_y", "a_x")]),
        lambda: compose.merge_models(o1, o1, [("a_y", "a_x")]),
        same_message=False,
    )
    for change in (
        lambda m: setattr(m, "ir_version", 8),
        lambda m: m.opset_import[0].__setattr__("version", 17),
        lambda m: helper.set_model_props(m, {"shared": "other"}),
        lambda m: m.functions[0].__setattr__("name", "a_fn"),
    ):
        other = _sub_model("b")
        change(other)
        _refusals_match(
            lambda: onnx.compose.merge_models(m1, other, [("a_y", "b_x")]),
            lambda: compose.merge_models(o1, _ours(other), [("a_y", "b_x")]),
        )
    # The merged model is checked (an operator that does not exist).
    bad = _sub_model("b")
    bad.graph.node.append(helper.make_node("NoSuchOp", ["b_h"], ["b_q"]))
    _refusals_match(
        lambda: onnx.compose.merge_models(m1, bad, [("a_y", "b_x")]),
        lambda: compose.merge_models(o1, _ours(bad), [("a_y", "b_x")]),
        same_message=False,
    )
    for f in (compose.merge_graphs, compose.check_overlapping_names):
        _refusals_match(lambda: getattr(onnx.compose, f.__name__)(m1, m2.graph, []), lambda: f(o1, o2.graph, []))
        _refusals_match(lambda: getattr(onnx.compose, f.__name__)(m1.graph, m2, []), lambda: f(o1.graph, o2, []))
    _refusals_match(lambda: onnx.compose.merge_models(m1.graph, m2, []), lambda: compose.merge_models(o1.graph, o2, []))
    for f in (compose.add_prefix, compose.expand_out_dim):
        _refusals_match(lambda: getattr(onnx.compose, f.__name__)(m1.graph, 1), lambda: f(o1.graph, 1))
    for f in (compose.add_prefix_graph, compose.expand_out_dim_graph):
        _refusals_match(lambda: getattr(onnx.compose, f.__name__)(m1, 1), lambda: f(o1, 1))


def _layered():
    nodes = [
        helper.make_node("Add", ["A0", "A1"], ["B0"]),
        helper.make_node("Sub", ["A0", "W"], ["B1"]),
        helper.make_node("Mul", ["A0", "A1"], ["B2"]),
        helper.make_node("Add", ["B0", "B1"], ["C0"]),
        helper.make_node("Sub", ["B1", "B2"], ["C1"]),
        helper.make_node("Mul", ["C0", "C1"], ["D0"]),
    ]
    w = numpy_helper.from_array(np.ones((1, 2), np.float32), "W")
    g = helper.make_graph(nodes, "layers", [_vi("A0", (1, 2)), _vi("A1", (1, 2))], [_vi("D0", (1, 2))], [w])
    return helper.make_model(g, producer_name="test", opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("io", [(["B0", "B1", "B2"], ["C0", "C1"]), (["A0", "A1"], ["C1"]), (["A0", "A1"], ["D0"])])
@pytest.mark.parametrize("infer", [True, False])
@pytest.mark.parametrize("external", [False, True])
def test_extract_model_gives_onnxs_file(tmp_path, io, infer, external):
    m = _layered()
    src = tmp_path / "m.onnx"
    # External data is loaded (inline in the result, marked DEFAULT, as onnx does).
    onnx.save(m, str(src), save_as_external_data=external, size_threshold=0, location="m.data")
    theirs, ours = tmp_path / "theirs.onnx", tmp_path / "ours.onnx"
    if not infer and io[1] != ["D0"]:
        pytest.skip("without inference only the graph's own inputs and outputs are known")
    onnx.utils.extract_model(str(src), str(theirs), *io, infer_shapes=infer)
    utils.extract_model(str(src), str(ours), *io, infer_shapes=infer)
    assert ours.read_bytes() == theirs.read_bytes()
    # The Extractor on an inferred model gives the same sub-model.
    inferred = onnx.shape_inference.infer_shapes(m)
    _same(onnx.utils.Extractor(inferred).extract_model(*io), utils.Extractor(_ours(inferred)).extract_model(*io))


@pytest.mark.parametrize("threshold", [0, 1024])
def test_extract_model_infers_types_before_loading_external_data(tmp_path, threshold):
    # A Reshape whose shape is in the data file: as in onnx, inference does not read it,
    # so its output has no type and cannot be extracted; inline, it can.
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["h"]),
        helper.make_node("Reshape", ["h", "shape"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    g = helper.make_graph(nodes, "g", [_vi("x", (2, 3))], [_vi("y", (3, 2))], [w, shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src), save_as_external_data=True, size_threshold=threshold, location="m.data")
    theirs, ours = str(tmp_path / "theirs.onnx"), str(tmp_path / "ours.onnx")
    t = _raised(lambda: onnx.utils.extract_model(str(src), theirs, ["x"], ["r"]))
    assert (t is None) == (threshold > 0)
    if t is None:
        utils.extract_model(str(src), ours, ["x"], ["r"])
        assert open(ours, "rb").read() == open(theirs, "rb").read()
        return
    # External: the type of `r` is what inference gives without the data (this
    # package's inference gives it a rank where onnx's gives nothing), never the
    # sizes read from the data file.
    without_data = shape_inference.infer_shapes(ol.load(str(src), load_external_data=False))
    want = [v.type for v in without_data.graph.value_info if v.name == "r"]
    o = _raised(lambda: utils.extract_model(str(src), ours, ["x"], ["r"], check_model=False))
    if not want:
        assert o is not None and issubclass(o[0], t[0]) and o[1] == t[1]
    else:
        assert o is None
        assert ol.load(ours).graph.output[0].type == want[0]


def test_extract_model_can_replace_its_source(tmp_path):
    m = _weights_model([4096, 4096])
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    want = tmp_path / "want.onnx"
    onnx.utils.extract_model(str(src), str(want), ["x"], ["y1"])
    # The source is read structure-only, its weights copied from the file being replaced.
    utils.extract_model(str(src), str(src), ["x"], ["y1"])
    assert src.read_bytes() == want.read_bytes()


def test_extractor_attributes_and_steps_are_onnxs():
    m = onnx.shape_inference.infer_shapes(_layered())
    theirs, ours = onnx.utils.Extractor(m), utils.Extractor(_ours(m))
    assert ours.outmap == theirs.outmap
    assert list(ours.value_infos) == list(theirs.value_infos)
    assert list(ours.initializers) == list(theirs.initializers)
    nodes_t = theirs._collect_reachable_nodes(["A0", "A1"], ["C1"])
    nodes_o = ours._collect_reachable_nodes(["A0", "A1"], ["C1"])
    assert [n.SerializeToString() for n in nodes_o] == [n.SerializeToString() for n in nodes_t]
    reach_t, reach_o = set(), set()
    theirs._dfs_search_reachable_nodes("D0", {"B0"}, reach_t)
    ours._dfs_search_reachable_nodes("D0", {"B0"}, reach_o)
    assert reach_o == reach_t
    inits_t, vis_t = theirs._collect_reachable_tensors(nodes_t)
    inits_o, vis_o = ours._collect_reachable_tensors(nodes_o)
    assert [t.name for t in inits_o] == [t.name for t in inits_t]
    assert [v.name for v in vis_o] == [v.name for v in vis_t]
    made = ours._make_model(nodes_o, ours._collect_new_io(["A0"]), ours._collect_new_io(["C1"]), inits_o, vis_o, [])
    _same(theirs._make_model(nodes_t, theirs._collect_new_io(["A0"]), theirs._collect_new_io(["C1"]), inits_t, vis_t, []), made)


def test_extraction_refuses_what_onnx_refuses_with_its_messages(tmp_path):
    m = _layered()
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    out = str(tmp_path / "out.onnx")
    for args in (
        (str(tmp_path / "missing.onnx"), out, ["A0"], ["D0"]),
        (str(src), "", ["A0"], ["D0"]),
        (str(src), out, [], ["D0"]),
        (str(src), out, ["A0"], []),
        (str(src), out, ["A0", "A0"], ["D0"]),
        (str(src), out, ["A0"], ["D0", "D0"]),
        (str(src), out, ["A0", "nope"], ["D0", "gone"]),
    ):
        _refusals_match(lambda: onnx.utils.extract_model(*args), lambda: utils.extract_model(*args))
    assert not os.path.exists(out)
    dup = _layered()
    dup.graph.node[1].output[0] = "B0"
    with pytest.raises(AssertionError):
        onnx.utils.Extractor(dup)
    with pytest.raises(AssertionError, match="B0"):
        utils.Extractor(_ours(dup))
    sparse = _layered()
    sparse.graph.sparse_initializer.append(
        helper.make_sparse_tensor(
            numpy_helper.from_array(np.array([1.0], np.float32), "sv"),
            numpy_helper.from_array(np.array([1], np.int64), "si"),
            [3],
        )
    )
    _refusals_match(
        lambda: onnx.utils.Extractor(sparse).extract_model(["A0", "A1"], ["D0"]),
        lambda: utils.Extractor(_ours(sparse)).extract_model(["A0", "A1"], ["D0"]),
    )


def test_tar_members_outside_the_directory_or_links_are_refused(tmp_path):
    import io
    import tarfile

    base = tmp_path / "model"
    base.mkdir()
    for name, kind in (("../model_x/a.txt", tarfile.REGTYPE), ("link", tarfile.SYMTYPE), ("ok/a.txt", tarfile.REGTYPE)):
        path = tmp_path / "t.tar"
        with tarfile.open(path, "w") as tar:
            info = tarfile.TarInfo(name)
            info.type = kind
            data = b"x"
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        with tarfile.open(path) as tar:
            t = _raised(lambda: onnx.utils._tar_members_filter(tar, str(base)))
        with tarfile.open(path) as tar:
            o = _raised(lambda: utils._tar_members_filter(tar, str(base)))
        assert o == t
        if name.startswith("ok"):
            utils._extract_model_safe(str(path), str(base))
            assert (base / "ok" / "a.txt").read_bytes() == b"x"


def _weights_model(sizes, opset=18):
    """`y_i = x + w_i` for weights of `sizes` elements (float32)."""
    nodes, inits, outputs = [], [], []
    for i, n in enumerate(sizes):
        inits.append(numpy_helper.from_array(np.full(n, i + 1, np.float32), f"w{i}"))
        nodes.append(helper.make_node("Add", ["x", f"w{i}"], [f"y{i}"]))
        outputs.append(_vi(f"y{i}", (n,)))
    g = helper.make_graph(nodes, "weights", [_vi("x", (1,))], outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def test_structure_only_models_merge_without_reading_weights_and_save_them(tmp_path):
    m1, m2 = _weights_model([4096, 8192]), _weights_model([2048])
    p1, p2 = tmp_path / "m1.onnx", tmp_path / "m2.onnx"
    onnx.save(m1, str(p1))
    onnx.save(m2, str(p2))
    l1 = ol.load(str(p1), structure_only=True)
    l2 = ol.load(str(p2), structure_only=True)
    kwargs = dict(io_map=[("y0", "x")], prefix1="a/", prefix2="b/")
    merged = compose.merge_models(l1, l2, **kwargs)
    out = tmp_path / "merged.onnx"
    ol.save(merged, str(out))
    want = onnx.compose.merge_models(m1, m2, **kwargs)
    assert out.read_bytes() == want.SerializeToString()
    graph = compose.merge_graphs(l1.graph, l2.graph, **kwargs)
    assert graph.SerializeToString() == onnx.compose.merge_graphs(m1.graph, m2.graph, **kwargs).SerializeToString()
    assert numpy_helper.to_array(graph.initializer[1]).sum() == 2 * 8192
    # Saved with external data, the weights are copied from the source into the data file.
    ext = tmp_path / "merged_ext.onnx"
    ol.save(merged, str(ext), save_as_external_data=True, location="merged.data")
    back = onnx.load(str(ext))
    for a, b in zip(back.graph.initializer, want.graph.initializer):
        assert a.name == b.name
        np.testing.assert_array_equal(numpy_helper.to_array(a), numpy_helper.to_array(b))


_PEAK = (
    "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
    "print(int(status.split()[0]) // 1024)\n"
)


def _peak_mib(script, *args):
    """The peak resident set (MiB) of a new process running `script` (`VmHWM`: its own,
    not this test's, carried over the fork)."""
    out = subprocess.run(
        [sys.executable, "-c", script + _PEAK, *map(str, args)], check=True, capture_output=True, text=True
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_extract_model_reads_only_the_weights_it_keeps(tmp_path):
    # 3 x 128 MiB of weights in an external data file; the sub-model keeps one.
    n = 32 * 1024 * 1024
    model = _weights_model([n, n, n])
    src = tmp_path / "big.onnx"
    onnx.save(model, str(src), save_as_external_data=True, location="big.data")
    del model
    out = tmp_path / "part.onnx"
    script = (
        "import sys\n"
        "from onnx_light.onnx import utils\n"
        "utils.extract_model(sys.argv[1], sys.argv[2], ['x'], ['y1'])\n"
    )
    peak = _peak_mib(script, src, out)
    assert peak < 120, peak
    part = onnx.load(str(out))
    assert [t.name for t in part.graph.initializer] == ["w1"]
    assert numpy_helper.to_array(part.graph.initializer[0]).sum() == 2 * n
    assert os.path.getsize(out) < n * 4 + 4096


def test_merging_lazily_loaded_models_stays_below_their_weights(tmp_path):
    n = 32 * 1024 * 1024
    model = _weights_model([n, n])
    src = tmp_path / "big.onnx"
    onnx.save(model, str(src))
    del model
    out = tmp_path / "merged.onnx"
    script = (
        "import sys\n"
        "import onnx_light.onnx as ol\n"
        "from onnx_light.onnx import compose\n"
        "m = ol.load(sys.argv[1], structure_only=True)\n"
        "merged = compose.merge_models(m, m, [('y0', 'x')], prefix1='a/', prefix2='b/')\n"
        "ol.save(merged, sys.argv[2])\n"
    )
    peak = _peak_mib(script, src, out)
    assert peak < 120, peak
    merged = ol.load(str(out), structure_only=True)
    assert [t.name for t in merged.graph.initializer] == ["a/w0", "a/w1", "b/w0", "b/w1"]
    assert os.path.getsize(out) > 4 * n * 4


def _random_graph(rng, tag):
    """A small graph over a pool of names shared with other graphs (so that names clash,
    repeat and go empty), with value infos, initializers and a subgraph now and then."""
    pool = [f"{tag}{i}" for i in range(4)] + ["s0", "s1", ""]
    pick = lambda: pool[rng.integers(len(pool))]  # noqa: E731
    nodes = []
    for i in range(int(rng.integers(1, 5))):
        attrs = {}
        if rng.random() < 0.3:
            body = helper.make_graph(
                [helper.make_node("Identity", [pick()], [f"{tag}_sub{i}"])], f"{tag}_body{i}", [], [_vi(f"{tag}_sub{i}")]
            )
            attrs["body"] = body
        nodes.append(helper.make_node("Op", [pick(), pick()], [f"{tag}_o{i}", pick()], name=pick(), domain="x", **attrs))
    inputs = [_vi(n) for n in {pick(), pick()}]
    outputs = [_vi(n) for n in {f"{tag}_o0", pick()}]
    inits = [numpy_helper.from_array(np.zeros(1, np.float32), n) for n in {pick()}]
    infos = [_vi(n) for n in {pick(), pick()}]
    return helper.make_graph(nodes, f"g{tag}", inputs, outputs, inits, value_info=infos)


def test_random_graphs_prefix_and_merge_as_onnx_does():
    rng = np.random.default_rng(33)
    for _ in range(150):
        g1, g2 = _random_graph(rng, "a"), _random_graph(rng, "b")
        flags = {f: bool(rng.random() < 0.7) for f in FLAGS}
        t_map, o_map = {"s0": "x"}, {"s0": "x"}
        _same(
            onnx.compose.add_prefix_graph(g1, "p/", name_map=t_map, **flags),
            compose.add_prefix_graph(_ours(g1), "p/", name_map=o_map, **flags),
        )
        assert o_map == t_map
        outs = [o.name for o in g1.output] + ["missing"]
        ins = [i.name for i in g2.input] + ["missing"]
        io_map = [(outs[rng.integers(len(outs))], ins[rng.integers(len(ins))]) for _ in range(int(rng.integers(0, 3)))]
        kwargs = dict(io_map=io_map)
        if rng.random() < 0.5:
            kwargs["prefix2"] = "q/"
        t = _raised(lambda: onnx.compose.merge_graphs(g1, g2, **kwargs))
        o = _raised(lambda: compose.merge_graphs(_ours(g1), _ours(g2), **kwargs))
        if t is None:
            assert o is None, o
            _same(onnx.compose.merge_graphs(g1, g2, **kwargs), compose.merge_graphs(_ours(g1), _ours(g2), **kwargs))
        else:
            assert o is not None and issubclass(o[0], t[0]), (t, o)
            if "overlapping" not in t[1] or ", " not in t[1].split("names: ")[1].split("\n")[0]:
                assert o[1] == t[1]


def test_onnx_backend_models_prefix_expand_extract_and_merge_as_onnx_does():
    """Every model the `onnx` package ships for its backend tests: prefixed, expanded,
    extracted whole and merged with itself, the same bytes or the same exception type
    as with `onnx`."""
    import pathlib

    paths = sorted((pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data").rglob("*.onnx"))
    assert len(paths) > 100
    for path in paths:
        data = path.read_bytes()
        ref, ours = onnx.load_model_from_string(data), ol.load_model_from_string(data)
        ins = [i.name for i in ref.graph.input]
        outs = [o.name for o in ref.graph.output]
        pairs = [
            (lambda: onnx.compose.add_prefix(ref, "p/"), lambda: compose.add_prefix(ours, "p/")),
            (lambda: onnx.compose.expand_out_dim(ref, 0), lambda: compose.expand_out_dim(ours, 0)),
            (
                lambda: onnx.utils.Extractor(ref).extract_model(ins, outs),
                lambda: utils.Extractor(ours).extract_model(ins, outs),
            ),
            (
                lambda: onnx.compose.merge_models(ref, ref, [], prefix1="a/", prefix2="b/"),
                lambda: compose.merge_models(ours, ours, [], prefix1="a/", prefix2="b/"),
            ),
        ]
        for theirs, mine in pairs:
            t = _raised(theirs)
            if t is None:
                assert mine().SerializeToString() == theirs().SerializeToString(), path
            else:
                o = _raised(mine)
                assert o is not None and (issubclass(o[0], t[0]) or o[0].__name__ == t[0].__name__), (path, t, o)
