"""``tf.data.experimental``: AUTOTUNE and the TF1-era fused transformations, as compositions
(for ``dataset.apply(...)``) of the plain ones, which this runtime runs just as well."""

from __future__ import annotations

from collections.abc import Callable as _Callable
from typing import Any as _Any

from .dataset import AUTOTUNE
from .dataset import Dataset as _Dataset

__all__ = ["AUTOTUNE", "map_and_batch", "parallel_interleave", "shuffle_and_repeat"]

_Transformation = _Callable[[_Dataset], _Dataset]


def shuffle_and_repeat(buffer_size: _Any, count: _Any = None, seed: int | None = None) -> _Transformation:
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: a new order each epoch."""
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(
    map_func: _Callable[..., _Any],
    batch_size: _Any,
    num_parallel_batches: _Any = None,
    drop_remainder: bool = False,
    num_parallel_calls: _Any = None,
) -> _Transformation:
    """``map(map_func, num_parallel_calls)`` then ``batch(batch_size, drop_remainder)``."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda ds: ds.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)


def parallel_interleave(
    map_func: _Callable[..., _Any],
    cycle_length: _Any,
    block_length: _Any = 1,
    sloppy: bool = False,
    buffer_output_elements: _Any = None,
    prefetch_input_elements: _Any = None,
) -> _Transformation:
    """``interleave(map_func, cycle_length, block_length)`` (always in the deterministic order)."""
    return lambda ds: ds.interleave(map_func, cycle_length=cycle_length, block_length=block_length)
