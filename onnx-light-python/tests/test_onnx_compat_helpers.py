"""Behaviour of helper, numpy_helper, external_data_helper, checker and printer that
scripts written for `onnx` rely on, checked against the `onnx` package itself: the
names they import, the exception types and messages they catch or match, and the state
a model is left in."""

import os

import numpy as np
import onnx
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import checker, external_data_helper, helper, numpy_helper, parser, printer

ml_dtypes = pytest.importorskip("ml_dtypes")


def _outcome(call):
    """What a call gives: its result, or its exception's type and message."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e), str(e)


def _same_outcome(ours, theirs):
    """Our outcome matches onnx's: equal results, or an exception of onnx's type (or a
    subclass of it) with onnx's message."""
    if isinstance(theirs, tuple) and isinstance(theirs[0], type):
        assert isinstance(ours, tuple) and isinstance(ours[0], type), ours
        assert issubclass(ours[0], theirs[0]), (ours, theirs)
        assert ours[1] == theirs[1]
    else:
        assert ours == theirs


# --- numpy_helper's packing helpers ---------------------------------------------------


@pytest.mark.parametrize("count", range(0, 11))
@pytest.mark.parametrize(
    "dtype", [np.uint8, np.int8, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, np.int32]
)
def test_the_sub_byte_packers_give_onnxs_bytes(count, dtype):
    rng = np.random.default_rng(count)
    values = rng.integers(-2, 2, count).astype(dtype)
    for name in ("_pack_4bitx2", "_pack_2bitx4"):
        ours = getattr(numpy_helper, name)(values)
        theirs = getattr(onnx.numpy_helper, name)(values)
        assert ours.dtype == theirs.dtype == np.uint8
        np.testing.assert_array_equal(ours, theirs)
        ours[...] = 0  # a writable array of its own
    codes = rng.integers(0, 64, count).astype(np.uint8)
    np.testing.assert_array_equal(numpy_helper._pack_6bit(codes), onnx.numpy_helper._pack_6bit(codes))


@pytest.mark.parametrize("count", [1, 3, 4, 7, 9])
def test_the_unpackers_invert_the_packers(count):
    for bits, pack, unpack in (
        (4, "_pack_4bitx2", "_unpack_4bit"),
        (2, "_pack_2bitx4", "_unpack_2bit"),
        (6, "_pack_6bit", "_unpack_6bit"),
    ):
        codes = (np.arange(count) % (1 << bits)).astype(np.uint8)
        packed = getattr(onnx.numpy_helper, pack)(codes)
        ours = getattr(numpy_helper, unpack)(packed, [count])
        np.testing.assert_array_equal(ours, getattr(onnx.numpy_helper, unpack)(packed, [count]))
        with pytest.raises(ValueError, match="too small"):
            getattr(numpy_helper, unpack)(packed[:0], [count])


# --- numpy_helper's conversions: exception types and messages -------------------------

NUMPY_HELPER_CASES = [
    ("empty dict", lambda n: n.from_dict({})),
    ("float keys", lambda n: n.from_dict({1.5: np.array(1), 2.5: np.array(2)})),
    ("bool keys", lambda n: n.from_dict({True: np.array(1)})),
    ("mixed key types", lambda n: n.from_dict({0: np.array(0.1), 1.1: np.array(0.9)})),
    ("mixed value types", lambda n: n.from_dict({0: np.array(1), 1: np.array(0.9)})),
    ("object array of ints", lambda n: n.from_array(np.array([42], dtype=object))),
    ("mixed list", lambda n: n.from_list([np.array(1), [np.array(1)]])),
    ("unknown optional type", lambda n: n.from_optional(np.array(1), dtype=99)),
    ("int32 keys", lambda n: n.from_dict({np.int32(1): np.array(1), np.int32(2): np.array(2)})),
    ("uint8 keys", lambda n: n.from_dict({np.uint8(7): np.array([1.5])}, name="m")),
    ("empty name", lambda n: n.from_list([np.array(1)], name="")),
    ("optional of a map", lambda n: n.from_optional({1: np.array(1)})),
    ("strings", lambda n: n.from_array(np.array(["a", b"b"], dtype=object))),
]


