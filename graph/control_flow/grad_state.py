"""Per-loop gradient state: the forward iteration counter, the backprop loop and its counter, and
forward values saved per iteration (TF1's GradLoopState, with index-addressed accumulators).

The forward loop gets a counter when a gradient first needs it (``forward_counter``): in
iteration ``i`` its value is ``i``. A forward value ``v`` the backprop loop needs is pushed in
every iteration with ``AccumulatorPush(acc, i, v)`` into an ``Accumulator`` created in the loop's
outer context (a fresh one per step, or per outer iteration for nested loops). The backprop loop
counts ``n-1 .. 0`` and pops ``AccumulatorPop(acc, index)``. Pushes are control inputs of the
counter's NextIteration (through one NoOp), so the forward loop exits (and the backprop loop starts) only after
every push; a push on a cond branch joins through a Merge with the other branch's pivot, because
a dead control input would kill the counter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from .. import shapes as S
from ..core import Graph, Operation, Tensor
from ..op_builder import make_op
from ..ops.array import zeros_like
from ..ops.math import add, greater_equal, subtract
from .context import (
    CondContext,
    ControlFlowContext,
    WhileContext,
    entered,
    is_ref,
    state_of,
    tensor_context,
    while_of,
)


class ForwardCounter:
    """Iteration index of a forward loop: ``index`` (i in iteration i), ``next_op``, ``total``."""

    def __init__(self, index: Tensor, next_op: Operation, total: Tensor) -> None:
        self.index = index
        self.next_op = next_op
        self.total = total


def _const(value: Any, dtype: Any, name: str) -> Tensor:
    arr = np.asarray(value, dtype=dtype)
    arr.setflags(write=False)
    return make_op("Const", [], {"value": arr, "dtype": np.dtype(dtype)}, name).outputs[0]


def add_loop_var(
    ctx: WhileContext, init: Tensor, step: Any, name: str
) -> tuple[Tensor, Operation, Operation, Tensor]:
    """A loop variable added to a built loop: returns (value in the iteration, its Merge,
    NextIteration, Exit output). ``step(value) -> next value`` is built inside the loop."""
    g = ctx.graph
    e = ctx.make_enter(init, is_constant=False, name=name)
    with entered(g, ctx):
        m = make_op("Merge", [e, e], None, name)
        assert ctx.loop_cond is not None  # the loop is built
        sw = make_op("Switch", [m.outputs[0], ctx.loop_cond], None, name)
        n = make_op("NextIteration", [step(sw.outputs[1])], None, name)
        m._update_input(1, n.outputs[0])
        x = make_op("Exit", [sw.outputs[0]], None, name)
    register_loop_ops(ctx, m, sw, n, x)
    return sw.outputs[1], m, n, x.outputs[0]


def register_loop_ops(
    ctx: WhileContext, merge: Operation, switch: Operation, nxt: Operation, exit_op: Operation
) -> None:
    st = ctx.state
    st.loop_merges.add(merge)
    st.loop_structure.update((merge, switch, nxt, exit_op))
    st.exit_loop[exit_op] = ctx
    if ctx.outer is None:
        st.op_ctx.pop(exit_op, None)
    else:
        st.op_ctx[exit_op] = ctx.outer


def forward_counter(loop: WhileContext) -> ForwardCounter:
    if loop.counter is None:
        g = loop.graph
        with g.name_scope(loop.name + "/"), g.control_dependencies(None):
            with entered(g, loop.outer):
                zero = _const(0, dtypes.int32, "f_count_init")
            with entered(g, loop):
                index, _, nxt, total = add_loop_var(
                    loop,
                    zero,
                    lambda i: add(i, _const(1, dtypes.int32, "one"), name="f_count_next"),
                    "f_count",
                )
        loop.counter = ForwardCounter(index, nxt, total)
    return loop.counter


class GradLoopState:
    """The backprop loop of one forward while loop (inside the backprop loop of its outer loop)."""

    def __init__(self, forward: WhileContext, outer: GradLoopState | None, name: str) -> None:
        self.forward = forward
        self.outer = outer
        g = self.graph = forward.graph
        self.counter = forward_counter(forward)
        self.history: dict[Tensor, Tensor] = {}
        self._pushes: list[Operation] = []
        self._proxies: dict[tuple, Tensor] = {}
        ctx = self.grad_ctx = WhileContext(
            g, g._control_flow_context, name, forward.parallel_iterations, grad_state=self
        )
        with g.name_scope(name + "/"), g.control_dependencies(None):
            # Counts n .. 1 while the body runs with index n-1 .. 0: forward iterations in reverse.
            e = ctx.make_enter(self.counter.total, is_constant=False, name="b_count")
            with entered(g, ctx):
                m = make_op("Merge", [e, e], None, "b_count")
                ctx.pivot_for_pred = m.outputs[0]
                one = _const(1, dtypes.int32, "one")
                ctx.loop_cond = make_op(
                    "LoopCond", [greater_equal(m.outputs[0], one)], None, "b_count"
                ).outputs[0]
                sw = make_op("Switch", [m.outputs[0], ctx.loop_cond], None, "b_count")
                self.index = subtract(sw.outputs[1], one, name="b_index")
                ctx.pivot_for_body = self.index
                n = make_op("NextIteration", [self.index], None, "b_count")
                m._update_input(1, n.outputs[0])
                x = make_op("Exit", [sw.outputs[0]], None, "b_count")
        register_loop_ops(ctx, m, sw, n, x)

    # -- forward values inside the backprop loop --------------------------------------------
    def real_value(self, value: Tensor) -> Tensor:
        """The value ``value`` (of the forward loop) had in the iteration being differentiated."""
        real = self.history.get(value)
        if real is not None:
            return real
        cur, gs = value, self
        while True:
            if gs.forward.is_constant_enter(cur.op):
                cur = cur.op.inputs[0]  # a loop invariant: the same value in every iteration
                gs = gs.outer  # type: ignore[assignment]
                if gs is None:
                    real = self.grad_ctx.add_value(cur)
                    break
                continue
            if cur.op.type == "Const":
                g = self.graph
                with entered(g, self.grad_ctx), g.control_dependencies(None):
                    real = make_op("Const", [], dict(cur.op.attrs), "Const").outputs[0]
                break
            real = gs.pop_value(gs.push_value(cur), cur)
            if gs is not self:
                real = self.grad_ctx.add_value(real)
            break
        self.history[value] = real
        return real

    def push_value(self, value: Tensor) -> Tensor:
        """Save ``value`` in every forward iteration; returns the accumulator handle."""
        g, loop = self.graph, self.forward
        vctx = tensor_context(value)
        with g.name_scope(loop.name + "/"), g.control_dependencies(None):
            with entered(g, loop.outer):
                acc = g.create_op("Accumulator", [], None, "f_acc").outputs[0]
            with entered(g, vctx):
                push = g.create_op("AccumulatorPush", [acc, self.counter.index, value], None, "f_acc_push")
            self._order_before_next_iteration(push, vctx)
        return acc

    def _order_before_next_iteration(self, op: Operation, ctx: ControlFlowContext | None) -> None:
        g = self.graph
        while ctx is not self.forward:
            assert isinstance(ctx, CondContext), "a pushed value lives in its loop or a cond inside it"
            rec = ctx.record
            with entered(g, ctx):
                done = make_op(
                    "Identity", [rec.pivots[ctx.branch]], None, "push_done", control_inputs=[op]
                ).outputs[0]
            pair = [done, rec.pivots[1]] if ctx.branch == 0 else [rec.pivots[0], done]
            with entered(g, ctx.outer):
                op = make_op("Merge", pair, None, "push_sync")
            ctx = ctx.outer
        self._pushes.append(op)

    def finish(self) -> None:
        """Order this gradient's pushes before the forward counter's NextIteration (one NoOp, as
        adding thousands of control inputs one by one would be quadratic)."""
        if self._pushes:
            g = self.graph
            with (
                g.name_scope(self.forward.name + "/"),
                g.control_dependencies(None),
                entered(g, self.forward),
            ):
                sync = make_op("NoOp", [], None, "f_sync", control_inputs=self._pushes)
            self.counter.next_op._add_control_input(sync)
            self._pushes = []

    def pop_value(self, acc: Tensor, value: Tensor) -> Tensor:
        """``value`` of the matching forward iteration, read back in the backprop loop."""
        g = self.graph
        cond_ctx = self._guarding_cond(value)
        with entered(g, self.grad_ctx), g.control_dependencies(None):
            handle = acc
            if cond_ctx is not None:
                # Pushed only when the branch ran: pop only then (the pop is dead otherwise).
                handle = make_op("Switch", [acc, cond_ctx.record.pred_id], None, "b_acc_switch").outputs[
                    cond_ctx.branch
                ]
            return make_op(
                "AccumulatorPop",
                [handle, self.index],
                {"dtype": value.dtype, "shape": value._shape},
                "b_acc_pop",
            ).outputs[0]

    def shape_proxy(self, value: Tensor) -> Tensor | None:
        """Zeros standing in for a forward ``value`` whose shape is all a shape-only op needs."""
        if while_of(tensor_context(value)) is not self.forward or not S.is_fully_defined(value._shape):
            return None
        if value.dtype.kind not in "biufc":
            return None
        cond_ctx = self._guarding_cond(value)
        # One proxy per shape, dtype and cond branch: the zeros are made outside the backprop loop
        # and entered as an invariant, so no op runs per iteration for them (unless in a cond).
        key = (value._shape, value.dtype.str, id(cond_ctx))
        proxy = self._proxies.get(key)
        if proxy is None:
            g = self.graph
            with g.control_dependencies(None):
                with entered(g, self.grad_ctx.outer):
                    zeros = _const(np.zeros(value._shape, dtype=value.dtype), value.dtype, "zeros_proxy")
                with entered(g, self.grad_ctx):
                    proxy = self.grad_ctx.add_value(zeros)
                    if cond_ctx is not None:
                        proxy = make_op(
                            "Switch", [proxy, cond_ctx.record.pred_id], None, "b_zeros_switch"
                        ).outputs[cond_ctx.branch]
            self._proxies[key] = proxy
        return proxy

    def _guarding_cond(self, value: Tensor) -> CondContext | None:
        """The innermost cond branch (inside the forward loop) ``value`` lives in."""
        ctx = tensor_context(value)
        while ctx is not None and ctx is not self.forward:
            if isinstance(ctx, CondContext):
                return ctx
            ctx = ctx.outer
        return None

    # -- loop invariants ------------------------------------------------------------------------
    def accumulate(self, enter_op: Operation, grad: Tensor) -> Tensor:
        """Sum of ``grad`` over all iterations: the gradient of a loop invariant ``enter_op`` brings in."""
        g, ctx = self.graph, self.grad_ctx
        src = enter_op.inputs[0]
        with g.control_dependencies(None):
            with entered(g, ctx.outer):
                if S.is_fully_defined(grad._shape):
                    init = _const(np.zeros(grad._shape, dtype=grad.dtype), grad.dtype, "b_acc_init")
                elif is_ref(src):
                    init = zeros_like(
                        make_op("ReadVariable", [src], None, "read").outputs[0], name="b_acc_init"
                    )
                else:
                    init = zeros_like(src, name="b_acc_init")
            _, _, _, total = add_loop_var(ctx, init, lambda acc: add(acc, grad, name="b_acc_add"), "b_acc")
        return total


def grad_loop_name(g: Graph, forward: WhileContext) -> str:
    return g.unique_name(forward.name.rsplit("/", 1)[-1] + "_grad")


__all__ = ["ForwardCounter", "GradLoopState", "add_loop_var", "forward_counter", "grad_loop_name", "state_of"]
