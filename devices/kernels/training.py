"""Kernels of the optimizers' dense Apply* ops (TF's update formulas, in TF's order of operations).

Updates are in place (``VarRef.mutable``: a copy first only while a reader still holds the stored
array) and run over the flat variable in chunks (``elementwise.run_chunked``), so a large
variable costs the passes its formula needs over memory plus chunk-sized temporaries that stay
in cache, and its chunks may run on several threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from ..resources import VarRef, check_ref
from .elementwise import run_chunked
from .registry import Aliasing, Compute, KernelContext, register_kernel


def mutable_matching(op: Any, ref: Any, grad: Any) -> tuple[VarRef, Any]:
    """The variable's stored array, to update in place; its shape must be the gradient's."""
    r = check_ref(ref, op)
    value = r.read()
    if value.shape != grad.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"gradient of shape {tuple(grad.shape)} does not match variable {r.name} of shape "
            f"{tuple(value.shape)}",
        )
    del value  # (a reference held here would make mutable() copy)
    return r, r.mutable()


def mutable_slot(op: Any, ref: Any, like: Any) -> Any:
    """A slot's stored array, to update in place; its shape must be its variable's."""
    r = check_ref(ref, op)
    value = r.read()
    if value.shape != like.shape:
        raise InvalidArgumentError(
            None,
            op,
            f"slot {r.name} of shape {tuple(value.shape)} does not match its variable of shape "
            f"{tuple(like.shape)}",
        )
    del value
    return r.mutable()


def scalar(x: Any) -> Any:
    """A 0-d numpy array's scalar, of its dtype (anything else as it is)."""
    return x[()] if x.__class__ is np.ndarray and not x.ndim else x


def flat(x: Any) -> Any:
    return x.reshape(-1)


@register_kernel("ApplyGradientDescent", aliasing=Aliasing.HELD, expensive=True)
def _apply_gradient_descent(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, alpha: Any, delta: Any) -> Any:
        _, w = mutable_matching(op, var, delta)
        wf, df = flat(w), flat(xp.asarray(delta, dtype=w.dtype))

        def chunk(s: slice, t: list[Any]) -> None:
            xp.multiply(df[s], alpha, out=t[0])
            wf[s] -= t[0]

        run_chunked(xp, wf.size, w.dtype, 1, chunk)
        return w

    return compute


