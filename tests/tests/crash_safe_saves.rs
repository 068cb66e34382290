//! Crash-safe saves under real crashes. `load_save.rs` and
//! `external_data.rs` inject an I/O error at every step of a save (`io::save_with_hook`)
//! and check the clean failure path. This file covers what a hook cannot: the process
//! dying (SIGKILL) at an arbitrary point, so that no cleanup code runs at all.
//!
//! A child process saves two models, A and B, alternately and without pause over the
//! same path (a single file, or a model with several split external-data files); the
//! parent kills it after a random delay, many times. After every kill the path must load
//! — owned, no-copy and structure-only — as exactly A or exactly B, never a mix of the
//! two, never a model whose data files are missing or half-written; or, with external
//! data, when the kill lands while data files the old model used are being replaced,
//! hold no model at all (the load fails loudly; the old model file is in the killed
//! process's hidden `.<name>.old-<pid>-<n>`). The other debris a crash may leave is the
//! killed process's own temporary files (`.<name>.tmp-<pid>-<n>`), which no model
//! refers to: with unnamed temporaries (`O_TMPFILE`, the default) only
//! when the kill lands between a finished file getting its name and its rename, with
//! named ones (the fallback, forced here through the save hook) at any point of a save.

use std::path::Path;
use std::time::Duration;

mod hardening;

use hardening::{child_of, say, ChildRun, Scratch};
use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light_tests::mapped::Load;

const ITERATIONS: usize = 40;

/// Model A (`seed` 0) or B (`seed` 1): the same shapes, different bytes everywhere, so
/// that any mix of the two shows.
fn model(seed: u8) -> Model {
    let mut g = GraphProto::named(format!("model-{seed}"));
    for i in 0..6u8 {
        g.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [600_000],
            vec![seed * 100 + i; 600_000],
        ));
    }
    g.node
        .push(NodeProto::new("Add", ["w0", "w1"], ["y"]).with_name(format!("add{seed}")));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn options(external: bool) -> SerializeOptions {
    let options = SerializeOptions::default().num_threads(2);
    if external {
        // Three data files of two tensors each.
        options.external_data(ExternalDataOptions::new("m.data").max_file_size(1_300_000))
    } else {
        options
    }
}

/// Which of the two models the path holds, loading it every way.
fn which(path: &Path, a: &Model, b: &Model) -> u8 {
    let mut seen = Vec::new();
    for load in [
        Load::With(ParseOptions::default()),
        Load::Mapped(ParseOptions::default()),
        Load::With(ParseOptions::default().structure_only(true)),
    ] {
        let mut m = load.load(path).unwrap_or_else(|e| panic!("{load:?}: {e}"));
        io::materialize_lazy_data(&mut m).unwrap();
        m.visit_tensors_mut(|_, t| {
            t.external_data.clear();
            t.data_location = None;
        });
        seen.push(if m == *a {
            0
        } else if m == *b {
            1
        } else {
            panic!("the saved model is neither A nor B")
        });
    }
    assert!(seen.iter().all(|&s| s == seen[0]));
    seen[0]
}

/// The hook that makes a save use named temporaries, the fallback.
struct NamedTemporaries;

impl io::SaveHook for NamedTemporaries {
    fn before(&self, _: io::SaveStep) -> std::io::Result<()> {
        Ok(())
    }
    fn unnamed_temporaries(&self) -> bool {
        false
    }
}

fn killed_at_random_points(test: &str, external: bool, named: bool) {
    if let Some(path) = child_of(test) {
        let (a, b) = (model(0), model(1));
        say("SAVING");
        for i in 0.. {
            let m = if i % 2 == 0 { &b } else { &a };
            if named {
                io::save_with_hook(m, &path, &options(external), &NamedTemporaries).unwrap();
            } else {
                io::save(m, &path, &options(external)).unwrap();
            }
        }
        return;
    }
    let dir = Scratch::new(if external {
        "crash-external"
    } else {
        "crash-single"
    });
    let path = dir.path("m.onnx");
    let (a, b) = (model(0), model(1));
    io::save(&a, &path, &options(external)).unwrap();
    // A small xorshift, seeded from the clock (printed, to replay a failure).
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {state}");
    let mut mid_save = 0;
    // A, B, or no model at the path.
    let mut outcomes = [0usize; 3];
    for _ in 0..ITERATIONS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut child = ChildRun::spawn(test, &path);
        child.expect("SAVING");
        let pid = child.id();
        std::thread::sleep(Duration::from_micros(state % 60_000));
        child.kill();
        // This child's, or an earlier killed child's that this one had not replaced yet.
        let aside = ".m.onnx.old-";
        let kept_aside = || {
            std::fs::read_dir(&dir.0)
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(aside))
        };
        if path.exists() {
            outcomes[usize::from(which(&path, &a, &b))] += 1;
        } else {
            assert!(external, "a single-file save always leaves a model");
            assert!(kept_aside(), "no model, and the old one was not kept aside");
            let err = io::load(&path).unwrap_err();
            assert_eq!(
                err.kind(),
                &onnx_light::ErrorKind::Io(std::io::ErrorKind::NotFound)
            );
            assert!(err.to_string().contains("was interrupted"), "{err}");
            outcomes[2] += 1;
        }
        // Debris: only the killed child's temporary files, and files it moved aside
        // (which the next save, learning from them which data files were the path's,
        // removes).
        for entry in std::fs::read_dir(&dir.0).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.contains(".old-") {
                assert!(name.starts_with(".m."), "{name}");
            } else if name.contains(".tmp-") {
                assert!(
                    name.contains(&format!(".tmp-{pid}-")),
                    "{name} is not the child's"
                );
                std::fs::remove_file(dir.path(&name)).unwrap();
                mid_save += 1;
            }
        }
    }
    println!("outcomes A/B/none: {outcomes:?}, temporary files left by kills: {mid_save}");
    if named {
        // The saves' temporaries are on disk most of the time: proof that the kills
        // landed in the middle of saves.
        assert!(mid_save > 0, "no kill landed in the middle of a save");
    } else {
        // Unnamed, they leave debris only when the kill lands in the short step
        // between naming a finished file and renaming it.
        assert!(
            mid_save < ITERATIONS / 2,
            "{mid_save} kills left temporary files"
        );
    }
    // The directory is still usable: a clean save over whatever is there works and
    // leaves no temporary file, nor any model a killed save moved aside.
    io::save(&b, &path, &options(external)).unwrap();
    assert_eq!(which(&path, &a, &b), 1);
    let temps = std::fs::read_dir(&dir.0)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count();
    assert_eq!(temps, 0);
    let asides: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".old-"))
        .collect();
    assert!(asides.is_empty(), "{asides:?}");
}

#[test]
fn a_single_file_save_killed_at_random_points_leaves_the_old_or_the_new_model() {
    killed_at_random_points(
        "a_single_file_save_killed_at_random_points_leaves_the_old_or_the_new_model",
        false,
        false,
    );
}

#[test]
fn an_external_data_save_killed_at_random_points_leaves_the_old_or_the_new_model() {
    killed_at_random_points(
        "an_external_data_save_killed_at_random_points_leaves_the_old_or_the_new_model",
        true,
        false,
    );
}

#[test]
fn a_save_with_named_temporaries_killed_at_random_points_leaves_the_old_or_the_new_model() {
    killed_at_random_points(
        "a_save_with_named_temporaries_killed_at_random_points_leaves_the_old_or_the_new_model",
        true,
        true,
    );
}
