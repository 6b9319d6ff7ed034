"""Math functions of TF1 built from registered ops: reduce_logsumexp, reduce_any / reduce_all,
logical_and / or / not / xor, argmin, truediv, to_float and the other to_* casts,
tensordot, cumsum. Their gradients are the parts' gradients."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor
from .array import dims_of, reshape, transpose, where
from .constant import constant
from .control import stop_gradient
from .math import cast, divide, equal, exp, log, matmul, negative, not_equal
from .reduction import argmax, reduce_max, reduce_min, reduce_sum

__all__ = [
    "arg_max",
    "arg_min",
    "argmin",
    "cumsum",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "tensordot",
    "to_bfloat16",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "truediv",
]


def reduce_logsumexp(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """log(sum(exp(x))) over ``axis``, shifted by the maximum so it neither overflows nor underflows."""
    ax = resolve(axis, reduction_indices, "axis", "reduction_indices")
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "ReduceLogSumExp"):
        x = convert_to_tensor(input_tensor)
        # The shift carries no gradient: the result's derivative is softmax(x) either way.
        peak = stop_gradient(reduce_max(x, ax, keepdims=True))
        total = log(reduce_sum(exp(x - peak), ax, keepdims=keep))
        return total + (peak if keep else reduce_max(stop_gradient(x), ax, keepdims=False))


def _bool(x: Any, what: str) -> Tensor:
    t = convert_to_tensor(x)
    if t.dtype != dtypes.bool_:
        raise GraphError(f"{what} needs bool tensors, but {t.name} is {t.dtype.name}")
    return t


def reduce_any(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    x = _bool(input_tensor, "reduce_any")
    ax = resolve(axis, reduction_indices, "axis", "reduction_indices")
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "Any"):
        return not_equal(reduce_max(cast(x, dtypes.int32), ax, keepdims=keep), 0)


def reduce_all(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    x = _bool(input_tensor, "reduce_all")
    ax = resolve(axis, reduction_indices, "axis", "reduction_indices")
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "All"):
        return not_equal(reduce_min(cast(x, dtypes.int32), ax, keepdims=keep), 0)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    return equal(_bool(x, "logical_not"), False, name=name or "LogicalNot")


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    a, b = _bool(x, "logical_and"), _bool(y, "logical_and")
    return where(a, b, False, name=name or "LogicalAnd")


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    a, b = _bool(x, "logical_or"), _bool(y, "logical_or")
    return where(a, True, b, name=name or "LogicalOr")


def logical_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    return not_equal(_bool(x, "logical_xor"), _bool(y, "logical_xor"), name=name or "LogicalXor")


def argmin(
    input: Any,
    axis: int | None = None,
    name: str | None = None,
    dimension: int | None = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Index of the first smallest value along ``axis`` (the first largest of -input)."""
    x = convert_to_tensor(input)
    if x.dtype.kind == "u":
        raise GraphError(f"argmin of unsigned {x.name} is not supported; cast it to a signed dtype")
    with get_default_graph().name_scope(name or "ArgMin"):
        return argmax(negative(x), resolve(axis, dimension, "axis", "dimension"), output_type=output_type)


