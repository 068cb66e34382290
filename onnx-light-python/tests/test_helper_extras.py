"""The helper, numpy_helper and external_data_helper functions scripts for `onnx` call
beyond building messages: each compared with `onnx`'s on the same inputs (results,
bytes written, warnings and exception types)."""

import os
import warnings

import numpy as np
import onnx
import onnx.external_data_helper
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import external_data_helper, helper, numpy_helper

ml_dtypes = pytest.importorskip("ml_dtypes")


def _outcome(call):
    """The result of ``call`` or the type of what it raised, and its warnings' texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", call())
        except Exception as err:  # noqa: BLE001 - the type is what is compared
            result = ("raised", type(err).__name__)
    return result, [str(w.message) for w in caught]


# --- numpy_helper ------------------------------------------------------------------

_FLOATS = np.array(
    [0.0, -0.0, 1.0, 1.5, 2.9, -3.0, 0.75, np.inf, -np.inf, np.nan, 1e38, 3.3e38, 1e-40, 2.0**-127,
     2.0**-126 * 1.5, 2.0**127 * 1.9, 2.0**127 * 1.1, 2.0**-149, 6.0, 7.0, 1.25, 1.75],
    dtype=np.float32,
)


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [True, False])
def test_to_float8e8m0_matches_onnx(round_mode, saturate):
    rng = np.random.default_rng(5)
    random = (rng.standard_normal(500) * 10.0 ** rng.integers(-40, 38, 500)).astype(np.float32)
    for x in (_FLOATS, random, _FLOATS.astype(np.float64), _FLOATS.reshape(2, 11), [1.0, 3.0]):
        ours = numpy_helper.to_float8e8m0(x, saturate, round_mode)
        theirs = onnx.numpy_helper.to_float8e8m0(x, saturate, round_mode)
        assert ours.dtype == theirs.dtype == ml_dtypes.float8_e8m0fnu
        assert ours.shape == theirs.shape
        assert ours.view(np.uint8).tobytes() == theirs.view(np.uint8).tobytes()


def test_to_float8e8m0_refuses_an_unknown_rounding_mode():
    with pytest.raises(ValueError, match="Unsupported rounding mode"):
        numpy_helper.to_float8e8m0(_FLOATS, round_mode="odd")
    with pytest.raises(ValueError, match="Unsupported rounding mode"):
        onnx.numpy_helper.to_float8e8m0(_FLOATS, round_mode="odd")


def test_to_float8e8m0_takes_a_scalar():
    # onnx fails on a 0-d array (it assigns into a numpy scalar); ours gives the code.
    code = numpy_helper.to_float8e8m0(np.float32(3.0))
    assert code.shape == () and code == onnx.numpy_helper.to_float8e8m0(np.array([3.0], np.float32))[0] == 4.0


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
     np.int64, np.uint64, np.bool_, np.complex64, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
     ml_dtypes.int4, ml_dtypes.float4_e2m1fn],
)
def test_tobytes_little_endian_matches_onnx(dtype):
    arr = (np.arange(-6, 6) % 3).astype(dtype).reshape(3, 4)
    for a in (arr, arr.T, arr[::2], np.asarray(arr[0, 0])):
        assert numpy_helper.tobytes_little_endian(a) == onnx.numpy_helper.tobytes_little_endian(a)
    if np.dtype(dtype).itemsize > 1 and np.dtype(dtype).kind in "fiuc":
        big = arr.astype(np.dtype(dtype).newbyteorder(">"))
        assert numpy_helper.tobytes_little_endian(big) == onnx.numpy_helper.tobytes_little_endian(big)
        assert numpy_helper.tobytes_little_endian(big) == arr.tobytes()


@pytest.mark.parametrize(
    "dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]
)
def test_create_random_int_matches_onnx(dtype):
    for shape, seed in (((3, 4), 1), ((10,), 7), ((2, 0), 3), ((), 0)):
        ours = numpy_helper.create_random_int(shape, dtype, seed)
        theirs = onnx.numpy_helper.create_random_int(shape, dtype, seed)
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    assert np.array_equal(numpy_helper.create_random_int((5,), np.dtype(dtype)), onnx.numpy_helper.create_random_int((5,), np.dtype(dtype)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.bool_, ml_dtypes.int4])
def test_create_random_int_refuses_other_types(dtype):
    assert _outcome(lambda: numpy_helper.create_random_int((2,), dtype)) == _outcome(
        lambda: onnx.numpy_helper.create_random_int((2,), dtype)
    )
    with pytest.raises(TypeError):
        numpy_helper.create_random_int((2,), dtype)


@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float16, np.float32,
     np.float64, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.bfloat16,
     ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz,
     ml_dtypes.float8_e8m0fnu, ml_dtypes.float4_e2m1fn],
)
def test_saturate_cast_matches_onnx(dtype):
    x = np.array([-1e10, -300.5, -129, -8.5, -2.5, -1.5, -0.5, 0, 0.5, 1.5, 2.5, 7.6, 127.5, 255.5, 70000, 1e10, 3e38],
                 dtype=np.float64)
    for values in (x, x.astype(np.float32), x.reshape(1, -1)):
        ours = numpy_helper.saturate_cast(values, dtype)
        theirs = onnx.numpy_helper.saturate_cast(values, dtype)
        assert ours.dtype == theirs.dtype
        assert ours.tobytes() == theirs.tobytes()


# --- helper ------------------------------------------------------------------------


def test_version_table_and_map_are_onnxs():
    assert helper.VERSION_TABLE == onnx.helper.VERSION_TABLE
    assert helper.OP_SET_ID_VERSION_MAP == onnx.helper.OP_SET_ID_VERSION_MAP


def test_find_min_ir_version_for_matches_onnx():
    cases = [[], [("", 1)], [("", 28)], [("ai.onnx", 13), ("ai.onnx.ml", 4)], [("ai.onnx.ml", 5)],
             [("ai.onnx.training", 1)], [("ai.onnx.preview.training", 1)], [("ai.onnx.preview", 21)],
             [("", 29)], [("com.microsoft", 1)], [("", 9), ("com.microsoft", 1)], [("ai.onnx.ml", 6)]]
    for pairs in cases:
        for ignore in (False, True):
            ours = _outcome(lambda: helper.find_min_ir_version_for([helper.make_opsetid(d, v) for d, v in pairs], ignore))
            theirs = _outcome(
                lambda: onnx.helper.find_min_ir_version_for([onnx.helper.make_opsetid(d, v) for d, v in pairs], ignore)
            )
            assert ours == theirs, pairs
    with pytest.raises(ValueError, match="Unsupported opset-version"):
        helper.find_min_ir_version_for([helper.make_opsetid("", 99)])


def test_make_model_gen_version_matches_onnx():
    for kwargs in ({}, {"opset_imports": [("", 11)]}, {"opset_imports": [("", 18), ("ai.onnx.ml", 3)]},
                   {"opset_imports": [("", 11)], "ir_version": 9}, {"producer_name": "p"}):
        def build(h):
            args = dict(kwargs)
            if "opset_imports" in args:
                args["opset_imports"] = [h.make_opsetid(d, v) for d, v in args["opset_imports"]]
            graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [], [])
            return h.make_model_gen_version(graph, **args).SerializeToString()

        assert build(helper) == build(onnx.helper)
    with pytest.raises(ValueError):
        helper.make_model_gen_version(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("x", 1)])


def test_make_attribute_ref_matches_onnx():
    for args, kwargs in [(("a", 1), {}), (("a", 7, "doc"), {}), (("a", 2), {"ref_attr_name": "outer"}),
                         (("a", 5), {"ref_attr_name": None}), (("", 3), {}), (("a", 1), {"ref_attr_name": ""})]:
        ours = _outcome(lambda: helper.make_attribute_ref(*args, **kwargs).SerializeToString())
        theirs = _outcome(lambda: onnx.helper.make_attribute_ref(*args, **kwargs).SerializeToString())
        assert ours == theirs, (args, kwargs)
    with pytest.raises(TypeError):
        helper.make_attribute_ref("a", 1, None, "outer")  # ref_attr_name is keyword-only, as in onnx


def test_make_attribute_types_and_errors_match_onnx():
    A = onnx.AttributeProto
    cases = [([1, 2], None), ([1, 2.5], None), ([True, 2], None), ([1.5], A.INTS), (["a"], A.INTS), ([1, 2], A.FLOATS),
             ([], A.INTS), ([], A.STRINGS), ([], None), ([1], A.INT), ([1], A.STRINGS), ((x for x in (1, 2)), None),
             ([np.int64(1), np.int32(2)], None), ([np.float32(1.5)], None), (["a", b"b"], None), ([1, "a"], None),
             (3, A.FLOAT), (3, A.INT), (2.5, A.INTS), ("s", None), ([1], 99)]
    for value, attr_type in cases:
        values = list(value) if not isinstance(value, (list, int, float, str)) else value
        ours = _outcome(lambda: helper.make_attribute("k", values, attr_type=attr_type).SerializeToString())
        theirs = _outcome(lambda: onnx.helper.make_attribute("k", values, attr_type=attr_type).SerializeToString())
        # protobuf warns about bools in int fields; only the outcomes are compared.
        assert ours[0] == theirs[0], (value, attr_type)
    with pytest.raises(TypeError, match=r"Inferred attribute type 'INT'\(2\) mismatched with specified type 'FLOAT'\(1\)"):
        helper.make_attribute("k", 3, attr_type=A.FLOAT)


def _graph(h, T):
    """A graph with every kind of attribute, inputs with and without initializers,
    initializers that are no input, an untyped input and nested subgraphs."""
    inner = h.make_graph([h.make_node("Identity", ["a"], ["b"])], "inner", [],
                         [h.make_tensor_value_info("b", T.FLOAT, [None])])
    outer = h.make_graph([h.make_node("Loop", ["m", "c"], ["r"], body=inner)], "outer",
                         [h.make_tensor_value_info("m", T.INT64, [])], [])
    nodes = [
        h.make_node("If", ["c"], ["y", "z"], then_branch=outer, else_branch=inner, name="n"),
        h.make_node(
            "Foo", ["x", "y"], ["w"], domain="d", f=1.25, i=-3, s="x" * 80, sb=b"\xff\xfeok",
            t=h.make_tensor("t", T.FLOAT, [], [2.5]), ti=h.make_tensor("ti", T.INT64, [], [7]),
            t2=h.make_tensor("t2", T.INT64, [2], [1, 2]), fs=[1.0, 0.1, 1e-20], ii=[1, -2],
            ss=["a", b"\xff\xfeb", "y" * 70], tp=h.make_tensor_type_proto(T.FLOAT, [2, "N"]),
            tps=[h.make_tensor_type_proto(T.FLOAT, [2]), h.make_tensor_type_proto(T.INT8, None)],
            gs=[inner, outer], ts=[h.make_tensor("a", T.FLOAT, [1], [1.0])],
            sp=h.make_sparse_tensor(h.make_tensor("v", T.FLOAT, [1], [1.0]), h.make_tensor("i", T.INT64, [1], [0]), [3]),
        ),
        h.make_node("Bar", [], []),
        h.make_node("Baz", ["", "x"], ["", "q"], seq=h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, [1]))),
    ]
    nodes[2].attribute.add().name = "empty"
    inputs = [
        h.make_tensor_value_info("x", T.FLOAT, ["N", 3, None]),
        h.make_tensor_value_info("c", T.BOOL, []),
        h.make_tensor_value_info("w0", T.FLOAT16, None),
        h.make_empty_tensor_value_info("e"),
        h.make_value_info("sq", h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, [1]))),
        h.make_sparse_tensor_value_info("sp", T.FLOAT, [2]),
    ]
    inits = [h.make_tensor("w0", T.FLOAT16, [1], [1.0]), h.make_tensor("k", T.INT8, [2, 2], [1, 2, 3, 4]),
             h.make_tensor("s", T.STRING, [], ["v"])]
    return h.make_graph(nodes, "main", inputs, [h.make_tensor_value_info("w", T.FLOAT, [1]),
                                                h.make_tensor_value_info("q", T.FLOAT, None)], inits)


def test_printable_functions_match_onnx():
    ours, theirs = _graph(helper, ol.TensorProto), _graph(onnx.helper, onnx.TensorProto)
    for prefix in ("", "  ", "> "):
        with pytest.warns(DeprecationWarning):
            text = helper.printable_graph(ours, prefix)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert text == onnx.helper.printable_graph(theirs, prefix)
    for a, b in zip(ours.node, theirs.node):
        for subgraphs in (False, True):
            for prefix in ("", "\t"):
                o, t = helper.printable_node(a, prefix, subgraphs), onnx.helper.printable_node(b, prefix, subgraphs)
                if subgraphs:
                    assert o[0] == t[0] and [g.name for g in o[1]] == [g.name for g in t[1]]
                else:
                    assert o == t
        for x, y in zip(a.attribute, b.attribute):
            assert helper.printable_attribute(x) == onnx.helper.printable_attribute(y)
            o, t = helper.printable_attribute(x, True), onnx.helper.printable_attribute(y, True)
            assert o[0] == t[0] and len(o[1]) == len(t[1])
    for a, b in zip(list(ours.input) + list(ours.output), list(theirs.input) + list(theirs.output)):
        assert helper.printable_value_info(a) == onnx.helper.printable_value_info(b)
        assert helper.printable_type(a.type) == onnx.helper.printable_type(b.type)
        if a.type.HasField("tensor_type") and a.type.tensor_type.HasField("shape"):
            for d, e in zip(a.type.tensor_type.shape.dim, b.type.tensor_type.shape.dim):
                assert helper.printable_dim(d) == onnx.helper.printable_dim(e)
    for a, b in zip(ours.initializer, theirs.initializer):
        assert helper.printable_tensor_proto(a) == onnx.helper.printable_tensor_proto(b)


def test_printable_functions_take_onnx_messages_text():
    # A tensor of every data type, printed by name.
    for dt in helper.get_all_tensor_dtypes():
        t, u = ol.TensorProto(name="t", data_type=dt), onnx.TensorProto(name="t", data_type=dt)
        t.dims.extend([2, 0, 5])
        u.dims.extend([2, 0, 5])
        assert helper.printable_tensor_proto(t) == onnx.helper.printable_tensor_proto(u)
        assert helper.printable_type(helper.make_tensor_type_proto(dt, [1])) == onnx.helper.printable_type(
            onnx.helper.make_tensor_type_proto(dt, [1]))


# --- external_data_helper ----------------------------------------------------------


def _pair(values, name="t"):
    arr = np.asarray(values)
    return numpy_helper.from_array(arr, name), onnx.numpy_helper.from_array(arr, name)


def _entries(tensor):
    return [(e.key, e.value) for e in tensor.external_data], tensor.data_location


def test_set_external_data_matches_onnx():
    for kwargs in ({}, {"offset": 4, "length": 12}, {"offset": np.int64(3)}, {"checksum": "abc", "basepath": "b"},
                   {"offset": 0, "length": 0, "checksum": "", "basepath": ""}, {"length": "5"}):
        ours, theirs = _pair(np.arange(3, dtype=np.int32))
        ours.external_data.add(key="old", value="x")
        theirs.external_data.add(key="old", value="x")
        external_data_helper.set_external_data(ours, "f.bin", **kwargs)
        onnx.external_data_helper.set_external_data(theirs, "f.bin", **kwargs)
        assert ours.SerializeToString() == theirs.SerializeToString()
    ours, theirs = helper.make_tensor("t", 1, [1], [1.0]), onnx.helper.make_tensor("t", 1, [1], [1.0])
    assert _outcome(lambda: external_data_helper.set_external_data(ours, "f")) == _outcome(
        lambda: onnx.external_data_helper.set_external_data(theirs, "f"))
    with pytest.raises(ValueError, match="does not have raw_data"):
        external_data_helper.set_external_data(ours, "f")


def test_external_data_info_matches_onnx():
    entry_sets = [
        [], [("location", "a.bin")], [("location", "a"), ("offset", "16"), ("length", "8"), ("checksum", "c"), ("basepath", "p")],
        [("offset", "-1")], [("length", "-5")], [("offset", "x")], [("bad", "1"), ("worse", "2"), ("location", "l")],
        [(f"k{i:02d}", "v") for i in range(13)], [("z" * 150, "v")], [("location", "a"), ("location", "b")],
    ]
    for entries in entry_sets:
        ours, theirs = _pair([1.0])
        for k, v in entries:
            ours.external_data.add(key=k, value=v)
            theirs.external_data.add(key=k, value=v)
        o = _outcome(lambda: vars(external_data_helper.ExternalDataInfo(ours)))
        t = _outcome(lambda: vars(onnx.external_data_helper.ExternalDataInfo(theirs)))
        assert o == t, entries


def test_remove_external_data_field_matches_onnx():
    for key in ("location", "offset", "missing", "checksum"):
        ours, theirs = _pair([1.0, 2.0])
        external_data_helper.set_external_data(ours, "f", 0, 8, "c")
        onnx.external_data_helper.set_external_data(theirs, "f", 0, 8, "c")
        external_data_helper.remove_external_data_field(ours, key)
        onnx.external_data_helper.remove_external_data_field(theirs, key)
        assert _entries(ours) == _entries(theirs)


def test_save_external_data_writes_what_onnx_writes(tmp_path):
    arrays = [np.arange(5, dtype=np.float32), np.array([], dtype=np.int8), np.arange(7, dtype=np.int64) * -3,
              np.array([1.5, -2], dtype=ml_dtypes.bfloat16), np.array([1, -3, 7], dtype=ml_dtypes.int4),
              np.array([0.5, 448], dtype=ml_dtypes.float8_e4m3fn), np.array([1, 2, 3], dtype=ml_dtypes.float4_e2m1fn)]
    plans = [("one.bin", None), ("one.bin", None), ("sub/two.bin", None), ("one.bin", "align")]
    results = {}
    for which, module in (("ours", ol), ("theirs", onnx)):
        base = tmp_path / which
        (base / "sub").mkdir(parents=True)
        records = []
        for i, arr in enumerate(arrays):
            for location, mode in plans:
                tensor = module.numpy_helper.from_array(arr, f"t{i}")
                offset = None
                if mode == "align":
                    offset = -(-os.path.getsize(base / location) // 64) * 64
                module.external_data_helper.set_external_data(tensor, location, offset=offset, checksum="c")
                module.external_data_helper.save_external_data(tensor, str(base))
                records.append((_entries(tensor), tensor.raw_data))
        files = {p: (base / p).read_bytes() for p in ("one.bin", "sub/two.bin")}
        results[which] = (records, files)
    assert results["ours"] == results["theirs"]
    # The bytes read back are the tensors'.
    assert results["ours"][1]["one.bin"][:20] == arrays[0].tobytes()


def test_save_external_data_refuses_what_onnx_refuses(tmp_path):
    (tmp_path / "sub").mkdir()
    os.symlink("/etc/hostname", tmp_path / "link")
    (tmp_path / "full.bin").write_bytes(b"x" * 100)
    cases = [("/abs.bin", None), ("../out.bin", None), ("", None), ("link", None), ("sub", None), ("nosub/x.bin", None),
             ("full.bin", 50), ("full.bin", 100 + 64 * 1024 + 1), ("full.bin", -1)]
    for location, offset in cases:
        ours = numpy_helper.from_array(np.arange(3, dtype=np.int32), "t")
        external_data_helper.set_external_data(ours, location, offset=offset)
        with pytest.raises(ValueError):
            external_data_helper.save_external_data(ours, str(tmp_path))
    assert (tmp_path / "full.bin").read_bytes() == b"x" * 100
    assert not (tmp_path.parent / "out.bin").exists()
    no_raw = helper.make_tensor("t", 1, [1], [1.0])
    no_raw.external_data.add(key="location", value="n.bin")
    with pytest.raises(ol.checker.ValidationError, match="raw_data field doesn't exist"):
        external_data_helper.save_external_data(no_raw, str(tmp_path))


def test_get_all_tensors_lists_onnxs_tensors_in_order():
    def build(h, nh, T):
        inner = h.make_graph([h.make_node("Constant", [], ["c"], value=nh.from_array(np.ones(2, np.float32), "ci"))],
                             "inner", [], [], [nh.from_array(np.zeros(1, np.int8), "ii")])
        node = h.make_node("If", ["b"], ["y"], then_branch=inner, else_branch=inner,
                           ts=[nh.from_array(np.ones(1, np.int64), "ts")])
        graph = h.make_graph([node], "g", [], [], [nh.from_array(np.zeros(3, np.float32), "w")])
        fn = h.make_function("d", "f", [], ["o"], [h.make_node("Constant", [], ["o"], value=nh.from_array(np.ones(1, np.float32), "fc"))],
                             [h.make_opsetid("", 18)])
        return h.make_model(graph, functions=[fn])

    ours = [t.name for t in external_data_helper._get_all_tensors(build(helper, numpy_helper, ol.TensorProto))]
    theirs = [t.name for t in onnx.external_data_helper._get_all_tensors(build(onnx.helper, onnx.numpy_helper, onnx.TensorProto))]
    assert ours == theirs


def test_external_data_functions_take_onnx_tensors(tmp_path):
    theirs = onnx.numpy_helper.from_array(np.arange(4, dtype=np.int16), "t")
    external_data_helper.set_external_data(theirs, "a.bin", checksum="c")
    assert external_data_helper.ExternalDataInfo(theirs).checksum == "c"
    external_data_helper.save_external_data(theirs, str(tmp_path))
    assert (tmp_path / "a.bin").read_bytes() == np.arange(4, dtype=np.int16).tobytes()
    assert _entries(theirs) == ([("location", "a.bin"), ("offset", "0"), ("length", "8")], onnx.TensorProto.EXTERNAL)
    external_data_helper.remove_external_data_field(theirs, "offset")
    assert [e.key for e in theirs.external_data] == ["location", "length"]
