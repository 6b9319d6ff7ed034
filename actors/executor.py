"""The executor of one partition (device) of one cached (feeds, fetches, targets) key.

An actor owning one node actor per node of its partition. ``CachedExecutor.start`` tells the
StepState itself to every partition's executor: each sends its feeds and start tokens, node
actors pass ``Input`` messages along the edges and values across partitions through the step's
rendezvous (propagation.py sends a node's outputs and counts them), fetch producers fill the
step's fetch slots (retvals.py), and the host partition's executor (the coordinator) completes
the step when nothing of it is in flight any more (step.py's count): in its own start turn
when the step drained there, else when it hears ``StepDrained``. A failure in any partition
aborts the step in all of them.
"""

from __future__ import annotations

import logging
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.actors.fetch_ownership import copy_arrays, own
from antcolony.actors.frames import DEAD
from antcolony.actors.messages import (
    CONTROL,
    AbortStep,
    ForgetStep,
    NodeFailed,
    StepCompleted,
    StepDrained,
    Wire,
)
from antcolony.actors.node import node_class
from antcolony.actors.planner import ExecutorPlan
from antcolony.actors.rendezvous import NO_RENDEZVOUS
from antcolony.actors.retvals import put
from antcolony.actors.segment import SegmentActor
from antcolony.actors.segment_plan import build_segment
from antcolony.actors.step import UNSET, StepState, finished, of_aborted_step
from antcolony.actors.supervision import Directive
from antcolony.devices.launch import DropLaunches, KernelDone, Launch
from antcolony.errors import InternalError, InvalidArgumentError, ResourceExhaustedError

logger = logging.getLogger(__name__)


