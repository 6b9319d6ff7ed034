"""The layout of a fused loop frame: its ops in evaluation order over a flat list of value slots.

Built when planning (pure: ops and slot numbers, no kernels; ``loop_program.py`` binds them).
Per iteration the fused node evaluates ``pre`` (the ops not downstream of the loop's Switches:
the condition and whatever else reads only the loop variables), reads the predicate, and, while
it holds, evaluates ``body`` and moves each NextIteration's value into its loop variable's slot
(``carry``). Structure ops are not evaluated at all: a loop Merge's output is its loop
variable's slot, the taken output of a loop Switch is that slot too, an Identity, StopGradient
or LoopCond without control inputs is the slot of its input, a Const is computed once.

Slot invariants: one slot per loop variable (holding its value in the current iteration), per
invariant, per constant, and per output of every evaluated op; every evaluated op has at least
one output slot, whose deadness is what its control edges carry (as node actors send a dead
control token when output 0 is dead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from antcolony.actors.messages import CONTROL

#: Op types whose kernel returns its only input: a slot of their input serves as their output.
ALIASES = frozenset({"Identity", "StopGradient", "LoopCond"})
#: Evaluation kinds of a step besides plain kernels: the cond primitives inside a loop body.
COND_KINDS = {"Switch": "switch", "Merge": "merge", "ControlTrigger": "trigger"}


class NotFusable(Exception):
    """The frame does not have the shape this layout handles (the message says why)."""


@dataclass(frozen=True)
class LoopStep:
    """One op evaluated per iteration: ``kind`` is "kernel", "switch", "merge" or "trigger"."""

    op: Any
    kind: str
    ins: tuple[int, ...]  # slots of its data inputs, in input order
    outs: tuple[int, ...]  # slots of its outputs (one token slot for an op without outputs)
    ctrl: tuple[int, ...]  # slots whose deadness kills it (its control inputs' output 0)


@dataclass(frozen=True)
class LoopLayout:
    """A fused frame's evaluation plan (see the module docstring)."""

    name: str
    nslots: int
    enter_nodes: tuple[int, ...]  # plan nodes of the frame's Enters = the fused node's inputs
    inputs: tuple[int, ...]  # fused input slot -> value slot
    exit_nodes: tuple[int, ...]  # plan nodes of the frame's Exits = the fused node's outputs
    exits: tuple[int, ...]  # fused output -> value slot
    carry: tuple[tuple[int, int], ...]  # (loop variable slot, slot of its next value)
    pred: int
    pre: tuple[LoopStep, ...]
    body: tuple[LoopStep, ...]
    consts: tuple[tuple[int, Any], ...]  # (slot, Const op evaluated once)
    bound: tuple[tuple[int, Any], ...]  # (slot, Const op bound into an op's input)
    dead_aware: bool  # a cond inside: values may be dead while the loop runs


def build_layout(
    name: str, nodes: list[Any], members: list[int], ins: list[list[tuple[int, int, int]]]
) -> LoopLayout:
    """The layout of frame ``name`` made of plan ``nodes[members]`` (``ins``: each node's
    incoming edges); raises ``NotFusable`` when the frame is not a while_loop's."""
    b = _Builder(name, nodes, members, ins)
    return b.build()


