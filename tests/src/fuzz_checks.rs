//! The properties the fuzz targets check (the `onnx-light-fuzz` crate in `fuzz/`), kept
//! here so that the normal test command replays every input the fuzzers ever found
//! (`tests/tests/fuzz_regressions.rs`) through exactly the same checks.
//!
//! Each check takes arbitrary bytes and panics only when the library misbehaves: a
//! panic inside the library, two ways of doing the same thing that disagree, a model
//! that does not survive its own encoding, or bytes read from outside the model
//! directory. Errors returned for bad input are the expected outcome, not a finding.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use onnx_light::io::external::ExternalDataRef;
use onnx_light::io::{load_from_bytes, load_from_slice, ParseOptions};
use onnx_light::onnx::{
    DataLocation, DataType, GraphProto, ModelProto, OperatorSetIdProto, StringStringEntryProto,
    TensorProto,
};
use onnx_light::{
    ByteOwner, Decode, DecodeOptions, DecodeOwned, Error, IntoOwned, Message, ProtoEnum,
};

/// The passphrase of every encrypted seed and check.
pub const PASSPHRASE: &str = "fuzz";

/// A cheap stand-in for PBKDF2 so that each fuzz execution reaches the ciphertext
/// instead of spending its time in 100 000 hash iterations. It only has to be a
/// deterministic function of its inputs.
pub fn cheap_kdf(passphrase: &[u8], salt: &[u8], iterations: u32, key: &mut [u8; 32]) {
    let mut state = 0xcbf2_9ce4_8422_2325_u64 ^ u64::from(iterations);
    for (i, k) in key.iter_mut().enumerate() {
        for &b in passphrase.iter().chain(salt).chain(&[i as u8]) {
            state = (state ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        *k = (state >> 24) as u8;
    }
}

/// What two ways of decoding the same bytes produced, in a form that can be compared:
/// the re-encoding of a success (floats compare by bits, so NaN payloads are fine), or
/// the kind and offset of a failure.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Decoded(Vec<u8>),
    Failed(String, Option<u64>),
}

fn outcome<M: Message>(result: Result<M, Error>) -> Outcome {
    match result {
        Ok(m) => Outcome::Decoded(encode(&m)),
        Err(e) => Outcome::Failed(format!("{:?}", e.kind()), e.offset()),
    }
}

/// Encodes `m`, checking that the announced length is the written length.
fn encode<M: Message>(m: &M) -> Vec<u8> {
    let bytes = m
        .encode_to_vec()
        .expect("a decoded message must encode (it fits in memory)");
    assert_eq!(
        m.encoded_len(),
        bytes.len() as u64,
        "encoded_len disagrees with encode_to_vec"
    );
    bytes
}

fn shared_options() -> DecodeOptions {
    DecodeOptions {
        // Small, so that fuzz-sized payloads take the shared path too.
        shared_threshold: 4,
        ..DecodeOptions::default()
    }
}

/// Decoding in borrow, copy and shared mode gives the same message or the same error
/// (kind and offset), for `ModelProto` and `TensorProto` (the two top-level messages of
/// `.onnx` and `.pb` files); converting the borrowed model to an owned one changes
/// nothing.
pub fn decode_every_mode(data: &[u8]) {
    fn modes<'a, M>(data: &'a [u8])
    where
        M: Decode<'a> + IntoOwned,
        M::Owned: DecodeOwned,
    {
        let owner: ByteOwner = Arc::new(data.to_vec());
        let borrowed = match M::decode(data) {
            Ok(m) => {
                let bytes = encode(&m);
                assert_eq!(
                    bytes,
                    encode(&m.into_owned()),
                    "into_owned changed the message"
                );
                Outcome::Decoded(bytes)
            }
            Err(e) => Outcome::Failed(format!("{:?}", e.kind()), e.offset()),
        };
        let copied = outcome(M::Owned::decode_owned(data));
        let shared = outcome(M::Owned::decode_shared(owner, &shared_options()));
        assert_eq!(borrowed, copied, "borrow and copy modes disagree");
        assert_eq!(borrowed, shared, "borrow and shared modes disagree");
    }
    modes::<ModelProto<'_>>(data);
    modes::<TensorProto<'_>>(data);
}

