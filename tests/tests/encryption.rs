//! Encrypted models (`onnx_light::crypto`): every format against vectors made
//! independently in Python, tampering of every kind, wrong passphrases, streaming
//! files, external data, and round trips.
//!
//! Speed: PBKDF2 dominates every decryption in a debug build, so tests that
//! decrypt thousands of times (bit flips, truncations, ONNXCRY1 wrong passphrases)
//! replace it by `fast_kdf` through the test-only hook; everything else around the
//! KDF is the real code path. The real PBKDF2 is covered by the known-answer vectors
//! (keys from Python's `hashlib`), by 1 000 wrong passphrases at the minimum
//! iteration count, and by one file written with the default 600 000 iterations.

use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;

use onnx_light::crypto::{
    self, DecryptOptions, EncryptOptions, EncryptingWriter, EncryptionFormat, Passphrase,
};
use onnx_light::io::{self, LoadMode, ParseOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{Bytes, Error, ErrorKind};
use onnx_light_tests::mapped::Load;
use onnx_light_tests::python::{python_dir, run_python, workspace_root};
use onnx_light_tests::scratch::Scratch;

// ---------------------------------------------------------------------------------------
// Helpers.

/// A cheap stand-in for PBKDF2 (splitmix64 over every input bit), for tests that
/// decrypt thousands of times. 0xff never occurs in UTF-8, so it separates the inputs.
fn fast_kdf(passphrase: &[u8], salt: &[u8], iterations: u32, key: &mut [u8; 32]) {
    let mut h = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(iterations);
    for &b in passphrase.iter().chain(&[0xff]).chain(salt) {
        h = splitmix(h ^ u64::from(b));
    }
    for (i, k) in key.chunks_mut(8).enumerate() {
        h = splitmix(h.wrapping_add(i as u64));
        k.copy_from_slice(&h.to_le_bytes());
    }
}

/// A KDF that must not run: proves that a header is refused before key derivation.
fn forbidden_kdf(_: &[u8], _: &[u8], _: u32, _: &mut [u8; 32]) {
    panic!("the KDF ran for an input that should have been refused before it");
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic pseudo-random generator for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = splitmix(self.0);
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// A passphrase of 0 to 40 characters, ASCII and not.
    fn passphrase(&mut self) -> String {
        const CHARS: &[char] = &[
            'a', 'b', 'z', 'A', 'Q', '0', '9', ' ', '!', '~', 'é', 'ß', 'ü', 'Ω', 'ж', '密', '码',
            '🔑', '\u{301}', '\t',
        ];
        let len = self.below(41);
        (0..len).map(|_| CHARS[self.below(CHARS.len())]).collect()
    }
}

fn ae_fast(chunk_size: u32) -> EncryptOptions {
    EncryptOptions::default()
        .iterations(crypto::MIN_ITERATIONS)
        .chunk_size(chunk_size)
        .insecure_test_kdf(fast_kdf)
}

fn cry1_fast() -> EncryptOptions {
    EncryptOptions::default()
        .format(EncryptionFormat::OnnxCry1)
        .insecure_test_kdf(fast_kdf)
}

fn cry2_fast() -> EncryptOptions {
    EncryptOptions::default()
        .format(EncryptionFormat::OnnxCry2)
        .insecure_test_kdf(fast_kdf)
}

/// The fast KDF, and ONNXCRY1 allowed (the tests that check its refusal say so).
fn dec_fast() -> DecryptOptions {
    DecryptOptions::default()
        .insecure_test_kdf(fast_kdf)
        .allow_unauthenticated(true)
}

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.expect_err("expected an error").kind().clone()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn model_with(payloads: &[usize], seed: u8) -> Model {
    let mut g = GraphProto::named(format!("encrypted-{seed}"));
    for (i, &n) in payloads.iter().enumerate() {
        let data: Vec<u8> = (0..n)
            .map(|j| (j as u8).wrapping_mul(31).wrapping_add(seed ^ i as u8))
            .collect();
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [n as i64],
            data,
        ));
    }
    g.node.push(NodeProto::new("Identity", ["w0"], ["y"]));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("encryption test".into());
    m
}

fn load_bytes(
    data: &[u8],
    passphrase: &Passphrase,
    options: &DecryptOptions,
) -> crypto::DecryptedModel {
    crypto::load_encrypted_from_bytes(data, passphrase, options, &ParseOptions::default()).unwrap()
}

// ---------------------------------------------------------------------------------------
// Known-answer vectors, made by tests/python/encryption_kat.py.

struct Vectors {
    onnxcry1: Vec<Cry1Vector>,
    onnxae01: Vec<Ae01Vector>,
    onnxcry2: Vec<Cry1Vector>,
}

/// An ONNXCRY1 or ONNXCRY2 vector (for ONNXCRY2, `iv` is the 12-byte nonce followed by
/// four zeros, as the fixed-IV hook takes it).
struct Cry1Vector {
    passphrase: String,
    salt: Vec<u8>,
    iv: [u8; 16],
    key: [u8; 32],
    plaintext: Vec<u8>,
    file: Vec<u8>,
}

struct Ae01Vector {
    passphrase: String,
    iterations: u32,
    chunk_size: u32,
    salt: Vec<u8>,
    iv0: [u8; 16],
    plaintext: Vec<u8>,
    file: Vec<u8>,
}

fn fixture_path() -> PathBuf {
    workspace_root().join("tests/fixtures/encryption_kat.txt")
}

fn vectors() -> Vectors {
    let text = fs::read_to_string(fixture_path()).unwrap();
    let mut v = Vectors {
        onnxcry1: Vec::new(),
        onnxae01: Vec::new(),
        onnxcry2: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split(' ').collect();
        let passphrase = String::from_utf8(unhex(f[1])).unwrap();
        match f[0] {
            "onnxcry1" => v.onnxcry1.push(Cry1Vector {
                passphrase,
                salt: unhex(f[2]),
                iv: unhex(f[3]).try_into().unwrap(),
                key: unhex(f[4]).try_into().unwrap(),
                plaintext: unhex(f[5]),
                file: unhex(f[6]),
            }),
            "onnxae01" => v.onnxae01.push(Ae01Vector {
                passphrase,
                iterations: f[2].parse().unwrap(),
                chunk_size: f[3].parse().unwrap(),
                salt: unhex(f[4]),
                iv0: unhex(f[5]).try_into().unwrap(),
                plaintext: unhex(f[6]),
                file: unhex(f[7]),
            }),
            "onnxcry2" => v.onnxcry2.push(Cry1Vector {
                passphrase,
                salt: unhex(f[2]),
                iv: [unhex(f[3]), vec![0; 4]].concat().try_into().unwrap(),
                key: unhex(f[4]).try_into().unwrap(),
                plaintext: unhex(f[5]),
                file: unhex(f[6]),
            }),
            other => panic!("unknown vector kind {other}"),
        }
    }
    v
}

/// (passphrase, salt, key) of an ONNXCRY1 or ONNXCRY2 vector.
type KatKey = (Vec<u8>, Vec<u8>, [u8; 32]);

/// PBKDF2 outputs from the vectors (computed by Python's hashlib), handed out by
/// `kat_kdf` so that only a few tests pay for 100 000 debug-build iterations.
static KAT_KEYS: Mutex<Vec<KatKey>> = Mutex::new(Vec::new());

fn kat_kdf(passphrase: &[u8], salt: &[u8], iterations: u32, key: &mut [u8; 32]) {
    assert_eq!(iterations, crypto::ONNXCRY1_ITERATIONS);
    assert_eq!(iterations, crypto::ONNXCRY2_ITERATIONS);
    let keys = KAT_KEYS.lock().unwrap();
    *key = keys
        .iter()
        .find(|(p, s, _)| p == passphrase && s == salt)
        .expect("a key from the vectors")
        .2;
}

fn register_kat_keys(v: &Vectors) {
    let mut keys = KAT_KEYS.lock().unwrap();
    for c in v.onnxcry1.iter().chain(&v.onnxcry2) {
        keys.push((c.passphrase.as_bytes().to_vec(), c.salt.clone(), c.key));
    }
}

#[test]
fn committed_vectors_are_what_the_python_script_generates() {
    let out = run_python(
        &python_dir().join("encryption_kat.py"),
        &["vectors".as_ref()],
    );
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed = fs::read_to_string(fixture_path()).unwrap();
    assert!(
        generated == committed,
        "tests/fixtures/encryption_kat.txt differs from `encryption_kat.py vectors`"
    );
    let v = vectors();
    assert!(v.onnxcry1.len() >= 7 && v.onnxae01.len() >= 8 && v.onnxcry2.len() >= 7);
    assert!(v.onnxcry1.iter().any(|c| !c.passphrase.is_ascii()));
    assert!(v.onnxcry2.iter().any(|c| !c.passphrase.is_ascii()));
}

