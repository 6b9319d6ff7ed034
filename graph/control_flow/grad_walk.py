"""The while-loop-aware walk of ``ac.gradients``: each while loop on the path is differentiated as
a unit by a backprop while loop (TF1's scheme), everything else op by op as before.

``gradients`` visits ops in reverse creation order. A loop's ops were all created between its
first Enter and its Exits, so at the first op of a loop met (an Exit), every consumer of the
loop's results has been visited. The loop is then differentiated at once:

- per differentiable loop variable k, a backprop loop variable: ``Enter(grad of Exit_k)`` ->
  ``Merge`` -> ``Switch(backprop LoopCond)``; its true output is the gradient of the body result
  (NextIteration_k's input), its false output leaves through an Exit as the gradient of the
  value entering the loop;
- the body's ops are visited in reverse creation order inside the backprop loop's context (nested
  loops recursively), where forward values are read back per iteration (grad_state.py);
- the gradient reaching the body input (Switch_k's true output) closes the backprop back edge
  through NextIteration; loop invariants sum their gradient over iterations in extra backprop
  loop variables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from ..core import Graph, Operation, Tensor
from ..op_builder import make_op
from ..ops.array import zeros_like
from ..ops.math import add_n
from .context import WhileContext, entered, state_of, while_of
from .grad_state import GradLoopState, grad_loop_name, register_loop_ops
from .loop_stacked_grads import loop_stacks, sum_invariant_grads
from .ops import most_specific_compatible_shape

Visit = Callable[[Operation], None]


def backprop_walk(
    g: Graph,
    ordered: list[Operation],
    visit: Visit,
    grads: dict[Tensor, list[Tensor]],
    on_path: set[int],
    xs: list[Tensor],
) -> None:
    """Call ``visit`` on ``ordered`` (reverse creation order), differentiating while loops as units."""
    st = state_of(g, create=False)
    if st is None or not st.has_while:
        for op in ordered:
            visit(op)
        return
    base = while_of(g._control_flow_context)
    for x in xs:
        if _loop_below(st, x.op, base) is not None:
            raise GraphError(
                f"gradients with respect to {x.name}, a tensor inside a while loop, are not supported; "
                "differentiate with respect to a tensor outside the loop"
            )
    _walk(g, ordered, visit, grads, on_path, base, None)


def _loop_below(st: Any, op: Operation, level: WhileContext | None) -> WhileContext | None:
    """The outermost while loop below ``level`` that ``op`` belongs to (None: op is at ``level``)."""
    ctx = st.exit_loop.get(op) or st.op_ctx.get(op)
    found = None
    while ctx is not None and ctx is not level:
        if isinstance(ctx, WhileContext):
            found = ctx
        ctx = ctx.outer
    return found


def _walk(
    g: Graph,
    ops: list[Operation],
    visit: Visit,
    grads: dict[Tensor, list[Tensor]],
    on_path: set[int],
    level: WhileContext | None,
    outer_state: GradLoopState | None,
) -> None:
    st = state_of(g)
    groups: dict[WhileContext, list[Operation]] = {}
    sequence: list[Any] = []
    for op in ops:
        loop = _loop_below(st, op, level)
        if loop is None:
            sequence.append(op)
        else:
            if loop not in groups:
                groups[loop] = []
                sequence.append(loop)
            groups[loop].append(op)
    for item in sequence:
        if isinstance(item, WhileContext):
            _backprop_loop(g, item, groups[item], visit, grads, on_path, outer_state)
        else:
            visit(item)


def _sum(items: list[Any] | None) -> Tensor | None:
    # Loop machinery carries dense gradients: sparse ones (a gather's) are made dense here.
    from ..gradients import aggregate, densify

    return densify(aggregate(items, add_n))


def _differentiable(t: Tensor) -> bool:
    return t.dtype.kind in "fc"


def _backprop_loop(
    g: Graph,
    loop: WhileContext,
    ops: list[Operation],
    visit: Visit,
    grads: dict[Tensor, list[Tensor]],
    on_path: set[int],
    outer_state: GradLoopState | None,
) -> None:
    exit_grads = [_sum(grads.get(x.outputs[0])) for x in loop.exits]
    if all(gr is None for gr in exit_grads):
        return
    name = grad_loop_name(g, loop)
    gs = GradLoopState(loop, outer_state, name)
    ctx = gs.grad_ctx
    stacks = loop_stacks(gs)
    var_ks = [k for k, m in enumerate(loop.merges) if id(m) in on_path and _differentiable(m.outputs[0])]
    back: dict[int, tuple[Operation, Operation, Operation]] = {}  # k -> (Merge, Switch, Exit)
    with g.name_scope(name + "/"), g.control_dependencies(None):
        for k in var_ks:
            g_exit = exit_grads[k]
            if g_exit is None:
                g_exit = zeros_like(loop.exits[k].outputs[0], name="b_exit_zeros")
            e = ctx.make_enter(g_exit, is_constant=False, name="b_exit")
            with entered(g, ctx):
                m = make_op("Merge", [e, e], None, "b_switch")
                assert ctx.loop_cond is not None  # set when the backprop loop was built
                sw = make_op("Switch", [m.outputs[0], ctx.loop_cond], None, "b_switch")
                x = make_op("Exit", [sw.outputs[0]], None, "b_exit")
            back[k] = (m, sw, x)
            grads.setdefault(loop.next_iterations[k].inputs[0], []).append(sw.outputs[1])
            entering = loop.merges[k].inputs[0].op.inputs[0]
            if id(entering.op) in on_path:
                grads.setdefault(entering, []).append(x.outputs[0])
        structural = {*loop.merges, *loop.switches, *loop.next_iterations, *loop.exits}
        structural.update(op for op in ops if op.type == "Enter" or op.type == "LoopCond")
        body = [op for op in ops if op not in structural]
        with entered(g, ctx):
            _walk(g, body, visit, grads, on_path, loop, gs)
            for k in var_ks:
                m, sw, x = back[k]
                g_body = _sum(grads.get(loop.switches[k].outputs[1]))
                if g_body is None:  # the body result does not depend on this variable
                    g_body = zeros_like(m.outputs[0], name="b_body_zeros")
                n = make_op("NextIteration", [g_body], None, "b_next")
                m._update_input(1, n.outputs[0])
                m.outputs[0]._shape = most_specific_compatible_shape(m.inputs[0]._shape, g_body._shape)
                register_loop_ops(ctx, m, sw, n, x)
            for e_op in list(loop.constant_enters):
                if (
                    id(e_op) not in on_path
                    or id(e_op.inputs[0].op) not in on_path
                    or not grads.get(e_op.outputs[0])
                ):
                    continue
                if not _differentiable(e_op.outputs[0]):
                    continue
                # this iteration's gradients, summed over the iterations
                summed = sum_invariant_grads(gs, e_op, grads[e_op.outputs[0]], stacks, _sum)
                grads.setdefault(e_op.inputs[0], []).extend(summed)
    gs.finish()
