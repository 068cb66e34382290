"""Side-by-side timings of the Python package `onnx_light.onnx` and the official `onnx`.

Run with an interpreter that has both packages (e.g. the tests' venv plus the wheel that
`cargo test -p onnx-light-tests --test python_package` builds under
target/python-package/site):

    PYTHONPATH=target/python-package/site target/interop-venv/bin/python \\
        bench/python/python_package_bench.py [--size-mib 1024] [--nodes 200000] [--rounds 3]
        [--only walks|fresh] [--walk-processes 3]

Every measurement runs in a fresh process (cold Python heap, warm page cache), so a load
is timed from nothing to a usable model, and the peak RSS is that process's own. Prints a
table of medians over the rounds, and ratios ("onnx / onnx_light" > 1: onnx_light faster).
The walks (a script's loops over a loaded model's nodes) are timed inside long-lived
processes, one per library, alternating. The fresh-process table times whole commands
(`python -c "import ...; load(PATH)"`), spawn to exit, interpreter start-up and imports
included, alternating between the libraries.
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


def build_models(workdir: str, size_mib: int, nodes: int, with_big: bool = True) -> tuple[str, str]:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    big = os.path.join(workdir, "big.onnx")
    if with_big and not os.path.exists(big):
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


def build_walk_model(workdir: str, nodes: int) -> str:
    """A graph shaped like an exported network for the walks: named nodes of several
    operators, one to three inputs each, attributes on some."""
    import onnx
    from onnx import TensorProto, helper

    path = os.path.join(workdir, "walk.onnx")
    if os.path.exists(path):
        return path
    node_list = []
    x = "input"
    for i in range(nodes):
        kind = i % 4
        y = f"block{i // 4}/out{kind}"
        if kind == 0:
            node = helper.make_node(
                "Conv", [x, f"block{i // 4}/w", f"block{i // 4}/b"], [y],
                name=f"block{i // 4}/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
            )
        elif kind == 1:
            node = helper.make_node("Relu", [x], [y], name=f"block{i // 4}/Relu")
        elif kind == 2:
            node = helper.make_node("Add", [x, "input"], [y], name=f"block{i // 4}/Add")
        else:
            node = helper.make_node(
                "Softmax", [x], [y], name=f"block{i // 4}/Softmax", axis=1
            )
        node_list.append(node)
        x = y
    g = helper.make_graph(
        node_list, "walk",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 4, 4])],
    )
    onnx.save(helper.make_model(g), path)
    return path


def walk_op_type(model) -> int:
    return sum(1 for n in model.graph.node if n.op_type == "Conv")


def walk_inputs_outputs(model) -> int:
    return sum(len(list(n.input)) + len(n.output) for n in model.graph.node)


def walk_output_map(model) -> int:
    producer = {}
    for n in model.graph.node:
        for o in n.output:
            producer[o] = n
    return len(producer)


def walk_rename(model) -> int:
    renamed = 0
    for i, n in enumerate(model.graph.node):
        if i % 10 == 0:
            n.name = n.name + "_renamed"
            renamed += 1
    return renamed


def walk_combined(model) -> int:
    producer = {}
    count = 0
    for n in model.graph.node:
        if n.op_type == "Conv":
            count += 1
        count += len(list(n.input))
        for o in n.output:
            producer[o] = n
    return count + len(producer)


WALKS = [
    ("op_type of every node", walk_op_type),
    ("list(input) and output of every node", walk_inputs_outputs),
    ("output-name-to-node map", walk_output_map),
    ("rename every 10th node", walk_rename),
    ("all of the first three in one loop", walk_combined),
]


def walks_worker(lib: str, path: str, rounds: int) -> None:
    """The walks on one loaded model in this process, `rounds` times each, alternating;
    prints the medians as JSON."""
    if lib == "onnx":
        import onnx as m
    else:
        import onnx_light.onnx as m
    model = m.load(path)
    times: dict[str, list[float]] = {label: [] for label, _ in WALKS}
    results = {}
    for _ in range(rounds):
        for label, walk in WALKS:
            t0 = time.perf_counter()
            results[label] = walk(model)
            times[label].append(time.perf_counter() - t0)
    print(json.dumps({label: [statistics.median(ts), results[label]] for label, ts in times.items()}))


def walks_table(path: str, rounds: int, processes: int) -> None:
    """Each library walks the model in a long-lived process of its own; `processes`
    pairs of processes, alternating, and the medians over them."""
    got: dict[str, list[dict]] = {"onnx": [], "onnx_light": []}
    for _ in range(processes):
        for lib in ("onnx", "onnx_light"):
            out = subprocess.run(
                [sys.executable, __file__, "--walks-worker", lib, path, str(rounds)],
                check=True, capture_output=True, text=True,
            )
            got[lib].append(json.loads(out.stdout))
    print(f"\nwalks in one process ({processes} processes each, {rounds} rounds in each, medians)")
    print(f"{'walk':40} {'onnx ms':>9} {'onnx_light ms':>14} {'onnx / onnx_light':>18}")
    for label, _ in WALKS:
        a = statistics.median(r[label][0] for r in got["onnx"])
        b = statistics.median(r[label][0] for r in got["onnx_light"])
        same = {r[label][1] for r in got["onnx"] + got["onnx_light"]}
        if len(same) != 1:
            raise SystemExit(f"{label}: the libraries disagree on the walk's result: {same}")
        print(f"{label:40} {a * 1e3:9.1f} {b * 1e3:14.1f} {a / b:17.2f}x")


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
    t0 = time.perf_counter()
    extra = {}
    if op == "load":
        model = m.load(path)
    elif op == "load_no_copy":
        model = m.load(path, no_copy=True)
    elif op == "load_to_array":
        model = m.load(path, no_copy=True) if lib == "onnx_light" else m.load(path)
        t1 = time.perf_counter()
        arrays = [m.numpy_helper.to_array(t) for t in model.graph.initializer]
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


def fresh_table(models: list, rounds: int) -> None:
    """Whole processes that import a library and load a model, spawn to exit, alternating
    between the libraries; medians (and ranges) over `rounds`."""
    commands = {
        "python": "pass",
        "onnx": "import onnx; onnx.load({path!r})",
        "onnx_light": "import onnx_light.onnx as o; o.load({path!r})",
    }
    print(f"\nfresh processes, spawn to exit; {rounds} rounds alternating, medians (min-max)")
    print(f"{'command':44} {'onnx':>20} {'onnx_light':>20} {'ratio':>7}")
    for label, path in models:
        times = {lib: [] for lib in commands}
        for _ in range(rounds):
            for lib, code in commands.items():
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-c", code.format(path=path)], check=True)
                times[lib].append(time.perf_counter() - t0)

        def cell(lib: str) -> str:
            t = times[lib]
            return f"{statistics.median(t):.3f} ({min(t):.2f}-{max(t):.2f})"

        ratio = statistics.median(times["onnx"]) / statistics.median(times["onnx_light"])
        print(f"{'import + load, ' + label:44} {cell('onnx'):>20} {cell('onnx_light'):>20} {ratio:6.2f}x")
        per_round = [a / b for a, b in zip(times["onnx"], times["onnx_light"])]
        print(f"{'  per round':44} {', '.join(f'{r:.2f}x' for r in per_round)}")
    print(f"{'python -c pass':44} {cell('python'):>20}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size-mib", type=int, default=1024)
    p.add_argument("--nodes", type=int, default=200_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default=None, help="where the models are generated (kept)")
    p.add_argument("--only", choices=["walks", "fresh"], help="run only one table")
    p.add_argument("--walk-processes", type=int, default=3)
    p.add_argument("--worker", nargs=4, metavar=("OP", "LIB", "PATH", "OUT"))
    p.add_argument("--walks-worker", nargs=3, metavar=("LIB", "PATH", "ROUNDS"))
    a = p.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    if a.walks_worker:
        lib, path, rounds = a.walks_worker
        walks_worker(lib, path, int(rounds))
        return
    workdir = a.dir or tempfile.mkdtemp(prefix="onnx-light-pybench-")
    os.makedirs(workdir, exist_ok=True)
    walk_model = build_walk_model(workdir, a.nodes)
    if a.only == "walks":
        walks_table(walk_model, max(a.rounds, 5), a.walk_processes)
        return
    big, many = build_models(workdir, a.size_mib, a.nodes, with_big=a.only != "fresh")
    fresh_models = [(f"{a.nodes} Relu nodes", many), (f"{a.nodes} mixed nodes", walk_model)]
    if a.only == "fresh":
        fresh_table(fresh_models, max(a.rounds, 5))
        return
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
    walks_table(walk_model, max(a.rounds, 5), a.walk_processes)
    fresh_table(fresh_models, max(a.rounds, 5))


if __name__ == "__main__":
    main()
