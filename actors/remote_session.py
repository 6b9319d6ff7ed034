"""A session's side of variables on other tasks: the run actions and TF1's wait for the chief."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from antcolony.errors import DeadlineExceededError

from .remote_variables import RemoteVariables, task_for_target
from .run_actions import RunAction, RunGroup

__all__ = ["attach_remote_variables", "wait_for_remote_variables"]

logger = logging.getLogger(__name__)

# Before every other action (pacing, statistics), so a paused job holds fresh values; any failure
# (a ps gone: UnavailableError naming it) is the step's.
_PHASE = -1000


def attach_remote_variables(session: Any, target: str) -> RemoteVariables:
    """Connect ``session`` to the server at ``target`` (this process's task)."""
    remote = RemoteVariables(task_for_target(target), session.graph, session._resources.variables)
    session.add_run_action(
        RunAction("remote variables: pull", RunGroup.PRE, _PHASE, remote.before_step, (Exception,))
    )
    session.add_run_action(
        RunAction("remote variables: push", RunGroup.POST, _PHASE, remote.push, (Exception,))
    )
    return remote


async def wait_for_remote_variables(
    remote: RemoteVariables, timeout: float | None = None, interval: float = 0.5
) -> None:
    """Until every variable the graph places on another task is initialised there (a worker that
    is not the chief waits for the chief's init, as TF1's SessionManager.wait_for_session)."""
    start = time.monotonic()
    while True:
        missing = remote.initialized(await remote.pull())
        if not missing:
            return
        waited = time.monotonic() - start
        if timeout is not None and waited >= timeout:
            raise DeadlineExceededError(
                None,
                None,
                f"variables on other tasks still not initialised after {waited:.0f} s "
                f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); is the chief worker running?",
            )
        logger.info("waiting for the chief to initialise %d variable(s), e.g. %s", len(missing), missing[0])
        await asyncio.sleep(interval)
