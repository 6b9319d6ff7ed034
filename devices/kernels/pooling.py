"""Kernels of MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad: windowed reductions one window
tap at a time (kh*kw passes over (N, out_h, out_w, C) views, reduced in place, no temporaries of
window size).

MaxPoolGrad routes each output's gradient to the first maximum of its window in row-major order,
as TF's CPU kernel does on ties; SAME padding never wins (it is -inf). AvgPool divides by the
number of real input elements under each window, so padding is not counted, as TF.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.conv_geometry import Window

from .elementwise import run_parts, threads
from .registry import Compute, KernelContext, register_kernel
from .windows import Geometry, covered, from_nhwc, padded, tap, to_nhwc, unpadded


def _window(ctx: KernelContext, geo: Geometry, h: int, w: int) -> Window:
    ksize = geo.attrs["ksize"]
    ah, aw, _ = geo.axes
    win = geo.window(h, w, ksize[ah], ksize[aw])
    if win.out_h <= 0 or win.out_w <= 0:
        raise InvalidArgumentError(
            None, ctx.op, f"a {win.kh}x{win.kw} window does not fit in the {h}x{w} input with padding VALID"
        )
    return win


def _taps(win: Window) -> list[tuple[int, int]]:
    return [(i, j) for i in range(win.kh) for j in range(win.kw)]


def _tiles(win: Window, h: int, w: int) -> bool:
    """Whether the windows are disjoint, unpadded and cover the input exactly: each input
    element is then under exactly one window's tap."""
    return (
        win.kh == win.sh
        and win.kw == win.sw
        and not win.padded
        and h == win.out_h * win.kh
        and w == win.out_w * win.kw
    )


# Elements of input from which MaxPool and MaxPoolGrad run slices of the batch on the intra-op
# pool (about half a millisecond of passes over them on one core).
_PARALLEL_ELEMENTS = 1 << 19
# Input bytes per slice of the batch: a slice's taps, masks and outputs then stay in cache between
# passes. Against halves of the batch, on the MNIST CNN's pools (64x28x28x32 and 64x14x14x64, 2x2)
# slices of 8-16 images took MaxPoolGrad 3.15 -> 2.8-3.0 ms and 1.51 -> 1.27-1.33 ms, MaxPool
# 1.00 -> 0.93 ms and 0.43 -> 0.37-0.40 ms (CPU time, one thread, best of 30).
_SLICE_BYTES = 1 << 20


