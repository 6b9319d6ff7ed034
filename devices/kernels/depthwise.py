"""Kernels of DepthwiseConv2dNative and its backprops, one filter tap at a time.

Filter (kh, kw, C, M): output channel ``c * M + m`` is input channel c convolved with filter
[:, :, c, m]. Each tap is a broadcast multiply over (N, out_h, out_w, C, M); the kh*kw loop is
over taps, never pixels.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from .registry import Compute, KernelContext, register_kernel
from .windows import Geometry, from_nhwc, padded, tap, to_nhwc, unpadded


def _checked(ctx: KernelContext, geo: Geometry, x_shape: tuple[int, ...], f_shape: tuple[int, ...]) -> Any:
    _, h, w, c = x_shape
    kh, kw, fc, _ = f_shape
    if c != fc:
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"input of shape {tuple(x_shape)} (NHWC) has {c} channels but the filter of shape "
            f"{tuple(f_shape)} expects {fc}",
        )
    win = geo.window(h, w, kh, kw)
    if win.out_h <= 0 or win.out_w <= 0:
        raise InvalidArgumentError(None, ctx.op, f"a {kh}x{kw} filter does not fit in the {h}x{w} input")
    return win


@register_kernel("DepthwiseConv2dNative", expensive=True)
def _depthwise(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(x: Any, f: Any) -> Any:
        x = to_nhwc(x, geo.data_format)
        win = _checked(ctx, geo, x.shape, f.shape)
        kh, kw, c, m = f.shape
        xpad = padded(xp, x, win)
        out = xp.zeros((x.shape[0], win.out_h, win.out_w, c, m), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                out += tap(xpad, win, i, j)[..., None] * f[i, j]
        return from_nhwc(xp, out.reshape(x.shape[0], win.out_h, win.out_w, c * m), geo.data_format)

    return compute


@register_kernel("DepthwiseConv2dNativeBackpropInput", expensive=True)
def _depthwise_backprop_input(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(sizes: Any, f: Any, dy: Any) -> Any:
        n, h, w, c = geo.nhwc_sizes(sizes)
        win = _checked(ctx, geo, (n, h, w, c), f.shape)
        kh, kw, _, m = f.shape
        g = to_nhwc(dy, geo.data_format).reshape(n, win.out_h, win.out_w, c, m)
        (top, bottom), (left, right) = win.pads
        dxp = xp.zeros((n, h + top + bottom, w + left + right, c), dtype=dy.dtype)
        for i in range(kh):
            for j in range(kw):
                tap(dxp, win, i, j)[...] += (g * f[i, j]).sum(axis=-1)
        return from_nhwc(xp, unpadded(dxp, win, h, w), geo.data_format)

    return compute


@register_kernel("DepthwiseConv2dNativeBackpropFilter", expensive=True)
def _depthwise_backprop_filter(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(x: Any, sizes: Any, dy: Any) -> Any:
        kh, kw, c, m = (int(v) for v in (sizes.tolist() if hasattr(sizes, "tolist") else sizes))
        x = to_nhwc(x, geo.data_format)
        win = _checked(ctx, geo, x.shape, (kh, kw, c, m))
        g = to_nhwc(dy, geo.data_format).reshape(x.shape[0], win.out_h, win.out_w, c, m)
        xpad = padded(xp, x, win)
        df = xp.empty((kh, kw, c, m), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                df[i, j] = xp.einsum("nhwc,nhwcm->cm", tap(xpad, win, i, j), g)
        return df

    return compute
