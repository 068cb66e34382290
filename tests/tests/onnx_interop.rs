//! The ONNX types against the official `onnx` package (and the `protobuf` runtime under
//! it), both ways.
//!
//! * `generated_messages_round_trip`: `tests/python/onnx_interop.py` writes models and
//!   messages that set every field of every ONNX message (the script checks that
//!   coverage against the schema), every attribute type, every tensor data type (typed
//!   fields and `raw_data`), every `TypeProto` variant, sequence/map/optional data. Each
//!   decodes in borrow, copy and shared mode to equal values, re-encodes to the same
//!   bytes, and has the same canonical summary as onnx's parse.
//! * `edits_match_protobuf`: onnx-light edits decoded messages (one per decode mode) and
//!   writes them; the script loads the result with `onnx.load`, runs the checker on the
//!   valid model, and compares with the same edit made through protobuf, byte for byte.
//! * `unknown_fields_survive`: fields of every wire type with undeclared numbers, in a
//!   model, its graph, a node, an attribute and tensors, are kept in every mode and
//!   written back; protobuf reads the output and sees the same unknown fields, and
//!   re-serializes them to the same bytes (also when they were interleaved with known
//!   fields, which both move to the end).
//! * `packed_unpacked_and_merge_rules`: repeated numbers written packed or unpacked
//!   parse alike; a non-repeated field seen twice obeys last-wins (scalars, oneofs) or
//!   merge (messages); protobuf re-serializes each input to the bytes we write.

mod onnx_support;

use onnx_light_tests::scratch::Scratch;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ByteOwner, Bytes, DecodeOptions};
use onnx_light_tests::python::{python_dir, run_python};

use onnx_support::summary;
use onnx_support::{
    borrow_round_trip, copy_round_trip, describe_diff, describe_text_diff, hex, shared_round_trip,
};

// ---------------------------------------------------------------------------------------
// Working directories and the Python side.

