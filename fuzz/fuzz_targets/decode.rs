//! `cargo fuzz run decode`: see `onnx_light_tests::fuzz_checks::decode_every_mode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    onnx_light_tests::fuzz_checks::decode_every_mode(data);
});
