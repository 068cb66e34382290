//! Atomic replacement of files: a temporary file next to the target, flushed, then
//! renamed over it; files moved aside to free a name and put back if the save fails.
//!
//! The temporary file has no name while it is written (`O_TMPFILE`, where the kernel and
//! filesystem support it and `/proc/self/fd` is there to link it by): a process killed
//! mid-save (Ctrl-C, SIGKILL, out of memory) leaves nothing behind. It gets a hidden
//! name only once written and flushed, just before the rename. Elsewhere it is a hidden
//! file (`.<name>.tmp-<pid>-<n>`) from the start.
//!
//! Every step of one save happens relative to one opened directory ([`TargetDir`]), so a
//! directory on the path swapped for a link half-way cannot split a save between two
//! places. A save to a symbolic link happens in the directory of the file the link
//! leads to, and replaces that file: the link stays a link. Temporaries are created with mode 0600 and get their final permissions just
//! before the rename: those of the regular file they replace (never through a symbolic
//! link, never the set-user-ID, set-group-ID or sticky bits), else the usual `0666` less
//! the umask. Knows files; knows nothing of models.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use std::os::fd::AsRawFd;

use rustix::fs::{
    fchmod, fstat, linkat, openat, renameat, statat, unlinkat, AtFlags, FileType, Mode, OFlags, CWD,
};

use super::open::{dead_process_aside, FileId};
use crate::error::{Error, ErrorKind, Limit, Result};

/// The directory a save writes into, opened once.
#[derive(Debug)]
pub(crate) struct TargetDir {
    fd: OwnedFd,
    /// The directory as the caller named it (or as the link led to it), for messages.
    path: PathBuf,
    /// When the save's path was a symbolic link: the name of the file it led to in this
    /// directory, and the link as the caller named it, for messages.
    via_link: Option<(OsString, PathBuf)>,
}

/// `out/` and `out/.` name a directory, though `Path::file_name` reads both as `out`: a
/// save there would write a file named `out`.
fn names_a_directory(path: &Path) -> bool {
    let spelled = path.as_os_str().as_encoded_bytes();
    spelled.ends_with(b"/") || spelled.ends_with(b"/.") || spelled == b"."
}

