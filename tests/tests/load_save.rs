//! Loading and saving: every load mode against every save path, lifetimes of shared
//! payloads, atomic saves under injected faults, and parallel output identical to
//! sequential output.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use onnx_light::io::{
    self, ExternalDataOptions, ParseOptions, SaveHook, SaveStep, SerializeOptions,
};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ByteOwner, ErrorKind, Limit};
use onnx_light_tests::mapped::{load_mapped, Load};
use onnx_light_tests::scratch::Scratch;

/// A model with payloads around every threshold, typed data, strings and a subgraph.
fn model(seed: u8) -> Model {
    let mut g = GraphProto::named(format!("g{seed}"));
    for (i, n) in [
        0usize, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 100_000, 3_000_001,
    ]
    .into_iter()
    .enumerate()
    {
        let data: Vec<u8> = (0..n)
            .map(|j| (j as u8).wrapping_mul(31).wrapping_add(seed + i as u8))
            .collect();
        g.initializer.push(TensorProto::from_raw(
            format!("t{i}"),
            DataType::Uint8,
            [n as i64],
            data,
        ));
    }
    g.initializer.push(TensorProto {
        name: Some("floats".into()),
        data_type: Some(DataType::Float.to_i32()),
        dims: vec![3],
        float_data: vec![1.0, -2.5, 3.25],
        ..TensorProto::default()
    });
    g.initializer.push(TensorProto {
        name: Some("strings".into()),
        data_type: Some(DataType::String.to_i32()),
        dims: vec![2],
        string_data: vec![Bytes::from(b"ab".to_vec()), Bytes::from(vec![0xffu8; 2000])],
        ..TensorProto::default()
    });
    let mut sub = GraphProto::named("then");
    sub.initializer.push(TensorProto::from_raw(
        "sub",
        DataType::Uint8,
        [5000],
        vec![seed; 5000],
    ));
    g.node.push(
        NodeProto::new("If", ["cond"], ["y"])
            .with_attribute(AttributeProto::graph("then_branch", sub))
            .with_attribute(AttributeProto::tensor(
                "value",
                TensorProto::from_raw("const", DataType::Uint8, [2048], vec![7u8; 2048]),
            )),
    );
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.producer_name = Some("load_save test".into());
    m
}

fn parse_modes() -> Vec<(&'static str, Load)> {
    vec![
        ("owned", Load::With(ParseOptions::default())),
        (
            "owned 1 thread",
            Load::With(ParseOptions::default().num_threads(1)),
        ),
        (
            "owned aligned 4096",
            Load::With(ParseOptions::default().alignment(4096)),
        ),
        ("mapped", Load::Mapped(ParseOptions::default())),
        (
            "threshold 1",
            Load::With(ParseOptions::default().raw_data_threshold(1)),
        ),
    ]
}

#[test]
fn every_load_mode_round_trips_every_save_path() {
    let dir = Scratch::new("modes");
    let original = model(1);
    let expected = original.encode_to_vec().unwrap();
    for threads in [1, 2] {
        let options = SerializeOptions::default().num_threads(threads);
        // Three save paths, one set of bytes.
        let path = dir.path(&format!("m{threads}.onnx"));
        io::save(&original, &path, &options).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            expected,
            "save to path, {threads} threads"
        );
        assert_eq!(io::save_to_vec(&original, &options).unwrap(), expected);
        let mut w = Vec::new();
        assert_eq!(
            io::save_to_writer(&original, &mut w, &options).unwrap(),
            expected.len() as u64
        );
        assert_eq!(w, expected);

        for (name, popts) in parse_modes() {
            let m = popts.load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m, original, "{name}");
            assert_eq!(
                io::save_to_vec(&m, &options).unwrap(),
                expected,
                "{name} re-save"
            );
        }
        let in_memory = ParseOptions::default();
        assert_eq!(
            io::load_from_slice(&expected, &in_memory).unwrap(),
            original
        );
        assert_eq!(
            io::load_from_bytes(&expected, &in_memory).unwrap(),
            original
        );
        assert_eq!(
            io::load_from_bytes(&expected, &in_memory.clone().alignment(64)).unwrap(),
            original
        );
        let owner: ByteOwner = Arc::new(expected.clone());
        assert_eq!(io::load_from_owner(owner, &in_memory).unwrap(), original);
        assert_eq!(
            io::load_from_reader(&expected[..], &in_memory).unwrap(),
            original
        );
    }
}