@pytest.mark.parametrize("label, call", NUMPY_HELPER_CASES, ids=[c[0] for c in NUMPY_HELPER_CASES])
def test_numpy_helper_conversions_raise_and_build_as_onnx(label, call):
    ours = _outcome(lambda: call(numpy_helper))
    theirs = _outcome(lambda: call(onnx.numpy_helper))
    if not isinstance(theirs, tuple):
        ours, theirs = ours.SerializeToString(), theirs.SerializeToString()
    _same_outcome(ours, theirs)


def test_to_dict_of_a_map_with_a_key_too_many_raises_index_error():
    m = numpy_helper.from_dict({1: np.array(1.0), 2: np.array(2.0)}, name="m")
    m.keys.append(3)
    with pytest.raises(IndexError, match=r"\(map name: m\) are not the same"):
        numpy_helper.to_dict(m)


def test_from_dict_keeps_string_keys_which_onnx_cannot_take():
    # onnx reads a str key as a dtype code and fails; ours stores it as UTF-8.
    m = numpy_helper.from_dict({"a": np.array(1), b"b": np.array(2)})
    assert m.key_type == ol.TensorProto.STRING
    assert list(m.string_keys) == [b"a", b"b"]
    assert list(numpy_helper.to_dict(m)) == [b"a", b"b"]


# --- helper.make_tensor ---------------------------------------------------------------

T = onnx.TensorProto
MAKE_TENSOR_CASES = [
    ("too few values", lambda h: h.make_tensor("t", T.FLOAT, [2, 2], [1.0, 2.0, 3.0])),
    ("too many values", lambda h: h.make_tensor("t", T.FLOAT, [2], [1.0, 2.0, 3.0])),
    ("raw size", lambda h: h.make_tensor("t", T.FLOAT, [2], b"\0" * 4, raw=True)),
    ("raw of a list", lambda h: h.make_tensor("t", T.FLOAT, [2], [1.0, 2.0], raw=True)),
    ("raw strings", lambda h: h.make_tensor("t", T.STRING, [1], b"a", raw=True)),
    ("strings short", lambda h: h.make_tensor("t", T.STRING, [2], ["a"])),
    ("int8 overflow", lambda h: h.make_tensor("t", T.INT8, [1], [300])),
]


@pytest.mark.parametrize("label, call", MAKE_TENSOR_CASES, ids=[c[0] for c in MAKE_TENSOR_CASES])
def test_make_tensor_refuses_with_onnxs_exception_and_message(label, call):
    _same_outcome(_outcome(lambda: call(helper)), _outcome(lambda: call(onnx.helper)))


