"""A canonical one-line text summary of ONNX messages, as parsed by the official `onnx`
package (protobuf). `tests/tests/onnx_support/mod.rs` computes the same text from the
messages onnx-light decoded; the interop tests compare the two.

Rules (mirrored exactly on the Rust side):

* A message is `Tag(part,part,...)`, parts in the order written below (field-number
  order). A part is `field=value`; an unset optional field or an empty repeated field
  gives no part, so presence is compared too.
* Repeated fields: `[v;v;...]`. Repeated numbers in packed fields (and attribute
  `floats`): `count#crc` of their little-endian bytes.
* Names: as they are if made only of `[A-Za-z0-9_./:-]` and not empty, otherwise
  `x'<utf-8 hex>'`. Doc strings and bytes: `len#crc`. Floats: hex of the
  little-endian IEEE bytes. crc is zlib's CRC-32, as 8 hex digits.
* Oneofs: the set member's part (none when unset).
"""

import struct
import zlib

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:-")


def crc(data):
    return "%08x" % (zlib.crc32(data) & 0xFFFFFFFF)


def q(s):
    if s and all(c in _SAFE for c in s):
        return s
    return "x'" + s.encode("utf-8").hex() + "'"


def sq(s):
    b = s.encode("utf-8")
    return "%d#%s" % (len(b), crc(b))


def bq(b):
    return "%d#%s" % (len(b), crc(b))


def f32(v):
    return struct.pack("<f", v).hex()


def num(v):
    return str(v)


class _Parts:
    def __init__(self, msg):
        self.msg = msg
        self.parts = []

    def opt(self, field, fmt):
        if self.msg.HasField(field):
            self.parts.append("%s=%s" % (field, fmt(getattr(self.msg, field))))
        return self

    def rep(self, field, fmt):
        values = getattr(self.msg, field)
        if len(values):
            self.parts.append("%s=[%s]" % (field, ";".join(fmt(v) for v in values)))
        return self

    def packed(self, field, code):
        values = getattr(self.msg, field)
        if len(values):
            data = struct.pack("<%d%s" % (len(values), code), *values)
            self.parts.append("%s=%d#%s" % (field, len(values), crc(data)))
        return self

    def oneof(self, group, fmts):
        which = self.msg.WhichOneof(group)
        if which is not None:
            self.parts.append("%s=%s" % (which, fmts[which](getattr(self.msg, which))))
        return self

    def done(self, tag):
        return "%s(%s)" % (tag, ",".join(self.parts))


def kv(e):
    return _Parts(e).opt("key", q).opt("value", q).done("KV")


def segment(s):
    return _Parts(s).opt("begin", num).opt("end", num).done("Seg")


def tensor(t):
    return (
        _Parts(t)
        .rep("dims", num)
        .opt("data_type", num)
        .opt("segment", segment)
        .packed("float_data", "f")
        .packed("int32_data", "i")
        .rep("string_data", bq)
        .packed("int64_data", "q")
        .opt("name", q)
        .opt("raw_data", bq)
        .packed("double_data", "d")
        .packed("uint64_data", "Q")
        .opt("doc_string", sq)
        .rep("external_data", kv)
        .opt("data_location", num)
        .rep("metadata_props", kv)
        .done("T")
    )


def sparse(s):
    return _Parts(s).opt("values", tensor).opt("indices", tensor).rep("dims", num).done("SP")


def dim(d):
    return (
        _Parts(d)
        .oneof("value", {"dim_value": num, "dim_param": q})
        .opt("denotation", q)
        .done("D")
    )


def shape(s):
    return _Parts(s).rep("dim", dim).done("SH")


def _tensor_type(t):
    return _Parts(t).opt("elem_type", num).opt("shape", shape).done("TT")


def _elem_type(t):
    return _Parts(t).opt("elem_type", type_proto).done("TE")


def _map_type(t):
    return _Parts(t).opt("key_type", num).opt("value_type", type_proto).done("TM")


def _opaque_type(t):
    return _Parts(t).opt("domain", q).opt("name", q).done("TO")


def type_proto(t):
    return (
        _Parts(t)
        .oneof(
            "value",
            {
                "tensor_type": _tensor_type,
                "sequence_type": _elem_type,
                "map_type": _map_type,
                "opaque_type": _opaque_type,
                "sparse_tensor_type": _tensor_type,
                "optional_type": _elem_type,
            },
        )
        .opt("denotation", q)
        .done("TY")
    )


def value_info(v):
    return (
        _Parts(v)
        .opt("name", q)
        .opt("type", type_proto)
        .opt("doc_string", sq)
        .rep("metadata_props", kv)
        .done("V")
    )


