//! Shape inference, the checker, the version converter, the inliner and
//! `expand_out_dim` on hostile variants of the backend node-test models: every integer
//! attribute, every dimension of the inputs, and every integer constant replaced by
//! extreme values (`i64::MAX`,
//! `i64::MIN`, `-1`, `0`, a huge positive), float attributes by NaN and infinities;
//! nodes with missing, empty or extra inputs; inputs of another element type or rank.
//! Each must return (a result or an error), never panic, in every mode.

mod onnx_support;

use onnx_light::checker::{check_model_with, CheckOptions};
use onnx_light::compose::expand_out_dim;
use onnx_light::inline::inline_local_functions;
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::shape::{infer_shapes, InferOptions};
use onnx_light::version_converter::convert_version;

use onnx_support::corpus::corpus_models;

const INTS: [i64; 5] = [i64::MAX, i64::MIN, -1, 0, 1 << 40];
const FLOATS: [f32; 3] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];

fn each_graph(g: &mut GraphProto<'_>, f: &mut dyn FnMut(&mut GraphProto<'_>)) {
    f(g);
    for n in &mut g.node {
        for a in &mut n.attribute {
            if let Some(sub) = a.g.as_deref_mut() {
                each_graph(sub, f);
            }
            for sub in &mut a.graphs {
                each_graph(sub, f);
            }
        }
    }
}

/// The model with `v` in every integer attribute (and list element), every input
/// dimension and every integer constant's values.
fn with_ints(m: &Model, v: i64) -> Model {
    let mut out = m.clone();
    if let Some(g) = out.graph.as_mut() {
        each_graph(g, &mut |g| {
            for n in &mut g.node {
                for a in &mut n.attribute {
                    if a.i.is_some() {
                        a.i = Some(v);
                    }
                    for x in &mut a.ints {
                        *x = v;
                    }
                    if let Some(t) = a.t.as_mut() {
                        set_int_tensor(t, v);
                    }
                }
            }
            for t in &mut g.initializer {
                set_int_tensor(t, v);
            }
            for vi in &mut g.input {
                let shape = match vi.r#type.as_mut().and_then(|t| t.value.as_mut()) {
                    Some(TypeValue::TensorType(t)) => t.shape.as_mut(),
                    _ => None,
                };
                if let Some(shape) = shape {
                    for d in &mut shape.dim {
                        if d.as_value().is_some() {
                            *d = Dimension::value(v);
                        }
                    }
                }
            }
        });
    }
    out
}

fn set_int_tensor(t: &mut TensorProto<'_>, v: i64) {
    match t.elem_type() {
        Some(DataType::Int64) => {
            let n = t.element_count().unwrap_or(0).min(1 << 16) as usize;
            let values = vec![v; n];
            *t = TensorProto::from_raw(
                t.name().to_string(),
                DataType::Int64,
                t.dims.clone(),
                values
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
        }
        Some(DataType::Int32) => {
            let n = t.element_count().unwrap_or(0).min(1 << 16) as usize;
            let x = v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            *t = TensorProto::from_raw(
                t.name().to_string(),
                DataType::Int32,
                t.dims.clone(),
                vec![x; n]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
        }
        _ => {}
    }
}

/// The model with `f` applied to every node (subgraphs included).
fn with_nodes(m: &Model, f: &dyn Fn(&mut NodeProto<'_>)) -> Model {
    let mut out = m.clone();
    if let Some(g) = out.graph.as_mut() {
        each_graph(g, &mut |g| g.node.iter_mut().for_each(f));
    }
    out
}

/// The model with `v` in every float attribute (and list element).
fn with_floats(m: &Model, v: f32) -> Model {
    with_nodes(m, &|n| {
        for a in &mut n.attribute {
            a.f = a.f.map(|_| v);
            a.floats.iter_mut().for_each(|x| *x = v);
        }
    })
}

/// The model with `f` applied to the tensor type of every graph input.
fn with_input_types(m: &Model, f: &dyn Fn(&mut TypeProtoTensor<'_>)) -> Model {
    let mut out = m.clone();
    if let Some(g) = out.graph.as_mut() {
        for vi in &mut g.input {
            if let Some(TypeValue::TensorType(t)) =
                vi.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                f(t);
            }
        }
    }
    out
}

#[test]
fn hostile_values_never_panic_inference_the_checker_or_the_converter() {
    let mut panics = Vec::new();
    let mut runs = 0usize;
    for (_, name, model) in corpus_models() {
        let mut variants: Vec<(String, Model)> = INTS
            .iter()
            .map(|&v| (format!("ints={v}"), with_ints(&model, v)))
            .collect();
        variants.extend(
            FLOATS
                .iter()
                .map(|&v| (format!("floats={v}"), with_floats(&model, v))),
        );
        // Structure an exporter would not write: missing, empty and extra inputs,
        // inputs of another element type or rank.
        variants.push((
            "first input only".into(),
            with_nodes(&model, &|n| n.input.truncate(1)),
        ));
        variants.push(("no inputs".into(), with_nodes(&model, &|n| n.input.clear())));
        variants.push((
            "inputs named empty".into(),
            with_nodes(&model, &|n| n.input.iter_mut().for_each(|i| *i = "".into())),
        ));
        variants.push((
            "an extra input".into(),
            with_nodes(&model, &|n| {
                let first = n.input.first().cloned().unwrap_or_default();
                n.input.push(first);
            }),
        ));
        variants.push((
            "string inputs".into(),
            with_input_types(&model, &|t| {
                t.elem_type_raw = Some(DataType::String.to_i32())
            }),
        ));
        variants.push((
            "scalar inputs".into(),
            with_input_types(&model, &|t| t.shape = Some(TensorShapeProto::default())),
        ));
        for &at in &INTS {
            let mut expanded = model.clone();
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                expand_out_dim(&mut expanded, at);
            }));
            if let Err(p) = run {
                panics.push(format!("{name} expand_out_dim({at}): {}", why(&p)));
            }
        }
        for (what, m) in variants {
            for (strict, check_type, data_prop) in [
                (false, false, false),
                (true, true, false),
                (false, false, true),
                (true, true, true),
            ] {
                let options = InferOptions::default()
                    .strict_mode(strict)
                    .check_type(check_type)
                    .data_prop(data_prop);
                let mut ours = m.clone();
                runs += 1;
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = infer_shapes(&mut ours, &options);
                }));
                if let Err(p) = run {
                    panics.push(format!(
                        "{name} {what} infer {strict}/{data_prop}: {}",
                        why(&p)
                    ));
                }
            }
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = check_model_with(&m, &CheckOptions::default());
            }));
            if let Err(p) = run {
                panics.push(format!("{name} {what} check: {}", why(&p)));
            }
            for convert in [false, true] {
                let mut inlined = m.clone();
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = inline_local_functions(&mut inlined, convert);
                }));
                if let Err(p) = run {
                    panics.push(format!("{name} {what} inline ({convert}): {}", why(&p)));
                }
            }
            for target in [1, 7, 13, 18, 21, 25] {
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = convert_version(&m, target);
                }));
                if let Err(p) = run {
                    panics.push(format!("{name} {what} convert to {target}: {}", why(&p)));
                }
            }
        }
    }
    println!("{runs} inference runs; {} panics", panics.len());
    for p in &panics {
        println!("PANIC {p}");
    }
    assert!(runs > 10_000, "only {runs} runs");
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn why(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
