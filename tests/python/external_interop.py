"""External data against the official `onnx` package and `onnxruntime`, for
`tests/tests/external_interop.rs`.

    external_interop.py generate DIR
        Builds a model with initializers of many data types, a zero-length and a string
        tensor, sparse initializers, attribute tensors (`t`, `tensors`, `sparse_value`),
        If/Loop bodies with their own initializers and a model-local function, and
        writes:
          DIR/orig.onnx, DIR/orig.txt    the model in one file, and its summary;
          DIR/orig_nosparse.{onnx,txt}   the same without sparse tensors;
          DIR/<case>/model.onnx (+ data) one `onnx.save_model(..., save_as_external_data=
                                         True, ...)` variant per case (see CASES);
          DIR/<case>/expected.txt        the summary of `onnx.load` of those files;
          DIR/<case>/layout.txt          `<index> <location> <offset> <length>` for every
                                         tensor onnx wrote external (index: position in
                                         the traversal below; `-` for an absent key);
          DIR/cases.txt                  the case names.
    external_interop.py verify DIR CASE[=BASELINE]...
        For each DIR/CASE/model.onnx (written by onnx-light): `onnx.load` must give the
        summary in DIR/BASELINE.txt (default `orig`), and
        `onnx.checker.check_model(path)` must pass (see `check` for models with external
        sparse tensors). Prints `<case> ok external=<n> left_external=<m>
        checker=<ok|sparse_rejected=k>` per case (m: tensors `onnx.load` left external
        because its traversal skips sparse tensors, loaded afterwards with onnx's
        `load_external_data_for_tensor`).
    external_interop.py ort DIR
        Runs DIR/mlp.onnx (one file) and DIR/mlp_split/model.onnx (split, aligned
        external data) in onnxruntime with a fixed input; the outputs must agree with each
        other and with a numpy evaluation of the weights. Prints `ort ok ...`.

Summary (mirrored by external_interop.rs): the first line is `M <model summary>` (see
onnx_summary.py) with `data_location = DEFAULT` cleared (onnx.load sets it explicitly,
onnx-light leaves it unset); then one line per tensor, in the traversal order of
onnx-light's `visit_tensors` (graph: initializers, sparse initializers' values and
indices, node attributes' `t`, `tensors`, `sparse_tensor`, `sparse_tensors`, `g`,
`graphs`; then training graphs, then functions' `attribute_proto` and nodes):
`T <site> <name> dt=<data_type> dims=<d,d,..> raw=<len>#<crc32>|raw=- [ext]`.
"""

import copy
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

import onnx_summary

# ---------------------------------------------------------------------------------------
# Traversal and summary.


def walk_model(m):
    """(site, tensor) for every tensor, in onnx-light's traversal order."""
    out = []

    def sparse(s, site):
        if s.HasField("values"):
            out.append((site, s.values))
        if s.HasField("indices"):
            out.append((site, s.indices))

    def attr(a):
        if a.HasField("t"):
            out.append(("attr", a.t))
        for t in a.tensors:
            out.append(("attr", t))
        if a.HasField("sparse_tensor"):
            sparse(a.sparse_tensor, "sparse_attr")
        for s in a.sparse_tensors:
            sparse(s, "sparse_attr")
        if a.HasField("g"):
            graph(a.g)
        for g in a.graphs:
            graph(g)

    def graph(g):
        for t in g.initializer:
            out.append(("init", t))
        for s in g.sparse_initializer:
            sparse(s, "sparse")
        for n in g.node:
            for a in n.attribute:
                attr(a)

    if m.HasField("graph"):
        graph(m.graph)
    for ti in m.training_info:
        if ti.HasField("initialization"):
            graph(ti.initialization)
        if ti.HasField("algorithm"):
            graph(ti.algorithm)
    for f in m.functions:
        for a in f.attribute_proto:
            attr(a)
        for n in f.node:
            for a in n.attribute:
                attr(a)
    return out