impl TargetDir {
    /// Opens the directory of the file a save to `path` replaces, and returns it with that
    /// file's name. That file is `path` itself, or, when `path` is a symbolic link (or a
    /// chain of them), the file the link leads to: the save replaces the link's target and
    /// leaves the link a link, as writing through it would. A dangling link's target is
    /// created. A link in a world-writable sticky directory (`/tmp`) owned by neither this
    /// user nor the directory's owner is refused, as the kernel's `protected_symlinks`
    /// refuses to follow it.
    ///
    /// # Errors
    /// An I/O error naming `path` when it has no file name or ends with a separator, is a
    /// loop of links or a link refused as above, or when the directory cannot be opened.
    pub(crate) fn of(path: &Path) -> Result<(Arc<TargetDir>, OsString)> {
        let target = if names_a_directory(path) {
            path.to_path_buf()
        } else {
            super::open::follow_links(path, refuse_unprotected_link)
                .map_err(|e| Error::io(e, Some(path)))?
        };
        // Checked on what the links lead to as well: a link to `new/` names a directory.
        if names_a_directory(&target) {
            return Err(Error::io(
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the path ends with a separator: it names a directory, not a file",
                ),
                Some(path),
            ));
        }
        let linked = target != path;
        let name = target.file_name().ok_or_else(|| {
            Error::io(
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the path has no file name",
                ),
                Some(path),
            )
        })?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            let e = std::io::Error::from(e);
            match linked {
                true => Error::io(
                    std::io::Error::new(
                        e.kind(),
                        format!(
                            "{} is a symbolic link to {}, whose directory cannot be opened: {e}",
                            path.display(),
                            target.display()
                        ),
                    ),
                    Some(dir),
                ),
                false => Error::io(e, Some(dir)),
            }
        })?;
        Ok((
            Arc::new(TargetDir {
                fd,
                path: dir.to_path_buf(),
                via_link: linked.then(|| (name.to_os_string(), path.to_path_buf())),
            }),
            name.to_os_string(),
        ))
    }

    /// The directory `parts` beneath this one, each component opened without following
    /// a symbolic link. A missing component is created when `created` is given (and
    /// recorded there, outermost first, for [`TargetDir::remove_created`]); without, a
    /// missing component gives `None`.
    ///
    /// # Errors
    /// An I/O error naming the component when it is a symbolic link, not a directory,
    /// or cannot be opened or created.
    pub(crate) fn beneath(
        self: &Arc<Self>,
        parts: &[&str],
        mut created: Option<&mut Vec<(Arc<TargetDir>, OsString)>>,
    ) -> Result<Option<Arc<TargetDir>>> {
        let mut dir = self.clone();
        for part in parts {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let path = dir.path.join(part);
            let opened = match openat(&dir.fd, *part, flags, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) => match created.as_deref_mut() {
                    None => return Ok(None),
                    Some(created) => {
                        match rustix::fs::mkdirat(&dir.fd, *part, Mode::from_raw_mode(0o777)) {
                            Ok(()) => created.push((dir.clone(), OsString::from(part))),
                            // Made meanwhile by someone else: used as found.
                            Err(rustix::io::Errno::EXIST) => {}
                            Err(e) => return Err(Error::io(e.into(), Some(&path))),
                        }
                        openat(&dir.fd, *part, flags, Mode::empty())
                    }
                },
                other => other,
            };
            let fd = opened.map_err(|e| {
                let e = std::io::Error::from(e);
                if matches!(
                    e.raw_os_error(),
                    Some(code) if code == rustix::io::Errno::LOOP.raw_os_error()
                        || code == rustix::io::Errno::NOTDIR.raw_os_error()
                ) {
                    Error::io(
                        std::io::Error::new(
                            std::io::ErrorKind::InvalidInput,
                            "not a directory (or a symbolic link): data files are written only \
                             into real directories beneath the model's",
                        ),
                        Some(&path),
                    )
                } else {
                    Error::io(e, Some(&path))
                }
            })?;
            dir = Arc::new(TargetDir {
                fd,
                path,
                via_link: None,
            });
        }
        Ok(Some(dir))
    }

    /// Removes the directories a failed save created ([`TargetDir::beneath`]), innermost
    /// first; one that is no longer empty stays.
    pub(crate) fn remove_created(created: Vec<(Arc<TargetDir>, OsString)>) {
        for (parent, name) in created.into_iter().rev() {
            let _ = unlinkat(&parent.fd, &name, AtFlags::REMOVEDIR);
        }
    }

    /// Makes the renames done in this directory durable (not every filesystem
    /// supports it: errors are ignored).
    pub(crate) fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }

    /// Removes what saves of any of `names` in processes that died left moved aside
    /// ([`dead_process_aside`]): old files a finished save would have removed. The
    /// directory is listed once, however many names there are.
    pub(crate) fn remove_dead_asides(&self, names: &HashSet<&OsStr>) {
        let Ok(entries) = std::fs::read_dir(self.join("")) else {
            return;
        };
        for entry in entries.flatten() {
            let entry = entry.file_name();
            // `.<name>.old-<pid>-<n>`: the name is between the dot and the last `.old-`.
            let name = entry
                .to_str()
                .and_then(|e| e.strip_prefix('.'))
                .and_then(|e| e.rsplit_once(".old-"))
                .map(|(name, _)| OsStr::new(name));
            if name.is_some_and(|n| names.contains(n) && dead_process_aside(&entry, n)) {
                let _ = unlinkat(&self.fd, &entry, AtFlags::empty());
            }
        }
    }

    /// The opened directory.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// `name` in this directory, for messages.
    pub(crate) fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.path.join(name)
    }

    /// The identity of the entry `name` (a link is not followed).
    pub(crate) fn entry_id(&self, name: impl AsRef<Path>) -> Option<FileId> {
        FileId::of_entry(&self.fd, name.as_ref())
    }

    /// Drops the page cache of the regular file `name`, if there is one (a link is not
    /// followed; anything else, and any error, is ignored: this is a hint). For a file
    /// the save will replace: its pages are freed now so that the new file's writes take
    /// them over instead of asking the kernel for fresh ones (see
    /// `docs/design/page-cache.md`). The file itself is untouched.
    pub(crate) fn release_cached_pages(&self, name: &str) {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{fadvise, Advice};
            // Non-blocking: a FIFO planted at the name must not hang the save.
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            if let Ok(fd) = openat(&self.fd, name, flags, Mode::empty()) {
                let regular = fstat(&fd)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
                if regular {
                    let _ = fadvise(&fd, 0, None, Advice::DontNeed);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = name;
    }
}

/// Refuses to follow the symbolic link at `link` (its `lstat` in `st`) when it sits in a
/// world-writable sticky directory and is owned by neither this user nor the directory's
/// owner: the kernel's `protected_symlinks` rule, which links followed here, outside the
/// kernel's own path walk, would otherwise escape. Such a link is the classic way to make
/// another user's save in `/tmp` overwrite a file of theirs.
fn refuse_unprotected_link(link: &Path, st: &rustix::fs::Stat) -> std::io::Result<()> {
    let dir = match link.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir_st = statat(CWD, dir, AtFlags::empty())?;
    let euid = rustix::process::geteuid().as_raw();
    if followed_in_shared_dir_is_refused(dir_st.st_mode as u32, dir_st.st_uid, st.st_uid, euid) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symbolic link in a world-writable sticky directory, owned by another \
                 user: a save does not follow it (as the kernel's protected_symlinks does not)",
                link.display()
            ),
        ));
    }
    Ok(())
}

