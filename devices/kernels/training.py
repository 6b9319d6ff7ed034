"""Kernels of the optimizers' dense Apply* ops (TF's update formulas, in TF's order of operations).

A variable is updated in place, or, while a reader still holds its stored array (a fetch, a
kernel of the same step still reading it), written out of place into a fresh array in the same
pass, which is then stored (``update_target`` / ``VarRef.update_source``): what a reader holds
never changes and no pass copies the old value first. Slots are updated in place
(``VarRef.mutable``: a copy first only while something holds them, which steps do not). Updates
run over the flat variable in chunks (``elementwise.run_chunked``), so a large
variable costs the passes its formula needs over memory plus chunk-sized temporaries that stay
in cache, and its chunks may run on several threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from ..resources import check_ref
from .elementwise import CHUNK, Scratch, run_chunked
from .registry import Aliasing, Compute, KernelContext, register_kernel


def update_target(op: Any, ref: Any, grad: Any, xp: Any) -> tuple[Any, Any, Any]:
    """(the variable's VarRef, its stored array, the array its update is written to): the stored
    array itself when it may be updated in place, else a fresh array to be stored by ``finish``
    once written. Its shape must be the gradient's."""
    r = check_ref(ref, op)
    value, in_place = r.update_source()
    if value.shape != grad.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"gradient of shape {tuple(grad.shape)} does not match variable {r.name} of shape "
            f"{tuple(value.shape)}",
        )
    return r, value, value if in_place else xp.empty(value.shape, value.dtype)


def finish(r: Any, value: Any, out: Any) -> Any:
    """The variable's updated array, stored if the update was written out of place."""
    return out if out is value else r.write(out)


def mutable_slot(op: Any, ref: Any, like: Any) -> Any:
    """A slot's stored array, to update in place; its shape must be its variable's."""
    r = check_ref(ref, op)
    value = r.mutable()
    if value.shape != like.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"slot {r.name} of shape {tuple(value.shape)} does not match its variable of shape "
            f"{tuple(like.shape)}",
        )
    return value


def scalar(x: Any) -> Any:
    """A 0-d numpy array's scalar, of its dtype (anything else as it is)."""
    return x[()] if x.__class__ is np.ndarray and not x.ndim else x


# The chunk functions below pass ufunc outputs positionally (out= as a keyword costs more per call
# on small variables) and update their first arguments in place.


@register_kernel("ApplyGradientDescent", aliasing=Aliasing.HELD, expensive=True)
def _apply_gradient_descent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    scratch = Scratch(1)

    def compute(var: Any, alpha: Any, delta: Any) -> Any:
        r, w, out = update_target(op, var, delta, xp)

        def chunk(wc: Any, d: Any, oc: Any, t0: Any) -> None:
            xp.multiply(d, alpha, t0)
            xp.subtract(wc, t0, oc)

        run_chunked(xp, [w, xp.asarray(delta, dtype=w.dtype), out], scratch, chunk)
        return finish(r, w, out)

    return compute


