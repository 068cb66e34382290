//! Parallel decoding of long lists (`DecodeOptions::parallel`, `ParseOptions::num_threads`):
//! a graph's nodes, initializers, inputs, outputs and value_info, and a function's nodes,
//! are split across threads when a run of them spans at least
//! `codec::field::PARALLEL_MIN_RUN_BYTES` and holds `PARALLEL_MIN_RUN_VALUES` values (or
//! any number when the mode copies payloads). Whatever the thread count, a decode gives the
//! same model, and the same error for the same malformed input (offset, field path with
//! the element's index), as the decode on the calling thread; a `max_memory` budget
//! passes or fails exactly as it does there.

use onnx_light::codec::field::PARALLEL_MIN_RUN_BYTES;
use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{Bytes, DecodeOptions, Error, UnknownField};

/// Thread counts compared with the one-thread decode (2 is this machine's core count;
/// 3 makes slices of unequal length; 8 oversubscribes).
const THREADS: [usize; 3] = [2, 3, 8];

/// A node with a name, two inputs, an output and attributes; every 97th also carries
/// an unknown field.
fn node(prefix: &str, i: usize) -> NodeProto<'static> {
    let mut n = NodeProto::new(
        if i.is_multiple_of(2) {
            "Relu"
        } else {
            "Transpose"
        },
        [format!("{prefix}v{i}"), format!("{prefix}w{i}")],
        [format!("{prefix}v{}", i + 1)],
    );
    n.name = Some(format!("{prefix}node_{i:06}").into());
    n.attribute
        .push(AttributeProto::ints("perm", vec![0, 1, 3, 2]));
    if i.is_multiple_of(3) {
        n.attribute.push(AttributeProto::float("alpha", i as f32));
    }
    if i.is_multiple_of(97) {
        n.unknown_fields
            .push(UnknownField::varint(1000, i as u64).expect("a valid field number"));
    }
    n
}

fn value_info(name: String) -> ValueInfoProto<'static> {
    let mut v = ValueInfoProto::tensor(name, DataType::Float, [1, 64, 28]);
    v.doc_string = Some("an intermediate value of the graph".into());
    v
}

/// A graph of `nodes` nodes (a run of several hundred KiB) with value_info for each
/// and, when `payloads`, 12 initializers of 48 KiB (shared in shared mode).
fn graph(prefix: &str, nodes: usize, payloads: bool) -> GraphProto<'static> {
    let mut g = GraphProto::named(format!("{prefix}graph"));
    g.node = (0..nodes).map(|i| node(prefix, i)).collect();
    g.value_info = (0..nodes)
        .map(|i| value_info(format!("{prefix}v{i}")))
        .collect();
    g.input.push(value_info(format!("{prefix}v0")));
    g.output.push(value_info(format!("{prefix}v{nodes}")));
    if payloads {
        for t in 0..12u8 {
            let data: Vec<u8> = (0..48 << 10).map(|j: u32| (j as u8) ^ t).collect();
            g.initializer.push(TensorProto::from_raw(
                format!("{prefix}w{t}"),
                DataType::Uint8,
                vec![data.len() as i64],
                data,
            ));
        }
    }
    g
}

/// The model the tests decode: a long main graph whose node 2500 is an `If` with a
/// long subgraph (split again inside the slice that decodes it), and a function with
/// a long body.
fn model() -> Model {
    let mut g = graph("", 6000, true);
    g.node[2500] = NodeProto::new("If", ["cond"], ["if_out"])
        .with_attribute(AttributeProto::graph(
            "then_branch",
            graph("then/", 5000, false),
        ))
        .with_attribute(AttributeProto::graph(
            "else_branch",
            graph("else/", 10, false),
        ));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.functions.push(FunctionProto {
        name: Some("body".into()),
        domain: Some("local".into()),
        node: (0..5000).map(|i| node("f/", i)).collect(),
        ..FunctionProto::default()
    });
    m
}

fn encoded(m: &Model) -> Vec<u8> {
    io::save_to_vec(m, &io::SerializeOptions::default()).expect("encode")
}

fn threads(n: usize) -> ParseOptions {
    ParseOptions::default().num_threads(n)
}

