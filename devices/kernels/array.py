"""Kernels of shape and array ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.slicing import to_numpy_key

from .registry import Aliasing, Compute, KernelContext, register_kernel
from .segment import out_of_range
from .ufunc_at import ufunc_at


@register_kernel("Shape", aliasing=Aliasing.FRESH)
def _shape(ctx: KernelContext) -> Compute:
    xp, dt = ctx.xp, ctx.attr("out_type")
    return lambda x: xp.asarray(xp.shape(x), dtype=dt)


@register_kernel("Size", aliasing=Aliasing.FRESH)
def _size(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.asarray(xp.size(x), dtype=xp.int32)


def reshaped(xp: Any, x: Any, shape: Any) -> Any:
    """``xp.reshape(x, shape)`` by the array's own method where it has one (numpy's function is
    a Python wrapper around it: ~1.6 against ~0.4 us a call), else by the function (a Python
    number)."""
    try:
        return x.reshape(shape)
    except AttributeError:
        return xp.reshape(x, shape)


@register_kernel("Reshape")
def _reshape(ctx: KernelContext) -> Compute:
    xp, shape = ctx.xp, ctx.attr("shape")
    # With a second input the target is a tensor's value, read when the op runs.
    return lambda x, *target: reshaped(xp, x, tuple(xp.asarray(target[0]).tolist()) if target else shape)


@register_kernel("ReshapeLike")
def _reshape_like(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x, like: reshaped(xp, x, xp.shape(like))


@register_kernel("Transpose")
def _transpose(ctx: KernelContext) -> Compute:
    xp, perm = ctx.xp, ctx.attr("perm")
    return lambda x: xp.transpose(x, perm)


@register_kernel("ConcatV2", aliasing=Aliasing.FRESH, expensive=True)
def _concat(ctx: KernelContext) -> Compute:
    xp, axis = ctx.xp, ctx.attr("axis")
    return lambda *xs: xp.concatenate(xs, axis=axis)


@register_kernel("ConcatSlice")
def _concat_slice(ctx: KernelContext) -> Compute:
    axis, index = ctx.attr("axis"), ctx.attr("index")

    def compute(grad: Any, *parts: Any) -> Any:
        ax = axis % grad.ndim
        start = sum(p.shape[ax] for p in parts[:index])
        sl = [slice(None)] * grad.ndim
        sl[ax] = slice(start, start + parts[index].shape[ax])
        return grad[tuple(sl)]

    return compute


@register_kernel("Pack", aliasing=Aliasing.FRESH)
def _pack(ctx: KernelContext) -> Compute:
    xp, axis = ctx.xp, ctx.attr("axis")
    return lambda *xs: xp.stack(xs, axis=axis)


@register_kernel("Unpack", aliasing=Aliasing.FRESH)
def _unpack(ctx: KernelContext) -> Compute:
    xp, axis, num = ctx.xp, ctx.attr("axis"), ctx.attr("num")

    def compute(x: Any) -> tuple[Any, ...]:
        if x.shape[axis] != num:
            raise InvalidArgumentError(
                None,
                ctx.op,
                f"Unpack {ctx.op.name}: dimension {axis} of its input {tuple(x.shape)} is "
                f"{x.shape[axis]}, not num={num}",
            )
        # Each slice is a copy: consumers get contiguous memory of their own (as TF's).
        moved = xp.moveaxis(x, axis, 0)
        return tuple(xp.array(moved[i], copy=True) for i in range(num))

    return compute


@register_kernel("Fill", aliasing=Aliasing.FRESH)
def _fill(ctx: KernelContext) -> Compute:
    xp, shape = ctx.xp, ctx.attr("shape")

    def compute(v: Any, dims: Any = None) -> Any:
        return xp.full(
            shape if dims is None else tuple(int(d) for d in dims.tolist()), v, dtype=xp.asarray(v).dtype
        )

    return compute


@register_kernel("ZerosLike", aliasing=Aliasing.FRESH)
def _zeros_like(ctx: KernelContext) -> Compute:
    xp, dt = ctx.xp, ctx.op.outputs[0].dtype
    return lambda x: xp.zeros(xp.shape(x), dtype=dt)


@register_kernel("OnesLike", aliasing=Aliasing.FRESH)
def _ones_like(ctx: KernelContext) -> Compute:
    xp, dt = ctx.xp, ctx.op.outputs[0].dtype
    return lambda x: xp.ones(xp.shape(x), dtype=dt)


@register_kernel("BroadcastLike", aliasing=Aliasing.HELD)
def _broadcast_like(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, like: Any) -> Any:
        x_shape, like_shape = xp.shape(x), xp.shape(like)
        if x_shape == like_shape:
            return x  # the common case (a gradient already of its input's shape): no numpy call
        if not x_shape and xp is np:
            # A scalar (a mean's gradient): the read-only zero-stride view broadcast_to makes,
            # without its Python wrapper (2.3 -> 0.4 us).
            base = np.asarray(x)
            view = np.ndarray(like_shape, base.dtype, base, 0, (0,) * len(like_shape))
            view.flags.writeable = False
            return view
        if xp is np:
            strided = _broadcast_view(np.asarray(x), like_shape)
            if strided is not None:
                return strided
        return xp.broadcast_to(x, xp.broadcast_shapes(x_shape, like_shape))

    return compute


_SMALL_COPY = 4096  # elements: copied in ~1 us, far less than numpy's broadcast_to wrappers


def _broadcast_view(x: np.ndarray, like_shape: tuple[int, ...]) -> np.ndarray | None:
    """The read-only view ``np.broadcast_to(x, np.broadcast_shapes(x.shape, like_shape))`` makes,
    built directly (zero strides on the broadcast axes): ~2 us against ~9.5 us for numpy's
    Python wrappers (128x1 like 128x65). For a C-contiguous ``x``; a broadcast single value
    (all strides zero: a mean's gradient, reshaped; 5.2 against 9.3 us) is viewed from a copy
    of its value, another small ``x`` (a column sliced from a concat's gradient) from a
    contiguous copy. None where numpy must decide (a large view: finding its offset in its
    base costs what numpy's wrappers cost; or shapes that do not broadcast: numpy raises)."""
    buffer = x
    if not x.flags.c_contiguous:
        if not x.size:
            return None
        if not any(x.strides):
            buffer = np.asarray(x[(0,) * x.ndim])
        elif x.size <= _SMALL_COPY:
            buffer = x = np.ascontiguousarray(x)
        else:
            return None
    ndim = max(x.ndim, len(like_shape))
    xs = (1,) * (ndim - x.ndim) + x.shape
    ls = (1,) * (ndim - len(like_shape)) + tuple(like_shape)
    xstrides = (0,) * (ndim - x.ndim) + (x.strides if buffer is x else (0,) * x.ndim)
    shape, strides = [], []
    for a, b, st in zip(xs, ls, xstrides):
        if a == b or b == 1:
            shape.append(a)
            strides.append(st if a != 1 else 0)
        elif a == 1:
            shape.append(b)
            strides.append(0)
        else:
            return None
    view = np.ndarray(tuple(shape), x.dtype, buffer, 0, tuple(strides))
    view.flags.writeable = False
    return view


@register_kernel("GatherV2", aliasing=Aliasing.FRESH)
def _gather(ctx: KernelContext) -> Compute:
    xp, axis = ctx.xp, ctx.attr("axis")
    name = ctx.op.name

    def compute(params: Any, indices: Any) -> Any:
        n = xp.shape(params)[axis]
        idx = xp.asarray(indices)
        if idx.size and out_of_range(idx, n):
            raise IndexError(
                f"{name}: indices must be in [0, {n}), got range [{int(idx.min())}, {int(idx.max())}]"
            )
        try:
            return params.take(idx, axis=axis)  # (the method: numpy's take wraps it in Python)
        except AttributeError:
            return xp.take(params, idx, axis=axis)

    return compute


@register_kernel("GatherGrad", aliasing=Aliasing.FRESH, expensive=True)
def _gather_grad(ctx: KernelContext) -> Compute:
    xp, axis = ctx.xp, ctx.attr("axis")

    def compute(grad: Any, indices: Any, params: Any) -> Any:
        out = xp.zeros(xp.shape(params), dtype=grad.dtype)
        moved = xp.moveaxis(out, axis, 0)
        idx = xp.asarray(indices).reshape(-1)
        g = xp.moveaxis(grad, list(range(axis, axis + xp.ndim(indices))), list(range(xp.ndim(indices))))
        ufunc_at(xp, xp.add, moved, idx, g.reshape((idx.size, *moved.shape[1:])))
        return out

    return compute


@register_kernel("Select", aliasing=Aliasing.FRESH)
def _select(ctx: KernelContext) -> Compute:
    return ctx.xp.where


@register_kernel("ExpandDims")
def _expand_dims(ctx: KernelContext) -> Compute:
    xp, axis = ctx.xp, ctx.attr("axis")

    def compute(x: Any) -> Any:
        shape = xp.shape(x)
        at = axis if axis >= 0 else len(shape) + 1 + axis
        if not 0 <= at <= len(shape):
            raise ValueError(f"axis {axis} is out of range for a tensor of rank {len(shape)}")
        # a reshape: xp.expand_dims normalises its axis through Python helpers (~2 us a call)
        return reshaped(xp, x, (*shape[:at], 1, *shape[at:]))

    return compute


@register_kernel("OneHot", aliasing=Aliasing.FRESH)
def _one_hot(ctx: KernelContext) -> Compute:
    xp, depth, dt = ctx.xp, ctx.attr("depth"), ctx.attr("dtype")

    def compute(indices: Any) -> Any:
        idx = xp.asarray(indices)
        return (idx[..., None] == xp.arange(depth)).astype(dt)

    return compute


@register_kernel("StridedSlice")
def _strided_slice(ctx: KernelContext) -> Compute:
    key = to_numpy_key(ctx.attr("spec"))
    return lambda x: x[key]


@register_kernel("StridedSliceGrad", aliasing=Aliasing.FRESH)
def _strided_slice_grad(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    key = to_numpy_key(ctx.attr("spec"))

    def compute(grad: Any, x: Any) -> Any:
        out = xp.zeros(xp.shape(x), dtype=grad.dtype)
        out[key] = grad
        return out

    return compute
