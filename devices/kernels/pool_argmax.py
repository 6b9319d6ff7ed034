"""Kernels of MaxPoolWithArgmax and MaxPoolGradWithArgmax (graph/ops/pool_argmax.py), on the
pooling kernels' window helpers: every window as one view of the -inf-padded input, the first
maximum of each found by argmax over its taps, its flat index worked out from the tap."""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel
from .ufunc_at import ufunc_at
from .windows import Geometry, padded, patches


def _windows(ctx: KernelContext, geometry: Geometry, x: Any) -> tuple[Any, Any, Any]:
    """(maxima, flat indices without the batch, the batch offsets) of every window of ``x``."""
    xp = ctx.xp
    n, h, w, c = x.shape
    k = ctx.attr("ksize")
    win = geometry.window(h, w, k[1], k[2])
    view = patches(xp, padded(xp, x, win, fill=-np.inf), win)  # (N, oh, ow, kh, kw, C)
    taps = view.reshape(n, win.out_h, win.out_w, win.kh * win.kw, c)
    best = taps.argmax(axis=3)  # the first maximum, in row-major tap order
    values = xp.take_along_axis(taps, best[:, :, :, None, :], axis=3)[:, :, :, 0, :]
    oy = xp.arange(win.out_h)[None, :, None, None] * win.sh - win.pads[0][0]
    ox = xp.arange(win.out_w)[None, None, :, None] * win.sw - win.pads[1][0]
    y = oy + (best // win.kw) * win.dh
    x_ = ox + (best % win.kw) * win.dw
    flat = (y * w + x_) * c + xp.arange(c)[None, None, None, :]
    offsets = xp.arange(n)[:, None, None, None] * (h * w * c)
    return values, flat, offsets


@register_kernel("MaxPoolWithArgmax", aliasing=Aliasing.FRESH, expensive=True)
def _max_pool_with_argmax(ctx: KernelContext) -> Compute:
    geometry = Geometry({**ctx.op.attrs, "dilations": [1, 1, 1, 1]})
    with_batch = ctx.attr("include_batch_in_index")
    index_dtype = np.dtype(ctx.attr("Targmax").name)

    def compute(x: Any) -> tuple[Any, Any]:
        values, flat, offsets = _windows(ctx, geometry, x)
        index = flat + offsets if with_batch else flat
        return ctx.xp.ascontiguousarray(values), index.astype(index_dtype)

    return compute


@register_kernel("MaxPoolGradWithArgmax", aliasing=Aliasing.FRESH, expensive=True)
def _max_pool_grad_with_argmax(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    with_batch = ctx.attr("include_batch_in_index")

    def compute(x: Any, grad: Any, argmax: Any) -> Any:
        n, h, w, c = x.shape
        index = argmax.astype(np.int64)
        if not with_batch:  # the batch entry is the output's own
            index = index + xp.arange(n)[:, None, None, None] * (h * w * c)
        out = xp.zeros(n * h * w * c, dtype=grad.dtype)
        ufunc_at(xp, xp.add, out, index.reshape(-1), grad.reshape(-1))
        return out.reshape(x.shape)

    return compute