#[test]
fn payloads_are_shared_owned_or_aligned_as_each_mode_promises() {
    let dir = Scratch::new("states");
    let path = dir.path("m.onnx");
    io::save(&model(2), &path, &SerializeOptions::default()).unwrap();
    let big = |m: &Model| {
        m.tensors()
            .into_iter()
            .find(|t| t.name() == "t10")
            .unwrap()
            .raw_data
            .clone()
            .unwrap()
    };

    let owned = io::load(&path).unwrap();
    assert!(big(&owned).is_shared(), "owned loads share one read buffer");
    let aligned = io::load_with(&path, &ParseOptions::default().alignment(4096)).unwrap();
    for t in aligned.tensors() {
        if let Some(raw) = &t.raw_data {
            if raw.len() >= 1024 {
                assert_eq!(raw.as_ptr() as usize % 4096, 0, "{}", t.name());
            }
        }
    }
    let mapped = load_mapped(&path, &ParseOptions::default()).unwrap();
    assert!(big(&mapped).is_shared());
    // Small payloads are copied in every mode.
    let small = mapped
        .tensors()
        .into_iter()
        .find(|t| t.name() == "t5")
        .unwrap();
    assert!(small.raw_data.as_ref().unwrap().is_owned());
}

#[test]
fn a_shared_payload_outlives_the_loader_the_file_and_the_callers_handles() {
    let dir = Scratch::new("lifetimes");
    let path = dir.path("m.onnx");
    io::save(&model(3), &path, &SerializeOptions::default()).unwrap();
    let payload = {
        let m = load_mapped(&path, &ParseOptions::default()).unwrap();
        m.graph.as_ref().unwrap().initializer[10]
            .raw_data
            .clone()
            .unwrap()
    };
    std::fs::remove_file(&path).unwrap();
    assert_eq!(payload.len(), 3_000_001);
    let expected = model(3).graph.unwrap().initializer[10]
        .raw_data
        .clone()
        .unwrap();
    assert_eq!(payload, expected);

    // And with an owner the caller held and dropped.
    let bytes = model(3).encode_to_vec().unwrap();
    let owner: Arc<Vec<u8>> = Arc::new(bytes);
    let m = io::load_from_owner(owner.clone(), &ParseOptions::default()).unwrap();
    drop(owner);
    assert_eq!(m, model(3));
}

#[test]
fn mutating_a_shared_payload_copies_it_and_leaves_other_holders_unchanged() {
    let dir = Scratch::new("cow");
    let path = dir.path("m.onnx");
    io::save(&model(4), &path, &SerializeOptions::default()).unwrap();
    let a = load_mapped(&path, &ParseOptions::default()).unwrap();
    let mut b = a.clone();
    let raw = b.graph.as_mut().unwrap().initializer[10]
        .raw_data
        .as_mut()
        .unwrap();
    raw.make_mut()[0] ^= 0xff;
    assert!(raw.is_owned());
    assert_ne!(a, b);
    assert_eq!(a, model(4));
    // The file is untouched too.
    assert_eq!(io::load(&path).unwrap(), model(4));
}