/// Whatever decodes as a model can be checked: `onnx_light::checker` returns a verdict
/// (never panics, never recurses without bound), the same one for the borrowed and the
/// owned model and on a second run, and every problem it reports has a path.
pub fn checker_gives_a_verdict(data: &[u8]) {
    let Ok(model) = ModelProto::decode(data) else {
        return;
    };
    let first = onnx_light::checker::check_model(&model);
    let again = onnx_light::checker::check_model(&model.clone().into_owned());
    assert_eq!(first, again, "the checker's verdict changed between runs");
    if let Err(problems) = first {
        assert!(!problems.is_empty(), "an error with no problem");
        assert!(
            problems
                .iter()
                .all(|p| !p.path.is_empty() && !p.message.is_empty()),
            "a problem without a path or message: {problems}"
        );
    }
}

/// decode -> encode -> decode: whatever decodes re-encodes to bytes that decode to the
/// same message, and that encoding is a fixed point. Unknown fields included.
pub fn reencode_is_stable(data: &[u8]) {
    fn check<'a, M>(data: &'a [u8])
    where
        M: Decode<'a> + IntoOwned,
        M::Owned: DecodeOwned,
    {
        let Ok(first) = M::decode(data) else { return };
        let once = encode(&first);
        let second = M::Owned::decode_owned(&once)
            .expect("our own encoding of a decoded message must decode");
        assert_eq!(once, encode(&second), "re-encoding is not a fixed point");
    }
    check::<ModelProto<'_>>(data);
    check::<TensorProto<'_>>(data);
}

/// Loading from memory with one thread and with two, from a slice and from an owned
/// buffer, consolidated (aligned) or not, gives the same model or the same error.
pub fn parallel_load_agrees(data: &[u8]) {
    let base = ParseOptions::default()
        .load_external_data(false)
        .raw_data_threshold(1);
    let reference = outcome(load_from_slice(data, &base.clone().num_threads(1)));
    let variants = [
        (
            "owned, 1 thread",
            load_from_bytes(data, &base.clone().num_threads(1)),
        ),
        (
            "owned, 2 threads",
            load_from_bytes(data, &base.clone().num_threads(2)),
        ),
        (
            "owned, 2 threads, 64-aligned",
            load_from_bytes(data, &base.clone().num_threads(2).alignment(64)),
        ),
    ];
    for (what, result) in variants {
        assert_eq!(
            reference,
            outcome(result),
            "borrowed sequential load and {what} load disagree"
        );
    }
    let borrowed2 = outcome(load_from_slice(data, &base.num_threads(2)));
    assert_eq!(
        reference, borrowed2,
        "borrowed load with 1 and 2 threads disagree"
    );
}

/// The byte every file outside the model directory is filled with; files inside never
/// contain it, so finding it in a loaded tensor means a read escaped the directory.
pub const OUTSIDE_BYTE: u8 = 0xA5;

/// A fixed directory tree that external-data metadata is resolved against:
///
/// ```text
/// root/
///   secret.bin               OUTSIDE_BYTE x 4096 (outside the model directory)
///   model/
///     weights.bin            4096 bytes, never OUTSIDE_BYTE
///     sub/w2.bin             100 bytes
///     link_in  -> weights.bin
///     link_out -> ../secret.bin
///     escape   -> ..          (a directory symlink leaving the model directory)
///     dir/                   (a directory where a file is expected)
///     model-N.onnx           (written and removed by each check)
/// ```
#[derive(Debug)]
pub struct ExternalTree {
    /// `root/model`.
    pub model_dir: PathBuf,
    /// The contents of `model/weights.bin`.
    pub weights: Vec<u8>,
}

/// Byte `i` of `model/weights.bin`.
pub fn weights_byte(i: usize) -> u8 {
    let b = (i % 251) as u8;
    if b == OUTSIDE_BYTE {
        0
    } else {
        b
    }
}

