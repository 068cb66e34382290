"""``onnx.external_data_helper`` on onnx_light. As in ``onnx``,
``convert_model_to_external_data`` marks tensors as external at once (their bytes stay
in memory) and the next ``save`` writes them to the files they name; the marking, the
path checks and the writing are the library's."""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any, NamedTuple, Optional

from . import ModelProto, TensorProto, _as_model, _native, load_model, save_model


def uses_external_data(tensor: Any) -> bool:
    """True when the tensor's data is stored in an external file."""
    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def convert_model_to_external_data(
    model: Any,
    all_tensors_to_one_file: bool = True,
    location: Optional[str] = None,
    size_threshold: int = 1024,
    convert_attribute: bool = False,
) -> None:
    """Marks the tensors of ``model`` holding at least ``size_threshold`` bytes of
    ``raw_data`` as external, as ``onnx`` does: ``data_location = EXTERNAL`` and a
    ``location`` entry, the bytes kept in memory. The next ``save`` writes them to that
    file, next to the model.

    With ``all_tensors_to_one_file``, every tensor goes to ``location`` (default: a new
    unique ``<uuid>.data`` name, as in ``onnx``); otherwise each goes to a file named
    after the tensor. ``location`` is relative to the model's directory (it may name
    subdirectories, created by the save); an absolute path, a ``..`` component or a
    hostile name is refused here (``OptionError``), not when the model is saved. Attribute
    tensors are included with ``convert_attribute``. The size counted is the length of
    ``raw_data`` (``onnx`` compares ``sys.getsizeof``, 33 bytes more)."""
    model = _as_model(model)
    if location is None:
        location = f"{uuid.uuid1()}.data"
    _native.mark_external_data(model, location, all_tensors_to_one_file, size_threshold, convert_attribute)


def convert_model_from_external_data(model: Any) -> None:
    """Makes every tensor of ``model`` inline again: tensors whose external data is
    loaded lose their ``data_location`` and ``external_data``. A tensor whose data was
    not loaded raises ``ExternalDataError`` (a ``ValueError``, as in ``onnx``) and
    nothing is changed."""
    _native.inline_external_data(_as_model(model))


def load_external_data_for_model(model: Any, base_dir: str) -> None:
    """Reads the external data of every tensor of ``model`` from files in ``base_dir``
    (paths are checked: no absolute paths, ``..`` or links out of the directory)."""
    _native.load_external_data_for_model(model, os.fspath(base_dir), -1)


def load_external_data_for_tensor(tensor: Any, base_dir: str) -> None:
    """Reads the data of ``tensor`` from its external file in ``base_dir`` into
    ``raw_data``; the tensor then no longer refers to the file (``external_data`` and
    ``data_location`` cleared, as after a load). The location is checked as for a model
    (no absolute paths, ``..`` or links out of ``base_dir``) and so is the range."""
    holder = ModelProto()
    holder.graph.initializer.append(tensor)
    _native.load_external_data_for_model(holder, os.fspath(base_dir), 1)
    tensor.CopyFrom(holder.graph.initializer[0])


class ExternalDataProblem(NamedTuple):
    """One broken rule found by ``verify_external_data``."""

    tensor: str
    """The tensor's name."""
    rule: str
    """The rule: ``"metadata"``, ``"location"``, ``"symbolic_link"``,
    ``"outside_directory"``, ``"not_regular_file"``, ``"missing_file"``,
    ``"unreadable"``, ``"out_of_range"``, ``"length_mismatch"``,
    ``"checksum_mismatch"`` or ``"aliasing"``."""
    message: str
    """What a load would say."""


def verify_external_data(
    model: Any, base_dir: str, checksums: bool = False, allow_aliasing: bool = False
) -> list[ExternalDataProblem]:
    """Checks the external data of ``model`` against the files in ``base_dir`` with the
    rules of a load, without loading anything, and returns every broken rule (an empty
    list: the data would load). ``checksums`` also reads each file whose tensors record
    a ``checksum`` and compares its SHA-1; ``allow_aliasing`` accepts tensors whose
    ranges share bytes, as ``load`` does with it."""
    found = _native.verify_external_data(model, os.fspath(base_dir), checksums, allow_aliasing)
    return [ExternalDataProblem(*p) for p in found]


def write_external_data_tensors(model: Any, filepath: str) -> Any:
    """Writes the data of the tensors of ``model`` marked external (see
    ``convert_model_to_external_data``) to their files in directory ``filepath`` and
    leaves ``model`` referring to them (``raw_data`` cleared, ``offset`` and ``length``
    set). A file already at a data file's name raises ``DataFileExistsError`` and is
    left as it was (``onnx`` appends to it).

    The library saves the model into ``filepath`` under a temporary name, which writes
    the data files with its own checks (no file replaced, nothing outside the
    directory), and the model is read back from it before it is removed."""
    model = _as_model(model)
    fd, model_path = tempfile.mkstemp(prefix=".external-", suffix=".onnx", dir=filepath)
    os.close(fd)
    try:
        save_model(model, model_path)
        reloaded = load_model(model_path, load_external_data=False)
    finally:
        os.unlink(model_path)
    model.CopyFrom(reloaded)
    return model


__all__ = [
    "convert_model_from_external_data",
    "convert_model_to_external_data",
    "load_external_data_for_model",
    "load_external_data_for_tensor",
    "uses_external_data",
    "write_external_data_tensors",
]
