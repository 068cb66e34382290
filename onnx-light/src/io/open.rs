//! Opening files the way untrusted input needs: never blocking on a FIFO or device,
//! type-checked on the opened descriptor, and (for names taken from a model) resolved
//! beneath a directory without following any symbolic link. Also file identity (device
//! and inode), which is how saves tell whether two names are the same file.
//!
//! Knows the operating system's file API; knows nothing of models.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{fstat, openat, statat, AtFlags, FileType, Mode, OFlags, Stat};

/// A file's identity: the device and inode it lives at. Two paths name the same file
/// exactly when their identities are equal, however they are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// From a (device, inode) pair.
    pub(crate) fn from_parts((dev, ino): (u64, u64)) -> Self {
        FileId { dev, ino }
    }

    /// As a (device, inode) pair.
    pub(crate) fn parts(self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    fn of(st: &Stat) -> Self {
        #[allow(clippy::useless_conversion)] // the field types differ between platforms
        FileId {
            dev: u64::from(st.st_dev),
            ino: u64::from(st.st_ino),
        }
    }

    /// The identity of an opened file.
    pub(crate) fn of_file(file: &impl AsFd) -> io::Result<Self> {
        Ok(FileId::of(&fstat(file)?))
    }

    /// The identity of what `path` names, following symbolic links; `None` when
    /// nothing is there.
    #[cfg(test)]
    pub(crate) fn of_path(path: &Path) -> Option<Self> {
        statat(rustix::fs::CWD, path, AtFlags::empty())
            .ok()
            .map(|st| FileId::of(&st))
    }

    /// The identity of the entry `name` in the directory `dir` itself (a symbolic link
    /// is not followed); `None` when there is no such entry.
    pub(crate) fn of_entry(dir: &impl AsFd, name: &Path) -> Option<Self> {
        statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| FileId::of(&st))
    }
}

/// Maps an opened file (named by the path, for messages) into memory, read-only. The only
/// value of this type is private to `io::mmap` and reaches a load only through its
/// `unsafe fn load_mapped`, so every map is one a caller vouched for.
pub(crate) type FileMapper = fn(&File, &Path) -> crate::error::Result<crate::field::ByteOwner>;

/// A file type in words, for messages: `a FIFO`, `a character device`, ...
pub(crate) fn type_in_words(kind: FileType) -> &'static str {
    match kind {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}

/// Why a file that opened cannot be used.
fn not_regular(kind: FileType) -> io::Error {
    let what = type_in_words(kind);
    let kind = match kind {
        FileType::Directory => io::ErrorKind::IsADirectory,
        _ => io::ErrorKind::InvalidInput,
    };
    io::Error::new(kind, format!("not a regular file ({what})"))
}

/// Flags for opening a file to read: non-blocking, so that a FIFO or a device planted
/// at the name is refused by the type check instead of hanging the open.
fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC
}

/// Checks that an opened descriptor is a regular file and makes it a `File`.
fn regular(fd: OwnedFd) -> io::Result<File> {
    let kind = FileType::from_raw_mode(fstat(&fd)?.st_mode);
    if kind != FileType::RegularFile {
        return Err(not_regular(kind));
    }
    Ok(File::from(fd))
}

/// Opens the file at a path the caller chose (symbolic links followed, as the user
/// named it) for reading, refusing anything but a regular file without blocking.
///
/// # Errors
/// The operating system's error, or `InvalidInput` for a FIFO, device, directory or
/// socket.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    regular(rustix::fs::open(path, read_flags(), Mode::empty())?)
}

