"""onnx_light.onnx.checker's checks of one part (check_node, check_graph,
check_function, check_attribute, check_tensor, check_sparse_tensor, check_value_info)
against onnx.checker's: on many generated parts, valid and broken, both must accept or
both raise, with the same exception type."""

import random

import numpy as np
import onnx
import onnx.checker as ref
import onnx.defs
import pytest
from onnx import AttributeProto, TensorProto, helper

import onnx_light.onnx as ol
from onnx_light.onnx import checker

IR = onnx.IR_VERSION
LATEST = onnx.defs.onnx_opset_version()


def ref_ctx(ir_version, opsets):
    ctx = ref.C.CheckerContext()
    ctx.ir_version = ir_version
    ctx.opset_imports = dict(opsets)
    return ctx


def our_ctx(ir_version, opsets):
    ctx = checker.CheckerContext()
    ctx.ir_version = ir_version
    ctx.opset_imports = dict(opsets)
    return ctx


def verdict(fn, *args):
    """None when ``fn`` accepts, else the kind of exception it raised."""
    try:
        fn(*args)
    except (ref.ValidationError, checker.ValidationError):
        return "ValidationError"
    except Exception as e:  # noqa: BLE001 (the type is the verdict)
        return type(e).__name__
    return None


def same_verdict(name, proto, ir_version=None, opsets=None, **kw):
    """The verdicts of ``onnx.checker.<name>`` and ours on ``proto`` (in the context
    ``ir_version``/``opsets``, or the default), asserted equal; returns it."""
    args_ref, args_ours = [proto], [proto]
    if ir_version is not None:
        args_ref.append(ref_ctx(ir_version, opsets or {}))
        args_ours.append(our_ctx(ir_version, opsets or {}))
    expected = verdict(getattr(ref, name), *args_ref)
    got = verdict(getattr(checker, name), *args_ours)
    assert got == expected, f"{name}({proto}, ir={ir_version}, opsets={opsets}): onnx {expected}, ours {got}"
    # Our own messages give the same verdict as onnx's.
    if not isinstance(proto, (bytes, int, str)) and hasattr(proto, "SerializeToString"):
        ours = ol._adopt(proto)
        assert verdict(getattr(checker, name), ours, *args_ours[1:]) == expected
    return expected


# ---------------------------------------------------------------- attribute values


def small_graph(name="g", inp="a", out="b"):
    return helper.make_graph(
        [helper.make_node("Identity", [inp], [out])],
        name,
        [helper.make_tensor_value_info(inp, TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])],
    )


def sparse(values, indices, dims, index_dims=None, index_type=TensorProto.INT64):
    v = helper.make_tensor("sv", TensorProto.FLOAT, [len(values)], values)
    idx = TensorProto(name="si", data_type=index_type)
    idx.dims.extend(index_dims if index_dims is not None else [len(indices)])
    if index_type == TensorProto.INT64:
        idx.int64_data.extend(indices)
    else:
        idx.int32_data.extend(indices)
    return helper.make_sparse_tensor(v, idx, dims)


def value_for(attr_type):
    """A value of ``attr_type`` for ``helper.make_attribute``."""
    t = helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0])
    return {
        AttributeProto.FLOAT: 1.0,
        AttributeProto.INT: 1,
        AttributeProto.STRING: "a",
        AttributeProto.TENSOR: t,
        AttributeProto.GRAPH: small_graph(),
        AttributeProto.SPARSE_TENSOR: sparse([1.0], [0], [2]),
        AttributeProto.TYPE_PROTO: helper.make_tensor_type_proto(TensorProto.FLOAT, [1]),
        AttributeProto.FLOATS: [1.0, 2.0],
        AttributeProto.INTS: [1, 2],
        AttributeProto.STRINGS: ["a"],
        AttributeProto.TENSORS: [t],
        AttributeProto.GRAPHS: [small_graph()],
        AttributeProto.SPARSE_TENSORS: [sparse([1.0], [0], [2])],
        AttributeProto.TYPE_PROTOS: [helper.make_tensor_type_proto(TensorProto.FLOAT, [1])],
    }[attr_type]


