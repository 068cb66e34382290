//! What every build of the crate must do, whatever its features: CI runs this file with
//! `--no-default-features` and with each feature alone. Without `parallel` the thread
//! counts are still validated and the work runs on the calling thread; without `mmap`
//! mapped loads read the file into one shared buffer; the results are the same bytes and
//! the same models either way.

use std::path::PathBuf;

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, LoadMode, ParseOptions, SerializeOptions, MAX_THREADS};
use onnx_light::onnx::*;
use onnx_light::ErrorKind;

/// [`io::load_mapped`] of a file these tests wrote into their own directory.
#[allow(unsafe_code)]
fn load_mapped(path: &std::path::Path, options: &ParseOptions) -> onnx_light::Result<Model> {
    // SAFETY: every file mapped here was written by the calling test into a directory of
    // its own (`Dir`), and nothing truncates or rewrites it while the model lives.
    unsafe { io::load_mapped(path, options) }
}

/// A fresh directory under the target directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("every-build-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A model with large and small weights, a Constant node and a long node list (long
/// enough for the parallel decoder to split it where it can).
fn model() -> Model {
    let mut g = GraphProto::named("every-build");
    for i in 0..8 {
        let values: Vec<f32> = (0..50_000).map(|v| (v * (i + 1)) as f32).collect();
        g.initializer.push(
            TensorProto::from_slice(format!("w{i}"), [values.len() as i64], &values).unwrap(),
        );
    }
    g.initializer
        .push(TensorProto::from_slice("small", [2], &[1.0f32, 2.0]).unwrap());
    for i in 0..5_000 {
        g.node.push(
            NodeProto::new("Relu", [format!("x{i}")], [format!("x{}", i + 1)])
                .with_name(format!("relu{i}")),
        );
    }
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

#[test]
fn saves_and_loads_give_the_same_bytes_and_models_in_every_mode() {
    let dir = Dir::new("modes");
    let m = model();
    let one = io::save_to_vec(&m, &SerializeOptions::default().num_threads(1)).unwrap();
    let four = io::save_to_vec(&m, &SerializeOptions::default().num_threads(4)).unwrap();
    assert_eq!(one, four);
    let path = dir.0.join("m.onnx");
    io::save(&m, &path, &SerializeOptions::default().num_threads(4)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), one);

    for mode in [LoadMode::Owned, LoadMode::StructureOnly] {
        let mut loaded =
            io::load_with(&path, &ParseOptions::default().mode(mode).num_threads(4)).unwrap();
        if mode == LoadMode::StructureOnly {
            io::materialize_lazy_data(&mut loaded).unwrap();
        }
        assert_eq!(loaded, m, "{mode:?}");
    }
    let mapped = load_mapped(&path, &ParseOptions::default().num_threads(4)).unwrap();
    assert_eq!(mapped, m);
    let from_bytes = io::load_from_bytes(&one, &ParseOptions::default().num_threads(2)).unwrap();
    assert_eq!(from_bytes, m);
}

#[test]
fn external_data_round_trips_split_and_aligned() {
    let dir = Dir::new("external");
    let m = model();
    let path = dir.0.join("m.onnx");
    let external = ExternalDataOptions::new("m.data")
        .alignment(4096)
        .max_file_size(500_000);
    io::save(
        &m,
        &path,
        &SerializeOptions::default()
            .num_threads(3)
            .external_data(external),
    )
    .unwrap();
    assert!(dir.0.join("m.data.1").exists(), "the data was not split");
    assert_eq!(io::load(&path).unwrap(), m);
    assert_eq!(load_mapped(&path, &ParseOptions::default()).unwrap(), m);
}

#[test]
fn thread_counts_are_validated_in_every_build() {
    let m = model();
    let err = io::save_to_vec(
        &m,
        &SerializeOptions::default().num_threads(MAX_THREADS + 1),
    )
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::InvalidOption { .. }),
        "{err}"
    );
}

#[cfg(feature = "crypto")]
#[test]
fn encrypted_models_round_trip() {
    use onnx_light::crypto::{self, EncryptOptions, Passphrase};
    let dir = Dir::new("crypto");
    let path = dir.0.join("m.onnxc");
    let m = model();
    let secret = Passphrase::new("correct horse");
    crypto::save_encrypted(
        &m,
        &path,
        &secret,
        &EncryptOptions::default().iterations(1000).num_threads(3),
    )
    .unwrap();
    let back = crypto::load_encrypted(&path, &secret).unwrap();
    assert!(back.is_authenticated());
    assert_eq!(back.model, m);
    assert!(crypto::load_encrypted(&path, &Passphrase::new("wrong")).is_err());
}
