//! Encodings other protobuf encoders write, against the official `onnx` package.
//!
//! `every_row_parses_as_protobuf_parses_it`: each row is a hand-built byte string that
//! is valid protobuf but not what we write (fields in another order, repeated numbers
//! packed, unpacked or both, a field seen twice, over-long varints, tags and length
//! prefixes, a known field number with another wire type), or one that protobuf refuses.
//! `tests/python/noncanonical.py` parses every row with `onnx`; for a row it accepts,
//! our decode in each mode must re-encode to exactly `SerializeToString()` (protobuf's
//! canonical output, unknown fields included) and have the same summary (see
//! `onnx_summary.py`); for a row it refuses, every mode must fail with the row's error.
//!
//! `repeated_graphs_merge_the_same_with_parallel_list_decoding`: the merge rules where
//! long lists are decoded on several threads.

mod onnx_support;

use std::fs;
use std::sync::Arc;

use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::wire::Reader;
use onnx_light::{ByteOwner, DecodeOptions, ErrorKind, UnknownField};
use onnx_light_tests::python::{python_dir, run_python};
use onnx_light_tests::scratch::Scratch;
use onnx_support::{describe_diff, hex, summary};

// ---------------------------------------------------------------------------------------
// Building encodings by hand.

const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const SGROUP: u8 = 3;
const EGROUP: u8 = 4;
const I32: u8 = 5;

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// `v` as a varint of exactly `len` bytes (padded with continuation bytes).
fn padded(v: u64, len: usize) -> Vec<u8> {
    let mut out = varint(v);
    assert!(out.len() <= len);
    let last = out.len() - 1;
    out[last] |= 0x80;
    out.resize(len, 0x80);
    out[len - 1] = 0;
    out
}

fn key(number: u64, wire_type: u8) -> Vec<u8> {
    varint(number << 3 | u64::from(wire_type))
}

fn ld(number: u64, payload: &[u8]) -> Vec<u8> {
    cat(&[&key(number, LEN), &varint(payload.len() as u64), payload])
}

fn vi(number: u64, v: u64) -> Vec<u8> {
    cat(&[&key(number, VARINT), &varint(v)])
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn enc<M: Message>(m: &M) -> Vec<u8> {
    m.encode_to_vec().unwrap()
}

/// The top-level records of a message: field number and the record's bytes.
fn records(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        let start = r.position();
        let k = r.read_key().unwrap();
        r.skip(k).unwrap();
        out.push((k.number, r.consumed_since(start).0.to_vec()));
    }
    out
}

/// The payload of a length-delimited record.
fn payload(record: &[u8]) -> Vec<u8> {
    let mut r = Reader::new(record);
    r.read_key().unwrap();
    r.read_length_delimited().unwrap().0.to_vec()
}

/// `bytes` with the message at `path` — (field number, occurrence) steps — replaced by
/// `f` of its payload.
fn edit(bytes: &[u8], path: &[(u32, usize)], f: &dyn Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let Some((&(number, nth), rest)) = path.split_first() else {
        return f(bytes);
    };
    let mut seen = 0;
    let mut out = Vec::new();
    for (n, record) in records(bytes) {
        if n == number && seen == nth {
            out.extend(ld(n.into(), &edit(&payload(&record), rest, f)));
        } else {
            out.extend(record);
        }
        seen += usize::from(n == number);
    }
    assert!(seen > nth, "no occurrence {nth} of field {number}");
    out
}

fn reversed(bytes: &[u8]) -> Vec<u8> {
    records(bytes)
        .into_iter()
        .rev()
        .flat_map(|(_, r)| r)
        .collect()
}

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn unpacked_f32(number: u64, values: &[f32]) -> Vec<u8> {
    let fields: Vec<Vec<u8>> = values
        .iter()
        .map(|v| cat(&[&key(number, I32), &v.to_le_bytes()]))
        .collect();
    fields.concat()
}

fn unpacked_varints(number: u64, values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|&v| vi(number, v as u64)).collect()
}

fn packed_varints(number: u64, values: &[i64]) -> Vec<u8> {
    let body: Vec<u8> = values.iter().flat_map(|&v| varint(v as u64)).collect();
    ld(number, &body)
}

// ---------------------------------------------------------------------------------------
// The model the rows start from.

