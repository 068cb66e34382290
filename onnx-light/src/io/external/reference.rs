//! Reading a tensor's `external_data` entries strictly: `location`, `offset`, `length`,
//! `checksum` (and a tolerated, ignored `basepath`), each at most once.

use crate::error::{Error, ErrorKind, ExternalDataRule, Result};
use crate::onnx::TensorProto;

/// Where a tensor's bytes are, as its metadata says (not yet checked against a file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalDataRef {
    /// The `location` value as written in the model.
    pub location: String,
    /// Byte offset in the file (`offset`, default 0).
    pub offset: u64,
    /// Byte length (`length`); `None` means "to the end of the file".
    pub length: Option<u64>,
    /// The `checksum` value (SHA-1 of the whole file, hex), if any.
    pub checksum: Option<String>,
}

/// The error for an external-data reference of `tensor` that breaks `rule`.
pub(crate) fn invalid(
    tensor: &str,
    location: Option<&str>,
    rule: ExternalDataRule,
    reason: impl Into<String>,
) -> Error {
    Error::new(ErrorKind::InvalidExternalData {
        location: location.map(str::to_string),
        reason: reason.into(),
        rule,
    })
    .in_tensor(tensor)
}

/// A plain decimal u64: digits only (no sign, space or prefix), no overflow.
fn parse_u64(tensor: &str, location: &str, key: &str, value: &str) -> Result<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(
            tensor,
            Some(location),
            ExternalDataRule::Metadata,
            format!("`{key}` must be a plain decimal number, found {value:?}"),
        ));
    }
    value.parse::<u64>().map_err(|_| {
        invalid(
            tensor,
            Some(location),
            ExternalDataRule::Metadata,
            format!("`{key}` {value} does not fit in 64 bits"),
        )
    })
}

impl ExternalDataRef {
    /// Reads the entries of `tensor`.
    ///
    /// # Errors
    /// `InvalidExternalData` naming the tensor: a missing or repeated key, or a value
    /// that is not a plain decimal u64.
    pub fn from_tensor(tensor: &TensorProto<'_>) -> Result<Self> {
        let name = tensor.name();
        let mut location = None;
        let mut offset = None;
        let mut length = None;
        let mut checksum = None;
        for entry in &tensor.external_data {
            let key = entry.key();
            let value = entry.value();
            let slot = match key {
                "location" => &mut location,
                "offset" => &mut offset,
                "length" => &mut length,
                "checksum" => &mut checksum,
                // Written by old tools; never used to resolve anything.
                "basepath" => continue,
                // Keys from newer specifications are not ours to refuse.
                _ => continue,
            };
            if slot.is_some() {
                return Err(invalid(
                    name,
                    location.as_deref(),
                    ExternalDataRule::Metadata,
                    format!("key `{key}` appears twice"),
                ));
            }
            *slot = Some(value.to_string());
        }
        let location = location.ok_or_else(|| {
            invalid(
                name,
                None,
                ExternalDataRule::Metadata,
                "the `location` key is missing",
            )
        })?;
        let offset = match offset {
            Some(v) => parse_u64(name, &location, "offset", &v)?,
            None => 0,
        };
        let length = match length {
            Some(v) => Some(parse_u64(name, &location, "length", &v)?),
            None => None,
        };
        Ok(ExternalDataRef {
            location,
            offset,
            length,
            checksum,
        })
    }
}
