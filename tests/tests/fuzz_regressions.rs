//! Replays every input the fuzz targets (`fuzz/`) ever reported, kept in
//! `fuzz/regressions/<target>/`, through the same checks the targets run
//! (`onnx_light_tests::fuzz_checks`), plus the generated seeds that need no download.

use std::fs;

use onnx_light::crypto::{encrypt_bytes, EncryptionFormat, Passphrase};
use onnx_light_tests::fuzz_checks::{self, encrypt_options, regressions_dir, PASSPHRASE};

type Check = fn(&[u8]);

const TARGETS: [(&str, Check); 7] = [
    ("decode", fuzz_checks::decode_every_mode),
    ("reencode", fuzz_checks::reencode_is_stable),
    ("external", fuzz_checks::external_resolution_is_confined),
    ("decrypt", fuzz_checks::decryption_is_consistent),
    ("parallel_load", fuzz_checks::parallel_load_agrees),
    ("check", fuzz_checks::checker_gives_a_verdict),
    ("text", fuzz_checks::text_format_is_consistent),
];

#[test]
fn every_recorded_fuzz_finding_stays_fixed() {
    let mut replayed = 0;
    for (target, check) in TARGETS {
        let dir = regressions_dir(target);
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("read_dir entry").path())
            .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"))
            .collect();
        files.sort();
        for file in files {
            let data = fs::read(&file).expect("read a regression input");
            eprintln!("{target}: {}", file.display());
            // Every check runs on every input: a finding of one target is a malformed
            // input for all of them.
            for (_, any) in TARGETS {
                any(&data);
            }
            check(&data);
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} recorded inputs");
}

#[test]
fn external_seeds_pass_the_confinement_check() {
    for seed in fuzz_checks::external_seeds() {
        fuzz_checks::external_resolution_is_confined(&seed);
        fuzz_checks::parallel_load_agrees(&seed);
        fuzz_checks::decode_every_mode(&seed);
        fuzz_checks::reencode_is_stable(&seed);
        fuzz_checks::checker_gives_a_verdict(&seed);
        fuzz_checks::text_format_is_consistent(&seed);
    }
}

#[test]
fn encrypted_seeds_pass_the_decryption_check() {
    let passphrase = Passphrase::new(PASSPHRASE);
    for seed in fuzz_checks::external_seeds().iter().take(4) {
        for format in [
            EncryptionFormat::OnnxAe01,
            EncryptionFormat::OnnxCry1,
            EncryptionFormat::OnnxCry2,
        ] {
            let sealed = encrypt_bytes(seed, &passphrase, &encrypt_options(format)).unwrap();
            fuzz_checks::decryption_is_consistent(&sealed);
            // A flipped byte anywhere: still consistent (and never a panic).
            for at in [0, 9, sealed.len() / 2, sealed.len() - 1] {
                let mut bad = sealed.clone();
                bad[at] ^= 0x40;
                fuzz_checks::decryption_is_consistent(&bad);
            }
        }
    }
}
