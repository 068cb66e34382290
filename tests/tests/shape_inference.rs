//! Shape inference against `onnx.shape_inference.infer_shapes` (the test venv's onnx),
//! byte for byte, on the backend node-test models whose operators onnx-light infers,
//! each in several variants: as shipped, with the graph outputs' types removed, with
//! their shapes removed, with integer inputs as constants, with float inputs as
//! constants too, as if written for older opsets (other operator versions, other rules,
//! or none), and with a node's last output dropped; lax, strict, strict with
//! `check_type`, and lax and strict with `data_prop`.
//!
//! Models using an operator without a rule here yet are left out (and counted): the
//! test grows as rules are added. Every model in reach must agree: the same model bytes,
//! or both refuse in strict mode. Generated models (`sequence_models.py`) add the edge
//! cases of the sequence and optional operators that the backend models do not reach.

mod onnx_support;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::shape::{infer_shapes, InferOptions};
use onnx_light_tests::python::{python_dir, run_python};
use onnx_light_tests::scratch::Scratch;

use onnx_support::corpus::corpus_models;
use onnx_support::first_diff;

/// The operators onnx-light has a rule for, by family: `Op` for `ai.onnx`, `domain:Op`
/// for another domain.
const RULES: &[&[&str]] = &[
    CORE,
    MODELS,
    ML,
    CONV_POOL_NORM,
    TENSOR_QUANT_SIGNAL,
    CONTROL_FLOW,
    BY_FUNCTION,
    SEQUENCE,
];

/// Operator versions `onnx` infers through their function bodies, or not at all.
const BY_FUNCTION: &[&str] = &["MeanVarianceNormalization", "GroupNormalization"];

/// The operators that run graphs: their graphs' nodes must be covered too.
const CONTROL_FLOW: &[&str] = &["If", "Loop", "Scan", "SequenceMap"];

/// Elementwise operators, shapes and indexing, reductions.
const CORE: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "Ceil",
    "Celu",
    "Cos",
    "Cosh",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "Mish",
    "Neg",
    "Not",
    "Reciprocal",
    "Relu",
    "Round",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "BitwiseNot",
    "IsNaN",
    "IsInf",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "PRelu",
    "Max",
    "Min",
    "Sum",
    "Mean",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "And",
    "Or",
    "Xor",
    "Where",
    "Cast",
    "CastLike",
    "Shape",
    "Size",
    "Transpose",
    "MatMul",
    "Constant",
    "Reshape",
    "Flatten",
    "Unsqueeze",
    "Squeeze",
    "Concat",
    "Gemm",
    "Gather",
    "ConstantOfShape",
    "Dropout",
    "ArgMax",
    "ArgMin",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "GlobalLpPool",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "Clip",
    "CumSum",
    "Trilu",
    "LRN",
    "InstanceNormalization",
    "LpNormalization",
    "ReverseSequence",
    "EyeLike",
    "NonZero",
    "Expand",
    "Tile",
    "Slice",
    "GatherElements",
    "ScatterElements",
    "ScatterND",
    "Scatter",
    "DepthToSpace",
    "SpaceToDepth",
    "TopK",
];

/// Losses, attention, recurrent layers, training.
const MODELS: &[&str] = &[
    "NegativeLogLikelihoodLoss",
    "SoftmaxCrossEntropyLoss",
    "Attention",
    "RNN",
    "GRU",
    "LSTM",
    "RotaryEmbedding",
    "LinearAttention",
    "CausalConvWithState",
    "ai.onnx.preview:FlexAttention",
    "ai.onnx.preview.training:Adagrad",
    "ai.onnx.preview.training:Momentum",
    "ai.onnx.preview.training:Adam",
    "ai.onnx.preview.training:Gradient",
];

