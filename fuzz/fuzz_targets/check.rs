//! `cargo fuzz run check`: see `onnx_light_tests::fuzz_checks::checker_gives_a_verdict`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::checker_gives_a_verdict(data);
});
