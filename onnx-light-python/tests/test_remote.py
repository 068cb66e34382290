"""Models read from URLs against real servers on 127.0.0.1, started here: the test
suite's HTTP server with ranges (``tests/python/range_server.py``, which counts the
bytes it sends) and moto's standalone S3 server (from the test venv's requirements).
Loads from URLs equal loads of the same files byte for byte; errors are the built-in
ones, naming the URL."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_light.onnx as olx

SERVER = os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "python", "range_server.py"
)
MIB = 1 << 20


class HttpServer:
    """range_server.py serving ``root``; ``url(name)``, ``bytes_sent()``, ``reset()``."""

    def __init__(self, root, *args):
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, str(root), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        line = self.proc.stdout.readline().decode()
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def bytes_sent(self):
        with urllib.request.urlopen(self.url("_stats")) as r:
            return json.load(r)["bytes"]

    def reset(self):
        urllib.request.urlopen(urllib.request.Request(self.url("_reset"), method="POST")).read()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def _model(tensors=4, size=MIB):
    inits = [
        numpy_helper.from_array(
            (np.arange(size // 4, dtype=np.float32) * (i + 1)), f"w{i}"
        )
        for i in range(tensors)
    ]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.fixture
def served(tmp_path):
    """``single/model.onnx`` and ``split/model.onnx`` + ``weights.bin``, served."""
    m = _model()
    (tmp_path / "single").mkdir()
    (tmp_path / "split").mkdir()
    onnx.save(m, str(tmp_path / "single" / "model.onnx"))
    onnx.save(
        m,
        str(tmp_path / "split" / "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=1024,
    )
    server = HttpServer(tmp_path, "--deny", "private/")
    yield tmp_path, server
    server.stop()


@pytest.mark.parametrize("name", ["single", "split"])
def test_a_url_loads_as_the_file(served, name):
    root, server = served
    local = olx.load(str(root / name / "model.onnx"))
    remote = olx.load(server.url(f"{name}/model.onnx"))
    assert remote.SerializeToString() == local.SerializeToString()
    assert remote.SerializeToString() == onnx.load(str(root / name / "model.onnx")).SerializeToString()


def test_structure_only_fetches_the_structure_and_one_tensor_its_own_bytes(served):
    root, server = served
    server.reset()
    m = olx.load(server.url("single/model.onnx"), structure_only=True)
    assert server.bytes_sent() < MIB
    server.reset()
    w2 = olx.numpy_helper.to_array(m.graph.initializer[2])
    assert server.bytes_sent() == MIB
    assert np.array_equal(w2, np.arange(MIB // 4, dtype=np.float32) * 3)


def test_external_data_and_to_array_take_a_url_as_base_dir(served):
    root, server = served
    model = olx.load(str(root / "split" / "model.onnx"), load_external_data=False)
    t = model.graph.initializer[1]
    server.reset()
    arr = olx.numpy_helper.to_array(t, base_dir=server.url("split"))
    assert server.bytes_sent() == MIB
    assert np.array_equal(arr, np.arange(MIB // 4, dtype=np.float32) * 2)
    olx.load_external_data_for_model(model, server.url("split/"))
    local = olx.load(str(root / "split" / "model.onnx"))
    assert model.SerializeToString() == local.SerializeToString()


def test_missing_and_refused_objects_are_the_built_in_errors_naming_the_url(served):
    root, server = served
    (root / "private").mkdir()
    onnx.save(_model(1, 4096), str(root / "private" / "model.onnx"))
    missing = server.url("nothing/model.onnx")
    with pytest.raises(FileNotFoundError) as e:
        olx.load(missing)
    assert e.value.filename == missing
    refused = server.url("private/model.onnx")
    with pytest.raises(PermissionError) as e:
        olx.load(refused)
    assert e.value.filename == refused


def test_a_wrong_checksum_is_refused_unless_the_check_is_off(served):
    root, server = served
    path = root / "split" / "model.onnx"
    m = onnx.load(str(path), load_external_data=False)
    for t in m.graph.initializer:
        t.external_data.add(key="checksum", value="0" * 40)
    onnx.save(m, str(path))
    with pytest.raises(olx.checker.ValidationError):
        olx.load(server.url("split/model.onnx"))
    loaded = olx.load(server.url("split/model.onnx"), verify_checksums=False)
    assert len(loaded.graph.initializer[0].raw_data) == MIB


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3(monkeypatch):
    """moto's S3 server on a free port; the environment the store reads set."""
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "moto.server did not start"
            time.sleep(0.1)
    endpoint = f"http://127.0.0.1:{port}"
    env = {
        "AWS_ENDPOINT": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket="models")
    yield client
    proc.kill()
    proc.wait()