ML_TYPES = [
    (T.BFLOAT16, ml_dtypes.bfloat16),
    (T.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    (T.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    (T.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    (T.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    (T.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu),
    (T.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
    (T.FLOAT6E2M3, ml_dtypes.float6_e2m3fn),
    (T.FLOAT6E3M2, ml_dtypes.float6_e3m2fn),
    (T.INT4, ml_dtypes.int4),
    (T.UINT4, ml_dtypes.uint4),
    (T.INT2, ml_dtypes.int2),
    (T.UINT2, ml_dtypes.uint2),
]


@pytest.mark.parametrize("data_type, dtype", ML_TYPES)
@pytest.mark.parametrize("shape", [(7,), (2, 4), ()])
def test_ml_dtypes_arrays_go_through_every_helper_as_in_onnx(data_type, dtype, shape):
    values = (np.arange(int(np.prod(shape))) % 2).astype(dtype).reshape(shape)
    assert helper.np_dtype_to_tensor_dtype(values.dtype) == data_type
    assert helper.tensor_dtype_to_np_dtype(data_type) == onnx.helper.tensor_dtype_to_np_dtype(data_type)
    for name in ("tensor_dtype_to_field", "tensor_dtype_to_storage_tensor_dtype", "tensor_dtype_to_string"):
        assert getattr(helper, name)(data_type) == getattr(onnx.helper, name)(data_type)
    raw = helper.make_tensor("t", data_type, shape, values, raw=True)
    assert raw.SerializeToString() == onnx.helper.make_tensor("t", data_type, shape, values, raw=True).SerializeToString()
    typed = helper.make_tensor("t", data_type, shape, values.astype(np.float32).tolist())
    theirs = _outcome(lambda: onnx.helper.make_tensor("t", data_type, shape, values.astype(np.float32).tolist()))
    if not isinstance(theirs, tuple):  # onnx fails on a 0-d FLOAT8E8M0 tensor
        assert typed.SerializeToString() == theirs.SerializeToString()
    array = numpy_helper.from_array(values, "t")
    assert array.SerializeToString() == onnx.numpy_helper.from_array(values, "t").SerializeToString()
    for tensor in (raw, typed, array):
        back = numpy_helper.to_array(tensor)
        assert back.dtype == values.dtype and back.shape == shape
        np.testing.assert_array_equal(back.astype(np.float32), values.astype(np.float32))


@pytest.mark.parametrize("data_type", [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, T.FLOAT8E8M0])
def test_float8_make_tensor_saturates_and_rounds_to_onnxs_bytes(data_type):
    values = [0.0, -0.0, 0.3, 448.0, 449.0, 1e30, -1e30, 57344.0, 2.0**-140, float("inf"), float("nan")]
    ours = helper.make_tensor("t", data_type, [len(values)], values)
    theirs = onnx.helper.make_tensor("t", data_type, [len(values)], values)
    assert ours.SerializeToString() == theirs.SerializeToString()


# --- the protobuf module names --------------------------------------------------------


def test_the_generated_module_names_hold_the_packages_classes():
    from onnx_light.onnx import onnx_data_pb, onnx_ml_pb2, onnx_operators_pb, onnx_pb

    assert onnx_pb.ModelProto is ol.ModelProto is onnx_ml_pb2.ModelProto
    assert onnx_pb.TensorProto.FLOAT == onnx.onnx_pb.TensorProto.FLOAT
    assert onnx_pb.IR_VERSION == ol.IR_VERSION
    assert onnx_data_pb.SequenceProto is ol.SequenceProto
    assert onnx_operators_pb.OperatorSetProto is ol.OperatorSetProto
    # What protobuf's module exports, ours does (the private names aside).
    public = {n for n in dir(onnx.onnx_ml_pb2) if not n.startswith("_")} - {"DESCRIPTOR"}
    assert public <= set(onnx_ml_pb2.__all__)


# --- external data --------------------------------------------------------------------


def _model_with_weights():
    w = onnx.numpy_helper.from_array(np.arange(1024, dtype=np.float32), "w")
    small = onnx.numpy_helper.from_array(np.arange(3, dtype=np.float32), "small")
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["w", "small"], ["y"])],
        "g",
        [],
        [onnx.helper.make_tensor_value_info("y", T.FLOAT, [1024])],
        [w, small],
    )
    return onnx.helper.make_model(graph)


def test_a_load_leaves_tensors_read_from_external_data_marked_default_as_onnx(tmp_path):
    p = str(tmp_path / "m.onnx")
    onnx.save_model(_model_with_weights(), p, save_as_external_data=True, location="w.bin")
    ours, theirs = ol.load(p), onnx.load(p)
    w = ours.graph.initializer[0]
    assert w.HasField("data_location") and w.data_location == T.DEFAULT
    assert len(w.external_data) == 0
    assert not ours.graph.initializer[1].HasField("data_location")  # it was never external
    assert ours.SerializeToString() == theirs.SerializeToString()
    with open(p, "rb") as f:
        assert ol.load(f).SerializeToString() == theirs.SerializeToString()
    # Loading the data afterwards leaves the same record.
    later = ol.load(p, load_external_data=False)
    assert later.graph.initializer[0].data_location == T.EXTERNAL
    external_data_helper.load_external_data_for_model(later, str(tmp_path))
    assert later.SerializeToString() == theirs.SerializeToString()


def test_convert_model_from_external_data_marks_tensors_default_as_onnx():
    ours, theirs = ol.load_from_string(_model_with_weights().SerializeToString()), _model_with_weights()
    for model, module in ((ours, external_data_helper), (theirs, onnx.external_data_helper)):
        module.convert_model_to_external_data(model, location="w.bin", size_threshold=0)
        assert model.graph.initializer[0].data_location == T.EXTERNAL
        module.convert_model_from_external_data(model)
    assert ours.SerializeToString() == theirs.SerializeToString()


def test_refused_external_data_is_a_checker_validation_error(tmp_path):
    assert issubclass(ol.ExternalDataError, checker.ValidationError)
    assert issubclass(ol.ExternalDataError, ValueError)
    p = tmp_path / "m.onnx"
    onnx.save_model(_model_with_weights(), str(p), save_as_external_data=True, location="w.bin")
    (tmp_path / "secret.bin").write_bytes((tmp_path / "w.bin").read_bytes())
    os.remove(tmp_path / "w.bin")
    os.symlink(tmp_path / "secret.bin", tmp_path / "w.bin")
    with pytest.raises(checker.ValidationError, match="symbolic link"):
        ol.load(p)
    model = ol.load(p, load_external_data=False)
    with pytest.raises(checker.ValidationError, match="symbolic link"):
        external_data_helper.load_external_data_for_model(model, str(tmp_path))


def test_a_range_past_the_end_of_the_file_is_named_as_onnx_names_it(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save_model(_model_with_weights(), str(p), save_as_external_data=True, location="w.bin")
    model = ol.load(p, load_external_data=False)
    entries = {e.key: e for e in model.graph.initializer[0].external_data}
    entries["offset"].value = "5000"
    with pytest.raises(ValueError, match=r"offset 5000 exceeds file size \(4096 bytes\)"):
        external_data_helper.load_external_data_for_model(model, str(tmp_path))
    entries["offset"].value = "100"
    with pytest.raises(ValueError, match=r"length 4096 exceeds available data \(3996 bytes from offset 100\)"):
        external_data_helper.load_external_data_for_model(model, str(tmp_path))


@pytest.mark.parametrize("location", ["../outside.bin", "/abs/w.bin", "sub/"])
def test_a_tensors_own_location_leaving_the_directory_is_refused_on_save(tmp_path, location):
    model = ol.load_from_string(_model_with_weights().SerializeToString())
    # Marked by hand, as onnx's tests do, so that no option checked the location.
    external_data_helper.set_external_data(model.graph.initializer[0], location)
    (tmp_path / "dir").mkdir()
    with pytest.raises(checker.ValidationError) as info:
        ol.save(model, tmp_path / "dir" / "m.onnx")
    assert isinstance(info.value, ol.ExternalDataError)
    assert info.value.rule == "location"
    assert "`w`" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["dir"] and os.listdir(tmp_path / "dir") == []


def test_write_external_data_tensors_appends_as_onnx_does(tmp_path):
    results = []
    for name, module in (("ours", ol), ("theirs", onnx)):
        d = tmp_path / name
        d.mkdir()
        (d / "w.bin").write_bytes(b"older bytes")
        model = module.load_from_string(_model_with_weights().SerializeToString())
        module.external_data_helper.convert_model_to_external_data(model, location="w.bin", size_threshold=0)
        assert module.external_data_helper.write_external_data_tensors(model, str(d)) is model
        # Twice: the second call finds no bytes in memory and writes nothing.
        module.external_data_helper.write_external_data_tensors(model, str(d))
        assert not any(t.HasField("raw_data") for t in model.graph.initializer)
        results.append(((d / "w.bin").read_bytes(), model.SerializeToString()))
    assert results[0] == results[1]
    assert results[0][0].startswith(b"older bytes")


def _model_with_tensors_everywhere():
    """Initializers in the graph and in an If branch, attribute tensors in nodes of the
    graph, of the branch and of a local function."""

    def weights(name, n):
        return onnx.numpy_helper.from_array(np.arange(n, dtype=np.float32) + len(name), name)

    constant = onnx.helper.make_node("Constant", [], ["c"], value=weights("c", 5))
    branch = onnx.helper.make_graph(
        [onnx.helper.make_node("Constant", [], ["bc"], value=weights("bc", 6)), onnx.helper.make_node("Add", ["bw", "bc"], ["bo"])],
        "branch",
        [],
        [onnx.helper.make_tensor_value_info("bo", T.FLOAT, [6])],
        [weights("bw", 6)],
    )
    cond = onnx.helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch)
    call = onnx.helper.make_node("F", [], ["z"], domain="local")
    function = onnx.helper.make_function(
        "local", "F", [], ["z"], [onnx.helper.make_node("Constant", [], ["z"], value=weights("fc", 7))],
        [onnx.helper.make_opsetid("", 17)],
    )
    graph = onnx.helper.make_graph(
        [constant, cond, call],
        "g",
        [onnx.helper.make_tensor_value_info("cond", T.BOOL, [])],
        [onnx.helper.make_tensor_value_info("y", T.FLOAT, [6])],
        [weights("w", 4)],
    )
    return onnx.helper.make_model(
        graph, functions=[function], opset_imports=[onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("local", 1)]
    )


def test_write_external_data_tensors_writes_every_tensor_in_onnxs_order(tmp_path):
    results = []
    for name, module in (("ours", ol), ("theirs", onnx)):
        d = tmp_path / name
        d.mkdir()
        model = module.load_from_string(_model_with_tensors_everywhere().SerializeToString())
        helper_module = module.external_data_helper
        helper_module.convert_model_to_external_data(model, location="w.bin", size_threshold=0, convert_attribute=True)
        # Functions' attribute tensors are written too when marked by hand, as in onnx.
        fc = model.functions[0].node[0].attribute[0].t
        helper_module.set_external_data(fc, "w.bin")
        helper_module.write_external_data_tensors(model, str(d))
        results.append(((d / "w.bin").read_bytes(), model.SerializeToString()))
    assert results[0] == results[1]
    # w, both branches' bw, c, both branches' bc, fc: 40 floats.
    assert len(results[0][0]) == 4 * (4 + 6 + 6 + 5 + 6 + 6 + 7)


def test_write_external_data_tensors_refuses_a_symbolic_link(tmp_path):
    (tmp_path / "target.bin").write_bytes(b"keep")
    os.symlink(tmp_path / "target.bin", tmp_path / "w.bin")
    model = ol.load_from_string(_model_with_weights().SerializeToString())
    external_data_helper.convert_model_to_external_data(model, location="w.bin", size_threshold=0)
    with pytest.raises(checker.ValidationError):
        external_data_helper.write_external_data_tensors(model, str(tmp_path))
    assert (tmp_path / "target.bin").read_bytes() == b"keep"


# --- checker --------------------------------------------------------------------------

RECURSIVE = """
<ir_version: 8, opset_import: [ "" : 17, "local" : 1 ]>
agraph (float[N] x) => (float[N] y) {
    y = local.foo (x)
}
<domain: "local", opset_import: [ "" : 17, "local" : 1 ]>
foo (x) => (y) {
    y = local.bar (x)
}
<domain: "local", opset_import: [ "" : 17, "local" : 1 ]>
bar (x) => (y) {
    y = local.foo (x)
}
"""


def test_recursive_local_functions_are_reported_as_onnx_reports_them():
    model = parser.parse_model(RECURSIVE)
    with pytest.raises(checker.ValidationError) as ours:
        checker.check_model(model)
    with pytest.raises(onnx.checker.ValidationError) as theirs:
        onnx.checker.check_model(onnx.parser.parse_model(RECURSIVE))
    # onnx starts from the functions in hash order; ours in model order.
    for text in (str(ours.value), str(theirs.value)):
        assert "Cycle detected in model-local function references: local::" in text
        assert "local::foo" in text and "local::bar" in text
        assert text.endswith(". Model-local functions must not be recursive.")
    assert "local::foo -> local::bar -> local::foo." in str(ours.value)


def test_local_functions_sharing_an_identifier_are_reported_as_onnx_reports_them():
    text = RECURSIVE.replace("y = local.bar (x)", "y = Relu (x)").replace("bar (x)", "foo (x)")
    for module in (checker, onnx.checker):
        with pytest.raises(module.ValidationError, match="multiple local functions with the same implementation id 'local::foo'"):
            module.check_model((parser if module is checker else onnx.parser).parse_model(text))


# --- printer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data_type, dims, raw",
    [(T.FLOAT16, [4], b"\x00\x3c"), (T.FLOAT, [1], b"\0" * 5), (T.INT64, [2], b"\0" * 24)],
)
def test_printing_a_tensor_whose_raw_data_does_not_fit_raises_onnxs_inference_error(data_type, dims, raw):
    tensor = ol.TensorProto(name="w", data_type=data_type, dims=dims, raw_data=raw)
    graph = helper.make_graph([], "g", [], [], [tensor])
    with pytest.raises(ol.shape_inference.InferenceError, match="Data size mismatch") as info:
        printer.to_text(graph)
    assert isinstance(info.value, ol.TensorDataError)
    assert "`w`" in str(info.value)
    theirs = onnx.helper.make_graph([], "g", [], [], [onnx.TensorProto(name="w", data_type=data_type, dims=dims, raw_data=raw)])
    with pytest.raises(onnx.shape_inference.InferenceError, match="Data size mismatch"):
        onnx.printer.to_text(theirs)