/// The traditional machine learning domain.
const ML: &[&str] = &[
    "ai.onnx.ml:ArrayFeatureExtractor",
    "ai.onnx.ml:Binarizer",
    "ai.onnx.ml:CastMap",
    "ai.onnx.ml:CategoryMapper",
    "ai.onnx.ml:DictVectorizer",
    "ai.onnx.ml:FeatureVectorizer",
    "ai.onnx.ml:Imputer",
    "ai.onnx.ml:LabelEncoder",
    "ai.onnx.ml:LinearClassifier",
    "ai.onnx.ml:LinearRegressor",
    "ai.onnx.ml:Normalizer",
    "ai.onnx.ml:OneHotEncoder",
    "ai.onnx.ml:SVMClassifier",
    "ai.onnx.ml:SVMRegressor",
    "ai.onnx.ml:Scaler",
    "ai.onnx.ml:TreeEnsemble",
    "ai.onnx.ml:TreeEnsembleClassifier",
    "ai.onnx.ml:TreeEnsembleRegressor",
    "ai.onnx.ml:ZipMap",
];

/// Convolutions, poolings, normalizations, resizing and sampling.
const CONV_POOL_NORM: &[&str] = &[
    "Conv",
    "ConvTranspose",
    "ConvInteger",
    "QLinearConv",
    "DeformConv",
    "AveragePool",
    "MaxPool",
    "LpPool",
    "MaxUnpool",
    "BatchNormalization",
    "LayerNormalization",
    "RMSNormalization",
    "Resize",
    "Upsample",
    "GridSample",
    "Col2Im",
    "CenterCropPad",
    "AffineGrid",
    "RoiAlign",
    "MaxRoiPool",
];

/// Tensor making and splitting, quantization, random generators, signal and strings.
const TENSOR_QUANT_SIGNAL: &[&str] = &[
    "Range",
    "Split",
    "Pad",
    "QuantizeLinear",
    "DequantizeLinear",
    "DynamicQuantizeLinear",
    "CumProd",
    "BitCast",
    "NonMaxSuppression",
    "ImageDecoder",
    "Det",
    "QLinearMatMul",
    "MatMulInteger",
    "TfIdfVectorizer",
    "Unique",
    "StringSplit",
    "StringNormalizer",
    "DFT",
    "Einsum",
    "Compress",
    "OneHot",
    "GatherND",
    "TensorScatter",
    "StringConcat",
    "RegexFullMatch",
    "Swish",
    "HannWindow",
    "HammingWindow",
    "BlackmanWindow",
    "MelWeightMatrix",
    "STFT",
    "RandomUniform",
    "RandomNormal",
    "RandomUniformLike",
    "RandomNormalLike",
    "Bernoulli",
    "Multinomial",
];

/// Sequences and optionals.
const SEQUENCE: &[&str] = &[
    "SequenceEmpty",
    "SequenceConstruct",
    "SequenceInsert",
    "SequenceAt",
    "SequenceErase",
    "SequenceLength",
    "SplitToSequence",
    "ConcatFromSequence",
    "Optional",
    "OptionalHasElement",
    "OptionalGetElement",
];

/// Whether every node of `m` is covered, in its graphs and local functions too (a call
/// of a local function is).
fn covered(m: &Model) -> bool {
    let local: Vec<String> = m
        .functions
        .iter()
        .map(|f| format!("{}:{}", f.domain(), f.name()))
        .collect();
    let Some(g) = &m.graph else { return false };
    !g.node.is_empty()
        && nodes_covered(&g.node, &local)
        && m.functions.iter().all(|f| nodes_covered(&f.node, &local))
}

