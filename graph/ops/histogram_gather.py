"""Two TF1 conveniences built from other ops: ``tf.histogram_fixed_width`` (counts of values in
``nbins`` equal bins over ``value_range``, values outside counted in the end bins, as TF's kernel
bins them: ``min((max(v, lo) - lo) / step, nbins - 1)`` in float64, truncated) and
``tf.batch_gather`` (per batch entry, a gather from that entry's rows)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import dims_of, gather, reshape
from .math import cast, maximum, minimum, subtract
from .math_extra import bincount
from .range_ops import range_op

__all__ = ["batch_gather", "histogram_fixed_width"]


def histogram_fixed_width(
    values: Any, value_range: Any, nbins: int = 100, dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """[nbins] counts of ``values`` (any shape) in equal bins spanning ``value_range`` = [lo, hi]."""
    if isinstance(nbins, Tensor) or int(nbins) <= 0:
        raise GraphError(f"histogram_fixed_width: nbins must be a positive Python int, got {nbins!r}")
    n = int(nbins)
    with get_default_graph().name_scope(name or "histogram_fixed_width"):
        v = cast(reshape(convert_to_tensor(values), [-1]), dtypes.float64)
        bounds = cast(convert_to_tensor(value_range), dtypes.float64)
        lo, hi = bounds[0], bounds[1]
        step = (hi - lo) / float(n)
        index = minimum(subtract(maximum(v, lo), lo) / step, float(n - 1))
        return bincount(cast(index, dtypes.int32), minlength=n, maxlength=n, dtype=dtypes.as_dtype(dtype))


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """``out[b, k, ...] = params[b, indices[b, k], ...]`` for [batch, ...] params and [batch, k] indices."""
    with get_default_graph().name_scope(name or "batch_gather"):
        p, i = convert_to_tensor(params), convert_to_tensor(indices)
        if p._shape is None or i._shape is None or len(i._shape) != 2 or len(p._shape) < 2:
            raise GraphError(
                f"batch_gather: params {p.name} of rank >= 2 and indices {i.name} of rank 2 ([batch, k]) are supported"
            )
        dp, di = dims_of(p), dims_of(i)
        rows = range_op(0, dp[0], 1, i.dtype, "range") * cast(convert_to_tensor(dp[1]), i.dtype)
        flat = reshape(i + reshape(rows, [-1, 1]), [-1])
        picked = gather(reshape(p, [-1, *dp[2:]]), flat)
        return reshape(picked, [di[0], di[1], *dp[2:]])
