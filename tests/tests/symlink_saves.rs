//! Saving to a path that is a symbolic link (`latest.onnx -> v7.onnx`): the save
//! replaces the link's target atomically (a temporary file beside the target, renamed
//! over it) and leaves the link a link, as writing through it would (`onnx.save` does),
//! with the same rules as any save. External data goes beside the target, and a load
//! through the link finds it there. A dangling link's target is created; a loop, a link
//! to a directory and a link to a FIFO are refused with errors that say so.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use onnx_light::io::external::ExternalDataOptions;
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;
use onnx_light::ErrorKind;
use onnx_light_tests::scratch::Scratch;

fn model(seed: u8) -> Model {
    let mut g = GraphProto::named("g");
    g.initializer.push(TensorProto::from_raw(
        "w",
        DataType::Uint8,
        [4096],
        vec![seed; 4096],
    ));
    g.initializer.push(TensorProto::from_raw(
        "b",
        DataType::Uint8,
        [16],
        vec![seed.wrapping_add(1); 16],
    ));
    ModelProto::new(g, vec![OperatorSetIdProto::new("", 21)])
}

fn link(target: &str, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn read_link(at: &Path) -> PathBuf {
    assert!(
        std::fs::symlink_metadata(at).unwrap().is_symlink(),
        "{} is no longer a link",
        at.display()
    );
    std::fs::read_link(at).unwrap()
}

fn inode(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

#[test]
fn a_save_to_a_link_replaces_its_target_atomically_and_keeps_the_link() {
    let dir = Scratch::new("link-save");
    let (v7, latest) = (dir.path("v7.onnx"), dir.path("latest.onnx"));
    io::save(&model(1), &v7, &SerializeOptions::default()).unwrap();
    link("v7.onnx", &latest);
    let before = inode(&v7);
    io::save(&model(2), &latest, &SerializeOptions::default()).unwrap();
    assert_eq!(read_link(&latest), Path::new("v7.onnx"));
    assert_eq!(io::load(&v7).unwrap(), model(2));
    assert_eq!(io::load(&latest).unwrap(), model(2));
    // Replaced by a rename (a new file), not written in place.
    assert_ne!(inode(&v7), before);
    // Nothing else in the directory: the temporary file was beside the target and is gone.
    assert_eq!(dir.entries(), ["latest.onnx", "v7.onnx"]);
}

#[test]
fn a_chain_of_links_into_another_directory_gets_its_data_beside_the_target() {
    let dir = Scratch::new("link-chain");
    std::fs::create_dir(dir.path("models")).unwrap();
    std::fs::create_dir(dir.path("archive")).unwrap();
    io::save(
        &model(1),
        dir.path("archive/v7.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap();
    link("../archive/v7.onnx", &dir.path("models/latest.onnx"));
    link("models/latest.onnx", &dir.path("current.onnx"));
    let external = ExternalDataOptions::new("w.bin").size_threshold(1024);
    io::save(
        &model(3),
        dir.path("current.onnx"),
        &SerializeOptions::default().external_data(external),
    )
    .unwrap();
    assert_eq!(
        read_link(&dir.path("current.onnx")),
        Path::new("models/latest.onnx")
    );
    assert_eq!(
        read_link(&dir.path("models/latest.onnx")),
        Path::new("../archive/v7.onnx")
    );
    // The model and its data are together, beside the target; the links' directories
    // hold nothing new.
    let mut archive: Vec<String> = std::fs::read_dir(dir.path("archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    archive.sort();
    assert_eq!(archive, ["v7.onnx", "w.bin"]);
    assert_eq!(dir.entries(), ["archive", "current.onnx", "models"]);
    assert_eq!(
        std::fs::read_dir(dir.path("models")).unwrap().count(),
        1,
        "models/ holds only the link"
    );
    // Loaded through either link or directly, the data is found.
    for path in ["current.onnx", "models/latest.onnx", "archive/v7.onnx"] {
        assert_eq!(io::load(dir.path(path)).unwrap(), model(3), "{path}");
        assert_eq!(
            io::model_directory(dir.path(path))
                .unwrap()
                .canonicalize()
                .unwrap(),
            dir.path("archive").canonicalize().unwrap(),
            "{path}"
        );
    }
}

#[test]
fn the_target_keeps_its_permissions_without_set_id_bits() {
    let dir = Scratch::new("link-perms");
    let target = dir.path("v7.onnx");
    io::save(&model(1), &target, &SerializeOptions::default()).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o2640)).unwrap();
    link("v7.onnx", &dir.path("latest.onnx"));
    io::save(
        &model(2),
        dir.path("latest.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap();
    let mode = std::fs::metadata(&target).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o640, "{mode:o}");
}

#[test]
fn a_dangling_link_gets_its_target_created_unless_its_directory_is_missing() {
    let dir = Scratch::new("link-dangling");
    link("v8.onnx", &dir.path("latest.onnx"));
    io::save(
        &model(4),
        dir.path("latest.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap();
    assert_eq!(read_link(&dir.path("latest.onnx")), Path::new("v8.onnx"));
    assert_eq!(io::load(dir.path("v8.onnx")).unwrap(), model(4));

    link("missing/v9.onnx", &dir.path("next.onnx"));
    let e = io::save(
        &model(5),
        dir.path("next.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::NotFound),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("is a symbolic link to") && text.contains("missing/v9.onnx"),
        "{text}"
    );
    assert_eq!(
        read_link(&dir.path("next.onnx")),
        Path::new("missing/v9.onnx")
    );
    assert_eq!(dir.entries(), ["latest.onnx", "next.onnx", "v8.onnx"]);
}

#[test]
fn a_loop_of_links_is_refused_and_left_alone() {
    let dir = Scratch::new("link-loop");
    link("b.onnx", &dir.path("a.onnx"));
    link("a.onnx", &dir.path("b.onnx"));
    link("self.onnx", &dir.path("self.onnx"));
    for name in ["a.onnx", "self.onnx"] {
        let e = io::save(&model(1), dir.path(name), &SerializeOptions::default()).unwrap_err();
        assert!(e.to_string().contains("loop of symbolic links"), "{e}");
        assert_eq!(e.file(), Some(dir.path(name).as_path()));
    }
    assert_eq!(read_link(&dir.path("a.onnx")), Path::new("b.onnx"));
    assert_eq!(read_link(&dir.path("b.onnx")), Path::new("a.onnx"));
    assert_eq!(dir.entries(), ["a.onnx", "b.onnx", "self.onnx"]);
    // Loading through a loop is the operating system's error, as for any open.
    assert!(io::load(dir.path("a.onnx")).is_err());
}

#[test]
fn a_link_to_a_directory_or_a_fifo_is_refused_naming_the_link() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Scratch::new("link-special");
    std::fs::create_dir(dir.path("sub")).unwrap();
    link("sub", &dir.path("to_dir.onnx"));
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        dir.path("pipe"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    link("pipe", &dir.path("to_fifo.onnx"));
    let e = io::save(
        &model(1),
        dir.path("to_dir.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::Io(std::io::ErrorKind::IsADirectory),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("the path is a directory") && text.contains("to_dir.onnx leads to it"),
        "{text}"
    );
    let e = io::save(
        &model(1),
        dir.path("to_fifo.onnx"),
        &SerializeOptions::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("the path is a FIFO") && text.contains("to_fifo.onnx leads to it"),
        "{text}"
    );
    assert!(std::fs::symlink_metadata(dir.path("pipe"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(std::fs::read_dir(dir.path("sub")).unwrap().count(), 0);
    assert_eq!(
        dir.entries(),
        ["pipe", "sub", "to_dir.onnx", "to_fifo.onnx"]
    );
}

#[test]
fn a_link_to_a_data_file_the_model_reads_is_refused_by_identity() {
    let dir = Scratch::new("link-identity");
    let path = dir.path("m.onnx");
    let external = ExternalDataOptions::new("w.bin").size_threshold(1024);
    io::save(
        &model(6),
        &path,
        &SerializeOptions::default().external_data(external),
    )
    .unwrap();
    let weights = std::fs::read(dir.path("w.bin")).unwrap();
    let lazy = io::load_with(&path, &ParseOptions::default().structure_only(true)).unwrap();
    link("w.bin", &dir.path("out.onnx"));
    let e = io::save(&lazy, dir.path("out.onnx"), &SerializeOptions::default()).unwrap_err();
    assert!(e.to_string().contains("destroy"), "{e}");
    assert_eq!(std::fs::read(dir.path("w.bin")).unwrap(), weights);
    assert_eq!(read_link(&dir.path("out.onnx")), Path::new("w.bin"));

    // A link to the model file itself is a save in place, as through its own name: the
    // weights it still reads keep their file, the new data takes a free name.
    link("m.onnx", &dir.path("latest.onnx"));
    io::save(&lazy, dir.path("latest.onnx"), &SerializeOptions::default()).unwrap();
    assert_eq!(read_link(&dir.path("latest.onnx")), Path::new("m.onnx"));
    let mut reloaded = io::load(&path).unwrap();
    reloaded.visit_tensors_mut(|_, t| {
        t.external_data.clear();
        t.data_location = None;
    });
    assert_eq!(reloaded, model(6));
}

#[test]
fn an_encrypted_save_to_a_link_replaces_its_target() {
    use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, Passphrase};
    let dir = Scratch::new("link-encrypted");
    std::fs::write(dir.path("v1.onnxc"), b"old").unwrap();
    link("v1.onnxc", &dir.path("latest.onnxc"));
    let passphrase = Passphrase::new("p");
    let options = EncryptOptions::default().iterations(1000);
    crypto::save_encrypted(&model(7), dir.path("latest.onnxc"), &passphrase, &options).unwrap();
    assert_eq!(read_link(&dir.path("latest.onnxc")), Path::new("v1.onnxc"));
    let opened = crypto::load_encrypted_with(
        dir.path("v1.onnxc"),
        &passphrase,
        &DecryptOptions::default(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(opened.model, model(7));
}
