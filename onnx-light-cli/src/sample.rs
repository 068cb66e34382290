//! The built-in sample model: a small transformer-like graph (embedding, a stack of
//! attention and MLP blocks, a head) with float32 and float16 weights generated in code.
//! It is a valid model: it passes `check` (and `onnx.checker` with `full_check`), and
//! onnxruntime runs it.

use onnx_light::onnx::{
    AttributeProto, DataType, GraphProto, Model, ModelProto, NodeProto, OperatorSetIdProto,
    TensorProto, ValueInfoProto,
};

/// Shape parameters of the sample.
#[derive(Debug, Clone, Copy)]
pub struct SampleSpec {
    pub layers: usize,
    pub hidden: usize,
    pub vocab: usize,
}

impl SampleSpec {
    /// About 300 MB of weights.
    pub const DEFAULT: SampleSpec = SampleSpec {
        layers: 6,
        hidden: 1024,
        vocab: 16_384,
    };
}

/// Deterministic pseudo-random bytes (xorshift64*), fast enough for hundreds of MB.
fn fill(bytes: &mut [u8], seed: u64) {
    let mut s = seed | 1;
    for chunk in bytes.chunks_mut(8) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let v = s.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

fn weight(name: String, data_type: DataType, dims: &[i64], seed: u64) -> TensorProto<'static> {
    let elem = if data_type == DataType::Float16 { 2 } else { 4 };
    let count: i64 = dims.iter().product();
    let mut raw = vec![0u8; count as usize * elem];
    fill(&mut raw, seed);
    TensorProto::from_raw(name, data_type, dims.to_vec(), raw)
}

/// A `Cast` of `input` to `to`, named after its output.
fn to_type(input: &str, output: &str, to: DataType) -> NodeProto<'static> {
    NodeProto::new("Cast", [input.to_string()], [output.to_string()])
        .with_name(output.to_string())
        .with_attribute(AttributeProto::int("to", to as i64))
}

/// Builds the sample model.
pub fn build(spec: SampleSpec) -> Model {
    let h = spec.hidden as i64;
    let mut g = GraphProto::named("sample_transformer");
    g.input
        .push(ValueInfoProto::tensor("tokens", DataType::Int64, [1, 128]));
    g.output.push(ValueInfoProto::tensor(
        "logits",
        DataType::Float,
        [1, 128, spec.vocab as i64],
    ));
    g.initializer.push(weight(
        "embed".into(),
        DataType::Float,
        &[spec.vocab as i64, h],
        1,
    ));
    g.node
        .push(NodeProto::new("Gather", ["embed", "tokens"], ["x0"]).with_name("embed"));
    let mut x = "x0".to_string();
    for l in 0..spec.layers {
        let p = format!("layer{l}");
        // Attention in float16, MLP in float32: both element types appear, with the
        // casts between them that make the graph type-check.
        let xh = format!("{p}.x16");
        g.node.push(to_type(&x, &xh, DataType::Float16));
        for (i, proj) in ["q", "k", "v", "o"].iter().enumerate() {
            g.initializer.push(weight(
                format!("{p}.attn.{proj}"),
                DataType::Float16,
                &[h, h],
                (l * 16 + i) as u64 + 2,
            ));
        }
        for proj in ["q", "k", "v"] {
            g.node.push(NodeProto::new(
                "MatMul",
                [xh.clone(), format!("{p}.attn.{proj}")],
                [format!("{p}.{proj}")],
            ));
        }
        g.node.push(
            NodeProto::new(
                "Attention",
                [format!("{p}.q"), format!("{p}.k"), format!("{p}.v")],
                [format!("{p}.a")],
            )
            .with_attribute(AttributeProto::int("q_num_heads", 16))
            .with_attribute(AttributeProto::int("kv_num_heads", 16))
            .with_attribute(AttributeProto::float("scale", 0.125)),
        );
        g.node.push(NodeProto::new(
            "MatMul",
            [format!("{p}.a"), format!("{p}.attn.o")],
            [format!("{p}.o")],
        ));
        g.node.push(to_type(
            &format!("{p}.o"),
            &format!("{p}.o32"),
            DataType::Float,
        ));
        let up = format!("{p}.mlp.up");
        let down = format!("{p}.mlp.down");
        g.initializer.push(weight(
            up.clone(),
            DataType::Float,
            &[h, 4 * h],
            (l * 16 + 8) as u64,
        ));
        g.initializer.push(weight(
            down.clone(),
            DataType::Float,
            &[4 * h, h],
            (l * 16 + 9) as u64,
        ));
        g.node.push(NodeProto::new(
            "MatMul",
            [format!("{p}.o32"), up],
            [format!("{p}.u")],
        ));
        g.node.push(NodeProto::new(
            "Gelu",
            [format!("{p}.u")],
            [format!("{p}.g")],
        ));
        g.node.push(NodeProto::new(
            "MatMul",
            [format!("{p}.g"), down],
            [format!("{p}.d")],
        ));
        let next = format!("{p}.out");
        g.node.push(NodeProto::new(
            "Add",
            [x.clone(), format!("{p}.d")],
            [next.clone()],
        ));
        x = next;
    }
    g.initializer.push(weight(
        "head".into(),
        DataType::Float16,
        &[h, spec.vocab as i64],
        99,
    ));
    g.node.push(to_type(&x, "head.x16", DataType::Float16));
    g.node
        .push(NodeProto::new("MatMul", ["head.x16", "head"], ["logits16"]));
    g.node.push(to_type("logits16", "logits", DataType::Float));
    // Attention joined the default domain in opset 23; IR version 11 is the oldest that
    // allows it, and the newest onnxruntime reads.
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 23)]);
    m.ir_version = Some(11);
    m.producer_name = Some("onnx-light sample".into());
    m.producer_version = Some(env!("CARGO_PKG_VERSION").into());
    m
}
