"""``tf.data.experimental``: AUTOTUNE and the TF1-era fused transformations, as compositions
(for ``dataset.apply(...)``) of the plain ones, which this runtime runs just as well."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dataset import AUTOTUNE, Dataset

__all__ = ["AUTOTUNE", "map_and_batch", "parallel_interleave", "shuffle_and_repeat"]

Transformation = Callable[[Dataset], Dataset]


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: int | None = None) -> Transformation:
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: a new order each epoch."""
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(
    map_func: Callable[..., Any],
    batch_size: Any,
    num_parallel_batches: Any = None,
    drop_remainder: bool = False,
    num_parallel_calls: Any = None,
) -> Transformation:
    """``map(map_func, num_parallel_calls)`` then ``batch(batch_size, drop_remainder)``."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda ds: ds.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)


def parallel_interleave(
    map_func: Callable[..., Any],
    cycle_length: Any,
    block_length: Any = 1,
    sloppy: bool = False,
    buffer_output_elements: Any = None,
    prefetch_input_elements: Any = None,
) -> Transformation:
    """``interleave(map_func, cycle_length, block_length)`` (always in the deterministic order)."""
    return lambda ds: ds.interleave(map_func, cycle_length=cycle_length, block_length=block_length)
