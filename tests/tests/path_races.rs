//! Races against the file system while models load and save: a directory swapped for a
//! symbolic link between any two steps must never make a load read, or a save write,
//! outside the model's directory.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use onnx_light::io::{self, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::prelude::*;
use onnx_light_tests::scratch::Scratch;
use rustix::fs::{renameat_with, RenameFlags, CWD};

const LEN: usize = 4096;

/// A model whose one tensor lives in `sub/weights.bin`.
fn model_with_data_in_sub() -> Model {
    let mut t = TensorProto::from_raw("w", DataType::Uint8, [LEN as i64], Vec::<u8>::new());
    t.raw_data = None;
    t.data_location = Some(DataLocation::External.into());
    t.external_data = vec![
        StringStringEntryProto::new("location", "sub/weights.bin"),
        StringStringEntryProto::new("offset", "0"),
        StringStringEntryProto::new("length", LEN.to_string()),
    ];
    let mut g = GraphProto::named("g");
    g.initializer.push(t);
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

/// Loads the model 1,000 times while another thread swaps `sub` with a symbolic link to
/// a directory outside (`renameat2(RENAME_EXCHANGE)`, so one of the two is always
/// there). Each load must give the inside bytes or an error; never the outside bytes.
#[test]
fn swapping_a_directory_for_a_link_never_leaks_outside_bytes() {
    let dir = Scratch::new("race-load");
    let outside = Scratch::new("race-outside");
    std::fs::create_dir(dir.path("sub")).unwrap();
    std::fs::write(dir.path("sub/weights.bin"), [0x11u8; LEN]).unwrap();
    std::fs::write(outside.path("weights.bin"), [0x99u8; LEN]).unwrap();
    std::os::unix::fs::symlink(outside.dir(), dir.path("evil")).unwrap();
    let bytes = model_with_data_in_sub().encode_to_vec().unwrap();
    std::fs::write(dir.path("model.onnx"), bytes).unwrap();

    let stop = AtomicBool::new(false);
    let swaps = AtomicU64::new(0);
    let (mut inside, mut refused, mut leaks) = (0u32, 0u32, 0u32);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(
                    CWD,
                    dir.path("sub"),
                    CWD,
                    dir.path("evil"),
                    RenameFlags::EXCHANGE,
                )
                .expect("renameat2 RENAME_EXCHANGE");
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        });
        for _ in 0..1000 {
            match io::load(dir.path("model.onnx")) {
                Ok(m) => {
                    let raw = m.graph.as_ref().unwrap().initializer[0]
                        .raw_data
                        .as_deref()
                        .unwrap()
                        .to_vec();
                    if raw.iter().all(|&b| b == 0x11) {
                        inside += 1;
                    } else {
                        leaks += 1;
                    }
                }
                Err(_) => refused += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(
        swaps.load(Ordering::Relaxed) > 0,
        "the swapping thread never ran"
    );
    assert_eq!(
        leaks, 0,
        "{leaks} of 1000 loads read the outside file ({inside} inside, {refused} refused)"
    );
    assert_eq!(inside + refused, 1000);
}

/// A save with external data writes its data files and model into the directory it
/// was given even while a sibling directory is swapped with a link to elsewhere: the
/// outside directory stays empty.
#[test]
fn a_save_never_writes_through_a_swapped_directory() {
    let root = Scratch::new("race-save");
    let outside = Scratch::new("race-save-outside");
    std::fs::create_dir(root.path("out")).unwrap();
    std::os::unix::fs::symlink(outside.dir(), root.path("evil")).unwrap();
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "w",
        DataType::Uint8,
        [LEN as i64],
        vec![7u8; LEN],
    ));
    let model = ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)]);
    let ext = io::external::ExternalDataOptions::new("w.bin");
    let options = SerializeOptions::default().external_data(ext).sync(false);

    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let _ = renameat_with(
                    CWD,
                    root.path("out"),
                    CWD,
                    root.path("evil"),
                    RenameFlags::EXCHANGE,
                );
            }
        });
        for _ in 0..200 {
            // Either directory may be `out` at the moment of the call; what matters is
            // that one save's files all land in the one directory it opened.
            let _ = io::save(&model, root.path("out/m.onnx"), &options);
        }
        stop.store(true, Ordering::Relaxed);
    });
    // Whichever real directory each save opened, its files are complete there: no data
    // file without its model and no stray temporary in either place.
    for d in [root.path("out"), outside.dir().to_path_buf()] {
        let real = std::fs::canonicalize(&d).unwrap();
        let names: Vec<String> = std::fs::read_dir(&real)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with('.')),
            "temporary left in {}: {names:?}",
            real.display()
        );
        if names.iter().any(|n| n == "m.onnx") {
            let m = io::load(real.join("m.onnx")).unwrap();
            assert_eq!(m, model);
        }
    }
}

