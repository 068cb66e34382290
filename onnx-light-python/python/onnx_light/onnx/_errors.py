"""The exceptions raised by onnx_light.onnx: one base class, ``Error``, and subclasses
that also derive from the built-in exception a caller would catch (``ValueError`` for
bad input, ``OSError`` for file problems). Each carries the library's message."""

import errno as _errno


def _protobuf_class(module, name):
    """The exception class ``name`` of ``google.protobuf.<module>`` when protobuf is
    installed (so that code written for ``onnx`` catches ours), else None."""
    try:
        import importlib

        return getattr(importlib.import_module("google.protobuf." + module), name)
    except ImportError:
        return None


def _bases(*ours, protobuf=None):
    return ours + ((protobuf,) if protobuf is not None else ())


class Error(Exception):
    """Base class of every onnx_light error."""


class DecodeError(*_bases(Error, ValueError, protobuf=_protobuf_class("message", "DecodeError"))):
    """Malformed or truncated model bytes, or a limit exceeded while decoding. With
    protobuf installed, also a ``google.protobuf.message.DecodeError``, what ``onnx``
    raises for such bytes."""


class OptionError(Error, ValueError):
    """An invalid option value (the message names the option)."""


class ValidationError(Error, ValueError):
    """A model that breaks the ONNX rules (``checker.check_model``): the message lists
    every problem found, each with its path in the model."""


class ExternalDataError(ValidationError):
    """External data that cannot be used: a refused path, a bad offset or length, a
    checksum mismatch, data not loaded. It is a ``ValidationError`` (``onnx.checker``'s,
    which ``onnx`` raises for refused external data) and so a ``ValueError``. ``rule`` names the external-data rule that was
    broken, as ``external_data_helper.verify_external_data`` names it (``"location"``,
    ``"symbolic_link"``, ``"not_regular_file"``, ``"out_of_range"``,
    ``"length_mismatch"``, ``"metadata"``, ``"checksum_mismatch"``, ``"aliasing"``, ...),
    or is None (data not loaded). A missing data file is a ``NoSuchFileError``."""

    def __init__(self, message, rule=None):
        super().__init__(message)
        self.rule = rule

    def __reduce__(self):
        # The rule survives pickling (an exception keeps only its args).
        return (type(self), (self.args[0], self.rule))


class EncryptionError(Error, ValueError):
    """Not an encrypted model, wrong passphrase or corrupted, truncated, followed by
    trailing bytes, unsupported format, or unauthenticated data refused."""


class TensorDataError(Error, ValueError):
    """Tensor data that does not match its type or shape."""


class GraphEditError(Error, ValueError):
    """A graph edit (``compose``, ``utils.extract_model``) refused its arguments: a name
    that is not in the graph, names both graphs use, models importing different versions
    of an operator set, ... The message is the one ``onnx`` gives."""


class FileError(Error, OSError):
    """A file could not be read or written. ``errno``, ``strerror`` and ``filename`` are
    set as on the built-in ``OSError``; the error raised is of the subclass below that
    matches its ``errno`` (so ``except FileNotFoundError`` catches a missing model, as
    with ``onnx``), or ``FileError`` itself for other causes."""

    def __str__(self):
        # The library's message (it names the tensor and the file), not OSError's
        # "[Errno N] ..." form that errno and strerror would otherwise select.
        return self.args[0] if len(self.args) == 1 else super().__str__()

    def __reduce__(self):
        # errno, strerror and filename survive pickling (OSError keeps only the args).
        if len(self.args) != 1:
            return super().__reduce__()
        return (_restore, (type(self), self.args[0], self.errno, self.strerror, self.filename))


class NoSuchFileError(FileError, FileNotFoundError):
    """The file, or a directory on its path, does not exist (``ENOENT``)."""


class FilePermissionError(FileError, PermissionError):
    """The file or its directory may not be read or written (``EACCES``, ``EPERM``)."""


class IsDirectoryError(FileError, IsADirectoryError):
    """The path names a directory where a file was expected (``EISDIR``)."""


class NotDirectoryError(FileError, NotADirectoryError):
    """A part of the path that should be a directory is not one (``ENOTDIR``)."""


class DataFileExistsError(FileError, FileExistsError):
    """A save with external data found a file at a data file's name that the model it
    replaces does not use (usually another model's data) and left it alone; pass
    ``replace_data_files=True`` to replace it."""


class RefusedConnectionError(FileError, ConnectionRefusedError):
    """The server at a URL refused the connection (``ECONNREFUSED``): nothing listens
    on its port. Not retried; ``filename`` is the URL."""


class InferenceError(Error):
    """Shape inference refused a node (``shape_inference``): its types conflict with the
    declared ones, break its operator's rules, or (``check_type``) its schema. The
    message names the operator, the node's index and name, and the reason."""


class ConvertError(Error, RuntimeError):
    """A model the version converter refuses (``version_converter``): an operator with
    no adapter between two opset versions, a node the adapter cannot carry across (an
    element type or attribute value the other version lacks), or a version outside the
    ONNX domain's. The message names the operator, its domain, the versions and the
    node. A ``RuntimeError``, as ``onnx`` raises."""


