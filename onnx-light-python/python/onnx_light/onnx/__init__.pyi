# Type stubs of onnx_light.onnx. The message classes between the markers are generated
# by tools/generate_stubs.py; the rest is written by hand.

import os
from dataclasses import dataclass
from typing import (
    IO,
    Any,
    Callable,
    Generic,
    Iterable,
    Iterator,
    NamedTuple,
    Optional,
    TypeVar,
    Union,
    overload,
)

from . import _descriptor
from . import checker as checker
from . import compose as compose
from . import defs as defs
from . import external_data_helper as external_data_helper
from . import helper as helper
from . import numpy_helper as numpy_helper
from . import parser as parser
from . import printer as printer
from . import serialization as serialization
from . import shape_inference as shape_inference
from . import utils as utils
from . import version_converter as version_converter
from .external_data_helper import convert_model_to_external_data as convert_model_to_external_data
from .external_data_helper import load_external_data_for_model as load_external_data_for_model
from .external_data_helper import write_external_data_tensors as write_external_data_tensors
from ._errors import DataFileExistsError as DataFileExistsError
from ._errors import RefusedConnectionError as RefusedConnectionError
from ._errors import DecodeError as DecodeError
from ._errors import EncryptionError as EncryptionError
from ._errors import Error as Error
from ._errors import ExternalDataError as ExternalDataError
from ._errors import FileError as FileError
from ._errors import FilePermissionError as FilePermissionError
from ._errors import GraphEditError as GraphEditError
from ._errors import IsDirectoryError as IsDirectoryError
from ._errors import NoSuchFileError as NoSuchFileError
from ._errors import NotDirectoryError as NotDirectoryError
from ._errors import OptionError as OptionError
from ._errors import TensorDataError as TensorDataError

_T = TypeVar("_T")
_M = TypeVar("_M", bound="Message")
_Path = Union[str, os.PathLike[str]]

IR_VERSION: int

class EnumTypeWrapper:
    def Name(self, number: int) -> str: ...
    def Value(self, name: str) -> int: ...
    def keys(self) -> list[str]: ...
    def values(self) -> list[int]: ...
    def items(self) -> list[tuple[str, int]]: ...
    def __getattr__(self, name: str) -> int: ...

class RepeatedField(Generic[_T]):
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...
    def __setitem__(self, index: Union[int, slice], value: Any) -> None: ...
    def __delitem__(self, index: Union[int, slice]) -> None: ...
    def __iter__(self) -> Iterator[_T]: ...
    def __contains__(self, value: object) -> bool: ...
    def append(self, value: _T) -> None: ...
    def extend(self, values: Iterable[_T]) -> None: ...
    def insert(self, index: int, value: _T) -> None: ...
    def add(self, **fields: Any) -> _T: ...
    def remove(self, value: _T) -> None: ...
    def pop(self, index: int = -1) -> _T: ...
    def clear(self) -> None: ...
    def sort(self, *, key: Optional[Callable[[_T], Any]] = None, reverse: bool = False) -> None: ...
    def reverse(self) -> None: ...
    def index_of(self, value: _T) -> int: ...
    def count(self, value: _T) -> int: ...
    def tolist(self) -> list[_T]: ...
    def MergeFrom(self, values: Iterable[_T]) -> None: ...

class Message:
    def HasField(self, name: str) -> bool: ...
    def ClearField(self, name: str) -> None: ...
    def WhichOneof(self, group: str) -> Optional[str]: ...
    def Clear(self) -> None: ...
    def CopyFrom(self: _M, other: _M) -> None: ...
    def MergeFrom(self: _M, other: _M) -> None: ...
    def MergeFromString(self, data: bytes) -> int: ...
    def SerializeToString(self, **kwargs: Any) -> bytes: ...
    def SerializePartialToString(self, **kwargs: Any) -> bytes: ...
    def ParseFromString(self, data: bytes) -> int: ...
    @classmethod
    def FromString(cls: type[_M], data: bytes) -> _M: ...
    def ByteSize(self) -> int: ...
    def IsInitialized(self) -> bool: ...
    def ListFields(self) -> list[tuple[_descriptor.FieldDescriptor, Any]]: ...
    DESCRIPTOR: _descriptor.Descriptor
    def __eq__(self, other: object) -> bool: ...

