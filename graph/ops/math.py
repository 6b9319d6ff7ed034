"""Elementwise arithmetic, comparisons, matmul, add_n, cast; shape and gradient rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import binary, convert_pair, convert_to_tensor, graph_of, make_op, unary
from ..registry import register_op

BINARY = ("Add", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "SquaredDifference")
COMPARISON = ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
UNARY = ("Neg", "Square", "Sqrt", "Exp", "Log", "Abs", "Sign", "Reciprocal", "Rsqrt")


def _binary_shape(op: Operation) -> list:
    x, y = op.inputs
    return [(x.dtype, S.broadcast(x._shape, y._shape))]


def _comparison_shape(op: Operation) -> list:
    x, y = op.inputs
    return [(dtypes.bool_, S.broadcast(x._shape, y._shape))]


def _unary_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


for _t in BINARY:
    register_op(_t)(_binary_shape)
for _t in COMPARISON:
    register_op(_t)(_comparison_shape)
for _t in UNARY:
    register_op(_t)(_unary_shape)
not_differentiable(*COMPARISON)


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Add", x, y, name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Sub", x, y, name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Mul", x, y, name)


# x / y on integers is a float division in TF1 (truediv): int8/16 become float32, int32/64 float64.
_TRUEDIV_FLOAT = {
    np.dtype(np.int8): dtypes.float32,
    np.dtype(np.uint8): dtypes.float32,
    np.dtype(np.int16): dtypes.float32,
    np.dtype(np.int32): dtypes.float64,
    np.dtype(np.int64): dtypes.float64,
}


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` as TF1's truediv: integers are cast to floats first, and the op is named
    "truediv" (the casts in that scope), as TF1 names ``tf.divide`` and the ``/`` operator."""
    with graph_of([x, y]).name_scope(name or "truediv") as scope:
        a, b = convert_pair(x, y, "truediv")
        target = _TRUEDIV_FLOAT.get(a.dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return make_op("RealDiv", [a, b], None, scope).outputs[0]


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Pow", x, y, name)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Maximum", x, y, name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Minimum", x, y, name)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("SquaredDifference", x, y, name)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Equal", x, y, name)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("NotEqual", x, y, name)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Less", x, y, name)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("LessEqual", x, y, name)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Greater", x, y, name)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("GreaterEqual", x, y, name)


def negative(x: Any, name: str | None = None) -> Tensor:
    return unary("Neg", x, name)


def square(x: Any, name: str | None = None) -> Tensor:
    return unary("Square", x, name)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Sqrt", x, name)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Rsqrt", x, name)


def exp(x: Any, name: str | None = None) -> Tensor:
    return unary("Exp", x, name)


def log(x: Any, name: str | None = None) -> Tensor:
    return unary("Log", x, name)


def abs(x: Any, name: str | None = None) -> Tensor:
    return unary("Abs", x, name)


def sign(x: Any, name: str | None = None) -> Tensor:
    return unary("Sign", x, name)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    return unary("Reciprocal", x, name)


# -- gradients of elementwise ops ------------------------------------------------------


def reduce_to(grad: Tensor, x: Tensor) -> Tensor:
    """Sum ``grad`` over the axes broadcasting added, so it has ``x``'s shape."""
    from .array import reshape
    from .array import shape as shape_of

    gs, xs = grad._shape, x._shape
    if gs is not None and xs is not None and gs == xs and S.is_fully_defined(gs):
        return grad
    if S.is_fully_defined(xs) and S.is_fully_defined(gs):
        lead = len(gs) - len(xs)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(xs) if d == 1 and gs[lead + i] != 1]
        out = reduce_sum(grad, axis=axes) if axes else grad
        return reshape(out, xs) if out._shape != xs else out
    return make_op("SumToShape", [grad, shape_of(x)], {"static_shape": xs}, "SumToShape").outputs[0]


@register_op("SumToShape")
def _sum_to_shape_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.attrs.get("static_shape"))]


@register_gradient("SumToShape")
def _sum_to_shape_grad(op: Operation, grad: Tensor) -> list:
    from .array import broadcast_like

    return [broadcast_like(grad, op.inputs[0]), None]


@register_gradient("Add")
def _add_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(grad, x), reduce_to(grad, y)]


@register_gradient("Sub")
def _sub_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(grad, x), reduce_to(negative(grad), y)]


@register_gradient("Mul")
def _mul_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(grad * y, x), reduce_to(grad * x, y)]


@register_gradient("RealDiv")
def _div_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(grad / y, x), reduce_to(negative(grad) * x / square(y), y)]


@register_gradient("Pow")
def _pow_grad(op: Operation, grad: Tensor) -> list:
    from .array import where, zeros_like

    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * y * pow(x, y - 1)
    safe_log = where(greater(x, 0), log(where(greater(x, 0), x, x * 0 + 1)), zeros_like(x))
    gy = grad * z * safe_log
    return [reduce_to(gx, x), reduce_to(gy, y)]


def _select_grad(op: Operation, grad: Tensor, x_wins: Tensor) -> list:
    from .array import zeros_like

    x, y = op.inputs
    from .array import where

    zeros = zeros_like(grad)
    return [reduce_to(where(x_wins, grad, zeros), x), reduce_to(where(x_wins, zeros, grad), y)]


@register_gradient("Maximum")
def _maximum_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return _select_grad(op, grad, greater_equal(x, y))


@register_gradient("Minimum")
def _minimum_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return _select_grad(op, grad, less_equal(x, y))


