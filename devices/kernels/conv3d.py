"""Kernels of the 3-D convolution and pooling ops (graph/ops/conv3d.py), on NDHWC arrays of any
array module: a GEMM per slice of the batch over an im2col copy (a strided view of the padded
input, copied by its reshape), col2im one filter tap at a time for the input gradient, and
pooling as one pass per window tap over (N, od, oh, ow, C) views. NCDHW runs through NDHWC views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.conv3d import spatial_axes_3d, window_3d

from .registry import Compute, KernelContext, register_kernel
from .windows import covered

# (window, stride, dilation, output size, pad before, pad after) per spatial axis
Geo = tuple[tuple[int, int, int, int, int, int], ...]

# Patch-matrix bytes per slice of the batch: the copy and its GEMM stay in cache together.
_SLICE_BYTES = 4 << 20


def _to_ndhwc(x: Any, fmt: str) -> Any:
    return x if fmt == "NDHWC" else x.transpose(0, 2, 3, 4, 1)


def _from_ndhwc(xp: Any, y: Any, fmt: str) -> Any:
    return xp.ascontiguousarray(y if fmt == "NDHWC" else y.transpose(0, 4, 1, 2, 3))


def _sizes(values: Any) -> list[int]:
    return [int(v) for v in (values.tolist() if hasattr(values, "tolist") else values)]


def _geometry(ctx: KernelContext, shape: tuple[int, ...], window: tuple[int, int, int]) -> Geo:
    geo = window_3d(ctx.op.attrs, (shape[1], shape[2], shape[3]), window)
    if any(g[3] <= 0 for g in geo):
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"a {'x'.join(map(str, window))} window does not fit in the {'x'.join(map(str, shape[1:4]))} input "
            f"with padding {ctx.op.attrs['padding']}",
        )
    return geo


def _padded_shape(shape: tuple[int, ...], geo: Geo) -> tuple[int, ...]:
    """The NDHWC ``shape`` with the window's padding added to its spatial sizes."""
    return (shape[0], *(size + g[4] + g[5] for size, g in zip(shape[1:4], geo, strict=True)), shape[4])


def _out_shape(shape: tuple[int, ...], geo: Geo, channels: int) -> tuple[int, ...]:
    """The NDHWC output shape of a window op over an input of ``shape``."""
    return (shape[0], *(g[3] for g in geo), channels)


def _padded(xp: Any, x: Any, geo: Geo, fill: float = 0.0) -> Any:
    if not any(g[4] or g[5] for g in geo):
        return x
    out = xp.full(_padded_shape(x.shape, geo), fill, dtype=x.dtype)
    out[:, geo[0][4] :, geo[1][4] :, geo[2][4] :][:, : x.shape[1], : x.shape[2], : x.shape[3]] = x
    return out


def _unpadded(xpad: Any, geo: Geo, sizes: tuple[int, int, int]) -> Any:
    return xpad[
        :,
        geo[0][4] : geo[0][4] + sizes[0],
        geo[1][4] : geo[1][4] + sizes[1],
        geo[2][4] : geo[2][4] + sizes[2],
    ]


def _taps(geo: Geo) -> list[tuple[int, int, int]]:
    return [(i, j, k) for i in range(geo[0][0]) for j in range(geo[1][0]) for k in range(geo[2][0])]


def _tap(xpad: Any, geo: Geo, t: tuple[int, int, int]) -> Any:
    """The (N, od, oh, ow, C) view of window tap ``t`` of every window of the padded input."""
    index: list[slice] = [slice(None)]
    for i, (_, s, d, o, _, _) in zip(t, geo, strict=True):
        index.append(slice(i * d, i * d + (o - 1) * s + 1, s))
    return xpad[tuple(index)]


def _patches(xp: Any, xpad: Any, geo: Geo) -> Any:
    """The (N, od, oh, ow, kd, kh, kw, C) strided view of every window of the padded input."""
    sn, sd, sh, sw, sc = xpad.strides
    shape = (xpad.shape[0], *(g[3] for g in geo), *(g[0] for g in geo), xpad.shape[4])
    steps = (sd, sh, sw)
    strides = (
        sn,
        *(st * g[1] for st, g in zip(steps, geo, strict=True)),
        *(st * g[2] for st, g in zip(steps, geo, strict=True)),
        sc,
    )
    return xp.lib.stride_tricks.as_strided(xpad, shape, strides)