# --- generated message classes (tools/generate_stubs.py) ---
class AttributeProto(Message):
    AttributeType: EnumTypeWrapper
    UNDEFINED: int
    FLOAT: int
    INT: int
    STRING: int
    TENSOR: int
    GRAPH: int
    SPARSE_TENSOR: int
    TYPE_PROTO: int
    FLOATS: int
    INTS: int
    STRINGS: int
    TENSORS: int
    GRAPHS: int
    SPARSE_TENSORS: int
    TYPE_PROTOS: int
    name: str
    f: float
    i: int
    s: bytes
    t: TensorProto
    g: GraphProto
    floats: RepeatedField[float]
    ints: RepeatedField[int]
    strings: RepeatedField[bytes]
    tensors: RepeatedField[TensorProto]
    graphs: RepeatedField[GraphProto]
    doc_string: str
    tp: TypeProto
    type_protos: RepeatedField[TypeProto]
    type: int
    ref_attr_name: str
    sparse_tensor: SparseTensorProto
    sparse_tensors: RepeatedField[SparseTensorProto]
    def __init__(self, *, name: str | None = ..., f: float | None = ..., i: int | None = ..., s: bytes | None = ..., t: TensorProto | None = ..., g: GraphProto | None = ..., floats: Iterable[float] | None = ..., ints: Iterable[int] | None = ..., strings: Iterable[bytes] | None = ..., tensors: Iterable[TensorProto] | None = ..., graphs: Iterable[GraphProto] | None = ..., doc_string: str | None = ..., tp: TypeProto | None = ..., type_protos: Iterable[TypeProto] | None = ..., type: int | None = ..., ref_attr_name: str | None = ..., sparse_tensor: SparseTensorProto | None = ..., sparse_tensors: Iterable[SparseTensorProto] | None = ...) -> None: ...

class DeviceConfigurationProto(Message):
    name: str
    num_devices: int
    device: RepeatedField[str]
    def __init__(self, *, name: str | None = ..., num_devices: int | None = ..., device: Iterable[str] | None = ...) -> None: ...

class FunctionProto(Message):
    name: str
    input: RepeatedField[str]
    output: RepeatedField[str]
    attribute: RepeatedField[str]
    node: RepeatedField[NodeProto]
    doc_string: str
    opset_import: RepeatedField[OperatorSetIdProto]
    domain: str
    attribute_proto: RepeatedField[AttributeProto]
    value_info: RepeatedField[ValueInfoProto]
    overload: str
    metadata_props: RepeatedField[StringStringEntryProto]
    def __init__(self, *, name: str | None = ..., input: Iterable[str] | None = ..., output: Iterable[str] | None = ..., attribute: Iterable[str] | None = ..., node: Iterable[NodeProto] | None = ..., doc_string: str | None = ..., opset_import: Iterable[OperatorSetIdProto] | None = ..., domain: str | None = ..., attribute_proto: Iterable[AttributeProto] | None = ..., value_info: Iterable[ValueInfoProto] | None = ..., overload: str | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ...) -> None: ...

class GraphProto(Message):
    node: RepeatedField[NodeProto]
    name: str
    initializer: RepeatedField[TensorProto]
    doc_string: str
    input: RepeatedField[ValueInfoProto]
    output: RepeatedField[ValueInfoProto]
    value_info: RepeatedField[ValueInfoProto]
    quantization_annotation: RepeatedField[TensorAnnotation]
    sparse_initializer: RepeatedField[SparseTensorProto]
    metadata_props: RepeatedField[StringStringEntryProto]
    def __init__(self, *, node: Iterable[NodeProto] | None = ..., name: str | None = ..., initializer: Iterable[TensorProto] | None = ..., doc_string: str | None = ..., input: Iterable[ValueInfoProto] | None = ..., output: Iterable[ValueInfoProto] | None = ..., value_info: Iterable[ValueInfoProto] | None = ..., quantization_annotation: Iterable[TensorAnnotation] | None = ..., sparse_initializer: Iterable[SparseTensorProto] | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ...) -> None: ...

class IntIntListEntryProto(Message):
    key: int
    value: RepeatedField[int]
    def __init__(self, *, key: int | None = ..., value: Iterable[int] | None = ...) -> None: ...

