"""onnx_light.onnx.defs against the official onnx.defs: every schema of every version and
domain, the lookups at each version boundary, and the errors."""

import onnx
import onnx.defs as ref
import pytest
from onnx import TensorProto, helper

import onnx_light.onnx as ol
from onnx_light.onnx import defs


def key(s):
    return (s.domain, s.name, s.since_version)


@pytest.fixture(scope="module")
def pairs():
    ours = {key(s): s for s in defs.get_all_schemas_with_history()}
    theirs = {key(s): s for s in ref.get_all_schemas_with_history()}
    assert ours.keys() == theirs.keys()
    return [(ours[k], theirs[k]) for k in sorted(theirs)]


def formal(p):
    return (
        p.name,
        p.type_str,
        int(p.option),
        p.option.name,
        p.is_homogeneous,
        p.min_arity,
        int(p.differentiation_category),
        p.types,
    )


def describe(s):
    """Everything a schema says that both packages store, in comparable form."""
    return {
        "name": s.name,
        "domain": s.domain,
        "since_version": s.since_version,
        "deprecated": s.deprecated,
        "counts": (s.min_input, s.max_input, s.min_output, s.max_output),
        "inputs": [formal(p) for p in s.inputs],
        "outputs": [formal(p) for p in s.outputs],
        "attributes": sorted(
            (
                name,
                a.name,
                int(a.type),
                a.type.name,
                a.required,
                a.default_value.SerializeToString(),
            )
            for name, a in s.attributes.items()
        ),
        "type_constraints": [(t.type_param_str, list(t.allowed_type_strs)) for t in s.type_constraints],
        "has_function": s.has_function,
        "function_opset_versions": list(s.function_opset_versions),
        "function_body": s.function_body.SerializeToString(),
        "has_context_dependent_function": s.has_context_dependent_function,
        "context_dependent_function_opset_versions": list(
            s.context_dependent_function_opset_versions
        ),
        "all_function_opset_versions": list(s.all_function_opset_versions),
        "inference": s.has_type_and_shape_inference_function,
    }


def test_every_schema_of_every_version_matches_onnx(pairs):
    assert len(pairs) == len(ref.get_all_schemas_with_history())
    assert {s.domain for s, _ in pairs} >= {
        defs.ONNX_DOMAIN,
        defs.ONNX_ML_DOMAIN,
        defs.AI_ONNX_PREVIEW_DOMAIN,
        defs.AI_ONNX_PREVIEW_TRAINING_DOMAIN,
    }
    wrong = []
    for ours, theirs in pairs:
        a, b = describe(ours), describe(theirs)
        for field in b:
            if a[field] != b[field]:
                wrong.append((key(theirs), field, a[field], b[field]))
    assert not wrong, f"{len(wrong)} differences, first: {wrong[:3]}"


def test_function_bodies_by_opset_version_match_onnx(pairs):
    checked = 0
    for ours, theirs in pairs:
        versions = set(theirs.function_opset_versions)
        for v in versions | {v - 1 for v in versions} | {v + 1 for v in versions} | {0, 100}:
            got = ours.get_function_with_opset_version(v)
            assert isinstance(got, bytes)
            assert got == theirs.get_function_with_opset_version(v), (key(theirs), v)
            checked += 1
    assert checked > 100


def test_latest_schemas_and_function_ops_match_onnx():
    assert sorted(key(s) for s in defs.get_all_schemas()) == sorted(
        key(s) for s in ref.get_all_schemas()
    )
    assert sorted(key(s) for s in defs.get_function_ops()) == sorted(
        key(s) for s in ref.get_function_ops()
    )
    assert defs.onnx_opset_version() == ref.onnx_opset_version()
    assert defs.onnx_ml_opset_version() == ref.onnx_ml_opset_version()


def outcome(module, *args, **kwargs):
    """What get_schema and has give for these arguments, in comparable form."""
    try:
        found = key(module.get_schema(*args, **kwargs))
    except module.SchemaError as e:
        found = ("SchemaError", str(e))
    return found, module.has(*args, **kwargs)


