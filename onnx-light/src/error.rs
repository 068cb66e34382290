//! The crate's one error type.
//!
//! [`Error`] is a pointer-sized handle (the details live in a box) so that the
//! `Result`s returned by the hot decoding paths stay small. [`Error::kind`] says
//! what went wrong; [`Error::offset`] and [`Error::path`] say where. Errors never
//! contain secrets (passphrases, key material) and never contain payload bytes.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Shorthand for `Result<T, onnx_light::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!("; {hint}")
    }
}

/// Everything that can go wrong in this crate.
///
/// Match on [`Error::kind`] to tell failures apart; use `Display` for a message that
/// names what happened and where (byte offset, message/field path, file).
pub struct Error {
    inner: Box<ErrorInner>,
}

struct ErrorInner {
    kind: ErrorKind,
    /// The limit that refused the input, for a kind that does not carry it.
    limit: Option<Limit>,
    offset: Option<u64>,
    /// Innermost segment first; displayed outermost first.
    path: Vec<PathSegment>,
    file: Option<PathBuf>,
    tensor: Option<String>,
    source: Option<io::Error>,
}

/// What went wrong. New kinds may be added in minor releases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended in the middle of a value.
    #[error("truncated input: a value needs {needed} bytes but only {remaining} remain")]
    Truncated {
        /// Bytes the value needed.
        needed: u64,
        /// Bytes that were left.
        remaining: u64,
    },
    /// A varint longer than 10 bytes, or a field key longer than 5 (protobuf reads keys
    /// as 32-bit varints).
    #[error("varint longer than 10 bytes (5 for a field key)")]
    VarintOverflow,
    /// A key carried wire type 6 or 7, which protobuf does not define.
    #[error("invalid wire type {0}")]
    InvalidWireType(u8),
    /// A field number of 0 or at least 2^29.
    #[error("invalid field number {0} (must be 1 ..= 536870911)")]
    InvalidFieldNumber(u64),
    /// A known field arrived with a wire type its declaration does not allow. Decoding
    /// never reports it (such a field is kept as an unknown field, as protobuf keeps
    /// it); [`Reader::expect`](crate::wire::Reader::expect) does, for hand-written code.
    #[error(
        "wire type mismatch: the field is declared {} but the input has {}",
        wire_type_name(.expected),
        wire_type_name(.found)
    )]
    WireTypeMismatch {
        /// Wire type the declaration expects (for repeated scalars, the element's): 0
        /// varint, 1 fixed 64-bit, 2 length-delimited, 3 and 4 group start and end, 5
        /// fixed 32-bit.
        expected: u8,
        /// Wire type found in the input.
        found: u8,
    },
    /// A length prefix larger than what is left of the enclosing message.
    #[error("length prefix {length} exceeds the {remaining} bytes left in the enclosing message")]
    LengthOutOfBounds {
        /// The declared length.
        length: u64,
        /// Bytes left in the enclosing message.
        remaining: u64,
    },
    /// A packed fixed-width field whose length is not a multiple of the element size.
    #[error(
        "packed field of {length} bytes is not a multiple of its {element_size}-byte elements"
    )]
    InvalidPackedLength {
        /// The packed payload length.
        length: u64,
        /// The element size (4 or 8).
        element_size: u8,
    },
    /// Messages or groups nested deeper than the configured limit.
    #[error("messages nested deeper than the limit of {limit}")]
    RecursionLimitExceeded {
        /// The limit in force.
        limit: u32,
    },
    /// A string field that is not valid UTF-8.
    #[error("string field is not valid UTF-8")]
    InvalidUtf8,
    /// An end-group key with no matching start-group key.
    #[error("end-group key for field {field} without a matching start")]
    UnexpectedEndGroup {
        /// Field number of the stray end-group key.
        field: u32,
    },
    /// A group whose end key is missing or names another field.
    #[error("group field {field} is not terminated by its end-group key")]
    UnterminatedGroup {
        /// Field number of the start-group key.
        field: u32,
    },
    /// A groups-typed field where this type expects another wire type.
    #[error("field {field} is encoded as a group, which this type does not declare")]
    GroupNotSupported {
        /// Field number of the group.
        field: u32,
    },
    /// An encoder ran out of room in a buffer sized for the message (the message
    /// changed between sizing and writing).
    #[error("output buffer too small: {needed} more bytes, {remaining} left (was the message changed while saving?)")]
    BufferTooSmall {
        /// Bytes that did not fit.
        needed: u64,
        /// Bytes left in the buffer.
        remaining: u64,
    },
    /// A value is out of the range the protobuf encoding allows.
    #[error("value out of range: {what}")]
    ValueOutOfRange {
        /// What was out of range.
        what: &'static str,
    },
    /// An option was given a value it does not accept.
    #[error("invalid option `{name}`: {reason}")]
    InvalidOption {
        /// The option's name.
        name: &'static str,
        /// Why the value is refused.
        reason: String,
    },
    /// An input or tensor larger than a configured limit.
    #[error("{which} of {actual} bytes exceeds the limit of {limit} bytes")]
    LimitExceeded {
        /// Which limit.
        which: Limit,
        /// The limit in bytes.
        limit: u64,
        /// The size found.
        actual: u64,
    },
    /// A model that cannot be written as it is (e.g. weights left on disk).
    #[error("cannot save the model: {reason}")]
    IncompleteModel {
        /// Why.
        reason: String,
    },
    /// A tensor's external-data reference is refused: `rule` says which rule it broke,
    /// the message says how.
    #[error("invalid external data{}: {reason}", at_location(.location))]
    InvalidExternalData {
        /// The `location` value, when known.
        location: Option<String>,
        /// Why it is refused.
        reason: String,
        /// The rule the reference broke.
        rule: ExternalDataRule,
    },
    /// A data file's SHA-1 does not match the tensor's `checksum`.
    #[error("external data checksum mismatch: the model records {expected}, the file's SHA-1 is {actual}")]
    ChecksumMismatch {
        /// The checksum the model records.
        expected: String,
        /// The checksum of the file.
        actual: String,
    },
    /// Input given to a load that is an encrypted model (it starts with the magic of an
    /// encrypted format, which no protobuf message can start with): it has to be
    /// decrypted, or loaded with the passphrase (`crypto::load_encrypted`).
    #[error(
        "the input is an encrypted model ({format}); load it with its passphrase \
         (load_encrypted) or decrypt it first"
    )]
    EncryptedInput {
        /// Its first 8 bytes, e.g. `ONNXAE01`.
        format: String,
    },
    /// Input given to a load that is not an ONNX model: empty, or recognised as another
    /// format (an image, an archive, safetensors, text, ...).
    #[error("the input is not an ONNX model: it is {format}{}", hint_suffix(.hint))]
    NotAModel {
        /// What it is, e.g. `a PNG image` or `empty (0 bytes)`.
        format: String,
        /// What to do instead, or empty.
        hint: String,
    },
    /// Input given to a decryption function that does not start with a known encrypted
    /// format's magic (`ONNXAE01`, `ONNXCRY1` or `ONNXCRY2`).
    #[error("not an encrypted model: the input starts with none of ONNXAE01, ONNXCRY1, ONNXCRY2")]
    NotEncrypted,
    /// An encrypted model in a version, key-derivation function or with parameters this
    /// library does not read (checked before any key is derived).
    #[error("unsupported encrypted model: {reason}")]
    UnsupportedEncryption {
        /// What is unsupported, e.g. `format version 02`.
        reason: String,
    },
    /// Decryption failed authentication: the passphrase is wrong, or the encrypted bytes
    /// were modified, reordered or corrupted. Nothing was parsed or returned.
    #[error("wrong passphrase, or the encrypted model was modified or corrupted")]
    WrongPassphraseOrCorrupted,
    /// The encrypted input ends early: its header or a chunk is cut off, or its final
    /// chunk is missing.
    #[error("the encrypted model is truncated")]
    TruncatedEncryption,
    /// Bytes follow the end of the encrypted model (appended to the file): the error's
    /// offset is where its encrypted stream ends. A form of corruption found with the
    /// right passphrase: the stream up to there authenticated (`ONNXAE01`, `ONNXCRY2`)
    /// or, for `ONNXCRY1`, which has no MAC, its whole blocks decrypted as a complete
    /// stream. Nothing was returned.
    #[error("the encrypted model has trailing bytes after the end of its encrypted stream")]
    TrailingBytes,
    /// An input in an encrypted format without integrity protection (`ONNXCRY1`),
    /// refused because the caller did not opt in with
    /// `DecryptOptions::allow_unauthenticated(true)`. Checked before any key is derived.
    #[error(
        "{format} has no integrity protection, so a modified file would go undetected; \
         refused unless unauthenticated input is allowed \
         (DecryptOptions::allow_unauthenticated(true))"
    )]
    UnauthenticatedEncryption {
        /// The format's magic, e.g. `ONNXCRY1`.
        format: &'static str,
    },
    /// A tensor's payload does not match its shape and data type (or a list of values
    /// does not match the shape it is given).
    #[error(
        "tensor data does not match its shape and data type: {field} holds {actual} {}, {expected} expected",
        unit_of(field)
    )]
    TensorDataMismatch {
        /// Where the payload is: `raw_data`, a typed field such as `int32_data`, `external
        /// data`, or the `values` given to a constructor.
        field: &'static str,
        /// Bytes (for `raw_data` and external data) or entries (otherwise) the shape and
        /// data type need.
        expected: u64,
        /// Bytes or entries found.
        actual: u64,
    },
    /// A tensor's data type is `UNDEFINED`, unknown to this library, or has no form for
    /// the access asked (e.g. raw bytes of a `STRING` tensor).
    #[error("{}", unsupported_data_type(.data_type, .name))]
    UnsupportedDataType {
        /// The `data_type` value.
        data_type: i32,
        /// Its ONNX name (`STRING`, `FLOAT8E4M3FN`, ...), or `None` when the value is
        /// not one ONNX defines.
        name: Option<&'static str>,
    },
    /// Typed access asked for an element type that is not the tensor's.
    #[error("tensor holds {data_type} elements, not {requested}")]
    ElementTypeMismatch {
        /// The ONNX name of the tensor's data type (`FLOAT`, ...).
        data_type: &'static str,
        /// The ONNX name of the data type of the element type asked for.
        requested: &'static str,
    },
    /// A tensor's data is in an external file that was neither loaded nor attached
    /// lazily.
    #[error("tensor data is in external file {location:?}, which was not loaded")]
    ExternalDataNotLoaded {
        /// The `location` entry of its `external_data` (empty when missing).
        location: String,
    },
    /// Type and shape inference refused a node (`onnx`'s `InferenceError`, strict mode):
    /// its types conflict with the declared ones or break its operator's rules.
    #[error("[ShapeInferenceError] ({op_type}, node {node_index} {node_name:?}): {reason}")]
    Inference {
        /// The node's index in its graph.
        node_index: usize,
        /// The node's name (may be empty).
        node_name: String,
        /// Its operator.
        op_type: String,
        /// What went wrong.
        reason: String,
    },
    /// Type and shape inference refused the model before any node (`onnx`'s
    /// `InferenceError` in either mode): an initializer's type conflicts with the type
    /// its graph declares for the same name. `reason` starts with `onnx`'s category
    /// (`[ShapeInferenceError]` or `[TypeInferenceError]`).
    #[error("{reason}")]
    GraphInference {
        /// What went wrong.
        reason: String,
    },
    /// The model breaks a rule `onnx`'s checker enforces before shape inference or
    /// inlining (`onnx`'s `ValidationError`): its local functions call each other in a
    /// cycle, or two share an identifier. `reason` is in `onnx`'s words.
    #[error("{reason}")]
    InvalidModel {
        /// What is wrong.
        reason: String,
    },
    /// A graph edit (`compose`, `extract`) refused its arguments or the graphs it was
    /// given: a name that is not in the graph, names both graphs use, models that
    /// import different versions of an operator set, ... The message is `onnx`'s.
    #[error("{reason}")]
    GraphEdit {
        /// What is wrong, and with which names.
        reason: String,
    },
    /// An operating-system I/O error (see [`Error::io_error`]).
    #[error("I/O error ({0})")]
    Io(io::ErrorKind),
    /// Text that is not a valid protobuf text-format or JSON encoding of the message
    /// being read (see [`crate::formats`]): where, from 1, and what is wrong.
    #[error("invalid {format}: {line}:{column}: {message}")]
    InvalidText {
        /// Which encoding was being read.
        format: TextFormat,
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1, in characters.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A message or enum type that the [`crate::formats::TypeRegistry`] in use does not
    /// know.
    #[error("type `{name}` is not in the type registry")]
    UnregisteredType {
        /// The type's fully qualified protobuf name.
        name: String,
    },
}