class InlineError(Error, RuntimeError):
    """A model that cannot be inlined (``inliner``): its functions' opset imports
    disagree, or a call passes more parameters than its function declares."""


class InlineNotImplementedError(InlineError, NotImplementedError):
    """Inlining that needs what is not implemented here: converting a function's nodes
    to another opset version (``convert_version=True``), or the function bodies that
    some operators build per node (context-dependent functions)."""


class ParseError(Error, ValueError):
    """Text that is not valid ONNX text syntax (``parser``): the message gives the line
    and column."""


# The subclass of FileError for each built-in OSError subclass that one maps to.
_FILE_ERRORS = {
    FileNotFoundError: NoSuchFileError,
    PermissionError: FilePermissionError,
    IsADirectoryError: IsDirectoryError,
    NotADirectoryError: NotDirectoryError,
    FileExistsError: DataFileExistsError,
    ConnectionRefusedError: RefusedConnectionError,
}


# The error number of an I/O error the library made itself (no OS error number), by
# the name of its Rust `io::ErrorKind`.
_ERRNO_OF_KIND = {
    "NotFound": _errno.ENOENT,
    "PermissionDenied": _errno.EACCES,
    "AlreadyExists": _errno.EEXIST,
    "IsADirectory": _errno.EISDIR,
    "NotADirectory": _errno.ENOTDIR,
    "ConnectionRefused": _errno.ECONNREFUSED,
}


def _file_error(message, errno, kind, strerror, filename):
    """The FileError for a library I/O error: the subclass its error number maps to
    (``OSError(errno, ...)`` picks the built-in one), with the library's message and
    ``errno``, ``strerror`` and ``filename`` set. ``errno`` is the OS error number, or
    None for an error the library made, whose number follows from ``kind``. Called by
    the native module."""
    if errno is None:
        errno = _ERRNO_OF_KIND.get(kind)
    builtin = type(OSError(errno, strerror)) if errno is not None else OSError
    return _restore(_FILE_ERRORS.get(builtin, FileError), message, errno, strerror, filename)


def _restore(cls, message, errno, strerror, filename):
    """A FileError of class ``cls`` again, from what ``FileError.__reduce__`` kept."""
    error = cls(message)
    error.errno = errno
    error.strerror = strerror
    error.filename = filename
    return error


def _text_error_class(format):
    """The class of a text-encoding parse error: ``TextProtoParseError`` (``"textproto"``)
    or ``JsonParseError`` (``"json"``). Made on first use: with protobuf installed they
    also derive from ``google.protobuf.text_format.ParseError`` and
    ``google.protobuf.json_format.ParseError`` (what ``onnx`` raises), whose modules
    take a while to import."""
    name = "TextProtoParseError" if format == "textproto" else "JsonParseError"
    made = _TEXT_ERRORS.get(name)
    if made is not None:
        return made
    if format == "textproto":
        base = _protobuf_class("text_format", "ParseError")
        doc = """Text that is not protobuf's text format of the message being read:
        ``str()`` is ``"line:column : message"`` as protobuf's; ``GetLine()`` and
        ``GetColumn()`` give the position (from 1)."""
    else:
        base = _protobuf_class("json_format", "ParseError")
        doc = """Text that is not protobuf's JSON mapping of the message being read (not
        JSON, an unknown field, a value out of range): the message names the field path;
        ``GetLine()`` and ``GetColumn()`` give the position of the value (from 1)."""

    def __init__(self, message, line=None, column=None):
        self._line = line
        self._column = column
        if line is not None and format == "textproto":
            message = f"{line}:{column} : {message}"
        elif line is not None:
            message = f"{message} (line {line}, column {column})"
        Exception.__init__(self, message)

    def GetLine(self):  # noqa: N802 (protobuf's name)
        return self._line

    def GetColumn(self):  # noqa: N802
        return self._column

    def __reduce__(self):
        return (_restore_text_error, (format, self.args[0], self._line, self._column))

    made = type(
        name,
        _bases(Error, ValueError, protobuf=base),
        {
            "__doc__": doc,
            "__module__": __name__,
            "__init__": __init__,
            "GetLine": GetLine,
            "GetColumn": GetColumn,
            "__reduce__": __reduce__,
        },
    )
    _TEXT_ERRORS[name] = made
    return made


_TEXT_ERRORS = {}


def _restore_text_error(format, text, line, column):
    error = _text_error_class(format)("")
    Exception.__init__(error, text)
    error._line = line
    error._column = column
    return error


def _text_error(format, message, line, column):
    """The error for text that does not parse, at ``line``:``column``. Called by the
    native module."""
    return _text_error_class(format)(message, line, column)


def __getattr__(name):
    if name == "TextProtoParseError":
        return _text_error_class("textproto")
    if name == "JsonParseError":
        return _text_error_class("json")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
