"""FtrlOptimizer (McMahan et al. 2013, "Ad Click Prediction"), as TF1's ApplyFtrl / ApplyFtrlV2
and their sparse forms.

accum_new = accum + g**2; linear += g' - (accum_new**-p - accum**-p) / lr * var (g' = g +
2 l2_shrinkage var); var = (l1 sign(linear) - linear) / (accum_new**-p / lr + 2 l2) where
|linear| > l1, else 0; p = learning_rate_power (-0.5: square roots). Slots "<var>/Ftrl"
(accum, starting at initial_accumulator_value) and "<var>/Ftrl_1" (linear). The sparse op
updates the rows of an IndexedSlices gradient (rows of repeated indices summed first).
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


# inputs: var, accum, linear, grad [, indices], lr, l1, l2, l2_shrinkage, lr_power
@register_op("ApplyFtrlV2", stateful=True, ref_inputs=(0, 1, 2))
def _apply_ftrl_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=3, scalars=(4, 5, 6, 7, 8), grad_index=3)


@register_op("SparseApplyFtrlV2", stateful=True, ref_inputs=(0, 1, 2))
def _sparse_apply_ftrl_shape(op: Operation) -> list:
    return check_apply_inputs(op, n_refs=3, scalars=(5, 6, 7, 8, 9), grad_index=3, indices_index=4)


not_differentiable("ApplyFtrlV2", "SparseApplyFtrlV2")


class FtrlOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name: str | None = None,
        linear_name: str | None = None,
        l2_shrinkage_regularization_strength: float = 0.0,
    ) -> None:
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be >= 0.0")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be <= 0.0")
        for what, v in (
            ("l1_regularization_strength", l1_regularization_strength),
            ("l2_regularization_strength", l2_regularization_strength),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength),
        ):
            if v < 0.0:
                raise ValueError(f"{what} {v} needs to be >= 0.0")
        super().__init__(use_locking, name)
        self._lr, self._power = learning_rate, learning_rate_power
        self._initial = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._constant_slot(v, "accum", self._accum_name or self._name, self._initial)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _update(self, var: Variable, grad: Tensor, indices: Tensor | None) -> Tensor:
        dt = var.dtype
        hyper = [
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("l1", self._l1, dt),
            self._hyper("l2", self._l2, dt),
            self._hyper("l2_shrinkage", self._shrinkage, dt),
            self._hyper("learning_rate_power", self._power, dt),
        ]
        refs = [ref_of(var), ref_of(self.get_slot(var, "accum")), ref_of(self.get_slot(var, "linear"))]
        op_type = "ApplyFtrlV2" if indices is None else "SparseApplyFtrlV2"
        inputs = [*refs, grad, *([] if indices is None else [indices]), *hyper]
        return make_op(op_type, inputs, {"use_locking": self._use_locking}, op_type).outputs[0]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        return self._update(var, grad, None)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        return self._update(var, grad.values, grad.indices)
