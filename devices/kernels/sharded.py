"""Large one-pass elementwise ops and leading-axis sums, sharded over the intra-op pool.

An activation or a broadcast add over a convolution's output (the MNIST CNN's first
layer: 64x28x28x32, 1.6M elements) is memory-bound work of about half a millisecond per pass on
one core; TF shards such Eigen expressions over its intra-op threads. Here an array of at least
``SHARD_MIN`` elements is cut into ``threads()`` blocks of rows (``elementwise.run_parts``: the
caller runs every block no helper has started, so a busy pool never delays it). Two passes (a
mask, then a product, as ReluGrad) gained nothing sharded or chunked into cache-sized pieces
(1.3 ms on one core for 1.6M elements; 1.1 ms wall for twice the CPU time on two), so only
one-pass ops are sharded. Anything else (small arrays, non-numpy arrays such as cupy's,
non-contiguous views) returns None and the caller computes it in one piece.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .elementwise import run_parts, threads

# A hand-off to the pool costs tens of microseconds; a pass over this many float32 elements
# about 100 us on one core.
SHARD_MIN = 1 << 18
# Columns of the matrix a leading-axis sum reduces over its rows: numpy adds a row at a time, so
# rows as narrow as a channel count (32) spend their time in loop overhead, not in adds.
_WIDE = 1024

Block = Callable[[int, int], None]


def _shards(rows: int, size: int) -> int:
    if size < SHARD_MIN or threads() <= 1:
        return 1
    return min(threads(), rows)


def _run_blocks(rows: int, parts: int, block: Block) -> None:
    step = -(-rows // parts)
    run_parts([functools.partial(block, lo, min(rows, lo + step)) for lo in range(0, rows, step)])


def _flat(a: Any) -> Any:
    return a.reshape(-1) if a.__class__ is np.ndarray and a.flags.c_contiguous else None


def unary(ufunc: Any, x: Any, *scalars: Any) -> Any:
    """``ufunc(x, *scalars)`` into a fresh array, sharded; None when ``x`` is not a large
    contiguous numpy array."""
    flat = _flat(x)
    if flat is None or _shards(flat.size, flat.size) <= 1:
        return None
    out = np.empty_like(x)
    dst = out.reshape(-1)

    def block(lo: int, hi: int) -> None:
        ufunc(flat[lo:hi], *scalars, out=dst[lo:hi])

    _run_blocks(flat.size, _shards(flat.size, flat.size), block)
    return out


def binary(ufunc: Any, x: Any, y: Any) -> Any:
    """``ufunc(x, y)`` with numpy broadcasting into a fresh array, sharded over blocks of the
    result's first axis; None unless one operand is a large numpy array with the result's shape
    and the other either shares its first axis or broadcasts along it (a bias, a scalar)."""
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        return None
    big, other = (x, y) if x.size >= y.size else (y, x)
    if big.ndim == 0 or _shards(big.shape[0], big.size) <= 1:
        return None
    if other.ndim > big.ndim or np.broadcast_shapes(big.shape, other.shape) != big.shape:
        return None
    rows = big.shape[0]
    x_rows = x.ndim == big.ndim and x.shape[0] == rows
    y_rows = y.ndim == big.ndim and y.shape[0] == rows
    out = np.empty(big.shape, np.result_type(x, y))

    def block(lo: int, hi: int) -> None:
        ufunc(x[lo:hi] if x_rows else x, y[lo:hi] if y_rows else y, out=out[lo:hi])

    _run_blocks(rows, _shards(rows, big.size), block)
    return out


def sum_leading(g: Any, target_size: int) -> Any:
    """The sum of contiguous ``g`` over its leading axes down to its trailing ``target_size``
    elements, flat; None when ``g`` is not a numpy array or small. The rows are summed as a
    matrix ``_WIDE`` or more columns wide (several trailing blocks side by side, added at the
    end), one partial sum per shard: 1.5 -> 0.35 ms on one core for a 64x28x28x32 bias
    gradient, measured."""
    flat = _flat(g)
    if flat is None or target_size <= 0 or flat.size % target_size or g.dtype.kind not in "fc":
        return None
    rows = flat.size // target_size
    if rows < 2 or flat.size < SHARD_MIN:
        return None
    side = 1  # trailing blocks per wide row: a divisor of rows
    while side * target_size < _WIDE and rows % (side * 2) == 0:
        side *= 2
    wide = flat.reshape(rows // side, side * target_size)
    parts = _shards(wide.shape[0], flat.size)
    step = -(-wide.shape[0] // parts)
    starts = range(0, wide.shape[0], step)
    partial: list[Any] = [None] * len(starts)

    def block(k: int, lo: int, hi: int) -> None:
        partial[k] = np.add.reduce(wide[lo:hi], axis=0)

    run_parts([functools.partial(block, k, lo, min(wide.shape[0], lo + step)) for k, lo in enumerate(starts)])
    total = partial[0]
    for more in partial[1:]:
        total += more
    return np.add.reduce(total.reshape(side, target_size), axis=0)