def make_attr(name, attr_type):
    value = value_for(attr_type)
    if attr_type in (AttributeProto.FLOATS, AttributeProto.INTS, AttributeProto.STRINGS):
        return helper.make_attribute(name, value, attr_type=attr_type)
    if attr_type == AttributeProto.TYPE_PROTOS:
        a = AttributeProto(name=name, type=attr_type)
        a.type_protos.extend(value)
        return a
    if attr_type == AttributeProto.SPARSE_TENSORS:
        a = AttributeProto(name=name, type=attr_type)
        a.sparse_tensors.extend(value)
        return a
    return helper.make_attribute(name, value)


ATTR_TYPES = [
    t for t in AttributeProto.AttributeType.values() if t != AttributeProto.UNDEFINED
]

# ---------------------------------------------------------------- nodes


def schema_node(schema, rng):
    """A node fitting ``schema``: its minimal inputs and outputs, its required
    attributes (and some optional ones) with values of their types."""
    n_in = max(schema.min_input, 1 if schema.max_input > 0 else 0)
    n_out = max(schema.min_output, 1 if schema.max_output > 0 else 0)
    attrs = []
    for name, a in sorted(schema.attributes.items()):
        if a.required or rng.random() < 0.3:
            attrs.append(make_attr(name, a.type))
    node = helper.make_node(
        schema.name,
        [f"i{k}" for k in range(n_in)],
        [f"o{k}" for k in range(n_out)],
        domain=schema.domain,
    )
    node.attribute.extend(attrs)
    return node


