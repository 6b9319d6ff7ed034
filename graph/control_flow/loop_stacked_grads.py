"""A loop invariant's per-iteration MatMul / BiasAddGrad gradients summed by one op after the
backprop loop, over their operands stacked across iterations.

The gradient of a weight a while loop's body reads (a loop invariant, entered with
``is_constant``) is, in each backprop iteration, ``MatMul(a_i, g_i, transpose_a=True)`` (a
dynamic_rnn cell's kernel) or ``BiasAddGrad(g_i)`` (its bias), which a backprop loop variable
sums (``GradLoopState.accumulate``): per iteration one GEMM whose inner size is the batch and an
Add of the weight's size. Instead, each iteration writes the operands into TensorArrays at the
forward iteration's index, and after the loop one op over the concatenated operands gives the
sum, as graph/stacked_grads.py does for an unrolled RNN (``sum a_i^T g_i = [a_1; ..; a_n]^T
[g_1; ..; g_n]``). Only the sum's rounding order changes. A forward value the backprop loop
pops only for such ops (the cell's ``[x, h]``) is not popped at all: ``AccumulatorConcat`` takes
every iteration's saved value at once after the forward loop.

The writes happen as soon as their values exist: the stack of a forward value is complete right
after the forward loop (the backprop loop's counter and pops do not wait for gradients), and one
of gradients at the backprop loop's end. For dynamic_rnn's 2-layer LSTM(200) over 20 steps this
replaces 40 GEMMs of inner size 20, 40 BiasAddGrads and 80 Adds per step by 2 GEMMs of inner
size 400 and 2 BiasAddGrads (kernel nodes per step 1491 -> 1177 with the other changes).

Only backprop loops at the top level qualify (a nested loop's backprop loop, or one built
inside a cond, keeps the per-iteration sum: kept simple, not measured), and only ops built in
the backprop loop's own context; every other gradient of the invariant (one read in a cond in
the body reaches it through the cond's Merge) is summed by the loop variable as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Operation, Tensor
from ..op_builder import make_op
from ..ops.array import concat
from ..ops.tensor_array import TensorArray
from ..stacked_grads import build_stacked, stack_groups, stackable
from .context import entered, op_context
from .grad_state import GradLoopState, add_loop_var


class IterationStacks:
    """Values of one backprop loop saved in every iteration and concatenated after it (row-wise,
    in forward iteration order): one TensorArray per value, shared by every op stacking it."""

    def __init__(self, gs: GradLoopState) -> None:
        self.gs = gs
        self._concats: dict[Tensor, Tensor] = {}

    def stacked(self, values: list[Tensor]) -> Tensor:
        parts = [self._concat_of(v) for v in values]
        return parts[0] if len(parts) == 1 else concat(parts, 0)

    def _concat_of(self, value: Tensor) -> Tensor:
        done = self._concats.get(value)
        if done is not None:
            return done
        gs = self.gs
        g, ctx = gs.graph, gs.grad_ctx
        assert value._shape is not None  # the stackers take rank-2 operands of known width
        acc = self._saved_only_for_stacking(value)
        if acc is not None:
            # A forward value popped only to be stacked: all of its accumulator at once, after the
            # forward loop (every push precedes its counter's exit), instead of a pop and a write
            # per iteration.
            with g.control_dependencies(None), entered(g, ctx.outer):
                done = make_op(
                    "AccumulatorConcat",
                    [acc],
                    {"dtype": value.dtype, "element_shape": value._shape},
                    "b_stacked",
                    control_inputs=[gs.counter.total.op],
                ).outputs[0]
            self._concats[value] = done
            return done
        with g.control_dependencies(None):
            with entered(g, ctx.outer):
                ta = TensorArray(
                    value.dtype,
                    size=gs.counter.total,
                    element_shape=(None, value._shape[1]),
                    name="b_stack",
                )
            # The flow is a loop variable, so the concat follows every iteration's write.
            _, _, _, flow = add_loop_var(
                ctx, ta.flow, lambda f: ta._with_flow(f).write(gs.index, value).flow, "b_stack"
            )
            with entered(g, ctx.outer):
                done = ta._with_flow(flow).concat(name="b_stacked")
        self._concats[value] = done
        return done

    def _saved_only_for_stacking(self, value: Tensor) -> Tensor | None:
        """The accumulator handle of forward value ``value`` when ``value`` is its pop in the backprop
        loop (not guarded by a cond) and every consumer is a stackable gradient op (each is
        stacked: none will run); else None."""
        pop = value.op
        if pop.type != "AccumulatorPop" or self.gs.forward.outer is not None:
            return None
        enter = pop.inputs[0].op
        if not self.gs.grad_ctx.is_constant_enter(enter) or enter.inputs[0].op.type != "Accumulator":
            return None
        if not all(stackable(c.outputs[0]) is c for c in pop._consumers if c.outputs):
            return None
        if any(not c.outputs for c in pop._consumers):
            return None
        return enter.inputs[0]


def loop_stacks(gs: GradLoopState) -> IterationStacks | None:
    """Stacks for ``gs``'s backprop loop, or None where its invariants' gradients are not stacked."""
    if gs.outer is not None or gs.grad_ctx.outer is not None:
        return None
    return IterationStacks(gs)


def sum_invariant_grads(
    gs: GradLoopState,
    enter_op: Operation,
    items: list[Any],
    stacks: IterationStacks | None,
    add: Callable[[list[Any]], Tensor | None],
) -> list[Tensor]:
    """Tensors (outside the backprop loop) whose sum is the gradient of loop invariant
    ``enter_op`` over all iterations, given its gradients ``items`` in one iteration; ``add``
    sums one iteration's unstacked gradients (the backprop walk's own sum)."""
    sums: list[Tensor] = []
    rest = items
    if stacks is not None:
        picked: set[int] = set()
        ctx = gs.grad_ctx
        for ops in stack_groups(items).values():
            if not all(op_context(op) is ctx for op in ops):
                continue
            with entered(gs.graph, ctx.outer):
                sums.append(build_stacked(ops, stacks.stacked))
            picked.update(id(op.outputs[0]) for op in ops)
        rest = [t for t in items if id(t) not in picked]
    if rest:
        total = add(rest)
        assert total is not None  # rest is not empty
        sums.append(gs.accumulate(enter_op, total))
    return sums
