"""Sorted segment reductions beyond ``segment_sum``, as TF1: ``segment_mean``, ``segment_max``,
``segment_min``, ``segment_prod``, with their gradients.

Like ``SegmentSum``: ``segment_ids`` is a sorted vector and the result has ``ids[-1] + 1`` rows.
An empty segment (an id skipped) is 0 for mean, max and min, and 1 for prod, as TF (the unsorted
max/min give the dtype's extreme instead).
"""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .segment import _segment_sum_shape, segment_sum

__all__ = ["segment_max", "segment_mean", "segment_min", "segment_prod"]

SORTED_SEGMENT_OPS = ("SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")
for _t in SORTED_SEGMENT_OPS:
    register_op(_t)(_segment_sum_shape)


def _sorted(op_type: str, data: Any, segment_ids: Any, name: str | None) -> Tensor:
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    return make_op(op_type, [d, ids], None, name or op_type).outputs[0]


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """out[s] = mean of data[i] with segment_ids[i] == s (ids sorted); 0 for an empty segment."""
    return _sorted("SegmentMean", data, segment_ids, name)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """out[s] = max of data[i] with segment_ids[i] == s (ids sorted); 0 for an empty segment."""
    return _sorted("SegmentMax", data, segment_ids, name)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """out[s] = min of data[i] with segment_ids[i] == s (ids sorted); 0 for an empty segment."""
    return _sorted("SegmentMin", data, segment_ids, name)


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """out[s] = product of data[i] with segment_ids[i] == s (ids sorted); 1 for an empty segment."""
    return _sorted("SegmentProd", data, segment_ids, name)


def _counts_per_row(data: Tensor, ids: Tensor) -> Tensor:
    """For each row of ``data``: the size of its segment, shaped to broadcast against the rows."""
    from .array import concat, gather, ones_like, reshape, shape
    from .math import cast

    counts = gather(segment_sum(cast(ones_like(ids), data.dtype), ids), ids)
    rank = None if data._shape is None else len(data._shape)
    if rank is None:
        return reshape(counts, concat([shape(counts), ones_like(shape(data)[1:])], 0))
    return reshape(counts, [-1] + [1] * (rank - 1))


@register_gradient("SegmentMean")
def _segment_mean_grad(op: Operation, grad: Tensor) -> list:
    from .array import gather

    data, ids = op.inputs
    return [gather(grad, ids) / _counts_per_row(data, ids), None]


def _segment_minmax_grad(op: Operation, grad: Tensor) -> list:
    # The extreme entries share their segment's gradient evenly among ties, as TF.
    from .array import gather, where, zeros_like
    from .math import cast, equal, maximum

    data, ids = op.inputs
    selected = equal(data, gather(op.outputs[0], ids))
    ties = segment_sum(cast(selected, grad.dtype), ids)
    share = gather(grad / maximum(ties, 1), ids)  # an empty segment has no ties, and no rows
    return [where(selected, share, zeros_like(share)), None]


register_gradient("SegmentMax")(_segment_minmax_grad)
register_gradient("SegmentMin")(_segment_minmax_grad)


@register_gradient("SegmentProd")
def _segment_prod_grad(op: Operation, grad: Tensor) -> list:
    # d prod / d x_i is the product of the segment's other entries: prod / x_i where x_i != 0; for
    # the one zero of a segment, the product of its nonzero entries; 0 with two zeros or more.
    from .array import gather, ones_like, where, zeros_like
    from .math import cast, equal, greater

    data, ids = op.inputs
    is_zero = equal(data, zeros_like(data))
    zeros = gather(segment_sum(cast(is_zero, data.dtype), ids), ids)
    nonzero = where(is_zero, ones_like(data), data)
    nonzero_prod = gather(segment_prod(nonzero, ids), ids)
    others = where(
        is_zero,
        where(greater(zeros, 1), zeros_like(data), nonzero_prod),
        gather(op.outputs[0], ids) / nonzero,
    )
    return [gather(grad, ids) * others, None]