def tensor_line(site, t):
    parts = [
        "T",
        site,
        onnx_summary.q(t.name),
        "dt=%d" % t.data_type,
        "dims=" + ",".join(str(d) for d in t.dims),
        ("raw=" + onnx_summary.bq(t.raw_data)) if t.HasField("raw_data") else "raw=-",
    ]
    if t.data_location == TensorProto.EXTERNAL:
        parts.append("ext")
    return " ".join(parts)


def summary_lines(m):
    m = copy.deepcopy(m)
    for _, t in walk_model(m):
        if t.HasField("data_location") and t.data_location == TensorProto.DEFAULT:
            t.ClearField("data_location")
    lines = ["M " + onnx_summary.model(m)]
    lines.extend(tensor_line(site, t) for site, t in walk_model(m))
    return lines


def onnx_load_complete(path):
    """`onnx.load` with its external data, then the tensors it left external (its
    traversal skips sparse tensors) loaded with onnx's own helper. Returns the model and
    how many such tensors there were."""
    m = onnx.load(path)
    left = 0
    base = os.path.dirname(path)
    for _, t in walk_model(m):
        if external_data_helper.uses_external_data(t):
            external_data_helper.load_external_data_for_tensor(t, base)
            left += 1
    return m, left


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def first_diff(expected, actual):
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            return "line %d:\n  expected: %s\n  actual:   %s" % (i, e[:400], a[:400])
    return "%d lines expected, %d found" % (len(expected), len(actual))


# ---------------------------------------------------------------------------------------
# The model.


def raw(name, dt, dims, data):
    return helper.make_tensor(name, dt, dims, bytes(data), raw=True)


