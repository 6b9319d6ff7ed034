"""Gradients of Qr and Svd, for the cases TF1 differentiates (real matrices of static shape).

Qr: square and tall matrices (tall only with ``full_matrices=False``), and wide ones by splitting
``a = [x | y]`` with ``x`` square (``q`` and ``r``'s left square block factor ``x``). Svd: every
shape with or without u / v, except full u / v of matrices whose sides differ by more than one. Both rules are the standard matrix-calculus results (Walter &
Lehmann for QR; Townsend's notes on the SVD, as TF1 uses): distinct nonzero singular values make
the SVD's gradient finite.
"""

from __future__ import annotations

from antcolony.errors import GraphError

from ..core import Operation, Tensor
from ..gradients import register_gradient
from .array import concat, ones_like, zeros_like
from .linalg import batch_matmul, matrix_triangular_solve
from .linalg_structure import matrix_band_part, matrix_diag, matrix_set_diag, matrix_transpose
from .math import reciprocal


def _static_mn(op: Operation) -> tuple[int, int]:
    shape = op.inputs[0]._shape
    if shape is None or shape[-2] is None or shape[-1] is None:
        raise GraphError(
            f"the gradient of {op.name} needs the static matrix shape of {op.inputs[0].name}; "
            "give the input a known [..., rows, cols] shape"
        )
    return int(shape[-2]), int(shape[-1])


def _times_r_inv_t(x: Tensor, r: Tensor) -> Tensor:
    """``x @ r^-T`` for an upper-triangular ``r``: ``(r^-1 x^T)^T``."""
    return matrix_transpose(matrix_triangular_solve(r, matrix_transpose(x), lower=False))


def _qr_square_grad(q: Tensor, r: Tensor, dq: Tensor, dr: Tensor) -> Tensor:
    qdq = batch_matmul(q, dq, True, False)
    rdr = batch_matmul(r, dr, False, True)
    lower = matrix_band_part(qdq - matrix_transpose(qdq) + rdr - matrix_transpose(rdr), -1, 0)
    from_r = batch_matmul(q, dr + _times_r_inv_t(lower, r))
    from_q = _times_r_inv_t(dq - batch_matmul(q, qdq), r)
    return from_r + from_q


@register_gradient("Qr")
def _qr_grad(op: Operation, dq: Tensor, dr: Tensor) -> list:
    m, n = _static_mn(op)
    q, r = op.outputs
    if m > n and op.attrs["full_matrices"]:
        raise GraphError(
            f"the gradient of {op.name} is not defined for a tall matrix ({m}x{n}) with "
            "full_matrices=True (nor in TF1); use full_matrices=False"
        )
    if m >= n:
        return [_qr_square_grad(q, r, dq, dr)]
    a = op.inputs[0]
    y, u = a[..., :, m:], r[..., :, :m]
    dv = dr[..., :, m:]
    dx = _qr_square_grad(q, u, dq + batch_matmul(y, dv, False, True), dr[..., :, :m])
    return [concat([dx, batch_matmul(q, dv)], -1)]


@register_gradient("Svd")
def _svd_grad(op: Operation, ds: Tensor, du: Tensor, dv: Tensor) -> list:
    m, n = _static_mn(op)
    s, u, v = op.outputs
    if not op.attrs["compute_uv"]:
        from .linalg_decomp import svd

        _, u, v = svd(op.inputs[0], full_matrices=False)
        return [batch_matmul(batch_matmul(u, matrix_diag(ds)), v, False, True)]
    if op.attrs["full_matrices"] and abs(m - n) > 1:
        raise GraphError(
            f"the gradient of {op.name} with full_matrices=True is defined for matrices whose sides "
            f"differ by at most 1 (nor in TF1), got {m}x{n}; use full_matrices=False"
        )
    transposed = m > n
    if transposed:  # work on a^T, whose u and v are a's v and u
        u, v, du, dv, m, n = v, u, dv, du, n, m
    s_mat, s2 = matrix_diag(s), s * s
    gaps = s2[..., None, :] - s2[..., :, None]
    # 1 / (s_j^2 - s_i^2) off the diagonal; the diagonal (1 there, to stay finite) becomes 0
    f = matrix_set_diag(reciprocal(matrix_set_diag(gaps, ones_like(s))), zeros_like(s))
    v1, dv1 = v[..., :, :m], dv[..., :, :m]
    f_u = f * batch_matmul(u, du, True, False)
    f_v = f * batch_matmul(v1, dv1, True, False)
    inner = (
        matrix_diag(ds)
        + batch_matmul(f_u + matrix_transpose(f_u), s_mat)
        + batch_matmul(s_mat, f_v + matrix_transpose(f_v))
    )
    grad = batch_matmul(batch_matmul(u, inner), v1, False, True)
    if m != n:
        dv1_t = matrix_transpose(dv1)
        rest = dv1_t - batch_matmul(batch_matmul(dv1_t, v1), v1, False, True)
        if op.attrs["full_matrices"]:  # v's last n - m columns
            v2, dv2 = v[..., :, m:], dv[..., :, m:]
            rest = rest - batch_matmul(batch_matmul(v1, dv2, True, False), v2, False, True)
        grad = grad + batch_matmul(batch_matmul(u, matrix_diag(reciprocal(s))), rest)
    return [matrix_transpose(grad) if transposed else grad]
