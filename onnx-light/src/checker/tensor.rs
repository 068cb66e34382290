//! The rules for tensors, sparse tensors, external data locations and value infos.

use std::path::{Path, PathBuf};

use crate::onnx::{DataType, SparseTensorProto, TensorProto, TypeValue, ValueInfoProto};
use crate::ProtoEnum;

use super::{steps, Checker, Loc};

/// The element count of `dims`, or a reason: a negative dimension or an `i64` overflow
/// (`onnx` computes it in `i64` and rejects both).
fn dim_product(dims: &[i64]) -> Result<i64, &'static str> {
    dims.iter().try_fold(1i64, |n, &d| {
        if d < 0 {
            Err("a negative dimension")
        } else {
            n.checked_mul(d)
                .ok_or("a dimension product that overflows int64")
        }
    })
}

impl Checker<'_> {
    pub(super) fn check_tensor(&mut self, t: &TensorProto<'_>, loc: &Loc<'_>) {
        let Some(data_type) = t.data_type else {
            self.report(loc, "data_type is missing");
            return;
        };
        if data_type == 0 {
            self.report(loc, "data_type is UNDEFINED");
        }
        let raw_len = usize::try_from(raw_payload_len(t)).unwrap_or(usize::MAX);
        let fields: [(&str, usize); 7] = [
            ("float_data", t.float_data.len()),
            ("int32_data", t.int32_data.len()),
            ("string_data", t.string_data.len()),
            ("int64_data", t.int64_data.len()),
            ("raw_data", raw_len),
            ("double_data", t.double_data.len()),
            ("uint64_data", t.uint64_data.len()),
        ];
        let used: Vec<&str> = fields.iter().filter(|f| f.1 > 0).map(|f| f.0).collect();
        if t.is_external() {
            if let Some(field) = used.first() {
                self.report(
                    loc,
                    format_args!("the data is external, yet {field} is set too"),
                );
            }
            let mut has_location = false;
            for e in &t.external_data {
                if e.key.is_some() && e.value.is_some() && e.key() == "location" {
                    has_location = true;
                    self.check_location(e.value(), loc);
                }
            }
            if !has_location {
                self.report(
                    loc,
                    "the data is external but external_data has no location",
                );
            }
            return;
        }
        let nelem = match dim_product(&t.dims) {
            Ok(n) => n,
            Err(why) => {
                self.report(loc, format_args!("dims {:?} have {why}", t.dims));
                return;
            }
        };
        if nelem == 0 && !used.is_empty() {
            self.report(
                loc,
                format_args!("the tensor has 0 elements but {} is set", used[0]),
            );
        }
        if nelem != 0 && used.len() != 1 {
            let what = if used.is_empty() {
                "no data field".to_string()
            } else {
                used.join(" and ")
            };
            self.report(
                loc,
                format_args!("{nelem} elements need exactly one data field, found {what}"),
            );
        }
        let dtype = DataType::from_i32(data_type);
        if raw_len > 0 {
            self.check_raw_len(t, dtype, nelem, loc);
            return;
        }
        use DataType as D;
        let Some(dtype) = dtype.filter(|d| *d != D::Undefined) else {
            if data_type != 0 {
                self.report(
                    loc,
                    format_args!("data_type {data_type} is not a known type"),
                );
            }
            return;
        };
        let wide = |n: i64, k: i64| n.checked_mul(k);
        let (field, have, need): (&str, usize, Option<i64>) = match dtype {
            D::Float => ("float_data", t.float_data.len(), Some(nelem)),
            D::Complex64 => ("float_data", t.float_data.len(), wide(nelem, 2)),
            D::Double => ("double_data", t.double_data.len(), Some(nelem)),
            D::Complex128 => ("double_data", t.double_data.len(), wide(nelem, 2)),
            D::Int32
            | D::Uint8
            | D::Int8
            | D::Uint16
            | D::Int16
            | D::Bool
            | D::Float16
            | D::Bfloat16
            | D::Float8E4M3FN
            | D::Float8E4M3FNUZ
            | D::Float8E5M2
            | D::Float8E5M2FNUZ
            | D::Float8E8M0
            | D::Float6E2M3
            | D::Float6E3M2 => ("int32_data", t.int32_data.len(), Some(nelem)),
            D::Uint4 | D::Int4 | D::Float4E2M1 => (
                "int32_data",
                t.int32_data.len(),
                Some(nelem / 8 + i64::from(nelem % 8 != 0)),
            ),
            D::Uint2 | D::Int2 => (
                "int32_data",
                t.int32_data.len(),
                Some(nelem / 16 + i64::from(nelem % 16 != 0)),
            ),
            D::Int64 => ("int64_data", t.int64_data.len(), Some(nelem)),
            D::Uint32 | D::Uint64 => ("uint64_data", t.uint64_data.len(), Some(nelem)),
            D::String => ("string_data", t.string_data.len(), Some(nelem)),
            D::Undefined => return,
        };
        if nelem == 0 {
            return;
        }
        if have == 0 {
            let found = used.first().copied().unwrap_or("no field");
            self.report(
                loc,
                format_args!("{dtype} values belong in {field}, found {found}"),
            );
            return;
        }
        match need {
            None => self.report(
                loc,
                "the shape is too large to validate against the data type",
            ),
            Some(need) if (have as u64) < need as u64 => self.report(
                loc,
                format_args!(
                    "{field} holds {have} values, the shape {:?} needs {need}",
                    t.dims
                ),
            ),
            Some(_) => {}
        }
        if matches!(dtype, D::Float6E2M3 | D::Float6E3M2)
            && t.int32_data.iter().any(|v| !(0..=0x3F).contains(v))
        {
            self.report(loc, "FLOAT6 values in int32_data must use only bits 0-5");
        }
    }

    fn check_raw_len(
        &mut self,
        t: &TensorProto<'_>,
        dtype: Option<DataType>,
        nelem: i64,
        loc: &Loc<'_>,
    ) {
        use DataType as D;
        let raw_len = raw_payload_len(t);
        let Some(dtype) = dtype else {
            return; // an unknown type: onnx checks no size
        };
        let expected: Option<i64> = match dtype {
            D::String => {
                self.report(loc, "STRING data cannot be stored in raw_data");
                return;
            }
            D::Uint4 | D::Int4 | D::Float4E2M1 => Some(nelem / 2 + nelem % 2),
            D::Uint2 | D::Int2 => Some(nelem / 4 + i64::from(nelem % 4 != 0)),
            D::Float6E2M3 | D::Float6E3M2 => match nelem.checked_mul(6) {
                None => None,
                Some(bits) => {
                    let bytes = bits / 8 + i64::from(bits % 8 != 0);
                    let used_bits = bits % 8;
                    if bytes > 0 && raw_len >= bytes as u64 && used_bits != 0 {
                        match raw_byte(t, (bytes - 1) as u64) {
                            Ok(last) if last & (0xFFu8 << used_bits) != 0 => self.report(
                                loc,
                                "the packed FLOAT6 raw_data has non-zero padding bits",
                            ),
                            Ok(_) => {}
                            Err(e) => self
                                .report(loc, format_args!("the raw_data could not be read: {e}")),
                        }
                    }
                    Some(bytes)
                }
            },
            D::Undefined => Some(0),
            other => {
                let width = i64::from(other.bit_width().unwrap_or(0) / 8);
                nelem.checked_mul(width)
            }
        };
        match expected {
            None => self.report(
                loc,
                "the shape is too large to validate against the data type",
            ),
            Some(n) if n > 0 && raw_len < n as u64 => self.report(
                loc,
                format_args!(
                    "raw_data holds {raw_len} bytes, the shape {:?} of {dtype} needs {n}",
                    t.dims
                ),
            ),
            Some(_) => {}
        }
    }

    /// onnx's rules for an external data `location`: relative, not escaping the model
    /// directory after lexical normalization, and (when the directory is known) a
    /// regular file with one link, not a symbolic link, inside the directory.
    fn check_location(&mut self, location: &str, loc: &Loc<'_>) {
        if location.is_empty() {
            self.report(loc, "the external data location is empty");
            return;
        }
        if location.starts_with('/') {
            self.report(
                loc,
                format_args!("the external data location `{location}` is absolute"),
            );
            return;
        }
        let normal = lexically_normal(location);
        if normal.contains("..") {
            self.report(
                loc,
                format_args!(
                    "the external data location `{location}` points outside the model directory"
                ),
            );
            return;
        }
        let Some(dir) = self.options.model_dir.as_deref() else {
            return;
        };
        let path = dir.join(&normal);
        if let Some(problem) = external_file_problem(dir, &path, location.ends_with('/')) {
            self.report(loc, format_args!("external data `{location}`: {problem}"));
        }
    }

    pub(super) fn check_sparse_tensor(&mut self, s: &SparseTensorProto<'_>, loc: &Loc<'_>) {
        let Some(values) = &s.values else {
            self.report(loc, "values are missing");
            return;
        };
        self.check_tensor(values, &loc.field("values"));
        if values.dims.len() != 1 {
            self.report(
                loc,
                format_args!("values have rank {}, not 1", values.dims.len()),
            );
            return;
        }
        let nnz = values.dims[0];
        if s.dims.is_empty() {
            self.report(loc, "dims are empty (the dense rank must be > 0)");
            return;
        }
        if s.dims.iter().any(|&d| d <= 0) {
            self.report(loc, format_args!("dims {:?} are not all positive", s.dims));
            return;
        }
        let Some(indices) = &s.indices else {
            if nnz != 0 {
                self.report(loc, format_args!("{nnz} values but no indices"));
            }
            return;
        };
        let iloc = loc.field("indices");
        self.check_tensor(indices, &iloc);
        if indices.data_type() != DataType::Int64.to_i32() {
            self.report(&iloc, "indices must be INT64");
            return;
        }
        let rank = s.dims.len();
        match indices.dims.len() {
            1 => {
                if indices.dims[0] != nnz {
                    self.report(
                        &iloc,
                        format_args!("{} indices for {nnz} values", indices.dims[0]),
                    );
                    return;
                }
            }
            2 => {
                if indices.dims[0] != nnz {
                    self.report(
                        &iloc,
                        format_args!("{} index rows for {nnz} values", indices.dims[0]),
                    );
                    return;
                }
                if indices.dims[1] != rank as i64 {
                    self.report(
                        &iloc,
                        format_args!(
                            "index rows have {} entries, the dense rank is {rank}",
                            indices.dims[1]
                        ),
                    );
                    return;
                }
            }
            r => {
                self.report(&iloc, format_args!("indices have rank {r}, not 1 or 2"));
                return;
            }
        }
        let Some(data) = index_data(indices) else {
            self.report(
                &iloc,
                "the index data cannot be read (external, or its size does not match its dims)",
            );
            return;
        };
        let per_row = if indices.dims.len() == 1 { 1 } else { rank };
        // The dense element count, which linear indices must stay below (computed once:
        // the rank can be as long as the index list).
        steps::add(rank as u64);
        let dense = s.dims.iter().fold(1i64, |a, &d| a.wrapping_mul(d));
        let mut prev: i64 = -1;
        for (i, row) in data
            .chunks_exact(per_row)
            .take(nnz.max(0) as usize)
            .enumerate()
        {
            steps::add(per_row as u64);
            let linear = if per_row == 1 {
                let v = row[0];
                if v < 0 || v >= dense {
                    self.report(
                        &iloc,
                        format_args!("index {v} at position {i} is out of range [0, {})", dense),
                    );
                    return;
                }
                v
            } else {
                let mut linear = 0i64;
                for (j, (&v, &d)) in row.iter().zip(&s.dims).enumerate() {
                    if v < 0 || v >= d {
                        self.report(
                            &iloc,
                            format_args!(
                                "index {v} at position [{i},{j}] is out of range [0, {d})"
                            ),
                        );
                        return;
                    }
                    linear = linear.wrapping_mul(d).wrapping_add(v);
                }
                linear
            };
            if linear <= prev {
                self.report(
                    &iloc,
                    format_args!("index at position {i} is not in sorted order"),
                );
                return;
            }
            prev = linear;
        }
    }

    pub(super) fn check_value_info(
        &mut self,
        v: &ValueInfoProto<'_>,
        main_graph: bool,
        loc: &Loc<'_>,
    ) {
        if v.name().is_empty() {
            self.report(loc, "the name is empty");
        }
        if !main_graph {
            return;
        }
        let Some(ty) = &v.r#type else {
            self.report(loc, "the type is missing");
            return;
        };
        let missing = match &ty.value {
            Some(TypeValue::TensorType(t)) => match (t.elem_type_raw, &t.shape) {
                (None, _) => Some("tensor elem_type"),
                (_, None) => Some("tensor shape"),
                _ => None,
            },
            Some(TypeValue::SparseTensorType(t)) => match (t.elem_type_raw, &t.shape) {
                (None, _) => Some("sparse tensor elem_type"),
                (_, None) => Some("sparse tensor shape"),
                _ => None,
            },
            Some(TypeValue::OptionalType(t)) => {
                t.elem_type.is_none().then_some("optional elem_type")
            }
            Some(TypeValue::SequenceType(t)) => {
                t.elem_type.is_none().then_some("sequence elem_type")
            }
            Some(TypeValue::MapType(t)) => match (t.key_type_raw, &t.value_type) {
                (None, _) => Some("map key_type"),
                (_, None) => Some("map value_type"),
                _ => None,
            },
            Some(TypeValue::OpaqueType(t)) => t.name().is_empty().then_some("opaque type name"),
            None => {
                self.report(loc, "the type has no value (tensor, sequence, map, ...)");
                return;
            }
        };
        if let Some(what) = missing {
            self.report(loc, format_args!("the {what} is missing"));
        }
    }
}

