"""The device protocol: what a node actor tells a device worker, and what comes back.

Plain ``__slots__`` classes: one of each per launched kernel, so they must be cheap. ``step`` is
opaque to the worker (the executor's tag, handed back untouched).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Launch:
    """Run ``compute(*inputs)`` on a device worker and reply ``KernelDone`` to ``reply_to``.

    ``kind`` is "compute" or "copy" (host<->device transfers, run on a copy stream).
    Pipelined launches (``devices/pipeline.py``, GPU workers only): ``after`` holds the
    ``Pending`` inputs whose producers must finish on the device first, ``publish`` the
    ``Pending`` this launch's output is stored in for its dependents; both None otherwise.

    ``priority`` > 0 asks for a worker's priority queue or pool (copies); ``rank`` orders a
    CPU worker's kernel launches among themselves (higher first: the node's critical-path rank,
    actors/launch_rank.py).
    """

    __slots__ = ("step", "compute", "inputs", "priority", "reply_to", "kind", "after", "publish", "rank")

    def __init__(
        self,
        step: Any,
        compute: Any,
        inputs: list[Any],
        priority: int,
        reply_to: Any,
        kind: str = "compute",
        rank: int = 0,
    ) -> None:
        self.step = step
        self.compute = compute
        self.inputs = inputs
        self.priority = priority
        self.reply_to = reply_to
        self.kind = kind
        self.after: tuple[Any, ...] | None = None
        self.publish: Any = None
        self.rank = rank


class KernelDone:
    """A launched kernel finished on ``worker`` (a stream label) from ``start`` to ``end``
    (``time.perf_counter`` seconds): its outputs, or the exception it raised."""

    __slots__ = ("step", "outputs", "error", "start", "end", "worker")

    def __init__(
        self, step: Any, outputs: Any, error: BaseException | None, start: float, end: float, worker: str
    ) -> None:
        self.step = step
        self.outputs = outputs
        self.error = error
        self.start = start
        self.end = end
        self.worker = worker


class DropLaunches:
    """Ask a GPU worker to drop the launches whose ``step`` (the executor's tag) ``match``es: those
    waiting in its queues at once, those queued on its streams when a stream reaches them (each
    is reported as a ``LaunchDropped`` failure, never run). The reply is ``(dropped, drained)``:
    how many left the worker's queues, and a future per stream that is done once the stream has
    passed every launch enqueued before the drop (the ones already running have finished)."""

    __slots__ = ("match",)

    def __init__(self, match: Callable[[Any], bool]) -> None:
        self.match = match


class LaunchDropped(Exception):
    """A launch was dropped before it ran (``DropLaunches``): its step was abandoned."""
