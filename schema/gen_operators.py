"""Write every operator schema of the installed `onnx` package to a compact protobuf file.

Usage: python schema/gen_operators.py OUTPUT

The output, committed as `onnx-light/src/checker/operators.pb`, is read by
`onnx_light::checker::schema` (the message layout is declared there with
`#[derive(ProtoMessage)]`; field numbers match the ones written below). The
encoding is written by hand (fields in number order, nothing depending on dict order or
the protobuf runtime's version), so the same `onnx` gives the same bytes: a test compares
the committed file with a fresh run.

What `onnx.defs` does not expose but `onnx.checker` enforces is measured by probing
`onnx.checker.check_node`: the input/output counts an operator allows inside its
[min, max] range (BatchNormalization's outputs are 1 or 5, not 1..5) and whether it
accepts attributes it does not declare.

Left out: documentation strings, shape inference, and context-dependent function bodies
(they are built per node by C++ code; only the fact that one exists is recorded).
"""

import struct
import sys

import onnx
import onnx.checker
import onnx.defs
import onnx.helper


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def f_int(field, n):
    """A proto3-style scalar: omitted when zero."""
    return key(field, 0) + varint(n) if n else b""


def f_bytes(field, data):
    return key(field, 2) + varint(len(data)) + data


def f_str(field, s):
    return f_bytes(field, s.encode("utf-8")) if s else b""


def f_msg(field, data):
    return f_bytes(field, data)


def formal_parameter(p):
    return (
        f_str(1, p.name)
        + f_str(2, p.type_str)
        + f_int(3, int(p.option))
        + f_int(4, 1 if p.is_homogeneous else 0)
        + f_int(5, p.min_arity)
        + f_int(6, int(p.differentiation_category))
    )


def attribute(a):
    out = f_str(1, a.name) + f_int(2, int(a.type)) + f_int(3, 1 if a.required else 0)
    if a.default_value.ListFields():
        out += f_msg(4, a.default_value.SerializeToString(deterministic=True))
    return out


def type_constraint(t):
    out = f_str(1, t.type_param_str)
    for s in t.allowed_type_strs:
        out += f_bytes(2, s.encode("utf-8"))
    return out


def probe_context(schema):
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = onnx.IR_VERSION
    ctx.opset_imports = {schema.domain: schema.since_version}
    return ctx


def probe(schema, n_in, n_out, attrs=None):
    """The message of `onnx.checker.check_node` for a node of this schema, or None."""
    node = onnx.helper.make_node(
        schema.name,
        [f"i{i}" for i in range(n_in)],
        [f"o{i}" for i in range(n_out)],
        domain=schema.domain,
        **(attrs or {}),
    )
    try:
        onnx.checker.check_node(node, probe_context(schema))
    except onnx.checker.ValidationError as e:
        return str(e)
    return None


PROBE_SPAN = 16


def allowed_counts(schema, outputs):
    """The counts in [min, max] that the checker refuses, when the range is small."""
    lo, hi = (schema.min_output, schema.max_output) if outputs else (schema.min_input, schema.max_input)
    if hi - lo > PROBE_SPAN:
        return []
    word = "output" if outputs else "input"
    allowed = []
    for n in range(lo, hi + 1):
        if outputs:
            msg = probe(schema, schema.min_input, n)
        else:
            msg = probe(schema, n, max(schema.min_output, 1))
        if msg is None or f"not in allowed {word} sizes" not in msg:
            allowed.append(n)
    if len(allowed) == hi - lo + 1:
        return []  # every count in range: nothing to record
    return allowed


def allows_unchecked_attributes(schema):
    msg = probe(schema, schema.min_input, max(schema.min_output, 1), {"zz_undeclared_probe": 1})
    return msg is None or "Unrecognized attribute" not in msg


def function_bodies(schema):
    bodies = []
    versions = list(schema.function_opset_versions)
    for v in versions:
        body = schema.get_function_with_opset_version(v)
        if body:
            bodies.append((v, body))
    if not bodies and schema.has_function:
        bodies.append((schema.since_version, schema.function_body.SerializeToString(deterministic=True)))
    return bodies


def op_schema(s):
    out = (
        f_str(1, s.name)
        + f_str(2, s.domain)
        + f_int(3, s.since_version)
        + f_int(4, 1 if s.deprecated else 0)
    )
    for p in s.inputs:
        out += f_msg(5, formal_parameter(p))
    for p in s.outputs:
        out += f_msg(6, formal_parameter(p))
    out += f_int(7, s.min_input) + f_int(8, s.max_input)
    out += f_int(9, s.min_output) + f_int(10, s.max_output)
    for name in sorted(s.attributes):
        out += f_msg(11, attribute(s.attributes[name]))
    for t in s.type_constraints:
        out += f_msg(12, type_constraint(t))
    for version, body in function_bodies(s):
        out += f_msg(13, f_int(1, version) + f_msg(2, body))
    if not s.deprecated:
        for n in allowed_counts(s, outputs=False):
            out += key(14, 0) + varint(n)
        for n in allowed_counts(s, outputs=True):
            out += key(15, 0) + varint(n)
        out += f_int(16, 1 if allows_unchecked_attributes(s) else 0)
    for v in s.context_dependent_function_opset_versions:
        out += key(17, 0) + varint(v)
    if not s.has_type_and_shape_inference_function:
        out += f_int(18, 1)
    out += f_int(19, s.node_determinism.value)
    out += f_int(21, s.support_level.value)
    out += f_int(22, 1 if s.has_data_propagation_function else 0)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_operators.py OUTPUT")
    schemas = sorted(
        onnx.defs.get_all_schemas_with_history(),
        key=lambda s: (s.domain, s.name, s.since_version),
    )
    out = f_str(1, onnx.__version__) + f_int(2, onnx.IR_VERSION)
    for s in schemas:
        out += f_msg(3, op_schema(s))
    with open(sys.argv[1], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
