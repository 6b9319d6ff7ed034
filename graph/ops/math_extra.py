"""More of TF1's ``tf.math``: Cumprod and Bincount (ops), and composites -- count_nonzero,
reduce_variance / reduce_std / reduce_euclidean_norm, polyval, log_sigmoid, xlogy / xdivy,
multiply_no_nan / reciprocal_no_nan, scalar_mul, zero_fraction, is_non_decreasing /
is_strictly_increasing, confusion_matrix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..legacy_args import resolve
from ..op_builder import binary, convert_pair, convert_to_tensor, make_op
from ..registry import register_op
from .activations import softplus
from .array import reshape, stack, where, zeros_like
from .math import (
    _binary_shape,
    cast,
    divide,
    equal,
    greater,
    greater_equal,
    log,
    multiply,
    negative,
    not_equal,
    reduce_to,
    sqrt,
    square,
)
from .math_composite import reduce_all
from .math_safe import div_no_nan
from .reduction import reduce_mean, reduce_sum
from .scatter import scatter_nd

__all__ = [
    "bincount",
    "confusion_matrix",
    "count_nonzero",
    "cumprod",
    "is_non_decreasing",
    "is_strictly_increasing",
    "log_sigmoid",
    "multiply_no_nan",
    "polyval",
    "reciprocal_no_nan",
    "reduce_euclidean_norm",
    "reduce_std",
    "reduce_variance",
    "scalar_mul",
    "xdivy",
    "xlogy",
    "zero_fraction",
]


@register_op("Cumprod")
def _cumprod_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def cumprod(
    x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Running products along ``axis`` (exclusive: each without its own element; reverse: from the end)."""
    xt = convert_to_tensor(x)
    if xt.dtype.kind not in "fiu" or xt._shape is None:
        raise GraphError(f"cumprod needs a numeric tensor of known rank, got {xt.name} {xt.shape}")
    a = S.normalize_axis(int(axis), len(xt._shape), xt.name)
    attrs = {"axis": a, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return make_op("Cumprod", [xt], attrs, name or "Cumprod").outputs[0]


@register_gradient("Cumprod")
def _cumprod_grad(op: Operation, grad: Tensor) -> list:
    # TF1's rule, exact for non-zero inputs (a zero input gives nan, as in TF)
    from .math_composite import cumsum

    x = op.inputs[0]
    a, ex, rev = op.attrs["axis"], op.attrs["exclusive"], op.attrs["reverse"]
    prod = cumprod(x, a, exclusive=ex, reverse=rev)
    out = cumsum(prod * grad, a, exclusive=ex, reverse=not rev)
    return [divide(out, x)]


@register_op("Bincount")
def _bincount_shape(op: Operation) -> list:
    return [(op.attrs["dtype"], (None,))]


not_differentiable("Bincount")


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: int | None = None,
    maxlength: int | None = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """How often each value 0, 1, ... occurs in the int32 ``arr`` (summing ``weights`` instead
    when given); the length is max(arr) + 1, at least ``minlength``, at most ``maxlength``."""
    a = convert_to_tensor(arr)
    if a.dtype != dtypes.int32:
        raise GraphError(f"bincount: arr {a.name} must be int32, got {a.dtype.name}")
    inputs = [a]
    dt = dtypes.as_dtype(dtype)
    if weights is not None:
        w = convert_to_tensor(weights)
        inputs.append(w)
        dt = w.dtype
    attrs = {"minlength": minlength, "maxlength": maxlength, "dtype": dt}
    return make_op("Bincount", inputs, attrs, name or "bincount").outputs[0]


def count_nonzero(
    input_tensor: Any = None,
    axis: Any = None,
    keepdims: bool | None = None,
    dtype: Any = dtypes.int64,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
    input: Any = None,
) -> Tensor:
    """The number of non-zero elements along ``axis`` (all axes when None)."""
    ax = resolve(axis, reduction_indices, "axis", "reduction_indices")
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "count_nonzero"):
        x = convert_to_tensor(resolve(input_tensor, input, "input_tensor", "input"))
        zero = zeros_like(x)
        nonzero = cast(not_equal(x, zero), dtypes.int64)
        return cast(reduce_sum(nonzero, axis=ax, keepdims=keep), dtype)


