"""Kernel of Einsum (numpy's / cupy's einsum with the equation normalised at build time)."""

from __future__ import annotations

from .registry import Compute, KernelContext, register_kernel


@register_kernel("Einsum", expensive=True)
def _einsum(ctx: KernelContext) -> Compute:
    xp, equation = ctx.xp, ctx.attr("equation")
    # optimize=True picks a contraction order; numpy's default would contract left to right.
    return lambda *xs: xp.einsum(equation, *xs, optimize=True)