/// Every temporary file of a save is private (0600) while it is written, and the final
/// file gets ordinary permissions: observed from inside the save at each sync step. By
/// default the temporaries have no name at all while written (`O_TMPFILE`): nothing
/// shows in the directory; with named temporaries (the fallback) each is 0600.
#[test]
fn temporaries_are_unnamed_or_private_until_renamed() {
    use std::os::unix::fs::MetadataExt;
    struct Observe<'d> {
        dir: &'d std::path::Path,
        named: bool,
        syncs: std::sync::Mutex<usize>,
        temporaries: std::sync::Mutex<Vec<u32>>,
    }
    impl io::SaveHook for Observe<'_> {
        fn before(&self, step: io::SaveStep) -> std::io::Result<()> {
            if step == io::SaveStep::Sync {
                *self.syncs.lock().unwrap() += 1;
                for e in std::fs::read_dir(self.dir)? {
                    let e = e?;
                    if e.file_name().to_string_lossy().starts_with('.') {
                        let mode = e.metadata()?.mode() & 0o777;
                        self.temporaries.lock().unwrap().push(mode);
                    }
                }
            }
            Ok(())
        }
        fn unnamed_temporaries(&self) -> bool {
            !self.named
        }
    }
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "w",
        DataType::Uint8,
        [LEN as i64],
        vec![1u8; LEN],
    ));
    let model = ModelProto::new(g, vec![]);
    for named in [false, true] {
        let dir = Scratch::new("private-temps");
        let hook = Observe {
            dir: dir.dir(),
            named,
            syncs: Default::default(),
            temporaries: Default::default(),
        };
        let ext = io::external::ExternalDataOptions::new("w.bin");
        io::save_with_hook(
            &model,
            &dir.path("m.onnx"),
            &SerializeOptions::default().external_data(ext),
            &hook,
        )
        .unwrap();
        assert!(*hook.syncs.lock().unwrap() >= 2, "named {named}");
        let seen = hook.temporaries.into_inner().unwrap();
        if named {
            assert!(!seen.is_empty(), "no temporary file observed");
            assert!(seen.iter().all(|&m| m == 0o600), "{seen:?}");
        } else {
            assert!(seen.is_empty(), "named temporaries: {seen:?}");
        }
        for name in ["m.onnx", "w.bin"] {
            let mode = std::fs::metadata(dir.path(name)).unwrap().mode() & 0o777;
            assert_ne!(mode, 0o600, "{name} kept the temporary's mode");
            assert_eq!(mode & 0o022, 0, "{name}: {mode:o}");
        }
        assert_eq!(dir.entries(), ["m.onnx", "w.bin"]);
    }
}

