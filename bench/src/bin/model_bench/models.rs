//! The benchmark's models, generated in code (never committed).
//!
//! * **weight-heavy**: a 12-layer transformer-style graph (embedding tied to the output
//!   projection, layer norms, attention, MLP): 195 float32 initializers from 5 KB to
//!   102 MB (~1.0 GiB in all) plus two int64 shape constants; ~330 nodes.
//! * **structure-heavy**: ~200 000 nodes in blocks of convolution, normalisation,
//!   activation, reshaping and elementwise operators, each with a name and its
//!   attributes, `value_info` for most intermediate values, small initializers, and a few
//!   subgraphs (`If` branches and `Loop` bodies): ~20 MB.

use onnx_light::onnx::{
    AttributeProto, DataType, Dimension, GraphProto, Model, ModelProto, NodeProto,
    OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use onnx_light::prelude::Bytes;

/// Deterministic pseudo-random float32 weights in ±[2^-7, 2^-6), as little-endian bytes.
fn weights(len_floats: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0u8; len_floats * 4];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in out.chunks_exact_mut(8) {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let a = 0x3C00_0000u32 | (r as u32 & 0x807F_FFFF);
        let b = 0x3C00_0000u32 | ((r >> 32) as u32 & 0x807F_FFFF);
        chunk[..4].copy_from_slice(&a.to_le_bytes());
        chunk[4..].copy_from_slice(&b.to_le_bytes());
    }
    if len_floats % 2 == 1 {
        let n = out.len();
        out[n - 4..].copy_from_slice(&0x3C00_0000u32.to_le_bytes());
    }
    out
}

fn float_tensor(name: &str, dims: &[i64], seed: u64) -> TensorProto<'static> {
    let n: i64 = dims.iter().product();
    TensorProto::from_raw(
        name.to_string(),
        DataType::Float,
        dims.to_vec(),
        weights(n as usize, seed),
    )
}

fn int64_tensor(name: &str, values: &[i64]) -> TensorProto<'static> {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    TensorProto::from_raw(
        name.to_string(),
        DataType::Int64,
        vec![values.len() as i64],
        raw,
    )
}

fn value(name: &str, elem: DataType, dims: &[Dimension<'static>]) -> ValueInfoProto<'static> {
    ValueInfoProto {
        name: Some(name.to_string().into()),
        r#type: Some(TypeProto::tensor(
            elem,
            Some(TensorShapeProto {
                dim: dims.to_vec(),
                ..TensorShapeProto::default()
            }),
        )),
        ..ValueInfoProto::default()
    }
}

fn node(op: &str, name: String, inputs: &[&str], outputs: &[&str]) -> NodeProto<'static> {
    NodeProto::new(
        op.to_string(),
        inputs.iter().map(|s| s.to_string()),
        outputs.iter().map(|s| s.to_string()),
    )
    .with_name(name)
}

