"""Eigen-decomposition of self-adjoint matrices and the cross product, as TF1 spells them:
``tf.self_adjoint_eig`` / ``tf.linalg.eigh`` (eigenvalues ascending, eigenvectors as columns),
``tf.self_adjoint_eigvals`` / ``tf.linalg.eigvalsh``, and ``tf.cross`` / ``tf.linalg.cross``.

The decomposition reads only the lower triangle of its input, so its gradient is folded onto that
triangle: with ``A = V diag(e) V^T``, the gradient ``G = V (diag(ge) + F * (V^T gV)) V^T``
(``F[i, j] = 1 / (e[j] - e[i])`` off the diagonal, 0 on it) becomes ``G + G^T`` below the
diagonal and ``G``'s own diagonal on it. The kernel is devices/kernels/linalg_eigh.py."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor, get_default_graph
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array import expand_dims, stack, where, zeros_like
from .array_composite import squeeze
from .linalg import _matrix, batch_matmul
from .linalg_decomp import cholesky
from .linalg_structure import (
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
)
from .math import equal, log, reduce_sum

__all__ = ["cross", "logdet", "matvec", "self_adjoint_eig", "self_adjoint_eigvals"]


@register_op("SelfAdjointEigV2")
def _eigh_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None), (x.dtype, None)]
    return [(x.dtype, (*x._shape[:-1],)), (x.dtype, x._shape if op.attrs["compute_v"] else (0,))]


@register_gradient("SelfAdjointEigV2")
def _eigh_grad(op: Operation, grad_e: Any, grad_v: Any) -> list:
    e, v = op.outputs
    if not op.attrs["compute_v"]:  # the eigenvalues alone: the vectors again, for the gradient
        v = make_op("SelfAdjointEigV2", [op.inputs[0]], {"compute_v": True}, "SelfAdjointEigV2").outputs[1]
    if grad_e is None:
        grad_e = zeros_like(e)
    inner = matrix_diag(grad_e)
    if op.attrs["compute_v"] and grad_v is not None:
        gaps = expand_dims(e, -2) - expand_dims(e, -1)  # [i, j] = e[j] - e[i]
        safe = where(equal(gaps, 0.0), zeros_like(gaps), 1.0 / where(equal(gaps, 0.0), gaps + 1.0, gaps))
        inner = inner + safe * batch_matmul(v, grad_v, adj_x=True)
    full = batch_matmul(v, batch_matmul(inner, v, adj_y=True))
    folded = matrix_band_part(full + matrix_transpose(full), -1, 0)
    return [matrix_set_diag(folded, matrix_diag_part(full))]


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(e, v): the eigenvalues (ascending) and eigenvectors (columns of v) of the self-adjoint
    matrices ``tensor`` [..., n, n], from their lower triangles."""
    x = convert_to_tensor(tensor)
    _matrix(x, "self_adjoint_eig")
    op = make_op("SelfAdjointEigV2", [x], {"compute_v": True}, name or "SelfAdjointEigV2")
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """The eigenvalues (ascending) of the self-adjoint matrices ``tensor``."""
    x = convert_to_tensor(tensor)
    _matrix(x, "self_adjoint_eigvals")
    return make_op("SelfAdjointEigV2", [x], {"compute_v": False}, name or "SelfAdjointEigV2").outputs[0]


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """The cross product of 3-vectors along the last axis of ``a`` and ``b``."""
    x, y = convert_to_tensor(a), convert_to_tensor(b)
    y = convert_to_tensor(y, dtype=x.dtype)
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
    return stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=-1, name=name or "Cross")


def matvec(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """``a @ b`` for matrices ``a`` [..., m, n] and vectors ``b`` [..., n]."""
    x = convert_to_tensor(a)
    y = convert_to_tensor(b, dtype=x.dtype)
    product = batch_matmul(x, expand_dims(y, -1), adj_x=bool(transpose_a or adjoint_a))
    return squeeze(product, [-1], name=name or "MatVec")


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, from their Cholesky factors."""
    with get_default_graph().name_scope(name or "logdet"):
        factor = cholesky(convert_to_tensor(matrix))
        return 2.0 * reduce_sum(log(matrix_diag_part(factor)), axis=-1)