def broken_variants(node, schema, rng):
    """``node`` broken in each way the checker looks at."""
    out = []
    required = [n for n, a in schema.attributes.items() if a.required]
    if required:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        keep = [a for a in n.attribute if a.name != required[0]]
        del n.attribute[:]
        n.attribute.extend(keep)
        out.append(("missing required attribute", n))
    if node.attribute:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        a = n.attribute[0]
        other = rng.choice([t for t in ATTR_TYPES if t != a.type])
        n.attribute[0].CopyFrom(make_attr(a.name, other))
        out.append(("wrong attribute type", n))
        n = onnx.NodeProto()
        n.CopyFrom(node)
        n.attribute.append(n.attribute[0])
        out.append(("repeated attribute", n))
        n = onnx.NodeProto()
        n.CopyFrom(node)
        n.attribute[0].ClearField("type")
        out.append(("attribute without type", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.attribute.append(helper.make_attribute("no_such_attribute", 1))
    out.append(("unknown attribute", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.attribute.append(helper.make_attribute("__private", 1))
    out.append(("double-underscore attribute", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.input.extend(f"extra{k}" for k in range(3))
    out.append(("too many inputs", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.output.extend(f"extra{k}" for k in range(3))
    out.append(("too many outputs", n))
    if node.input:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        n.input[0] = ""
        out.append(("empty first input", n))
        n = onnx.NodeProto()
        n.CopyFrom(node)
        del n.input[:]
        out.append(("no inputs", n))
    if node.output:
        n = onnx.NodeProto()
        n.CopyFrom(node)
        n.output[0] = ""
        out.append(("empty first output", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    del n.input[:]
    del n.output[:]
    out.append(("no inputs nor outputs", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.op_type = node.op_type + "Nope"
    out.append(("unknown operator", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.op_type = ""
    out.append(("empty op_type", n))
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.domain = "com.unknown"
    out.append(("domain not imported", n))
    return out


def all_schemas():
    return sorted(
        onnx.defs.get_all_schemas_with_history(),
        key=lambda s: (s.domain, s.name, s.since_version),
    )


def node_cases():
    rng = random.Random(7)
    cases = []
    for schema in all_schemas():
        node = schema_node(schema, rng)
        domain = schema.domain
        # At its own version, one later, one before it and the newest.
        versions = {schema.since_version, schema.since_version + 1, max(1, schema.since_version - 1)}
        cases.append((f"{schema.name}-{schema.since_version}", node, domain, sorted(versions)))
        for what, broken in broken_variants(node, schema, rng):
            cases.append((f"{schema.name}-{schema.since_version} {what}", broken, domain, [schema.since_version]))
    return cases


NODE_CASES = node_cases()


def test_enough_node_cases():
    assert len(NODE_CASES) > 3000


@pytest.mark.parametrize("chunk", range(8))
def test_nodes_get_onnx_verdicts(chunk):
    verdicts = {}
    for i, (what, node, domain, versions) in enumerate(NODE_CASES):
        if i % 8 != chunk:
            continue
        for v in versions:
            opsets = {domain: v}
            if domain:
                opsets[""] = LATEST
            for ir in (IR, 1):
                verdicts.setdefault(same_verdict("check_node", node, ir, opsets), []).append(what)
    # Both verdicts occur: the generated cases test acceptance and refusal.
    assert set(verdicts) == {None, "ValidationError"}, verdicts.keys()


def test_node_contexts_and_domains():
    relu = helper.make_node("Relu", ["x"], ["y"])
    assert same_verdict("check_node", relu) is None
    for opsets in ({}, {"": 5}, {"ai.onnx": 14}, {"": 0}, {"ai.onnx.ml": 3}, {"": 14, "ai.onnx": 1}):
        same_verdict("check_node", relu, IR, opsets)
    # Opsets past the newest or below the first, and nodes naming ai.onnx outright.
    for opsets in ({"": 99}, {"": -3}, {"": 2**31 - 1}):
        same_verdict("check_node", relu, IR, opsets)
    named = helper.make_node("Relu", ["x"], ["y"], domain="ai.onnx")
    for opsets in ({"ai.onnx": 14}, {"": 14}, {"": 14, "ai.onnx": 6}):
        same_verdict("check_node", named, IR, opsets)
    custom = helper.make_node("Anything", [], ["y"], domain="com.example", foo=1)
    assert same_verdict("check_node", custom, IR, {"com.example": 1, "": 21}) is None
    same_verdict("check_node", custom, IR, {"": 21})
    # An experimental operator, removed from ONNX: not checked against a schema.
    assert same_verdict("check_node", helper.make_node("ATen", ["x"], ["y"], bad=2), IR, {"": 21}) is None
    # Deprecated at this version.
    same_verdict("check_node", helper.make_node("Upsample", ["x", "s"], ["y"]), IR, {"": 10})
    same_verdict("check_node", helper.make_node("Upsample", ["x", "s"], ["y"]), IR, {"": 9})


def if_node(then_input="x"):
    then_g = small_graph("then", then_input, "t_out")
    else_g = small_graph("else", "z", "e_out")
    return helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)


def test_subgraphs_of_nodes():
    # The branch uses its own input and the empty lexical scope: inputs of a subgraph
    # need no type, but names used must be defined.
    for node in (if_node(), if_node("c")):
        same_verdict("check_node", node)
    g = helper.make_graph(
        [helper.make_node("Relu", ["outer"], ["r"])], "body", [], [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)]
    )
    loop_like = helper.make_node("If", ["c"], ["y"], then_branch=g, else_branch=g)
    assert same_verdict("check_node", loop_like) == "ValidationError"
    unnamed = helper.make_node("If", ["c"], ["y"], then_branch=small_graph(""), else_branch=small_graph())
    assert same_verdict("check_node", unnamed) == "ValidationError"


# ---------------------------------------------------------------- attributes


def attribute_cases():
    cases = []
    for t in ATTR_TYPES:
        a = make_attr("a", t)
        cases.append(a)
        no_type = AttributeProto()
        no_type.CopyFrom(a)
        no_type.ClearField("type")
        cases.append(no_type)
        for other in ATTR_TYPES:
            if other != t:
                wrong = AttributeProto()
                wrong.CopyFrom(a)
                wrong.type = other
                cases.append(wrong)
        unnamed = AttributeProto()
        unnamed.CopyFrom(a)
        unnamed.name = ""
        cases.append(unnamed)
    two = helper.make_attribute("two", 1)
    two.f = 2.0
    cases.append(two)
    cases.append(AttributeProto(name="empty", type=AttributeProto.INT))
    cases.append(AttributeProto(name="nothing"))
    ref_attr = helper.make_attribute("r", 1)
    ref_attr.ref_attr_name = "outer"
    cases.append(ref_attr)
    bad_tensor = helper.make_attribute("t", helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0]))
    bad_tensor.t.dims[:] = [5]
    cases.append(bad_tensor)
    cases.append(helper.make_attribute("g", small_graph("g", "a", "missing")))
    g = small_graph()
    g.node[0].input[0] = "undefined"
    cases.append(helper.make_attribute("g", g))
    cases.append(helper.make_attribute("gs", [small_graph(), g]))
    bad_sparse = make_attr("s", AttributeProto.SPARSE_TENSOR)
    bad_sparse.sparse_tensor.indices.int64_data[:] = [7]
    cases.append(bad_sparse)
    return cases


@pytest.mark.parametrize("ir", [IR, 2, 1, -1])
def test_attributes_get_onnx_verdicts(ir):
    verdicts = [same_verdict("check_attribute", a, ir, {"": LATEST}) for a in attribute_cases()]
    assert None in verdicts and "ValidationError" in verdicts


def test_attributes_default_context():
    for a in attribute_cases():
        same_verdict("check_attribute", a)


# ---------------------------------------------------------------- tensors

DATA_FIELDS = ["float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data", "raw_data"]


def tensor_cases():
    cases = []
    for dt in TensorProto.DataType.values():
        for dims in ([], [0], [3], [2, 2], [-1]):
            for field in DATA_FIELDS:
                for count in (0, 1, 3, 4, 9, 20):
                    t = TensorProto(name="t", data_type=dt)
                    t.dims.extend(dims)
                    if field == "raw_data":
                        t.raw_data = bytes(count)
                    elif field == "string_data":
                        t.string_data.extend([b"s"] * count)
                    elif field in ("float_data", "double_data"):
                        getattr(t, field).extend([0.0] * count)
                    else:
                        getattr(t, field).extend([0] * count)
                    cases.append(t)
    # Two data fields, no data type, FLOAT6 values out of 6 bits, huge dims.
    t = TensorProto(name="two", data_type=TensorProto.FLOAT, dims=[1], float_data=[1.0], int32_data=[1])
    cases.append(t)
    cases.append(TensorProto(name="untyped", dims=[1], float_data=[1.0]))
    if hasattr(TensorProto, "FLOAT6E2M3"):
        cases.append(TensorProto(name="f6", data_type=TensorProto.FLOAT6E2M3, dims=[1], int32_data=[64]))
        cases.append(TensorProto(name="f6", data_type=TensorProto.FLOAT6E2M3, dims=[1], raw_data=b"\xff"))
    cases.append(TensorProto(name="huge", data_type=TensorProto.FLOAT, dims=[2**40, 2**40], raw_data=b"\0"))
    return cases


def external(location, with_data=False):
    t = TensorProto(name="ext", data_type=TensorProto.FLOAT, dims=[1])
    t.data_location = TensorProto.EXTERNAL
    if location is not None:
        t.external_data.add(key="location", value=location)
    if with_data:
        t.float_data.append(1.0)
    return t


def test_tensors_get_onnx_verdicts():
    cases = tensor_cases()
    assert len(cases) > 5000
    verdicts = [same_verdict("check_tensor", t) for t in cases]
    assert verdicts.count(None) > 100 and verdicts.count("ValidationError") > 1000


def test_external_tensors_are_looked_for_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.bin").write_bytes(bytes(4))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.bin").write_bytes(bytes(4))
    for location in ("data.bin", "sub/d.bin", "sub/../data.bin", "missing.bin", "sub", "/etc/passwd", "../x", ""):
        same_verdict("check_tensor", external(location))
    assert same_verdict("check_tensor", external("data.bin")) is None
    assert same_verdict("check_tensor", external("missing.bin")) == "ValidationError"
    assert same_verdict("check_tensor", external(None)) == "ValidationError"
    assert same_verdict("check_tensor", external("data.bin", with_data=True)) == "ValidationError"


# ---------------------------------------------------------------- sparse tensors


def sparse_cases():
    cases = [
        sparse([1.0, 2.0], [0, 3], [4]),
        sparse([1.0, 2.0], [3, 0], [4]),  # unsorted
        sparse([1.0, 2.0], [0, 0], [4]),  # repeated
        sparse([1.0, 2.0], [0, 4], [4]),  # out of range
        sparse([1.0, 2.0], [-1, 2], [4]),
        sparse([1.0, 2.0], [0, 3], [2, 2]),  # linear indices into a matrix
        sparse([1.0, 2.0], [0, 4], [2, 2]),
        sparse([1.0, 2.0], [0, 1, 1, 0], [2, 2], index_dims=[2, 2]),  # coordinates
        sparse([1.0, 2.0], [1, 0, 0, 1], [2, 2], index_dims=[2, 2]),  # unsorted
        sparse([1.0, 2.0], [0, 2, 1, 0], [2, 2], index_dims=[2, 2]),  # out of range
        sparse([1.0, 2.0], [0, 1, 1, 0], [2, 2], index_dims=[2, 3]),  # wrong rank
        sparse([1.0, 2.0], [0, 1, 1, 0], [2, 2], index_dims=[1, 2, 2]),
        sparse([1.0, 2.0], [0, 1, 1], [4]),  # NNZ mismatch
        sparse([1.0, 2.0], [0, 1], [4], index_type=TensorProto.INT32),
        sparse([1.0], [0], [0]),  # non-positive dim
        sparse([1.0], [0], []),  # rank 0
        sparse([1.0], [0], [-2]),
        sparse([], [], [3]),
    ]
    no_indices = sparse([1.0], [0], [1])
    no_indices.ClearField("indices")
    cases.append(no_indices)
    no_values = sparse([1.0], [0], [1])
    no_values.ClearField("values")
    cases.append(no_values)
    values_rank2 = sparse([1.0, 2.0], [0, 1], [4])
    values_rank2.values.dims[:] = [1, 2]
    cases.append(values_rank2)
    short_values = sparse([1.0, 2.0], [0, 1], [4])
    short_values.values.dims[:] = [3]
    cases.append(short_values)
    raw_indices = sparse([1.0, 2.0], [], [4])
    raw_indices.indices.dims[:] = [2]
    raw_indices.indices.raw_data = np.array([2, 1], dtype="<i8").tobytes()
    cases.append(raw_indices)
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 4)
        dims = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        size = int(np.prod(dims))
        idx = [rng.randint(-1, size) for _ in range(n)]
        if rng.random() < 0.5:
            idx.sort()
        cases.append(sparse([1.0] * n, idx, dims))
    return cases


def test_sparse_tensors_get_onnx_verdicts():
    verdicts = [same_verdict("check_sparse_tensor", s) for s in sparse_cases()]
    assert verdicts.count(None) > 10 and verdicts.count("ValidationError") > 10


# ---------------------------------------------------------------- value infos


def value_info_cases():
    vi = helper.make_tensor_value_info
    cases = [
        vi("x", TensorProto.FLOAT, [1, "N"]),
        vi("x", TensorProto.FLOAT, None),  # no shape
        vi("", TensorProto.FLOAT, [1]),
        onnx.ValueInfoProto(name="untyped"),
        helper.make_sparse_tensor_value_info("s", TensorProto.FLOAT, [2]),
        helper.make_sparse_tensor_value_info("s", TensorProto.FLOAT, None),
        helper.make_value_info("seq", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [1]))),
        helper.make_value_info("opt", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [1]))),
        helper.make_value_info("map", helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [1]))),
    ]
    no_elem = vi("x", TensorProto.FLOAT, [1])
    no_elem.type.tensor_type.ClearField("elem_type")
    cases.append(no_elem)
    empty_type = onnx.ValueInfoProto(name="e")
    empty_type.type.SetInParent()
    cases.append(empty_type)
    seq = onnx.ValueInfoProto(name="seq")
    seq.type.sequence_type.SetInParent()
    cases.append(seq)
    opt = onnx.ValueInfoProto(name="opt")
    opt.type.optional_type.SetInParent()
    cases.append(opt)
    m = onnx.ValueInfoProto(name="m")
    m.type.map_type.key_type = TensorProto.INT64
    cases.append(m)
    m2 = onnx.ValueInfoProto(name="m2")
    m2.type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    cases.append(m2)
    op = onnx.ValueInfoProto(name="op")
    op.type.opaque_type.domain = "d"
    cases.append(op)
    op2 = onnx.ValueInfoProto(name="op2")
    op2.type.opaque_type.name = "n"
    cases.append(op2)
    return cases


def test_value_infos_get_onnx_verdicts():
    verdicts = [same_verdict("check_value_info", v) for v in value_info_cases()]
    assert None in verdicts and "ValidationError" in verdicts
    for v in value_info_cases():
        same_verdict("check_value_info", v, -1, {})


# ---------------------------------------------------------------- graphs


def graph_cases():
    vi = helper.make_tensor_value_info
    x = vi("x", TensorProto.FLOAT, [2])
    y = vi("y", TensorProto.FLOAT, [2])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    add = helper.make_node("Add", ["x", "w"], ["s"])
    relu = helper.make_node("Relu", ["s"], ["y"])
    cases = {
        "valid": helper.make_graph([add, relu], "g", [x], [y], [w]),
        "initializer also input": helper.make_graph([add, relu], "g", [x, vi("w", TensorProto.FLOAT, [2])], [y], [w]),
        "out of order": helper.make_graph([relu, add], "g", [x], [y], [w]),
        "input undefined": helper.make_graph([add, relu], "g", [x], [y]),
        "output not produced": helper.make_graph([add], "g", [x], [y], [w]),
        "no name": helper.make_graph([add, relu], "", [x], [y], [w]),
        "input twice": helper.make_graph([add, relu], "g", [x, x], [y], [w]),
        "untyped input": helper.make_graph([add, relu], "g", [onnx.ValueInfoProto(name="x")], [y], [w]),
        "unshaped output": helper.make_graph([add, relu], "g", [x], [vi("y", TensorProto.FLOAT, None)], [w]),
        "assigned twice": helper.make_graph([add, helper.make_node("Relu", ["x"], ["s"]), relu], "g", [x], [y], [w]),
        "assigns an input": helper.make_graph([add, helper.make_node("Relu", ["s"], ["x"]), relu], "g", [x], [y], [w]),
        "initializer twice": helper.make_graph([add, relu], "g", [x], [y], [w, w]),
        "bad initializer": helper.make_graph(
            [add, relu], "g", [x], [y], [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3], float_data=[1.0])]
        ),
        "bad node": helper.make_graph([add, helper.make_node("Relu", ["s"], ["y"], alpha=1.0)], "g", [x], [y], [w]),
        "unknown op": helper.make_graph([add, helper.make_node("Relux", ["s"], ["y"])], "g", [x], [y], [w]),
        "empty optional input": helper.make_graph(
            [helper.make_node("Clip", ["x", "", ""], ["y"])], "g", [x], [y]
        ),
        "if with outer name": helper.make_graph(
            [
                helper.make_node(
                    "If",
                    ["c"],
                    ["y"],
                    then_branch=helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, None)]),
                    else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, None)]),
                )
            ],
            "g",
            [x, vi("c", TensorProto.BOOL, [])],
            [y],
        ),
        "if reassigning an outer name": helper.make_graph(
            [
                helper.make_node(
                    "If",
                    ["c"],
                    ["y"],
                    then_branch=helper.make_graph([helper.make_node("Relu", ["x"], ["c"])], "then", [], [vi("c", TensorProto.FLOAT, None)]),
                    else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, None)]),
                )
            ],
            "g",
            [x, vi("c", TensorProto.BOOL, [])],
            [y],
        ),
        "if using a later value": helper.make_graph(
            [
                helper.make_node(
                    "If",
                    ["c"],
                    ["y"],
                    then_branch=helper.make_graph([helper.make_node("Relu", ["later"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, None)]),
                    else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, None)]),
                ),
                helper.make_node("Relu", ["x"], ["later"]),
            ],
            "g",
            [x, vi("c", TensorProto.BOOL, [])],
            [y],
        ),
    }
    sp = sparse([1.0], [0], [2])
    g = helper.make_graph([helper.make_node("Add", ["x", "sv"], ["y"])], "g", [x], [y])
    g.sparse_initializer.append(sp)
    cases["sparse initializer"] = g
    g2 = onnx.GraphProto()
    g2.CopyFrom(g)
    g2.initializer.append(helper.make_tensor("sv", TensorProto.FLOAT, [1], [1.0]))
    cases["sparse and dense initializer of one name"] = g2
    g3 = onnx.GraphProto()
    g3.CopyFrom(g)
    g3.sparse_initializer[0].indices.int64_data[:] = [5]
    cases["bad sparse initializer"] = g3
    return cases


