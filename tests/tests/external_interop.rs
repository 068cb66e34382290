//! External data against the official `onnx` package and `onnxruntime`, both ways
//! (`tests/python/external_interop.py` is the Python side).
//!
//! The model: initializers of many data types (float32/16, bfloat16, double, int64/32/8,
//! uint8, bool, float8, uint4, int4, float4, uint2, zero-length, string), a sparse
//! initializer, attribute tensors (`t`, `tensors`, `sparse_value`), If/Loop bodies with
//! their own initializers and Constants, and a model-local function with a Constant.
//! Both sides print the same canonical summary: the whole model (onnx_summary rules)
//! and one line per tensor (site, name, data type, dims, payload length and CRC-32).
//!
//! * `onnx_written_external_data_loads_equal_in_every_mode`: every variant onnx writes
//!   (one file, one file per tensor, size thresholds 0 / 1024 / 4096 / none,
//!   `convert_attribute`, data in `sub/`, sparse tensors written with onnx's helpers,
//!   `checksum` and `basepath` keys) loads equal to `onnx.load` of the same files, in
//!   copy, single-threaded aligned copy, no-copy, lazy (then materialized), later
//!   (`load_external_data_for_model`) and moved-model (`external_data_dir`) modes, and
//!   with checksum verification where checksums exist.
//! * `our_external_data_loads_in_onnx_and_passes_the_checker`: what we write (one file
//!   4096-aligned, split with `max_file_size`, per tensor, attribute tensors, marked with
//!   `convert_model_to_external_data`, re-saved from lazy and no-copy loads) has the
//!   layout asked for, loads in `onnx.load` equal to the original, and passes
//!   `onnx.checker.check_model(path)`.
//! * `split_aligned_model_runs_in_onnxruntime_like_the_original`: an MLP (MatMul + Add +
//!   Relu, three 256x256 float layers) saved with split, 4096-aligned external data runs
//!   in onnxruntime with the outputs of the single-file model and of numpy.
//! * `onnx_written_data_maps_as_shared_slices`: in no-copy mode every tensor onnx wrote
//!   external is a `Shared` slice of its data file's one map, at the offset and length
//!   onnx recorded, with the file's bytes.

mod onnx_support;

use onnx_light_tests::scratch::Scratch;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use onnx_light::io::external::{convert_model_to_external_data, ExternalDataOptions};
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::Bytes;
use onnx_light_tests::mapped::load_mapped;
use onnx_light_tests::python::{python_dir, run_python};

use onnx_support::summary;

// ---------------------------------------------------------------------------------------
// Working directories and the Python side.

/// Runs the script with `args`; its stdout. Panics (with the output) when it fails.
fn python(args: &[&OsStr]) -> String {
    let out = run_python(&python_dir().join("external_interop.py"), args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn read_lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs the generator into `dir`; the case names.
fn generate(dir: &Scratch) -> Vec<String> {
    python(&["generate".as_ref(), dir.0.as_os_str()]);
    read_lines(&dir.path("cases.txt"))
}

// ---------------------------------------------------------------------------------------
// The canonical summary (see external_interop.py).

fn site_tag(site: TensorSite) -> &'static str {
    match site {
        TensorSite::Initializer => "init",
        TensorSite::SparseInitializer => "sparse",
        TensorSite::Attribute => "attr",
        TensorSite::SparseAttribute => "sparse_attr",
        _ => "other",
    }
}

/// A name as onnx_summary.py's `q` writes it.
fn q(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-');
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("x'{}'", onnx_support::hex(s.as_bytes()))
    }
}

fn tensor_line(site: TensorSite, t: &TensorProto<'_>) -> String {
    let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
    let raw = match &t.raw_data {
        Some(b) => format!("raw={}#{:08x}", b.len(), summary::crc32(b)),
        None => "raw=-".to_string(),
    };
    let mut line = format!(
        "T {} {} dt={} dims={} {raw}",
        site_tag(site),
        q(t.name()),
        t.data_type(),
        dims.join(",")
    );
    if t.is_external() {
        line.push_str(" ext");
    }
    line
}

fn summary_lines(m: &ModelProto<'_>) -> Vec<String> {
    let mut lines = vec![format!("M {}", summary::model(m))];
    m.visit_tensors(|site, t| lines.push(tensor_line(site, t)));
    lines
}

