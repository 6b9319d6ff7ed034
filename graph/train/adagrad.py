"""AdagradOptimizer (Duchi et al.), as TF1: accum += grad**2; var -= lr * grad / sqrt(accum).

Built from Assign* ops, so it needs no kernel of its own; the accumulator slot is "<var>/Adagrad".
"""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from ..ops.math import rsqrt, square
from ..ops.state import assign_add, assign_sub
from ..variables import Variable
from .optimizer import Optimizer


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
        accum = assign_add(self.get_slot(var, "accumulator"), square(grad))
        return assign_sub(var, lr * grad * rsqrt(accum))
