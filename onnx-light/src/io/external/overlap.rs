//! Overlapping external-data ranges: tensors whose bytes intersect in the same data
//! file, and the aliasing cap that keeps a model from referencing more external bytes
//! than its data files hold. Knows files only through [`DataFile`]; reads nothing.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::reference::invalid;
use super::resolve::{resolve_tensor, DataFile, Resolver};
use crate::error::{Error, ExternalDataRule, Result};
use crate::onnx::ModelProto;

/// One tensor's external range, resolved against its opened data file.
#[derive(Debug, Clone)]
pub(crate) struct ExternalRange {
    /// The tensor's name.
    pub(crate) tensor: String,
    /// The opened data file.
    pub(crate) file: Arc<DataFile>,
    /// Byte offset of the range in the file.
    pub(crate) offset: u64,
    /// Byte length of the range.
    pub(crate) len: u64,
}

/// Two tensors whose external ranges share bytes of the same file. Exactly adjacent
/// ranges (one ends where the other starts) do not overlap, nor do empty ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The tensor whose range starts first in the file (the earlier one in the model
    /// when both start at the same offset).
    pub first: String,
    /// The other tensor.
    pub second: String,
    /// The data file (its resolved path).
    pub file: PathBuf,
    /// The first shared byte.
    pub start: u64,
    /// One past the last shared byte.
    pub end: u64,
}

/// The overlaps among a set of ranges: the first ones in file order (up to the limit
/// asked for) and how many there are in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlaps {
    /// The first overlapping pairs, ordered by file, then by the first tensor's offset.
    pub pairs: Vec<Overlap>,
    /// The number of overlapping pairs in all (`pairs.len()` or more).
    pub total: u64,
}

/// What identifies a data file: its device and inode, so that two locations naming the
/// same file (a hard link, a second spelling) count as one.
type FileKey = (u64, u64);

fn file_key(file: &DataFile, fallback: usize) -> FileKey {
    file.file
        .metadata()
        .map_or((u64::MAX, fallback as u64), |m| (m.dev(), m.ino()))
}

/// The identity of each range's file, computed once per opened file.
fn file_keys(ranges: &[ExternalRange]) -> Vec<FileKey> {
    let mut seen: HashMap<*const DataFile, FileKey> = HashMap::new();
    ranges
        .iter()
        .map(|r| {
            let ptr = Arc::as_ptr(&r.file);
            *seen
                .entry(ptr)
                .or_insert_with(|| file_key(&r.file, ptr as usize))
        })
        .collect()
}

/// Finds the pairs of `ranges` that share bytes of the same file, materialising at most
/// `limit` of them (their total is counted without listing them, so a model of many
/// tensors all pointing at one range costs time in its number of tensors, not of
/// pairs).
pub(crate) fn overlapping_ranges(ranges: &[ExternalRange], limit: usize) -> Overlaps {
    let keys = file_keys(ranges);
    // (file, offset, end, index in `ranges`) of every non-empty range, in file order.
    let mut sorted: Vec<(FileKey, u64, u64, usize)> = ranges
        .iter()
        .zip(&keys)
        .enumerate()
        .filter(|(_, (r, _))| r.len > 0)
        .map(|(i, (r, &k))| (k, r.offset, r.offset.saturating_add(r.len), i))
        .collect();
    sorted.sort_unstable_by_key(|&(key, offset, _, index)| (key, offset, index));
    let mut out = Overlaps::default();
    for (i, &(key, _, end, a)) in sorted.iter().enumerate() {
        // The ranges after this one that start before it ends, in the same file.
        let later = &sorted[i + 1..];
        let count = later.partition_point(|&(k, o, _, _)| k == key && o < end);
        out.total = out.total.saturating_add(count as u64);
        for &(_, o, e, b) in &later[..count] {
            if out.pairs.len() >= limit {
                break;
            }
            out.pairs.push(Overlap {
                first: ranges[a].tensor.clone(),
                second: ranges[b].tensor.clone(),
                file: ranges[a].file.path().to_path_buf(),
                start: o,
                end: e.min(end),
            });
        }
    }
    out
}

/// Finds the external tensors of `model` whose ranges share bytes of the same data file,
/// the files resolved beneath `base_dir` (the model's directory) with the rules of a load;
/// the first `limit` pairs are listed, all are counted. Two locations naming one file (a
/// hard link, another spelling) count as the same file.
///
/// # Errors
/// When `base_dir` cannot be opened.
pub fn overlapping_tensors(
    model: &ModelProto<'_>,
    base_dir: impl AsRef<std::path::Path>,
    limit: usize,
) -> crate::error::Result<Overlaps> {
    Ok(find_overlaps(
        model,
        &Resolver::new(base_dir.as_ref())?,
        limit,
    ))
}

