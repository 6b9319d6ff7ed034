"""Kernel of Where with one argument: the row-major coordinates of the non-zero elements."""

from __future__ import annotations

from typing import Any

from .registry import Aliasing, Compute, KernelContext, register_kernel


@register_kernel("Where", aliasing=Aliasing.FRESH)
def _where(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any) -> Any:
        return xp.argwhere(xp.asarray(x)).astype(xp.int64)

    return compute
