"""Kernels of the SparseApply* ops: optimizer updates of the rows an IndexedSlices gradient
names, in place (``VarRef.mutable``), as TF1's optimizers apply them.

TF1's optimizers sum the rows of repeated indices before a sparse update
(``_apply_sparse_duplicate_indices``); these kernels do the same (``dedup``), so one step updates
each named row once. Momentum, Adagrad and RMSProp touch those rows only; Adam (TF1's
``_apply_sparse``) decays the whole of m and v, adds the rows' terms, and updates the whole
variable.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from ..resources import check_ref
from .elementwise import Scratch, run_chunked
from .registry import Aliasing, Compute, KernelContext, register_kernel
from .segment import check_ids
from .training import adam_alpha, adam_coefficients, scalar
from .ufunc_at import ufunc_at


def dedup(xp: Any, indices: Any, rows: Any) -> tuple[Any, Any]:
    """(distinct indices, their rows summed), or the inputs when no index repeats."""
    idx = xp.asarray(indices).reshape(-1)
    if idx.size < 2:
        return idx, rows
    unique, inverse = xp.unique(idx, return_inverse=True)
    if unique.size == idx.size:
        return idx, rows
    summed = xp.zeros((unique.size, *rows.shape[1:]), dtype=rows.dtype)
    ufunc_at(xp, xp.add, summed, inverse.reshape(-1), rows)
    return unique, summed


def _rows(xp: Any, op: Any, ref: Any, grad: Any, indices: Any) -> tuple[Any, Any, Any]:
    """(the variable's array to update in place, distinct indices, their gradient rows)."""
    r = check_ref(ref, op)
    value = r.read()
    n = xp.shape(indices)[0] if xp.ndim(indices) else 1
    if xp.ndim(value) == 0 or tuple(grad.shape) != (n, *value.shape[1:]):
        raise InvalidArgumentError(
            None,
            op,
            f"gradient rows of shape {tuple(grad.shape)} do not match {n} indices into variable {r.name} "
            f"of shape {tuple(value.shape)}",
        )
    check_ids(xp.asarray(indices), value.shape[0], "indices", op.name)
    del value  # (a reference held here would make mutable() copy)
    idx, g = dedup(xp, indices, grad)
    return r.mutable(), idx, g


def _slot(op: Any, ref: Any, like: Any) -> Any:
    r = check_ref(ref, op)
    value = r.read()
    if value.shape != like.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"slot {r.name} of shape {tuple(value.shape)} does not match its variable of shape {like.shape}",
        )
    del value
    return r.mutable()