const FLOATS: [f32; 6] = [1.5, -2.0, 0.0, f32::MAX, -0.0, 3.25];
const INT64S: [i64; 3] = [-1, 0, 1 << 40];

fn base_model() -> Model {
    let mut g = GraphProto::named("g");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [2, 3]));
    g.output
        .push(ValueInfoProto::tensor("y", DataType::Float, [2, 3]));
    g.initializer.push(TensorProto {
        dims: vec![2, 3],
        data_type: Some(1),
        float_data: FLOATS.to_vec(),
        name: Some("w".into()),
        ..TensorProto::default()
    });
    g.initializer.push(TensorProto {
        dims: vec![3],
        data_type: Some(7),
        int64_data: INT64S.to_vec(),
        name: Some("i".into()),
        ..TensorProto::default()
    });
    g.node.push(
        NodeProto::new("Add", ["x", "w"], ["t"])
            .with_attribute(AttributeProto::int("k", 3))
            .with_attribute(AttributeProto::floats("f", [0.5, 1.5])),
    );
    g.node
        .push(NodeProto::new("Relu", ["t"], ["y"]).with_name("r"));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("noncanonical".into());
    m.model_version = Some(2);
    m.doc_string = Some("rows start here".into());
    m.metadata_props.push(StringStringEntryProto::new("k", "v"));
    m
}

// Paths into the base model's encoding.
const GRAPH: &[(u32, usize)] = &[(7, 0)];
const NODE0: &[(u32, usize)] = &[(7, 0), (1, 0)];
const ATTR_K: &[(u32, usize)] = &[(7, 0), (1, 0), (5, 0)];
const TENSOR_W: &[(u32, usize)] = &[(7, 0), (5, 0)];
const TENSOR_I: &[(u32, usize)] = &[(7, 0), (5, 1)];
// graph.input[0].type.tensor_type.shape.dim[0]
const DIM0: &[(u32, usize)] = &[(7, 0), (11, 0), (2, 0), (1, 0), (2, 0), (1, 0)];

/// The initializer `w` as another encoder may write it: `dims` and `float_data` given
/// whole.
fn tensor_w(dims: &[u8], float_data: &[u8]) -> Vec<u8> {
    cat(&[&ld(8, b"w"), dims, &vi(2, 1), float_data])
}

fn tensor_i(dims: &[u8], int64_data: &[u8]) -> Vec<u8> {
    cat(&[int64_data, &ld(8, b"i"), dims, &vi(2, 7)])
}

// ---------------------------------------------------------------------------------------
// The rows.

#[derive(Clone, Copy, Debug)]
enum Ty {
    Model,
    Node,
    Attribute,
    Tensor,
}

impl Ty {
    fn proto(self) -> &'static str {
        match self {
            Ty::Model => "ModelProto",
            Ty::Node => "NodeProto",
            Ty::Attribute => "AttributeProto",
            Ty::Tensor => "TensorProto",
        }
    }
}

