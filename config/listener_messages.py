"""The FileListener's messages and records: snapshots, statistics, subscription requests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from antcolony.actors.ref import ActorRef

from .resource_config import ResourceConfig

Callback = Callable[["ConfigSnapshot"], Awaitable[None] | None]
Subscriber = ActorRef | Callback


@dataclass(frozen=True)
class ConfigSnapshot:
    """A validated config as published by a listener.

    version: 1 for the first config this listener published, +1 for each new one.
    content_hash: sha256 (hex) of the file bytes it was parsed from.
    mtime_ns: the file's modification time when read.
    loaded_at: wall-clock time (``time.time()``) when it was published.
    loop_time: the event loop's clock (``loop.time()``) when it was published, for latencies.
    """

    config: ResourceConfig
    path: str
    content_hash: str
    version: int
    mtime_ns: int
    loaded_at: float
    loop_time: float


@dataclass(frozen=True)
class FileListenerStats:
    """Counters of one listener.

    polls: timer or ``Poll`` passes; reads: stable content reads (each is two file reads);
    applied: snapshots published; rejected: invalid content versions reported; unchanged: polls
    that found nothing new; unstable: reads whose content changed while being read; incomplete:
    reads that ended early and were deferred; missing: polls that found no file; read_errors:
    polls that could not stat or read the file; deliveries: snapshots handed to subscribers;
    callback_errors: subscriber callbacks that raised.
    """

    polls: int = 0
    reads: int = 0
    applied: int = 0
    rejected: int = 0
    unchanged: int = 0
    unstable: int = 0
    incomplete: int = 0
    missing: int = 0
    read_errors: int = 0
    deliveries: int = 0
    callback_errors: int = 0


@dataclass(frozen=True, eq=False)
class Subscribe:
    """Deliver every new snapshot to ``target`` (an ActorRef, or a callable taking the
    snapshot). With ``replay`` the current snapshot, if any, is delivered at once too."""

    target: Subscriber
    replay: bool = True


@dataclass(frozen=True, eq=False)
class Unsubscribe:
    target: Subscriber


@dataclass(frozen=True)
class GetSnapshot:
    """Ask: the last good ``ConfigSnapshot``, or None when no valid config was seen yet."""


@dataclass(frozen=True)
class GetStats:
    """Ask: the listener's ``FileListenerStats``."""


@dataclass(frozen=True)
class Poll:
    """Ask: poll the file now; the reply is the last good snapshot afterwards."""