#[test]
fn parallel_saves_are_byte_identical_to_sequential_ones() {
    let dir = Scratch::new("parallel");
    let m = model(5);
    let reference = io::save_to_vec(&m, &SerializeOptions::default().num_threads(1)).unwrap();
    for threads in [1, 2, 4, 8] {
        for threshold in [1usize, 64, 5000] {
            let options = SerializeOptions::default()
                .num_threads(threads)
                .raw_data_threshold(threshold);
            assert_eq!(
                io::save_to_vec(&m, &options).unwrap(),
                reference,
                "{threads} threads, threshold {threshold}"
            );
            let path = dir.path(&format!("p{threads}-{threshold}.onnx"));
            io::save(&m, &path, &options).unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                reference,
                "file, {threads} threads"
            );
        }
        let loaded = io::load_with(
            dir.path("p1-64.onnx"),
            &ParseOptions::default().num_threads(threads),
        )
        .unwrap();
        assert_eq!(loaded, m);
    }
}

#[test]
fn parallel_and_sequential_loads_report_the_same_first_error() {
    let mut bytes = model(6).encode_to_vec().unwrap();
    let len = bytes.len();
    bytes.truncate(len - 10);
    let dir = Scratch::new("errors");
    let path = dir.path("bad.onnx");
    std::fs::write(&path, &bytes).unwrap();
    let errors: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|n| io::load_with(&path, &ParseOptions::default().num_threads(n)).unwrap_err())
        .collect();
    for e in &errors {
        assert_eq!(e.kind(), errors[0].kind());
        assert_eq!(e.offset(), errors[0].offset());
        assert_eq!(e.file(), Some(path.as_path()));
    }
}

/// Fails the n-th call (counting every step), once.
struct FailAt {
    n: u64,
    seen: AtomicU64,
    steps: std::sync::Mutex<Vec<SaveStep>>,
}

impl FailAt {
    fn new(n: u64) -> Self {
        FailAt {
            n,
            seen: AtomicU64::new(0),
            steps: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl SaveHook for FailAt {
    fn before(&self, step: SaveStep) -> std::io::Result<()> {
        self.steps.lock().unwrap().push(step);
        if self.seen.fetch_add(1, Ordering::SeqCst) == self.n {
            return Err(std::io::Error::other(format!(
                "injected failure at {step:?}"
            )));
        }
        Ok(())
    }
}

#[test]
fn a_failed_save_at_any_step_leaves_the_old_file_intact_and_no_temporary_file() {
    let dir = Scratch::new("atomic");
    let path = dir.path("model.onnx");
    let old = model(7);
    io::save(&old, &path, &SerializeOptions::default()).unwrap();
    let old_bytes = std::fs::read(&path).unwrap();
    let new = model(8);
    for threads in [1, 2] {
        let options = SerializeOptions::default().num_threads(threads);
        // Count the steps of a successful save first.
        let probe = FailAt::new(u64::MAX);
        let spare = dir.path("probe.onnx");
        io::save_with_hook(&new, &spare, &options, &probe).unwrap();
        std::fs::remove_file(&spare).unwrap();
        let steps = probe.steps.lock().unwrap().len() as u64;
        assert!(steps >= 4, "create, write, sync, rename at least: {steps}");
        for n in 0..steps {
            let hook = FailAt::new(n);
            let err = io::save_with_hook(&new, &path, &options, &hook).unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::Io(_)), "{err}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                old_bytes,
                "failure at step {n} of {steps}"
            );
            assert_eq!(
                dir.entries(),
                vec!["model.onnx".to_string()],
                "temporary file left after step {n}"
            );
        }
    }
    io::save(&new, &path, &SerializeOptions::default()).unwrap();
    assert_eq!(io::load(&path).unwrap(), new);
}

#[test]
fn a_writer_that_fails_midway_reports_the_error() {
    struct Full(usize);
    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 < buf.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "disk full",
                ));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err =
        io::save_to_writer(&model(9), Full(100_000), &SerializeOptions::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Io(std::io::ErrorKind::StorageFull));
}

