"""The structure of batched matrices as TF1 spells it: MatrixDiag, MatrixDiagPart, MatrixSetDiag,
MatrixBandPart (ops with gradients), and the composites matrix_transpose, trace, norm,
tensor_diag / tensor_diag_part (``tf.diag`` / ``tf.diag_part``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import register_gradient
from ..legacy_args import resolve
from ..op_builder import convert_pair, convert_to_tensor, make_op
from ..registry import register_op
from .array import reshape, transpose, zeros_like
from .array_composite import squeeze
from .math import abs, pow, reduce_max, reduce_sum, sqrt

__all__ = [
    "adjoint",
    "matrix_band_part",
    "matrix_diag",
    "matrix_diag_part",
    "matrix_set_diag",
    "matrix_transpose",
    "norm",
    "tensor_diag",
    "tensor_diag_part",
    "trace",
]


@register_op("MatrixDiag")
def _diag_shape(op: Operation) -> list:
    d = op.inputs[0]
    return [(d.dtype, None if d._shape is None else (*d._shape, d._shape[-1]))]


@register_op("MatrixDiagPart")
def _diag_part_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    m, n = x._shape[-2:]
    k = None if m is None or n is None else min(m, n)
    return [(x.dtype, (*x._shape[:-2], k))]


@register_op("MatrixSetDiag")
@register_op("MatrixBandPart")
def _same_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def _at_least(x: Tensor, rank: int, what: str) -> Tensor:
    if x._shape is not None and len(x._shape) < rank:
        raise GraphError(f"{what}: {x.name} must have rank >= {rank}, got {x.shape}")
    return x


def matrix_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """Square matrices with ``diagonal``'s last axis on their diagonals, zeros elsewhere."""
    d = _at_least(convert_to_tensor(diagonal), 1, "matrix_diag")
    return make_op("MatrixDiag", [d], None, name or "MatrixDiag").outputs[0]


def matrix_diag_part(input: Any, name: str | None = None) -> Tensor:
    """The main diagonal of each matrix (its first min(rows, columns) entries)."""
    x = _at_least(convert_to_tensor(input), 2, "matrix_diag_part")
    return make_op("MatrixDiagPart", [x], None, name or "MatrixDiagPart").outputs[0]


def matrix_set_diag(input: Any, diagonal: Any, name: str | None = None) -> Tensor:
    """``input`` with the main diagonal of each matrix replaced by ``diagonal``."""
    x, d = convert_pair(input, diagonal, "matrix_set_diag")
    _at_least(x, 2, "matrix_set_diag")
    return make_op("MatrixSetDiag", [x, d], None, name or "MatrixSetDiag").outputs[0]


def matrix_band_part(input: Any, num_lower: int, num_upper: int, name: str | None = None) -> Tensor:
    """Each matrix with entries outside the band zeroed: ``num_lower`` sub-diagonals and
    ``num_upper`` super-diagonals kept (negative: the whole triangle)."""
    x = _at_least(convert_to_tensor(input), 2, "matrix_band_part")
    attrs = {
        "num_lower": _static_int(num_lower, "num_lower"),
        "num_upper": _static_int(num_upper, "num_upper"),
    }
    return make_op("MatrixBandPart", [x], attrs, name or "MatrixBandPart").outputs[0]


def _static_int(v: Any, what: str) -> int:
    if isinstance(v, Tensor):
        if v.op.type != "Const":
            raise GraphError(f"matrix_band_part: {what} must be a Python int or a constant")
        v = v.op.attrs["value"]
    return int(v)


@register_gradient("MatrixDiag")
def _diag_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_diag_part(grad)]


@register_gradient("MatrixDiagPart")
def _diag_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_set_diag(zeros_like(op.inputs[0]), grad)]


@register_gradient("MatrixSetDiag")
def _set_diag_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_set_diag(grad, zeros_like(op.inputs[1])), matrix_diag_part(grad)]


