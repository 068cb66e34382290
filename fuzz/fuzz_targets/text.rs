//! `cargo fuzz run text`: see `onnx_light_tests::fuzz_checks::text_format_is_consistent`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::text_format_is_consistent(data);
});
