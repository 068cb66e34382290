"""``onnx.defs`` on the onnx-light core: the schema of every operator of every version
in the domains ``onnx`` defines (``""``, ``ai.onnx.ml``, ``ai.onnx.preview``,
``ai.onnx.preview.training``), the ones of ``onnx`` 1.23, embedded in the library.

``get_schema`` / ``has`` look a schema up as ``onnx`` does (the latest version, or the
one with the largest ``since_version`` not above ``max_inclusive_version``; the domain
is matched as written, so ``"ai.onnx"`` finds nothing) and ``get_schema`` raises
``SchemaError`` when there is none. ``OpSchema`` has ``onnx``'s attributes, built from
the embedded data when first read, except what is not embedded: documentation strings
(``doc`` and every ``description`` are ``""``), the source location (``file`` is ``""``,
``line`` 0), and the bodies of context-dependent functions (``has_context_dependent_function``
and ``context_dependent_function_opset_versions`` are right, the bodies are not built).

``OpSchema(name, domain, since_version, ...)`` makes a schema of your own and
``register_schema`` adds it to the schemas every lookup sees (``get_schema``, ``has``,
``get_all_schemas``, ``checker.check_model``, shape inference, which leaves the outputs
of such an operator unknown as ``onnx`` does without an inference function);
``deregister_schema`` removes a registered or built-in one. A registered schema's
memory is kept until the process ends."""

from __future__ import annotations

import enum
from typing import Any, Dict, List, Optional, Sequence, Union

from .. import _onnx_light as _native

__all__ = [
    "AI_ONNX_PREVIEW_DOMAIN",
    "AI_ONNX_PREVIEW_TRAINING_DOMAIN",
    "ONNX_DOMAIN",
    "ONNX_ML_DOMAIN",
    "OpSchema",
    "SchemaError",
    "get_all_schemas",
    "get_all_schemas_with_history",
    "get_function_ops",
    "deregister_schema",
    "get_schema",
    "has",
    "register_schema",
    "onnx_ml_opset_version",
    "onnx_opset_version",
]

ONNX_DOMAIN = ""
ONNX_ML_DOMAIN = "ai.onnx.ml"
AI_ONNX_PREVIEW_DOMAIN = "ai.onnx.preview"
AI_ONNX_PREVIEW_TRAINING_DOMAIN = "ai.onnx.preview.training"


class SchemaError(Exception):
    """No schema is registered for the operator, version and domain asked for."""