def test_lookups_at_every_version_boundary_match_onnx():
    versions = {}
    for s in ref.get_all_schemas_with_history():
        versions.setdefault((s.domain, s.name), []).append(s.since_version)
    calls = 0
    for (domain, name), vs in versions.items():
        probes = {0, -1, max(vs) + 1, 10_000}
        for v in vs:
            probes |= {v - 1, v, v + 1}
        for v in sorted(probes):
            assert outcome(defs, name, v, domain) == outcome(ref, name, v, domain), (domain, name, v)
            assert outcome(defs, name, max_inclusive_version=v, domain=domain) == outcome(
                ref, name, max_inclusive_version=v, domain=domain
            )
            calls += 1
        assert outcome(defs, name, domain=domain) == outcome(ref, name, domain=domain)
        assert outcome(defs, name, domain) == outcome(ref, name, domain)
        if domain == "":
            assert outcome(defs, name) == outcome(ref, name)
            # "ai.onnx" is not folded into "": onnx.defs finds nothing there.
            assert outcome(defs, name, "ai.onnx") == outcome(ref, name, "ai.onnx")
            assert outcome(defs, name, vs[-1], "ai.onnx") == outcome(ref, name, vs[-1], "ai.onnx")
            assert outcome(defs, name, vs[-1], "ai.onnx.ml") == outcome(ref, name, vs[-1], "ai.onnx.ml")
    assert calls > 2000


def test_unknown_operators_raise_schema_error_with_onnx_message():
    for args in [("NoSuchOp",), ("NoSuchOp", 13), ("Relu", "ai.onnx.ml"), ("Relu", 5, "nowhere")]:
        with pytest.raises(defs.SchemaError) as ours:
            defs.get_schema(*args)
        with pytest.raises(ref.SchemaError) as theirs:
            ref.get_schema(*args)
        assert str(ours.value) == str(theirs.value)
        assert defs.has(*args) is False
    assert issubclass(defs.SchemaError, Exception)


@pytest.mark.parametrize(
    "args", [(None,), ("Relu", None), (1,), ("Relu", 1.5), ("Relu", 5, 3), ("Relu", 2**31), ("Relu", -(2**31) - 1)]
)
def test_wrong_argument_types_raise_type_error(args):
    with pytest.raises(TypeError):
        ref.get_schema(*args)
    with pytest.raises(TypeError):
        defs.get_schema(*args)
    with pytest.raises(TypeError):
        defs.has(*args)


def test_versions_are_c_ints_as_in_onnx():
    assert outcome(defs, "Relu", True) == outcome(ref, "Relu", True)
    assert outcome(defs, "Relu", 2**31 - 1) == outcome(ref, "Relu", 2**31 - 1)
    assert outcome(defs, "Relu", -(2**31)) == outcome(ref, "Relu", -(2**31))
    selu, selu_ref = defs.get_schema("Selu"), ref.get_schema("Selu")
    assert selu.get_function_with_opset_version(True) == selu_ref.get_function_with_opset_version(True)
    with pytest.raises(TypeError):
        selu.get_function_with_opset_version(2**31)


def test_enums_match_onnx():
    for name in ("FormalParameterOption", "DifferentiationCategory", "AttrType"):
        ours, theirs = getattr(defs.OpSchema, name), getattr(ref.OpSchema, name)
        assert [(m.name, int(m.value)) for m in ours] == [(m.name, int(m.value)) for m in theirs]
        assert repr(list(ours)) == repr(list(theirs))
    assert defs.OpSchema.AttrType.INT == onnx.AttributeProto.INT == ol.AttributeProto.INT
    clip = defs.get_schema("Clip", 13)
    assert clip.inputs[1].option == defs.OpSchema.FormalParameterOption.Optional


def test_parts_are_this_packages_messages_and_not_stored():
    selu = defs.get_schema("Selu")
    alpha = selu.attributes["alpha"]
    assert isinstance(alpha.default_value, ol.AttributeProto)
    assert isinstance(selu.function_body, ol.FunctionProto)
    assert isinstance(defs.get_schema("Relu", 6).function_body, ol.FunctionProto)
    assert defs.get_schema("Relu", 6).function_body.SerializeToString() == b""
    # Changing a returned default changes no schema.
    alpha.default_value.f = 5.0
    changed = selu.attributes["alpha"].default_value
    changed.f = 7.0
    assert selu.attributes["alpha"].default_value.f == pytest.approx(1.67326319)
    assert defs.get_schema("Selu").attributes["alpha"].default_value.f == pytest.approx(1.67326319)
    # Returned lists are copies too.
    selu.inputs.clear()
    assert len(selu.inputs) == 1
    # What is not embedded reads as empty, never as something made up.
    assert selu.doc == "" and selu.file == "" and selu.line == 0
    assert alpha.description == "" and selu.inputs[0].description == ""
    assert selu.type_constraints[0].description == ""


