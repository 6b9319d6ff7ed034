"""Loop fusion, when planning: a while-loop frame of CPU ops becomes one node (MXNet's bulk
segments, applied to loops).

Unfused, one loop iteration is some twenty actor messages through the frame's Merge, Switch,
Identity, LoopCond, kernel and NextIteration nodes. ``fuse_loops`` replaces each fusable frame
of a partition's plan by one ``FusedLoopPlan`` node whose inputs are the frame's Enter inputs
(loop variables and invariants) and whose outputs are its Exit outputs; its node actor
(``actors/fused_loop.py``) runs the iterations itself, through the ``LoopLayout`` built here
(``loop_layout.py``): the frame's ops in a fixed order over a flat list of value slots. A frame
whose kernels all run inline is run on the event loop in chunks; one with a kernel that may
leave the event loop (expensive on inputs of unknown or large static shape: a dynamic_rnn
cell's MatMul) is run whole on the CPU worker, one launch per loop run, as one long kernel.

A frame is fused when (``_why_not`` names the first reason otherwise):

- its partition is the host CPU (a GPU loop keeps its kernels on the GPU's streams);
- every op in it has a CPU kernel that never blocks or waits on other steps' work, and is
  stateless or keeps its state in a handle made per run (``HANDLE_STATE_OPS``: TensorArrays and
  the accumulators of loop gradients, whose order is the data order of their handle and flow):
  no variable, random, print or other stateful op, no variable reference routed in;
- it holds no nested loop frame and no Recv, and nothing in it but its Exits is fetched, sent to
  another partition or consumed outside it;
- it has while_loop's shape (checked by ``loop_layout.build_layout``).

Conds inside the frame are fused too: the layout then evaluates with TF's dead-value rule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from antcolony.actors.loop_layout import LoopLayout, NotFusable, build_layout
from antcolony.actors.loop_program import LoopProgram
from antcolony.actors.messages import CONTROL
from antcolony.actors.node import NodeSpec
from antcolony.graph.control_flow.ops import ACCUMULATOR_OPS
from antcolony.graph.passes import HOST

logger = logging.getLogger(__name__)

#: ``NodeSpec.role`` of a fused loop's node (``node_class`` picks ``FusedLoopNode`` for it).
FUSED_LOOP = "FusedLoop"

#: Stateful ops a fused loop may hold: their state lives in a handle a kernel makes per run (a
#: TensorArray's store, an accumulator), which reaches its readers and writers as a value, so the
#: graph's data edges order every use of it as the fused loop's fixed op order does.
HANDLE_STATE_OPS = ACCUMULATOR_OPS | {"TensorArrayV3", "TensorArrayGradV3", "TensorArrayCloseV3"}


class FusedLoopOp:
    """Stands for a fused loop frame in traces, node names and errors (not an op of the graph)."""

    __slots__ = ("name", "type", "device", "outputs")

    def __init__(self, frame_name: str, device: str, outputs: tuple[Any, ...]) -> None:
        self.name = f"{frame_name}/fused_loop"
        self.type = FUSED_LOOP
        self.device = device
        self.outputs = outputs  # the Exits' tensors, in the fused node's output order


class FusedLoopPlan:
    """A fused loop frame in a partition's plan. It has the fields of a ``PlannedNode`` that the
    planner wires (edges, fetches, sends, bound inputs, expected inputs) and binds like one."""

    def __init__(
        self, device: str, layout: LoopLayout, exit_outputs: tuple[Any, ...], on_worker: bool = False
    ) -> None:
        self.device = device
        self.on_worker = on_worker  # a kernel may leave the event loop: run on the CPU worker
        self.op = FusedLoopOp(layout.name, device, exit_outputs)
        self.transfer = None
        self.layout = layout
        self.out_edges: list[tuple[int, int, int]] = []
        self.fetch_slots: list[tuple[int, int]] = []
        self.bound_inputs: list[tuple[int, Any]] = []  # (fused input slot, Const op)
        self.send_keys: list[tuple[int, str]] = []
        self.expected = 1
        self.may_be_dead = True
        self.role = FUSED_LOOP
        self.role_attrs: dict[str, Any] = {}

    def bind(self, ctx: Any, constants: dict[int, Any], rank: int = 0) -> NodeSpec:
        """The frozen spec: the layout's kernels and constants bound through ``ctx`` (``rank``:
        as ``PlannedNode.bind``'s)."""
        program = LoopProgram(self.layout, self.op, ctx, self.device, constants)
        for _, op in self.bound_inputs:
            if id(op) not in constants:
                constants[id(op)] = ctx.const_value(op, self.device)
        return NodeSpec(
            op=self.op,
            compute=None,
            num_inputs=len(self.layout.inputs),
            single_output=len(self.layout.exits) == 1,
            expensive=self.on_worker,
            inline_threshold=0,
            device=self.device,
            worker=ctx.worker(self.device) if self.on_worker else None,
            out_edges=tuple(self.out_edges),
            fetch_slots=tuple(self.fetch_slots),
            bound_inputs=tuple((slot, constants[id(op)]) for slot, op in self.bound_inputs),
            send_keys=tuple(self.send_keys),
            expected=self.expected,
            may_be_dead=True,
            role=FUSED_LOOP,
            role_attrs={"program": program},
            rank=rank,
        )


