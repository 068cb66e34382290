//! Malformed inputs, generated from a real model built here
//! (`hardening::real_model`: every top-level field, nodes with every attribute kind and a
//! subgraph, raw / packed / string tensors, a sparse initializer, a function, training
//! info). Each case is decoded in every mode — borrow, copy, shared, and every `io`
//! loader (`load_from_slice`, `load_from_bytes` with and without alignment,
//! `load_from_owner`, `load_from_reader`, `load_with` owned / no-copy / structure-only),
//! each with 1 and 2 threads — and must give the same outcome everywhere: the documented
//! `ErrorKind`, at the same byte offset, with the same field path.
//!
//! The expected kinds and offsets are computed by the test's own wire reader
//! (`hardening::records` / `locate`), never by the library's.

mod hardening;

use hardening::*;
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::wire::{FieldKey, WireType};
use onnx_light::{Bytes, ErrorKind, UnknownField, UnknownFields};

fn model_field(number: u64) -> (&'static str, bool) {
    match number {
        1 => ("ir_version", false),
        2 => ("producer_name", false),
        3 => ("producer_version", false),
        4 => ("domain", false),
        5 => ("model_version", false),
        6 => ("doc_string", false),
        7 => ("graph", false),
        8 => ("opset_import", true),
        14 => ("metadata_props", true),
        20 => ("training_info", true),
        25 => ("functions", true),
        n => panic!("field {n} is not in the generated model"),
    }
}

/// What decoding `bytes[..cut]` must give, predicted from the top-level records alone:
/// a cut at a record boundary leaves a shorter valid message; any other cut leaves a
/// key, a varint or a length prefix unfinished (`Truncated` at its start) or a payload
/// shorter than its prefix says (`LengthOutOfBounds` at the prefix).
enum Expected {
    Prefix,
    Error(ErrorKind, u64, String),
}

fn expected_for_cut(records: &[Record], cut: usize) -> Expected {
    let Some((i, r)) = records
        .iter()
        .enumerate()
        .find(|(_, r)| r.start < cut && cut < r.end)
    else {
        return Expected::Prefix;
    };
    let truncated = |from: usize| ErrorKind::Truncated {
        needed: (cut - from) as u64 + 1,
        remaining: (cut - from) as u64,
    };
    let (name, repeated) = model_field(r.number);
    let occurrence = records[..i].iter().filter(|o| o.number == r.number).count();
    let path = if repeated {
        format!("onnx.ModelProto.{name}[{occurrence}]")
    } else {
        format!("onnx.ModelProto.{name}")
    };
    let after_key = r.start + r.key_len;
    if cut < after_key {
        return Expected::Error(truncated(r.start), r.start as u64, String::new());
    }
    match r.wire_type {
        VARINT => Expected::Error(truncated(after_key), after_key as u64, path),
        LEN if cut < r.value_start => Expected::Error(truncated(after_key), after_key as u64, path),
        LEN => Expected::Error(
            ErrorKind::LengthOutOfBounds {
                length: (r.end - r.value_start) as u64,
                remaining: (cut - r.value_start) as u64,
            },
            after_key as u64,
            path,
        ),
        other => panic!("wire type {other} at the top level of the generated model"),
    }
}

