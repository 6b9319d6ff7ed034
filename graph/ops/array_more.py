"""More of TF1's array functions: ``unique`` / ``unique_with_counts`` and ``setdiff1d`` (ops with
kernels, first-occurrence order as TF's), ``sort`` / ``argsort`` (a stable argsort op, values
gathered so they differentiate), ``rank``, ``broadcast_to``, ``meshgrid``, ``roll``, ``shape_n``
and ``identity_n`` (compositions). Kernels: devices/kernels/array_more.py.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any, NamedTuple

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array import gather, ones, reshape, shape, size, stack, zeros
from .array_composite import range as range_
from .constant import constant
from .control import identity
from .math import cast
from .reduction import reduce_prod
from .rounding import floormod

__all__ = [
    "argsort",
    "broadcast_to",
    "identity_n",
    "meshgrid",
    "rank",
    "roll",
    "setdiff1d",
    "shape_n",
    "sort",
    "unique",
    "unique_with_counts",
]


def _vector(op: Operation, what: str) -> Tensor:
    x = op.inputs[0]
    if x._shape is not None and len(x._shape) != 1:
        raise ValueError(f"{what} needs a 1-D input, but {x.name} has shape {x.shape}")
    return x


@register_op("Unique")
def _unique_shape(op: Operation) -> list:
    x = _vector(op, "unique")
    return [(x.dtype, (None,)), (op.attrs["out_idx"], x._shape)]


@register_op("UniqueWithCounts")
def _unique_counts_shape(op: Operation) -> list:
    x = _vector(op, "unique_with_counts")
    idx = op.attrs["out_idx"]
    return [(x.dtype, (None,)), (idx, x._shape), (idx, (None,))]


@register_op("ListDiff")
def _list_diff_shape(op: Operation) -> list:
    x = _vector(op, "setdiff1d")
    return [(x.dtype, (None,)), (op.attrs["out_idx"], (None,))]


@register_op("StableArgsort")
def _argsort_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is not None and len(x._shape) == 0:
        raise ValueError(f"argsort needs a tensor of rank >= 1, but {x.name} is a scalar")
    return [(dtypes.int32, x._shape)]


for _t in ("Unique", "UniqueWithCounts", "ListDiff", "StableArgsort"):
    not_differentiable(_t)


class UniqueOutput(NamedTuple):
    """``tf.unique``'s result, as TF1 names its fields."""

    y: Tensor
    idx: Tensor


# ``count`` would shadow tuple.count in a typing.NamedTuple; TF1's is a collections.namedtuple too
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCountsOutput", ["y", "idx", "count"])


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueOutput:
    """(the distinct values of 1-D ``x`` in order of first occurrence, each element's index in it)."""
    t = convert_to_tensor(x)
    op = make_op("Unique", [t], {"out_idx": dtypes.as_dtype(out_idx)}, name or "Unique")
    return UniqueOutput(op.outputs[0], op.outputs[1])


def unique_with_counts(
    x: Any, out_idx: Any = dtypes.int32, name: str | None = None
) -> UniqueWithCountsOutput:
    """``unique``'s two outputs and how often each distinct value occurs."""
    t = convert_to_tensor(x)
    op = make_op("UniqueWithCounts", [t], {"out_idx": dtypes.as_dtype(out_idx)}, name or "UniqueWithCounts")
    return UniqueWithCountsOutput(op.outputs[0], op.outputs[1], op.outputs[2])


