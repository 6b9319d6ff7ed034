"""``SegmentActor``: MXNet-style bulk execution of a partition's plain CPU nodes.

A CPU kernel below its inline threshold runs on the loop's thread whichever actor hosts it, so
hosting a partition's plain CPU nodes in one actor loses no parallelism, and saves what a node
actor costs per node: a message, a mailbox turn, a gather. GPU, Recv and control-flow nodes, and
variable kernels that may be launched, stay node actors and exchange ordinary ``Input`` messages
with it.

The segment is a strategy of propagation.py, which owns its members' readiness and the step's
count as it does every node's (``segment_start``, ``segment_input``, ``drain_segment``,
``member_done``): the segment says which members it hosts and how each runs (inline, or launched
on the CPU worker above its threshold, its ``KernelDone`` coming back to the segment; a member
touching variables always runs inline, holding them in the dependency engine, or waits for
their grant: segment_plan.py), how many members run per turn (then ``Resume``), and keeps each
step's ``MemberRun``.

A message into the segment is ``(step, slot, value)`` with a *segment slot* (segment_plan.py,
which also picks the members and wraps those touching variables). Members are only ever nodes of
graphs without control flow (no dead values) in the root frame, so a tag is always the step.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.actors.kernel_size import output_nbytes
from antcolony.actors.messages import AbortStep, ForgetStep, NodeFailed
from antcolony.actors.node import NodeSpec, inline_record
from antcolony.actors.propagation import (
    MemberRun,
    drain_segment,
    member_done,
    segment_input,
    segment_start,
)
from antcolony.actors.segment_plan import holding
from antcolony.actors.step import StepState
from antcolony.devices.kernel_errors import as_op_error
from antcolony.devices.launch import KernelDone, Launch
from antcolony.errors import InternalError
from antcolony.graph.passes.place import HOST

_now = time.perf_counter

#: Most members run in one turn before the segment yields to other actors (``Resume``); fewer
#: when the runtime's inline budget for this dispatch callback is lower.
TURN_BUDGET = 512


class Resume:
    """The segment ran out of its turn budget for ``step``; it continues on this message."""

    __slots__ = ("step",)

    def __init__(self, step: Any) -> None:
        self.step = step


class SegmentActor(Actor):
    """Hosts the members of a ``SegmentPlan``; told ``(step, slot, value)`` inputs, the step
    itself (its feeds and start tokens to members), ``KernelDone`` of launched members,
    ``Resume``, ``AbortStep`` / ``ForgetStep``.

    Built by ``build_segment``: each member's out edges already resolved, ``internal`` ones as
    ``(output index, member, member slot)`` and ``external`` ones as ``(output index, deliver,
    slot)``; ``owners`` maps a segment slot to (member, slot); ``starts`` lists the members fed
    or started at step start as ``(member, slot, feed index)``, feed index None for a start
    token. A member's kernel that raises fails the step (``NodeFailed`` naming that member).
    """

    inline_receive = True
    turn_budget = TURN_BUDGET

    def __init__(
        self,
        specs: list[NodeSpec],
        internal: list[list[tuple[int, int, int]]],
        external: list[list[tuple[int, Any, int]]],
        owners: list[tuple[int, int]],
        starts: list[tuple[int, int, int | None]],
        executor: Any,
    ) -> None:
        self.specs = specs
        self.owners = owners  # segment slot -> (member, input slot or CONTROL)
        # What the starts leave: each member's count of inputs still to come, the members they
        # make ready (in the order the start loop would push them), and the feeds they carry.
        self.after_start = [spec.expected for spec in specs]
        self.start_ready: list[int] = []
        for m, _, _ in starts:
            self.after_start[m] -= 1
            if not self.after_start[m]:
                self.start_ready.append(m)
        self.start_feeds: list[tuple[int, int, int]] = [
            (m, slot, f) for m, slot, f in starts if f is not None
        ]
        self.executor = executor
        self.expected = [spec.expected for spec in specs]
        # (engine, vars read, vars written) of a member touching variables
        self.accesses = [
            None if spec.engine is None else (spec.engine, spec.var_reads, spec.var_writes) for spec in specs
        ]
        self.templates: list[list[Any]] = []
        for spec in specs:
            template: list[Any] = [None] * spec.num_inputs
            for slot, value in spec.bound_inputs:
                template[slot] = value
            self.templates.append(template)
        # What propagation's drain reads per member, in one tuple (propagation.drain_segment):
        # - its kernel (members always have one: segment_member), holding its variables
        #   (``segment_plan.holding``) when it touches any;
        # - its arity;
        # - the input elements from which it is launched on the CPU worker, or None: always
        #   inline (a member touching variables always is: segment_plan.always_inline);
        # - the hot case's route: a single output that stays in the segment and serves no
        #   fetch, as (member, slot) per out edge (slot CONTROL: a control edge), else None;
        # - its input template;
        # - its wiring (single output?, edges to members as (output index, member, slot), edges
        #   to other actors as (output index, deliver, slot), fetch slots).
        self.members: list[tuple[Any, ...]] = [
            (
                spec.compute if access is None else holding(spec.compute, *access),  # type: ignore[arg-type]
                len(template),
                spec.inline_threshold if spec.expensive and spec.engine is None else None,
                tuple((n, slot) for _, n, slot in ins)
                if spec.single_output and not outs and not spec.fetch_slots
                else None,
                template,
                (spec.single_output, ins, outs, spec.fetch_slots),
            )
            for spec, ins, outs, template, access in zip(
                specs, internal, external, self.templates, self.accesses
            )
        ]
        self.runs: dict[Any, MemberRun] = {}
        self.spare: list[MemberRun] = []  # runs of completed steps, reset for the next ones

    def on_receive(self, msg: Any) -> None:
        cls = msg.__class__
        if cls is tuple:
            step, slot, value = msg
            run = self._run_of(step)
            if run is not None:
                segment_input(self, step, run, slot, value)
        elif cls is StepState:
            self._start(msg)
        elif cls is Resume:
            run = self._run_of(msg.step)
            if run is not None:
                drain_segment(self, msg.step, run)
        elif cls is KernelDone:
            self._on_kernel_done(msg)
        elif cls is AbortStep or cls is ForgetStep:
            self.runs.pop(msg.step, None)

    def _run_of(self, step: Any) -> MemberRun | None:
        if step.aborted:
            self.runs.pop(step, None)
            return None
        run = self.runs.get(step)
        if run is None:
            spare = self.spare
            run = self.runs[step] = spare.pop() if spare else MemberRun(self.expected, self.templates)
        return run

    def _start(self, step: Any) -> None:
        # Invariant: the step reaches the segment before any input of it does. The executor
        # delivers it first of a start's messages, mailboxes keep their order, and everything
        # else the partition receives flows from that start. So the counts and ready members
        # after the start are the ones computed when the segment was built.
        if step in self.runs:
            raise InternalError(
                None, None, f"an input of {step} reached {self.ref.name} before the step's start"
            )
        run = self._run_of(step)
        if run is not None:
            segment_start(self, step, run)

    # -- the strategy propagation.drain_segment calls --------------------------------------------
    def traced_members(self, step: Any) -> list[tuple[Any, ...]]:
        """``members`` with each kernel recording its inline run in ``step.trace`` (a traced step
        only: the untraced drain then tests nothing per member)."""

        def timed(spec: NodeSpec, compute: Callable[..., Any]) -> Callable[..., Any]:
            def run(*inputs: Any) -> Any:
                start = _now()
                out = compute(*inputs)
                step.trace.append(inline_record(spec, start, out))
                return out

            return run

        return [(timed(spec, member[0]), *member[1:]) for spec, member in zip(self.specs, self.members)]

    def launch(self, step: Any, m: int, inputs: list[Any]) -> None:
        """Run member ``m``'s kernel on the CPU worker; its ``KernelDone`` comes back here."""
        spec = self.specs[m]
        kind = "blocking" if spec.blocking else "compute"
        spec.worker.tell(Launch((step, m), spec.compute, inputs, 0, self.ref, kind, spec.rank))

    def resume(self, step: Any) -> None:
        """The turn's budget is spent with members of ``step`` still ready: go on in a later turn."""
        self.ref.tell(Resume(step))

    def recycle(self, step: Any, run: MemberRun) -> None:
        """Every member of ``step`` ran: keep its run (as new) for a later step."""
        if self.runs.pop(step, None) is run and len(self.spare) < 2:
            run.reset(self.expected)
            self.spare.append(run)

    def fail(self, step: Any, m: int, exc: BaseException) -> None:
        """Member ``m``'s kernel raised: the executor aborts the step (the failed member's unit
        stays held, as a node's does)."""
        self.runs.pop(step, None)
        self.executor.tell(NodeFailed(step, as_op_error(exc, self.specs[m].op)))

    def _on_kernel_done(self, msg: KernelDone) -> None:
        step, m = msg.step
        run = self._run_of(step)
        if run is None:
            return
        if msg.error is not None:
            self.fail(step, m, msg.error)
            return
        if step.trace is not None:
            spec = self.specs[m]
            step.trace.append(
                (spec.op, spec.device, msg.worker, msg.start, msg.end, output_nbytes(msg.outputs))
            )
        member_done(self, step, run, m, msg.outputs)

    # -- members touching variables ------------------------------------------------------------
    def wait_for_vars(self, step: Any, m: int) -> None:
        """Member ``m``'s variables are held by an earlier op: it runs when the engine grants
        them (its inputs stay gathered meanwhile)."""
        engine, reads, writes = self.accesses[m]  # type: ignore[misc]
        engine.push(functools.partial(self._granted, step, m), HOST, reads, writes, "async")

    def _granted(self, step: Any, m: int, on_complete: Any) -> None:
        """The engine's grant (on the loop, maybe inside another actor's turn or none)."""
        if not self.ref.is_alive:
            on_complete()
            return
        self.as_turn(self._run_granted, step, m, on_complete)

    def _run_granted(self, step: Any, m: int, on_complete: Any) -> None:
        run = self._run_of(step)
        if run is None:
            on_complete()
            return
        spec = self.specs[m]  # the vars are granted: its kernel runs without holding them
        inputs = run.args[m]
        start = _now()
        try:
            out = spec.compute(*inputs)  # type: ignore[misc]
        except Exception as exc:
            self.fail(step, m, exc)
            return
        finally:
            on_complete()
        inputs[:] = self.templates[m]
        if step.trace is not None:
            step.trace.append(inline_record(spec, start, out))
        member_done(self, step, run, m, out)


__all__ = ["Resume", "SegmentActor"]
