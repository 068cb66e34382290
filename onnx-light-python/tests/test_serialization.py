"""The formats of `load` / `save` (`serialization`): protobuf's text format and JSON
mapping written and read exactly as protobuf's Python runtime does, the choice of the
format by argument and by file extension, and the message methods and `str()` /
`repr()` that follow protobuf's upb runtime."""

import io
import math
import os
import random
import struct
import warnings

import onnx as reference
import pytest
from google.protobuf import json_format, message as pb_message, text_format
from google.protobuf.descriptor import FieldDescriptor as FD

import onnx_light.onnx as ol
from onnx_light.onnx import serialization

from conftest import build_reference_model


def ours(ref):
    """The reference message as onnx_light's message of the same type."""
    return ol._native.decode_message(ref.DESCRIPTOR.full_name, ref.SerializeToString())


# --- random messages of every ONNX type, filled through protobuf's descriptors -------

SPECIAL_FLOATS = [0.0, -0.0, 1.0, 0.1, 1e-7, 3.4e38, math.inf, -math.inf, math.nan, 16777216.0]
SPECIAL_DOUBLES = [0.0, -0.0, 1e16, 1e15, 1e-5, 1e-4, 5e-324, math.inf, math.nan, 1e22,
                   1604931570505250.2, 123456789012345678.0]
CHARS = ["a", " ", '"', "'", "\\", "\n", "\t", "\r", "\x00", "\x01", "\x7f", "\u00e9",
         "\u20ac", "\U0001f600", "#", "{", ":", "\u2028", "\x85"]


def random_message(rng, cls, depth=0):
    msg = cls()
    for f in msg.DESCRIPTOR.fields:
        if rng.random() < 0.5:
            continue
        if f.containing_oneof is not None and msg.WhichOneof(f.containing_oneof.name):
            continue
        repeated = f.is_repeated
        for _ in range(rng.randint(1, 3) if repeated else 1):
            if f.type == FD.TYPE_MESSAGE:
                if depth > 2:
                    break
                sub = random_message(rng, f.message_type._concrete_class, depth + 1)
                if repeated:
                    getattr(msg, f.name).add().CopyFrom(sub)
                else:
                    getattr(msg, f.name).CopyFrom(sub)
                continue
            t = f.type
            if t == FD.TYPE_FLOAT:
                v = rng.choice(SPECIAL_FLOATS) if rng.random() < 0.4 else struct.unpack(
                    "<f", struct.pack("<I", rng.getrandbits(32)))[0]
            elif t == FD.TYPE_DOUBLE:
                v = rng.choice(SPECIAL_DOUBLES) if rng.random() < 0.4 else struct.unpack(
                    "<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            elif t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
                v = rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**63), 2**63 - 1)])
            elif t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
                v = rng.choice([0, -1, 2**31 - 1, -(2**31), rng.randint(-(2**31), 2**31 - 1)])
            elif t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
                v = rng.choice([0, 2**64 - 1, rng.randint(0, 2**64 - 1)])
            elif t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
                v = rng.randint(0, 2**32 - 1)
            elif t == FD.TYPE_BOOL:
                v = rng.random() < 0.5
            elif t == FD.TYPE_STRING:
                v = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 6)))
            elif t == FD.TYPE_BYTES:
                v = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 8)))
            else:
                v = rng.choice(f.enum_type.values).number
            if repeated:
                getattr(msg, f.name).append(v)
            else:
                setattr(msg, f.name, v)
    return msg


TYPES = [reference.ModelProto, reference.TensorProto, reference.AttributeProto,
         reference.TypeProto, reference.FunctionProto, reference.SparseTensorProto,
         reference.NodeProto, reference.GraphProto]


@pytest.mark.parametrize("seed", range(4))
def test_text_json_and_str_are_protobufs_on_random_messages(seed):
    rng = random.Random(seed)
    for _ in range(60):
        ref = random_message(rng, rng.choice(TYPES))
        name = ref.DESCRIPTOR.full_name
        got = ours(ref)
        text = text_format.MessageToString(ref)
        js = json_format.MessageToJson(ref, preserving_proto_field_name=True)
        assert ol._native.message_to_text(got, "textproto") == text
        assert ol._native.message_to_text(got, "json") == js
        assert str(got) == str(ref)
        # protobuf's text read back gives what protobuf reads from it.
        for fmt, parse, source in (("textproto", text_format.Parse, text),
                                   ("json", json_format.Parse, js)):
            back = ol._native.message_from_text(name, source, fmt)
            assert back.SerializeToString() == parse(source, type(ref)()).SerializeToString()