@pytest.mark.parametrize("ir", [IR, 4, 3, -1])
@pytest.mark.parametrize("opset", [LATEST, 13, 6, 1])
def test_graphs_get_onnx_verdicts(ir, opset):
    verdicts = {what: same_verdict("check_graph", g, ir, {"": opset}) for what, g in graph_cases().items()}
    assert "ValidationError" in verdicts.values()
    if ir > 3 and opset >= 13:
        assert verdicts["valid"] is None
    assert verdicts["bad initializer"] == verdicts["out of order"] == "ValidationError"


def test_graphs_default_context():
    verdicts = {what: same_verdict("check_graph", g) for what, g in graph_cases().items()}
    assert verdicts["valid"] is None and verdicts["out of order"] == "ValidationError"


# ---------------------------------------------------------------- functions


def function_cases():
    f = lambda nodes, ins=("a",), outs=("c",), opsets=(("", 13),), **kw: helper.make_function(  # noqa: E731
        kw.pop("domain", "local"),
        kw.pop("name", "F"),
        list(ins),
        list(outs),
        nodes,
        [helper.make_opsetid(d, v) for d, v in opsets],
        kw.pop("attributes", []),
    )
    relu_ab = helper.make_node("Relu", ["a"], ["b"])
    relu_bc = helper.make_node("Relu", ["b"], ["c"])
    cases = {
        "valid": f([relu_ab, relu_bc]),
        "out of order": f([relu_bc, relu_ab]),
        "undefined input": f([helper.make_node("Relu", ["q"], ["c"])]),
        "input twice": f([relu_ab, relu_bc], ins=("a", "a")),
        "output twice": f([relu_ab, relu_bc], outs=("c", "c")),
        "attribute twice": f([relu_ab, relu_bc], attributes=["k", "k"]),
        "no name": f([relu_ab, relu_bc], name=""),
        "assigned twice": f([relu_ab, helper.make_node("Relu", ["a"], ["b"])]),
        "bad node": f([helper.make_node("Relu", ["a"], ["c"], alpha=1.0)]),
        "unknown op": f([helper.make_node("Relux", ["a"], ["c"])]),
        "no opset for node": f([helper.make_node("Op", ["a"], ["c"], domain="custom")]),
        "custom op": f([helper.make_node("Op", ["a"], ["c"], domain="custom")], opsets=(("", 13), ("custom", 1))),
        "opset 18 reduce": f([helper.make_node("ReduceSum", ["a"], ["c"])], opsets=(("", 18),)),
        "opset 1": f([relu_ab, relu_bc], opsets=(("", 1),)),
        "opset 28": f([relu_ab, relu_bc], opsets=(("", 28),)),
        "ml opset": f([relu_ab, relu_bc], opsets=(("", 13), ("ai.onnx.ml", 3))),
        "no opsets": f([relu_ab, relu_bc], opsets=()),
        "attribute reference": f(
            [helper.make_node("LeakyRelu", ["a"], ["c"])], attributes=["alpha"]
        ),
    }
    ref_node = helper.make_node("LeakyRelu", ["a"], ["c"])
    alpha = AttributeProto(name="alpha", type=AttributeProto.FLOAT, ref_attr_name="alpha")
    ref_node.attribute.append(alpha)
    cases["attribute reference"] = f([ref_node], attributes=["alpha"])
    for opset in (13, 18):
        # Without a context, opset 18 needs IR version 8, which requires a domain.
        nodomain = f([relu_ab, relu_bc], opsets=(("", opset),))
        nodomain.ClearField("domain")
        cases[f"no domain, opset {opset}"] = nodomain
    return cases


