"""Elementwise math of TF1 beyond the basics: expm1, erf / erfc, lgamma / digamma / polygamma,
tan and the hyperbolic and inverse trigonometric functions, atan2, ceil / rint / round, and the
is_nan / is_inf / is_finite tests; gradients as TF1's (none for the rounding and the tests)."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import binary, convert_to_tensor, make_op, unary
from ..registry import register_op
from .math import _binary_shape, _unary_shape, exp, negative, reciprocal, rsqrt, square
from .trigonometry import cos

__all__ = [
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "cosh",
    "digamma",
    "erf",
    "erfc",
    "expm1",
    "is_finite",
    "is_inf",
    "is_nan",
    "lgamma",
    "log1p",
    "polygamma",
    "rint",
    "round",
    "sinh",
    "tan",
]

FLOAT_UNARY = (
    "Expm1",
    "Log1p",
    "Erf",
    "Erfc",
    "Lgamma",
    "Digamma",
    "Tan",
    "Sinh",
    "Cosh",
    "Asin",
    "Acos",
    "Atan",
    "Asinh",
    "Acosh",
    "Atanh",
    "Ceil",
    "Rint",
    "Round",
)
TESTS = ("IsNan", "IsInf", "IsFinite")

for _t in FLOAT_UNARY:
    register_op(_t)(_unary_shape)
register_op("Atan2")(_binary_shape)
register_op("Polygamma")(_binary_shape)


@register_op("IsNan")
@register_op("IsInf")
@register_op("IsFinite")
def _test_shape(op: Operation) -> list:
    return [(dtypes.bool_, op.inputs[0]._shape)]


# rounding is flat almost everywhere (TF returns None); the tests are boolean
not_differentiable("Ceil", "Rint", "Round", *TESTS)


def expm1(x: Any, name: str | None = None) -> Tensor:
    """exp(x) - 1, accurate for tiny x."""
    return unary("Expm1", x, name)


def log1p(x: Any, name: str | None = None) -> Tensor:
    """log(1 + x), accurate for tiny x."""
    return unary("Log1p", x, name)


def erf(x: Any, name: str | None = None) -> Tensor:
    return unary("Erf", x, name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """1 - erf(x), accurate where erf(x) is near 1."""
    return unary("Erfc", x, name)


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """log |Gamma(x)|."""
    return unary("Lgamma", x, name)


def digamma(x: Any, name: str | None = None) -> Tensor:
    """The derivative of lgamma."""
    return unary("Digamma", x, name)


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The a-th derivative of digamma (``a`` a non-negative integer value of x's dtype)."""
    return binary("Polygamma", a, x, name)


def tan(x: Any, name: str | None = None) -> Tensor:
    return unary("Tan", x, name)


def sinh(x: Any, name: str | None = None) -> Tensor:
    return unary("Sinh", x, name)


def cosh(x: Any, name: str | None = None) -> Tensor:
    return unary("Cosh", x, name)


def asin(x: Any, name: str | None = None) -> Tensor:
    return unary("Asin", x, name)


def acos(x: Any, name: str | None = None) -> Tensor:
    return unary("Acos", x, name)


def atan(x: Any, name: str | None = None) -> Tensor:
    return unary("Atan", x, name)


def asinh(x: Any, name: str | None = None) -> Tensor:
    return unary("Asinh", x, name)


def acosh(x: Any, name: str | None = None) -> Tensor:
    return unary("Acosh", x, name)


def atanh(x: Any, name: str | None = None) -> Tensor:
    return unary("Atanh", x, name)


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """The angle of the point (x, y), in (-pi, pi]."""
    return binary("Atan2", y, x, name)


def ceil(x: Any, name: str | None = None) -> Tensor:
    return unary("Ceil", x, name)


def rint(x: Any, name: str | None = None) -> Tensor:
    """The nearest integer value, halves to even."""
    return unary("Rint", x, name)


def round(x: Any, name: str | None = None) -> Tensor:
    """The nearest integer value, halves to even (integer tensors pass through)."""
    xt = convert_to_tensor(x)
    if xt.dtype.kind in "iu":
        return xt
    return make_op("Round", [xt], None, name or "Round").outputs[0]


def is_nan(x: Any, name: str | None = None) -> Tensor:
    return unary("IsNan", x, name)


def is_inf(x: Any, name: str | None = None) -> Tensor:
    return unary("IsInf", x, name)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    return unary("IsFinite", x, name)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@register_gradient("Expm1")
def _expm1_grad(op: Operation, grad: Tensor) -> list:
    return [grad * exp(op.inputs[0])]


@register_gradient("Log1p")
def _log1p_grad(op: Operation, grad: Tensor) -> list:
    # one division (TF: a reciprocal, then a product): a node fewer, a rounding fewer
    return [grad / (op.inputs[0] + 1.0)]


@register_gradient("Erf")
def _erf_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * _TWO_OVER_SQRT_PI * exp(negative(square(x)))]


@register_gradient("Erfc")
def _erfc_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * -_TWO_OVER_SQRT_PI * exp(negative(square(x)))]


@register_gradient("Lgamma")
def _lgamma_grad(op: Operation, grad: Tensor) -> list:
    return [grad * digamma(op.inputs[0])]


@register_gradient("Digamma")
def _digamma_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * polygamma(convert_to_tensor(1, dtype=x.dtype), x)]


@register_gradient("Polygamma")
def _polygamma_grad(op: Operation, grad: Tensor) -> list:
    a, x = op.inputs
    return [None, grad * polygamma(a + 1, x)]


@register_gradient("Tan")
def _tan_grad(op: Operation, grad: Tensor) -> list:
    return [grad * square(reciprocal(cos(op.inputs[0])))]


@register_gradient("Sinh")
def _sinh_grad(op: Operation, grad: Tensor) -> list:
    return [grad * cosh(op.inputs[0])]


@register_gradient("Cosh")
def _cosh_grad(op: Operation, grad: Tensor) -> list:
    return [grad * sinh(op.inputs[0])]


@register_gradient("Asin")
def _asin_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * rsqrt(1 - square(x))]


@register_gradient("Acos")
def _acos_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [negative(grad) * rsqrt(1 - square(x))]


@register_gradient("Atan")
def _atan_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * reciprocal(1 + square(x))]


@register_gradient("Asinh")
def _asinh_grad(op: Operation, grad: Tensor) -> list:
    return [grad / cosh(op.outputs[0])]


@register_gradient("Acosh")
def _acosh_grad(op: Operation, grad: Tensor) -> list:
    return [grad / sinh(op.outputs[0])]


@register_gradient("Atanh")
def _atanh_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * reciprocal(1 - square(x))]


@register_gradient("Atan2")
def _atan2_grad(op: Operation, grad: Tensor) -> list:
    from .math import reduce_to

    y, x = op.inputs
    scale = grad * reciprocal(square(x) + square(y))
    return [reduce_to(x * scale, y), reduce_to(negative(y) * scale, x)]
