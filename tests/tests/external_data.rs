//! External data: save (one file, split, aligned, per tensor, attributes), load (copy,
//! no-copy, lazy, later from a directory), the hostile-path matrix, checksums, and
//! crash safety of saves that write several files.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use onnx_light::io::external::{convert_model_to_external_data, ExternalDataOptions};
use onnx_light::io::external::{verify, VerifyOptions};
use onnx_light::io::{self, ParseOptions, SaveHook, SaveStep, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{ErrorKind, ExternalDataRule};
use onnx_light_tests::fuzz_checks::external_tensor;
use onnx_light_tests::mapped::{load_mapped, Load};
use onnx_light_tests::scratch::Scratch;

fn payload(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

/// Float tensors of several sizes (so dims x type match the payload), a small one that
/// stays inline, an attribute tensor and a sparse initializer.
fn model(seed: u8) -> Model {
    let mut g = GraphProto::named("g");
    for (i, n) in [10_000usize, 3, 300_000, 1_000, 50_000]
        .into_iter()
        .enumerate()
    {
        g.initializer.push(TensorProto::from_raw(
            format!("layer/{i}:w"),
            DataType::Float,
            [n as i64],
            payload(n * 4, seed + i as u8),
        ));
    }
    let mut sub = GraphProto::named("body");
    sub.initializer.push(TensorProto::from_raw(
        "sub_w",
        DataType::Float,
        [2048],
        payload(8192, seed),
    ));
    g.node.push(
        NodeProto::new("Constant", Vec::<String>::new(), ["c"])
            .with_attribute(AttributeProto::tensor(
                "value",
                TensorProto::from_raw("const", DataType::Float, [4096], payload(16384, seed + 9)),
            ))
            .with_attribute(AttributeProto::graph("body", sub)),
    );
    g.sparse_initializer.push(SparseTensorProto {
        values: Some(TensorProto::from_raw(
            "sp_values",
            DataType::Float,
            [1024],
            payload(4096, seed + 3),
        )),
        indices: Some(TensorProto::from_raw(
            "sp_indices",
            DataType::Int64,
            [1024],
            payload(8192, seed + 4),
        )),
        dims: vec![1 << 20],
        ..SparseTensorProto::default()
    });
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn external_locations(m: &Model) -> Vec<(String, String)> {
    let mut out = Vec::new();
    m.visit_tensors(|_, t| {
        if t.data_location() == DataLocation::External {
            out.push((
                t.name().to_string(),
                t.external_data_value("location").unwrap_or("").to_string(),
            ));
        }
    });
    out
}

fn raw_model(path: &Path) -> Model {
    io::load_with(path, &ParseOptions::default().load_external_data(false)).unwrap()
}

#[test]
fn one_file_save_moves_large_tensors_out_and_loads_back_equal_in_every_mode() {
    let dir = Scratch::new("one");
    let m = model(1);
    let path = dir.path("m.onnx");
    let options =
        SerializeOptions::default().external_data(ExternalDataOptions::new("weights.bin"));
    io::save(&m, &path, &options).unwrap();
    assert_eq!(dir.entries(), vec!["m.onnx", "weights.bin"]);
    let raw = raw_model(&path);
    let names: Vec<_> = external_locations(&raw)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    // Large initializers and the subgraph's tensor; not the 12-byte one, not the
    // attribute tensor (convert_attributes is off), not the sparse parts (onnx and
    // onnxruntime only read dense external tensors).
    assert_eq!(
        names,
        vec!["layer/0:w", "layer/2:w", "layer/3:w", "layer/4:w", "sub_w"]
    );
    // Offsets are 4096-aligned.
    raw.visit_tensors(|_, t| {
        if let Some(off) = t.external_data_value("offset") {
            assert_eq!(off.parse::<u64>().unwrap() % 4096, 0, "{}", t.name());
        }
    });
    for load in [
        Load::With(ParseOptions::default()),
        Load::With(ParseOptions::default().num_threads(1)),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().alignment(64)),
    ] {
        let loaded = load.load(&path).unwrap();
        assert_eq!(loaded, m, "{load:?}");
    }
    // The model was not mutated by the save.
    assert_eq!(m, model(1));
}

#[test]
fn mapped_loads_map_each_file_once_and_give_aligned_shared_slices() {
    let dir = Scratch::new("nocopy");
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(2), &path, &options).unwrap();
    let external: Vec<String> = external_locations(&raw_model(&path))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let m = load_mapped(&path, &ParseOptions::default()).unwrap();
    let mut owners = std::collections::HashSet::new();
    m.visit_tensors(|_, t| {
        if let Some(Bytes::Shared(s)) = &t.raw_data {
            owners.insert(std::sync::Arc::as_ptr(s.owner()) as *const () as usize);
            // Tensors from the data file sit at 4096-aligned offsets of a page-aligned map.
            if external.iter().any(|n| n == t.name()) {
                assert_eq!(s.as_slice().as_ptr() as usize % 4096, 0, "{}", t.name());
            }
        }
    });
    // One map for the data file, one for the model file's own large payloads.
    assert!(owners.len() <= 2, "{owners:?}");
}

#[test]
fn lazy_loads_touch_no_weights_until_fetched() {
    let dir = Scratch::new("lazy");
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(3), &path, &options).unwrap();
    let mut lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    let t = lazy.graph.as_ref().unwrap().initializer[2].clone();
    assert!(t.raw_data.is_none());
    assert_eq!(t.lazy_data.as_ref().unwrap().len(), 1_200_000);
    assert_eq!(
        t.lazy_data.as_ref().unwrap().fetch().unwrap(),
        payload(1_200_000, 5)[..]
    );
    // Re-saving the lazy model streams the bytes from the old files.
    let out = dir.path("copy.onnx");
    io::save(
        &lazy,
        &out,
        &SerializeOptions::default().external_data(ExternalDataOptions::new("copy.bin")),
    )
    .unwrap();
    assert_eq!(io::load(&out).unwrap(), model(3));
    io::materialize_lazy_data(&mut lazy).unwrap();
    let mut expected = model(3);
    // Materialized tensors keep their external metadata (lazy loads keep it).
    expected.visit_tensors_mut(|_, _| {});
    assert_eq!(lazy.tensors().len(), expected.tensors().len());
}

