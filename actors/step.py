"""One ``session.run`` in flight (``StepState``) and its completion count, changed by this
module's verbs (and, inline on the two hottest paths, by executor.py's start turn and
propagation.py's fetched output).

A step is complete when nothing of it is in flight. A *unit* is one thing in flight under a tag
(the step itself for the root frame, or one loop iteration, an ``IterTag``): a message sent and
not fully handled, a kernel running for such a message, a partition still delivering its first
messages, a loop frame instance still running (held in its parent's tag), a loop variable still
to enter an iteration, a deferred iteration. Every unit counts in the step and, under an iteration, in that
iteration too (``parallel_iterations`` and freeing iteration state rely on the latter).

Three verbs, as TF's executor has PropagateOutputs and NodeDone:

- ``sent(tag, n)``: n more units are in flight under ``tag``.
- ``finished(tag)``: one unit under ``tag`` is fully handled (what it produced already sent).
  An iteration with no unit left may end; a step with none left tells its coordinator
  ``StepDrained``.
- ``passed_on(tag, n)``: a message under ``tag`` was handled and produced ``n >= 1`` messages
  (``sent`` and ``finished`` fused).

The coordinator's executor ends its own start unit, which it holds while it delivers the step's
first messages, without ``StepDrained``: it completes a step drained inside that turn itself.

Who calls the verbs: the executor's modules only (executor.py, propagation.py, which also keeps
the loop frames); node kinds return their outputs, which reach propagation.py, and a
segment's members are run and routed by propagation.py's drain loop.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

from antcolony.actors.messages import StepDrained

_ids = itertools.count(1)


class StepState:
    """Per-run state shared by reference in messages; it is also the root frame's tag.

    Everything runs on the one event loop. ``pending`` belongs to this module's verbs,
    ``fetched`` (with ``fetches_set`` and ``dead_fetch``) to retvals.py's; only executor actors
    set ``aborted`` and end the step (``succeed`` / ``fail``). The future a caller awaits is made only when the step did not end within the
    call that started it (``waiter``): most cheap steps end there.
    """

    __slots__ = (
        "id",
        "future",
        "done",
        "error",
        "feed_values",
        "fetched",
        "pending",
        "aborted",
        "trace",
        "rendezvous",
        "executors",
        "coordinator",
        "frames",
        "fetches_set",
        "dead_fetch",
        "__weakref__",
    )

    def __init__(
        self,
        feed_values: Sequence[Any],
        num_fetches: int,
        trace: bool,
        executors: list[Any],
        coordinator: Any,
        rendezvous: Any,
        units: int,
        step_id: int = 0,
    ) -> None:
        """``units``: in flight at creation, a unit per partition until it has delivered its
        first messages, and those messages (each partition's ``ExecutorPlan.start_messages``).
        ``step_id``: one from ``new_step_id``, else a new one."""
        self.id = step_id or next(_ids)
        self.future: asyncio.Future[Any] | None = None
        self.done = False  # ended: ``fetched`` holds the values, or ``error`` is set
        self.error: BaseException | None = None
        self.feed_values = feed_values
        self.fetched: list[Any] = [_UNSET] * num_fetches
        self.pending = units
        self.aborted = False
        self.trace: list[tuple[Any, ...]] | None = [] if trace else None
        self.executors = executors
        self.coordinator = coordinator
        self.rendezvous = rendezvous
        self.frames: dict[tuple[Any, str], Any] | None = None  # made by the first frame entered
        self.fetches_set = 0  # fetch slots filled so far
        self.dead_fetch = False

    @property
    def step(self) -> StepState:
        """The root frame's tag is the step itself."""
        return self

    def __repr__(self) -> str:
        return f"<step {self.id}>"

    def succeed(self) -> None:
        """The step ended with ``fetched`` (once; a later end is ignored)."""
        if self.done:
            return
        self.done = True
        future = self.future
        if future is not None and not future.done():
            future.set_result(self.fetched)

    def fail(self, error: BaseException) -> None:
        """The step ended with ``error`` (once; a later end is ignored)."""
        if self.done:
            return
        self.done = True
        self.error = error
        future = self.future
        if future is not None and not future.done():
            future.set_exception(error)

    def waiter(self) -> asyncio.Future[Any]:
        """The future its caller awaits (on the step's loop): made on first use, and already
        resolved if the step ended before."""
        future = self.future
        if future is None:
            future = self.future = asyncio.get_running_loop().create_future()
            if self.error is not None:
                future.set_exception(self.error)
            elif self.done:
                future.set_result(self.fetched)
        return future


def new_step_id() -> int:
    """The id of a step to be made (``StepState``'s ``step_id``)."""
    return next(_ids)


def sent(tag: Any, n: int) -> None:
    """``n`` more units are in flight under ``tag``."""
    step = tag if tag.__class__ is StepState else tag.step  # (the property costs a call)
    step.pending += n
    if tag is not step:
        tag.pending += n


def finished(tag: Any) -> None:
    """One unit under ``tag`` is fully handled."""
    step = tag if tag.__class__ is StepState else tag.step
    if tag is not step:
        tag.pending -= 1
        if not tag.pending:
            tag.frame.iteration_idle(tag)
    step.pending -= 1
    if not step.pending:
        step.coordinator.tell(StepDrained(step))


def passed_on(tag: Any, n: int) -> None:
    """A handled message under ``tag`` produced ``n >= 1`` messages: the handled unit ends and ``n`` messages
    are in flight instead, counted before they are delivered. Nothing can reach zero here."""
    step = tag if tag.__class__ is StepState else tag.step
    step.pending += n - 1
    if tag is not step:
        tag.pending += n - 1


def of_aborted_step(tag: Any) -> bool:
    """A launch's tag (a step, or a loop iteration of one) belongs to an aborted step: the
    predicate of every ``DropLaunches`` (a dropped step never becomes unaborted, so a drop that
    outlives the step it was sent for drops nothing else)."""
    step = getattr(tag, "step", None)
    return step is not None and step.aborted is True


def in_flight(tag: Any) -> int:
    """Units still in flight under ``tag`` (a step or an iteration)."""
    return int(tag.pending)


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not computed>"


_UNSET = _Unset()
UNSET = _UNSET