@register_gradient("SquaredDifference")
def _sqdiff_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    d = grad * 2.0 * (x - y)
    return [reduce_to(d, x), reduce_to(negative(d), y)]


@register_gradient("Neg")
def _neg_grad(op: Operation, grad: Tensor) -> list:
    return [negative(grad)]


@register_gradient("Square")
def _square_grad(op: Operation, grad: Tensor) -> list:
    # multiply(), not the * operator: the ops keep TF's gradient names (Square_grad/Mul, Mul_1)
    return [multiply(multiply(grad, 2.0), op.inputs[0])]


@register_gradient("Sqrt")
def _sqrt_grad(op: Operation, grad: Tensor) -> list:
    # TF's SqrtGrad is 0 where the incoming gradient is 0, also at sqrt(0) (no 0 / 0 = nan there)
    from .array import where, zeros_like

    return [where(equal(grad, 0), zeros_like(grad), grad * 0.5 / op.outputs[0])]


@register_gradient("Rsqrt")
def _rsqrt_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [grad * -0.5 * y * y * y]


@register_gradient("Exp")
def _exp_grad(op: Operation, grad: Tensor) -> list:
    return [grad * op.outputs[0]]


@register_gradient("Log")
def _log_grad(op: Operation, grad: Tensor) -> list:
    return [grad / op.inputs[0]]


@register_gradient("Abs")
def _abs_grad(op: Operation, grad: Tensor) -> list:
    return [grad * sign(op.inputs[0])]


@register_gradient("Sign")
def _sign_grad(op: Operation, grad: Tensor) -> list:
    from .array import zeros_like

    # TF gives a zero tensor, not None: a loss through sign() still has a gradient to apply
    return [zeros_like(op.inputs[0])]


@register_gradient("Reciprocal")
def _reciprocal_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [negative(grad) * y * y]


# -- matmul -----------------------------------------------------------------------------


@register_op("MatMul")
def _matmul_shape(op: Operation) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if a.dtype != b.dtype:
        raise ValueError(f"dtypes differ: {a.name} is {a.dtype.name}, {b.name} is {b.dtype.name}")
    sa, sb = a._shape, b._shape
    for t, s in ((a, sa), (b, sb)):
        if s is not None and len(s) != 2:
            raise ValueError(f"{t.name} has shape {S.format_shape(s)}; matmul needs rank-2 operands")
    if sa is None or sb is None:
        return [(a.dtype, (None, None))]
    m, k1 = (sa[1], sa[0]) if ta else sa
    k2, n = (sb[1], sb[0]) if tb else sb
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(
            f"inner dimensions differ: {a.name} has shape {S.format_shape(sa)} and {b.name} has shape "
            f"{S.format_shape(sb)} ({k1} != {k2})"
        )
    return [(a.dtype, (m, n))]


def matmul(
    a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, name: str | None = None
) -> Tensor:
    at, bt = convert_to_tensor(a), convert_to_tensor(b)
    if any(t._shape is not None and len(t._shape) > 2 for t in (at, bt)):
        from .linalg import matmul as batched  # batches of matrices: BatchMatMulV2, as TF1

        return batched(at, bt, transpose_a=transpose_a, transpose_b=transpose_b, name=name)
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}
    return make_op("MatMul", [at, bt], attrs, name or "MatMul").outputs[0]


@register_gradient("MatMul")
def _matmul_grad(op: Operation, grad: Tensor) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [
        matmul(b, grad, transpose_a=True, transpose_b=True),
        matmul(grad, a, transpose_a=True, transpose_b=True),
    ]


# -- add_n, cast ------------------------------------------------------------------------


@register_op("AddN")
def _add_n_shape(op: Operation) -> list:
    first = op.inputs[0]
    shape = first._shape
    for t in op.inputs[1:]:
        if t.dtype != first.dtype:
            raise ValueError(
                f"inputs have different dtypes: {first.name} {first.dtype.name}, {t.name} {t.dtype.name}"
            )
        if not S.compatible(shape, t._shape):
            raise ValueError(
                f"inputs have different shapes: {S.format_shape(shape)} and {S.format_shape(t._shape)}"
            )
        shape = S.merge(shape, t._shape)
    return [(first.dtype, shape)]


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sum of tensors of the same shape and dtype."""
    if not inputs:
        raise ValueError("add_n needs at least one input")
    ts = [convert_to_tensor(t) for t in inputs]
    return make_op("AddN", ts, None, name or "AddN").outputs[0]


@register_gradient("AddN")
def _add_n_grad(op: Operation, grad: Tensor) -> list:
    return [grad] * len(op.inputs)


@register_op("Cast")
def _cast_shape(op: Operation) -> list:
    return [(op.attrs["DstT"], op.inputs[0]._shape)]


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    xt = convert_to_tensor(x)
    dt = dtypes.as_dtype(dtype)
    if xt.dtype == dt:
        return xt
    return make_op("Cast", [xt], {"DstT": dt}, name or "Cast").outputs[0]


@register_gradient("Cast")
def _cast_grad(op: Operation, grad: Tensor) -> list:
    src = op.inputs[0].dtype
    if src.kind in "fc" and op.outputs[0].dtype.kind in "fc":
        return [cast(grad, src)]
    return [None]


# Reductions live in reduction.py; re-exported here because TF keeps them in math_ops.
from .reduction import argmax, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum  # noqa: E402,F401