class _Enum(enum.IntEnum):
    """An ``onnx.defs`` enum: a number that shows itself as ``Class.NAME``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __str__ = __repr__


# A keyword argument not passed.
_UNSET_ARG: Any = object()


class _FormalParameterOption(_Enum):
    Single = 0
    Optional = 1
    Variadic = 2


class _DifferentiationCategory(_Enum):
    Unknown = 0
    Differentiable = 1
    NonDifferentiable = 2


class _NodeDeterminism(_Enum):
    Unknown = 0
    NonDeterministic = 1
    Deterministic = 2


class _SupportType(_Enum):
    COMMON = 0
    EXPERIMENTAL = 1


class _AttrType(_Enum):
    """An attribute's type; the numbers are ``AttributeProto``'s."""

    FLOAT = 1
    INT = 2
    STRING = 3
    TENSOR = 4
    GRAPH = 5
    FLOATS = 6
    INTS = 7
    STRINGS = 8
    TENSORS = 9
    GRAPHS = 10
    SPARSE_TENSOR = 11
    SPARSE_TENSORS = 12
    TYPE_PROTO = 13
    TYPE_PROTOS = 14


# Python names the classes after their attribute names in OpSchema.
for _cls, _name in (
    (_FormalParameterOption, "FormalParameterOption"),
    (_DifferentiationCategory, "DifferentiationCategory"),
    (_NodeDeterminism, "NodeDeterminism"),
    (_SupportType, "SupportType"),
    (_AttrType, "AttrType"),
):
    _cls.__name__ = _name
    _cls.__qualname__ = "OpSchema." + _name


def _enum(cls: Any, value: int) -> Any:
    """``value`` as a member of ``cls``; a number it does not name stays a number."""
    try:
        return cls(value)
    except ValueError:
        return value


class _FormalParameter:
    """One formal input or output of an operator."""

    __slots__ = (
        "name",
        "type_str",
        "description",
        "option",
        "is_homogeneous",
        "min_arity",
        "differentiation_category",
        "_types",
    )

    def __init__(
        self,
        name: str,
        type_str: str,
        description: str = "",
        *,
        param_option: Any = _FormalParameterOption.Single,
        is_homogeneous: bool = True,
        min_arity: int = 1,
        differentiation_category: Any = _DifferentiationCategory.Unknown,
    ):
        self.name: str = _str_arg("name", name)
        self.type_str: str = _str_arg("type_str", type_str)
        self.description: str = _str_arg("description", description)
        self.option = _enum(_FormalParameterOption, _int_arg("param_option", param_option))
        self.is_homogeneous: bool = bool(is_homogeneous)
        self.min_arity: int = _int_arg("min_arity", min_arity)
        self.differentiation_category = _enum(
            _DifferentiationCategory, _int_arg("differentiation_category", differentiation_category)
        )
        # Known once the parameter is part of a schema, as in onnx.
        self._types: Sequence[str] = ()

    @classmethod
    def _from_raw(cls, raw: tuple, types: Sequence[str]) -> "_FormalParameter":
        name, type_str, option, homogeneous, min_arity, category, description = raw
        self = cls.__new__(cls)
        self.name = name
        self.type_str = type_str
        self.description = description
        self.option = _enum(_FormalParameterOption, option)
        self.is_homogeneous = homogeneous
        self.min_arity = min_arity
        self.differentiation_category = _enum(_DifferentiationCategory, category)
        self._types = types
        return self

    def _raw(self) -> tuple:
        return (
            self.name,
            self.type_str,
            self.description,
            int(self.option),
            self.is_homogeneous,
            self.min_arity,
            int(self.differentiation_category),
        )

    @property
    def types(self) -> set:
        """The types this parameter allows (its type parameter's, or the one it names),
        written as ``onnx`` writes types: ``map(int64,tensor(float))`` for the schema's
        ``map(int64, float)``."""
        return {_canonical_type(t) for t in self._types}

    def __repr__(self) -> str:
        return (
            f"OpSchema.FormalParameter(name={self.name!r}, type_str={self.type_str!r}, "
            f"description={self.description!r}, param_option={self.option!r}, "
            f"is_homogeneous={self.is_homogeneous!r}, min_arity={self.min_arity!r}, "
            f"differentiation_category={self.differentiation_category!r})"
        )


def _inner(text: str, prefix: str) -> str:
    """What ``prefix(...)`` wraps, without the parentheses and surrounding spaces."""
    return text[len(prefix) :].strip().removeprefix("(").removesuffix(")").strip()


def _canonical_type(text: str) -> str:
    """A schema's type string in the one form ``onnx`` gives a type: no spaces, and a
    bare element type (a map's value) written as ``tensor(...)``."""
    text = text.strip()
    for wrapper in ("seq", "optional"):
        if text.startswith(wrapper):
            return f"{wrapper}({_canonical_type(_inner(text, wrapper))})"
    if text.startswith("map"):
        key, _, value = _inner(text, "map").partition(",")
        return f"map({key.strip()},{_canonical_type(value)})"
    for wrapper in ("opaque", "sparse_tensor", "tensor"):
        if text.startswith(wrapper):
            return f"{wrapper}({_inner(text, wrapper)})"
    return f"tensor({text})"


class _Attribute:
    """One attribute an operator declares; ``default_value`` is an ``AttributeProto``
    (empty when the attribute has no default). Made as ``onnx`` makes one:
    ``Attribute(name, type, description="", *, required=True)`` or
    ``Attribute(name, default_value, description="")`` (not required; its type is the
    default's)."""

    __slots__ = ("name", "type", "required", "description", "_default")

    def __init__(
        self, name: str, type: Any, description: str = "", *, required: Any = _UNSET_ARG
    ):
        from . import AttributeProto, _adopt

        self.name: str = _str_arg("name", name)
        self.description: str = _str_arg("description", description)
        if isinstance(type, int):
            self.type = _enum(_AttrType, int(type))
            self.required = True if required is _UNSET_ARG else bool(required)
            self._default = AttributeProto()
            return
        default = _adopt(type)
        if not isinstance(default, AttributeProto) or required is not _UNSET_ARG:
            raise TypeError(
                "Attribute takes (name, type: OpSchema.AttrType, description='', *, "
                "required=True) or (name, default_value: AttributeProto, description='')"
            )
        self._default = AttributeProto()
        self._default.CopyFrom(default)
        self.type = _enum(_AttrType, int(default.type))
        self.required = False

    @classmethod
    def _from_raw(cls, raw: tuple) -> "_Attribute":
        name, kind, required, default, description = raw
        self = cls.__new__(cls)
        self.name = name
        self.type = _enum(_AttrType, kind)
        self.required = required
        self._default = default
        self.description = description
        return self

    def _raw(self) -> tuple:
        default = self._default if self._default.ListFields() else None
        return (self.name, int(self.type), self.description, self.required, default)

    @property
    def default_value(self) -> Any:
        """A new ``AttributeProto`` each time, as in ``onnx``: changing it changes no
        schema."""
        copy = type(self._default)()
        copy.CopyFrom(self._default)
        return copy

    def __repr__(self) -> str:
        return (
            f"OpSchema.Attribute(name={self.name!r}, type={self.type!r}, "
            f"description={self.description!r}, default_value={self.default_value!r}, "
            f"required={self.required!r})"
        )


class _TypeConstraintParam:
    """The types a type parameter (``T``) may take."""

    __slots__ = ("type_param_str", "allowed_type_strs", "description")

    def __init__(
        self, type_param_str: str, allowed_type_strs: Sequence[str], description: str = ""
    ):
        self.type_param_str: str = _str_arg("type_param_str", type_param_str)
        if isinstance(allowed_type_strs, str):
            raise TypeError("allowed_type_strs must be a sequence of str, not a str")
        self.allowed_type_strs: List[str] = [
            _str_arg("allowed_type_strs", t) for t in allowed_type_strs
        ]
        self.description: str = _str_arg("description", description)

    def __repr__(self) -> str:
        return (
            f"OpSchema.TypeConstraintParam(type_param_str={self.type_param_str!r}, "
            f"allowed_type_strs={self.allowed_type_strs!r}, description={self.description!r})"
        )


for _cls, _name in (
    (_FormalParameter, "FormalParameter"),
    (_Attribute, "Attribute"),
    (_TypeConstraintParam, "TypeConstraintParam"),
):
    _cls.__name__ = _name
    _cls.__qualname__ = "OpSchema." + _name

_UNSET: Any = object()


class OpSchema:
    """One version of one operator, as ``onnx.defs.OpSchema`` describes it. Obtained
    from ``get_schema`` and the ``get_all_schemas`` functions; each part is built from
    the embedded schema when first read."""

    FormalParameterOption = _FormalParameterOption
    DifferentiationCategory = _DifferentiationCategory
    NodeDeterminism = _NodeDeterminism
    SupportType = _SupportType
    AttrType = _AttrType
    FormalParameter = _FormalParameter
    Attribute = _Attribute
    TypeConstraintParam = _TypeConstraintParam

    __slots__ = ("_ref", "_inputs", "_outputs", "_attributes", "_constraints")

    def __init__(
        self,
        name: str,
        domain: str,
        since_version: int,
        doc: str = "",
        *,
        inputs: Sequence[_FormalParameter] = (),
        outputs: Sequence[_FormalParameter] = (),
        type_constraints: Sequence[Any] = (),
        attributes: Sequence[_Attribute] = (),
    ):
        """A schema of your own (``register_schema`` makes lookups see it).
        ``type_constraints`` holds ``(type_param_str, allowed_type_strs, description)``
        triples. Raises ``TypeError`` for arguments of the wrong type, ``ValueError``
        for a parameter whose ``type_str`` is neither a constraint's parameter nor a
        type, and ``SchemaError`` for a variadic parameter that is not the last."""
        name = _str_arg("name", name)
        domain = _str_arg("domain", domain)
        since_version = _int_arg("since_version", since_version)
        doc = _str_arg("doc", doc)
        constraints = []
        for c in type_constraints:
            if isinstance(c, _TypeConstraintParam):
                c = (c.type_param_str, c.allowed_type_strs, c.description)
            param, allowed, description = c
            checked = _TypeConstraintParam(param, allowed, description)
            constraints.append((checked.type_param_str, checked.allowed_type_strs, description))
        params = {c[0] for c in constraints}
        formals = []
        for label, group in (("inputs", inputs), ("outputs", outputs)):
            raws = []
            for p in group:
                if not isinstance(p, _FormalParameter):
                    raise TypeError(f"{label} must hold OpSchema.FormalParameter, not {p!r}")
                if p.type_str not in params and not _is_type(p.type_str):
                    raise ValueError(
                        "DataTypeUtils::FromDataTypeString - Received invalid data type "
                        f"string '{p.type_str}'."
                    )
                raws.append(p._raw())
            formals.append(raws)
        attrs = []
        for a in attributes:
            if not isinstance(a, _Attribute):
                raise TypeError(f"attributes must hold OpSchema.Attribute, not {a!r}")
            attrs.append(a._raw())
        ref = _native.make_schema(
            name, domain, since_version, doc, formals[0], formals[1], constraints, attrs
        )
        OpSchema._init(self, ref)

    @classmethod
    def _of(cls, ref: Any) -> "OpSchema":
        self = object.__new__(cls)
        OpSchema._init(self, ref)
        return self

    def _init(self, ref: Any) -> None:
        self._ref = ref
        self._inputs = _UNSET
        self._outputs = _UNSET
        self._attributes = _UNSET
        self._constraints = _UNSET

    @property
    def name(self) -> str:
        return self._ref.name

    @property
    def domain(self) -> str:
        """``""`` for ``ai.onnx``."""
        return self._ref.domain

    @property
    def since_version(self) -> int:
        return self._ref.since_version

    @property
    def deprecated(self) -> bool:
        return self._ref.deprecated

    @property
    def doc(self) -> Optional[str]:
        """The documentation of a schema made with ``OpSchema(...)`` (``None`` when
        empty, as in ``onnx``); ``""`` for the built-in ones: their documentation
        strings are not embedded."""
        doc = self._ref.doc
        if doc is None:
            return ""
        return doc or None

    @property
    def node_determinism(self) -> _NodeDeterminism:
        """Whether a node of this operator always gives the same outputs for the same
        inputs (``onnx``'s answer: graph attributes, random draws and unknown function
        bodies make it non-deterministic or unknown)."""
        return _enum(_NodeDeterminism, self._ref.node_determinism)

    @property
    def support_level(self) -> _SupportType:
        """``SupportType.EXPERIMENTAL`` for the few experimental operators, else
        ``COMMON``."""
        return _enum(_SupportType, self._ref.support_level)

    @property
    def has_data_propagation_function(self) -> bool:
        """Whether ``onnx`` propagates values through this operator in shape inference
        (``data_prop=True``); ``onnx_light.onnx.shape_inference`` has its own rules."""
        return self._ref.has_data_propagation

    @property
    def non_deterministic(self) -> bool:
        return self.node_determinism != _NodeDeterminism.Deterministic

    @property
    def file(self) -> str:
        """Always ``""``: the C++ source location of ``onnx`` is not embedded."""
        return ""

    @property
    def line(self) -> int:
        """Always 0 (see ``file``)."""
        return 0

    @property
    def min_input(self) -> int:
        return self._ref.counts[0]

    @property
    def max_input(self) -> int:
        return self._ref.counts[1]

    @property
    def min_output(self) -> int:
        return self._ref.counts[2]

    @property
    def max_output(self) -> int:
        return self._ref.counts[3]

    @staticmethod
    def is_infinite(v: int) -> bool:
        """Whether ``v`` is the count ``onnx`` uses for "no limit" (``max_input`` of a
        variadic input)."""
        return v == 2**31 - 1

    def _formals(self, raw: list) -> List[_FormalParameter]:
        allowed = {c.type_param_str: c.allowed_type_strs for c in self.type_constraints}
        return [_FormalParameter._from_raw(p, allowed.get(p[1], [p[1]])) for p in raw]

    @property
    def inputs(self) -> List[_FormalParameter]:
        if self._inputs is _UNSET:
            self._inputs = self._formals(self._ref.inputs)
        return list(self._inputs)

    @property
    def outputs(self) -> List[_FormalParameter]:
        if self._outputs is _UNSET:
            self._outputs = self._formals(self._ref.outputs)
        return list(self._outputs)

    @property
    def attributes(self) -> Dict[str, _Attribute]:
        """Attribute name to ``OpSchema.Attribute``, sorted by name."""
        if self._attributes is _UNSET:
            self._attributes = {a[0]: _Attribute._from_raw(a) for a in self._ref.attributes()}
        return dict(self._attributes)

    @property
    def type_constraints(self) -> List[_TypeConstraintParam]:
        if self._constraints is _UNSET:
            descriptions = self._ref.type_constraint_descriptions
            self._constraints = [
                _TypeConstraintParam(p, a, d)
                for (p, a), d in zip(self._ref.type_constraints, descriptions)
            ]
        return list(self._constraints)

    @property
    def has_type_and_shape_inference_function(self) -> bool:
        """Whether ``onnx`` defines a type and shape inference function for this
        version (what ``onnx`` reports; ``onnx_light.onnx.shape_inference`` has its
        own rules, listed in the README)."""
        return self._ref.has_inference

    @property
    def has_function(self) -> bool:
        """Whether the operator is defined by a function body (``function_body``)."""
        return bool(self._ref.function_versions)

    @property
    def function_opset_versions(self) -> List[int]:
        """The opset versions the function bodies are defined from."""
        return list(self._ref.function_versions)

    @property
    def function_body(self) -> Any:
        """The latest function body as a ``FunctionProto`` (empty when none)."""
        from . import FunctionProto

        body = self._ref.function()
        return FunctionProto() if body is None else body

    def get_function_with_opset_version(self, opset_version: int) -> bytes:
        """The serialized function body for a model importing ``opset_version`` of the
        operator's domain (the body defined from the largest version not above it);
        ``b""`` when there is none, as in ``onnx``."""
        body = self._ref.function(_int_arg("opset_version", opset_version))
        return b"" if body is None else body.SerializeToString()

    @property
    def has_context_dependent_function(self) -> bool:
        """Whether ``onnx`` builds a function body for each node (from its attributes
        and input types); those bodies are not built here."""
        return bool(self._ref.context_dependent_function_versions)

    @property
    def context_dependent_function_opset_versions(self) -> List[int]:
        return list(self._ref.context_dependent_function_versions)

    @property
    def all_function_opset_versions(self) -> List[int]:
        """The versions of both kinds of function, sorted, each once."""
        return sorted(
            set(self._ref.function_versions) | set(self._ref.context_dependent_function_versions)
        )

    def __repr__(self) -> str:
        return f"""\
OpSchema(
    name={self.name!r},
    domain={self.domain!r},
    since_version={self.since_version!r},
    doc={self.doc!r},
    type_constraints={self.type_constraints!r},
    inputs={self.inputs!r},
    outputs={self.outputs!r},
    attributes={self.attributes!r}
)"""


_ELEMENT_TYPES = frozenset(
    "float uint8 int8 uint16 int16 int32 int64 string bool float16 double uint32 uint64 "
    "complex64 complex128 bfloat16 float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz "
    "uint4 int4 float4e2m1 float8e8m0 uint2 int2 float6e2m3 float6e3m2".split()
)


def _is_type(text: str) -> bool:
    """Whether ``text`` is a type in ONNX notation (``tensor(float)``, ``int32``,
    ``seq(tensor(int64))``, ``map(int64,tensor(float))``, ``opaque(d,n)``)."""
    text = text.strip()
    if text.startswith(("seq(", "optional(")):
        return text.endswith(")") and _is_type(_inner(text, text[: text.index("(")]))
    if text.startswith("map("):
        key, _, value = _inner(text, "map").partition(",")
        return key.strip() in _ELEMENT_TYPES and _is_type(value)
    if text.startswith("opaque("):
        return text.endswith(")")
    for wrapper in ("sparse_tensor", "tensor"):
        if text.startswith(wrapper + "("):
            return text.endswith(")") and _inner(text, wrapper) in _ELEMENT_TYPES
    return text in _ELEMENT_TYPES


def _int_arg(name: str, value: Any) -> int:
    """``value`` as the C ``int`` ``onnx`` takes (``bool`` included); else TypeError."""
    if not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not -(2**31) <= value < 2**31:
        raise TypeError(f"{name} must fit in a 32-bit int, not {value}")
    return int(value)


def _str_arg(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _version_and_domain(
    max_inclusive_version: Any, domain: Any
) -> "tuple[Optional[int], str]":
    """The version (``None``: latest) and domain of the two overloads ``onnx`` has:
    ``(op_type, domain="")`` and ``(op_type, max_inclusive_version, domain="")``."""
    if max_inclusive_version is _UNSET:
        return None, _str_arg("domain", "" if domain is _UNSET else domain)
    if isinstance(max_inclusive_version, str) and domain is _UNSET:
        return None, max_inclusive_version
    version = _int_arg("max_inclusive_version", max_inclusive_version)
    return version, _str_arg("domain", "" if domain is _UNSET else domain)


def get_schema(
    op_type: str,
    max_inclusive_version: Union[int, str] = _UNSET,
    domain: str = _UNSET,
) -> OpSchema:
    """The schema of ``op_type`` in ``domain``: the latest version, or the one with the
    largest ``since_version`` not above ``max_inclusive_version``. Raises
    ``SchemaError`` when there is none. As in ``onnx``, the second positional argument
    may be the domain (``get_schema("Clip", "")``)."""
    op_type = _str_arg("op_type", op_type)
    version, domain = _version_and_domain(max_inclusive_version, domain)
    ref = _native.find_schema(op_type, domain, version)
    if ref is None:
        if version is None:
            raise SchemaError(f"No schema registered for '{op_type}' and domain '{domain}'!")
        raise SchemaError(
            f"No schema registered for '{op_type}' version '{version}' and domain '{domain}'!"
        )
    return OpSchema._of(ref)


def has(op_type: str, max_inclusive_version: Union[int, str] = _UNSET, domain: str = _UNSET) -> bool:
    """Whether ``get_schema`` with the same arguments finds a schema."""
    op_type = _str_arg("op_type", op_type)
    version, domain = _version_and_domain(max_inclusive_version, domain)
    return _native.find_schema(op_type, domain, version) is not None


has_schema = has


def get_all_schemas() -> List[OpSchema]:
    """The latest schema of every operator, sorted by domain and name (``onnx``'s order
    is that of a hash table)."""
    return [OpSchema._of(r) for r in _native.all_schemas(False)]


def get_all_schemas_with_history() -> List[OpSchema]:
    """Every version of every operator, sorted by domain, name and version."""
    return [OpSchema._of(r) for r in _native.all_schemas(True)]


def get_function_ops() -> List[OpSchema]:
    """The latest schemas of the operators defined by a function (a body of their own
    or one built per node)."""
    return [s for s in get_all_schemas() if s.has_function or s.has_context_dependent_function]


def _latest_version(domain: str) -> int:
    return max(s.since_version for s in _native.all_schemas(False) if s.domain == domain)


def onnx_opset_version() -> int:
    """The newest opset version of the ``ai.onnx`` domain."""
    return _latest_version(ONNX_DOMAIN)


def onnx_ml_opset_version() -> int:
    """The newest opset version of the ``ai.onnx.ml`` domain."""
    return _latest_version(ONNX_ML_DOMAIN)


def register_schema(schema: OpSchema) -> None:
    """Adds ``schema`` to the schemas lookups see: ``get_schema``, ``has``,
    ``get_all_schemas``, the checker and shape inference. Raises ``SchemaError`` when a
    schema of the same name, domain and version is there already."""
    if not isinstance(schema, OpSchema):
        raise TypeError(f"schema must be an OpSchema, not {type(schema).__name__}")
    _native.register_schema(schema._ref)


def deregister_schema(op_type: str, version: int, domain: str) -> None:
    """Removes the schema of ``op_type`` whose ``since_version`` is ``version`` in
    ``domain`` (registered or built in) from what lookups see. Raises ``SchemaError``
    when there is none."""
    _native.deregister_schema(
        _str_arg("op_type", op_type), _int_arg("version", version), _str_arg("domain", domain)
    )


from .. import onnx  # noqa: E402  (onnx.defs.onnx is the onnx module, as in onnx)
