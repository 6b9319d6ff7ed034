"""ProximalGradientDescentOptimizer and ProximalAdagradOptimizer (FOBOS), as TF1: a gradient (or
Adagrad) step, then the proximal step of the L1 and L2 penalties,
``var = sign(p) * max(|p| - lr * l1, 0) / (1 + lr * l2)`` of the stepped value ``p``. Built from
assign / scatter ops; sparse gradients update only their rows (repeated indices summed first).
ProximalAdagrad's accumulator slot is "<var>/ProximalAdagrad", as TF names it."""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from ..indexed_slices import IndexedSlices
from ..ops.array import gather, size
from ..ops.array_more import unique
from ..ops.math import abs, maximum, rsqrt, sign
from ..ops.scatter import scatter_update
from ..ops.segment import unsorted_segment_sum
from ..ops.state import assign
from ..variables import Variable
from .optimizer import Optimizer

__all__ = ["ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer"]


def _deduped(grad: IndexedSlices) -> tuple[Tensor, Tensor]:
    """(distinct indices, their rows summed): the proximal step of a row happens once."""
    ids, where = unique(grad.indices)
    return ids, unsorted_segment_sum(grad.values, where, size(ids))


def _proximal(prox: Tensor, lr: Tensor, l1: Tensor, l2: Tensor) -> Tensor:
    return sign(prox) * maximum(abs(prox) - lr * l1, 0.0) / (1.0 + lr * l2)


class ProximalGradientDescentOptimizer(Optimizer):
    """SGD followed by the L1/L2 proximal step."""

    def __init__(
        self,
        learning_rate: Any,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = learning_rate, l1_regularization_strength, l2_regularization_strength

    def _hypers(self, var: Variable) -> tuple[Tensor, Tensor, Tensor]:
        dt = var.dtype
        return (
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("l1_regularization_strength", self._l1, dt),
            self._hyper("l2_regularization_strength", self._l2, dt),
        )

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        lr, l1, l2 = self._hypers(var)
        return assign(var, _proximal(var.value() - lr * grad, lr, l1, l2))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        lr, l1, l2 = self._hypers(var)
        ids, values = _deduped(grad)
        rows = gather(var.value(), ids)
        return scatter_update(var, ids, _proximal(rows - lr * values, lr, l1, l2))


class ProximalAdagradOptimizer(ProximalGradientDescentOptimizer):
    """Adagrad's step (``lr / sqrt(accum)``, accum += grad**2) followed by the proximal step."""

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(
            learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name
        )
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._constant_slot(v, "accumulator", self._name, self._initial)

    def _accumulator(self, var: Variable) -> Variable:
        accum = self.get_slot(var, "accumulator")
        assert accum is not None  # _create_slots made it before any apply
        return accum

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        lr, l1, l2 = self._hypers(var)
        accum = self._accumulator(var)
        new_accum = assign(accum, accum.value() + grad * grad)
        step = lr * rsqrt(new_accum)
        return assign(var, _proximal(var.value() - step * grad, step, l1, l2))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        lr, l1, l2 = self._hypers(var)
        accum = self._accumulator(var)
        ids, values = _deduped(grad)
        new_rows = gather(accum.value(), ids) + values * values
        updated = scatter_update(accum, ids, new_rows)
        step = lr * rsqrt(gather(updated, ids))
        rows = gather(var.value(), ids)
        return scatter_update(var, ids, _proximal(rows - step * values, step, l1, l2))
