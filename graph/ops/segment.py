"""Segment reductions, as TF1: ``unsorted_segment_sum/max/min/mean/sqrt_n``, ``segment_sum``,
``sparse_segment_sum/mean/sqrt_n``, with their gradients.

``UnsortedSegment*(data, segment_ids, num_segments)`` reduces the rows of ``data`` (over the
leading ``segment_ids.ndim`` axes) into ``num_segments`` rows; a negative id drops its row, an
empty segment is 0 for a sum and the dtype's lowest (max) or highest (min) value, as TF.
``SegmentSum`` needs sorted ids and has ``ids[-1] + 1`` rows. ``SparseSegment*(data, indices,
segment_ids)`` reduces ``data[indices]`` by ``segment_ids`` (mean: divided by the segment's
size, sqrt_n: by its square root); its gradient is dense, of ``data``'s shape.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = [
    "segment_sum",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_sqrt_n",
    "unsorted_segment_sum",
]


def static_int(t: Tensor) -> int | None:
    """The value of a scalar integer constant (None when computed at run time)."""
    op = t.op
    if op.type == "Const" and op.attrs["value"].size == 1:
        return int(op.attrs["value"].reshape(-1)[0])
    return None


def _check_ids(ids: Tensor, what: str) -> None:
    if ids.dtype.kind not in "iu":
        raise ValueError(f"{what} {ids.name} must be integers, got {ids.dtype.name}")


def _unsorted_shape(op: Operation) -> list:
    data, ids, num = op.inputs
    _check_ids(ids, "segment_ids")
    if data._shape is None or ids._shape is None:
        return [(data.dtype, None)]
    k = len(ids._shape)
    if not S.compatible(data._shape[:k], ids._shape):
        raise ValueError(
            f"segment_ids {ids.name} of shape {S.format_shape(ids._shape)} must be a prefix of data "
            f"{data.name}'s shape {S.format_shape(data._shape)}"
        )
    return [(data.dtype, (static_int(num), *data._shape[k:]))]


for _t in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin"):
    register_op(_t)(_unsorted_shape)


def _unsorted(op_type: str, data: Any, segment_ids: Any, num_segments: Any, name: str | None) -> Tensor:
    d = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    n = convert_to_tensor(num_segments) if not isinstance(num_segments, int) else None
    if n is None:
        n = convert_to_tensor(num_segments, dtype=ids.dtype, graph=d.graph)
    return make_op(op_type, [d, ids, n], None, name or op_type).outputs[0]


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """out[s] = sum of data[i] over the i with segment_ids[i] == s."""
    return _unsorted("UnsortedSegmentSum", data, segment_ids, num_segments, name)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def _segment_counts(data: Tensor, ids: Tensor, num_segments: Any) -> Tensor:
    """Rows per segment, at least 1, shaped to broadcast against the reduced data."""
    from .array import ones_like, reshape
    from .math import maximum

    counts = unsorted_segment_sum(ones_like(ids, dtype=data.dtype), ids, num_segments)
    counts = maximum(counts, 1)
    extra = None if data._shape is None or ids._shape is None else len(data._shape) - len(ids._shape)
    if extra is None:
        raise ValueError(f"unsorted_segment_mean/sqrt_n need data {data.name} of known rank")
    return reshape(counts, [-1] + [1] * extra) if extra else counts


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """The sum divided by the number of rows in each segment (0 for an empty one)."""
    from ..core import get_default_graph

    with get_default_graph().name_scope(name or "UnsortedSegmentMean"):
        d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        return unsorted_segment_sum(d, ids, num_segments) / _segment_counts(d, ids, num_segments)


def unsorted_segment_sqrt_n(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """The sum divided by the square root of the number of rows in each segment."""
    from ..core import get_default_graph
    from .math import sqrt

    with get_default_graph().name_scope(name or "UnsortedSegmentSqrtN"):
        d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        return unsorted_segment_sum(d, ids, num_segments) / sqrt(_segment_counts(d, ids, num_segments))


@register_gradient("UnsortedSegmentSum")
def _unsorted_sum_grad(op: Operation, grad: Tensor) -> list:
    return [_gather_drop_negatives(grad, op.inputs[1]), None, None]


def _gather_drop_negatives(params: Tensor, ids: Tensor) -> Tensor:
    """params[ids] with zeros where an id is negative (its row was dropped by the forward op)."""
    return make_op("SegmentGather", [params, ids], None, "SegmentGather").outputs[0]


@register_op("SegmentGather")
def _segment_gather_shape(op: Operation) -> list:
    params, ids = op.inputs
    if params._shape is None or ids._shape is None:
        return [(params.dtype, None)]
    return [(params.dtype, ids._shape + params._shape[1:])]


@register_gradient("SegmentGather")
def _segment_gather_grad(op: Operation, grad: Tensor) -> list:
    from .array import shape

    params, ids = op.inputs
    rows = (
        params._shape[0] if params._shape is not None and params._shape[0] is not None else shape(params)[0]
    )
    return [unsorted_segment_sum(grad, ids, rows), None]


def _unsorted_minmax_grad(op: Operation, grad: Tensor) -> list:
    # Each selected (extreme) entry gets the segment's gradient split evenly among the ties, as TF.
    from .array import where, zeros_like
    from .math import cast, divide, equal

    data, ids, num = op.inputs
    gathered = _gather_drop_negatives(op.outputs[0], ids)
    selected = equal(data, gathered)
    count = unsorted_segment_sum(cast(selected, grad.dtype), ids, num)
    share = _gather_drop_negatives(divide(grad, count), ids)
    return [where(selected, share, zeros_like(share)), None, None]


register_gradient("UnsortedSegmentMax")(_unsorted_minmax_grad)
register_gradient("UnsortedSegmentMin")(_unsorted_minmax_grad)


@register_op("SegmentSum")
def _segment_sum_shape(op: Operation) -> list:
    data, ids = op.inputs
    _check_ids(ids, "segment_ids")
    if ids._shape is not None and len(ids._shape) != 1:
        raise ValueError(f"segment_ids {ids.name} must be a vector, got shape {S.format_shape(ids._shape)}")
    if data._shape is None:
        return [(data.dtype, None)]
    return [(data.dtype, (None, *data._shape[1:]))]


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """out[s] = sum of data[i] with segment_ids[i] == s; ids sorted, out has ids[-1] + 1 rows."""
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    return make_op("SegmentSum", [d, ids], None, name or "SegmentSum").outputs[0]


@register_gradient("SegmentSum")
def _segment_sum_grad(op: Operation, grad: Tensor) -> list:
    from .array import gather

    return [gather(grad, op.inputs[1]), None]


def _sparse_segment_shape(op: Operation) -> list:
    data, indices, ids = op.inputs[:3]
    _check_ids(indices, "indices")
    _check_ids(ids, "segment_ids")
    if data._shape is None:
        return [(data.dtype, None)]
    rows = static_int(op.inputs[3]) if len(op.inputs) == 4 else None
    return [(data.dtype, (rows, *data._shape[1:]))]


SPARSE_SEGMENT_MODES = {
    "SparseSegmentSum": "sum",
    "SparseSegmentMean": "mean",
    "SparseSegmentSqrtN": "sqrt_n",
}
for _t in SPARSE_SEGMENT_MODES:
    register_op(_t)(_sparse_segment_shape)


def _sparse_segment(
    op_type: str, data: Any, indices: Any, segment_ids: Any, num_segments: Any, name: str | None
) -> Tensor:
    d = convert_to_tensor(data)
    inputs = [d, convert_to_tensor(indices), convert_to_tensor(segment_ids)]
    if num_segments is not None:
        inputs.append(convert_to_tensor(num_segments, dtype=dtypes.int32, graph=d.graph))
    return make_op(op_type, inputs, None, name or op_type).outputs[0]


def sparse_segment_sum(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """out[s] = sum of data[indices[i]] with segment_ids[i] == s (ids sorted)."""
    return _sparse_segment("SparseSegmentSum", data, indices, segment_ids, num_segments, name)


def sparse_segment_mean(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    return _sparse_segment("SparseSegmentMean", data, indices, segment_ids, num_segments, name)


def sparse_segment_sqrt_n(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    return _sparse_segment("SparseSegmentSqrtN", data, indices, segment_ids, num_segments, name)


@register_op("SparseSegmentGrad")
def _sparse_segment_grad_shape(op: Operation) -> list:
    grad, _, _, rows = op.inputs
    tail = None if grad._shape is None else grad._shape[1:]
    return [(grad.dtype, None if tail is None else (static_int(rows), *tail))]


def _sparse_segment_grad(op: Operation, grad: Tensor) -> list:
    from .array import shape

    data, indices, ids = op.inputs[:3]
    if data._shape is not None and data._shape[0] is not None:
        rows: Tensor = convert_to_tensor(int(data._shape[0]), dtype=dtypes.int32)
    else:
        rows = shape(data)[0]
    attrs = {"mode": SPARSE_SEGMENT_MODES[op.type]}
    g = make_op("SparseSegmentGrad", [grad, indices, ids, rows], attrs, "SparseSegmentGrad").outputs[0]
    return [g, None, None] + [None] * (len(op.inputs) - 3)


for _t in SPARSE_SEGMENT_MODES:
    register_gradient(_t)(_sparse_segment_grad)
not_differentiable("SparseSegmentGrad")
