"""Kernels of graph/ops/math_unary.py. numpy has no erf, lgamma or digamma: erf / erfc / lgamma
come from Python's math module element by element, digamma and polygamma from their recurrence
and asymptotic series (float64, then the input's dtype); these run on the CPU."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel

_UFUNCS = {
    "Expm1": "expm1",
    "Log1p": "log1p",
    "Tan": "tan",
    "Sinh": "sinh",
    "Cosh": "cosh",
    "Asin": "arcsin",
    "Acos": "arccos",
    "Atan": "arctan",
    "Asinh": "arcsinh",
    "Acosh": "arccosh",
    "Atanh": "arctanh",
    "Ceil": "ceil",
    "Rint": "rint",
    "Round": "rint",  # TF rounds halves to even, as rint
    "IsNan": "isnan",
    "IsInf": "isinf",
    "IsFinite": "isfinite",
    "Atan2": "arctan2",
}


def _ufunc(name: str, ctx: KernelContext) -> Compute:
    fn = getattr(ctx.xp, name)

    def compute(*xs: Any) -> Any:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # nan / inf as TF
            return fn(*xs)

    return compute


for _op, _fn in _UFUNCS.items():
    register_kernel(_op, aliasing=Aliasing.FRESH)(functools.partial(_ufunc, _fn))


def _elementwise(fn: Any) -> Any:
    vectorized = np.frompyfunc(fn, 1, 1)

    def factory(ctx: KernelContext) -> Compute:
        def compute(x: Any) -> Any:
            arr = np.asarray(x)
            return np.asarray(vectorized(arr.astype(np.float64)), dtype=np.float64).astype(arr.dtype)

        return compute

    return factory


def _lgamma(v: float) -> float:
    if math.isinf(v):
        return math.inf
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, -2, ...)
        return math.inf


register_kernel("Erf", devices=("CPU",), aliasing=Aliasing.FRESH)(_elementwise(math.erf))
register_kernel("Erfc", devices=("CPU",), aliasing=Aliasing.FRESH)(_elementwise(math.erfc))
register_kernel("Lgamma", devices=("CPU",), aliasing=Aliasing.FRESH)(_elementwise(_lgamma))

# Bernoulli numbers B_2k for the asymptotic series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SHIFT = 10.0  # the series is used from x >= 10 on, where 8 terms reach double precision


def polygamma_f64(n: int, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) for n >= 0 on float64 x: recurrence up to x >= 10, then the asymptotic series;
    digamma (n = 0) of negative x by reflection."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    if n == 0:
        neg = x < 0.5
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        with np.errstate(divide="ignore", invalid="ignore"):
            reflect = np.where(neg, -math.pi / np.tan(math.pi * x), 0.0)
        x = np.where(neg, 1.0 - x, x)
        out += reflect
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    fact = math.factorial(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            small = x < _SHIFT
            if not small.any():
                break
            # psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1)
            out -= np.where(small, -sign * fact / x ** (n + 1), 0.0)
            x = np.where(small, x + 1.0, x)
        if n == 0:
            series = np.log(x) - 0.5 / x
            for k, b in enumerate(_BERNOULLI, start=1):
                series -= b / (2 * k * x ** (2 * k))
        else:
            series = math.factorial(n - 1) / x**n + fact / (2 * x ** (n + 1))
            for k, b in enumerate(_BERNOULLI, start=1):
                series += b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * x ** (2 * k + n))
            series *= sign
    return out + series


@register_kernel("Digamma", devices=("CPU",), aliasing=Aliasing.FRESH)
def _digamma(ctx: KernelContext) -> Compute:
    return lambda x: polygamma_f64(0, x).astype(np.asarray(x).dtype)


@register_kernel("Polygamma", devices=("CPU",), aliasing=Aliasing.FRESH)
def _polygamma(ctx: KernelContext) -> Compute:
    def compute(a: Any, x: Any) -> Any:
        a_arr, x_arr = np.broadcast_arrays(np.asarray(a), np.asarray(x))
        out = np.full(x_arr.shape, np.nan)
        for n in np.unique(a_arr[np.isfinite(a_arr)]):
            if n >= 0 and n == int(n):
                mask = a_arr == n
                out[mask] = polygamma_f64(int(n), x_arr[mask])
        return out.astype(np.asarray(x).dtype)

    return compute


@register_kernel("Cumprod", aliasing=Aliasing.FRESH)
def _cumprod(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    axis, exclusive, reverse = ctx.attr("axis"), ctx.attr("exclusive"), ctx.attr("reverse")

    def compute(x: Any) -> Any:
        v = xp.flip(x, axis) if reverse else x
        if exclusive:
            # shift by one along the axis, a 1 in front
            ones_shape = list(v.shape)
            ones_shape[axis] = 1
            head = xp.ones(ones_shape, v.dtype)
            rest = xp.take(v, xp.arange(v.shape[axis] - 1), axis=axis)
            v = xp.concatenate([head, rest], axis=axis)
        out = xp.cumprod(v, axis=axis, dtype=v.dtype)
        return xp.flip(out, axis) if reverse else out

    return compute


@register_kernel("Bincount", devices=("CPU",), aliasing=Aliasing.FRESH)
def _bincount(ctx: KernelContext) -> Compute:
    minlength, maxlength = ctx.attr("minlength"), ctx.attr("maxlength")
    dtype = np.dtype(ctx.attr("dtype"))

    def compute(arr: Any, weights: Any = None) -> Any:
        flat = np.asarray(arr).reshape(-1)
        if flat.size and flat.min() < 0:
            raise ValueError("bincount: arr must be non-negative")
        w = None if weights is None else np.asarray(weights).reshape(-1)
        if maxlength is not None:
            keep = flat < maxlength
            flat = flat[keep]
            w = None if w is None else w[keep]
        length = int(flat.max()) + 1 if flat.size else 0
        length = max(length, minlength or 0)
        if maxlength is not None:
            length = min(length, maxlength)
        return np.bincount(flat, weights=w, minlength=length).astype(dtype)

    return compute


@register_kernel("MulNoNan", aliasing=Aliasing.FRESH)
def _mul_no_nan(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, y: Any) -> Any:
        with np.errstate(invalid="ignore", over="ignore"):
            return xp.where(y == 0, xp.zeros((), dtype=x.dtype), x * y)

    return compute
