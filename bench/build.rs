//! Generates model-bench's prost peer from the project's own schema, `schema/onnx.proto`:
//! protox compiles it to descriptors (pure Rust, no `protoc` binary) and prost-build turns
//! them into Rust types, twice: `bytes` fields as `Vec<u8>` (prost's default, a copy per
//! payload) and as `bytes::Bytes` (prost's zero-copy option).

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let schema_dir = manifest.join("..").join("schema");
    let proto = schema_dir.join("onnx.proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    println!("cargo:rerun-if-changed=build.rs");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let fds = || protox::compile([&proto], [&schema_dir]).expect("schema/onnx.proto compiles");

    for (dir, bytes) in [("prost_vec", false), ("prost_bytes", true)] {
        let dir = out.join(dir);
        std::fs::create_dir_all(&dir).expect("create the output directory");
        let mut config = prost_build::Config::new();
        config.out_dir(&dir);
        if bytes {
            config.bytes(["."]);
        }
        config
            .compile_fds(fds())
            .expect("prost-build generates the onnx types");
    }
}
