"""More of TF1's array names, composed of existing ops (gradients come with them): ``tf.repeat``,
``invert_permutation``, ``unravel_index``, ``tensor_scatter_nd_update`` / ``_add`` / ``_sub`` (and
their ``tensor_scatter_*`` spellings), ``where_v2``, ``broadcast_static_shape`` /
``broadcast_dynamic_shape``, ``accumulate_n``, ``is_tensor`` and ``dimension_value``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..indexed_slices import IndexedSlices
from ..op_builder import convert_to_tensor
from ..sparse_tensor import SparseTensor
from ..tensor_shape import TensorShape
from ..variables import Variable
from .array import expand_dims, gather, reshape, shape, where, zeros, zeros_like
from .array_composite import range as range_
from .masking import where_indices
from .math import add_n, cast, less, reduce_max
from .math_composite import logical_or
from .math_extra import cumprod
from .rounding import floordiv, floormod
from .scatter import scatter_nd

__all__ = [
    "accumulate_n",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "dimension_value",
    "invert_permutation",
    "is_tensor",
    "repeat",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "unravel_index",
    "where_v2",
]


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """Each slice of ``input`` along ``axis`` repeated ``repeats`` times (a scalar, or one count
    per slice); with no ``axis``, of the flattened input."""
    with get_default_graph().name_scope(name or "Repeat"):
        x = convert_to_tensor(input)
        if axis is None:
            x, axis = reshape(x, [-1]), 0
        n = shape(x)[axis]
        counts = convert_to_tensor(repeats, dtype=dtypes.int32)
        counts = counts + zeros_like(range_(n))  # a scalar count, one per slice
        longest = reduce_max(counts)
        mask = less(expand_dims(range_(longest), 0), expand_dims(counts, 1))
        rows = where_indices(mask)[:, 0]  # row-major: slice i, counts[i] times, in order
        return gather(x, rows, axis=axis)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """``y`` with ``y[x[i]] = i``."""
    with get_default_graph().name_scope(name or "InvertPermutation"):
        p = convert_to_tensor(x)
        return scatter_nd(
            expand_dims(p, 1),
            range_(shape(p, out_type=p.dtype)[0], dtype=p.dtype),
            shape(p, out_type=p.dtype),
        )


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """The coordinates in an array of shape ``dims`` of flat ``indices``: ``[len(dims)]`` for a
    scalar, ``[len(dims), n]`` for a vector."""
    with get_default_graph().name_scope(name or "UnravelIndex"):
        flat = convert_to_tensor(indices)
        d = convert_to_tensor(dims, dtype=flat.dtype)
        strides = cumprod(d, exclusive=True, reverse=True)
        if flat._shape is not None and len(flat._shape) == 0:
            return floormod(floordiv(flat, strides), d)
        return floormod(floordiv(expand_dims(flat, 0), expand_dims(strides, 1)), expand_dims(d, 1))


def _scattered(tensor: Any, indices: Any, updates: Any) -> tuple[Tensor, Tensor, Tensor]:
    t = convert_to_tensor(tensor)
    idx = convert_to_tensor(indices)
    return t, idx, scatter_nd(idx, convert_to_tensor(updates, dtype=t.dtype), shape(t, out_type=idx.dtype))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` at ``indices`` (a repeated index: the updates there add up,
    where TF1 leaves which one wins undefined)."""
    with get_default_graph().name_scope(name or "TensorScatterUpdate"):
        t, idx, placed = _scattered(tensor, indices, updates)
        upd = convert_to_tensor(updates, dtype=t.dtype)
        hit = scatter_nd(idx, cast(zeros_like(upd), dtypes.int32) + 1, shape(t, out_type=idx.dtype))
        return where(cast(hit, dtypes.bool_), placed, t)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` added at ``indices``."""
    with get_default_graph().name_scope(name or "TensorScatterAdd"):
        t, _, placed = _scattered(tensor, indices, updates)
        return t + placed


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``."""
    with get_default_graph().name_scope(name or "TensorScatterSub"):
        t, _, placed = _scattered(tensor, indices, updates)
        return t - placed


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """``x`` where ``condition`` else ``y``, the three broadcast against each other (numeric or
    boolean x and y); with neither, the coordinates of the true elements."""
    if x is None and y is None:
        return where_indices(condition, name=name)
    if x is None or y is None:
        raise GraphError("where_v2 needs both x and y, or neither")
    with get_default_graph().name_scope(name or "SelectV2"):
        xt = convert_to_tensor(x)
        yt = convert_to_tensor(y, dtype=xt.dtype)
        c = convert_to_tensor(condition, dtype=dtypes.bool_)
        work = dtypes.int8 if xt.dtype == dtypes.bool_ else xt.dtype
        zero = zeros_like(cast(c, work)) + zeros_like(cast(xt, work)) + zeros_like(cast(yt, work))
        if xt.dtype == dtypes.bool_:
            xb, yb = cast(cast(xt, work) + zero, dtypes.bool_), cast(cast(yt, work) + zero, dtypes.bool_)
        else:
            xb, yb = xt + zero, yt + zero
        return where(logical_or(c, cast(zero, dtypes.bool_)), xb, yb)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The static shape two shapes broadcast to (unknown dimensions stay unknown)."""
    a, b = TensorShape(shape_x).dims, TensorShape(shape_y).dims
    if a is None or b is None:
        return TensorShape(None)
    return TensorShape(S.broadcast(a, b))


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The shape (a vector) two shape vectors broadcast to, computed in the graph."""
    with get_default_graph().name_scope("BroadcastArgs"):
        sx = convert_to_tensor(shape_x)
        sy = convert_to_tensor(shape_y, dtype=sx.dtype)
        both = logical_or(
            cast(zeros(sx, dtype=dtypes.int8), dtypes.bool_), cast(zeros(sy, dtype=dtypes.int8), dtypes.bool_)
        )
        return shape(both, out_type=sx.dtype)


def accumulate_n(
    inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> Tensor:
    """The sum of ``inputs`` (all of one shape), as ``add_n``."""
    if not inputs:
        raise ValueError("accumulate_n needs at least one input")
    return add_n(list(inputs), name=name)


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a graph tensor or tensor-like (Variable, SparseTensor, IndexedSlices)."""
    return isinstance(x, (Tensor, Variable, SparseTensor, IndexedSlices))


def dimension_value(dimension: Any) -> int | None:
    """A dimension as an int (None when unknown)."""
    value = getattr(dimension, "value", dimension)
    return None if value is None else int(value) if isinstance(value, (int, np.integer)) else value