def _slices(xp: Any, n: int, row_bytes: int) -> list[tuple[int, int]]:
    step = n if xp is not np else max(1, _SLICE_BYTES // max(1, row_bytes))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def _check_depth(ctx: KernelContext, x_shape: tuple[int, ...], f_shape: tuple[int, ...]) -> None:
    if x_shape[4] != f_shape[3]:
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"input of shape {tuple(x_shape)} (NDHWC) has {x_shape[4]} channels but the filter of shape "
            f"{tuple(f_shape)} expects {f_shape[3]}",
        )


def _check_out(ctx: KernelContext, dy: Any, want: tuple[int, ...], what: str) -> None:
    if tuple(dy.shape) != want:
        raise InvalidArgumentError(
            None,
            ctx.op,
            f"out_backprop of shape {tuple(dy.shape)} (NDHWC) does not match {what}, which give {want}",
        )


def conv3d(xp: Any, x: Any, f: Any, geo: Geo) -> Any:
    n, o = x.shape[0], f.shape[4]
    f2 = f.reshape(-1, o)
    xpad = _padded(xp, x, geo)
    pix = geo[0][3] * geo[1][3] * geo[2][3]
    out = xp.empty((n * pix, o), dtype=x.dtype)
    for a, b in _slices(xp, n, pix * f2.shape[0] * x.itemsize):
        cols = _patches(xp, xpad[a:b], geo).reshape(-1, f2.shape[0])
        xp.matmul(cols, f2, out=out[a * pix : b * pix])
    return out.reshape(n, geo[0][3], geo[1][3], geo[2][3], o)


def filter_grad(xp: Any, x: Any, dy: Any, geo: Geo, fshape: tuple[int, ...]) -> Any:
    n, o = x.shape[0], dy.shape[4]
    dy2 = dy.reshape(-1, o)
    xpad = _padded(xp, x, geo)
    pix = geo[0][3] * geo[1][3] * geo[2][3]
    rows = fshape[0] * fshape[1] * fshape[2] * fshape[3]
    total = xp.zeros((rows, o), dtype=dy.dtype)
    for a, b in _slices(xp, n, pix * rows * x.itemsize):
        cols = _patches(xp, xpad[a:b], geo).reshape(-1, rows)
        total += xp.matmul(cols.T, dy2[a * pix : b * pix])
    return total.reshape(fshape)


def input_grad(xp: Any, dy: Any, f: Any, geo: Geo, xshape: tuple[int, ...]) -> Any:
    """col2im: each window's gradient (out_backprop times the filter transposed) added back into
    the padded input one filter tap at a time, a slice of images at a time."""
    n, c, o = xshape[0], xshape[4], f.shape[4]
    dxp = xp.zeros(_padded_shape(xshape, geo), dtype=dy.dtype)
    ft = f.reshape(-1, o).T
    outs = tuple(g[3] for g in geo)
    taps = _taps(geo)
    pix = outs[0] * outs[1] * outs[2]
    for a, b in _slices(xp, n, pix * ft.shape[1] * dy.itemsize):
        cols = xp.matmul(dy[a:b].reshape(-1, o), ft).reshape(b - a, *outs, len(taps), c)
        dst = dxp[a:b]
        for t_index, t in enumerate(taps):
            _tap(dst, geo, t)[...] += cols[:, :, :, :, t_index, :]
    return _unpadded(dxp, geo, (xshape[1], xshape[2], xshape[3]))


@register_kernel("Conv3D", expensive=True)
def _conv3d(ctx: KernelContext) -> Compute:
    xp, fmt = ctx.xp, ctx.op.attrs["data_format"]

    def compute(x: Any, f: Any) -> Any:
        x = _to_ndhwc(x, fmt)
        _check_depth(ctx, x.shape, f.shape)
        return _from_ndhwc(xp, conv3d(xp, x, f, _geometry(ctx, x.shape, f.shape[:3])), fmt)

    return compute


