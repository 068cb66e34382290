//! `cargo fuzz run reencode`: see `onnx_light_tests::fuzz_checks::reencode_is_stable`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::reencode_is_stable(data);
});