/// Shape of the weight-heavy model: `hidden` = model width (1280 for ~1 GiB; 320 gives
/// the same graph with 1/16 of the weight bytes).
pub fn weight_heavy(hidden: i64) -> Model {
    let layers = 12;
    let h = hidden;
    let ff = 4 * h;
    let vocab = 20_000;
    let heads = 20;
    let mut g = GraphProto::named("weight_heavy_transformer");
    let mut seed = 1u64;
    let mut next_seed = || {
        seed += 1;
        seed
    };
    g.initializer.push(float_tensor(
        "model.embed_tokens.weight",
        &[vocab, h],
        next_seed(),
    ));
    g.initializer
        .push(int64_tensor("shape.heads", &[1, -1, heads, h / heads]));
    g.initializer
        .push(int64_tensor("shape.hidden", &[1, -1, h]));
    g.input.push(value(
        "input_ids",
        DataType::Int64,
        &[Dimension::value(1), Dimension::param("seq")],
    ));
    g.node.push(node(
        "Gather",
        "/model/embed_tokens/Gather".into(),
        &["model.embed_tokens.weight", "input_ids"],
        &["h0"],
    ));
    let mut x = "h0".to_string();
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        let t = |s: &str| format!("/model/layers.{l}/{s}");
        let ln = |g: &mut GraphProto<'static>, which: &str, input: &str, out: &str, seed: u64| {
            let w = format!("{p}.{which}.weight");
            let b = format!("{p}.{which}.bias");
            g.initializer.push(float_tensor(&w, &[h], seed));
            g.initializer.push(float_tensor(&b, &[h], seed + 1000));
            g.node.push(
                node(
                    "LayerNormalization",
                    t(&format!("{which}/LayerNormalization")),
                    &[input, &w, &b],
                    &[out],
                )
                .with_attribute(AttributeProto::int("axis", -1))
                .with_attribute(AttributeProto::float("epsilon", 1e-5)),
            );
        };
        let linear = |g: &mut GraphProto<'static>,
                      which: &str,
                      input: &str,
                      out: &str,
                      k: i64,
                      n: i64,
                      seed: u64| {
            let w = format!("{p}.{which}.weight");
            let b = format!("{p}.{which}.bias");
            g.initializer.push(float_tensor(&w, &[k, n], seed));
            g.initializer.push(float_tensor(&b, &[n], seed + 1000));
            let mm = format!("{out}_mm");
            g.node.push(node(
                "MatMul",
                t(&format!("{which}/MatMul")),
                &[input, &w],
                &[&mm],
            ));
            g.node
                .push(node("Add", t(&format!("{which}/Add")), &[&mm, &b], &[out]));
        };
        let ln1 = format!("{p}.ln1");
        ln(&mut g, "input_layernorm", &x, &ln1, next_seed());
        let mut heads_t = Vec::new();
        for (which, perm) in [
            ("q_proj", [0i64, 2, 1, 3]),
            ("k_proj", [0, 2, 3, 1]),
            ("v_proj", [0, 2, 1, 3]),
        ] {
            let out = format!("{p}.{which}");
            linear(
                &mut g,
                &format!("self_attn.{which}"),
                &ln1,
                &out,
                h,
                h,
                next_seed(),
            );
            let r = format!("{out}_r");
            g.node.push(node(
                "Reshape",
                t(&format!("self_attn/{which}/Reshape")),
                &[&out, "shape.heads"],
                &[&r],
            ));
            let tt = format!("{out}_t");
            g.node.push(
                node(
                    "Transpose",
                    t(&format!("self_attn/{which}/Transpose")),
                    &[&r],
                    &[&tt],
                )
                .with_attribute(AttributeProto::ints("perm", perm.to_vec())),
            );
            heads_t.push(tt);
        }
        let scores = format!("{p}.scores");
        g.node.push(node(
            "MatMul",
            t("self_attn/QK/MatMul"),
            &[&heads_t[0], &heads_t[1]],
            &[&scores],
        ));
        let scaled = format!("{p}.scaled");
        g.node.push(node(
            "Mul",
            t("self_attn/Scale/Mul"),
            &[&scores, "attn_scale"],
            &[&scaled],
        ));
        let probs = format!("{p}.probs");
        g.node.push(
            node("Softmax", t("self_attn/Softmax"), &[&scaled], &[&probs])
                .with_attribute(AttributeProto::int("axis", -1)),
        );
        let ctx = format!("{p}.ctx");
        g.node.push(node(
            "MatMul",
            t("self_attn/PV/MatMul"),
            &[&probs, &heads_t[2]],
            &[&ctx],
        ));
        let ctx_t = format!("{p}.ctx_t");
        g.node.push(
            node(
                "Transpose",
                t("self_attn/ctx/Transpose"),
                &[&ctx],
                &[&ctx_t],
            )
            .with_attribute(AttributeProto::ints("perm", vec![0, 2, 1, 3])),
        );
        let ctx_r = format!("{p}.ctx_r");
        g.node.push(node(
            "Reshape",
            t("self_attn/ctx/Reshape"),
            &[&ctx_t, "shape.hidden"],
            &[&ctx_r],
        ));
        let o = format!("{p}.o_proj");
        linear(&mut g, "self_attn.o_proj", &ctx_r, &o, h, h, next_seed());
        let res1 = format!("{p}.res1");
        g.node
            .push(node("Add", t("residual1/Add"), &[&x, &o], &[&res1]));
        let ln2 = format!("{p}.ln2");
        ln(&mut g, "post_attention_layernorm", &res1, &ln2, next_seed());
        let up = format!("{p}.up");
        linear(&mut g, "mlp.up_proj", &ln2, &up, h, ff, next_seed());
        let act = format!("{p}.act");
        g.node.push(
            node("Gelu", t("mlp/Gelu"), &[&up], &[&act])
                .with_attribute(AttributeProto::string("approximate", b"tanh".to_vec())),
        );
        let down = format!("{p}.down");
        linear(&mut g, "mlp.down_proj", &act, &down, ff, h, next_seed());
        let out = format!("{p}.out");
        g.node
            .push(node("Add", t("residual2/Add"), &[&res1, &down], &[&out]));
        x = out;
    }
    g.initializer
        .push(float_tensor("model.norm.weight", &[h], next_seed()));
    g.initializer
        .push(float_tensor("model.norm.bias", &[h], next_seed()));
    let mut scale = float_tensor("attn_scale", &[], 0);
    scale.raw_data = Some(Bytes::from(
        (1.0f32 / ((h / heads) as f32).sqrt())
            .to_le_bytes()
            .to_vec(),
    ));
    g.initializer.push(scale);
    g.node.push(
        node(
            "LayerNormalization",
            "/model/norm/LayerNormalization".into(),
            &[&x, "model.norm.weight", "model.norm.bias"],
            &["hf"],
        )
        .with_attribute(AttributeProto::int("axis", -1))
        .with_attribute(AttributeProto::float("epsilon", 1e-5)),
    );
    g.node.push(
        node(
            "Transpose",
            "/lm_head/Transpose".into(),
            &["model.embed_tokens.weight"],
            &["embed_t"],
        )
        .with_attribute(AttributeProto::ints("perm", vec![1, 0])),
    );
    g.node.push(node(
        "MatMul",
        "/lm_head/MatMul".into(),
        &["hf", "embed_t"],
        &["logits"],
    ));
    g.output.push(value(
        "logits",
        DataType::Float,
        &[
            Dimension::value(1),
            Dimension::param("seq"),
            Dimension::value(vocab),
        ],
    ));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("onnx-light model-bench".into());
    m.producer_version = Some("0.1".into());
    m
}