def _ndhwc_sizes(sizes: Any, fmt: str) -> tuple[int, ...]:
    s = _sizes(sizes)
    axes, c = spatial_axes_3d(fmt)
    return (s[0], s[axes[0]], s[axes[1]], s[axes[2]], s[c])


@register_kernel("Conv3DBackpropInputV2", expensive=True)
def _conv3d_backprop_input(ctx: KernelContext) -> Compute:
    xp, fmt = ctx.xp, ctx.op.attrs["data_format"]

    def compute(sizes: Any, f: Any, dy: Any) -> Any:
        xshape = _ndhwc_sizes(sizes, fmt)
        _check_depth(ctx, xshape, f.shape)
        geo = _geometry(ctx, xshape, f.shape[:3])
        dy = _to_ndhwc(dy, fmt)
        _check_out(
            ctx,
            dy,
            _out_shape(xshape, geo, f.shape[4]),
            f"input size {xshape} and filter {f.shape}",
        )
        return _from_ndhwc(xp, input_grad(xp, dy, f, geo, xshape), fmt)

    return compute


@register_kernel("Conv3DBackpropFilterV2", expensive=True)
def _conv3d_backprop_filter(ctx: KernelContext) -> Compute:
    xp, fmt = ctx.xp, ctx.op.attrs["data_format"]

    def compute(x: Any, sizes: Any, dy: Any) -> Any:
        fshape = tuple(_sizes(sizes))
        x = _to_ndhwc(x, fmt)
        _check_depth(ctx, x.shape, fshape)
        geo = _geometry(ctx, x.shape, fshape[:3])  # type: ignore[arg-type]
        dy = _to_ndhwc(dy, fmt)
        _check_out(
            ctx,
            dy,
            _out_shape(x.shape, geo, fshape[4]),
            f"input {x.shape} and filter size {fshape}",
        )
        return filter_grad(xp, x, dy, geo, fshape)

    return compute


def _ksize(ctx: KernelContext) -> tuple[int, int, int]:
    axes, _ = spatial_axes_3d(ctx.op.attrs["data_format"])
    k = ctx.op.attrs["ksize"]
    return k[axes[0]], k[axes[1]], k[axes[2]]


def _pool_kernel(body: Callable[[Any, KernelContext, Any, Geo], Any]) -> Callable[[KernelContext], Compute]:
    def make(ctx: KernelContext) -> Compute:
        xp, fmt, ksize = ctx.xp, ctx.op.attrs["data_format"], _ksize(ctx)

        def compute(x: Any) -> Any:
            x = _to_ndhwc(x, fmt)
            return _from_ndhwc(xp, body(xp, ctx, x, _geometry(ctx, x.shape, ksize)), fmt)

        return compute

    return make


def _max_pool(xp: Any, ctx: KernelContext, x: Any, geo: Geo) -> Any:
    xpad = _padded(xp, x, geo, -np.inf)
    taps = _taps(geo)
    out = _tap(xpad, geo, taps[0]).copy()
    for t in taps[1:]:
        xp.maximum(out, _tap(xpad, geo, t), out=out)
    return out


def _counts(xp: Any, x_sizes: tuple[int, ...], geo: Geo, dtype: Any) -> Any:
    """(od, oh, ow, 1): how many real input elements each window covers."""
    d, h, w = (
        covered(size, o, k, s, before) for size, (k, s, _, o, before, _) in zip(x_sizes, geo, strict=True)
    )
    counts = d[:, None, None] * h[None, :, None] * w[None, None, :]
    return xp.asarray(counts[..., None].astype(dtype))


def _avg_pool(xp: Any, ctx: KernelContext, x: Any, geo: Geo) -> Any:
    xpad = _padded(xp, x, geo)
    taps = _taps(geo)
    out = _tap(xpad, geo, taps[0]).copy()
    for t in taps[1:]:
        out += _tap(xpad, geo, t)
    out /= _counts(xp, x.shape[1:4], geo, x.dtype)
    return out


register_kernel("MaxPool3D", expensive=True)(_pool_kernel(_max_pool))
register_kernel("AvgPool3D", expensive=True)(_pool_kernel(_avg_pool))


