"""Imported first, makes ``import onnx`` and ``import onnx.X`` resolve to
``onnx_light.onnx`` (and its submodules). Submodules onnx_light does not ship
(``onnx.reference``, ``onnx.backend``, ...) are loaded from the installed ``onnx``'s
files under their own names, so they run on top of onnx_light as a user's mixed
environment would. Used by ``onnx_suite.py``.
"""

import glob
import importlib
import importlib.abc
import importlib.util
import os
import sys

import onnx_light.onnx  # noqa: F401  (fail early when the package is missing)


def _real_onnx_dir():
    # Locate the installed onnx without importing it (its import would bind `onnx`).
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "onnx")
        if os.path.exists(os.path.join(candidate, "onnx_cpp2py_export")) or glob.glob(
            os.path.join(candidate, "onnx_cpp2py_export*.so")
        ):
            return candidate
    return None


_REAL = _real_onnx_dir()


_OURS = os.path.dirname(onnx_light.onnx.__file__)


def _real_file(parts):
    """The file of onnx's submodule ``onnx.<parts>``, or None."""
    if _REAL is None:
        return None
    base = os.path.join(_REAL, *parts)
    for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
        if os.path.exists(candidate):
            return candidate
    return None


class _Redirect(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("onnx_light.onnx."):
            # `from onnx import X` imports `onnx_light.onnx.X` (the name of the module
            # `onnx` resolves to): a submodule onnx_light does not ship comes from onnx's
            # files, as `import onnx.X` does below.
            parts = name.split(".")[2:]
            ours = os.path.join(_OURS, *parts)
            if os.path.exists(ours + ".py") or os.path.isdir(ours):
                return None
            real = _real_file(parts)
            if real is None:
                return None
            if real.endswith("__init__.py"):
                return importlib.util.spec_from_file_location(
                    name, real, submodule_search_locations=[os.path.dirname(real)]
                )
            return importlib.util.spec_from_file_location(name, real)
        if name != "onnx" and not name.startswith("onnx."):
            return None
        try:
            ours = importlib.util.find_spec("onnx_light." + name)
        except ModuleNotFoundError:
            ours = None
        if ours is not None:
            return importlib.util.spec_from_loader(name, self, origin="onnx_light." + name)
        if _REAL is None:
            return None
        base = os.path.join(_REAL, *name.split(".")[1:])
        if os.path.exists(os.path.join(base, "__init__.py")):
            return importlib.util.spec_from_file_location(
                name, os.path.join(base, "__init__.py"), submodule_search_locations=[base]
            )
        if os.path.exists(base + ".py"):
            return importlib.util.spec_from_file_location(name, base + ".py")
        native = glob.glob(base + ".*.so")
        if native:
            return importlib.util.spec_from_file_location(name, native[0])
        return None

    def create_module(self, spec):
        return importlib.import_module(spec.origin)

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Redirect())
