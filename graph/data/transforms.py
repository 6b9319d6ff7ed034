"""Dataset transformations: map, filter, batch, shuffle, repeat, ... (element specs as TF infers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..shapes import as_shape, format_shape
from ..tensor_shape import TensorShape
from .dataset import AUTOTUNE, Dataset
from .function import TracedFunction, trace_function
from .structure import ComponentSpec, flatten, map_structure, pack_as, same_structure

__all__ = [
    "BatchDataset",
    "CacheDataset",
    "ConcatenateDataset",
    "FilterDataset",
    "FlatMapDataset",
    "InterleaveDataset",
    "MapDataset",
    "PaddedBatchDataset",
    "PrefetchDataset",
    "RepeatDataset",
    "ShuffleDataset",
    "SkipDataset",
    "TakeDataset",
    "UnbatchDataset",
    "ZipDataset",
]


def _static_int(value: Any) -> int | None:
    return None if isinstance(value, Tensor) else int(value)


class ZipDataset(Dataset):
    kind = "zip"

    def __init__(self, datasets: Any) -> None:
        flat = flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise GraphError("Dataset.zip needs a (nested) tuple of Datasets")
        super().__init__(flat, pack_as(datasets, [d.element_spec for d in flat]))
        self.structure = datasets


class ConcatenateDataset(Dataset):
    kind = "concatenate"

    def __init__(self, first: Dataset, second: Dataset) -> None:
        a, b = first.flat_specs(), second.flat_specs()
        if not same_structure(first.element_spec, second.element_spec) or any(
            x.dtype != y.dtype for x, y in zip(a, b)
        ):
            raise GraphError("concatenate: the two datasets' elements differ in structure or dtypes")
        specs = [ComponentSpec(x.dtype, _most_specific_common(x.shape, y.shape)) for x, y in zip(a, b)]
        super().__init__([first, second], pack_as(first.element_spec, specs))


def _most_specific_common(a: Any, b: Any) -> Any:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


class MapDataset(Dataset):
    """``map``: the traced function (graph/data/function.py) per element; ``num_parallel_calls``
    elements are computed at once on the pipeline's threads, still yielded in order."""

    kind = "map"

    def __init__(self, input: Dataset, fn: Callable[..., Any], num_parallel_calls: Any) -> None:
        self.function: TracedFunction = trace_function(
            fn, input.element_spec, "Dataset.map", get_default_graph().seed
        )
        specs = self.function.output_specs
        super().__init__([input], pack_as(self.function.output_structure, specs) if specs else ())
        n = _static_int(num_parallel_calls) if num_parallel_calls is not None else 1
        self.parallelism = 4 if n == AUTOTUNE else max(1, n or 1)


class FilterDataset(Dataset):
    kind = "filter"

    def __init__(self, input: Dataset, predicate: Callable[..., Any]) -> None:
        self.function = trace_function(
            predicate, input.element_spec, "Dataset.filter", get_default_graph().seed
        )
        out = self.function.outputs
        if len(out) != 1 or out[0].dtype != dtypes.bool_ or out[0]._shape not in ((), None):
            raise GraphError("Dataset.filter: the predicate must return one scalar bool tensor")
        super().__init__([input], input.element_spec)


class FlatMapDataset(Dataset):
    """``flat_map``: ``map_func`` is called in Python when the pipeline runs (not traced), on the
    element's numpy values, and must return a Dataset; its elements are yielded in turn."""

    kind = "flat_map"

    def __init__(self, input: Dataset, fn: Callable[..., Any]) -> None:
        # The returned dataset's spec is needed now: probe the function with the input's spec
        # on placeholders of a scratch graph; only the result's element spec is kept.
        self.fn = fn
        probe = _probe_dataset(fn, input)
        super().__init__([input], probe.element_spec)


class InterleaveDataset(Dataset):
    """``interleave``: ``map_func`` (called in Python on each input element's numpy values, as
    ``flat_map``) gives a dataset per input element; ``cycle_length`` of them are read round-robin,
    ``block_length`` elements at a time."""

    kind = "interleave"

    def __init__(self, input: Dataset, fn: Callable[..., Any], cycle_length: Any, block_length: Any) -> None:
        self.fn = fn
        probe = _probe_dataset(fn, input)
        super().__init__([input], probe.element_spec)
        cycle = _static_int(cycle_length) if cycle_length is not None else AUTOTUNE
        self.cycle_length = 4 if cycle is None or cycle == AUTOTUNE else max(1, cycle)
        self.block_length = max(1, _static_int(block_length) or 1)


def _probe_dataset(fn: Callable[..., Any], input: Dataset) -> Dataset:
    from ..core import Graph
    from ..ops.constant import placeholder
    from .function import call_with_element

    with Graph().as_default():
        args = [placeholder(s.dtype, s.shape) for s in input.flat_specs()]
        ds = call_with_element(fn, pack_as(input.element_spec, args))
    if not isinstance(ds, Dataset):
        raise GraphError(f"Dataset.flat_map: the function must return a Dataset, got {type(ds).__name__}")
    return ds