def _check_pooled(ctx: KernelContext, g: Any, want: tuple[int, ...], what: str) -> None:
    if tuple(g.shape) != want:
        raise InvalidArgumentError(
            None, ctx.op, f"{what} of shape {tuple(g.shape)} (NDHWC) must have the pooled shape {want}"
        )


@register_kernel("MaxPool3DGrad", expensive=True)
def _max_pool3d_grad(ctx: KernelContext) -> Compute:
    xp, fmt, ksize = ctx.xp, ctx.op.attrs["data_format"], _ksize(ctx)

    def compute(x: Any, y: Any, dy: Any) -> Any:
        x, y, dy = _to_ndhwc(x, fmt), _to_ndhwc(y, fmt), _to_ndhwc(dy, fmt)
        geo = _geometry(ctx, x.shape, ksize)
        want = _out_shape(x.shape, geo, x.shape[4])
        _check_pooled(ctx, y, want, "orig_output")
        _check_pooled(ctx, dy, want, "grad")
        xpad = _padded(xp, x, geo, -np.inf)
        dxp = xp.zeros(xpad.shape, dtype=dy.dtype)
        # the first maximum of each window in (depth, row, column) order takes its gradient
        for t, hit in _first_maxima(xp, xpad, y, geo):
            _tap(dxp, geo, t)[...] += dy * hit
        return _from_ndhwc(xp, _unpadded(dxp, geo, (x.shape[1], x.shape[2], x.shape[3])), fmt)

    return compute


def _first_maxima(xp: Any, xpad: Any, y: Any, geo: Geo) -> Iterator[tuple[tuple[int, int, int], Any]]:
    """Per window tap, a (N, od, oh, ow, C) mask of the windows whose first maximum in (depth,
    row, column) order it is: ``open_`` marks the windows no earlier tap took; a hit is open, so
    ``^=`` clears it."""
    open_ = xp.ones(y.shape, dtype=bool)
    for t in _taps(geo):
        hit = xp.equal(_tap(xpad, geo, t), y)
        hit &= open_
        open_ ^= hit
        yield t, hit


@register_kernel("MaxPool3DGradGrad", expensive=True)
def _max_pool3d_grad_grad(ctx: KernelContext) -> Compute:
    xp, fmt, ksize = ctx.xp, ctx.op.attrs["data_format"], _ksize(ctx)

    def compute(x: Any, y: Any, g: Any) -> Any:
        x, y, g = _to_ndhwc(x, fmt), _to_ndhwc(y, fmt), _to_ndhwc(g, fmt)
        geo = _geometry(ctx, x.shape, ksize)
        _check_pooled(ctx, y, _out_shape(x.shape, geo, x.shape[4]), "orig_output")
        if g.shape != x.shape:
            raise InvalidArgumentError(
                None, ctx.op, f"grad of shape {tuple(g.shape)} must have orig_input's shape {tuple(x.shape)}"
            )
        xpad, gpad = _padded(xp, x, geo, -np.inf), _padded(xp, g, geo)
        out = xp.zeros(y.shape, dtype=g.dtype)
        for t, hit in _first_maxima(xp, xpad, y, geo):
            out += _tap(gpad, geo, t) * hit
        return _from_ndhwc(xp, out, fmt)

    return compute


@register_kernel("AvgPool3DGrad", expensive=True)
def _avg_pool3d_grad(ctx: KernelContext) -> Compute:
    xp, fmt, ksize = ctx.xp, ctx.op.attrs["data_format"], _ksize(ctx)

    def compute(sizes: Any, dy: Any) -> Any:
        xshape = _ndhwc_sizes(sizes, fmt)
        geo = _geometry(ctx, xshape, ksize)
        g = _to_ndhwc(dy, fmt)
        _check_pooled(ctx, g, _out_shape(xshape, geo, xshape[4]), "grad")
        g = g / _counts(xp, xshape[1:4], geo, g.dtype)
        dxp = xp.zeros(_padded_shape(xshape, geo), dtype=g.dtype)
        for t in _taps(geo):
            _tap(dxp, geo, t)[...] += g
        return _from_ndhwc(xp, _unpadded(dxp, geo, xshape[1:4]), fmt)  # type: ignore[arg-type]

    return compute
