//! Walking every tensor of a model: initializers, sparse initializers, attribute tensors
//! (`t`, `tensors`, `sparse_tensor`, `sparse_tensors`), subgraphs (`g`, `graphs`) at any
//! depth, training graphs and functions. External data, consolidation and statistics
//! all rely on this one traversal.

use super::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, SparseTensorProto,
    TensorProto,
};

/// Where a tensor sits in a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TensorSite {
    /// `GraphProto.initializer`.
    Initializer,
    /// `values` or `indices` of a `GraphProto.sparse_initializer`.
    SparseInitializer,
    /// `AttributeProto.t` or `AttributeProto.tensors` (e.g. `Constant` values).
    Attribute,
    /// `values` or `indices` of `AttributeProto.sparse_tensor(s)`.
    SparseAttribute,
}

// The traversal is written once and instantiated for shared and mutable references; a visit
// that returns an error stops it.
macro_rules! walker {
    ($graph:ident, $node:ident, $attr:ident, $sparse:ident, $func:ident, $model:ident,
     [$($m:tt)*], $iter:ident, $as_ref:ident, $as_deref:ident) => {
        fn $sparse<'s, 'a, E>(
            s: &'s $($m)* SparseTensorProto<'a>,
            site: TensorSite,
            f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>,
        ) -> Result<(), E> {
            if let Some(t) = s.values.$as_ref() {
                f(site, t)?;
            }
            if let Some(t) = s.indices.$as_ref() {
                f(site, t)?;
            }
            Ok(())
        }

        fn $attr<'s, 'a, E>(a: &'s $($m)* AttributeProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>) -> Result<(), E> {
            if let Some(t) = a.t.$as_deref() {
                f(TensorSite::Attribute, t)?;
            }
            for t in a.tensors.$iter() {
                f(TensorSite::Attribute, t)?;
            }
            if let Some(s) = a.sparse_tensor.$as_deref() {
                $sparse(s, TensorSite::SparseAttribute, f)?;
            }
            for s in a.sparse_tensors.$iter() {
                $sparse(s, TensorSite::SparseAttribute, f)?;
            }
            if let Some(g) = a.g.$as_deref() {
                $graph(g, f)?;
            }
            for g in a.graphs.$iter() {
                $graph(g, f)?;
            }
            Ok(())
        }

        fn $node<'s, 'a, E>(n: &'s $($m)* NodeProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>) -> Result<(), E> {
            for a in n.attribute.$iter() {
                $attr(a, f)?;
            }
            Ok(())
        }

        fn $graph<'s, 'a, E>(g: &'s $($m)* GraphProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>) -> Result<(), E> {
            // Each nested graph checks the stack left (`docs/design/deep-models.md`).
            super::deep::guarded(move || {
                for t in g.initializer.$iter() {
                    f(TensorSite::Initializer, t)?;
                }
                for s in g.sparse_initializer.$iter() {
                    $sparse(s, TensorSite::SparseInitializer, f)?;
                }
                for n in g.node.$iter() {
                    $node(n, f)?;
                }
                Ok(())
            })
        }

        fn $func<'s, 'a, E>(func: &'s $($m)* FunctionProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>) -> Result<(), E> {
            for a in func.attribute_proto.$iter() {
                $attr(a, f)?;
            }
            for n in func.node.$iter() {
                $node(n, f)?;
            }
            Ok(())
        }

        fn $model<'s, 'a, E>(m: &'s $($m)* ModelProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>) -> Result<(), E>) -> Result<(), E> {
            if let Some(g) = m.graph.$as_ref() {
                $graph(g, f)?;
            }
            for t in m.training_info.$iter() {
                if let Some(g) = t.initialization.$as_ref() {
                    $graph(g, f)?;
                }
                if let Some(g) = t.algorithm.$as_ref() {
                    $graph(g, f)?;
                }
            }
            for func in m.functions.$iter() {
                $func(func, f)?;
            }
            Ok(())
        }
    };
}