impl ExternalTree {
    /// The tree of this process, created on first use under the system temporary
    /// directory and named by process id; trees of ended processes are removed then.
    pub fn get() -> &'static ExternalTree {
        static TREE: OnceLock<ExternalTree> = OnceLock::new();
        TREE.get_or_init(|| {
            const PREFIX: &str = "onnx-light-fuzz-tree-";
            let tmp = std::env::temp_dir();
            // Trees of processes that have ended (a static is never dropped) go first.
            for entry in fs::read_dir(&tmp).into_iter().flatten().flatten() {
                let name = entry.file_name();
                let pid = name.to_str().and_then(|n| n.strip_prefix(PREFIX));
                if pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
            let root = tmp.join(format!("{PREFIX}{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            let model_dir = root.join("model");
            fs::create_dir_all(model_dir.join("sub")).expect("create the tree");
            fs::create_dir_all(model_dir.join("dir")).expect("create the tree");
            fs::write(root.join("secret.bin"), vec![OUTSIDE_BYTE; 4096]).expect("write");
            let weights: Vec<u8> = (0..4096).map(weights_byte).collect();
            fs::write(model_dir.join("weights.bin"), &weights).expect("write");
            fs::write(
                model_dir.join("sub/w2.bin"),
                (0..100).map(|i| weights_byte(i + 7)).collect::<Vec<u8>>(),
            )
            .expect("write");
            std::os::unix::fs::symlink("weights.bin", model_dir.join("link_in")).expect("link");
            std::os::unix::fs::symlink("../secret.bin", model_dir.join("link_out")).expect("link");
            std::os::unix::fs::symlink("..", model_dir.join("escape")).expect("link");
            ExternalTree { model_dir, weights }
        })
    }
}

fn external_flags(model: &ModelProto<'_>) -> Vec<(bool, Option<ExternalDataRef>)> {
    let mut flags = Vec::new();
    model.visit_tensors(|_, t| {
        let external = t.data_location.is_some_and(|l| l == DataLocation::External);
        flags.push((external, ExternalDataRef::from_tensor(t).ok()));
    });
    flags
}

/// Loading a model whose external-data metadata is arbitrary, from memory (copying)
/// and from a file (memory-mapped, no-copy): no read escapes the model directory
/// (through `..`, absolute paths, or symlinks), and a tensor that names `weights.bin`
/// gets exactly the bytes its offset and length select.
pub fn external_resolution_is_confined(data: &[u8]) {
    let tree = ExternalTree::get();
    let Ok(input) = ModelProto::decode(data) else {
        return;
    };
    let expected = external_flags(&input);
    let options = ParseOptions::default()
        .external_data_dir(&tree.model_dir)
        .num_threads(1);
    let from_memory = load_from_bytes(data, &options);
    // One file per call: test threads run this concurrently.
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let model_path = tree.model_dir.join(format!(
        "model-{}.onnx",
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    fs::write(&model_path, data).expect("write the model file");
    let from_file = crate::mapped::load_mapped(&model_path, &ParseOptions::default());
    let _ = fs::remove_file(&model_path);
    for (what, result) in [
        ("load_from_bytes", from_memory),
        ("no-copy load", from_file),
    ] {
        let Ok(model) = result else { continue };
        let mut index = 0;
        model.visit_tensors(|_, t| {
            let Some((was_external, reference)) = expected.get(index) else {
                panic!("{what}: the loaded model has more tensors than the input");
            };
            index += 1;
            if !*was_external {
                return;
            }
            let loaded = t.raw_data.as_deref().unwrap_or_default();
            assert!(
                !loaded.contains(&OUTSIDE_BYTE),
                "{what}: tensor {:?} read bytes from outside the model directory \
                 (reference {reference:?})",
                t.name()
            );
            if let Some(r) = reference {
                if r.location == "weights.bin" {
                    let start = r.offset as usize;
                    let end = r.length.map_or(tree.weights.len(), |l| start + l as usize);
                    assert_eq!(
                        loaded,
                        &tree.weights[start..end],
                        "{what}: tensor {:?} got the wrong bytes of weights.bin",
                        t.name()
                    );
                }
            }
        });
        assert_eq!(index, expected.len(), "{what}: tensor count changed");
    }
}

/// A `uint8` tensor whose data is external, described by `entries` (key, value).
pub fn external_tensor(
    name: &str,
    dims: Vec<i64>,
    entries: &[(&str, &str)],
) -> TensorProto<'static> {
    TensorProto {
        name: Some(name.to_string().into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims,
        data_location: Some(DataLocation::External.into()),
        external_data: entries
            .iter()
            .map(|(k, v)| StringStringEntryProto::new(k.to_string(), v.to_string()))
            .collect(),
        ..TensorProto::default()
    }
}

fn model_of(tensors: Vec<TensorProto<'static>>) -> Vec<u8> {
    let mut graph = GraphProto::named("fuzz");
    graph.initializer = tensors;
    ModelProto::new(graph, vec![OperatorSetIdProto::new("", 21)])
        .encode_to_vec()
        .expect("encode a seed")
}

/// Models whose external-data metadata points inside, outside and around
/// [`ExternalTree`]: the seeds of the `external` target, and a test of their own.
pub fn external_seeds() -> Vec<Vec<u8>> {
    let cases: &[(&[(&str, &str)], i64)] = &[
        (&[("location", "weights.bin")], 4096),
        (
            &[
                ("location", "weights.bin"),
                ("offset", "16"),
                ("length", "32"),
            ],
            32,
        ),
        (
            &[
                ("location", "weights.bin"),
                ("offset", "4095"),
                ("length", "1"),
            ],
            1,
        ),
        (
            &[
                ("location", "weights.bin"),
                ("offset", "4096"),
                ("length", "0"),
            ],
            0,
        ),
        (
            &[
                ("location", "weights.bin"),
                ("offset", "4000"),
                ("length", "200"),
            ],
            200,
        ),
        (&[("location", "sub/w2.bin")], 100),
        (&[("location", "./sub/../weights.bin"), ("length", "8")], 8),
        (&[("location", "link_in"), ("length", "64")], 64),
        (&[("location", "link_out"), ("length", "64")], 64),
        (&[("location", "escape/secret.bin"), ("length", "64")], 64),
        (&[("location", "../secret.bin"), ("length", "64")], 64),
        (&[("location", "/etc/hostname")], 1),
        (&[("location", "dir")], 1),
        (&[("location", "missing.bin")], 1),
        (&[("location", "weights.bin"), ("checksum", "0000")], 4096),
        (&[("location", "weights.bin"), ("basepath", "sub")], 4096),
    ];
    let mut seeds: Vec<Vec<u8>> = cases
        .iter()
        .enumerate()
        .map(|(i, (entries, len))| {
            model_of(vec![external_tensor(&format!("t{i}"), vec![*len], entries)])
        })
        .collect();
    // Several tensors sharing files, as a converter writes them.
    seeds.push(model_of(
        (0..4)
            .map(|i| {
                let offset = (i * 1024).to_string();
                external_tensor(
                    &format!("w{i}"),
                    vec![16, 64],
                    &[
                        ("location", "weights.bin"),
                        ("offset", &offset),
                        ("length", "1024"),
                    ],
                )
            })
            .collect(),
    ));
    seeds
}

/// The checks of encrypted input: they need the cheap stand-in for PBKDF2, a hook of
/// `onnx-light`'s `test-hooks` feature, which this crate's own feature of that name (on
/// for its tests, and for the `decrypt` fuzz target) turns on.
#[cfg(feature = "test-hooks")]
mod encrypted {
    use super::*;
    use onnx_light::crypto::{
        decrypt_bytes, encrypt_bytes, load_encrypted_from_bytes, DecryptOptions, EncryptOptions,
        EncryptionFormat, Passphrase,
    };

    /// ONNXCRY1 is allowed: the fuzzed inputs cover every format.
    fn decrypt_options(threads: usize) -> DecryptOptions {
        DecryptOptions::default()
            .num_threads(threads)
            .insecure_test_kdf(cheap_kdf)
            .allow_unauthenticated(true)
    }

    /// Encryption options for seeds and round trips: the cheap KDF, small chunks.
    pub fn encrypt_options(format: EncryptionFormat) -> EncryptOptions {
        let options = EncryptOptions::default()
            .format(format)
            .num_threads(1)
            .insecure_test_kdf(cheap_kdf);
        match format {
            EncryptionFormat::OnnxAe01 => options.chunk_size(64),
            _ => options,
        }
    }

    /// Decrypting arbitrary bytes (either format, detected from the magic) with one and two
    /// threads gives the same plaintext or the same error; decrypting straight into a model
    /// agrees with decrypting then decoding; and encrypting the input as plaintext in both
    /// formats decrypts back to it.
    pub fn decryption_is_consistent(data: &[u8]) {
        let passphrase = Passphrase::new(PASSPHRASE);
        let one = decrypt_bytes(data, &passphrase, &decrypt_options(1));
        let two = decrypt_bytes(data, &passphrase, &decrypt_options(2));
        match (&one, &two) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "1 and 2 threads decrypt differently"),
            (Err(a), Err(b)) => assert_eq!(
                (a.kind(), a.offset()),
                (b.kind(), b.offset()),
                "1 and 2 threads fail differently"
            ),
            _ => panic!(
                "1 and 2 threads disagree: {:?} vs {:?}",
                one.as_ref().map(|_| ()),
                two.as_ref().map(|_| ())
            ),
        }
        let as_model = load_encrypted_from_bytes(
            data,
            &passphrase,
            &decrypt_options(1),
            &ParseOptions::default().num_threads(1),
        );
        match (&one, as_model) {
            (Ok(plain), Ok(model)) => {
                let direct = ModelProto::decode(&plain.bytes).expect("the model decoded once");
                assert_eq!(
                    encode(&direct),
                    encode(&model.model),
                    "decrypt-then-decode differs"
                );
            }
            (Ok(plain), Err(e)) => {
                // Only the decode may fail after a successful decryption.
                assert!(
                    ModelProto::decode(&plain.bytes).is_err(),
                    "decrypted and decodable, yet load_encrypted failed: {e}"
                );
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "decryption errors differ"),
            (Err(e), Ok(_)) => panic!("decrypt_bytes failed ({e}) but load_encrypted worked"),
        }
        for format in [
            EncryptionFormat::OnnxAe01,
            EncryptionFormat::OnnxCry1,
            EncryptionFormat::OnnxCry2,
        ] {
            let mut options = encrypt_options(format);
            if format == EncryptionFormat::OnnxAe01 {
                // Several chunks for any input worth it, few enough to keep runs fast.
                options = options.chunk_size(1024);
            }
            let sealed =
                encrypt_bytes(data, &passphrase, &options).expect("encrypting any bytes works");
            let opened = decrypt_bytes(&sealed, &passphrase, &decrypt_options(1))
                .expect("our own ciphertext");
            assert_eq!(
                opened.bytes, data,
                "{format:?} round trip changed the bytes"
            );
        }
    }
}

#[cfg(feature = "test-hooks")]
pub use encrypted::{decryption_is_consistent, encrypt_options};

/// A directory of regression inputs for `target` in the repository: `fuzz/regressions/`.
pub fn regressions_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target)
}

