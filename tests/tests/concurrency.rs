//! Concurrency: many threads loading, reading and dropping the same
//! model at once — one shared no-copy map, one `Arc<Model>`, one file loaded by every
//! thread in every mode — see identical results, and the library's types are `Send` and
//! `Sync` where they should be (checked at compile time).

use std::sync::{Arc, Barrier};
use std::thread;

mod hardening;

use hardening::{real_model, Scratch};
use onnx_light::crypto::Passphrase;
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions, TensorBufferOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{
    AlignedBuffer, ByteOwner, Bytes, DecodeOptions, Error, ErrorKind, LazyPayload, OwnedBytes,
    SharedBytes, UnknownFields,
};
use onnx_light_tests::mapped::{load_mapped, Load};

const THREADS: usize = 8;
const ROUNDS: usize = 10;

// ---- compile-time checks -----------------------------------------------------------------

fn send_sync<T: Send + Sync>() {}

/// Owned and shared values cross threads: models (owning, sharing a map, or holding
/// lazy payloads), their parts, payload handles, errors and options.
const _: fn() = || {
    send_sync::<Model>();
    send_sync::<Graph>();
    send_sync::<Tensor>();
    send_sync::<TensorProto<'static>>();
    send_sync::<NodeProto<'static>>();
    send_sync::<AttributeProto<'static>>();
    send_sync::<SparseTensorProto<'static>>();
    send_sync::<TypeProto<'static>>();
    send_sync::<Bytes<'static>>();
    send_sync::<SharedBytes>();
    send_sync::<OwnedBytes>();
    send_sync::<AlignedBuffer>();
    send_sync::<ByteOwner>();
    send_sync::<LazyPayload>();
    send_sync::<UnknownFields<'static>>();
    send_sync::<Error>();
    send_sync::<ErrorKind>();
    send_sync::<ParseOptions>();
    send_sync::<SerializeOptions>();
    send_sync::<DecodeOptions>();
    send_sync::<TensorBufferOptions>();
    send_sync::<ExternalDataOptions>();
    send_sync::<Passphrase>();
    send_sync::<onnx_light::Result<Model>>();
};

/// Borrowed views are `Send + Sync` too (for any lifetime): a model decoded in borrow
/// mode can be read from scoped threads.
#[allow(dead_code)]
fn borrowed_views_are_send_and_sync<'a>(_input: &'a [u8]) {
    send_sync::<ModelProto<'a>>();
    send_sync::<GraphProto<'a>>();
    send_sync::<TensorProto<'a>>();
    send_sync::<Bytes<'a>>();
    send_sync::<UnknownFields<'a>>();
}

// ---- runtime -----------------------------------------------------------------------------

/// The real model plus two payloads above the sharing threshold.
fn model() -> Model {
    let mut m = real_model();
    let g = m.graph.as_mut().unwrap();
    for i in 0..2u8 {
        let data: Vec<u8> = (0..300_000u32)
            .map(|j| (j as u8).wrapping_mul(i + 3))
            .collect();
        g.initializer.push(TensorProto::from_raw(
            format!("big{i}"),
            DataType::Uint8,
            [300_000],
            data,
        ));
    }
    m
}

/// What a reader computes from a model: a digest of every payload and the encoding.
fn digest(m: &ModelProto<'_>) -> (Vec<(String, u64)>, Vec<u8>) {
    let mut sums = Vec::new();
    m.visit_tensors(|_, t| {
        let raw = t.raw_data.as_deref().unwrap_or_default();
        let sum = raw
            .iter()
            .fold(0u64, |s, &b| s.wrapping_mul(131).wrapping_add(u64::from(b)));
        sums.push((t.name().to_string(), sum));
    });
    (sums, m.encode_to_vec().unwrap())
}