@register_gradient("MatrixBandPart")
def _band_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_band_part(grad, op.attrs["num_lower"], op.attrs["num_upper"])]


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Each matrix transposed (the last two axes swapped)."""
    x = convert_to_tensor(a)
    if x._shape is None or len(x._shape) < 2:
        raise GraphError(f"matrix_transpose: {x.name} needs a known rank >= 2, got {x.shape}")
    r = len(x._shape)
    return transpose(x, [*range(r - 2), r - 1, r - 2], name=name)


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of each matrix (the transpose, for real dtypes)."""
    return matrix_transpose(matrix, name=name or "adjoint")


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sum of each matrix's main diagonal."""
    with get_default_graph().name_scope(name or "Trace"):
        return reduce_sum(matrix_diag_part(x), axis=-1)


def tensor_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.diag``: for ``diagonal`` of shape D, the tensor of shape D + D with it on its
    diagonal."""
    with get_default_graph().name_scope(name or "Diag"):
        d = convert_to_tensor(diagonal)
        shape = d._shape
        if not S.is_fully_defined(shape) or not shape:
            raise GraphError(f"diag: {d.name} needs a fully known shape of rank >= 1, got {d.shape}")
        return reshape(matrix_diag(reshape(d, [-1])), [*shape, *shape])


def tensor_diag_part(input: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.diag_part``: the inverse of ``tf.diag`` (input of shape D + D)."""
    with get_default_graph().name_scope(name or "DiagPart"):
        x = convert_to_tensor(input)
        shape = x._shape
        if (
            not S.is_fully_defined(shape)
            or not shape
            or len(shape) % 2
            or shape[: len(shape) // 2] != shape[len(shape) // 2 :]
        ):
            raise GraphError(f"diag_part: {x.name} must have a known shape D + D, got {x.shape}")
        d = shape[: len(shape) // 2]
        n = int(np.prod(d))
        return reshape(matrix_diag_part(reshape(x, [n, n])), d)


def norm(
    tensor: Any,
    ord: Any = "euclidean",
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Vector norms over one axis (or all), matrix norms over a pair of axes: 'euclidean' (the
    Frobenius norm for matrices), 'fro', 1, np.inf and, for vectors, any p > 0."""
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "norm"):
        x = convert_to_tensor(tensor)
        if x._shape is None:
            raise GraphError(f"norm: {x.name} needs a known rank")
        rank = len(x._shape)
        axes = list(range(rank)) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
        axes = [S.normalize_axis(int(a), rank, x.name) for a in axes]
        is_matrix = axis is not None and len(axes) == 2
        if axis is not None and len(axes) not in (1, 2):
            raise GraphError(f"norm: axis must be an int or a pair of ints, got {axis!r}")
        if ord in ("euclidean", "fro") or (ord == 2 and not is_matrix):
            if ord == "fro" and not is_matrix:
                raise GraphError("norm: ord='fro' needs a pair of axes")
            result = sqrt(reduce_sum(x * x, axis=axes, keepdims=True))
        elif is_matrix and ord in (1, np.inf):
            # 1: the largest column sum; inf: the largest row sum
            inner, outer = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            result = reduce_max(reduce_sum(abs(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
        elif is_matrix:
            raise GraphError(
                f"norm: matrix ord {ord!r} is not supported; use 'euclidean', 'fro', 1 or np.inf"
            )
        elif ord == 1:
            result = reduce_sum(abs(x), axis=axes, keepdims=True)
        elif ord == np.inf:
            result = reduce_max(abs(x), axis=axes, keepdims=True)
        elif isinstance(ord, (int, float)) and ord > 0:
            result = pow(reduce_sum(pow(abs(x), float(ord)), axis=axes, keepdims=True), 1.0 / float(ord))
        else:
            raise GraphError(f"norm: ord {ord!r} is not supported; use 'euclidean', 'fro', np.inf or p > 0")
        return result if keep else squeeze(result, axes)
