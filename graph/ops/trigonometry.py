"""Sine and cosine (what cosine_decay and periodic features need), with their gradients."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import unary
from ..registry import register_op
from .math import _unary_shape, negative

__all__ = ["cos", "sin"]

register_op("Sin")(_unary_shape)
register_op("Cos")(_unary_shape)


def sin(x: Any, name: str | None = None) -> Tensor:
    return unary("Sin", x, name)


def cos(x: Any, name: str | None = None) -> Tensor:
    return unary("Cos", x, name)


@register_gradient("Sin")
def _sin_grad(op: Operation, grad: Tensor) -> list:
    return [grad * cos(op.inputs[0])]


@register_gradient("Cos")
def _cos_grad(op: Operation, grad: Tensor) -> list:
    return [negative(grad) * sin(op.inputs[0])]
