//! Copying a byte range from one file into another without holding it in memory: the
//! kernel's `copy_file_range` where the file systems support it, else a small buffer.
//! Used to save payloads that a structure-only load left on disk.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The buffer of the fallback copy.
const CHUNK: u64 = 1 << 20;

/// Copies `len` bytes at `offset` of `src` into `dst` at `at`. A source that ends early
/// (truncated since its size was checked) gives `UnexpectedEof`, never a short copy.
///
/// # Errors
/// I/O errors of either file; `UnexpectedEof` as above.
pub(crate) fn copy_range(src: &File, offset: u64, len: u64, dst: &File, at: u64) -> io::Result<()> {
    let (mut offset, mut at, mut left) = (offset, at, len);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    while left > 0 {
        use rustix::io::Errno;
        let chunk = usize::try_from(left.min(1 << 30)).unwrap_or(1 << 30);
        // The kernel advances both offsets by what it copied.
        match rustix::fs::copy_file_range(src, Some(&mut offset), dst, Some(&mut at), chunk) {
            Ok(0) => return Err(ended_early()),
            Ok(n) => left -= n as u64,
            Err(Errno::INTR) => {}
            // Not supported between these files (another file system, an old kernel, a
            // special file): copy through user space instead.
            Err(Errno::XDEV | Errno::NOSYS | Errno::INVAL | Errno::OPNOTSUPP | Errno::PERM) => {
                break
            }
            Err(e) => return Err(e.into()),
        }
    }
    copy_buffered(src, offset, left, dst, at)
}

/// [`copy_range`] through a buffer in user space.
fn copy_buffered(src: &File, offset: u64, len: u64, dst: &File, at: u64) -> io::Result<()> {
    let (mut offset, mut at, mut left) = (offset, at, len);
    if left == 0 {
        return Ok(());
    }
    let mut buf = vec![0u8; usize::try_from(left.min(CHUNK)).unwrap_or(1 << 20)];
    while left > 0 {
        let n = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        src.read_exact_at(&mut buf[..n], offset).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                ended_early()
            } else {
                e
            }
        })?;
        dst.write_all_at(&buf[..n], at)?;
        offset += n as u64;
        at += n as u64;
        left -= n as u64;
    }
    Ok(())
}

fn ended_early() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the file ended before the payload did (truncated while in use?)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new empty file, open for reading and writing.
    fn open_new(path: &std::path::Path) -> File {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("onnx-light-copy-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn copies_ranges_at_offsets_and_refuses_a_short_source() {
        check(copy_range, "kernel");
        check(copy_buffered, "buffered");
    }

    /// Offsets past 4 GiB in both files (sparse files: nothing is written in between).
    #[test]
    fn copies_at_offsets_past_4_gib() {
        for (copy, name) in [
            (
                copy_range as fn(&File, u64, u64, &File, u64) -> io::Result<()>,
                "kernel-4g",
            ),
            (copy_buffered, "buffered-4g"),
        ] {
            let dir = scratch(name);
            let (from, to) = ((9u64 << 29) + 3, (17u64 << 28) + 5);
            let marker: Vec<u8> = (0..70_000u32).map(|i| (i % 253) as u8).collect();
            let src = open_new(&dir.join("src"));
            src.write_all_at(&marker, from).unwrap();
            let dst = open_new(&dir.join("dst"));
            copy(&src, from, marker.len() as u64, &dst, to).unwrap();
            let mut back = vec![0u8; marker.len()];
            dst.read_exact_at(&mut back, to).unwrap();
            assert_eq!(back, marker, "{name}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    fn check(copy: fn(&File, u64, u64, &File, u64) -> io::Result<()>, name: &str) {
        let dir = scratch(name);
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(dir.join("src"), &data).unwrap();
        let src = File::open(dir.join("src")).unwrap();
        let dst = open_new(&dir.join("dst"));
        dst.set_len(2_600_000).unwrap();
        copy(&src, 100, 2_500_000, &dst, 7).unwrap();
        let out = std::fs::read(dir.join("dst")).unwrap();
        assert_eq!(&out[7..2_500_007], &data[100..2_500_100]);
        assert!(out[..7].iter().all(|&b| b == 0));
        let e = copy(&src, 2_999_000, 2_000, &dst, 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