/// The text encodings of protobuf messages that [`crate::formats`] reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TextFormat {
    /// protobuf's text format (`text_format.MessageToString`, `.textproto` files).
    TextProto,
    /// protobuf's JSON mapping (`json_format.MessageToJson`, `.json` files).
    Json,
}

impl fmt::Display for TextFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextFormat::TextProto => "protobuf text format",
            TextFormat::Json => "protobuf JSON",
        })
    }
}

/// A limit that refused an input, each lifted by an option a caller can set when it
/// trusts the input: what [`Error::limit`] returns, so that callers can tell the limits
/// apart (and say which option to set) without reading messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The memory the decoded model may take (`ParseOptions::max_memory`, by default
    /// proportional to the input's size).
    MaxMemory,
    /// The input's size (`ParseOptions::max_model_size`).
    MaxModelSize,
    /// One tensor's data size (`ParseOptions::max_tensor_size`).
    MaxTensorSize,
    /// The size of a file the process may write (`ulimit -f`, `RLIMIT_FSIZE`), set
    /// outside the program.
    FileSize,
    /// How deep messages may nest (`ParseOptions::recursion_limit`, default 100).
    NestingDepth,
    /// External tensors whose ranges share bytes of their data files, refused unless
    /// `ParseOptions::allow_aliasing` is set.
    Aliasing,
}