/// The text format on arbitrary input: read as text, the four parsers never panic; a
/// model they accept prints, and survives its own encoding byte for byte. Read as a
/// binary model, printing never panics. Either way, a printed text that parses again
/// prints the same text again (printing is a fixed point of parse-then-print).
pub fn text_format_is_consistent(data: &[u8]) {
    use onnx_light::text;

    fn reprints_identically(printed: &str) {
        if let Ok(again) = text::parse_model(printed) {
            let reprinted = text::to_text(&again).expect("a parsed model prints");
            assert_eq!(reprinted, printed, "parse-then-print changed the text");
        }
    }

    if let Ok(s) = std::str::from_utf8(data) {
        let _ = text::parse_graph(s);
        let _ = text::parse_function(s);
        let _ = text::parse_node(s);
        if let Ok(model) = text::parse_model(s) {
            let printed = text::to_text(&model).expect("a parsed model prints");
            let bytes = encode(&model);
            let back = ModelProto::decode(&bytes).expect("a parsed model's encoding decodes");
            assert_eq!(
                encode(&back),
                bytes,
                "a parsed model does not survive its encoding"
            );
            reprints_identically(&printed);
        }
    }
    if let Ok(model) = ModelProto::decode(data) {
        if let Ok(printed) = text::to_text(&model) {
            reprints_identically(&printed);
        }
    }
}
