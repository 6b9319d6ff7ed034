"""TF1 control flow on the graph side: ``cond`` and ``while_loop`` built from Switch / Merge /
Enter / Exit / NextIteration / LoopCond, their gradients, and the contexts routing inputs.

The op types in ``CONTROL_FLOW_OPS`` have no kernels: the executor implements them natively
(frames, iterations, dead tensors). Importing this package registers every op and gradient.
"""

from __future__ import annotations

from . import ops  # noqa: F401  (registers the op types and gradients)
from .cond import cond
from .context import CondContext, ControlFlowContext, WhileContext, op_context, tensor_context
from .ops import (
    ACCUMULATOR_OPS,
    CONTROL_FLOW_OPS,
    control_trigger,
    enter,
    exit_,
    loop_cond,
    merge,
    next_iteration,
    switch,
)
from .while_loop import while_loop

__all__ = [
    "ACCUMULATOR_OPS",
    "CONTROL_FLOW_OPS",
    "CondContext",
    "ControlFlowContext",
    "WhileContext",
    "cond",
    "control_trigger",
    "enter",
    "exit_",
    "loop_cond",
    "merge",
    "next_iteration",
    "op_context",
    "switch",
    "tensor_context",
    "while_loop",
]