impl Limit {
    /// What the limit bounds, as messages name it (`decoded size (max_memory)`).
    pub fn what(self) -> &'static str {
        match self {
            Limit::MaxMemory => "decoded size (max_memory)",
            Limit::MaxModelSize => "model size",
            Limit::MaxTensorSize => "tensor size",
            Limit::FileSize => "file size limit of the process (ulimit -f)",
            Limit::NestingDepth => "nesting depth (recursion_limit)",
            Limit::Aliasing => "external data aliasing (allow_aliasing)",
        }
    }
}

/// The rules an external-data reference must follow, to tell failures apart without
/// reading messages: [`ErrorKind::InvalidExternalData`] carries the one a load refused a
/// reference for, and `io::external::verify` reports each broken one. A missing or
/// unreadable data file and a checksum mismatch fail a load with their own kinds
/// (`Io`, `ChecksumMismatch`); `verify` names them with the rules below too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExternalDataRule {
    /// The `external_data` entries are malformed: no `location`, a key given twice, an
    /// `offset` or `length` that is not a plain decimal 64-bit number.
    Metadata,
    /// The `location` is refused as a name: empty, absolute, with a drive or UNC
    /// prefix, a `..` component, control characters, or a name that means something
    /// else elsewhere (`_ORT_MEM_ADDR_`, a `:`, a Windows device name, a trailing dot or
    /// space).
    Location,
    /// The path passes through a symbolic link (links are never followed).
    SymbolicLink,
    /// The path leads out of the model's directory.
    OutsideDirectory,
    /// The location names a directory, FIFO, device or socket, not a regular file.
    NotRegularFile,
    /// No file at the location.
    MissingFile,
    /// The file is there but cannot be opened or read.
    Unreadable,
    /// `offset`, or `offset + length`, is past the end of the file.
    OutOfRange,
    /// `length` differs from the bytes the tensor's dims and data type need.
    LengthMismatch,
    /// The file's SHA-1 differs from the tensor's `checksum`.
    ChecksumMismatch,
    /// The tensors reference more external bytes than their data files hold: their
    /// ranges alias each other (refused unless aliasing is allowed).
    Aliasing,
}

