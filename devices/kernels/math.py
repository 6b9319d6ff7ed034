"""Kernels of elementwise arithmetic, comparisons, reductions, matmul, add_n, cast."""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from antcolony.graph import shapes as S

from . import sharded
from .gemm import matmul
from .registry import Aliasing, Compute, KernelContext, register_kernel

# Python operators give numpy's (and cupy's) semantics for arrays and take numpy's scalar fast
# path for 0-d values (~60 ns instead of ~1 us for a ufunc call on scalars).
_OPERATORS = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mul": operator.mul,
    "RealDiv": operator.truediv,
    "Pow": operator.pow,
    "Less": operator.lt,
    "LessEqual": operator.le,
    "Greater": operator.gt,
    "GreaterEqual": operator.ge,
}
_BINARY = {"Maximum": "maximum", "Minimum": "minimum", "Equal": "equal", "NotEqual": "not_equal"}
_UNARY = {
    "Neg": "negative",
    "Square": "square",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Abs": "abs",
    "Sign": "sign",
    "Reciprocal": "reciprocal",
    "Sin": "sin",
    "Cos": "cos",
}


def _ufunc_kernel(name: str, ctx: KernelContext) -> Compute:
    return getattr(ctx.xp, name)


for _op, _fn in {**_BINARY, **_UNARY}.items():
    register_kernel(_op, aliasing=Aliasing.FRESH)(functools.partial(_ufunc_kernel, _fn))


def _operator_kernel(fn: Compute, ctx: KernelContext) -> Compute:
    return fn


# Operators whose large numpy operands of one dtype run sharded over the intra-op pool: a
# convolution's ``conv + bias`` over the MNIST CNN's first layer (1.6M elements) took 1.1 ms on
# one core.
_SHARDED = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}


def _sharded_operator_kernel(fn: Compute, ufunc: Any, ctx: KernelContext) -> Compute:
    size = S.num_elements(ctx.op.outputs[0]._shape)
    if ctx.xp is not np or (size is not None and size < sharded.SHARD_MIN):
        return fn  # known small (a scalar's add): the operator itself, no check per call
    least = sharded.SHARD_MIN

    def compute(x: Any, y: Any) -> Any:
        if (
            x.__class__ is np.ndarray
            and y.__class__ is np.ndarray
            and (x.size >= least or y.size >= least)
            and x.dtype == y.dtype
        ):
            out = sharded.binary(ufunc, x, y)
            if out is not None:
                return out
        return fn(x, y)

    return compute


for _op, _op_fn in _OPERATORS.items():
    _factory = (
        functools.partial(_sharded_operator_kernel, _op_fn, _SHARDED[_op])
        if _op in _SHARDED
        else functools.partial(_operator_kernel, _op_fn)
    )
    register_kernel(_op, aliasing=Aliasing.FRESH)(_factory)


@register_kernel("Rsqrt", aliasing=Aliasing.FRESH)
def _rsqrt(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.reciprocal(xp.sqrt(x))


@register_kernel("SquaredDifference", aliasing=Aliasing.FRESH)
def _sqdiff(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x, y: xp.square(xp.subtract(x, y))


@register_kernel("MatMul", aliasing=Aliasing.FRESH, expensive=True)
def _matmul(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")

    def compute(a: Any, b: Any) -> Any:
        return matmul(xp, a.T if ta else a, b.T if tb else b)

    return compute


# One pass over its inputs: at 8x the inline threshold (262144 elements) about as long as a
# MatMul at 1x, and far shorter than a hand-off to a worker thread and back (measured in the
# word2vec step: two AddNs of 192x128 and 128x128 launched took 51 and 350 us on the workers,
# waiting for the GIL, against 14 and 10 us inline).
@register_kernel("AddN", aliasing=Aliasing.FRESH, expensive=True, inline_scale=8)
def _add_n(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(*xs: Any) -> Any:
        if len(xs) > 2 and isinstance(xs[0], np.generic):
            # Scalars (AddN's inputs share one shape): the same left-to-right adds as below, by
            # numpy's scalar arithmetic, looped in C.
            return functools.reduce(operator.add, xs)
        out = xp.add(xs[0], xs[1]) if len(xs) > 1 else xp.array(xs[0], copy=True)
        for x in xs[2:]:
            out = (
                xp.add(out, x, out=out)
                if isinstance(out, xp.ndarray) and out.shape == xp.shape(x)
                else out + x
            )
        return out

    return compute


@register_kernel("Cast", aliasing=Aliasing.FRESH)
def _cast(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    dst = ctx.attr("DstT")
    return lambda x: xp.asarray(x).astype(dst)


def _reduce_kernel(fn_name: str, ctx: KernelContext) -> Compute:
    xp = ctx.xp
    fn = getattr(xp, fn_name)
    axis, keep = ctx.attr("axis"), ctx.attr("keepdims")
    out_dtype = ctx.op.outputs[0].dtype

    # The array's own method: numpy's module function adds a Python wrapper (~1.5 us a call).
    method = operator.methodcaller(fn_name, axis=axis, keepdims=keep)

    def compute(x: Any) -> Any:
        try:
            reduced = method(x)
        except AttributeError:  # not an array (a plain Python number)
            reduced = fn(x, axis=axis, keepdims=keep)
        return xp.asarray(reduced, dtype=out_dtype)

    return compute


for _op, _fn in {"Sum": "sum", "Max": "max", "Min": "min", "Prod": "prod"}.items():
    register_kernel(_op, expensive=True, aliasing=Aliasing.FRESH)(functools.partial(_reduce_kernel, _fn))


@register_kernel("Mean", aliasing=Aliasing.FRESH, expensive=True)
def _mean(ctx: KernelContext) -> Compute:
    general = _reduce_kernel("mean", ctx)
    axis, keep = ctx.attr("axis"), ctx.attr("keepdims")
    out_dtype = ctx.op.outputs[0].dtype

    def compute(x: Any) -> Any:
        # numpy's mean is a Python function (~4 us on a small array) computing, for float32 and
        # float64, add.reduce then a division by the count in the array's dtype: the same here.
        if x.__class__ is np.ndarray and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and x.size:
            total = np.add.reduce(x, axis=axis, keepdims=keep)
            return np.asarray(total / (x.size // total.size), dtype=out_dtype)
        return general(x)

    return compute


@register_kernel("ArgMax", aliasing=Aliasing.FRESH)
def _argmax(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    axis, dt = ctx.attr("axis"), ctx.attr("output_type")
    return lambda x: xp.argmax(x, axis=axis).astype(dt)


@register_kernel("SumToShape")
def _sum_to_shape(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(grad: Any, shape: Any) -> Any:
        target = tuple(int(d) for d in shape)
        g = xp.asarray(grad)
        lead = g.ndim - len(target)
        if lead:
            size = int(np.prod(target))
            # a bias's gradient: a sum over the leading axes, sharded and wide when large
            total = (
                sharded.sum_leading(g, size)
                if g.shape[lead:] == target and g.size >= sharded.SHARD_MIN
                else None
            )
            if total is not None:
                return total.reshape(target)
            g = g.sum(axis=tuple(range(lead)))
        axes = tuple(i for i, d in enumerate(target) if d == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        return g.reshape(target)

    return compute


@register_kernel("ExpandReduced")
def _expand_reduced(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    axis = ctx.attr("axis")

    def compute(grad: Any, x: Any) -> Any:
        axes = range(x.ndim) if axis is None else {a % x.ndim for a in axis}
        return xp.reshape(grad, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))

    return compute