#[test]
fn saving_over_a_mapped_model_keeps_the_mapped_model_valid() {
    let dir = Scratch::new("remap");
    let path = dir.path("m.onnx");
    io::save(&model(10), &path, &SerializeOptions::default()).unwrap();
    let mapped = load_mapped(&path, &ParseOptions::default()).unwrap();
    io::save(&model(11), &path, &SerializeOptions::default()).unwrap();
    // The old inode is still mapped and unchanged; the path has the new model.
    assert_eq!(mapped, model(10));
    assert_eq!(io::load(&path).unwrap(), model(11));
}

#[test]
fn saving_keeps_the_permissions_of_the_replaced_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("perms");
    let path = dir.path("m.onnx");
    std::fs::write(&path, b"old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    io::save(&model(12), &path, &SerializeOptions::default()).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// A file save of a structure-only model copies the weights left on disk from their file
/// into the new one (not through memory): the same bytes as saving the owned model, in
/// every thread count, when saving over the input itself, next to tensors kept in
/// external data, and into split data files; a file truncated before the copy is an
/// error that leaves no file.
#[test]
fn weights_left_on_disk_are_copied_file_to_file_with_the_same_bytes() {
    let dir = Scratch::new("copy-lazy");
    let path = dir.path("m.onnx");
    let mut original = model(21);
    // Long bytes outside `raw_data` (the 2000-byte `string_data` entry of `model`, an
    // attribute's bytes) are copied by the structure-only load: the truncation below
    // must not pull them from under the model.
    if let Some(g) = original.graph.as_mut() {
        g.node.push(
            NodeProto::new("Custom", ["x"], ["z"])
                .with_attribute(AttributeProto::string("blob", vec![0xabu8; 4000])),
        );
    }
    io::save(&original, &path, &SerializeOptions::default()).unwrap();
    let expected = std::fs::read(&path).unwrap();
    let lazy_load = ParseOptions::default().structure_only(true);
    for threads in [1, 2, 4] {
        let lazy = io::load_with(&path, &lazy_load).unwrap();
        assert!(lazy.tensors().iter().any(|t| t.lazy_data.is_some()));
        let out = dir.path(&format!("out{threads}.onnx"));
        io::save(
            &lazy,
            &out,
            &SerializeOptions::default().num_threads(threads),
        )
        .unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), expected, "{threads} threads");
    }
    // Over the file the weights are read from: the copy is made before the rename.
    let lazy = io::load_with(&path, &lazy_load).unwrap();
    io::save(&lazy, &path, &SerializeOptions::default().sync(false)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    // Tensors kept in an external data file, others inline and left on disk: the same
    // model as the owned load gives.
    let ext = dir.path("ext.onnx");
    let ext_options =
        onnx_light::io::external::ExternalDataOptions::new("ext.bin").size_threshold(3_000_000);
    io::save(
        &original,
        &ext,
        &SerializeOptions::default().external_data(ext_options),
    )
    .unwrap();
    let lazy = io::load_with(&ext, &lazy_load.clone().keep_external_metadata(true)).unwrap();
    let out = dir.path("ext_out.onnx");
    io::save(&lazy, &out, &SerializeOptions::default()).unwrap();
    assert_eq!(io::load(&out).unwrap(), io::load(&ext).unwrap());
    // Weights left on disk moved into split, aligned data files: copied there too.
    let lazy = io::load_with(&path, &lazy_load).unwrap();
    let split = dir.path("split.onnx");
    let split_options = onnx_light::io::external::ExternalDataOptions::new("split.bin")
        .alignment(4096)
        .max_file_size(1 << 20);
    io::save(
        &lazy,
        &split,
        &SerializeOptions::default()
            .num_threads(2)
            .external_data(split_options),
    )
    .unwrap();
    assert!(dir.path("split.bin").exists());
    assert_eq!(io::load(&split).unwrap(), original);
    // Truncated after the load: the save fails, naming the truncated file, and leaves
    // neither the output nor a temporary file.
    let lazy = io::load_with(&path, &lazy_load).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(expected.len() as u64 / 2)
        .unwrap();
    let before: Vec<_> = std::fs::read_dir(dir.path(".")).unwrap().collect();
    let strings = lazy
        .tensors()
        .into_iter()
        .find(|t| t.name() == "strings")
        .unwrap()
        .string_data[1]
        .to_vec();
    assert_eq!(strings, vec![0xffu8; 2000]);
    let out = dir.path("truncated_out.onnx");
    let e = io::save(&lazy, &out, &SerializeOptions::default()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
    assert_eq!(e.file(), Some(path.as_path()));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path(".")).unwrap().count(),
        before.len()
    );
}

