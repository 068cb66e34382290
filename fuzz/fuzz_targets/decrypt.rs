//! `cargo fuzz run --features test-hooks decrypt`: see `onnx_light_tests::fuzz_checks::decryption_is_consistent`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::decryption_is_consistent(data);
});
