"""``SegmentActor``: MXNet-style bulk execution of a partition's plain CPU nodes.

A CPU kernel below its inline threshold runs on the loop's thread whichever actor hosts it, so
hosting a partition's plain CPU nodes in one actor loses no parallelism, and saves what a node
actor costs per node: a message, a mailbox turn, a gather. The segment keeps TF's executor state
per step (pending input counts, gathered inputs, a ready stack) and runs its members in dataflow
order; a member above its threshold is launched on the CPU worker as its node actor would be
(its ``KernelDone`` comes back to the segment). A member touching variables always runs inline
(segment_plan.py) and holds its variables in the dependency engine around its kernel, or waits
for their grant when an earlier op holds one. GPU, Recv and control-flow nodes, and variable
kernels that may be launched, stay node actors and exchange ordinary ``Input`` messages with it.

A message into the segment is ``(step, slot, value)`` with a *segment slot* (segment_plan.py,
which also picks the members and wraps those touching variables). Members are only ever nodes of
graphs without control flow (no dead values) in the root frame, so a tag is always the step.

Completion (counted by propagation.py's segment functions): each message handled is one unit,
finished once what it produced was sent;
internal edges are not messages and count nothing; a launched member's kernel is a unit until its
``KernelDone`` is handled.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.actors.messages import AbortStep, ForgetStep, NodeFailed
from antcolony.actors.node import (
    NodeSpec,
    inline_record,
    input_elements,
    output_nbytes,
)
from antcolony.actors.propagation import awaiting, message_done, propagate_out
from antcolony.actors.retvals import put_outputs
from antcolony.actors.segment_plan import VarsBusy, holding
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


class _StepRun:
    """One step's state in the segment: inputs still to come and gathered inputs per member,
    members ready to run, and how many members have not run yet.

    A member's input list is refilled from its template as soon as it has run (which also
    drops the values), so a run whose members all ran is as new and is kept for a later step:
    no list per member is allocated per step (2000 of them cost a quarter of a fan-in step,
    mostly in the garbage collector)."""

    __slots__ = ("counts", "args", "ready", "left")

    def __init__(self, expected: list[int], templates: list[list[Any]]) -> None:
        self.counts = expected.copy()
        self.args = list(map(list.copy, templates))
        self.ready: list[int] = []
        self.left = len(expected)

    def reset(self, expected: list[int]) -> None:
        """Ready for another step; only once every member ran (their inputs are refilled)."""
        self.counts[:] = expected
        self.left = len(expected)


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
        # members always have a kernel (segment_member)
        self.computes: list[Callable[..., Any]] = [spec.compute for spec in specs]  # type: ignore[misc]
        self.single = [spec.single_output for spec in specs]
        self.internal = internal
        self.external = external
        self.fetch_slots = [spec.fetch_slots for spec in specs]
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
        # elements from which a member's kernel goes to the CPU worker; None: always inline
        # (a member touching variables always is: segment_plan.always_inline)
        thresholds = [
            spec.inline_threshold if spec.expensive and spec.engine is None else None for spec in specs
        ]
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
        # The hot case: a single-output member whose outputs all stay in the segment and serve
        # no fetch; its route is (member, slot) per out edge (slot CONTROL: a control edge).
        routes: list[tuple[tuple[int, int], ...] | None] = [
            tuple((n, slot) for _, n, slot in internal[m])
            if spec.single_output and not external[m] and not spec.fetch_slots
            else None
            for m, spec in enumerate(specs)
        ]
        # What the drain loop reads per member, in one tuple: (kernel, arity, threshold, route,
        # template); a member touching variables runs its kernel holding them
        # (``segment_plan.holding``), and a traced step's kernels are timed.
        self.members = [
            (
                compute if access is None else holding(compute, *access),
                len(template),
                threshold,
                route,
                template,
            )
            for compute, threshold, route, template, access in zip(
                self.computes, thresholds, routes, self.templates, self.accesses
            )
        ]
        self.runs: dict[Any, _StepRun] = {}
        self.spare: list[_StepRun] = []  # runs of completed steps, reset for the next ones

    def on_receive(self, msg: Any) -> None:
        cls = msg.__class__
        if cls is tuple:
            step, slot, value = msg
            run = self._run_of(step)
            if run is None:
                return
            m, local = self.owners[slot]
            if local >= 0:
                run.args[m][local] = value
            run.counts[m] -= 1
            if not run.counts[m]:
                run.ready.append(m)
            self._drain(step, run)
        elif cls is StepState:
            self._start(msg)
        elif cls is Resume:
            run = self._run_of(msg.step)
            if run is not None:
                self._drain(msg.step, run)
        elif cls is KernelDone:
            self._on_kernel_done(msg)
        elif cls is AbortStep or cls is ForgetStep:
            self.runs.pop(msg.step, None)

    def _run_of(self, step: Any) -> _StepRun | None:
        if step.aborted:
            self.runs.pop(step, None)
            return None
        run = self.runs.get(step)
        if run is None:
            spare = self.spare
            run = self.runs[step] = spare.pop() if spare else _StepRun(self.expected, self.templates)
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
        if run is None:
            return
        values = step.feed_values
        args = run.args
        run.counts[:] = self.after_start
        run.ready.extend(self.start_ready)
        for m, slot, feed in self.start_feeds:
            args[m][slot] = values[feed]
        self._drain(step, run)

    def _drain(self, step: Any, run: _StepRun) -> None:
        """Run ready members (within the turn budget), then finish the message's unit."""
        ready, args, counts = run.ready, run.args, run.counts
        members = self.members if step.trace is None else self._traced_members(step)
        # Members count against the runtime's inline budget, so the loop still turns as often.
        runtime = self.runtime
        budget = granted = max(1, min(TURN_BUDGET, runtime.inline_left))
        pop, push = ready.pop, ready.append
        ran = 0
        while ready and budget:
            budget -= 1
            m = pop()
            compute, arity, threshold, route, template = members[m]
            inputs = args[m]
            if threshold is not None and input_elements(inputs) >= threshold:
                awaiting(step)  # its KernelDone
                launched = Launch((step, m), self.computes[m], inputs.copy(), 0, self.ref)
                inputs[:] = template
                self.specs[m].worker.tell(launched)
                continue
            try:
                # By arity: f(*list) builds a tuple per call, and those allocations set off the
                # garbage collector on wide steps.
                if arity == 2:
                    out = compute(inputs[0], inputs[1])
                elif arity == 1:
                    out = compute(inputs[0])
                else:
                    out = compute(*inputs)
            except VarsBusy:
                self._wait_for_vars(step, m)
                continue
            except Exception as exc:
                self._fail(step, m, exc)
                ready.clear()  # the step is over: nothing else of it runs, nor resumes
                break
            inputs[:] = template  # drops the inputs, and readies the list for a later step
            ran += 1
            if route is None:
                self._propagate(step, run, m, out)
                continue
            # _propagate, inlined for the hot case
            for n, slot in route:
                if slot >= 0:
                    args[n][slot] = out
                counts[n] -= 1
                if not counts[n]:
                    push(n)
        if ready:
            awaiting(step)  # the Resume
            self.ref.tell(Resume(step))
        run.left -= ran
        runtime.inline_left -= granted - budget
        self._finish_unit(step, run)

    def _traced_members(self, step: Any) -> list[tuple[Any, ...]]:
        """``members`` with each kernel recording its inline run in ``step.trace`` (a traced step
        only: the untraced loop then tests nothing per member)."""

        def timed(spec: NodeSpec, compute: Callable[..., Any]) -> Callable[..., Any]:
            def run(*inputs: Any) -> Any:
                start = _now()
                out = compute(*inputs)
                step.trace.append(inline_record(spec, start, out))
                return out

            return run

        return [(timed(spec, member[0]), *member[1:]) for spec, member in zip(self.specs, self.members)]

    def _propagate(self, step: Any, run: _StepRun, m: int, out: Any) -> None:
        """Member ``m`` produced ``out``: inputs to members (ready ones on the stack), messages to
        other actors, values into the step's fetch slots. The caller counts ``m`` as run
        (``run.left``)."""
        outs = (out,) if self.single[m] else out
        args, counts = run.args, run.counts
        for index, n, slot in self.internal[m]:
            if slot >= 0:
                args[n][slot] = outs[index]
            counts[n] -= 1
            if not counts[n]:
                run.ready.append(n)
        edges = self.external[m]
        if edges:
            propagate_out(step, edges, outs)
        fetch_slots = self.fetch_slots[m]
        if fetch_slots:
            put_outputs(step, fetch_slots, self.single[m], out)

    def _finish_unit(self, step: Any, run: _StepRun) -> None:
        if not run.left and self.runs.pop(step, None) is run and len(self.spare) < 2:
            run.reset(self.expected)
            self.spare.append(run)
        message_done(step)

    def _fail(self, step: Any, m: int, exc: BaseException) -> None:
        self.runs.pop(step, None)
        self.executor.tell(NodeFailed(step, as_op_error(exc, self.specs[m].op)))

    def _on_kernel_done(self, msg: KernelDone) -> None:
        step, m = msg.step
        run = self._run_of(step)
        if run is None:
            return
        if msg.error is not None:
            self._fail(step, m, msg.error)
            message_done(step)
            return
        if step.trace is not None:
            spec = self.specs[m]
            step.trace.append(
                (spec.op, spec.device, msg.worker, msg.start, msg.end, output_nbytes(msg.outputs))
            )
        self._member_done(step, run, m, msg.outputs)

    def _member_done(self, step: Any, run: _StepRun, m: int, out: Any) -> None:
        """Member ``m`` ran outside the drain loop (launched, or granted its variables late): its
        outputs go on, ready members run, and the unit its wait stood for ends."""
        run.left -= 1
        self._propagate(step, run, m, out)
        if run.ready:
            self._drain(step, run)
        else:
            self._finish_unit(step, run)

    # -- members touching variables ------------------------------------------------------------
    def _wait_for_vars(self, step: Any, m: int) -> None:
        """Member ``m``'s variables are held by an earlier op: it runs when the engine grants
        them (its inputs stay gathered meanwhile); the wait is a unit of the step."""
        awaiting(step)  # the grant
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
        compute, template = self.computes[m], self.templates[m]  # the vars are granted: no hold
        inputs = run.args[m]
        start = _now()
        try:
            out = compute(*inputs)
        except Exception as exc:
            self._fail(step, m, exc)
            message_done(step)
            return
        finally:
            on_complete()
        inputs[:] = template
        if step.trace is not None:
            step.trace.append(inline_record(self.specs[m], start, out))
        self._member_done(step, run, m, out)


__all__ = ["Resume", "SegmentActor"]
