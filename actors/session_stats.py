"""What a Session holds and runs, as records read instead of its private fields.

``Session.statistics()`` gives a ``SessionStatistics`` at once (it only counts what the session
holds); ``worker_statistics`` asks the device worker a session runs on, so it is awaited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from antcolony.devices.worker_stats import GetWorkerStatistics, WorkerStatistics
from antcolony.errors import InvalidArgumentError

if TYPE_CHECKING:
    from antcolony.actors.session import Session

__all__ = ["SessionStatistics", "WorkerStatistics", "session_statistics", "worker_statistics"]


@dataclass(frozen=True)
class SessionStatistics:
    """A session's state at one moment.

    ``executors``: cached executors (one per sorted feeds/fetches/targets key), each of one or
    more executor actors (``executor_actors``: one per device partition, ``executor_actors_alive``
    of them still running); ``runs_in_flight``: ``run`` calls started and not yet returned;
    ``executor_mailbox_size``: messages waiting in the executor actors' mailboxes.
    """

    executors: int
    executor_actors: int
    executor_actors_alive: int
    executor_mailbox_size: int
    runs_in_flight: int
    fetch_plans: int
    closed: bool


def session_statistics(session: Session) -> SessionStatistics:
    """``session``'s figures now (what ``Session.statistics()`` returns)."""
    refs = [ref for ex in session._executors.values() for ref in ex.refs]
    alive = [ref for ref in refs if ref.is_alive]
    return SessionStatistics(
        executors=len(session._executors),
        executor_actors=len(refs),
        executor_actors_alive=len(alive),
        executor_mailbox_size=sum(ref.mailbox_size for ref in alive),
        runs_in_flight=len(session._inflight),
        fetch_plans=len(session._plans),
        closed=session.closed,
    )


async def worker_statistics(session: Session, device: str = "/cpu:0") -> WorkerStatistics:
    """The ``WorkerStatistics`` of the device worker behind ``device`` ("/cpu:0", "/gpu:1",
    a full device name) of the runtime ``session`` runs on."""
    session._attach()
    devices = session._devices
    assert devices is not None
    try:
        resolved = devices.resolve(device)
    except ValueError:
        resolved = None
    if resolved is None:
        raise InvalidArgumentError(
            None, None, f"no device {device!r}; this session has {[d.name for d in devices.devices]}"
        )
    return await devices.worker_for(resolved).ask(GetWorkerStatistics())