impl ExternalDataRule {
    /// A stable snake_case name (`missing_file`, `out_of_range`, ...), for tools and
    /// bindings that report rules as text.
    pub fn name(self) -> &'static str {
        match self {
            ExternalDataRule::Metadata => "metadata",
            ExternalDataRule::Location => "location",
            ExternalDataRule::SymbolicLink => "symbolic_link",
            ExternalDataRule::OutsideDirectory => "outside_directory",
            ExternalDataRule::NotRegularFile => "not_regular_file",
            ExternalDataRule::MissingFile => "missing_file",
            ExternalDataRule::Unreadable => "unreadable",
            ExternalDataRule::OutOfRange => "out_of_range",
            ExternalDataRule::LengthMismatch => "length_mismatch",
            ExternalDataRule::ChecksumMismatch => "checksum_mismatch",
            ExternalDataRule::Aliasing => "aliasing",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what())
    }
}

/// One step of the message/field path at which a decoding error happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSegment {
    /// Name of the message type that holds the field.
    pub message: &'static str,
    /// Name of the field.
    pub field: &'static str,
    /// Index in a repeated field.
    pub index: Option<usize>,
}

impl Error {
    /// An error of the given kind, with no location yet.
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        Error {
            inner: Box::new(ErrorInner {
                kind,
                limit: None,
                offset: None,
                path: Vec::new(),
                file: None,
                tensor: None,
                source: None,
            }),
        }
    }

    /// An error of the given kind at an absolute byte offset of the input.
    #[cold]
    pub fn at(kind: ErrorKind, offset: u64) -> Self {
        let mut e = Error::new(kind);
        e.inner.offset = Some(offset);
        e
    }

    /// An I/O error, optionally naming the file it concerns.
    #[cold]
    pub fn io(source: io::Error, file: Option<&Path>) -> Self {
        let mut e = Error::new(ErrorKind::Io(source.kind()));
        e.inner.file = file.map(Path::to_path_buf);
        e.inner.source = Some(source);
        e
    }

    /// An invalid-option error.
    #[cold]
    pub fn invalid_option(name: &'static str, reason: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidOption {
            name,
            reason: reason.into(),
        })
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The limit that refused the input, if one did: the `which` of
    /// [`ErrorKind::LimitExceeded`], [`Limit::NestingDepth`] for
    /// [`ErrorKind::RecursionLimitExceeded`], [`Limit::Aliasing`] for external tensors
    /// refused because their ranges alias each other (an
    /// [`ErrorKind::InvalidExternalData`]). Tells a caller which option would let the
    /// input through, whatever the message says. (The message of an aliasing refusal
    /// names `ParseOptions::allow_aliasing` after the kind's reason, which does not.)
    ///
    /// ```
    /// use onnx_light::io::{self, ParseOptions};
    /// use onnx_light::onnx::{GraphProto, ModelProto};
    /// use onnx_light::prelude::*;
    /// use onnx_light::Limit;
    ///
    /// let bytes = ModelProto::new(GraphProto::named("g"), vec![]).encode_to_vec()?;
    /// let refused = io::load_from_bytes(&bytes, &ParseOptions::default().max_model_size(4));
    /// assert_eq!(refused.map(|_| ()).unwrap_err().limit(), Some(Limit::MaxModelSize));
    /// # Ok::<(), onnx_light::Error>(())
    /// ```
    pub fn limit(&self) -> Option<Limit> {
        match self.inner.kind {
            ErrorKind::LimitExceeded { which, .. } => Some(which),
            ErrorKind::RecursionLimitExceeded { .. } => Some(Limit::NestingDepth),
            _ => self.inner.limit,
        }
    }

    /// Records that `limit` refused the input, for an error whose kind does not say so
    /// (see [`limit`](Self::limit)).
    #[cold]
    pub fn refused_by(mut self, limit: Limit) -> Self {
        self.inner.limit = Some(limit);
        self
    }

    /// Absolute byte offset in the input where the problem was found, when known.
    pub fn offset(&self) -> Option<u64> {
        self.inner.offset
    }

    /// The message/field path from the outermost message to the failing field.
    pub fn path(&self) -> impl Iterator<Item = &PathSegment> {
        self.inner.path.iter().rev()
    }

    /// The path as text, e.g. `ModelProto.graph.node[3].name`; empty when unknown.
    pub fn path_string(&self) -> String {
        let mut out = String::new();
        for (i, seg) in self.path().enumerate() {
            if i == 0 {
                out.push_str(seg.message);
            }
            out.push('.');
            out.push_str(seg.field);
            if let Some(idx) = seg.index {
                out.push_str(&format!("[{idx}]"));
            }
        }
        out
    }

    /// The file the error concerns, when known.
    pub fn file(&self) -> Option<&Path> {
        self.inner.file.as_deref()
    }

    /// The tensor the error concerns, when known.
    pub fn tensor(&self) -> Option<&str> {
        self.inner.tensor.as_deref()
    }

    /// The underlying I/O error, for [`ErrorKind::Io`].
    pub fn io_error(&self) -> Option<&io::Error> {
        self.inner.source.as_ref()
    }

    /// Records that the error happened inside `message.field[index]`. Called while the
    /// error propagates outwards, so the path is built only on the failure path.
    #[cold]
    pub fn in_field(
        mut self,
        message: &'static str,
        field: &'static str,
        index: Option<usize>,
    ) -> Self {
        self.inner.path.push(PathSegment {
            message,
            field,
            index,
        });
        self
    }

    /// Sets the byte offset if none is recorded yet.
    #[cold]
    pub fn or_at(mut self, offset: u64) -> Self {
        if self.inner.offset.is_none() {
            self.inner.offset = Some(offset);
        }
        self
    }

    /// Names the tensor the error concerns (kept if one is already named).
    #[cold]
    pub fn in_tensor(mut self, name: &str) -> Self {
        if self.inner.tensor.is_none() {
            self.inner.tensor = Some(name.to_string());
        }
        self
    }

    /// Names the file the error concerns (kept if one is already named).
    #[cold]
    pub fn in_file(mut self, file: &Path) -> Self {
        if self.inner.file.is_none() {
            self.inner.file = Some(file.to_path_buf());
        }
        self
    }
}

