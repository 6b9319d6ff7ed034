"""RMSPropOptimizer, as TF1's ApplyRMSProp / ApplyCenteredRMSProp and their sparse forms.

ms += (grad**2 - ms) * (1 - decay) (centered: mg likewise with grad, and ms - mg**2 is used);
mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom. Slots: "rms" (starts at 1),
"momentum", and "mg" when centered, named "<var>/RMSProp", "<var>/RMSProp_1", ... as TF. The
sparse ops update the rows of an IndexedSlices gradient (rows of repeated indices summed first).
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


# inputs: var, ms, mom, lr, rho, momentum, epsilon, grad [, indices]
@register_op("ApplyRMSProp", stateful=True, ref_inputs=(0, 1, 2))
def _apply_rmsprop_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=3, scalars=(3, 4, 5, 6), grad_index=7)


@register_op("SparseApplyRMSProp", stateful=True, ref_inputs=(0, 1, 2))
def _sparse_apply_rmsprop_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=3, scalars=(3, 4, 5, 6), grad_index=7, indices_index=8)


# inputs: var, mg, ms, mom, lr, rho, momentum, epsilon, grad [, indices]
@register_op("ApplyCenteredRMSProp", stateful=True, ref_inputs=(0, 1, 2, 3))
def _apply_centered_rmsprop_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=4, scalars=(4, 5, 6, 7), grad_index=8)


@register_op("SparseApplyCenteredRMSProp", stateful=True, ref_inputs=(0, 1, 2, 3))
def _sparse_apply_centered_rmsprop_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=4, scalars=(4, 5, 6, 7), grad_index=8, indices_index=9)


not_differentiable("ApplyRMSProp", "SparseApplyRMSProp", "ApplyCenteredRMSProp", "SparseApplyCenteredRMSProp")


class RMSPropOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._constant_slot(v, "rms", self._name, 1.0)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _update(self, var: Variable, grad: Tensor, indices: Tensor | None) -> Tensor:
        dt = var.dtype
        hyper = [
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("decay", self._decay, dt),
            self._hyper("momentum", self._momentum, dt),
            self._hyper("epsilon", self._epsilon, dt),
        ]
        slots = [ref_of(self.get_slot(var, "rms")), ref_of(self.get_slot(var, "momentum"))]
        op_type = "ApplyRMSProp"
        if self._centered:
            slots.insert(0, ref_of(self.get_slot(var, "mg")))
            op_type = "ApplyCenteredRMSProp"
        inputs = [ref_of(var), *slots, *hyper, grad]
        if indices is not None:
            op_type = "Sparse" + op_type
            inputs.append(indices)
        return make_op(op_type, inputs, {"use_locking": self._use_locking}, op_type).outputs[0]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        return self._update(var, grad, None)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        return self._update(var, grad.values, grad.indices)