@pytest.mark.parametrize(
    "ctx", [None, (IR, {"": LATEST}), (7, {"": 13}), (8, {"": 13}), (IR, {"": 13}), (IR, {"": 6}), (IR, {})]
)
def test_functions_get_onnx_verdicts(ctx):
    verdicts = {}
    for what, fn in function_cases().items():
        if ctx is None:
            verdicts[what] = same_verdict("check_function", fn)
        else:
            verdicts[what] = same_verdict("check_function", fn, ctx[0], ctx[1])
    assert "ValidationError" in verdicts.values()
    if ctx is None:
        assert verdicts["valid"] is None and verdicts["no domain, opset 13"] is None
        assert verdicts["no domain, opset 18"] == "ValidationError"


# ---------------------------------------------------------------- API


def test_constants_and_contexts():
    assert checker.MAXIMUM_PROTOBUF == ref.MAXIMUM_PROTOBUF
    assert checker.DEFAULT_CONTEXT.ir_version == ref.DEFAULT_CONTEXT.ir_version
    assert checker.DEFAULT_CONTEXT.opset_imports == ref.DEFAULT_CONTEXT.opset_imports
    ctx = checker.CheckerContext()
    assert (ctx.ir_version, ctx.opset_imports) == (-1, {})
    ctx.opset_imports = {"": 3}
    ctx.opset_imports["x"] = 1  # a copy
    assert ctx.opset_imports == {"": 3}
    assert isinstance(checker.LEXICAL_SCOPE_CONTEXT, checker.LexicalScopeContext)
    for bad in ("a", 2**31, 1.5):
        with pytest.raises(TypeError):
            ctx.ir_version = bad
        with pytest.raises(TypeError):
            ref.C.CheckerContext().ir_version = bad
    for bad in ({"": 2**31}, [("", 1)], {1: 2}):
        with pytest.raises(TypeError):
            ctx.opset_imports = bad
        with pytest.raises(TypeError):
            ref.C.CheckerContext().opset_imports = bad