#[test]
fn structure_only_loads_leave_weights_on_disk_until_fetched() {
    let dir = Scratch::new("structure");
    let path = dir.path("m.onnx");
    let original = model(13);
    io::save(&original, &path, &SerializeOptions::default()).unwrap();
    let mut m = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    let big = m
        .tensors()
        .into_iter()
        .find(|t| t.name() == "t10")
        .unwrap()
        .clone();
    assert!(big.raw_data.is_none());
    let lazy = big.lazy_data.as_ref().unwrap();
    assert_eq!(lazy.len(), 3_000_001);
    assert_eq!(
        lazy.fetch().unwrap(),
        original.graph.as_ref().unwrap().initializer[10]
            .raw_data
            .clone()
            .unwrap()
    );
    // Small payloads are loaded as usual.
    assert!(m
        .tensors()
        .into_iter()
        .find(|t| t.name() == "t1")
        .unwrap()
        .raw_data
        .is_some());
    // A file save fetches the weights as it writes; an in-memory save refuses, naming
    // the tensor, rather than write a tensor without its weights.
    let out = dir.path("out.onnx");
    io::save(&m, &out, &SerializeOptions::default()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&path).unwrap());
    let err = io::save_to_vec(&m, &SerializeOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::IncompleteModel { .. }),
        "{err}"
    );
    assert_eq!(err.tensor(), Some("t6"));
    io::materialize_lazy_data(&mut m).unwrap();
    assert_eq!(m, original);
}

#[test]
fn a_path_ending_in_a_separator_is_refused_before_anything_is_written() {
    let dir = Scratch::new("trailing-separator");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let external = SerializeOptions::default().external_data(ExternalDataOptions::new("m.data"));
    for options in [SerializeOptions::default(), external] {
        for spelled in ["out/", "out/.", "sub/", "sub/."] {
            let path = format!("{}/{spelled}", dir.dir().display());
            let err = io::save(&model(15), &path, &options).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("ends with a separator") && text.contains(spelled),
                "{spelled}: {text}"
            );
            assert_eq!(dir.entries(), ["sub"], "{spelled}");
            assert!(std::fs::read_dir(dir.path("sub")).unwrap().next().is_none());
        }
    }
    // A symbolic link whose target ends with a separator names a directory too.
    std::os::unix::fs::symlink("new/", dir.path("link")).unwrap();
    let err = io::save(&model(15), dir.path("link"), &SerializeOptions::default()).unwrap_err();
    assert!(err.to_string().contains("ends with a separator"), "{err}");
    assert_eq!(dir.entries(), ["link", "sub"]);
}

