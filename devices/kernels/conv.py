"""Kernels of Conv2D and its backprops: GEMMs over an im2col copy.

Forward: the (N*out_h*out_w, kh*kw*C) patch matrix (a strided view of the padded input, copied
by the reshape) times the (kh*kw*C, O) filter. BackpropFilter: that patch matrix, transposed,
times out_backprop. BackpropInput: out_backprop times the filter transposed gives each window's
gradient, added back into the padded input one filter tap at a time (col2im), or, with unit
strides and many input channels, the convolution of out_backprop by the flipped filter. On the
CPU each runs over slices of the batch (see ``_SLICE_BYTES``), on the intra-op pool's threads
when the work is large (``_PARALLEL_MACS``). NCHW runs through NHWC views. A 1x1 unit-stride
unpadded convolution needs no patch copy. With few elements per window row (kw*C, one input
channel's 5) the patch matrix is built transposed, a copy per tap along image rows, and the GEMMs
take its transposed view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.conv_geometry import Window

from .elementwise import run_parts
from .gemm import PARALLEL_MACS
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


# The patch matrix is built and multiplied a few images at a time, so that each slice stays in
# cache between its copy and its GEMM: on the MNIST CNN's second layer (64x14x14x32, 5x5x64) one
# 40 MB patch matrix took 25 ms (8 ms of it the copy), slices of about 2 MB 15 ms, the GEMM
# alone 13 ms (numpy, one OpenBLAS thread). A GPU takes the whole batch in one GEMM.
_SLICE_BYTES = 2 << 20
_TAP_GEMM_CHANNELS = 16
_NARROW_ROW = 16
# Multiply-adds from which a kernel's slices run on the intra-op pool (``run_parts``): a hand-off
# costs tens of microseconds, this much work about a millisecond of one core.
_PARALLEL_MACS = PARALLEL_MACS
# Partial filter gradients summed at the end: a fixed count, so that the sum's order, and so its
# rounding, does not depend on the threads.
_FILTER_GRAD_PARTS = 4

Task = Callable[[], None]


def _slices(xp: Any, n: int, row_bytes: int) -> list[tuple[int, int]]:
    """[start, stop) image ranges whose patch rows take about ``_SLICE_BYTES``."""
    step = n if xp is not np else max(1, _SLICE_BYTES // max(1, row_bytes))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def _run(tasks: list[Task], macs: int) -> None:
    if macs >= _PARALLEL_MACS:
        run_parts(tasks)
    else:
        for task in tasks:
            task()


def _cols(xp: Any, xpad: Any, win: Window, a: int, b: int) -> Any:
    """The patch matrix ((b - a) * out_h * out_w, kh*kw*C) of images [a, b) of the padded input."""
    return patches(xp, xpad[a:b], win).reshape(-1, win.kh * win.kw * xpad.shape[3])


def _narrow(win: Window, c: int) -> bool:
    """Whether a window row holds so few elements (kw*C) that the patch matrix is better built
    transposed (``_cols_t``): the patch view's copy runs over kw*C contiguous elements at a time."""
    return win.kw * c < _NARROW_ROW


def _cols_t(xp: Any, xpad: Any, win: Window, a: int, b: int) -> Any:
    """The transposed patch matrix (kh*kw*C, (b - a) * out_h * out_w) of images [a, b), one
    copy per filter tap and channel, each along image rows. On the MNIST CNN's first layer
    (64x28x28x1, 5x5) 0.85 ms against 2.8 ms for the patch view's copy (one core)."""
    c = xpad.shape[3]
    n = b - a
    out = xp.empty((win.kh, win.kw, c, n, win.out_h, win.out_w), dtype=xpad.dtype)
    for i in range(win.kh):
        for j in range(win.kw):
            out[i, j] = tap(xpad[a:b], win, i, j).transpose(3, 0, 1, 2)
    return out.reshape(win.kh * win.kw * c, n * win.out_h * win.out_w)


def conv_nhwc(xp: Any, x: Any, f: Any, win: Window) -> Any:
    """NHWC convolution of ``x`` by HWIO ``f``, one GEMM per slice of images."""
    n, c = x.shape[0], x.shape[3]
    o = f.shape[3]
    f2 = f.reshape(-1, o)
    if _pointwise(win):
        return xp.matmul(x.reshape(-1, c), f2).reshape(n, win.out_h, win.out_w, o)
    xpad = padded(xp, x, win)
    pix = win.out_h * win.out_w
    out = xp.empty((n * pix, o), dtype=x.dtype)

    narrow = _narrow(win, c)

    def part(a: int, b: int) -> Task:
        if narrow:
            return lambda: xp.matmul(_cols_t(xp, xpad, win, a, b).T, f2, out=out[a * pix : b * pix])
        return lambda: xp.matmul(_cols(xp, xpad, win, a, b), f2, out=out[a * pix : b * pix])

    slices = _slices(xp, n, pix * f2.shape[0] * x.itemsize)
    _run([part(a, b) for a, b in slices], n * pix * f2.size)
    return out.reshape(n, win.out_h, win.out_w, o)