def test_a_model_in_a_local_s3_server_loads_as_the_file(tmp_path, s3):
    m = _model(3)
    onnx.save(
        m,
        str(tmp_path / "model.onnx"),
        save_as_external_data=True,
        location="weights.bin",
        size_threshold=1024,
    )
    for name in ("model.onnx", "weights.bin"):
        s3.upload_file(str(tmp_path / name), "models", f"v1/{name}")
    remote = olx.load("s3://models/v1/model.onnx")
    local = olx.load(str(tmp_path / "model.onnx"))
    assert remote.SerializeToString() == local.SerializeToString()
    with pytest.raises(FileNotFoundError) as e:
        olx.load("s3://models/v1/missing.onnx")
    assert e.value.filename == "s3://models/v1/missing.onnx"


def _files(root):
    """Every file under ``root``: {relative path: bytes}."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def _objects(client, prefix):
    """Every object under ``prefix``: {key relative to it: bytes}."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="models", Prefix=prefix):
        for o in page.get("Contents", []):
            body = client.get_object(Bucket="models", Key=o["Key"])["Body"].read()
            out[o["Key"][len(prefix):]] = body
    return out


@pytest.mark.parametrize(
    "name, keywords",
    [
        ("single", {}),
        (
            "split",
            dict(
                save_as_external_data=True,
                location="data/weights.bin",
                size_threshold=1024,
                max_external_file_size=6 * MIB,
            ),
        ),
        ("default-location", dict(save_as_external_data=True, size_threshold=1024)),
    ],
)
def test_a_save_to_s3_writes_the_files_of_a_save_to_disk(tmp_path, s3, name, keywords):
    # 12 MiB of weights: the single model object goes up as a multipart upload.
    m = _model(4, 3 * MIB)
    url = f"s3://models/saved/{name}/model.onnx"
    olx.save(m, url, **keywords)
    olx.save_model(m, str(tmp_path / "model.onnx"), **keywords)
    objects = _objects(s3, f"saved/{name}/")
    assert objects.keys() == _files(tmp_path).keys()
    assert objects == _files(tmp_path)
    assert olx.load(url).SerializeToString() == olx.load(str(tmp_path / "model.onnx")).SerializeToString()


def test_a_save_to_s3_refuses_a_location_outside_the_prefix_and_writes_nothing(s3):
    m = _model(1, 4096)
    for bad in ("../escape.bin", "/tmp/escape.bin"):
        with pytest.raises(olx.OptionError):
            olx.save(m, "s3://models/esc/model.onnx", save_as_external_data=True, location=bad)
    assert s3.list_objects_v2(Bucket="models").get("KeyCount", 0) == 0


def test_a_save_to_a_directory_or_a_bare_scheme_is_refused_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    m = _model(1, 4096)
    for url in ("s3://", "gs://", f"file://{tmp_path}/sub/", f"file://{tmp_path}/new/"):
        with pytest.raises(olx.OptionError) as e:
            olx.save(m, url, save_as_external_data=True)
        assert url in str(e.value)
    for path in ("sub/", "new/", f"{tmp_path}/sub/.", "new/."):
        with pytest.raises(olx.FileError) as e:
            olx.save(m, path)
        assert "ends with a separator" in str(e.value)
    assert [p.name for p in tmp_path.iterdir()] == ["sub"]
    assert not any((tmp_path / "sub").iterdir())


def test_http_urls_are_read_only(served):
    root, server = served
    url = server.url("copy/model.onnx")
    with pytest.raises(olx.FileError) as e:
        olx.save(_model(1, 4096), url)
    assert e.value.filename == url
    assert not (root / "copy").exists()


def test_no_aws_credentials_is_a_permission_error_naming_the_variables(monkeypatch):
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    url = "s3://models/m/model.onnx"
    with pytest.raises(PermissionError) as e:
        olx.load(url)
    assert e.value.filename == url
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SKIP_SIGNATURE"):
        assert var in str(e.value)


def test_a_refused_connection_is_connection_refused_error_naming_the_url():
    url = f"http://127.0.0.1:{_free_port()}/model.onnx"
    with pytest.raises(ConnectionRefusedError) as e:
        olx.load(url)
    assert e.value.filename == url
    assert isinstance(e.value, olx.RefusedConnectionError)