#[test]
fn split_files_never_exceed_max_size_and_a_larger_tensor_gets_its_own_file() {
    let dir = Scratch::new("split");
    let path = dir.path("m.onnx");
    let max = 100_000u64;
    let options = SerializeOptions::default().external_data(
        ExternalDataOptions::new("w.bin")
            .max_file_size(max)
            .alignment(64),
    );
    io::save(&model(4), &path, &options).unwrap();
    let entries = dir.entries();
    assert!(
        entries.contains(&"w.bin".to_string()) && entries.contains(&"w.bin.1".to_string()),
        "{entries:?}"
    );
    let mut per_file: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, loc) in external_locations(&raw_model(&path)) {
        *per_file.entry(loc).or_default() += 1;
    }
    for (file, tensors) in &per_file {
        let size = std::fs::metadata(dir.path(file)).unwrap().len();
        // A tensor larger than the limit is alone in its file; shared files respect it.
        assert!(
            size <= max || *tensors == 1,
            "{file}: {size} bytes, {tensors} tensors"
        );
    }
    assert!(per_file.len() >= 3, "{per_file:?}");
    assert_eq!(io::load(&path).unwrap(), model(4));
}

#[test]
fn per_tensor_files_have_sanitised_unique_names() {
    let dir = Scratch::new("pertensor");
    let path = dir.path("m.onnx");
    let mut m = model(5);
    // Two tensors whose names sanitise to the same file name.
    m.graph.as_mut().unwrap().initializer[1] =
        TensorProto::from_raw("layer/0:w", DataType::Float, [1024], payload(4096, 1));
    let options = SerializeOptions::default()
        .external_data(ExternalDataOptions::new("").one_file_per_tensor(true));
    io::save(&m, &path, &options).unwrap();
    let entries = dir.entries();
    assert!(entries.contains(&"layer_0_w".to_string()), "{entries:?}");
    assert!(entries.contains(&"layer_0_w_2".to_string()), "{entries:?}");
    assert!(entries
        .iter()
        .all(|e| !e.contains('/') && !e.starts_with('.')));
    assert_eq!(io::load(&path).unwrap(), m);
}

#[test]
fn attribute_tensors_go_external_only_on_request() {
    let dir = Scratch::new("attrs");
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default()
        .external_data(ExternalDataOptions::new("w.bin").convert_attributes(true));
    io::save(&model(6), &path, &options).unwrap();
    let names: Vec<_> = external_locations(&raw_model(&path))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"const".to_string()));
    assert_eq!(io::load(&path).unwrap(), model(6));
}

#[test]
fn a_location_leaving_the_model_directory_is_refused_and_nothing_is_written() {
    let dir = Scratch::new("abs");
    let path = dir.path("m.onnx");
    io::save(&model(6), &path, &SerializeOptions::default()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let elsewhere = std::env::temp_dir().join("elsewhere-weights.bin");
    let elsewhere = elsewhere.to_string_lossy().into_owned();
    for (location, why) in [
        (elsewhere.as_str(), "absolute"),
        ("../up.bin", ".."),
        ("sub/../../up.bin", ".."),
        ("weights/", "names a directory"),
        ("weights\\", "names a directory"),
        (".", "names no file"),
        ("sub/CON", "device"),
    ] {
        let options = SerializeOptions::default().external_data(ExternalDataOptions::new(location));
        let err = io::save(&model(7), &path, &options).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidOption { .. }),
            "{location}: {err}"
        );
        let text = err.to_string();
        assert!(text.contains("external_data.location"), "{text}");
        assert!(text.contains(why), "{location}: {text}");
        let mut m = model(7);
        let err = convert_model_to_external_data(&mut m, &ExternalDataOptions::new(location))
            .unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
        assert_eq!(m, model(7), "{location}: the model was changed");
    }
    // The model that was there is untouched and no data file was written anywhere.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(dir.entries(), ["m.onnx"]);
    assert!(!std::path::Path::new(&elsewhere).exists());
    assert!(!dir.path("../up.bin").exists());
}

#[test]
fn a_location_in_subdirectories_creates_them_and_is_kept_on_every_save() {
    let dir = Scratch::new("subdirs");
    let path = dir.path("m.onnx");
    for (round, location) in ["weights/m.data", "weights\\m.data", "./weights/m.data"]
        .into_iter()
        .enumerate()
    {
        let options = SerializeOptions::default().external_data(ExternalDataOptions::new(location));
        let saved = io::save(&model(30 + round as u8), &path, &options).unwrap();
        assert_eq!(saved.model, path);
        let written: Vec<_> = saved
            .data_files
            .iter()
            .map(|f| f.location.as_str())
            .collect();
        assert_eq!(written, ["weights/m.data"]);
        assert_eq!(saved.data_files[0].path, dir.path("weights").join("m.data"));
        assert_eq!(
            saved.data_files[0].len,
            std::fs::metadata(dir.path("weights/m.data")).unwrap().len()
        );
        assert_eq!(io::load(&path).unwrap(), model(30 + round as u8));
        let locations: Vec<_> = external_locations(&raw_model(&path))
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert!(
            locations.iter().all(|l| l == "weights/m.data"),
            "{locations:?}"
        );
        assert_eq!(dir.entries(), ["m.onnx", "weights"]);
        let inside: Vec<_> = std::fs::read_dir(dir.path("weights"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(inside, ["m.data"]);
    }
    // Deeper, and one file per tensor beneath it.
    let options =
        SerializeOptions::default().external_data(ExternalDataOptions::new("a/b/c/w.bin"));
    io::save(&model(34), dir.path("n.onnx"), &options).unwrap();
    assert_eq!(io::load(dir.path("n.onnx")).unwrap(), model(34));
    assert!(dir.path("a/b/c/w.bin").is_file());
}

#[test]
fn a_location_through_a_symlinked_or_file_directory_is_refused_and_leaves_nothing() {
    let dir = Scratch::new("sublinks");
    let outside = Scratch::new("sublinks-outside");
    std::os::unix::fs::symlink(outside.dir(), dir.path("weights")).unwrap();
    std::fs::write(dir.path("plain"), b"a file").unwrap();
    let path = dir.path("m.onnx");
    for location in ["weights/m.data", "plain/m.data"] {
        let options = SerializeOptions::default().external_data(ExternalDataOptions::new(location));
        let err = io::save(&model(35), &path, &options).unwrap_err();
        assert!(
            err.to_string().contains("not a directory"),
            "{location}: {err}"
        );
        assert!(
            err.to_string()
                .contains(location.split('/').next().unwrap()),
            "{err}"
        );
    }
    assert_eq!(dir.entries(), ["plain", "weights"]);
    assert!(outside.entries().is_empty(), "{:?}", outside.entries());
    // A failure after directories were made removes them.
    let options =
        SerializeOptions::default().external_data(ExternalDataOptions::new("made/here/w.bin"));
    let hook = FailAt::at(0);
    assert!(io::save_with_hook(&model(35), &path, &options, &hook).is_err());
    assert_eq!(dir.entries(), ["plain", "weights"]);
}

#[test]
fn another_models_data_file_is_never_replaced_unless_allowed() {
    let dir = Scratch::new("two-models");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(20), dir.path("a.onnx"), &options).unwrap();
    let a_data = std::fs::read(dir.path("w.bin")).unwrap();
    // Another model, the same data file name: refused before anything is written.
    let err = io::save(&model(21), dir.path("b.onnx"), &options).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Io(std::io::ErrorKind::AlreadyExists)
    );
    let text = err.to_string();
    assert!(
        text.contains("w.bin") && text.contains("replace_data_files"),
        "{text}"
    );
    assert_eq!(dir.entries(), ["a.onnx", "w.bin"]);
    assert_eq!(std::fs::read(dir.path("w.bin")).unwrap(), a_data);
    assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model(20));
    // So is a split file of that name, and convert_model_to_external_data then save.
    std::fs::write(dir.path("s.bin.1"), b"someone's").unwrap();
    let split = SerializeOptions::default()
        .external_data(ExternalDataOptions::new("s.bin").max_file_size(1));
    let err = io::save(&model(21), dir.path("b.onnx"), &split).unwrap_err();
    assert!(err.to_string().contains("s.bin.1"), "{err}");
    let mut marked = model(21);
    convert_model_to_external_data(&mut marked, &ExternalDataOptions::new("w.bin")).unwrap();
    let err = io::save(&marked, dir.path("b.onnx"), &SerializeOptions::default()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Io(std::io::ErrorKind::AlreadyExists)
    );
    assert_eq!(dir.entries(), ["a.onnx", "s.bin.1", "w.bin"]);
    // Saving the same model again and again keeps its data file's name, replacing its
    // own data each time without being asked: no second file, no growing one.
    for round in 0..4 {
        io::save(&model(22 + round), dir.path("a.onnx"), &options).unwrap();
        assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model(22 + round));
        assert_eq!(dir.entries(), ["a.onnx", "s.bin.1", "w.bin"]);
        assert_eq!(
            std::fs::read(dir.path("w.bin")).unwrap().len(),
            a_data.len()
        );
    }
    // Allowed, the file is replaced (and the model that used it is the caller's loss).
    io::save(
        &model(21),
        dir.path("b.onnx"),
        &options.clone().replace_data_files(true),
    )
    .unwrap();
    assert_eq!(io::load(dir.path("b.onnx")).unwrap(), model(21));
}