def test_a_real_model_prints_as_protobuf_and_reads_back():
    ref = build_reference_model(num_nodes=2, weight_elems=128)
    model = ours(ref)
    text = serialization.registry.get("textproto").serialize_proto(model)
    assert text == text_format.MessageToString(ref).encode()
    js = serialization.registry.get("json").serialize_proto(model)
    assert js == json_format.MessageToJson(ref, preserving_proto_field_name=True).encode()
    for fmt, data in (("textproto", text), ("json", js)):
        assert ol.load_model_from_string(data, format=fmt) == model
        assert ol.load_model_from_string(data.decode(), format=fmt) == model


# --- the format by argument and by extension -----------------------------------------


@pytest.mark.parametrize(
    ("ext", "fmt"),
    [(".onnx", "protobuf"), (".pb", "protobuf"), (".textproto", "textproto"),
     (".prototxt", "textproto"), (".txtpb", "textproto"), (".pbtxt", "textproto"),
     (".json", "json"), (".onnxjson", "json"), (".onnxtxt", "onnxtxt"),
     (".onnxtext", "onnxtxt"), (".bin", "protobuf"), ("", "protobuf")],
)
def test_the_extension_chooses_the_format_as_in_onnx(tmp_path, ext, fmt):
    assert serialization.registry.get_format_from_file_extension(ext) == (
        reference.serialization.registry.get_format_from_file_extension(ext))
    model = ours(build_reference_model(num_nodes=1, weight_elems=64))
    path = tmp_path / ("m" + ext)
    ol.save(model, path)
    written = path.read_bytes()
    want = reference.serialization.registry.get(fmt).serialize_proto(
        reference.load_model_from_string(model.SerializeToString()))
    assert written == want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnxtxt reads with an "experimental" warning
        back = ol.load(path)
        assert back == (model if fmt != "onnxtxt" else reference_parse_as_ours(written))
        # and onnx reads what we wrote
        assert reference.load(str(path)).SerializeToString() == back.SerializeToString()


def reference_parse_as_ours(text):
    return ours(reference.parser.parse_model(text.decode()))


def test_format_argument_wins_over_the_extension(tmp_path):
    # Binary bytes that are UTF-8, so that they reach the text parser (others raise
    # UnicodeDecodeError, as with onnx).
    model = ol.ModelProto(ir_version=3, producer_name="x")
    path = tmp_path / "m.textproto"
    ol.save(model, path, format="protobuf")
    assert ol.load(path, format="protobuf") == model
    with pytest.raises(text_format.ParseError) as e:
        ol.load(path)
    assert isinstance(e.value, ol.TextProtoParseError) and isinstance(e.value, ValueError)
    assert e.value.GetLine() >= 1
    raw = tmp_path / "m"
    ol.save(model, raw, format="json")
    with pytest.raises(pb_message.DecodeError):
        ol.load(raw)
    assert ol.load(raw, format="json") == model


def test_file_objects_and_tensors_in_every_format(tmp_path):
    tensor = ol.helper.make_tensor("t", ol.TensorProto.FLOAT, [2, 3], [x + 0.5 for x in range(6)])
    for fmt in ("protobuf", "textproto", "json"):
        buf = io.BytesIO()
        ol.save_tensor(tensor, buf, format=fmt)
        assert ol.load_tensor(io.BytesIO(buf.getvalue()), format=fmt) == tensor
        assert ol.load_tensor_from_string(buf.getvalue(), format=fmt) == tensor
        ref = reference.load_tensor_from_string(buf.getvalue(), format=fmt)
        assert ref.SerializeToString() == tensor.SerializeToString()
    path = tmp_path / "t.json"
    ol.save_tensor(tensor, path)
    assert path.read_text().startswith("{\n  \"dims\": [\n    \"2\",")
    assert ol.load_tensor(path) == tensor


def test_binary_only_options_with_a_text_format_are_refused(tmp_path):
    path = tmp_path / "m.json"
    ol.save(ours(build_reference_model(num_nodes=1, weight_elems=64)), path)
    for option in ({"no_copy": True}, {"structure_only": True}, {"max_memory": None},
                   {"options": ol.ParseOptions()}):
        with pytest.raises(ol.OptionError, match=list(option)[0]):
            ol.load(path, **option)
    with pytest.raises(ol.OptionError, match="num_threads"):
        ol.load_model_from_string(path.read_bytes(), format="json", num_threads=2)


def test_external_data_with_a_text_format(tmp_path):
    model = ours(build_reference_model(num_nodes=2, weight_elems=1024))
    path = tmp_path / "m.textproto"
    ol.save(model, path, save_as_external_data=True, size_threshold=1024)
    text = path.read_text()
    assert "data_location: EXTERNAL" in text and '"m.textproto.data"' in text
    assert (tmp_path / "m.textproto.data").exists()
    loaded = ol.load(path)
    assert list(loaded.graph.node) == list(model.graph.node)
    for mine, back in zip(model.graph.initializer, loaded.graph.initializer):
        # As after onnx.load: the weights inline, external_data gone.
        assert back.raw_data == mine.raw_data and back.name == mine.name
        assert back.data_location == ol.TensorProto.DEFAULT
        assert len(back.external_data) == 0
    # onnx reads the same weights back
    ref = reference.load(str(path))
    for mine, theirs in zip(model.graph.initializer, ref.graph.initializer):
        assert mine.raw_data == theirs.raw_data and mine.name == theirs.name


