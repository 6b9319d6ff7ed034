"""The fused element-wise part of a basic LSTM step: ``LSTMGates(gates, c_prev)`` -> (new_c, new_h).

``gates`` is ``x W + b`` of width ``4 * units`` in TF1's order i, j, f, o; with ``forget_bias``
``fb``: ``new_c = c_prev * sigmoid(f + fb) + sigmoid(i) * tanh(j)``, ``new_h = tanh(new_c) *
sigmoid(o)``, exactly BasicLSTMCell's formula (TF's LSTMBlockCell fuses the same). One op instead
of a split and ten element-wise ops per step, and one ``LSTMGatesGrad`` for their gradients
(which recomputes the activations from the op's inputs, so a loop saves two values per step for
backprop instead of eight).
"""

from __future__ import annotations

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import make_op
from ..registry import register_op

__all__ = ["lstm_gates"]


def _units(gates: Tensor, c: Tensor, what: str) -> None:
    if gates.dtype != c.dtype or gates.dtype.kind != "f":
        raise ValueError(f"{what}: gates {gates.name} and state {c.name} must share a floating dtype")
    g, s = gates._shape, c._shape
    if g is not None and s is not None:
        if len(g) != 2 or len(s) != 2:
            raise ValueError(
                f"{what}: gates and state must be matrices, got {S.format_shape(g)}, {S.format_shape(s)}"
            )
        if g[1] is not None and s[1] is not None and g[1] != 4 * s[1]:
            raise ValueError(
                f"{what}: gates {S.format_shape(g)} must be 4 times as wide as state {S.format_shape(s)}"
            )


@register_op("LSTMGates")
def _lstm_gates_shape(op: Operation) -> list:
    gates, c = op.inputs
    _units(gates, c, "LSTMGates")
    return [(c.dtype, c._shape), (c.dtype, c._shape)]


@register_op("LSTMGatesGrad")
def _lstm_gates_grad_shape(op: Operation) -> list:
    gates, c = op.inputs[:2]
    _units(gates, c, "LSTMGatesGrad")
    return [(gates.dtype, gates._shape), (c.dtype, c._shape)]


def lstm_gates(
    gates: Tensor, c_prev: Tensor, forget_bias: float, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """(new_c, new_h) of a basic LSTM step with tanh activations."""
    op = make_op("LSTMGates", [gates, c_prev], {"forget_bias": float(forget_bias)}, name or "LSTMGates")
    return op.outputs[0], op.outputs[1]


@register_gradient("LSTMGates")
def _lstm_gates_grad(op: Operation, d_c: Tensor, d_h: Tensor) -> list:
    grad = make_op("LSTMGatesGrad", [*op.inputs, d_c, d_h], dict(op.attrs), "LSTMGatesGrad")
    return list(grad.outputs)


not_differentiable("LSTMGatesGrad")