class BatchDataset(Dataset):
    kind = "batch"

    def __init__(self, input: Dataset, batch_size: Any, drop_remainder: bool) -> None:
        super().__init__([input], ())
        self.batch_size = self._param(batch_size, np.int64)
        self.drop_remainder = bool(drop_remainder)
        n = _static_int(self.batch_size) if self.drop_remainder else None
        self.element_spec = map_structure(
            lambda s: ComponentSpec(s.dtype, None if s.shape is None else (n, *s.shape)), input.element_spec
        )


class PaddedBatchDataset(Dataset):
    """``padded_batch``: components padded to ``padded_shapes`` (None / -1 dims: the longest in
    the batch) with ``padding_values`` (default 0, or b"" for strings)."""

    kind = "padded_batch"

    def __init__(
        self, input: Dataset, batch_size: Any, padded_shapes: Any, padding_values: Any, drop_remainder: bool
    ) -> None:
        super().__init__([input], ())
        self.batch_size = self._param(batch_size, np.int64)
        self.drop_remainder = bool(drop_remainder)
        specs = input.flat_specs()
        if padded_shapes is None:
            shapes = [s.shape for s in specs]
        else:
            from .dataset import _flatten_shapes

            shapes = [
                s.dims if isinstance(s, TensorShape) else as_shape(s)
                for s in _flatten_shapes(input.element_spec, padded_shapes)
            ]
        self.padded_shapes: list[Any] = []
        for spec, shape in zip(specs, shapes):
            if shape is None or spec.shape is None or len(shape) != len(spec.shape):
                raise GraphError(
                    f"padded_batch: padded shape {format_shape(shape)} does not fit a component of shape "
                    f"{format_shape(spec.shape)}; give one dim per component dim (None: pad to the longest)"
                )
            self.padded_shapes.append(shape)
        if padding_values is None:
            values = [b"" if s.dtype == dtypes.string else 0 for s in specs]
        else:
            values = flatten(padding_values)
        self.padding_values = [np.asarray(v, dtype=s.dtype) for v, s in zip(values, specs)]
        n = _static_int(self.batch_size) if self.drop_remainder else None
        out = [ComponentSpec(s.dtype, (n, *shape)) for s, shape in zip(specs, self.padded_shapes)]
        self.element_spec = pack_as(input.element_spec, out)


class UnbatchDataset(Dataset):
    kind = "unbatch"

    def __init__(self, input: Dataset) -> None:
        specs = [ComponentSpec(s.dtype, None if s.shape is None else s.shape[1:]) for s in input.flat_specs()]
        super().__init__([input], pack_as(input.element_spec, specs))


class ShuffleDataset(Dataset):
    """``shuffle``: a buffer of ``buffer_size`` elements, one drawn uniformly at random per output.
    With a seed, the order is the same in every session (not TF's order: another generator);
    ``reshuffle_each_iteration=False`` repeats the first epoch's order in later epochs."""

    kind = "shuffle"

    def __init__(self, input: Dataset, buffer_size: Any, seed: int | None, reshuffle: bool) -> None:
        super().__init__([input], input.element_spec)
        self.buffer_size = self._param(buffer_size, np.int64)
        g = get_default_graph()
        if seed is None and g.seed is None:
            self.seed: list[int] | None = None
        else:  # as TF's op seeds: a graph seed alone gives each shuffle its own next op seed
            self.seed = [g.seed or 0, int(seed) if seed is not None else g.next_op_seed()]
        self.reshuffle_each_iteration = bool(reshuffle)


class RepeatDataset(Dataset):
    kind = "repeat"

    def __init__(self, input: Dataset, count: Any) -> None:
        super().__init__([input], input.element_spec)
        self.count = self._param(-1 if count is None else count, np.int64)


class TakeDataset(Dataset):
    kind = "take"

    def __init__(self, input: Dataset, count: Any) -> None:
        super().__init__([input], input.element_spec)
        self.count = self._param(count, np.int64)


class SkipDataset(Dataset):
    kind = "skip"

    def __init__(self, input: Dataset, count: Any) -> None:
        super().__init__([input], input.element_spec)
        self.count = self._param(count, np.int64)


class PrefetchDataset(Dataset):
    """``prefetch``: a background producer thread keeps up to ``buffer_size`` elements ready, so
    input work overlaps the training step."""

    kind = "prefetch"

    def __init__(self, input: Dataset, buffer_size: Any) -> None:
        super().__init__([input], input.element_spec)
        self.buffer_size = self._param(buffer_size, np.int64)


class CacheDataset(Dataset):
    """``cache``: the first complete pass is kept in memory and replayed afterwards. A filename
    is accepted for TF's signature but the cache stays in memory (it is not written to disk)."""

    kind = "cache"

    def __init__(self, input: Dataset, filename: str) -> None:
        super().__init__([input], input.element_spec)
        self.filename = filename
