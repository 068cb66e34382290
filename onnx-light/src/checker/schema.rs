//! Operator schemas: every operator of every version in the domains the official `onnx`
//! package defines (`ai.onnx`, `ai.onnx.ml`, `ai.onnx.preview`,
//! `ai.onnx.preview.training`), as that package describes them.
//!
//! The data is generated from the installed `onnx` by `schema/gen_operators.py` and
//! embedded in the library (`operators.pb`, decoded once, on first use, borrowing the
//! embedded bytes). A test regenerates it and fails when it differs, so the schemas here
//! are the pinned `onnx`'s own. Documentation strings, shape inference and
//! context-dependent function bodies are not included.
//!
//! ```
//! use onnx_light::checker::schema;
//!
//! // Opset 12 uses the latest Clip defined at or before version 12: Clip-12.
//! let clip = schema::lookup("", "Clip", 12).unwrap();
//! assert_eq!(clip.since_version, 12);
//! assert_eq!(clip.max_input, 3);
//! assert!(schema::lookup("", "Clip", 0).is_none());
//! assert!(schema::lookup("ai.onnx", "Relu", 14).is_some()); // "" and "ai.onnx" are one domain
//! ```

#![allow(missing_docs)] // the fields are those of onnx.defs.OpSchema, documented there

use super::hash::NameMap;
use std::sync::OnceLock;

use crate::field::{Str, UnknownFields};
use crate::message::Decode;
use crate::onnx::{AttributeProto, AttributeType, FunctionProto};
use crate::{ProtoEnum, ProtoMessage};

/// The embedded schemas (see `schema/README.md`).
const OPERATORS: &[u8] = include_bytes!("operators.pb");

/// Every operator schema of one `onnx` release.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.OperatorSchemas")]
pub struct OperatorSchemas<'a> {
    /// The `onnx` package version the schemas come from.
    #[proto(1)]
    pub onnx_version: Option<Str<'a>>,
    /// The newest IR version that `onnx` release knows.
    #[proto(2)]
    pub ir_version: i64,
    /// Sorted by domain, name, then since_version.
    #[proto(3)]
    pub schema: Vec<OpSchema<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// Whether a formal input or output must be present, may be left out, or repeats.
#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[proto(name = "onnx_light.schema.FormalParameterOption")]
pub enum FormalParameterOption {
    /// Exactly one value, never the empty name.
    Single = 0,
    /// One value or the empty name (absent).
    Optional = 1,
    /// Any number of values (at least `min_arity`); only the last parameter.
    Variadic = 2,
}

/// One formal input or output of an operator.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.FormalParameter")]
pub struct FormalParameter<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// A type constraint's parameter (`T`) or a type (`tensor(int64)`).
    #[proto(2)]
    pub type_str: Option<Str<'a>>,
    /// A [`FormalParameterOption`] number.
    #[proto(3)]
    pub option: i32,
    /// For a variadic parameter: whether every value has the same type.
    #[proto(4)]
    pub is_homogeneous: bool,
    /// For a variadic parameter: the fewest values it takes.
    #[proto(5)]
    pub min_arity: i32,
    /// `onnx`'s differentiation category (0 unknown, 1 differentiable, 2 not).
    #[proto(6)]
    pub differentiation_category: i32,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl FormalParameter<'_> {
    /// The option as an enum (`Single` for a number this crate does not know).
    pub fn option(&self) -> FormalParameterOption {
        FormalParameterOption::from_i32(self.option).unwrap_or(FormalParameterOption::Single)
    }
}

/// One attribute an operator declares.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.Attribute")]
pub struct AttributeSchema<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// An [`AttributeType`] number.
    #[proto(2)]
    pub r#type: i32,
    #[proto(3)]
    pub required: bool,
    /// The value used when the attribute is absent, if the operator has one.
    #[proto(4)]
    pub default_value: Option<AttributeProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl AttributeSchema<'_> {
    /// The declared type, `None` for a number this crate does not know.
    pub fn attribute_type(&self) -> Option<AttributeType> {
        AttributeType::from_i32(self.r#type)
    }
}

/// The types a type parameter (`T`) may take.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.TypeConstraint")]
pub struct TypeConstraint<'a> {
    #[proto(1)]
    pub type_param: Option<Str<'a>>,
    /// In ONNX notation: `tensor(float)`, `seq(tensor(int64))`, ...
    #[proto(2)]
    pub allowed_types: Vec<Str<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// A function body defining an operator, valid from `opset_version` of its domain.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.FunctionBody")]
pub struct FunctionBody<'a> {
    #[proto(1)]
    pub opset_version: i64,
    #[proto(2)]
    pub function: Option<FunctionProto<'a>>,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

