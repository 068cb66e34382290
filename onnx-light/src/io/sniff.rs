//! Recognising inputs that are not ONNX models, so that a load names what it was given
//! (an empty file, an image, an archive, text) instead of reporting the first protobuf
//! rule the bytes break. Knows file signatures, nothing of decoding.
//!
//! Two checks: before decoding, the signatures that no model can start with (a model's
//! first field key is small, usually `0x08` for `ir_version`, and never one of these
//! bytes); after a failed decode, input that reads as text. Text is only named after a
//! failure, since a model missing its first fields can start with a printable byte.

use crate::error::{Error, ErrorKind, Result};

/// A signature at the start of a file, what it is, and what to do instead.
struct Signature {
    magic: &'static [u8],
    /// Where the magic sits.
    at: usize,
    format: &'static str,
    hint: &'static str,
}

const SIGNATURES: &[Signature] = &[
    Signature {
        magic: b"\x89PNG\r\n\x1a\n",
        at: 0,
        format: "a PNG image",
        hint: "",
    },
    Signature {
        magic: b"\xff\xd8\xff",
        at: 0,
        format: "a JPEG image",
        hint: "",
    },
    Signature {
        magic: b"GIF8",
        at: 0,
        format: "a GIF image",
        hint: "",
    },
    Signature {
        magic: b"PK\x03\x04",
        at: 0,
        format: "a ZIP archive (PyTorch checkpoints are ZIP archives)",
        hint: "export a PyTorch model with torch.onnx.export, or unpack the archive",
    },
    Signature {
        magic: b"\x1f\x8b",
        at: 0,
        format: "a gzip file",
        hint: "decompress it first",
    },
    Signature {
        magic: b"\x28\xb5\x2f\xfd",
        at: 0,
        format: "a zstd file",
        hint: "decompress it first",
    },
    Signature {
        magic: b"%PDF",
        at: 0,
        format: "a PDF document",
        hint: "",
    },
    Signature {
        magic: b"\x7fELF",
        at: 0,
        format: "an executable (ELF)",
        hint: "",
    },
    Signature {
        magic: b"\x93NUMPY",
        at: 0,
        format: "a NumPy array file (.npy)",
        hint: "",
    },
    Signature {
        magic: b"\x89HDF\r\n\x1a\n",
        at: 0,
        format: "an HDF5 file (Keras models are HDF5)",
        hint: "convert a Keras model with tf2onnx",
    },
    Signature {
        magic: b"GGUF",
        at: 0,
        format: "a GGUF model",
        hint: "",
    },
    Signature {
        magic: b"TFL3",
        at: 4,
        format: "a TensorFlow Lite model",
        hint: "convert it with tf2onnx",
    },
    Signature {
        magic: b"\x80\x02",
        at: 0,
        format: "a Python pickle (a PyTorch checkpoint of the legacy format)",
        hint: "export a PyTorch model with torch.onnx.export",
    },
];

/// The error for input that is not a model.
fn not_a_model(format: &str, hint: &str) -> Error {
    Error::new(ErrorKind::NotAModel {
        format: format.to_string(),
        hint: hint.to_string(),
    })
}

/// Refuses, before decoding, input that cannot be a model: empty input, an encrypted
/// model, and the file signatures no protobuf message of ONNX starts with.
pub(crate) fn refuse_before_decoding(bytes: &[u8]) -> Result<()> {
    if bytes.is_empty() {
        return Err(not_a_model("empty (0 bytes)", ""));
    }
    if bytes.starts_with(b"ONNXAE") || bytes.starts_with(b"ONNXCRY") {
        // The magics of the encrypted formats start with `O`, a field key of wire
        // type 7, so no protobuf message starts with them.
        let magic = &bytes[..bytes.len().min(8)];
        return Err(Error::new(ErrorKind::EncryptedInput {
            format: magic.escape_ascii().to_string(),
        }));
    }
    if let Some(s) = SIGNATURES
        .iter()
        .find(|s| bytes.get(s.at..s.at + s.magic.len()) == Some(s.magic))
    {
        return Err(not_a_model(s.format, s.hint));
    }
    if let Some(format) = safetensors(bytes) {
        return Err(not_a_model(
            format,
            "safetensors files hold weights only; an ONNX model holds the graph too",
        ));
    }
    Ok(())
}