class MapProto(Message):
    name: str
    key_type: int
    keys: RepeatedField[int]
    string_keys: RepeatedField[bytes]
    values: SequenceProto
    def __init__(self, *, name: str | None = ..., key_type: int | None = ..., keys: Iterable[int] | None = ..., string_keys: Iterable[bytes] | None = ..., values: SequenceProto | None = ...) -> None: ...

class ModelProto(Message):
    ir_version: int
    producer_name: str
    producer_version: str
    domain: str
    model_version: int
    doc_string: str
    graph: GraphProto
    opset_import: RepeatedField[OperatorSetIdProto]
    metadata_props: RepeatedField[StringStringEntryProto]
    training_info: RepeatedField[TrainingInfoProto]
    functions: RepeatedField[FunctionProto]
    configuration: RepeatedField[DeviceConfigurationProto]
    def __init__(self, *, ir_version: int | None = ..., producer_name: str | None = ..., producer_version: str | None = ..., domain: str | None = ..., model_version: int | None = ..., doc_string: str | None = ..., graph: GraphProto | None = ..., opset_import: Iterable[OperatorSetIdProto] | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ..., training_info: Iterable[TrainingInfoProto] | None = ..., functions: Iterable[FunctionProto] | None = ..., configuration: Iterable[DeviceConfigurationProto] | None = ...) -> None: ...

class NodeDeviceConfigurationProto(Message):
    configuration_id: str
    sharding_spec: RepeatedField[ShardingSpecProto]
    pipeline_stage: int
    def __init__(self, *, configuration_id: str | None = ..., sharding_spec: Iterable[ShardingSpecProto] | None = ..., pipeline_stage: int | None = ...) -> None: ...

class NodeProto(Message):
    input: RepeatedField[str]
    output: RepeatedField[str]
    name: str
    op_type: str
    attribute: RepeatedField[AttributeProto]
    doc_string: str
    domain: str
    overload: str
    metadata_props: RepeatedField[StringStringEntryProto]
    device_configurations: RepeatedField[NodeDeviceConfigurationProto]
    def __init__(self, *, input: Iterable[str] | None = ..., output: Iterable[str] | None = ..., name: str | None = ..., op_type: str | None = ..., attribute: Iterable[AttributeProto] | None = ..., doc_string: str | None = ..., domain: str | None = ..., overload: str | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ..., device_configurations: Iterable[NodeDeviceConfigurationProto] | None = ...) -> None: ...

class OperatorProto(Message):
    op_type: str
    since_version: int
    status: int
    doc_string: str
    def __init__(self, *, op_type: str | None = ..., since_version: int | None = ..., status: int | None = ..., doc_string: str | None = ...) -> None: ...

class OperatorSetIdProto(Message):
    domain: str
    version: int
    def __init__(self, *, domain: str | None = ..., version: int | None = ...) -> None: ...

class OperatorSetProto(Message):
    magic: str
    ir_version: int
    ir_version_prerelease: str
    domain: str
    opset_version: int
    doc_string: str
    ir_build_metadata: str
    operator: RepeatedField[OperatorProto]
    functions: RepeatedField[FunctionProto]
    def __init__(self, *, magic: str | None = ..., ir_version: int | None = ..., ir_version_prerelease: str | None = ..., domain: str | None = ..., opset_version: int | None = ..., doc_string: str | None = ..., ir_build_metadata: str | None = ..., operator: Iterable[OperatorProto] | None = ..., functions: Iterable[FunctionProto] | None = ...) -> None: ...

class OptionalProto(Message):
    DataType: EnumTypeWrapper
    UNDEFINED: int
    TENSOR: int
    SPARSE_TENSOR: int
    SEQUENCE: int
    MAP: int
    OPTIONAL: int
    name: str
    elem_type: int
    tensor_value: TensorProto
    sparse_tensor_value: SparseTensorProto
    sequence_value: SequenceProto
    map_value: MapProto
    optional_value: OptionalProto
    def __init__(self, *, name: str | None = ..., elem_type: int | None = ..., tensor_value: TensorProto | None = ..., sparse_tensor_value: SparseTensorProto | None = ..., sequence_value: SequenceProto | None = ..., map_value: MapProto | None = ..., optional_value: OptionalProto | None = ...) -> None: ...

