"""The executors of one cached ``Session.run`` key: one ExecutorActor per device partition."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from antcolony.actors.planner import ExecutorPlan
from antcolony.devices.device_set import HOST
from antcolony.graph.core import Tensor


class CachedExecutor:
    """The executors (one per device partition) of one cached key."""

    __slots__ = (
        "cell",
        "coordinator",
        "devices",
        "feeds",
        "graph_id",
        "partitioned",
        "plans",
        "refs",
        "starts",
        "units",
    )

    def __init__(
        self, plans: list[ExecutorPlan], refs: list[Any], feeds: list[Tensor], graph_id: str
    ) -> None:
        self.plans = plans
        self.refs = refs
        # The executors of a key start and stop together: ``cell.alive`` is theirs. Session.run
        # reads it on every run (an attribute, where ``alive`` is a property call).
        self.cell = refs[0]._cell
        # each executor's direct tell: a step starts in its caller's turn (ActorRef.direct)
        self.starts = [ref.direct for ref in refs]
        self.feeds = feeds
        # the host partition's executor: fetches are served there, and it completes the step
        self.coordinator = next(r for p, r in zip(plans, refs) if p.device == HOST)
        self.graph_id = graph_id
        self.devices = tuple(p.device for p in plans)
        self.partitioned = len(refs) > 1  # its steps pass values through a rendezvous
        # what a step has in flight when it is created (StepState's ``units``)
        self.units = sum(1 + plan.start_messages for plan in plans)

    @property
    def alive(self) -> bool:
        # The executors of a key start and stop together.
        return self.cell.alive

    def release(self) -> None:
        """Drop the constants bound on devices (stopped executors may still be referenced: by a
        FetchPlan in a make_callable closure, by the frames of an error a caller keeps)."""
        for plan in self.plans:
            plan.specs = [replace(spec, bound_inputs=()) for spec in plan.specs]
