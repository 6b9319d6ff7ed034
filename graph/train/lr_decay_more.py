"""More of TF1's learning-rate schedules: ``linear_cosine_decay`` and ``cosine_decay_restarts``
(SGDR), with TF1's formulas, as tensors of the global step; ``piecewise_constant_decay`` is
``piecewise_constant`` under its later name."""

from __future__ import annotations

import math
from typing import Any

from ..core import Tensor, get_default_graph
from ..ops.math import log, minimum, pow
from ..ops.trigonometry import cos
from .learning_rate_decay import _float, _floor, _lr, _need_step, piecewise_constant

__all__ = ["cosine_decay_restarts", "linear_cosine_decay", "piecewise_constant_decay"]

piecewise_constant_decay = piecewise_constant


def linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Tensor:
    """``lr * ((alpha + linear) * cosine + beta)``: a linear decay times a cosine of
    ``num_periods`` periods over ``decay_steps`` (the step capped there)."""
    _need_step(global_step, "linear_cosine_decay")
    with get_default_graph().name_scope(name or "LinearCosineDecay"):
        lr = _lr(learning_rate)
        steps = _float(decay_steps, lr.dtype)
        step = minimum(_float(global_step, lr.dtype), steps)
        linear = (steps - step) / steps
        cosine = 0.5 * (1.0 + cos(math.pi * 2.0 * num_periods * step / steps))
        return lr * ((alpha + linear) * cosine + beta)


def cosine_decay_restarts(
    learning_rate: Any,
    global_step: Any,
    first_decay_steps: Any,
    t_mul: float = 2.0,
    m_mul: float = 1.0,
    alpha: float = 0.0,
    name: str | None = None,
) -> Tensor:
    """Cosine decay restarted after ``first_decay_steps``, each period ``t_mul`` times longer and
    its peak ``m_mul`` times lower (Loshchilov & Hutter's SGDR)."""
    _need_step(global_step, "cosine_decay_restarts")
    with get_default_graph().name_scope(name or "SGDRDecay"):
        lr = _lr(learning_rate)
        fraction = _float(global_step, lr.dtype) / _float(first_decay_steps, lr.dtype)
        if float(t_mul) == 1.0:
            restart = _floor(fraction)
            fraction = fraction - restart
        else:
            restart = _floor(log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            done = (1.0 - pow(_float(t_mul, lr.dtype), restart)) / (1.0 - t_mul)
            fraction = (fraction - done) / pow(_float(t_mul, lr.dtype), restart)
        peak = pow(_float(m_mul, lr.dtype), restart)
        cosine = 0.5 * peak * (1.0 + cos(math.pi * fraction))
        return lr * ((1.0 - alpha) * cosine + alpha)
