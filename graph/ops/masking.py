"""Where with one argument (the coordinates of the true elements) and boolean_mask built on it.

``Where`` has a data-dependent output shape ([number of true elements, rank], int64, row-major
order as TF); ``boolean_mask`` gathers the selected rows, so its gradient is Gather's.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array import gather, reshape

__all__ = ["boolean_mask", "where_indices"]


@register_op("Where")
def _where_shape(op: Operation) -> list:
    x = op.inputs[0]
    rank = None if x._shape is None else len(x._shape)
    return [(dtypes.int64, None if rank is None else (None, rank))]


not_differentiable("Where")


def where_indices(condition: Any, name: str | None = None) -> Tensor:
    """int64 [n, rank]: the coordinates of the true (non-zero) elements of ``condition``."""
    c = convert_to_tensor(condition)
    return make_op("Where", [c], None, name or "Where").outputs[0]


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: int | None = None) -> Tensor:
    """The elements (or slices) of ``tensor`` where ``mask`` is true; the mask's k dimensions, starting
    at ``axis``, must match ``tensor``'s and become one dimension of length = number of trues."""
    with get_default_graph().name_scope(name):
        t = convert_to_tensor(tensor, name="tensor")
        m = convert_to_tensor(mask, name="mask")
        if m.dtype != dtypes.bool_:
            raise GraphError(f"boolean_mask needs a bool mask, but {m.name} is {m.dtype.name}")
        if m._shape is None or t._shape is None:
            raise GraphError(
                f"boolean_mask needs the ranks of {t.name} and {m.name} known when the graph is built"
            )
        k, a = len(m._shape), 0 if axis is None else S.normalize_axis(axis, len(t._shape), t.name)
        if k == 0:
            raise GraphError(f"boolean_mask: mask {m.name} must have rank >= 1, it is a scalar")
        if a + k > len(t._shape):
            raise GraphError(
                f"boolean_mask: mask {m.name} (shape {m.shape}) has more dimensions than {t.name} "
                f"(shape {t.shape}) has from axis {a}"
            )
        covered = t._shape[a : a + k]
        if not S.compatible(covered, m._shape):
            raise GraphError(
                f"boolean_mask: mask shape {m.shape} does not match dimensions {a}..{a + k - 1} of {t.name} "
                f"(shape {t.shape})"
            )
        if k > 1:
            flat = [-1 if d is None else d for d in t._shape[:a]]
            n = 1
            for d in S.merge(covered, m._shape):
                n = -1 if d is None or n == -1 else n * d
            rest = [-1 if d is None else d for d in t._shape[a + k :]]
            dims = [*flat, n, *rest]
            if dims.count(-1) > 1:
                raise GraphError(
                    f"boolean_mask over {k} dimensions needs {t.name}'s shape {t.shape} known except one dimension"
                )
            t = reshape(t, dims)
            m = reshape(m, [-1])
        picked = reshape(where_indices(m), [-1])
        return gather(t, picked, axis=a)
