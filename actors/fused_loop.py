"""``FusedLoopNode``: one node actor running a whole while loop (a frame fused when planning,
``actors/loop_fusion.py``).

Its inputs are the frame's Enter inputs and its outputs the frame's Exit outputs, under the tag
the loop was entered from (the step, or an iteration of an enclosing loop). Once all inputs of a
tag arrived it runs the loop's iterations itself (``LoopProgram``), a chunk of about
``CHUNK_S`` per turn: then it lets the event loop run other callbacks (``loop.call_soon``, not
a tell: a tell to itself would be handled within the same batch of turns) and goes on, unless
the step was aborted meanwhile. A loop holding a kernel that may leave the event loop
(``spec.expensive``, set by loop fusion) runs instead as one launch on the CPU worker, which
runs its chunks back to back and stops early once the step was aborted; its completion brings
the outcome of the run. The message's completion unit stays held until the loop ends, as a
running kernel holds it, so the step cannot drain under a running loop.

A dead input (a loop on an untaken branch) makes all its outputs dead without running it; an
inner op that raises fails the step with an OpError naming that op.
"""

from __future__ import annotations

import time
from typing import Any

from antcolony.actors.loop_program import DONE, FAILED, RUNNING, LoopProgram
from antcolony.actors.messages import NodeFailed
from antcolony.actors.node import DeadAwareNode, NodeSpec
from antcolony.actors.propagation import HELD, NOTHING, settle
from antcolony.actors.step import StepState
from antcolony.devices.launch import KernelDone, Launch

_now = time.perf_counter

#: seconds of loop iterations per actor turn before the event loop gets a turn
CHUNK_S = 0.001
#: seconds of loop iterations on the worker between two looks at whether the step was aborted
WORKER_CHUNK_S = 0.01


class _Resume:
    """Go on with a loop run left at a chunk's end (told by the node to itself)."""

    __slots__ = ("tag", "vals")

    def __init__(self, tag: Any, vals: list[Any]) -> None:
        self.tag = tag
        self.vals = vals


class FusedLoopNode(DeadAwareNode):
    """The node of a fused loop frame (``spec.role_attrs["program"]`` is its ``LoopProgram``)."""

    def __init__(self, spec: NodeSpec) -> None:
        super().__init__(spec)
        self.program: LoopProgram = spec.role_attrs["program"]

    def on_receive(self, msg: Any) -> None:
        if msg.__class__ is _Resume:
            settle(self, msg.tag, self._advance(msg.tag, msg.vals))
        else:
            super().on_receive(msg)

    def _run(self, tag: Any, args: list[Any], dead: bool = False) -> Any:
        vals = self.program.start(args)
        if self.offload:
            launch = Launch(tag, self._run_whole, [tag, vals], 0, self.ref, self.launch_kind, self.rank)
            self.spec.worker.tell(launch)
            return HELD
        return self._advance(tag, vals)

    def _run_whole(self, tag: Any, vals: list[Any]) -> tuple[int, Any]:
        """The whole loop run, on a worker thread: (status, payload) of ``LoopProgram.run``, or
        (RUNNING, None) when the step was aborted. Touches no actor state."""
        step = tag if tag.__class__ is StepState else tag.step
        trace = step.trace
        while not tag.aborted:
            status, payload = self.program.run(vals, _now() + WORKER_CHUNK_S, trace)
            if status != RUNNING:
                return status, payload
        return RUNNING, None

    def _on_kernel_done(self, msg: KernelDone) -> None:
        """The worker's run ended: its outputs go on as a kernel's, a failure or a stall as inline."""
        if msg.error is not None or msg.step.aborted:
            super()._on_kernel_done(msg)
            return
        status, payload = msg.outputs
        if status == DONE:
            msg.outputs = payload
            super()._on_kernel_done(msg)
        elif status == FAILED:
            tag = msg.step
            self.executor.tell(NodeFailed(tag if tag.__class__ is StepState else tag.step, payload))
        else:  # STALLED: as unfused, nothing leaves the frame
            settle(self, msg.step, NOTHING)

    def _advance(self, tag: Any, vals: list[Any]) -> Any:
        """A chunk of the loop's iterations: the Exits' values once it ended, else an Outcome."""
        if tag.aborted:
            return HELD  # the abort drops the step's units
        step = tag if tag.__class__ is StepState else tag.step
        trace = step.trace
        start = _now()
        status, payload = self.program.run(vals, start + CHUNK_S, trace)
        if trace is not None:
            trace.append((self.spec.op, self.spec.device, "inline", start, _now(), 0))
        if status == DONE:
            return payload
        if status == RUNNING:
            self.runtime.loop.call_soon(self._resume, tag, vals)
        elif status == FAILED:
            self.executor.tell(NodeFailed(step, payload))
        else:  # STALLED: as unfused, nothing leaves the frame
            return NOTHING
        return HELD

    def _resume(self, tag: Any, vals: list[Any]) -> None:
        if self.ref.is_alive and not tag.aborted:
            self.ref.tell(_Resume(tag, vals))


__all__ = ["CHUNK_S", "FusedLoopNode"]
