//! Pieces shared by `onnx_corpus.rs` and `onnx_interop.rs`: byte comparison with a
//! useful report, round trips in the three decode modes, and the canonical text summary
//! of ONNX messages that `tests/python/onnx_summary.py` computes from the official
//! `onnx` package's parse.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

pub mod corpus;

use std::fmt::Write as _;

use onnx_light::prelude::*;
use onnx_light::{ByteOwner, DecodeOptions};

// ---------------------------------------------------------------------------------------
// Byte comparison.

/// Offset of the first byte where `a` and `b` differ (the shorter length when one is a
/// prefix of the other), or `None` when they are equal.
pub fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len())),
    )
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `None` when equal; otherwise the first differing offset, both lengths and the bytes
/// around the difference.
pub fn describe_diff(expected: &[u8], actual: &[u8]) -> Option<String> {
    let at = first_diff(expected, actual)?;
    let from = at.saturating_sub(8);
    let window = |b: &[u8]| hex(&b[from.min(b.len())..(at + 8).min(b.len())]);
    Some(format!(
        "first differing byte at offset {at} (expected {} bytes, got {}); \
         bytes {from}..: expected {} got {}",
        expected.len(),
        actual.len(),
        window(expected),
        window(actual),
    ))
}

// ---------------------------------------------------------------------------------------
// Round trips.

/// Decodes `bytes` in borrow mode and re-encodes: `Err` names the decode error or the
/// first differing byte.
pub fn borrow_round_trip<'a, T: Decode<'a>>(bytes: &'a [u8]) -> Result<T, String> {
    let msg = T::decode(bytes).map_err(|e| format!("borrow mode: decode error: {e}"))?;
    check_encoding("borrow mode", &msg, bytes)?;
    Ok(msg)
}

/// Decodes `bytes` in copy mode and re-encodes.
pub fn copy_round_trip<T: DecodeOwned>(bytes: &[u8]) -> Result<T, String> {
    let msg = T::decode_owned(bytes).map_err(|e| format!("copy mode: decode error: {e}"))?;
    check_encoding("copy mode", &msg, bytes)?;
    Ok(msg)
}

/// Decodes `bytes` (copied into a shared owner) in shared mode with `threshold` and
/// re-encodes.
pub fn shared_round_trip<T: DecodeOwned>(bytes: &[u8], threshold: usize) -> Result<T, String> {
    let owner: ByteOwner = std::sync::Arc::new(bytes.to_vec());
    let options = DecodeOptions {
        shared_threshold: threshold,
        ..DecodeOptions::default()
    };
    let msg =
        T::decode_shared(owner, &options).map_err(|e| format!("shared mode: decode error: {e}"))?;
    check_encoding("shared mode", &msg, bytes)?;
    Ok(msg)
}

fn check_encoding<M: Message>(mode: &str, msg: &M, expected: &[u8]) -> Result<(), String> {
    let out = msg
        .encode_to_vec()
        .map_err(|e| format!("{mode}: encode error: {e}"))?;
    if let Some(d) = describe_diff(expected, &out) {
        return Err(format!("{mode}: re-encoding differs: {d}"));
    }
    if msg.encoded_len() != expected.len() as u64 {
        return Err(format!(
            "{mode}: encoded_len() is {}, the encoding has {} bytes",
            msg.encoded_len(),
            expected.len()
        ));
    }
    Ok(())
}

/// All three modes; the messages of every mode are returned for further checks.
pub fn all_modes<T: DecodeOwned>(bytes: &[u8]) -> Result<(T, T), String> {
    let copy = copy_round_trip::<T>(bytes)?;
    let shared = shared_round_trip::<T>(bytes, 16)?;
    Ok((copy, shared))
}

// ---------------------------------------------------------------------------------------
// The canonical summary (see tests/python/onnx_summary.py for the rules).

/// The summary functions, one per message type.
pub mod summary {
    use std::fmt::Display;

    use onnx_light::onnx::*;
    use onnx_light::Bytes;