/// The rule of [`refuse_unprotected_link`] on numbers: the directory's mode and owner,
/// the link's owner, and this process's effective user.
fn followed_in_shared_dir_is_refused(
    dir_mode: u32,
    dir_uid: u32,
    link_uid: u32,
    euid: u32,
) -> bool {
    let sticky_and_world_writable = dir_mode & 0o1000 != 0 && dir_mode & 0o002 != 0;
    sticky_and_world_writable && link_uid != euid && link_uid != dir_uid
}

/// Fails when writing a file of `len` bytes would pass the process's file size limit
/// (`ulimit -f`, `RLIMIT_FSIZE`). Checked before a file is sized or written: past the
/// limit the kernel would send `SIGXFSZ`, which kills the process by default and leaves
/// its temporary files behind.
///
/// # Errors
/// `LimitExceeded` naming the limit, and `path`.
pub(crate) fn check_file_size_limit(len: u64, path: &Path) -> Result<()> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Fsize).current;
    match limit {
        Some(limit) if len > limit => Err(Error::new(ErrorKind::LimitExceeded {
            which: Limit::FileSize,
            limit,
            actual: len,
        })
        .in_file(path)),
        _ => Ok(()),
    }
}

/// A sequential writer into a new file that fails with an error, instead of letting the
/// kernel send `SIGXFSZ`, before the file would pass the process's file size limit: for
/// outputs whose size is only known as they are written (encryption streams).
#[cfg_attr(not(feature = "crypto"), allow(dead_code))]
pub(crate) struct SizeLimited<'f> {
    file: &'f File,
    written: u64,
    limit: Option<u64>,
}

#[cfg_attr(not(feature = "crypto"), allow(dead_code))]
impl<'f> SizeLimited<'f> {
    /// Writes to `file` from its current position (a new, empty file).
    pub(crate) fn new(file: &'f File) -> Self {
        SizeLimited {
            file,
            written: 0,
            limit: rustix::process::getrlimit(rustix::process::Resource::Fsize).current,
        }
    }
}