#[test]
fn onnxcry1_vectors_decrypt_to_exactly_their_plaintext() {
    let v = vectors();
    register_kat_keys(&v);
    let options = DecryptOptions::default()
        .insecure_test_kdf(kat_kdf)
        .allow_unauthenticated(true);
    for c in &v.onnxcry1 {
        let passphrase = Passphrase::new(c.passphrase.as_str());
        let opened = crypto::decrypt_bytes(&c.file, &passphrase, &options).unwrap();
        assert_eq!(
            opened.bytes,
            c.plaintext,
            "vector for {} bytes",
            c.plaintext.len()
        );
        assert_eq!(opened.format, EncryptionFormat::OnnxCry1);
        assert!(!opened.is_authenticated());
    }
    // The last vector is an ONNX model made by the `onnx` package, with a non-ASCII
    // passphrase: decrypted with the real PBKDF2 and loaded as a model.
    let c = v.onnxcry1.last().unwrap();
    assert!(!c.passphrase.is_ascii());
    let opened = load_bytes(
        &c.file,
        &Passphrase::new(c.passphrase.as_str()),
        &DecryptOptions::default().allow_unauthenticated(true),
    );
    assert!(!opened.is_authenticated());
    assert_eq!(opened.model, Model::decode_owned(&c.plaintext).unwrap());
    assert_eq!(opened.model.graph.as_ref().unwrap().name(), "encrypted-kat");
}

#[test]
fn onnxcry1_encryption_with_the_vectors_salt_and_iv_reproduces_them() {
    let v = vectors();
    register_kat_keys(&v);
    for c in &v.onnxcry1 {
        let options = EncryptOptions::default()
            .format(EncryptionFormat::OnnxCry1)
            .insecure_test_kdf(kat_kdf)
            .insecure_fixed_salt_and_iv(&c.salt, c.iv);
        let passphrase = Passphrase::new(c.passphrase.as_str());
        let file = crypto::encrypt_bytes(&c.plaintext, &passphrase, &options).unwrap();
        assert_eq!(
            hex(&file),
            hex(&c.file),
            "vector for {} bytes",
            c.plaintext.len()
        );
        // The streaming writer, fed in odd pieces, writes the same bytes.
        let mut w = EncryptingWriter::new(Vec::new(), &passphrase, &options).unwrap();
        for piece in c.plaintext.chunks(7) {
            std::io::Write::write_all(&mut w, piece).unwrap();
        }
        assert_eq!(w.finish().unwrap(), c.file);
    }
}

#[test]
fn onnxae01_frozen_vectors_decrypt_and_reencrypt_byte_for_byte() {
    for a in &vectors().onnxae01 {
        let passphrase = Passphrase::new(a.passphrase.as_str());
        let opened =
            crypto::decrypt_bytes(&a.file, &passphrase, &DecryptOptions::default()).unwrap();
        assert_eq!(opened.bytes, a.plaintext);
        assert!(opened.is_authenticated());
        for threads in [1, 3] {
            let options = EncryptOptions::default()
                .iterations(a.iterations)
                .chunk_size(a.chunk_size)
                .num_threads(threads)
                .insecure_fixed_salt_and_iv(&a.salt, a.iv0);
            let file = crypto::encrypt_bytes(&a.plaintext, &passphrase, &options).unwrap();
            assert_eq!(
                hex(&file),
                hex(&a.file),
                "{} bytes in chunks of {}",
                a.plaintext.len(),
                a.chunk_size
            );
        }
    }
}