#[test]
fn a_lazily_loaded_model_keeps_its_names_over_its_own_path_and_steps_aside_next_to_it() {
    let dir = Scratch::new("lazy-generations");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(30), dir.path("a.onnx"), &options).unwrap();
    io::save(&model(31), dir.path("a.onnx"), &options).unwrap();
    assert_eq!(dir.entries(), ["a.onnx", "w.bin"]);
    let a_data = || std::fs::read(dir.path("w.bin")).unwrap();
    let before = a_data();
    let lazy = io::load_with(
        dir.path("a.onnx"),
        &io::ParseOptions::default().structure_only(true),
    )
    .unwrap();
    // Saved without options to another model in the same directory: its tensors keep
    // their external home, under a name of the same family that no one else has, as
    // `w.bin` is a.onnx's.
    let saved = io::save(&lazy, dir.path("b.onnx"), &SerializeOptions::default()).unwrap();
    let names: Vec<_> = external_locations(&raw_model(&dir.path("b.onnx")))
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert!(names.iter().all(|l| l == "w.bin~1"), "{names:?}");
    assert_eq!(saved.data_files.len(), 1);
    assert_eq!(saved.data_files[0].location, "w.bin~1");
    assert_eq!(io::load(dir.path("b.onnx")).unwrap(), model(31));
    assert_eq!(a_data(), before);
    assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model(31));
    // Over its own path, again and again: the data it reads is replaced under the same
    // name (written in full first, then renamed in), and the model in memory still
    // reads its old bytes.
    for _ in 0..3 {
        let lazy = io::load_with(
            dir.path("a.onnx"),
            &io::ParseOptions::default().structure_only(true),
        )
        .unwrap();
        io::save(&lazy, dir.path("a.onnx"), &SerializeOptions::default()).unwrap();
        assert_eq!(io::load(dir.path("a.onnx")).unwrap(), model(31));
        let mut lazy = lazy;
        io::materialize_lazy_data(&mut lazy).unwrap();
        lazy.visit_tensors_mut(|_, t| {
            t.external_data.clear();
            t.data_location = None;
        });
        assert_eq!(lazy, model(31));
    }
    assert_eq!(dir.entries(), ["a.onnx", "b.onnx", "w.bin", "w.bin~1"]);
}

#[test]
fn data_an_older_version_left_under_a_second_generation_name_goes_back_to_its_name() {
    let dir = Scratch::new("migrate");
    let path = dir.path("m.onnx");
    let old = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin~1"));
    let stale = vec![7u8; 300_000];
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    for sync in [true, false] {
        // What an older version left: the model uses `w.bin~1`, `w.bin` is stale.
        std::fs::remove_file(dir.path("w.bin")).ok();
        io::save(&model(19), &path, &old).unwrap();
        std::fs::write(dir.path("w.bin"), &stale).unwrap();
        let before = dir.entries();
        assert_eq!(before, ["m.onnx", "w.bin", "w.bin~1"]);
        let options = options.clone().sync(sync);
        // A failure at every step leaves all of it as it was; the save that passes
        // every step ends the loop.
        for n in 0.. {
            let hook = FailAt::at(n);
            let what = format!("step {n}, sync {sync}");
            if io::save_with_hook(&model(20), &path, &options, &hook).is_ok() {
                assert!(n > 6, "{what}");
                break;
            }
            assert_eq!(io::load(&path).unwrap(), model(19), "{what}");
            assert_eq!(dir.entries(), before, "{what}");
            assert!(std::fs::read(dir.path("w.bin")).unwrap() == stale, "{what}");
        }
        assert_eq!(io::load(&path).unwrap(), model(20));
        assert_eq!(dir.entries(), ["m.onnx", "w.bin"]);
    }
}

#[test]
fn convert_then_save_writes_the_marked_tensors() {
    let dir = Scratch::new("convert");
    let path = dir.path("m.onnx");
    let mut m = model(8);
    convert_model_to_external_data(
        &mut m,
        &ExternalDataOptions::new("data.bin").size_threshold(5000),
    )
    .unwrap();
    // Marked in memory, bytes still there.
    let marked: Vec<_> = external_locations(&m);
    assert!(!marked.is_empty());
    assert!(m.tensors().iter().all(|t| t.raw_data.is_some()));
    // In-memory saves refuse marked tensors rather than write an inconsistent model,
    // naming the tensor, whatever the thread count.
    for threads in [1, 2] {
        let options = SerializeOptions::default().num_threads(threads);
        for err in [
            io::save_to_vec(&m, &options).unwrap_err(),
            io::save_to_writer(&m, Vec::new(), &options).unwrap_err(),
        ] {
            assert!(
                matches!(err.kind(), ErrorKind::IncompleteModel { .. }),
                "{err}"
            );
            assert!(err.tensor().is_some(), "{err}");
        }
    }
    io::save(&m, &path, &SerializeOptions::default()).unwrap();
    assert!(dir.path("data.bin").exists());
    assert_eq!(io::load(&path).unwrap(), model(8));
}

