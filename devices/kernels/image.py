"""Kernels of the image resize ops and their gradients.

Resizing is separable: each output row (column) reads a few input rows (columns): two for
bilinear, four for bicubic, those it covers for area. So a resize is ``Wy @ image @ Wx^T`` per
image and channel, with ``Wy`` [out_h, in_h] holding the interpolation weights, and its gradient
the same product with the transposed matrices. The
weights follow TF's kernels: positions and weights in float32 (scale ``in / out``, or
``(in - 1) / (out - 1)`` with align_corners), the lower source index clamped at 0, the upper at
``in - 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .printing import to_host
from .registry import Aliasing, Compute, KernelContext, register_kernel


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def bilinear_weights(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """[out_size, in_size] float32 matrix of TF's bilinear interpolation weights."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    src = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else i * scale
    low = np.floor(src)
    lerp = (src - low).astype(np.float32)
    lower = np.maximum(low, 0).astype(np.int64)
    upper = np.minimum(np.ceil(src), in_size - 1).astype(np.int64)
    w = np.zeros((out_size, in_size), np.float32)
    rows = np.arange(out_size)
    np.add.at(w, (rows, lower), np.float32(1) - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """The source index of each of ``out_size`` positions, as TF's nearest-neighbour kernel picks it."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    src = (i + np.float32(0.5)) * scale if half_pixel else i * scale
    # roundf rounds halves away from zero; positions are never negative here
    idx = np.floor(src + np.float32(0.5)) if align_corners else np.floor(src)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0)


def _apply(xp: Any, images: Any, wy: Any, wx: Any) -> Any:
    # out[n, y, x, c] = sum_h sum_w wy[y, h] images[n, h, w, c] wx[x, w]
    rows = xp.einsum("yh,nhwc->nywc", wy, images)
    return xp.einsum("nywc,xw->nyxc", rows, wx)


def out_size(ctx: KernelContext, size: Any) -> tuple[int, int]:
    """The output [height, width]: the size input when the op has one (computed at run time), else
    its ``size`` attr."""
    if size is None:
        return ctx.attr("size")
    hw = [int(v) for v in to_host(size).reshape(-1)]
    if len(hw) != 2 or min(hw) <= 0:
        raise ValueError(f"size must be two positive ints [new_height, new_width], got {hw}")
    return hw[0], hw[1]


@register_kernel("ResizeBilinear", aliasing=Aliasing.FRESH, expensive=True)
def _resize_bilinear(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(images: Any, size: Any = None) -> Any:
        out_h, out_w = out_size(ctx, size)
        _, h, w, _ = images.shape
        wy = xp.asarray(bilinear_weights(h, out_h, ac, hp))
        wx = xp.asarray(bilinear_weights(w, out_w, ac, hp))
        return _apply(xp, images.astype(np.float32), wy, wx)

    return compute


@register_kernel("ResizeBilinearGrad", aliasing=Aliasing.FRESH, expensive=True)
def _resize_bilinear_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(grads: Any, original: Any) -> Any:
        _, out_h, out_w, _ = grads.shape
        _, h, w, _ = original.shape
        wy = xp.asarray(bilinear_weights(h, out_h, ac, hp))
        wx = xp.asarray(bilinear_weights(w, out_w, ac, hp))
        return _apply(xp, grads.astype(np.float32), wy.T, wx.T).astype(original.dtype)

    return compute


@register_kernel("ResizeNearestNeighbor", aliasing=Aliasing.FRESH, expensive=True)
def _resize_nearest(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(images: Any, size: Any = None) -> Any:
        out_h, out_w = out_size(ctx, size)
        _, h, w, _ = images.shape
        iy = xp.asarray(nearest_indices(h, out_h, ac, hp))
        ix = xp.asarray(nearest_indices(w, out_w, ac, hp))
        return images[:, iy][:, :, ix]

    return compute


@register_kernel("ResizeNearestNeighborGrad", aliasing=Aliasing.FRESH, expensive=True)
def _resize_nearest_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    h, w = ctx.attr("size")
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(grads: Any) -> Any:
        _, out_h, out_w, _ = grads.shape
        # one-hot selection matrices: each output position adds its gradient to its source pixel
        wy = np.zeros((out_h, h), grads.dtype)
        wy[np.arange(out_h), nearest_indices(h, out_h, ac, hp)] = 1
        wx = np.zeros((out_w, w), grads.dtype)
        wx[np.arange(out_w), nearest_indices(w, out_w, ac, hp)] = 1
        return _apply(xp, grads, xp.asarray(wy.T), xp.asarray(wx.T))

    return compute


#: TF's bicubic kernels read their weights from a table of the cubic at 1/1024 steps of the
#: fractional position (so a position's weights are those of its nearest step).
_CUBIC_STEPS = 1024


def _cubic_table(a: float) -> np.ndarray:
    """[steps + 1, 2] float32: column 0 the inner tap's weight at x = i / steps, column 1 the outer
    tap's at x + 1 (Keys' cubic convolution kernel with parameter ``a``)."""
    x = np.arange(_CUBIC_STEPS + 1, dtype=np.float32) / np.float32(_CUBIC_STEPS)
    a32 = np.float32(a)
    inner = ((a32 + 2) * x - (a32 + 3)) * x * x + 1
    y = x + 1
    outer = ((a32 * y - 5 * a32) * y + 8 * a32) * y - 4 * a32
    return np.stack([inner, outer], axis=1).astype(np.float32)


def bicubic_weights(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """[out_size, in_size] float32 matrix of TF's bicubic weights: four taps around each position,
    clamped into the image (legacy, a = -0.75), or dropped outside it with the rest renormalised
    (half-pixel centres, a = -0.5)."""
    table = _cubic_table(-0.5 if half_pixel else -0.75)
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    src = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else i * scale
    base = np.floor(src)
    step = np.rint((src - base) * np.float32(_CUBIC_STEPS)).astype(np.int64)
    base = base.astype(np.int64)
    taps = np.stack([base - 1, base, base + 1, base + 2], axis=1)
    weights = np.stack(
        [table[step, 1], table[step, 0], table[_CUBIC_STEPS - step, 0], table[_CUBIC_STEPS - step, 1]], axis=1
    )
    inside = (taps >= 0) & (taps < in_size)
    if half_pixel:
        weights = np.where(inside, weights, np.float32(0))
        weights = weights / weights.sum(axis=1, keepdims=True)
    w = np.zeros((out_size, in_size), np.float32)
    rows = np.repeat(np.arange(out_size), 4)
    np.add.at(w, (rows, np.clip(taps, 0, in_size - 1).reshape(-1)), weights.reshape(-1).astype(np.float32))
    return w


def area_weights(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    """[out_size, in_size] float32 matrix of TF's area resize: output cell ``i`` covers
    ``[i * scale, (i + 1) * scale)`` of the input; each input pixel weighs its overlap / scale."""
    scale = _scale(in_size, out_size, align_corners)
    w = np.zeros((out_size, in_size), np.float32)
    for i in range(out_size):
        lo, hi = np.float32(i) * scale, np.float32(i + 1) * scale
        for v in range(int(np.floor(lo)), int(np.ceil(hi))):
            overlap = min(np.float32(v + 1), hi) - max(np.float32(v), lo)
            w[i, min(v, in_size - 1)] += overlap / scale
    return w


def _separable_kernel(weights: Any, grad: bool) -> Any:
    """A resize (or its gradient) by per-axis weight matrices ``weights(in, out, ctx)``."""

    def factory(ctx: KernelContext) -> Compute:
        xp = ctx.xp

        def matrices(h: int, w: int, out_h: int, out_w: int) -> tuple[Any, Any]:
            return xp.asarray(weights(h, out_h, ctx)), xp.asarray(weights(w, out_w, ctx))

        def forward(images: Any, size: Any = None) -> Any:
            _, h, w, _ = images.shape
            wy, wx = matrices(h, w, *out_size(ctx, size))
            return _apply(xp, images.astype(np.float32), wy, wx)

        def backward(grads: Any, original: Any) -> Any:
            _, out_h, out_w, _ = grads.shape
            _, h, w, _ = original.shape
            wy, wx = matrices(h, w, out_h, out_w)
            return _apply(xp, grads.astype(np.float32), wy.T, wx.T).astype(original.dtype)

        return backward if grad else forward

    return factory


def _bicubic(in_size: int, out_size: int, ctx: KernelContext) -> np.ndarray:
    return bicubic_weights(in_size, out_size, ctx.attr("align_corners"), ctx.attr("half_pixel_centers"))


def _area(in_size: int, out_size: int, ctx: KernelContext) -> np.ndarray:
    return area_weights(in_size, out_size, ctx.attr("align_corners"))


register_kernel("ResizeBicubic", aliasing=Aliasing.FRESH, expensive=True)(_separable_kernel(_bicubic, False))
register_kernel("ResizeBicubicGrad", aliasing=Aliasing.FRESH, expensive=True)(
    _separable_kernel(_bicubic, True)
)
register_kernel("ResizeArea", aliasing=Aliasing.FRESH, expensive=True)(_separable_kernel(_area, False))