def arg_max(input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:
    """TF1's ``tf.arg_max``: ``argmax`` with the axis as the second positional argument."""
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:
    """TF1's ``tf.arg_min``: ``argmin`` with the axis as the second positional argument."""
    return argmin(input, dimension, name=name, output_type=output_type)


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Division that casts integers to floats first (int8/16 to float32, int32/64 to float64, as TF):
    the same as ``divide`` and ``/``."""
    return divide(x, y, name=name)


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    return cast(x, dtypes.int64, name=name)


def to_bfloat16(x: Any, name: str = "ToBFloat16") -> Tensor:
    raise GraphError("bfloat16 is not a supported dtype; use to_float")


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over ``axes`` of a and b (an int n: a's last n with b's first n; or two lists of axes).
    Dimensions unknown now (a batch) are read from the inputs' shapes at run time."""
    with get_default_graph().name_scope(name or "Tensordot"):
        at, bt = convert_to_tensor(a), convert_to_tensor(b)
        sa, sb = at._shape, bt._shape
        if sa is None or sb is None:
            raise GraphError(f"tensordot needs inputs of known rank, got {at.shape} and {bt.shape}")
        ax_a, ax_b = _tensordot_axes(axes, len(sa), len(sb), at, bt)
        known = [(sa[i], sb[j]) for i, j in zip(ax_a, ax_b, strict=True) if None not in (sa[i], sb[j])]
        if any(x != y for x, y in known):
            raise GraphError(
                f"tensordot: contracted dims {[sa[i] for i in ax_a]} and {[sb[i] for i in ax_b]} differ"
            )
        free_a = [i for i in range(len(sa)) if i not in ax_a]
        free_b = [i for i in range(len(sb)) if i not in ax_b]
        da, db = dims_of(at), dims_of(bt)
        k = _product([da[i] for i in ax_a])
        left = reshape(transpose(at, free_a + ax_a), [_product([da[i] for i in free_a]), k])
        right = reshape(transpose(bt, ax_b + free_b), [k, _product([db[i] for i in free_b])])
        return reshape(matmul(left, right), [da[i] for i in free_a] + [db[i] for i in free_b])


def _tensordot_axes(axes: Any, ra: int, rb: int, at: Tensor, bt: Tensor) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        return list(range(ra - int(axes), ra)), list(range(int(axes)))
    ax_a = [axes[0]] if isinstance(axes[0], int) else list(axes[0])
    ax_b = [axes[1]] if isinstance(axes[1], int) else list(axes[1])
    return [S.normalize_axis(i, ra, at.name) for i in ax_a], [S.normalize_axis(i, rb, bt.name) for i in ax_b]


def _product(dims: list[Any]) -> Any:
    out: Any = 1
    for d in dims:
        out = out * d
    return out


def cumsum(
    x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Running sums along ``axis`` (a matmul with a triangular matrix: the axis length must be known)."""
    with get_default_graph().name_scope(name or "Cumsum"):
        xt = convert_to_tensor(x)
        if xt.dtype.kind not in "fiu" or xt._shape is None:
            raise GraphError(
                f"cumsum needs a numeric tensor of known rank, got {xt.name} {xt.shape} {xt.dtype.name}"
            )
        nd = len(xt._shape)
        a = S.normalize_axis(axis, nd, xt.name)
        n = xt._shape[a]
        if n is None:
            raise GraphError(f"cumsum needs dimension {a} of {xt.name} to be known, got {xt.shape}")
        # tri[i, j] = 1 when input i counts toward output j.
        i, j = np.indices((n, n))
        tri = (i >= j) if reverse else (i <= j)
        if exclusive:
            tri &= i != j
        moved = transpose(xt, [*[d for d in range(nd) if d != a], a]) if a != nd - 1 else xt
        summed = _matmul_last(moved, constant(tri.astype(xt.dtype)))
        if a == nd - 1:
            return summed
        back = list(range(nd - 1))
        back.insert(a, nd - 1)
        return transpose(summed, back)


def _matmul_last(x: Tensor, m: Tensor) -> Tensor:
    shape = x._shape
    assert shape is not None  # cumsum's callers know the rank
    if len(shape) == 2:
        return matmul(x, m)
    lead = shape[:-1]
    if sum(d is None for d in lead) > 1:
        raise GraphError(f"cumsum: {x.name} has more than one unknown dimension ({x.shape})")
    flat = reshape(x, [-1, shape[-1]]) if len(shape) != 1 else reshape(x, [1, shape[-1]])
    out = matmul(flat, m)
    return reshape(out, [-1 if d is None else d for d in lead] + [shape[-1]])
