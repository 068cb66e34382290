"""model-bench's Python peer: the official `onnx` package, timed from inside Python.

Started once by `model-bench` in the pinned test venv; reads one JSON command per line on
stdin and answers one JSON line on stdout, so that its operations are sampled round-robin
with the Rust ones and process start-up is never part of a timing. Each timed command
runs its operation `iters` times between two `time.perf_counter()` calls and reports the
total; results are kept until the clock has stopped (freeing them is not timed, as on the
Rust side).

Commands (`{"cmd": ...}`):
  read      key, path          read a file into memory (bytes), untimed
  parse     key                parse the bytes stored under key into a ModelProto, untimed
  free      key                drop what is stored under key
  info      key                size of the stored bytes and of the parsed model's encoding
  time      op, iters, ...     time an operation, answer {"secs": total}
     op = load_from_string  key       onnx.load_from_string(bytes)
     op = serialize         key       parsed.SerializeToString()
     op = load              path, external (bool)   onnx.load(path, load_external_data=...)
     op = save              key, path                onnx.save(parsed, path)
     op = infer             key, out (optional)      onnx.shape_inference.infer_shapes(parsed);
                            the last result's SerializeToString() is written to out, untimed
  quit

`--fresh MODE PATH` times an operation twice in this fresh process (the module already
imported) and prints {"first", "second"} in seconds: the first call is what a process
that does it once pays, the second what a long-lived one pays; "faults" counts the
first call's minor page faults. MODE is `load`
(`onnx.load(PATH)`), `load_from_string` (PATH read first, off the clock) or `serialize`
(`SerializeToString` of the model loaded from PATH off the clock). A MODE ending in
`-prewarmed` first writes to and frees 512 MiB of heap (model-bench runs it with glibc
told to keep freed memory), so that the call's memory is already provided.

`--peak MODE PATH` instead measures the peak memory of one operation in a fresh process
and prints {"baseline_kb", "peak_kb"}: MODE is `load` (onnx.load of PATH, external data
included) or `load_from_string` (PATH read first, then parsed: the decode alone).
"""

import json
import os
import resource
import sys
import time

import onnx


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field + " not found")


def reset_peak():
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak(mode, path):
    data = None
    if mode == "load_from_string":
        with open(path, "rb") as f:
            data = f.read()
    reset_peak()
    baseline = status_kb("VmRSS")
    if mode == "load":
        model = onnx.load(path, load_external_data=True)
    elif mode == "load_from_string":
        model = onnx.load_from_string(data)
    else:
        raise SystemExit("unknown mode " + mode)
    hwm = status_kb("VmHWM")
    assert model.graph is not None
    print(json.dumps({"baseline_kb": baseline, "peak_kb": hwm}))


# As `PREWARM_BYTES` in model-bench's fresh.rs.
PREWARM_BYTES = 512 << 20


def prewarm_heap():
    # Under GLIBC_TUNABLES mmap/trim thresholds of 4 GiB (set by model-bench), this block
    # comes from glibc's main heap and stays there when freed: the timed call's
    # allocations, upb's arena blocks among them, find their pages already provided.
    block = b"\x01" * PREWARM_BYTES
    del block


def fresh(mode, path):
    if mode.endswith("-prewarmed"):
        if "trim_threshold" not in os.environ.get("GLIBC_TUNABLES", ""):
            raise SystemExit("a -prewarmed mode needs model-bench's GLIBC_TUNABLES")
        prewarm_heap()
        mode = mode[: -len("-prewarmed")]
    if mode == "load":
        def once():
            return onnx.load(path, load_external_data=True)
    elif mode == "load_from_string":
        with open(path, "rb") as f:
            data = f.read()

        def once():
            return onnx.load_from_string(data)
    elif mode == "serialize":
        model = onnx.load(path)

        def once():
            return model.SerializeToString()
    else:
        raise SystemExit("unknown fresh mode " + mode)
    times, faults = [], []
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        result = once()
        times.append(time.perf_counter() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del result
    print(json.dumps({"first": times[0], "second": times[1], "faults": faults[0]}))


def timed(op, cmd, store, models):
    iters = int(cmd.get("iters", 1))
    keep = []
    if op == "load_from_string":
        data = store[cmd["key"]]
        start = time.perf_counter()
        for _ in range(iters):
            keep.append(onnx.load_from_string(data))
        secs = time.perf_counter() - start
    elif op == "serialize":
        model = models[cmd["key"]]
        start = time.perf_counter()
        for _ in range(iters):
            keep.append(model.SerializeToString())
        secs = time.perf_counter() - start
    elif op == "check":
        model = models[cmd["key"]]
        start = time.perf_counter()
        for _ in range(iters):
            onnx.checker.check_model(model, full_check=False)
        secs = time.perf_counter() - start
    elif op == "infer":
        model = models[cmd["key"]]
        start = time.perf_counter()
        for _ in range(iters):
            keep.append(onnx.shape_inference.infer_shapes(model))
        secs = time.perf_counter() - start
        if cmd.get("out"):
            with open(cmd["out"], "wb") as f:
                f.write(keep[-1].SerializeToString())
    elif op == "load":
        path = cmd["path"]
        external = bool(cmd.get("external", True))
        start = time.perf_counter()
        for _ in range(iters):
            keep.append(onnx.load(path, load_external_data=external))
        secs = time.perf_counter() - start
    elif op == "save":
        model = models[cmd["key"]]
        path = cmd["path"]
        start = time.perf_counter()
        for _ in range(iters):
            onnx.save(model, path)
        secs = time.perf_counter() - start
    else:
        raise ValueError("unknown op " + op)
    del keep
    return {"secs": secs}


def serve():
    store = {}
    models = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        name = cmd["cmd"]
        try:
            if name == "quit":
                break
            if name == "read":
                with open(cmd["path"], "rb") as f:
                    store[cmd["key"]] = f.read()
                reply = {"ok": True}
            elif name == "parse":
                models[cmd["key"]] = onnx.load_from_string(store[cmd["key"]])
                reply = {"ok": True}
            elif name == "free":
                store.pop(cmd["key"], None)
                models.pop(cmd["key"], None)
                reply = {"ok": True}
            elif name == "info":
                key = cmd["key"]
                reply = {
                    "bytes": len(store[key]) if key in store else None,
                    "encoded": models[key].ByteSize() if key in models else None,
                }
            elif name == "time":
                reply = timed(cmd["op"], cmd, store, models)
            else:
                raise ValueError("unknown command " + name)
        except Exception as e:  # reported to the Rust side, which fails loudly
            reply = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--peak":
        peak(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--fresh":
        fresh(sys.argv[2], sys.argv[3])
    else:
        print(json.dumps({"ready": True, "onnx": onnx.__version__}), flush=True)
        serve()
