"""``onnx.utils`` on the onnx-light core: ``Extractor`` and ``extract_model`` cut a
sub-model out of a model, with the results and refusals of ``onnx.utils`` 1.23
(``GraphEditError``, a ``ValueError``, with ``onnx``'s messages).

The selection is done in Rust (``onnx_light::extract``). ``extract_model`` works file to
file on models of any size: the source's structure is read, its types inferred with this
package's shape inference, and only the weights the sub-model keeps are copied from the
source file (or its data files) into the new one; past 2 GiB they go to
``<output file name>.data`` beside it, as ``onnx`` saves them. Both files are checked
with this package's checker, which does not read weights either."""

from __future__ import annotations

import os
import tarfile
from collections import deque
from typing import Any, Dict, List, Tuple, Union

from .. import _onnx_light as _native
from ._errors import GraphEditError

__all__ = ["Extractor", "GraphEditError", "extract_model"]


class Extractor:
    """Selects sub-models of ``model`` (not changed; the sub-models are copies). Raises
    ``AssertionError`` for a graph in which two nodes write the same name, as ``onnx``
    asserts. ``initializers``, ``value_infos`` (value infos, then inputs, then outputs)
    and ``outmap`` (output name to node index) are built on first use."""

    def __init__(self, model: Any) -> None:
        from . import _adopt

        self.model = _adopt(model)
        self.graph = self.model.graph
        try:
            _native.extractor_check(self.model)
        except GraphEditError as e:
            raise AssertionError(str(e)) from None
        self._initializers = None
        self._value_infos = None
        self._outmap = None

    @property
    def initializers(self) -> Dict[str, Any]:
        if self._initializers is None:
            self._initializers = self._build_name2obj_dict(self.graph.initializer)
        return self._initializers

    @property
    def value_infos(self) -> Dict[str, Any]:
        if self._value_infos is None:
            infos = self._build_name2obj_dict(self.graph.value_info)
            infos.update(self._build_name2obj_dict(self.graph.input))
            infos.update(self._build_name2obj_dict(self.graph.output))
            self._value_infos = infos
        return self._value_infos

    @property
    def outmap(self) -> Dict[str, int]:
        if self._outmap is None:
            self._outmap = self._build_output_dict(self.graph)
        return self._outmap

    @staticmethod
    def _build_name2obj_dict(objs: Any) -> Dict[str, Any]:
        return {obj.name: obj for obj in objs}

    @staticmethod
    def _build_output_dict(graph: Any) -> Dict[str, int]:
        producers: Dict[str, int] = {}
        for index, node in enumerate(graph.node):
            for name in node.output:
                if name == "":
                    continue
                assert name not in producers, f"{name!r} is written by two nodes"
                producers[name] = index
        return producers

    def _collect_new_io(self, io_names_to_extract: List[str]) -> List[Any]:
        missing = [n for n in io_names_to_extract if n not in self.value_infos]
        if missing:
            raise GraphEditError(
                "The following names were not found in value_infos: " + ", ".join(missing)
            )
        return [self.value_infos[n] for n in io_names_to_extract]

    def _dfs_search_reachable_nodes(
        self, node_output_name: str, graph_input_names: set, reachable: set
    ) -> None:
        """Adds to ``reachable`` the indices of the nodes ``node_output_name`` depends
        on, stopping at ``graph_input_names``."""
        stack = [node_output_name]
        while stack:
            name = stack.pop()
            if name in graph_input_names or name not in self.outmap:
                continue
            index = self.outmap[name]
            if index not in reachable:
                reachable.add(index)
                stack.extend(i for i in self.graph.node[index].input if i != "")

    def _collect_reachable_nodes(self, input_names: List[str], output_names: List[str]) -> List[Any]:
        indices = _native.extract_reachable(
            self.model, [str(n) for n in input_names], [str(n) for n in output_names]
        )
        return [self.graph.node[i] for i in indices]

    def _collect_referred_local_functions(self, nodes: List[Any]) -> List[Any]:
        by_key = {(f.name, f.domain): f for f in self.model.functions}
        found = []
        queue = deque(nodes)
        while queue:
            node = queue.popleft()
            function = by_key.pop((node.op_type, node.domain), None)
            if function is not None:
                found.append(function)
                queue.extend(function.node)
        return found

    def _collect_reachable_tensors(self, nodes: List[Any]) -> Tuple[List[Any], List[Any]]:
        used = set()
        for node in nodes:
            used.update(node.input)
            used.update(node.output)
        initializer = [t for n, t in self.initializers.items() if n in used]
        value_info = [v for n, v in self.value_infos.items() if n in used]
        if len(self.graph.sparse_initializer):
            raise GraphEditError(
                f"len_sparse_initializer is {len(self.graph.sparse_initializer)}, it must be 0."
            )
        if len(self.graph.quantization_annotation):
            raise GraphEditError(
                f"len_quantization_annotation is {len(self.graph.quantization_annotation)}, it must be 0."
            )
        return initializer, value_info

    def _make_model(
        self,
        nodes: List[Any],
        inputs: List[Any],
        outputs: List[Any],
        initializer: List[Any],
        value_info: List[Any],
        local_functions: List[Any],
    ) -> Any:
        from . import helper

        graph = helper.make_graph(
            nodes,
            "Extracted from {" + self.graph.name + "}",
            inputs,
            outputs,
            initializer=initializer,
            value_info=value_info,
        )
        return helper.make_model(
            graph,
            ir_version=self.model.ir_version,
            opset_imports=self.model.opset_import,
            producer_name="onnx.utils.extract_model",
            functions=local_functions,
        )

    def extract_model(self, input_names: List[str], output_names: List[str]) -> Any:
        """The sub-model computing ``output_names`` from ``input_names`` (each a value
        info, input or output of the graph): the nodes between them in graph order, the
        initializers, value infos and local functions they use."""
        return _native.extract_model(
            self.model, [str(n) for n in input_names], [str(n) for n in output_names]
        )


