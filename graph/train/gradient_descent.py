"""GradientDescentOptimizer and the ApplyGradientDescent op: var -= alpha * delta."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..indexed_slices import IndexedSlices
from ..op_builder import make_op
from ..ops.scatter import scatter_sub
from ..registry import register_op
from ..variables import Variable
from .optimizer import Optimizer, check_apply_inputs, ref_of


@register_op("ApplyGradientDescent", stateful=True, ref_inputs=(0,))
def _apply_gd_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=1, scalars=(1,), grad_index=2)


not_differentiable("ApplyGradientDescent")


def apply_gradient_descent(
    var: Any,
    alpha: Tensor,
    delta: Tensor,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    return make_op(
        "ApplyGradientDescent",
        [ref_of(var), alpha, delta],
        {"use_locking": use_locking},
        name or "ApplyGradientDescent",
    ).outputs[0]


class GradientDescentOptimizer(Optimizer):
    """Plain SGD: ``var -= learning_rate * grad``."""

    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        lr = self._hyper("learning_rate", self._learning_rate, var.dtype)
        return apply_gradient_descent(var, lr, grad, self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Tensor:
        # As TF: the rows scaled by the rate and subtracted in place; repeated indices each subtract.
        lr = self._hyper("learning_rate", self._learning_rate, var.dtype)
        return scatter_sub(var, grad.indices, grad.values * lr, use_locking=self._use_locking)
