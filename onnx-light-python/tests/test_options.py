"""The option classes: one hierarchy (`TensorBufferOptions`, and `ParseOptions` and
`SerializeOptions` built on it), the seed's defaults, and every function that takes
options taking each of them."""

import dataclasses

import numpy as np
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import external_data_helper, helper, numpy_helper


def _model(sizes):
    """A model with one uint8 initializer of each size in `sizes` (bytes)."""
    inits = [
        numpy_helper.from_array(np.full(n, i + 1, dtype=np.uint8), f"t{i}")
        for i, n in enumerate(sizes)
    ]
    graph = helper.make_graph([], "g", [], [], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_the_hierarchy_and_its_defaults_are_the_seeds():
    assert issubclass(ol.ParseOptions, ol.TensorBufferOptions)
    assert issubclass(ol.SerializeOptions, ol.TensorBufferOptions)
    base = ol.TensorBufferOptions()
    assert (base.raw_data_threshold, base.alignment) == (0, 0)
    load = ol.ParseOptions()
    assert (load.raw_data_threshold, load.alignment) == (1024, 0)
    save = ol.SerializeOptions()
    assert (save.raw_data_threshold, save.alignment) == (64, 0)
    # The other defaults, as they were.
    assert (load.load_external_data, load.no_copy, load.num_threads) == (True, False, 0)
    assert (load.skip_raw_data, load.location, load.max_memory) == (False, None, -1)
    assert load.allow_aliasing is False
    assert (load.base_dir, load.recursion_limit) == (None, 100)
    assert (load.max_model_size, load.max_tensor_size) == (None, None)
    assert (save.save_as_external_data, save.all_tensors_to_one_file) == (False, True)
    assert (save.size_threshold, save.max_external_file_size, save.sync) == (1024, 0, True)
    assert (save.convert_attribute, save.replace_data_files, save.location) == (False, False, None)


def test_each_class_is_defined_once_with_one_field_per_name():
    base = {f.name for f in dataclasses.fields(ol.TensorBufferOptions)}
    assert base == {"raw_data_threshold", "alignment"}
    for cls in (ol.ParseOptions, ol.SerializeOptions):
        names = [f.name for f in dataclasses.fields(cls)]
        assert len(names) == len(set(names))
        assert base <= set(names)


def test_keywords_set_fields_and_options_compare_by_value():
    o = ol.ParseOptions(raw_data_threshold=16, alignment=64, num_threads=1)
    assert (o.raw_data_threshold, o.alignment, o.num_threads) == (16, 64, 1)
    assert o == ol.ParseOptions(raw_data_threshold=16, alignment=64, num_threads=1)
    assert o != ol.ParseOptions()


def test_consolidation_takes_each_class_and_uses_its_threshold():
    sizes = [10, 64, 100, 1024, 3000]
    for options, moved in [
        (None, 5),
        (ol.TensorBufferOptions(), 5),
        (ol.SerializeOptions(), 4),
        (ol.ParseOptions(), 2),
        (ol.TensorBufferOptions(raw_data_threshold=101), 2),
    ]:
        m = _model(sizes)
        before = m.SerializeToString()
        out = ol.consolidate_tensors_to_buffer(m, options)
        assert out.tensor_count == moved, options
        assert m.SerializeToString() == before
    # Alignment 0 packs the payloads; the keywords override the options.
    m = _model(sizes)
    out = ol.consolidate_tensors_to_buffer(m, ol.ParseOptions(), raw_data_threshold=0)
    assert (out.tensor_count, out.nbytes) == (5, sum(sizes))
    m = _model(sizes)
    out = ol.consolidate_tensors_to_buffer(m, alignment=4096, raw_data_threshold=64)
    assert out.tensor_count == 4
    assert out.nbytes == 3 * 4096 + 3000
    addresses = [ol.raw_data_view(t) for t in m.graph.initializer]
    for view, n in zip(addresses, sizes):
        if n >= 64:
            assert np.asarray(view).__array_interface__["data"][0] % 4096 == 0


def test_consolidation_refuses_what_is_not_a_buffer_option():
    with pytest.raises(TypeError, match="TensorBufferOptions"):
        ol.consolidate_tensors_to_buffer(_model([10]), {"raw_data_threshold": 0})
    with pytest.raises(ol.OptionError, match="alignment"):
        ol.consolidate_tensors_to_buffer(_model([10]), ol.TensorBufferOptions(alignment=48))


def test_load_takes_parse_options_and_their_buffer_fields(tmp_path):
    m = _model([5000, 3000, 10])
    p = tmp_path / "m.onnx"
    ol.save(m, p)
    for loaded in [
        ol.load(p, options=ol.ParseOptions(alignment=64)),
        ol.load(p, options=ol.ParseOptions(num_threads=1), alignment=64),
        ol.load(p.read_bytes(), options=ol.ParseOptions(alignment=64)),
    ]:
        assert loaded == m
        for t in loaded.graph.initializer[:2]:
            address = np.asarray(ol.raw_data_view(t)).__array_interface__["data"][0]
            assert address % 64 == 0
    # A plain TensorBufferOptions sets its two fields, the rest are ParseOptions'.
    loaded = ol.load(p, options=ol.TensorBufferOptions(alignment=64))
    for t in loaded.graph.initializer[:2]:
        assert np.asarray(ol.raw_data_view(t)).__array_interface__["data"][0] % 64 == 0
    with pytest.raises(TypeError, match="ParseOptions"):
        ol.load(p, options=ol.SerializeOptions())
    with pytest.raises(TypeError, match="ParseOptions.num_threads"):
        ol.load(p, options=ol.ParseOptions(num_threads="all"))
    with pytest.raises(ol.OptionError, match="alignment"):
        ol.load(p, options=ol.ParseOptions(alignment=3))


def test_a_no_copy_load_shares_payloads_from_the_threshold_up(tmp_path):
    m = _model([2000, 1100, 900])
    data = m.SerializeToString()
    start = np.frombuffer(data, dtype=np.uint8).__array_interface__["data"][0]
    end = start + len(data)

    def shared(loaded):
        out = []
        for t in loaded.graph.initializer:
            a = np.asarray(ol.raw_data_view(t)).__array_interface__["data"][0]
            out.append(start <= a < end)
        return out

    assert shared(ol.load(data, no_copy=True)) == [True, True, False]
    assert shared(ol.load(data, options=ol.ParseOptions(no_copy=True, raw_data_threshold=1500))) == [
        True,
        False,
        False,
    ]


def test_save_takes_serialize_options_and_aligns_external_data(tmp_path):
    m = _model([5000, 3000, 100])

    def offsets(path):
        back = ol.load(path, load_external_data=False)
        out = []
        for t in back.graph.initializer:
            entries = {e.key: e.value for e in t.external_data}
            if "offset" in entries:
                out.append(int(entries["offset"]))
        return out

    ol.save(m, tmp_path / "a.onnx", options=ol.SerializeOptions(save_as_external_data=True))
    # Alignment 0: the library's default for data files, 4096.
    assert offsets(tmp_path / "a.onnx") == [0, 8192]
    o = ol.SerializeOptions(save_as_external_data=True, alignment=64, size_threshold=64)
    ol.save(m, tmp_path / "b.onnx", options=o)
    assert offsets(tmp_path / "b.onnx") == [0, 5056, 8064]
    # The keyword wins over the options object.
    ol.save(m, tmp_path / "c.onnx", options=o, alignment=128)
    assert offsets(tmp_path / "c.onnx") == [0, 5120, 8192]
    for name in ("a.onnx", "b.onnx", "c.onnx"):
        back = ol.load(tmp_path / name).graph.initializer
        for t, u in zip(back, m.graph.initializer):
            np.testing.assert_array_equal(t.numpy(), u.numpy())
    base = ol.TensorBufferOptions(alignment=64)
    ol.save(m, tmp_path / "d.onnx", options=base, save_as_external_data=True, size_threshold=64)
    assert offsets(tmp_path / "d.onnx") == [0, 5056, 8064]
    with pytest.raises(TypeError, match="SerializeOptions"):
        ol.save(m, tmp_path / "e.onnx", options=ol.ParseOptions())
    with pytest.raises(ol.OptionError, match="alignment"):
        ol.save(m, tmp_path / "e.onnx", options=ol.SerializeOptions(alignment=100))


def test_convert_to_external_data_takes_serialize_options(tmp_path):
    m = _model([5000, 300, 10])
    o = ol.SerializeOptions(size_threshold=200, location="w.bin")
    external_data_helper.convert_model_to_external_data(m, options=o)
    marked = [external_data_helper.uses_external_data(t) for t in m.graph.initializer]
    assert marked == [True, True, False]
    m = _model([5000, 300, 10])
    external_data_helper.convert_model_to_external_data(m, True, "w.bin", 4000, options=o)
    marked = [external_data_helper.uses_external_data(t) for t in m.graph.initializer]
    assert marked == [True, False, False]
    ol.save(m, tmp_path / "m.onnx")
    assert (tmp_path / "w.bin").stat().st_size == 5000


def test_the_seeds_limits_and_base_directory_of_a_load(tmp_path):
    m = _model([2000])
    p = tmp_path / "m.onnx"
    ol.save(m, p, save_as_external_data=True, location="m.data", size_threshold=100)
    with pytest.raises(ol.DecodeError, match="tensor size of 2000 bytes exceeds"):
        ol.load(p, options=ol.ParseOptions(max_tensor_size=1999))
    assert len(ol.load(p, options=ol.ParseOptions(max_tensor_size=2000)).graph.initializer[0].raw_data) == 2000
    size = p.stat().st_size
    with pytest.raises(ol.DecodeError, match="model size"):
        ol.load(p, options=ol.ParseOptions(max_model_size=size - 1))
    with pytest.raises(ol.DecodeError, match="nested deeper than the limit of 1"):
        ol.load(p, options=ol.ParseOptions(recursion_limit=1))
    with pytest.raises(ol.OptionError, match="recursion_limit"):
        ol.load(p, options=ol.ParseOptions(recursion_limit=101))
    # Bytes have no directory of their own: base_dir gives them one.
    data = p.read_bytes()
    assert not ol.load(data).graph.initializer[0].HasField("raw_data")
    loaded = ol.load(data, options=ol.ParseOptions(base_dir=str(tmp_path)))
    assert loaded.graph.initializer[0].raw_data == bytes([1]) * 2000