/// After a decode of `bytes` failed with `err`: input that reads as text (JSON, the
/// ONNX text format, a README) is named as such, anything else keeps `err`. A refusal
/// by a limit (nesting depth, memory) stays what it is: it says what to change.
pub(crate) fn explain_failure(bytes: &[u8], err: Error) -> Error {
    let malformed = matches!(
        err.kind(),
        ErrorKind::Truncated { .. }
            | ErrorKind::VarintOverflow
            | ErrorKind::InvalidWireType(_)
            | ErrorKind::InvalidFieldNumber(_)
            | ErrorKind::LengthOutOfBounds { .. }
            | ErrorKind::InvalidPackedLength { .. }
            | ErrorKind::UnexpectedEndGroup { .. }
            | ErrorKind::UnterminatedGroup { .. }
            | ErrorKind::GroupNotSupported { .. }
    );
    if !malformed {
        return err;
    }
    let head = &bytes[..bytes.len().min(512)];
    // Valid UTF-8 without control characters, but for a multi-byte character cut at
    // the end of the head.
    let valid = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => "",
    };
    let text = !valid.is_empty()
        && valid.len() + 4 > head.len()
        && valid.chars().all(|c| !c.is_control() || c.is_whitespace());
    if !text {
        return err;
    }
    let first = head
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace())
        .unwrap_or(b' ');
    let (format, hint) = match first {
        b'{' | b'[' => (
            "JSON text",
            "a model saved as JSON by onnx is read with onnx.load(path, format=\"json\")",
        ),
        _ if contains(head, b"ir_version") || contains(head, b") => (") => (
            "text (it looks like the ONNX text format)",
            "parse it with onnx_light::text::parse_model (onnx-light show prints it)",
        ),
        b'<' => ("an XML or HTML document", ""),
        _ => ("text", ""),
    };
    not_a_model(format, hint)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `Some` when `bytes` start like a safetensors file: an 8-byte little-endian header
/// length (below 4 GiB: its high bytes are zero) followed by a JSON object's `{"`. A
/// model's first bytes are field keys and values, which never look like that.
fn safetensors(bytes: &[u8]) -> Option<&'static str> {
    let head = bytes.get(..10)?;
    (head[4..8] == [0; 4] && head[..4] != [0; 4] && &head[8..10] == b"{\"")
        .then_some("a safetensors file")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &[u8]) -> String {
        match refuse_before_decoding(bytes) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("{bytes:?} was not refused"),
        }
    }

    #[test]
    fn files_of_other_formats_are_named() {
        assert!(refused(b"").contains("empty"));
        assert!(refused(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").contains("PNG"));
        assert!(refused(b"PK\x03\x04\x14\0").contains("PyTorch"));
        assert!(refused(b"\xff\xd8\xff\xe0").contains("JPEG"));
        let mut st = 14u64.to_le_bytes().to_vec();
        st.extend_from_slice(br#"{"w":{"a":1}}  "#);
        assert!(refused(&st).contains("safetensors"));
        assert!(refused(b"\0\0\0\0TFL3").contains("TensorFlow Lite"));
        assert!(refused(b"ONNXAE01rest").contains("encrypted"));
    }

    #[test]
    fn models_are_not_refused() {
        // The first bytes of models as protobuf writes them: ir_version, then more.
        for head in [
            &b"\x08\x07\x12\x04test"[..],
            b"\x08\x0a:\x05",
            b":\x02\x0a\x00",
        ] {
            assert!(refuse_before_decoding(head).is_ok(), "{head:?}");
        }
    }

    #[test]
    fn text_is_named_only_after_a_failed_decode() {
        let err = || Error::new(ErrorKind::InvalidWireType(7));
        let named = |b: &[u8]| explain_failure(b, err()).to_string();
        assert!(named(b"# README\n\nSome words.\n").contains("text"));
        assert!(named(b"  {\"irVersion\": \"7\"}").contains("JSON"));
        // A binary prefix cut inside a multi-byte character is not text.
        assert!(matches!(
            explain_failure(b"\x08\x0e\x12\x03h\xc3", err()).kind(),
            ErrorKind::InvalidWireType(7)
        ));
        assert!(
            named(b"<\n  ir_version: 7\n>\nagraph (float[N] x) => (float[N] y) {}")
                .contains("text format")
        );
        // Binary input keeps the decoder's own error.
        assert!(matches!(
            explain_failure(b"\x08\x07\xff\xff", err()).kind(),
            ErrorKind::InvalidWireType(7)
        ));
    }
}