def test_tensors_marked_external_go_to_their_file_in_a_text_format_too(tmp_path):
    model = ours(build_reference_model(num_nodes=2, weight_elems=1024))
    ol.convert_model_to_external_data(model, location="w.data", size_threshold=1024)
    ol.save(model, tmp_path / "m.json")
    assert (tmp_path / "w.data").exists()
    text = (tmp_path / "m.json").read_text()
    assert text.count('"EXTERNAL"') == 2 and '"raw_data"' in text  # the small tensor
    assert [t.raw_data for t in ol.load(tmp_path / "m.json").graph.initializer] == [
        t.raw_data for t in ours(build_reference_model(num_nodes=2, weight_elems=1024)).graph.initializer
    ]


def test_unknown_formats_and_custom_serializers():
    with pytest.raises(ValueError, match="Unsupported format"):
        serialization.registry.get("nope")
    with pytest.raises(ValueError):
        ol.load_model_from_string(b"", format="nope")

    class Upper:
        supported_format = "upper-json"
        file_extensions = frozenset({".ujson"})

        def serialize_proto(self, proto):
            return serialization.registry.get("json").serialize_proto(proto).upper()

        def deserialize_proto(self, serialized, proto):
            raise NotImplementedError

    s = Upper()
    serialization.registry.register(s)
    assert serialization.registry.get("upper-json") is s
    assert serialization.registry.get_format_from_file_extension(".ujson") == "upper-json"
    buf = io.BytesIO()
    ol.save(ol.ModelProto(ir_version=3), buf, format="upper-json")
    assert buf.getvalue() == b'{\n  "IR_VERSION": "3"\n}'


def test_parse_errors_name_the_place():
    with pytest.raises(text_format.ParseError, match=r'^2:1 : Message type "onnx.ModelProto" has no field named "bogus"'):
        ol.load_model_from_string("ir_version: 3\nbogus: 1", format="textproto")
    with pytest.raises(json_format.ParseError, match=r"ir_version.*out of range") as e:
        ol.load_model_from_string('{"ir_version": "99999999999999999999"}', format="json")
    assert (e.value.GetLine(), e.value.GetColumn()) == (1, 16)
    with pytest.raises(ol.JsonParseError, match="no field named"):
        ol.load_model_from_string('{"graph": {"nope": 1}}', format="json")


def test_onnxtxt_reads_with_onnx_warning():
    model = ol.parser.parse_model("<ir_version: 8, opset_import: [\"\" : 17]> g (float x) => (float y) { y = Relu(x) }")
    data = serialization.registry.get("onnxtxt").serialize_proto(model)
    with pytest.warns(UserWarning, match="experimental"):
        back = ol.load_model_from_string(data, format="onnxtxt")
    assert back == model


# --- str(), repr() and message methods -------------------------------------------------


def test_repr_of_models_graphs_and_functions_is_onnx_summary():
    ref = build_reference_model(num_nodes=2, weight_elems=64)
    ref.functions.add(name="f", domain="d", input=["a"], attribute=["alpha"]).opset_import.add(version=1)
    model = ours(ref)
    assert repr(model) == repr(ref)
    assert repr(model.graph) == repr(ref.graph)
    assert repr(model.functions[0]) == repr(ref.functions[0])
    assert repr(ol.ModelProto()) == repr(reference.ModelProto())
    # str() stays the text format; other messages' repr() too
    assert str(model) == str(ref)
    assert repr(model.graph.node[0]) == repr(ref.graph.node[0])


def test_message_methods_follow_upb():
    data = b"\x08\x07\xa0\x06\x05\x3a\x06\x12\x01g\xa0\x06\x01"  # unknown field 100 twice
    model = ol.load_model_from_string(data)
    ref = reference.load_model_from_string(data)
    graph = model.graph
    assert model.DiscardUnknownFields() is None
    ref.DiscardUnknownFields()
    assert model.SerializeToString() == ref.SerializeToString() == b"\x08\x07\x3a\x03\x12\x01g"
    graph.name = "h"  # the view taken before still writes into the model
    assert model.graph.name == "h"

    m = ol.ModelProto()
    assert not m.HasField("graph")
    m.graph.SetInParent()
    assert m.HasField("graph") and m.SerializeToString() == b"\x3a\x00"
    ol.ModelProto().SetInParent()
    assert m.FindInitializationErrors() == [] and m.IsInitialized()
    with pytest.raises(NotImplementedError):
        m.UnknownFields()
