//! Files that are not ONNX models, given to every loader: each is named for what it is
//! (empty, an image, an archive, safetensors, text, JSON), never reported as a protobuf
//! rule it breaks, and an empty file is never a model.

use onnx_light::io::{self, ParseOptions};
use onnx_light::ErrorKind;
use onnx_light_tests::scratch::Scratch;

fn safetensors() -> Vec<u8> {
    let header = br#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&1.0f32.to_le_bytes());
    bytes
}

fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        ("empty.onnx", Vec::new(), "empty"),
        (
            "image.onnx",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10".to_vec(),
            "PNG",
        ),
        (
            "photo.onnx",
            b"\xff\xd8\xff\xe0\0\x10JFIF\0".to_vec(),
            "JPEG",
        ),
        (
            "model.pt",
            b"PK\x03\x04\x14\0\0\0\x08\0archive/data.pkl".to_vec(),
            "ZIP",
        ),
        ("model.safetensors", safetensors(), "safetensors"),
        (
            "README.md",
            b"# A model\n\nSee the docs for details.\n".to_vec(),
            "text",
        ),
        (
            "model.json",
            b"{\n  \"irVersion\": \"8\",\n  \"graph\": {}\n}\n".to_vec(),
            "JSON",
        ),
    ]
}

fn assert_named(err: onnx_light::Error, what: &str, case: &str) {
    assert!(
        matches!(err.kind(), ErrorKind::NotAModel { .. }),
        "{case}: {err}"
    );
    let message = err.to_string();
    assert!(message.contains("not an ONNX model"), "{case}: {message}");
    assert!(message.contains(what), "{case}: {message}");
}

#[test]
fn files_that_are_not_models_are_named_by_every_loader() {
    let dir = Scratch::new("not_a_model");
    for (name, bytes, what) in cases() {
        let path = dir.path(name);
        std::fs::write(&path, &bytes).unwrap();
        assert_named(io::load(&path).unwrap_err(), what, name);
        let structure = ParseOptions::default().structure_only(true);
        assert_named(io::load_with(&path, &structure).unwrap_err(), what, name);
        let options = ParseOptions::default();
        assert_named(
            io::load_from_bytes(&bytes, &options).unwrap_err(),
            what,
            name,
        );
        assert_named(
            io::load_from_slice(&bytes, &options).unwrap_err(),
            what,
            name,
        );
    }
}