/// A small graph for an `If` branch or a `Loop` body: `nodes` elementwise and shape
/// operators with names, attributes and value_info.
fn subgraph(name: &str, nodes: usize, input: &str, output: &str) -> GraphProto<'static> {
    let mut g = GraphProto::named(name.to_string());
    let mut prev = input.to_string();
    for i in 0..nodes {
        let out = if i + 1 == nodes {
            output.to_string()
        } else {
            format!("{name}/v{i}")
        };
        let n = match i % 4 {
            0 => node("Relu", format!("{name}/Relu_{i}"), &[&prev], &[&out]),
            1 => node("Mul", format!("{name}/Mul_{i}"), &[&prev, &prev], &[&out]),
            2 => node(
                "LeakyRelu",
                format!("{name}/LeakyRelu_{i}"),
                &[&prev],
                &[&out],
            )
            .with_attribute(AttributeProto::float("alpha", 0.01)),
            _ => node(
                "Transpose",
                format!("{name}/Transpose_{i}"),
                &[&prev],
                &[&out],
            )
            .with_attribute(AttributeProto::ints("perm", vec![0, 1, 3, 2])),
        };
        g.node.push(n);
        if i % 2 == 0 {
            g.value_info
                .push(value(&out, DataType::Float, &dims4(1, 64, 28, 28)));
        }
        prev = out;
    }
    g.output
        .push(value(output, DataType::Float, &dims4(1, 64, 28, 28)));
    g
}

/// `[a, b, c, d]`, with `a == 0` meaning the symbolic batch size `N`.
fn dims4(a: i64, b: i64, c: i64, d: i64) -> Vec<Dimension<'static>> {
    let first = if a == 0 {
        Dimension::param("N")
    } else {
        Dimension::value(a)
    };
    vec![
        first,
        Dimension::value(b),
        Dimension::value(c),
        Dimension::value(d),
    ]
}

