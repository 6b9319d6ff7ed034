"""What to compute: Graph, Operation, Tensor, op builders, gradients, variables, GraphDef."""

from __future__ import annotations

from . import (
    control_flow,  # noqa: F401  (registers Switch, Merge, Enter, ... and cond/while_loop)
    dtypes,
    ops,
)
from .core import (
    Graph,
    Operation,
    Tensor,
    control_dependencies,
    device,
    get_default_graph,
    name_scope,
    reset_default_graph,
    set_random_seed,
)
from .gradients import GRADIENTS, gradients, not_differentiable, register_gradient
from .registry import OP_DEFS, OpDef, get_op_def, register_op
from .tensor_shape import TensorShape
from .variables import (
    Variable,
    global_variables,
    global_variables_initializer,
    trainable_variables,
    variables_initializer,
)

__all__ = [
    "GRADIENTS",
    "OP_DEFS",
    "Graph",
    "OpDef",
    "Operation",
    "Tensor",
    "TensorShape",
    "Variable",
    "control_dependencies",
    "device",
    "dtypes",
    "get_default_graph",
    "get_op_def",
    "global_variables",
    "global_variables_initializer",
    "gradients",
    "name_scope",
    "not_differentiable",
    "ops",
    "register_gradient",
    "register_op",
    "reset_default_graph",
    "set_random_seed",
    "trainable_variables",
    "variables_initializer",
]
from . import (
    default_session,  # noqa: F401  (adds Tensor.eval and Operation.run)
    graph_def,  # noqa: F401  (GraphDef, import_graph_def)
)
