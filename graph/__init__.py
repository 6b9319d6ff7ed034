"""What to compute: Graph, Operation, Tensor, op builders, gradients, variables, GraphDef."""

from __future__ import annotations

from . import dtypes
from .core import (
    Graph, Operation, Tensor, control_dependencies, device, get_default_graph, name_scope,
    reset_default_graph, set_random_seed,
)
from .gradients import GRADIENTS, gradients, not_differentiable, register_gradient
from .registry import OP_DEFS, OpDef, get_op_def, register_op
from .tensor_shape import TensorShape
from .variables import (
    Variable, global_variables, global_variables_initializer, trainable_variables, variables_initializer,
)
from . import ops  # noqa: E402  (registers every op type)
from . import control_flow  # noqa: E402,F401  (registers Switch, Merge, Enter, ... and cond/while_loop)

__all__ = [
    "dtypes", "Graph", "Operation", "Tensor", "TensorShape", "control_dependencies", "device",
    "get_default_graph", "name_scope", "reset_default_graph", "set_random_seed", "GRADIENTS", "gradients",
    "not_differentiable", "register_gradient", "OP_DEFS", "OpDef", "get_op_def", "register_op", "Variable",
    "global_variables", "global_variables_initializer", "trainable_variables", "variables_initializer", "ops",
]
from . import graph_def  # noqa: E402,F401  (adds Graph.as_graph_def)
from . import default_session  # noqa: E402,F401  (adds Tensor.eval and Operation.run)
