"""Kernel of ``SelfAdjointEigV2`` (graph/ops/linalg_eigh.py): the array module's ``eigh`` on
the lower triangle, eigenvalues ascending."""

from __future__ import annotations

from typing import Any

from .registry import Aliasing, Compute, KernelContext, register_kernel


@register_kernel("SelfAdjointEigV2", aliasing=Aliasing.FRESH, expensive=True)
def _eigh(ctx: KernelContext) -> Compute:
    xp, compute_v = ctx.xp, ctx.attr("compute_v")

    def compute(x: Any) -> Any:
        e, v = xp.linalg.eigh(x, UPLO="L")
        if compute_v:
            return e.astype(x.dtype, copy=False), v.astype(x.dtype, copy=False)
        return e.astype(x.dtype, copy=False), xp.zeros((0,), dtype=x.dtype)

    return compute
