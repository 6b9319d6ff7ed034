"""A shared weight's per-use gradients summed as one op over row-stacked operands.

A weight used at n places (an unrolled RNN's kernel and bias, at every step) gets n gradients
that the gradient sum would add with an AddN. Two kinds are summed instead by one op on their
operands stacked along the rows (``concat`` on axis 0), with the same value:

- ``MatMul(a_i, b_i, transpose_a=True)``: ``sum a_i^T b_i = [a_1; ...; a_n]^T [b_1; ...; b_n]``.
  For static_rnn's 20 steps of a (20, 400) by (20, 800) product, one GEMM with an inner dimension
  of 400 instead of 20 GEMMs with 20 and a sum of 20 (400, 800) arrays: 20 -> 3.3 ms on one
  OpenBLAS thread.
- ``BiasAddGrad(g_i)`` of matrices: the column sums of the stacked ``g_i`` (one reduction instead
  of n and an AddN). The stack of the ``g_i`` is shared with the MatMul's when it exists.

Only the sum's rounding order changes. The n per-use ops stay in the graph, unused (no run
computes them). Only top-level ops qualify (no while loop or cond around them or their operands:
those would live in other frames) that nothing else consumes, with no control inputs, on one
device, with known operand widths. A loop invariant's per-iteration gradients are stacked the
same way over the iterations of a backprop loop (graph/control_flow/loop_stacked_grads.py), with
``build_stacked`` and another way of stacking the operands.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from .core import Operation, Tensor

# the operands of a group's ops, one per op, as one row-stacked tensor
StackFn = Callable[[list[Tensor]], Tensor]
# op type -> (does this op qualify, key grouping ops that stack together, the op over the stacks)
Stacker = tuple[
    Callable[[Operation], bool], Callable[[Operation], tuple], Callable[[list[Operation], StackFn], Tensor]
]
_STACKERS: dict[str, Stacker] = {}


def _stacker(op_type: str, fits: Callable[[Operation], bool], key: Callable[[Operation], tuple]) -> Any:
    def deco(
        build: Callable[[list[Operation], StackFn], Tensor],
    ) -> Callable[[list[Operation], StackFn], Tensor]:
        _STACKERS[op_type] = (fits, key, build)
        return build

    return deco


def _widths_known(op: Operation) -> bool:
    return all(s is not None and len(s) == 2 and s[1] is not None for s in (x._shape for x in op.inputs))


def _widths(op: Operation) -> tuple:
    return tuple(x._shape[1] for x in op.inputs)  # type: ignore[index]


def _stacked(ts: list[Tensor]) -> Tensor:
    """``concat(ts, 0)``, reusing one already built from the same tensors."""
    from .ops.array import concat

    for c in ts[0].op._consumers:
        if (
            c.type == "ConcatV2"
            and c.attrs["axis"] == 0
            and len(c.inputs) == len(ts)
            and all(x is y for x, y in zip(c.inputs, ts))
        ):
            return c.outputs[0]
    return concat(ts, 0)


@_stacker(
    "MatMul",
    lambda op: op.attrs["transpose_a"] and not op.attrs["transpose_b"] and _widths_known(op),
    _widths,
)
def _stack_matmuls(ops: list[Operation], stack: StackFn) -> Tensor:
    from .ops.math import matmul

    a = stack([op.inputs[0] for op in ops])
    return matmul(a, stack([op.inputs[1] for op in ops]), transpose_a=True)


@_stacker("BiasAddGrad", _widths_known, lambda op: (*_widths(op), op.attrs["data_format"]))
def _stack_bias_grads(ops: list[Operation], stack: StackFn) -> Tensor:
    from .op_builder import make_op

    g = stack([op.inputs[0] for op in ops])
    return make_op("BiasAddGrad", [g], dict(ops[0].attrs), "BiasAddGrad").outputs[0]


def _top_level(ops: list[Operation]) -> bool:
    from .control_flow.context import op_context

    if getattr(ops[0].graph, "_control_flow_context", None) is not None:
        return False
    return all(op_context(op) is None and all(op_context(x.op) is None for x in op.inputs) for op in ops)


def stackable(t: Any) -> Operation | None:
    """The op of a gradient ``t`` that may be stacked: a sole output nothing consumes yet."""
    if not isinstance(t, Tensor) or t.op.type not in _STACKERS:
        return None
    op = t.op
    if op.control_inputs or op._consumers or len(op.outputs) != 1:
        return None
    return op if _STACKERS[op.type][0](op) else None


def stack_groups(items: list[Any]) -> dict[tuple, list[Operation]]:
    """The stackable ops among gradients ``items``, grouped by what may be stacked together."""
    groups: dict[tuple, list[Operation]] = {}
    for t in items:
        op = stackable(t)
        if op is not None:
            key = (op.type, _STACKERS[op.type][1](op), op.outputs[0].dtype, op.device)
            groups.setdefault(key, []).append(op)
    return groups


def build_stacked(ops: list[Operation], stack: StackFn) -> Tensor:
    """The sum of the outputs of ``ops`` (one group of ``stack_groups``) as one op over operands
    stacked by ``stack``, built in the current context on the first op's device."""
    first = ops[0]
    with first.graph.device(first.device) if first.device else contextlib.nullcontext():
        return _STACKERS[first.type][2](ops, stack)


def sum_stacked(items: list[Any]) -> tuple[Tensor | None, list[Any]]:
    """(one op's output standing for the stackable gradients among ``items``, or None; the rest)."""
    groups = stack_groups(items)
    if not groups:
        return None, items
    chosen = max(groups.values(), key=len)
    if len(chosen) < 2 or not _top_level(chosen):
        return None, items
    picked = {id(op.outputs[0]) for op in chosen}
    rest = [t for t in items if id(t) not in picked]
    return build_stacked(chosen, _stacked), rest
