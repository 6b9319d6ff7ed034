"""Batched matrix products and solves as TF1 defines them: BatchMatMulV2 (numpy broadcasting of
the batch axes), MatrixInverse, MatrixDeterminant, MatrixSolve, MatrixTriangularSolve, with
TF1's gradients. Matrices are the last two axes; ``adjoint`` is the transpose (real dtypes)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_pair, convert_to_tensor, make_op
from ..registry import register_op
from .array import expand_dims
from .math import matmul as matmul_2d
from .math import negative, reduce_to

__all__ = [
    "matmul",
    "matrix_determinant",
    "matrix_inverse",
    "matrix_solve",
    "matrix_triangular_solve",
]


def _matrix(x: Tensor, what: str, square: bool = False) -> None:
    if x.dtype.kind != "f":
        raise GraphError(f"{what}: {x.name} must be float32 or float64, got {x.dtype.name}")
    s = x._shape
    if s is None:
        return
    if len(s) < 2:
        raise GraphError(
            f"{what}: {x.name} must have rank >= 2 (matrices in its last two axes), got {x.shape}"
        )
    if square and None not in s[-2:] and s[-1] != s[-2]:
        raise GraphError(f"{what}: {x.name} must hold square matrices, got {x.shape}")


def _product_shape(a: S.Shape, b: S.Shape, adj_a: bool, adj_b: bool) -> S.Shape:
    if a is None or b is None:
        return None
    m, k = (a[-1], a[-2]) if adj_a else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_b else (b[-2], b[-1])
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"matrix products need matching inner dimensions, got {k} and {k2}")
    return (*S.broadcast(a[:-2], b[:-2]), m, n)  # type: ignore[misc]


@register_op("BatchMatMulV2")
def _batch_matmul_shape(op: Operation) -> list:
    x, y = op.inputs
    return [(x.dtype, _product_shape(x._shape, y._shape, op.attrs["adj_x"], op.attrs["adj_y"]))]


def batch_matmul(
    x: Tensor, y: Tensor, adj_x: bool = False, adj_y: bool = False, name: str | None = None
) -> Tensor:
    return make_op("BatchMatMulV2", [x, y], {"adj_x": adj_x, "adj_y": adj_y}, name or "MatMul").outputs[0]


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """``a @ b`` over the last two axes, the leading (batch) axes broadcast; rank-2 operands use
    MatMul, as TF1's ``tf.matmul``."""
    at, bt = convert_pair(a, b, name or "MatMul")
    ta, tb = transpose_a or adjoint_a, transpose_b or adjoint_b
    if at._shape is not None and bt._shape is not None and len(at._shape) == 2 == len(bt._shape):
        return matmul_2d(at, bt, transpose_a=ta, transpose_b=tb, name=name)
    for t in (at, bt):
        if t._shape is not None and len(t._shape) < 2:
            raise GraphError(f"matmul: {t.name} must have rank >= 2, got {t.shape}")
    return batch_matmul(at, bt, ta, tb, name)


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    ax, ay = op.attrs["adj_x"], op.attrs["adj_y"]
    if not ax and not ay:
        gx, gy = batch_matmul(grad, y, False, True), batch_matmul(x, grad, True, False)
    elif not ax:
        gx, gy = batch_matmul(grad, y), batch_matmul(grad, x, True, False)
    elif not ay:
        gx, gy = batch_matmul(y, grad, False, True), batch_matmul(x, grad)
    else:
        gx, gy = batch_matmul(y, grad, True, True), batch_matmul(grad, x, True, True)
    return [reduce_to(gx, x), reduce_to(gy, y)]


@register_op("MatrixInverse")
def _inverse_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """The inverse of each square matrix (of its adjoint with ``adjoint``)."""
    x = convert_to_tensor(input)
    _matrix(x, "matrix_inverse", square=True)
    return make_op("MatrixInverse", [x], {"adjoint": bool(adjoint)}, name or "MatrixInverse").outputs[0]


