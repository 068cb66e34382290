//! The rules for nodes and their attributes: opset resolution, the operator's schema
//! (arity, attribute names, types and presence) and attribute well-formedness.

use crate::onnx::{AttributeProto, AttributeType, NodeProto};
use crate::ProtoEnum;

use super::hash::NameSet;
use super::schema::{self, FormalParameterOption};
use super::{steps, Checker, Loc, Scope};

/// Operators removed from ONNX while experimental: `onnx` warns about them and skips
/// their schema check.
const EXPERIMENTAL_OPS: [&str; 11] = [
    "ATen",
    "Affine",
    "ConstantFill",
    "Crop",
    "DynamicSlice",
    "GRUUnit",
    "GivenTensorFill",
    "ImageScaler",
    "ParametricSoftplus",
    "Scale",
    "ScaledTanh",
];

/// Nodes with at most this many attributes find repeated names by scanning (at most
/// 120 comparisons), larger ones with a set.
const ATTRIBUTES_SCANNED: usize = 16;

/// Domains whose operators must have a schema (an unknown operator there is an error;
/// elsewhere it is a custom operator and not checked).
const BUILT_IN_DOMAINS: [&str; 4] = ["", "ai.onnx", "ai.onnx.ml", "ai.onnx.training"];

pub(super) fn is_experimental(node: &NodeProto<'_>) -> bool {
    matches!(node.domain(), "" | "ai.onnx") && EXPERIMENTAL_OPS.contains(&node.op_type())
}

fn type_name(raw: i32) -> String {
    match AttributeType::from_i32(raw) {
        Some(t) => t.proto_name().to_string(),
        None => format!("type {raw}"),
    }
}