def setdiff1d(
    x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """(the elements of 1-D ``x`` not in ``y``, in ``x``'s order, and their positions in ``x``)."""
    xt = convert_to_tensor(x)
    yt = convert_to_tensor(y, dtype=xt.dtype)
    op = make_op("ListDiff", [xt, yt], {"out_idx": dtypes.as_dtype(index_dtype)}, name or "ListDiff")
    return op.outputs[0], op.outputs[1]


def _last_axis(axis: int, x: Tensor, what: str) -> None:
    r = len(x._shape) if x._shape is not None else None
    if axis != -1 and (r is None or axis != r - 1):
        raise GraphError(f"{what}: only the last axis is supported, got axis={axis} for {x.name} {x.shape}")


def argsort(
    values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False, name: str | None = None
) -> Tensor:
    """Indices (int32) that sort ``values`` along the last axis; equal values keep their order."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise GraphError(f"argsort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    x = convert_to_tensor(values)
    _last_axis(axis, x, "argsort")
    attrs = {"descending": direction == "DESCENDING"}
    return make_op("StableArgsort", [x], attrs, name or "argsort").outputs[0]


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """``values`` sorted along the last axis (gathered by ``argsort``, so it differentiates)."""
    with get_default_graph().name_scope(name or "sort"):
        x = convert_to_tensor(values)
        order = argsort(x, axis, direction)
        return _take_last(x, order)


def _take_last(x: Tensor, order: Tensor) -> Tensor:
    """``x[..., order]`` row by row, as one gather over the flattened rows."""
    s = shape(x)
    n = s[-1]
    rows = reshape(range_(0, _product_of(s) // n) * n, [-1, 1])
    flat_idx = reshape(order, [-1, n]) + rows
    picked = gather(reshape(x, [-1]), reshape(flat_idx, [-1]))
    out = reshape(picked, s)
    out._shape = x._shape
    return out


def _product_of(s: Tensor) -> Tensor:
    return reduce_prod(s)


def rank(input: Any, name: str | None = None) -> Tensor:
    """The rank of ``input`` as an int32 scalar (a constant when the static shape knows it)."""
    x = convert_to_tensor(input)
    if x._shape is not None:
        return constant(len(x._shape), dtype=dtypes.int32, name=name or "Rank")
    return shape(shape(x), name=name or "Rank")[0]


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """``input`` broadcast to ``shape`` (its gradient sums back over the broadcast axes)."""
    with get_default_graph().name_scope(name or "BroadcastTo"):
        x = convert_to_tensor(input)
        return x + zeros(shape, dtype=x.dtype)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate grids from 1-D ``args``: ``indexing="xy"`` (default, Cartesian: the first two
    axes swapped) or ``"ij"`` (matrix), as TF's."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise GraphError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    with get_default_graph().name_scope(name or "meshgrid"):
        xs = [convert_to_tensor(a) for a in args]
        n = len(xs)
        outs = []
        for i, x in enumerate(xs):
            dims = [1] * n
            dims[i] = -1
            outs.append(reshape(x, dims))
        sizes = [size(x) for x in xs]
        if indexing == "xy" and n > 1:
            outs[0] = reshape(outs[0], [1, -1] + [1] * (n - 2))
            outs[1] = reshape(outs[1], [-1, 1] + [1] * (n - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        grid = ones(stack(sizes), dtype=xs[0].dtype) if xs else None
        return [o * grid for o in outs]


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:
    """``input`` with elements shifted by ``shift`` along ``axis`` (wrapping around), as np.roll;
    ``shift`` and ``axis`` may be lists of the same length."""
    with get_default_graph().name_scope(name or "Roll"):
        x = convert_to_tensor(input)
        shifts = list(shift) if isinstance(shift, (list, tuple)) else [shift]
        axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        if len(shifts) != len(axes):
            raise GraphError(f"roll: shift {shift} and axis {axis} must have the same length")
        out = x
        for s, a in zip(shifts, axes):
            n = shape(out)[a]
            positions = floormod(range_(0, n) - cast(s, dtypes.int32), n)
            out = gather(out, positions, axis=int(a))
        out._shape = x._shape
        return out


def shape_n(input: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:
    """The shape of each of ``input``."""
    with get_default_graph().name_scope(name or "ShapeN"):
        return [shape(convert_to_tensor(t), out_type=out_type) for t in input]


def identity_n(input: Sequence[Any], name: str | None = None) -> list[Tensor]:
    """Each of ``input`` through an Identity."""
    with get_default_graph().name_scope(name or "IdentityN"):
        return [identity(convert_to_tensor(t)) for t in input]
