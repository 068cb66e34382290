//! Memory-mapping hazards, each shown in a child process: the test
//! binary re-runs itself with `--exact <test>` and an environment variable that selects
//! the child's part, so that a crash ends the child, never the test run.
//!
//! What the tests establish (Linux):
//!
//! * A mapped model reads its weights from the mapped file. If another process
//!   truncates that file, reading a weight from a vanished page raises `SIGBUS` and the
//!   process dies: asserted below. If another process rewrites the file in place, the
//!   model's bytes change under it (the map is shared with the page cache): asserted
//!   below too. No library can prevent either, which is why `io::load_mapped` is an
//!   `unsafe fn` (these tests break its contract on purpose, in a child process).
//! * The safe loads are unaffected: the default (owned) load read the file into its own
//!   memory and keeps its weights; a structure-only load never maps the file (not even
//!   while decoding: a truncation then is an I/O error), and a fetch after the
//!   truncation returns a typed `Truncated` error naming the file.
//! * Saving over a mapped file is safe: `io::save` writes a new file and renames it over
//!   the old path (a new inode), so a process that maps the old file keeps reading the
//!   old, complete bytes.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

mod hardening;

use hardening::{child_of, say, tell_and_wait, ChildRun, Scratch};
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light::{Bytes, ErrorKind};
use onnx_light_tests::mapped::load_mapped;

#[cfg(target_os = "linux")]
const SIGBUS: i32 = 7;
#[cfg(not(target_os = "linux"))]
const SIGBUS: i32 = 10;

/// A model whose "big" tensor spans 64 pages, well inside the file.
fn model(seed: u8) -> Model {
    let mut g = GraphProto::named("mapped");
    g.initializer.push(TensorProto::from_raw(
        "small",
        DataType::Uint8,
        [16],
        vec![seed; 16],
    ));
    let big: Vec<u8> = (0..256 * 1024u32).map(|i| (i as u8) ^ seed).collect();
    g.initializer.push(TensorProto::from_raw(
        "big",
        DataType::Uint8,
        [256 * 1024],
        big,
    ));
    g.initializer.push(TensorProto::from_raw(
        "tail",
        DataType::Uint8,
        [4096],
        vec![seed.wrapping_add(1); 4096],
    ));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn big(m: &Model) -> &Bytes<'static> {
    m.graph.as_ref().unwrap().initializer[1]
        .raw_data
        .as_ref()
        .unwrap()
}

/// Sums the bytes one by one, so that every page is touched.
fn checksum(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |s, &x| {
        s.wrapping_mul(31)
            .wrapping_add(u64::from(std::hint::black_box(x)))
    })
}

fn saved(dir: &Scratch, seed: u8) -> PathBuf {
    let path = dir.path("m.onnx");
    io::save(&model(seed), &path, &SerializeOptions::default()).unwrap();
    path
}

#[test]
fn a_mapped_file_truncated_by_another_process_kills_the_reader_with_sigbus() {
    const TEST: &str = "a_mapped_file_truncated_by_another_process_kills_the_reader_with_sigbus";
    if let Some(path) = child_of(TEST) {
        let m = load_mapped(&path, &ParseOptions::default()).unwrap();
        assert!(big(&m).is_shared(), "the weights are slices of the map");
        assert_eq!(checksum(big(&m)), checksum(big(&model(1))));
        tell_and_wait("MAPPED");
        // The parent has truncated the file: this read touches vanished pages.
        let sum = checksum(big(&m));
        say(&format!("SURVIVED {sum}"));
        return;
    }
    let dir = Scratch::new("mmap-sigbus");
    let path = saved(&dir, 1);
    let mut child = ChildRun::spawn(TEST, &path);
    child.expect("MAPPED");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    child.go();
    let (status, out, err) = child.finish();
    assert!(!out.contains("SURVIVED"), "{out}");
    assert_eq!(
        status.signal(),
        Some(SIGBUS),
        "the child should die of SIGBUS: {status:?}\n{out}\n{err}"
    );
}

