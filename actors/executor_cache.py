"""Which executor runs a ``Session.run``: fetch plans reused per fetch structure, and executors
cached per sorted (feeds, fetches, targets) key, as TF1's DirectSession caches them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.actors.cached_executor import CachedExecutor
from antcolony.actors.fetches import FetchPlan
from antcolony.graph.core import Graph, Operation, Tensor

#: Builds the executors for (fetches, targets, feeds), each sorted by name.
Build = Callable[[list[Tensor], list[Operation], list[Tensor]], CachedExecutor]


class ExecutorCache:
    """A session's fetch plans and executors; ``clear`` forgets both (their dicts stay the same
    objects)."""

    def __init__(self) -> None:
        self.plans: dict[Any, FetchPlan] = {}
        self.executors: dict[tuple[Any, ...], CachedExecutor] = {}

    def fetch_plan(self, graph: Graph, fetches: Any) -> FetchPlan:
        # Plans of a tensor, op or name, or a flat list or tuple of them, are reused: a training
        # loop fetches the same ``[loss, train_op]`` every step.
        key = _plan_key(fetches)
        plan = self.plans.get(key) if key is not None else None
        if plan is not None:
            return plan
        plan = FetchPlan(graph, fetches)
        if key is not None and len(self.plans) < 1024:
            self.plans[key] = plan
        return plan

    def executor_for(
        self, plan: FetchPlan, feeds: dict[Tensor, Any], build: Build
    ) -> tuple[CachedExecutor, list[int] | None]:
        """The live executor for the sorted (feeds, fetches, targets), built on a miss, and
        where each of ``plan``'s fetches lands in its results (None: in order)."""
        fast_key = tuple(feeds)
        hit = plan.executors.get(fast_key)
        if hit is not None and hit[0].alive:
            return hit
        feed_list = sorted(feeds, key=lambda t: t.name)
        fetch_list = sorted(plan.tensors, key=lambda t: t.name)
        key = (
            tuple(t.name for t in feed_list),
            tuple(t.name for t in fetch_list),
            tuple(sorted(o.name for o in plan.targets)),
        )
        ex = self.executors.get(key)
        if ex is None or not ex.alive:
            ex = self.executors[key] = build(fetch_list, plan.targets, feed_list)
        position = {id(t): i for i, t in enumerate(fetch_list)}
        perm = [position[id(t)] for t in plan.tensors]
        hit = plan.executors[fast_key] = (ex, None if perm == list(range(len(perm))) else perm)
        return hit

    def clear(self) -> None:
        self.plans.clear()
        self.executors.clear()


_LEAVES = (Tensor, Operation, str)


def _plan_key(fetches: Any) -> Any:
    """The key of a reusable fetch plan, or None. The sequence's type is part of the key: a
    namedtuple equals a plain tuple of the same elements, and a list packs differently."""
    cls = fetches.__class__
    if cls is list or cls is tuple:
        for leaf in fetches:
            if not isinstance(leaf, _LEAVES):
                return None
        return (cls, *fetches)
    return fetches if isinstance(fetches, _LEAVES) else None