@register_kernel("ApplyMomentum", aliasing=Aliasing.HELD, expensive=True)
def _apply_momentum(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")
    scratch = Scratch(2 if nesterov else 1)

    def compute(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any) -> Any:
        r, w, out = update_target(op, var, grad, xp)
        a = mutable_slot(op, accum, w)

        def chunk(wc: Any, ac: Any, g: Any, oc: Any, t0: Any, *rest: Any) -> None:
            # accum = accum * momentum + grad; var -= lr * accum (Nesterov: grad*lr + accum*momentum*lr)
            ac *= momentum
            ac += g
            if nesterov:
                t1 = rest[0]
                xp.multiply(g, lr, t0)
                xp.multiply(ac, momentum, t1)
                t1 *= lr
                t0 += t1
            else:
                xp.multiply(ac, lr, t0)
            xp.subtract(wc, t0, oc)

        run_chunked(xp, [w, a, grad, out], scratch, chunk)
        return finish(r, w, out)

    return compute


@register_kernel("ApplyAdam", aliasing=Aliasing.HELD, expensive=True)
def _apply_adam(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    scratch = Scratch(2)
    nesterov = ctx.attr("use_nesterov")
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
    ) -> Any:
        r, w, out = update_target(op, var, grad, xp)
        m_a, v_a = mutable_slot(op, m, w), mutable_slot(op, v, w)
        one_minus_b1, one_minus_b2, eps = coefficients(beta1, beta2, epsilon)
        alpha = adam_alpha(xp, lr, beta1_power, beta2_power)

        nesterov_beta1 = beta1 if nesterov else None
        if xp is np and w.size <= CHUNK:  # (run_chunked's one part, without its call: small variables)
            t0, t1 = scratch.like(w)
            _adam_chunk(
                w, m_a, v_a, grad, out, t0, t1, xp, one_minus_b1, one_minus_b2, eps, alpha, nesterov_beta1
            )
        else:
            extra = (xp, one_minus_b1, one_minus_b2, eps, alpha, nesterov_beta1)
            run_chunked(xp, [w, m_a, v_a, grad, out], scratch, _adam_chunk, *extra)
        return finish(r, w, out)

    return compute


def _adam_chunk(
    wc: Any,
    mc: Any,
    vc: Any,
    g: Any,
    oc: Any,
    t0: Any,
    t1: Any,
    xp: Any,
    omb1: Any,
    omb2: Any,
    eps: Any,
    alpha: Any,
    nesterov_beta1: Any,
) -> None:
    """TF's ApplyAdam on one part (a module function: a closure per call costs small variables)."""
    # m += (g - m) * (1 - beta1); v += (g*g - v) * (1 - beta2)
    xp.subtract(g, mc, t0)
    t0 *= omb1
    mc += t0
    xp.multiply(g, g, t0)
    t0 -= vc
    t0 *= omb2
    vc += t0
    # var -= (direction * alpha) / (sqrt(v) + eps); Nesterov's direction: g (1 - beta1) + beta1 m
    xp.sqrt(vc, t0)
    t0 += eps
    if nesterov_beta1 is not None:
        xp.multiply(g, omb1, t1)
        t1 += mc * nesterov_beta1
        t1 *= alpha
    else:
        xp.multiply(mc, alpha, t1)
    t1 /= t0
    xp.subtract(wc, t1, oc)


def adam_coefficients(xp: Any) -> Any:
    """A function (beta1, beta2, epsilon) -> (1 - beta1, 1 - beta2, epsilon) as 0-d arrays,
    remembered while the same objects come (usually bound constants, the same every step): a
    ufunc takes a 0-d array operand in half the time of a numpy scalar."""
    hyper: list[Any] = [(None, None, None, None)]

    def coefficients(beta1: Any, beta2: Any, epsilon: Any) -> tuple[Any, Any, Any]:
        b1, b2, eps, derived = hyper[0]
        if beta1 is not b1 or beta2 is not b2 or epsilon is not eps:
            derived = (xp.asarray(1 - beta1), xp.asarray(1 - beta2), xp.asarray(epsilon))
            hyper[0] = (beta1, beta2, epsilon, derived)  # one store: kernels of two steps may race
        return derived

    return coefficients


def adam_alpha(xp: Any, lr: Any, beta1_power: Any, beta2_power: Any) -> Any:
    """lr * sqrt(1 - beta2_power) / (1 - beta1_power), in the variable's dtype."""
    return xp.asarray(scalar(lr) * xp.sqrt(1 - scalar(beta2_power)) / (1 - scalar(beta1_power)))


@register_kernel("ApplyAdagrad", aliasing=Aliasing.HELD, expensive=True)
def _apply_adagrad(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    scratch = Scratch(2)

    def compute(var: Any, accum: Any, lr: Any, grad: Any) -> Any:
        r, w, out = update_target(op, var, grad, xp)
        a = mutable_slot(op, accum, w)

        def chunk(wc: Any, ac: Any, g: Any, oc: Any, t0: Any, t1: Any) -> None:
            # accum += grad**2; var -= lr * grad / sqrt(accum)
            xp.multiply(g, g, t0)
            ac += t0
            xp.sqrt(ac, t0)
            xp.multiply(g, lr, t1)
            t1 /= t0
            xp.subtract(wc, t1, oc)

        run_chunked(xp, [w, a, grad, out], scratch, chunk)
        return finish(r, w, out)

    return compute


def _rmsprop(ctx: KernelContext, centered: bool) -> Compute:
    xp, op = ctx.xp, ctx.op
    scratch = Scratch(2)

    def compute(var: Any, *args: Any) -> Any:
        grad = args[-1]
        r, w, out = update_target(op, var, grad, xp)
        ms_ref, mom_ref, lr, rho, momentum, eps = args[1:-1] if centered else args[:-1]
        ms, mom = mutable_slot(op, ms_ref, w), mutable_slot(op, mom_ref, w)
        one_minus_rho = xp.asarray(1 - scalar(rho))

        def chunk(wc: Any, msc: Any, mc: Any, g: Any, oc: Any, *rest: Any) -> None:
            mgc, t0, t1 = rest if centered else (None, *rest)
            # ms += (g*g - ms) * (1 - rho)
            xp.multiply(g, g, t0)
            t0 -= msc
            t0 *= one_minus_rho
            msc += t0
            if mgc is not None:
                # mg += (g - mg) * (1 - rho); denominator ms - mg**2 + eps
                xp.subtract(g, mgc, t0)
                t0 *= one_minus_rho
                mgc += t0
                xp.multiply(mgc, mgc, t0)
                xp.subtract(msc, t0, t0)
                t0 += eps
            else:
                xp.add(msc, eps, t0)
            # mom = mom * momentum + lr * g / sqrt(denominator); var -= mom
            xp.sqrt(t0, t0)
            xp.multiply(g, lr, t1)
            t1 /= t0
            mc *= momentum
            mc += t1
            xp.subtract(wc, mc, oc)

        arrays = [w, ms, mom, grad, out]
        if centered:
            arrays.append(mutable_slot(op, args[0], w))
        run_chunked(xp, arrays, scratch, chunk)
        return finish(r, w, out)

    return compute


@register_kernel("ApplyRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _apply_rmsprop(ctx: KernelContext) -> Compute:
    return _rmsprop(ctx, centered=False)


@register_kernel("ApplyCenteredRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _apply_centered_rmsprop(ctx: KernelContext) -> Compute:
    return _rmsprop(ctx, centered=True)
