"""Kernels of the set operations of graph/ops/sets.py, on the host: each row's set by numpy's
sorted set routines."""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel

_ROUTINES = {
    "intersection": lambda a, b: np.intersect1d(a, b),
    "union": lambda a, b: np.union1d(a, b),
    "a-b": lambda a, b: np.setdiff1d(a, b),
    "b-a": lambda a, b: np.setdiff1d(b, a),
}


@register_kernel("DenseToDenseSetOperation", devices=("CPU",), aliasing=Aliasing.FRESH)
def _set_operation(ctx: KernelContext) -> Compute:
    routine = _ROUTINES[ctx.attr("set_operation")]

    def compute(a: Any, b: Any) -> tuple[Any, Any, Any]:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape[:-1] != b.shape[:-1]:
            raise ValueError(f"the sets' leading dimensions differ: {a.shape[:-1]} and {b.shape[:-1]}")
        lead = a.shape[:-1]
        rows = [
            routine(x, y) for x, y in zip(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]), strict=True)
        ]
        width = max((len(r) for r in rows), default=0)
        index = [(*np.unravel_index(i, lead), j) for i, r in enumerate(rows) for j in range(len(r))]
        indices = np.asarray(index, np.int64).reshape(-1, len(lead) + 1)
        values = np.concatenate(rows) if rows else np.zeros(0, a.dtype)
        if a.dtype.kind in "SUO":  # strings are object arrays of bytes, as every string kernel's
            values = np.array(
                [v if isinstance(v, bytes) else str(v).encode() for v in values.tolist()], object
            )
        else:
            values = values.astype(a.dtype)
        return indices, values, np.asarray([*lead, width], np.int64)

    return compute


@register_kernel("SparseSetSize", devices=("CPU",), aliasing=Aliasing.FRESH)
def _set_size(ctx: KernelContext) -> Compute:
    def compute(indices: Any, values: Any, dense_shape: Any) -> Any:
        shape = [int(d) for d in np.asarray(dense_shape).reshape(-1)]
        lead = shape[:-1]
        rows = (
            np.ravel_multi_index(np.asarray(indices, np.int64)[:, :-1].T, lead)
            if lead
            else np.zeros(len(values), np.int64)
        )
        counts = np.zeros(int(np.prod(lead, dtype=np.int64)), np.int32)
        for row in np.unique(rows):
            counts[row] = len(np.unique(np.asarray(values)[rows == row]))
        return counts.reshape(lead)

    return compute
