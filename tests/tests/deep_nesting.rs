//! Models nested far deeper than any load accepts, built with the Rust API: the walks
//! that recurse through them (sizing and encoding, saving, printing, checking) refuse
//! them with `RecursionLimitExceeded` instead of overflowing the stack, and a model
//! nested as deep as an encoder takes still encodes and loads back.

use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{text, ErrorKind, IntoOwned, Reborrow, MAX_ENCODE_DEPTH};
use onnx_light_tests::scratch::Scratch;
use std::mem::ManuallyDrop;

/// A model whose graph holds `levels` `If` subgraphs, each inside the previous: three
/// levels of messages (graph, node, attribute) per `If`.
fn nested(levels: usize) -> Model {
    nested_around(levels, "g0")
}

/// [`nested`] with the innermost graph called `innermost`.
fn nested_around(levels: usize, innermost: &str) -> Model {
    let mut g = GraphProto::named(innermost.to_string());
    for i in 0..levels {
        let node = NodeProto::new("If", ["c"], ["y"])
            .with_attribute(AttributeProto::graph("then_branch", g));
        g = GraphProto::named(format!("g{}", i + 1));
        g.node.push(node);
    }
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

/// Runs `f` on a thread with the stack of a program's main thread (8 MiB).
fn on_main_sized_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn assert_too_deep<T: std::fmt::Debug>(r: onnx_light::Result<T>, limit: u32, what: &str) {
    match r {
        Err(e) => assert_eq!(
            e.kind(),
            &ErrorKind::RecursionLimitExceeded { limit },
            "{what}: {e}"
        ),
        Ok(v) => panic!("{what}: {v:?}"),
    }
}

#[test]
fn models_nested_past_the_encoder_limit_are_refused_by_every_recursive_walk() {
    on_main_sized_stack(|| {
        let dir = Scratch::new("deep");
        // 30,000 levels of messages: an encoder recursing through them would need
        // far more stack than 8 MiB.
        let model = nested(10_000);
        assert_too_deep(model.encode_to_vec(), MAX_ENCODE_DEPTH, "encode_to_vec");
        let mut sink = Vec::new();
        assert_too_deep(model.encode(&mut sink), MAX_ENCODE_DEPTH, "encode");
        assert!(sink.is_empty(), "nothing is written");
        assert_too_deep(
            io::save_to_vec(&model, &SerializeOptions::default()),
            MAX_ENCODE_DEPTH,
            "save_to_vec",
        );
        let path = dir.path("deep.onnx");
        assert_too_deep(
            io::save(&model, &path, &SerializeOptions::default()),
            MAX_ENCODE_DEPTH,
            "save",
        );
        assert!(dir.entries().is_empty(), "{:?}", dir.entries());
        assert_too_deep(text::to_text(&model), 100, "to_text");
        assert!(onnx_light::checker::check_model(&model).is_err());
        // Dropping it recurses too; keep that out of this test's stack budget.
        std::mem::forget(model);
    });
}

#[test]
fn a_model_nested_as_deep_as_an_encoder_takes_saves_and_loads_back() {
    on_main_sized_stack(|| {
        // The graph one level below the model, then three levels per `If`: as deep as
        // the encoder's limit allows.
        let levels = (MAX_ENCODE_DEPTH as usize - 1) / 3;
        let model = nested(levels);
        let bytes = model.encode_to_vec().unwrap();
        let options = ParseOptions::default().recursion_limit(MAX_ENCODE_DEPTH);
        let back = io::load_from_bytes(&bytes, &options).unwrap();
        assert!(back == model);
        let dir = Scratch::new("deep_at_limit");
        let path = dir.path("deep.onnx");
        io::save(&model, &path, &SerializeOptions::default()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        // One level more is refused.
        assert_too_deep(
            nested(levels + 1).encode_to_vec(),
            MAX_ENCODE_DEPTH,
            "one more",
        );
    });
}

/// A type of `levels` sequences, each of the next: `seq(seq(...(tensor(float))))`.
fn nested_type(levels: usize) -> TypeProto<'static> {
    let mut t = TypeProto::tensor(DataType::Float, None);
    for _ in 0..levels {
        t = TypeProto {
            value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
                elem_type: Some(Box::new(t)),
                ..Default::default()
            }))),
            ..Default::default()
        };
    }
    t
}

