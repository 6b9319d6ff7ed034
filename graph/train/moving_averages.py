"""``ExponentialMovingAverage``: shadow variables that track variables (or tensors), as TF1.

``apply`` makes a shadow "<var>/ExponentialMovingAverage" per variable, starting at the
variable's initial value, and returns the op updating every shadow:
shadow -= (1 - decay) * (shadow - value). With ``num_updates`` the decay is capped by
(1 + num_updates) / (10 + num_updates), so early averages move faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from antcolony.errors import GraphError

from ..core import Operation, Tensor, get_default_graph
from ..graph_keys import GraphKeys
from ..op_builder import convert_to_tensor
from ..ops.array import zeros_like
from ..ops.control import group
from ..ops.math import cast, minimum
from ..ops.state import assign_sub
from ..variables import Variable, global_variables, trainable_variables


class ExponentialMovingAverage:
    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        if zero_debias:
            raise GraphError("ExponentialMovingAverage(zero_debias=True) is not supported")
        self._decay = decay
        self._num_updates = num_updates
        self._name = name
        self._averages: dict[int, tuple[Any, Variable]] = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: Sequence[Any] | None = None) -> Operation:
        """Create shadows for ``var_list`` (default: trainable variables); return the update op."""
        items = list(trainable_variables() if var_list is None else var_list)
        g = get_default_graph()
        for item in items:
            if id(item) in self._averages:
                raise GraphError(f"Moving average already computed for: {_name_of(item)}")
            if not isinstance(item, (Variable, Tensor)):
                raise TypeError(f"ExponentialMovingAverage.apply: {item!r} is not a Variable or Tensor")
            dtype = item.dtype
            if dtype.kind != "f":
                raise GraphError(
                    f"ExponentialMovingAverage needs floating-point values; {_name_of(item)} is {dtype.name}"
                )
            self._averages[id(item)] = (item, self._shadow(g, item))
        with g.name_scope(self._name):
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                n = cast(convert_to_tensor(self._num_updates), decay.dtype)
                decay = minimum(decay, (n + 1.0) / (n + 10.0))
            updates = []
            for item in items:
                shadow = self._averages[id(item)][1]
                value = convert_to_tensor(item)
                rate = 1.0 - (decay if decay.dtype == shadow.dtype else cast(decay, shadow.dtype))
                updates.append(assign_sub(shadow, (convert_to_tensor(shadow) - value) * rate))
            return group(*updates, name=self._name)

    def _shadow(self, g: Any, item: Any) -> Variable:
        init = (
            (lambda: item.initialized_value()) if isinstance(item, Variable) else (lambda: zeros_like(item))
        )
        # As TF's slot creator: at the root scope, free of the caller's control dependencies.
        with g.name_scope(None), g.control_dependencies(None):
            shadow = Variable(init, trainable=False, name=self.average_name(item))
        if isinstance(item, Variable):
            g.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, item)
        return shadow

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var`` (None if ``apply`` did not cover it)."""
        found = self._averages.get(id(var))
        return found[1] if found else None

    def average_name(self, var: Any) -> str:
        return f"{_name_of(var)}/{self._name}"

    def variables_to_restore(
        self, moving_avg_variables: Sequence[Variable] | None = None
    ) -> dict[str, Variable]:
        """Checkpoint name -> variable, mapping each averaged variable's shadow name onto the variable
        itself (to evaluate a model with its averaged weights), other variables by their own name."""
        averaged = (
            list(moving_avg_variables)
            if moving_avg_variables is not None
            else (
                get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
                or trainable_variables()
            )
        )
        shadows = {id(s) for _, s in self._averages.values()}
        out: dict[str, Variable] = {}
        for v in global_variables():
            if id(v) in shadows:
                continue
            out[self.average_name(v) if v in averaged else v.op.name] = v
        return out


def _name_of(item: Any) -> str:
    return item.op.name