#[test]
fn external_data_loads_later_from_a_given_directory() {
    let dir = Scratch::new("later");
    let path = dir.path("m.onnx");
    io::save(
        &model(9),
        &path,
        &SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin")),
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut m = io::load_from_bytes(&bytes, &ParseOptions::default()).unwrap();
    assert!(
        !external_locations(&m).is_empty(),
        "bytes alone have no directory to read from"
    );
    io::load_external_data_for_model(&mut m, &dir.0, &ParseOptions::default()).unwrap();
    assert_eq!(m, model(9));
    let from_dir = ParseOptions::default().external_data_dir(&dir.0);
    let m2 = io::load_from_bytes(&bytes, &from_dir).unwrap();
    assert_eq!(m2, model(9));
    let owner: onnx_light::ByteOwner = std::sync::Arc::new(bytes);
    assert_eq!(io::load_from_owner(owner, &from_dir).unwrap(), model(9));
}

#[test]
fn keep_metadata_and_location_override() {
    let dir = Scratch::new("override");
    let path = dir.path("m.onnx");
    io::save(
        &model(10),
        &path,
        &SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin")),
    )
    .unwrap();
    std::fs::rename(dir.path("w.bin"), dir.path("renamed.bin")).unwrap();
    let err = io::load(&path).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Io(std::io::ErrorKind::NotFound));
    assert!(
        err.tensor().is_some() && err.to_string().contains("w.bin"),
        "{err}"
    );
    let m = io::load_with(
        &path,
        &ParseOptions::default()
            .external_data_location("renamed.bin")
            .keep_external_metadata(true),
    )
    .unwrap();
    let t = &m.graph.as_ref().unwrap().initializer[0];
    assert!(t.raw_data.is_some() && t.is_external());
}

#[test]
fn checksums_are_verified_on_request() {
    let dir = Scratch::new("checksum");
    let path = dir.path("m.onnx");
    io::save(
        &model(11),
        &path,
        &SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin")),
    )
    .unwrap();
    let data = std::fs::read(dir.path("w.bin")).unwrap();
    let good = {
        use sha1_smol_like::digest_hex;
        digest_hex(&data)
    };
    let with = |sum: &str| {
        let mut m = raw_model(&path);
        m.visit_tensors_mut(|_, t| {
            if t.is_external() {
                t.external_data.retain(|e| e.key() != "checksum");
                t.external_data
                    .push(StringStringEntryProto::new("checksum", sum.to_string()));
            }
        });
        io::save(&m, &path, &SerializeOptions::default()).unwrap();
    };
    with(&good);
    assert_eq!(
        io::load_with(&path, &ParseOptions::default().verify_checksums(true)).unwrap(),
        model(11)
    );
    with("0000000000000000000000000000000000000000");
    let err = io::load_with(&path, &ParseOptions::default().verify_checksums(true)).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ChecksumMismatch { .. }),
        "{err}"
    );
    // Without verification the same model loads.
    assert!(io::load(&path).is_ok());
}