/// Every way of decoding bytes in memory, with `options`: borrow (re-encoded, so that
/// the views compare as owned models), copy and shared.
fn decode_all(bytes: &[u8], options: &ParseOptions) -> [Result<Model, Error>; 3] {
    [
        io::load_from_slice(bytes, options).map(IntoOwned::into_owned),
        io::load_from_bytes(bytes, options),
        io::load_from_owner(std::sync::Arc::new(bytes.to_vec()), options),
    ]
}

/// The outcome as comparable text: the model's encoding, or the error with its kind,
/// offset and path.
fn outcome(r: &Result<Model, Error>) -> Result<Vec<u8>, String> {
    match r {
        Ok(m) => Ok(encoded(m)),
        Err(e) => Err(format!(
            "{e} | {:?} | {:?} | {}",
            e.kind(),
            e.offset(),
            e.path_string()
        )),
    }
}

fn assert_same_outcomes(bytes: &[u8], options: ParseOptions) {
    let one = decode_all(bytes, &options.clone().num_threads(1));
    for n in THREADS {
        let many = decode_all(bytes, &options.clone().num_threads(n));
        for (mode, (a, b)) in ["borrow", "copy", "shared"]
            .iter()
            .zip(one.iter().zip(&many))
        {
            assert_eq!(
                outcome(a),
                outcome(b),
                "{mode} decode with {n} threads differs from the one-thread decode"
            );
        }
    }
}

#[test]
fn the_model_has_runs_long_enough_to_be_split() {
    // Guards the other tests: their lists must be long enough to take the parallel path.
    let m = model();
    let g = m.graph.as_ref().unwrap();
    let then = g.node[2500].attribute[0].g.as_ref().unwrap();
    for (what, len) in [
        ("nodes", encoded_list_len(&g.node)),
        ("value_info", encoded_list_len(&g.value_info)),
        ("initializers", encoded_list_len(&g.initializer)),
        ("subgraph nodes", encoded_list_len(&then.node)),
        ("function nodes", encoded_list_len(&m.functions[0].node)),
    ] {
        assert!(
            len >= PARALLEL_MIN_RUN_BYTES as u64,
            "{what}: {len} bytes, below {PARALLEL_MIN_RUN_BYTES}"
        );
    }
}

fn encoded_list_len<M: Message>(list: &[M]) -> u64 {
    list.iter().map(|m| m.encoded_len() + 3).sum()
}

#[test]
fn decoding_with_threads_gives_the_model_of_one_thread() {
    let m = model();
    let bytes = encoded(&m);
    for (mode, r) in ["borrow", "copy", "shared"]
        .iter()
        .zip(decode_all(&bytes, &threads(2)))
    {
        let decoded = r.unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(decoded, m, "{mode}");
        assert_eq!(
            encoded(&decoded),
            bytes,
            "{mode}: byte-identical re-encoding"
        );
    }
    // Shared mode shares the initializers decoded on other threads.
    let shared = &decode_all(&bytes, &threads(2))[2];
    let g = shared.as_ref().unwrap().graph.as_ref().unwrap();
    assert!(g
        .initializer
        .iter()
        .all(|t| matches!(t.raw_data, Some(Bytes::Shared(_)))));
    assert_same_outcomes(&bytes, ParseOptions::default());
}