fn nodes_covered(nodes: &[NodeProto<'_>], local: &[String]) -> bool {
    nodes.iter().all(|n| {
        let name = match n.domain() {
            "" | "ai.onnx" => n.op_type().to_string(),
            d => format!("{d}:{}", n.op_type()),
        };
        (RULES.iter().any(|family| family.contains(&name.as_str()))
            || local.contains(&format!("{}:{}", n.domain(), n.op_type())))
            && n.attribute.iter().all(|a| {
                a.graphs.is_empty()
                    // Other operators' graphs (FlexAttention's) are not walked.
                    && a.g.as_deref().is_none_or(|g| {
                        !CONTROL_FLOW.contains(&n.op_type()) || nodes_covered(&g.node, local)
                    })
            })
    })
}

/// The model with its integer inputs (shapes, axes, indices) turned into initializers
/// holding the test's input data, as exporters write them: rules read such constants.
/// With `floats`, its float and double inputs of rank 0 or 1 (scales, bounds) too; the
/// model only when that makes a float initializer.
fn with_constant_inputs(m: &Model, test: &Path, floats: bool) -> Option<Model> {
    let mut out = m.clone();
    let g = out.graph.as_mut().unwrap();
    let mut changed = false;
    let mut made_float = false;
    let mut keep = Vec::new();
    for (i, input) in g.input.clone().into_iter().enumerate() {
        let data = fs::read(test.join("test_data_set_0").join(format!("input_{i}.pb"))).ok();
        let tensor = data.and_then(|d| TensorProto::decode_owned(&d).ok());
        match tensor {
            Some(mut t)
                if matches!(t.elem_type(), Some(DataType::Int64 | DataType::Int32))
                    && t.dims.iter().product::<i64>() <= 64 =>
            {
                t.name = Some(input.name().to_string().into());
                g.initializer.push(t);
                changed = true;
            }
            Some(mut t)
                if floats
                    && matches!(t.elem_type(), Some(DataType::Float | DataType::Double))
                    && t.dims.len() <= 1
                    && t.dims.iter().product::<i64>() <= 64 =>
            {
                t.name = Some(input.name().to_string().into());
                g.initializer.push(t);
                made_float = true;
            }
            _ => keep.push(input),
        }
    }
    g.input = keep;
    let wanted = if floats { made_float } else { changed };
    wanted.then_some(out)
}

/// The model as if written for older `ai.onnx` opsets (the versions real models use
/// most), where its operators had other rules, other schemas, or none.
fn at_older_opsets(m: &Model) -> Vec<(String, Model)> {
    let current = m
        .opset_import
        .iter()
        .find(|o| o.domain().is_empty() || o.domain() == "ai.onnx")
        .map(|o| o.version());
    let Some(current) = current else {
        return Vec::new();
    };
    OLDER_OPSETS
        .iter()
        .filter(|&&v| v < current)
        .map(|&v| {
            let mut old = m.clone();
            for o in &mut old.opset_import {
                if o.domain().is_empty() || o.domain() == "ai.onnx" {
                    o.version = Some(v);
                }
            }
            (format!("opset{v}"), old)
        })
        .collect()
}

/// The model with its first node of several outputs giving one fewer (the value
/// dropped from the graph's outputs too): rules must not type outputs a node lacks.
fn without_last_output(m: &Model) -> Option<(String, Model)> {
    let mut out = m.clone();
    let g = out.graph.as_mut().unwrap();
    let node = g.node.iter_mut().find(|n| n.output.len() > 1)?;
    let dropped = node.output.pop()?;
    g.output.retain(|o| o.name() != &*dropped);
    Some(("fewer-outputs".to_string(), out))
}

/// The model with every known dimension of its graph inputs made huge (`2^62 + d`, or
/// `i64::MAX`): dimension arithmetic must fail as `onnx`'s does ("Integer overflow ..."),
/// never wrap or panic.
fn with_huge_dimensions(m: &Model) -> Vec<(String, Model)> {
    let make = |f: &dyn Fn(i64) -> i64| {
        let mut huge = m.clone();
        let g = huge.graph.as_mut().unwrap();
        let inits: Vec<String> = g.initializer.iter().map(|t| t.name().to_string()).collect();
        let mut changed = false;
        for i in &mut g.input {
            if inits.iter().any(|n| n == i.name()) {
                continue;
            }
            if let Some(TypeValue::TensorType(t)) = i.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                for d in t.shape.iter_mut().flat_map(|s| s.dim.iter_mut()) {
                    if let Some(v) = d.as_value() {
                        *d = Dimension::value(f(v));
                        changed = true;
                    }
                }
            }
        }
        changed.then_some(huge)
    };
    let mut out = Vec::new();
    out.extend(make(&|v| (1 << 62) + v).map(|m| ("huge".to_string(), m)));
    out.extend(make(&|_| i64::MAX).map(|m| ("max".to_string(), m)));
    out
}