def test_repr_has_onnx_shape():
    schema = defs.get_schema("Relu", 14)
    text = repr(schema)
    assert text.startswith("OpSchema(\n    name='Relu',\n    domain='',\n    since_version=14,")
    assert "OpSchema.FormalParameter(name='X', type_str='T', description=''" in text
    assert "param_option=FormalParameterOption.Single" in text


def test_imports():
    import onnx_light.onnx.defs as by_path

    assert by_path is ol.defs is defs
    assert "defs" in ol.__all__


@pytest.mark.parametrize(
    "op_type, version, inputs, attrs",
    [
        ("Relu", 14, [[2, 3]], {}),
        ("Add", 14, [[2, 1], [1, 4]], {}),
        ("Transpose", 21, [[2, 3, 5]], {"perm": [2, 0, 1]}),
    ],
)
def test_infer_node_outputs_takes_our_schemas(op_type, version, inputs, attrs):
    names = [f"x{i}" for i in range(len(inputs))]
    types = {
        n: helper.make_tensor_type_proto(TensorProto.FLOAT, shape) for n, shape in zip(names, inputs)
    }
    node = helper.make_node(op_type, names, ["y"], **attrs)
    expected = onnx.shape_inference.infer_node_outputs(ref.get_schema(op_type, version), node, types)
    ours = ol.shape_inference.infer_node_outputs(
        defs.get_schema(op_type, version), ol.NodeProto.FromString(node.SerializeToString()), types
    )
    assert {k: v.SerializeToString() for k, v in ours.items()} == {
        k: v.SerializeToString() for k, v in expected.items()
    }


def test_node_determinism_and_support_level_are_onnx_for_every_schema(pairs):
    for ours, theirs in pairs:
        assert ours.node_determinism.name == theirs.node_determinism.name, key(theirs)
        assert ours.non_deterministic == theirs.non_deterministic
        assert repr(ours.support_level) == repr(theirs.support_level), key(theirs)
        assert ours.has_data_propagation_function == theirs.has_data_propagation_function
    assert repr(defs.OpSchema.NodeDeterminism.Deterministic) == "NodeDeterminism.Deterministic"


def made(module, version=3, domain="test.made", **kw):
    O = module.OpSchema
    return O(
        "MadeOp",
        domain,
        version,
        "what it does",
        inputs=[
            O.FormalParameter("x", "T", "the input"),
            O.FormalParameter("y", "int32", param_option=O.FormalParameterOption.Optional),
        ],
        outputs=[O.FormalParameter("z", "T")],
        type_constraints=[("T", ["tensor(float)", "tensor(int64)"], "numbers")],
        attributes=[
            O.Attribute("ints", O.AttrType.INTS, "some ints"),
            O.Attribute("eps", module.get_schema("BatchNormalization").attributes["epsilon"].default_value),
        ],
        **kw,
    )


