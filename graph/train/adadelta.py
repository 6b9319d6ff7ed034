"""AdadeltaOptimizer (Zeiler 2012), as TF1's ApplyAdadelta, from Assign* ops.

accum = rho * accum + (1 - rho) * grad**2; update = sqrt(accum_update + eps) / sqrt(accum + eps) * grad;
accum_update = rho * accum_update + (1 - rho) * update**2; var -= lr * update.
Slots "<var>/Adadelta" (accum) and "<var>/Adadelta_1" (accum_update).
"""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..ops.control import group
from ..ops.math import rsqrt, sqrt, square
from ..ops.state import assign, assign_sub
from ..variables import Variable
from .optimizer import Optimizer


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