def _by_images(xp: Any, n: int, size: int, image_bytes: int, part: Callable[[int, int], None]) -> None:
    """``part(a, b)`` over slices of images covering [0, n), of about ``_SLICE_BYTES`` of input
    each; on the intra-op pool when ``size`` (elements) is large. A GPU takes the whole batch."""
    per = n if xp is not np else max(1, _SLICE_BYTES // max(1, image_bytes))
    slices = [functools.partial(part, a, min(n, a + per)) for a in range(0, n, per)]
    if len(slices) > 1 and size >= _PARALLEL_ELEMENTS and threads() > 1:
        run_parts(slices)
        return
    for task in slices:
        task()


def _max_pool_into(xp: Any, x: Any, win: Window, out: Any) -> None:
    """MaxPool of ``x`` (NHWC; padded with -inf where windows overhang) into ``out``, a pass per tap.
    Even disjoint windows go tap by tap: numpy's ``max`` over the window axes of a reshaped view
    took 4.2 ms on the MNIST CNN's first pool (64x28x28x32, 2x2 stride 2) where the taps took 1.1."""
    taps = _taps(win)
    if len(taps) == 1:
        out[...] = tap(x, win, *taps[0])
        return
    xp.maximum(tap(x, win, *taps[0]), tap(x, win, *taps[1]), out=out)
    for i, j in taps[2:]:
        xp.maximum(out, tap(x, win, i, j), out=out)


def _max_pool_grad_into(xp: Any, xpad: Any, y: Any, dy: Any, win: Window, tiles: bool, dxp: Any) -> None:
    """MaxPoolGrad into ``dxp`` (padded like ``xpad``; zeros unless ``tiles``, whose windows
    write each element once). ``open_`` marks the windows whose maximum no earlier tap took:
    ties go to the first; as a hit is always open, ``open_ ^= hit`` clears it without a
    temporary."""
    open_ = xp.ones(y.shape, dtype=bool)
    hit = xp.empty(y.shape, dtype=bool)
    taps = _taps(win)
    for t, (i, j) in enumerate(taps):
        xp.equal(tap(xpad, win, i, j), y, out=hit)
        hit &= open_
        if tiles:
            xp.multiply(dy, hit, out=tap(dxp, win, i, j))
        else:
            tap(dxp, win, i, j)[...] += dy * hit
        if t + 1 < len(taps):
            open_ ^= hit


@register_kernel("MaxPool", expensive=True)
def _max_pool(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(x: Any) -> Any:
        x = to_nhwc(x, geo.data_format)
        n, h, w, c = x.shape
        win = _window(ctx, geo, h, w)
        tiles = _tiles(win, h, w)
        xpad = x if tiles else padded(xp, x, win, -np.inf)
        out = xp.empty((n, win.out_h, win.out_w, c), dtype=x.dtype)

        def part(a: int, b: int) -> None:
            _max_pool_into(xp, xpad[a:b], win, out[a:b])

        _by_images(xp, n, x.size, x[0].nbytes, part)
        return from_nhwc(xp, out, geo.data_format)

    return compute


@register_kernel("MaxPoolGrad", expensive=True)
def _max_pool_grad(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(x: Any, y: Any, dy: Any) -> Any:
        fmt = geo.data_format
        x, y, dy = to_nhwc(x, fmt), to_nhwc(y, fmt), to_nhwc(dy, fmt)
        n, h, w, c = x.shape
        win = _window(ctx, geo, h, w)
        if y.shape != dy.shape or y.shape != (n, win.out_h, win.out_w, c):
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"orig_output {tuple(y.shape)} and grad {tuple(dy.shape)} must both have the pooled shape "
                f"{(n, win.out_h, win.out_w, c)} of orig_input {tuple(x.shape)} (NHWC)",
            )
        xpad = padded(xp, x, win, -np.inf)
        tiles = _tiles(win, h, w)
        # Tiles write each input element once, so no zeroing and no adds (6.2 -> 3.7 ms measured on
        # the MNIST CNN's first pool, 64x28x28x32, 2x2).
        dxp = xp.empty(xpad.shape, dtype=dy.dtype) if tiles else xp.zeros(xpad.shape, dtype=dy.dtype)

        def part(a: int, b: int) -> None:
            _max_pool_grad_into(xp, xpad[a:b], y[a:b], dy[a:b], win, tiles, dxp[a:b])

        _by_images(xp, n, x.size, x[0].nbytes, part)
        return from_nhwc(xp, unpadded(dxp, win, h, w), fmt)

    return compute


@register_kernel("MaxPoolGradGrad", expensive=True)
def _max_pool_grad_grad(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(x: Any, y: Any, g: Any) -> Any:
        fmt = geo.data_format
        x, y, g = to_nhwc(x, fmt), to_nhwc(y, fmt), to_nhwc(g, fmt)
        n, h, w, c = x.shape
        win = _window(ctx, geo, h, w)
        if g.shape != x.shape or y.shape != (n, win.out_h, win.out_w, c):
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"grad {tuple(g.shape)} must have orig_input's shape {tuple(x.shape)} and orig_output "
                f"{tuple(y.shape)} the pooled shape {(n, win.out_h, win.out_w, c)} (NHWC)",
            )
        xpad, gpad = padded(xp, x, win, -np.inf), padded(xp, g, win)
        out = xp.zeros(y.shape, dtype=g.dtype)
        open_ = xp.ones(y.shape, dtype=bool)  # as MaxPoolGrad: the first maximum of each window
        for i, j in _taps(win):
            hit = tap(xpad, win, i, j) == y
            hit &= open_
            out += tap(gpad, win, i, j) * hit
            open_ &= ~hit
        return from_nhwc(xp, out, fmt)

    return compute


def _counts(xp: Any, win: Window, h: int, w: int, dtype: Any) -> Any:
    """(out_h, out_w, 1) number of real input elements under each window."""
    ch = covered(h, win.out_h, win.kh, win.sh, win.pads[0][0])
    cw = covered(w, win.out_w, win.kw, win.sw, win.pads[1][0])
    return xp.asarray((ch[:, None] * cw[None, :])[:, :, None].astype(dtype))


@register_kernel("AvgPool", expensive=True)
def _avg_pool(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)
    counts: dict[tuple[int, int, Any], Any] = {}

    def compute(x: Any) -> Any:
        x = to_nhwc(x, geo.data_format)
        _, h, w, _ = x.shape
        win = _window(ctx, geo, h, w)
        key = (h, w, x.dtype)
        if key not in counts:
            counts[key] = _counts(xp, win, h, w, x.dtype)
        xpad = padded(xp, x, win)
        taps = _taps(win)
        out = tap(xpad, win, *taps[0]).copy()
        for i, j in taps[1:]:
            out += tap(xpad, win, i, j)
        out /= counts[key]
        return from_nhwc(xp, out, geo.data_format)

    return compute


@register_kernel("AvgPoolGrad", expensive=True)
def _avg_pool_grad(ctx: KernelContext) -> Compute:
    xp, geo = ctx.xp, Geometry(ctx.op.attrs)

    def compute(sizes: Any, dy: Any) -> Any:
        n, h, w, c = geo.nhwc_sizes(sizes)
        win = _window(ctx, geo, h, w)
        g = to_nhwc(dy, geo.data_format)
        if g.shape != (n, win.out_h, win.out_w, c):
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"grad of shape {tuple(g.shape)} (NHWC) must have the pooled shape {(n, win.out_h, win.out_w, c)} "
                f"of orig_input_shape {(n, h, w, c)}",
            )
        g = g / _counts(xp, win, h, w, g.dtype)
        (top, bottom), (left, right) = win.pads
        dxp = xp.zeros((n, h + top + bottom, w + left + right, c), dtype=g.dtype)
        for i, j in _taps(win):
            tap(dxp, win, i, j)[...] += g
        return from_nhwc(xp, unpadded(dxp, win, h, w), geo.data_format)

    return compute
