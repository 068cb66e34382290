//! Resource limits: nesting depth, stack use, length prefixes, and
//! the optional caps on tensor and model size.
//!
//! Nesting: a message, a group, or a mix of both nested more than
//! `recursion_limit` (default 100) levels below the top-level message is rejected with
//! `RecursionLimitExceeded { limit }` in every decode mode and every loader. The limit is
//! checked *before* descending, so megabytes of nested length prefixes or start-group
//! keys cost nothing beyond the first 101 levels; groups are skipped without recursion
//! at all. Every depth test runs its decodes on a thread with a 1 MiB stack (half of
//! Rust's default for spawned threads, an eighth of the main thread's), in whatever
//! profile the tests are built with (debug by default), so a pass proves that depth
//! 100 fits in 1 MiB with unoptimised frames.
//!
//! Memory bounds (peak bytes allocated while decoding) are proven in
//! `memory_bounds.rs`, which needs a counting global allocator of its own.

mod hardening;

use hardening::*;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ErrorKind, Limit};
use onnx_light_tests::mapped::Load;

const STACK: usize = 1 << 20;

/// A chain of `depth` nested messages, `fields[i]` being the field number of level
/// `i + 1` (the outermost record is level 1), around `innermost`. Built front to back
/// in one pass, so millions of levels cost only their bytes.
fn nested_chain(fields: &[u64], innermost: &[u8]) -> Vec<u8> {
    // payload[i] = size of the payload of the record at level i + 1.
    let mut payload = vec![0u64; fields.len()];
    let mut inner = innermost.len() as u64;
    for i in (0..fields.len()).rev() {
        payload[i] = inner;
        inner = key(fields[i], LEN).len() as u64 + varint(inner).len() as u64 + inner;
    }
    let mut out = Vec::with_capacity(inner as usize);
    for (i, &f) in fields.iter().enumerate() {
        out.extend(key(f, LEN));
        out.extend(varint(payload[i]));
    }
    out.extend_from_slice(innermost);
    out
}

/// Field numbers of a TypeProto chain `depth` levels deep: ModelProto.graph ->
/// GraphProto.value_info -> ValueInfoProto.type -> (TypeProto.sequence_type ->
/// TypeProto.Sequence.elem_type)*.
fn type_chain(depth: usize) -> Vec<u64> {
    let mut f = vec![7, 13, 2];
    while f.len() < depth {
        f.push(if f.len() % 2 == 1 { 4 } else { 1 });
    }
    f.truncate(depth);
    f
}

/// Field numbers of a subgraph chain `depth` levels deep: ModelProto.graph ->
/// (GraphProto.node -> NodeProto.attribute -> AttributeProto.g)*.
fn graph_chain(depth: usize) -> Vec<u64> {
    let mut f = vec![7];
    while f.len() < depth {
        f.push([1, 5, 6][(f.len() - 1) % 3]);
    }
    f.truncate(depth);
    f
}

/// Offset of the length prefix of the record at `level` (1-based) of a chain.
fn prefix_offset(fields: &[u64], innermost: &[u8], level: usize) -> u64 {
    prefix_offset_in(&nested_chain(fields, innermost), level)
}

/// Offset of the length prefix of the record at `level` (1-based) of chain `bytes`.
fn prefix_offset_in(bytes: &[u8], level: usize) -> u64 {
    let mut pos = 0;
    for _ in 0..level - 1 {
        let (_, k) = read_varint(bytes, pos).unwrap();
        let (_, l) = read_varint(bytes, pos + k).unwrap();
        pos += k + l;
    }
    (pos + read_varint(bytes, pos).unwrap().1) as u64
}

#[test]
fn nesting_100_levels_deep_is_accepted_and_101_rejected_in_every_mode_on_a_1_mib_stack() {
    on_small_stack(STACK, || {
        for (name, chain) in [
            ("types", type_chain as fn(usize) -> Vec<u64>),
            ("subgraphs", graph_chain),
        ] {
            let ok = nested_chain(&chain(100), &[]);
            let model = same_everywhere(&ok, 100, Modes::MemoryAndFiles);
            let model = model.model().unwrap_or_else(|| panic!("{name}: {model:?}"));
            // The decoded chain re-encodes to the input: nothing was dropped.
            assert_eq!(model.encode_to_vec().unwrap(), ok, "{name}");

            let deep = nested_chain(&chain(101), &[]);
            let at = prefix_offset(&chain(101), &[], 101);
            let path = assert_error_everywhere(
                &deep,
                ErrorKind::RecursionLimitExceeded { limit: 100 },
                at,
            );
            assert!(path.starts_with("onnx.ModelProto.graph."), "{name}: {path}");
        }
    });
}