/// The older opsets [`at_older_opsets`] writes models for.
const OLDER_OPSETS: &[i64] = &[7, 9, 11, 13, 17];

/// The three variants of a model: as shipped, outputs untyped, outputs without shapes.
fn variants(m: &Model, prefix: &str) -> Vec<(String, Model)> {
    let mut untyped = m.clone();
    for o in &mut untyped.graph.as_mut().unwrap().output {
        o.r#type = None;
    }
    let mut shapeless = m.clone();
    for o in &mut shapeless.graph.as_mut().unwrap().output {
        if let Some(TypeValue::TensorType(t)) = o.r#type.as_mut().and_then(|t| t.value.as_mut()) {
            t.shape = None;
        }
    }
    [
        ("shipped", m.clone()),
        ("untyped", untyped),
        ("shapeless", shapeless),
    ]
    .into_iter()
    .map(|(v, m)| (format!("{prefix}{v}"), m))
    .collect()
}

/// The ways each case is inferred: name, `strict_mode`, `check_type`, `data_prop` (the
/// Python side runs onnx with the same options under the same names).
const MODES: [(&str, bool, bool, bool); 5] = [
    ("lax", false, false, false),
    ("strict", true, false, false),
    ("full", true, true, false),
    ("dataprop", false, false, true),
    ("strict-dataprop", true, false, true),
];

#[test]
fn inference_agrees_with_onnx_on_the_backend_models_it_covers() {
    let dir = Scratch::new("shape-inference");
    let mut skipped = Vec::new();
    let mut cases = Vec::new();
    for (test, name, model) in corpus_models() {
        if !covered(&model) {
            skipped.push(name);
            continue;
        }
        let mut all = variants(&model, "");
        if let Some(constant) = with_constant_inputs(&model, &test, false) {
            all.extend(variants(&constant, "constants-"));
        }
        if let Some(constant) = with_constant_inputs(&model, &test, true) {
            all.extend(variants(&constant, "float-constants-"));
        }
        all.extend(at_older_opsets(&model));
        all.extend(without_last_output(&model));
        all.extend(with_huge_dimensions(&model));
        cases.extend(write_cases(&dir, &name, all));
    }
    assert!(cases.len() > 300, "only {} cases", cases.len());
    skipped.sort();
    println!(
        "{} models left out (operators without a rule yet): {}",
        skipped.len(),
        skipped.join(", ")
    );
    assert_agreement(&dir, &cases);
}

/// The sequence and optional operators on the edge cases the backend models do not
/// reach (shapes to unite, constant split sizes, absent or wrong-kind inputs, declared
/// outputs in conflict, the opsets where they change), generated by
/// `sequence_models.py`.
#[test]
fn inference_agrees_with_onnx_on_generated_sequence_and_optional_models() {
    let dir = Scratch::new("shape-inference-sequences");
    let generated = dir.path("generated");
    run_python(
        &python_dir().join("sequence_models.py"),
        &[generated.as_os_str()],
    );
    let mut cases = Vec::new();
    for entry in fs::read_dir(&generated).unwrap() {
        let path = entry.unwrap().path();
        let model = Model::decode_owned(&fs::read(&path).unwrap()).unwrap();
        assert!(
            covered(&model),
            "{} has an operator without a rule",
            path.display()
        );
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        cases.extend(write_cases(&dir, &name, variants(&model, "")));
    }
    assert!(cases.len() > 1500, "only {} cases", cases.len());
    assert_agreement(&dir, &cases);
}

/// Writes each variant of the model `name` into `dir` as `NAME.VARIANT.onnx`; the
/// cases, by file stem.
fn write_cases(dir: &Scratch, name: &str, variants: Vec<(String, Model)>) -> Vec<(String, Model)> {
    variants
        .into_iter()
        .map(|(variant, m)| {
            let file = format!("{name}.{variant}");
            fs::write(
                dir.path(&format!("{file}.onnx")),
                m.encode_to_vec().unwrap(),
            )
            .unwrap();
            (file, m)
        })
        .collect()
}