def extract_model(
    input_path: Union[str, os.PathLike],
    output_path: Union[str, os.PathLike],
    input_names: List[str],
    output_names: List[str],
    check_model: bool = True,
    infer_shapes: bool = True,
) -> None:
    """Saves to ``output_path`` the sub-model of the model at ``input_path`` that
    computes ``output_names`` from ``input_names``. With ``check_model``, both models
    are checked; with ``infer_shapes``, the source's types are inferred first so that
    any value can be an input or output. Only the weights kept are read."""
    from . import checker

    if not os.path.exists(input_path):
        raise ValueError(f"Invalid input model path: {input_path}")
    if not output_path:
        raise ValueError("Output model path shall not be empty!")
    if not input_names:
        raise ValueError("Input tensor names shall not be empty!")
    if not output_names:
        raise ValueError("Output tensor names shall not be empty!")
    if len(input_names) != len(set(input_names)):
        raise ValueError("Duplicate names found in the input tensor names.")
    if len(output_names) != len(set(output_names)):
        raise ValueError("Duplicate names found in the output tensor names.")
    if check_model:
        checker.check_model(input_path)
    _native.extract_model_path(
        os.fspath(input_path),
        os.fspath(output_path),
        [str(n) for n in input_names],
        [str(n) for n in output_names],
        bool(infer_shapes),
    )
    if check_model:
        checker.check_model(output_path)


def _tar_members_filter(tar: tarfile.TarFile, base: Union[str, os.PathLike]) -> List[tarfile.TarInfo]:
    """The members of ``tar``, once each is known to land inside ``base`` when extracted
    there; ``RuntimeError`` for one that would escape it (directory traversal) or that
    is a symbolic or hard link."""
    root = os.path.abspath(base)
    members = []
    for member in tar:
        target = os.path.join(base, member.name)
        try:
            inside = os.path.commonpath([root, os.path.abspath(target)]) == root
        except ValueError:  # different drives
            inside = False
        if not inside:
            raise RuntimeError(
                f"The tarball member {target} in downloading model contains "
                "directory traversal sequence which may contain harmful payload."
            )
        if member.issym() or member.islnk():
            raise RuntimeError(
                f"The tarball member {target} in downloading model contains "
                "symbolic links which may contain harmful payload."
            )
        members.append(member)
    return members


def _extract_model_safe(
    model_tar_path: Union[str, os.PathLike], local_model_with_data_dir_path: Union[str, os.PathLike]
) -> None:
    """Extracts the tarball at ``model_tar_path`` into ``local_model_with_data_dir_path``,
    refusing members that would land outside it (``tarfile``'s ``data`` filter where
    Python has it, ``_tar_members_filter`` otherwise)."""
    with tarfile.open(model_tar_path) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(path=local_model_with_data_dir_path, filter="data")
        else:
            tar.extractall(  # noqa: S202 (members checked just before)
                path=local_model_with_data_dir_path,
                members=_tar_members_filter(tar, local_model_with_data_dir_path),
            )