#[test]
fn truncation_at_every_byte_gives_the_predicted_error_or_a_valid_prefix_in_every_mode() {
    let model = real_model();
    let bytes = model.encode_to_vec().unwrap();
    let records = records(&bytes);
    assert!(records.len() >= 12, "a model with many top-level records");
    // Cut at 0: no bytes decode to the empty message, but no loader takes an empty file
    // as a model (tests/tests/not_a_model.rs); every longer cut is the same everywhere.
    let mut prefixes = 1;
    for cut in 1..=bytes.len() {
        let input = &bytes[..cut];
        let outcome = same_everywhere(input, 100, Modes::MemoryAndFiles);
        match (expected_for_cut(&records, cut), outcome) {
            (Expected::Prefix, Outcome::Model(m)) => {
                // Protobuf allows this: a cut between top-level records is a valid,
                // shorter message. It must hold exactly the records before the cut: it
                // re-encodes to the same bytes (the encoder writes fields in the order
                // the generated model has them).
                assert_eq!(m.encode_to_vec().unwrap(), input, "cut at {cut}");
                prefixes += 1;
            }
            (
                Expected::Error(kind, offset, path),
                Outcome::Error {
                    kind: k,
                    offset: o,
                    path: p,
                },
            ) => {
                assert_eq!((&k, o, &p), (&kind, Some(offset), &path), "cut at {cut}");
            }
            (Expected::Prefix, o) => panic!("cut at {cut}: expected a valid prefix, got {o:?}"),
            (Expected::Error(kind, ..), Outcome::Model(_)) => {
                panic!("cut at {cut}: expected {kind:?}, but it decoded")
            }
        }
    }
    // The boundaries: before each record, and the end (the whole model).
    assert_eq!(prefixes, records.len() + 1);
    assert_eq!(
        same_everywhere(&bytes, 100, Modes::Memory).model(),
        Some(&model)
    );
}

#[test]
fn truncating_a_nested_message_is_reported_inside_it_with_its_path() {
    // Cut the graph's payload short but fix up the graph's own length prefix, so that the
    // truncation is seen by the graph's reader: every cut inside the last initializer
    // record ("labels").
    let model = real_model();
    let mut without_graph = model.clone();
    let graph = without_graph.graph.take().unwrap().encode_to_vec().unwrap();
    let head = without_graph.encode_to_vec().unwrap();
    let graph_records = records(&graph);
    let last_init = *graph_records.iter().rfind(|r| r.number == 5).unwrap();
    for cut in last_init.start + 1..last_init.end {
        let mut bytes = head.clone();
        bytes.extend(len_field(7, &graph[..cut]));
        let base = bytes.len() - cut;
        let (kind, offset) = match () {
            _ if cut < last_init.start + last_init.key_len => unreachable!("one-byte key"),
            _ if cut < last_init.value_start => (
                ErrorKind::Truncated {
                    needed: (cut - last_init.start - 1) as u64 + 1,
                    remaining: (cut - last_init.start - 1) as u64,
                },
                base + last_init.start + 1,
            ),
            _ => (
                ErrorKind::LengthOutOfBounds {
                    length: (last_init.end - last_init.value_start) as u64,
                    remaining: (cut - last_init.value_start) as u64,
                },
                base + last_init.start + 1,
            ),
        };
        let path = assert_error_everywhere(&bytes, kind, offset as u64);
        assert_eq!(path, "onnx.ModelProto.graph.initializer[3]", "cut at {cut}");
    }
}

// ---- varints ---------------------------------------------------------------------------

