"""Kernels of random ops: draws come from the session's per-op numpy Generator (seeded as TF),
then move to the device's array module, so CPU and GPU give the same numbers for the same seeds."""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _dims(shape: Any) -> tuple[int, ...]:
    # tolist() works for numpy and cupy alike (shape vectors are tiny).
    values = shape.tolist() if hasattr(shape, "tolist") else list(shape)
    dims = tuple(int(d) for d in (values if isinstance(values, list) else [values]))
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {list(dims)} has negative dimensions")
    return dims


def _draw_dtype(dtype: np.dtype) -> np.dtype:
    # Generator draws only float32/float64 natively; narrower floats are drawn as float32.
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float32)


@register_kernel("RandomStandardNormal", aliasing=Aliasing.FRESH, expensive=True)
def _standard_normal(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), ctx.attr("dtype")
    draw = _draw_dtype(dt)
    return lambda shape: xp.asarray(rng.standard_normal(_dims(shape), dtype=draw).astype(dt, copy=False))


@register_kernel("RandomUniform", aliasing=Aliasing.FRESH, expensive=True)
def _uniform(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), ctx.attr("dtype")
    draw = _draw_dtype(dt)
    return lambda shape: xp.asarray(rng.random(_dims(shape), dtype=draw).astype(dt, copy=False))


@register_kernel("TruncatedNormal", aliasing=Aliasing.FRESH, expensive=True)
def _truncated_normal(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), ctx.attr("dtype")
    draw = _draw_dtype(dt)

    def compute(shape: Any) -> Any:
        out = rng.standard_normal(_dims(shape), dtype=draw)
        bad = np.abs(out) > 2.0
        # About 4.6 % of draws fall outside two standard deviations: redraw just those.
        while bad.any():
            out[bad] = rng.standard_normal(int(bad.sum()), dtype=draw)
            bad = np.abs(out) > 2.0
        return xp.asarray(out.astype(dt, copy=False))

    return compute


@register_kernel("RandomUniformInt", aliasing=Aliasing.FRESH, expensive=True)
def _uniform_int(ctx: KernelContext) -> Compute:
    xp, rng, dt = ctx.xp, ctx.resources.rng_for(ctx.op), ctx.attr("dtype")
    name = ctx.op.name

    def compute(shape: Any, lo: Any, hi: Any) -> Any:
        low, high = int(lo), int(hi)
        if low >= high:
            raise ValueError(f"{name}: need minval < maxval, got minval={low}, maxval={high}")
        return xp.asarray(rng.integers(low, high, size=_dims(shape), dtype=dt))

    return compute


@register_kernel("RandomShuffle", devices=("CPU",), aliasing=Aliasing.FRESH)
def _random_shuffle(ctx: KernelContext) -> Compute:
    rng = ctx.resources.rng_for(ctx.op)

    def compute(x: Any) -> Any:
        arr = np.asarray(x)
        return arr[rng.permutation(arr.shape[0])] if arr.ndim else arr.copy()

    return compute