class SequenceProto(Message):
    DataType: EnumTypeWrapper
    UNDEFINED: int
    TENSOR: int
    SPARSE_TENSOR: int
    SEQUENCE: int
    MAP: int
    OPTIONAL: int
    name: str
    elem_type: int
    tensor_values: RepeatedField[TensorProto]
    sparse_tensor_values: RepeatedField[SparseTensorProto]
    sequence_values: RepeatedField[SequenceProto]
    map_values: RepeatedField[MapProto]
    optional_values: RepeatedField[OptionalProto]
    def __init__(self, *, name: str | None = ..., elem_type: int | None = ..., tensor_values: Iterable[TensorProto] | None = ..., sparse_tensor_values: Iterable[SparseTensorProto] | None = ..., sequence_values: Iterable[SequenceProto] | None = ..., map_values: Iterable[MapProto] | None = ..., optional_values: Iterable[OptionalProto] | None = ...) -> None: ...

class ShardedDimProto(Message):
    axis: int
    simple_sharding: RepeatedField[SimpleShardedDimProto]
    def __init__(self, *, axis: int | None = ..., simple_sharding: Iterable[SimpleShardedDimProto] | None = ...) -> None: ...

class ShardingSpecProto(Message):
    tensor_name: str
    device: RepeatedField[int]
    index_to_device_group_map: RepeatedField[IntIntListEntryProto]
    sharded_dim: RepeatedField[ShardedDimProto]
    def __init__(self, *, tensor_name: str | None = ..., device: Iterable[int] | None = ..., index_to_device_group_map: Iterable[IntIntListEntryProto] | None = ..., sharded_dim: Iterable[ShardedDimProto] | None = ...) -> None: ...

class SimpleShardedDimProto(Message):
    dim_value: int
    dim_param: str
    num_shards: int
    def __init__(self, *, dim_value: int | None = ..., dim_param: str | None = ..., num_shards: int | None = ...) -> None: ...

class SparseTensorProto(Message):
    values: TensorProto
    indices: TensorProto
    dims: RepeatedField[int]
    def __init__(self, *, values: TensorProto | None = ..., indices: TensorProto | None = ..., dims: Iterable[int] | None = ...) -> None: ...

class StringStringEntryProto(Message):
    key: str
    value: str
    def __init__(self, *, key: str | None = ..., value: str | None = ...) -> None: ...

class TensorAnnotation(Message):
    tensor_name: str
    quant_parameter_tensor_names: RepeatedField[StringStringEntryProto]
    def __init__(self, *, tensor_name: str | None = ..., quant_parameter_tensor_names: Iterable[StringStringEntryProto] | None = ...) -> None: ...

class TensorProto(Message):
    DataType: EnumTypeWrapper
    UNDEFINED: int
    FLOAT: int
    UINT8: int
    INT8: int
    UINT16: int
    INT16: int
    INT32: int
    INT64: int
    STRING: int
    BOOL: int
    FLOAT16: int
    DOUBLE: int
    UINT32: int
    UINT64: int
    COMPLEX64: int
    COMPLEX128: int
    BFLOAT16: int
    FLOAT8E4M3FN: int
    FLOAT8E4M3FNUZ: int
    FLOAT8E5M2: int
    FLOAT8E5M2FNUZ: int
    UINT4: int
    INT4: int
    FLOAT4E2M1: int
    FLOAT8E8M0: int
    UINT2: int
    INT2: int
    FLOAT6E2M3: int
    FLOAT6E3M2: int
    DataLocation: EnumTypeWrapper
    DEFAULT: int
    EXTERNAL: int
    class Segment(Message):
        begin: int
        end: int
        def __init__(self, *, begin: int | None = ..., end: int | None = ...) -> None: ...
    dims: RepeatedField[int]
    data_type: int
    segment: TensorProto.Segment
    float_data: RepeatedField[float]
    int32_data: RepeatedField[int]
    string_data: RepeatedField[bytes]
    int64_data: RepeatedField[int]
    name: str
    raw_data: bytes
    double_data: RepeatedField[float]
    uint64_data: RepeatedField[int]
    doc_string: str
    external_data: RepeatedField[StringStringEntryProto]
    data_location: int
    metadata_props: RepeatedField[StringStringEntryProto]
    def __init__(self, *, dims: Iterable[int] | None = ..., data_type: int | None = ..., segment: TensorProto.Segment | None = ..., float_data: Iterable[float] | None = ..., int32_data: Iterable[int] | None = ..., string_data: Iterable[bytes] | None = ..., int64_data: Iterable[int] | None = ..., name: str | None = ..., raw_data: bytes | None = ..., double_data: Iterable[float] | None = ..., uint64_data: Iterable[int] | None = ..., doc_string: str | None = ..., external_data: Iterable[StringStringEntryProto] | None = ..., data_location: int | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ...) -> None: ...
    def numpy(self) -> Any: ...
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any: ...
    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def tobytes(self) -> bytes: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def size(self) -> int: ...