#[test]
fn the_recursion_limit_is_configurable_and_applies_to_every_loader() {
    on_small_stack(STACK, || {
        let chain = graph_chain(10);
        let bytes = nested_chain(&chain, &[]);
        // 10 levels: fine with a limit of 10, rejected at level 10 with a limit of 9.
        assert!(same_everywhere(&bytes, 10, Modes::MemoryAndFiles)
            .model()
            .is_some());
        let outcome = same_everywhere(&bytes, 9, Modes::MemoryAndFiles);
        let (kind, offset, _) = outcome.error().unwrap();
        assert_eq!(kind, &ErrorKind::RecursionLimitExceeded { limit: 9 });
        assert_eq!(offset, Some(prefix_offset(&chain, &[], 10)));
        // A limit of 0 admits only the top-level message's own scalar fields.
        let scalars = varint_field(1, 9);
        assert!(same_everywhere(&scalars, 0, Modes::MemoryAndFiles)
            .model()
            .is_some());
        let outcome = same_everywhere(&len_field(7, &[]), 0, Modes::MemoryAndFiles);
        assert_eq!(
            outcome.error().unwrap().0,
            &ErrorKind::RecursionLimitExceeded { limit: 0 }
        );
    });
}

#[test]
fn megabytes_of_nested_length_prefixes_fail_fast_without_overflowing_a_1_mib_stack() {
    on_small_stack(STACK, || {
        for chain in [type_chain(1_000_000), graph_chain(1_000_000)] {
            let bytes = nested_chain(&chain, &[]);
            assert!(bytes.len() > 3_000_000, "{} bytes", bytes.len());
            let start = std::time::Instant::now();
            let at = prefix_offset_in(&bytes, 101);
            assert_error_everywhere(&bytes, ErrorKind::RecursionLimitExceeded { limit: 100 }, at);
            // Rejected at level 101: the cost does not grow with the input's depth.
            assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        }
    });
}

#[test]
fn megabytes_of_nested_groups_fail_fast_without_overflowing_a_1_mib_stack() {
    on_small_stack(STACK, || {
        // Field 15's start-group key is one byte: 2 MB of them, then as many ends.
        let n = 2_000_000;
        let mut bytes = key(15, SGROUP).repeat(n);
        bytes.extend(key(15, EGROUP).repeat(n));
        // The top-level key opens group 1; the check fails once 101 are open, right
        // after the 101st key.
        assert_error_everywhere(
            &bytes,
            ErrorKind::RecursionLimitExceeded { limit: 100 },
            101,
        );

        // Exactly 100 nested groups are accepted, kept as one unknown field, and
        // written back unchanged.
        let mut ok = key(15, SGROUP).repeat(100);
        ok.extend(key(15, EGROUP).repeat(100));
        let outcome = same_everywhere(&ok, 100, Modes::MemoryAndFiles);
        let model = outcome.model().unwrap();
        assert_eq!(model.unknown_fields.len(), 1);
        assert_eq!(model.encode_to_vec().unwrap(), ok);
    });
}

#[test]
fn messages_and_groups_share_one_nesting_budget() {
    on_small_stack(STACK, || {
        // 60 levels of subgraph messages, then groups in the innermost graph (an unknown
        // field 99 of GraphProto): 40 groups fit, 41 do not.
        let chain = graph_chain(60);
        let groups = |n: usize| {
            let mut g = key(99, SGROUP).repeat(n);
            g.extend(key(99, EGROUP).repeat(n));
            g
        };
        let ok = nested_chain(&chain, &groups(40));
        assert!(same_everywhere(&ok, 100, Modes::MemoryAndFiles)
            .model()
            .is_some());
        let deep = nested_chain(&chain, &groups(41));
        let inner_start = deep.len() - groups(41).len();
        let key_len = key(99, SGROUP).len() as u64;
        assert_error_everywhere(
            &deep,
            ErrorKind::RecursionLimitExceeded { limit: 100 },
            inner_start as u64 + 41 * key_len,
        );
    });
}

