//! `cargo fuzz run parallel_load`: see `onnx_light_tests::fuzz_checks::parallel_load_agrees`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::parallel_load_agrees(data);
});
