"""Kernels of the optimizers' Apply* ops (TF's update formulas).

Every update writes NEW arrays through the VarRef: readers of the previous step may still hold
the old array, so a stored value is never mutated in place.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from ..resources import VarRef, check_ref
from .registry import Compute, KernelContext, register_kernel


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


@register_kernel("ApplyGradientDescent", expensive=True)
def _apply_gradient_descent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, alpha: Any, delta: Any) -> Any:
        r, old = _read_matching(op, var, delta)
        return r.write(xp.asarray(old - alpha * delta, dtype=old.dtype))

    return compute


@register_kernel("ApplyMomentum", expensive=True)
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


@register_kernel("ApplyAdam", expensive=True)
def _apply_adam(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")

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
        alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        # TF's formulas in its order of operations, each result array fresh (readers of the last
        # step may hold the old ones) and then updated in place: 5 allocations instead of 12.
        m_new = xp.subtract(grad, m_old)
        m_new *= 1 - beta1
        m_new += m_old
        m_new = rm.write(m_new.astype(w.dtype, copy=False))
        v_new = xp.multiply(grad, grad)
        v_new -= v_old
        v_new *= 1 - beta2
        v_new += v_old
        v_new = rv.write(v_new.astype(w.dtype, copy=False))
        direction = grad * (1 - beta1) + beta1 * m_new if nesterov else m_new
        denom = xp.sqrt(v_new)
        denom += epsilon
        step = xp.multiply(direction, alpha)
        step /= denom
        return rvar.write(xp.subtract(w, step, out=step).astype(w.dtype, copy=False))

    return compute
