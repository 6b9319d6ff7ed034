"""Kernels of ReverseV2 and ReverseSequence."""

from __future__ import annotations

from typing import Any

from .registry import Compute, KernelContext, register_kernel


@register_kernel("ReverseV2")
def _reverse(ctx: KernelContext) -> Compute:
    xp, axes = ctx.xp, ctx.attr("axis")
    return lambda x: xp.flip(x, axis=axes) if axes else x


@register_kernel("ReverseSequence")
def _reverse_sequence(ctx: KernelContext) -> Compute:
    xp, seq_axis, batch_axis = ctx.xp, ctx.attr("seq_axis"), ctx.attr("batch_axis")

    def compute(x: Any, lengths: Any) -> Any:
        seq, batch = seq_axis % x.ndim, batch_axis % x.ndim
        xm = xp.moveaxis(x, (batch, seq), (0, 1))
        n, steps = xm.shape[0], xm.shape[1]
        lens = xp.asarray(lengths).astype(xp.int64).reshape(-1)
        if lens.shape[0] != n:
            raise ValueError(f"seq_lengths has {lens.shape[0]} entries for a batch of {n}")
        if n and (int(lens.max()) > steps or int(lens.min()) < 0):
            raise ValueError(f"seq_lengths must be in [0, {steps}], got {lens.tolist()}")
        t = xp.arange(steps)[None, :]
        idx = xp.where(t < lens[:, None], lens[:, None] - 1 - t, t)
        out = xm[xp.arange(n)[:, None], idx]
        return xp.moveaxis(out, (0, 1), (batch, seq))

    return compute
