"""``tf.hessians``: the second derivatives of ``sum(ys)`` with respect to each of ``xs``, one
``x.shape + x.shape`` tensor per x. Each row is the gradient of one element of the first
gradient, so every x needs a fully known static shape (TF1 also accepts unknown ones, through a
while loop; not supported here: a clear error)."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from . import shapes as S
from .core import Tensor, get_default_graph
from .gradients import gradients

__all__ = ["hessians"]

#: rows past this many build too large a graph (one gradient graph per element of x)
MAX_ELEMENTS = 4096


def hessians(ys: Any, xs: Any, name: str = "hessians", **_gradient_options: Any) -> list[Tensor]:
    """[d^2 sum(ys) / dx dx for x in xs]; a part that does not depend on x is zeros."""
    from .ops.array import reshape, stack, zeros_like

    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    with get_default_graph().name_scope(name):
        for x in xs:
            shape = x._shape
            if not S.is_fully_defined(shape):
                raise GraphError(f"hessians: {x.name} needs a fully known shape, got {x.shape}")
            n = int(np.prod(shape, dtype=np.int64))
            if n > MAX_ELEMENTS:
                raise GraphError(
                    f"hessians: {x.name} has {n} elements, more than the {MAX_ELEMENTS} supported"
                )
            first = gradients(ys, x)[0]
            if first is None:
                out.append(reshape(zeros_like(x), [*shape, *shape]))
                continue
            flat = reshape(first, [n])
            rows = [gradients(flat[i], x)[0] for i in range(n)]
            rows = [zeros_like(x) if r is None else r for r in rows]
            out.append(reshape(stack(rows), [*shape, *shape]))
    return out
