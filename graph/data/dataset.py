"""``tf.data.Dataset`` (TF1 graph mode): a description of an input pipeline.

A Dataset here is pure data: its kind (the class), its parameters (numpy values, or Tensors of
the program's graph, such as placeholders, whose values the iterator's initializer receives when
it runs), its input datasets and its element spec. Nothing runs while a pipeline is described:
the host pipeline in ``devices/data/`` builds Python iterators from the description when an
iterator is initialized in a session, and its kernels (``IteratorGetNext``) pull from them on a
worker thread. Sources are in ``sources.py`` and ``files.py``, transformations in
``transforms.py``; the methods below build them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Graph, Tensor
from ..tensor_shape import TensorShape
from .structure import ComponentSpec, flatten, map_structure, pack_as

if TYPE_CHECKING:
    from .iterator_ops import Iterator as DatasetIterator

__all__ = ["AUTOTUNE", "Dataset"]

#: ``tf.data.experimental.AUTOTUNE``: let the runtime pick a parallelism or buffer size.
AUTOTUNE = -1


class Dataset:
    """Base of every dataset kind; ``element_spec`` is a nest of ``ComponentSpec``."""

    #: the name the host pipeline's builder registry knows this kind by
    kind: ClassVar[str] = ""

    def __init__(self, inputs: Sequence[Dataset], element_spec: Any) -> None:
        self._inputs = list(inputs)
        self.element_spec = element_spec
        self._captured: list[Tensor] = []

    # -- parameters ------------------------------------------------------------------------
    def _param(self, value: Any, dtype: Any = None) -> Any:
        """A scalar or array parameter: a Tensor is captured (its value arrives when the iterator's
        initializer runs); anything else becomes a numpy value now."""
        if hasattr(value, "_as_tensor"):
            value = value._as_tensor()
        if isinstance(value, Tensor):
            self._captured.append(value)
            return value
        return np.asarray(value, dtype=dtype) if dtype is not None else _as_array(value)

    @property
    def inputs(self) -> list[Dataset]:
        return list(self._inputs)

    def captured_tensors(self) -> list[Tensor]:
        """Every Tensor this pipeline's parameters name (this dataset and its inputs), each once."""
        seen: dict[Tensor, None] = {}
        stack: list[Dataset] = [self]
        while stack:
            ds = stack.pop()
            for t in ds._captured:
                seen.setdefault(t, None)
            stack.extend(ds._inputs)
        return list(seen)

    def graph(self) -> Graph | None:
        """The program graph the captured tensors belong to (None when nothing is captured)."""
        graphs = {id(t.graph): t.graph for t in self.captured_tensors()}
        if len(graphs) > 1:
            raise GraphError("a dataset captures tensors of more than one graph")
        return next(iter(graphs.values()), None)

    # -- element types -----------------------------------------------------------------------
    @property
    def output_types(self) -> Any:
        return map_structure(lambda s: s.dtype, self.element_spec)

    @property
    def output_shapes(self) -> Any:
        return map_structure(lambda s: TensorShape(s.shape), self.element_spec)

    @property
    def output_classes(self) -> Any:
        return map_structure(lambda s: Tensor, self.element_spec)

    def flat_specs(self) -> list[ComponentSpec]:
        return flatten(self.element_spec)

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(
            "a Dataset is not iterable in graph mode: make an iterator "
            "(ds.make_one_shot_iterator().get_next()) and run its tensors in a session"
        )

    # -- sources -----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any) -> Dataset:
        from .sources import TensorSliceDataset

        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors: Any) -> Dataset:
        from .sources import TensorDataset

        return TensorDataset(tensors)

    @staticmethod
    def from_generator(
        generator: Callable[..., Any],
        output_types: Any,
        output_shapes: Any = None,
        args: Sequence[Any] | None = None,
    ) -> Dataset:
        from .sources import GeneratorDataset

        return GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args: Any, output_type: Any = dtypes.int64) -> Dataset:
        from .sources import RangeDataset

        return RangeDataset(args, output_type)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None) -> Dataset:
        from .files import ListFilesDataset

        return ListFilesDataset(file_pattern, shuffle, seed)

    @staticmethod
    def zip(datasets: Any) -> Dataset:
        from .transforms import ZipDataset

        return ZipDataset(datasets)

    # -- transformations -------------------------------------------------------------------
    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
    ) -> Dataset:
        from .transforms import MapDataset

        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate: Callable[..., Any]) -> Dataset:
        from .transforms import FilterDataset

        return FilterDataset(self, predicate)

    def flat_map(self, map_func: Callable[..., Any]) -> Dataset:
        from .transforms import FlatMapDataset

        return FlatMapDataset(self, map_func)

    def interleave(
        self,
        map_func: Callable[..., Any],
        cycle_length: Any = None,
        block_length: Any = None,
        num_parallel_calls: Any = None,
        deterministic: bool | None = None,
    ) -> Dataset:
        from .transforms import InterleaveDataset

        return InterleaveDataset(self, map_func, cycle_length, block_length)

    def batch(self, batch_size: Any, drop_remainder: bool = False) -> Dataset:
        from .transforms import BatchDataset

        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(
        self,
        batch_size: Any,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
    ) -> Dataset:
        from .transforms import PaddedBatchDataset

        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self) -> Dataset:
        from .transforms import UnbatchDataset

        return UnbatchDataset(self)

    def shuffle(
        self, buffer_size: Any, seed: int | None = None, reshuffle_each_iteration: bool = True
    ) -> Dataset:
        from .transforms import ShuffleDataset

        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count: Any = None) -> Dataset:
        from .transforms import RepeatDataset

        return RepeatDataset(self, count)

    def take(self, count: Any) -> Dataset:
        from .transforms import TakeDataset

        return TakeDataset(self, count)

    def skip(self, count: Any) -> Dataset:
        from .transforms import SkipDataset

        return SkipDataset(self, count)

    def prefetch(self, buffer_size: Any) -> Dataset:
        from .transforms import PrefetchDataset

        return PrefetchDataset(self, buffer_size)

    def cache(self, filename: str = "") -> Dataset:
        from .transforms import CacheDataset

        return CacheDataset(self, filename)

    def concatenate(self, dataset: Dataset) -> Dataset:
        from .transforms import ConcatenateDataset

        return ConcatenateDataset(self, dataset)

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"Dataset.apply: the function returned {type(result).__name__}, not a Dataset")
        return result

    def with_options(self, options: Any) -> Dataset:
        return self  # threading/optimization options: this runtime picks its own

    # -- iterators ---------------------------------------------------------------------------
    def make_one_shot_iterator(self) -> DatasetIterator:
        from .iterator_ops import make_one_shot_iterator

        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> DatasetIterator:
        from .iterator_ops import make_initializable_iterator

        return make_initializable_iterator(self, shared_name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} shapes: {self.output_shapes}, types: {self.output_types}>"