/// Finds the external tensors of `model` whose ranges share bytes of the same file,
/// resolving each location through `resolver`. Tensors whose reference does not
/// resolve (a refused location, a missing file, a range past the end) are left out:
/// `verify` reports those.
fn find_overlaps(model: &ModelProto<'_>, resolver: &Resolver, limit: usize) -> Overlaps {
    let mut ranges = Vec::new();
    model.visit_tensors(|_, t| {
        if !t.is_external() {
            return;
        }
        if let Ok(r) = resolve_tensor(t, resolver, None) {
            ranges.push(ExternalRange {
                tensor: t.name().to_string(),
                file: r.file,
                offset: r.offset,
                len: r.len,
            });
        }
    });
    overlapping_ranges(&ranges, limit)
}

/// Refuses `ranges` when their lengths add up to more than the sizes of the distinct
/// files they are in: then some of them alias each other, and loading (or saving) the
/// model would take more than its files hold.
///
/// # Errors
/// `InvalidExternalData` naming two overlapping tensors and the file, and
/// `allow_aliasing` as the way to accept such a model.
pub(crate) fn check_aliasing(ranges: &[ExternalRange]) -> Result<()> {
    let keys = file_keys(ranges);
    let mut sizes: HashMap<FileKey, u64> = HashMap::new();
    let mut referenced = 0u128;
    for (r, &k) in ranges.iter().zip(&keys) {
        sizes.insert(k, r.file.size());
        referenced += u128::from(r.len);
    }
    let files: u128 = sizes.values().map(|&s| u128::from(s)).sum();
    if referenced <= files {
        return Ok(());
    }
    // The lengths exceed the files, so within some file they exceed its size: two of
    // its ranges overlap.
    let found = overlapping_ranges(ranges, 1);
    let Some(o) = found.pairs.first() else {
        return Err(Error::new(crate::error::ErrorKind::InvalidExternalData {
            location: None,
            rule: ExternalDataRule::Aliasing,
            reason: format!(
                "tensors reference {referenced} external bytes, more than the {files} bytes of their data files"
            ),
        })
        .refused_by(crate::error::Limit::Aliasing));
    };
    Err(invalid(
        &o.first,
        None,
        ExternalDataRule::Aliasing,
        format!(
            "tensors `{}` and `{}` share bytes {}..{} of their data file ({} overlapping pairs in all): \
             the model references {referenced} external bytes, more than the {files} bytes its data files hold",
            o.first, o.second, o.start, o.end, found.total
        ),
    )
    .in_file(&o.file)
    .refused_by(crate::error::Limit::Aliasing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn data_file(dir: &std::path::Path, name: &str, size: usize) -> Arc<DataFile> {
        fs::write(dir.join(name), vec![0u8; size]).unwrap();
        Resolver::new(dir).unwrap().open("t", name).unwrap()
    }

    fn range(tensor: &str, file: &Arc<DataFile>, offset: u64, len: u64) -> ExternalRange {
        ExternalRange {
            tensor: tensor.into(),
            file: file.clone(),
            offset,
            len,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("onnx-light-overlap-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn adjacent_and_empty_ranges_do_not_overlap() {
        let dir = scratch("adjacent");
        let f = data_file(&dir, "w.bin", 100);
        let ranges = [
            range("a", &f, 0, 10),
            range("b", &f, 10, 10),
            range("empty", &f, 5, 0),
            range("c", &f, 20, 80),
        ];
        assert_eq!(overlapping_ranges(&ranges, 20), Overlaps::default());
        assert!(check_aliasing(&ranges).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn overlaps_name_both_tensors_and_the_shared_bytes() {
        let dir = scratch("shared");
        let f = data_file(&dir, "w.bin", 100);
        let g = data_file(&dir, "v.bin", 100);
        let ranges = [
            range("a", &f, 0, 10),
            range("b", &f, 5, 10),
            range("same-range-other-file", &g, 5, 10),
            range("dup", &f, 0, 10),
        ];
        let found = overlapping_ranges(&ranges, 20);
        let pairs: Vec<_> = found
            .pairs
            .iter()
            .map(|o| (o.first.as_str(), o.second.as_str(), o.start, o.end))
            .collect();
        assert_eq!(
            pairs,
            [("a", "dup", 0, 10), ("a", "b", 5, 10), ("dup", "b", 5, 10)]
        );
        assert_eq!(found.total, 3);
        assert!(found.pairs.iter().all(|o| o.file == f.path()));
        // Limited: the total is still counted.
        let first = overlapping_ranges(&ranges, 1);
        assert_eq!((first.pairs.len(), first.total), (1, 3));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_aliasing_cap_compares_referenced_bytes_with_the_files() {
        let dir = scratch("cap");
        let f = data_file(&dir, "w.bin", 100);
        // Overlapping but within the file's size in all: allowed by the cap.
        assert!(check_aliasing(&[range("a", &f, 0, 50), range("b", &f, 40, 40)]).is_ok());
        // 1000 tensors on the same 100 bytes: refused, naming tensors and file.
        let many: Vec<_> = (0..1000)
            .map(|i| range(&format!("t{i}"), &f, 0, 100))
            .collect();
        let e = check_aliasing(&many).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`t0`") && text.contains("`t1`"), "{text}");
        assert!(
            text.contains("allow_aliasing") && text.contains("499500"),
            "{text}"
        );
        assert_eq!(e.file(), Some(f.path()));
        assert_eq!(e.tensor(), Some("t0"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