#[test]
fn over_long_varints_are_rejected_and_padded_ten_byte_varints_accepted() {
    let model = real_model();
    let bytes = model.encode_to_vec().unwrap();
    let first = records(&bytes)[0];
    assert_eq!(
        (first.number, first.end - first.value_start),
        (1, 1),
        "ir_version first"
    );
    let rest = &bytes[first.end..];
    // 14 padded to ten bytes is a valid varint (protobuf accepts non-minimal encodings).
    let padded = cat(&[
        &key(1, VARINT),
        &[0x8e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
        rest,
    ]);
    assert_eq!(
        same_everywhere(&padded, 100, Modes::MemoryAndFiles).model(),
        Some(&model)
    );
    // Eleven bytes.
    let input = cat(&[
        &key(1, VARINT),
        &[
            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
        ],
        rest,
    ]);
    let path = assert_error_everywhere(&input, ErrorKind::VarintOverflow, 1);
    assert_eq!(path, "onnx.ModelProto.ir_version");
    // Ten bytes whose last carries more than the 64th bit: protobuf drops the bits past
    // 64 and so do we.
    for (tenth, value) in [(0x02, i64::MAX), (0x7f, -1)] {
        let over = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, tenth];
        let input = cat(&[&key(1, VARINT), &over, rest]);
        let m = same_everywhere(&input, 100, Modes::Memory);
        assert_eq!(m.model().unwrap().ir_version, Some(value));
    }
    // The largest valid value, u64::MAX, is ten bytes ending in 0x01 (and is accepted).
    let max = cat(&[&key(1, VARINT), &varint(u64::MAX), rest]);
    let m = same_everywhere(&max, 100, Modes::Memory);
    assert_eq!(m.model().unwrap().ir_version, Some(-1));
    // An over-long key (eleven bytes, and six: protobuf reads keys as 32-bit varints, at
    // most five bytes) and an over-long length prefix.
    let input = cat(&[&[0x80; 10], &[0x01], rest]);
    assert_eq!(
        assert_error_everywhere(&input, ErrorKind::VarintOverflow, 0),
        ""
    );
    let input = cat(&[&[0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 14], rest]);
    assert_eq!(
        assert_error_everywhere(&input, ErrorKind::VarintOverflow, 0),
        ""
    );
    let five = cat(&[&[0x88, 0x80, 0x80, 0x80, 0x00, 14], rest]);
    assert_eq!(
        same_everywhere(&five, 100, Modes::Memory).model(),
        Some(&model)
    );
    let input = cat(&[&key(7, LEN), &[0x80; 11], rest]);
    assert_eq!(
        assert_error_everywhere(&input, ErrorKind::VarintOverflow, 1),
        "onnx.ModelProto.graph"
    );
    // A varint cut off after nine continuation bytes at the end of the input.
    let input = cat(&[&bytes[first.end..], &key(5, VARINT), &[0x80; 9]]);
    assert_error_everywhere(
        &input,
        ErrorKind::Truncated {
            needed: 10,
            remaining: 9,
        },
        (rest.len() + 1) as u64,
    );
}

#[test]
fn over_long_varints_in_nested_fields_name_the_field() {
    let eleven = [0x80u8; 10];
    let eleven = cat(&[&eleven, &[0x00]]);
    // TensorProto.data_type of a fifth initializer.
    let (bytes, at) = with_graph_record(5, &len_field(8, b"t"), &cat(&[&key(2, VARINT), &eleven]));
    let path = assert_error_everywhere(&bytes, ErrorKind::VarintOverflow, at as u64 + 1);
    assert_eq!(path, "onnx.ModelProto.graph.initializer[4].data_type");
    // An element of a packed int64_data: the third element is over-long.
    let packed = cat(&[&[0x01, 0x02], &eleven[..]]);
    let (bytes, at) = with_graph_record(5, &[], &len_field(7, &packed));
    let path = assert_error_everywhere(&bytes, ErrorKind::VarintOverflow, at as u64 + 4);
    assert_eq!(path, "onnx.ModelProto.graph.initializer[4].int64_data");
    // AttributeProto.i of a node's attribute, two levels further down.
    let attr = cat(&[&len_field(1, b"a"), &key(3, VARINT), &eleven]);
    let node = len_field(5, &attr);
    let (bytes, at) = with_graph_record(1, &len_field(4, b"Op"), &node);
    let at = at + 2 + 3; // attribute key and length, then its name field
    let path = assert_error_everywhere(&bytes, ErrorKind::VarintOverflow, at as u64 + 1);
    assert_eq!(path, "onnx.ModelProto.graph.node[3].attribute[0].i");
}