#[test]
fn a_length_prefix_beyond_the_input_is_rejected_at_the_prefix() {
    // Top level: field 7 (graph) claiming 2^62 bytes, 2^32 bytes, and one byte more than
    // there is. Nothing is allocated for the claim (see memory_bounds.rs).
    for claim in [1u64 << 62, 1 << 32, 4] {
        let mut bytes = key(7, LEN);
        bytes.extend(varint(claim));
        bytes.extend([0x12, 0x01, b'g']);
        assert_error_everywhere(
            &bytes,
            ErrorKind::LengthOutOfBounds {
                length: claim,
                remaining: 3,
            },
            1,
        );
    }
    // The largest varint (u64::MAX) as a length.
    let mut bytes = key(2, LEN);
    bytes.extend(varint(u64::MAX));
    assert_error_everywhere(
        &bytes,
        ErrorKind::LengthOutOfBounds {
            length: u64::MAX,
            remaining: 0,
        },
        1,
    );
    // Inside a nested message the bound is the enclosing message, not the input: a
    // graph name claiming 5 bytes in a 3-byte graph that is followed by 10 more bytes.
    let graph = cat(&[&key(2, LEN), &[5], b"g"]);
    let bytes = cat(&[&len_field(7, &graph), &len_field(3, b"0123456789")[..]]);
    let path = assert_error_everywhere(
        &bytes,
        ErrorKind::LengthOutOfBounds {
            length: 5,
            remaining: 1,
        },
        3,
    );
    assert_eq!(path, "onnx.ModelProto.graph.name");
}

fn big_model() -> Model {
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "small",
        DataType::Uint8,
        [10],
        vec![1u8; 10],
    ));
    g.initializer.push(TensorProto::from_raw(
        "big",
        DataType::Uint8,
        [5000],
        vec![2u8; 5000],
    ));
    g.initializer.push(TensorProto {
        name: Some("typed".into()),
        data_type: Some(DataType::Int64.to_i32()),
        dims: vec![500],
        int64_data: vec![7; 500],
        ..TensorProto::default()
    });
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[track_caller]
fn assert_limit(
    r: onnx_light::Result<Model>,
    which: Limit,
    limit: u64,
    actual: u64,
) -> onnx_light::Error {
    let e = r.unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::LimitExceeded {
            which,
            limit,
            actual
        },
        "{e}"
    );
    assert_eq!(e.limit(), Some(which), "{e}");
    e
}

#[test]
fn max_model_size_refuses_larger_inputs_in_every_loader() {
    let model = big_model();
    let bytes = model.encode_to_vec().unwrap();
    let n = bytes.len() as u64;
    let dir = Scratch::new("max-model");
    let path = dir.path("m.onnx");
    std::fs::write(&path, &bytes).unwrap();
    let below = ParseOptions::default().max_model_size(n - 1);
    for threads in [1, 2] {
        let file_modes = [
            Load::With(ParseOptions::default()),
            Load::Mapped(ParseOptions::default()),
            Load::With(ParseOptions::default().structure_only(true)),
        ];
        for base in file_modes {
            let base = base.with_options(|o| o.num_threads(threads));
            let mut m = base
                .with_options(|o| o.max_model_size(n))
                .load(&path)
                .unwrap();
            io::materialize_lazy_data(&mut m).unwrap();
            assert_eq!(m, model);
            let refused = base.with_options(|o| o.max_model_size(n - 1));
            let e = assert_limit(refused.load(&path), Limit::MaxModelSize, n - 1, n);
            assert_eq!(e.file(), Some(path.as_path()));
        }
        let below = below.clone().num_threads(threads);
        assert_limit(
            io::load_from_bytes(&bytes, &below),
            Limit::MaxModelSize,
            n - 1,
            n,
        );
        assert_limit(
            io::load_from_slice(&bytes, &below).map(IntoOwned::into_owned),
            Limit::MaxModelSize,
            n - 1,
            n,
        );
        assert_limit(
            io::load_from_owner(std::sync::Arc::new(bytes.clone()), &below),
            Limit::MaxModelSize,
            n - 1,
            n,
        );
        // A reader is cut off after limit + 1 bytes: an endless stream ends.
        assert_limit(
            io::load_from_reader(&bytes[..], &below),
            Limit::MaxModelSize,
            n - 1,
            n,
        );
        let e = io::load_from_reader(std::io::repeat(0), &below).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::LimitExceeded {
                which: Limit::MaxModelSize,
                limit: n - 1,
                actual: n
            }
        );
    }
}

