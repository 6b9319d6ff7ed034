"""Kernel of the ``Squeeze`` op (graph/ops/squeeze_op.py): a reshape to the input's shape without
its size-1 dimensions (all of them, or the listed ones, which must be 1)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from .array import reshaped
from .registry import Compute, KernelContext, register_kernel


@register_kernel("Squeeze")
def _squeeze(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    axes = list(ctx.attr("squeeze_dims"))

    def compute(x: Any) -> Any:
        shape = tuple(x.shape)
        if not axes:
            return reshaped(xp, x, tuple(d for d in shape if d != 1))
        drop = {a % len(shape) for a in axes}
        for a in sorted(drop):
            if shape[a] != 1:
                raise InvalidArgumentError(
                    None,
                    op,
                    f"{op.name}: Can not squeeze dim[{a}], expected a dimension of 1, got {shape[a]}",
                )
        return reshaped(xp, x, tuple(d for i, d in enumerate(shape) if i not in drop))

    return compute