#[test]
fn fixed_width_values_cut_short_are_truncated_at_the_value() {
    // AttributeProto.f (float: fixed32) with 2 of its 4 bytes, last in its attribute.
    let attr = cat(&[&len_field(1, b"f"), &key(2, I32), &[0, 0]]);
    let (input, at) = with_graph_record(1, &len_field(4, b"Op"), &len_field(5, &attr));
    let value = at + 2 + 3 + 1; // attribute header, its name, the key of `f`
    let p = assert_error_everywhere(
        &input,
        ErrorKind::Truncated {
            needed: 4,
            remaining: 2,
        },
        value as u64,
    );
    assert_eq!(p, "onnx.ModelProto.graph.node[3].attribute[0].f");
    // An unpacked TensorProto.double_data element (fixed64) with 5 of its 8 bytes.
    let (input, at) = with_graph_record(5, &[], &cat(&[&key(10, I64), &[0; 5]]));
    let p = assert_error_everywhere(
        &input,
        ErrorKind::Truncated {
            needed: 8,
            remaining: 5,
        },
        at as u64 + 1,
    );
    assert_eq!(p, "onnx.ModelProto.graph.initializer[4].double_data");
    // A packed double_data of 12 bytes: not a whole number of elements.
    let (input, at) = with_graph_record(5, &[], &len_field(10, &[0; 12]));
    assert_error_everywhere(
        &input,
        ErrorKind::InvalidPackedLength {
            length: 12,
            element_size: 8,
        },
        at as u64 + 2,
    );
    // An unknown fixed64 field being skipped, cut at the end of the input.
    let bytes = real_model().encode_to_vec().unwrap();
    let k = key(1000, I64);
    let input = cat(&[&bytes, &k, &[0; 3]]);
    assert_error_everywhere(
        &input,
        ErrorKind::Truncated {
            needed: 8,
            remaining: 3,
        },
        (bytes.len() + k.len()) as u64,
    );
}

// ---- keys ------------------------------------------------------------------------------

#[test]
fn wire_types_6_and_7_are_rejected_at_the_key_everywhere() {
    let bytes = real_model().encode_to_vec().unwrap();
    for wt in [6u8, 7] {
        for number in [1u64, 7, 1000] {
            // At the top level, after the whole model.
            let input = cat(&[&bytes, &key(number, wt), &[0; 8]]);
            let path =
                assert_error_everywhere(&input, ErrorKind::InvalidWireType(wt), bytes.len() as u64);
            assert_eq!(path, "");
        }
        // In the graph, and inside an unknown group being skipped.
        let (input, at) = with_graph_extra(&cat(&[&key(3, wt), &[0; 4]]));
        let path = assert_error_everywhere(&input, ErrorKind::InvalidWireType(wt), at as u64);
        assert_eq!(path, "onnx.ModelProto.graph");
        let group = cat(&[
            &key(99, SGROUP),
            &varint_field(1, 5),
            &key(2, wt),
            &key(99, EGROUP),
        ]);
        let (input, at) = with_graph_extra(&group);
        // The group's key and the varint field take two bytes each.
        assert_error_everywhere(&input, ErrorKind::InvalidWireType(wt), at as u64 + 4);
    }
    // A key with field number 0 *and* wire type 6 reports the wire type (checked first).
    assert_error_everywhere(&[0x06], ErrorKind::InvalidWireType(6), 0);
}

#[test]
fn field_numbers_0_and_at_least_2_pow_29_are_rejected_and_2_pow_29_minus_1_kept() {
    let bytes = real_model().encode_to_vec().unwrap();
    for (number, wt) in [
        (0u64, VARINT),
        (0, LEN),
        (0, I32),
        (1 << 29, VARINT),
        (1 << 29, LEN),
        // The largest number a five-byte key holds (a longer key is itself malformed).
        ((1 << 32) - 1, VARINT),
    ] {
        let input = cat(&[&bytes, &key(number, wt), &[0; 8]]);
        let path = assert_error_everywhere(
            &input,
            ErrorKind::InvalidFieldNumber(number),
            bytes.len() as u64,
        );
        assert_eq!(path, "");
        // In a node of the graph.
        let (input, at) =
            with_graph_record(1, &len_field(4, b"Op"), &cat(&[&key(number, wt), &[0; 8]]));
        let path =
            assert_error_everywhere(&input, ErrorKind::InvalidFieldNumber(number), at as u64);
        assert_eq!(path, "onnx.ModelProto.graph.node[3]");
    }
    // The largest field number is valid: kept as an unknown field, written back.
    let largest = varint_field((1 << 29) - 1, 42);
    let input = cat(&[&bytes, &largest]);
    let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
    let m = m.model().unwrap();
    assert_eq!(m.unknown_fields.len(), 1);
    assert_eq!(m.encode_to_vec().unwrap(), input);
}

// ---- lengths ---------------------------------------------------------------------------

