"""Kernels of LSTMGates and LSTMGatesGrad (graph/ops/lstm_ops.py)."""

from __future__ import annotations

from typing import Any

from .registry import Compute, KernelContext, register_kernel


def _activations(xp: Any, gates: Any, c: Any, forget_bias: float) -> tuple[Any, Any, Any, Any, Any]:
    """sigmoid(i), tanh(j), sigmoid(f + forget_bias), sigmoid(o) and new_c."""
    n = c.shape[1]
    # sigmoid(x) = (1 + tanh(x / 2)) / 2: one bounded transcendental, no overflow for any x.
    half = gates * 0.5
    if forget_bias:
        half[:, 2 * n : 3 * n] += 0.5 * forget_bias
    act = xp.tanh(half)
    act += 1
    act *= 0.5
    i, f, o = act[:, :n], act[:, 2 * n : 3 * n], act[:, 3 * n :]
    j = xp.tanh(gates[:, n : 2 * n])
    new_c = c * f
    new_c += i * j
    return i, j, f, o, new_c


@register_kernel("LSTMGates", expensive=True)
def _lstm_gates(ctx: KernelContext) -> Compute:
    xp, fb = ctx.xp, ctx.attr("forget_bias")

    def compute(gates: Any, c: Any) -> tuple[Any, Any]:
        *_, o, new_c = _activations(xp, gates, c, fb)
        new_h = xp.tanh(new_c)
        new_h *= o
        return new_c, new_h

    return compute


@register_kernel("LSTMGatesGrad", expensive=True)
def _lstm_gates_grad(ctx: KernelContext) -> Compute:
    xp, fb = ctx.xp, ctx.attr("forget_bias")

    def compute(gates: Any, c: Any, d_c: Any, d_h: Any) -> tuple[Any, Any]:
        i, j, f, o, new_c = _activations(xp, gates, c, fb)
        n = c.shape[1]
        tc = xp.tanh(new_c)
        d_gates = xp.empty_like(gates)
        # d new_c in total: its own gradient plus the path through new_h = tanh(new_c) * o.
        dc = d_h * o
        dc *= 1 - tc * tc
        dc += d_c
        xp.multiply(d_h * tc, o * (1 - o), out=d_gates[:, 3 * n :])
        xp.multiply(dc * j, i * (1 - i), out=d_gates[:, :n])
        xp.multiply(dc * i, 1 - j * j, out=d_gates[:, n : 2 * n])
        xp.multiply(dc * c, f * (1 - f), out=d_gates[:, 2 * n : 3 * n])
        return d_gates, dc * f

    return compute