@register_gradient("MatrixInverse")
def _inverse_grad(op: Operation, grad: Tensor) -> list:
    inv = op.outputs[0]
    adj = op.attrs["adjoint"]
    return [negative(batch_matmul(inv, batch_matmul(grad, inv, adj, not adj), not adj, False))]


@register_op("MatrixDeterminant")
def _det_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, None if x._shape is None else x._shape[:-2])]


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:
    """The determinant of each square matrix."""
    x = convert_to_tensor(input)
    _matrix(x, "matrix_determinant", square=True)
    return make_op("MatrixDeterminant", [x], None, name or "MatrixDeterminant").outputs[0]


@register_gradient("MatrixDeterminant")
def _det_grad(op: Operation, grad: Tensor) -> list:
    # d det(A) / dA = det(A) * inv(A)^T
    a, det = op.inputs[0], op.outputs[0]
    scale = expand_dims(expand_dims(grad * det, -1), -1)
    return [scale * matrix_inverse(a, adjoint=True)]


@register_op("MatrixSolve")
def _solve_shape(op: Operation) -> list:
    a, b = op.inputs
    if a._shape is None or b._shape is None:
        return [(b.dtype, b._shape)]
    batch = S.broadcast(a._shape[:-2], b._shape[:-2]) or ()
    return [(b.dtype, (*batch, a._shape[-1], b._shape[-1]))]


register_op("MatrixTriangularSolve")(_solve_shape)


def _solve_operands(matrix: Any, rhs: Any, what: str) -> tuple[Tensor, Tensor]:
    a, b = convert_pair(matrix, rhs, what)
    _matrix(a, what, square=True)
    _matrix(b, what)
    inner = (None, None) if a._shape is None or b._shape is None else (a._shape[-1], b._shape[-2])
    if None not in inner and inner[0] != inner[1]:
        raise GraphError(f"{what}: matrix {a.name} {a.shape} and rhs {b.name} {b.shape} do not match")
    return a, b


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """X with ``matrix @ X = rhs`` (``adjoint(matrix) @ X = rhs`` with ``adjoint``)."""
    a, b = _solve_operands(matrix, rhs, "matrix_solve")
    return make_op("MatrixSolve", [a, b], {"adjoint": bool(adjoint)}, name or "MatrixSolve").outputs[0]


def matrix_triangular_solve(
    matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Tensor:
    """X with ``matrix @ X = rhs``, reading only the lower (or upper) triangle of ``matrix``."""
    a, b = _solve_operands(matrix, rhs, "matrix_triangular_solve")
    attrs = {"lower": bool(lower), "adjoint": bool(adjoint)}
    return make_op("MatrixTriangularSolve", [a, b], attrs, name or "MatrixTriangularSolve").outputs[0]


def _solve_grads(op: Operation, grad_b: Tensor) -> Tensor:
    c = op.outputs[0]
    if op.attrs["adjoint"]:
        return negative(batch_matmul(c, grad_b, False, True))
    return negative(batch_matmul(grad_b, c, False, True))


@register_gradient("MatrixSolve")
def _solve_grad(op: Operation, grad: Tensor) -> list:
    a, b = op.inputs
    grad_b = matrix_solve(a, grad, adjoint=not op.attrs["adjoint"])
    return [reduce_to(_solve_grads(op, grad_b), a), reduce_to(grad_b, b)]


@register_gradient("MatrixTriangularSolve")
def _triangular_solve_grad(op: Operation, grad: Tensor) -> list:
    from .linalg_structure import matrix_band_part

    a, b = op.inputs
    lower = op.attrs["lower"]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not op.attrs["adjoint"])
    grad_a = (
        matrix_band_part(_solve_grads(op, grad_b), -1, 0)
        if lower
        else matrix_band_part(_solve_grads(op, grad_b), 0, -1)
    )
    return [reduce_to(grad_a, a), reduce_to(grad_b, b)]