fn script() -> PathBuf {
    python_dir().join("onnx_interop.py")
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn enc<M: Message>(m: &M) -> Vec<u8> {
    m.encode_to_vec().expect("encode")
}

/// One generated file: name, message type, onnx's summary.
struct Generated {
    file: String,
    ty: String,
    summary: String,
}

/// Runs the generator into `dir` and reads its manifest.
fn generate(dir: &Scratch) -> Vec<Generated> {
    run_python(&script(), &["generate".as_ref(), dir.0.as_os_str()]);
    let manifest = fs::read_to_string(dir.path("manifest.txt")).expect("manifest");
    manifest
        .lines()
        .map(|line| {
            let mut it = line.splitn(3, ' ');
            match (it.next(), it.next(), it.next()) {
                (Some(f), Some(t), Some(s)) => Generated {
                    file: f.to_string(),
                    ty: t.to_string(),
                    summary: s.to_string(),
                },
                _ => panic!("malformed manifest line {line:?}"),
            }
        })
        .collect()
}

/// What protobuf makes of each `(type, bytes)`: its re-serialization and the unknown
/// fields it sees (`path:number/wiretype ...`, `-` for none).
fn protobuf_reserialize(dir: &Scratch, inputs: &[(&str, &str, Vec<u8>)]) -> Vec<(Vec<u8>, String)> {
    let mut list = String::new();
    for (name, ty, bytes) in inputs {
        let path = dir.path(&format!("{name}.bin"));
        write(&path, bytes);
        list.push_str(&format!("{ty} {}\n", path.display()));
    }
    let list_path = dir.path("reserialize.txt");
    write(&list_path, list.as_bytes());
    let out = run_python(&script(), &["reserialize".as_ref(), list_path.as_os_str()]);
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let rows: Vec<(Vec<u8>, String)> = text
        .lines()
        .map(|line| {
            let (h, unknown) = line.split_once(' ').expect("hex and unknown fields");
            (unhex(h), unknown.to_string())
        })
        .collect();
    assert_eq!(rows.len(), inputs.len(), "one line per input:\n{text}");
    rows
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// 1. Everything the generator writes round-trips and parses as onnx parses it.

/// Borrow, copy and shared round trips of one message type, equality across modes, and
/// the borrow-mode value's summary (when `summarize` is given). Values holding NaN
/// floats are unequal to themselves: those are compared through their summaries, which
/// hold the floats' bits.
macro_rules! check_generated {
    ($ty:ident, $bytes:expr, $summarize:expr) => {{
        let bytes: &[u8] = $bytes;
        let mut errs: Vec<String> = Vec::new();
        let mut summary = None;
        let borrowed = borrow_round_trip::<$ty<'_>>(bytes);
        let copied = copy_round_trip::<$ty<'static>>(bytes);
        let shared = shared_round_trip::<$ty<'static>>(bytes, 16);
        for r in [
            borrowed.as_ref().err(),
            copied.as_ref().err(),
            shared.as_ref().err(),
        ]
        .into_iter()
        .flatten()
        {
            errs.push(r.clone());
        }
        if let (Ok(b), Ok(c), Ok(s)) = (&borrowed, &copied, &shared) {
            let b: &$ty<'_> = b;
            let f: Option<fn(&$ty<'_>) -> String> = $summarize;
            let same = |x: &$ty<'_>, y: &$ty<'_>| x == y || f.is_some_and(|f| f(x) == f(y));
            if !same(b, c) || !same(c, s) {
                errs.push("the three modes decode to different values".to_string());
            }
            summary = f.map(|f| f(b));
        }
        (errs, summary)
    }};
}

#[test]
fn generated_messages_round_trip() {
    let dir = Scratch::new("onnx-interop-generated");
    let files = generate(&dir);
    let mut failures = Vec::new();
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &files {
        let bytes = read(&dir.path(&g.file));
        let (errs, ours) = match g.ty.as_str() {
            "ModelProto" => check_generated!(ModelProto, &bytes, Some(summary::model)),
            "TensorProto" => check_generated!(TensorProto, &bytes, Some(summary::tensor)),
            "SequenceProto" => check_generated!(SequenceProto, &bytes, Some(summary::sequence)),
            "MapProto" => check_generated!(MapProto, &bytes, Some(summary::map)),
            "OptionalProto" => check_generated!(OptionalProto, &bytes, Some(summary::optional)),
            "SparseTensorProto" => {
                check_generated!(SparseTensorProto, &bytes, Some(summary::sparse))
            }
            "OperatorSetProto" => check_generated!(OperatorSetProto, &bytes, None),
            other => panic!("unexpected message type {other}"),
        };
        *by_type.entry(g.ty.as_str()).or_default() += 1;
        failures.extend(errs.into_iter().map(|e| format!("{}: {e}", g.file)));
        if let Some(ours) = ours {
            if ours != g.summary {
                failures.push(format!(
                    "{}: onnx parses it differently: {}",
                    g.file,
                    describe_text_diff(&g.summary, &ours)
                ));
            }
        }
    }
    println!("{} generated messages: {by_type:?}", files.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // The generator's coverage, seen from this side.
    let full = read(&dir.path("full_model.onnx"));
    let model = ModelProto::decode(&full).expect("full model");
    let graph = model.graph.as_ref().expect("graph");
    let attr_types: BTreeSet<i32> = graph.node[0]
        .attribute
        .iter()
        .filter_map(|a| a.r#type.map(|t| t.raw()))
        .collect();
    for &(name, value) in AttributeType::VALUES {
        assert!(
            value == 0 || attr_types.contains(&value),
            "no {name} attribute in the full model"
        );
    }
    let mut data_types = BTreeSet::new();
    let mut raw_types = BTreeSet::new();
    model.visit_tensors(|_, t| {
        data_types.insert(t.data_type());
        if t.raw_data.is_some() {
            raw_types.insert(t.data_type());
        }
    });
    for &(name, value) in DataType::VALUES {
        assert!(
            value == 0 || data_types.contains(&value),
            "no {name} tensor in the full model"
        );
        assert!(
            matches!(value, 0 | 8) || raw_types.contains(&value),
            "no {name} raw_data tensor in the full model"
        );
    }
    let variants: BTreeSet<&str> = graph
        .input
        .iter()
        .filter_map(|v| v.r#type.as_ref()?.value.as_ref())
        .map(|v| match v {
            TypeValue::TensorType(_) => "tensor",
            TypeValue::SequenceType(_) => "sequence",
            TypeValue::MapType(_) => "map",
            TypeValue::OpaqueType(_) => "opaque",
            TypeValue::SparseTensorType(_) => "sparse",
            TypeValue::OptionalType(_) => "optional",
        })
        .collect();
    assert_eq!(variants.len(), 6, "TypeProto variants: {variants:?}");
    assert!(by_type["TensorProto"] > 56 && by_type.len() == 7);
}

// ---------------------------------------------------------------------------------------
// 2. Edits made with onnx-light equal the same edits made with protobuf.

fn edit_valid_model(m: &mut ModelProto<'_>) {
    let g = m.graph.as_mut().expect("graph");
    g.node[0].name = Some("renamed_by_onnx_light".into());
    let raw: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|f| f.to_le_bytes()).collect();
    g.initializer.push(TensorProto::from_raw(
        "extra_initializer",
        DataType::Float,
        vec![2],
        raw,
    ));
    m.metadata_props
        .push(StringStringEntryProto::new("edited_by", "onnx-light"));
}

fn edit_full_model(m: &mut ModelProto<'_>) {
    m.producer_version = Some("2.0".into());
    let g = m.graph.as_mut().expect("graph");
    g.initializer[0].name = Some("renamed_tensor".into());
    g.node.remove(1);
    let node = &mut g.node[0];
    for a in &mut node.attribute {
        if a.name() == "ints" {
            a.ints.push(42);
        }
        if a.name() == "g" {
            a.g.as_mut().expect("g").node[0].op_type = Some("Neg".into());
        }
    }
    node.attribute[0].f = None;
    m.training_info.remove(1);
    m.functions[0].overload = Some("v2".into());
    let Some(TypeValue::TensorType(t)) = g.input[0].r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        panic!("input 0 is not a tensor");
    };
    t.shape.as_mut().expect("shape").dim[0].value = Some(DimensionValue::DimValue(8));
    g.sparse_initializer[0]
        .values
        .as_mut()
        .expect("values")
        .float_data
        .push(9.5);
    m.doc_string = None;
}

fn edit_sequence(s: &mut SequenceProto<'_>) {
    s.tensor_values.push(TensorProto {
        dims: vec![2],
        data_type: Some(DataType::Int32.to_i32()),
        int32_data: vec![7, -7],
        name: Some("appended".into()),
        ..TensorProto::default()
    });
    s.name = Some("edited".into());
}

#[test]
fn edits_match_protobuf() {
    let dir = Scratch::new("onnx-interop-edits");
    generate(&dir);

    // Borrow mode: the edit mixes borrowed and owned data.
    let bytes = read(&dir.path("valid_model.onnx"));
    let mut m = ModelProto::decode(&bytes).expect("valid model");
    edit_valid_model(&mut m);
    write(&dir.path("valid_model.ours.onnx"), &enc(&m));

    // Copy mode.
    let mut m = ModelProto::decode_owned(&read(&dir.path("full_model.onnx"))).expect("full");
    edit_full_model(&mut m);
    write(&dir.path("full_model.ours.onnx"), &enc(&m));

    // Shared mode.
    let owner: ByteOwner = Arc::new(read(&dir.path("seq_tensors.pb")));
    let mut s = SequenceProto::decode_shared(owner, &DecodeOptions::default()).expect("seq");
    edit_sequence(&mut s);
    write(&dir.path("seq_tensors.ours.pb"), &enc(&s));

    let out = run_python(&script(), &["verify".as_ref(), dir.0.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("checked ")).count(),
        3
    );
    assert!(text.contains("valid_model.onnx (check_model passed)"));
}

// ---------------------------------------------------------------------------------------
// Writing protobuf by hand.

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// A length-delimited field.
fn ld(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_key(&mut out, field, 2);
    put_varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ---------------------------------------------------------------------------------------
// 4. Unknown fields.

const MAX_FIELD: u32 = (1 << 29) - 1;

/// `(number, wire type)` of unknown fields.
type Keys = Vec<(u32, u8)>;
/// The unknown fields each message must hold, by path: their bytes and keys.
type Expected = BTreeMap<&'static str, (Vec<u8>, Keys)>;

/// Undeclared fields of every wire type (`salt` makes each message's different), and
/// their `(number, wire type)`s.
fn unknowns(salt: u8) -> (Vec<u8>, Keys) {
    let mut out = Vec::new();
    put_key(&mut out, 100, 0);
    put_varint(&mut out, 0x8000_0000_0000_0000 | u64::from(salt)); // ten bytes
    put_key(&mut out, 101, 1);
    out.extend_from_slice(&(0x0123_4567_89ab_cdef_u64 ^ u64::from(salt)).to_le_bytes());
    let mut payload = b"future \xff\x00".to_vec();
    payload.push(salt);
    out.extend(ld(102, &payload));
    put_key(&mut out, 103, 5);
    out.extend_from_slice(&(0xdead_beef_u32 ^ u32::from(salt)).to_le_bytes());
    put_key(&mut out, 104, 3); // a group holding a varint and a nested group
    put_key(&mut out, 1, 0);
    put_varint(&mut out, u64::from(salt));
    put_key(&mut out, 2, 3);
    put_key(&mut out, 3, 5);
    out.extend_from_slice(&[1, 2, 3, salt]);
    put_key(&mut out, 2, 4);
    put_key(&mut out, 104, 4);
    out.extend(ld(MAX_FIELD, &[]));
    let fields = vec![
        (100, 0),
        (101, 1),
        (102, 2),
        (103, 5),
        (104, 3),
        (MAX_FIELD, 2),
    ];
    (out, fields)
}

/// The unknown fields of the messages carrying them, in protobuf's traversal order:
/// `(path, fields)`.
fn unknown_sites<'m>(m: &'m ModelProto<'_>) -> Vec<(&'static str, &'m UnknownFields<'m>)> {
    let g = m.graph.as_ref().expect("graph");
    let n = &g.node[0];
    let a = &n.attribute[0];
    vec![
        ("", &m.unknown_fields),
        (".graph", &g.unknown_fields),
        (".graph.node[0]", &n.unknown_fields),
        (".graph.node[0].attribute[0]", &a.unknown_fields),
        (
            ".graph.node[0].attribute[0].t",
            &a.t.as_ref().expect("t").unknown_fields,
        ),
        (".graph.initializer[0]", &g.initializer[0].unknown_fields),
    ]
}

/// Checks that each site holds exactly `expected[path]`: same keys, same raw bytes.
fn check_unknowns(mode: &str, m: &ModelProto<'_>, expected: &Expected, errs: &mut Vec<String>) {
    for (path, fields) in unknown_sites(m) {
        let (raw, keys) = &expected[path];
        let got_keys: Vec<(u32, u8)> = fields
            .iter()
            .map(|f| (f.number(), f.key().wire_type as u8))
            .collect();
        let got_raw: Vec<u8> = fields
            .iter()
            .flat_map(|f| f.raw().iter().copied())
            .collect();
        if &got_keys != keys {
            errs.push(format!(
                "{mode}: {path:?}: unknown fields {got_keys:?}, expected {keys:?}"
            ));
        }
        if &got_raw != raw {
            errs.push(format!("{mode}: {path:?}: unknown field bytes differ"));
        }
    }
}

fn protobuf_listing(expected: &Expected, order: &[&str]) -> String {
    order
        .iter()
        .flat_map(|path| {
            expected[path]
                .1
                .iter()
                .map(move |(n, w)| format!("{path}:{n}/{w}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A model whose model, graph, node, attribute, attribute tensor and initializer carry
/// unknown fields; `interleave` puts a second batch before the known fields of the model
/// and the graph (protobuf and onnx-light both write them after the known ones).
fn model_with_unknowns(interleave: bool) -> (Vec<u8>, Expected) {
    let mut expected = BTreeMap::new();
    let mut u = |path: &'static str, salt: u8| {
        let (raw, keys) = unknowns(salt);
        expected.insert(path, (raw.clone(), keys));
        raw
    };
    let tensor =
        |name: &'static str| TensorProto::from_raw(name, DataType::Float, vec![2], vec![0u8; 8]);

    let t = cat(&[
        &enc(&tensor("value")),
        &u(".graph.node[0].attribute[0].t", 1),
    ]);
    let attr = cat(&[
        &enc(&AttributeProto {
            name: Some("value".into()),
            ..AttributeProto::default()
        }),
        &ld(5, &t),
        &enc(&AttributeProto {
            r#type: Some(AttributeType::Tensor.into()),
            ..AttributeProto::default()
        }),
        &u(".graph.node[0].attribute[0]", 2),
    ]);
    let node = cat(&[
        &enc(&NodeProto::new("Constant", Vec::<&str>::new(), ["c"]).with_name("const")),
        &ld(5, &attr),
        &enc(&NodeProto {
            domain: Some("".into()),
            ..NodeProto::default()
        }),
        &u(".graph.node[0]", 3),
    ]);
    let init = cat(&[&enc(&tensor("w")), &u(".graph.initializer[0]", 4)]);
    let graph_unknowns = u(".graph", 5);
    let model_unknowns = u("", 6);
    let (early_graph, early_model) = if interleave {
        let (g, gk) = unknowns(7);
        let (m, mk) = unknowns(8);
        // Written after the known fields, before the late ones.
        let e = expected.get_mut(".graph").expect("graph");
        e.0 = cat(&[&g, &e.0]);
        e.1 = [gk, e.1.clone()].concat();
        let e = expected.get_mut("").expect("model");
        e.0 = cat(&[&m, &e.0]);
        e.1 = [mk, e.1.clone()].concat();
        (g, m)
    } else {
        (Vec::new(), Vec::new())
    };
    let graph = cat(&[
        &early_graph,
        &ld(1, &node),
        &enc(&GraphProto::named("g")),
        &ld(5, &init),
        &enc(&GraphProto {
            output: vec![ValueInfoProto::tensor("c", DataType::Float, [2])],
            ..GraphProto::default()
        }),
        &graph_unknowns,
    ]);
    let model = cat(&[
        &early_model,
        &enc(&ModelProto {
            ir_version: Some(10),
            producer_name: Some("unknown fields".into()),
            ..ModelProto::default()
        }),
        &ld(7, &graph),
        &enc(&ModelProto {
            opset_import: vec![OperatorSetIdProto::new("", 21)],
            ..ModelProto::default()
        }),
        &model_unknowns,
    ]);
    (model, expected)
}

#[test]
fn unknown_fields_survive() {
    let dir = Scratch::new("onnx-interop-unknown");
    let order = [
        "",
        ".graph",
        ".graph.node[0]",
        ".graph.node[0].attribute[0]",
        ".graph.node[0].attribute[0].t",
        ".graph.initializer[0]",
    ];
    let mut errs = Vec::new();
    let mut ours = Vec::new();
    let mut cases = Vec::new();
    for interleave in [false, true] {
        let (input, expected) = model_with_unknowns(interleave);
        // Borrow mode, then the owned copy of that value.
        let borrowed = ModelProto::decode(&input).expect("borrow mode");
        check_unknowns("borrow mode", &borrowed, &expected, &mut errs);
        let out = enc(&borrowed);
        let owned = borrowed.clone().into_owned();
        check_unknowns("into_owned", &owned, &expected, &mut errs);
        // Copy and shared mode.
        let copied = ModelProto::decode_owned(&input).expect("copy mode");
        check_unknowns("copy mode", &copied, &expected, &mut errs);
        let owner: ByteOwner = Arc::new(input.clone());
        let options = DecodeOptions {
            shared_threshold: 4,
            ..DecodeOptions::default()
        };
        let shared = ModelProto::decode_shared(owner, &options).expect("shared mode");
        check_unknowns("shared mode", &shared, &expected, &mut errs);
        for (mode, bytes) in [
            ("into_owned", enc(&owned)),
            ("copy mode", enc(&copied)),
            ("shared mode", enc(&shared)),
        ] {
            if let Some(d) = describe_diff(&out, &bytes) {
                errs.push(format!(
                    "interleave={interleave}: {mode} encodes differently: {d}"
                ));
            }
        }
        if !interleave {
            if let Some(d) = describe_diff(&input, &out) {
                errs.push(format!("re-encoding differs from the input: {d}"));
            }
        } else {
            assert_ne!(input, out, "interleaved unknown fields move to the end");
            // The output holds the unknown fields at the end, and reads back the same.
            let again = ModelProto::decode(&out).expect("decode our output");
            check_unknowns("re-decoded", &again, &expected, &mut errs);
            assert_eq!(enc(&again), out);
        }
        cases.push((interleave, protobuf_listing(&expected, &order)));
        ours.push(out);
    }

    // protobuf reads our output (onnx.load_model_from_string), sees the same unknown
    // fields, and writes the same bytes; for the interleaved input it also re-serializes
    // the input to our bytes.
    let (interleaved_input, _) = model_with_unknowns(true);
    let inputs = vec![
        ("ours_plain", "ModelProto", ours[0].clone()),
        ("ours_interleaved", "ModelProto", ours[1].clone()),
        ("input_interleaved", "ModelProto", interleaved_input),
    ];
    let rows = protobuf_reserialize(&dir, &inputs);
    for (i, ((name, _, _), (bytes, unknown))) in inputs.iter().zip(&rows).enumerate() {
        let ours = &ours[i.min(1)];
        if let Some(d) = describe_diff(ours, bytes) {
            errs.push(format!("{name}: protobuf serializes differently: {d}"));
        }
        let expected_listing = &cases[i.min(1)].1;
        if unknown != expected_listing {
            errs.push(format!(
                "{name}: protobuf sees unknown fields\n  {unknown}\nexpected\n  {expected_listing}"
            ));
        }
    }
    println!(
        "unknown fields: {} bytes of model, 6 messages x 6 fields, kept in every mode",
        ours[0].len()
    );
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

// ---------------------------------------------------------------------------------------
// 5. Packed and unpacked repeated fields; fields seen twice.

/// Decodes `bytes` in all three modes and re-encodes; the three encodings must agree.
fn reencode_modes<'a, B: Decode<'a>, O: DecodeOwned>(bytes: &'a [u8]) -> Result<Vec<u8>, String> {
    let b = B::decode(bytes).map_err(|e| format!("borrow mode: {e}"))?;
    let c = O::decode_owned(bytes).map_err(|e| format!("copy mode: {e}"))?;
    let owner: ByteOwner = Arc::new(bytes.to_vec());
    let s = O::decode_shared(owner, &DecodeOptions::default())
        .map_err(|e| format!("shared mode: {e}"))?;
    let out = enc(&b);
    for (mode, other) in [("copy", enc(&c)), ("shared", enc(&s))] {
        if let Some(d) = describe_diff(&out, &other) {
            return Err(format!(
                "{mode} mode encodes differently from borrow mode: {d}"
            ));
        }
    }
    Ok(out)
}

fn reencode(ty: &str, bytes: &[u8]) -> Result<Vec<u8>, String> {
    match ty {
        "ModelProto" => reencode_modes::<ModelProto<'_>, Model>(bytes),
        "TensorProto" => reencode_modes::<TensorProto<'_>, Tensor>(bytes),
        "AttributeProto" => reencode_modes::<AttributeProto<'_>, AttributeProto<'static>>(bytes),
        "NodeProto" => reencode_modes::<NodeProto<'_>, NodeProto<'static>>(bytes),
        "TypeProto" => reencode_modes::<TypeProto<'_>, TypeProto<'static>>(bytes),
        "TensorShapeProto" => {
            reencode_modes::<TensorShapeProto<'_>, TensorShapeProto<'static>>(bytes)
        }
        "MapProto" => reencode_modes::<MapProto<'_>, MapProto<'static>>(bytes),
        "OptionalProto" => reencode_modes::<OptionalProto<'_>, OptionalProto<'static>>(bytes),
        "SimpleShardedDimProto" => {
            reencode_modes::<SimpleShardedDimProto<'_>, SimpleShardedDimProto<'static>>(bytes)
        }
        other => panic!("no case type {other}"),
    }
}

/// A case: an input and the canonical encoding of the value it must parse to.
struct Case {
    name: &'static str,
    ty: &'static str,
    input: Vec<u8>,
    expected: Vec<u8>,
}

fn f32s(field: u32, values: &[f32], out: &mut Vec<u8>) {
    for v in values {
        put_key(out, field, 5);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn f64s(field: u32, values: &[f64], out: &mut Vec<u8>) {
    for v in values {
        put_key(out, field, 1);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn varints(field: u32, values: impl IntoIterator<Item = u64>, out: &mut Vec<u8>) {
    for v in values {
        put_key(out, field, 0);
        put_varint(out, v);
    }
}

fn packed(field: u32, elements: &[u8]) -> Vec<u8> {
    ld(field, elements)
}

fn packed_varints(field: u32, values: impl IntoIterator<Item = u64>) -> Vec<u8> {
    let mut body = Vec::new();
    for v in values {
        put_varint(&mut body, v);
    }
    packed(field, &body)
}

fn packed_f32(field: u32, values: &[f32]) -> Vec<u8> {
    packed(
        field,
        &values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
}

fn tensor_named(name: &str) -> TensorProto<'static> {
    TensorProto {
        name: Some(name.to_string().into()),
        ..TensorProto::default()
    }
}

fn packing_cases() -> Vec<Case> {
    let floats = [1.5f32, -2.0, 0.0, f32::MAX, f32::MIN_POSITIVE];
    let int32s = [-1i32, 0, i32::MAX, i32::MIN, 7];
    let int64s = [i64::MIN, -1, 0, 1, i64::MAX];
    let doubles = [0.1f64, -1e300, 0.0, f64::MIN_POSITIVE, 42.0];
    let uint64s = [0u64, 1, u64::MAX, 1 << 63, 300];
    let typed = TensorProto {
        dims: vec![5],
        data_type: Some(1),
        float_data: floats.to_vec(),
        int32_data: int32s.to_vec(),
        int64_data: int64s.to_vec(),
        name: Some("typed".into()),
        double_data: doubles.to_vec(),
        uint64_data: uint64s.to_vec(),
        ..TensorProto::default()
    };
    let mut unpacked = Vec::new();
    varints(1, [5], &mut unpacked);
    varints(2, [1], &mut unpacked);
    f32s(4, &floats, &mut unpacked);
    // int32 negatives are sign-extended to ten bytes, as protobuf writes them.
    varints(
        5,
        int32s.iter().map(|&v| i64::from(v) as u64),
        &mut unpacked,
    );
    varints(7, int64s.iter().map(|&v| v as u64), &mut unpacked);
    unpacked.extend(ld(8, b"typed"));
    f64s(10, &doubles, &mut unpacked);
    varints(11, uint64s, &mut unpacked);

    // Packed runs and single elements mixed; values concatenate in order.
    let mut mixed = Vec::new();
    mixed.extend(packed_f32(4, &floats[..2]));
    f32s(4, &floats[2..3], &mut mixed);
    mixed.extend(packed_f32(4, &floats[3..]));
    varints(7, [int64s[0] as u64], &mut mixed);
    mixed.extend(packed_varints(7, int64s[1..4].iter().map(|&v| v as u64)));
    varints(7, [int64s[4] as u64], &mut mixed);
    let mixed_expected = TensorProto {
        float_data: floats.to_vec(),
        int64_data: int64s.to_vec(),
        ..TensorProto::default()
    };

    // Fields declared unpacked (dims, attribute floats/ints, map keys) written packed.
    let packed_dims = cat(&[&packed_varints(1, [2, 3, 4]), &ld(8, b"t")]);
    let dims_expected = TensorProto {
        dims: vec![2, 3, 4],
        name: Some("t".into()),
        ..TensorProto::default()
    };
    let attr_input = cat(&[
        &ld(1, b"a"),
        &packed_f32(7, &[0.5, -1.0]),
        &packed_varints(8, [1, (-1i64) as u64, 1 << 40]),
    ]);
    let attr_expected = AttributeProto {
        name: Some("a".into()),
        floats: vec![0.5, -1.0],
        ints: vec![1, -1, 1 << 40],
        ..AttributeProto::default()
    };
    let map_input = cat(&[
        &{
            let mut v = Vec::new();
            varints(2, [7], &mut v);
            v
        },
        &packed_varints(3, [1, (-2i64) as u64, 3]),
    ]);
    let map_expected = MapProto {
        key_type_raw: Some(7),
        keys: vec![1, -2, 3],
        ..MapProto::default()
    };
    // Over-long varints (valid, up to ten bytes) parse to their value.
    let overlong = cat(&[&[0x10, 0x81, 0x80, 0x80, 0x00], &ld(8, b"o")[..]]);
    let overlong_expected = TensorProto {
        data_type: Some(1),
        name: Some("o".into()),
        ..TensorProto::default()
    };

    vec![
        Case {
            name: "tensor_unpacked_typed_data",
            ty: "TensorProto",
            input: unpacked,
            expected: enc(&typed),
        },
        Case {
            name: "tensor_mixed_packing",
            ty: "TensorProto",
            input: mixed,
            expected: enc(&mixed_expected),
        },
        Case {
            name: "tensor_dims_packed",
            ty: "TensorProto",
            input: packed_dims,
            expected: enc(&dims_expected),
        },
        Case {
            name: "attribute_floats_ints_packed",
            ty: "AttributeProto",
            input: attr_input,
            expected: enc(&attr_expected),
        },
        Case {
            name: "map_keys_packed",
            ty: "MapProto",
            input: map_input,
            expected: enc(&map_expected),
        },
        Case {
            name: "overlong_varint",
            ty: "TensorProto",
            input: overlong,
            expected: enc(&overlong_expected),
        },
    ]
}

fn merge_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut case = |name, ty, input: Vec<u8>, expected: Vec<u8>| {
        cases.push(Case {
            name,
            ty,
            input,
            expected,
        })
    };

    // Scalars: the last value wins.
    case(
        "model_scalars_last_wins",
        "ModelProto",
        cat(&[
            &enc(&ModelProto {
                ir_version: Some(3),
                producer_name: Some("first".into()),
                model_version: Some(1),
                ..ModelProto::default()
            }),
            &enc(&ModelProto {
                ir_version: Some(10),
                producer_name: Some("second".into()),
                ..ModelProto::default()
            }),
        ]),
        enc(&ModelProto {
            ir_version: Some(10),
            producer_name: Some("second".into()),
            model_version: Some(1),
            ..ModelProto::default()
        }),
    );

    // A message field seen twice: merged (scalars replaced, repeated appended).
    let n1 = NodeProto::new("Relu", ["x"], ["y"]);
    let n2 = NodeProto::new("Neg", ["y"], ["z"]);
    case(
        "model_graph_twice_merges",
        "ModelProto",
        cat(&[
            &enc(&ModelProto {
                graph: Some(GraphProto {
                    node: vec![n1.clone()],
                    name: Some("a".into()),
                    doc_string: Some("kept".into()),
                    ..GraphProto::default()
                }),
                ..ModelProto::default()
            }),
            &enc(&ModelProto {
                ir_version: Some(9),
                graph: Some(GraphProto {
                    node: vec![n2.clone()],
                    name: Some("b".into()),
                    initializer: vec![tensor_named("w")],
                    ..GraphProto::default()
                }),
                ..ModelProto::default()
            }),
        ]),
        enc(&ModelProto {
            ir_version: Some(9),
            graph: Some(GraphProto {
                node: vec![n1.clone(), n2.clone()],
                name: Some("b".into()),
                initializer: vec![tensor_named("w")],
                doc_string: Some("kept".into()),
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }),
    );

    // Tensor: segment merges; data_type, raw_data and the enum data_location last wins.
    case(
        "tensor_segment_merges_scalars_last_win",
        "TensorProto",
        cat(&[
            &enc(&TensorProto {
                data_type: Some(1),
                segment: Some(Segment {
                    begin: Some(1),
                    ..Segment::default()
                }),
                raw_data: Some(Bytes::from(vec![1u8, 2, 3, 4])),
                data_location: Some(DataLocation::External.into()),
                ..TensorProto::default()
            }),
            &enc(&TensorProto {
                data_type: Some(7),
                segment: Some(Segment {
                    end: Some(5),
                    ..Segment::default()
                }),
                raw_data: Some(Bytes::from(vec![9u8; 8])),
                data_location: Some(DataLocation::Default.into()),
                ..TensorProto::default()
            }),
        ]),
        enc(&TensorProto {
            data_type: Some(7),
            segment: Some(Segment {
                begin: Some(1),
                end: Some(5),
                ..Segment::default()
            }),
            raw_data: Some(Bytes::from(vec![9u8; 8])),
            data_location: Some(DataLocation::Default.into()),
            ..TensorProto::default()
        }),
    );

    // Oneof: another member replaces; the same member merges.
    let tensor_type = |elem: Option<i32>, dims: Option<&[i64]>| TypeProto {
        value: Some(TypeValue::TensorType(TypeProtoTensor {
            elem_type_raw: elem,
            shape: dims.map(TensorShapeProto::from_dims),
            ..TypeProtoTensor::default()
        })),
        ..TypeProto::default()
    };
    let seq_type = TypeProto {
        value: Some(TypeValue::SequenceType(Box::new(TypeProtoSequence {
            elem_type: Some(Box::new(tensor_type(Some(7), None))),
            ..TypeProtoSequence::default()
        }))),
        denotation: Some("seq".into()),
        ..TypeProto::default()
    };
    case(
        "type_oneof_other_member_replaces",
        "TypeProto",
        cat(&[&enc(&tensor_type(Some(1), Some(&[3]))), &enc(&seq_type)]),
        enc(&seq_type),
    );
    case(
        "type_oneof_back_again",
        "TypeProto",
        cat(&[&enc(&seq_type), &enc(&tensor_type(Some(1), Some(&[3])))]),
        enc(&TypeProto {
            denotation: Some("seq".into()),
            ..tensor_type(Some(1), Some(&[3]))
        }),
    );
    case(
        "type_oneof_same_member_merges",
        "TypeProto",
        cat(&[
            &enc(&tensor_type(Some(1), None)),
            &enc(&tensor_type(None, Some(&[2, 3]))),
        ]),
        enc(&tensor_type(Some(1), Some(&[2, 3]))),
    );
    case(
        "dimension_oneof_last_wins",
        "TensorShapeProto",
        ld(
            1,
            &cat(&[
                &enc(&Dimension::value(3)),
                &enc(&Dimension {
                    denotation: Some("DATA_BATCH".into()),
                    ..Dimension::param("n")
                }),
            ]),
        ),
        enc(&TensorShapeProto {
            dim: vec![Dimension {
                denotation: Some("DATA_BATCH".into()),
                ..Dimension::param("n")
            }],
            ..TensorShapeProto::default()
        }),
    );
    case(
        "simple_sharded_dim_oneof_last_wins",
        "SimpleShardedDimProto",
        cat(&[
            &enc(&SimpleShardedDimProto {
                dim: Some(SimpleShardedDim::DimParam("batch".into())),
                num_shards: Some(2),
                ..SimpleShardedDimProto::default()
            }),
            &enc(&SimpleShardedDimProto {
                dim: Some(SimpleShardedDim::DimValue(64)),
                ..SimpleShardedDimProto::default()
            }),
        ]),
        enc(&SimpleShardedDimProto {
            dim: Some(SimpleShardedDim::DimValue(64)),
            num_shards: Some(2),
            ..SimpleShardedDimProto::default()
        }),
    );

    // Attribute: tensor and (boxed) graph seen twice merge.
    case(
        "attribute_t_and_g_twice_merge",
        "AttributeProto",
        cat(&[
            &enc(&AttributeProto {
                name: Some("x".into()),
                t: Some(Box::new(TensorProto {
                    dims: vec![1],
                    name: Some("t".into()),
                    ..TensorProto::default()
                })),
                g: Some(Box::new(GraphProto::named("first"))),
                ..AttributeProto::default()
            }),
            &enc(&AttributeProto {
                t: Some(Box::new(TensorProto {
                    dims: vec![2],
                    data_type: Some(1),
                    ..TensorProto::default()
                })),
                g: Some(Box::new(GraphProto {
                    node: vec![n1.clone()],
                    ..GraphProto::default()
                })),
                ..AttributeProto::default()
            }),
        ]),
        enc(&AttributeProto {
            name: Some("x".into()),
            t: Some(Box::new(TensorProto {
                dims: vec![1, 2],
                data_type: Some(1),
                name: Some("t".into()),
                ..TensorProto::default()
            })),
            g: Some(Box::new(GraphProto {
                node: vec![n1.clone()],
                name: Some("first".into()),
                ..GraphProto::default()
            })),
            ..AttributeProto::default()
        }),
    );

    // Repeated fields split over several occurrences are appended.
    case(
        "node_repeated_fields_appended",
        "NodeProto",
        cat(&[
            &enc(&NodeProto::new("Add", ["a"], ["y"])),
            &enc(&NodeProto::new("Mul", ["b"], Vec::<&str>::new())),
        ]),
        enc(&NodeProto::new("Mul", ["a", "b"], ["y"])),
    );

    // Boxed sub-messages of the data schema merge too.
    let seq = |name: Option<&str>, elem: Option<i32>, t: &str| SequenceProto {
        name: name.map(|n| n.to_string().into()),
        elem_type_raw: elem,
        tensor_values: vec![tensor_named(t)],
        ..SequenceProto::default()
    };
    case(
        "optional_sequence_value_twice_merges",
        "OptionalProto",
        cat(&[
            &enc(&OptionalProto {
                sequence_value: Some(Box::new(seq(Some("a"), None, "t1"))),
                ..OptionalProto::default()
            }),
            &enc(&OptionalProto {
                elem_type_raw: Some(3),
                sequence_value: Some(Box::new(seq(None, Some(1), "t2"))),
                ..OptionalProto::default()
            }),
        ]),
        enc(&OptionalProto {
            elem_type_raw: Some(3),
            sequence_value: Some(Box::new(SequenceProto {
                tensor_values: vec![tensor_named("t1"), tensor_named("t2")],
                ..seq(Some("a"), Some(1), "unused")
            })),
            ..OptionalProto::default()
        }),
    );
    case(
        "map_values_twice_merges",
        "MapProto",
        cat(&[
            &enc(&MapProto {
                keys: vec![1],
                values: Some(Box::new(seq(Some("v"), None, "t1"))),
                ..MapProto::default()
            }),
            &enc(&MapProto {
                keys: vec![2],
                values: Some(Box::new(seq(Some("w"), Some(1), "t2"))),
                ..MapProto::default()
            }),
        ]),
        enc(&MapProto {
            keys: vec![1, 2],
            values: Some(Box::new(SequenceProto {
                tensor_values: vec![tensor_named("t1"), tensor_named("t2")],
                ..seq(Some("w"), Some(1), "unused")
            })),
            ..MapProto::default()
        }),
    );
    cases
}

#[test]
fn packed_unpacked_and_merge_rules() {
    let dir = Scratch::new("onnx-interop-merge");
    let cases: Vec<Case> = packing_cases().into_iter().chain(merge_cases()).collect();
    let mut errs = Vec::new();
    for c in &cases {
        match reencode(c.ty, &c.input) {
            Err(e) => errs.push(format!("{}: {e}", c.name)),
            Ok(out) => {
                if let Some(d) = describe_diff(&c.expected, &out) {
                    errs.push(format!("{}: parsed to another value: {d}", c.name));
                }
            }
        }
    }
    let inputs: Vec<(&str, &str, Vec<u8>)> = cases
        .iter()
        .map(|c| (c.name, c.ty, c.input.clone()))
        .collect();
    for (c, (theirs, unknown)) in cases.iter().zip(protobuf_reserialize(&dir, &inputs)) {
        if let Some(d) = describe_diff(&c.expected, &theirs) {
            errs.push(format!(
                "{}: protobuf parses it to another value: {d}\n  protobuf: {}",
                c.name,
                hex(&theirs)
            ));
        }
        if unknown != "-" {
            errs.push(format!(
                "{}: protobuf sees unknown fields {unknown}",
                c.name
            ));
        }
    }
    println!(
        "{} packing and merge cases agree with protobuf",
        cases.len()
    );
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}