def _as_array(value: Any) -> np.ndarray:
    """A parameter value as numpy with TF's dtypes: Python floats float32, ints int32, str bytes."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "US":
        return value
    dt = dtypes.infer_dtype(value)
    arr = np.asarray(value)
    if dt == dtypes.string:
        return _bytes_array(arr)
    return arr.astype(dt, copy=False)


def _bytes_array(arr: np.ndarray) -> np.ndarray:
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1).tolist()):
        flat[i] = v.encode() if isinstance(v, str) else bytes(v)
    return out


def specs_of(values: Any) -> Any:
    """The ComponentSpec nest of a nest of numpy values / Tensors."""
    return map_structure(_spec_of, values)


def _spec_of(v: Any) -> ComponentSpec:
    if isinstance(v, Tensor):
        return ComponentSpec(v.dtype, v._shape)
    return ComponentSpec(v.dtype, tuple(v.shape))


def normalize_types_shapes(output_types: Any, output_shapes: Any) -> Any:
    """A ComponentSpec nest from TF's (output_types, output_shapes) pair (shapes unknown if None)."""
    flat_types = flatten(output_types)
    if output_shapes is None:
        flat_shapes: list[Any] = [None] * len(flat_types)
    else:
        flat_shapes = _flatten_shapes(output_types, output_shapes)
    if len(flat_shapes) != len(flat_types):
        raise GraphError("output_shapes must have the structure of output_types")
    specs = [
        ComponentSpec(dtypes.as_dtype(t), _as_shape(s)) for t, s in zip(flat_types, flat_shapes, strict=True)
    ]
    return pack_as(output_types, specs)


def _flatten_shapes(types: Any, shapes: Any) -> list[Any]:
    # A shape is itself a list/tuple; flatten ``shapes`` only as deep as ``types`` nests.
    out: list[Any] = []
    stack = [(types, shapes)]
    while stack:
        t, s = stack.pop()
        if isinstance(t, dict):
            stack.extend((t[k], s[k]) for k in reversed(sorted(t)))
        elif isinstance(t, (tuple, list)):
            if len(t) != len(s):
                raise GraphError("output_shapes must have the structure of output_types")
            stack.extend(reversed(list(zip(t, s))))
        else:
            out.append(s)
    return out


def _as_shape(s: Any) -> Any:
    from ..shapes import as_shape

    if isinstance(s, TensorShape):
        return s.dims
    return as_shape(s)