/// The structure-heavy model: `blocks` blocks of 20 operators (~200 000 nodes for 10 000
/// blocks), plus `If` and `Loop` nodes whose subgraphs hold a few thousand more.
pub fn structure_heavy(blocks: usize) -> Model {
    let mut g = GraphProto::named("structure_heavy");
    g.input
        .push(value("input", DataType::Float, &dims4(0, 64, 28, 28)));
    let mut x = "input".to_string();
    for b in 0..blocks {
        let s = format!("b{b}");
        let o = |k: &str| format!("{s}/{k}");
        // Conv + bias initializers are tiny (structure is what this model is about).
        let w = o("conv.w");
        let bias = o("conv.b");
        if b % 8 == 0 {
            g.initializer
                .push(float_tensor(&w, &[64, 1, 3, 3], b as u64));
            g.initializer.push(float_tensor(&bias, &[64], b as u64 + 7));
        } else {
            g.input
                .push(value(&w, DataType::Float, &dims4(64, 1, 3, 3)));
        }
        let conv = o("conv");
        let conv_inputs: Vec<&str> = if b % 8 == 0 {
            vec![&x, &w, &bias]
        } else {
            vec![&x, &w]
        };
        g.node.push(
            node("Conv", o("Conv"), &conv_inputs, &[&conv])
                .with_attribute(AttributeProto::ints("kernel_shape", vec![3, 3]))
                .with_attribute(AttributeProto::ints("strides", vec![1, 1]))
                .with_attribute(AttributeProto::ints("pads", vec![1, 1, 1, 1]))
                .with_attribute(AttributeProto::ints("dilations", vec![1, 1]))
                .with_attribute(AttributeProto::int("group", 64)),
        );
        let bn = o("bn");
        g.node.push(
            node(
                "BatchNormalization",
                o("BatchNormalization"),
                &[&conv, "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                &[&bn],
            )
            .with_attribute(AttributeProto::float("epsilon", 1e-5))
            .with_attribute(AttributeProto::float("momentum", 0.9)),
        );
        let relu = o("relu");
        g.node.push(node("Relu", o("Relu"), &[&bn], &[&relu]));
        let cast = o("cast");
        g.node.push(
            node("Cast", o("Cast"), &[&relu], &[&cast])
                .with_attribute(AttributeProto::int("to", 1)),
        );
        let c = o("const");
        let ct = TensorProto {
            name: Some(o("const.value").into()),
            data_type: Some(1),
            dims: vec![4],
            float_data: vec![0.5, 1.0, 1.5, 2.0],
            ..TensorProto::default()
        };
        g.node.push(
            node("Constant", o("Constant"), &[], &[&c])
                .with_attribute(AttributeProto::tensor("value", ct)),
        );
        let mul = o("mul");
        g.node.push(node("Mul", o("Mul"), &[&cast, &c], &[&mul]));
        let add = o("add");
        g.node.push(node("Add", o("Add"), &[&mul, &x], &[&add]));
        let sh = o("shape");
        g.node.push(node("Shape", o("Shape"), &[&add], &[&sh]));
        let r = o("reshape");
        g.node.push(
            node("Reshape", o("Reshape"), &[&add, &sh], &[&r])
                .with_attribute(AttributeProto::int("allowzero", 0)),
        );
        let tr = o("transpose");
        g.node.push(
            node("Transpose", o("Transpose"), &[&r], &[&tr])
                .with_attribute(AttributeProto::ints("perm", vec![0, 1, 3, 2])),
        );
        let tr2 = o("transpose2");
        g.node.push(
            node("Transpose", o("Transpose_1"), &[&tr], &[&tr2])
                .with_attribute(AttributeProto::ints("perm", vec![0, 1, 3, 2])),
        );
        let lr = o("leaky");
        g.node.push(
            node("LeakyRelu", o("LeakyRelu"), &[&tr2], &[&lr])
                .with_attribute(AttributeProto::float("alpha", 0.1)),
        );
        let sg = o("sigmoid");
        g.node.push(node("Sigmoid", o("Sigmoid"), &[&lr], &[&sg]));
        let gate = o("gate");
        g.node.push(node("Mul", o("Mul_1"), &[&lr, &sg], &[&gate]));
        let rs = o("resize");
        g.node.push(
            node("Resize", o("Resize"), &[&gate, "", "resize.scales"], &[&rs])
                .with_attribute(AttributeProto::string("mode", b"nearest".to_vec()))
                .with_attribute(AttributeProto::string(
                    "coordinate_transformation_mode",
                    b"asymmetric".to_vec(),
                )),
        );
        let cat = o("concat");
        g.node.push(
            node("Concat", o("Concat"), &[&rs, &x], &[&cat])
                .with_attribute(AttributeProto::int("axis", 1)),
        );
        let sl = o("slice");
        g.node.push(node(
            "Slice",
            o("Slice"),
            &[&cat, "slice.starts", "slice.ends", "slice.axes"],
            &[&sl],
        ));
        let mx = o("max");
        g.node.push(node("Max", o("Max"), &[&sl, &x], &[&mx]));
        let sm = o("softmax");
        g.node.push(
            node("Softmax", o("Softmax"), &[&mx], &[&sm])
                .with_attribute(AttributeProto::int("axis", 1)),
        );
        let id = o("out");
        g.node.push(node("Identity", o("Identity"), &[&sm], &[&id]));
        for v in [&conv, &bn, &relu, &mul, &add, &tr2, &gate, &cat, &sl, &id] {
            g.value_info
                .push(value(v, DataType::Float, &dims4(0, 64, 28, 28)));
        }
        x = id;
        // A few subgraphs: an `If` every 2500 blocks, a `Loop` every 5000.
        if b % 2500 == 1250 {
            let out = format!("{s}/if_out");
            g.node.push(
                node("If", format!("{s}/If"), &["cond"], &[&out])
                    .with_attribute(AttributeProto::graph(
                        "then_branch",
                        subgraph(&format!("{s}/then"), 600, &x, &format!("{s}/then_out")),
                    ))
                    .with_attribute(AttributeProto::graph(
                        "else_branch",
                        subgraph(&format!("{s}/else"), 400, &x, &format!("{s}/else_out")),
                    )),
            );
            x = out;
        }
        if b % 5000 == 2500 {
            let out = format!("{s}/loop_out");
            let mut body = subgraph(&format!("{s}/body"), 1000, &x, &format!("{s}/body_out"));
            body.input.push(value("iter", DataType::Int64, &[]));
            body.input.push(value("cond_in", DataType::Bool, &[]));
            g.node.push(
                node(
                    "Loop",
                    format!("{s}/Loop"),
                    &["trip_count", "cond"],
                    &[&out],
                )
                .with_attribute(AttributeProto::graph("body", body)),
            );
            x = out;
        }
    }
    for (name, n) in [
        ("bn.scale", 64),
        ("bn.bias", 64),
        ("bn.mean", 64),
        ("bn.var", 64),
    ] {
        g.initializer.push(float_tensor(name, &[n], n as u64));
    }
    g.initializer.push(float_tensor("resize.scales", &[4], 3));
    g.initializer.push(int64_tensor("slice.starts", &[0]));
    g.initializer.push(int64_tensor("slice.ends", &[64]));
    g.initializer.push(int64_tensor("slice.axes", &[1]));
    g.input.push(value("cond", DataType::Bool, &[]));
    g.input.push(value("trip_count", DataType::Int64, &[]));
    g.output
        .push(value(&x, DataType::Float, &dims4(0, 64, 28, 28)));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("onnx-light model-bench".into());
    m
}

/// The sizes of a BERT encoder.
#[derive(Debug, Clone, Copy)]
pub struct BertConfig {
    pub layers: usize,
    pub hidden: i64,
    pub heads: i64,
    pub intermediate: i64,
    pub vocab: i64,
    pub max_positions: i64,
}

/// BERT-base (`bert-base-uncased`): 12 layers, width 768, 12 heads, 110 M parameters.
pub const BERT_BASE: BertConfig = BertConfig {
    layers: 12,
    hidden: 768,
    heads: 12,
    intermediate: 3072,
    vocab: 30_522,
    max_positions: 512,
};

/// Builds a graph the way `torch.onnx.export` lays it out: one node per operator,
/// values named `<node path>_output_0`, small constants as `Constant` nodes.
struct Exporter {
    g: GraphProto<'static>,
    seed: u64,
}

impl Exporter {
    /// Adds node `op` named `path` and returns the name of its (single) output.
    fn op(
        &mut self,
        op: &str,
        path: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto<'static>>,
    ) -> String {
        let out = format!("{path}_output_0");
        let mut n = node(op, path.to_string(), inputs, &[&out]);
        for a in attrs {
            n = n.with_attribute(a);
        }
        self.g.node.push(n);
        out
    }

    /// A `Constant` node holding `t`.
    fn constant(&mut self, path: &str, t: TensorProto<'static>) -> String {
        self.op(
            "Constant",
            path,
            &[],
            vec![AttributeProto::tensor("value", t)],
        )
    }

    fn int_constant(&mut self, path: &str, values: &[i64], scalar: bool) -> String {
        let mut t = int64_tensor("", values);
        if scalar {
            t.dims.clear();
        }
        t.name = None;
        self.constant(path, t)
    }

    fn float_constant(&mut self, path: &str, value: f32) -> String {
        let t = TensorProto::from_raw(
            String::new(),
            DataType::Float,
            Vec::<i64>::new(),
            value.to_le_bytes().to_vec(),
        );
        let mut t = t;
        t.name = None;
        self.constant(path, t)
    }

    /// A float32 initializer of pseudo-random weights.
    fn weight(&mut self, name: &str, dims: &[i64]) -> String {
        self.seed += 1;
        self.g.initializer.push(float_tensor(name, dims, self.seed));
        name.to_string()
    }

    /// `x @ W + b` for a `torch.nn.Linear` of `k` inputs and `n` outputs.
    fn linear(&mut self, path: &str, param: &str, x: &str, k: i64, n: i64) -> String {
        let w = self.weight(&format!("{param}.weight"), &[k, n]);
        let b = self.weight(&format!("{param}.bias"), &[n]);
        let mm = self.op("MatMul", &format!("{path}/MatMul"), &[x, &w], vec![]);
        self.op("Add", &format!("{path}/Add"), &[&b, &mm], vec![])
    }

    /// Layer normalization over the last axis as opset 14 exports spell it out.
    fn layer_norm(
        &mut self,
        path: &str,
        param: &str,
        x: &str,
        width: i64,
        out: Option<&str>,
    ) -> String {
        let gamma = self.weight(&format!("{param}.weight"), &[width]);
        let beta = self.weight(&format!("{param}.bias"), &[width]);
        let axes = || vec![AttributeProto::ints("axes", vec![-1])];
        let mean = self.op("ReduceMean", &format!("{path}/ReduceMean"), &[x], axes());
        let d = self.op("Sub", &format!("{path}/Sub"), &[x, &mean], vec![]);
        let two = self.float_constant(&format!("{path}/Constant"), 2.0);
        let p = self.op("Pow", &format!("{path}/Pow"), &[&d, &two], vec![]);
        let var = self.op("ReduceMean", &format!("{path}/ReduceMean_1"), &[&p], axes());
        let eps = self.float_constant(&format!("{path}/Constant_1"), 1e-12);
        let ve = self.op("Add", &format!("{path}/Add"), &[&var, &eps], vec![]);
        let sd = self.op("Sqrt", &format!("{path}/Sqrt"), &[&ve], vec![]);
        let n = self.op("Div", &format!("{path}/Div"), &[&d, &sd], vec![]);
        let m = self.op("Mul", &format!("{path}/Mul"), &[&n, &gamma], vec![]);
        match out {
            Some(name) => {
                self.g
                    .node
                    .push(node("Add", format!("{path}/Add_1"), &[&m, &beta], &[name]));
                name.to_string()
            }
            None => self.op("Add", &format!("{path}/Add_1"), &[&m, &beta], vec![]),
        }
    }

    /// `x` of shape `[batch, seq, ...]` reshaped to `[batch, seq, tail...]`, the shape
    /// computed at run time from `x`'s own (`Shape`, `Gather`, `Unsqueeze`, `Concat`).
    fn reshape_keeping_two(&mut self, path: &str, x: &str, tail: &[i64]) -> String {
        let shape = self.op("Shape", &format!("{path}/Shape"), &[x], vec![]);
        let mut parts = Vec::new();
        for (i, suffix) in ["", "_1"].iter().enumerate() {
            let idx = self.int_constant(&format!("{path}/Constant{suffix}"), &[i as i64], true);
            let d = self.op(
                "Gather",
                &format!("{path}/Gather{suffix}"),
                &[&shape, &idx],
                vec![AttributeProto::int("axis", 0)],
            );
            let axes = self.int_constant(&format!("{path}/Constant_{}", 2 + i), &[0], false);
            parts.push(self.op(
                "Unsqueeze",
                &format!("{path}/Unsqueeze{suffix}"),
                &[&d, &axes],
                vec![],
            ));
        }
        for (i, &t) in tail.iter().enumerate() {
            parts.push(self.int_constant(&format!("{path}/Constant_{}", 4 + i), &[t], false));
        }
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let cat = self.op(
            "Concat",
            &format!("{path}/Concat"),
            &refs,
            vec![AttributeProto::int("axis", 0)],
        );
        self.op("Reshape", &format!("{path}/Reshape"), &[x, &cat], vec![])
    }
}

/// A BERT encoder with its pooler, as `torch.onnx.export` (opset 14, dynamic batch and
/// sequence axes) writes `transformers`' `BertModel`: embeddings (word, position from a
/// sliced `position_ids` buffer, token type), layer norms spelled out in `ReduceMean`,
/// `Pow`, `Sqrt`, ..., attention heads split and merged with reshapes whose shapes are
/// computed from `Shape`, the extended attention mask, erf GELU, and the `tanh` pooler
/// on the first token. Weights are pseudo-random; every initializer has its real size.
pub fn bert(c: BertConfig) -> Model {
    let h = c.hidden;
    let head = h / c.heads;
    let mut x = Exporter {
        g: GraphProto::named("main_graph"),
        seed: 100,
    };
    let dyn2 = [
        Dimension::param("batch_size"),
        Dimension::param("sequence_length"),
    ];
    for name in ["input_ids", "attention_mask", "token_type_ids"] {
        x.g.input.push(value(name, DataType::Int64, &dyn2));
    }
    let word = x.weight("bert.embeddings.word_embeddings.weight", &[c.vocab, h]);
    let pos_table = x.weight(
        "bert.embeddings.position_embeddings.weight",
        &[c.max_positions, h],
    );
    let type_table = x.weight("bert.embeddings.token_type_embeddings.weight", &[2, h]);
    let positions: Vec<i64> = (0..c.max_positions).collect();
    let mut pos_ids = int64_tensor("bert.embeddings.position_ids", &positions);
    pos_ids.dims = vec![1, c.max_positions];
    x.g.initializer.push(pos_ids);

    let e = "/bert/embeddings";
    let ax0 = || vec![AttributeProto::int("axis", 0)];
    let words = x.op(
        "Gather",
        &format!("{e}/word_embeddings/Gather"),
        &[&word, "input_ids"],
        ax0(),
    );
    let types = x.op(
        "Gather",
        &format!("{e}/token_type_embeddings/Gather"),
        &[&type_table, "token_type_ids"],
        ax0(),
    );
    let sum = x.op("Add", &format!("{e}/Add"), &[&words, &types], vec![]);
    let shape = x.op("Shape", &format!("{e}/Shape"), &["input_ids"], vec![]);
    let one = x.int_constant(&format!("{e}/Constant"), &[1], true);
    let seq = x.op("Gather", &format!("{e}/Gather"), &[&shape, &one], ax0());
    let zero_axis = x.int_constant(&format!("{e}/Constant_1"), &[0], false);
    let seq1 = x.op(
        "Unsqueeze",
        &format!("{e}/Unsqueeze"),
        &[&seq, &zero_axis],
        vec![],
    );
    let starts = x.int_constant(&format!("{e}/Constant_2"), &[0], false);
    let axes = x.int_constant(&format!("{e}/Constant_3"), &[1], false);
    let steps = x.int_constant(&format!("{e}/Constant_4"), &[1], false);
    let ids = x.op(
        "Slice",
        &format!("{e}/Slice"),
        &[
            "bert.embeddings.position_ids",
            &starts,
            &seq1,
            &axes,
            &steps,
        ],
        vec![],
    );
    let pos = x.op(
        "Gather",
        &format!("{e}/position_embeddings/Gather"),
        &[&pos_table, &ids],
        ax0(),
    );
    let emb = x.op("Add", &format!("{e}/Add_1"), &[&sum, &pos], vec![]);
    let mut hidden = x.layer_norm(
        &format!("{e}/LayerNorm"),
        "bert.embeddings.LayerNorm",
        &emb,
        h,
        None,
    );

    // The additive attention mask: (1 - mask) * float32 min, as [batch, 1, 1, seq].
    let axis1 = x.int_constant("/bert/Constant", &[1], false);
    let m1 = x.op(
        "Unsqueeze",
        "/bert/Unsqueeze",
        &["attention_mask", &axis1],
        vec![],
    );
    let axis2 = x.int_constant("/bert/Constant_1", &[2], false);
    let m2 = x.op("Unsqueeze", "/bert/Unsqueeze_1", &[&m1, &axis2], vec![]);
    let mf = x.op(
        "Cast",
        "/bert/Cast",
        &[&m2],
        vec![AttributeProto::int("to", 1)],
    );
    let one_f = x.float_constant("/bert/Constant_2", 1.0);
    let inv = x.op("Sub", "/bert/Sub", &[&one_f, &mf], vec![]);
    let min = x.float_constant("/bert/Constant_3", f32::MIN);
    let mask = x.op("Mul", "/bert/Mul", &[&inv, &min], vec![]);

    for l in 0..c.layers {
        let p = format!("/bert/encoder/layer.{l}");
        let q = format!("bert.encoder.layer.{l}");
        let a = format!("{p}/attention/self");
        let mut split = Vec::new();
        for (which, perm) in [
            ("query", [0i64, 2, 1, 3]),
            ("key", [0, 2, 3, 1]),
            ("value", [0, 2, 1, 3]),
        ] {
            let y = x.linear(
                &format!("{a}/{which}"),
                &format!("{q}.attention.self.{which}"),
                &hidden,
                h,
                h,
            );
            let r = x.reshape_keeping_two(&format!("{a}/{which}"), &y, &[c.heads, head]);
            let t = x.op(
                "Transpose",
                &format!("{a}/{which}/Transpose"),
                &[&r],
                vec![AttributeProto::ints("perm", perm.to_vec())],
            );
            split.push(t);
        }
        let scores = x.op(
            "MatMul",
            &format!("{a}/MatMul"),
            &[&split[0], &split[1]],
            vec![],
        );
        let scale = x.float_constant(&format!("{a}/Constant"), (head as f32).sqrt());
        let scaled = x.op("Div", &format!("{a}/Div"), &[&scores, &scale], vec![]);
        let masked = x.op("Add", &format!("{a}/Add"), &[&scaled, &mask], vec![]);
        let probs = x.op(
            "Softmax",
            &format!("{a}/Softmax"),
            &[&masked],
            vec![AttributeProto::int("axis", -1)],
        );
        let ctx = x.op(
            "MatMul",
            &format!("{a}/MatMul_1"),
            &[&probs, &split[2]],
            vec![],
        );
        let ctx_t = x.op(
            "Transpose",
            &format!("{a}/Transpose"),
            &[&ctx],
            vec![AttributeProto::ints("perm", vec![0, 2, 1, 3])],
        );
        let merged = x.reshape_keeping_two(&format!("{a}/merge"), &ctx_t, &[h]);
        let o = x.linear(
            &format!("{p}/attention/output/dense"),
            &format!("{q}.attention.output.dense"),
            &merged,
            h,
            h,
        );
        let res = x.op(
            "Add",
            &format!("{p}/attention/output/Add"),
            &[&o, &hidden],
            vec![],
        );
        let ln1 = x.layer_norm(
            &format!("{p}/attention/output/LayerNorm"),
            &format!("{q}.attention.output.LayerNorm"),
            &res,
            h,
            None,
        );
        let up = x.linear(
            &format!("{p}/intermediate/dense"),
            &format!("{q}.intermediate.dense"),
            &ln1,
            h,
            c.intermediate,
        );
        let g = format!("{p}/intermediate/intermediate_act_fn");
        let sqrt2 = x.float_constant(&format!("{g}/Constant"), std::f32::consts::SQRT_2);
        let d = x.op("Div", &format!("{g}/Div"), &[&up, &sqrt2], vec![]);
        let erf = x.op("Erf", &format!("{g}/Erf"), &[&d], vec![]);
        let one = x.float_constant(&format!("{g}/Constant_1"), 1.0);
        let plus = x.op("Add", &format!("{g}/Add"), &[&erf, &one], vec![]);
        let times = x.op("Mul", &format!("{g}/Mul"), &[&up, &plus], vec![]);
        let half = x.float_constant(&format!("{g}/Constant_2"), 0.5);
        let act = x.op("Mul", &format!("{g}/Mul_1"), &[&times, &half], vec![]);
        let down = x.linear(
            &format!("{p}/output/dense"),
            &format!("{q}.output.dense"),
            &act,
            c.intermediate,
            h,
        );
        let res2 = x.op("Add", &format!("{p}/output/Add"), &[&down, &ln1], vec![]);
        let last = (l + 1 == c.layers).then_some("last_hidden_state");
        hidden = x.layer_norm(
            &format!("{p}/output/LayerNorm"),
            &format!("{q}.output.LayerNorm"),
            &res2,
            h,
            last,
        );
    }

    // The pooler: the first token through a dense layer and tanh.
    let first_idx = x.int_constant("/bert/pooler/Constant", &[0], true);
    let first = x.op(
        "Gather",
        "/bert/pooler/Gather",
        &[&hidden, &first_idx],
        vec![AttributeProto::int("axis", 1)],
    );
    let w = x.weight("bert.pooler.dense.weight", &[h, h]);
    let b = x.weight("bert.pooler.dense.bias", &[h]);
    let dense = x.op(
        "Gemm",
        "/bert/pooler/dense/Gemm",
        &[&first, &w, &b],
        vec![
            AttributeProto::float("alpha", 1.0),
            AttributeProto::float("beta", 1.0),
            AttributeProto::int("transB", 1),
        ],
    );
    x.g.node.push(node(
        "Tanh",
        "/bert/pooler/activation/Tanh".into(),
        &[&dense],
        &["pooler_output"],
    ));
    x.g.output.push(value(
        "last_hidden_state",
        DataType::Float,
        &[
            Dimension::param("batch_size"),
            Dimension::param("sequence_length"),
            Dimension::value(h),
        ],
    ));
    x.g.output.push(value(
        "pooler_output",
        DataType::Float,
        &[Dimension::param("batch_size"), Dimension::value(h)],
    ));
    let mut m = ModelProto::new(x.g, vec![OperatorSetIdProto::new("", 14)]);
    m.ir_version = Some(8);
    m.producer_name = Some("pytorch".into());
    m.producer_version = Some("2.1.0".into());
    m
}
