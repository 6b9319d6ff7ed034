"""MomentumOptimizer and the ApplyMomentum op (optionally Nesterov), as TF."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..indexed_slices import IndexedSlices
from ..op_builder import make_op
from ..registry import register_op
from ..variables import Variable
from .optimizer import Optimizer, check_apply_inputs, ref_of


@register_op("ApplyMomentum", stateful=True, ref_inputs=(0, 1))
def _apply_momentum_shape(op: Operation) -> list:
    # inputs: var, accum, lr, grad, momentum
    return check_apply_inputs(op, n_refs=2, scalars=(2, 4), grad_index=3)


@register_op("SparseApplyMomentum", stateful=True, ref_inputs=(0, 1))
def _sparse_apply_momentum_shape(op: Operation) -> list:
    # inputs: var, accum, lr, grad (rows), indices, momentum
    return check_apply_inputs(op, n_refs=2, scalars=(2, 5), grad_index=3, indices_index=4)


not_differentiable("ApplyMomentum", "SparseApplyMomentum")


def apply_momentum(
    var: Any,
    accum: Any,
    lr: Tensor,
    grad: Tensor,
    momentum: Tensor,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """accum = accum * momentum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum * accum))."""
    attrs = {"use_locking": use_locking, "use_nesterov": bool(use_nesterov)}
    inputs = [ref_of(var), ref_of(accum), lr, grad, momentum]
    return make_op("ApplyMomentum", inputs, attrs, name or "ApplyMomentum").outputs[0]


def sparse_apply_momentum(
    var: Any,
    accum: Any,
    lr: Tensor,
    grad: Tensor,
    indices: Tensor,
    momentum: Tensor,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """ApplyMomentum on the rows at ``indices`` only (rows of repeated indices summed first)."""
    attrs = {"use_locking": use_locking, "use_nesterov": bool(use_nesterov)}
    inputs = [ref_of(var), ref_of(accum), lr, grad, indices, momentum]
    return make_op("SparseApplyMomentum", inputs, attrs, name or "SparseApplyMomentum").outputs[0]


class MomentumOptimizer(Optimizer):
    """SGD with momentum; the accumulator slot is named "<var>/Momentum"."""

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        return apply_momentum(
            var,
            self.get_slot(var, "momentum"),
            self._hyper("learning_rate", self._learning_rate, var.dtype),
            grad,
            self._hyper("momentum", self._momentum, var.dtype),
            self._use_locking,
            self._use_nesterov,
        )

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        return sparse_apply_momentum(
            var,
            self.get_slot(var, "momentum"),
            self._hyper("learning_rate", self._learning_rate, var.dtype),
            grad.values,
            grad.indices,
            self._hyper("momentum", self._momentum, var.dtype),
            self._use_locking,
            self._use_nesterov,
        )
