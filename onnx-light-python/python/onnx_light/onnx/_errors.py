"""The exceptions raised by onnx_light.onnx: one base class, ``Error``, and subclasses
that also derive from the built-in exception a caller would catch (``ValueError`` for
bad input, ``OSError`` for file problems). Each carries the library's message."""


class Error(Exception):
    """Base class of every onnx_light error."""


class DecodeError(Error, ValueError):
    """Malformed or truncated model bytes, or a limit exceeded while decoding."""


class OptionError(Error, ValueError):
    """An invalid option value (the message names the option)."""


class ExternalDataError(Error, ValueError):
    """External data that cannot be used: a refused path, a bad offset or length, a
    checksum mismatch, data not loaded."""


class EncryptionError(Error, ValueError):
    """Not an encrypted model, wrong passphrase or corrupted, truncated, unsupported
    format, or unauthenticated data refused."""


class TensorDataError(Error, ValueError):
    """Tensor data that does not match its type or shape."""


class FileError(Error, OSError):
    """A file could not be read or written."""


class DataFileExistsError(FileError, FileExistsError):
    """A save with external data found a file at a data file's name that the model it
    replaces does not use (usually another model's data) and left it alone; pass
    ``replace_data_files=True`` to replace it."""


class ValidationError(Error, ValueError):
    """A model that breaks the ONNX rules (``checker.check_model``): the message lists
    every problem found, each with its path in the model."""


class ParseError(Error, ValueError):
    """Text that is not valid ONNX text syntax (``parser``): the message gives the line
    and column."""