enum Expect {
    /// Valid: parses as protobuf parses it.
    Parses,
    /// Refused by protobuf; our error must satisfy the predicate (named for messages).
    Rejected(&'static str, fn(&ErrorKind) -> bool),
}

struct Row {
    name: &'static str,
    ty: Ty,
    bytes: Vec<u8>,
    expect: Expect,
}

fn rows() -> Vec<Row> {
    let m = enc(&base_model());
    let model = base_model();
    let graph = enc(model.graph.as_ref().unwrap());
    let node0 = enc(&model.graph.as_ref().unwrap().node[0]);
    let mut rows = Vec::new();
    let mut ok = |name, ty, bytes| {
        rows.push(Row {
            name,
            ty,
            bytes,
            expect: Expect::Parses,
        })
    };

    // Field order.
    ok("model_fields_reversed", Ty::Model, reversed(&m));
    ok(
        "graph_fields_reversed",
        Ty::Model,
        edit(&m, GRAPH, &reversed),
    );
    ok("node_fields_reversed", Ty::Node, reversed(&node0));
    ok(
        "every_message_reversed",
        Ty::Model,
        [NODE0, ATTR_K, TENSOR_W, TENSOR_I, GRAPH]
            .iter()
            .fold(reversed(&m), |b, p| edit(&b, p, &reversed)),
    );
    let recs = records(&m);
    let interleaved: Vec<u8> = (0..recs.len())
        .map(|i| &recs[(i * 5) % recs.len()].1)
        .flat_map(|r| r.iter().copied())
        .collect();
    assert!(
        !recs.len().is_multiple_of(5),
        "stepping by 5 must reach every record"
    );
    ok("model_fields_permuted", Ty::Model, interleaved);

    // Packed and unpacked repeated numbers (dims is declared unpacked, float_data and
    // int64_data packed).
    let dims_unpacked = unpacked_varints(1, &[2, 3]);
    let dims_packed = packed_varints(1, &[2, 3]);
    let dims_mixed = cat(&[&packed_varints(1, &[2]), &vi(1, 3)]);
    let floats_packed = ld(4, &f32s(&FLOATS));
    let floats_unpacked = unpacked_f32(4, &FLOATS);
    let floats_mixed = cat(&[
        &unpacked_f32(4, &FLOATS[..2]),
        &ld(4, &f32s(&FLOATS[2..4])),
        &ld(4, &[]),
        &unpacked_f32(4, &FLOATS[4..]),
    ]);
    let w = |dims: &[u8], data: &[u8]| {
        let t = tensor_w(dims, data);
        edit(&m, TENSOR_W, &move |_| t.clone())
    };
    ok(
        "tensor_dims_packed",
        Ty::Model,
        w(&dims_packed, &floats_packed),
    );
    ok(
        "tensor_float_data_unpacked",
        Ty::Model,
        w(&dims_unpacked, &floats_unpacked),
    );
    ok(
        "tensor_dims_and_float_data_mixed",
        Ty::Model,
        w(&dims_mixed, &floats_mixed),
    );
    let ints_unpacked = unpacked_varints(7, &INT64S);
    let ints_mixed = cat(&[
        &vi(7, INT64S[0] as u64),
        &packed_varints(7, &INT64S[1..2]),
        &vi(7, INT64S[2] as u64),
    ]);
    let i = |dims: &[u8], data: &[u8]| {
        let t = tensor_i(dims, data);
        edit(&m, TENSOR_I, &move |_| t.clone())
    };
    ok(
        "tensor_int64_data_unpacked",
        Ty::Model,
        i(&packed_varints(1, &[3]), &ints_unpacked),
    );
    ok(
        "tensor_int64_data_mixed",
        Ty::Model,
        i(&vi(1, 3), &ints_mixed),
    );
    ok(
        "tensor_alone_mixed_interleaved",
        Ty::Tensor,
        cat(&[
            &vi(1, 2),
            &unpacked_f32(4, &FLOATS[..1]),
            &ld(8, b"w"),
            &packed_varints(1, &[3]),
            &ld(4, &f32s(&FLOATS[1..])),
            &vi(2, 1),
        ]),
    );
    ok(
        "attribute_floats_and_ints_packed",
        Ty::Attribute,
        cat(&[
            &ld(1, b"a"),
            &ld(7, &f32s(&[0.5, -1.0])),
            &packed_varints(8, &[1, -1, 1 << 40]),
            &vi(20, 7),
        ]),
    );

    // A non-repeated field seen twice: the last scalar wins, messages merge (and
    // recursively: scalars replaced, repeated fields appended, sub-messages merged).
    ok("ir_version_twice", Ty::Model, cat(&[&m, &vi(1, 3)]));
    ok(
        "producer_name_twice",
        Ty::Model,
        cat(&[&ld(2, b"first"), &m, &ld(2, b"last")]),
    );
    let graph_recs = records(&graph);
    let (a, b) = graph_recs.split_at(graph_recs.len() / 2);
    let half =
        |rs: &[(u32, Vec<u8>)]| -> Vec<u8> { rs.iter().flat_map(|(_, r)| r.clone()).collect() };
    let without_graph: Vec<u8> = records(&m)
        .into_iter()
        .filter(|(n, _)| *n != 7)
        .flat_map(|(_, r)| r)
        .collect();
    ok(
        "graph_split_in_two",
        Ty::Model,
        cat(&[&ld(7, &half(a)), &without_graph, &ld(7, &half(b))]),
    );
    let neg = enc(&NodeProto::new("Neg", ["y"], ["z"]));
    ok(
        "graph_twice_with_different_nodes",
        Ty::Model,
        cat(&[
            &m,
            &ld(
                7,
                &cat(&[
                    &ld(1, &neg),
                    &ld(2, b"renamed"),
                    &ld(
                        12,
                        &enc(&ValueInfoProto::tensor("z", DataType::Float, [2, 3])),
                    ),
                ]),
            ),
        ]),
    );
    // AttributeProto.t (a TensorProto) twice in an attribute appended to node 0:
    // dims appended, name replaced, data_type kept.
    let attr_t = cat(&[
        &ld(1, b"t"),
        &vi(20, 4),
        &ld(5, &cat(&[&vi(1, 2), &ld(8, b"first"), &vi(2, 1)])),
        &ld(5, &cat(&[&vi(1, 3), &ld(8, b"second")])),
    ]);
    ok(
        "node_attribute_tensor_twice_merged",
        Ty::Model,
        edit(&m, NODE0, &|n| cat(&[n, &ld(5, &attr_t)])),
    );
    // Node 0's attributes interleaved with its inputs and outputs.
    ok(
        "node_attributes_interleaved",
        Ty::Node,
        attributes_interleaved(&node0),
    );
    // The oneof Dimension.value: dim_param then dim_value (another member replaces).
    ok(
        "oneof_member_replaced",
        Ty::Model,
        edit(&m, DIM0, &|d| cat(&[&ld(2, b"N"), d])),
    );

    // Over-long varints: a value, a length prefix, a tag (keys up to five bytes).
    let (first, rest) = m.split_at(2);
    assert_eq!(first[0], 0x08, "ir_version first");
    ok(
        "ir_version_ten_byte_varint",
        Ty::Model,
        cat(&[&key(1, VARINT), &padded(u64::from(first[1]), 10), rest]),
    );
    ok(
        "model_version_tenth_byte_past_64_bits",
        Ty::Model,
        cat(&[&m, &key(5, VARINT), &[0xff; 9], &[0x7f]]),
    );
    ok(
        "zero_as_two_bytes",
        Ty::Model,
        cat(&[&m, &key(5, VARINT), &[0x80, 0x00]]),
    );
    ok(
        "graph_length_prefix_ten_bytes",
        Ty::Model,
        records(&m)
            .into_iter()
            .flat_map(|(n, r)| {
                if n == 7 {
                    let p = payload(&r);
                    cat(&[&key(7, LEN), &padded(p.len() as u64, 10), &p])
                } else {
                    r
                }
            })
            .collect(),
    );
    ok(
        "ir_version_tag_five_bytes",
        Ty::Model,
        cat(&[&padded(1 << 3, 5), &first[1..], rest]),
    );
    ok(
        "graph_tag_three_bytes",
        Ty::Model,
        cat(&[
            &without_graph,
            &padded(7 << 3 | 2, 3),
            &varint(graph.len() as u64),
            &graph,
        ]),
    );

    // A known field number with another wire type: an unknown field, written back after
    // the known fields (each row has one before a known field, to see it move).
    ok("ir_version_as_len", Ty::Model, cat(&[&ld(1, &[5]), &m]));
    ok(
        "ir_version_as_fixed64",
        Ty::Model,
        cat(&[&key(1, I64), &[9; 8], &m]),
    );
    ok("graph_as_varint", Ty::Model, cat(&[&vi(7, 1), &m]));
    ok(
        "graph_as_group",
        Ty::Model,
        cat(&[&key(7, SGROUP), &vi(1, 5), &key(7, EGROUP), &m]),
    );
    ok(
        "opset_import_as_fixed32",
        Ty::Model,
        cat(&[&key(8, I32), &[1, 2, 3, 4], &m]),
    );
    ok(
        "dims_as_fixed32",
        Ty::Model,
        edit(&m, TENSOR_W, &|t| cat(&[&key(1, I32), &[2, 0, 0, 0], t])),
    );
    ok(
        "float_data_as_fixed64_and_varint",
        Ty::Model,
        edit(&m, TENSOR_W, &|t| {
            cat(&[&key(4, I64), &[0; 8], t, &vi(4, 1)])
        }),
    );
    ok(
        "int64_data_as_fixed32",
        Ty::Model,
        edit(&m, TENSOR_I, &|t| cat(&[&key(7, I32), &[1; 4], t])),
    );
    ok(
        "data_location_as_len",
        Ty::Model,
        edit(&m, TENSOR_I, &|t| cat(&[&ld(14, &[1]), t])),
    );
    ok("op_type_as_varint", Ty::Node, cat(&[&vi(4, 1), &node0]));
    ok(
        "node_input_and_attribute_as_fixed32",
        Ty::Model,
        edit(&m, NODE0, &|n| {
            cat(&[&key(1, I32), &[0; 4], n, &key(5, I32), &[1; 4]])
        }),
    );
    ok(
        "attribute_type_and_i_as_len",
        Ty::Model,
        edit(&m, ATTR_K, &|a| cat(&[&ld(20, &[2]), a, &ld(3, &[7])])),
    );
    ok(
        "dim_value_as_len_leaves_the_oneof",
        Ty::Model,
        edit(&m, DIM0, &|d| cat(&[&ld(1, &[5]), d])),
    );

    // Refused by protobuf.
    let mut bad = |name, ty, bytes, what, kind: fn(&ErrorKind) -> bool| {
        rows.push(Row {
            name,
            ty,
            bytes,
            expect: Expect::Rejected(what, kind),
        })
    };
    bad(
        "eleven_byte_varint",
        Ty::Model,
        cat(&[&m, &key(5, VARINT), &[0x80; 10], &[0x00]]),
        "VarintOverflow",
        |k| *k == ErrorKind::VarintOverflow,
    );
    bad(
        "eleven_byte_length_prefix",
        Ty::Model,
        cat(&[&m, &key(2, LEN), &[0x81], &[0x80; 9], &[0x00], b"x"]),
        "VarintOverflow",
        |k| *k == ErrorKind::VarintOverflow,
    );
    bad(
        "six_byte_tag",
        Ty::Model,
        cat(&[&m, &padded(1 << 3, 6), &[5]]),
        "VarintOverflow",
        |k| *k == ErrorKind::VarintOverflow,
    );
    bad(
        "five_byte_tag_past_32_bits",
        Ty::Model,
        cat(&[&m, &[0xf8, 0xff, 0xff, 0xff, 0x1f], &[5]]),
        "InvalidFieldNumber",
        |k| matches!(k, ErrorKind::InvalidFieldNumber(_)),
    );
    bad(
        "wire_type_6",
        Ty::Model,
        cat(&[&m, &[0x0e, 0]]),
        "InvalidWireType(6)",
        |k| *k == ErrorKind::InvalidWireType(6),
    );
    bad(
        "wire_type_7_in_a_node",
        Ty::Model,
        edit(&m, NODE0, &|n| cat(&[n, &[0x27, 0]])),
        "InvalidWireType(7)",
        |k| *k == ErrorKind::InvalidWireType(7),
    );
    bad(
        "field_number_0",
        Ty::Model,
        cat(&[&m, &[0x00, 0x00]]),
        "InvalidFieldNumber(0)",
        |k| *k == ErrorKind::InvalidFieldNumber(0),
    );
    bad(
        "field_number_2_pow_29",
        Ty::Model,
        cat(&[&m, &key(1 << 29, VARINT), &[0]]),
        "InvalidFieldNumber(2^29)",
        |k| *k == ErrorKind::InvalidFieldNumber(1 << 29),
    );
    bad(
        "group_ends_with_another_number",
        Ty::Model,
        cat(&[&m, &key(1, SGROUP), &key(2, EGROUP)]),
        "UnterminatedGroup",
        |k| *k == ErrorKind::UnterminatedGroup { field: 1 },
    );
    bad(
        "group_on_a_known_field_never_ends",
        Ty::Model,
        edit(&m, TENSOR_W, &|t| cat(&[t, &key(1, SGROUP), &vi(1, 2)])),
        "UnterminatedGroup",
        |k| *k == ErrorKind::UnterminatedGroup { field: 1 },
    );
    bad(
        "stray_end_group",
        Ty::Model,
        cat(&[&m, &key(7, EGROUP)]),
        "UnexpectedEndGroup",
        |k| *k == ErrorKind::UnexpectedEndGroup { field: 7 },
    );
    bad(
        "packed_float_data_not_a_multiple_of_4",
        Ty::Model,
        edit(&m, TENSOR_W, &|t| cat(&[t, &ld(4, &[0; 3])])),
        "InvalidPackedLength",
        |k| {
            matches!(
                k,
                ErrorKind::InvalidPackedLength {
                    length: 3,
                    element_size: 4
                }
            )
        },
    );
    bad(
        "packed_int64_data_cut_in_a_varint",
        Ty::Model,
        edit(&m, TENSOR_I, &|t| cat(&[t, &ld(7, &[0x01, 0x80])])),
        "Truncated",
        |k| matches!(k, ErrorKind::Truncated { .. }),
    );
    bad(
        "length_past_the_end",
        Ty::Model,
        cat(&[&m, &key(6, LEN), &[0x05], b"abc"]),
        "LengthOutOfBounds",
        |k| matches!(k, ErrorKind::LengthOutOfBounds { .. }),
    );
    rows
}

/// A node's records with its attributes moved between its other fields, one after each.
fn attributes_interleaved(node: &[u8]) -> Vec<u8> {
    let (attrs, rest): (Vec<_>, Vec<_>) = records(node).into_iter().partition(|(n, _)| *n == 5);
    assert!(attrs.len() <= rest.len());
    let mut attrs = attrs.into_iter();
    let mut out = Vec::new();
    for (_, r) in rest {
        out.extend(r);
        if let Some((_, a)) = attrs.next() {
            out.extend(a);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Our side.

/// What one decode mode made of a row: its encoding and summary, or its error (kind,
/// offset, field path).
type Decoded = Result<(Vec<u8>, String), (ErrorKind, Option<u64>, String)>;

fn outcome<M: Message>(r: onnx_light::Result<M>, summarize: impl Fn(&M) -> String) -> Decoded {
    match r {
        Ok(m) => Ok((enc(&m), summarize(&m))),
        Err(e) => Err((e.kind().clone(), e.offset(), e.path_string())),
    }
}

/// Decodes in borrow, copy and shared mode (shared with a threshold low enough to share
/// payloads); one outcome per mode, named.
macro_rules! every_mode {
    ($ty:ident, $bytes:expr, $summarize:expr) => {{
        let bytes: &[u8] = $bytes;
        let owner: ByteOwner = Arc::new(bytes.to_vec());
        let shared = DecodeOptions {
            shared_threshold: 4,
            ..DecodeOptions::default()
        };
        vec![
            ("borrow", outcome($ty::decode(bytes), $summarize)),
            ("copy", outcome($ty::decode_owned(bytes), $summarize)),
            (
                "shared",
                outcome($ty::decode_shared(owner, &shared), $summarize),
            ),
        ]
    }};
}

fn ours(ty: Ty, bytes: &[u8]) -> Vec<(&'static str, Decoded)> {
    match ty {
        Ty::Model => every_mode!(ModelProto, bytes, |m| summary::model(m)),
        Ty::Node => every_mode!(NodeProto, bytes, |n| summary::node(n)),
        Ty::Attribute => every_mode!(AttributeProto, bytes, |a| summary::attribute(a)),
        Ty::Tensor => every_mode!(TensorProto, bytes, |t| summary::tensor(t)),
    }
}

// ---------------------------------------------------------------------------------------
// The test.

/// What protobuf made of a row: `Some((bytes, summary))`, or `None` when it refused it.
type Theirs = Option<(Vec<u8>, String)>;

fn protobuf(dir: &Scratch, rows: &[Row]) -> Vec<Theirs> {
    let mut list = String::new();
    for row in rows {
        let path = dir.path(&format!("{}.bin", row.name));
        fs::write(&path, &row.bytes).unwrap();
        list.push_str(&format!("{} {}\n", row.ty.proto(), path.display()));
    }
    let list_path = dir.path("rows.txt");
    fs::write(&list_path, list).unwrap();
    let out = run_python(
        &python_dir().join("noncanonical.py"),
        &[list_path.as_os_str()],
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let theirs: Vec<Theirs> = text
        .lines()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("ok"), Some(h), Some(s)) => Some((unhex(h), s.to_string())),
                (Some("error"), Some(_), None) => None,
                _ => panic!("malformed line {line:?}"),
            }
        })
        .collect();
    assert_eq!(theirs.len(), rows.len(), "one line per row:\n{text}");
    theirs
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn every_row_parses_as_protobuf_parses_it() {
    let rows = rows();
    let dir = Scratch::new("noncanonical");
    let theirs = protobuf(&dir, &rows);
    let mut errs = Vec::new();
    for (row, theirs) in rows.iter().zip(&theirs) {
        let name = row.name;
        let modes = ours(row.ty, &row.bytes);
        match (&row.expect, theirs) {
            (Expect::Parses, None) => errs.push(format!("{name}: protobuf refuses it")),
            (Expect::Rejected(..), Some(_)) => errs.push(format!("{name}: protobuf accepts it")),
            (Expect::Parses, Some((bytes, text))) => {
                if *bytes == row.bytes {
                    errs.push(format!("{name}: the row is canonical, so it tests nothing"));
                }
                for (mode, o) in &modes {
                    match o {
                        Err(e) => errs.push(format!("{name}: {mode} mode refuses it: {e:?}")),
                        Ok((ours, summary)) => {
                            if let Some(d) = describe_diff(bytes, ours) {
                                errs.push(format!(
                                    "{name}: {mode} mode re-encodes differently from protobuf: {d}\n  input {}",
                                    hex(&row.bytes)
                                ));
                            }
                            if summary != text {
                                errs.push(format!(
                                    "{name}: {mode} mode decodes to\n  {summary}\nprotobuf to\n  {text}"
                                ));
                            }
                        }
                    }
                }
            }
            (Expect::Rejected(what, kind), None) => {
                let first = &modes[0].1;
                for (mode, o) in &modes {
                    match o {
                        Ok(_) => errs.push(format!("{name}: {mode} mode accepts it")),
                        Err((k, offset, _)) if !kind(k) || offset.is_none() => errs.push(format!(
                            "{name}: {mode} mode fails with {k:?} at {offset:?}, expected {what} at an offset"
                        )),
                        Err(_) if o != first => errs.push(format!(
                            "{name}: {mode} mode fails with {o:?}, borrow mode with {first:?}"
                        )),
                        Err(_) => {}
                    }
                }
            }
        }
    }
    println!("{} rows checked against protobuf", rows.len());
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Merging where long lists are decoded in parallel.

#[test]
fn repeated_graphs_merge_the_same_with_parallel_list_decoding() {
    // Two graph records of 3000 nodes each, in runs of 2500 (past the bytes and values
    // at which a list is split across threads) and 500: a node record of the wrong wire
    // type ends each long run. The second graph also has a node as a varint and its own
    // `name` (last wins).
    let node = |i: usize| {
        let mut n = NodeProto::new("Relu", [format!("x{i}")], [format!("y{i}")]);
        n.doc_string = Some("d".repeat(100).into());
        n
    };
    let nodes = |from: usize| -> Vec<u8> {
        (from..from + 3000)
            .flat_map(|i| {
                let mut r = ld(1, &enc(&node(i)));
                if i % 3000 == 2499 {
                    r.extend(cat(&[&key(1, I32), &[0; 4]]));
                }
                r
            })
            .collect()
    };
    let bytes = cat(&[
        &vi(1, 9),
        &ld(7, &cat(&[&ld(2, b"first"), &nodes(0)])),
        &ld(2, b"producer"),
        &ld(7, &cat(&[&nodes(3000), &ld(2, b"second"), &vi(1, 0)])),
    ]);
    let mut graph = GraphProto {
        node: (0..6000).map(node).collect(),
        name: Some("second".into()),
        ..GraphProto::default()
    };
    for unknown in [
        UnknownField::fixed32(1, 0),
        UnknownField::fixed32(1, 0),
        UnknownField::varint(1, 0),
    ] {
        graph.unknown_fields.push(unknown.unwrap());
    }
    let expected = ModelProto {
        ir_version: Some(9),
        producer_name: Some("producer".into()),
        graph: Some(graph),
        ..ModelProto::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for parallel in [false, true] {
        let options = DecodeOptions {
            parallel,
            ..DecodeOptions::default()
        };
        pool.install(|| {
            let b = ModelProto::decode_with(&bytes, &options).unwrap();
            assert!(b == expected, "borrow mode, parallel {parallel}");
            let c = Model::decode_owned_with(&bytes, &options).unwrap();
            assert!(c == expected, "copy mode, parallel {parallel}");
        });
    }
}