@register_kernel("SparseApplyMomentum", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_momentum(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")

    def compute(var: Any, accum: Any, lr: Any, grad: Any, indices: Any, momentum: Any) -> Any:
        w, idx, g = _rows(xp, op, var, grad, indices)
        a = _slot(op, accum, w)
        # accum = accum * momentum + g; var -= lr * accum (Nesterov: g*lr + accum*momentum*lr)
        acc = a[idx]
        acc *= momentum
        acc += g
        a[idx] = acc
        step = g * lr + acc * momentum * lr if nesterov else acc * lr
        w[idx] -= step
        return w

    return compute


@register_kernel("SparseApplyAdagrad", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_adagrad(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, accum: Any, lr: Any, grad: Any, indices: Any) -> Any:
        w, idx, g = _rows(xp, op, var, grad, indices)
        a = _slot(op, accum, w)
        # accum += g**2; var -= lr * g / sqrt(accum)
        acc = a[idx]
        acc += g * g
        a[idx] = acc
        w[idx] -= g * lr / xp.sqrt(acc)
        return w

    return compute


def _sparse_rmsprop(ctx: KernelContext, centered: bool) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, *args: Any) -> Any:
        grad, indices = args[-2:]
        w, idx, g = _rows(xp, op, var, grad, indices)
        ms_ref, mom_ref, lr, rho, momentum, eps = args[1:-2] if centered else args[:-2]
        ms, mom = _slot(op, ms_ref, w), _slot(op, mom_ref, w)
        one_minus_rho = 1 - scalar(rho)
        # ms = ms * rho + g**2 * (1 - rho) (centered: mg likewise with g, ms - mg**2 used);
        # mom = mom * momentum + lr * g / sqrt(ms + eps); var -= mom
        ms_rows = ms[idx] * rho + g * g * one_minus_rho
        ms[idx] = ms_rows
        denominator = ms_rows
        if centered:
            mg = _slot(op, args[0], w)
            mg_rows = mg[idx] * rho + g * one_minus_rho
            mg[idx] = mg_rows
            denominator = ms_rows - mg_rows * mg_rows
        mom_rows = mom[idx] * momentum + lr * g / xp.sqrt(denominator + eps)
        mom[idx] = mom_rows
        w[idx] -= mom_rows
        return w

    return compute


@register_kernel("SparseApplyRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_rmsprop(ctx: KernelContext) -> Compute:
    return _sparse_rmsprop(ctx, centered=False)


@register_kernel("SparseApplyCenteredRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_centered_rmsprop(ctx: KernelContext) -> Compute:
    return _sparse_rmsprop(ctx, centered=True)


@register_kernel("SparseApplyAdadelta", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_adadelta(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(
        var: Any, accum: Any, accum_update: Any, lr: Any, rho: Any, eps: Any, grad: Any, indices: Any
    ) -> Any:
        w, idx, g = _rows(xp, op, var, grad, indices)
        acc, upd = _slot(op, accum, w), _slot(op, accum_update, w)
        one_minus_rho = 1 - scalar(rho)
        # accum = accum * rho + g**2 (1 - rho); update = sqrt(accum_update + eps) / sqrt(accum + eps) * g;
        # var -= lr * update; accum_update = accum_update * rho + update**2 (1 - rho)
        acc_rows = acc[idx] * rho + g * g * one_minus_rho
        acc[idx] = acc_rows
        upd_rows = upd[idx]
        step = xp.sqrt(upd_rows + eps) / xp.sqrt(acc_rows + eps) * g
        w[idx] -= step * lr
        upd[idx] = upd_rows * rho + step * step * one_minus_rho
        return w

    return compute


@register_kernel("SparseApplyAdam", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_adam(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    scratch = Scratch(2)
    coefficients = adam_coefficients(xp)

    def compute(
        var: Any,
        m: Any,
        v: Any,
        beta1_power: Any,
        beta2_power: Any,
        lr: Any,
        beta1: Any,
        beta2: Any,
        epsilon: Any,
        grad: Any,
        indices: Any,
    ) -> Any:
        w, idx, g = _rows(xp, op, var, grad, indices)
        m_a, v_a = _slot(op, m, w), _slot(op, v, w)
        one_minus_b1, one_minus_b2, eps = coefficients(beta1, beta2, epsilon)
        alpha = adam_alpha(xp, lr, beta1_power, beta2_power)
        # TF1 AdamOptimizer._apply_sparse: m = m * beta1, then m[idx] += g * (1 - beta1); v
        # likewise with g*g and beta2; then var -= alpha * m / (sqrt(v) + eps) over every row.
        m_a *= beta1
        v_a *= beta2
        m_a[idx] += g * one_minus_b1
        v_a[idx] += g * g * one_minus_b2

        def chunk(wc: Any, mc: Any, vc: Any, t0: Any, t1: Any) -> None:
            xp.sqrt(vc, t0)
            t0 += eps
            xp.multiply(mc, alpha, t1)
            t1 /= t0
            wc -= t1

        run_chunked(xp, [w, m_a, v_a], scratch, chunk)
        return w

    return compute


def ftrl_rows(
    xp: Any, w: Any, accum: Any, linear: Any, g: Any, hyper: tuple[Any, ...]
) -> tuple[Any, Any, Any]:
    """TF's FTRL-proximal step on arrays (whole variables or gathered rows): (var, accum, linear) new."""
    lr, l1, l2, shrinkage, power = (scalar(h) for h in hyper)
    new_accum = accum + g * g
    g_shrunk = g + 2 * shrinkage * w if shrinkage else g
    if power == -0.5:
        sigma = (xp.sqrt(new_accum) - xp.sqrt(accum)) / lr
        y = xp.sqrt(new_accum) / lr + 2 * l2
    else:
        sigma = (new_accum ** (-power) - accum ** (-power)) / lr
        y = new_accum ** (-power) / lr + 2 * l2
    new_linear = linear + g_shrunk - sigma * w
    x = l1 * xp.sign(new_linear) - new_linear
    new_w = xp.where(xp.abs(new_linear) > l1, x / y, xp.zeros_like(w))
    return new_w.astype(w.dtype, copy=False), new_accum, new_linear.astype(w.dtype, copy=False)


@register_kernel("ApplyFtrlV2", aliasing=Aliasing.HELD, expensive=True)
def _apply_ftrl(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, accum: Any, linear: Any, grad: Any, *hyper: Any) -> Any:
        w = check_ref(var, op).mutable()
        if w.shape != grad.shape:
            raise InvalidArgumentError(
                None, op, f"gradient of shape {tuple(grad.shape)} does not match variable of shape {w.shape}"
            )
        a, lin = _slot(op, accum, w), _slot(op, linear, w)
        w[...], a[...], lin[...] = ftrl_rows(xp, w, a, lin, grad, hyper)
        return w

    return compute


@register_kernel("SparseApplyFtrlV2", aliasing=Aliasing.HELD, expensive=True)
def _sparse_apply_ftrl(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, accum: Any, linear: Any, grad: Any, indices: Any, *hyper: Any) -> Any:
        w, idx, g = _rows(xp, op, var, grad, indices)
        a, lin = _slot(op, accum, w), _slot(op, linear, w)
        w[idx], a[idx], lin[idx] = ftrl_rows(xp, w[idx], a[idx], lin[idx], g, hyper)
        return w

    return compute
