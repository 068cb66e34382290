//! Checking one part of a model on its own (a node, graph, function, attribute, tensor,
//! sparse tensor or value info), as `onnx.checker.check_node`, `check_graph`, ... do:
//! the part is checked by the same rules as inside a model, against a [`PartContext`]
//! that stands for the model it would be in (IR version, opset imports) and the names
//! its enclosing graphs define.
//!
//! ```
//! use onnx_light::checker::{self, PartContext};
//! use onnx_light::onnx::*;
//!
//! let ctx = PartContext::new(10, [("", 21)]);
//! let relu = NodeProto::new("Relu", ["x"], ["y"]);
//! assert!(checker::check_node(&relu, &ctx).is_ok());
//! // No operator `Relu` in opset 21 takes an attribute `alpha`.
//! let bad = relu.with_attribute(AttributeProto::float("alpha", 1.0));
//! assert!(checker::check_node(&bad, &ctx).is_err());
//! ```

use super::{CheckOptions, Checker, Loc, Opsets, Problems, Scope};
use crate::onnx::{
    AttributeProto, FunctionProto, GraphProto, NodeProto, SparseTensorProto, TensorProto,
    ValueInfoProto,
};

/// What a part is checked against (`onnx`'s `CheckerContext` and `LexicalScopeContext`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PartContext {
    /// The IR version of the model the part would be in, as `onnx` keeps it (an `int`;
    /// `-1` when unknown, which then counts as older than every version). It decides
    /// whether an attribute needs its type (from 2), whether initializers must be graph
    /// inputs (up to 3) and whether a function needs a domain (from 8).
    pub ir_version: i32,
    /// The opset imports, in order (a later import of a domain replaces an earlier one).
    /// For a function, the model's imports its own are compared with.
    pub opset_imports: Vec<(String, i64)>,
    /// Names defined by the enclosing graphs: a subgraph may use them, and a node may not
    /// assign them again.
    pub outer_names: Vec<String>,
    /// Where external data files are looked for, whether custom domains are checked and
    /// whether a function's opset imports are compared with [`opset_imports`](Self::opset_imports).
    pub options: CheckOptions,
}

impl PartContext {
    /// A context of IR version `ir_version` importing `opset_imports` (domain, version),
    /// with no outer names and the default options.
    pub fn new<D: Into<String>>(
        ir_version: i32,
        opset_imports: impl IntoIterator<Item = (D, i64)>,
    ) -> Self {
        PartContext {
            ir_version,
            opset_imports: opset_imports
                .into_iter()
                .map(|(d, v)| (d.into(), v))
                .collect(),
            outer_names: Vec::new(),
            options: CheckOptions::default(),
        }
    }

    /// Set [`outer_names`](Self::outer_names).
    pub fn outer_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.outer_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Set [`options`](Self::options).
    pub fn options(mut self, options: CheckOptions) -> Self {
        self.options = options;
        self
    }

    fn opsets(&self) -> Opsets {
        let mut opsets = Opsets::new();
        for (domain, version) in &self.opset_imports {
            opsets.insert(domain, *version);
        }
        opsets
    }

    /// A scope whose one level holds the outer names.
    fn scope(&self) -> Scope<'_> {
        let mut scope = Scope::new();
        scope.push(self.outer_names.len(), &[]);
        for name in &self.outer_names {
            scope.add(name);
        }
        scope
    }

    /// Runs `check` with a checker and scope set up for this context.
    fn run<'m>(
        &'m self,
        check: impl FnOnce(&mut Checker<'m>, &mut Scope<'m>),
    ) -> Result<(), Problems> {
        let mut c = Checker::new(&self.options);
        c.ir_version = self.ir_version;
        c.opsets = self.opsets();
        let mut scope = self.scope();
        check(&mut c, &mut scope);
        c.finish()
    }
}

/// Checks `node` (`onnx.checker.check_node`): its operator against the schema of the
/// imported opset, its attributes, and its attributes' subgraphs, which may use
/// [`PartContext::outer_names`]. Whether its inputs are defined is for the graph to check.
///
/// # Errors
/// Every problem found, with its path (from `node`).
pub fn check_node<'m>(node: &'m NodeProto<'m>, ctx: &'m PartContext) -> Result<(), Problems> {
    ctx.run(|c, scope| c.check_node(node, true, scope, &Loc::root("node")))
}

