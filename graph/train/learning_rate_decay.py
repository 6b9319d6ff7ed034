"""Learning-rate schedules of TF1 (``exponential_decay``, ``piecewise_constant``,
``polynomial_decay``, ``inverse_time_decay``, ``natural_exp_decay``, ``cosine_decay``): tensors of
the global step.

Floors and ceilings of the non-negative step ratio go through an integer cast (truncation),
which equals floor for the non-negative values a step count gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import _is_symbolic, convert_to_tensor
from ..ops.array import where
from ..ops.math import cast, exp, greater, less_equal, maximum, minimum, pow

__all__ = [
    "cosine_decay",
    "exponential_decay",
    "inverse_time_decay",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
]


def _need_step(global_step: Any, what: str) -> None:
    if global_step is None:
        raise GraphError(f"{what} requires global_step")


def _float(x: Any, dtype: Any) -> Tensor:
    t = convert_to_tensor(x) if _is_symbolic(x) else convert_to_tensor(x, dtype=dtype)
    return t if t.dtype == dtype else cast(t, dtype)


def _floor(x: Tensor) -> Tensor:
    return cast(cast(x, dtypes.int64), x.dtype)


def _lr(learning_rate: Any) -> Tensor:
    lr = (
        convert_to_tensor(learning_rate)
        if _is_symbolic(learning_rate)
        else convert_to_tensor(learning_rate, dtype=dtypes.float32, name="learning_rate")
    )
    if lr.dtype.kind != "f":
        raise GraphError(f"learning_rate {lr.name} must be floating-point, got {lr.dtype.name}")
    return lr


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """learning_rate * decay_rate ** (global_step / decay_steps) (the exponent floored if staircase)."""
    _need_step(global_step, "exponential_decay")
    with get_default_graph().name_scope(name or "ExponentialDecay"):
        lr = _lr(learning_rate)
        p = _float(global_step, lr.dtype) / _float(decay_steps, lr.dtype)
        if staircase:
            p = _floor(p)
        return lr * pow(_float(decay_rate, lr.dtype), p)


def natural_exp_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """learning_rate * exp(-decay_rate * global_step / decay_steps)."""
    _need_step(global_step, "natural_exp_decay")
    with get_default_graph().name_scope(name or "NaturalExpDecay"):
        lr = _lr(learning_rate)
        p = _float(global_step, lr.dtype) / _float(decay_steps, lr.dtype)
        if staircase:
            p = _floor(p)
        return lr * exp(-_float(decay_rate, lr.dtype) * p)


def inverse_time_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """learning_rate / (1 + decay_rate * global_step / decay_steps)."""
    _need_step(global_step, "inverse_time_decay")
    with get_default_graph().name_scope(name or "InverseTimeDecay"):
        lr = _lr(learning_rate)
        p = _float(global_step, lr.dtype) / _float(decay_steps, lr.dtype)
        if staircase:
            p = _floor(p)
        return lr / (_float(decay_rate, lr.dtype) * p + 1.0)


def piecewise_constant(
    x: Any, boundaries: Sequence[Any], values: Sequence[Any], name: str | None = None
) -> Tensor:
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], values[-1] after."""
    if len(values) != len(boundaries) + 1:
        raise GraphError(
            f"piecewise_constant: {len(values)} values for {len(boundaries)} boundaries; need one more value than boundaries"
        )
    with get_default_graph().name_scope(name or "PiecewiseConstant"):
        xt = convert_to_tensor(x)
        first = convert_to_tensor(values[0])
        vals = [first] + [
            convert_to_tensor(v) if _is_symbolic(v) else convert_to_tensor(v, dtype=first.dtype)
            for v in values[1:]
        ]
        dtype = vals[0].dtype
        if any(v.dtype != dtype for v in vals):
            raise GraphError("piecewise_constant: values must all have the same dtype")
        out = vals[-1]
        for b, v in zip(reversed(boundaries), reversed(vals[:-1])):
            out = where(less_equal(xt, _float(b, xt.dtype)), v, out)
        return out


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Tensor:
    """(lr - end) * (1 - step / decay_steps) ** power + end, step capped at decay_steps (or, with
    ``cycle``, decay_steps stretched to the next multiple above the step)."""
    _need_step(global_step, "polynomial_decay")
    with get_default_graph().name_scope(name or "PolynomialDecay"):
        lr = _lr(learning_rate)
        step = _float(global_step, lr.dtype)
        steps = _float(decay_steps, lr.dtype)
        if cycle:
            ratio = step / steps
            whole = _floor(ratio)
            ceiling = where(greater(ratio, whole), whole + 1.0, whole)
            steps = steps * maximum(ceiling, 1.0)
        else:
            step = minimum(step, steps)
        end = _float(end_learning_rate, lr.dtype)
        return (lr - end) * pow(1.0 - step / steps, _float(power, lr.dtype)) + end


def cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    alpha: Any = 0.0,
    name: str | None = None,
) -> Tensor:
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha), the step
    capped at decay_steps (Loshchilov & Hutter's SGDR without restarts)."""
    from ..ops.trigonometry import cos

    _need_step(global_step, "cosine_decay")
    with get_default_graph().name_scope(name or "CosineDecay"):
        lr = _lr(learning_rate)
        steps = _float(decay_steps, lr.dtype)
        step = minimum(_float(global_step, lr.dtype), steps)
        cosine = 0.5 * (1.0 + cos(math.pi * step / steps))
        a = _float(alpha, lr.dtype)
        return lr * ((1.0 - a) * cosine + a)