#[test]
fn a_mapped_file_rewritten_in_place_changes_the_no_copy_models_bytes() {
    const TEST: &str = "a_mapped_file_rewritten_in_place_changes_the_no_copy_models_bytes";
    if let Some(path) = child_of(TEST) {
        let m = load_mapped(&path, &ParseOptions::default()).unwrap();
        let owned = io::load(&path).unwrap();
        let before = checksum(big(&m));
        tell_and_wait("MAPPED");
        // The parent rewrote the file in place (same inode, same size): the mapped
        // model sees the new bytes; the owned model does not.
        let changed = checksum(big(&m)) != before;
        assert_eq!(owned, model(2));
        say(if changed { "CHANGED" } else { "UNCHANGED" });
        return;
    }
    let dir = Scratch::new("mmap-rewrite");
    let path = saved(&dir, 2);
    let ino = std::fs::metadata(&path).unwrap().ino();
    let mut child = ChildRun::spawn(TEST, &path);
    child.expect("MAPPED");
    // What a naive save does: open the same file and write over it (here with the
    // bytes of another model of the same size).
    let other = model(3).encode_to_vec().unwrap();
    std::fs::write(&path, &other).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), ino, "same inode");
    child.go();
    let (status, out, err) = child.finish();
    assert!(status.success(), "{status:?}\n{out}\n{err}");
    assert!(out.contains("\nCHANGED\n"), "{out}");
}

#[test]
fn owned_and_structure_only_loads_survive_the_truncation_of_their_file() {
    const TEST: &str = "owned_and_structure_only_loads_survive_the_truncation_of_their_file";
    if let Some(path) = child_of(TEST) {
        let owned = io::load(&path).unwrap();
        let sequential = io::load_with(&path, &ParseOptions::default().num_threads(1)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let from_bytes = io::load_from_bytes(&bytes, &ParseOptions::default()).unwrap();
        let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
        let lazy_big = lazy.graph.as_ref().unwrap().initializer[1]
            .lazy_data
            .clone()
            .unwrap();
        assert_eq!(lazy_big.fetch().unwrap(), *big(&model(4)));
        tell_and_wait("LOADED");
        // The file is now empty.
        for m in [&owned, &sequential, &from_bytes] {
            assert_eq!(checksum(big(m)), checksum(big(&model(4))));
            assert_eq!(*m, model(4));
        }
        // The structure and the small payloads were loaded; the weights are fetched
        // on demand, and the fetch reports the truncation.
        assert_eq!(
            lazy.graph.as_ref().unwrap().initializer[0]
                .raw_data
                .as_deref(),
            Some(&[4u8; 16][..])
        );
        let e = lazy_big.fetch().unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Truncated { needed, remaining: 0 } if *needed == 256 * 1024),
            "{e}"
        );
        assert_eq!(e.file(), Some(path.as_path()));
        let mut all = lazy.clone();
        let e = io::materialize_lazy_data(&mut all).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
        assert_eq!(e.tensor(), Some("big"));
        say("SAFE");
        return;
    }
    let dir = Scratch::new("mmap-safe");
    let path = saved(&dir, 4);
    let mut child = ChildRun::spawn(TEST, &path);
    child.expect("LOADED");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    child.go();
    let (status, out, err) = child.finish();
    assert!(status.success(), "{status:?}\n{out}\n{err}");
    assert!(out.contains("\nSAFE\n"), "{out}");
}

#[test]
fn saving_over_a_file_mapped_by_another_process_leaves_its_model_intact() {
    const TEST: &str = "saving_over_a_file_mapped_by_another_process_leaves_its_model_intact";
    if let Some(path) = child_of(TEST) {
        let m = load_mapped(&path, &ParseOptions::default()).unwrap();
        assert!(big(&m).is_shared());
        tell_and_wait("MAPPED");
        // The parent saved two other models (of other sizes) over the path, then
        // truncated the new file: the old inode, still mapped, is untouched.
        assert_eq!(m, model(5));
        assert_eq!(checksum(big(&m)), checksum(big(&model(5))));
        // The child itself saving over the file it maps is just as safe.
        let mut g = model(6);
        g.graph.as_mut().unwrap().initializer.pop();
        io::save(&g, &path, &SerializeOptions::default()).unwrap();
        assert_eq!(m, model(5));
        assert_eq!(io::load(&path).unwrap(), g);
        say("INTACT");
        return;
    }
    let dir = Scratch::new("mmap-save-over");
    let path = saved(&dir, 5);
    let ino = std::fs::metadata(&path).unwrap().ino();
    let mut child = ChildRun::spawn(TEST, &path);
    child.expect("MAPPED");
    let mut smaller = model(7);
    smaller.graph.as_mut().unwrap().initializer.remove(1);
    io::save(&smaller, &path, &SerializeOptions::default()).unwrap();
    assert_ne!(std::fs::metadata(&path).unwrap().ino(), ino, "a new inode");
    io::save(
        &model(8),
        &path,
        &SerializeOptions::default().num_threads(2),
    )
    .unwrap();
    // Even destroying the new file cannot reach the old, mapped one.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    child.go();
    let (status, out, err) = child.finish();
    assert!(status.success(), "{status:?}\n{out}\n{err}");
    assert!(out.contains("\nINTACT\n"), "{out}");
}