    /// CRC-32 (IEEE, as zlib's `crc32`).
    pub fn crc32(data: &[u8]) -> u32 {
        const TABLE: [u32; 256] = {
            let mut table = [0u32; 256];
            let mut i = 0;
            while i < 256 {
                let mut c = i as u32;
                let mut k = 0;
                while k < 8 {
                    c = if c & 1 != 0 {
                        0xEDB8_8320 ^ (c >> 1)
                    } else {
                        c >> 1
                    };
                    k += 1;
                }
                table[i] = c;
                i += 1;
            }
            table
        };
        let mut c = !0u32;
        for &b in data {
            c = TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
        }
        !c
    }

    fn is_safe(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-')
    }

    fn q(s: &str) -> String {
        if !s.is_empty() && s.chars().all(is_safe) {
            s.to_string()
        } else {
            format!("x'{}'", super::hex(s.as_bytes()))
        }
    }

    fn bq(b: &[u8]) -> String {
        format!("{}#{:08x}", b.len(), crc32(b))
    }

    fn sq(s: &str) -> String {
        bq(s.as_bytes())
    }

    fn num<T: Display>(v: T) -> String {
        v.to_string()
    }

    fn f32hex(v: f32) -> String {
        super::hex(&v.to_le_bytes())
    }

    /// Parts of one message, in the order they are added.
    struct P(Vec<String>);

    impl P {
        fn new() -> P {
            P(Vec::new())
        }

        fn opt<T>(mut self, field: &str, v: Option<T>, f: impl FnOnce(T) -> String) -> P {
            if let Some(v) = v {
                self.0.push(format!("{field}={}", f(v)));
            }
            self
        }

        fn rep<T>(mut self, field: &str, v: &[T], f: impl Fn(&T) -> String) -> P {
            if !v.is_empty() {
                let items: Vec<String> = v.iter().map(f).collect();
                self.0.push(format!("{field}=[{}]", items.join(";")));
            }
            self
        }

        fn packed<T: Copy, const N: usize>(
            mut self,
            field: &str,
            v: &[T],
            le: impl Fn(T) -> [u8; N],
        ) -> P {
            if !v.is_empty() {
                let bytes: Vec<u8> = v.iter().flat_map(|&x| le(x)).collect();
                self.0
                    .push(format!("{field}={}#{:08x}", v.len(), crc32(&bytes)));
            }
            self
        }

        fn done(self, tag: &str) -> String {
            format!("{tag}({})", self.0.join(","))
        }
    }

    fn s<'s>(v: &'s Option<onnx_light::Str<'_>>) -> Option<&'s str> {
        v.as_deref()
    }

    fn b<'s>(v: &'s Option<Bytes<'_>>) -> Option<&'s [u8]> {
        v.as_deref()
    }

    fn kv(e: &StringStringEntryProto<'_>) -> String {
        P::new()
            .opt("key", s(&e.key), q)
            .opt("value", s(&e.value), q)
            .done("KV")
    }

    fn segment(seg: &Segment<'_>) -> String {
        P::new()
            .opt("begin", seg.begin, num)
            .opt("end", seg.end, num)
            .done("Seg")
    }

    /// `TensorProto`.
    pub fn tensor(t: &TensorProto<'_>) -> String {
        P::new()
            .rep("dims", &t.dims, |d| num(d))
            .opt("data_type", t.data_type, num)
            .opt("segment", t.segment.as_ref(), segment)
            .packed("float_data", &t.float_data, f32::to_le_bytes)
            .packed("int32_data", &t.int32_data, i32::to_le_bytes)
            .rep("string_data", &t.string_data, |x| bq(x))
            .packed("int64_data", &t.int64_data, i64::to_le_bytes)
            .opt("name", s(&t.name), q)
            .opt("raw_data", b(&t.raw_data), bq)
            .packed("double_data", &t.double_data, f64::to_le_bytes)
            .packed("uint64_data", &t.uint64_data, u64::to_le_bytes)
            .opt("doc_string", s(&t.doc_string), sq)
            .rep("external_data", &t.external_data, kv)
            .opt("data_location", t.data_location.map(|v| v.raw()), num)
            .rep("metadata_props", &t.metadata_props, kv)
            .done("T")
    }

