"""AdagradOptimizer (Duchi et al.), as TF1: accum += grad**2; var -= lr * grad / sqrt(accum).

The accumulator slot is "<var>/Adagrad". ``ApplyAdagrad`` updates the whole variable,
``SparseApplyAdagrad`` the rows of an IndexedSlices gradient (rows of repeated indices summed first).
"""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..indexed_slices import IndexedSlices
from ..op_builder import make_op
from ..registry import register_op
from ..variables import Variable
from .optimizer import Optimizer, check_apply_inputs, ref_of


@register_op("ApplyAdagrad", stateful=True, ref_inputs=(0, 1))
def _apply_adagrad_shape(op: Operation) -> list:
    # inputs: var, accum, lr, grad
    return check_apply_inputs(op, n_refs=2, scalars=(2,), grad_index=3)


@register_op("SparseApplyAdagrad", stateful=True, ref_inputs=(0, 1))
def _sparse_apply_adagrad_shape(op: Operation) -> list:
    # inputs: var, accum, lr, grad (rows), indices
    return check_apply_inputs(op, n_refs=2, scalars=(2,), grad_index=3, indices_index=4)


not_differentiable("ApplyAdagrad", "SparseApplyAdagrad")


def apply_adagrad(
    var: Any, accum: Any, lr: Tensor, grad: Tensor, use_locking: bool = False, name: str | None = None
) -> Tensor:
    inputs = [ref_of(var), ref_of(accum), lr, grad]
    return make_op("ApplyAdagrad", inputs, {"use_locking": use_locking}, name or "ApplyAdagrad").outputs[0]


def sparse_apply_adagrad(
    var: Any,
    accum: Any,
    lr: Tensor,
    grad: Tensor,
    indices: Tensor,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    inputs = [ref_of(var), ref_of(accum), lr, grad, indices]
    attrs = {"use_locking": use_locking}
    return make_op("SparseApplyAdagrad", inputs, attrs, name or "SparseApplyAdagrad").outputs[0]


class AdagradOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._constant_slot(v, "accumulator", self._name, self._initial)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        lr = self._hyper("learning_rate", self._lr, var.dtype)
        return apply_adagrad(var, self.get_slot(var, "accumulator"), lr, grad, self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        lr = self._hyper("learning_rate", self._lr, var.dtype)
        accum = self.get_slot(var, "accumulator")
        return sparse_apply_adagrad(var, accum, lr, grad.values, grad.indices, self._use_locking)
