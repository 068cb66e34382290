//! Memory bombs at the library's loading entry points that `memory_bounds.rs` does not
//! measure: external data whose ranges alias each other, which would load (and save)
//! as many times the size of the files it is in. The command-line tool's own tests
//! (`onnx-light-cli/tests/memory_bombs.rs`) run every bomb through the binary and
//! measure its peak resident memory.

use onnx_light::io::external::{overlapping_tensors, verify, VerifyOptions};
use onnx_light::io::{self, ParseOptions};
use onnx_light::onnx::*;
use onnx_light::{ErrorKind, Limit};
use onnx_light_tests::bombs::{self, external_tensor, MIB};
use onnx_light_tests::mapped::Load;
use onnx_light_tests::scratch::Scratch;

/// Saves a model of `tensors` next to a `data.bin` of `size` bytes.
fn model_with(
    dir: &Scratch,
    tensors: Vec<TensorProto<'static>>,
    size: usize,
) -> std::path::PathBuf {
    std::fs::write(
        dir.path("data.bin"),
        (0..size).map(|i| i as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    let mut g = GraphProto::named("g");
    g.initializer = tensors;
    let path = dir.path("model.onnx");
    io::save(
        &ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]),
        &path,
        &io::SerializeOptions::default(),
    )
    .unwrap();
    path
}

#[test]
fn tensors_aliasing_one_range_are_refused_in_every_load_mode() {
    let dir = Scratch::new("alias-modes");
    let path = bombs::aliased_external(dir.dir(), 1000, 4 * MIB);
    let base = ParseOptions::default();
    for (mode, load) in [
        ("copy", Load::With(base.clone())),
        ("mapped", Load::Mapped(base.clone())),
        (
            "structure_only",
            Load::With(base.clone().structure_only(true)),
        ),
    ] {
        let e = load.load(&path).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::InvalidExternalData { reason, .. }
                if reason.contains("`t0` and `t1` share bytes 0..4194304")
                    && reason.contains("499500 overlapping pairs")),
            "{mode}: {e}"
        );
        assert!(e.to_string().contains("allow_aliasing"), "{mode}: {e}");
        assert_eq!(e.tensor(), Some("t0"), "{mode}");
        assert_eq!(e.limit(), Some(Limit::Aliasing), "{mode}: {e}");
        assert!(
            e.file().is_some_and(|f| f.ends_with("data.bin")),
            "{mode}: {e}"
        );
    }
    // Loading the external data afterwards is held to the same rule.
    let mut model = io::load_with(&path, &base.clone().load_external_data(false)).unwrap();
    let e = io::load_external_data_for_model(&mut model, dir.dir(), &base).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::InvalidExternalData { .. }),
        "{e}"
    );
    assert_eq!(e.limit(), Some(Limit::Aliasing), "{e}");
}

#[test]
fn allow_aliasing_loads_tensors_that_share_a_range() {
    let dir = Scratch::new("alias-allowed");
    let path = bombs::aliased_external(dir.dir(), 10, 4096);
    let m = io::load_with(&path, &ParseOptions::default().allow_aliasing(true)).unwrap();
    assert_eq!(m.tensors().len(), 10);
    m.visit_tensors(|_, t| assert_eq!(t.raw_data.as_deref(), Some(&[1u8; 4096][..])));
}

#[test]
fn adjacent_ranges_load_and_are_not_overlaps() {
    let dir = Scratch::new("alias-adjacent");
    let path = model_with(
        &dir,
        vec![
            external_tensor("a", "data.bin", 0, 4096),
            external_tensor("b", "data.bin", 4096, 4096),
            external_tensor("c", "data.bin", 8192, 0),
        ],
        8192,
    );
    let m = io::load(&path).unwrap();
    assert_eq!(m.tensors()[1].raw_data.as_deref().unwrap()[0], 0);
    let found = overlapping_tensors(&structure_of(&path), dir.dir(), 20).unwrap();
    assert!(found.pairs.is_empty() && found.total == 0, "{found:?}");
}

/// The model with its external metadata (not its data).
fn structure_of(path: &std::path::Path) -> Model {
    io::load_with(path, &ParseOptions::default().load_external_data(false)).unwrap()
}

#[test]
fn overlaps_within_the_files_size_load_but_are_found() {
    // 150 bytes referenced in a 200-byte file: under the cap, so the load accepts it;
    // the overlap is still reported (what `onnx-light check` prints).
    let dir = Scratch::new("alias-partial");
    let path = model_with(
        &dir,
        vec![
            external_tensor("a", "data.bin", 0, 100),
            external_tensor("b", "data.bin", 50, 50),
        ],
        200,
    );
    let m = io::load(&path).unwrap();
    assert_eq!(m.tensors()[1].raw_data.as_deref().unwrap()[0], 50);
    let report = verify(&structure_of(&path), dir.dir(), &VerifyOptions::default()).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let found = report.overlaps;
    assert_eq!(found.total, 1);
    let o = &found.pairs[0];
    assert_eq!(
        (o.first.as_str(), o.second.as_str(), o.start, o.end),
        ("a", "b", 50, 100)
    );
    assert!(o.file.ends_with("data.bin"));
}

#[test]
fn the_default_budget_is_the_documented_function_of_the_input_size() {
    assert_eq!(io::default_max_memory(0), io::DEFAULT_MEMORY_FLOOR);
    assert_eq!(
        io::default_max_memory(1000),
        io::DEFAULT_MEMORY_FLOOR + 1000 * io::DEFAULT_MEMORY_PER_INPUT_BYTE
    );
    assert_eq!(io::default_max_memory(u64::MAX), u64::MAX);
    let bytes = bombs::empty_functions(10 * MIB);
    let e = io::load_from_slice(&bytes, &ParseOptions::default()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::LimitExceeded { limit, .. }
            if *limit == io::default_max_memory(bytes.len() as u64)),
        "{e}"
    );
    assert_eq!(e.limit(), Some(Limit::MaxMemory), "{e}");
    assert_eq!(e.path_string(), "onnx.ModelProto.functions[0]");
}