#[test]
fn lengths_past_the_end_of_the_enclosing_message_are_rejected_at_the_prefix() {
    let bytes = real_model().encode_to_vec().unwrap();
    // The graph's own prefix, one more than there is: bump the last record's prefix,
    // which then claims one byte past the input's end.
    let recs = records(&bytes);
    let last = *recs.last().unwrap();
    assert_eq!(last.wire_type, LEN);
    let mut input = bytes.clone();
    let (len, width) = read_varint(&bytes, last.start + last.key_len).unwrap();
    let bumped = varint(len + 1);
    assert_eq!(bumped.len(), width, "same width");
    input[last.start + last.key_len..last.value_start].copy_from_slice(&bumped);
    assert_error_everywhere(
        &input,
        ErrorKind::LengthOutOfBounds {
            length: len + 1,
            remaining: len,
        },
        (last.start + last.key_len) as u64,
    );
    // A node name claiming more than its node holds (though the graph has more bytes):
    // the bound is the node, not the input.
    let graph = locate(&bytes, &[(7, 0)]);
    let node = locate(&bytes, &[(7, 0), (1, 1)]);
    let name = locate(&bytes, &[(7, 0), (1, 1), (3, 0)]);
    assert_eq!(&bytes[name.value_start..name.end], b"const0");
    let mut input = bytes.clone();
    input[name.start + 1] = 0x7f;
    assert!(
        node.end - name.value_start < 0x7f,
        "more than the node holds"
    );
    assert!(
        graph.end - name.value_start > 0x7f,
        "less than the graph holds"
    );
    let path = assert_error_everywhere(
        &input,
        ErrorKind::LengthOutOfBounds {
            length: 0x7f,
            remaining: (node.end - name.value_start) as u64,
        },
        (name.start + 1) as u64,
    );
    assert_eq!(path, "onnx.ModelProto.graph.node[1].name");
    // A raw_data past its tensor, and a packed field past its tensor.
    for (field, path) in [(9u64, "raw_data"), (4, "float_data"), (7, "int64_data")] {
        let (input, at) = with_graph_record(
            5,
            &len_field(8, b"t"),
            &cat(&[&key(field, LEN), &[0x40], &[0; 3]]),
        );
        let p = assert_error_everywhere(
            &input,
            ErrorKind::LengthOutOfBounds {
                length: 0x40,
                remaining: 3,
            },
            at as u64 + 1,
        );
        assert_eq!(p, format!("onnx.ModelProto.graph.initializer[4].{path}"));
    }
    // A packed float field whose length is not a multiple of 4.
    let (input, at) = with_graph_record(5, &[], &len_field(4, &[0; 6]));
    let p = assert_error_everywhere(
        &input,
        ErrorKind::InvalidPackedLength {
            length: 6,
            element_size: 4,
        },
        at as u64 + 2,
    );
    assert_eq!(p, "onnx.ModelProto.graph.initializer[4].float_data");
}

// ---- wire types of known fields -----------------------------------------------------------

/// One field with its exact bytes, as the unknown-field set holding it must show it.
fn unknown_set(field: u64, wire_type: u8, value: &[u8]) -> UnknownFields<'static> {
    let raw = cat(&[&key(field, wire_type), value]);
    let k = FieldKey::new(field as u32, WireType::from_bits(wire_type).unwrap()).unwrap();
    let mut set = UnknownFields::new();
    set.push(UnknownField::from_raw(k, Bytes::from(raw)));
    set
}