class _Builder:
    def __init__(
        self, name: str, nodes: list[Any], members: list[int], ins: list[list[tuple[int, int, int]]]
    ) -> None:
        self.name = name
        self.nodes = nodes
        self.members = members
        self.ins = ins
        self.slot: dict[tuple[int, int], int] = {}
        self.nslots = 0
        self.bound: list[tuple[int, Any]] = []
        self.consts: list[tuple[int, Any]] = []

    def new(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    def role(self, i: int) -> str | None:
        return self.nodes[i].role

    def value(self, src: tuple[int, int], user: int) -> int:
        """The slot of output ``src`` = (node, output index), read by node ``user``."""
        slot = self.slot.get(src)
        if slot is None:
            raise NotFusable(f"{self.nodes[user].op.name} reads {self.nodes[src[0]].op.name} output {src[1]}")
        return slot

    def data_in(self, i: int, slot: int) -> tuple[int, int]:
        found = [(src, out) for src, out, s in self.ins[i] if s == slot]
        if len(found) != 1:
            raise NotFusable(f"{self.nodes[i].op.name} input {slot} is not one edge")
        return found[0]

    def build(self) -> LoopLayout:
        nodes, members = self.nodes, self.members
        conds = [i for i in members if self.role(i) == "LoopCond"]
        if len(conds) != 1:
            raise NotFusable(f"it has {len(conds)} LoopCond ops")
        loop_cond = conds[0]
        enters = [i for i in members if self.role(i) == "Enter"]
        exits = [i for i in members if self.role(i) == "Exit"]
        merges = [i for i in members if self.role(i) == "Merge" and nodes[i].role_attrs.get("loop_merge")]
        switches = [
            i
            for i in members
            if self.role(i) == "Switch"
            and any(src == loop_cond and slot == 1 for src, _, slot in self.ins[i])
        ]
        structure = set(enters) | set(exits) | set(merges) | set(switches)
        structure |= {i for i in members if self.role(i) == "NextIteration"}
        carry_src: list[tuple[int, int]] = []  # (loop merge, NextIteration)
        for m in merges:
            enter, _ = self.data_in(m, 0)
            nxt, _ = self.data_in(m, 1)
            if len(self.ins[m]) != 2 or self.role(enter) != "Enter" or self.role(nxt) != "NextIteration":
                raise NotFusable(f"{nodes[m].op.name} is not a loop Merge of Enter and NextIteration")
            if any(out == 1 for out, _, _ in nodes[m].out_edges):
                raise NotFusable(f"the index output of {nodes[m].op.name} is used")
            self.slot[(m, 0)] = self.new()
            carry_src.append((m, nxt))
        for e in enters:
            if nodes[e].role_attrs["is_constant"]:
                self.slot[(e, 0)] = self.new()
                continue
            edges = nodes[e].out_edges
            if len(edges) != 1 or edges[0][1] not in merges or edges[0][2] != 0:
                raise NotFusable(f"{nodes[e].op.name} does not feed exactly one loop Merge")
        exit_slots = self._switches(switches, merges, exits)
        compute = [i for i in members if i not in structure]
        dead_aware = any(self.role(i) in COND_KINDS for i in compute)
        order = self._order(compute)
        body_nodes = self._downstream(switches, set(compute))
        steps: dict[int, LoopStep] = {}
        for i in order:
            step = self._place(i, dead_aware, set(switches))
            if step is not None:
                steps[i] = step
        pred = self.slot.get((loop_cond, 0))
        if pred is None:
            raise NotFusable("its condition is not computed inside the frame")
        inputs = []
        for e in enters:
            if nodes[e].role_attrs["is_constant"]:
                inputs.append(self.slot[(e, 0)])
            else:
                inputs.append(self.slot[(nodes[e].out_edges[0][1], 0)])
        carry = []
        for m, nxt in carry_src:
            src, out = self.data_in(nxt, 0)
            if (src, out) not in self.slot:
                raise NotFusable(f"{nodes[nxt].op.name} takes a value the frame does not compute")
            carry.append((self.slot[(m, 0)], self.slot[(src, out)]))
        return LoopLayout(
            name=self.name,
            nslots=self.nslots,
            enter_nodes=tuple(enters),
            inputs=tuple(inputs),
            exit_nodes=tuple(exits),
            exits=tuple(exit_slots),
            carry=tuple(carry),
            pred=pred,
            pre=tuple(steps[i] for i in order if i in steps and i not in body_nodes),
            body=tuple(steps[i] for i in order if i in steps and i in body_nodes),
            consts=tuple(self.consts),
            bound=tuple(self.bound),
            dead_aware=dead_aware,
        )

    def _switches(self, switches: list[int], merges: list[int], exits: list[int]) -> list[int]:
        """Each loop Switch's taken output is its loop variable's slot; each Exit's value too."""
        nodes = self.nodes
        for s in switches:
            m, out = self.data_in(s, 0)
            if m not in merges or out != 0:
                raise NotFusable(f"{nodes[s].op.name} does not switch a loop variable")
            self.slot[(s, 1)] = self.slot[(m, 0)]
            if any((out == 0) != (self.role(dst) == "Exit") for out, dst, _ in nodes[s].out_edges):
                raise NotFusable(f"{nodes[s].op.name} has an exit output not going to an Exit only")
            if any(out == 0 and slot == CONTROL for out, _, slot in nodes[s].out_edges):
                raise NotFusable(f"{nodes[s].op.name} has a control edge")
        exit_slots = []
        for x in exits:
            s, out = self.data_in(x, 0)
            if s not in switches or out != 0 or len(self.ins[x]) != 1:
                raise NotFusable(f"{nodes[x].op.name} does not leave through a loop Switch")
            exit_slots.append(self.slot[(s, 1)])
        for i in self.members:
            if any(src in switches and slot == CONTROL for src, _, slot in self.ins[i]):
                raise NotFusable(f"{nodes[i].op.name} has a control input from a loop Switch")
        return exit_slots

    def _order(self, compute: list[int]) -> list[int]:
        """``compute`` in a topological order (Kahn's, lowest node first among the ready)."""
        inside = set(compute)
        waiting = {i: sum(1 for src, _, _ in self.ins[i] if src in inside) for i in compute}
        ready = sorted(i for i, n in waiting.items() if n == 0)
        order: list[int] = []
        while ready:
            i = ready.pop(0)
            order.append(i)
            for _, dst, _ in self.nodes[i].out_edges:
                if dst in inside:
                    waiting[dst] -= 1
                    if waiting[dst] == 0:
                        ready.append(dst)
        if len(order) != len(compute):
            raise NotFusable("its ops have a cycle outside NextIteration")
        return order

    def _downstream(self, sources: list[int], inside: set[int]) -> set[int]:
        """The ``inside`` nodes reachable from ``sources`` (data and control edges)."""
        seen: set[int] = set()
        stack = list(sources)
        while stack:
            for _, dst, _ in self.nodes[stack.pop()].out_edges:
                if dst in inside and dst not in seen:
                    seen.add(dst)
                    stack.append(dst)
        return seen

    def _place(self, i: int, dead_aware: bool, switches: set[int]) -> LoopStep | None:
        """Give node ``i``'s outputs slots; its step, or None when it needs no evaluation."""
        node = self.nodes[i]
        op = node.op
        bound = dict(node.bound_inputs)
        data: list[int] = []
        for k in range(len(op.inputs)):
            if k in bound:
                slot = self.new()
                self.bound.append((slot, bound[k]))
                data.append(slot)
            else:
                data.append(self.value(self.data_in(i, k), i))
        # without conds nothing is dead while the loop runs: control edges only order
        ctrl = (
            tuple(self.value((src, 0), i) for src, _, slot in self.ins[i] if slot == CONTROL)
            if dead_aware
            else ()
        )
        kind = COND_KINDS.get(node.role or "", "kernel")
        if node.role == "LoopCond" or (op.type in ALIASES and not ctrl and len(data) == 1):
            if ctrl:
                raise NotFusable(f"{op.name} has control inputs")
            self.slot[(i, 0)] = data[0]
            return None
        if op.type == "Const" and not ctrl:
            self.slot[(i, 0)] = self.new()
            self.consts.append((self.slot[(i, 0)], op))
            return None
        if node.role is not None and kind == "kernel":
            raise NotFusable(f"{op.name} ({op.type}) is not a cond primitive")
        outs = tuple(self.new() for _ in range(max(len(op.outputs), 1)))
        for k, slot in enumerate(outs):
            self.slot[(i, k)] = slot
        return LoopStep(op, kind, tuple(data), outs, ctrl)