/// Opens the model file at `path` for a load (as [`open_regular`]). A missing one
/// that a save left missing when its process died half-way (its previous version moved
/// aside, `io::external`'s order of renames) says so and names where that version is.
///
/// # Errors
/// The I/O error, naming `path`.
pub(crate) fn open_model(path: &Path) -> crate::Result<File> {
    open_regular(path).map_err(|e| {
        let aside = (e.kind() == io::ErrorKind::NotFound)
            .then(|| interrupted_save(path))
            .flatten();
        match aside {
            Some(aside) => crate::Error::io(
                io::Error::new(
                    e.kind(),
                    format!(
                        "{e}: a save to this path was interrupted (its process died) while \
                         replacing the model's external data; the previous model file is \
                         {}, and its data files may already hold the new data",
                        aside.display()
                    ),
                ),
                Some(path),
            ),
            None => crate::Error::io(e, Some(path)),
        }
    })
}

/// Whether `entry` is a file a save of `name` in another process, no longer running,
/// moved aside (`.<name>.old-<pid>-<n>`) and left there when it died.
pub(crate) fn dead_process_aside(entry: &OsStr, name: &OsStr) -> bool {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".old-");
    let (Some(entry), Some(prefix)) = (entry.to_str(), prefix.to_str()) else {
        return false;
    };
    let Some(pid) = entry
        .strip_prefix(prefix)
        .and_then(|rest| rest.split('-').next())
        .and_then(|pid| pid.parse::<u32>().ok())
    else {
        return false;
    };
    if pid == std::process::id() {
        return false;
    }
    // Signal 0 only asks whether the process exists (`kill -0`); a process of another
    // user exists too (EPERM). Checked this way, not through `/proc`, which not every
    // system has: without it every save would look dead and lose its files.
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// The previous model file a dead process's save to `path` left moved aside, if any.
fn interrupted_save(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name())
        .find(|entry| dead_process_aside(entry, name))
        .map(|entry| dir.join(entry))
}

/// The most symbolic links followed from a path to the file it names, as the kernel's
/// own limit (`MAXSYMLINKS`); a longer chain is taken for a loop.
const MAX_LINKS: usize = 40;

/// The path of the file `path` names once the symbolic links at its last component are
/// followed (a chain of them too): `path` itself when it is not a link, and the last
/// link's target when that names nothing (a dangling link). Links among the directories
/// are left to the kernel, which follows them when the directory is opened. A relative
/// link is read relative to the link's directory. `check` sees each link (its path and
/// its `lstat`) before it is followed.
///
/// # Errors
/// A loop (more than [`MAX_LINKS`] links, `ELOOP`); an error reading a link; `check`'s.
pub(crate) fn follow_links(
    path: &Path,
    check: impl Fn(&Path, &Stat) -> io::Result<()>,
) -> io::Result<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        // Nothing there, or not a link: this is the file (errors reaching it are the
        // caller's open's to report).
        let Ok(st) = statat(rustix::fs::CWD, &current, AtFlags::SYMLINK_NOFOLLOW) else {
            return Ok(current);
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
            return Ok(current);
        }
        check(&current, &st)?;
        let target = rustix::fs::readlinkat(rustix::fs::CWD, &current, Vec::new())?;
        let target = std::path::PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes()));
        current = match current.parent() {
            Some(dir) if !target.is_absolute() && !dir.as_os_str().is_empty() => dir.join(target),
            _ => target,
        };
    }
    Err(io::Error::new(
        io::Error::from(rustix::io::Errno::LOOP).kind(),
        format!("a loop of symbolic links (or a chain of more than {MAX_LINKS})"),
    ))
}

/// A directory opened once, below which names are resolved without ever following a
/// symbolic link or leaving it.
#[derive(Debug)]
pub(crate) struct Beneath {
    dir: OwnedFd,
}