/// Counts what `Debug` writes without keeping it.
#[derive(Default)]
struct Count(usize);

impl std::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

#[test]
fn models_and_types_built_by_hand_at_any_depth_clone_compare_and_print() {
    // Dropping still recurses (docs/design/deep-models.md): every deep value is kept
    // from being dropped, also when an assertion fails.
    // A thread with a small stack: each walk continues on heap-allocated stack
    // segments as it goes deeper.
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let model = ManuallyDrop::new(nested(50_000));
            let copy = ManuallyDrop::new((*model).clone());
            assert!(*copy == *model);
            // Only the innermost graph's name differs: equality walks all the way down.
            let other = ManuallyDrop::new(nested_around(50_000, "changed"));
            assert!(*other != *model);
            let mut printed = Count::default();
            std::fmt::write(&mut printed, format_args!("{:?}", *model)).unwrap();
            assert!(printed.0 > 50_000 * 20, "{}", printed.0);

            let t = ManuallyDrop::new(nested_type(200_000));
            let (copy, shorter) = (
                ManuallyDrop::new((*t).clone()),
                ManuallyDrop::new(nested_type(199_999)),
            );
            assert!(*copy == *t && *t != *shorter);
            let mut printed = Count::default();
            std::fmt::write(&mut printed, format_args!("{:?}", *t)).unwrap();
            assert!(printed.0 > 200_000 * 10, "{}", printed.0);
            let inner = nested_type(0).to_string();
            let notation = t.to_string();
            assert!(notation.starts_with("seq(seq("), "{}", &notation[..20]);
            assert_eq!(notation.find(&inner), Some(200_000 * "seq(".len()));
            assert!(notation.ends_with(")))"));
            assert_eq!(notation.len(), 200_000 * 5 + inner.len());
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn borrowed_models_built_by_hand_at_any_depth_convert_and_visit_their_tensors() {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            // The innermost graph holds an initializer with a borrowed name.
            let name = String::from("w");
            let mut model = ManuallyDrop::new(nested(50_000));
            let mut g = model.graph.as_mut().unwrap();
            while let Some(inner) = g.node.first_mut().map(|n| &mut n.attribute[0]) {
                g = inner.g.as_deref_mut().unwrap();
            }
            let mut w = TensorProto::from_raw("", DataType::Uint8, [1], vec![7u8]);
            w.name = Some(name.as_str().into());
            g.initializer.push(w);
            let view = ManuallyDrop::new(model.reborrow());
            let mut seen = Vec::new();
            view.visit_tensors(|_, t| seen.push(t.name().to_string()));
            assert_eq!(seen, ["w"]);
            let owned = ManuallyDrop::new((*view).clone().into_owned());
            assert!(*owned == *model);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn shape_inference_walks_graphs_and_types_nested_at_any_depth() {
    use onnx_light::shape::{infer_shapes, InferOptions};
    on_main_sized_stack(|| {
        // 10,000 `If` levels, each with only a then-branch: every level is walked
        // before its node fails (no else-branch), which lax mode skips.
        let mut model = nested(10_000);
        infer_shapes(&mut model, &InferOptions::default()).unwrap();
        // Strict mode: each level's error quotes the next (cut, not 10,000 deep).
        let e = infer_shapes(&mut model, &InferOptions::default().strict_mode(true));
        let message = e.unwrap_err().to_string();
        assert!(message.contains("Inference error(s)"), "{message}");
        assert!(message.len() < 8192, "{} bytes", message.len());
        std::mem::forget(model);
        // A value typed 20,000 sequences deep, passed through Identity and declared.
        let deep = nested_type(20_000);
        let mut g = GraphProto::named("g");
        g.input.push(ValueInfoProto {
            name: Some("x".into()),
            r#type: Some(deep.clone()),
            ..Default::default()
        });
        g.node.push(NodeProto::new("Identity", ["x"], ["y"]));
        g.output.push(ValueInfoProto {
            name: Some("y".into()),
            r#type: Some(deep),
            ..Default::default()
        });
        let mut model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
        let full = InferOptions::default().strict_mode(true).check_type(true);
        // The check refuses a type nested past what onnx can name; nothing overflows.
        let _ = infer_shapes(&mut model, &full);
        infer_shapes(&mut model, &InferOptions::default().strict_mode(true)).unwrap();
        std::mem::forget(model);
    });
}