def reduce_variance(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The (population) variance along ``axis``."""
    with get_default_graph().name_scope(name or "reduce_variance"):
        x = convert_to_tensor(input_tensor)
        means = reduce_mean(x, axis=axis, keepdims=True)
        return reduce_mean(square(x - means), axis=axis, keepdims=keepdims)


def reduce_std(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The (population) standard deviation along ``axis``."""
    with get_default_graph().name_scope(name or "reduce_std"):
        return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """sqrt(sum(x ** 2)) along ``axis``."""
    with get_default_graph().name_scope(name or "reduce_euclidean_norm"):
        x = convert_to_tensor(input_tensor)
        return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))


def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> Tensor:
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule."""
    with get_default_graph().name_scope(name or "polyval"):
        xt = convert_to_tensor(x)
        if not coeffs:
            return zeros_like(xt)
        out = convert_to_tensor(coeffs[0], dtype=None if isinstance(coeffs[0], Tensor) else xt.dtype)
        for c in coeffs[1:]:
            out = c + out * xt
        return out


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    with get_default_graph().name_scope(name or "LogSigmoid"):
        return negative(softplus(negative(convert_to_tensor(x))))


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * log(y), 0 where x is 0."""
    with get_default_graph().name_scope(name or "xlogy"):
        xt, yt = convert_pair(x, y, "xlogy")
        zero = equal(xt, 0)
        safe_y = where(zero, zeros_like(yt) + 1, yt) if xt._shape == yt._shape else yt
        return where(zero, zeros_like(xt * yt), xt * log(safe_y))


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y, 0 where x is 0."""
    with get_default_graph().name_scope(name or "xdivy"):
        xt, yt = convert_pair(x, y, "xdivy")
        return where(equal(xt, 0), zeros_like(xt * yt), xt / yt)


register_op("MulNoNan")(_binary_shape)


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * y, 0 where y is 0 (even for x inf or nan)."""
    return binary("MulNoNan", x, y, name or "multiply_no_nan")


@register_gradient("MulNoNan")
def _mul_no_nan_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(multiply_no_nan(grad, y), x), reduce_to(multiply_no_nan(x, grad), y)]


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """1 / x, 0 where x is 0."""
    with get_default_graph().name_scope(name or "reciprocal_no_nan"):
        xt = convert_to_tensor(x)
        return div_no_nan(zeros_like(xt) + 1, xt)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """``scalar * x`` for a scalar (a Python number or a 0-d tensor)."""
    s = convert_to_tensor(scalar) if isinstance(scalar, Tensor) else scalar
    if isinstance(s, Tensor) and s._shape not in ((), None):
        raise GraphError(f"scalar_mul: {s.name} must be a scalar, got {s.shape}")
    return multiply(s, x, name=name or "scalar_mul") if isinstance(s, Tensor) else convert_to_tensor(x) * s


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value`` (float32)."""
    with get_default_graph().name_scope(name or "zero_fraction"):
        x = convert_to_tensor(value)
        return reduce_mean(cast(equal(x, zeros_like(x)), dtypes.float32))


def _monotone(x: Any, strict: bool, name: str) -> Tensor:
    with get_default_graph().name_scope(name):
        flat = reshape(convert_to_tensor(x), [-1])
        diff = (greater if strict else greater_equal)(flat[1:], flat[:-1])
        return reduce_all(diff)


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether the flattened ``x`` never decreases."""
    return _monotone(x, False, name or "is_non_decreasing")


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether the flattened ``x`` always increases."""
    return _monotone(x, True, name or "is_strictly_increasing")


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: int | None = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
    weights: Any = None,
) -> Tensor:
    """[num_classes, num_classes] counts (or weights) of each (label, prediction) pair;
    ``num_classes`` must be given here (TF1 may infer it from the values)."""
    if num_classes is None:
        raise GraphError("confusion_matrix: pass num_classes (inferring it from the values is not supported)")
    with get_default_graph().name_scope(name or "confusion_matrix"):
        lab = cast(convert_to_tensor(labels), dtypes.int64)
        pred = cast(convert_to_tensor(predictions), dtypes.int64)
        dt = dtypes.as_dtype(dtype)
        values = (
            cast(convert_to_tensor(weights), dt) if weights is not None else cast(zeros_like(lab) + 1, dt)
        )
        n = int(num_classes)
        return scatter_nd(stack([lab, pred], axis=1), values, convert_to_tensor([n, n], dtype=dtypes.int64))