/// SHA-1 computed here independently of the library (via Python's hashlib would need the
/// venv; a tiny reference implementation keeps this test self-contained).
mod sha1_smol_like {
    pub fn digest_hex(data: &[u8]) -> String {
        let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
        let mut msg = data.to_vec();
        let bit_len = (data.len() as u64) * 8;
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&bit_len.to_be_bytes());
        for chunk in msg.chunks(64) {
            let mut w = [0u32; 80];
            for i in 0..16 {
                w[i] = u32::from_be_bytes([
                    chunk[4 * i],
                    chunk[4 * i + 1],
                    chunk[4 * i + 2],
                    chunk[4 * i + 3],
                ]);
            }
            for i in 16..80 {
                w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
            }
            let (mut a, mut b, mut c, mut d, mut e) = (h[0], h[1], h[2], h[3], h[4]);
            for (i, wi) in w.iter().enumerate() {
                let (f, k) = match i {
                    0..=19 => ((b & c) | (!b & d), 0x5A827999),
                    20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                    40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                    _ => (b ^ c ^ d, 0xCA62C1D6),
                };
                let t = a
                    .rotate_left(5)
                    .wrapping_add(f)
                    .wrapping_add(e)
                    .wrapping_add(k)
                    .wrapping_add(*wi);
                e = d;
                d = c;
                c = b.rotate_left(30);
                b = a;
                a = t;
            }
            for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
                *x = x.wrapping_add(y);
            }
        }
        h.iter().map(|x| format!("{x:08x}")).collect()
    }

    #[test]
    fn reference_sha1_matches_a_known_vector() {
        assert_eq!(
            digest_hex(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }
}

/// A model of one external tensor, `victim`, with these `external_data` entries.
fn victim(entries: &[(&str, &str)]) -> Model {
    let mut g = GraphProto::named("g");
    let mut t = TensorProto {
        name: Some("victim".into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims: vec![4],
        data_location: Some(DataLocation::External.into()),
        ..TensorProto::default()
    };
    for (k, v) in entries {
        t.external_data
            .push(StringStringEntryProto::new(k.to_string(), v.to_string()));
    }
    g.initializer.push(t);
    ModelProto::new(g, vec![])
}

/// Writes [`victim`] as the model file and returns the load error.
fn load_error_with_entries(dir: &Scratch, entries: &[(&str, &str)]) -> onnx_light::Error {
    let path = dir.path("hostile.onnx");
    std::fs::write(&path, victim(entries).encode_to_vec().unwrap()).unwrap();
    io::load(&path).unwrap_err()
}

#[test]
fn the_hostile_external_data_matrix_is_refused_with_typed_errors() {
    let dir = Scratch::new("hostile");
    std::fs::write(dir.path("ok.bin"), b"abcdefgh").unwrap();
    let outside = Scratch::new("outside");
    std::fs::write(outside.path("secret.bin"), b"secret!!").unwrap();
    std::os::unix::fs::symlink(outside.path("secret.bin"), dir.path("escape.bin")).unwrap();
    std::os::unix::fs::symlink(&outside.0, dir.path("escape_dir")).unwrap();
    std::os::unix::fs::symlink("ok.bin", dir.path("inside_link.bin")).unwrap();
    let mkfifo = std::process::Command::new("mkfifo")
        .arg(dir.path("pipe.bin"))
        .status()
        .unwrap();
    assert!(mkfifo.success());
    std::fs::create_dir(dir.path("a_dir")).unwrap();

    /// (what, external_data entries, words the error must contain, the rule it breaks)
    type Case<'c> = (&'c str, &'c [(&'c str, &'c str)], &'c str, ExternalDataRule);
    let cases: &[Case<'_>] = &[
        (
            "empty location",
            &[("location", "")],
            "empty",
            ExternalDataRule::Location,
        ),
        (
            "absolute",
            &[("location", "/etc/passwd")],
            "absolute",
            ExternalDataRule::Location,
        ),
        (
            "parent",
            &[("location", "../x.bin")],
            "..",
            ExternalDataRule::Location,
        ),
        (
            "nested parent",
            &[("location", "sub/../../x.bin")],
            "..",
            ExternalDataRule::Location,
        ),
        (
            "backslash traversal",
            &[("location", "..\\..\\x.bin")],
            "..",
            ExternalDataRule::Location,
        ),
        (
            "drive",
            &[("location", "C:\\x.bin")],
            "drive",
            ExternalDataRule::Location,
        ),
        (
            "unc",
            &[("location", "\\\\host\\share\\x.bin")],
            "UNC",
            ExternalDataRule::Location,
        ),
        (
            "nul",
            &[("location", "ok.bin\0")],
            "control",
            ExternalDataRule::Location,
        ),
        (
            "control",
            &[("location", "ok\x07.bin")],
            "control",
            ExternalDataRule::Location,
        ),
        (
            "symlink escaping",
            &[("location", "escape.bin")],
            "symbolic link",
            ExternalDataRule::SymbolicLink,
        ),
        (
            "dir symlink escaping",
            &[("location", "escape_dir/secret.bin")],
            "symbolic link",
            ExternalDataRule::SymbolicLink,
        ),
        (
            "symlink staying inside",
            &[("location", "inside_link.bin")],
            "symbolic link",
            ExternalDataRule::SymbolicLink,
        ),
        (
            "onnxruntime memory address",
            &[("location", "*/_ORT_MEM_ADDR_/*")],
            "onnxruntime",
            ExternalDataRule::Location,
        ),
        (
            "alternate data stream",
            &[("location", "ok.bin:stream")],
            "alternate data stream",
            ExternalDataRule::Location,
        ),
        (
            "windows device",
            &[("location", "NUL")],
            "device name",
            ExternalDataRule::Location,
        ),
        (
            "trailing dot",
            &[("location", "ok.bin.")],
            "trailing dot",
            ExternalDataRule::Location,
        ),
        (
            "fifo",
            &[("location", "pipe.bin")],
            "FIFO",
            ExternalDataRule::NotRegularFile,
        ),
        (
            "directory",
            &[("location", "a_dir")],
            "not a regular file",
            ExternalDataRule::NotRegularFile,
        ),
        (
            "negative offset",
            &[("location", "ok.bin"), ("offset", "-1")],
            "plain decimal",
            ExternalDataRule::Metadata,
        ),
        (
            "offset with sign",
            &[("location", "ok.bin"), ("offset", "+1")],
            "plain decimal",
            ExternalDataRule::Metadata,
        ),
        (
            "offset with space",
            &[("location", "ok.bin"), ("offset", " 1")],
            "plain decimal",
            ExternalDataRule::Metadata,
        ),
        (
            "hex offset",
            &[("location", "ok.bin"), ("offset", "0x1")],
            "plain decimal",
            ExternalDataRule::Metadata,
        ),
        (
            "overflowing offset",
            &[("location", "ok.bin"), ("offset", "18446744073709551616")],
            "64 bits",
            ExternalDataRule::Metadata,
        ),
        (
            "offset past end",
            &[("location", "ok.bin"), ("offset", "9")],
            "past the end",
            ExternalDataRule::OutOfRange,
        ),
        (
            "length past end",
            &[("location", "ok.bin"), ("offset", "6"), ("length", "4")],
            "past the end",
            ExternalDataRule::OutOfRange,
        ),
        (
            "sum overflows",
            &[
                ("location", "ok.bin"),
                ("offset", "4"),
                ("length", "18446744073709551615"),
            ],
            "past the end",
            ExternalDataRule::OutOfRange,
        ),
        (
            "length vs shape",
            &[("location", "ok.bin"), ("length", "3")],
            "does not match",
            ExternalDataRule::LengthMismatch,
        ),
        (
            "duplicate key",
            &[("location", "ok.bin"), ("location", "ok.bin")],
            "twice",
            ExternalDataRule::Metadata,
        ),
        (
            "missing location",
            &[("offset", "0")],
            "missing",
            ExternalDataRule::Metadata,
        ),
    ];
    for (what, entries, reason, rule) in cases {
        let err = load_error_with_entries(&dir, entries);
        assert!(
            matches!(err.kind(), ErrorKind::InvalidExternalData { rule: r, .. } if r == rule),
            "{what}: {err:?}"
        );
        assert_eq!(err.tensor(), Some("victim"), "{what}");
        assert!(err.to_string().contains(reason), "{what}: {err}");
        // The verification reports the same rule, with the error the load gave.
        let report = verify(&victim(entries), dir.dir(), &VerifyOptions::default()).unwrap();
        let rules: Vec<_> = report
            .problems
            .iter()
            .map(|p| (p.tensor.as_str(), p.rule))
            .collect();
        assert_eq!(rules, [("victim", *rule)], "{what}");
        assert_eq!(
            report.problems[0].error.to_string(),
            err.to_string(),
            "{what}"
        );
    }
    // A missing file is an I/O error naming the tensor and the file.
    let err = load_error_with_entries(&dir, &[("location", "missing.bin")]);
    assert_eq!(err.kind(), &ErrorKind::Io(std::io::ErrorKind::NotFound));
    let missing = victim(&[("location", "missing.bin")]);
    let report = verify(&missing, dir.dir(), &VerifyOptions::default()).unwrap();
    assert_eq!(report.problems[0].rule, ExternalDataRule::MissingFile);
    assert!(
        err.to_string().contains("missing.bin") && err.tensor() == Some("victim"),
        "{err}"
    );
    // basepath is tolerated and never used.
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto {
        name: Some("fine".into()),
        data_type: Some(DataType::Uint8.to_i32()),
        dims: vec![4],
        data_location: Some(DataLocation::External.into()),
        external_data: vec![
            StringStringEntryProto::new("basepath", outside.0.to_string_lossy()),
            StringStringEntryProto::new("location", "ok.bin"),
            StringStringEntryProto::new("offset", "4"),
        ],
        ..TensorProto::default()
    });
    let path = dir.path("fine.onnx");
    std::fs::write(&path, ModelProto::new(g, vec![]).encode_to_vec().unwrap()).unwrap();
    let m = io::load(&path).unwrap();
    assert_eq!(m.tensors()[0].raw_data.as_deref().unwrap(), b"efgh");
    // Nothing was ever read from outside.
    assert_eq!(
        std::fs::read(outside.path("secret.bin")).unwrap(),
        b"secret!!"
    );
}

