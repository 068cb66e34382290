"""Messages of every ONNX type and field, written by the official `onnx` package, for
`tests/tests/onnx_interop.rs`.

    onnx_interop.py generate DIR
        Writes the messages below to DIR and `DIR/manifest.txt`, one line per file:
        `<file> <message type> <summary>` (summary: see onnx_summary.py).
    onnx_interop.py verify DIR
        Checks the files onnx-light wrote after editing the generated messages
        (`*.ours.*`): each must load with `onnx`, pass `onnx.checker.check_model` where the
        model is valid, and equal byte for byte what protobuf writes after the same edit
        (see EDITS; `onnx_interop.rs` makes them with onnx-light).
    onnx_interop.py reserialize LIST
        LIST has lines `<type> <file>` (a file holding a serialized onnx.<type>). For
        each, prints `<hex of SerializeToString()> <unknown fields>`: the unknown fields
        of every message as `path:number/wiretype` items separated by spaces (`-` when
        there are none). Models are read with `onnx.load_model_from_string`.
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import (
    AttributeProto,
    MapProto,
    ModelProto,
    OperatorSetProto,
    OptionalProto,
    SequenceProto,
    SparseTensorProto,
    TensorProto,
    helper,
    numpy_helper,
)

import onnx_summary


# ---------------------------------------------------------------------------------------
# Building blocks.


def kv(key, value):
    e = onnx.StringStringEntryProto()
    e.key = key
    e.value = value
    return e


def meta(*pairs):
    return [kv(k, v) for k, v in pairs]


def sample_values(dt):
    """Three or more values representable in data type `dt`."""
    if dt == TensorProto.STRING:
        return [b"plain", b"\x00\xff binary", "ünïcödé ✓".encode("utf-8"), b""]
    if dt == TensorProto.BOOL:
        return [True, False, True]
    if dt in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
        return [1 + 2j, -3.5 + 0j, 0.25j, float("inf") - 1j]
    if dt in (TensorProto.FLOAT, TensorProto.DOUBLE):
        return [0.5, -1.0, 2.0, float("inf"), -0.0, 3.4e38, float("nan")]
    if dt in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
        return [0.5, -1.0, 2.0, float("inf")]
    if dt in (
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
        TensorProto.FLOAT4E2M1,
        TensorProto.FLOAT6E2M3,
        TensorProto.FLOAT6E3M2,
    ):
        return [0.5, -1.0, 2.0]
    if dt == TensorProto.FLOAT8E8M0:
        return [0.5, 1.0, 2.0]
    if dt in (TensorProto.UINT2, TensorProto.UINT4):
        return [0, 1, 3]
    if dt in (TensorProto.INT2,):
        return [-1, 0, 1]
    if dt == TensorProto.INT4:
        return [-8, 0, 7]
    if dt == TensorProto.UINT8:
        return [0, 1, 255]
    if dt == TensorProto.INT8:
        return [-128, 0, 127]
    if dt == TensorProto.UINT16:
        return [0, 1, 65535]
    if dt == TensorProto.INT16:
        return [-32768, 0, 32767]
    if dt == TensorProto.UINT32:
        return [0, 1, 2**32 - 1]
    if dt == TensorProto.INT32:
        return [-(2**31), 0, 2**31 - 1]
    if dt == TensorProto.UINT64:
        return [0, 1, 2**64 - 1]
    if dt == TensorProto.INT64:
        return [-(2**63), 0, 2**63 - 1]
    raise ValueError("no sample values for data type %d" % dt)


def all_data_types():
    return [(name, dt) for name, dt in TensorProto.DataType.items() if dt != TensorProto.UNDEFINED]


def typed_tensor(name, dt):
    """A tensor of `dt` in its typed field (`*_data`)."""
    vals = sample_values(dt)
    n = len(vals)
    return helper.make_tensor(name, dt, [n], vals)


def raw_tensor(name, dt):
    """The same values in `raw_data` (strings have no raw form: None)."""
    if dt == TensorProto.STRING:
        return None
    return numpy_helper.from_array(numpy_helper.to_array(typed_tensor(name, dt)), name=name)


def every_tensor(prefix):
    out = []
    for name, dt in all_data_types():
        out.append(typed_tensor("%s_%s" % (prefix, name.lower()), dt))
        raw = raw_tensor("%s_%s_raw" % (prefix, name.lower()), dt)
        if raw is not None:
            out.append(raw)
    return out


def odd_tensors():
    """Tensors using the rarely used fields."""
    segmented = helper.make_tensor("segmented", TensorProto.FLOAT, [2, 3], [1, 2, 3, 4, 5, 6])
    segmented.segment.begin = 3
    segmented.segment.end = 6
    segmented.doc_string = "a segment of a larger tensor ✓"
    segmented.metadata_props.extend(meta(("origin", "generator"), ("", "empty key")))

    external = TensorProto()
    external.name = "external weights"
    external.data_type = TensorProto.FLOAT
    external.dims.extend([1024, 1024])
    external.data_location = TensorProto.EXTERNAL
    external.external_data.extend(
        meta(("location", "weights.bin"), ("offset", "4096"), ("length", "4194304"))
    )

    empty = TensorProto()  # no field set at all

    scalar = helper.make_tensor("scalar", TensorProto.INT64, [], [-1])
    zero_dim = helper.make_tensor("zero_dim", TensorProto.FLOAT, [0, 3], [])
    big_dims = TensorProto()
    big_dims.name = "big dims"
    big_dims.data_type = TensorProto.UINT8
    big_dims.dims.extend([2**40, 1, 0, 2**62])
    return [segmented, external, empty, scalar, zero_dim, big_dims]


def sparse_tensor(name, dt=TensorProto.FLOAT):
    values = helper.make_tensor(name + "_values", dt, [3], sample_values(dt)[:3])
    indices = helper.make_tensor(name + "_indices", TensorProto.INT64, [3], [1, 5, 7])
    return helper.make_sparse_tensor(values, indices, [2, 5])


def tensor_type(elem, shape):
    return helper.make_tensor_type_proto(elem, shape)


def every_type_proto():
    t_dims = tensor_type(TensorProto.FLOAT, [3, "batch", None])
    t_dims.tensor_type.shape.dim[0].denotation = "DATA_CHANNEL"
    t_dims.denotation = "TENSOR"
    t_unranked = tensor_type(TensorProto.INT64, None)
    t_scalar = tensor_type(TensorProto.BOOL, [])
    seq = helper.make_sequence_type_proto(tensor_type(TensorProto.FLOAT16, [2]))
    seq_seq = helper.make_sequence_type_proto(seq)
    map_int = helper.make_map_type_proto(TensorProto.INT64, tensor_type(TensorProto.STRING, [1]))
    map_str = helper.make_map_type_proto(TensorProto.STRING, seq)
    opt = helper.make_optional_type_proto(t_dims)
    opt_seq = helper.make_optional_type_proto(seq)
    sparse = helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [10, "n"])
    opaque = onnx.TypeProto()
    opaque.opaque_type.domain = "com.example"
    opaque.opaque_type.name = "Handle"
    empty = onnx.TypeProto()
    return [
        t_dims,
        t_unranked,
        t_scalar,
        seq,
        seq_seq,
        map_int,
        map_str,
        opt,
        opt_seq,
        sparse,
        opaque,
        empty,
    ]


def value_infos(prefix):
    out = []
    for i, tp in enumerate(every_type_proto()):
        v = helper.make_value_info("%s_%d" % (prefix, i), tp, doc_string="value %d" % i)
        if i % 3 == 0:
            v.metadata_props.extend(meta(("index", str(i))))
        out.append(v)
    return out


def small_graph(name, op="Identity"):
    g = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name=name + "_node")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    return g


def every_attribute():
    """Attributes of every type, with both an explicit and the helper-inferred type."""
    t = typed_tensor("attr_tensor", TensorProto.FLOAT)
    sp = sparse_tensor("attr_sparse")
    attrs = [
        helper.make_attribute("f", 1.5),
        helper.make_attribute("f_nan", float("nan")),
        helper.make_attribute("f_neg_zero", -0.0),
        helper.make_attribute("i", -7),
        helper.make_attribute("i_min", -(2**63)),
        helper.make_attribute("s", b"bytes\x00\xff"),
        helper.make_attribute("s_text", "ünïcödé"),
        helper.make_attribute("t", t),
        helper.make_attribute("g", small_graph("then_branch")),
        helper.make_attribute("sparse_tensor", sp),
        helper.make_attribute("tp", tensor_type(TensorProto.FLOAT, ["N", 3])),
        helper.make_attribute("floats", [1.0, -2.5, float("inf"), 0.0]),
        helper.make_attribute("ints", [1, -1, 2**40, -(2**63), 0]),
        helper.make_attribute("strings", [b"a", b"", "ü".encode("utf-8")]),
        helper.make_attribute("tensors", [t, raw_tensor("attr_raw", TensorProto.INT8)]),
        helper.make_attribute("graphs", [small_graph("g0"), small_graph("g1", "Neg")]),
        helper.make_attribute("sparse_tensors", [sp, sparse_tensor("sp2", TensorProto.INT32)]),
        helper.make_attribute("type_protos", every_type_proto()[:4]),
        helper.make_attribute("empty_floats", [], attr_type=AttributeProto.FLOATS),
        helper.make_attribute("with_doc", 3, doc_string="an attribute's documentation"),
    ]
    untyped = AttributeProto()  # a name and nothing else
    untyped.name = "untyped"
    attrs.append(untyped)
    return attrs


def device_configurations():
    cfg = onnx.NodeDeviceConfigurationProto()
    cfg.configuration_id = "two_gpus"
    cfg.pipeline_stage = 1
    spec = cfg.sharding_spec.add()
    spec.tensor_name = "X"
    spec.device.extend([0, 1, -1])
    group = spec.index_to_device_group_map.add()
    group.key = 0
    group.value.extend([0, 1])
    dim = spec.sharded_dim.add()
    dim.axis = -1
    s1 = dim.simple_sharding.add()
    s1.dim_value = 64
    s1.num_shards = 2
    s2 = dim.simple_sharding.add()
    s2.dim_param = "batch"
    s2.num_shards = 4
    spec.sharded_dim.add()  # an empty sharded dim
    empty = onnx.NodeDeviceConfigurationProto()
    return [cfg, empty]


def quantization_annotations():
    a = onnx.TensorAnnotation()
    a.tensor_name = "W"
    a.quant_parameter_tensor_names.extend(
        meta(("SCALE_TENSOR", "W_scale"), ("ZERO_POINT_TENSOR", "W_zero"))
    )
    return [a, onnx.TensorAnnotation()]


def function():
    body = [
        helper.make_node(
            "Mul",
            ["a", "b"],
            ["c"],
            name="fn_mul",
            doc_string="in a function",
        ),
        helper.make_node("Constant", [], ["k"], name="fn_const"),
    ]
    ref = AttributeProto()
    ref.name = "value_float"
    ref.ref_attr_name = "alpha"
    ref.type = AttributeProto.FLOAT
    body[1].attribute.append(ref)
    f = helper.make_function(
        "custom.domain",
        "MyFunction",
        ["a", "b"],
        ["c", "k"],
        body,
        [helper.make_opsetid("", 21)],
        attributes=["beta"],
        attribute_protos=[helper.make_attribute("alpha", 0.25)],
        doc_string="a model-local function",
        overload="v1",
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    f.metadata_props.extend(meta(("author", "test")))
    return f


def full_model():
    """Every message and field of onnx.proto (the result is not a valid model)."""
    node = helper.make_node(
        "Custom",
        ["X", "", "W"],
        ["Y", "aux"],
        name="all attributes",
        doc_string="a node with every attribute type",
        domain="custom.domain",
        overload="o1",
    )
    node.attribute.extend(every_attribute())
    node.metadata_props.extend(meta(("node key", "node value"), ("k2", "")))
    node.device_configurations.extend(device_configurations())
    plain = helper.make_node("Identity", ["Y"], ["Z"])
    call = helper.make_node("MyFunction", ["Z", "Z"], ["F", "K"], domain="custom.domain")
    call.attribute.append(helper.make_attribute("alpha", 2.0))

    graph = helper.make_graph(
        [node, plain, call],
        "main graph ✓",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3])] + value_infos("in"),
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, None)] + value_infos("out")[:3],
        initializer=every_tensor("init") + odd_tensors(),
        doc_string="the main graph",
        value_info=value_infos("vi"),
        sparse_initializer=[sparse_tensor("sparse_w"), sparse_tensor("sparse_i", TensorProto.INT64)],
    )
    graph.quantization_annotation.extend(quantization_annotations())
    graph.metadata_props.extend(meta(("graph", "metadata")))

    model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", 21),
            helper.make_opsetid("custom.domain", 1),
            helper.make_opsetid("ai.onnx.ml", 5),
        ],
        producer_name="onnx-light interop ✓",
        producer_version="1.0",
        domain="org.example",
        model_version=2**40,
        doc_string="a model using every field",
        functions=[function()],
    )
    model.metadata_props.extend(meta(("key", "value"), ("unicode ✓", "ünïcödé")))

    init_graph = small_graph("training_init")
    algo_graph = small_graph("training_algorithm", "Neg")
    model.training_info.append(
        helper.make_training_info(algo_graph, [("W", "y")], init_graph, [("X", "y")])
    )
    model.training_info.append(onnx.TrainingInfoProto())

    cfg = model.configuration.add()
    cfg.name = "two_gpus"
    cfg.num_devices = 2
    cfg.device.extend(["cuda:0", "cuda:1"])
    model.configuration.add()
    return model


def valid_model():
    """A model that passes onnx.checker.check_model, using many features."""
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["A"], ["then_out"])],
        "then",
        [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2, 3])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["A"], ["else_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2, 3])],
    )
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), "W")
    w.doc_string = "weights"
    w.metadata_props.extend(meta(("quantized", "no")))
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [2, 3])
    nodes = [
        helper.make_node("Reshape", ["X", "shape"], ["A"], name="reshape"),
        helper.make_node(
            "Constant",
            [],
            ["cond"],
            name="const",
            value=helper.make_tensor("c", TensorProto.BOOL, [], [True]),
        ),
        helper.make_node(
            "If", ["cond"], ["B"], name="if", then_branch=then_g, else_branch=else_g
        ),
        helper.make_node("MatMul", ["B", "W"], ["C"], name="matmul"),
        helper.make_node(
            "LeakyRelu", ["C"], ["D"], name="leaky", alpha=0.125, doc_string="a doc string"
        ),
        helper.make_node("Scale", ["D"], ["Y"], name="call", domain="local", factor=3.0),
        helper.make_node(
            "Cast", ["Y"], ["Y16"], name="cast", to=TensorProto.FLOAT16
        ),
    ]
    nodes[0].metadata_props.extend(meta(("source", "generator")))
    scale_body = [
        helper.make_node("Constant", [], ["f"], value_float=1.0),
        helper.make_node("Mul", ["x", "f"], ["y"]),
    ]
    ref = AttributeProto()
    ref.name = "value_float"
    ref.ref_attr_name = "factor"
    ref.type = AttributeProto.FLOAT
    del scale_body[0].attribute[:]
    scale_body[0].attribute.append(ref)
    scale = helper.make_function(
        "local",
        "Scale",
        ["x"],
        ["y"],
        scale_body,
        [helper.make_opsetid("", 21)],
        attributes=["factor"],
    )
    graph = helper.make_graph(
        nodes,
        "valid",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6])],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("Y16", TensorProto.FLOAT16, [2, 2]),
        ],
        initializer=[w, shape],
        doc_string="a valid model",
        value_info=[helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        producer_name="onnx-light interop",
        functions=[scale],
        ir_version=10,
    )
    model.metadata_props.extend(meta(("license", "MIT")))
    onnx.checker.check_model(model, full_check=True)
    return model


def data_messages():
    """SequenceProto, MapProto and OptionalProto values of every element kind."""
    t1 = typed_tensor("s0", TensorProto.FLOAT)
    t2 = raw_tensor("s1", TensorProto.INT64)
    seq_t = helper.make_sequence("tensors", SequenceProto.TENSOR, [t1, t2])
    seq_sp = helper.make_sequence("sparse", SequenceProto.SPARSE_TENSOR, [sparse_tensor("e")])
    seq_seq = helper.make_sequence("nested", SequenceProto.SEQUENCE, [seq_t, seq_sp])
    map_int = helper.make_map("by_int", TensorProto.INT64, [1, -2, 2**40], seq_t)
    map_int.values.tensor_values.append(typed_tensor("s2", TensorProto.STRING))
    map_str = helper.make_map("by_string", TensorProto.STRING, [b"a", "ü".encode(), b""], seq_t)
    map_str.values.tensor_values.append(t1)
    seq_map = helper.make_sequence("maps", SequenceProto.MAP, [map_int, map_str])
    opt_t = helper.make_optional("opt_tensor", OptionalProto.TENSOR, t1)
    opt_sp = helper.make_optional("opt_sparse", OptionalProto.SPARSE_TENSOR, sparse_tensor("o"))
    opt_seq = helper.make_optional("opt_seq", OptionalProto.SEQUENCE, seq_t)
    opt_map = helper.make_optional("opt_map", OptionalProto.MAP, map_int)
    opt_opt = helper.make_optional("opt_opt", OptionalProto.OPTIONAL, opt_t)
    opt_none = OptionalProto()  # an empty optional: a name and an element type only
    opt_none.name = "opt_none"
    opt_none.elem_type = OptionalProto.TENSOR
    seq_opt = helper.make_sequence("optionals", SequenceProto.OPTIONAL, [opt_t, opt_none])
    every = helper.make_sequence("every_type", SequenceProto.TENSOR, every_tensor("seq"))
    return [
        ("seq_tensors.pb", "SequenceProto", seq_t),
        ("seq_sparse.pb", "SequenceProto", seq_sp),
        ("seq_nested.pb", "SequenceProto", seq_seq),
        ("seq_maps.pb", "SequenceProto", seq_map),
        ("seq_optionals.pb", "SequenceProto", seq_opt),
        ("seq_every_type.pb", "SequenceProto", every),
        ("map_int.pb", "MapProto", map_int),
        ("map_string.pb", "MapProto", map_str),
        ("opt_tensor.pb", "OptionalProto", opt_t),
        ("opt_sparse.pb", "OptionalProto", opt_sp),
        ("opt_sequence.pb", "OptionalProto", opt_seq),
        ("opt_map.pb", "OptionalProto", opt_map),
        ("opt_optional.pb", "OptionalProto", opt_opt),
        ("opt_none.pb", "OptionalProto", opt_none),
        ("sparse.pb", "SparseTensorProto", sparse_tensor("alone", TensorProto.DOUBLE)),
        ("seq_empty.pb", "SequenceProto", SequenceProto()),
    ]


def operator_set():
    s = OperatorSetProto()
    s.magic = "ONNXOPSET"
    s.ir_version = 10
    s.ir_version_prerelease = "rc1"
    s.ir_build_metadata = "build"
    s.domain = "custom.domain"
    s.opset_version = 3
    s.doc_string = "an operator set"
    op = s.operator.add()
    op.op_type = "Custom"
    op.since_version = 2
    op.status = onnx.OperatorStatus.Value("STABLE")
    op.doc_string = "custom operator"
    s.operator.add()
    s.functions.append(function())
    return s


SUMMARIES = {
    "ModelProto": onnx_summary.model,
    "TensorProto": onnx_summary.tensor,
    "SequenceProto": onnx_summary.sequence,
    "MapProto": onnx_summary.map_proto,
    "OptionalProto": onnx_summary.optional,
    "SparseTensorProto": onnx_summary.sparse,
    "OperatorSetProto": None,  # no summary: compared byte for byte only
}


def _schema_fields():
    """Every (message, field) of the ONNX schema files."""
    out = set()

    def add(d):
        for f in d.fields:
            out.add((d.full_name, f.name))
        for n in d.nested_types:
            add(n)

    for module in (onnx.onnx_ml_pb2, onnx.onnx_data_pb2, onnx.onnx_operators_ml_pb2):
        for d in module.DESCRIPTOR.message_types_by_name.values():
            add(d)
    return out


def _used_fields(msg, out):
    for field, value in msg.ListFields():
        out.add((msg.DESCRIPTOR.full_name, field.name))
        if field.message_type is None:
            continue
        for v in value if field.is_repeated else [value]:
            _used_fields(v, out)


def generate(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    files = [
        ("full_model.onnx", "ModelProto", full_model()),
        ("valid_model.onnx", "ModelProto", valid_model()),
        ("operator_set.pb", "OperatorSetProto", operator_set()),
    ]
    for i, t in enumerate(every_tensor("tensor") + odd_tensors()):
        files.append(("tensor_%02d.pb" % i, "TensorProto", t))
    files.extend(data_messages())
    # Every field of every message is set somewhere in what is generated.
    used = set()
    for _, _, msg in files:
        _used_fields(msg, used)
    missing = sorted(_schema_fields() - used)
    if missing:
        sys.exit("fields never set by the generator: %s" % missing)
    lines = []
    for name, type_name, msg in files:
        data = msg.SerializeToString()
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        summarize = SUMMARIES[type_name]
        lines.append("%s %s %s" % (name, type_name, summarize(msg) if summarize else "-"))
    with open(os.path.join(out_dir, "manifest.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d files" % len(files))


# ---------------------------------------------------------------------------------------
# Edits: what onnx_interop.rs does with onnx-light, done here with protobuf.


def edit_valid_model(m):
    m.graph.node[0].name = "renamed_by_onnx_light"
    extra = m.graph.initializer.add()
    extra.name = "extra_initializer"
    extra.data_type = TensorProto.FLOAT
    extra.dims.append(2)
    extra.raw_data = np.array([1.0, 2.0], dtype="<f4").tobytes()
    m.metadata_props.append(kv("edited_by", "onnx-light"))


def edit_full_model(m):
    m.producer_version = "2.0"
    m.graph.initializer[0].name = "renamed_tensor"
    del m.graph.node[1]
    node = m.graph.node[0]
    for a in node.attribute:
        if a.name == "ints":
            a.ints.append(42)
        if a.name == "g":
            a.g.node[0].op_type = "Neg"
    node.attribute[0].ClearField("f")
    del m.training_info[1]
    m.functions[0].overload = "v2"
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 8
    m.graph.sparse_initializer[0].values.float_data.append(9.5)
    m.ClearField("doc_string")


def edit_sequence(s):
    s.tensor_values.append(helper.make_tensor("appended", TensorProto.INT32, [2], [7, -7]))
    s.name = "edited"


# file: (type, edit, check_model)
EDITS = {
    "valid_model.onnx": (ModelProto, edit_valid_model, True),
    "full_model.onnx": (ModelProto, edit_full_model, False),
    "seq_tensors.pb": (SequenceProto, edit_sequence, False),
}


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def verify(out_dir):
    failures = []
    for name, (cls, edit, check) in sorted(EDITS.items()):
        stem, ext = os.path.splitext(name)
        ours_path = os.path.join(out_dir, stem + ".ours" + ext)
        with open(os.path.join(out_dir, name), "rb") as f:
            expected = cls.FromString(f.read())
        edit(expected)
        expected_bytes = expected.SerializeToString()
        with open(ours_path, "rb") as f:
            ours_bytes = f.read()
        if cls is ModelProto:
            ours = onnx.load(ours_path, load_external_data=check)
            if check:
                onnx.checker.check_model(ours, full_check=True)
        else:
            ours = cls.FromString(ours_bytes)
        if ours != expected:
            failures.append("%s: onnx-light's edit differs from protobuf's" % name)
        if ours_bytes != expected_bytes:
            failures.append(
                "%s: bytes differ at offset %d (protobuf %d bytes, onnx-light %d)"
                % (name, first_diff(expected_bytes, ours_bytes), len(expected_bytes), len(ours_bytes))
            )
        if ours.SerializeToString() != ours_bytes:
            failures.append("%s: protobuf re-serializes onnx-light's output differently" % name)
        print("checked %s%s" % (name, " (check_model passed)" if check else ""))
    if failures:
        sys.exit("\n".join(failures))


# ---------------------------------------------------------------------------------------
# Re-serialization and unknown fields.


def unknown_fields_of(msg, path, out):
    from google.protobuf import unknown_fields

    for f in unknown_fields.UnknownFieldSet(msg):
        out.append("%s:%d/%d" % (path, f.field_number, f.wire_type))
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        if field.is_repeated:
            for i, v in enumerate(value):
                unknown_fields_of(v, "%s.%s[%d]" % (path, field.name, i), out)
        else:
            unknown_fields_of(value, "%s.%s" % (path, field.name), out)


def reserialize(list_path):
    with open(list_path, encoding="utf-8") as f:
        entries = [line.rstrip("\n").split(" ", 1) for line in f if line.strip()]
    for type_name, path in entries:
        with open(path, "rb") as f:
            data = f.read()
        if type_name == "ModelProto":
            msg = onnx.load_model_from_string(data)
        else:
            msg = getattr(onnx, type_name).FromString(data)
        unknown = []
        unknown_fields_of(msg, "", unknown)
        print("%s %s" % (msg.SerializeToString().hex(), " ".join(unknown) or "-"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        generate(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "verify":
        verify(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "reserialize":
        reserialize(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
