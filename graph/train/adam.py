"""AdamOptimizer and the ApplyAdam op (Kingma & Ba, with TF's epsilon placement)."""

from __future__ import annotations

from typing import Any

from ..core import Graph, Operation, Tensor
from ..gradients import not_differentiable
from ..indexed_slices import IndexedSlices
from ..op_builder import make_op
from ..ops.control import group
from ..ops.math import cast
from ..registry import register_op
from ..variables import Variable
from .optimizer import Optimizer, check_apply_inputs, ref_of


@register_op("ApplyAdam", stateful=True, ref_inputs=(0, 1, 2))
def _apply_adam_shape(op: Operation) -> list:
    # inputs: var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad
    return check_apply_inputs(op, n_refs=3, scalars=(3, 4, 5, 6, 7, 8), grad_index=9)


@register_op("SparseApplyAdam", stateful=True, ref_inputs=(0, 1, 2))
def _sparse_apply_adam_shape(op: Operation) -> list:
    # inputs: var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad (rows), indices
    return check_apply_inputs(op, n_refs=3, scalars=(3, 4, 5, 6, 7, 8), grad_index=9, indices_index=10)


not_differentiable("ApplyAdam", "SparseApplyAdam")


def apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Tensor,
    beta2_power: Tensor,
    lr: Tensor,
    beta1: Tensor,
    beta2: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m, v moving averages; var -= lr_t * m / (sqrt(v) + eps)."""
    attrs = {"use_locking": use_locking, "use_nesterov": bool(use_nesterov)}
    inputs = [ref_of(var), ref_of(m), ref_of(v), beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad]
    return make_op("ApplyAdam", inputs, attrs, name or "ApplyAdam").outputs[0]


def sparse_apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Tensor,
    beta2_power: Tensor,
    lr: Tensor,
    beta1: Tensor,
    beta2: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    indices: Tensor,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """TF1 AdamOptimizer._apply_sparse in one op: m *= beta1 and v *= beta2 (all rows), then
    m[i] += (1 - beta1) g and v[i] += (1 - beta2) g**2 at the indices (rows of repeated indices
    summed first), then var -= lr_t * m / (sqrt(v) + epsilon) (all rows)."""
    inputs = [
        ref_of(var),
        ref_of(m),
        ref_of(v),
        beta1_power,
        beta2_power,
        lr,
        beta1,
        beta2,
        epsilon,
        grad,
        indices,
    ]
    return make_op(
        "SparseApplyAdam", inputs, {"use_locking": use_locking}, name or "SparseApplyAdam"
    ).outputs[0]


class AdamOptimizer(Optimizer):
    """Adam; slots "<var>/Adam" (m) and "<var>/Adam_1" (v), accumulators "beta1_power", "beta2_power"."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adam",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        # As TF: the beta powers live with the variable whose name sorts first.
        first = min(var_list, key=lambda v: v.name)
        self._non_slot("beta1_power", self._beta1, first)
        self._non_slot("beta2_power", self._beta2, first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _get_beta_accumulators(self, graph: Graph) -> tuple[Variable, Variable]:
        b1 = self._get_non_slot("beta1_power", graph)
        b2 = self._get_non_slot("beta2_power", graph)
        assert b1 is not None and b2 is not None, "_create_slots runs before _apply_dense"
        return b1, b2

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        dt = var.dtype
        b1p, b2p = self._get_beta_accumulators(var.graph)
        return apply_adam(
            var,
            self.get_slot(var, "m"),
            self.get_slot(var, "v"),
            cast(b1p, dt),
            cast(b2p, dt),
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("beta1", self._beta1, dt),
            self._hyper("beta2", self._beta2, dt),
            self._hyper("epsilon", self._epsilon, dt),
            grad,
            self._use_locking,
        )

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        dt = var.dtype
        b1p, b2p = self._get_beta_accumulators(var.graph)
        return sparse_apply_adam(
            var,
            self.get_slot(var, "m"),
            self.get_slot(var, "v"),
            cast(b1p, dt),
            cast(b2p, dt),
            self._hyper("learning_rate", self._lr, dt),
            self._hyper("beta1", self._beta1, dt),
            self._hyper("beta2", self._beta2, dt),
            self._hyper("epsilon", self._epsilon, dt),
            grad.values,
            grad.indices,
            self._use_locking,
        )

    def _finish(self, update_ops: list[Tensor | Operation], name_scope: str) -> Operation:
        g = update_ops[0].graph
        b1p, b2p = self._get_beta_accumulators(g)
        with g.control_dependencies(update_ops), g.device(b1p.device or None):
            up1 = b1p.assign(b1p * self._hyper("beta1", self._beta1, b1p.dtype), name="update_beta1")
            up2 = b2p.assign(b2p * self._hyper("beta2", self._beta2, b2p.dtype), name="update_beta2")
        return group(*update_ops, up1, up2, name=name_scope)
