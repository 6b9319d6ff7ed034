"""Kernels of the image resize ops and their gradients.

Resizing is separable: each output row (column) reads at most two input rows (columns), so a
resize is ``Wy @ image @ Wx^T`` per image and channel, with ``Wy`` [out_h, in_h] holding the
interpolation weights, and its gradient the same product with the transposed matrices. The
weights follow TF's kernels: positions and weights in float32 (scale ``in / out``, or
``(in - 1) / (out - 1)`` with align_corners), the lower source index clamped at 0, the upper at
``in - 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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


@register_kernel("ResizeBilinear", aliasing=Aliasing.FRESH, expensive=True)
def _resize_bilinear(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    out_h, out_w = ctx.attr("size")
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(images: Any) -> Any:
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
    out_h, out_w = ctx.attr("size")
    ac, hp = ctx.attr("align_corners"), ctx.attr("half_pixel_centers")

    def compute(images: Any) -> Any:
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