impl std::io::Write for SizeLimited<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(limit) = self.limit {
            if self.written.saturating_add(buf.len() as u64) > limit {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::FileTooLarge,
                    format!("the output would pass the file size limit of the process (ulimit -f: {limit} bytes)"),
                ));
            }
        }
        let n = std::io::Write::write(&mut self.file, buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::Write::flush(&mut self.file)
    }
}

/// The process's umask, read without changing it (`/proc/self/status`); `022` where
/// that is not available.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// A file that [`AtomicTarget::commit_unused`] moved aside to free its name.
#[must_use = "discard it when the save succeeds, restore it when it fails"]
pub(crate) struct Displaced {
    dir: Arc<TargetDir>,
    aside: OsString,
    name: OsString,
}

impl Displaced {
    /// The save succeeded: removes the old file.
    pub(crate) fn discard(self) {
        let _ = unlinkat(&self.dir.fd, &self.aside, AtFlags::empty());
    }

    /// The save failed: puts the old file back under its name (over the new file, which
    /// the failed save no longer needs).
    pub(crate) fn restore(self) {
        let _ = renameat(&self.dir.fd, &self.aside, &self.dir.fd, &self.name);
    }
}

static HIDDEN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new hidden name next to `name` on each call, `.<name>.<what>-<pid>-<n>`: for
/// temporary files and files moved aside. The caller checks that nothing has it.
fn hidden_sibling(name: &OsStr, what: &str) -> OsString {
    let n = HIDDEN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut hidden = OsString::from(".");
    hidden.push(name);
    hidden.push(format!(".{what}-{}-{n}", std::process::id()));
    hidden
}

/// The temporary file of an atomic save and the name it will replace. Dropped without
/// a successful commit (an error, a panic), it removes the temporary file.
pub(crate) struct AtomicTarget {
    pub(crate) file: File,
    dir: Arc<TargetDir>,
    /// The temporary file's hidden name; `None` while it is unnamed (`O_TMPFILE`).
    temp: Option<OsString>,
    name: OsString,
    /// Set once the temporary file has been renamed into place.
    committed: bool,
    /// The permissions the new file gets, fixed before the file it replaces was moved
    /// aside ([`AtomicTarget::move_current_aside`]).
    kept_mode: Option<Mode>,
    /// Keep the file readable by its owner only (0600) after the rename too.
    owner_only: bool,
}

impl Drop for AtomicTarget {
    fn drop(&mut self) {
        // An unnamed temporary goes with its descriptor.
        if let (false, Some(temp)) = (self.committed, &self.temp) {
            let _ = unlinkat(&self.dir.fd, temp, AtFlags::empty());
        }
    }
}

/// The path through which the unnamed file open as `file` can be given a name
/// (`linkat` with `AT_SYMLINK_FOLLOW`), when `/proc` is mounted.
fn proc_fd_path(file: &impl AsRawFd) -> Option<PathBuf> {
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    statat(CWD, &path, AtFlags::empty()).ok().map(|_| path)
}

impl AtomicTarget {
    /// A new temporary file for replacing `path`.
    ///
    /// # Errors
    /// I/O errors naming the path.
    pub(crate) fn new(path: &Path, hook: &dyn SaveHook) -> Result<Self> {
        let (dir, name) = TargetDir::of(path)?;
        AtomicTarget::in_dir(&dir, &name, hook)
    }

