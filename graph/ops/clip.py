"""Clipping, as TF1: clip_by_value, clip_by_norm, global_norm, clip_by_global_norm (composites:
gradients come from Minimum / Maximum / Select / Mul)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..indexed_slices import IndexedSlices
from ..op_builder import convert_to_tensor
from .array import ones_like, where
from .math import add_n, cast, greater, maximum, minimum, sqrt
from .reduction import reduce_sum

__all__ = ["clip_by_global_norm", "clip_by_norm", "clip_by_value", "global_norm"]


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Tensor:
    with get_default_graph().name_scope(name or "clip_by_value"):
        return minimum(maximum(convert_to_tensor(t), clip_value_min), clip_value_max)


def _safe_norm(sum_of_squares: Tensor) -> Tensor:
    # sqrt has an infinite derivative at 0: take it of 1 where the sum is 0, and give 0 back there.
    positive = greater(sum_of_squares, 0.0)
    return where(positive, sqrt(where(positive, sum_of_squares, ones_like(sum_of_squares))), sum_of_squares)


def _dense_part(t: Any) -> Tensor:
    # An IndexedSlices counts by its values (as TF: repeated indices are not summed first).
    return t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """``t * clip_norm / max(l2norm(t, axes), clip_norm)``: rescaled so its L2 norm is at most
    clip_norm. An IndexedSlices stays one, its values clipped by their own norm (as TF)."""
    with get_default_graph().name_scope(name or "clip_by_norm"):
        x = _dense_part(t)
        norm = _safe_norm(reduce_sum(x * x, axes, keepdims=True))
        limit = convert_to_tensor(clip_norm, dtype=x.dtype)
        clipped = x * limit / maximum(norm, limit)
        return IndexedSlices(clipped, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else clipped


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """sqrt(sum of every tensor's sum of squares); None entries are skipped, an IndexedSlices
    counts its values."""
    ts = [_dense_part(t) for t in t_list if t is not None]
    if not ts:
        raise GraphError("global_norm needs at least one tensor")
    with get_default_graph().name_scope(name or "global_norm"):
        dtype = ts[0].dtype
        squares = [reduce_sum(t * t) if t.dtype == dtype else cast(reduce_sum(t * t), dtype) for t in ts]
        return _safe_norm(add_n(squares))


def clip_by_global_norm(
    t_list: Sequence[Any],
    clip_norm: Any,
    use_norm: Any = None,
    name: str | None = None,
) -> tuple[list[Any], Tensor]:
    """Scale every tensor by clip_norm / max(global_norm, clip_norm); returns (clipped list, global
    norm). An IndexedSlices stays one, its values scaled."""
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm needs a list or tuple of tensors")
    norm = convert_to_tensor(use_norm) if use_norm is not None else global_norm(t_list)
    with get_default_graph().name_scope(name or "clip_by_global_norm"):
        limit = convert_to_tensor(clip_norm, dtype=norm.dtype)
        scale = limit / maximum(norm, limit)
        clipped: list[Any] = []
        for t in t_list:
            if t is None:
                clipped.append(None)
                continue
            x = _dense_part(t)
            scaled = x * (scale if x.dtype == scale.dtype else cast(scale, x.dtype))
            clipped.append(
                IndexedSlices(scaled, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else scaled
            )
        return clipped, norm