#[test]
fn zero_length_and_to_the_end_tensors_load() {
    let dir = Scratch::new("zero");
    std::fs::write(dir.path("d.bin"), b"0123456789").unwrap();
    let mut g = GraphProto::named("g");
    g.initializer.push(external_tensor(
        "empty",
        vec![0],
        &[("location", "d.bin"), ("offset", "10"), ("length", "0")],
    ));
    g.initializer.push(external_tensor(
        "tail",
        vec![4],
        &[("location", "d.bin"), ("offset", "6")],
    ));
    let path = dir.path("m.onnx");
    std::fs::write(&path, ModelProto::new(g, vec![]).encode_to_vec().unwrap()).unwrap();
    for load in [
        Load::With(ParseOptions::default()),
        Load::Mapped(ParseOptions::default()),
    ] {
        let m = load.load(&path).unwrap();
        assert_eq!(m.tensors()[0].raw_data.as_deref().unwrap(), b"");
        assert_eq!(m.tensors()[1].raw_data.as_deref().unwrap(), b"6789");
    }
}

/// Fails the n-th step, once.
struct FailAt {
    n: u64,
    seen: AtomicU64,
}

impl FailAt {
    /// Fails step `n` (counting from 0).
    fn at(n: u64) -> Self {
        FailAt {
            n,
            seen: AtomicU64::new(0),
        }
    }

    /// How many steps a save of `m` with `options` over a model saved with the same
    /// options has: counted on such a save in a spare directory.
    fn steps_of(m: &Model, options: &SerializeOptions) -> u64 {
        let probe = FailAt::at(u64::MAX);
        let spare = Scratch::new("probe");
        io::save(m, spare.path("m.onnx"), options).unwrap();
        io::save_with_hook(m, &spare.path("m.onnx"), options, &probe).unwrap();
        probe.seen.load(Ordering::SeqCst)
    }
}

impl SaveHook for FailAt {
    fn before(&self, step: SaveStep) -> std::io::Result<()> {
        if self.seen.fetch_add(1, Ordering::SeqCst) == self.n {
            return Err(std::io::Error::other(format!("injected at {step:?}")));
        }
        Ok(())
    }
}

#[test]
fn a_failed_external_save_leaves_the_old_model_and_its_data_loadable() {
    let dir = Scratch::new("atomic");
    let path = dir.path("m.onnx");
    let split = ExternalDataOptions::new("w.bin")
        .max_file_size(200_000)
        .alignment(64);
    let options = SerializeOptions::default().external_data(split.clone());
    io::save(&model(12), &path, &options).unwrap();
    let before = dir.entries();
    // Count the steps of a full save of another model to the same place.
    let steps = FailAt::steps_of(&model(13), &options);
    assert!(steps > 6, "{steps}");
    for n in 0..steps {
        let hook = FailAt::at(n);
        assert!(
            io::save_with_hook(&model(13), &path, &options, &hook).is_err(),
            "step {n}"
        );
        assert_eq!(
            io::load(&path).unwrap(),
            model(12),
            "old model broken by a failure at step {n} of {steps}"
        );
        assert_eq!(
            dir.entries(),
            before,
            "files left behind by a failure at step {n}"
        );
    }
    // Successful saves over the old one replace its data files under their names.
    for m in [13, 14] {
        let saved = io::save(&model(m), &path, &options).unwrap();
        assert_eq!(io::load(&path).unwrap(), model(m));
        assert_eq!(dir.entries(), before);
        let mut written: Vec<String> = saved
            .paths()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        written.sort();
        assert_eq!(written, before);
    }
}