    /// A new temporary file (mode 0600) in `dir` for replacing `name` there, never
    /// following or overwriting an existing entry.
    ///
    /// # Errors
    /// I/O errors naming the path; `name` naming a directory.
    pub(crate) fn in_dir(dir: &Arc<TargetDir>, name: &OsStr, hook: &dyn SaveHook) -> Result<Self> {
        let path = dir.join(name);
        // What is at the path now (through a symbolic link): only a regular file is
        // replaced. A rename over a device or a FIFO would put a file in its place
        // (`/dev/null` as root), so those are refused rather than written into.
        let existing = statat(&dir.fd, name, AtFlags::empty())
            .ok()
            .map(|st| FileType::from_raw_mode(st.st_mode));
        // Named as the caller named it when a link led here.
        let through = match &dir.via_link {
            Some((target, link)) if target == name => {
                format!(" (the symbolic link {} leads to it)", link.display())
            }
            _ => String::new(),
        };
        let refused = |kind, what: &str| {
            Err(Error::io(
                std::io::Error::new(kind, format!("{what}{through}")),
                Some(&path),
            ))
        };
        match existing {
            Some(FileType::Directory) => {
                return refused(std::io::ErrorKind::IsADirectory, "the path is a directory")
            }
            Some(
                t @ (FileType::CharacterDevice
                | FileType::BlockDevice
                | FileType::Fifo
                | FileType::Socket),
            ) => {
                let what = super::open::type_in_words(t);
                return refused(
                    std::io::ErrorKind::InvalidInput,
                    &format!(
                        "the path is {what}, which a save would replace with a file \
                         (saves write a new file and rename it over the path); \
                         save to a regular file, or stream with save_to_writer"
                    ),
                );
            }
            _ => {}
        }
        hook.before(SaveStep::Create)
            .map_err(|e| Error::io(e, Some(&path)))?;
        if hook.unnamed_temporaries() {
            let flags = OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC;
            // Any failure (no kernel or filesystem support, no /proc to link through
            // later) falls back to a named temporary, which reports real errors.
            if let Ok(fd) = openat(&dir.fd, ".", flags, Mode::from_raw_mode(0o600)) {
                if proc_fd_path(&fd).is_some() {
                    return Ok(AtomicTarget {
                        file: File::from(fd),
                        dir: dir.clone(),
                        temp: None,
                        name: name.to_os_string(),
                        committed: false,
                        kept_mode: None,
                        owner_only: false,
                    });
                }
            }
        }
        loop {
            let temp = hidden_sibling(name, "tmp");
            let flags =
                OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match openat(&dir.fd, &temp, flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => {
                    return Ok(AtomicTarget {
                        file: File::from(fd),
                        dir: dir.clone(),
                        temp: Some(temp),
                        name: name.to_os_string(),
                        committed: false,
                        kept_mode: None,
                        owner_only: false,
                    })
                }
                Err(rustix::io::Errno::EXIST) => continue,
                // Named as the file being saved: the temporary's name is ours.
                Err(e) => return Err(Error::io(e.into(), Some(&path))),
            }
        }
    }

    /// Keeps the file private (0600) after the rename, whatever it replaces: for
    /// decrypted output.
    pub(crate) fn owner_only(mut self, yes: bool) -> Self {
        self.owner_only = yes;
        self
    }

    /// The path this target replaces, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// Sizes the temporary file to `len` bytes, after checking the file size limit: a
    /// full disk or a limit fails here, before any writing.
    ///
    /// # Errors
    /// `LimitExceeded` past `ulimit -f`; I/O errors naming the path.
    pub(crate) fn reserve(&self, len: u64) -> Result<()> {
        check_file_size_limit(len, &self.path())?;
        self.file
            .set_len(len)
            .map_err(|e| Error::io(e, Some(&self.path())))
    }

    /// With `sync`, flushes the written file to stable storage (the hook sees the
    /// step first); without, does nothing.
    pub(crate) fn flush(&self, hook: &dyn SaveHook, sync: bool) -> std::io::Result<()> {
        if sync {
            hook.before(SaveStep::Sync)?;
            self.file.sync_all()?;
        }
        Ok(())
    }

    /// Renames the temporary file over the target and, with `sync`, makes the rename
    /// durable.
    pub(crate) fn commit(self, hook: &dyn SaveHook, sync: bool) -> Result<()> {
        self.commit_as(hook, sync, false).map(|_| ())
    }