impl Beneath {
    /// Opens `dir` (as the caller named it: a symbolic link to a directory is fine).
    ///
    /// # Errors
    /// The operating system's error.
    pub(crate) fn open(dir: &Path) -> io::Result<Self> {
        let dir = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Beneath { dir })
    }

    /// Opens the regular file at `relative` (plain components only) for reading. Every
    /// component is resolved inside the directory; a symbolic link anywhere, a `..`, or
    /// anything but a regular file at the end is refused. A directory swapped for a link
    /// while this runs cannot redirect it: the kernel resolves the whole path in one call
    /// (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`) where it can, and
    /// otherwise each component is opened relative to the previous one with
    /// `O_NOFOLLOW`.
    ///
    /// Hard links are not links in this sense: a hard-linked file is the file itself
    /// (package managers install files that way).
    ///
    /// # Errors
    /// `ELOOP`/`ENOTDIR`-like errors for links, `EXDEV` for escapes, `InvalidInput` for
    /// anything not a regular file, the operating system's error otherwise.
    pub(crate) fn open_file(&self, relative: &Path) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{openat2, ResolveFlags};
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            // EAGAIN: a rename raced with the lookup and the kernel could not prove the
            // result safe; asking again is the documented answer.
            for _ in 0..64 {
                match openat2(&self.dir, relative, read_flags(), Mode::empty(), resolve) {
                    Ok(fd) => return regular(fd),
                    Err(rustix::io::Errno::AGAIN) => continue,
                    // Kernels before 5.6, or a sandbox that forbids the call.
                    Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => break,
                    Err(e) => return Err(e.into()),
                }
            }
        }
        self.open_by_components(relative)
    }

    /// The portable path of [`Beneath::open_file`]: one `openat` per component.
    fn open_by_components(&self, relative: &Path) -> io::Result<File> {
        let parts: Vec<&std::ffi::OsStr> = relative
            .components()
            .map(|c| match c {
                Component::Normal(p) => Ok(p),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "only plain path components are resolved",
                )),
            })
            .collect::<io::Result<_>>()?;
        let Some((last, dirs)) = parts.split_last() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
        };
        let mut current: Option<OwnedFd> = None;
        for part in dirs {
            let at = current.as_ref().unwrap_or(&self.dir);
            let next = openat(
                at,
                *part,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            current = Some(next);
        }
        let at = current.as_ref().unwrap_or(&self.dir);
        regular(openat(
            at,
            *last,
            read_flags() | OFlags::NOFOLLOW,
            Mode::empty(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::CWD;

    #[test]
    fn links_at_the_last_component_are_followed_relative_to_their_directory() {
        let dir = scratch("follow");
        std::fs::create_dir_all(dir.join("a/versions")).unwrap();
        std::fs::write(dir.join("a/versions/v7.onnx"), b"x").unwrap();
        std::os::unix::fs::symlink("versions/v7.onnx", dir.join("a/latest.onnx")).unwrap();
        std::os::unix::fs::symlink("a/latest.onnx", dir.join("chain.onnx")).unwrap();
        std::os::unix::fs::symlink("missing.onnx", dir.join("dangling.onnx")).unwrap();
        std::os::unix::fs::symlink("loop.onnx", dir.join("loop.onnx")).unwrap();
        let follow = |p: &str| follow_links(&dir.join(p), |_, _| Ok(()));
        assert_eq!(
            follow("chain.onnx").unwrap(),
            dir.join("a/versions/v7.onnx")
        );
        assert_eq!(
            follow("a/versions/v7.onnx").unwrap(),
            dir.join("a/versions/v7.onnx")
        );
        assert_eq!(follow("dangling.onnx").unwrap(), dir.join("missing.onnx"));
        assert_eq!(follow("nothing.onnx").unwrap(), dir.join("nothing.onnx"));
        let e = follow("loop.onnx").unwrap_err();
        assert_eq!(e.raw_os_error(), None);
        assert!(e.to_string().contains("loop of symbolic links"), "{e}");
        // `check` sees every link of the chain, and can stop it.
        let seen = std::cell::RefCell::new(Vec::new());
        follow_links(&dir.join("chain.onnx"), |p, _| {
            seen.borrow_mut().push(p.to_path_buf());
            Ok(())
        })
        .unwrap();
        assert_eq!(
            *seen.borrow(),
            [dir.join("chain.onnx"), dir.join("a/latest.onnx")]
        );
        let refused = follow_links(&dir.join("chain.onnx"), |_, _| Err(io::Error::other("no")));
        assert!(refused.is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("onnx-light-open-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        dir
    }

    #[test]
    fn links_anywhere_in_the_path_are_refused_on_both_paths() {
        let dir = scratch("links");
        std::fs::write(dir.join("sub/w.bin"), b"inside").unwrap();
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::fs::write(dir.join("real/w.bin"), b"via link").unwrap();
        std::os::unix::fs::symlink("real", dir.join("linkdir")).unwrap();
        std::os::unix::fs::symlink("sub/w.bin", dir.join("link.bin")).unwrap();
        let b = Beneath::open(&dir).unwrap();
        for open in [Beneath::open_file, Beneath::open_by_components] {
            assert!(open(&b, Path::new("sub/w.bin")).is_ok());
            assert!(open(&b, Path::new("linkdir/w.bin")).is_err());
            assert!(open(&b, Path::new("link.bin")).is_err());
            let err = open(&b, Path::new("sub")).unwrap_err();
            assert!(err.to_string().contains("directory"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The per-component path under the same race as the `openat2` one: `sub` swapped
    /// with a link to a directory outside, 1,000 opens, never the outside file.
    #[test]
    fn the_component_walk_never_follows_a_swapped_directory() {
        let dir = scratch("walk-race");
        let outside = scratch("walk-race-outside");
        std::fs::write(dir.join("sub/w.bin"), b"inside").unwrap();
        std::fs::write(outside.join("sub/w.bin"), b"outside").unwrap();
        std::os::unix::fs::symlink(outside.join("sub"), dir.join("evil")).unwrap();
        let b = Beneath::open(&dir).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut leaks = 0;
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    rustix::fs::renameat_with(
                        CWD,
                        dir.join("sub"),
                        CWD,
                        dir.join("evil"),
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .unwrap();
                }
            });
            for _ in 0..1000 {
                if let Ok(f) = b.open_by_components(Path::new("sub/w.bin")) {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut &f, &mut text).unwrap();
                    leaks += usize::from(text != "inside");
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(leaks, 0);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = scratch("fifo");
        rustix::fs::mknodat(
            CWD,
            dir.join("sub/pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let b = Beneath::open(&dir).unwrap();
        let err = b.open_file(Path::new("sub/pipe")).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        let err = open_regular(&dir.join("sub/pipe")).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn identity_ignores_spelling() {
        let dir = scratch("identity");
        std::fs::write(dir.join("sub/f"), b"x").unwrap();
        let a = FileId::of_path(&dir.join("sub/f")).unwrap();
        let b = FileId::of_path(&dir.join("sub/./f")).unwrap();
        let c = FileId::of_path(&dir.join("sub/../sub/f")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        std::fs::hard_link(dir.join("sub/f"), dir.join("sub/g")).unwrap();
        assert_eq!(a, FileId::of_path(&dir.join("sub/g")).unwrap());
        assert_eq!(FileId::of_path(&dir.join("sub/none")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Only the asides of processes that no longer run count as left behind: not this
    /// process's, not a running one's, not another name's.
    #[test]
    fn asides_of_dead_processes_are_told_from_live_ones() {
        let aside = |pid: u32| OsString::from(format!(".m.onnx.old-{pid}-0"));
        let name = OsStr::new("m.onnx");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        assert!(dead_process_aside(&aside(dead), name));
        assert!(!dead_process_aside(&aside(std::process::id()), name));
        assert!(!dead_process_aside(&aside(1), name));
        assert!(!dead_process_aside(&aside(dead), OsStr::new("other.onnx")));
        assert!(!dead_process_aside(OsStr::new(".m.onnx.old-x-0"), name));
    }
}