#[test]
fn the_message_api_decodes_in_parallel_unless_told_not_to() {
    let bytes = encoded(&model());
    let sequential = DecodeOptions {
        parallel: false,
        ..DecodeOptions::default()
    };
    let a = ModelProto::decode_with(&bytes, &DecodeOptions::default()).unwrap();
    let b = ModelProto::decode_with(&bytes, &sequential).unwrap();
    assert_eq!(a, b);
    let c = Model::decode_owned_with(&bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(c, b.into_owned());
}

/// `bytes` with the first occurrence of `needle` changed by `f`.
fn corrupt(bytes: &[u8], needle: &str, f: impl Fn(&mut [u8])) -> Vec<u8> {
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or_else(|| panic!("{needle} not in the encoding"));
    let mut out = bytes.to_vec();
    f(&mut out[at..at + needle.len()]);
    out
}

fn invalid_utf8(s: &mut [u8]) {
    s[0] = 0xff;
}

#[test]
fn a_malformed_node_gives_the_error_of_one_thread_with_its_index() {
    let bytes = encoded(&model());
    // Invalid UTF-8 in the name of node 4321 (in the second half: not the first slice).
    let bad = corrupt(&bytes, "node_004321", invalid_utf8);
    let e = io::load_from_slice(&bad, &threads(2)).unwrap_err();
    assert!(
        e.path_string().contains("node[4321]"),
        "path names the node: {}",
        e.path_string()
    );
    assert_same_outcomes(&bad, ParseOptions::default());
}

#[test]
fn of_two_malformed_nodes_the_first_in_the_input_is_reported() {
    let bytes = encoded(&model());
    // Node 5900 (last slice) and node 700 (first slice): the first in input order wins,
    // whichever thread finds its error first.
    let bad = corrupt(&bytes, "node_005900", invalid_utf8);
    let bad = corrupt(&bad, "node_000700", invalid_utf8);
    for n in THREADS {
        let e = io::load_from_slice(&bad, &threads(n)).unwrap_err();
        assert!(e.path_string().contains("node[700]"), "{}", e.path_string());
    }
    assert_same_outcomes(&bad, ParseOptions::default());
}

#[test]
fn errors_inside_a_nested_split_list_and_a_function_match_one_thread() {
    let bytes = encoded(&model());
    for needle in [
        "then/node_004000",
        "then/v4999",
        "f/node_000001",
        "f/node_004999",
    ] {
        let bad = corrupt(&bytes, needle, |s| s[s.len() - 1] = 0xfe);
        assert!(io::load_from_slice(&bad, &threads(2)).is_err(), "{needle}");
        assert_same_outcomes(&bad, ParseOptions::default());
    }
}

#[test]
fn a_malformed_length_inside_a_run_matches_one_thread() {
    let bytes = encoded(&model());
    // The length of the main graph's node 3000's name (key 0x1a: field 3, length
    // 11) made longer than the node: the node's own bytes are malformed, while the
    // run around it is intact.
    let mut needle = vec![0x1a, 11];
    needle.extend_from_slice(b"node_003000");
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("node 3000's name");
    let mut bad = bytes.clone();
    bad[at + 1] = 0x7f;
    assert!(io::load_from_slice(&bad, &threads(2)).is_err());
    assert_same_outcomes(&bad, ParseOptions::default());
    // And a truncated input: the run ends early.
    assert_same_outcomes(&bytes[..bytes.len() * 2 / 3], ParseOptions::default());
}

#[test]
fn the_recursion_limit_applies_inside_slices_as_on_one_thread() {
    let bytes = encoded(&model());
    // model > graph > node > attribute > graph > node > attribute: 6 levels below the
    // model; with 5 the subgraph's attributes are too deep.
    for limit in [3, 4, 5, 6, 100] {
        let mut options = ParseOptions::default();
        options.recursion_limit = limit;
        assert_same_outcomes(&bytes, options);
    }
}

#[test]
fn a_memory_budget_passes_or_fails_as_on_one_thread() {
    let bytes = encoded(&model());
    let fits = |limit: u64| io::load_from_slice(&bytes, &threads(1).max_memory(limit)).is_ok();
    // The smallest budget the one-thread decode fits in.
    let (mut lo, mut hi) = (0u64, 64 * bytes.len() as u64);
    assert!(fits(hi));
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    assert!(fits(hi) && !fits(hi - 1));
    // Around it, far below it (the list itself does not fit), and in between: the
    // parallel decode passes exactly when the one-thread decode does, and when it does
    // not, it reports the same error at the same place. At exactly the minimum, a
    // slice runs out of its share of the budget and the run is decoded again on the
    // calling thread.
    for limit in [hi, hi - 1, hi + 1, hi / 2, hi / 10, 1000, 0] {
        assert_same_outcomes(&bytes, ParseOptions::default().max_memory(limit));
    }
    assert!(io::load_from_slice(&bytes, &threads(2).max_memory(hi)).is_ok());
}

#[test]
fn a_list_in_several_runs_is_appended_in_order() {
    // Two encoded graphs one after the other are one graph (protobuf merge): the node
    // list arrives in two long runs with other fields between them.
    let a = graph("a/", 5000, false);
    let b = graph("b/", 5000, true);
    let mut bytes = a.encode_to_vec().unwrap();
    bytes.extend(b.encode_to_vec().unwrap());
    let one = GraphProto::decode_with(
        &bytes,
        &DecodeOptions {
            parallel: false,
            ..DecodeOptions::default()
        },
    )
    .unwrap();
    assert_eq!(one.node.len(), 10_000);
    assert_eq!(one.node[5000].name.as_deref(), Some("b/node_000000"));
    for n in THREADS {
        let pool = rayon_pool(n);
        let many = pool.install(|| GraphProto::decode(&bytes).unwrap());
        assert_eq!(many, one, "{n} threads");
    }
}

fn rayon_pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("a thread pool")
}