    /// Like [`AtomicTarget::commit`] for a target name that nothing in use refers to (a
    /// data file name the model at the save path does not use): a file or symlink
    /// already there (never followed) is first renamed aside, then the temporary file is
    /// renamed to the free name. The caller ends the save by discarding what was moved
    /// aside, or, when the save fails, by restoring it: a failed save leaves even an
    /// unused old file where it was. (Renaming over the old file would not allow that,
    /// and costs a write-back on ext4: `docs/design/page-cache.md`.)
    pub(crate) fn commit_unused(
        self,
        hook: &dyn SaveHook,
        sync: bool,
    ) -> Result<Option<Displaced>> {
        self.commit_as(hook, sync, true)
    }

    /// Moves the file this target will replace out of its name now (the new file keeps
    /// its permissions), so that until [`AtomicTarget::commit`] nothing answers to the
    /// name: for a model file whose data files are about to be replaced, which must not
    /// be found paired with the new data. Nothing there gives `None`.
    pub(crate) fn move_current_aside(
        &mut self,
        hook: &dyn SaveHook,
        sync: bool,
    ) -> Result<Option<Displaced>> {
        self.kept_mode = Some(self.final_mode());
        let fd = &self.dir.fd;
        let there = statat(fd, &self.name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) != FileType::Directory);
        if !there {
            return Ok(None);
        }
        let result = (|| -> std::io::Result<Displaced> {
            hook.before(SaveStep::Rename)?;
            let aside = loop {
                let candidate = hidden_sibling(&self.name, "old");
                if statat(fd, &candidate, AtFlags::SYMLINK_NOFOLLOW).is_err() {
                    break candidate;
                }
            };
            renameat(fd, &self.name, fd, &aside)?;
            if sync {
                // Gone from its name before any data file changes.
                self.dir.sync();
            }
            Ok(Displaced {
                dir: self.dir.clone(),
                aside,
                name: self.name.clone(),
            })
        })();
        result
            .map(Some)
            .map_err(|e| Error::io(e, Some(&self.path())))
    }

    /// The permissions the new file gets: 0600 when owner-only, else the replaced
    /// regular file's (read without following a link, without the set-ID and sticky
    /// bits), else `0666` less the umask.
    fn final_mode(&self) -> Mode {
        if self.owner_only {
            return Mode::from_raw_mode(0o600);
        }
        if let Some(mode) = self.kept_mode {
            return mode;
        }
        let old = statat(&self.dir.fd, &self.name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
        let bits = match old {
            Some(st) => st.st_mode & 0o777,
            None => 0o666 & !umask(),
        };
        Mode::from_raw_mode(bits as _)
    }

    fn commit_as(
        mut self,
        hook: &dyn SaveHook,
        sync: bool,
        unused: bool,
    ) -> Result<Option<Displaced>> {
        let mut displaced = None;
        let mut committed = false;
        let dir = self.dir.clone();
        let fd = &dir.fd;
        let result = (|| -> std::io::Result<()> {
            fchmod(&self.file, self.final_mode())?;
            hook.before(SaveStep::Rename)?;
            let temp = match &self.temp {
                Some(temp) => temp.clone(),
                None => {
                    // Written and flushed: only now does the file get a (hidden) name,
                    // for the rename.
                    let source = proc_fd_path(&self.file)
                        .ok_or_else(|| std::io::Error::other("/proc/self/fd is gone"))?;
                    let temp = loop {
                        let candidate = hidden_sibling(&self.name, "tmp");
                        match linkat(CWD, &source, fd, &candidate, AtFlags::SYMLINK_FOLLOW) {
                            Ok(()) => break candidate,
                            Err(rustix::io::Errno::EXIST) => continue,
                            Err(e) => return Err(e.into()),
                        }
                    };
                    self.temp = Some(temp.clone());
                    temp
                }
            };
            if unused {
                // A directory stays (the rename below reports it).
                let there = statat(fd, &self.name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) != FileType::Directory);
                if there {
                    let aside = loop {
                        let candidate = hidden_sibling(&self.name, "old");
                        if statat(fd, &candidate, AtFlags::SYMLINK_NOFOLLOW).is_err() {
                            break candidate;
                        }
                    };
                    renameat(fd, &self.name, fd, &aside)?;
                    displaced = Some(Displaced {
                        dir: self.dir.clone(),
                        aside,
                        name: self.name.clone(),
                    });
                }
            }
            renameat(fd, &temp, fd, &self.name)?;
            committed = true;
            if sync {
                // Durability of the rename; not every filesystem supports it.
                let _ = rustix::fs::fsync(fd);
            }
            Ok(())
        })();
        self.committed = committed;
        match result {
            Ok(()) => Ok(displaced),
            Err(e) => {
                if let Some(d) = displaced {
                    d.restore();
                }
                Err(Error::io(e, Some(&self.path())))
            }
        }
    }

    /// Removes the temporary file (what dropping an uncommitted target does; named for
    /// the reader).
    pub(crate) fn abandon(self) {
        drop(self);
    }
}