/// `Err` with the first differing line.
fn compare(expected: &[String], actual: &[String]) -> Result<(), String> {
    if expected == actual {
        return Ok(());
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e != a {
            let what = if i == 0 {
                onnx_support::describe_text_diff(e, a)
            } else {
                format!("\n      onnx: {e}\n      ours: {a}")
            };
            return Err(format!("summary line {i} differs: {what}"));
        }
    }
    Err(format!(
        "{} summary lines expected, {} found",
        expected.len(),
        actual.len()
    ))
}

// ---------------------------------------------------------------------------------------
// Where onnx put each external tensor.

/// One external tensor as onnx recorded it.
#[derive(Debug, Clone)]
struct Ext {
    /// Position in the `visit_tensors` traversal.
    index: usize,
    location: String,
    offset: Option<u64>,
    length: Option<u64>,
}

fn read_layout(path: &Path) -> Vec<Ext> {
    read_lines(path)
        .iter()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 4, "layout line {line:?}");
            let num = |s: &str| (s != "-").then(|| s.parse::<u64>().expect(line));
            Ext {
                index: f[0].parse().expect(line),
                location: f[1].to_string(),
                offset: num(f[2]),
                length: num(f[3]),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Loading onnx's files in every mode.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `io::load`.
    Copy,
    /// One thread, payloads copied to 64-aligned storage.
    CopyAligned,
    /// Each data file mapped (`io::load_mapped`).
    Mapped,
    /// Structure only; the weights fetched afterwards with `materialize_lazy_data`.
    Lazy,
    /// Without external data, then `load_external_data_for_model`.
    Later,
    /// The model file copied elsewhere, data found through `external_data_dir`.
    Moved,
    /// Copy with `verify_checksums` (only where onnx's files have checksums).
    Checksums,
}

const MODES: [Mode; 7] = [
    Mode::Copy,
    Mode::CopyAligned,
    Mode::Mapped,
    Mode::Lazy,
    Mode::Later,
    Mode::Moved,
    Mode::Checksums,
];

fn load_in_mode(case_dir: &Path, layout: &[Ext], mode: Mode) -> Result<Model, String> {
    let path = case_dir.join("model.onnx");
    let err = |what: &str, e: onnx_light::Error| format!("{what}: {e}");
    let external: BTreeSet<usize> = layout.iter().map(|e| e.index).collect();
    match mode {
        Mode::Copy | Mode::Checksums => {
            let options = ParseOptions::default().verify_checksums(mode == Mode::Checksums);
            io::load_with(&path, &options).map_err(|e| err("load", e))
        }
        Mode::CopyAligned => {
            let options = ParseOptions::default().num_threads(1).alignment(64);
            let m = io::load_with(&path, &options).map_err(|e| err("load", e))?;
            let mut misaligned = Vec::new();
            m.visit_tensors(|_, t| {
                if let Some(b) = &t.raw_data {
                    if b.len() >= 1024 && !(b.as_ptr() as usize).is_multiple_of(64) {
                        misaligned.push(t.name().to_string());
                    }
                }
            });
            if !misaligned.is_empty() {
                return Err(format!("payloads not 64-aligned: {misaligned:?}"));
            }
            Ok(m)
        }
        Mode::Mapped => load_mapped(&path, &ParseOptions::default()).map_err(|e| err("load", e)),
        Mode::Lazy => {
            let mut m = io::load_with(&path, &ParseOptions::default().structure_only(true))
                .map_err(|e| err("load", e))?;
            // Nothing of the external data is read yet: each such tensor is lazy, the
            // length onnx recorded, and still marked external.
            let mut problems = Vec::new();
            let mut i = 0usize;
            m.visit_tensors(|_, t| {
                if let Some(e) = layout.iter().find(|e| e.index == i) {
                    let len = t.lazy_data.as_ref().map(|l| l.len());
                    if t.raw_data.is_some() || len.is_none() || !t.is_external() {
                        problems.push(format!("{} is not lazy and external", t.name()));
                    } else if e.length.is_some() && len != e.length {
                        problems.push(format!("{}: lazy length {len:?} vs {e:?}", t.name()));
                    }
                }
                i += 1;
            });
            if !problems.is_empty() {
                return Err(problems.join("; "));
            }
            io::materialize_lazy_data(&mut m).map_err(|e| err("materialize", e))?;
            // Lazy loads keep the external metadata; the bytes are now in memory.
            let mut i = 0usize;
            m.visit_tensors_mut(|_, t| {
                if external.contains(&i) {
                    t.data_location = None;
                    t.external_data.clear();
                }
                i += 1;
            });
            Ok(m)
        }
        Mode::Later => {
            let mut m = io::load_with(&path, &ParseOptions::default().load_external_data(false))
                .map_err(|e| err("load", e))?;
            let mut i = 0usize;
            let mut problems = Vec::new();
            m.visit_tensors(|_, t| {
                if external.contains(&i) && (!t.is_external() || t.raw_data.is_some()) {
                    problems.push(format!("{} has its data before it was loaded", t.name()));
                }
                i += 1;
            });
            if !problems.is_empty() {
                return Err(problems.join("; "));
            }
            io::load_external_data_for_model(&mut m, case_dir, &ParseOptions::default())
                .map_err(|e| err("load_external_data_for_model", e))?;
            Ok(m)
        }
        Mode::Moved => {
            let elsewhere = case_dir.with_extension("moved");
            fs::create_dir_all(&elsewhere).map_err(|e| e.to_string())?;
            let moved = elsewhere.join("model.onnx");
            fs::copy(&path, &moved).map_err(|e| e.to_string())?;
            if !layout.is_empty() && io::load(&moved).is_ok() {
                return Err("the moved model loaded without its data directory".into());
            }
            io::load_with(&moved, &ParseOptions::default().external_data_dir(case_dir))
                .map_err(|e| err("load with external_data_dir", e))
        }
    }
}