class TensorShapeProto(Message):
    class Dimension(Message):
        dim_value: int
        dim_param: str
        denotation: str
        def __init__(self, *, dim_value: int | None = ..., dim_param: str | None = ..., denotation: str | None = ...) -> None: ...
    dim: RepeatedField[TensorShapeProto.Dimension]
    def __init__(self, *, dim: Iterable[TensorShapeProto.Dimension] | None = ...) -> None: ...

class TrainingInfoProto(Message):
    initialization: GraphProto
    algorithm: GraphProto
    initialization_binding: RepeatedField[StringStringEntryProto]
    update_binding: RepeatedField[StringStringEntryProto]
    def __init__(self, *, initialization: GraphProto | None = ..., algorithm: GraphProto | None = ..., initialization_binding: Iterable[StringStringEntryProto] | None = ..., update_binding: Iterable[StringStringEntryProto] | None = ...) -> None: ...

class TypeProto(Message):
    class Map(Message):
        key_type: int
        value_type: TypeProto
        def __init__(self, *, key_type: int | None = ..., value_type: TypeProto | None = ...) -> None: ...
    class Opaque(Message):
        domain: str
        name: str
        def __init__(self, *, domain: str | None = ..., name: str | None = ...) -> None: ...
    class Optional(Message):
        elem_type: TypeProto
        def __init__(self, *, elem_type: TypeProto | None = ...) -> None: ...
    class Sequence(Message):
        elem_type: TypeProto
        def __init__(self, *, elem_type: TypeProto | None = ...) -> None: ...
    class SparseTensor(Message):
        elem_type: int
        shape: TensorShapeProto
        def __init__(self, *, elem_type: int | None = ..., shape: TensorShapeProto | None = ...) -> None: ...
    class Tensor(Message):
        elem_type: int
        shape: TensorShapeProto
        def __init__(self, *, elem_type: int | None = ..., shape: TensorShapeProto | None = ...) -> None: ...
    tensor_type: TypeProto.Tensor
    sequence_type: TypeProto.Sequence
    map_type: TypeProto.Map
    denotation: str
    opaque_type: TypeProto.Opaque
    sparse_tensor_type: TypeProto.SparseTensor
    optional_type: TypeProto.Optional
    def __init__(self, *, tensor_type: TypeProto.Tensor | None = ..., sequence_type: TypeProto.Sequence | None = ..., map_type: TypeProto.Map | None = ..., denotation: str | None = ..., opaque_type: TypeProto.Opaque | None = ..., sparse_tensor_type: TypeProto.SparseTensor | None = ..., optional_type: TypeProto.Optional | None = ...) -> None: ...

class ValueInfoProto(Message):
    name: str
    type: TypeProto
    doc_string: str
    metadata_props: RepeatedField[StringStringEntryProto]
    def __init__(self, *, name: str | None = ..., type: TypeProto | None = ..., doc_string: str | None = ..., metadata_props: Iterable[StringStringEntryProto] | None = ...) -> None: ...

Version: EnumTypeWrapper
_START_VERSION: int
IR_VERSION_2017_10_10: int
IR_VERSION_2017_10_30: int
IR_VERSION_2017_11_3: int
IR_VERSION_2019_1_22: int
IR_VERSION_2019_3_18: int
IR_VERSION_2019_9_19: int
IR_VERSION_2020_5_8: int
IR_VERSION_2021_7_30: int
IR_VERSION_2023_5_5: int
IR_VERSION_2024_3_25: int
IR_VERSION_2025_05_12: int
IR_VERSION_2025_08_26: int
IR_VERSION_2025_11_06: int
IR_VERSION: int
OperatorStatus: EnumTypeWrapper
EXPERIMENTAL: int
STABLE: int
# --- end of generated message classes ---

