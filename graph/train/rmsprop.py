"""RMSPropOptimizer, as TF1's ApplyRMSProp / ApplyCenteredRMSProp, from Assign* ops.

ms = decay * ms + (1 - decay) * grad**2 (centered: mg likewise with grad, and ms - mg**2 is used);
mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom. Slots: "rms" (starts at 1),
"momentum", and "mg" when centered, named "<var>/RMSProp", "<var>/RMSProp_1", ... as TF.
"""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from ..ops.math import rsqrt, square
from ..ops.state import assign, assign_sub
from ..variables import Variable
from .optimizer import Optimizer


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

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        dt = var.dtype
        lr = self._hyper("learning_rate", self._lr, dt)
        decay = self._hyper("decay", self._decay, dt)
        momentum = self._hyper("momentum", self._momentum, dt)
        eps = self._hyper("epsilon", self._epsilon, dt)
        rms = self.get_slot(var, "rms")
        ms = assign(rms, rms * decay + square(grad) * (1.0 - decay))
        denominator = ms
        if self._centered:
            mg_slot = self.get_slot(var, "mg")
            mg = assign(mg_slot, mg_slot * decay + grad * (1.0 - decay))
            denominator = ms - square(mg)
        mom_slot = self.get_slot(var, "momentum")
        mom = assign(mom_slot, mom_slot * momentum + lr * grad * rsqrt(denominator + eps))
        return assign_sub(var, mom)