/// Checks `graph` as a main graph (`onnx.checker.check_graph`): typed inputs and
/// outputs, single assignment, nodes in topological order (the outer names count as
/// defined), each node, initializer and subgraph.
///
/// # Errors
/// Every problem found, with its path (from `graph`).
pub fn check_graph<'m>(graph: &'m GraphProto<'m>, ctx: &'m PartContext) -> Result<(), Problems> {
    ctx.run(|c, scope| c.check_graph(graph, true, scope, &Loc::root("graph")))
}

/// Checks `function` (`onnx.checker.check_function`): its name (and domain from IR
/// version 8), single assignment, nodes in order, each node under the function's own
/// opset imports, and (unless the options skip it) that each node's operator resolves
/// to the same schema under those imports as under [`PartContext::opset_imports`].
///
/// # Errors
/// Every problem found, with its path (from `function`).
pub fn check_function<'m>(
    function: &'m FunctionProto<'m>,
    ctx: &'m PartContext,
) -> Result<(), Problems> {
    ctx.run(|c, scope| {
        let model_opsets = ctx.opsets();
        c.check_function(function, &model_opsets, scope, &Loc::root("function"))
    })
}

/// Checks `attr` (`onnx.checker.check_attribute`): a name, a type (from IR version 2)
/// matching its one value field, and the tensors and graphs it holds.
///
/// # Errors
/// Every problem found, with its path (from `attribute`).
pub fn check_attribute<'m>(
    attr: &'m AttributeProto<'m>,
    ctx: &'m PartContext,
) -> Result<(), Problems> {
    ctx.run(|c, scope| c.check_attribute(attr, true, scope, &Loc::root("attribute")))
}

/// Checks `tensor` (`onnx.checker.check_tensor`): a data type, one data field holding
/// enough values for the dims, external data with a safe location (and, when
/// [`CheckOptions::model_dir`] is set, an acceptable file there).
///
/// # Errors
/// Every problem found, with its path (from `tensor`).
pub fn check_tensor(tensor: &TensorProto<'_>, ctx: &PartContext) -> Result<(), Problems> {
    ctx.run(|c, _| c.check_tensor(tensor, &Loc::root("tensor")))
}

/// Checks `sparse` (`onnx.checker.check_sparse_tensor`): its values and indices as
/// tensors, rank 1 values, positive dims, INT64 indices in range and sorted.
///
/// # Errors
/// Every problem found, with its path (from `sparse_tensor`).
pub fn check_sparse_tensor(
    sparse: &SparseTensorProto<'_>,
    ctx: &PartContext,
) -> Result<(), Problems> {
    ctx.run(|c, _| c.check_sparse_tensor(sparse, &Loc::root("sparse_tensor")))
}