#[test]
fn invalid_options_are_errors_not_silent_fixes() {
    let dir = Scratch::new("options");
    let path = dir.path("m.onnx");
    io::save(&model(14), &path, &SerializeOptions::default()).unwrap();
    let cases = [
        Load::With(ParseOptions::default().alignment(3)),
        Load::Mapped(ParseOptions::default().alignment(64)),
        Load::Mapped(ParseOptions::default().structure_only(true)),
        Load::With(ParseOptions::default().num_threads(io::MAX_THREADS + 1)),
    ];
    for load in cases {
        let err = load.load(&path).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidOption { .. }),
            "{load:?}: {err}"
        );
    }
    // Alignment 0, the default, asks for no alignment, as 1 does.
    let zero = io::load_with(&path, &ParseOptions::default().alignment(0)).unwrap();
    let one = io::load_with(&path, &ParseOptions::default().alignment(1)).unwrap();
    assert_eq!(zero, one);
    let bytes = std::fs::read(&path).unwrap();
    let err =
        io::load_from_bytes(&bytes, &ParseOptions::default().structure_only(true)).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::InvalidOption {
            name: "structure_only",
            ..
        }
    ));
    let err = io::save_to_vec(&model(14), &SerializeOptions::default().alignment(6)).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::InvalidOption {
            name: "alignment",
            ..
        }
    ));
}

#[test]
fn size_limits_are_enforced_with_clear_errors() {
    let bytes = model(15).encode_to_vec().unwrap();
    let err =
        io::load_from_bytes(&bytes, &ParseOptions::default().max_model_size(1000)).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LimitExceeded {
                which: Limit::MaxModelSize,
                ..
            }
        ),
        "{err}"
    );
    let err = io::load_from_bytes(&bytes, &ParseOptions::default().max_tensor_size(1_000_000))
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LimitExceeded {
                which: Limit::MaxTensorSize,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.tensor(), Some("t10"));
    let endless = std::io::repeat(0x0a);
    let err = io::load_from_reader(endless, &ParseOptions::default().max_model_size(1 << 20))
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::LimitExceeded { .. }));
}

#[test]
fn loading_a_directory_or_a_missing_file_names_the_path() {
    let dir = Scratch::new("paths");
    let err = io::load(&dir.0).unwrap_err();
    assert_eq!(err.file(), Some(dir.0.as_path()));
    let missing = dir.path("missing.onnx");
    let err = io::load(&missing).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Io(std::io::ErrorKind::NotFound));
    assert!(err.to_string().contains("missing.onnx"), "{err}");
    let err = io::save(&model(16), &dir.0, &SerializeOptions::default()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Io(_)));
}

#[test]
fn empty_files_are_not_models_and_the_empty_model_saves_as_protobuf_writes_it() {
    let dir = Scratch::new("empty");
    let path = dir.path("empty.onnx");
    std::fs::write(&path, b"").unwrap();
    for (name, load) in parse_modes() {
        let e = load.load(&path).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::NotAModel { .. }),
            "{name}: {e}"
        );
    }
    // The empty model encodes to no bytes, as protobuf has it.
    io::save(&Model::default(), &path, &SerializeOptions::default()).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn saves_without_sync_write_the_same_files_and_stay_atomic() {
    use onnx_light::io::external::ExternalDataOptions;
    let dir = Scratch::new("nosync");
    let new = model(9);
    let split = ExternalDataOptions::new("w.bin")
        .size_threshold(64)
        .alignment(4096)
        .max_file_size(8192);
    for (what, options) in [
        ("single file", SerializeOptions::default()),
        (
            "split external data",
            SerializeOptions::default().external_data(split),
        ),
    ] {
        let synced = dir.path(&format!("{what}-synced"));
        let unsynced = dir.path(&format!("{what}-unsynced"));
        for d in [&synced, &unsynced] {
            std::fs::create_dir_all(d).unwrap();
        }
        io::save(&new, synced.join("m.onnx"), &options).unwrap();
        let probe = FailAt::new(u64::MAX);
        let fast = options.clone().sync(false);
        io::save_with_hook(&new, &unsynced.join("m.onnx"), &fast, &probe).unwrap();
        let steps = probe.steps.lock().unwrap().clone();
        assert!(!steps.contains(&SaveStep::Sync), "{what}: {steps:?}");
        assert!(steps.contains(&SaveStep::Rename), "{what}: {steps:?}");
        // The same files, byte for byte, and the same model.
        let names = |d: &Path| {
            let mut v: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&synced), names(&unsynced), "{what}");
        if what.starts_with("split") {
            assert!(names(&synced).len() > 2, "{what}: {:?}", names(&synced));
        }
        for name in names(&synced) {
            assert_eq!(
                std::fs::read(synced.join(&name)).unwrap(),
                std::fs::read(unsynced.join(&name)).unwrap(),
                "{what}: {name}"
            );
        }
        assert_eq!(io::load(unsynced.join("m.onnx")).unwrap(), new, "{what}");
        // Still atomic: a failure at any step leaves the previous model and no strays.
        let before = names(&unsynced);
        let old_bytes = std::fs::read(unsynced.join("m.onnx")).unwrap();
        let other = model(10);
        let probe = FailAt::new(u64::MAX);
        let spare = dir.path(&format!("{what}-probe"));
        std::fs::create_dir_all(&spare).unwrap();
        io::save_with_hook(&other, &spare.join("m.onnx"), &fast, &probe).unwrap();
        let count = probe.steps.lock().unwrap().len() as u64;
        for n in 0..count {
            let hook = FailAt::new(n);
            assert!(io::save_with_hook(&other, &unsynced.join("m.onnx"), &fast, &hook).is_err());
            assert_eq!(names(&unsynced), before, "{what}: strays after step {n}");
            assert_eq!(
                std::fs::read(unsynced.join("m.onnx")).unwrap(),
                old_bytes,
                "{what}: step {n}"
            );
        }
    }
}