def fuse_loops(
    plan: Any, inline_kernel: Callable[[Any, str], bool], worker_kernel: Callable[[Any, str], bool]
) -> None:
    """Replace each fusable loop frame of ``plan`` (an ``ExecutorPlan`` before its expected
    inputs and roots are counted) by one ``FusedLoopPlan``; ``inline_kernel(op, device)`` says
    whether an op's kernel runs inline whatever is fed, ``worker_kernel(op, device)`` whether
    it may run on a worker thread inside a fused loop."""
    nodes = plan.nodes
    ins = _in_edges(plan)
    frames: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        if node.role == "Enter":
            frames.setdefault(node.role_attrs["frame_name"], []).append(i)
    fusions: list[tuple[list[int], FusedLoopPlan]] = []
    for name, enters in frames.items():
        members = _members(nodes, enters)
        try:
            if members is None:
                raise NotFusable("it holds a nested loop")
            why = _why_not(plan, members, ins, worker_kernel)
            if why is not None:
                raise NotFusable(why)
            layout = build_layout(name, nodes, sorted(members), ins)
        except NotFusable as exc:
            logger.debug("loop %r on %s is not fused: %s", name, plan.device, exc)
            continue
        exits = tuple(nodes[x].op.outputs[0] for x in layout.exit_nodes)
        on_worker = any(
            nodes[i].role is None and not inline_kernel(nodes[i].op, plan.device) for i in members
        )
        fusions.append((sorted(members), FusedLoopPlan(plan.device, layout, exits, on_worker)))
    if fusions:
        _rewrite(plan, fusions)


def _in_edges(plan: Any) -> list[list[tuple[int, int, int]]]:
    """Per node, its incoming edges as (source node or -1 for a feed, output index, input slot)."""
    ins: list[list[tuple[int, int, int]]] = [[] for _ in plan.nodes]
    for src, node in enumerate(plan.nodes):
        for out, dst, slot in node.out_edges:
            ins[dst].append((src, out, slot))
    for dst, slot, _ in plan.feed_edges:
        ins[dst].append((-1, 0, slot))
    return ins


def _members(nodes: list[Any], enters: list[int]) -> set[int] | None:
    """The nodes of the frame entered by ``enters``: forward from them, up to and including its
    Exits; None when the walk meets another frame's Enter (a nested loop)."""
    members = set(enters)
    stack = list(enters)
    while stack:
        node = nodes[stack.pop()]
        if node.role == "Exit":
            continue
        for _, dst, _ in node.out_edges:
            if dst in members:
                continue
            if nodes[dst].role == "Enter":
                return None
            members.add(dst)
            stack.append(dst)
    return members


def _why_not(
    plan: Any,
    members: set[int],
    ins: list[list[tuple[int, int, int]]],
    worker_kernel: Callable[[Any, str], bool],
) -> str | None:
    """Why the frame of ``members`` must not be fused (None: it may be, if it has a loop's shape)."""
    if plan.device != HOST:
        return f"it runs on {plan.device}"
    for i in members:
        node = plan.nodes[i]
        op = node.op
        if op is None:
            return "it receives a value from another partition inside the frame"
        if node.role != "Exit" and (node.fetch_slots or node.send_keys):
            return f"{op.name} is fetched or sent to another partition"
        if node.role != "Enter" and any(src not in members for src, _, _ in ins[i]):
            return f"{op.name} has an input from outside the frame"
        if node.role != "Exit" and any(dst not in members for _, dst, _ in node.out_edges):
            return f"{op.name} has a consumer outside the frame"
        if node.role is None:
            if (op.op_def.stateful and op.type not in HANDLE_STATE_OPS) or op.op_def.ref_inputs:
                return f"{op.name} ({op.type}) is stateful"
            if not worker_kernel(op, plan.device):
                return f"{op.name} ({op.type}) has no CPU kernel that runs without waiting"
        elif "shared_name" in op.attrs:
            return f"{op.name} routes a variable reference"
    return None


def _rewrite(plan: Any, fusions: list[tuple[list[int], FusedLoopPlan]]) -> None:
    """Put each fused node in place of its frame's nodes and renumber every edge."""
    nodes = plan.nodes
    owner: dict[int, int] = {}  # member node -> fusion
    for f, (members, _) in enumerate(fusions):
        for i in members:
            owner[i] = f
    new_index: dict[int, int] = {}
    fused_index: list[int] = [0] * len(fusions)
    kept: list[Any] = []
    for i, node in enumerate(nodes):
        fusion = owner.get(i)
        if fusion is None:
            new_index[i] = len(kept)
            kept.append(node)
        elif i == fusions[fusion][0][0]:
            fused_index[fusion] = len(kept)
            kept.append(fusions[fusion][1])
    enter_slot: dict[int, int] = {}
    for _, fused in fusions:
        for slot, enter in enumerate(fused.layout.enter_nodes):
            enter_slot[enter] = slot

    def target(dst: int, slot: int) -> tuple[int, int]:
        f = owner.get(dst)
        if f is None:
            return new_index[dst], slot
        # only an Enter of a frame has inputs from outside it (checked by _why_not)
        return fused_index[f], enter_slot[dst] if slot >= 0 else CONTROL

    for i, node in enumerate(nodes):
        if i not in owner:
            node.out_edges = [(out, *target(dst, slot)) for out, dst, slot in node.out_edges]
    for _, fused in fusions:
        for k, x in enumerate(fused.layout.exit_nodes):
            exit_node = nodes[x]
            fused.out_edges.extend((k, *target(dst, slot)) for _, dst, slot in exit_node.out_edges)
            fused.fetch_slots.extend((k, j) for _, j in exit_node.fetch_slots)
            fused.send_keys.extend((k if out >= 0 else CONTROL, key) for out, key in exit_node.send_keys)
        for slot, enter in enumerate(fused.layout.enter_nodes):
            fused.bound_inputs.extend((slot, op) for _, op in nodes[enter].bound_inputs)
    plan.feed_edges = [(*target(dst, slot), feed) for dst, slot, feed in plan.feed_edges]
    plan.nodes = kept
