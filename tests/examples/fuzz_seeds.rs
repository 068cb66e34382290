//! Writes the seed corpora of the fuzz targets (see `fuzz/README.md`):
//!
//! ```text
//! cargo run -p onnx-light-tests --example fuzz_seeds -- [OUT_DIR] [CORPUS_NODE_DIR]
//! ```
//!
//! `OUT_DIR` defaults to `fuzz/corpus`; `CORPUS_NODE_DIR` to `target/onnx-corpus/node`,
//! the official `onnx` 1.22.0 backend test models that `cargo test --test onnx_corpus`
//! fetches. Every target gets the real models (and, for `decode` and `reencode`, their
//! `.pb` tensors); `external` also gets generated models whose external-data metadata
//! points inside, outside and around the fixed tree of
//! `onnx_light_tests::fuzz_checks::ExternalTree`; `decrypt` gets real models encrypted in
//! both formats with the fuzz passphrase and the cheap test KDF.

use std::fs;
use std::path::{Path, PathBuf};

use onnx_light::crypto::{encrypt_bytes, EncryptionFormat, Passphrase};
use onnx_light_tests::fuzz_checks::{encrypt_options, external_seeds, PASSPHRASE};

fn real_models(node_dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(node_dir) else {
        eprintln!(
            "no corpus at {} (run `cargo test --test onnx_corpus` to fetch it); \
             writing the generated seeds only",
            node_dir.display()
        );
        return found;
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for dir in dirs {
        let model = dir.join("model.onnx");
        if let Ok(bytes) = fs::read(&model) {
            found.push((model, bytes));
        }
        if let Ok(pb) = fs::read(dir.join("test_data_set_0/input_0.pb")) {
            found.push((dir.join("input_0.pb"), pb));
        }
    }
    found
}

fn write_all(dir: &Path, seeds: impl IntoIterator<Item = Vec<u8>>) -> usize {
    fs::create_dir_all(dir).expect("create the corpus directory");
    let mut n = 0;
    for (i, seed) in seeds.into_iter().enumerate() {
        fs::write(dir.join(format!("seed-{i:05}")), seed).expect("write a seed");
        n += 1;
    }
    n
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = args
        .next()
        .map_or_else(|| root.join("fuzz/corpus"), PathBuf::from);
    let node_dir = args
        .next()
        .map_or_else(|| root.join("target/onnx-corpus/node"), PathBuf::from);
    let real = real_models(&node_dir);
    let models: Vec<Vec<u8>> = real
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "onnx"))
        .map(|(_, b)| b.clone())
        .collect();
    let everything: Vec<Vec<u8>> = real.iter().map(|(_, b)| b.clone()).collect();

    let mut counts = Vec::new();
    for target in ["decode", "reencode"] {
        counts.push((target, write_all(&out.join(target), everything.clone())));
    }
    counts.push((
        "parallel_load",
        write_all(&out.join("parallel_load"), models.clone()),
    ));
    let external = external_seeds()
        .into_iter()
        .chain(models.iter().take(200).cloned());
    counts.push(("external", write_all(&out.join("external"), external)));
    let passphrase = Passphrase::new(PASSPHRASE);
    let encrypted = models.iter().take(100).flat_map(|m| {
        [EncryptionFormat::OnnxAe01, EncryptionFormat::OnnxCry1]
            .map(|f| encrypt_bytes(m, &passphrase, &encrypt_options(f)).expect("encrypt a seed"))
    });
    counts.push(("decrypt", write_all(&out.join("decrypt"), encrypted)));
    for (target, n) in counts {
        println!("{target}: {n} seeds in {}", out.join(target).display());
    }
}