/// One version of one operator.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "onnx_light.schema.OpSchema")]
pub struct OpSchema<'a> {
    #[proto(1)]
    pub name: Option<Str<'a>>,
    /// `""` for `ai.onnx`.
    #[proto(2)]
    pub domain: Option<Str<'a>>,
    #[proto(3)]
    pub since_version: i64,
    #[proto(4)]
    pub deprecated: bool,
    #[proto(5)]
    pub inputs: Vec<FormalParameter<'a>>,
    #[proto(6)]
    pub outputs: Vec<FormalParameter<'a>>,
    #[proto(7)]
    pub min_input: i32,
    #[proto(8)]
    pub max_input: i32,
    #[proto(9)]
    pub min_output: i32,
    #[proto(10)]
    pub max_output: i32,
    /// Sorted by name.
    #[proto(11)]
    pub attributes: Vec<AttributeSchema<'a>>,
    #[proto(12)]
    pub type_constraints: Vec<TypeConstraint<'a>>,
    #[proto(13)]
    pub functions: Vec<FunctionBody<'a>>,
    /// The input counts allowed within `[min_input, max_input]`; empty: all of them.
    #[proto(14)]
    pub allowed_input_counts: Vec<i32>,
    /// The output counts allowed within `[min_output, max_output]`; empty: all of them
    /// (BatchNormalization allows 1 or 5 outputs, not 2 to 4).
    #[proto(15)]
    pub allowed_output_counts: Vec<i32>,
    /// Attributes the schema does not declare are accepted (not checked).
    #[proto(16)]
    pub allows_unchecked_attributes: bool,
    /// Opset versions for which `onnx` builds a function body per node (not stored).
    #[proto(17)]
    pub context_dependent_function_versions: Vec<i64>,
    /// `onnx` has no type and shape inference function for this version: inference
    /// goes through its function body if it has one, else gives nothing.
    #[proto(18)]
    pub without_inference: bool,
    #[proto(unknown_fields)]
    pub unknown_fields: UnknownFields<'a>,
}

impl<'a> OpSchema<'a> {
    /// The declared attribute with this name.
    pub fn attribute(&self, name: &str) -> Option<&AttributeSchema<'a>> {
        self.attributes
            .binary_search_by(|a| a.name().cmp(name))
            .ok()
            .map(|i| &self.attributes[i])
    }

    /// Whether `n` inputs are allowed.
    pub fn input_count_allowed(&self, n: usize) -> bool {
        count_allowed(
            n,
            self.min_input,
            self.max_input,
            &self.allowed_input_counts,
        )
    }

    /// Whether `n` outputs are allowed.
    pub fn output_count_allowed(&self, n: usize) -> bool {
        count_allowed(
            n,
            self.min_output,
            self.max_output,
            &self.allowed_output_counts,
        )
    }
}

fn count_allowed(n: usize, min: i32, max: i32, listed: &[i32]) -> bool {
    let Ok(n) = i32::try_from(n) else {
        return false;
    };
    n >= min && n <= max && (listed.is_empty() || listed.contains(&n))
}

/// Every embedded schema, decoded on first use (borrowing the embedded bytes).
pub fn all() -> &'static OperatorSchemas<'static> {
    static ALL: OnceLock<OperatorSchemas<'static>> = OnceLock::new();
    // The bytes are generated and checked by a test (which also checks that they
    // decode); an empty set here would make every lookup fail, never panic.
    ALL.get_or_init(|| OperatorSchemas::decode(OPERATORS).unwrap_or_default())
}

type Index = NameMap<'static, NameMap<'static, Vec<&'static OpSchema<'static>>>>;

/// domain -> name -> versions, by increasing since_version (the file is sorted).
fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = Index::default();
        for s in &all().schema {
            let versions = index
                .entry(s.domain())
                .or_default()
                .entry(s.name())
                .or_default();
            versions.push(s);
        }
        for names in index.values_mut() {
            for versions in names.values_mut() {
                versions.sort_by_key(|s| s.since_version);
            }
        }
        index
    })
}

/// The schema of `op_type` in `domain` for a model importing `opset_version` of that
/// domain: the one with the largest `since_version` not above `opset_version`, as
/// `onnx` resolves it. `""` and `"ai.onnx"` name the same domain here.
pub fn lookup(
    domain: &str,
    op_type: &str,
    opset_version: i64,
) -> Option<&'static OpSchema<'static>> {
    let domain = if domain == "ai.onnx" { "" } else { domain };
    lookup_exact_domain(domain, op_type, opset_version)
}

/// [`lookup`] without folding `"ai.onnx"` into `""`: the domain string is matched as
/// written, as `onnx.checker` matches a node's domain.
pub fn lookup_exact_domain(
    domain: &str,
    op_type: &str,
    opset_version: i64,
) -> Option<&'static OpSchema<'static>> {
    // Nearly every node is of domain "": its operators are looked up without hashing
    // the domain.
    static ONNX_DOMAIN: OnceLock<
        Option<&'static NameMap<'static, Vec<&'static OpSchema<'static>>>>,
    > = OnceLock::new();
    let names = if domain.is_empty() {
        (*ONNX_DOMAIN.get_or_init(|| index().get("")))?
    } else {
        index().get(domain)?
    };
    let versions = names.get(op_type)?;
    let after = versions.partition_point(|s| s.since_version <= opset_version);
    after.checked_sub(1).map(|i| versions[i])
}

/// Whether `domain` is one `onnx` defines operators in (`""`, `ai.onnx.ml`, ...).
pub fn has_domain(domain: &str) -> bool {
    index().contains_key(domain)
}