/// The name of a wire type number, for messages.
fn wire_type_name(wire_type: &u8) -> &'static str {
    match *wire_type {
        0 => "varint",
        1 => "fixed64",
        2 => "length-delimited",
        3 => "start-group",
        4 => "end-group",
        5 => "fixed32",
        _ => "invalid",
    }
}

/// ` at location "..."` when the location is known.
fn at_location(location: &Option<String>) -> String {
    location
        .as_ref()
        .map(|l| format!(" at location {l:?}"))
        .unwrap_or_default()
}

/// The unit a tensor payload is counted in: bytes for byte payloads, values otherwise.
fn unit_of(field: &str) -> &'static str {
    match field {
        "raw_data" | "external data" | "packed data" => "bytes",
        _ => "values",
    }
}

/// The message of [`ErrorKind::UnsupportedDataType`].
fn unsupported_data_type(data_type: &i32, name: &Option<&'static str>) -> String {
    match *name {
        Some("STRING") => {
            "STRING tensors hold strings, not typed values (read them with `strings()`)".into()
        }
        Some(name) => format!("unsupported tensor data type {name} ({data_type})"),
        None => format!("unknown tensor data type {data_type}"),
    }
}

impl Error {
    /// The message without the tensor's name: for one line about the same problem in
    /// many tensors.
    pub fn without_tensor(&self) -> impl fmt::Display + '_ {
        struct WithoutTensor<'e>(&'e Error);
        impl fmt::Display for WithoutTensor<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f, false)
            }
        }
        WithoutTensor(self)
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, with_tensor: bool) -> fmt::Result {
        match (&self.inner.kind, &self.inner.source) {
            (ErrorKind::Io(_), Some(src)) => write!(f, "I/O error: {src}")?,
            (kind, _) => write!(f, "{kind}")?,
        }
        // The option that lifts an aliasing refusal is said here rather than in its
        // reason, so that a tool with its own flag for it can word the error without it.
        if self.inner.limit == Some(Limit::Aliasing)
            && matches!(self.inner.kind, ErrorKind::InvalidExternalData { .. })
        {
            f.write_str("; set ParseOptions::allow_aliasing to load it anyway")?;
        }
        if let Some(t) = self.inner.tensor.as_ref().filter(|_| with_tensor) {
            write!(f, " (tensor `{t}`)")?;
        }
        if !self.inner.path.is_empty() {
            write!(f, " in {}", self.path_string())?;
        }
        if let Some(off) = self.inner.offset {
            write!(f, " at byte offset {off}")?;
        }
        if let Some(file) = &self.inner.file {
            write!(f, " ({})", file.display())?;
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind);
        if let Some(limit) = &self.inner.limit {
            d.field("limit", limit);
        }
        if let Some(off) = self.inner.offset {
            d.field("offset", &off);
        }
        if !self.inner.path.is_empty() {
            d.field("path", &self.path_string());
        }
        if let Some(file) = &self.inner.file {
            d.field("file", file);
        }
        if let Some(t) = &self.inner.tensor {
            d.field("tensor", t);
        }
        if let Some(src) = &self.inner.source {
            d.field("source", src);
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::io(e, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_pointer_sized_so_results_stay_small() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn the_limit_that_refused_an_input_is_known_from_the_kind_not_the_message() {
        let exceeded = |which| ErrorKind::LimitExceeded {
            which,
            limit: 1,
            actual: 2,
        };
        for which in [Limit::MaxMemory, Limit::MaxModelSize, Limit::FileSize] {
            assert_eq!(Error::new(exceeded(which)).limit(), Some(which));
        }
        let deep = Error::new(ErrorKind::RecursionLimitExceeded { limit: 100 });
        assert_eq!(deep.limit(), Some(Limit::NestingDepth));
        // Whatever an external-data message says, only the recorded limit counts.
        let external = |reason: &str| {
            Error::new(ErrorKind::InvalidExternalData {
                location: None,
                reason: reason.into(),
                rule: ExternalDataRule::Location,
            })
        };
        assert_eq!(external("set allow_aliasing").limit(), None);
        let aliased = external("reworded").refused_by(Limit::Aliasing);
        assert_eq!(aliased.limit(), Some(Limit::Aliasing));
        // The option is said by the message, not in the reason a tool may reuse.
        assert_eq!(
            aliased.to_string(),
            "invalid external data: reworded; set ParseOptions::allow_aliasing to load it anyway"
        );
        assert!(!aliased.kind().to_string().contains("allow_aliasing"));
        assert_eq!(Error::new(ErrorKind::InvalidUtf8).limit(), None);
        assert_eq!(
            Error::new(exceeded(Limit::MaxMemory)).to_string(),
            "decoded size (max_memory) of 2 bytes exceeds the limit of 1 bytes"
        );
    }

    #[test]
    fn without_tensor_leaves_out_only_the_tensor() {
        let e = Error::at(ErrorKind::InvalidUtf8, 3)
            .in_tensor("w")
            .in_file(Path::new("m.onnx"));
        assert_eq!(
            e.to_string(),
            "string field is not valid UTF-8 (tensor `w`) at byte offset 3 (m.onnx)"
        );
        assert_eq!(
            e.without_tensor().to_string(),
            "string field is not valid UTF-8 at byte offset 3 (m.onnx)"
        );
    }

    #[test]
    fn display_names_what_path_and_offset() {
        let e = Error::at(ErrorKind::InvalidUtf8, 17)
            .in_field("NodeProto", "name", None)
            .in_field("GraphProto", "node", Some(3))
            .in_field("ModelProto", "graph", None);
        assert_eq!(e.path_string(), "ModelProto.graph.node[3].name");
        assert_eq!(
            e.to_string(),
            "string field is not valid UTF-8 in ModelProto.graph.node[3].name at byte offset 17"
        );
    }
}
