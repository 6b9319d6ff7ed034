"""A session's side of variables on other tasks: the run actions and TF1's wait for the chief."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from antcolony.errors import DeadlineExceededError, UnavailableError

from .remote_partition import RemoteSteps
from .remote_variables import RemoteVariables, task_for_target
from .run_actions import RunAction, RunGroup

__all__ = ["attach_remote_variables", "wait_for_remote_variables"]

logger = logging.getLogger(__name__)

# Before every other action (pacing, statistics), so a paused job holds fresh values; any failure
# (a ps gone: UnavailableError naming it) is the step's.
_PHASE = -1000


def attach_remote_variables(session: Any, target: str) -> RemoteVariables:
    """Connect ``session`` to the server at ``target`` (this process's task): its steps are
    partitioned across tasks (``remote.steps``), or else exchange variables with them."""
    service = task_for_target(target)
    remote = RemoteVariables(service, session.graph, session._resources.variables)
    remote.steps = RemoteSteps(service, session.graph)
    session.add_run_action(
        RunAction("remote variables: pull", RunGroup.PRE, _PHASE, remote.before_step, (Exception,))
    )
    session.add_run_action(
        RunAction("remote variables: push", RunGroup.POST, _PHASE, remote.push, (Exception,))
    )
    return remote


async def wait_for_remote_variables(
    remote: RemoteVariables, timeout: float | None = None, interval: float = 0.5, initialized: bool = True
) -> None:
    """Until every task holding variables of the graph answers and (``initialized``) every such
    variable is initialised there: a worker that is not the chief waits for the chief's init, as
    TF1's SessionManager.wait_for_session; the chief (``initialized=False``) waits for the ps
    tasks to be up, as TF1's session creation does. A task not yet listening is waited for; a
    task that fails otherwise fails the wait."""
    start = time.monotonic()
    while True:
        try:
            versions = await remote.pull()
            missing = remote.initialized(versions) if initialized else []
            waiting_for = ""
        except UnavailableError as exc:
            # started before the ps (a cluster's processes start in any order): not yet up
            missing, waiting_for = [], str(exc.message)
        if not missing and not waiting_for:
            return
        waited = time.monotonic() - start
        if timeout is not None and waited >= timeout:
            what = (
                waiting_for
                or f"variables on other tasks still not initialised ({', '.join(missing[:5])}"
                f"{', ...' if len(missing) > 5 else ''}); is the chief worker running?"
            )
            raise DeadlineExceededError(None, None, f"waited {waited:.0f} s for the cluster: {what}")
        if waiting_for:
            logger.info("waiting for a task of the cluster to start: %s", waiting_for)
        else:
            logger.info(
                "waiting for the chief to initialise %d variable(s), e.g. %s", len(missing), missing[0]
            )
        await asyncio.sleep(interval)
