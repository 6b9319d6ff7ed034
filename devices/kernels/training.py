"""Kernels of the optimizers' Apply* ops (TF's update formulas).

Every update writes NEW arrays through the VarRef: readers of the previous step may still hold
the old array, so a stored value is never mutated in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from ..resources import VarRef, check_ref
from .registry import Aliasing, Compute, KernelContext, register_kernel


def _read_matching(op: Any, ref: Any, grad: Any) -> tuple[VarRef, Any]:
    r = check_ref(ref, op)
    value = r.read()
    if value.shape != grad.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"gradient of shape {tuple(grad.shape)} does not match variable {r.name} of shape "
            f"{tuple(value.shape)}",
        )
    return r, value


def _read_slot(op: Any, ref: Any, like: Any) -> tuple[VarRef, Any]:
    r = check_ref(ref, op)
    value = r.read()
    if value.shape != like.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"slot {r.name} of shape {tuple(value.shape)} does not match its variable of shape "
            f"{tuple(like.shape)}",
        )
    return r, value


def _scalar(x: Any) -> Any:
    """A 0-d numpy array's scalar, of its dtype (anything else as it is)."""
    return x[()] if x.__class__ is np.ndarray and not x.ndim else x


@register_kernel("ApplyGradientDescent", aliasing=Aliasing.HELD, expensive=True)
def _apply_gradient_descent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, alpha: Any, delta: Any) -> Any:
        r, old = _read_matching(op, var, delta)
        return r.write(xp.asarray(old - alpha * delta, dtype=old.dtype))

    return compute


@register_kernel("ApplyMomentum", aliasing=Aliasing.HELD, expensive=True)
def _apply_momentum(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")

    def compute(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any) -> Any:
        rv, v = _read_matching(op, var, grad)
        ra, a = _read_slot(op, accum, v)
        a_new = ra.write(xp.asarray(a * momentum + grad, dtype=v.dtype))
        step = grad * lr + a_new * momentum * lr if nesterov else lr * a_new
        return rv.write(xp.asarray(v - step, dtype=v.dtype))

    return compute


@register_kernel("ApplyAdam", aliasing=Aliasing.HELD, expensive=True)
def _apply_adam(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")
    # (beta1, beta2, epsilon) as last given, and (1 - beta1, 1 - beta2, epsilon) as 0-d arrays:
    # usually bound constants, the same objects every step. A ufunc takes a 0-d array operand
    # in half the time of a numpy scalar; the scalar math is the other way round.
    hyper: list[Any] = [(None, None, None, None)]

    def coefficients(beta1: Any, beta2: Any, epsilon: Any) -> tuple[Any, Any, Any]:
        b1, b2, eps, derived = hyper[0]
        if beta1 is not b1 or beta2 is not b2 or epsilon is not eps:
            derived = (xp.asarray(1 - beta1), xp.asarray(1 - beta2), xp.asarray(epsilon))
            hyper[0] = (beta1, beta2, epsilon, derived)  # one store: kernels of two steps may race
        return derived

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
    ) -> Any:
        rvar, w = _read_matching(op, var, grad)
        rm, m_old = _read_slot(op, m, w)
        rv, v_old = _read_slot(op, v, w)
        one_minus_b1, one_minus_b2, eps = coefficients(beta1, beta2, epsilon)
        alpha = xp.asarray(_scalar(lr) * xp.sqrt(1 - _scalar(beta2_power)) / (1 - _scalar(beta1_power)))
        # TF's formulas in its order of operations, each result array fresh (readers of the last
        # step may hold the old ones) and then updated in place: 5 allocations instead of 12.
        m_new = xp.subtract(grad, m_old)
        m_new *= one_minus_b1
        m_new += m_old
        m_new = rm.write(m_new.astype(w.dtype, copy=False))
        v_new = xp.multiply(grad, grad)
        v_new -= v_old
        v_new *= one_minus_b2
        v_new += v_old
        v_new = rv.write(v_new.astype(w.dtype, copy=False))
        direction = grad * one_minus_b1 + beta1 * m_new if nesterov else m_new
        denom = xp.sqrt(v_new)
        denom += eps
        step = xp.multiply(direction, alpha)
        step /= denom
        return rvar.write(xp.subtract(w, step, out=step).astype(w.dtype, copy=False))

    return compute
