"""Kernels of Floor, FloorDiv and FloorMod (numpy's floor_divide and mod round as TF does)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _check_divisor(xp: Any, y: Any) -> None:
    # numpy returns 0 with a warning for an integer division by zero; TF refuses it.
    y = xp.asarray(y)
    if y.dtype.kind in "iu" and bool(xp.any(y == 0)):
        raise ValueError("Integer division by zero: the divisor has a zero element")


@register_kernel("Floor", aliasing=Aliasing.FRESH)
def _floor(ctx: KernelContext) -> Compute:
    return ctx.xp.floor


@register_kernel("FloorDiv", aliasing=Aliasing.FRESH)
def _floordiv(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, y: Any) -> Any:
        _check_divisor(xp, y)
        with np.errstate(divide="ignore", invalid="ignore"):  # float x / 0 is +-inf or nan, as TF
            return xp.floor_divide(x, y)

    return compute


@register_kernel("FloorMod", aliasing=Aliasing.FRESH)
def _floormod(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, y: Any) -> Any:
        _check_divisor(xp, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.mod(x, y)

    return compute
