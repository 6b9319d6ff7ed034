"""Session-run actions: hooks run before (PRE) and after (POST) every ``session.run``, by phase.

As AntMan's SessionRunActionRegistry: services (statistics = POST phase 1, resource management =
POST phase 2) act at step boundaries, in the task that called ``session.run``, so a pause they
insert (pacing, suspension) holds back only that caller. Actions come from three places, run
together in phase order: the process-wide registry (``@register_run_action``), a Runtime's
registry (``run_actions_of(runtime).add``) and a session's own (``session.add_run_action``).

What the services do at step boundaries: docs/design.md section 6.
"""

from __future__ import annotations

import enum
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class RunGroup(enum.Enum):
    PRE = "pre"
    POST = "post"


class SessionView(Protocol):
    """What a run action may see of the session that ran the step (services key their
    per-session state by it and stop waiting when it closes)."""

    @property
    def closed(self) -> bool: ...


@dataclass(frozen=True)
class RunContext:
    """What an action receives: the session, the executor's graph id (``graph_<n>``), the devices
    the step used, the step id, and (POST) the step's wall time in microseconds."""

    session: SessionView
    graph_id: str
    devices: tuple[str, ...]
    step_id: int
    duration_us: float = 0.0


ActionFn = Callable[[RunContext], "Awaitable[None] | None"]


@dataclass(frozen=True)
class RunAction:
    """A named hook. ``fn(ctx)`` may be sync or async; it runs in the caller's task.

    If it raises, the error is logged with the action's name and the user's step still succeeds,
    unless the exception is an instance of one of ``propagate`` (e.g. a suspended job cancelled
    by ``close()``), which then reaches the caller of ``session.run``.
    """

    name: str
    group: RunGroup
    phase: int
    fn: ActionFn
    propagate: tuple[type[BaseException], ...] = ()


@dataclass
class RunActionRegistry:
    """Actions by group, kept sorted by phase (ties: registration order).

    ``pre`` and ``post`` are plain lists so a session checks for actions without hashing enums
    on every run; they are changed in place, never rebound (sessions keep them).
    """

    pre: list[RunAction] = field(default_factory=list)
    post: list[RunAction] = field(default_factory=list)

    def add(self, action: RunAction) -> RunAction:
        bucket = self.of(action.group)
        if any(a.name == action.name for a in bucket):
            raise ValueError(f"a {action.group.value} run action named {action.name!r} is already registered")
        bucket.append(action)
        bucket.sort(key=lambda a: a.phase)
        return action

    def remove(self, name: str) -> None:
        for bucket in (self.pre, self.post):
            bucket[:] = [a for a in bucket if a.name != name]

    def of(self, group: RunGroup) -> list[RunAction]:
        return self.pre if group is RunGroup.PRE else self.post


RUN_ACTIONS = RunActionRegistry()


def register_run_action(
    group: RunGroup,
    phase: int,
    name: str | None = None,
    propagate: tuple[type[BaseException], ...] = (),
) -> Callable[[ActionFn], ActionFn]:
    """Decorator registering ``fn`` process-wide, as TF's REGISTER_SESSION_RUN_ACTION."""

    def deco(fn: ActionFn) -> ActionFn:
        RUN_ACTIONS.add(RunAction(name or fn.__qualname__, group, phase, fn, propagate))
        return fn

    return deco


def run_actions_of(runtime: Any) -> RunActionRegistry:
    """The Runtime's own registry (services of the whole event loop register here)."""
    return runtime.extension("antcolony.run_actions", lambda _rt: RunActionRegistry())


def ordered(group: RunGroup, registries: Iterable[RunActionRegistry]) -> list[RunAction]:
    merged = [a for r in registries for a in r.of(group)]
    merged.sort(key=lambda a: a.phase)
    return merged


async def run_actions(actions: list[RunAction], ctx: RunContext) -> None:
    """Run ``actions`` in order; failures are logged by name unless the action propagates them."""
    for action in actions:
        try:
            result = action.fn(ctx)
            if inspect.isawaitable(result):
                await result
        except action.propagate:
            raise
        except Exception:
            logger.exception(
                "%s-run action %r failed after step %d of %s",
                action.group.value,
                action.name,
                ctx.step_id,
                ctx.graph_id,
            )