#[test]
fn onnx_written_external_data_loads_equal_in_every_mode() {
    let dir = Scratch::new("external-interop-onnx-written");
    let cases = generate(&dir);
    assert!(cases.len() >= 10, "{cases:?}");
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for case in &cases {
        let case_dir = dir.path(case);
        let expected = read_lines(&case_dir.join("expected.txt"));
        let layout = read_layout(&case_dir.join("layout.txt"));
        let has_checksums = case == "checksum";
        for mode in MODES {
            if mode == Mode::Checksums && !has_checksums {
                continue;
            }
            let result = load_in_mode(&case_dir, &layout, mode)
                .and_then(|m| compare(&expected, &summary_lines(&m)));
            if let Err(e) = result {
                failures.push(format!("{case} / {mode:?}: {e}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} loads differ from onnx.load:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// No-copy: Shared slices of one map per data file.

#[test]
fn onnx_written_data_maps_as_shared_slices() {
    let dir = Scratch::new("external-interop-shared");
    let cases = generate(&dir);
    let mut checked_tensors = 0usize;
    for case in &cases {
        let case_dir = dir.path(case);
        let layout = read_layout(&case_dir.join("layout.txt"));
        if layout.is_empty() {
            continue;
        }
        let m = load_mapped(case_dir.join("model.onnx"), &ParseOptions::default())
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let tensors = m.tensors();
        let mut files: HashMap<String, Vec<u8>> = HashMap::new();
        // location -> the owner's address; each file is mapped once, files apart.
        let mut owners: BTreeMap<String, usize> = BTreeMap::new();
        for e in &layout {
            let t = tensors[e.index];
            let what = format!("{case}: tensor {} ({e:?})", t.name());
            let Some(Bytes::Shared(s)) = &t.raw_data else {
                panic!(
                    "{what}: not a Shared slice: {:?}",
                    t.raw_data.as_ref().map(|b| b.len())
                );
            };
            let file = files.entry(e.location.clone()).or_insert_with(|| {
                fs::read(case_dir.join(&e.location)).unwrap_or_else(|err| panic!("{what}: {err}"))
            });
            let offset = e.offset.unwrap_or(0) as usize;
            let len = e.length.map_or(file.len() - offset, |l| l as usize);
            assert_eq!(s.len(), len, "{what}: length");
            // The owner is the whole data file's map; the slice sits where onnx put it.
            assert_eq!(s.owner().bytes().len(), file.len(), "{what}: owner size");
            assert_eq!(s.offset_in_owner(), offset, "{what}: offset in the map");
            assert!(
                s.as_slice() == &file[offset..offset + len],
                "{what}: bytes differ from the file"
            );
            let owner = Arc::as_ptr(s.owner()) as *const () as usize;
            let previous = *owners.entry(e.location.clone()).or_insert(owner);
            assert_eq!(previous, owner, "{what}: file mapped more than once");
            checked_tensors += 1;
        }
        let distinct: BTreeSet<usize> = owners.values().copied().collect();
        assert_eq!(
            distinct.len(),
            owners.len(),
            "{case}: different files share a map: {owners:?}"
        );
        // And the bytes are onnx's (its summary, CRC-32 of each payload).
        let expected = read_lines(&case_dir.join("expected.txt"));
        if let Err(e) = compare(&expected, &summary_lines(&m)) {
            panic!("{case}: {e}");
        }
    }
    assert!(
        checked_tensors > 150,
        "only {checked_tensors} tensors checked"
    );
}

// ---------------------------------------------------------------------------------------
// What we write, read by onnx.

/// `(tensor name, site, location, offset, length)` of each external tensor of the model
/// at `path`, as recorded in the file.
fn our_layout(path: &Path) -> Layout {
    let m = io::load_with(path, &ParseOptions::default().load_external_data(false))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    m.visit_tensors(|site, t| {
        if t.is_external() {
            let value = |k: &str| t.external_data_value(k).unwrap_or_else(|| panic!("{k}"));
            out.push((
                t.name().to_string(),
                site,
                value("location").to_string(),
                value("offset").parse().unwrap(),
                value("length").parse().unwrap(),
            ));
        }
    });
    out
}

type Layout = Vec<(String, TensorSite, String, u64, u64)>;

fn is_sparse(site: TensorSite) -> bool {
    matches!(
        site,
        TensorSite::SparseInitializer | TensorSite::SparseAttribute
    )
}

/// The model's sparse tensors unmarked (after `convert_model_to_external_data`).
fn unmark_sparse(m: &mut Model) {
    m.visit_tensors_mut(|site, t| {
        if is_sparse(site) {
            t.data_location = None;
            t.external_data.clear();
        }
    });
}

#[test]
fn our_external_data_loads_in_onnx_and_passes_the_checker() {
    let dir = Scratch::new("external-interop-ours");
    generate(&dir);
    let original = io::load(dir.path("orig.onnx")).unwrap();
    let nosparse = io::load(dir.path("orig_nosparse.onnx")).unwrap();
    // Our reading of onnx's single-file models is what onnx has in memory.
    for (name, m) in [("orig", &original), ("orig_nosparse", &nosparse)] {
        compare(
            &read_lines(&dir.path(&format!("{name}.txt"))),
            &summary_lines(m),
        )
        .unwrap_or_else(|e| panic!("{name}.onnx: {e}"));
    }
    // (case, baseline, layout)
    let mut cases: Vec<(String, &str, Layout)> = Vec::new();
    let mut save =
        |case: &str, baseline: &'static str, model: &Model, options: &SerializeOptions| {
            let case_dir = dir.path(case);
            fs::create_dir_all(&case_dir).unwrap();
            let path = case_dir.join("model.onnx");
            io::save(model, &path, options).unwrap_or_else(|e| panic!("{case}: {e}"));
            let layout = our_layout(&path);
            assert!(!layout.is_empty(), "{case}: nothing went external");
            cases.push((case.to_string(), baseline, layout.clone()));
            layout
        };
    let ext = |e: ExternalDataOptions| SerializeOptions::default().external_data(e);
    let aligned = |layout: &Layout, case: &str| {
        for (name, _, _, offset, _) in layout {
            assert!(offset.is_multiple_of(4096), "{case}: {name} at {offset}");
        }
    };
    let max = 64 * 1024;
    let split = || {
        ExternalDataOptions::new("w.bin")
            .alignment(4096)
            .max_file_size(max)
    };

    for (suffix, baseline, model) in [
        ("", "orig", &original),
        ("_nosparse", "orig_nosparse", &nosparse),
    ] {
        // One file, 4096-aligned (the default alignment).
        let case = format!("ours_one{suffix}");
        let layout = save(
            &case,
            baseline,
            model,
            &ext(ExternalDataOptions::new("w.bin")),
        );
        assert!(layout.iter().all(|l| l.2 == "w.bin"), "{layout:?}");
        aligned(&layout, &case);

        // Split at 64 KiB, 4096-aligned: `w.bin`, `w.bin.1`, ...; a larger tensor alone.
        let case = format!("ours_split{suffix}");
        let layout = save(&case, baseline, model, &ext(split()));
        aligned(&layout, &case);
        let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
        for l in &layout {
            *per_file.entry(&l.2).or_default() += 1;
        }
        assert!(per_file.len() >= 3, "{per_file:?}");
        assert!(per_file.contains_key("w.bin") && per_file.contains_key("w.bin.1"));
        for (file, tensors) in &per_file {
            let size = fs::metadata(dir.path(&case).join(file)).unwrap().len();
            assert!(
                size <= max || *tensors == 1,
                "{file}: {size} bytes, {tensors} tensors"
            );
        }

        // One file per tensor.
        let case = format!("ours_per_tensor{suffix}");
        let layout = save(
            &case,
            baseline,
            model,
            &ext(ExternalDataOptions::new("unused").one_file_per_tensor(true)),
        );
        let files: BTreeSet<&str> = layout.iter().map(|l| l.2.as_str()).collect();
        assert_eq!(files.len(), layout.len(), "{layout:?}");

        // Attribute tensors too, every size (zero-length included), 64-aligned.
        let case = format!("ours_attributes{suffix}");
        let layout = save(
            &case,
            baseline,
            model,
            &ext(ExternalDataOptions::new("w.bin")
                .convert_attributes(true)
                .size_threshold(0)
                .alignment(64)),
        );
        assert!(layout.iter().any(|l| l.1 == TensorSite::Attribute));
        assert!(layout.iter().any(|l| l.4 == 0), "no zero-length tensor");

        // Split, aligned, per tensor and attributes at once.
        let case = format!("ours_per_tensor_split_attributes{suffix}");
        let layout = save(
            &case,
            baseline,
            model,
            &ext(ExternalDataOptions::new("w.bin")
                .one_file_per_tensor(true)
                .convert_attributes(true)
                .max_file_size(4096)
                .alignment(4096)),
        );
        assert!(layout.iter().any(|l| l.1 == TensorSite::Attribute));
        aligned(&layout, &case);
    }

    // Marked in memory first (onnx's convert_model_to_external_data), then saved; once
    // with the sparse tensors unmarked again, as onnx itself never moves them.
    let mut marked = original.clone();
    convert_model_to_external_data(
        &mut marked,
        &ExternalDataOptions::new("conv.bin").convert_attributes(true),
    )
    .unwrap();
    let layout = save(
        "ours_converted",
        "orig",
        &marked,
        &SerializeOptions::default(),
    );
    assert!(layout.iter().all(|l| l.2 == "conv.bin"), "{layout:?}");
    aligned(&layout, "ours_converted");
    unmark_sparse(&mut marked);
    let layout = save(
        "ours_converted_sparse_inline",
        "orig",
        &marked,
        &SerializeOptions::default(),
    );
    assert!(!layout.iter().any(|l| is_sparse(l.1)), "{layout:?}");
    let mut marked = original.clone();
    convert_model_to_external_data(
        &mut marked,
        &ExternalDataOptions::new("").one_file_per_tensor(true),
    )
    .unwrap();
    save(
        "ours_converted_per_tensor",
        "orig",
        &marked,
        &SerializeOptions::default(),
    );

    // Re-saved from a lazy load of onnx's per-tensor files (streamed from them), and
    // from a no-copy load of onnx's `sub/data.bin`.
    let lazy = io::load_with(
        dir.path("per_tensor").join("model.onnx"),
        &ParseOptions::default().structure_only(true),
    )
    .unwrap();
    let layout = save("ours_resaved_lazy", "orig", &lazy, &ext(split()));
    aligned(&layout, "ours_resaved_lazy");
    let mapped = load_mapped(
        dir.path("subdir").join("model.onnx"),
        &ParseOptions::default(),
    )
    .unwrap();
    let layout = save(
        "ours_resaved_no_copy",
        "orig",
        &mapped,
        &ext(split().convert_attributes(true)),
    );
    aligned(&layout, "ours_resaved_no_copy");

    let args_owned: Vec<String> = cases
        .iter()
        .map(|(case, baseline, _)| format!("{case}={baseline}"))
        .collect();
    let mut args: Vec<&OsStr> = vec!["verify".as_ref(), dir.0.as_os_str()];
    args.extend(args_owned.iter().map(OsStr::new));
    let out = python(&args);
    let mut notes = Vec::new();
    for (case, _, layout) in &cases {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{case} ok ")))
            .unwrap_or_else(|| panic!("{case} not verified:\n{out}"));
        let field = |k: &str| {
            line.split(' ')
                .find_map(|f| f.strip_prefix(&format!("{k}=")))
                .unwrap_or_else(|| panic!("{k} missing in {line:?}"))
        };
        let external: usize = field("external").parse().unwrap();
        assert_eq!(external, layout.len(), "{case}: onnx sees another layout");
        let sparse = layout.iter().filter(|l| is_sparse(l.1)).count();
        let left: usize = field("left_external").parse().unwrap();
        let checker = field("checker");
        // onnx.load skips sparse tensors (they were loaded with onnx's helper for the
        // comparison); its checker and onnxruntime refuse external sparse indices. Both
        // only where we wrote sparse tensors external; everything else strictly.
        assert_eq!(
            left, sparse,
            "{case}: onnx.load left other tensors external"
        );
        if sparse == 0 {
            assert_eq!(checker, "ok", "{case}: {line}");
        } else if checker != "ok" {
            notes.push(format!(
                "{case}: {sparse} sparse tensors external: onnx.load leaves them, checker {checker}"
            ));
        }
    }
    if !notes.is_empty() {
        eprintln!(
            "known interop gap (sparse tensors written external):\n{}",
            notes.join("\n")
        );
    }
}

// ---------------------------------------------------------------------------------------
// onnxruntime.

/// `n` floats in `[-scale, scale)` from a fixed xorshift sequence, little-endian.
fn floats(n: usize, seed: u64, scale: f32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(n * 4);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let unit = (s >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
        out.extend_from_slice(&((unit * 2.0 - 1.0) * scale).to_le_bytes());
    }
    out
}

/// `y = relu(relu(relu(x W0 + b0) W1 + b1) W2 + b2)`, x: [4, 256], W: 256x256 float32.
fn mlp() -> Model {
    let mut g = GraphProto::named("mlp");
    g.input
        .push(ValueInfoProto::tensor("x", DataType::Float, [4, 256]));
    let mut prev = "x".to_string();
    for i in 0..3u64 {
        let (w, b) = (format!("w{i}"), format!("b{i}"));
        g.initializer.push(TensorProto::from_raw(
            w.clone(),
            DataType::Float,
            [256, 256],
            floats(256 * 256, 2 * i + 1, 0.125),
        ));
        g.initializer.push(TensorProto::from_raw(
            b.clone(),
            DataType::Float,
            [256],
            floats(256, 2 * i + 2, 0.1),
        ));
        let (mm, add, out) = (format!("mm{i}"), format!("add{i}"), format!("h{i}"));
        g.node
            .push(NodeProto::new("MatMul", [prev.clone(), w], [mm.clone()]));
        g.node.push(NodeProto::new("Add", [mm, b], [add.clone()]));
        g.node.push(NodeProto::new("Relu", [add], [out.clone()]));
        prev = out;
    }
    g.output
        .push(ValueInfoProto::tensor(prev, DataType::Float, [4, 256]));
    let mut m = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    m.ir_version = Some(10);
    m
}

#[test]
fn split_aligned_model_runs_in_onnxruntime_like_the_original() {
    let dir = Scratch::new("external-interop-ort");
    let m = mlp();
    io::save(&m, dir.path("mlp.onnx"), &SerializeOptions::default()).unwrap();
    let split_dir = dir.path("mlp_split");
    fs::create_dir_all(&split_dir).unwrap();
    let path = split_dir.join("model.onnx");
    io::save(
        &m,
        &path,
        &SerializeOptions::default().external_data(
            ExternalDataOptions::new("weights.bin")
                .alignment(4096)
                .max_file_size(300_000),
        ),
    )
    .unwrap();
    // Every weight and bias is external, 4096-aligned, over three files.
    let layout = our_layout(&path);
    assert_eq!(layout.len(), 6, "{layout:?}");
    let files: BTreeSet<&str> = layout.iter().map(|l| l.2.as_str()).collect();
    assert_eq!(
        files,
        BTreeSet::from(["weights.bin", "weights.bin.1", "weights.bin.2"]),
        "{layout:?}"
    );
    assert!(
        layout.iter().all(|l| l.3.is_multiple_of(4096)),
        "{layout:?}"
    );
    assert!(fs::metadata(&path).unwrap().len() < 4096);
    let out = python(&["ort".as_ref(), dir.0.as_os_str()]);
    assert!(out.starts_with("ort ok "), "{out}");
    eprintln!("{}", out.trim_end());
}