#[test]
fn known_fields_with_the_wrong_wire_type_are_kept_as_unknown_fields() {
    let model = real_model();
    let bytes = model.encode_to_vec().unwrap();
    let n = bytes.len() as u64;
    // Top level: (field, wire type sent, value bytes), appended after the known fields,
    // where the canonical encoding writes unknown fields: re-encoding gives the input.
    let end_group = key(7, EGROUP);
    let top: [(u64, u8, &[u8]); 7] = [
        (1, LEN, &[1, 0]),       // ir_version
        (1, I64, &[0; 8]),       // ir_version
        (7, VARINT, &[0]),       // graph
        (7, SGROUP, &end_group), // graph, as an (empty) group
        (2, I32, &[0; 4]),       // producer_name
        (8, I32, &[1, 2, 3, 4]), // opset_import (repeated message)
        (5, LEN, &[0]),          // model_version
    ];
    for (field, wt, value) in top {
        let input = cat(&[&bytes, &key(field, wt), value]);
        let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
        let m = m
            .model()
            .unwrap_or_else(|| panic!("field {field}/{wt}: {m:?}"));
        assert_eq!(
            m.unknown_fields,
            unknown_set(field, wt, value),
            "{field}/{wt}"
        );
        assert_eq!(m.encode_to_vec().unwrap(), input, "{field}/{wt}");
        let mut known = m.clone();
        known.unknown_fields.clear();
        assert_eq!(known, model, "{field}/{wt}");
    }
    // In a fifth initializer, and in the graph itself (where field 1 is the repeated
    // message `node`): the field lands in that message's unknown fields.
    let nested: [(u64, u8, &[u8]); 6] = [
        (2, I64, &[0; 8]),       // data_type
        (4, VARINT, &[0]),       // float_data (packed float)
        (4, I64, &[0; 8]),       // float_data
        (7, I32, &[0; 4]),       // int64_data (packed int64)
        (14, LEN, &[0]),         // data_location (enum)
        (8, VARINT, &[0x80, 0]), // name
    ];
    for (field, wt, value) in nested {
        let (input, _) = with_graph_record(5, &[], &cat(&[&key(field, wt), value]));
        let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
        let mut expected = model.clone();
        expected
            .graph
            .as_mut()
            .unwrap()
            .initializer
            .push(TensorProto {
                unknown_fields: unknown_set(field, wt, value),
                ..TensorProto::default()
            });
        assert_eq!(m.model(), Some(&expected), "{field}/{wt}");
    }
    let (input, _) = with_graph_extra(&varint_field(1, 0));
    let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
    let mut expected = model.clone();
    expected.graph.as_mut().unwrap().unknown_fields = unknown_set(1, VARINT, &[0]);
    assert_eq!(m.model(), Some(&expected));
    // An end-group key with no group open is malformed whatever its number.
    let stray = cat(&[&bytes, &key(8, EGROUP)]);
    assert_eq!(
        assert_error_everywhere(&stray, ErrorKind::UnexpectedEndGroup { field: 8 }, n + 1),
        ""
    );
    // Repeated scalars accept both encodings (protobuf's rule): dims packed, floats
    // unpacked, mixed in one tensor.
    let mixed = cat(&[
        &len_field(8, b"mixed"),
        &len_field(1, &[2, 3]),
        &varint_field(1, 4),
        &key(4, I32),
        &1.5f32.to_le_bytes(),
        &len_field(4, &2.5f32.to_le_bytes()),
    ]);
    let (input, _) = with_graph_extra(&len_field(5, &mixed));
    let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
    let t = &m.model().unwrap().graph.as_ref().unwrap().initializer[4];
    assert_eq!(t.dims, vec![2, 3, 4]);
    assert_eq!(t.float_data, vec![1.5, 2.5]);
}

// ---- strings ---------------------------------------------------------------------------------