class ExecutorActor(Actor):
    """Receives a StepState (start it), StepDrained, NodeFailed, AbortStep and StepCompleted
    for the steps of one partition, and KernelDone for a step's large fetches copied on a CPU
    worker thread (fetch_ownership.py). Its handlers are synchronous: ``CachedExecutor.start``
    starts a step with a direct tell, so a step of cheap CPU nodes can complete in the caller's
    own turn."""

    inline_receive = True

    def __init__(self, plan: ExecutorPlan) -> None:
        self.plan = plan
        # fetches whose values may be shared memory: copied before the step succeeds
        self.fetch_copies = plan.fetch_copies
        self.nodes: list[Any] = []
        self.feed_edges: list[tuple[Any, int, int]] = []
        self.roots: list[Any] = []
        self.segment_start: list[Any] = []
        self.active: set[Any] = set()

    def on_start(self) -> None:
        plan = self.plan
        segment = plan.segment
        members = set(segment.members) if segment is not None else set()
        refs: list[Any] = [
            None if i in members else self.spawn(node_class(spec), spec, name=f"node:{spec.op.name}")
            for i, spec in enumerate(plan.specs)
        ]
        if segment is not None:
            args = build_segment(plan.specs, segment, refs, plan.feed_edges, plan.roots)
            seg = self.spawn(SegmentActor, *args, self.ref, name=f"segment:{len(members)}")
            for i in members:
                refs[i] = seg
            starts = args[4]  # the members fed or started at step start
            # The segment takes its members' feeds and start tokens from the step itself.
            self.segment_start = [seg.direct] if starts else []

        def target(dst: int, slot: int) -> tuple[Any, int]:
            # a member's input is addressed by its segment slot
            if segment is not None and dst in members:
                return refs[dst], segment.slot(dst, slot)
            return refs[dst], slot

        for i, (spec, ref) in enumerate(zip(plan.specs, refs)):
            if i not in members:
                edges = tuple((k, *target(dst, slot)) for k, dst, slot in spec.out_edges)
                ref.tell(Wire(edges, self.ref))
        # Each actor once (the segment stands for all its members).
        self.nodes = list(dict.fromkeys(refs))
        # Direct tells: an idle node takes its feed or start token inside this turn.
        self.feed_edges = [(refs[n].direct, slot, f) for n, slot, f in plan.feed_edges if n not in members]
        self.roots = [refs[n].direct for n in plan.roots if n not in members]
        # the step was created with them counted (ExecutorPlan.start_messages)
        assert len(self.feed_edges) + len(self.roots) + len(self.segment_start) == plan.start_messages
        # this actor's own queue, read when a step drained inside its start turn
        self.mailbox = self.ref._cell.mailbox

    def on_receive(self, msg: Any) -> None:
        cls = type(msg)
        if cls is StepState:
            self._start(msg)  # CachedExecutor.start tells the step itself to start it
        elif cls is StepDrained:
            self._complete(msg.step)
        elif cls is NodeFailed or cls is AbortStep:
            self._abort(msg.step, msg.error)
        elif cls is StepCompleted:
            self.active.discard(msg.step)
        elif cls is KernelDone:
            self._copied(msg)

    def _start(self, step: Any) -> None:
        if step.aborted:
            return
        self.active.add(step)
        values = step.feed_values
        plan = self.plan
        for j, f in plan.fed_fetches:
            put(step, j, values[f])
        for f, key in plan.feed_sends:
            step.rendezvous.send(key, values[f])
        # The step was created with its first messages counted (a delivery may run its node at
        # once), and this partition's start unit is held until all are delivered: the
        # coordinator completes a step they drain in this same turn, without StepDrained.
        for deliver in self.segment_start:
            deliver(step)
        for deliver, slot, f in self.feed_edges:
            deliver((step, slot, values[f]))
        for deliver in self.roots:
            deliver((step, CONTROL, None))
        if self.ref is not step.coordinator:
            finished(step)
            return
        # the coordinator's start unit ends: it completes a step drained in this turn itself
        step.pending -= 1
        if not step.pending:
            if self.mailbox:
                # what this turn queued (a node's failure) is handled first, as a message would be
                self.ref.tell(StepDrained(step))
            else:
                self._complete(step)

    def _complete(self, step: Any) -> None:
        if step.aborted:
            return
        if step.dead_fetch or step.fetches_set != len(step.fetched):
            missing = [j for j, v in enumerate(step.fetched) if v is UNSET or v is DEAD]
            self._abort(step, _unfetchable(step, missing, self.plan.fetch_names))
            return
        if step.rendezvous is not NO_RENDEZVOUS:
            step.rendezvous.clear()
        if step.frames:
            forget = ForgetStep(step)
            for ref in self.nodes:
                ref.tell(forget)  # drop partial inputs left in loop frames
        for ref in step.executors:
            if ref is self.ref:
                self.active.discard(step)
            else:
                ref.tell(StepCompleted(step))
        if self.fetch_copies:
            large = own(step.fetched, self.fetch_copies)
            if large is not None:
                # The step succeeds when the copies are made (a close or a deadline meanwhile
                # fails it first; the copies are then dropped).
                arrays = [step.fetched[j] for j in large]
                self.plan.host_worker.tell(Launch((step, large), copy_arrays, [arrays], 1, self.ref))
                return
        step.succeed()

    def _copied(self, msg: KernelDone) -> None:
        """The large fetches of a completed step were copied on a CPU worker thread."""
        step, large = msg.step
        if step.done:
            return
        if msg.error is not None:
            names = ", ".join(repr(self.plan.fetch_names[j]) for j in large)
            step.fail(
                ResourceExhaustedError(
                    None,
                    None,
                    f"copying fetch {names} for the caller failed: {msg.error}; fetch less at once",
                )
            )
            return
        for j, value in zip(large, msg.outputs):
            step.fetched[j] = value
        step.succeed()

    def _abort(self, step: Any, error: BaseException) -> None:
        if not step.aborted:
            step.aborted = True
            step.rendezvous.abort(error)
            step.fail(error)
            for ref in step.executors:
                if ref is not self.ref:
                    ref.tell(AbortStep(step, error))
        if step in self.active:
            self.active.discard(step)
            msg = AbortStep(step, error)
            for ref in self.nodes:
                ref.tell(msg)
            # Its launches still queued on the GPUs (shared with other jobs) are not run: those
            # told before now are ahead of the drop in each worker's mailbox, and its nodes
            # launch nothing more (they see ``aborted``); kernels already running finish.
            for worker in self.plan.gpu_workers:
                worker.tell(_DROP_ABORTED)

    def supervise(self, child: Any, exc: BaseException) -> Directive:
        """A node actor raised (a bug, not a kernel error): fail the steps in flight, naming the
        node, and keep the node for later steps."""
        logger.error("node actor %s failed: %r", child.name, exc, exc_info=exc)
        error = InternalError(None, None, f"{child.name} failed unexpectedly: {type(exc).__name__}: {exc}")
        for step in list(self.active):
            self._abort(step, error)
        return Directive.RESUME

    def on_stop(self) -> None:
        for step in list(self.active):
            step.aborted = True
        self.active.clear()


#: What an executor tells its GPU workers when one of its steps is aborted.
_DROP_ABORTED = DropLaunches(of_aborted_step)


def _unfetchable(step: Any, missing: list[int], fetch_names: list[str]) -> InvalidArgumentError:
    names = ", ".join(repr(fetch_names[j]) for j in missing)
    dead = [j for j in missing if step.fetched[j] is DEAD]
    why = (
        "they were computed on a branch that was not taken (dead tensors)"
        if dead
        else "they were never computed"
    )
    return InvalidArgumentError(
        None, None, f"Retrieved fetch {names} failed: {why}; fetch them only from the taken branch"
    )