#[test]
fn onnxcry2_vectors_decrypt_and_reencrypt_byte_for_byte() {
    let v = vectors();
    register_kat_keys(&v);
    let strict = DecryptOptions::default().insecure_test_kdf(kat_kdf);
    for c in &v.onnxcry2 {
        let passphrase = Passphrase::new(c.passphrase.as_str());
        let opened = crypto::decrypt_bytes(&c.file, &passphrase, &strict).unwrap();
        assert_eq!(opened.bytes, c.plaintext, "{} bytes", c.plaintext.len());
        assert_eq!(opened.format, EncryptionFormat::OnnxCry2);
        assert!(opened.is_authenticated());
        let options = EncryptOptions::default()
            .format(EncryptionFormat::OnnxCry2)
            .insecure_test_kdf(kat_kdf)
            .insecure_fixed_salt_and_iv(&c.salt, c.iv);
        let file = crypto::encrypt_bytes(&c.plaintext, &passphrase, &options).unwrap();
        assert_eq!(hex(&file), hex(&c.file), "{} bytes", c.plaintext.len());
        // The writer, fed in odd pieces, writes the same bytes.
        let mut w = EncryptingWriter::new(Vec::new(), &passphrase, &options).unwrap();
        for piece in c.plaintext.chunks(7) {
            std::io::Write::write_all(&mut w, piece).unwrap();
        }
        assert_eq!(w.finish().unwrap(), c.file);
    }
    // The last vector is an ONNX model made by the `onnx` package: decrypted with the
    // real PBKDF2, with default options (ONNXCRY2 is authenticated), and loaded.
    let c = v.onnxcry2.last().unwrap();
    let passphrase = Passphrase::new(c.passphrase.as_str());
    let opened = crypto::load_encrypted_from_bytes(
        &c.file,
        &passphrase,
        &DecryptOptions::default(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(opened.is_authenticated());
    assert_eq!(opened.model, Model::decode_owned(&c.plaintext).unwrap());
    // A wrong passphrase through the real PBKDF2 fails the tag.
    let e = crypto::decrypt_bytes(
        &c.file,
        &Passphrase::new("wrong"),
        &DecryptOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::WrongPassphraseOrCorrupted);
}

#[test]
fn python_encrypts_onnxcry2_with_random_salt_and_nonce_and_we_decrypt_it() {
    let dir = Scratch::new("python-cry2");
    let passphrase_text = "密码🔑 ✓";
    let model = model_with(&[3000, 10], 8);
    fs::write(dir.path("plain"), model.encode_to_vec().unwrap()).unwrap();
    run_python(
        &python_dir().join("encryption_kat.py"),
        &[
            "onnxcry2-encrypt".as_ref(),
            hex(passphrase_text.as_bytes()).as_ref(),
            dir.path("plain").as_os_str(),
            dir.path("m.cry2").as_os_str(),
        ],
    );
    let opened =
        crypto::load_encrypted(dir.path("m.cry2"), &Passphrase::new(passphrase_text)).unwrap();
    assert_eq!(opened.format, EncryptionFormat::OnnxCry2);
    assert_eq!(opened.model, model);
}

#[test]
fn python_decrypts_what_we_write_and_rejects_a_flipped_bit() {
    let dir = Scratch::new("python");
    let script = python_dir().join("encryption_kat.py");
    let passphrase_text = "пароль ✓";
    let passphrase = Passphrase::new(passphrase_text);
    let plaintext = Rng(7).bytes(1000);
    let formats = [
        (
            "onnxae01",
            EncryptOptions::default().iterations(1_000).chunk_size(128),
        ),
        (
            "onnxcry1",
            EncryptOptions::default().format(EncryptionFormat::OnnxCry1),
        ),
        (
            "onnxcry2",
            EncryptOptions::default().format(EncryptionFormat::OnnxCry2),
        ),
    ];
    for (name, options) in formats {
        let file = crypto::encrypt_bytes(&plaintext, &passphrase, &options).unwrap();
        let path = dir.path(name);
        fs::write(&path, &file).unwrap();
        let out = run_python(
            &script,
            &[
                "open".as_ref(),
                path.as_os_str(),
                hex(passphrase_text.as_bytes()).as_ref(),
            ],
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.trim(), format!("{name} {}", hex(&plaintext)));
    }
    for name in ["onnxae01", "onnxcry2"] {
        let mut file = fs::read(dir.path(name)).unwrap();
        file[500] ^= 4;
        fs::write(dir.path("flipped"), &file).unwrap();
        let status = std::process::Command::new(onnx_light_tests::python::python())
            .arg(&script)
            .args([
                "open".as_ref(),
                dir.path("flipped").as_os_str(),
                hex(passphrase_text.as_bytes()).as_ref(),
            ])
            .output()
            .unwrap();
        assert!(
            !status.status.success(),
            "python accepted a modified {name}"
        );
    }
}

#[test]
fn default_options_write_600k_iterations_that_python_decrypts() {
    let dir = Scratch::new("default");
    let passphrase = Passphrase::new("the default passphrase");
    let options = EncryptOptions::default();
    assert_eq!(options.effective_iterations(), 600_000);
    let model = model_with(&[3000], 1);
    let file = crypto::encrypt_model(&model, &passphrase, &options).unwrap();
    assert_eq!(&file[..8], b"ONNXAE01");
    assert_eq!(
        u32::from_le_bytes(file[12..16].try_into().unwrap()),
        600_000
    );
    assert_eq!(
        u32::from_le_bytes(file[16..20].try_into().unwrap()),
        1 << 20
    );
    // Decrypted by Python (fast PBKDF2) rather than by a debug build of ours.
    fs::write(dir.path("m.enc"), &file).unwrap();
    let out = run_python(
        &python_dir().join("encryption_kat.py"),
        &[
            "open".as_ref(),
            dir.path("m.enc").as_os_str(),
            hex(b"the default passphrase").as_ref(),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let plaintext = unhex(stdout.trim().strip_prefix("onnxae01 ").unwrap());
    assert_eq!(Model::decode_owned(&plaintext).unwrap(), model);
}

// ---------------------------------------------------------------------------------------
// Wrong passphrases.

#[test]
fn a_thousand_wrong_passphrases_are_all_rejected_by_onnxae01() {
    let right = "pässwörd"; // NFC; its NFD spelling below is a different passphrase
    let options = EncryptOptions::default()
        .iterations(crypto::MIN_ITERATIONS)
        .chunk_size(64);
    let file = crypto::encrypt_bytes(b"secret weights", &Passphrase::new(right), &options).unwrap();
    let mut rng = Rng(42);
    let mut wrong: Vec<String> = vec![
        String::new(),
        "pa\u{308}sswo\u{308}rd".into(),
        "pässwörd ".into(),
        "Pässwörd".into(),
        "pässwör".into(),
        "passwoerd".into(),
    ];
    while wrong.len() < 1000 {
        let p = rng.passphrase();
        if p != right {
            wrong.push(p);
        }
    }
    let threads = 4;
    std::thread::scope(|s| {
        for part in wrong.chunks(wrong.len().div_ceil(threads)) {
            let file = &file;
            s.spawn(move || {
                for p in part {
                    let e = crypto::decrypt_bytes(
                        file,
                        &Passphrase::new(p.as_str()),
                        &DecryptOptions::default(),
                    )
                    .expect_err("a wrong passphrase was accepted");
                    assert_eq!(e.kind(), &ErrorKind::WrongPassphraseOrCorrupted, "{p:?}");
                    assert_eq!(e.offset(), Some(0), "rejected at the header");
                    if p.len() > 3 {
                        assert!(
                            !e.to_string().contains(p.as_str())
                                && !format!("{e:?}").contains(p.as_str())
                        );
                    }
                }
            });
        }
    });
    let opened =
        crypto::decrypt_bytes(&file, &Passphrase::new(right), &DecryptOptions::default()).unwrap();
    assert_eq!(opened.bytes, b"secret weights");
}

#[test]
fn a_thousand_wrong_passphrases_never_panic_onnxcry1_and_are_caught_on_load() {
    let right = Passphrase::new("right");
    let model = model_with(&[2000, 300], 3);
    let options = cry1_fast().insecure_fixed_salt_and_iv(&[9; 16], [8; 16]);
    let file = crypto::encrypt_model(&model, &right, &options).unwrap();
    let mut rng = Rng(1);
    let (mut bad_padding, mut unparsable, mut garbage_decrypted) = (0, 0, 0);
    for _ in 0..1000 {
        let p = Passphrase::new(format!("{}x", rng.passphrase()));
        match crypto::decrypt_bytes(&file, &p, &dec_fast()) {
            Err(e) => {
                assert_eq!(e.kind(), &ErrorKind::WrongPassphraseOrCorrupted);
                bad_padding += 1;
            }
            Ok(d) => {
                // Padding can pass by chance: the result is garbage, flagged unauthenticated.
                assert!(!d.is_authenticated());
                garbage_decrypted += 1;
            }
        }
        match crypto::load_encrypted_from_bytes(&file, &p, &dec_fast(), &ParseOptions::default()) {
            Err(_) => unparsable += 1,
            Ok(m) => assert!(!m.is_authenticated() && m.model != model),
        }
    }
    eprintln!("ONNXCRY1, 1000 wrong passphrases: {bad_padding} bad padding, {garbage_decrypted} garbage decrypted, {unparsable} load errors");
    assert_eq!(bad_padding + garbage_decrypted, 1000);
    assert_eq!(
        unparsable, 1000,
        "every wrong passphrase is caught when loading this model"
    );
    // One wrong passphrase through the real PBKDF2.
    let real = EncryptOptions::default()
        .format(EncryptionFormat::OnnxCry1)
        .insecure_fixed_salt_and_iv(&[9; 16], [8; 16]);
    let file = crypto::encrypt_model(&model, &right, &real).unwrap();
    assert!(crypto::load_encrypted_from_bytes(
        &file,
        &Passphrase::new("wrong"),
        &DecryptOptions::default().allow_unauthenticated(true),
        &ParseOptions::default()
    )
    .is_err());
}

// ---------------------------------------------------------------------------------------
// Tampering.

/// A model whose encoding spans exactly three 64-byte chunks, and its ONNXAE01 file.
fn three_chunk_file() -> (Model, Vec<u8>) {
    let model = model_with(&[60], 5);
    let plaintext = model.encode_to_vec().unwrap();
    assert!(
        (129..=192).contains(&plaintext.len()),
        "{} bytes",
        plaintext.len()
    );
    let file = crypto::encrypt_model(&model, &Passphrase::new("k"), &ae_fast(64)).unwrap();
    (model, file)
}

const HEADER: usize = 84;
const RECORD: usize = 64 + 48;

#[test]
fn every_single_bit_flip_in_the_header_and_every_chunk_is_rejected() {
    let (model, file) = three_chunk_file();
    let passphrase = Passphrase::new("k");
    assert_eq!(load_bytes(&file, &passphrase, &dec_fast()).model, model);
    let mut checked = 0;
    for byte in 0..file.len() {
        for bit in 0..8 {
            let mut f = file.clone();
            f[byte] ^= 1 << bit;
            let e = crypto::load_encrypted_from_bytes(
                &f,
                &passphrase,
                &dec_fast(),
                &ParseOptions::default(),
            )
            .expect_err("a flipped bit was accepted");
            let k = e.kind().clone();
            if byte < HEADER {
                assert!(
                    matches!(
                        k,
                        ErrorKind::WrongPassphraseOrCorrupted
                            | ErrorKind::UnsupportedEncryption { .. }
                            | ErrorKind::NotEncrypted
                            | ErrorKind::TruncatedEncryption
                    ),
                    "header byte {byte} bit {bit}: {e}"
                );
            } else {
                assert_eq!(
                    k,
                    ErrorKind::WrongPassphraseOrCorrupted,
                    "byte {byte} bit {bit}"
                );
                let record = (byte - HEADER) / RECORD;
                assert_eq!(
                    e.offset(),
                    Some((HEADER + record * RECORD) as u64),
                    "names the chunk"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, file.len() * 8);
}

#[test]
fn truncation_at_every_byte_offset_is_rejected() {
    let (_, file) = three_chunk_file();
    let passphrase = Passphrase::new("k");
    for len in 0..file.len() {
        let k = kind(crypto::decrypt_bytes(
            &file[..len],
            &passphrase,
            &dec_fast(),
        ));
        match len {
            0 => assert_eq!(k, ErrorKind::NotEncrypted),
            // Cut right after a complete chunk: the final chunk is missing.
            l if l > HEADER && (l - HEADER).is_multiple_of(RECORD) => {
                assert_eq!(k, ErrorKind::TruncatedEncryption, "cut at {l}")
            }
            l => assert!(
                matches!(
                    k,
                    ErrorKind::TruncatedEncryption | ErrorKind::WrongPassphraseOrCorrupted
                ),
                "cut at {l}: {k:?}"
            ),
        }
    }
    // Appending anything is caught too.
    let mut longer = file.clone();
    longer.push(0);
    assert!(crypto::decrypt_bytes(&longer, &passphrase, &dec_fast()).is_err());
}

#[test]
fn swapped_duplicated_dropped_and_foreign_chunks_are_rejected() {
    let passphrase = Passphrase::new("k");
    let plaintext = Rng(3).bytes(4 * 64 + 10); // 4 full chunks and a short final one
    let file = crypto::encrypt_bytes(&plaintext, &passphrase, &ae_fast(64)).unwrap();
    let records: Vec<&[u8]> = {
        let body = &file[HEADER..];
        let mut v: Vec<&[u8]> = body[..4 * RECORD].chunks(RECORD).collect();
        v.push(&body[4 * RECORD..]);
        v
    };
    let assemble = |order: &[&[u8]]| -> Vec<u8> {
        let mut f = file[..HEADER].to_vec();
        for r in order {
            f.extend_from_slice(r);
        }
        f
    };
    let r = &records;
    let other = crypto::encrypt_bytes(&plaintext, &passphrase, &ae_fast(64)).unwrap();
    let foreign = &other[HEADER + RECORD..HEADER + 2 * RECORD];
    let cases: Vec<(&str, Vec<u8>, ErrorKind)> = vec![
        (
            "swap 0 and 1",
            assemble(&[r[1], r[0], r[2], r[3], r[4]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "swap 2 and 3",
            assemble(&[r[0], r[1], r[3], r[2], r[4]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "duplicate 1",
            assemble(&[r[0], r[1], r[1], r[2], r[3], r[4]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "drop 1",
            assemble(&[r[0], r[2], r[3], r[4]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "drop the final chunk",
            assemble(&[r[0], r[1], r[2], r[3]]),
            ErrorKind::TruncatedEncryption,
        ),
        (
            "final chunk moved first",
            assemble(&[r[4], r[0], r[1], r[2], r[3]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "chunk of another file, same passphrase",
            assemble(&[r[0], foreign, r[2], r[3], r[4]]),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
        (
            "header of another file",
            [&other[..HEADER], &file[HEADER..]].concat(),
            ErrorKind::WrongPassphraseOrCorrupted,
        ),
    ];
    for (what, f, expected) in cases {
        assert_eq!(
            kind(crypto::decrypt_bytes(&f, &passphrase, &dec_fast())),
            expected,
            "{what}"
        );
    }
    assert_eq!(assemble(r), file);
}

#[test]
fn onnxcry2_rejects_every_bit_flip_truncation_extension_and_wrong_passphrase() {
    let p = Passphrase::new("k");
    let plaintext = Rng(21).bytes(150);
    let file = crypto::encrypt_bytes(&plaintext, &p, &cry2_fast()).unwrap();
    assert_eq!(file.len(), 52 + 150);
    for byte in 0..file.len() {
        for bit in 0..8 {
            let mut f = file.clone();
            f[byte] ^= 1 << bit;
            let k = kind(crypto::decrypt_bytes(&f, &p, &dec_fast()));
            if byte < 8 {
                // The magic: another format, version, or no encrypted model at all.
                assert!(
                    matches!(
                        k,
                        ErrorKind::NotEncrypted
                            | ErrorKind::UnsupportedEncryption { .. }
                            | ErrorKind::TruncatedEncryption
                    ),
                    "byte {byte} bit {bit}: {k:?}"
                );
            } else {
                assert_eq!(
                    k,
                    ErrorKind::WrongPassphraseOrCorrupted,
                    "byte {byte} bit {bit}"
                );
            }
        }
    }
    // Cut anywhere: inside the header it is truncation; after it the tag fails (the
    // format records no length).
    for len in 0..file.len() {
        let k = kind(crypto::decrypt_bytes(&file[..len], &p, &dec_fast()));
        let expected = match len {
            0 => ErrorKind::NotEncrypted,
            1..52 => ErrorKind::TruncatedEncryption,
            _ => ErrorKind::WrongPassphraseOrCorrupted,
        };
        assert_eq!(k, expected, "{len} bytes");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert_eq!(
        kind(crypto::decrypt_bytes(&longer, &p, &dec_fast())),
        ErrorKind::TrailingBytes
    );
    for wrong in ["", "K", "k ", "kk"] {
        let e = crypto::decrypt_bytes(&file, &Passphrase::new(wrong), &dec_fast()).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::WrongPassphraseOrCorrupted,
            "{wrong:?}"
        );
    }
    assert_eq!(
        crypto::decrypt_bytes(&file, &p, &dec_fast()).unwrap().bytes,
        plaintext
    );
}

/// The encrypted files of one model in every format: (name, file).
fn one_model_in_every_format(
    model: &Model,
    passphrase: &Passphrase,
) -> Vec<(&'static str, Vec<u8>)> {
    [
        ("ONNXAE01", ae_fast(64)),
        ("ONNXCRY2", cry2_fast()),
        ("ONNXCRY1", cry1_fast()),
    ]
    .into_iter()
    .map(|(name, options)| {
        (
            name,
            crypto::encrypt_model(model, passphrase, &options).unwrap(),
        )
    })
    .collect()
}

/// The error of every way to decrypt `bytes`: bytes, model from bytes, file to file,
/// model from a file. Each must be the same kind at the same offset.
fn every_decryption_error(
    dir: &Scratch,
    bytes: &[u8],
    passphrase: &Passphrase,
) -> (ErrorKind, Option<u64>, String) {
    let path = dir.path("in.enc");
    fs::write(&path, bytes).unwrap();
    let errors = [
        crypto::decrypt_bytes(bytes, passphrase, &dec_fast()).map(|_| ()),
        crypto::load_encrypted_from_bytes(bytes, passphrase, &dec_fast(), &ParseOptions::default())
            .map(|_| ()),
        crypto::decrypt_file(&path, dir.path("out.onnx"), passphrase, &dec_fast()).map(|_| ()),
        crypto::load_encrypted_with(&path, passphrase, &dec_fast(), &ParseOptions::default())
            .map(|_| ()),
    ]
    .map(|r| r.expect_err("decrypted"));
    assert!(!dir.path("out.onnx").exists(), "no output is left");
    for e in &errors[1..] {
        assert_eq!(
            (e.kind(), e.offset()),
            (errors[0].kind(), errors[0].offset()),
            "{e} vs {}",
            errors[0]
        );
    }
    let e = &errors[0];
    (e.kind().clone(), e.offset(), e.to_string())
}

#[test]
fn bytes_appended_after_the_encrypted_stream_are_reported_where_it_ends_in_every_format() {
    let dir = Scratch::new("trailing");
    let right = Passphrase::new("k");
    let model = model_with(&[300], 9);
    for (name, file) in one_model_in_every_format(&model, &right) {
        let end = file.len() as u64;
        // ONNXCRY1 has no MAC and records no length: fewer than 16 appended bytes are
        // recognized by the whole blocks before them decrypting as a complete stream.
        let appended: &[usize] = match name {
            "ONNXCRY1" => &[1, 4, 15],
            _ => &[1, 4, 15, 16, 17, 48, 64, 112, 113, 1000, 5000],
        };
        for &n in appended {
            let mut longer = file.clone();
            longer.extend(Rng(n as u64).bytes(n));
            let (kind, offset, text) = every_decryption_error(&dir, &longer, &right);
            assert_eq!(kind, ErrorKind::TrailingBytes, "{name} + {n} bytes: {text}");
            assert_eq!(offset, Some(end), "{name} + {n} bytes: {text}");
            assert!(
                text.contains(&format!(
                    "trailing bytes after the end of its encrypted stream at byte offset {end}"
                )),
                "{name} + {n} bytes: {text}"
            );
        }
        // Cut short instead (not at a block boundary, which only a MAC can tell from
        // corruption): truncated. ONNXCRY2 records no length, so its tag fails.
        for n in [1, 4, 17, 33] {
            let (kind, _, text) = every_decryption_error(&dir, &file[..file.len() - n], &right);
            let expected = match name {
                "ONNXCRY2" => ErrorKind::WrongPassphraseOrCorrupted,
                _ => ErrorKind::TruncatedEncryption,
            };
            assert_eq!(kind, expected, "{name} - {n} bytes: {text}");
        }
        // With the wrong passphrase, nothing can be authenticated: no claim of
        // appended bytes (ONNXCRY1: the length alone, which reads as a cut).
        let mut longer = file.clone();
        longer.extend([0; 4]);
        let (kind, _, text) = every_decryption_error(&dir, &longer, &Passphrase::new("K"));
        let expected = match name {
            "ONNXCRY1" => ErrorKind::TruncatedEncryption,
            _ => ErrorKind::WrongPassphraseOrCorrupted,
        };
        assert_eq!(kind, expected, "{name} + 4 bytes, wrong passphrase: {text}");
        // The untouched file decrypts.
        assert_eq!(
            load_bytes(&file, &right, &dec_fast()).model,
            model,
            "{name}"
        );
    }
}

#[test]
fn a_corrupted_chunk_before_appended_bytes_is_not_taken_for_their_start() {
    // ONNXAE01: a modified chunk anywhere, with or without bytes after the stream, is
    // never reported as appended bytes at the wrong place. (A modified final chunk
    // followed by other bytes cannot be told from a final chunk cut short.)
    let dir = Scratch::new("trailing-corrupt");
    let p = Passphrase::new("k");
    let plaintext = Rng(4).bytes(6 * 64 + 20);
    let file = crypto::encrypt_bytes(&plaintext, &p, &ae_fast(64)).unwrap();
    for record in 0..7 {
        let mut f = file.clone();
        f[HEADER + record * RECORD + 20] ^= 1;
        let (kind, offset, text) = every_decryption_error(&dir, &f, &p);
        assert_eq!(kind, ErrorKind::WrongPassphraseOrCorrupted, "{text}");
        assert_eq!(offset, Some((HEADER + record * RECORD) as u64), "{text}");
        f.extend([7; 9]);
        let (kind, offset, text) = every_decryption_error(&dir, &f, &p);
        match kind {
            ErrorKind::TrailingBytes => assert_eq!(offset, Some(file.len() as u64), "{text}"),
            ErrorKind::WrongPassphraseOrCorrupted => {
                assert_eq!(offset, Some((HEADER + record * RECORD) as u64), "{text}")
            }
            ErrorKind::TruncatedEncryption if record == 6 => {}
            other => panic!("record {record}: {other:?}: {text}"),
        }
    }
}

#[test]
fn onnxcry1_bad_padding_and_undecodable_plaintext_give_one_and_the_same_error() {
    let dir = Scratch::new("oracle");
    let right = Passphrase::new("right");
    let model = model_with(&[200, 50], 7);
    let plaintext = model.encode_to_vec().unwrap();
    let file = crypto::encrypt_model(&model, &right, &cry1_fast()).unwrap();
    let n = file.len();
    assert!(n >= 40 + 48, "at least three blocks");
    // Bad padding: the second-to-last ciphertext block XORs into the last plaintext
    // block, so flipping the top bit of its last byte makes the padding byte >= 0x80.
    let mut bad_padding = file.clone();
    bad_padding[n - 17] ^= 0x80;
    // Good padding, garbage content: the IV XORs into the first plaintext block, so
    // the first byte becomes 0x07 (field 0, wire type 7), which no model starts with.
    let mut garbage = file.clone();
    garbage[24] ^= plaintext[0] ^ 0x07;
    assert!(
        crypto::decrypt_bytes(&garbage, &right, &dec_fast()).is_ok(),
        "the padding of the garbage case is valid"
    );
    assert_eq!(
        kind(crypto::decrypt_bytes(&bad_padding, &right, &dec_fast())),
        ErrorKind::WrongPassphraseOrCorrupted,
        "the padding of the bad-padding case is not"
    );
    // Wrong passphrases: one whose decryption has bad padding, one whose padding
    // passes by chance (about 1 in 256 tries).
    let (mut wrong_bad_padding, mut wrong_good_padding) = (None, None);
    for i in 0..100_000 {
        let p = Passphrase::new(format!("wrong {i}"));
        match crypto::decrypt_bytes(&file, &p, &dec_fast()) {
            Err(_) if wrong_bad_padding.is_none() => wrong_bad_padding = Some(p),
            Ok(_) if wrong_good_padding.is_none() => wrong_good_padding = Some(p),
            _ => {}
        }
        if wrong_bad_padding.is_some() && wrong_good_padding.is_some() {
            break;
        }
    }
    let cases = [
        ("bad padding", bad_padding, right.clone()),
        ("garbage content", garbage, right.clone()),
        (
            "wrong passphrase, bad padding",
            file.clone(),
            wrong_bad_padding.unwrap(),
        ),
        (
            "wrong passphrase, good padding",
            file.clone(),
            wrong_good_padding.unwrap(),
        ),
    ];
    let mut in_memory = Vec::new();
    let mut from_file = Vec::new();
    for (what, bytes, passphrase) in &cases {
        let e = crypto::load_encrypted_from_bytes(
            bytes,
            passphrase,
            &dec_fast(),
            &ParseOptions::default(),
        )
        .expect_err(what);
        in_memory.push((e.kind().clone(), e.to_string(), *what));
        fs::write(dir.path("m.cry"), bytes).unwrap();
        let e = crypto::load_encrypted_with(
            dir.path("m.cry"),
            passphrase,
            &dec_fast(),
            &ParseOptions::default(),
        )
        .expect_err(what);
        from_file.push((e.kind().clone(), e.to_string(), *what));
    }
    for errors in [&in_memory, &from_file] {
        for (kind, text, what) in errors.iter() {
            assert_eq!(
                kind,
                &ErrorKind::WrongPassphraseOrCorrupted,
                "{what}: {text}"
            );
            assert_eq!(text, &errors[0].1, "{what} differs from {}", errors[0].2);
        }
    }
    // The right passphrase on the untouched file still loads.
    assert_eq!(load_bytes(&file, &right, &dec_fast()).model, model);
}

#[test]
fn hostile_headers_are_refused_before_the_kdf_runs() {
    let (_, file) = three_chunk_file();
    let passphrase = Passphrase::new("k");
    let never = DecryptOptions::default().insecure_test_kdf(forbidden_kdf);
    let patch = |at: usize, bytes: &[u8]| {
        let mut f = file.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        f
    };
    let cases = [
        ("iterations u32::MAX", patch(12, &u32::MAX.to_le_bytes())),
        (
            "iterations 10 000 001",
            patch(12, &10_000_001u32.to_le_bytes()),
        ),
        ("iterations 999", patch(12, &999u32.to_le_bytes())),
        ("chunk size 2^31", patch(16, &(1u32 << 31).to_le_bytes())),
        ("chunk size 65", patch(16, &65u32.to_le_bytes())),
        ("KDF id 2", patch(8, &[2])),
        ("reserved byte set", patch(10, &[1])),
        ("version 02", patch(6, b"02")),
    ];
    for (what, f) in cases {
        let k = kind(crypto::decrypt_bytes(&f, &passphrase, &never));
        assert!(
            matches!(k, ErrorKind::UnsupportedEncryption { .. }),
            "{what}: {k:?}"
        );
    }
    // Too short for a single record: a truncation, found without the KDF as well.
    assert_eq!(
        kind(crypto::decrypt_bytes(
            &file[..HEADER + 63],
            &passphrase,
            &never
        )),
        ErrorKind::TruncatedEncryption
    );
    // A chunk size that does not fit the file's length could be a truncation or
    // appended bytes, which only the key tells apart: here the header MAC fails.
    assert_eq!(
        kind(crypto::decrypt_bytes(
            &patch(16, &80u32.to_le_bytes()),
            &passphrase,
            &dec_fast()
        )),
        ErrorKind::WrongPassphraseOrCorrupted
    );
}

#[test]
fn inputs_that_are_not_encrypted_or_of_another_version_are_named() {
    let model = model_with(&[10], 1);
    let plain = model.encode_to_vec().unwrap();
    let p = Passphrase::new("k");
    let never = DecryptOptions::default().insecure_test_kdf(forbidden_kdf);
    assert_eq!(
        kind(crypto::decrypt_bytes(&plain, &p, &never)),
        ErrorKind::NotEncrypted
    );
    assert_eq!(
        kind(crypto::decrypt_bytes(b"", &p, &never)),
        ErrorKind::NotEncrypted
    );
    let k = kind(crypto::load_encrypted_from_bytes(
        &plain,
        &p,
        &never,
        &ParseOptions::default(),
    ));
    assert_eq!(k, ErrorKind::NotEncrypted);
    assert!(matches!(
        kind(crypto::decrypt_bytes(
            b"ONNXCRY3 and more bytes",
            &p,
            &never
        )),
        ErrorKind::UnsupportedEncryption { .. }
    ));
    let e = crypto::decrypt_bytes(&plain, &p, &never).unwrap_err();
    assert!(
        e.to_string().contains("ONNXAE01, ONNXCRY1, ONNXCRY2"),
        "the message names the real magics: {e}"
    );
    assert_eq!(
        kind(crypto::decrypt_bytes(b"ONNXCR", &p, &never)),
        ErrorKind::TruncatedEncryption
    );
    assert_eq!(
        kind(crypto::decrypt_bytes(b"ONNXAE01 short", &p, &never)),
        ErrorKind::TruncatedEncryption
    );
    // ONNXCRY1 with a ciphertext that is not whole blocks.
    let cry = crypto::encrypt_bytes(b"abc", &p, &cry1_fast()).unwrap();
    assert_eq!(
        kind(crypto::decrypt_bytes(
            &cry[..cry.len() - 1],
            &p,
            &dec_fast()
        )),
        ErrorKind::TruncatedEncryption
    );
    assert_eq!(
        kind(crypto::decrypt_bytes(&cry[..40], &p, &dec_fast())),
        ErrorKind::TruncatedEncryption
    );
    assert_eq!(
        EncryptionFormat::detect(&cry).unwrap(),
        EncryptionFormat::OnnxCry1
    );
}

#[test]
fn onnxcry1_is_refused_by_every_entry_unless_unauthenticated_input_is_allowed() {
    let dir = Scratch::new("unauthenticated");
    let p = Passphrase::new("k");
    let model = model_with(&[100], 6);
    let cry = crypto::encrypt_model(&model, &p, &cry1_fast()).unwrap();
    fs::write(dir.path("m.cry"), &cry).unwrap();
    // Refused by default, before the KDF runs, whatever the entry point.
    let default = DecryptOptions::default().insecure_test_kdf(forbidden_kdf);
    assert!(!default.allow_unauthenticated);
    let parse = ParseOptions::default();
    let errors = [
        crypto::decrypt_bytes(&cry, &p, &default).map(|_| ()),
        crypto::decrypt_file(dir.path("m.cry"), dir.path("out"), &p, &default).map(|_| ()),
        crypto::load_encrypted_from_bytes(&cry, &p, &default, &parse).map(|_| ()),
        crypto::load_encrypted_with(dir.path("m.cry"), &p, &default, &parse).map(|_| ()),
        crypto::load_encrypted(dir.path("m.cry"), &p).map(|_| ()),
    ];
    for e in errors {
        let e = e.unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::UnauthenticatedEncryption { format: "ONNXCRY1" }
        );
        let text = e.to_string();
        assert!(
            text.contains("ONNXCRY1")
                && text.contains("integrity")
                && text.contains("allow_unauthenticated"),
            "{text}"
        );
    }
    assert_eq!(
        dir.entries(),
        ["m.cry"],
        "a refused decryption wrote nothing"
    );
    // Allowed on request, by every entry point.
    let allowed = dec_fast();
    assert!(allowed.allow_unauthenticated);
    assert_eq!(
        crypto::load_encrypted_with(dir.path("m.cry"), &p, &allowed, &parse)
            .unwrap()
            .model,
        model
    );
    assert_eq!(
        crypto::decrypt_file(dir.path("m.cry"), dir.path("out"), &p, &allowed).unwrap(),
        EncryptionFormat::OnnxCry1
    );
    // The authenticated formats need no opt-in.
    for options in [ae_fast(64), cry2_fast()] {
        let sealed = crypto::encrypt_bytes(b"abc", &p, &options).unwrap();
        let strict = DecryptOptions::default().insecure_test_kdf(fast_kdf);
        let opened = crypto::decrypt_bytes(&sealed, &p, &strict).unwrap();
        assert_eq!(opened.bytes, b"abc");
        assert!(opened.is_authenticated());
    }
}

// ---------------------------------------------------------------------------------------
// Files: streaming, atomic outputs.

#[test]
fn failed_file_decryptions_leave_no_output_behind() {
    let dir = Scratch::new("failed");
    let p = Passphrase::new("k");
    // Many chunks, so that several windows reach the temporary file before the
    // corrupted last chunk is found.
    let plaintext = Rng(11).bytes(64 * 40 + 5);
    let ae = crypto::encrypt_bytes(&plaintext, &p, &ae_fast(64).num_threads(2)).unwrap();
    let cry = crypto::encrypt_bytes(&Rng(12).bytes(3 << 20), &p, &cry1_fast()).unwrap();
    let mut last_chunk_flipped = ae.clone();
    *last_chunk_flipped.last_mut().unwrap() ^= 1;
    let mut bad_padding = cry.clone();
    let n = bad_padding.len();
    bad_padding[n - 17] ^= 0x80; // the last plaintext byte (the padding) changes
    let cases: Vec<(&str, Vec<u8>, Passphrase)> = vec![
        (
            "last chunk modified",
            last_chunk_flipped,
            Passphrase::new("k"),
        ),
        (
            "truncated",
            ae[..ae.len() - 200].to_vec(),
            Passphrase::new("k"),
        ),
        ("wrong passphrase", ae.clone(), Passphrase::new("K")),
        ("onnxcry1 bad padding", bad_padding, Passphrase::new("k")),
        ("not encrypted", plaintext.clone(), Passphrase::new("k")),
    ];
    for (what, input, passphrase) in cases {
        fs::write(dir.path("in.enc"), &input).unwrap();
        let e = crypto::decrypt_file(
            dir.path("in.enc"),
            dir.path("out"),
            &passphrase,
            &dec_fast().num_threads(2),
        )
        .expect_err(what);
        assert_eq!(e.file(), Some(dir.path("in.enc").as_path()), "{what}: {e}");
        assert_eq!(
            dir.entries(),
            ["in.enc"],
            "{what}: output or temporary file left behind"
        );
        // An existing output is left as it was.
        fs::write(dir.path("out"), b"previous").unwrap();
        assert!(crypto::decrypt_file(
            dir.path("in.enc"),
            dir.path("out"),
            &passphrase,
            &dec_fast()
        )
        .is_err());
        assert_eq!(fs::read(dir.path("out")).unwrap(), b"previous");
        assert_eq!(dir.entries(), ["in.enc", "out"], "{what}");
        fs::remove_file(dir.path("out")).unwrap();
    }
}

#[test]
fn decrypted_files_are_created_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("mode");
    let p = Passphrase::new("k");
    for (name, options) in [
        ("ae", ae_fast(64)),
        ("cry1", cry1_fast()),
        ("cry2", cry2_fast()),
    ] {
        let sealed = crypto::encrypt_bytes(&Rng(3).bytes(5000), &p, &options).unwrap();
        let (src, dst) = (
            dir.path(&format!("{name}.enc")),
            dir.path(&format!("{name}.out")),
        );
        fs::write(&src, &sealed).unwrap();
        crypto::decrypt_file(&src, &dst, &p, &dec_fast()).unwrap();
        let mode = fs::metadata(&dst).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}: {mode:o}");
    }
}

#[test]
fn files_stream_through_many_windows_in_both_formats() {
    let dir = Scratch::new("stream");
    let p = Passphrase::new("k");
    let cases = [
        // 64-byte chunks: windows of 8 (1-2 threads) or 12 chunks, so many windows.
        (
            "ae 1 thread",
            ae_fast(64).num_threads(1),
            Rng(1).bytes(64 * 100 + 17),
        ),
        (
            "ae 3 threads",
            ae_fast(64).num_threads(3),
            Rng(2).bytes(64 * 100),
        ),
        (
            "ae default chunks",
            ae_fast(crypto::DEFAULT_CHUNK_SIZE),
            Rng(3).bytes(5000),
        ),
        // More chunks than the library hands to its thread pool at once (1 024).
        (
            "ae 2 100 chunks",
            ae_fast(64).num_threads(2),
            Rng(5).bytes(64 * 2100 + 1),
        ),
        // ONNXCRY1 windows are 1 MiB.
        (
            "onnxcry1",
            cry1_fast().num_threads(2),
            Rng(4).bytes((5 << 19) + 3),
        ),
    ];
    for (what, options, plaintext) in cases {
        fs::write(dir.path("plain"), &plaintext).unwrap();
        crypto::encrypt_file(dir.path("plain"), dir.path("enc"), &p, &options).unwrap();
        let enc = fs::read(dir.path("enc")).unwrap();
        assert_eq!(
            crypto::decrypt_bytes(&enc, &p, &dec_fast()).unwrap().bytes,
            plaintext,
            "{what}"
        );
        let in_memory = crypto::encrypt_bytes(&plaintext, &p, &options).unwrap();
        assert_eq!(in_memory.len(), enc.len(), "{what}");
        let opened = crypto::decrypt_bytes(&in_memory, &p, &dec_fast()).unwrap();
        assert_eq!(opened.bytes, plaintext, "{what}");
        for threads in [1, 2, 5] {
            let format = crypto::decrypt_file(
                dir.path("enc"),
                dir.path("dec"),
                &p,
                &dec_fast().num_threads(threads),
            )
            .unwrap();
            assert_eq!(format, options.format);
            assert_eq!(
                fs::read(dir.path("dec")).unwrap(),
                plaintext,
                "{what}, {threads} threads"
            );
        }
        assert_eq!(dir.entries(), ["dec", "enc", "plain"], "{what}");
    }
}

#[test]
fn the_writer_and_in_memory_encryption_agree_whatever_the_write_sizes_and_threads() {
    let p = Passphrase::new("k");
    let plaintext = Rng(5).bytes(64 * 37 + 9);
    for options in [ae_fast(64), ae_fast(4096), cry1_fast(), cry2_fast()] {
        let salt_len = match options.format {
            EncryptionFormat::OnnxCry1 | EncryptionFormat::OnnxCry2 => 16,
            _ => 32,
        };
        let options = options.insecure_fixed_salt_and_iv(&vec![3; salt_len], [4; 16]);
        let expected =
            crypto::encrypt_bytes(&plaintext, &p, &options.clone().num_threads(1)).unwrap();
        for (threads, piece) in [(1, 1), (2, 7), (4, 64), (3, 1000), (2, 100_000)] {
            let options = options.clone().num_threads(threads);
            assert_eq!(
                crypto::encrypt_bytes(&plaintext, &p, &options).unwrap(),
                expected
            );
            let mut w = EncryptingWriter::new(Vec::new(), &p, &options).unwrap();
            for part in plaintext.chunks(piece) {
                std::io::Write::write_all(&mut w, part).unwrap();
            }
            assert_eq!(
                w.finish().unwrap(),
                expected,
                "{threads} threads, writes of {piece}"
            );
        }
    }
}

#[test]
fn a_writer_dropped_without_finish_leaves_a_truncated_stream() {
    let p = Passphrase::new("k");
    let mut out = Vec::new();
    {
        let mut w = EncryptingWriter::new(&mut out, &p, &ae_fast(64)).unwrap();
        std::io::Write::write_all(&mut w, &[1u8; 64 * 10]).unwrap();
    }
    assert_eq!(
        kind(crypto::decrypt_bytes(&out, &p, &dec_fast())),
        ErrorKind::TruncatedEncryption
    );
}

#[test]
fn a_failing_inner_writer_fails_the_encrypting_writer_for_good() {
    /// Accepts `left` bytes, then fails every write.
    struct Failing {
        left: usize,
    }
    impl std::io::Write for Failing {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = data.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let p = Passphrase::new("k");
    let mut w = EncryptingWriter::new(Failing { left: 1000 }, &p, &ae_fast(64)).unwrap();
    let data = vec![7u8; 64 * 100];
    let e = std::io::Write::write_all(&mut w, &data).unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
    assert!(std::io::Write::write_all(&mut w, b"more").is_err());
    assert!(w.finish().is_err());
}

// ---------------------------------------------------------------------------------------
// Models: round trips.

#[test]
fn models_round_trip_through_bytes_and_files_in_both_formats() {
    let dir = Scratch::new("models");
    let p = Passphrase::new("model key ✓");
    let model = model_with(&[0, 1, 1023, 1024, 5000, 70_000], 9);
    for (options, authenticated) in [
        (ae_fast(1024), true),
        (cry1_fast(), false),
        (cry2_fast(), true),
    ] {
        let bytes = crypto::encrypt_model(&model, &p, &options).unwrap();
        assert_eq!(&bytes[..8], options.format.magic());
        let opened = load_bytes(&bytes, &p, &dec_fast());
        assert_eq!(
            (opened.is_authenticated(), opened.model),
            (authenticated, model.clone())
        );
        assert_eq!(opened.format, options.format);

        crypto::save_encrypted(&model, dir.path("m.enc"), &p, &options).unwrap();
        let opened = crypto::load_encrypted_with(
            dir.path("m.enc"),
            &p,
            &dec_fast(),
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            (opened.is_authenticated(), opened.model),
            (authenticated, model.clone())
        );
        assert_eq!(dir.entries(), ["m.enc"]);
    }
    // The one-argument loader, with the real PBKDF2.
    let options = EncryptOptions::default().iterations(crypto::MIN_ITERATIONS);
    crypto::save_encrypted(&model, dir.path("real.enc"), &p, &options).unwrap();
    assert_eq!(
        crypto::load_encrypted(dir.path("real.enc"), &p)
            .unwrap()
            .model,
        model
    );
    let e = crypto::load_encrypted(dir.path("real.enc"), &Passphrase::new("nope")).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::WrongPassphraseOrCorrupted);
    assert_eq!(e.file(), Some(dir.path("real.enc").as_path()));
}

/// Whether `needle` occurs anywhere in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn encrypting_a_model_with_external_data_encrypts_its_weights_into_one_file() {
    use onnx_light::io::external::ExternalDataOptions;
    use onnx_light::io::{self, SerializeOptions};
    let dir = Scratch::new("external");
    let p = Passphrase::new("k");
    let model = model_with(&[5000, 3000, 10], 12);
    let weights: Vec<Vec<u8>> = model.tensors()[..2]
        .iter()
        .map(|t| t.raw_data.as_ref().unwrap().to_vec())
        .collect();
    for (name, options) in [
        ("ae", ae_fast(64)),
        ("cry1", cry1_fast()),
        ("cry2", cry2_fast()),
    ] {
        let external =
            SerializeOptions::default().external_data(ExternalDataOptions::new("weights.bin"));
        io::save(&model, dir.path("m.onnx"), &external).unwrap();
        let data = fs::read(dir.path("weights.bin")).unwrap();
        assert!(contains(&data, &weights[0][..64]) && contains(&data, &weights[1][..64]));
        assert!(!contains(
            &fs::read(dir.path("m.onnx")).unwrap(),
            &weights[0][..64]
        ));

        crypto::encrypt_file(dir.path("m.onnx"), dir.path("m.enc"), &p, &options).unwrap();
        let sealed = fs::read(dir.path("m.enc")).unwrap();
        assert!(
            sealed.len() > 8000,
            "{name}: the weights are in the encrypted file"
        );
        for w in &weights {
            for window in w.chunks(32) {
                assert!(!contains(&sealed, window), "{name}: plaintext weight bytes");
            }
        }
        // Nothing but the encrypted file is needed.
        fs::remove_file(dir.path("weights.bin")).unwrap();
        fs::remove_file(dir.path("m.onnx")).unwrap();
        let opened = crypto::load_encrypted_with(
            dir.path("m.enc"),
            &p,
            &dec_fast(),
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(opened.model, model, "{name}");
        crypto::decrypt_file(dir.path("m.enc"), dir.path("out.onnx"), &p, &dec_fast()).unwrap();
        assert_eq!(io::load(dir.path("out.onnx")).unwrap(), model, "{name}");
        assert_eq!(dir.entries(), ["m.enc", "out.onnx"], "{name}");
        fs::remove_file(dir.path("m.enc")).unwrap();
        fs::remove_file(dir.path("out.onnx")).unwrap();
    }
}

#[test]
fn a_model_still_referring_to_external_files_is_refused_not_half_encrypted() {
    use onnx_light::io::external::ExternalDataOptions;
    use onnx_light::io::{self, SerializeOptions};
    let dir = Scratch::new("external-refused");
    let p = Passphrase::new("k");
    let model = model_with(&[5000, 10], 13);
    let external =
        SerializeOptions::default().external_data(ExternalDataOptions::new("weights.bin"));
    io::save(&model, dir.path("m.onnx"), &external).unwrap();
    let references = io::load_with(
        dir.path("m.onnx"),
        &ParseOptions::default().load_external_data(false),
    )
    .unwrap();
    let e = crypto::encrypt_model(&references, &p, &ae_fast(64)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::IncompleteModel { .. }), "{e}");
    assert!(e.to_string().contains("weights.bin"), "{e}");
    assert!(e.to_string().contains("w0"), "names the tensor: {e}");
    let e = crypto::save_encrypted(&references, dir.path("m.enc"), &p, &ae_fast(64)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::IncompleteModel { .. }), "{e}");
    assert_eq!(dir.entries(), ["m.onnx", "weights.bin"]);
    // A missing data file fails encrypt_file instead of leaving the weights behind.
    fs::remove_file(dir.path("weights.bin")).unwrap();
    assert!(crypto::encrypt_file(dir.path("m.onnx"), dir.path("m.enc"), &p, &ae_fast(64)).is_err());
    assert_eq!(dir.entries(), ["m.onnx"]);
}

#[test]
fn the_empty_model_round_trips_in_both_formats() {
    let p = Passphrase::new("k");
    let empty = Model::default();
    assert!(empty.encode_to_vec().unwrap().is_empty());
    for options in [ae_fast(64), cry1_fast(), cry2_fast()] {
        let bytes = crypto::encrypt_model(&empty, &p, &options).unwrap();
        let expected_len = match options.format {
            EncryptionFormat::OnnxCry1 => 40 + 16,
            EncryptionFormat::OnnxCry2 => 52,
            _ => HEADER + 16 + 16 + 32,
        };
        assert_eq!(bytes.len(), expected_len);
        assert_eq!(load_bytes(&bytes, &p, &dec_fast()).model, empty);
        assert!(crypto::decrypt_bytes(&bytes, &p, &dec_fast())
            .unwrap()
            .bytes
            .is_empty());
    }
}

#[test]
fn large_initializers_round_trip_and_share_the_decryption_buffer() {
    let dir = Scratch::new("large");
    let p = Passphrase::new("k");
    let model = model_with(&[1 << 20, (1 << 20) + 5, 300_000, 10], 4);
    for options in [
        ae_fast(crypto::DEFAULT_CHUNK_SIZE).num_threads(2),
        ae_fast(64 << 10),
        cry1_fast(),
    ] {
        crypto::save_encrypted(&model, dir.path("big.enc"), &p, &options).unwrap();
        for threads in [1, 2] {
            let opened = crypto::load_encrypted_with(
                dir.path("big.enc"),
                &p,
                &dec_fast().num_threads(threads),
                &ParseOptions::default(),
            )
            .unwrap();
            assert_eq!(opened.model, model);
            // No second plaintext copy: the large payloads are slices of the buffer
            // the file was decrypted into.
            let tensors = opened.model.tensors();
            assert!(tensors[..3]
                .iter()
                .all(|t| matches!(t.raw_data, Some(Bytes::Shared(_)))));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Options and secrets.

#[test]
fn invalid_options_are_refused_with_their_name() {
    let p = Passphrase::new("k");
    let invalid = |options: EncryptOptions, passphrase: &Passphrase| match kind(
        crypto::encrypt_bytes(b"x", passphrase, &options),
    ) {
        ErrorKind::InvalidOption { name, .. } => name,
        other => panic!("{other:?}"),
    };
    let ae = EncryptOptions::default();
    assert_eq!(invalid(ae.clone().iterations(999), &p), "iterations");
    assert_eq!(invalid(ae.clone().iterations(10_000_001), &p), "iterations");
    assert_eq!(invalid(ae.clone().chunk_size(48), &p), "chunk_size");
    assert_eq!(invalid(ae.clone().chunk_size(100), &p), "chunk_size");
    assert_eq!(
        invalid(ae.clone().chunk_size((64 << 20) + 16), &p),
        "chunk_size"
    );
    assert_eq!(
        invalid(ae.clone().insecure_fixed_salt_and_iv(&[0; 16], [0; 16]), &p),
        "salt"
    );
    assert_eq!(
        invalid(ae.clone().iterations(1000), &Passphrase::new("")),
        "passphrase"
    );
    let cry = EncryptOptions::default().format(EncryptionFormat::OnnxCry1);
    assert_eq!(invalid(cry.clone().iterations(600_000), &p), "iterations");
    assert!(cry.clone().iterations(100_000).validate().is_ok());
    let e = crypto::load_encrypted_from_bytes(
        b"ONNXAE01",
        &p,
        &DecryptOptions::default(),
        &ParseOptions::default().structure_only(true),
    );
    assert!(matches!(
        kind(e),
        ErrorKind::InvalidOption {
            name: "structure_only",
            ..
        }
    ));
}

#[test]
fn passphrases_never_appear_in_debug_output_or_errors() {
    let secret = "hunter2-ünïcödé";
    let p = Passphrase::new(secret);
    let shown = format!("{p:?} {p:#?} {:?}", EncryptOptions::default());
    assert!(!shown.contains(secret) && shown.contains("redacted"));
    let file = crypto::encrypt_bytes(b"x", &p, &ae_fast(64)).unwrap();
    let dir = Scratch::new("secret");
    fs::write(dir.path("f"), &file[..file.len() - 1]).unwrap();
    let errors = [
        crypto::decrypt_bytes(&file, &Passphrase::new(format!("{secret}!")), &dec_fast())
            .unwrap_err(),
        crypto::decrypt_file(dir.path("f"), dir.path("g"), &p, &dec_fast()).unwrap_err(),
        crypto::encrypt_bytes(b"x", &p, &EncryptOptions::default().iterations(5)).unwrap_err(),
    ];
    for e in errors {
        let text = format!("{e} {e:?}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}

#[test]
fn decryption_results_say_whether_they_are_authenticated() {
    let p = Passphrase::new("k");
    let model = model_with(&[100], 2);
    let ae = crypto::encrypt_model(&model, &p, &ae_fast(64)).unwrap();
    let cry = crypto::encrypt_model(&model, &p, &cry1_fast()).unwrap();
    assert!(load_bytes(&ae, &p, &dec_fast()).is_authenticated());
    assert!(!load_bytes(&cry, &p, &dec_fast()).is_authenticated());
    let cry2 = crypto::encrypt_model(&model, &p, &cry2_fast()).unwrap();
    assert!(load_bytes(&cry2, &p, &dec_fast()).is_authenticated());
    assert!(
        EncryptionFormat::OnnxAe01.is_authenticated()
            && !EncryptionFormat::OnnxCry1.is_authenticated()
            && EncryptionFormat::OnnxCry2.is_authenticated()
    );
    assert_eq!(EncryptionFormat::default(), EncryptionFormat::OnnxAe01);
    // ONNXCRY1's weakness, shown: a flipped ciphertext bit changes the plaintext
    // without any error (which is why its results are flagged).
    let plaintext = Rng(9).bytes(100);
    let mut f = crypto::encrypt_bytes(&plaintext, &p, &cry1_fast()).unwrap();
    f[40 + 16] ^= 1; // second ciphertext block: flips bit 0 of plaintext byte 32
    let d = crypto::decrypt_bytes(&f, &p, &dec_fast()).unwrap();
    assert!(!d.is_authenticated());
    assert_ne!(d.bytes, plaintext);
    assert_eq!(d.bytes[32], plaintext[32] ^ 1);
}

#[test]
fn an_encrypted_model_given_to_a_load_is_named_as_one_in_every_load_path() {
    let dir = Scratch::new("encrypted-load");
    let model = model_with(&[4096, 16], 7);
    let passphrase = Passphrase::new("pw");
    for (options, magic) in [
        (ae_fast(1 << 16), "ONNXAE01"),
        (cry1_fast(), "ONNXCRY1"),
        (cry2_fast(), "ONNXCRY2"),
    ] {
        let file = crypto::encrypt_model(&model, &passphrase, &options).unwrap();
        let path = dir.path(&format!("{magic}.onnx"));
        fs::write(&path, &file).unwrap();
        let expected = ErrorKind::EncryptedInput {
            format: magic.to_string(),
        };
        // Files, in each mode; bytes, slices, shared owners and readers.
        for load in [
            Load::With(ParseOptions::default()),
            Load::With(ParseOptions::default().mode(LoadMode::StructureOnly)),
            Load::Mapped(ParseOptions::default()),
        ] {
            let e = load.load(&path).unwrap_err();
            assert_eq!(e.kind(), &expected, "{magic} {load:?}");
            assert_eq!(e.file(), Some(path.as_path()));
            assert!(e.to_string().contains("encrypted model"), "{e}");
        }
        let plain = ParseOptions::default();
        assert_eq!(kind(io::load_from_bytes(&file, &plain)), expected);
        assert_eq!(kind(io::load_from_slice(&file, &plain)), expected);
        let owner: onnx_light::ByteOwner = std::sync::Arc::new(file.clone());
        assert_eq!(kind(io::load_from_owner(owner, &plain)), expected);
        assert_eq!(kind(io::load_from_reader(&file[..], &plain)), expected);
        // And the passphrase opens it, as the message says.
        let opened = load_bytes(&file, &passphrase, &dec_fast());
        assert_eq!(opened.model, model);
    }
    // Another version of a format is named by its bytes; a plain model that merely
    // fails to decode keeps its wire-format error.
    let e = io::load_from_bytes(b"ONNXAE09rest", &ParseOptions::default()).unwrap_err();
    assert!(e.to_string().contains("(ONNXAE09)"), "{e}");
    assert!(matches!(
        io::load_from_bytes(b"O\x01XXXXXX", &ParseOptions::default())
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidWireType(7)
    ));
}