#[test]
fn invalid_utf8_in_any_string_field_is_rejected_at_the_bad_byte() {
    let bytes = real_model().encode_to_vec().unwrap();
    let n = bytes.len() as u64;
    // (bad string, index of the first bad byte)
    let bad: [(&[u8], u64); 6] = [
        (b"ab\xffcd", 2),
        (b"\xc0\x80", 0),         // over-long encoding of NUL
        (b"x\xed\xa0\x80", 1),    // a UTF-16 surrogate
        (b"euro \xe2\x82", 5),    // cut in the middle of a character
        (b"\xf4\x90\x80\x80", 0), // above U+10FFFF
        (b"ok\x80", 2),           // a stray continuation byte
    ];
    for (s, bad_at) in bad {
        // ModelProto.producer_name.
        let field = len_field(2, s);
        let input = cat(&[&bytes, &field]);
        let header = (field.len() - s.len()) as u64;
        let p = assert_error_everywhere(&input, ErrorKind::InvalidUtf8, n + header + bad_at);
        assert_eq!(p, "onnx.ModelProto.producer_name");
        // A node's name, a node's input (repeated string), an attribute's name.
        for (prefix, field, path) in [(&b""[..], 3u64, "name"), (b"", 1, "input")] {
            let (input, at) = with_graph_record(1, prefix, &len_field(field, s));
            let header = len_field(field, s).len() - s.len();
            let p = assert_error_everywhere(
                &input,
                ErrorKind::InvalidUtf8,
                (at + header) as u64 + bad_at,
            );
            assert_eq!(p, format!("onnx.ModelProto.graph.node[3].{path}"));
        }
        let attr = len_field(5, &len_field(1, s));
        let (input, at) = with_graph_record(1, &[], &attr);
        let p = assert_error_everywhere(&input, ErrorKind::InvalidUtf8, (at + 4) as u64 + bad_at);
        assert_eq!(p, "onnx.ModelProto.graph.node[3].attribute[0].name");
    }
    // `bytes` fields take any bytes: AttributeProto.s and TensorProto.string_data.
    let attr = cat(&[&len_field(1, b"s"), &len_field(4, b"\xff\xfe")]);
    let tensor = cat(&[&len_field(8, b"t"), &len_field(6, b"\xc0\x80")]);
    let (input, _) = with_graph_extra(&cat(&[
        &len_field(1, &len_field(5, &attr)),
        &len_field(5, &tensor),
    ]));
    let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
    let g = m.model().unwrap().graph.clone().unwrap();
    assert_eq!(g.node[3].attribute[0].s.as_deref().unwrap(), b"\xff\xfe");
    assert_eq!(&g.initializer[4].string_data[0][..], b"\xc0\x80");
}

// ---- groups ----------------------------------------------------------------------------------

#[test]
fn groups_without_their_end_are_rejected() {
    let bytes = real_model().encode_to_vec().unwrap();
    let n = bytes.len();
    let content = varint_field(1, 5);
    // No end at all: reported where the input ends.
    let input = cat(&[&bytes, &key(15, SGROUP), &content]);
    assert_error_everywhere(
        &input,
        ErrorKind::UnterminatedGroup { field: 15 },
        input.len() as u64,
    );
    // An end key of another field: reported right after it.
    let input = cat(&[
        &bytes,
        &key(15, SGROUP),
        &content,
        &key(16, EGROUP),
        &varint_field(1, 14),
    ]);
    assert_error_everywhere(
        &input,
        ErrorKind::UnterminatedGroup { field: 15 },
        (n + 1 + content.len() + 2) as u64,
    );
    // An inner group closed, the outer one not.
    let input = cat(&[&bytes, &key(15, SGROUP), &key(16, SGROUP), &key(16, EGROUP)]);
    assert_error_everywhere(
        &input,
        ErrorKind::UnterminatedGroup { field: 15 },
        input.len() as u64,
    );
    // An end key with no start: at the top level and in the graph.
    let input = cat(&[&bytes, &key(15, EGROUP)]);
    assert_error_everywhere(
        &input,
        ErrorKind::UnexpectedEndGroup { field: 15 },
        input.len() as u64,
    );
    let (input, at) = with_graph_extra(&key(99, EGROUP));
    assert_error_everywhere(
        &input,
        ErrorKind::UnexpectedEndGroup { field: 99 },
        at as u64 + 2,
    );
    // A group opened in a node whose end key lies outside the node, in the graph: the
    // node ends first, so the group is unterminated at the node's end.
    let node = cat(&[&len_field(4, b"Op"), &key(99, SGROUP)]);
    let (input, at) = with_graph_extra(&cat(&[&len_field(1, &node), &key(99, EGROUP)]));
    let node_end = at + 2 + node.len();
    let p = assert_error_everywhere(
        &input,
        ErrorKind::UnterminatedGroup { field: 99 },
        node_end as u64,
    );
    assert_eq!(p, "onnx.ModelProto.graph.node[3]");
    // A complete unknown group is kept and written back.
    let input = cat(&[&bytes, &key(15, SGROUP), &content, &key(15, EGROUP)]);
    let m = same_everywhere(&input, 100, Modes::MemoryAndFiles);
    assert_eq!(m.model().unwrap().encode_to_vec().unwrap(), input);
}