/// The length of a tensor's `raw_data`, in memory or (structure-only loads) left in its
/// file; external data does not count.
fn raw_payload_len(t: &TensorProto<'_>) -> u64 {
    match (&t.raw_data, &t.lazy_data) {
        (Some(raw), _) => raw.len() as u64,
        (None, Some(lazy)) if !t.is_external() => lazy.len(),
        _ => 0,
    }
}

/// Byte `i` of a tensor's `raw_data` (which holds more than `i` bytes), read from its
/// file alone when the payload was left there.
fn raw_byte(t: &TensorProto<'_>, i: u64) -> crate::Result<u8> {
    let part = match (&t.raw_data, &t.lazy_data) {
        (Some(raw), _) => return Ok(raw.get(i as usize).copied().unwrap_or(0)),
        (None, Some(lazy)) => lazy.fetch_part(i, 1)?,
        (None, None) => return Ok(0),
    };
    Ok(part.first().copied().unwrap_or(0))
}

/// The int64 index values, as `onnx` reads them: none for external data, typed data
/// only when its count equals the dims' product, raw data when it holds enough bytes
/// (read from the file when a structure-only load left it there).
fn index_data(t: &TensorProto<'_>) -> Option<Vec<i64>> {
    if t.is_external() {
        return None;
    }
    let n = usize::try_from(dim_product(&t.dims).ok()?).ok()?;
    let fetched;
    let raw = match (&t.raw_data, &t.lazy_data) {
        (None, Some(lazy)) => {
            fetched = lazy.fetch().ok()?;
            Some(&fetched)
        }
        (raw, _) => raw.as_ref(),
    };
    match raw {
        Some(raw) => {
            let raw: &[u8] = raw;
            (raw.len() / 8 >= n).then(|| {
                raw.chunks_exact(8)
                    .take(n)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect()
            })
        }
        None => (t.int64_data.len() == n).then(|| t.int64_data.clone()),
    }
}

/// `std::filesystem::path::lexically_normal` for a relative `/`-separated path: `.`
/// and empty components dropped, `x/..` folded; a leading `..` stays.
fn lexically_normal(location: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in location.split('/') {
        match c {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// Why the external file at `path` is refused, if it is.
fn external_file_problem(dir: &Path, path: &Path, trailing_slash: bool) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("{} cannot be read: {e}", path.display())),
    };
    if meta.file_type().is_symlink() {
        return Some(format!("{} is a symbolic link", path.display()));
    }
    let canonical = |p: &Path| -> Option<PathBuf> { std::fs::canonicalize(p).ok() };
    match (canonical(path), canonical(dir)) {
        (Some(file), Some(base)) => {
            if !file.starts_with(&base) {
                return Some(format!(
                    "{} resolves outside the model directory",
                    path.display()
                ));
            }
        }
        _ => return Some(format!("{} cannot be resolved", path.display())),
    }
    if !meta.is_file() || trailing_slash {
        return Some(format!("{} is not a regular file", path.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Some(format!(
                "{} has {} hard links",
                path.display(),
                meta.nlink()
            ));
        }
    }
    None
}
