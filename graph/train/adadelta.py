"""AdadeltaOptimizer (Zeiler 2012), as TF1's ApplyAdadelta (from Assign* ops) and SparseApplyAdadelta.

accum = rho * accum + (1 - rho) * grad**2; update = sqrt(accum_update + eps) / sqrt(accum + eps) * grad;
accum_update = rho * accum_update + (1 - rho) * update**2; var -= lr * update.
Slots "<var>/Adadelta" (accum) and "<var>/Adadelta_1" (accum_update). The sparse op updates the
rows of an IndexedSlices gradient (rows of repeated indices summed first).
"""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..indexed_slices import IndexedSlices
from ..op_builder import make_op
from ..ops.control import group
from ..ops.math import rsqrt, sqrt, square
from ..ops.state import assign, assign_sub
from ..registry import register_op
from ..variables import Variable
from .optimizer import Optimizer, check_apply_inputs, ref_of


@register_op("SparseApplyAdadelta", stateful=True, ref_inputs=(0, 1, 2))
def _sparse_apply_adadelta_shape(op: Operation) -> list:
    # inputs: var, accum, accum_update, lr, rho, epsilon, grad (rows), indices
    return check_apply_inputs(op, n_refs=3, scalars=(3, 4, 5), grad_index=6, indices_index=7)


not_differentiable("SparseApplyAdadelta")


class AdadeltaOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        dt = var.dtype
        lr = self._hyper("learning_rate", self._lr, dt)
        rho = self._hyper("rho", self._rho, dt)
        eps = self._hyper("epsilon", self._epsilon, dt)
        accum_slot = self.get_slot(var, "accum")
        update_slot = self.get_slot(var, "accum_update")
        accum = assign(accum_slot, accum_slot * rho + square(grad) * (1.0 - rho))
        # Each write takes the value it replaces as an input, so reads run before writes.
        step = sqrt(update_slot + eps) * rsqrt(accum + eps) * grad
        new_update = assign(update_slot, update_slot * rho + square(step) * (1.0 - rho))
        return group(new_update, assign_sub(var, lr * step))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        dt = var.dtype
        inputs = [
            ref_of(var),
            ref_of(self.get_slot(var, "accum")),
            ref_of(self.get_slot(var, "accum_update")),
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("rho", self._rho, dt),
            self._hyper("epsilon", self._epsilon, dt),
            grad.values,
            grad.indices,
        ]
        attrs = {"use_locking": self._use_locking}
        return make_op("SparseApplyAdadelta", inputs, attrs, "SparseApplyAdadelta").outputs[0]