/// Records the length of every write a save announces.
#[derive(Default)]
struct Writes(std::sync::Mutex<Vec<u64>>);

impl SaveHook for Writes {
    fn before(&self, step: SaveStep) -> std::io::Result<()> {
        if let SaveStep::Write { len, .. } = step {
            self.0.lock().unwrap().push(len);
        }
        Ok(())
    }
}

/// A 200 MiB tensor is written (or copied from its file) in steps of at most 64 MiB,
/// each announced first: progress moves, and a failure can land, within it.
#[test]
fn a_large_payload_is_written_in_steps_whatever_the_save() {
    const BIG: usize = 200 << 20;
    let dir = Scratch::new("steps");
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "big",
        DataType::Uint8,
        [BIG as i64],
        vec![5u8; BIG],
    ));
    let m = ModelProto::new(g, vec![]);
    let external = SerializeOptions::default()
        .external_data(io::external::ExternalDataOptions::new("big.bin"));
    let lazy_source = dir.path("source.onnx");
    io::save(&m, &lazy_source, &SerializeOptions::default()).unwrap();
    let lazy = io::load_with(&lazy_source, &ParseOptions::default().structure_only(true)).unwrap();
    for (i, (what, model, options)) in [
        ("single file", &m, SerializeOptions::default()),
        ("external data", &m, external.clone()),
        ("copied, single file", &lazy, SerializeOptions::default()),
        ("copied, external data", &lazy, external),
    ]
    .into_iter()
    .enumerate()
    {
        let writes = Writes::default();
        let sub = dir.path(&format!("out{i}"));
        std::fs::create_dir(&sub).unwrap();
        let path = sub.join("out.onnx");
        io::save_with_hook(model, &path, &options, &writes).unwrap();
        let writes = writes.0.into_inner().unwrap();
        let big: Vec<u64> = writes.iter().copied().filter(|&l| l >= 1 << 20).collect();
        assert_eq!(big.iter().sum::<u64>(), BIG as u64, "{what}: {writes:?}");
        assert_eq!(big.len(), 4, "{what}: {writes:?}");
        assert!(big.iter().all(|&l| l <= 64 << 20), "{what}: {writes:?}");
        let mut back = io::load(&path).unwrap();
        back.visit_tensors_mut(|_, t| {
            t.external_data.clear();
            t.data_location = None;
        });
        assert!(back == m, "{what}");
    }
}