def attribute(a):
    return (
        _Parts(a)
        .opt("name", q)
        .opt("f", f32)
        .opt("i", num)
        .opt("s", bq)
        .opt("t", tensor)
        .opt("g", graph)
        .packed("floats", "f")
        .rep("ints", num)
        .rep("strings", bq)
        .rep("tensors", tensor)
        .rep("graphs", graph)
        .opt("doc_string", sq)
        .opt("tp", type_proto)
        .rep("type_protos", type_proto)
        .opt("type", num)
        .opt("ref_attr_name", q)
        .opt("sparse_tensor", sparse)
        .rep("sparse_tensors", sparse)
        .done("A")
    )


def _int_int_list(e):
    return _Parts(e).opt("key", num).rep("value", num).done("IIL")


def _simple_sharded_dim(s):
    return (
        _Parts(s)
        .oneof("dim", {"dim_value": num, "dim_param": q})
        .opt("num_shards", num)
        .done("SSD")
    )


def _sharded_dim(s):
    return _Parts(s).opt("axis", num).rep("simple_sharding", _simple_sharded_dim).done("SD")


def _sharding_spec(s):
    return (
        _Parts(s)
        .opt("tensor_name", q)
        .rep("device", num)
        .rep("index_to_device_group_map", _int_int_list)
        .rep("sharded_dim", _sharded_dim)
        .done("SS")
    )


def _node_device_configuration(c):
    return (
        _Parts(c)
        .opt("configuration_id", q)
        .rep("sharding_spec", _sharding_spec)
        .opt("pipeline_stage", num)
        .done("NDC")
    )


def node(n):
    return (
        _Parts(n)
        .rep("input", q)
        .rep("output", q)
        .opt("name", q)
        .opt("op_type", q)
        .rep("attribute", attribute)
        .opt("doc_string", sq)
        .opt("domain", q)
        .opt("overload", q)
        .rep("metadata_props", kv)
        .rep("device_configurations", _node_device_configuration)
        .done("N")
    )


def _tensor_annotation(a):
    return (
        _Parts(a).opt("tensor_name", q).rep("quant_parameter_tensor_names", kv).done("TA")
    )


def graph(g):
    return (
        _Parts(g)
        .rep("node", node)
        .opt("name", q)
        .rep("initializer", tensor)
        .opt("doc_string", sq)
        .rep("input", value_info)
        .rep("output", value_info)
        .rep("value_info", value_info)
        .rep("quantization_annotation", _tensor_annotation)
        .rep("sparse_initializer", sparse)
        .rep("metadata_props", kv)
        .done("G")
    )


def _opset(o):
    return _Parts(o).opt("domain", q).opt("version", num).done("OS")


def _training_info(t):
    return (
        _Parts(t)
        .opt("initialization", graph)
        .opt("algorithm", graph)
        .rep("initialization_binding", kv)
        .rep("update_binding", kv)
        .done("TI")
    )


def function(f):
    return (
        _Parts(f)
        .opt("name", q)
        .rep("input", q)
        .rep("output", q)
        .rep("attribute", q)
        .rep("node", node)
        .opt("doc_string", sq)
        .rep("opset_import", _opset)
        .opt("domain", q)
        .rep("attribute_proto", attribute)
        .rep("value_info", value_info)
        .opt("overload", q)
        .rep("metadata_props", kv)
        .done("F")
    )


def _device_configuration(c):
    return (
        _Parts(c).opt("name", q).opt("num_devices", num).rep("device", q).done("DC")
    )


def model(m):
    return (
        _Parts(m)
        .opt("ir_version", num)
        .opt("producer_name", q)
        .opt("producer_version", q)
        .opt("domain", q)
        .opt("model_version", num)
        .opt("doc_string", sq)
        .opt("graph", graph)
        .rep("opset_import", _opset)
        .rep("metadata_props", kv)
        .rep("training_info", _training_info)
        .rep("functions", function)
        .rep("configuration", _device_configuration)
        .done("M")
    )


def sequence(s):
    return (
        _Parts(s)
        .opt("name", q)
        .opt("elem_type", num)
        .rep("tensor_values", tensor)
        .rep("sparse_tensor_values", sparse)
        .rep("sequence_values", sequence)
        .rep("map_values", map_proto)
        .rep("optional_values", optional)
        .done("SEQ")
    )


def map_proto(m):
    return (
        _Parts(m)
        .opt("name", q)
        .opt("key_type", num)
        .rep("keys", num)
        .rep("string_keys", bq)
        .opt("values", sequence)
        .done("MAP")
    )


def optional(o):
    return (
        _Parts(o)
        .opt("name", q)
        .opt("elem_type", num)
        .opt("tensor_value", tensor)
        .opt("sparse_tensor_value", sparse)
        .opt("sequence_value", sequence)
        .opt("map_value", map_proto)
        .opt("optional_value", optional)
        .done("OPT")
    )
