"""Matrix decompositions as TF1 defines them: Cholesky (with TF1's gradient), Qr and Svd (their
outputs in TF's order: ``svd`` returns s, u, v; gradients in linalg_decomp_grad.py)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array_composite import eye
from .linalg import _matrix, batch_matmul, matrix_triangular_solve
from .linalg_structure import matrix_band_part, matrix_diag, matrix_diag_part, matrix_transpose

__all__ = ["cholesky", "qr", "svd"]


@register_op("Cholesky")
def _cholesky_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def cholesky(input: Any, name: str | None = None) -> Tensor:
    """The lower-triangular L with ``L @ L^T = input`` for each symmetric positive definite matrix."""
    x = convert_to_tensor(input)
    _matrix(x, "cholesky", square=True)
    return make_op("Cholesky", [x], None, name or "Cholesky").outputs[0]


@register_gradient("Cholesky")
def _cholesky_grad(op: Operation, grad: Tensor) -> list:
    # TF1's rule (Murray 2016, eq. 10): Phi(L^T dL) with half the diagonal, mapped back through L^-1
    lo = op.outputs[0]
    shape = lo._shape
    if not S.is_fully_defined(shape):
        raise GraphError(f"the gradient of {op.name} needs the static shape of its input")
    l_inv = matrix_triangular_solve(lo, eye(shape[-1], batch_shape=list(shape[:-2]) or None, dtype=lo.dtype))
    middle = batch_matmul(lo, grad, True, False)
    middle = middle - 0.5 * matrix_diag(matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = batch_matmul(batch_matmul(l_inv, middle, True, False), l_inv)
    return [(grad_a + matrix_transpose(grad_a)) * 0.5]


def _sizes(x: Tensor) -> tuple[int | None, int | None]:
    s = x._shape
    return (None, None) if s is None else (s[-2], s[-1])


@register_op("Qr")
def _qr_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None), (x.dtype, None)]
    m, n = _sizes(x)
    k = m if op.attrs["full_matrices"] else (None if m is None or n is None else min(m, n))
    batch = x._shape[:-2]
    return [(x.dtype, (*batch, m, k)), (x.dtype, (*batch, k, n))]


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(q, r) with ``q @ r = input``, q orthonormal columns, r upper triangular."""
    x = convert_to_tensor(input)
    _matrix(x, "qr")
    op = make_op("Qr", [x], {"full_matrices": bool(full_matrices)}, name or "Qr")
    return op.outputs[0], op.outputs[1]


@register_op("Svd")
def _svd_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)] * 3
    m, n = _sizes(x)
    k = None if m is None or n is None else min(m, n)
    batch = x._shape[:-2]
    full = op.attrs["full_matrices"]
    return [
        (x.dtype, (*batch, k)),
        (x.dtype, (*batch, m, m if full else k)),
        (x.dtype, (*batch, n, n if full else k)),
    ]


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None) -> Any:
    """Singular values s (descending) and, with ``compute_uv``, u and v with
    ``u @ diag(s) @ v^T = tensor``: returns ``s`` or ``(s, u, v)``."""
    with get_default_graph().name_scope(name or "Svd"):
        x = convert_to_tensor(tensor)
        _matrix(x, "svd")
        op = make_op(
            "Svd", [x], {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}, "Svd"
        )
        s, u, v = op.outputs
        return (s, u, v) if compute_uv else s