fn on_threads<T: Send>(f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let start = Barrier::new(THREADS);
    thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let (f, start) = (&f, &start);
                s.spawn(move || {
                    start.wait();
                    f(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn threads_reading_cloning_and_dropping_one_shared_mapping_see_the_same_model() {
    let dir = Scratch::new("conc-mapped");
    let path = dir.path("m.onnx");
    let expected = model();
    io::save(&expected, &path, &SerializeOptions::default()).unwrap();
    let want = digest(&expected);
    let mapped = load_mapped(&path, &ParseOptions::default()).unwrap();
    let big = mapped
        .tensors()
        .into_iter()
        .find(|t| t.name() == "big0")
        .unwrap();
    let Some(Bytes::Shared(s)) = &big.raw_data else {
        panic!("no-copy payloads are shared slices of the map")
    };
    let owner = s.owner().clone();
    let holders_before = Arc::strong_count(&owner);

    // Every thread clones the model (the clones share the one map), reads it, makes
    // more clones of single payloads, and drops everything, many times.
    let results = on_threads(|_| {
        let mut seen = Vec::new();
        for _ in 0..ROUNDS {
            let copy = mapped.clone();
            seen.push(digest(&copy));
            let payloads: Vec<Bytes<'static>> = copy
                .tensors()
                .into_iter()
                .filter_map(|t| t.raw_data.clone())
                .collect();
            drop(copy);
            assert!(payloads.iter().any(Bytes::is_shared));
            drop(payloads);
        }
        seen
    });
    for seen in results {
        for d in seen {
            assert_eq!(d, want);
        }
    }
    // Every clone was dropped: the map is held exactly as before.
    assert_eq!(Arc::strong_count(&owner), holders_before);
    drop(mapped);
    assert_eq!(Arc::strong_count(&owner), 1, "only our handle is left");
}

#[test]
fn threads_sharing_one_arc_model_and_dropping_it_last_on_any_thread_agree() {
    let dir = Scratch::new("conc-arc");
    let path = dir.path("m.onnx");
    let expected = model();
    io::save(&expected, &path, &SerializeOptions::default()).unwrap();
    let want = digest(&expected);
    for load in [
        Load::With(ParseOptions::default()),
        Load::Mapped(ParseOptions::default()),
    ] {
        let shared = Arc::new(load.load(&path).unwrap());
        // Each thread takes its own handle; whichever finishes last frees the model
        // (and, in no-copy mode, unmaps the file).
        let handles: Vec<Arc<Model>> = (0..THREADS).map(|_| shared.clone()).collect();
        drop(shared);
        let start = Barrier::new(THREADS);
        let results: Vec<_> = thread::scope(|s| {
            let start = &start;
            let threads: Vec<_> = handles
                .into_iter()
                .map(|m| {
                    s.spawn(move || {
                        start.wait();
                        let d: Vec<_> = (0..ROUNDS).map(|_| digest(&m)).collect();
                        drop(m);
                        d
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for d in results.into_iter().flatten() {
            assert_eq!(d, want);
        }
    }
}

#[test]
fn threads_loading_the_same_file_at_once_in_every_mode_get_identical_models() {
    let dir = Scratch::new("conc-load");
    let path = dir.path("m.onnx");
    let expected = model();
    io::save(&expected, &path, &SerializeOptions::default()).unwrap();
    // And an external-data copy of it, whose data file every thread maps or reads too.
    let split = dir.path("split.onnx");
    io::save(
        &expected,
        &split,
        &SerializeOptions::default()
            .external_data(ExternalDataOptions::new("split.data").size_threshold(1024)),
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let modes = [
        Load::With(ParseOptions::default().num_threads(1)),
        Load::With(ParseOptions::default().num_threads(2)),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().structure_only(true)),
        Load::With(ParseOptions::default().alignment(64)),
    ];
    let results = on_threads(|i| {
        let mut out = Vec::new();
        for round in 0..ROUNDS / 2 {
            // Threads start in different modes so that every mode overlaps with others.
            let load = &modes[(i + round) % modes.len()];
            for file in [&path, &split] {
                let mut m = load.load(file).unwrap();
                io::materialize_lazy_data(&mut m).unwrap();
                m.visit_tensors_mut(|_, t| {
                    t.external_data.clear();
                    t.data_location = None;
                });
                out.push(m);
            }
            out.push(
                io::load_from_bytes(&bytes, &load.options().clone().structure_only(false)).unwrap(),
            );
            out.push(
                io::load_from_slice(&bytes, &ParseOptions::default())
                    .unwrap()
                    .into_owned(),
            );
        }
        out
    });
    for m in results.into_iter().flatten() {
        assert_eq!(m, expected);
    }
}

#[test]
fn threads_decoding_the_same_bytes_in_every_mode_agree_on_models_and_errors() {
    let bytes = model().encode_to_vec().unwrap();
    let owner: ByteOwner = Arc::new(bytes.clone());
    let mut bad = bytes.clone();
    bad.truncate(bytes.len() - 7);
    let bad_owner: ByteOwner = Arc::new(bad.clone());
    let want_error = Model::decode_owned(&bad).unwrap_err();
    let results = on_threads(|_| {
        let mut ok = Vec::new();
        let mut errors = Vec::new();
        for _ in 0..ROUNDS {
            ok.push(ModelProto::decode(&bytes).unwrap().into_owned());
            ok.push(Model::decode_owned(&bytes).unwrap());
            ok.push(Model::decode_shared(owner.clone(), &DecodeOptions::default()).unwrap());
            for e in [
                ModelProto::decode(&bad).map(drop).unwrap_err(),
                Model::decode_owned(&bad).map(drop).unwrap_err(),
                Model::decode_shared(bad_owner.clone(), &DecodeOptions::default())
                    .map(drop)
                    .unwrap_err(),
            ] {
                errors.push((e.kind().clone(), e.offset(), e.path_string()));
            }
        }
        (ok, errors)
    });
    let expected = model();
    for (ok, errors) in results {
        assert!(ok.iter().all(|m| *m == expected));
        for e in errors {
            assert_eq!(
                e,
                (
                    want_error.kind().clone(),
                    want_error.offset(),
                    want_error.path_string()
                )
            );
        }
    }
    // The shared decodes were all dropped.
    assert_eq!(Arc::strong_count(&owner), 1);
}