#[cfg(test)]
mod tests {
    use super::followed_in_shared_dir_is_refused as refused;

    /// `/tmp` (root's, 1777), a link of user 1000, followed by users 1000, 0 and 2000.
    #[test]
    fn links_in_shared_sticky_directories_are_followed_only_for_their_owners() {
        let tmp = 0o41777;
        assert!(!refused(tmp, 0, 1000, 1000), "the link's owner follows it");
        assert!(
            !refused(tmp, 1000, 1000, 2000),
            "the directory's owner made it"
        );
        assert!(refused(tmp, 0, 1000, 2000), "another user does not");
        assert!(refused(tmp, 0, 1000, 0), "root does not either");
        // Not sticky, or not world-writable: the rule does not apply.
        assert!(!refused(0o40777, 0, 1000, 2000));
        assert!(!refused(0o41775, 0, 1000, 2000));
    }
}

/// One step of a file save, as seen by a [`SaveHook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaveStep {
    /// Creating the temporary file.
    Create,
    /// Writing `len` bytes at `offset` of the temporary file.
    Write {
        /// Where.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
    /// Flushing the temporary file to stable storage.
    Sync,
    /// Renaming the temporary file over the target.
    Rename,
}

/// Observes (and may fail) each step of a file save: the fault-injection point used by
/// the crash-safety tests. Returning an error makes the save fail at that step.
pub trait SaveHook: Sync {
    /// Called before `step` happens.
    ///
    /// # Errors
    /// The error to fail the step with.
    fn before(&self, step: SaveStep) -> std::io::Result<()>;

    /// Whether the save may write its temporary files unnamed (`O_TMPFILE`, the
    /// default where supported); `false` makes it use named hidden temporaries, the
    /// fallback, for testing that path.
    fn unnamed_temporaries(&self) -> bool {
        true
    }
}

/// The hook of saves without fault injection.
pub(crate) struct NoHook;

impl SaveHook for NoHook {
    fn before(&self, _: SaveStep) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `write` against a new temporary file next to `path`, flushes it to stable
/// storage when `sync`, and renames it over `path`; on any error removes it, leaving
/// `path` as it was. Returns the file written (where a symbolic link at `path` led).
pub(crate) fn write_atomically(
    path: &Path,
    hook: &dyn SaveHook,
    sync: bool,
    owner_only: bool,
    write: impl FnOnce(&File) -> Result<()>,
) -> Result<PathBuf> {
    let target = AtomicTarget::new(path, hook)?.owner_only(owner_only);
    let written = target.path();
    let result = write(&target.file).and_then(|()| {
        target
            .flush(hook, sync)
            .map_err(|e| Error::io(e, Some(path)))
    });
    match result {
        Ok(()) => target.commit(hook, sync).map(|()| written),
        Err(e) => {
            target.abandon();
            Err(e)
        }
    }
}
