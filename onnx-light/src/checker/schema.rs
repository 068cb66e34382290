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
//! Schemas of your own can be added at run time with [`register`] (and any schema
//! removed with [`deregister`]), as `onnx.defs.register_schema` does: every lookup sees
//! the change, the checker's and shape inference's included.
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
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{OnceLock, RwLock};

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
    /// What the parameter is (not embedded: set only for schemas made at run time).
    #[proto(7)]
    pub description: Option<Str<'a>>,
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
    /// What the attribute is (not embedded: set only for schemas made at run time).
    #[proto(5)]
    pub description: Option<Str<'a>>,
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
    /// What the type parameter is (not embedded: set only for schemas made at run time).
    #[proto(3)]
    pub description: Option<Str<'a>>,
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
    /// `onnx`'s node determinism: 0 unknown, 1 non-deterministic, 2 deterministic.
    #[proto(19)]
    pub node_determinism: i32,
    /// The documentation (not embedded: set only for schemas made at run time).
    #[proto(20)]
    pub doc: Option<Str<'a>>,
    /// `onnx`'s support level: 0 common, 1 experimental.
    #[proto(21)]
    pub support_level: i32,
    /// `onnx` has a data propagation function for this version.
    #[proto(22)]
    pub has_data_propagation: bool,
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
/// written, as `onnx.checker` matches a node's domain. Schemas added with [`register`]
/// are found, those removed with [`deregister`] are not.
pub fn lookup_exact_domain(
    domain: &str,
    op_type: &str,
    opset_version: i64,
) -> Option<&'static OpSchema<'static>> {
    if !REGISTRY_CHANGED.load(Ordering::Acquire) {
        return lookup_embedded(domain, op_type, opset_version, |_| true);
    }
    let registry = registry_read();
    let embedded = lookup_embedded(domain, op_type, opset_version, |s| {
        !registry
            .removed
            .contains(&(domain.to_owned(), op_type.to_owned(), s.since_version))
    });
    let added = registry
        .added
        .get(&(domain.to_owned(), op_type.to_owned()))
        .and_then(|versions| versions.range(..=opset_version).next_back())
        .map(|(_, &s)| s);
    match (embedded, added) {
        (Some(e), Some(a)) => Some(if a.since_version >= e.since_version {
            a
        } else {
            e
        }),
        (e, a) => e.or(a),
    }
}

/// The embedded schema with the largest `since_version` not above `opset_version`
/// among those `keep` accepts.
fn lookup_embedded(
    domain: &str,
    op_type: &str,
    opset_version: i64,
    keep: impl Fn(&OpSchema<'_>) -> bool,
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
    versions[..after].iter().rev().find(|s| keep(s)).copied()
}

/// Schemas added and removed at run time (`onnx.defs.register_schema` and
/// `deregister_schema`), over the embedded ones.
#[derive(Default)]
struct Registry {
    /// Added schemas by (domain, name), then since_version. They are leaked so that
    /// lookups can hand out `'static` references, as for the embedded ones: a
    /// registered schema lives as long as the process (as in `onnx`'s registry).
    added: HashMap<(String, String), BTreeMap<i64, &'static OpSchema<'static>>>,
    /// Embedded schemas deregistered, as (domain, name, since_version).
    removed: HashSet<(String, String, i64)>,
}

/// Set once the registry is first changed: until then lookups take no lock.
static REGISTRY_CHANGED: AtomicBool = AtomicBool::new(false);

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(RwLock::default)
}