@dataclass
class TensorBufferOptions:
    raw_data_threshold: int = ...
    alignment: int = ...

@dataclass
class ParseOptions(TensorBufferOptions):
    load_external_data: bool = ...
    no_copy: bool = ...
    num_threads: int = ...
    skip_raw_data: bool = ...
    location: Optional[str] = ...
    max_memory: Optional[int] = ...
    allow_aliasing: bool = ...
    base_dir: Optional[str] = ...
    recursion_limit: int = ...
    max_model_size: Optional[int] = ...
    max_tensor_size: Optional[int] = ...

@dataclass
class SerializeOptions(TensorBufferOptions):
    save_as_external_data: bool = ...
    all_tensors_to_one_file: bool = ...
    location: Optional[str] = ...
    size_threshold: int = ...
    convert_attribute: bool = ...
    max_external_file_size: int = ...
    num_threads: int = ...
    sync: bool = ...
    replace_data_files: bool = ...

class ConsolidatedBuffer(NamedTuple):
    tensor_count: int
    nbytes: int

def load_model(
    f: Union[_Path, bytes, IO[bytes]],
    format: Optional[str] = ...,
    load_external_data: bool = ...,
    *,
    no_copy: bool = ...,
    num_threads: int = ...,
    skip_raw_data: bool = ...,
    raw_data_threshold: int = ...,
    alignment: int = ...,
    location: Optional[str] = ...,
    max_memory: Optional[int] = ...,
    allow_aliasing: bool = ...,
    options: Optional[ParseOptions] = ...,
    verify_checksums: bool = ...,
) -> ModelProto: ...

load = load_model

def load_model_from_string(
    s: Union[bytes, str],
    format: Optional[str] = ...,
    *,
    num_threads: int = ...,
    raw_data_threshold: int = ...,
    alignment: int = ...,
    max_memory: Optional[int] = ...,
) -> ModelProto: ...

load_from_string = load_model_from_string

def load_tensor(f: Union[_Path, IO[bytes]], format: Optional[str] = ...) -> TensorProto: ...
def load_tensor_from_string(s: Union[bytes, str], format: Optional[str] = ...) -> TensorProto: ...
def save_model(
    proto: Union[ModelProto, bytes],
    f: Union[_Path, IO[bytes]],
    format: Optional[str] = ...,
    *,
    save_as_external_data: bool = ...,
    all_tensors_to_one_file: bool = ...,
    location: Optional[str] = ...,
    size_threshold: int = ...,
    convert_attribute: bool = ...,
    max_external_file_size: int = ...,
    alignment: int = ...,
    num_threads: int = ...,
    sync: bool = ...,
    replace_data_files: bool = ...,
    options: Optional[SerializeOptions] = ...,
) -> None: ...

save = save_model

def save_tensor(
    proto: TensorProto, f: Union[_Path, IO[bytes]], format: Optional[str] = ...
) -> None: ...
def save_encrypted(
    model: Union[ModelProto, bytes],
    f: Union[_Path, IO[bytes]],
    key: str,
    *,
    format: Optional[str] = ...,
    num_threads: int = ...,
) -> None: ...
def save_encrypted_string(
    model: Union[ModelProto, bytes], key: str, *, format: Optional[str] = ..., num_threads: int = ...
) -> bytes: ...
def load_encrypted(
    f: Union[_Path, IO[bytes]],
    key: str,
    *,
    allow_unauthenticated: bool = ...,
    num_threads: int = ...,
    max_memory: Optional[int] = ...,
) -> ModelProto: ...
def load_encrypted_string(
    s: bytes,
    key: str,
    *,
    allow_unauthenticated: bool = ...,
    num_threads: int = ...,
    max_memory: Optional[int] = ...,
) -> ModelProto: ...
def raw_data_view(tensor: TensorProto) -> Optional[memoryview]: ...
def consolidate_tensors_to_buffer(
    model: ModelProto,
    opts: Optional[TensorBufferOptions] = ...,
    *,
    raw_data_threshold: int = ...,
    alignment: int = ...,
) -> ConsolidatedBuffer: ...