def filter_grad_nhwc(xp: Any, x: Any, dy: Any, win: Window, fshape: tuple[int, ...]) -> Any:
    """The HWIO filter gradient: sum over slices of patch matrix transposed times out_backprop,
    in ``_FILTER_GRAD_PARTS`` partial sums over runs of slices."""
    n, o = x.shape[0], dy.shape[3]
    dy2 = dy.reshape(-1, o)
    if _pointwise(win):
        return xp.matmul(x.reshape(-1, x.shape[3]).T, dy2).reshape(fshape)
    xpad = padded(xp, x, win)
    pix = win.out_h * win.out_w
    slices = _slices(xp, n, pix * win.kh * win.kw * x.shape[3] * x.itemsize)
    runs = [slices[k::_FILTER_GRAD_PARTS] for k in range(min(_FILTER_GRAD_PARTS, len(slices)))]
    sums: list[Any] = [None] * len(runs)
    narrow = _narrow(win, x.shape[3])

    def part(k: int) -> Task:
        def work() -> None:
            total = None
            for a, b in runs[k]:
                cols_t = _cols_t(xp, xpad, win, a, b) if narrow else _cols(xp, xpad, win, a, b).T
                df = xp.matmul(cols_t, dy2[a * pix : b * pix])
                total = df if total is None else xp.add(total, df, out=total)
            sums[k] = total

        return work

    _run([part(k) for k in range(len(runs))], n * pix * win.kh * win.kw * x.shape[3] * o)
    df = sums[0]
    for more in sums[1:]:
        df += more
    return df.reshape(fshape)


def _transposed_window(win: Window, h: int, w: int) -> Window | None:
    """For a unit-stride window, the window of the convolution of out_backprop by the spatially
    flipped filter (input and output channels swapped) that gives the input gradient; None when
    the op's padding exceeds the filter's extent (no such padding exists)."""
    if win.sh != 1 or win.sw != 1:
        return None
    (top, _), (left, _) = win.pads
    pt, pl = (win.kh - 1) * win.dh - top, (win.kw - 1) * win.dw - left
    pb = h + (win.kh - 1) * win.dh - pt - win.out_h
    pr = w + (win.kw - 1) * win.dw - pl - win.out_w
    if min(pt, pl, pb, pr) < 0:
        return None
    return Window(win.kh, win.kw, 1, 1, win.dh, win.dw, h, w, ((pt, pb), (pl, pr)))


def input_grad_nhwc(xp: Any, dy: Any, f: Any, win: Window, n: int, h: int, w: int) -> Any:
    """The NHWC input gradient. With many input channels and unit strides, a convolution of
    out_backprop by the flipped filter: on the CNN's second layer (C = 32) 18-19 ms against 22-23
    ms for col2im (one OpenBLAS thread, CPU time). Otherwise col2im: each window's gradient
    (out_backprop times the filter transposed) added back into the padded input one filter tap
    at a time, a slice of images at a time; with many channels a GEMM per tap writes each tap's
    (pixels, C) block contiguously, so its add runs over whole rows (21-23 ms against 23-27 ms for
    one GEMM and strided adds on that layer); with one channel (its first layer) the one GEMM
    took 4-6 ms against 6-12 ms (numpy, one OpenBLAS thread, a loaded machine)."""
    kh, kw, c, o = f.shape
    if _pointwise(win):
        return xp.matmul(dy.reshape(-1, o), f.reshape(-1, o).T).reshape(n, h, w, c)
    per_tap = c >= _TAP_GEMM_CHANNELS
    flipped = _transposed_window(win, h, w) if per_tap else None
    if flipped is not None:
        g = xp.ascontiguousarray(f[::-1, ::-1].transpose(0, 1, 3, 2))
        return conv_nhwc(xp, dy, g, flipped)
    (top, bottom), (left, right) = win.pads
    dxp = xp.zeros((n, h + top + bottom, w + left + right, c), dtype=dy.dtype)
    pix = win.out_h * win.out_w
    ft = xp.ascontiguousarray(f.transpose(0, 1, 3, 2)) if per_tap else f.reshape(-1, o).T

    def part(a: int, b: int) -> Task:
        def work() -> None:
            dy2, dst = dy[a:b].reshape(-1, o), dxp[a:b]
            cols = None if per_tap else xp.matmul(dy2, ft).reshape(b - a, win.out_h, win.out_w, kh, kw, c)
            for i in range(kh):
                for j in range(kw):
                    if cols is None:
                        tap(dst, win, i, j)[...] += xp.matmul(dy2, ft[i, j]).reshape(
                            b - a, win.out_h, win.out_w, c
                        )
                    else:
                        tap(dst, win, i, j)[...] += cols[:, :, :, i, j, :]

        return work

    # slices write disjoint images of ``dxp``
    slices = _slices(xp, n, pix * kh * kw * c * dy.itemsize)
    _run([part(a, b) for a, b in slices], n * pix * kh * kw * c * o)
    return unpadded(dxp, win, h, w)


@register_kernel("Conv2D", expensive=True)
def _conv2d(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)
    fmt = geo.data_format

    def compute(x: Any, f: Any) -> Any:
        x = to_nhwc(x, fmt)
        _check_depth(ctx, x.shape, f.shape)
        win = _window(ctx, geo, x.shape[1], x.shape[2], f.shape[0], f.shape[1])
        return from_nhwc(xp, conv_nhwc(xp, x, f, win), fmt)

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
        return from_nhwc(xp, input_grad_nhwc(xp, dy, f, win, n, h, w), fmt)

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
        return filter_grad_nhwc(xp, x, dy, win, (kh, kw, c, o))

    return compute
