"""``onnx.external_data_helper`` on onnx_light: where ``onnx`` marks tensors and then
writes files in separate steps, onnx_light writes external data while it saves, so
``convert_model_to_external_data`` records the settings that the next ``save`` of that
model object uses, and ``write_external_data_tensors`` saves and reloads in one step."""

from __future__ import annotations

import errno
import os
import tempfile
from typing import Any, Optional

from . import (
    ModelProto,
    TensorProto,
    _forget_external,
    _native,
    _remember_external,
    load_model,
    save_model,
)
from ._errors import _file_error


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
    """Makes the next ``save`` of ``model`` (without ``save_as_external_data``) write
    tensors of at least ``size_threshold`` bytes to external files.

    ``location`` is a file name, written next to the model; a path with directories is
    refused here (``OptionError``), not when the model is saved."""
    if location is not None:
        _native.check_external_location(location)
    settings = {
        "all_tensors_to_one_file": all_tensors_to_one_file,
        "size_threshold": size_threshold,
        "convert_attribute": convert_attribute,
    }
    if location is not None:
        settings["location"] = location
    _remember_external(model, settings)


def convert_model_from_external_data(model: Any) -> None:
    """Makes the next ``save`` of ``model`` write every tensor inline: the settings of an
    earlier ``convert_model_to_external_data`` are dropped, and tensors whose external
    data is loaded lose their ``data_location`` and ``external_data``. A tensor whose
    data was not loaded raises ``ExternalDataError`` (a ``ValueError``, as in ``onnx``)
    and nothing is changed."""
    _native.inline_external_data(model)
    _forget_external(model)


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


def write_external_data_tensors(model: Any, filepath: str) -> Any:
    """Writes the data of the tensors of ``model`` as external data into directory
    ``filepath`` and leaves ``model`` referring to it (``raw_data`` cleared). A file
    already at a data file's name raises ``DataFileExistsError`` and nothing is moved
    into ``filepath``."""
    from . import _pending_settings

    settings = dict(_pending_settings(model) or {})
    location = settings.pop("location", None) or "external_data.data"
    with tempfile.TemporaryDirectory(dir=filepath) as tmp:
        model_path = os.path.join(tmp, "model.onnx")
        save_model(model, model_path, save_as_external_data=True, location=location, alignment=1, **settings)
        written = [name for name in os.listdir(tmp) if name != "model.onnx"]
        # As a save does: a file already there is usually another model's data.
        for name in written:
            path = os.path.join(filepath, name)
            if os.path.lexists(path):
                raise _file_error(
                    f"the data file {name} already exists in {filepath}; choose another "
                    "location or remove the file",
                    errno.EEXIST,
                    "AlreadyExists",
                    os.strerror(errno.EEXIST),
                    path,
                )
        for name in written:
            os.replace(os.path.join(tmp, name), os.path.join(filepath, name))
        reloaded = load_model(model_path, load_external_data=False)
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
