"""Rounding division: Floor, FloorDiv and FloorMod (``//`` and ``%`` on tensors), as TF.

FloorDiv rounds the quotient toward negative infinity for every dtype; FloorMod's result takes
the divisor's sign (Python's and numpy's ``%``), so ``x == floordiv(x, y) * y + floormod(x, y)``.
"""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import binary, convert_pair, graph_of, make_op, unary
from ..registry import register_op
from .math import _binary_shape, _unary_shape, negative, reduce_to

__all__ = ["div", "floor", "floor_div", "floordiv", "floormod", "mod"]

register_op("Floor")(_unary_shape)
register_op("FloorDiv")(_binary_shape)
register_op("FloorMod")(_binary_shape)
# Step functions: zero derivative almost everywhere, so no gradient flows (TF returns None too).
not_differentiable("Floor", "FloorDiv")


def floor(x: Any, name: str | None = None) -> Tensor:
    return unary("Floor", x, name)


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y rounded toward negative infinity (integer division by zero is an InvalidArgumentError)."""
    return binary("FloorDiv", x, y, name)


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x - floordiv(x, y) * y: the remainder with the divisor's sign."""
    return binary("FloorMod", x, y, name)


floor_div = floordiv
mod = floormod


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.div``, Python 2's ``/``: floor division of integers, true division of floats
    (both operands of one dtype; no casts, unlike ``tf.divide``)."""
    with graph_of([x, y]).name_scope(name or "div") as scope:
        a, b = convert_pair(x, y, "div")
        kind = "RealDiv" if a.dtype.kind in "fc" else "FloorDiv"
        return make_op(kind, [a, b], None, scope).outputs[0]


@register_gradient("FloorMod")
def _floormod_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs
    return [reduce_to(grad, x), reduce_to(negative(grad) * floordiv(x, y), y)]