#[test]
fn a_symlink_planted_at_a_data_file_name_is_kept_or_replaced_never_followed() {
    let dir = Scratch::new("planted");
    let outside = Scratch::new("victim");
    let victim = outside.path("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path("w.bin")).unwrap();
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    // Not the data of the model being replaced (there is none): refused, left as it is.
    let err = io::save(&model(15), &path, &options).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Io(std::io::ErrorKind::AlreadyExists)
    );
    assert!(std::fs::symlink_metadata(dir.path("w.bin"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(dir.entries(), ["w.bin"]);
    // Allowed: the link itself is replaced, its target untouched.
    io::save(&model(15), &path, &options.replace_data_files(true)).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!std::fs::symlink_metadata(dir.path("w.bin"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(io::load(&path).unwrap(), model(15));
}

#[test]
fn a_data_file_name_taken_by_a_directory_fails_the_save_and_keeps_the_old_model() {
    let dir = Scratch::new("dirplanted");
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(16), &path, &options).unwrap();
    // The next save writes to `v.bin`: a directory is there.
    std::fs::create_dir(dir.path("v.bin")).unwrap();
    std::fs::write(dir.path("v.bin").join("keep.txt"), b"mine").unwrap();
    let before = dir.entries();
    let to_v = SerializeOptions::default().external_data(ExternalDataOptions::new("v.bin"));
    for (sync, replace) in [(true, false), (false, false), (true, true), (false, true)] {
        let options = to_v.clone().sync(sync).replace_data_files(replace);
        let err = io::save(&model(17), &path, &options).unwrap_err();
        assert!(err.to_string().contains("v.bin"), "{err}");
        assert_eq!(io::load(&path).unwrap(), model(16));
        assert_eq!(dir.entries(), before, "sync {sync}");
        assert_eq!(
            std::fs::read(dir.path("v.bin").join("keep.txt")).unwrap(),
            b"mine"
        );
    }
    // A stale file there is replaced when allowed, with or without `sync`.
    std::fs::remove_dir_all(dir.path("v.bin")).unwrap();
    std::fs::write(dir.path("v.bin"), b"stale").unwrap();
    io::save(
        &model(17),
        &path,
        &to_v.clone().sync(false).replace_data_files(true),
    )
    .unwrap();
    assert_eq!(io::load(&path).unwrap(), model(17));
    io::save(&model(18), &path, &to_v).unwrap();
    assert_eq!(io::load(&path).unwrap(), model(18));
    // The model no longer uses `w.bin`; it stays (another model may share it).
    assert_eq!(dir.entries(), ["m.onnx", "v.bin", "w.bin"]);
}

#[test]
fn a_fifo_at_a_data_file_name_is_refused_without_blocking_the_save() {
    let dir = Scratch::new("fifo");
    let path = dir.path("m.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(21), &path, &options).unwrap();
    // The model's own data file replaced by a FIFO, and a FIFO at another name.
    std::fs::remove_file(dir.path("w.bin")).unwrap();
    for name in ["w.bin", "v.bin"] {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path(name))
            .status()
            .expect("run mkfifo");
        assert!(made.success());
    }
    // Nothing opens the FIFOs for writing: a blocking open of one would hang here. None
    // is replaced by a file either (as no device or FIFO is): the save fails naming it.
    let e = io::save(&model(22), &path, &options).unwrap_err();
    assert!(e.to_string().contains("the path is a FIFO"), "{e}");
    let to_v = SerializeOptions::default()
        .external_data(ExternalDataOptions::new("v.bin"))
        .replace_data_files(true);
    let e = io::save(&model(22), &path, &to_v).unwrap_err();
    assert!(e.to_string().contains("the path is a FIFO"), "{e}");
    use std::os::unix::fs::FileTypeExt;
    for name in ["w.bin", "v.bin"] {
        let kind = std::fs::symlink_metadata(dir.path(name))
            .unwrap()
            .file_type();
        assert!(kind.is_fifo());
    }
    assert_eq!(dir.entries(), ["m.onnx", "v.bin", "w.bin"]);
}

#[test]
fn bad_external_options_are_errors() {
    let dir = Scratch::new("badopts");
    let path = dir.path("m.onnx");
    for ext in [
        ExternalDataOptions::new("w.bin").alignment(1000),
        ExternalDataOptions::new("w.bin").max_file_size(0),
        ExternalDataOptions::new(""),
        ExternalDataOptions::new("/"),
    ] {
        let err = io::save(
            &model(16),
            &path,
            &SerializeOptions::default().external_data(ext.clone()),
        )
        .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidOption { .. }),
            "{ext:?}: {err}"
        );
    }
    assert!(dir.entries().is_empty());
    // In-memory saves have no directory for data files: an error, not a model whose
    // external data silently stayed inline.
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    for err in [
        io::save_to_vec(&model(16), &options).unwrap_err(),
        io::save_to_writer(&model(16), Vec::new(), &options).unwrap_err(),
    ] {
        assert!(matches!(
            err.kind(),
            ErrorKind::InvalidOption {
                name: "external_data",
                ..
            }
        ));
    }
}

#[test]
fn converting_next_to_the_input_never_overwrites_the_files_it_reads() {
    let dir = Scratch::new("sibling");
    let input = dir.path("in.onnx");
    let options = SerializeOptions::default().external_data(ExternalDataOptions::new("w.bin"));
    io::save(&model(17), &input, &options).unwrap();
    // Lazy load (weights stay in in.onnx's w.bin), then save a sibling with the same
    // data file name: w.bin is in.onnx's data, read by this save: refused.
    let lazy = io::load_with(&input, &ParseOptions::default().structure_only(true)).unwrap();
    let output = dir.path("out.onnx");
    let err = io::save(&lazy, &output, &options).unwrap_err();
    assert!(err.to_string().contains("reads the weights from"), "{err}");
    assert_eq!(io::load(&input).unwrap(), model(17));
    assert!(!output.exists());
    // Allowed to replace data files, still not the one it reads: that would break
    // in.onnx. Another name works.
    let err = io::save(&lazy, &output, &options.clone().replace_data_files(true)).unwrap_err();
    assert!(err.to_string().contains("reads the weights from"), "{err}");
    let other = SerializeOptions::default().external_data(ExternalDataOptions::new("out.bin"));
    io::save(&lazy, &output, &other).unwrap();
    assert_eq!(io::load(&output).unwrap(), model(17));
    assert_eq!(io::load(&input).unwrap(), model(17));
    assert_eq!(dir.entries(), ["in.onnx", "out.bin", "out.onnx", "w.bin"]);
}

#[test]
fn a_save_never_drops_the_weights_of_a_lazily_loaded_tensor() {
    let dir = Scratch::new("nodrop");
    let path = dir.path("m.onnx");
    // Some tensors external (>= 100 kB), others inline but large enough (> 1 kB) that a
    // structure-only load leaves them on disk too.
    let ext = ExternalDataOptions::new("w.bin").size_threshold(100_000);
    io::save(
        &model(18),
        &path,
        &SerializeOptions::default().external_data(ext),
    )
    .unwrap();
    let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    // A plain save keeps the layout: the external tensors stream to their file, the
    // inline ones are fetched; nothing is dropped and the model is not mutated.
    let out_dir = Scratch::new("nodrop-out");
    let out = out_dir.path("out.onnx");
    io::save(&lazy, &out, &SerializeOptions::default()).unwrap();
    assert_eq!(io::load(&out).unwrap(), model(18));
    assert!(lazy.tensors().iter().any(|t| t.lazy_data.is_some()));
    // In-memory saves cannot fetch into a view: they refuse, naming the tensor.
    let err = io::save_to_vec(&lazy, &SerializeOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::IncompleteModel { .. }),
        "{err}"
    );
    assert!(err.tensor().is_some());
}

#[test]
fn explicit_options_override_the_layout_a_lazy_model_came_with() {
    let dir = Scratch::new("relayout");
    let path = dir.path("m.onnx");
    io::save(
        &model(19),
        &path,
        &SerializeOptions::default().external_data(ExternalDataOptions::new("old.bin")),
    )
    .unwrap();
    let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    let out_dir = Scratch::new("relayout-out");
    let out = out_dir.path("m.onnx");
    io::save(
        &lazy,
        &out,
        &SerializeOptions::default()
            .external_data(ExternalDataOptions::new("new.bin").size_threshold(50_000)),
    )
    .unwrap();
    assert_eq!(out_dir.entries(), vec!["m.onnx", "new.bin"]);
    let locations: Vec<_> = external_locations(&raw_model(&out));
    // Only the tensors over the new threshold are external, all in new.bin.
    assert_eq!(
        locations
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        vec!["layer/2:w", "layer/4:w"]
    );
    assert!(locations.iter().all(|(_, l)| l == "new.bin"));
    assert_eq!(io::load(&out).unwrap(), model(19));
}

#[test]
fn serialize_options_alignment_aligns_external_offsets() {
    let dir = Scratch::new("save-alignment");
    let path = dir.path("m.onnx");
    let ext = ExternalDataOptions::new("w.bin").alignment(64);
    io::save(
        &model(1),
        &path,
        &SerializeOptions::default()
            .alignment(65536)
            .external_data(ext),
    )
    .unwrap();
    let m = raw_model(&path);
    let mut offsets = Vec::new();
    m.visit_tensors(|_, t| {
        if let Some(o) = t.external_data_value("offset") {
            offsets.push(o.parse::<u64>().unwrap());
        }
    });
    assert!(offsets.len() > 1);
    assert!(offsets.iter().all(|o| o % 65536 == 0), "{offsets:?}");
    assert_eq!(io::load(&path).unwrap(), model(1));
}

/// `convert_model_to_external_data` and a save with options choose the same tensors:
/// sparse tensors stay inline in both.
#[test]
fn marking_and_saving_agree_that_sparse_tensors_stay_inline() {
    let mut marked = model(2);
    let options = ExternalDataOptions::new("w.bin");
    convert_model_to_external_data(&mut marked, &options).unwrap();
    let marked_names: Vec<String> = external_locations(&marked)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        !marked_names.iter().any(|n| n.starts_with("sp_")),
        "{marked_names:?}"
    );
    let dir = Scratch::new("sparse-rule");
    let path = dir.path("m.onnx");
    io::save(
        &model(2),
        &path,
        &SerializeOptions::default().external_data(options),
    )
    .unwrap();
    let saved_names: Vec<String> = external_locations(&raw_model(&path))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(marked_names, saved_names);
}

