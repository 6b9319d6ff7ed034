"""Frames, iterations and dead values: the executor's control-flow state (as TF's executor).

Every ``Input`` message carries a *tag*: the step itself for the root frame, or an ``IterTag``
(one iteration of one instance of a while loop's frame). Node actors key their pending inputs
by tag, so iterations of a loop, and concurrent steps, proceed independently.

Completion is counted by ``step.py`` (its verbs are the only writers of the counts): every unit
under an iteration counts in the iteration and in the step. An iteration with no unit left may
end, which ``parallel_iterations`` and the freeing of iteration state rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from antcolony.actors.step import finished, in_flight, sent


class _Dead:
    """The value of a tensor on an untaken branch."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD = _Dead()


class IterTag:
    """One iteration of one frame instance."""

    __slots__ = ("step", "frame", "iter", "pending", "dead")

    def __init__(self, step: Any, frame: FrameState, iteration: int) -> None:
        self.step = step
        self.frame = frame
        self.iter = iteration
        self.pending = 0  # units in flight under this iteration (step.py's verbs)
        self.dead = False  # the loop's Merge was dead here: its Exits pass dead values out

    @property
    def aborted(self) -> bool:
        return self.step.aborted

    @property
    def trace(self) -> Any:
        return self.step.trace

    @property
    def rendezvous(self) -> Any:
        return self.step.rendezvous

    def __repr__(self) -> str:
        return f"<{self.frame.name} iter {self.iter} of step {self.step.id}>"


class FrameState:
    """One instance of a while loop's frame (per step and per parent iteration)."""

    def __init__(
        self, step: Any, parent: Any, name: str, parallel: int, constants_expected: int, enters: int
    ) -> None:
        self.step = step
        self.parent = parent
        self.name = name
        self.parallel = max(1, parallel)
        self.iterations: dict[int, IterTag] = {}
        self.base = 0  # oldest iteration not finished
        self.constants: list[tuple[Sequence[tuple[int, Any, int]], Any]] = []
        self.constants_expected = constants_expected
        self.deferred: dict[int, list[Callable[[], None]]] = {}
        self.done = False
        # Iteration 0 holds one unit per loop-variable Enter still to come, so it cannot finish
        # before every loop variable entered; the parent holds one unit while the frame runs.
        self.iteration(0, hold=enters)
        sent(parent, 1)

    def iteration(self, i: int, hold: int = 0) -> IterTag:
        """Iteration ``i`` (created on first use, with every invariant sent to it), holding
        ``hold`` more units: one per value about to enter it, each released by the sender with
        ``finished(tag)`` once sent. Counted before the invariants are delivered, since a
        delivery may run at once and would otherwise find the new iteration idle."""
        tag = self.iterations.get(i)
        if tag is not None:
            if hold:
                sent(tag, hold)
            return tag
        tag = self.iterations[i] = IterTag(self.step, self, i)
        if hold:
            sent(tag, hold)
        for edges, value in self.constants:
            send(tag, edges, value)
        return tag

    def may_start(self, i: int) -> bool:
        return i < self.base + self.parallel

    def defer(self, i: int, action: Callable[[], None]) -> None:
        """Run ``action`` (enter iteration ``i``) once ``parallel_iterations`` lets it start.
        The step holds a unit for it meanwhile, but no iteration does, so the one that deferred
        it can finish and let ``i`` start."""
        sent(self.step, 1)
        self.deferred.setdefault(i, []).append(action)

    def add_constant(self, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
        """A loop invariant (Enter with is_constant): delivered to every iteration, present and future."""
        self.constants.append((edges, value))
        tags = list(self.iterations.values())
        # All counted before any is delivered: a delivery may finish its iteration at once, and
        # the iterations after it must not look idle while their copy is still to come.
        for tag in tags:
            sent(tag, len(edges))
        for tag in tags:
            deliver(tag, edges, value)

    def iteration_idle(self, tag: IterTag) -> None:
        """``tag`` has no message in flight: if it is the oldest and all invariants arrived, it is
        finished; later ones may finish in turn, and deferred iterations may start."""
        if len(self.constants) < self.constants_expected:
            return
        while True:
            oldest = self.iterations.get(self.base)
            if oldest is None or in_flight(oldest):
                break
            del self.iterations[self.base]
            self.base += 1
            for action in self.deferred.pop(self.base + self.parallel - 1, []):
                action()
                finished(self.step)  # the unit ``defer`` held
        if not self.iterations and not self.deferred and not self.done:
            self._finish()

    def _finish(self) -> None:
        """Every iteration finished: release the unit the parent held for this frame."""
        self.done = True
        finished(self.parent)


def frame_for(step: Any, parent: Any, name: str, parallel: int, constants: int, enters: int) -> FrameState:
    """The frame instance ``name`` entered from ``parent`` (a tag), created on first use.

    Keyed by the parent tag object itself (not its id: a finished iteration's tag may be freed
    and its id reused by a later one)."""
    key = (parent, name)
    frames = step.frames
    if frames is None:
        frames = step.frames = {}
    frame = frames.get(key)
    if frame is None:
        frame = frames[key] = FrameState(step, parent, name, parallel, constants, enters)
    return frame


def send(tag: Any, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
    """Send ``value`` (one output) along a node's wired ``edges`` (index, deliver, slot) under
    ``tag``, counting the messages first (a delivery may run its receiver at once)."""
    if not edges:
        return
    sent(tag, len(edges))
    deliver(tag, edges, value)


def deliver(tag: Any, edges: Sequence[tuple[int, Any, int]], value: Any) -> None:
    """``send`` without the counting, for messages the caller already counted."""
    token = DEAD if value is DEAD else None
    for _, tell, slot in edges:
        tell((tag, slot, value if slot >= 0 else token))