/// Checks `value_info` as a main graph's input or output
/// (`onnx.checker.check_value_info`): a name and a type with its required fields.
///
/// # Errors
/// Every problem found, with its path (from `value_info`).
pub fn check_value_info(
    value_info: &ValueInfoProto<'_>,
    ctx: &PartContext,
) -> Result<(), Problems> {
    ctx.run(|c, _| c.check_value_info(value_info, true, &Loc::root("value_info")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::{DataType, OperatorSetIdProto};

    fn ctx() -> PartContext {
        PartContext::new(10, [("", 21)])
    }

    /// `If` whose then-branch reads `outer` and writes `out`.
    fn if_reading(outer: &str, out: &str) -> NodeProto<'static> {
        let branch = |name: &str, input: &str, output: &str| -> GraphProto<'static> {
            let mut g = GraphProto::named(name.to_string());
            g.node.push(NodeProto::new(
                "Identity",
                [input.to_string()],
                [output.to_string()],
            ));
            g.output.push(ValueInfoProto::tensor(
                output.to_string(),
                DataType::Float,
                [1],
            ));
            g
        };
        NodeProto::new("If", ["c"], ["y"])
            .with_attribute(AttributeProto::graph(
                "then_branch",
                branch("then", outer, out),
            ))
            .with_attribute(AttributeProto::graph(
                "else_branch",
                branch("else", "c", "e"),
            ))
    }

    #[test]
    fn subgraphs_see_the_outer_names_and_may_not_assign_them() {
        let node = if_reading("x", "t");
        let problems = check_node(&node, &ctx()).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert!(problems[0]
            .to_string()
            .starts_with("node.attribute then_branch.g.node[0]: input 'x' is not defined"));
        let with_x = ctx().outer_names(["x", "c"]);
        assert!(check_node(&node, &with_x).is_ok());
        let assigns_x = if_reading("c", "x");
        let problems = check_node(&assigns_x, &with_x).unwrap_err();
        assert!(problems[0]
            .message
            .contains("'x' is assigned more than once"));
    }

    #[test]
    fn a_graph_may_use_outer_names() {
        let mut g = GraphProto::named("g");
        g.output
            .push(ValueInfoProto::tensor("y", DataType::Float, [1]));
        g.node.push(NodeProto::new("Relu", ["x"], ["y"]));
        assert!(check_graph(&g, &ctx()).is_err());
        assert!(check_graph(&g, &ctx().outer_names(["x"])).is_ok());
    }

    #[test]
    fn the_ir_version_decides_what_is_required() {
        let untyped = AttributeProto {
            name: Some("a".into()),
            i: Some(1),
            ..AttributeProto::default()
        };
        assert!(check_attribute(&untyped, &PartContext::new(1, [("", 1)])).is_ok());
        assert!(check_attribute(&untyped, &PartContext::new(2, [("", 1)])).is_err());

        // Up to IR version 3, an initializer must be a graph input.
        let mut g = GraphProto::named("g");
        g.initializer.push(TensorProto::from_raw(
            "w",
            DataType::Float,
            vec![1],
            vec![0u8; 4],
        ));
        assert!(check_graph(&g, &PartContext::new(3, [("", 8)])).is_err());
        assert!(check_graph(&g, &PartContext::new(4, [("", 9)])).is_ok());
    }

    #[test]
    fn a_function_is_compared_with_the_context_opsets() {
        let mut f = FunctionProto {
            name: Some("F".into()),
            domain: Some("local".into()),
            ..FunctionProto::default()
        };
        f.input.push("a".into());
        f.output.push("b".into());
        f.opset_import.push(OperatorSetIdProto::new("", 13));
        f.node.push(NodeProto::new("Relu", ["a"], ["b"]));
        assert!(check_function(&f, &PartContext::new(8, [("", 13)])).is_ok());
        // Relu changed in version 14: the function's import resolves differently.
        let problems = check_function(&f, &PartContext::new(8, [("", 21)])).unwrap_err();
        assert!(
            problems[0].message.contains("resolves differently"),
            "{problems}"
        );
        let skip = CheckOptions::default().skip_opset_compatibility_check(true);
        assert!(check_function(&f, &PartContext::new(8, [("", 21)]).options(skip)).is_ok());
        // A function output may not reassign an outer name.
        assert!(check_function(&f, &PartContext::new(8, [("", 13)]).outer_names(["b"])).is_err());
    }

    #[test]
    fn tensors_and_value_infos() {
        let short = TensorProto::from_raw("t", DataType::Float, vec![2], vec![0u8; 4]);
        assert!(check_tensor(&short, &ctx()).is_err());
        let ok = TensorProto::from_raw("t", DataType::Float, vec![1], vec![0u8; 4]);
        assert!(check_tensor(&ok, &ctx()).is_ok());
        let untyped = ValueInfoProto {
            name: Some("v".into()),
            ..ValueInfoProto::default()
        };
        let problems = check_value_info(&untyped, &ctx()).unwrap_err();
        assert_eq!(problems[0].to_string(), "value_info: the type is missing");
        let empty = SparseTensorProto::default();
        assert!(check_sparse_tensor(&empty, &ctx()).is_err());
    }
}
