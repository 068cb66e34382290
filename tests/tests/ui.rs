//! Compile tests for the derives and the compile-time guarantees of the API (mapping a
//! file needs `unsafe`): `ui/pass` must build and run, `ui/fail` must fail to
//! build with exactly the diagnostics in the `.stderr` file next to each case.
//!
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p
//! onnx-light-tests --test ui`, then review every changed `.stderr`: each error must
//! point at the offending token and say what to write instead.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