// ---- nesting ---------------------------------------------------------------------------------

/// A model whose main graph nests `depth` Loop bodies, each one level of
/// GraphProto -> NodeProto -> AttributeProto -> GraphProto (3 message levels); the
/// innermost graph holds `innermost_nodes` nodes.
fn nested_subgraphs(depth: usize, innermost_nodes: usize) -> Model {
    let mut g = GraphProto::named(format!("g{depth}"));
    for i in 0..innermost_nodes {
        g.node
            .push(NodeProto::new("Identity", ["a"], ["b"]).with_name(format!("deepest{i}")));
    }
    for d in (0..depth).rev() {
        let mut outer = GraphProto::named(format!("g{d}"));
        outer.node.push(
            NodeProto::new("Loop", ["n"], ["y"])
                .with_name(format!("loop{d}"))
                .with_attribute(AttributeProto::graph("body", g)),
        );
        g = outer;
    }
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[test]
fn deeply_nested_subgraphs_up_to_the_limit_load_and_beyond_it_fail_with_the_path() {
    on_small_stack(1 << 20, || {
        // Levels: graph 1, then 3 per subgraph: 33 subgraphs put the innermost graph at
        // level 100, and its nodes at level 101.
        let ok = nested_subgraphs(33, 0);
        let bytes = ok.encode_to_vec().unwrap();
        assert_eq!(
            same_everywhere(&bytes, 100, Modes::MemoryAndFiles).model(),
            Some(&ok)
        );

        let deep = nested_subgraphs(33, 1);
        let bytes = deep.encode_to_vec().unwrap();
        let mut path = vec![(7, 0)];
        for _ in 0..33 {
            path.extend([(1, 0), (5, 0), (6, 0)]);
        }
        path.push((1, 0));
        let node = locate(&bytes, &path);
        let p = assert_error_everywhere(
            &bytes,
            ErrorKind::RecursionLimitExceeded { limit: 100 },
            (node.start + node.key_len) as u64,
        );
        let expected = format!(
            "onnx.ModelProto.graph{}.node[0]",
            ".node[0].attribute[0].g".repeat(33)
        );
        assert_eq!(p, expected);
        // With a higher limit it loads.
        let all = decode_everywhere(&bytes, 101, Modes::MemoryAndFiles);
        for (mode, o) in all {
            assert_eq!(o.model(), Some(&deep), "{mode}");
        }
    });
}

#[test]
fn garbage_after_a_valid_model_is_never_silently_ignored() {
    // Whatever follows a complete model is parsed as more fields: a stray byte that is
    // not a valid key (here 0x00, field 0) is an error, not "trailing data".
    let bytes = real_model().encode_to_vec().unwrap();
    let input = cat(&[&bytes, &[0x00]]);
    assert_error_everywhere(&input, ErrorKind::InvalidFieldNumber(0), bytes.len() as u64);
}

#[test]
fn every_single_byte_mutation_gives_the_same_outcome_in_every_mode() {
    // Not a prediction of each outcome (that is the fuzzers' job), but a guarantee: no
    // mutation of any byte (to 0x00, to 0xff, or with its low or its high, varint
    // continuation, bit flipped) panics, and every mode agrees on the model or on the
    // error's kind, offset and path (the three decode modes and `load_from_bytes` with 1
    // and 2 threads, to keep this quick).
    let bytes = real_model().encode_to_vec().unwrap();
    let mut errors = 0;
    for i in 0..bytes.len() {
        let b = bytes[i];
        for v in [0x00, 0xff, b ^ 0x01, b ^ 0x80] {
            if v == b {
                continue;
            }
            let mut input = bytes.clone();
            input[i] = v;
            if same_everywhere(&input, 100, Modes::Decoders)
                .error()
                .is_some()
            {
                errors += 1;
            }
        }
    }
    assert!(errors > 1000, "most mutations are errors: {errors}");
}
