"""The executors of one cached ``Session.run`` key: one ExecutorActor per device partition.

``CachedExecutor`` is what the session asks to run a step: it makes the ``StepState`` (the
only place one is made) and starts it on every partition; the session never reads the
executors' actors or counts.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from antcolony.actors.executor import ExecutorActor
from antcolony.actors.messages import AbortStep
from antcolony.actors.planner import ExecutorPlan
from antcolony.actors.rendezvous import NO_RENDEZVOUS, LocalRendezvous
from antcolony.actors.runtime import Runtime
from antcolony.actors.step import StepState
from antcolony.devices.device_set import HOST
from antcolony.graph.core import Tensor

logger = logging.getLogger(__name__)


class CachedExecutor:
    """The executors (one per device partition) of one cached key."""

    __slots__ = (
        "_cell",
        "_coordinator",
        "_loop",
        "_partitioned",
        "_starts",
        "_units",
        "devices",
        "feeds",
        "graph_id",
        "plans",
        "refs",
    )

    def __init__(self, rt: Runtime, plans: list[ExecutorPlan], feeds: list[Tensor], graph_id: str) -> None:
        """Spawn one ExecutorActor per plan on ``rt``; ``feeds`` are the key's fed tensors in
        the order a step's feed values are given."""
        self.plans = plans
        self.refs = [rt.spawn(ExecutorActor, p, name=f"executor-{graph_id}:{p.device}") for p in plans]
        logger.debug(
            "built executor %s: %s", graph_id, ", ".join(f"{p.device}: {len(p.specs)} nodes" for p in plans)
        )
        self._loop = rt.loop
        # The executors of a key start and stop together: the first one's cell says for all.
        self._cell = self.refs[0]._cell
        # each executor's direct tell: a step starts in its caller's turn (ActorRef.direct)
        self._starts = [ref.direct for ref in self.refs]
        self.feeds = feeds
        # the host partition's executor: fetches are served there, and it completes the step
        self._coordinator = next(r for p, r in zip(plans, self.refs) if p.device == HOST)
        self.graph_id = graph_id
        self.devices = tuple(p.device for p in plans)
        self._partitioned = len(self.refs) > 1  # its steps pass values through a rendezvous
        # what a step has in flight when it is created: a start unit per partition and its
        # first messages (ExecutorPlan.start_messages)
        self._units = sum(1 + plan.start_messages for plan in plans)

    @property
    def alive(self) -> bool:
        return self._cell.alive

    def start(
        self, feeds: dict[Tensor, Any], num_fetches: int, trace: bool, step_id: int = 0
    ) -> StepState | None:
        """A new step with the values of ``feeds``, started on every partition; None when these
        executors stopped (one failed), so the caller builds new ones. The step may have ended
        when this returns (a step of cheap CPU nodes often does). ``step_id``: one from
        ``new_step_id``, when the caller's run actions saw it before the step started."""
        if not self._cell.alive:
            return None
        step = StepState(
            [*map(feeds.__getitem__, self.feeds)] if feeds else (),  # no Python frame per step
            num_fetches,
            trace,
            self.refs,
            self._coordinator,
            LocalRendezvous(self._loop) if self._partitioned else NO_RENDEZVOUS,
            self._units,
            step_id,
        )
        for start in self._starts:
            start(step)  # the step itself is the start message
        return step

    def abort(self, step: StepState, error: BaseException) -> None:
        """Abort ``step`` on every partition with ``error`` (unless it already ended)."""
        if not step.done:
            self.refs[0].tell(AbortStep(step, error))

    def release(self) -> None:
        """Drop the constants bound on devices (stopped executors may still be referenced: by a
        FetchPlan in a make_callable closure, by the frames of an error a caller keeps)."""
        for plan in self.plans:
            plan.specs = [replace(spec, bound_inputs=()) for spec in plan.specs]
