"""TF1's older and rarer variable helpers: ``initialize_variables``, ``initialize_local_variables``,
``all_variables``, ``model_variables``, ``moving_average_variables``, ``get_local_variable``,
``tables_initializer`` / ``initialize_all_tables``, ``report_uninitialized_variables`` and
``assert_variables_initialized``, as TF1 defines them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes
from .core import Operation, Tensor, get_default_graph
from .graph_keys import GraphKeys
from .ops.array import shape, size, stack
from .ops.constant import constant
from .ops.control import group, identity, no_op
from .ops.masking import boolean_mask
from .ops.math_composite import logical_not
from .ops.state import is_variable_initialized
from .variable_scope import get_variable
from .variables import Variable, global_variables, local_variables, variables_initializer

__all__ = [
    "all_variables",
    "assert_variables_initialized",
    "get_local_variable",
    "initialize_all_tables",
    "initialize_local_variables",
    "initialize_variables",
    "model_variables",
    "moving_average_variables",
    "report_uninitialized_variables",
    "tables_initializer",
]


def initialize_variables(var_list: Sequence[Variable], name: str = "init") -> Operation:
    """TF1's older name for ``variables_initializer``."""
    return variables_initializer(list(var_list), name=name)


def initialize_local_variables() -> Operation:
    """TF1's older name for ``local_variables_initializer``."""
    return variables_initializer(local_variables(), name="init")


def all_variables() -> list[Variable]:
    """TF1's older name for ``global_variables``."""
    return global_variables()


def model_variables(scope: str | None = None) -> list[Any]:
    """The MODEL_VARIABLES collection (variables a model's layers add for inference)."""
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Any]:
    """The MOVING_AVERAGE_VARIABLES collection (variables an ExponentialMovingAverage tracks)."""
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def get_local_variable(
    name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, **kwargs: Any
) -> Variable:
    """``get_variable`` in the LOCAL_VARIABLES collection, not trainable (TF1's metrics' counters)."""
    kwargs.pop("trainable", None)
    collections = [*(kwargs.pop("collections", None) or ()), GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, trainable=False, collections=collections, **kwargs)


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op running the TABLE_INITIALIZERS collection's ops (a NoOp when there are none)."""
    ops = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(*ops, name=name) if ops else no_op(name=name)


initialize_all_tables = tables_initializer


def _all(var_list: Sequence[Variable] | None) -> list[Variable]:
    return list(var_list) if var_list is not None else global_variables() + local_variables()


def report_uninitialized_variables(
    var_list: Sequence[Variable] | None = None, name: str = "report_uninitialized_variables"
) -> Tensor:
    """A 1-D string tensor of the names (``op.name``) of the variables not initialized yet, of
    ``var_list`` (default: the global and local variables)."""
    variables = _all(var_list)
    with get_default_graph().name_scope(name):
        if not variables:
            return constant(np.array([], dtype=object), dtype=dtypes.string, name="empty")
        names = constant(np.array([v.op.name.encode() for v in variables], dtype=object), dtype=dtypes.string)
        ready = stack([is_variable_initialized(v) for v in variables])
        return boolean_mask(names, logical_not(ready))


def assert_variables_initialized(var_list: Sequence[Variable] | None = None) -> Tensor | None:
    """A tensor whose computation reads every variable of ``var_list`` (default: the global and
    local ones), so its step fails with FailedPreconditionError naming one that is not initialized
    (TF1's: the ranks of the values read); None when there are none."""
    variables = _all(var_list)
    if not variables:
        return None
    with get_default_graph().name_scope("assert_variables_initialized"):
        return stack([rank_of_value(identity(v)) for v in variables])


def rank_of_value(t: Tensor) -> Tensor:
    """The rank of ``t`` computed from its value at run time (``tf.rank`` folds a known one)."""
    return size(shape(t))