@register_kernel("ApplyMomentum", aliasing=Aliasing.HELD, expensive=True)
def _apply_momentum(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    nesterov = ctx.attr("use_nesterov")

    def compute(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any) -> Any:
        _, w = mutable_matching(op, var, grad)
        a = mutable_slot(op, accum, w)
        wf, af, gf = flat(w), flat(a), flat(grad)

        def chunk(s: slice, t: list[Any]) -> None:
            # accum = accum * momentum + grad; var -= lr * accum (Nesterov: grad*lr + accum*momentum*lr)
            ac = af[s]
            ac *= momentum
            ac += gf[s]
            if nesterov:
                xp.multiply(gf[s], lr, out=t[0])
                xp.multiply(ac, momentum, out=t[1])
                t[1] *= lr
                t[0] += t[1]
            else:
                xp.multiply(ac, lr, out=t[0])
            wf[s] -= t[0]

        run_chunked(xp, wf.size, w.dtype, 2 if nesterov else 1, chunk)
        return w

    return compute


@register_kernel("ApplyAdam", aliasing=Aliasing.HELD, expensive=True)
def _apply_adam(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
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
        _, w = mutable_matching(op, var, grad)
        m_a, v_a = mutable_slot(op, m, w), mutable_slot(op, v, w)
        one_minus_b1, one_minus_b2, eps = coefficients(beta1, beta2, epsilon)
        alpha = adam_alpha(xp, lr, beta1_power, beta2_power)
        wf, mf, vf, gf = flat(w), flat(m_a), flat(v_a), flat(grad)

        def chunk(s: slice, t: list[Any]) -> None:
            g, mc, vc, t0, t1 = gf[s], mf[s], vf[s], t[0], t[1]
            # m += (g - m) * (1 - beta1); v += (g*g - v) * (1 - beta2)
            xp.subtract(g, mc, out=t0)
            t0 *= one_minus_b1
            mc += t0
            xp.multiply(g, g, out=t0)
            t0 -= vc
            t0 *= one_minus_b2
            vc += t0
            # var -= (direction * alpha) / (sqrt(v) + eps)
            xp.sqrt(vc, out=t0)
            t0 += eps
            if nesterov:
                xp.multiply(g, one_minus_b1, out=t1)
                t1 += mc * beta1
                t1 *= alpha
            else:
                xp.multiply(mc, alpha, out=t1)
            t1 /= t0
            wf[s] -= t1

        run_chunked(xp, wf.size, w.dtype, 2, chunk)
        return w

    return compute


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

    def compute(var: Any, accum: Any, lr: Any, grad: Any) -> Any:
        _, w = mutable_matching(op, var, grad)
        a = mutable_slot(op, accum, w)
        wf, af, gf = flat(w), flat(a), flat(grad)

        def chunk(s: slice, t: list[Any]) -> None:
            # accum += grad**2; var -= lr * grad / sqrt(accum)
            g, ac, t0, t1 = gf[s], af[s], t[0], t[1]
            xp.multiply(g, g, out=t0)
            ac += t0
            xp.sqrt(ac, out=t0)
            xp.multiply(g, lr, out=t1)
            t1 /= t0
            wf[s] -= t1

        run_chunked(xp, wf.size, w.dtype, 2, chunk)
        return w

    return compute


def _rmsprop(ctx: KernelContext, centered: bool) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(var: Any, *args: Any) -> Any:
        grad = args[-1]
        _, w = mutable_matching(op, var, grad)
        mg_ref = args[0] if centered else None
        ms_ref, mom_ref, lr, rho, momentum, eps = args[1:-1] if centered else args[:-1]
        ms, mom = mutable_slot(op, ms_ref, w), mutable_slot(op, mom_ref, w)
        mg = mutable_slot(op, mg_ref, w) if centered else None
        one_minus_rho = xp.asarray(1 - scalar(rho))
        wf, msf, momf, gf = flat(w), flat(ms), flat(mom), flat(grad)
        mgf = flat(mg) if mg is not None else None

        def chunk(s: slice, t: list[Any]) -> None:
            g, msc, mc, t0, t1 = gf[s], msf[s], momf[s], t[0], t[1]
            # ms += (g*g - ms) * (1 - rho)
            xp.multiply(g, g, out=t0)
            t0 -= msc
            t0 *= one_minus_rho
            msc += t0
            if mgf is not None:
                # mg += (g - mg) * (1 - rho); denominator ms - mg**2 + eps
                mgc = mgf[s]
                xp.subtract(g, mgc, out=t0)
                t0 *= one_minus_rho
                mgc += t0
                xp.multiply(mgc, mgc, out=t0)
                xp.subtract(msc, t0, out=t0)
                t0 += eps
            else:
                xp.add(msc, eps, out=t0)
            # mom = mom * momentum + lr * g / sqrt(denominator); var -= mom
            xp.sqrt(t0, out=t0)
            xp.multiply(g, lr, out=t1)
            t1 /= t0
            mc *= momentum
            mc += t1
            wf[s] -= mc

        run_chunked(xp, wf.size, w.dtype, 2, chunk)
        return w

    return compute


@register_kernel("ApplyRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _apply_rmsprop(ctx: KernelContext) -> Compute:
    return _rmsprop(ctx, centered=False)


@register_kernel("ApplyCenteredRMSProp", aliasing=Aliasing.HELD, expensive=True)
def _apply_centered_rmsprop(ctx: KernelContext) -> Compute:
    return _rmsprop(ctx, centered=True)
