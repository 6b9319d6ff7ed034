"""Kernels of graph/ops/random_more.py: Multinomial, RandomGamma, RandomPoissonV2, drawn from the
session's per-op numpy Generator as devices/kernels/random.py's."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from .random import _dims
from .registry import Aliasing, Compute, KernelContext, register_kernel


@register_kernel("Multinomial", aliasing=Aliasing.FRESH, expensive=True)
def _multinomial(ctx: KernelContext) -> Compute:
    xp, rng, op = ctx.xp, ctx.resources.rng_for(ctx.op), ctx.op
    out_dt = np.dtype(ctx.attr("output_dtype"))

    def compute(logits: Any, count: Any) -> Any:
        x = np.asarray(logits.get() if hasattr(logits, "get") else logits, dtype=np.float64)
        n = int(count)
        if n < 0:
            raise InvalidArgumentError(None, op, f"{op.name}: num_samples should be nonnegative, got {n}")
        if x.shape[1] == 0 and x.shape[0] > 0:
            raise InvalidArgumentError(None, op, f"{op.name}: logits need at least one class")
        # -inf logits never drawn; each row normalised in float64 (TF1: softmax of the row)
        shifted = np.exp(x - x.max(axis=1, keepdims=True)) if x.size else x
        cdf = np.cumsum(shifted, axis=1)
        u = rng.random((x.shape[0], n)) * cdf[:, -1:] if x.size else np.zeros((x.shape[0], n))
        picks = np.empty((x.shape[0], n), dtype=out_dt)
        for row in range(x.shape[0]):
            picks[row] = np.minimum(np.searchsorted(cdf[row], u[row], side="right"), x.shape[1] - 1)
        return xp.asarray(picks)

    return compute


@register_kernel("RandomGamma", aliasing=Aliasing.FRESH, expensive=True)
def _gamma(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), np.dtype(ctx.attr("dtype"))

    def compute(shape: Any, alpha: Any) -> Any:
        a = np.asarray(alpha.get() if hasattr(alpha, "get") else alpha, dtype=np.float64)
        draws = rng.standard_gamma(a, size=(*_dims(shape), *a.shape))
        return xp.asarray(draws.astype(dt, copy=False))

    return compute


@register_kernel("RandomPoissonV2", aliasing=Aliasing.FRESH, expensive=True)
def _poisson(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), np.dtype(ctx.attr("dtype"))

    def compute(shape: Any, lam: Any) -> Any:
        rate = np.asarray(lam.get() if hasattr(lam, "get") else lam, dtype=np.float64)
        draws = rng.poisson(rate, size=(*_dims(shape), *rate.shape))
        return xp.asarray(draws.astype(dt, copy=False))

    return compute