#[test]
fn max_tensor_size_refuses_larger_tensors_in_every_loader_and_names_the_tensor() {
    let model = big_model();
    let bytes = model.encode_to_vec().unwrap();
    let dir = Scratch::new("max-tensor");
    let path = dir.path("m.onnx");
    std::fs::write(&path, &bytes).unwrap();
    let modes = [
        Load::With(ParseOptions::default().num_threads(1)),
        Load::With(ParseOptions::default().num_threads(2)),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().structure_only(true)),
    ];
    for base in modes {
        // The largest tensor is "big" (5000 raw bytes); "typed" holds 500 int64 = 4000.
        let ok = base.with_options(|o| o.max_tensor_size(5000));
        assert!(ok.load(&path).is_ok());
        let e = assert_limit(
            base.with_options(|o| o.max_tensor_size(4999)).load(&path),
            Limit::MaxTensorSize,
            4999,
            5000,
        );
        assert_eq!(e.tensor(), Some("big"));
        assert_eq!(e.file(), Some(path.as_path()));
        // Typed data counts at its in-memory size.
        let e = assert_limit(
            base.with_options(|o| o.max_tensor_size(3999)).load(&path),
            Limit::MaxTensorSize,
            3999,
            5000,
        );
        assert_eq!(e.tensor(), Some("big"), "the first tensor over the limit");
    }
    let limit = ParseOptions::default().max_tensor_size(4999);
    let e = assert_limit(
        io::load_from_bytes(&bytes, &limit),
        Limit::MaxTensorSize,
        4999,
        5000,
    );
    assert_eq!(e.tensor(), Some("big"));
    assert_limit(
        io::load_from_slice(&bytes, &limit).map(IntoOwned::into_owned),
        Limit::MaxTensorSize,
        4999,
        5000,
    );
    assert_limit(
        io::load_from_owner(std::sync::Arc::new(bytes.clone()), &limit),
        Limit::MaxTensorSize,
        4999,
        5000,
    );
    assert_limit(
        io::load_from_reader(&bytes[..], &limit),
        Limit::MaxTensorSize,
        4999,
        5000,
    );
}

#[test]
fn max_tensor_size_applies_to_external_data_in_every_mode() {
    use onnx_light::io::external::ExternalDataOptions;
    let model = big_model();
    let dir = Scratch::new("max-tensor-external");
    let path = dir.path("m.onnx");
    io::save(
        &model,
        &path,
        &SerializeOptions::default()
            .external_data(ExternalDataOptions::new("m.data").size_threshold(1000)),
    )
    .unwrap();
    for base in [
        Load::With(ParseOptions::default()),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().structure_only(true)),
    ] {
        let mut m = base
            .with_options(|o| o.max_tensor_size(5000))
            .load(&path)
            .unwrap();
        io::materialize_lazy_data(&mut m).unwrap();
        m.visit_tensors_mut(|_, t| {
            t.external_data.clear();
            t.data_location = None;
        });
        assert_eq!(m, model);
        let e = assert_limit(
            base.with_options(|o| o.max_tensor_size(4999)).load(&path),
            Limit::MaxTensorSize,
            4999,
            5000,
        );
        assert_eq!(e.tensor(), Some("big"));
    }
}

#[test]
fn max_tensor_size_refuses_a_huge_external_tensor_before_reading_or_mapping_it() {
    // A 4 TiB external tensor in a sparse data file (no disk blocks). Reading it would
    // need a 4 TiB buffer, which the OS refuses (an `Io(OutOfMemory)` error) or which
    // would take hours to fill; the cap must refuse it from its recorded range first.
    const HUGE: u64 = 4 << 40;
    let dir = Scratch::new("huge-external");
    let data = std::fs::File::create(dir.path("huge.bin")).unwrap();
    data.set_len(HUGE).unwrap();
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto {
        name: Some("huge".into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims: vec![HUGE as i64],
        data_location: Some(DataLocation::External.into()),
        external_data: vec![
            StringStringEntryProto::new("location", "huge.bin"),
            StringStringEntryProto::new("length", HUGE.to_string()),
        ],
        ..TensorProto::default()
    });
    let path = dir.path("m.onnx");
    io::save(
        &ModelProto::new(g, vec![]),
        &path,
        &SerializeOptions::default(),
    )
    .unwrap();
    for base in [
        Load::With(ParseOptions::default().num_threads(1)),
        Load::With(ParseOptions::default().num_threads(2)),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().structure_only(true)),
    ] {
        let start = std::time::Instant::now();
        let e = assert_limit(
            base.with_options(|o| o.max_tensor_size(1 << 30))
                .load(&path),
            Limit::MaxTensorSize,
            1 << 30,
            HUGE,
        );
        assert_eq!(e.tensor(), Some("huge"));
        assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    }
    // The same through load_external_data_for_model.
    let bytes = std::fs::read(&path).unwrap();
    let mut m =
        io::load_from_slice(&bytes, &ParseOptions::default().load_external_data(false)).unwrap();
    let e = io::load_external_data_for_model(
        &mut m,
        &dir.0,
        &ParseOptions::default().max_tensor_size(1 << 30),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded { .. }), "{e}");
}