#[test]
fn a_save_refuses_data_file_names_that_mean_something_else_elsewhere() {
    let dir = Scratch::new("save-foreign-names");
    for name in ["CON", "nul.bin", "w.bin:stream", "w.bin.", "_ORT_MEM_ADDR_"] {
        let ext = ExternalDataOptions::new(name);
        let err = io::save(
            &model(3),
            dir.path("m.onnx"),
            &SerializeOptions::default().external_data(ext),
        )
        .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidOption { .. }),
            "{name}: {err}"
        );
    }
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

#[test]
fn verify_reports_every_tensor_its_files_checksums_overlaps_and_aliasing() {
    let dir = Scratch::new("verify-all");
    let data: Vec<u8> = (0u8..64).collect();
    std::fs::write(dir.path("w.bin"), &data).unwrap();
    // Another name of the same file: one file in the report.
    std::fs::hard_link(dir.path("w.bin"), dir.path("same.bin")).unwrap();
    let good_sum = sha1_smol_like::digest_hex(&data);
    let wrong_sum = "0".repeat(40);
    let mut g = GraphProto::named("g");
    let t = |name: &str, entries: &[(&str, &str)], n: i64| external_tensor(name, vec![n], entries);
    g.initializer.push(t(
        "a",
        &[
            ("location", "w.bin"),
            ("length", "16"),
            ("checksum", &good_sum),
        ],
        16,
    ));
    g.initializer.push(t(
        "b",
        &[
            ("location", "same.bin"),
            ("offset", "8"),
            ("length", "16"),
            ("checksum", &wrong_sum),
        ],
        16,
    ));
    g.initializer
        .push(t("c", &[("location", "missing.bin")], 4));
    g.initializer.push(t(
        "d",
        &[("location", "w.bin"), ("offset", "60"), ("length", "16")],
        16,
    ));
    g.initializer.push(t("e", &[("location", "../x.bin")], 4));
    let model = ModelProto::new(g, vec![]);

    let report = verify(&model, dir.dir(), &VerifyOptions::default().checksums(true)).unwrap();
    assert!(!report.is_ok());
    assert_eq!(report.tensors, 5);
    let problems: Vec<_> = report
        .problems
        .iter()
        .map(|p| (p.tensor.as_str(), p.rule))
        .collect();
    assert_eq!(
        problems,
        [
            ("c", ExternalDataRule::MissingFile),
            ("d", ExternalDataRule::OutOfRange),
            ("e", ExternalDataRule::Location),
            ("b", ExternalDataRule::ChecksumMismatch),
        ]
    );
    let mismatch = &report.problems[3].error;
    assert!(
        matches!(mismatch.kind(), ErrorKind::ChecksumMismatch { expected, actual }
            if *expected == wrong_sum && *actual == good_sum),
        "{mismatch}"
    );
    assert_eq!(report.files.len(), 1, "{:?}", report.files);
    let file = &report.files[0];
    assert_eq!(
        (file.location.as_path(), file.size, file.tensors),
        (std::path::Path::new("w.bin"), 64, 2)
    );
    assert_eq!(file.sha1.as_deref(), Some(good_sum.as_str()));
    assert_eq!(report.checksums_verified, 2);
    // `a` (0..16) and `b` (8..24 of the same file) share bytes 8..16: listed, but within
    // the file's size, so not aliasing.
    let pairs: Vec<_> = report
        .overlaps
        .pairs
        .iter()
        .map(|o| (o.first.as_str(), o.second.as_str(), o.start, o.end))
        .collect();
    assert_eq!(pairs, [("a", "b", 8, 16)]);

    // Without checksums, no file is read.
    let quick = verify(&model, dir.dir(), &VerifyOptions::default()).unwrap();
    assert_eq!(quick.problems.len(), 3);
    assert_eq!(
        (quick.checksums_verified, quick.files[0].sha1.clone()),
        (0, None)
    );

    // Ten tensors on the same 64 bytes: aliasing, unless allowed.
    let mut g = GraphProto::named("g");
    for i in 0..10 {
        g.initializer
            .push(t(&format!("t{i}"), &[("location", "w.bin")], 64));
    }
    let aliased = ModelProto::new(g, vec![]);
    let report = verify(&aliased, dir.dir(), &VerifyOptions::default()).unwrap();
    let problems: Vec<_> = report
        .problems
        .iter()
        .map(|p| (p.tensor.as_str(), p.rule))
        .collect();
    assert_eq!(problems, [("t0", ExternalDataRule::Aliasing)]);
    assert_eq!(report.overlaps.total, 45);
    assert_eq!(report.overlaps.pairs.len(), 20);
    let allowed = VerifyOptions::default()
        .allow_aliasing(true)
        .overlaps_listed(3);
    let report = verify(&aliased, dir.dir(), &allowed).unwrap();
    assert!(report.is_ok());
    assert_eq!(
        (report.overlaps.pairs.len(), report.overlaps.total),
        (3, 45)
    );
    // The load refuses the same model with the same typed rule.
    let path = dir.path("aliased.onnx");
    std::fs::write(&path, aliased.encode_to_vec().unwrap()).unwrap();
    let e = io::load(&path).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::InvalidExternalData {
                rule: ExternalDataRule::Aliasing,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn encoding_a_structure_only_model_refuses_instead_of_dropping_its_weights() {
    let dir = Scratch::new("lazy-encode");
    let path = dir.path("m.onnx");
    io::save(&model(40), &path, &SerializeOptions::default()).unwrap();
    let mut lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    for err in [
        lazy.encode_to_vec().unwrap_err(),
        lazy.graph.as_ref().unwrap().encode_to_vec().unwrap_err(),
        io::save_to_vec(&lazy, &SerializeOptions::default()).unwrap_err(),
    ] {
        assert!(
            matches!(err.kind(), ErrorKind::IncompleteModel { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("structure-only"), "{err}");
    }
    // A save copies them; read into memory, they encode.
    io::save(&lazy, dir.path("copy.onnx"), &SerializeOptions::default()).unwrap();
    assert_eq!(io::load(dir.path("copy.onnx")).unwrap(), model(40));
    io::materialize_lazy_data(&mut lazy).unwrap();
    assert_eq!(lazy.encode_to_vec().unwrap(), std::fs::read(&path).unwrap());
}