walker!(
    graph_ref,
    node_ref,
    attr_ref,
    sparse_ref,
    func_ref,
    model_ref,
    [],
    iter,
    as_ref,
    as_deref
);
walker!(graph_mut, node_mut, attr_mut, sparse_mut, func_mut, model_mut, [mut], iter_mut, as_mut, as_deref_mut);

impl<'a> ModelProto<'a> {
    /// Whether subgraphs (attributes `g` and `graphs`, in the graph, training graphs and
    /// functions) nest more than `limit` levels deep: checked without recursing, so that
    /// a model too deep for the recursive walks is refused before one starts. Visits
    /// nodes and attributes only.
    pub(crate) fn graphs_nest_deeper_than(&self, limit: usize) -> bool {
        let mut pending: Vec<(&[NodeProto<'a>], usize)> = Vec::new();
        if let Some(g) = &self.graph {
            pending.push((&g.node, 1));
        }
        for t in &self.training_info {
            for g in [&t.initialization, &t.algorithm].into_iter().flatten() {
                pending.push((&g.node, 1));
            }
        }
        for f in &self.functions {
            pending.push((&f.node, 1));
        }
        while let Some((nodes, depth)) = pending.pop() {
            if depth > limit {
                return true;
            }
            for a in nodes.iter().flat_map(|n| &n.attribute) {
                for g in a.g.as_deref().into_iter().chain(&a.graphs) {
                    pending.push((&g.node, depth + 1));
                }
            }
        }
        false
    }

    /// Calls `f` on every tensor of the model, with where it sits.
    pub fn visit_tensors<'s>(&'s self, mut f: impl FnMut(TensorSite, &'s TensorProto<'a>)) {
        infallible(model_ref(self, &mut |site, t| {
            f(site, t);
            Ok(())
        }));
    }

    /// Calls `f` on every tensor of the model until it returns an error, which is returned.
    pub fn try_visit_tensors<'s, E>(
        &'s self,
        mut f: impl FnMut(TensorSite, &'s TensorProto<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        model_ref(self, &mut f)
    }

    /// Calls `f` on every tensor of the model, mutably.
    pub fn visit_tensors_mut(&mut self, mut f: impl FnMut(TensorSite, &mut TensorProto<'a>)) {
        infallible(model_mut(self, &mut |site, t| {
            f(site, t);
            Ok(())
        }));
    }

    /// Calls `f` on every tensor of the model, mutably, until it returns an error, which is
    /// returned.
    pub fn try_visit_tensors_mut<E>(
        &mut self,
        mut f: impl FnMut(TensorSite, &mut TensorProto<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        model_mut(self, &mut f)
    }

    /// Every tensor of the model, in traversal order.
    pub fn tensors(&self) -> Vec<&TensorProto<'a>> {
        let mut out = Vec::new();
        self.visit_tensors(|_, t| out.push(t));
        out
    }
}

impl<'a> GraphProto<'a> {
    /// Calls `f` on every tensor of the graph and its subgraphs.
    pub fn visit_tensors<'s>(&'s self, mut f: impl FnMut(TensorSite, &'s TensorProto<'a>)) {
        infallible(graph_ref(self, &mut |site, t| {
            f(site, t);
            Ok(())
        }));
    }

    /// Calls `f` on every tensor of the graph and its subgraphs until it returns an error,
    /// which is returned.
    pub fn try_visit_tensors<'s, E>(
        &'s self,
        mut f: impl FnMut(TensorSite, &'s TensorProto<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        graph_ref(self, &mut f)
    }

    /// Calls `f` on every tensor of the graph and its subgraphs, mutably.
    pub fn visit_tensors_mut(&mut self, mut f: impl FnMut(TensorSite, &mut TensorProto<'a>)) {
        infallible(graph_mut(self, &mut |site, t| {
            f(site, t);
            Ok(())
        }));
    }
}

/// Unwraps the result of a walk whose visits cannot fail.
fn infallible(r: Result<(), std::convert::Infallible>) {
    match r {
        Ok(()) => {}
        Err(never) => match never {},
    }
}