@pytest.mark.parametrize(
    "name, wrong",
    [
        ("check_node", onnx.GraphProto()),
        ("check_graph", onnx.NodeProto()),
        ("check_function", onnx.NodeProto()),
        ("check_attribute", onnx.TensorProto()),
        ("check_tensor", onnx.AttributeProto()),
        ("check_sparse_tensor", onnx.TensorProto()),
        ("check_value_info", onnx.TensorProto()),
        ("check_node", "Relu"),
    ],
)
def test_wrong_message_types_raise_type_error(name, wrong):
    assert same_verdict(name, wrong) == "TypeError"
    with pytest.raises(TypeError, match="needs to be of type"):
        getattr(checker, name)(wrong)


def test_wrong_context_types_raise_type_error():
    node = helper.make_node("Relu", ["x"], ["y"])
    for ctx in (None, {"": 13}, checker.LEXICAL_SCOPE_CONTEXT):
        assert verdict(ref.check_node, node, ctx) == verdict(checker.check_node, node, ctx) == "TypeError"


def test_validation_error_is_the_package_one():
    with pytest.raises(ol._errors.ValidationError):
        checker.check_node(helper.make_node("Relux", ["x"], ["y"]))
    assert issubclass(checker.ValidationError, ValueError)


def test_function_opset_versions_out_of_the_int32_range():
    fn = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 2**40)])
    # Without a context, onnx builds one from the imports, which cannot hold the version.
    assert same_verdict("check_function", fn) == "TypeError"
    assert same_verdict("check_function", fn, IR, {"": 13}) == "ValidationError"


