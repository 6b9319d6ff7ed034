"""Kernels of Conv2D and its backprops: one GEMM per convolution over an im2col copy.

Forward: the (N*out_h*out_w, kh*kw*C) patch matrix (a strided view of the padded input, copied
once by the reshape) times the (kh*kw*C, O) filter. BackpropFilter: that patch matrix,
transposed, times out_backprop. BackpropInput: out_backprop times the filter transposed gives
each window's gradient, added back into the padded input one filter tap at a time (col2im).
NCHW runs through NHWC views. A 1x1 unit-stride unpadded convolution needs no patch copy.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.conv_geometry import Window

from .registry import Compute, KernelContext, register_kernel
from .windows import Geometry, from_nhwc, padded, patches, tap, to_nhwc, unpadded


def _window(ctx: KernelContext, geo: Geometry, h: int, w: int, kh: int, kw: int) -> Window:
    win = geo.window(h, w, kh, kw)
    if win.out_h <= 0 or win.out_w <= 0:
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"a {kh}x{kw} filter does not fit in the {h}x{w} input with padding {geo.attrs['padding']}",
        )
    return win


def _check_depth(ctx: KernelContext, x_shape: tuple[int, ...], f_shape: tuple[int, ...]) -> None:
    if x_shape[3] != f_shape[2]:
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"input of shape {tuple(x_shape)} (NHWC) has {x_shape[3]} channels but the filter of shape "
            f"{tuple(f_shape)} expects {f_shape[2]}",
        )


def _pointwise(win: Window) -> bool:
    return win.kh == win.kw == win.sh == win.sw == 1 and not win.padded


def im2col(xp: Any, x: Any, win: Window) -> Any:
    """The (N*out_h*out_w, kh*kw*C) patch matrix of NHWC ``x`` (a view when 1x1 and unit-stride)."""
    n, c = x.shape[0], x.shape[3]
    if _pointwise(win):
        return x.reshape(n * win.out_h * win.out_w, c)
    cols = patches(xp, padded(xp, x, win), win)
    return cols.reshape(n * win.out_h * win.out_w, win.kh * win.kw * c)


def col2im(xp: Any, cols: Any, win: Window, n: int, h: int, w: int, c: int) -> Any:
    """The NHWC input gradient from the per-window gradients ``cols`` (N*out_h*out_w, kh*kw*C)."""
    if _pointwise(win):
        return cols.reshape(n, h, w, c)
    (top, bottom), (left, right) = win.pads
    dxp = xp.zeros((n, h + top + bottom, w + left + right, c), dtype=cols.dtype)
    per_tap = cols.reshape(n, win.out_h, win.out_w, win.kh, win.kw, c)
    for i in range(win.kh):
        for j in range(win.kw):
            tap(dxp, win, i, j)[...] += per_tap[:, :, :, i, j, :]
    return unpadded(dxp, win, h, w)


@register_kernel("Conv2D", expensive=True)
def _conv2d(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)
    fmt = geo.data_format

    def compute(x: Any, f: Any) -> Any:
        x = to_nhwc(x, fmt)
        _check_depth(ctx, x.shape, f.shape)
        kh, kw, c, o = f.shape
        win = _window(ctx, geo, x.shape[1], x.shape[2], kh, kw)
        y = xp.matmul(im2col(xp, x, win), f.reshape(kh * kw * c, o))
        return from_nhwc(xp, y.reshape(x.shape[0], win.out_h, win.out_w, o), fmt)

    return compute


@register_kernel("Conv2DBackpropInput", expensive=True)
def _conv2d_backprop_input(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)
    fmt = geo.data_format

    def compute(sizes: Any, f: Any, dy: Any) -> Any:
        n, h, w, c = geo.nhwc_sizes(sizes)
        kh, kw, _, o = f.shape
        _check_depth(ctx, (n, h, w, c), f.shape)
        win = _window(ctx, geo, h, w, kh, kw)
        dy = to_nhwc(dy, fmt)
        if dy.shape != (n, win.out_h, win.out_w, o):
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"out_backprop of shape {tuple(dy.shape)} (NHWC) does not match input size {(n, h, w, c)} and "
                f"filter {tuple(f.shape)}, which give {(n, win.out_h, win.out_w, o)}",
            )
        cols = xp.matmul(dy.reshape(-1, o), f.reshape(kh * kw * c, o).T)
        return from_nhwc(xp, col2im(xp, cols, win, n, h, w, c), fmt)

    return compute


@register_kernel("Conv2DBackpropFilter", expensive=True)
def _conv2d_backprop_filter(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)
    fmt = geo.data_format

    def compute(x: Any, sizes: Any, dy: Any) -> Any:
        kh, kw, c, o = (int(v) for v in (sizes.tolist() if hasattr(sizes, "tolist") else sizes))
        x = to_nhwc(x, fmt)
        _check_depth(ctx, x.shape, (kh, kw, c, o))
        win = _window(ctx, geo, x.shape[1], x.shape[2], kh, kw)
        dy = to_nhwc(dy, fmt)
        if dy.shape != (x.shape[0], win.out_h, win.out_w, o):
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"out_backprop of shape {tuple(dy.shape)} (NHWC) does not match input {tuple(x.shape)} and "
                f"filter size {(kh, kw, c, o)}, which give {(x.shape[0], win.out_h, win.out_w, o)}",
            )
        df = xp.matmul(im2col(xp, x, win).T, dy.reshape(-1, o))
        return df.reshape(kh, kw, c, o)

    return compute
