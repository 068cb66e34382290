"""Side-by-side timings of the Python package `onnx_light.onnx` and the official `onnx`.

Run with an interpreter that has both packages (e.g. the tests' venv plus the wheel that
`cargo test -p onnx-light-tests --test python_package` builds under
target/python-package/site):

    PYTHONPATH=target/python-package/site target/interop-venv/bin/python \\
        bench/python/python_package_bench.py [--size-mib 1024] [--nodes 200000] [--rounds 3]

Every measurement runs in a fresh process (cold Python heap, warm page cache), so a load
is timed from nothing to a usable model, and the peak RSS is that process's own. Prints a
table of medians over the rounds, and ratios ("onnx / onnx_light" > 1: onnx_light faster).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def build_models(workdir: str, size_mib: int, nodes: int) -> tuple[str, str]:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    big = os.path.join(workdir, "big.onnx")
    if not os.path.exists(big):
        count = 64
        per = size_mib * (1 << 20) // count // 4
        inits = [
            numpy_helper.from_array(np.full(per, i, dtype=np.float32), f"w{i}")
            for i in range(count)
        ]
        node_list = [helper.make_node("Add", ["x", f"w{i}"], [f"y{i}"]) for i in range(count)]
        g = helper.make_graph(
            node_list, "big",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [per])],
            [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [per]) for i in range(count)],
            inits,
        )
        model = helper.make_model(g)
        with open(big, "wb") as f:
            f.write(model.SerializeToString())
        del model, inits, g
    many = os.path.join(workdir, "many.onnx")
    if not os.path.exists(many):
        node_list = [
            helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(nodes)
        ]
        g = helper.make_graph(
            node_list, "many",
            [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info(f"t{nodes}", TensorProto.FLOAT, [1])],
        )
        onnx.save(helper.make_model(g), many)
    return big, many


def build_aligned_external(workdir: str, big: str) -> str:
    """The big model re-saved by onnx_light with 4096-aligned external data."""
    import onnx_light.onnx as ol

    path = os.path.join(workdir, "big-ext.onnx")
    if not os.path.exists(path):
        ol.save(ol.load(big), path, save_as_external_data=True, alignment=4096)
    return path


def peak_rss() -> int:
    """This process's peak resident set (VmHWM): unlike ru_maxrss, it starts afresh at
    exec instead of inheriting the parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker(op: str, lib: str, path: str, out_dir: str) -> None:
    """One measurement in this (fresh) process; prints JSON."""
    if lib == "onnx":
        import onnx as m
    else:
        import onnx_light.onnx as m
    numpy_helper = m.numpy_helper
    t0 = time.perf_counter()
    extra = {}
    if op == "load":
        model = m.load(path)
    elif op == "load_no_copy":
        model = m.load(path, no_copy=True)
    elif op == "load_to_array":
        model = m.load(path, no_copy=True) if lib == "onnx_light" else m.load(path)
        t1 = time.perf_counter()
        arrays = [numpy_helper.to_array(t) for t in model.graph.initializer]
        extra["to_array_s"] = time.perf_counter() - t1
        extra["arrays"] = len(arrays)
    elif op in ("save", "save_nosync"):
        model = m.load(path)
        t0 = time.perf_counter()
        if op == "save_nosync":  # written like onnx.save: no flush to disk
            m.save(model, os.path.join(out_dir, f"saved-{lib}.onnx"), sync=False)
        else:
            m.save(model, os.path.join(out_dir, f"saved-{lib}.onnx"))
    elif op == "walk":
        model = m.load(path)
        n = 0
        for node in model.graph.node:
            _ = node.op_type
            n += len(list(node.input))
        extra["inputs"] = n
    else:
        raise SystemExit(f"unknown op {op}")
    seconds = time.perf_counter() - t0
    rss = peak_rss()
    print(json.dumps({"seconds": seconds, "max_rss": rss, **extra}))


def measure(op: str, lib: str, path: str, out_dir: str, rounds: int) -> dict:
    runs = []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, __file__, "--worker", op, lib, path, out_dir],
            check=True, capture_output=True, text=True,
        )
        runs.append(json.loads(out.stdout))
    keys = runs[0].keys()
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size-mib", type=int, default=1024)
    p.add_argument("--nodes", type=int, default=200_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default=None, help="where the models are generated (kept)")
    p.add_argument("--worker", nargs=4, metavar=("OP", "LIB", "PATH", "OUT"))
    a = p.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    workdir = a.dir or tempfile.mkdtemp(prefix="onnx-light-pybench-")
    os.makedirs(workdir, exist_ok=True)
    big, many = build_models(workdir, a.size_mib, a.nodes)
    big_ext = build_aligned_external(workdir, big)
    size = os.path.getsize(big)
    print(f"big model: {size / (1 << 20):.0f} MiB, {a.nodes}-node model; {a.rounds} rounds, medians")
    rows = [
        ("load (big)", "load", "load", big),
        ("load no_copy vs onnx.load (big)", "load", "load_no_copy", big),
        ("load + to_array all (big)", "load_to_array", "load_to_array", big),
        ("load + to_array all (aligned external)", "load_to_array", "load_to_array", big_ext),
        ("save (big; ours flushes to disk)", "save", "save", big),
        ("save (big), sync=False like onnx.save", "save", "save_nosync", big),
        ("load + walk nodes (op_type, input)", "walk", "walk", many),
    ]
    print(f"{'operation':38} {'onnx s':>9} {'onnx_light s':>13} {'ratio':>7} {'onnx RSS/file':>14} {'light RSS/file':>15}")
    for label, op_onnx, op_light, path in rows:
        r_onnx = measure(op_onnx, "onnx", path, workdir, a.rounds)
        r_light = measure(op_light, "onnx_light", path, workdir, a.rounds)
        fsize = os.path.getsize(big) if path == big_ext else os.path.getsize(path)
        print(
            f"{label:38} {r_onnx['seconds']:9.3f} {r_light['seconds']:13.3f} "
            f"{r_onnx['seconds'] / r_light['seconds']:6.1f}x "
            f"{r_onnx['max_rss'] / fsize:14.2f} {r_light['max_rss'] / fsize:15.2f}"
        )
        if "to_array_s" in r_light:
            print(f"{'  of which to_array':38} {r_onnx['to_array_s']:9.3f} {r_light['to_array_s']:13.3f}")


if __name__ == "__main__":
    main()