/// A save of a model that reads its weights lazily from files in the target directory
/// never takes one of those files' names for its own data, however the target path is
/// spelled: the save is refused, and the files read stay intact.
#[test]
fn a_save_never_replaces_a_file_it_reads_however_the_target_is_spelled() {
    let dir = Scratch::new("identity-save");
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "w",
        DataType::Uint8,
        [LEN as i64],
        vec![3u8; LEN],
    ));
    let model = ModelProto::new(g, vec![]);
    io::save(&model, dir.path("in.onnx"), &SerializeOptions::default()).unwrap();
    let input = std::fs::read(dir.path("in.onnx")).unwrap();
    std::os::unix::fs::symlink(dir.dir(), dir.path("link")).unwrap();
    let abs = dir.dir().canonicalize().unwrap();
    let lazy = io::load_with(
        dir.path("in.onnx"),
        &io::ParseOptions::default().structure_only(true),
    )
    .unwrap();
    for (i, (target, why)) in [
        (dir.path("./out.onnx"), "reads the weights from"),
        (abs.join("out.onnx"), "reads the weights from"),
        (dir.path("link/out.onnx"), "reads the weights from"),
        (dir.path("link/./in.onnx"), "the model file itself"),
    ]
    .into_iter()
    .enumerate()
    {
        // Even allowed to replace data files: the input model is not one.
        let ext = io::external::ExternalDataOptions::new("in.onnx");
        let options = SerializeOptions::default()
            .external_data(ext)
            .sync(false)
            .replace_data_files(true);
        let err = io::save(&lazy, &target, &options).unwrap_err();
        assert!(err.to_string().contains(why), "{i}: {err}");
        assert_eq!(std::fs::read(dir.path("in.onnx")).unwrap(), input, "{i}");
    }
    assert_eq!(dir.entries(), ["in.onnx", "link"]);
    // The data file of a model being read lazily is never renamed over by the model.
    let ext = io::external::ExternalDataOptions::new("w.bin");
    io::save(
        &model,
        dir.path("e.onnx"),
        &SerializeOptions::default().external_data(ext),
    )
    .unwrap();
    let weights = std::fs::read(dir.path("w.bin")).unwrap();
    let lazy = io::load_with(
        dir.path("e.onnx"),
        &io::ParseOptions::default().structure_only(true),
    )
    .unwrap();
    let err = io::save(
        &lazy,
        dir.path("link/w.bin"),
        &SerializeOptions::default().external_data(io::external::ExternalDataOptions::new("x.bin")),
    )
    .unwrap_err();
    assert!(err.to_string().contains("destroy"), "{err}");
    assert_eq!(std::fs::read(dir.path("w.bin")).unwrap(), weights);
}

#[test]
fn a_save_never_replaces_a_device_a_fifo_or_a_socket() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Scratch::new("special-targets");
    let model = model_with_data_in_sub();
    let fifo = dir.path("pipe.onnx");
    rustix::fs::mkfifoat(CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    let socket = dir.path("sock.onnx");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let mut targets = vec![(fifo, "a FIFO"), (socket, "a socket")];
    // A character device needs root to create: checked when the tests run as root.
    let device = dir.path("null.onnx");
    if rustix::fs::mknodat(
        CWD,
        &device,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o600),
        rustix::fs::makedev(1, 3),
    )
    .is_ok()
    {
        targets.push((device, "a character device"));
    }
    for (path, what) in targets {
        let before = std::fs::symlink_metadata(&path).unwrap().file_type();
        let e = io::save(&model, &path, &SerializeOptions::default()).unwrap_err();
        assert!(
            e.to_string().contains(&format!("the path is {what}")),
            "{e}"
        );
        let after = std::fs::symlink_metadata(&path).unwrap().file_type();
        assert!(!after.is_file(), "{what} was replaced by a file");
        assert_eq!(
            (
                before.is_fifo(),
                before.is_socket(),
                before.is_char_device()
            ),
            (after.is_fifo(), after.is_socket(), after.is_char_device())
        );
    }
    // Nothing else was left in the directory (no temporaries, no data files).
    let mut names = dir.entries();
    names.retain(|n| !["null.onnx", "pipe.onnx", "sock.onnx"].contains(&n.as_str()));
    assert_eq!(names, Vec::<String>::new());
}