// A panic while the lock was held cannot leave the maps half-changed (each change is
// one insert or remove), so a poisoned lock is used as it is.
fn registry_read() -> std::sync::RwLockReadGuard<'static, Registry> {
    registry()
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn registry_write() -> std::sync::RwLockWriteGuard<'static, Registry> {
    registry()
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why [`register`] or [`deregister`] refused (`onnx.defs.SchemaError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A schema of that name, domain and version is already registered.
    #[error("Trying to register schema with name {name} (domain: {domain} version: {version}), but it is already registered")]
    AlreadyRegistered {
        /// The operator.
        name: String,
        /// Its domain.
        domain: String,
        /// The version.
        version: i64,
    },
    /// No schema of that name, domain and version is registered.
    #[error("Attempting to deregister an unregistered schema with name: {name} domain: {domain} version: {version}")]
    NotRegistered {
        /// The operator.
        name: String,
        /// Its domain.
        domain: String,
        /// The version.
        version: i64,
    },
    /// A schema that breaks a rule of schemas (a variadic parameter not last, ...).
    #[error("schema {name} (domain: {domain} version: {version}): {reason}")]
    Invalid {
        /// The operator.
        name: String,
        /// Its domain.
        domain: String,
        /// The version.
        version: i64,
        /// The rule broken.
        reason: String,
    },
}

impl OpSchema<'static> {
    /// Derives what the formal parameters imply, as `onnx` does when it registers a
    /// schema: the input and output count ranges (an optional parameter raises the
    /// maximum only; a variadic one, which must be last, makes the minimum its
    /// `min_arity` plus the number of parameters before it, and lifts the maximum), and the node determinism when unknown (graph
    /// attributes make it non-deterministic, else deterministic). A `since_version`
    /// below 1 becomes 1.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Invalid`] for a variadic parameter that is not the last.
    pub fn finalize(&mut self) -> Result<(), RegistryError> {
        let invalid = |s: &Self, reason: String| RegistryError::Invalid {
            name: s.name().to_owned(),
            domain: s.domain().to_owned(),
            version: s.since_version,
            reason,
        };
        let mut counts = [(0i32, 0i32); 2];
        for (which, params) in [&self.inputs, &self.outputs].into_iter().enumerate() {
            let (min, max) = &mut counts[which];
            for (i, p) in params.iter().enumerate() {
                match p.option() {
                    FormalParameterOption::Single => {
                        *max = max.saturating_add(1);
                        *min = *max;
                    }
                    FormalParameterOption::Optional => *max = max.saturating_add(1),
                    FormalParameterOption::Variadic => {
                        if i + 1 != params.len() {
                            let what = if which == 0 { "input" } else { "output" };
                            return Err(invalid(
                                self,
                                format!("only the last {what} may be variadic, not '{}'", p.name()),
                            ));
                        }
                        *min = max.saturating_add(p.min_arity);
                        *max = i32::MAX;
                    }
                }
            }
        }
        [
            (self.min_input, self.max_input),
            (self.min_output, self.max_output),
        ] = counts;
        if self.since_version < 1 {
            self.since_version = 1;
        }
        if self.node_determinism == 0 {
            let graphs = self.attributes.iter().any(|a| {
                matches!(
                    a.attribute_type(),
                    Some(AttributeType::Graph | AttributeType::Graphs)
                )
            });
            self.node_determinism = if graphs { 1 } else { 2 };
        }
        self.attributes.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(())
    }
}

/// Adds `schema` (after [`OpSchema::finalize`]) to the schemas every lookup sees, the
/// checker's and shape inference's included, as `onnx.defs.register_schema` does.
///
/// # Errors
///
/// [`RegistryError::AlreadyRegistered`] when a schema of the same name, domain and
/// version is there (embedded or registered); [`RegistryError::Invalid`] from
/// [`OpSchema::finalize`].
pub fn register(
    mut schema: OpSchema<'static>,
) -> Result<&'static OpSchema<'static>, RegistryError> {
    schema.finalize()?;
    let (domain, name, version) = (
        schema.domain().to_owned(),
        schema.name().to_owned(),
        schema.since_version,
    );
    let mut registry = registry_write();
    let embedded = lookup_embedded(&domain, &name, version, |s| s.since_version == version)
        .filter(|s| s.since_version == version)
        .is_some_and(|_| {
            !registry
                .removed
                .contains(&(domain.clone(), name.clone(), version))
        });
    let versions = registry
        .added
        .entry((domain.clone(), name.clone()))
        .or_default();
    if embedded || versions.contains_key(&version) {
        return Err(RegistryError::AlreadyRegistered {
            name,
            domain,
            version,
        });
    }
    let leaked: &'static OpSchema<'static> = Box::leak(Box::new(schema));
    versions.insert(version, leaked);
    REGISTRY_CHANGED.store(true, Ordering::Release);
    Ok(leaked)
}

