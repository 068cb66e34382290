//! `cargo fuzz run external`: see `onnx_light_tests::fuzz_checks::external_resolution_is_confined`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::external_resolution_is_confined(data);
});