def test_a_made_schema_reads_as_onnx_makes_it():
    ours, theirs = made(defs), made(ref)
    assert repr(ours) == repr(theirs)
    for attr in ("name", "domain", "since_version", "doc", "min_input", "max_input",
                 "min_output", "max_output", "has_type_and_shape_inference_function",
                 "has_function", "deprecated", "has_data_propagation_function"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.node_determinism.name == theirs.node_determinism.name
    assert [p.types for p in ours.inputs] == [p.types for p in theirs.inputs]
    assert ours.attributes["eps"].required is False and ours.attributes["ints"].required is True
    assert defs.OpSchema("A", "d", 1).doc is None and ref.OpSchema("A", "d", 1).doc is None


def test_made_schemas_refuse_what_onnx_refuses():
    O = defs.OpSchema
    with pytest.raises(TypeError):
        O(123, "d", 1)
    with pytest.raises(TypeError):
        O("A", "d")
    with pytest.raises(ValueError, match="invalid data type string 'T'"):
        O("A", "d", 1, inputs=[O.FormalParameter("x", "T")])
    variadic = O.FormalParameter("x", "T", param_option=O.FormalParameterOption.Variadic)
    with pytest.raises(RuntimeError):
        O("A", "d", 1, inputs=[variadic, O.FormalParameter("y", "T")],
          type_constraints=[("T", ["tensor(float)"], "")])


@pytest.fixture
def registered():
    """Registers made schemas of versions 1, 3 and 5 and removes them afterwards."""
    versions = set()

    def register(version, **kw):
        defs.register_schema(made(defs, version, **kw))
        versions.add(version)

    yield register
    for v in versions:
        defs.deregister_schema("MadeOp", v, "test.made")


def test_registered_schemas_are_looked_up_by_version(registered):
    assert not defs.has("MadeOp", "test.made")
    for v in (1, 3, 5):
        registered(v)
    assert defs.get_schema("MadeOp", 4, "test.made").since_version == 3
    assert defs.get_schema("MadeOp", "test.made").since_version == 5
    assert not defs.has("MadeOp", 0, "test.made")
    assert repr(defs.get_schema("MadeOp", 3, "test.made")) == repr(made(defs, 3))
    latest = [s for s in defs.get_all_schemas() if s.name == "MadeOp"]
    history = [s for s in defs.get_all_schemas_with_history() if s.name == "MadeOp"]
    assert [s.since_version for s in latest] == [5]
    assert [s.since_version for s in history] == [1, 3, 5]
    with pytest.raises(defs.SchemaError, match="already registered"):
        registered(3)
    defs.deregister_schema("MadeOp", 5, "test.made")
    assert defs.get_schema("MadeOp", "test.made").since_version == 3
    with pytest.raises(defs.SchemaError, match="unregistered schema"):
        defs.deregister_schema("MadeOp", 5, "test.made")
    registered(5)  # the fixture removes it again


def test_the_checker_uses_registered_schemas(registered):
    model = ol.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["test.made" : 4]>
        g (float[N] X, int32 Y) => (float[N] Z) { Z = test.made.MadeOp <ints = [1, 2]> (X, Y) }
        """
    )
    with pytest.raises(ol.checker.ValidationError):
        ol.checker.check_model(model, check_custom_domain=True)
    registered(3)
    ol.checker.check_model(model, check_custom_domain=True)
    # A missing required attribute is now a problem the schema reveals.
    del model.graph.node[0].attribute[:]
    with pytest.raises(ol.checker.ValidationError, match="ints"):
        ol.checker.check_model(model, check_custom_domain=True)


def test_built_in_schemas_can_be_deregistered_and_registered_again():
    relu = defs.get_schema("Relu", 14)
    defs.deregister_schema("Relu", 14, "")
    try:
        assert defs.get_schema("Relu", 14).since_version == 13
        with pytest.raises(defs.SchemaError):
            defs.deregister_schema("Relu", 14, "")
    finally:
        defs.register_schema(relu)
    assert defs.get_schema("Relu", 14).since_version == 14
    with pytest.raises(defs.SchemaError):
        defs.register_schema(relu)


def test_defs_exposes_the_onnx_module_as_onnx_does():
    assert defs.onnx is ol


def test_shape_inference_checks_types_against_registered_schemas(registered):
    text = """
    <ir_version: 8, opset_import: ["" : 18, "test.made" : 4]>
    g (float[N] X, int32 Y) => (float[N] Z) { T = test.made.MadeOp <ints = [1]> (X, Y) Z = Relu(T) }
    """
    registered(3)
    ref.register_schema(made(ref, 3))
    try:
        for kw in ({}, {"check_type": True}):
            ours = ol.shape_inference.infer_shapes(ol.parser.parse_model(text), **kw)
            theirs = onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text), **kw)
            assert ours.SerializeToString() == theirs.SerializeToString(), kw
        bad = ol.parser.parse_model(text.replace("int32 Y", "float Y"))
        with pytest.raises(ol.shape_inference.InferenceError, match="y typestr: int32"):
            ol.shape_inference.infer_shapes(bad, check_type=True)
    finally:
        ref.deregister_schema("MadeOp", 3, "test.made")