/// A context that counts the forks made of it (and of its forks).
struct CountingForks<'c, C> {
    inner: C,
    forks: &'c std::sync::atomic::AtomicUsize,
}

impl<'b, 'a, C: onnx_light::codec::DecodeContext<'b, 'a>> onnx_light::codec::DecodeContext<'b, 'a>
    for CountingForks<'_, C>
{
    fn bytes(&mut self, data: &'b [u8], offset: u64) -> Bytes<'a> {
        self.inner.bytes(data, offset)
    }
    fn str(&mut self, text: &'b str) -> onnx_light::Str<'a> {
        self.inner.str(text)
    }
    fn charge(&mut self, bytes: u64, offset: u64) -> onnx_light::Result<()> {
        self.inner.charge(bytes, offset)
    }
    fn copy_cost(&self, len: usize, payload: bool) -> u64 {
        self.inner.copy_cost(len, payload)
    }
    fn budget(&self) -> onnx_light::codec::Budget {
        self.inner.budget()
    }
    fn splits(&self) -> bool {
        self.inner.splits()
    }
    fn fork(&self, budget: u64) -> Option<Self> {
        let inner = self.inner.fork(budget)?;
        self.forks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(CountingForks {
            inner,
            forks: self.forks,
        })
    }
}

/// How many forks decoding `bytes` as a graph with `inner` makes on a pool of
/// `threads`.
fn forks_made<'b, 'a, C: onnx_light::codec::DecodeContext<'b, 'a>>(
    bytes: &'b [u8],
    threads: usize,
    inner: C,
) -> usize {
    let forks = std::sync::atomic::AtomicUsize::new(0);
    let mut ctx = CountingForks {
        inner,
        forks: &forks,
    };
    let mut g = GraphProto::<'a>::default();
    rayon_pool(threads)
        .install(|| g.merge_from(&mut onnx_light::wire::Reader::new(bytes), &mut ctx))
        .expect("decodes");
    forks.into_inner()
}

fn borrowing(parallel: bool) -> onnx_light::codec::BorrowMode {
    onnx_light::codec::BorrowMode {
        parallel,
        ..Default::default()
    }
}

#[test]
fn long_runs_are_split_one_slice_per_thread_and_short_ones_are_not() {
    let long = graph("", 6000, true).encode_to_vec().unwrap();
    // Nodes and value_info: one fork per thread for each. The 12 initializers (576 KiB)
    // are too few values to split in borrow mode, which copies nothing ...
    assert_eq!(forks_made(&long, 3, borrowing(true)), 6);
    assert_eq!(forks_made(&long, 2, borrowing(true)), 4);
    // ... but copy mode copies their payloads on the threads too.
    let copying = onnx_light::codec::CopyMode {
        parallel: true,
        ..Default::default()
    };
    assert_eq!(forks_made(&long, 3, copying), 9);
    // One thread, or a context that does not allow it: no split.
    assert_eq!(forks_made(&long, 1, borrowing(true)), 0);
    assert_eq!(forks_made(&long, 3, borrowing(false)), 0);
    // A short list is not worth the threads.
    let short = graph("", 100, false).encode_to_vec().unwrap();
    assert_eq!(forks_made(&short, 3, borrowing(true)), 0);
}