/// Removes the schema of `op_type` version `version` (its `since_version`) in `domain`,
/// registered or embedded, from what lookups see.
///
/// # Errors
///
/// [`RegistryError::NotRegistered`] when there is none.
pub fn deregister(op_type: &str, version: i64, domain: &str) -> Result<(), RegistryError> {
    let mut registry = registry_write();
    let key = (domain.to_owned(), op_type.to_owned());
    if let Some(versions) = registry.added.get_mut(&key) {
        if versions.remove(&version).is_some() {
            if versions.is_empty() {
                registry.added.remove(&key);
            }
            return Ok(());
        }
    }
    let removed = (domain.to_owned(), op_type.to_owned(), version);
    let embedded = lookup_embedded(domain, op_type, version, |s| s.since_version == version)
        .is_some_and(|s| s.since_version == version);
    if embedded && registry.removed.insert(removed) {
        REGISTRY_CHANGED.store(true, Ordering::Release);
        return Ok(());
    }
    Err(RegistryError::NotRegistered {
        name: op_type.to_owned(),
        domain: domain.to_owned(),
        version,
    })
}

/// Every schema lookups can find (embedded and registered, without the deregistered
/// ones), sorted by domain, name and version.
pub fn current() -> Vec<&'static OpSchema<'static>> {
    if !REGISTRY_CHANGED.load(Ordering::Acquire) {
        return all().schema.iter().collect();
    }
    let registry = registry_read();
    let mut out: Vec<&'static OpSchema<'static>> = all()
        .schema
        .iter()
        .filter(|s| {
            let key = (s.domain().to_owned(), s.name().to_owned(), s.since_version);
            !registry.removed.contains(&key)
        })
        .collect();
    out.extend(registry.added.values().flat_map(|v| v.values().copied()));
    out.sort_by(|a, b| {
        (a.domain(), a.name(), a.since_version).cmp(&(b.domain(), b.name(), b.since_version))
    });
    out
}

/// Whether `domain` is one `onnx` defines operators in (`""`, `ai.onnx.ml`, ...), or
/// one a schema was registered in.
pub fn has_domain(domain: &str) -> bool {
    index().contains_key(domain)
        || (REGISTRY_CHANGED.load(Ordering::Acquire)
            && registry_read().added.keys().any(|(d, _)| d == domain))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(version: i64) -> OpSchema<'static> {
        let formal = |name: &str, option: FormalParameterOption| FormalParameter {
            name: Some(name.to_owned().into()),
            type_str: Some("tensor(float)".into()),
            option: option as i32,
            min_arity: 1,
            ..FormalParameter::default()
        };
        OpSchema {
            name: Some("Made".into()),
            domain: Some("schema.tests.registry".into()),
            since_version: version,
            inputs: vec![
                formal("a", FormalParameterOption::Single),
                formal("b", FormalParameterOption::Optional),
                formal("c", FormalParameterOption::Variadic),
            ],
            outputs: vec![formal("y", FormalParameterOption::Single)],
            ..OpSchema::default()
        }
    }

    #[test]
    fn registered_schemas_are_found_by_version_until_deregistered() {
        let domain = "schema.tests.registry";
        assert!(!has_domain(domain));
        let two = register(made(2)).unwrap();
        // As in onnx, a variadic parameter's minimum counts the optional ones before it.
        assert_eq!((two.min_input, two.max_input), (3, i32::MAX));
        assert_eq!((two.min_output, two.max_output), (1, 1));
        assert_eq!(two.node_determinism, 2);
        register(made(4)).unwrap();
        assert!(has_domain(domain));
        assert_eq!(lookup(domain, "Made", 3).unwrap().since_version, 2);
        assert_eq!(lookup(domain, "Made", 9).unwrap().since_version, 4);
        assert!(lookup(domain, "Made", 1).is_none());
        assert!(matches!(
            register(made(4)),
            Err(RegistryError::AlreadyRegistered { .. })
        ));
        let listed: Vec<i64> = current()
            .iter()
            .filter(|s| s.domain() == domain)
            .map(|s| s.since_version)
            .collect();
        assert_eq!(listed, [2, 4]);
        deregister("Made", 4, domain).unwrap();
        assert_eq!(lookup(domain, "Made", 9).unwrap().since_version, 2);
        assert!(matches!(
            deregister("Made", 4, domain),
            Err(RegistryError::NotRegistered { .. })
        ));
        deregister("Made", 2, domain).unwrap();
        assert!(lookup(domain, "Made", 9).is_none());
        // Embedded schemas are untouched by it all.
        assert_eq!(lookup("", "Relu", 14).unwrap().since_version, 14);
    }

    #[test]
    fn a_variadic_parameter_must_be_last() {
        let mut s = made(1);
        s.inputs.swap(1, 2);
        assert!(matches!(s.finalize(), Err(RegistryError::Invalid { .. })));
    }
}
