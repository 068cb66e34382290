"""Models in object storage, side by side in one run, against servers on 127.0.0.1:

1. ``onnx-light info`` of a single-file model of SIZE over HTTP (the test suite's
   range server): the bytes it fetches, and its time.
2. Loading a model of SIZE with external data from a local S3 server (moto):
   ``onnx_light.onnx.load("s3://...")`` against ``boto3``'s ``download_file`` of every
   object followed by ``onnx.load``, alternated, best of ``--repeat``. The data is split
   into files of ``--shard-mib`` (``onnx-light convert --max-file-size``): moto copies
   the whole object for every ranged GET under one lock, so ranged reads of one 1 GiB
   object (what both clients do) take seconds each and time out.

    python bench/python/remote_bench.py --cli target/release/onnx-light [--size-mib 1024]

Run it with an interpreter that has ``onnx``, ``boto3``, ``moto[server]`` and the
``onnx_light`` package (the test venv plus ``maturin develop --release``). The models are
written under ``--dir`` (default: a temporary directory), about 3 x SIZE of disk.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RANGE_SERVER = os.path.join(HERE, "..", "..", "tests", "python", "range_server.py")
MIB = 1 << 20


def make_model(size_mib, tensor_mib=4):
    """A chain of MatMuls over float weights of ``tensor_mib`` each, ``size_mib`` in all
    (distinct random values, so that nothing compresses or repeats)."""
    rng = np.random.default_rng(0)
    n = max(1, size_mib // tensor_mib)
    side = int((tensor_mib * MIB // 4) ** 0.5)
    inits, nodes = [], []
    prev = "x"
    for i in range(n):
        w = rng.standard_normal((side, side), dtype=np.float32)
        inits.append(numpy_helper.from_array(w, f"layer{i}.weight"))
        nodes.append(helper.make_node("MatMul", [prev, f"layer{i}.weight"], [f"h{i}"]))
        prev = f"h{i}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", side])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", side])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what):
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start")
            time.sleep(0.1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cli", required=True, help="the onnx-light binary")
    p.add_argument("--size-mib", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=None)
    p.add_argument("--shard-mib", type=int, default=64)
    a = p.parse_args()
    import boto3

    import onnx_light.onnx as olx

    work = a.dir or tempfile.mkdtemp(prefix="remote-bench-")
    single = os.path.join(work, "single")
    split = os.path.join(work, "split")
    for d in (single, split):
        os.makedirs(d, exist_ok=True)
    model = make_model(a.size_mib)
    onnx.save(model, os.path.join(single, "model.onnx"))
    del model
    subprocess.run(
        [
            a.cli,
            "-q",
            "convert",
            "--force",
            "--external-data",
            "weights.bin",
            "--max-file-size",
            f"{a.shard_mib}M",
            os.path.join(single, "model.onnx"),
            os.path.join(split, "model.onnx"),
        ],
        check=True,
    )
    single_size = os.path.getsize(os.path.join(single, "model.onnx"))
    objects = sorted(os.listdir(split))
    data_size = sum(os.path.getsize(os.path.join(split, n)) for n in objects if n != "model.onnx")
    results = {
        "size_mib": a.size_mib,
        "single_file_bytes": single_size,
        "data_bytes": data_size,
        "objects": len(objects),
    }
    print("models written", file=sys.stderr, flush=True)

    # 1. info over HTTP.
    http = subprocess.Popen(
        [sys.executable, RANGE_SERVER, work], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    port = int(http.stdout.readline().split()[1])
    base = f"http://127.0.0.1:{port}"
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/_reset", method="POST")).read()
        t = time.perf_counter()
        out = subprocess.run(
            [a.cli, "info", "--json", base + "/single/model.onnx"],
            check=True,
            capture_output=True,
        )
        info_secs = time.perf_counter() - t
        with urllib.request.urlopen(base + "/_stats") as r:
            stats = json.load(r)
        info = json.loads(out.stdout)
        results["info_http"] = {
            "bytes_fetched": stats["bytes"],
            "requests": stats["requests"],
            "secs": round(info_secs, 3),
            "initializers": info.get("initializers", info.get("weights")),
        }
    finally:
        http.kill()
        http.wait()

    # 2. Load from S3: onnx_light against boto3 download_file + onnx.load.
    port = free_port()
    moto = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, "moto.server")
        endpoint = f"http://127.0.0.1:{port}"
        os.environ.update(
            AWS_ENDPOINT=endpoint,
            AWS_ALLOW_HTTP="true",
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_REGION="us-east-1",
        )
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket="models")
        for name in objects:
            s3.upload_file(os.path.join(split, name), "models", f"split/{name}")
        print("uploaded", file=sys.stderr, flush=True)
        reference = onnx.load(os.path.join(split, "model.onnx")).SerializeToString()
        ours, theirs = [], []
        for _ in range(a.repeat):
            t = time.perf_counter()
            m = olx.load("s3://models/split/model.onnx")
            ours.append(time.perf_counter() - t)
            same = m.SerializeToString() == reference
            del m
            dl = tempfile.mkdtemp(dir=work)
            t = time.perf_counter()
            for name in objects:
                s3.download_file("models", f"split/{name}", os.path.join(dl, name))
            m = onnx.load(os.path.join(dl, "model.onnx"))
            theirs.append(time.perf_counter() - t)
            print(f"ours {ours[-1]:.2f}s, boto3+onnx {theirs[-1]:.2f}s", file=sys.stderr, flush=True)
            del m
            shutil.rmtree(dl)
        results["load_s3"] = {
            "onnx_light_secs": [round(x, 3) for x in ours],
            "boto3_download_then_onnx_load_secs": [round(x, 3) for x in theirs],
            "best_speedup": round(min(theirs) / min(ours), 2),
            "equal_to_local_load": same,
        }
    finally:
        moto.kill()
        moto.wait()
    if a.dir is None:
        shutil.rmtree(work)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