def test_the_c_namespace_checks_serialized_parts():
    lex_ref, lex_ours = ref.LEXICAL_SCOPE_CONTEXT, checker.LEXICAL_SCOPE_CONTEXT
    cases = [
        ("check_node", helper.make_node("Relu", ["x"], ["y"]), True),
        ("check_node", helper.make_node("Relu", ["x"], ["y"], alpha=1.0), True),
        ("check_graph", graph_cases()["valid"], True),
        ("check_graph", graph_cases()["out of order"], True),
        ("check_function", function_cases()["opset 28"], True),
        ("check_function", function_cases()["out of order"], True),
        ("check_attribute", attribute_cases()[-1], True),
        ("check_tensor", TensorProto(name="t", data_type=TensorProto.FLOAT, dims=[2], float_data=[1.0]), False),
        ("check_sparse_tensor", sparse([1.0], [0], [2]), False),
        ("check_value_info", onnx.ValueInfoProto(name="v"), False),
    ]
    seen = set()
    for name, proto, lexical in cases:
        data = proto.SerializeToString()
        args_ref = [data, ref.DEFAULT_CONTEXT] + ([lex_ref] if lexical else [])
        args_ours = [data, checker.DEFAULT_CONTEXT] + ([lex_ours] if lexical else [])
        expected = verdict(getattr(ref.C, name), *args_ref)
        assert verdict(getattr(checker.C, name), *args_ours) == expected, name
        seen.add(expected)
        # Without the contexts, or with the message instead of its bytes: TypeError.
        assert verdict(getattr(checker.C, name), data) == verdict(getattr(ref.C, name), data) == "TypeError"
        assert verdict(getattr(checker.C, name), proto, *args_ours[1:]) == "TypeError"
    assert seen == {None, "ValidationError"}
    assert verdict(checker.C.check_node, b"\xff\xff", checker.DEFAULT_CONTEXT, lex_ours) == "DecodeError"
    assert isinstance(checker.C.CheckerContext(), checker.CheckerContext)
    model = helper.make_model(graph_cases()["valid"], opset_imports=[helper.make_opsetid("", 21)])
    assert verdict(checker.C.check_model, model.SerializeToString()) is None
    assert verdict(ref.C.check_model, model.SerializeToString()) is None
