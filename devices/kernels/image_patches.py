"""Kernels of ExtractImagePatches and its gradient (graph/ops/image_patches.py), on the window
helpers of the convolutions: one strided view of every window, copied once into the patches'
layout; the gradient adds each window tap back into a padded buffer, one tap at a time."""

from __future__ import annotations

from typing import Any

from .registry import Aliasing, Compute, KernelContext, register_kernel
from .windows import Geometry, padded, patches, tap, unpadded


def _geometry(ctx: KernelContext) -> tuple[Geometry, int, int]:
    k = ctx.attr("ksizes")
    attrs = {"strides": ctx.attr("strides"), "dilations": ctx.attr("rates"), "padding": ctx.attr("padding")}
    return Geometry(attrs), k[1], k[2]


@register_kernel("ExtractImagePatches", aliasing=Aliasing.FRESH, expensive=True)
def _extract_image_patches(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    geometry, kh, kw = _geometry(ctx)

    def compute(images: Any) -> Any:
        n, h, w, c = images.shape
        win = geometry.window(h, w, kh, kw)
        view = patches(xp, padded(xp, images, win), win)  # (N, out_h, out_w, kh, kw, C)
        return xp.ascontiguousarray(view).reshape(n, win.out_h, win.out_w, kh * kw * c)

    return compute


@register_kernel("ExtractImagePatchesGrad", aliasing=Aliasing.FRESH, expensive=True)
def _extract_image_patches_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    geometry, kh, kw = _geometry(ctx)

    def compute(grad: Any, images: Any) -> Any:
        n, h, w, c = images.shape
        win = geometry.window(h, w, kh, kw)
        out = padded(xp, xp.zeros((n, h, w, c), dtype=grad.dtype), win)
        g = grad.reshape(n, win.out_h, win.out_w, kh, kw, c)
        for i in range(kh):
            for j in range(kw):
                tap(out, win, i, j)[...] += g[:, :, :, i, j]
        return xp.ascontiguousarray(unpadded(out, win, h, w))

    return compute
