"""load / save / external data / encryption / consolidation, checked against `onnx`."""

import copy
import errno
import io
import os
import pathlib
import pickle
import stat

import numpy as np
import onnx
import pytest

import onnx_light.onnx as ol
from onnx_light.onnx import external_data_helper, numpy_helper


def test_load_from_path_pathlike_bytes_and_file(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    p.write_bytes(ref_bytes)
    for src in [str(p), p, ref_bytes, io.BytesIO(ref_bytes)]:
        assert ol.load(src).SerializeToString() == ref_bytes
    with open(p, "rb") as f:
        assert ol.load_model(f).SerializeToString() == ref_bytes
    assert ol.load(p, no_copy=True).SerializeToString() == ref_bytes
    assert ol.load(p, num_threads=1).SerializeToString() == ref_bytes


def test_save_is_readable_by_onnx(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "out.onnx"
    ol.save(m, p)
    assert p.read_bytes() == ref_bytes
    buf = io.BytesIO()
    ol.save_model(m, buf)
    assert buf.getvalue() == ref_bytes


def test_external_data_split_and_aligned_loads_in_onnx(tmp_path, ref_model, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "ext.onnx"
    ol.save(m, p, save_as_external_data=True, max_external_file_size=40000, alignment=4096)
    files = sorted(os.listdir(tmp_path))
    assert "ext.onnx.data" in files and "ext.onnx.data.1" in files
    for name in files:
        if name.startswith("ext.onnx.data"):
            assert os.path.getsize(tmp_path / name) <= 40000 + 4096
    loaded = onnx.load(str(p))
    for a, b in zip(loaded.graph.initializer, ref_model.graph.initializer):
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(a), onnx.numpy_helper.to_array(b))
    back = ol.load(p)
    assert [numpy_helper.to_array(t).sum() for t in back.graph.initializer] == [
        onnx.numpy_helper.to_array(t).sum() for t in ref_model.graph.initializer
    ]
    offsets = [
        int(e.value)
        for t in ol.load(p, load_external_data=False).graph.initializer
        for e in t.external_data
        if e.key == "offset"
    ]
    assert offsets and all(o % 4096 == 0 for o in offsets)
    assert all(
        external_data_helper.uses_external_data(t)
        for t in ol.load(p, load_external_data=False).graph.initializer
        if t.name != "small"
    )


def test_reads_external_data_written_by_onnx(tmp_path, ref_model):
    p = tmp_path / "byonnx.onnx"
    want = [onnx.numpy_helper.to_array(t) for t in ref_model.graph.initializer]
    onnx.save(ref_model, str(p), save_as_external_data=True, location="w.bin", size_threshold=0)
    m = ol.load(p)
    for a, b in zip(m.graph.initializer, want):
        np.testing.assert_array_equal(numpy_helper.to_array(a), b)
    lazy = ol.load(p, load_external_data=False)
    external_data_helper.load_external_data_for_model(lazy, str(tmp_path))
    assert lazy.SerializeToString() == m.SerializeToString()


def test_tensors_of_an_unloaded_model_read_their_external_data_as_in_onnx(
    tmp_path, ref_model, monkeypatch
):
    p = tmp_path / "byonnx.onnx"
    onnx.save(ref_model, str(p), save_as_external_data=True, location="w.bin", size_threshold=0)
    theirs = onnx.load(str(p), load_external_data=False).graph.initializer
    ours = ol.load(p, load_external_data=False).graph.initializer
    for a, b in zip(ours, theirs):
        # to_array(tensor, base_dir) reads the file without changing the tensor; the
        # onnx package's message too.
        want = onnx.numpy_helper.to_array(b, base_dir=str(tmp_path))
        np.testing.assert_array_equal(numpy_helper.to_array(a, base_dir=str(tmp_path)), want)
        np.testing.assert_array_equal(numpy_helper.to_array(b, base_dir=str(tmp_path)), want)
        assert external_data_helper.uses_external_data(a)
    # base_dir defaults to the current directory, as in onnx.
    with pytest.raises(FileNotFoundError, match="w.bin"):
        numpy_helper.to_array(ours[0])
    monkeypatch.chdir(tmp_path)
    np.testing.assert_array_equal(
        numpy_helper.to_array(ours[0]), onnx.numpy_helper.to_array(theirs[0])
    )
    # load_external_data_for_tensor loads it into the tensor.
    external_data_helper.load_external_data_for_tensor(ours[1], tmp_path)
    assert not external_data_helper.uses_external_data(ours[1])
    assert len(ours[1].external_data) == 0
    assert ours[1].raw_data == onnx.load(str(p)).graph.initializer[1].raw_data
    # Its location is checked as a model's is.
    ours[2].external_data[0].value = "../w.bin"
    with pytest.raises(ol.ExternalDataError, match="`..`"):
        external_data_helper.load_external_data_for_tensor(ours[2], tmp_path)


def _inline_again(ref_bytes):
    """What onnx makes of the model after marking every tensor external and making it
    inline again: the same tensors with `data_location` set to DEFAULT."""
    ref = onnx.load_from_string(ref_bytes)
    onnx.external_data_helper.convert_model_to_external_data(ref, location="w.bin", size_threshold=0)
    onnx.external_data_helper.convert_model_from_external_data(ref)
    return ref.SerializeToString()


def test_convert_model_from_external_data_makes_the_next_save_inline(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    external_data_helper.convert_model_to_external_data(m, location="w.bin", size_threshold=0)
    external_data_helper.convert_model_from_external_data(m)  # the settings are dropped
    ol.save(m, tmp_path / "a.onnx")
    assert os.listdir(tmp_path) == ["a.onnx"]
    assert (tmp_path / "a.onnx").read_bytes() == _inline_again(ref_bytes)

    ol.save(m, tmp_path / "ext.onnx", save_as_external_data=True, location="w.bin")
    for loaded in (
        ol.load(tmp_path / "ext.onnx"),
        ol.load(tmp_path / "ext.onnx", skip_raw_data=True),  # data attached lazily
    ):
        external_data_helper.convert_model_from_external_data(loaded)
        ol.save(loaded, tmp_path / "b.onnx")
        assert (tmp_path / "b.onnx").read_bytes() == _inline_again(ref_bytes)

    # Data that was not loaded: a ValueError naming the tensor, as in onnx, and the
    # model unchanged.
    unloaded = ol.load(tmp_path / "ext.onnx", load_external_data=False)
    before = unloaded.SerializeToString()
    with pytest.raises(ol.ExternalDataError, match="w.bin") as info:
        external_data_helper.convert_model_from_external_data(unloaded)
    assert isinstance(info.value, ValueError)
    assert unloaded.SerializeToString() == before


def test_convert_model_to_external_data_then_save(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    external_data_helper.convert_model_to_external_data(m, location="weights.bin")
    ol.save_model(m, tmp_path / "c.onnx")
    assert (tmp_path / "weights.bin").exists()
    assert onnx.load(str(tmp_path / "c.onnx")).graph.initializer[0].name == "w0"


def test_convert_model_to_external_data_marks_tensors_at_once_as_onnx_does(ref_model):
    original = ref_model.SerializeToString()
    ours = ol.load_from_string(original)
    for model in (ref_model, ours):
        getattr(
            onnx if model is ref_model else ol, "external_data_helper"
        ).convert_model_to_external_data(model, location="w.bin", size_threshold=0)
    assert ours.SerializeToString() == ref_model.SerializeToString()
    marked = [t for t in ours.graph.initializer if t.data_location == ol.TensorProto.EXTERNAL]
    assert len(marked) == len(ours.graph.initializer)
    assert all(t.raw_data for t in marked), "the bytes stay in memory until a save"
    # Without a location, one new unique file name for all of them, as in onnx.
    fresh = ol.load_from_string(original)
    external_data_helper.convert_model_to_external_data(fresh)
    names = {t.external_data[0].value for t in fresh.graph.initializer if t.external_data}
    assert len(names) == 1 and names.pop().endswith(".data")


def test_write_external_data_tensors_writes_the_marked_tensors_into_a_directory(
    tmp_path, ref_bytes
):
    m = ol.load_from_string(ref_bytes)
    external_data_helper.convert_model_to_external_data(m, location="w.bin", size_threshold=0)
    assert external_data_helper.write_external_data_tensors(m, str(tmp_path)) is m
    assert os.listdir(tmp_path) == ["w.bin"]
    for t in m.graph.initializer:
        assert not t.HasField("raw_data")
        assert {e.key for e in t.external_data} >= {"location", "offset", "length"}
    external_data_helper.load_external_data_for_model(m, str(tmp_path))
    external_data_helper.convert_model_from_external_data(m)
    assert m.SerializeToString() == _inline_again(ref_bytes)


def test_external_paths_escaping_the_directory_are_refused(tmp_path, ref_model):
    t = ref_model.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "../outside.bin"
    p = tmp_path / "bad.onnx"
    p.write_bytes(ref_model.SerializeToString())
    with pytest.raises(ol.ExternalDataError) as info:
        ol.load(p)
    assert "outside.bin" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert info.value.rule == "location"
    assert pickle.loads(pickle.dumps(info.value)).rule == "location"


def test_a_data_location_leaving_the_model_directory_is_refused_before_anything_is_written(
    tmp_path, ref_bytes
):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "m.onnx"
    for location in ["../w.bin", "sub/../../w.bin", str(tmp_path / "abs.bin"), "sub/"]:
        with pytest.raises(ol.OptionError) as info:
            ol.save_model(m, p, save_as_external_data=True, location=location)
        assert "location" in str(info.value)
        with pytest.raises(ol.OptionError):
            external_data_helper.convert_model_to_external_data(m, location=location)
    assert os.listdir(tmp_path) == []
    assert m.SerializeToString() == ref_bytes


def test_a_data_location_in_a_subdirectory_is_created_and_kept_on_every_save(
    tmp_path, ref_bytes
):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "m.onnx"
    for _ in range(3):
        ol.save_model(
            m, p, save_as_external_data=True, location="weights/m.data", size_threshold=0
        )
        assert sorted(os.listdir(tmp_path)) == ["m.onnx", "weights"]
        assert os.listdir(tmp_path / "weights") == ["m.data"]
        back = ol.load(p)
        assert back.SerializeToString() == onnx.load(str(p)).SerializeToString()
        raw = ol.load(p, load_external_data=False)
        locations = {
            e.value
            for t in raw.graph.initializer
            for e in t.external_data
            if e.key == "location"
        }
        assert locations <= {"weights/m.data"}


def test_saving_again_keeps_the_data_file_name_and_leaves_no_stale_copy(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "m.onnx"
    ol.save_model(m, p, save_as_external_data=True, location="small.data", size_threshold=0)
    size = os.path.getsize(tmp_path / "small.data")
    for _ in range(3):
        ol.save_model(m, p, save_as_external_data=True, location="small.data", size_threshold=0)
        assert sorted(os.listdir(tmp_path)) == ["m.onnx", "small.data"]
        assert os.path.getsize(tmp_path / "small.data") == size
    assert ol.load(p).SerializeToString() == onnx.load(str(p)).SerializeToString()


def test_another_models_data_file_is_left_alone_unless_replacing_is_asked_for(
    tmp_path, ref_bytes
):
    m = ol.load_from_string(ref_bytes)
    ol.save(m, tmp_path / "a.onnx", save_as_external_data=True, location="w.bin")
    a_data = (tmp_path / "w.bin").read_bytes()
    with pytest.raises(ol.DataFileExistsError) as info:
        ol.save(m, tmp_path / "b.onnx", save_as_external_data=True, location="w.bin")
    assert isinstance(info.value, FileExistsError)
    assert isinstance(info.value, ol.FileError)
    assert "w.bin" in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["a.onnx", "w.bin"]
    assert (tmp_path / "w.bin").read_bytes() == a_data
    # Saving the same path again replaces its own older data without being asked.
    for _ in range(3):
        ol.save(m, tmp_path / "a.onnx", save_as_external_data=True, location="w.bin")
    a = str(tmp_path / "a.onnx")
    assert ol.load(a).SerializeToString() == onnx.load(a).SerializeToString()
    # write_external_data_tensors appends to an existing file, as onnx's does: what
    # the file held stays, and the tensors' offsets start after it.
    for name, module in (("ours", ol), ("theirs", onnx)):
        other = tmp_path / name
        other.mkdir()
        (other / "w.bin").write_bytes(b"mine")
        marked = module.load_from_string(ref_bytes)
        module.external_data_helper.convert_model_to_external_data(marked, location="w.bin")
        module.external_data_helper.write_external_data_tensors(marked, str(other))
        assert os.listdir(other) == ["w.bin"]
        assert (other / "w.bin").read_bytes().startswith(b"mine")
        (other / "m.onnx").write_bytes(marked.SerializeToString())
    assert (tmp_path / "ours" / "w.bin").read_bytes() == (tmp_path / "theirs" / "w.bin").read_bytes()
    assert (tmp_path / "ours" / "m.onnx").read_bytes() == (tmp_path / "theirs" / "m.onnx").read_bytes()
    ol.save(
        m,
        tmp_path / "b.onnx",
        save_as_external_data=True,
        location="w.bin",
        replace_data_files=True,
    )
    b = str(tmp_path / "b.onnx")
    assert ol.load(b).SerializeToString() == onnx.load(b).SerializeToString()


def test_file_errors_are_the_builtin_oserror_subclasses(tmp_path, ref_bytes):
    # Caught as with `onnx`: `except FileNotFoundError` and friends, errno and filename
    # set, the library's message kept.
    missing = tmp_path / "nope.onnx"
    with pytest.raises(FileNotFoundError) as info:
        ol.load(missing)
    e = info.value
    assert isinstance(e, ol.FileError)
    assert (e.errno, e.filename) == (errno.ENOENT, str(missing))
    assert e.strerror == os.strerror(errno.ENOENT)
    assert str(e).startswith("I/O error: ") and "nope.onnx" in str(e)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e) and str(again) == str(e)
    assert (again.errno, again.strerror, again.filename) == (e.errno, e.strerror, e.filename)

    m = ol.load_from_string(ref_bytes)
    with pytest.raises(IsADirectoryError) as info:
        ol.save(m, tmp_path)
    assert isinstance(info.value, ol.FileError)
    assert info.value.errno == errno.EISDIR
    with pytest.raises(IsADirectoryError):
        ol.load(tmp_path)
    with pytest.raises(FileNotFoundError) as info:
        ol.save(m, tmp_path / "no-such-dir" / "m.onnx")
    assert ".tmp" not in str(info.value)
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        ol.load(tmp_path / "f" / "m.onnx")

    (tmp_path / "w.bin").write_bytes(b"other")
    with pytest.raises(FileExistsError) as info:
        ol.save(m, tmp_path / "a.onnx", save_as_external_data=True, location="w.bin")
    assert isinstance(info.value, ol.DataFileExistsError)
    assert info.value.errno == errno.EEXIST


def test_encryption_round_trips_and_detects_wrong_key(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "m.onnxc"
    ol.save_encrypted(m, p, key="secret")
    assert ol.load_encrypted(p, key="secret").SerializeToString() == ref_bytes
    with pytest.raises(ol.EncryptionError, match="is an encrypted model .ONNXAE01."):
        ol.load(p)  # named as encrypted, not as a wire-format error
    with pytest.raises(ol.EncryptionError) as info:
        ol.load_encrypted(p, key="wrong")
    assert "secret" not in str(info.value)
    for fmt in ["onnxcry1", "onnxcry2"]:
        data = ol.save_encrypted_string(m, key="k", format=fmt)
        assert data[:8] == fmt.upper().encode()
        assert ol.load_encrypted_string(data, key="k").SerializeToString() == ref_bytes
    old = ol.save_encrypted_string(m, key="k", format="onnxcry1")
    with pytest.raises(ol.EncryptionError):
        ol.load_encrypted_string(old, key="k", allow_unauthenticated=False)
    with pytest.raises(ol.EncryptionError):
        ol.load_encrypted_string(ref_bytes, key="k")


def test_consolidate_keeps_the_bytes(ref_bytes):
    m = ol.load_from_string(ref_bytes)
    out = ol.consolidate_tensors_to_buffer(m, ol.TensorBufferOptions(raw_data_threshold=1024, alignment=64))
    assert out.tensor_count == 4
    assert m.SerializeToString() == ref_bytes


def test_tensor_save_and_load(tmp_path):
    t = numpy_helper.from_array(np.arange(10, dtype=np.int32), "t")
    ol.save_tensor(t, tmp_path / "t.pb")
    back = ol.load_tensor(tmp_path / "t.pb")
    assert back == t
    assert onnx.load_tensor(str(tmp_path / "t.pb")).name == "t"


def test_bad_options_name_the_option(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    with pytest.raises(ol.OptionError) as info:
        ol.save(m, tmp_path / "x.onnx", save_as_external_data=True, alignment=3)
    assert "alignment" in str(info.value)
    # A thread count other than -1 (all cores) or a count is refused, not taken as -1.
    p = tmp_path / "m.onnx"
    ol.save(m, p, num_threads=-1)
    for call in (
        lambda n: ol.load(p, num_threads=n),
        lambda n: ol.save(m, p, num_threads=n),
        lambda n: ol.load(p, num_threads=n, no_copy=True),
        lambda n: ol.save_encrypted(m, tmp_path / "m.enc", key="k", num_threads=n),
    ):
        for n in (-3, 10**6):
            with pytest.raises(ol.OptionError, match="num_threads"):
                call(n)
    assert ol.load(p, num_threads=1).SerializeToString() == ref_bytes


def test_runs_in_onnxruntime(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    from onnx_light.onnx import helper

    x = helper.make_tensor_value_info("x", ol.TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", ol.TensorProto.FLOAT, [2, 3])
    w = numpy_helper.from_array(np.full((2, 3), 2.0, np.float32), "w")
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    out = sess.run(None, {"x": np.ones((2, 3), np.float32)})[0]
    np.testing.assert_array_equal(out, np.full((2, 3), 2.0, np.float32))


def test_truncated_file_names_the_problem(tmp_path, ref_bytes):
    p = tmp_path / "cut.onnx"
    p.write_bytes(ref_bytes[: len(ref_bytes) // 2])
    with pytest.raises(ol.DecodeError) as info:
        ol.load(p)
    assert isinstance(info.value, ValueError) and str(info.value)


def test_threads_share_a_model_while_saving(tmp_path, ref_bytes):
    import threading

    m = ol.load_from_string(ref_bytes)
    errors = []

    def reader():
        try:
            for _ in range(200):
                assert m.graph.node[0].op_type == "Add"
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def saver(i):
        try:
            for k in range(5):
                ol.save(m, tmp_path / f"t{i}-{k}.onnx")
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    threads += [threading.Thread(target=saver, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert (tmp_path / "t0-4.onnx").read_bytes() == ref_bytes


def test_structure_only_keeps_the_structure_under_either_name(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    p.write_bytes(ref_bytes)
    for m in [ol.load(p, structure_only=True), ol.load(p, skip_raw_data=True)]:
        assert [t.name for t in m.graph.initializer][:2] == ["w0", "w1"]
        assert [n.op_type for n in m.graph.node][0] == "Add"
        assert m.SerializeToString() == ref_bytes
    with pytest.raises(ValueError, match="one option"):
        ol.load(p, structure_only=True, skip_raw_data=False)


def test_a_structure_only_model_reads_its_weights_when_first_needed(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    p.write_bytes(ref_bytes)
    ref = onnx.load_from_string(ref_bytes)
    # Every operation that needs tensor bytes sees them: none is silently empty.
    for use in [
        lambda m: m.SerializeToString() == ref_bytes,
        lambda m: m.ByteSize() == len(ref_bytes),
        lambda m: m.graph.initializer[0].raw_data == ref.graph.initializer[0].raw_data,
        lambda m: m.graph.initializer[1].HasField("raw_data"),
        lambda m: "raw_data" in [f.name for f, _ in m.graph.initializer[2].ListFields()],
        lambda m: np.array_equal(
            ol.numpy_helper.to_array(m.graph.initializer[3]),
            onnx.numpy_helper.to_array(ref.graph.initializer[3]),
        ),
        lambda m: m == ol.load_from_string(ref_bytes),
        lambda m: copy.deepcopy(m).SerializeToString() == ref_bytes,
        lambda m: pickle.loads(pickle.dumps(m)).SerializeToString() == ref_bytes,
        lambda m: str(m) == str(ol.load_from_string(ref_bytes)),
    ]:
        assert use(ol.load(p, structure_only=True))
    # Reading the structure does not read them: bytes changed in place after a walk of
    # the nodes and names are what the first read of a weight sees.
    m = ol.load(p, structure_only=True)
    assert [n.op_type for n in m.graph.node][:1] == ["Add"]
    assert [t.name for t in m.graph.initializer][:1] == ["w0"]
    first = ref.graph.initializer[0].raw_data
    at = ref_bytes.index(first)
    changed = bytes(255 - b for b in first[:16])
    with open(p, "r+b") as f:
        f.seek(at)
        f.write(changed)
    assert m.graph.initializer[0].raw_data[:16] == changed


def test_all_cores_is_0_as_in_rust_and_the_cli_and_minus_1_too(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    p.write_bytes(ref_bytes)
    assert ol.ParseOptions().num_threads == 0
    assert ol.SerializeOptions().num_threads == 0
    for n in [0, -1, 1, 2]:
        assert ol.load(p, num_threads=n).SerializeToString() == ref_bytes
    with pytest.raises(ol.OptionError, match="give 0 for all cores"):
        ol.load(p, num_threads=-2)


def test_to_array_after_no_copy_load_is_a_read_only_view(tmp_path, ref_bytes):
    import gc

    p = tmp_path / "m.onnx"
    ol.save(ol.load_from_string(ref_bytes), p, save_as_external_data=True, alignment=4096)
    m = ol.load(p, no_copy=True)  # payloads: 4096-aligned slices of the mapped data file
    t = m.graph.initializer[0]
    a = numpy_helper.to_array(t)
    b = numpy_helper.to_array(m.graph.initializer[0])
    assert np.shares_memory(a, b)  # no copy: both see the mapped bytes
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    with pytest.raises(ValueError):
        a.flags.writeable = True
    expected = onnx.numpy_helper.to_array(onnx.load_model_from_string(ref_bytes).graph.initializer[0])
    # Replacing the payload leaves the old view as it was; the model sees the new one.
    t.CopyFrom(numpy_helper.from_array(np.zeros_like(expected), "w0"))
    assert numpy_helper.to_array(m.graph.initializer[0]).sum() == 0
    del m, t, b
    gc.collect()
    np.testing.assert_array_equal(a, expected)  # the array keeps its storage alive


def test_to_array_of_an_owned_payload_shares_it_from_then_on(ref_bytes):
    m = ol.load_from_string(ref_bytes, alignment=64)  # payloads copied to aligned storage
    a = numpy_helper.to_array(m.graph.initializer[1])
    b = numpy_helper.to_array(m.graph.initializer[1])
    assert np.shares_memory(a, b) and not a.flags.writeable
    assert m.SerializeToString() == ref_bytes


def test_to_array_of_a_copied_load_views_the_models_bytes(ref_bytes):
    m = ol.load_from_string(ref_bytes)
    arrays = [numpy_helper.to_array(t) for t in m.graph.initializer]
    for i, (a, t) in enumerate(zip(arrays, onnx.load_model_from_string(ref_bytes).graph.initializer)):
        np.testing.assert_array_equal(a, onnx.numpy_helper.to_array(t))
        # A read-only view of the model's payload, whatever its alignment.
        assert not a.flags.writeable
        assert np.shares_memory(a, numpy_helper.to_array(m.graph.initializer[i]))


def _address_range(data):
    base = np.frombuffer(data, dtype=np.uint8).ctypes.data
    return base, base + len(data)


def test_no_copy_load_from_bytes_shares_and_keeps_the_bytes_object(ref_bytes):
    import gc
    import sys

    data = bytes(bytearray(ref_bytes))  # an object of this test's own
    before = sys.getrefcount(data)
    m = ol.load(data, no_copy=True)
    assert sys.getrefcount(data) > before  # the model holds the bytes object
    view = ol.raw_data_view(m.graph.initializer[0])
    start, end = _address_range(data)
    address = np.asarray(view).ctypes.data
    assert start <= address and address + len(view) <= end  # inside `data`: no copy
    expected = onnx.load_model_from_string(ref_bytes).graph.initializer[0].raw_data
    del data, view
    gc.collect()
    assert m.graph.initializer[0].raw_data == expected  # still valid without our name
    assert m.SerializeToString() == ref_bytes
    # A file object's bytes are shared the same way; so is a bytearray's copy.
    assert ol.load(io.BytesIO(ref_bytes), no_copy=True).SerializeToString() == ref_bytes
    mutable = bytearray(ref_bytes)
    m2 = ol.load(mutable, no_copy=True)
    mutable[:] = bytes(len(mutable))
    assert m2.SerializeToString() == ref_bytes  # the model never sees later writes
    del m2
    data = bytes(bytearray(ref_bytes))
    before = sys.getrefcount(data)
    m3 = ol.load(data, no_copy=True)
    del m3
    gc.collect()
    assert sys.getrefcount(data) == before  # dropping the model releases the bytes


def test_skip_raw_data_is_refused_for_bytes(ref_bytes):
    with pytest.raises(ValueError, match="skip_raw_data"):
        ol.load(ref_bytes, skip_raw_data=True)


def test_raw_data_view_is_a_read_only_memoryview_without_a_copy(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    ol.save(ol.load_from_string(ref_bytes), p, save_as_external_data=True, alignment=4096)
    m = ol.load(p, no_copy=True)
    t = m.graph.initializer[1]
    view = ol.raw_data_view(t)
    assert isinstance(view, memoryview) and view.readonly
    assert bytes(view) == t.raw_data
    assert np.shares_memory(np.asarray(view), numpy_helper.to_array(t))
    with pytest.raises(TypeError):
        view[0] = 1
    t.raw_data = bytes(len(view))  # replaces the tensor's bytes, not the view's
    assert bytes(view) != t.raw_data
    assert ol.raw_data_view(ol.TensorProto()) is None


def test_save_without_sync_writes_the_same_bytes(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    ol.save(m, tmp_path / "a.onnx", sync=False)
    ol.save(m, tmp_path / "b.onnx", options=ol.SerializeOptions(sync=False))
    assert (tmp_path / "a.onnx").read_bytes() == ref_bytes == (tmp_path / "b.onnx").read_bytes()


def test_no_copy_load_from_a_file_object_reads_its_external_data(tmp_path, ref_bytes):
    p = tmp_path / "m.onnx"
    ol.save(ol.load_from_string(ref_bytes), p, save_as_external_data=True)
    with open(p, "rb") as f:
        m = ol.load(f, no_copy=True)  # the file's directory holds m.onnx.data
    assert m.SerializeToString() == onnx.load(str(p)).SerializeToString()


def _many_empty_nodes(n):
    """A model of n empty nodes: 2 bytes each on disk, far more once decoded."""
    nodes = b"\x0a\x00" * n
    length = bytearray()
    size = len(nodes)
    while True:
        byte, size = size & 0x7F, size >> 7
        length.append(byte | (0x80 if size else 0))
        if not size:
            break
    return b"\x3a" + bytes(length) + nodes


def test_the_memory_limit_can_be_raised_or_lifted_from_python(tmp_path):
    data = _many_empty_nodes(1_000_000)
    p = tmp_path / "many.onnx"
    p.write_bytes(data)
    assert len(onnx.load(str(p)).graph.node) == 1_000_000  # what onnx loads
    with pytest.raises(ol.DecodeError, match=r"max_memory.*pass max_memory=None"):
        ol.load(p)
    assert len(ol.load(p, max_memory=None).graph.node) == 1_000_000
    assert len(ol.load(p, max_memory=1 << 30).graph.node) == 1_000_000
    assert len(ol.load(p, options=ol.ParseOptions(max_memory=None)).graph.node) == 1_000_000
    with pytest.raises(ol.DecodeError):
        ol.load(p, max_memory=1000)
    with pytest.raises(ol.OptionError, match="max_memory"):
        ol.load(p, max_memory=-5)
    assert len(ol.load_from_string(data, max_memory=None).graph.node) == 1_000_000
    with pytest.raises(ol.DecodeError):
        ol.load_from_string(data)
    sealed = ol.save_encrypted_string(ol.load(p, max_memory=None), key="k")
    with pytest.raises(ol.DecodeError):
        ol.load_encrypted_string(sealed, key="k")
    assert len(ol.load_encrypted_string(sealed, key="k", max_memory=None).graph.node) == 1_000_000


def test_aliased_external_data_loads_when_allowed(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    g = onnx.GraphProto(name="g")
    for name in ("a", "b"):  # two tensors over the same 16 bytes
        t = g.initializer.add(name=name, data_type=onnx.TensorProto.FLOAT, dims=[4])
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "16")):
            t.external_data.add(key=k, value=v)
    p = tmp_path / "aliased.onnx"
    p.write_bytes(onnx.helper.make_model(g).SerializeToString())
    with pytest.raises(ol.ExternalDataError, match="allow_aliasing=True") as info:
        ol.load(p)
    assert info.value.rule == "aliasing"
    m = ol.load(p, allow_aliasing=True)
    for t in m.graph.initializer:
        np.testing.assert_array_equal(numpy_helper.to_array(t), np.arange(4, dtype=np.float32))


def test_saving_to_a_pipe_writes_into_it_as_onnx_does(tmp_path, ref_bytes):
    import threading

    m = ol.load_from_string(ref_bytes)
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    ol.save(m, fifo)
    reader.join(30)
    assert got == [ref_bytes]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a pipe, not a file
    # External data needs a directory of files: refused, the pipe left as it is.
    with pytest.raises(ol.FileError, match="FIFO"):
        ol.save(m, fifo, save_as_external_data=True)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_saving_to_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path, ref_bytes):
    # As `onnx.save` writes through a link: `latest.onnx -> v7.onnx` stays a link.
    m = ol.load_from_string(ref_bytes)
    (tmp_path / "v7.onnx").write_bytes(b"old")
    (tmp_path / "latest.onnx").symlink_to("v7.onnx")
    ol.save(m, tmp_path / "latest.onnx", save_as_external_data=True, location="w.bin",
            size_threshold=0)
    assert os.readlink(tmp_path / "latest.onnx") == "v7.onnx"
    assert sorted(os.listdir(tmp_path)) == ["latest.onnx", "v7.onnx", "w.bin"]
    want = [onnx.numpy_helper.to_array(t) for t in onnx.load_from_string(ref_bytes).graph.initializer]
    ours = [numpy_helper.to_array(t) for t in ol.load(tmp_path / "latest.onnx").graph.initializer]
    theirs = onnx.load(str(tmp_path / "v7.onnx")).graph.initializer
    assert len(want) == len(ours) == len(theirs) > 0
    for a, b, c in zip(want, ours, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, onnx.numpy_helper.to_array(c))


def test_verify_external_data_reports_every_broken_rule_by_name(tmp_path, ref_bytes):
    m = ol.load_from_string(ref_bytes)
    p = tmp_path / "m.onnx"
    ol.save(m, p, save_as_external_data=True, location="w.bin", size_threshold=0)
    refs = ol.load(p, load_external_data=False)
    external = [t.name for t in refs.graph.initializer if external_data_helper.uses_external_data(t)]
    assert external
    assert external_data_helper.verify_external_data(refs, tmp_path) == []
    assert external_data_helper.verify_external_data(refs, tmp_path, checksums=True) == []
    # Every tensor's problem, not only the first, each with its rule.
    (tmp_path / "w.bin").write_bytes(b"")
    problems = external_data_helper.verify_external_data(refs, tmp_path)
    assert [(q.tensor, q.rule) for q in problems] == [(n, "out_of_range") for n in external]
    assert all("past the end" in q.message for q in problems)
    with pytest.raises(ol.ExternalDataError) as info:
        ol.load(p)
    assert info.value.rule == "out_of_range"
    os.remove(tmp_path / "w.bin")
    problems = external_data_helper.verify_external_data(refs, tmp_path)
    assert {q.rule for q in problems} == {"missing_file"}