/// Runs onnx's inference on the models written in `dir`, then ours on each case in
/// each mode (see [`MODES`]): every case must give the same model bytes, or both
/// refuse.
fn assert_agreement(dir: &Scratch, cases: &[(String, Model)]) {
    run_python(
        &python_dir().join("shape_inference.py"),
        &[OsStr::new(dir.path("").as_os_str())],
    );
    let mut failures = BTreeMap::new();
    for (file, m) in cases {
        for (mode, strict, check_type, data_prop) in MODES {
            let expected = dir.path(&format!("{file}.{mode}.expected"));
            let refused = dir.path(&format!("{file}.{mode}.error"));
            let mut ours = m.clone();
            let options = InferOptions::default()
                .strict_mode(strict)
                .check_type(check_type)
                .data_prop(data_prop);
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                infer_shapes(&mut ours, &options)
            }));
            let got = match run {
                Ok(got) => got,
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    failures.insert(format!("{file} ({mode})"), format!("panicked: {why}"));
                    continue;
                }
            };
            if data_prop && (file.ends_with(".huge") || file.ends_with(".max")) {
                // onnx runs out of memory on these; ours must merely return.
                continue;
            }
            let verdict = match (got, Path::new(&expected).exists()) {
                (Ok(()), true) => {
                    let want = fs::read(&expected).unwrap();
                    let have = ours.encode_to_vec().unwrap();
                    first_diff(&have, &want).map(|at| {
                        let theirs = Model::decode_owned(&want).unwrap();
                        let (a, b) = (entries(&ours), entries(&theirs));
                        match a.iter().zip(&b).position(|(x, y)| x != y) {
                            Some(i) => format!(
                                "differs at byte {at}, entry {i}: ours {} | onnx's {}",
                                a[i], b[i]
                            ),
                            None => format!(
                                "differs at byte {at}: ours {}\nonnx's {}",
                                describe(&ours),
                                describe(&theirs)
                            ),
                        }
                    })
                }
                // Both refuse (onnx's message is in the `.error` file).
                (Err(_), false) => None,
                (Ok(()), false) => Some(format!(
                    "onnx refused: {}",
                    fs::read_to_string(&refused).unwrap_or_default()
                )),
                (Err(e), true) => Some(format!("we refused: {e}")),
            };
            if let Some(v) = verdict {
                failures.insert(format!("{file} ({mode})"), v);
            }
        }
    }
    println!("{} cases compared", cases.len() * MODES.len());
    // Every disagreement's case, one line each (the assertion shows the first ones).
    for (k, v) in &failures {
        println!("DISAGREE {k}: {}", v.replace('\n', " | "));
    }
    assert!(
        failures.is_empty(),
        "{} of {} disagree:\n{}",
        failures.len(),
        cases.len() * MODES.len(),
        failures
            .iter()
            .take(20)
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The main graph's value_info and outputs, one `name: type` each.
fn entries(m: &Model) -> Vec<String> {
    let g = m.graph.as_ref().unwrap();
    g.value_info
        .iter()
        .chain(&g.output)
        .map(|vi| {
            let t = vi.r#type.as_ref().map(|t| t.to_string());
            format!("{}: {}", vi.name(), t.unwrap_or_default())
        })
        .collect()
}

/// The graph's value_info and outputs in ONNX notation, for failure reports.
fn describe(m: &Model) -> String {
    let g = m.graph.as_ref().unwrap();
    let list = |v: &[ValueInfoProto<'_>]| {
        v.iter()
            .map(|vi| {
                format!(
                    "{}: {}",
                    vi.name(),
                    vi.r#type
                        .as_ref()
                        .map(|t| t.to_string())
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "value_info [{}] outputs [{}]",
        list(&g.value_info),
        list(&g.output)
    )
}