def packed_bytes(rng, count, bits):
    """Random packed sub-byte elements, the unused high bits of the last byte zero."""
    total_bits = count * bits
    data = bytearray(rng.integers(0, 256, (total_bits + 7) // 8, dtype=np.uint8).tobytes())
    rest = total_bits % 8
    if rest:
        data[-1] &= (1 << rest) - 1
    return data


def build_model():
    rng = np.random.default_rng(20240611)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    init = [
        numpy_helper.from_array(f32(300, 100), "w.f32"),
        numpy_helper.from_array(rng.standard_normal(2048).astype(np.float16), "w.f16"),
        numpy_helper.from_array(rng.standard_normal(600), "w.f64"),
        numpy_helper.from_array(rng.integers(-(2**40), 2**40, 1000, dtype=np.int64), "w.i64"),
        numpy_helper.from_array(rng.integers(-(2**31), 2**31 - 1, 700, dtype=np.int32), "w.i32"),
        numpy_helper.from_array(rng.integers(-128, 127, 5000, dtype=np.int8), "w.i8"),
        numpy_helper.from_array(rng.integers(0, 255, 3000, dtype=np.uint8), "w.u8"),
        numpy_helper.from_array(rng.integers(0, 2, 3000).astype(bool), "w.bool"),
        raw("w.bf16", TensorProto.BFLOAT16, [1000], packed_bytes(rng, 1000, 16)),
        raw("w.f8", TensorProto.FLOAT8E4M3FN, [1500], packed_bytes(rng, 1500, 8)),
        raw("w.u4", TensorProto.UINT4, [4097], packed_bytes(rng, 4097, 4)),
        raw("w.i4", TensorProto.INT4, [3001], packed_bytes(rng, 3001, 4)),
        raw("w.f4", TensorProto.FLOAT4E2M1, [2500], packed_bytes(rng, 2500, 4)),
        raw("w.u2", TensorProto.UINT2, [5001], packed_bytes(rng, 5001, 2)),
        numpy_helper.from_array(np.zeros(0, np.float32), "w.empty"),
        numpy_helper.from_array(np.array([1.5, -2.0, 3.25], np.float32), "w.small"),
        helper.make_tensor("w.str", TensorProto.STRING, [2], [b"alpha", b"beta"]),
        # `/` and `:` make onnx name the per-tensor file with a uuid; onnx-light
        # sanitises.
        numpy_helper.from_array(f32(512), "layer.0/weight:q"),
    ]
    sparse_init = helper.make_sparse_tensor(
        numpy_helper.from_array(f32(1500), "sp.values"),
        numpy_helper.from_array(
            np.sort(rng.choice(100000, 1500, replace=False)).astype(np.int64), "sp.indices"
        ),
        [100000],
    )

    c_big = helper.make_node(
        "Constant", [], ["c_big"], value=numpy_helper.from_array(f32(2000), "const.big")
    )
    c_sparse = helper.make_node(
        "Constant",
        [],
        ["c_sparse"],
        sparse_value=helper.make_sparse_tensor(
            numpy_helper.from_array(f32(400), "csp.values"),
            numpy_helper.from_array(
                np.sort(rng.choice(10000, 400, replace=False)).astype(np.int64), "csp.indices"
            ),
            [10000],
        ),
    )

    def branch(tag):
        w = numpy_helper.from_array(f32(1024), "branch_w")
        k = helper.make_node(
            "Constant",
            [],
            [tag + "_k"],
            value=numpy_helper.from_array(f32(700), tag + ".const"),
        )
        ident = helper.make_node("Identity", ["branch_w"], [tag + "_out"])
        return helper.make_graph(
            [k, ident],
            tag + "_branch",
            [],
            [helper.make_tensor_value_info(tag + "_out", TensorProto.FLOAT, [1024])],
            initializer=[w],
        )

    if_node = helper.make_node(
        "If", ["cond"], ["if_out"], then_branch=branch("then"), else_branch=branch("else")
    )

    body = helper.make_graph(
        [
            helper.make_node(
                "Constant",
                [],
                ["body_k"],
                value=numpy_helper.from_array(f32(400), "body.const"),
            ),
            helper.make_node("Add", ["v_in", "body_w"], ["v_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "loop_body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [256]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [256]),
        ],
        initializer=[numpy_helper.from_array(f32(256), "body_w")],
    )
    loop_node = helper.make_node("Loop", ["trip", "", "x"], ["loop_out"], body=body)

    fn = helper.make_function(
        "local",
        "Scale",
        ["a"],
        ["y"],
        [
            helper.make_node(
                "Constant", [], ["k"], value=numpy_helper.from_array(f32(2000), "fn.const")
            ),
            helper.make_node("Mul", ["a", "k"], ["y"]),
        ],
        [helper.make_opsetid("", 21)],
    )
    call = helper.make_node("Scale", ["c_big"], ["fn_out"], domain="local")

    bag = helper.make_node("Bag", [], ["bag_out"], domain="com.example")
    bag.attribute.append(
        helper.make_attribute(
            "weights",
            [
                numpy_helper.from_array(f32(600), "bag.f32"),
                numpy_helper.from_array(
                    rng.integers(-1000, 1000, 600, dtype=np.int32), "bag.i32"
                ),
            ],
        )
    )

    g = helper.make_graph(
        [c_big, c_sparse, if_node, loop_node, call, bag],
        "external_interop",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("trip", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [256]),
        ],
        [
            helper.make_tensor_value_info("if_out", TensorProto.FLOAT, [1024]),
            helper.make_tensor_value_info("loop_out", TensorProto.FLOAT, [256]),
            helper.make_tensor_value_info("fn_out", TensorProto.FLOAT, [2000]),
        ],
        initializer=init,
        sparse_initializer=[sparse_init],
    )
    m = helper.make_model(
        g,
        opset_imports=[
            helper.make_opsetid("", 21),
            helper.make_opsetid("local", 1),
            helper.make_opsetid("com.example", 1),
        ],
        functions=[fn],
        ir_version=10,
        producer_name="external_interop.py",
    )
    onnx.checker.check_model(m)
    return m


def without_sparse(m):
    """The model without its sparse initializer and sparse Constant."""
    m = copy.deepcopy(m)
    del m.graph.sparse_initializer[:]
    keep = [n for n in m.graph.node if not any(a.name == "sparse_value" for a in n.attribute)]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    onnx.checker.check_model(m)
    return m


# ---------------------------------------------------------------------------------------
# Cases: how onnx writes the model.


def save_sparse_manually(m, base, location):
    """Writes the sparse tensors' data with onnx's own helpers (`save_model` skips them:
    its traversal has no sparse tensors)."""
    for site, t in walk_model(m):
        if site in ("sparse", "sparse_attr") and t.HasField("raw_data"):
            external_data_helper.set_external_data(t, location)
            external_data_helper.save_external_data(t, base)
            t.ClearField("raw_data")


def add_checksums(path):
    """Adds `checksum` (SHA-1 of the data file, per spec) and a `basepath` (tolerated,
    never used) to every external tensor, and re-saves the model file alone."""
    m = onnx.load(path, load_external_data=False)
    base = os.path.dirname(path)
    digests = {}
    for _, t in walk_model(m):
        if external_data_helper.uses_external_data(t):
            loc = external_data_helper.ExternalDataInfo(t).location
            if loc not in digests:
                with open(os.path.join(base, loc), "rb") as f:
                    digests[loc] = hashlib.sha1(f.read()).hexdigest()
            t.external_data.add(key="checksum", value=digests[loc])
            t.external_data.add(key="basepath", value="/nonexistent/elsewhere")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def case_one_file(m, path):
    onnx.save_model(m, path, save_as_external_data=True, location="data.bin")


def case_per_tensor(m, path):
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=False)


def threshold(n, one_file=True):
    def case(m, path):
        onnx.save_model(
            m,
            path,
            save_as_external_data=True,
            all_tensors_to_one_file=one_file,
            location="data.bin" if one_file else None,
            size_threshold=n,
        )

    return case


def case_convert_attribute(m, path):
    onnx.save_model(
        m, path, save_as_external_data=True, location="data.bin", convert_attribute=True
    )


def case_convert_attribute_per_tensor(m, path):
    onnx.save_model(
        m,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=False,
        convert_attribute=True,
        size_threshold=0,
    )


def case_subdir(m, path):
    os.makedirs(os.path.join(os.path.dirname(path), "sub"), exist_ok=True)
    onnx.save_model(
        m, path, save_as_external_data=True, location="sub/data.bin", convert_attribute=True
    )


def case_sparse_manual(m, path):
    save_sparse_manually(m, os.path.dirname(path), "data.bin")
    onnx.save_model(
        m, path, save_as_external_data=True, location="data.bin", convert_attribute=True
    )


def case_checksum(m, path):
    onnx.save_model(m, path, save_as_external_data=True, location="data.bin")
    add_checksums(path)


CASES = [
    ("one_file", case_one_file),
    ("per_tensor", case_per_tensor),
    ("threshold_0", threshold(0)),
    ("threshold_4096", threshold(4096)),
    ("threshold_huge", threshold(1 << 30)),
    ("per_tensor_threshold_0", threshold(0, one_file=False)),
    ("convert_attribute", case_convert_attribute),
    ("convert_attribute_per_tensor", case_convert_attribute_per_tensor),
    ("subdir", case_subdir),
    ("sparse_manual", case_sparse_manual),
    ("checksum", case_checksum),
]


def layout_lines(path):
    m = onnx.load(path, load_external_data=False)
    lines = []
    for i, (_, t) in enumerate(walk_model(m)):
        if external_data_helper.uses_external_data(t):
            info = external_data_helper.ExternalDataInfo(t)
            lines.append(
                "%d %s %s %s"
                % (
                    i,
                    info.location,
                    "-" if info.offset is None else info.offset,
                    "-" if info.length is None else info.length,
                )
            )
    return lines


def generate(out):
    os.makedirs(out, exist_ok=True)
    model = build_model()
    orig = summary_lines(model)
    onnx.save_model(copy.deepcopy(model), os.path.join(out, "orig.onnx"))
    write_lines(os.path.join(out, "orig.txt"), orig)
    nosparse = without_sparse(model)
    onnx.save_model(nosparse, os.path.join(out, "orig_nosparse.onnx"))
    write_lines(os.path.join(out, "orig_nosparse.txt"), summary_lines(nosparse))
    for name, case in CASES:
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        case(copy.deepcopy(model), path)
        loaded, _ = onnx_load_complete(path)
        expected = summary_lines(loaded)
        # onnx itself gets the original back: the premise of comparing with it.
        if expected != orig:
            sys.exit(
                "%s: onnx.load differs from the original: %s"
                % (name, first_diff(orig, expected))
            )
        write_lines(os.path.join(d, "expected.txt"), expected)
        layout = layout_lines(path)
        if name != "threshold_huge" and not layout:
            sys.exit("%s: onnx wrote no external data" % name)
        write_lines(os.path.join(d, "layout.txt"), layout)
    write_lines(os.path.join(out, "cases.txt"), [name for name, _ in CASES])


# ---------------------------------------------------------------------------------------
# Files onnx-light wrote.


def check(path):
    """`onnx.checker.check_model(path)`: `ok`, or `sparse_rejected=<n>` when it fails only
    because sparse tensors are external (onnx's checker parses sparse indices and cannot
    read external ones; onnxruntime refuses them too): the same model with its sparse
    tensors inline, other tensors still external, must then pass."""
    try:
        onnx.checker.check_model(path)
        return "ok"
    except Exception:
        m = onnx.load(path, load_external_data=False)
        base = os.path.dirname(path)
        sparse = [
            t
            for site, t in walk_model(m)
            if site in ("sparse", "sparse_attr") and external_data_helper.uses_external_data(t)
        ]
        if not sparse:
            raise
        for t in sparse:
            external_data_helper.load_external_data_for_tensor(t, base)
        inline = os.path.join(base, "model.sparse-inline.onnx")
        with open(inline, "wb") as f:
            f.write(m.SerializeToString())
        onnx.checker.check_model(inline)
        return "sparse_rejected=%d" % len(sparse)


def verify(out, cases):
    failures = []
    for arg in cases:
        case, _, baseline = arg.partition("=")
        orig = read_lines(os.path.join(out, (baseline or "orig") + ".txt"))
        path = os.path.join(out, case, "model.onnx")
        try:
            external = len(layout_lines(path))
            loaded, left = onnx_load_complete(path)
            actual = summary_lines(loaded)
            if actual != orig:
                failures.append(
                    "%s: onnx.load differs from the original: %s" % (case, first_diff(orig, actual))
                )
                continue
            checker = check(path)
            print("%s ok external=%d left_external=%d checker=%s" % (case, external, left, checker))
        except Exception as e:  # noqa: BLE001 - reported with the case name
            failures.append("%s: %s: %s" % (case, type(e).__name__, e))
    if failures:
        sys.exit("\n".join(failures))


# ---------------------------------------------------------------------------------------
# onnxruntime.


def ort(out):
    import onnxruntime

    single = os.path.join(out, "mlp.onnx")
    split = os.path.join(out, "mlp_split", "model.onnx")
    x = np.random.default_rng(7).standard_normal((4, 256)).astype(np.float32)

    def run(path):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            path, options, providers=["CPUExecutionProvider"]
        )
        return session.run(None, {"x": x})

    expected = run(single)
    actual = run(split)

    # The reference: the weights as onnx reads them from the single file.
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(single).graph.initializer}
    h = x
    layers = sorted({int(n[1:]) for n in weights if n.startswith("w")})
    for i in layers:
        h = h @ weights["w%d" % i] + weights["b%d" % i]
        h = np.maximum(h, 0)

    if len(expected) != len(actual):
        sys.exit("output counts differ: %d vs %d" % (len(expected), len(actual)))
    identical = True
    for e, a in zip(expected, actual):
        if e.shape != a.shape or not np.allclose(e, a, rtol=1e-6, atol=1e-6):
            sys.exit(
                "outputs differ: max abs diff %g" % float(np.max(np.abs(e.astype(np.float64) - a)))
            )
        identical = identical and np.array_equal(e, a)
    if not np.allclose(actual[0], h, rtol=1e-4, atol=1e-4):
        diff = float(np.max(np.abs(actual[0] - h)))
        sys.exit("onnxruntime output differs from numpy: max abs diff %g" % diff)
    if not np.any(actual[0] > 0):
        sys.exit("degenerate output: all zero")
    print(
        "ort ok version=%s outputs=%d shape=%s identical=%s sum=%.6f"
        % (onnxruntime.__version__, len(actual), actual[0].shape, identical, float(actual[0].sum()))
    )


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        generate(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "verify":
        verify(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "ort":
        ort(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
