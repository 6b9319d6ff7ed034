"""Kernels of the batched matrix ops (numpy's / cupy's linalg over the last two axes)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel

log = logging.getLogger(__name__)


def _t(xp: Any, x: Any) -> Any:
    return xp.swapaxes(x, -1, -2)


@register_kernel("BatchMatMulV2", aliasing=Aliasing.FRESH, expensive=True)
def _batch_matmul(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    ax, ay = ctx.attr("adj_x"), ctx.attr("adj_y")
    return lambda x, y: xp.matmul(_t(xp, x) if ax else x, _t(xp, y) if ay else y)


def _invertible(xp: Any, fn: Any, what: str) -> Any:
    try:
        return fn()
    except xp.linalg.LinAlgError:
        raise ValueError(f"Input is not invertible: {what} found a singular matrix") from None


@register_kernel("MatrixInverse", aliasing=Aliasing.FRESH, expensive=True)
def _inverse(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    adj = ctx.attr("adjoint")
    return lambda x: _invertible(xp, lambda: xp.linalg.inv(_t(xp, x) if adj else x), "MatrixInverse")


@register_kernel("MatrixDeterminant", aliasing=Aliasing.FRESH, expensive=True)
def _det(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.asarray(xp.linalg.det(x), dtype=x.dtype)


@register_kernel("MatrixSolve", aliasing=Aliasing.FRESH, expensive=True)
def _solve(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    adj = ctx.attr("adjoint")

    def compute(a: Any, b: Any) -> Any:
        a = _t(xp, a) if adj else a
        return _invertible(xp, lambda: xp.linalg.solve(a, b), "MatrixSolve")

    return compute


@register_kernel("MatrixTriangularSolve", aliasing=Aliasing.FRESH, expensive=True)
def _triangular_solve(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    lower, adj = ctx.attr("lower"), ctx.attr("adjoint")

    def compute(a: Any, b: Any) -> Any:
        tri = xp.tril(a) if lower else xp.triu(a)
        tri = _t(xp, tri) if adj else tri
        return _invertible(xp, lambda: xp.linalg.solve(tri, b), "MatrixTriangularSolve").astype(b.dtype)

    return compute


@register_kernel("Cholesky", aliasing=Aliasing.FRESH, expensive=True)
def _cholesky(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def one(m: Any) -> Any:
        try:
            return xp.linalg.cholesky(m)
        except xp.linalg.LinAlgError:
            # TF logs the failure and fills the lower triangle with NaNs rather than failing the step
            log.warning("Cholesky decomposition was not successful: the input is not positive definite")
            return xp.tril(xp.full(m.shape, xp.nan, m.dtype))

    def compute(x: Any) -> Any:
        # TF reads only the lower triangle of the input
        sym = xp.tril(x) + _t(xp, xp.tril(x, -1))
        try:
            return xp.linalg.cholesky(sym)
        except xp.linalg.LinAlgError:
            flat = sym.reshape(-1, *sym.shape[-2:])
            return xp.stack([one(m) for m in flat]).reshape(sym.shape)

    return compute


@register_kernel("Qr", aliasing=Aliasing.FRESH, expensive=True)
def _qr(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    mode = "complete" if ctx.attr("full_matrices") else "reduced"
    return lambda x: tuple(xp.linalg.qr(x, mode=mode))


@register_kernel("Svd", aliasing=Aliasing.FRESH, expensive=True)
def _svd(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    full, uv = ctx.attr("full_matrices"), ctx.attr("compute_uv")

    def compute(x: Any) -> Any:
        if not uv:
            s = xp.linalg.svd(x, compute_uv=False)
            empty = xp.zeros((0,), x.dtype)
            return s, empty, empty
        u, s, vh = xp.linalg.svd(x, full_matrices=full)
        return s, u, _t(xp, vh)

    return compute


@register_kernel("MatrixDiag", aliasing=Aliasing.FRESH)
def _matrix_diag(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(d: Any) -> Any:
        n = d.shape[-1]
        out = xp.zeros((*d.shape, n), d.dtype)
        idx = xp.arange(n)
        out[..., idx, idx] = d
        return out

    return compute


@register_kernel("MatrixDiagPart", aliasing=Aliasing.FRESH)
def _matrix_diag_part(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.diagonal(x, axis1=-2, axis2=-1).copy()


@register_kernel("MatrixSetDiag", aliasing=Aliasing.FRESH)
def _matrix_set_diag(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(x: Any, d: Any) -> Any:
        out = xp.array(x, copy=True)
        k = min(x.shape[-2:])
        idx = xp.arange(k)
        out[..., idx, idx] = d
        return out

    return compute


@register_kernel("MatrixBandPart", aliasing=Aliasing.FRESH)
def _matrix_band_part(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    lower, upper = ctx.attr("num_lower"), ctx.attr("num_upper")

    def compute(x: Any) -> Any:
        m, n = x.shape[-2:]
        i = np.arange(m)[:, None]
        j = np.arange(n)[None, :]
        keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
        return xp.where(xp.asarray(keep), x, xp.zeros((), x.dtype))

    return compute