    /// `SparseTensorProto`.
    pub fn sparse(sp: &SparseTensorProto<'_>) -> String {
        P::new()
            .opt("values", sp.values.as_ref(), tensor)
            .opt("indices", sp.indices.as_ref(), tensor)
            .rep("dims", &sp.dims, |d| num(d))
            .done("SP")
    }

    fn dim(d: &Dimension<'_>) -> String {
        let mut p = P::new();
        match &d.value {
            Some(DimensionValue::DimValue(v)) => p.0.push(format!("dim_value={v}")),
            Some(DimensionValue::DimParam(v)) => p.0.push(format!("dim_param={}", q(v))),
            None => {}
        }
        p.opt("denotation", s(&d.denotation), q).done("D")
    }

    fn shape(sh: &TensorShapeProto<'_>) -> String {
        P::new().rep("dim", &sh.dim, dim).done("SH")
    }

    fn tensor_type(elem_type: Option<i32>, sh: Option<&TensorShapeProto<'_>>) -> String {
        P::new()
            .opt("elem_type", elem_type, num)
            .opt("shape", sh, shape)
            .done("TT")
    }

    fn elem_type(t: Option<&TypeProto<'_>>) -> String {
        P::new().opt("elem_type", t, type_proto).done("TE")
    }

    /// `TypeProto`.
    pub fn type_proto(t: &TypeProto<'_>) -> String {
        let mut p = P::new();
        let part = match &t.value {
            Some(TypeValue::TensorType(x)) => Some((
                "tensor_type",
                tensor_type(x.elem_type_raw, x.shape.as_ref()),
            )),
            Some(TypeValue::SequenceType(x)) => {
                Some(("sequence_type", elem_type(x.elem_type.as_deref())))
            }
            Some(TypeValue::MapType(x)) => Some((
                "map_type",
                P::new()
                    .opt("key_type", x.key_type_raw, num)
                    .opt("value_type", x.value_type.as_deref(), type_proto)
                    .done("TM"),
            )),
            Some(TypeValue::OpaqueType(x)) => Some((
                "opaque_type",
                P::new()
                    .opt("domain", s(&x.domain), q)
                    .opt("name", s(&x.name), q)
                    .done("TO"),
            )),
            Some(TypeValue::SparseTensorType(x)) => Some((
                "sparse_tensor_type",
                tensor_type(x.elem_type_raw, x.shape.as_ref()),
            )),
            Some(TypeValue::OptionalType(x)) => {
                Some(("optional_type", elem_type(x.elem_type.as_deref())))
            }
            None => None,
        };
        if let Some((field, v)) = part {
            p.0.push(format!("{field}={v}"));
        }
        p.opt("denotation", s(&t.denotation), q).done("TY")
    }

