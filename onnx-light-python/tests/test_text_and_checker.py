"""`checker`, `printer` and `parser`: the same verdicts, text and bytes as `onnx`'s."""

import onnx
import onnx.checker
import onnx.parser
import onnx.printer
import pytest
from onnx import helper

import onnx_light.onnx as ol
from onnx_light.onnx import checker, parser, printer

TEXT = """
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N, 128] X, float[128, 10] W, float[10] B) => (float[N, 10] C) {
    T = MatMul(X, W)
    S = Add(T, B)
    C = Softmax <axis = -1> (S)
}
"""


def test_check_model_accepts_what_onnx_accepts(tmp_path, ref_bytes):
    onnx.checker.check_model(onnx.load_model_from_string(ref_bytes))
    checker.check_model(ol.load_from_string(ref_bytes))
    checker.check_model(ref_bytes)
    p = tmp_path / "m.onnx"
    p.write_bytes(ref_bytes)
    checker.check_model(str(p))
    checker.check_model(p)


def _broken(mod):
    """Two problems: an operator that does not exist, and an input nothing defines."""
    m = mod.ModelProto()
    m.ParseFromString(onnx.parser.parse_model(TEXT).SerializeToString())
    m.graph.node[0].op_type = "NoSuchOp"
    m.graph.node[1].input[0] = "undefined"
    return m


def test_check_model_rejects_what_onnx_rejects_and_lists_every_problem():
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(_broken(onnx))
    with pytest.raises(checker.ValidationError) as e:
        checker.check_model(_broken(ol))
    message = str(e.value)
    assert "NoSuchOp" in message and "undefined" in message
    assert "graph.node[0]" in message and "graph.node[1]" in message
    assert isinstance(e.value, ol.Error) and isinstance(e.value, ValueError)


def test_check_model_lists_a_hundred_problems_of_a_kind_and_counts_the_rest():
    m = ol.load_from_string(onnx.parser.parse_model(TEXT).SerializeToString())
    for _ in range(1000):
        entry = m.metadata_props.add()
        entry.key = "k"
    with pytest.raises(checker.ValidationError) as e:
        checker.check_model(m)
    lines = str(e.value).split("\n")
    # The first problem first, as onnx.checker reports it; 100 of the 999 repeats.
    assert lines[0] == 'model.metadata_props[1] "k": the key appears more than once'
    assert len(lines) == 101
    assert lines[99] == 'model.metadata_props[100] "k": the key appears more than once'
    assert lines[100] == "... and 899 more of this kind"


def test_check_model_options_and_full_check():
    m = ol.load_from_string(onnx.parser.parse_model(TEXT).SerializeToString())
    checker.check_model(m, skip_opset_compatibility_check=True, check_custom_domain=True)
    checker.check_model(m, full_check=True)
    with pytest.raises(TypeError):
        checker.check_model(ol.GraphProto())


def test_printer_prints_what_onnx_prints(ref_bytes):
    ref = onnx.load_model_from_string(ref_bytes)
    ours = ol.load_from_string(ref_bytes)
    assert printer.to_text(ours) == onnx.printer.to_text(ref)
    assert printer.to_text(ours.graph) == onnx.printer.to_text(ref.graph)
    assert printer.to_text(ours.graph.node[4]) == onnx.printer.to_text(ref.graph.node[4])
    f = helper.make_function("local", "f", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
                             [helper.make_opsetid("", 17)])
    assert printer.to_text(ol.FunctionProto.FromString(f.SerializeToString())) == onnx.printer.to_text(f)
    with pytest.raises(TypeError):
        printer.to_text(ol.TensorProto())


def test_parser_gives_onnx_parsers_bytes():
    assert (
        parser.parse_model(TEXT).SerializeToString()
        == onnx.parser.parse_model(TEXT).SerializeToString()
    )
    graph = TEXT[TEXT.index(">\n") + 2 :]
    assert (
        parser.parse_graph(graph).SerializeToString()
        == onnx.parser.parse_graph(graph).SerializeToString()
    )
    node = "C = Softmax <axis = -1> (S)"
    assert parser.parse_node(node).SerializeToString() == onnx.parser.parse_node(node).SerializeToString()
    m = parser.parse_model(TEXT)
    assert printer.to_text(parser.parse_model(printer.to_text(m))) == printer.to_text(m)


def test_parse_errors_name_line_and_column():
    with pytest.raises(parser.ParseError) as e:
        parser.parse_model(TEXT.replace("Add(T, B)", "Add(T, B"))
    assert "line" in str(e.value)
    assert isinstance(e.value, ol.Error) and isinstance(e.value, ValueError)


def test_top_level_external_data_functions_are_onnx_names():
    for name in ("convert_model_to_external_data", "load_external_data_for_model", "write_external_data_tensors"):
        assert callable(getattr(ol, name)) and callable(getattr(onnx, name))
