"""Which nodes of a partition a ``SegmentActor`` hosts (segment.py), its wiring, and the wrapper
that runs a member touching variables holding them.

A message into the segment is ``(step, slot, value)`` with a *segment slot*: member ``m``'s
control input is ``base[m]`` and its data input ``s`` is ``base[m] + 1 + s``
(``SegmentPlan.slot``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from antcolony.actors.engine_node import EngineNode
from antcolony.actors.kernel_size import static_input_elements
from antcolony.actors.messages import CONTROL
from antcolony.actors.node import NodeActor, NodeSpec, node_class
from antcolony.actors.propagation import VarsBusy
from antcolony.graph.passes.place import HOST


def segment_member(spec: NodeSpec) -> bool:
    """A node the segment may host: a plain CPU node actor (no dead values, Recv or control-flow
    role) that sends nothing to other partitions. An expensive kernel is a member too: it runs
    inline below its threshold, as its node actor would, and is launched on the CPU worker
    above it (the segment then goes on with other members). A kernel touching variables is a
    member when it always runs inline (``always_inline``): it runs when the dependency engine
    gives it its variables at once, or waits for their grant."""
    if spec.device != HOST or spec.send_keys or spec.compute is None:
        return False
    cls = node_class(spec)
    return cls is NodeActor or (cls is EngineNode and not spec.may_be_dead and always_inline(spec))


def always_inline(spec: NodeSpec) -> bool:
    """True when ``spec``'s kernel runs inline in every step: it is cheap, or its inputs' static
    shapes keep it below its threshold (a variable's reference counts one element, as
    ``input_elements`` counts it)."""
    if not spec.expensive:
        return True
    total = static_input_elements(spec.op)
    return total is not None and total < spec.inline_threshold


@dataclass
class SegmentPlan:
    """Which plan nodes a segment hosts (``members``, plan indices) and their slot bases."""

    members: list[int]
    base: dict[int, int]  # plan index -> the member's first segment slot

    @classmethod
    def of(cls, specs: list[NodeSpec]) -> SegmentPlan | None:
        members = [i for i, spec in enumerate(specs) if segment_member(spec)]
        if len(members) < 2:
            return None
        base, next_slot = {}, 0
        for i in members:
            base[i] = next_slot
            next_slot += 1 + specs[i].num_inputs
        return cls(members, base)

    def slot(self, dst: int, slot: int) -> int:
        """The segment slot of member ``dst``'s input ``slot`` (CONTROL for its control input)."""
        return self.base[dst] + (0 if slot == CONTROL else 1 + slot)


def build_segment(
    plan_specs: list[NodeSpec],
    segment: SegmentPlan,
    refs: list[Any],
    feed_edges: list[tuple[int, int, int]],
    roots: list[int],
) -> tuple[Any, ...]:
    """The ``SegmentActor`` arguments (but its executor) for ``segment`` of a plan: ``refs`` are
    the plan's node refs (members' entries are the segment's own ref, already spawned or not:
    unused here)."""
    member_of = {i: k for k, i in enumerate(segment.members)}
    specs = [plan_specs[i] for i in segment.members]
    internal: list[list[tuple[int, int, int]]] = []
    external: list[list[tuple[int, Any, int]]] = []
    for i in segment.members:
        ins: list[tuple[int, int, int]] = []
        outs: list[tuple[int, Any, int]] = []
        for index, dst, slot in plan_specs[i].out_edges:
            if dst in member_of:
                ins.append((index, member_of[dst], slot))
            else:
                outs.append((index, refs[dst].direct, slot))
        internal.append(ins)
        external.append(outs)
    owners: list[tuple[int, int]] = []
    for k, i in enumerate(segment.members):
        owners.append((k, CONTROL))
        owners.extend((k, s) for s in range(plan_specs[i].num_inputs))
    starts: list[tuple[int, int, int | None]] = [
        (member_of[n], slot, f) for n, slot, f in feed_edges if n in member_of
    ]
    starts += [(member_of[n], CONTROL, None) for n in roots if n in member_of]
    return specs, internal, external, owners, starts


def holding(compute: Callable[..., Any], engine: Any, reads: Any, writes: Any) -> Callable[..., Any]:
    """``compute`` run holding its variables in the dependency engine (``Engine.hold``), given
    back when it returns or raises (a failed kernel ends its engine op, as a node's does)."""

    def run(*inputs: Any) -> Any:
        held = engine.hold(reads, writes)
        if held is None:
            raise VarsBusy
        try:
            return compute(*inputs)
        finally:
            engine.release(held)

    return run


__all__ = ["SegmentPlan", "build_segment", "holding", "segment_member"]
