"""Kernels of Slice, Pad / PadV2, Tile, DynamicStridedSlice and their gradients
(graph/ops/dynamic_index.py): the bounds arrive as small integer arrays each step and become an
index key or a numpy call; bounds out of range raise ValueError (InvalidArgumentError)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .printing import to_host
from .registry import Aliasing, Compute, KernelContext, register_kernel


def _ints(value: Any) -> list[int]:
    return [int(v) for v in to_host(value).reshape(-1)]


def _slice_key(shape: tuple[int, ...], begin: Any, size: Any) -> tuple[builtins.slice, ...]:
    b, s = _ints(begin), _ints(size)
    if len(b) != len(shape) or len(s) != len(shape):
        raise ValueError(
            f"slice begin {b} and size {s} must have one entry per axis of a rank-{len(shape)} input"
        )
    key = []
    for axis, (d, start, n) in enumerate(zip(shape, b, s, strict=True)):
        stop = d if n == -1 else start + n
        if not (0 <= start <= d and n >= -1 and start <= stop <= d):
            raise ValueError(f"slice: axis {axis} of size {d} cannot give begin {start}, size {n}")
        key.append(builtins.slice(start, stop))
    return tuple(key)


@register_kernel("Slice")
def _slice(ctx: KernelContext) -> Compute:
    return lambda x, begin, size: x[_slice_key(x.shape, begin, size)]


@register_kernel("SliceGrad", aliasing=Aliasing.FRESH)
def _slice_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(grad: Any, x: Any, begin: Any) -> Any:
        out = xp.zeros(x.shape, dtype=grad.dtype)
        out[_slice_key(x.shape, begin, grad.shape)] = grad
        return out

    return compute


def _pads(x: Any, paddings: Any) -> list[tuple[int, int]]:
    rows = to_host(paddings).reshape(-1, 2).tolist() if np.size(to_host(paddings)) else []
    if len(rows) != x.ndim or any(a < 0 or b < 0 for a, b in rows):
        raise ValueError(
            f"paddings {rows} must be non-negative [before, after] pairs, one per axis of a rank-{x.ndim} input"
        )
    return [(int(a), int(b)) for a, b in rows]


@register_kernel("Pad", aliasing=Aliasing.FRESH)
def _pad(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x, paddings: xp.pad(x, _pads(x, paddings))


@register_kernel("PadV2", aliasing=Aliasing.FRESH)
def _pad_v2(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x, paddings, value: xp.pad(x, _pads(x, paddings), constant_values=value.item())


@register_kernel("PadGrad")
def _pad_grad(ctx: KernelContext) -> Compute:
    def compute(grad: Any, paddings: Any) -> Any:
        pads = _pads(grad, paddings)
        return grad[tuple(builtins.slice(a, d - b) for (a, b), d in zip(pads, grad.shape, strict=True))]

    return compute


@register_kernel("Tile", aliasing=Aliasing.FRESH)
def _tile(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, multiples: Any) -> Any:
        m = _ints(multiples)
        if len(m) != x.ndim or min(m, default=0) < 0:
            raise ValueError(
                f"tile multiples {m} must be non-negative, one per axis of a rank-{x.ndim} input"
            )
        return xp.tile(x, m)

    return compute


@register_kernel("TileGrad", aliasing=Aliasing.FRESH)
def _tile_grad(ctx: KernelContext) -> Compute:
    def compute(grad: Any, x: Any, multiples: Any) -> Any:
        m = _ints(multiples)
        # [m0, d0, m1, d1, ...]: the copies of each axis apart, then summed away
        split = [n for pair in zip(m, x.shape, strict=True) for n in pair]
        return grad.reshape(split).sum(axis=tuple(range(0, 2 * x.ndim, 2))).astype(grad.dtype)

    return compute


def _strided_key(ctx: KernelContext, begin: Any, end: Any, strides: Any) -> tuple[Any, ...]:
    b, e, s = _ints(begin), _ints(end), _ints(strides)
    if not len(b) == len(e) == len(s):
        raise ValueError(f"strided slice begin {b}, end {e} and strides {s} must have the same length")
    masks = {
        k: ctx.attr(k)
        for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    }
    key: list[Any] = []
    for i in range(len(b)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            key.append(None)
        elif masks["shrink_axis_mask"] & bit:
            key.append(b[i])
        elif s[i] == 0:
            raise ValueError("strided slice strides must be non-zero")
        else:
            start = None if masks["begin_mask"] & bit else b[i]
            stop = None if masks["end_mask"] & bit else e[i]
            key.append(builtins.slice(start, stop, s[i]))
    return tuple(key)


@register_kernel("DynamicStridedSlice")
def _dynamic_strided_slice(ctx: KernelContext) -> Compute:
    return lambda x, begin, end, strides: x[_strided_key(ctx, begin, end, strides)]


@register_kernel("DynamicStridedSliceGrad", aliasing=Aliasing.FRESH)
def _dynamic_strided_slice_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(grad: Any, x: Any, begin: Any, end: Any, strides: Any) -> Any:
        out = xp.zeros(x.shape, dtype=grad.dtype)
        out[_strided_key(ctx, begin, end, strides)] = grad
        return out

    return compute
