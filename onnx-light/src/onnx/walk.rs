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

// The traversal is written once and instantiated for shared and mutable references.
macro_rules! walker {
    ($graph:ident, $node:ident, $attr:ident, $sparse:ident, $func:ident, $model:ident,
     [$($m:tt)*], $iter:ident, $as_ref:ident, $as_deref:ident) => {
        fn $sparse<'s, 'a>(
            s: &'s $($m)* SparseTensorProto<'a>,
            site: TensorSite,
            f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>),
        ) {
            if let Some(t) = s.values.$as_ref() {
                f(site, t);
            }
            if let Some(t) = s.indices.$as_ref() {
                f(site, t);
            }
        }

        fn $attr<'s, 'a>(a: &'s $($m)* AttributeProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>)) {
            if let Some(t) = a.t.$as_deref() {
                f(TensorSite::Attribute, t);
            }
            for t in a.tensors.$iter() {
                f(TensorSite::Attribute, t);
            }
            if let Some(s) = a.sparse_tensor.$as_deref() {
                $sparse(s, TensorSite::SparseAttribute, f);
            }
            for s in a.sparse_tensors.$iter() {
                $sparse(s, TensorSite::SparseAttribute, f);
            }
            if let Some(g) = a.g.$as_deref() {
                $graph(g, f);
            }
            for g in a.graphs.$iter() {
                $graph(g, f);
            }
        }

        fn $node<'s, 'a>(n: &'s $($m)* NodeProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>)) {
            for a in n.attribute.$iter() {
                $attr(a, f);
            }
        }

        fn $graph<'s, 'a>(g: &'s $($m)* GraphProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>)) {
            for t in g.initializer.$iter() {
                f(TensorSite::Initializer, t);
            }
            for s in g.sparse_initializer.$iter() {
                $sparse(s, TensorSite::SparseInitializer, f);
            }
            for n in g.node.$iter() {
                $node(n, f);
            }
        }

        fn $func<'s, 'a>(func: &'s $($m)* FunctionProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>)) {
            for a in func.attribute_proto.$iter() {
                $attr(a, f);
            }
            for n in func.node.$iter() {
                $node(n, f);
            }
        }

        fn $model<'s, 'a>(m: &'s $($m)* ModelProto<'a>, f: &mut dyn FnMut(TensorSite, &'s $($m)* TensorProto<'a>)) {
            if let Some(g) = m.graph.$as_ref() {
                $graph(g, f);
            }
            for t in m.training_info.$iter() {
                if let Some(g) = t.initialization.$as_ref() {
                    $graph(g, f);
                }
                if let Some(g) = t.algorithm.$as_ref() {
                    $graph(g, f);
                }
            }
            for func in m.functions.$iter() {
                $func(func, f);
            }
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
    /// Calls `f` on every tensor of the model, with where it sits.
    pub fn visit_tensors<'s>(&'s self, mut f: impl FnMut(TensorSite, &'s TensorProto<'a>)) {
        model_ref(self, &mut f);
    }

    /// Calls `f` on every tensor of the model, mutably.
    pub fn visit_tensors_mut(&mut self, mut f: impl FnMut(TensorSite, &mut TensorProto<'a>)) {
        model_mut(self, &mut f);
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
        graph_ref(self, &mut f);
    }

    /// Calls `f` on every tensor of the graph and its subgraphs, mutably.
    pub fn visit_tensors_mut(&mut self, mut f: impl FnMut(TensorSite, &mut TensorProto<'a>)) {
        graph_mut(self, &mut f);
    }
}