    fn value_info(v: &ValueInfoProto<'_>) -> String {
        P::new()
            .opt("name", s(&v.name), q)
            .opt("type", v.r#type.as_ref(), type_proto)
            .opt("doc_string", s(&v.doc_string), sq)
            .rep("metadata_props", &v.metadata_props, kv)
            .done("V")
    }

    /// `AttributeProto`.
    pub fn attribute(a: &AttributeProto<'_>) -> String {
        P::new()
            .opt("name", s(&a.name), q)
            .opt("f", a.f, f32hex)
            .opt("i", a.i, num)
            .opt("s", b(&a.s), bq)
            .opt("t", a.t.as_deref(), tensor)
            .opt("g", a.g.as_deref(), graph)
            .packed("floats", &a.floats, f32::to_le_bytes)
            .rep("ints", &a.ints, |i| num(i))
            .rep("strings", &a.strings, |x| bq(x))
            .rep("tensors", &a.tensors, tensor)
            .rep("graphs", &a.graphs, graph)
            .opt("doc_string", s(&a.doc_string), sq)
            .opt("tp", a.tp.as_deref(), type_proto)
            .rep("type_protos", &a.type_protos, type_proto)
            .opt("type", a.r#type.map(|v| v.raw()), num)
            .opt("ref_attr_name", s(&a.ref_attr_name), q)
            .opt("sparse_tensor", a.sparse_tensor.as_deref(), sparse)
            .rep("sparse_tensors", &a.sparse_tensors, sparse)
            .done("A")
    }

    fn simple_sharded_dim(d: &SimpleShardedDimProto<'_>) -> String {
        let mut p = P::new();
        match &d.dim {
            Some(SimpleShardedDim::DimValue(v)) => p.0.push(format!("dim_value={v}")),
            Some(SimpleShardedDim::DimParam(v)) => p.0.push(format!("dim_param={}", q(v))),
            None => {}
        }
        p.opt("num_shards", d.num_shards, num).done("SSD")
    }

    fn sharding_spec(sp: &ShardingSpecProto<'_>) -> String {
        P::new()
            .opt("tensor_name", s(&sp.tensor_name), q)
            .rep("device", &sp.device, |d| num(d))
            .rep(
                "index_to_device_group_map",
                &sp.index_to_device_group_map,
                |e| {
                    P::new()
                        .opt("key", e.key, num)
                        .rep("value", &e.value, |v| num(v))
                        .done("IIL")
                },
            )
            .rep("sharded_dim", &sp.sharded_dim, |d| {
                P::new()
                    .opt("axis", d.axis, num)
                    .rep("simple_sharding", &d.simple_sharding, simple_sharded_dim)
                    .done("SD")
            })
            .done("SS")
    }

    fn node_device_configuration(c: &NodeDeviceConfigurationProto<'_>) -> String {
        P::new()
            .opt("configuration_id", s(&c.configuration_id), q)
            .rep("sharding_spec", &c.sharding_spec, sharding_spec)
            .opt("pipeline_stage", c.pipeline_stage, num)
            .done("NDC")
    }

    /// `NodeProto`.
    pub fn node(n: &NodeProto<'_>) -> String {
        P::new()
            .rep("input", &n.input, |x| q(x))
            .rep("output", &n.output, |x| q(x))
            .opt("name", s(&n.name), q)
            .opt("op_type", s(&n.op_type), q)
            .rep("attribute", &n.attribute, attribute)
            .opt("doc_string", s(&n.doc_string), sq)
            .opt("domain", s(&n.domain), q)
            .opt("overload", s(&n.overload), q)
            .rep("metadata_props", &n.metadata_props, kv)
            .rep(
                "device_configurations",
                &n.device_configurations,
                node_device_configuration,
            )
            .done("N")
    }

    fn tensor_annotation(a: &TensorAnnotation<'_>) -> String {
        P::new()
            .opt("tensor_name", s(&a.tensor_name), q)
            .rep(
                "quant_parameter_tensor_names",
                &a.quant_parameter_tensor_names,
                kv,
            )
            .done("TA")
    }

    /// `GraphProto`.
    pub fn graph(g: &GraphProto<'_>) -> String {
        P::new()
            .rep("node", &g.node, node)
            .opt("name", s(&g.name), q)
            .rep("initializer", &g.initializer, tensor)
            .opt("doc_string", s(&g.doc_string), sq)
            .rep("input", &g.input, value_info)
            .rep("output", &g.output, value_info)
            .rep("value_info", &g.value_info, value_info)
            .rep(
                "quantization_annotation",
                &g.quantization_annotation,
                tensor_annotation,
            )
            .rep("sparse_initializer", &g.sparse_initializer, sparse)
            .rep("metadata_props", &g.metadata_props, kv)
            .done("G")
    }

    fn opset(o: &OperatorSetIdProto<'_>) -> String {
        P::new()
            .opt("domain", s(&o.domain), q)
            .opt("version", o.version, num)
            .done("OS")
    }

    fn training_info(t: &TrainingInfoProto<'_>) -> String {
        P::new()
            .opt("initialization", t.initialization.as_ref(), graph)
            .opt("algorithm", t.algorithm.as_ref(), graph)
            .rep("initialization_binding", &t.initialization_binding, kv)
            .rep("update_binding", &t.update_binding, kv)
            .done("TI")
    }

    fn function(f: &FunctionProto<'_>) -> String {
        P::new()
            .opt("name", s(&f.name), q)
            .rep("input", &f.input, |x| q(x))
            .rep("output", &f.output, |x| q(x))
            .rep("attribute", &f.attribute, |x| q(x))
            .rep("node", &f.node, node)
            .opt("doc_string", s(&f.doc_string), sq)
            .rep("opset_import", &f.opset_import, opset)
            .opt("domain", s(&f.domain), q)
            .rep("attribute_proto", &f.attribute_proto, attribute)
            .rep("value_info", &f.value_info, value_info)
            .opt("overload", s(&f.overload), q)
            .rep("metadata_props", &f.metadata_props, kv)
            .done("F")
    }

    fn device_configuration(c: &DeviceConfigurationProto<'_>) -> String {
        P::new()
            .opt("name", s(&c.name), q)
            .opt("num_devices", c.num_devices, num)
            .rep("device", &c.device, |x| q(x))
            .done("DC")
    }

    /// `ModelProto`.
    pub fn model(m: &ModelProto<'_>) -> String {
        P::new()
            .opt("ir_version", m.ir_version, num)
            .opt("producer_name", s(&m.producer_name), q)
            .opt("producer_version", s(&m.producer_version), q)
            .opt("domain", s(&m.domain), q)
            .opt("model_version", m.model_version, num)
            .opt("doc_string", s(&m.doc_string), sq)
            .opt("graph", m.graph.as_ref(), graph)
            .rep("opset_import", &m.opset_import, opset)
            .rep("metadata_props", &m.metadata_props, kv)
            .rep("training_info", &m.training_info, training_info)
            .rep("functions", &m.functions, function)
            .rep("configuration", &m.configuration, device_configuration)
            .done("M")
    }

    /// `SequenceProto`.
    pub fn sequence(sq_: &SequenceProto<'_>) -> String {
        P::new()
            .opt("name", s(&sq_.name), q)
            .opt("elem_type", sq_.elem_type_raw, num)
            .rep("tensor_values", &sq_.tensor_values, tensor)
            .rep("sparse_tensor_values", &sq_.sparse_tensor_values, sparse)
            .rep("sequence_values", &sq_.sequence_values, sequence)
            .rep("map_values", &sq_.map_values, map)
            .rep("optional_values", &sq_.optional_values, optional)
            .done("SEQ")
    }

    /// `MapProto`.
    pub fn map(m: &MapProto<'_>) -> String {
        P::new()
            .opt("name", s(&m.name), q)
            .opt("key_type", m.key_type_raw, num)
            .rep("keys", &m.keys, |k| num(k))
            .rep("string_keys", &m.string_keys, |x| bq(x))
            .opt("values", m.values.as_deref(), sequence)
            .done("MAP")
    }

    /// `OptionalProto`.
    pub fn optional(o: &OptionalProto<'_>) -> String {
        P::new()
            .opt("name", s(&o.name), q)
            .opt("elem_type", o.elem_type_raw, num)
            .opt("tensor_value", o.tensor_value.as_ref(), tensor)
            .opt(
                "sparse_tensor_value",
                o.sparse_tensor_value.as_ref(),
                sparse,
            )
            .opt("sequence_value", o.sequence_value.as_deref(), sequence)
            .opt("map_value", o.map_value.as_deref(), map)
            .opt("optional_value", o.optional_value.as_deref(), optional)
            .done("OPT")
    }
}

/// The first position where two summary lines differ, with some context of both.
pub fn describe_text_diff(expected: &str, actual: &str) -> String {
    let at = expected
        .char_indices()
        .zip(actual.chars())
        .find(|((_, a), b)| a != b)
        .map(|((i, _), _)| i)
        .unwrap_or(expected.len().min(actual.len()));
    let from = expected[..at]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(i, _)| i);
    let clip = |s: &str| -> String { s.get(from..).unwrap_or("").chars().take(160).collect() };
    format!(
        "differs at char {at}:\n      onnx: …{}\n      ours: …{}",
        clip(expected),
        clip(actual)
    )
}