impl Checker<'_> {
    pub(super) fn check_node<'m>(
        &mut self,
        node: &'m NodeProto<'m>,
        main_graph: bool,
        scope: &mut Scope<'m>,
        loc: &Loc<'_>,
    ) {
        if node.op_type().is_empty() {
            self.report(loc, "op_type is empty");
        }
        if node.input.is_empty() && node.output.is_empty() {
            self.report(loc, "the node has no input and no output");
        }
        let domain = node.domain();
        let version = self.opset_version(domain);
        let Some(version) = version else {
            self.report(loc, format_args!("no opset import for domain '{domain}'"));
            // The attributes are still checked, for their own problems.
            self.check_attributes(node, main_graph, scope, loc);
            return;
        };
        self.check_attributes(node, main_graph, scope, loc);
        if is_experimental(node) {
            return;
        }
        let Some(schema) = schema::lookup_exact_domain(domain, node.op_type(), version) else {
            if BUILT_IN_DOMAINS.contains(&domain) || self.options.check_custom_domain {
                self.report(
                    loc,
                    format_args!(
                        "no operator {} in domain '{domain}' at opset version {version}",
                        node.op_type()
                    ),
                );
            }
            return;
        };
        if schema.deprecated {
            self.report(
                loc,
                format_args!(
                    "operator {} is deprecated at opset version {version} (since version {})",
                    node.op_type(),
                    schema.since_version
                ),
            );
            return;
        }
        self.verify_against_schema(node, schema, loc);
    }

    fn check_attributes<'m>(
        &mut self,
        node: &'m NodeProto<'m>,
        main_graph: bool,
        scope: &mut Scope<'m>,
        loc: &Loc<'_>,
    ) {
        // Most nodes have a handful of attributes, for which a scan of the ones before
        // beats a set; past that, a set keeps the check linear in the attribute count.
        let mut seen = (node.attribute.len() > ATTRIBUTES_SCANNED)
            .then(|| NameSet::with_capacity_and_hasher(node.attribute.len(), Default::default()));
        for (i, attr) in node.attribute.iter().enumerate() {
            let aloc = loc.attribute(attr.name());
            let repeated = match &mut seen {
                Some(names) => {
                    steps::add(1);
                    !names.insert(attr.name())
                }
                None => {
                    steps::add(i as u64);
                    node.attribute[..i].iter().any(|a| a.name() == attr.name())
                }
            };
            if repeated {
                self.report(&aloc, "the attribute appears more than once");
            }
            self.check_attribute(attr, main_graph, scope, &aloc);
        }
    }

    pub(super) fn check_attribute<'m>(
        &mut self,
        attr: &'m AttributeProto<'m>,
        main_graph: bool,
        scope: &mut Scope<'m>,
        loc: &Loc<'_>,
    ) {
        if attr.name().is_empty() {
            self.report(loc, "the attribute name is empty");
        }
        if self.ir_version >= 2 && attr.r#type.is_none() {
            self.report(loc, "the attribute type is missing");
        }
        let set: [(bool, AttributeType); 14] = [
            (attr.f.is_some(), AttributeType::Float),
            (attr.i.is_some(), AttributeType::Int),
            (attr.s.is_some(), AttributeType::String),
            (attr.t.is_some(), AttributeType::Tensor),
            (attr.g.is_some(), AttributeType::Graph),
            (attr.tp.is_some(), AttributeType::TypeProto),
            (attr.sparse_tensor.is_some(), AttributeType::SparseTensor),
            (!attr.floats.is_empty(), AttributeType::Floats),
            (!attr.ints.is_empty(), AttributeType::Ints),
            (!attr.strings.is_empty(), AttributeType::Strings),
            (!attr.tensors.is_empty(), AttributeType::Tensors),
            (!attr.graphs.is_empty(), AttributeType::Graphs),
            (
                !attr.sparse_tensors.is_empty(),
                AttributeType::SparseTensors,
            ),
            (!attr.type_protos.is_empty(), AttributeType::TypeProtos),
        ];
        let mut used = 0;
        for (present, ty) in set {
            if !present {
                continue;
            }
            used += 1;
            if let Some(declared) = attr.r#type {
                if declared.raw() != ty.to_i32() {
                    self.report(
                        loc,
                        format_args!(
                            "the type field says {} but the {} value field is set",
                            type_name(declared.raw()),
                            ty.proto_name()
                        ),
                    );
                }
            }
        }
        if used > 1 {
            self.report(
                loc,
                format_args!("{used} value fields are set, at most one may be"),
            );
        }
        if !main_graph && attr.ref_attr_name.is_some() && used != 0 {
            self.report(
                loc,
                "an attribute referring to a parent attribute has a value too",
            );
        }
        if let Some(t) = &attr.t {
            self.check_tensor(t, &loc.field("t"));
        }
        if let Some(s) = &attr.sparse_tensor {
            self.check_sparse_tensor(s, &loc.field("sparse_tensor"));
        }
        if let Some(g) = &attr.g {
            self.check_graph(g, false, scope, &loc.field("g"));
        }
        for (i, t) in attr.tensors.iter().enumerate() {
            self.check_tensor(t, &loc.indexed("tensors", i, t.name()));
        }
        for (i, s) in attr.sparse_tensors.iter().enumerate() {
            let name = s.values.as_ref().map_or("", |v| v.name());
            self.check_sparse_tensor(s, &loc.indexed("sparse_tensors", i, name));
        }
        for (i, g) in attr.graphs.iter().enumerate() {
            self.check_graph(g, false, scope, &loc.indexed("graphs", i, g.name()));
        }
    }

    /// `OpSchema::Verify`: arity, empty names of single parameters, attribute names,
    /// types and required attributes.
    fn verify_against_schema(
        &mut self,
        node: &NodeProto<'_>,
        schema: &schema::OpSchema<'_>,
        loc: &Loc<'_>,
    ) {
        // Named in messages only, so formatted only when one is reported.
        let what = OpVersion(node.op_type(), schema.since_version);
        let inputs_ok = schema.input_count_allowed(node.input.len());
        let outputs_ok = schema.output_count_allowed(node.output.len());
        if !inputs_ok {
            self.report(
                loc,
                format_args!(
                    "{} inputs, {what} takes {}",
                    node.input.len(),
                    arity(
                        schema.min_input,
                        schema.max_input,
                        &schema.allowed_input_counts
                    )
                ),
            );
        }
        if !outputs_ok {
            self.report(
                loc,
                format_args!(
                    "{} outputs, {what} gives {}",
                    node.output.len(),
                    arity(
                        schema.min_output,
                        schema.max_output,
                        &schema.allowed_output_counts
                    )
                ),
            );
        }
        for (side, names, formal, count_ok) in [
            ("input", &node.input, &schema.inputs, inputs_ok),
            ("output", &node.output, &schema.outputs, outputs_ok),
        ] {
            for (i, name) in names.iter().enumerate() {
                let Some(p) = formal.get(i) else {
                    let variadic = formal
                        .last()
                        .is_some_and(|p| p.option() == FormalParameterOption::Variadic);
                    if variadic || !count_ok {
                        break; // a wrong count is reported above
                    }
                    self.report(
                        loc,
                        format_args!("{} {side}s, {what} declares {}", names.len(), formal.len()),
                    );
                    break;
                };
                if name.is_empty() && p.option() == FormalParameterOption::Single {
                    self.report(
                        loc,
                        format_args!(
                            "{side} {i} ({}) is required but its name is empty",
                            p.name()
                        ),
                    );
                }
            }
        }
        for attr in &node.attribute {
            let name = attr.name();
            let Some(declared) = schema.attribute(name) else {
                if !schema.allows_unchecked_attributes && !name.starts_with("__") {
                    self.report(
                        &loc.attribute(name),
                        format_args!("{what} has no attribute {name}"),
                    );
                }
                continue;
            };
            let actual = attr.r#type.map_or(0, |t| t.raw());
            if actual != declared.r#type {
                self.report(
                    &loc.attribute(name),
                    format_args!(
                        "attribute {name} is {}, the schema wants {}",
                        type_name(actual),
                        type_name(declared.r#type)
                    ),
                );
                continue;
            }
            if !attr.ref_attr_name().is_empty() {
                continue;
            }
            let missing = match declared.attribute_type() {
                Some(AttributeType::Tensor) => attr.t.is_none().then_some("t"),
                Some(AttributeType::SparseTensor) => {
                    attr.sparse_tensor.is_none().then_some("sparse_tensor")
                }
                Some(AttributeType::Graph) => attr.g.is_none().then_some("g"),
                Some(AttributeType::TypeProto) => attr.tp.is_none().then_some("tp"),
                _ => None,
            };
            if let Some(field) = missing {
                self.report(
                    &loc.attribute(name),
                    format_args!("attribute {name} has no value (field {field} is unset)"),
                );
            }
        }
        for declared in schema.attributes.iter().filter(|a| a.required) {
            if node.attribute(declared.name()).is_none() {
                self.report(
                    loc,
                    format_args!(
                        "required attribute {} of {what} is missing",
                        declared.name()
                    ),
                );
            }
        }
    }
}

/// `Conv-11`: an operator and the version of its schema.
struct OpVersion<'s>(&'s str, i64);

impl std::fmt::Display for OpVersion<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.0, self.1)
    }
}

fn arity(min: i32, max: i32, listed: &[i32]) -> String {
    if !listed.is_empty() {
        let list: Vec<String> = listed.iter().map(i32::to_string).collect();
        return list.join(" or ");
    }
    match (min, max) {
        (a, b) if a == b => a.to_string(),
        (a, i32::MAX) => format!("at least {a}"),
        (a, b) => format!("{a} to {b}"),
    }
}
