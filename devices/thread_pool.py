"""The thread substrate of device work: N threads fed from a priority queue kept on the loop.

The CPU worker's kernel pools and the dependency engine's pools are all ``PriorityPool``s, so
"run on a thread, highest priority first, report back to the loop" is written once. GPU streams
are in-order queues of their own (devices/backends).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class PriorityPool:
    """Runs ``run(item)`` on ``nthreads`` threads, higher priority first, FIFO within one.

    The queue and the running count live on the event loop. At most ``limit`` items are handed
    to the threads at once (default ``nthreads``; more keeps a thread that finishes from idling
    while its completion travels to the loop). ``run`` is called on a worker thread and must
    report completion back to the loop itself (``devices.handoff.post``), where the owner then
    calls ``release``. Threads are created on first use.
    """

    def __init__(
        self, name: str, nthreads: int, run: Callable[[Any], None], limit: int | None = None
    ) -> None:
        self.name = name
        self.nthreads = nthreads
        self.limit = limit if limit is not None else nthreads
        self._run = run
        self._queue: list[tuple[int, int, Any]] = []
        self._seq = itertools.count()
        self.running = 0
        self._executor: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"<PriorityPool {self.name} threads={self.nthreads} running={self.running} queued={len(self._queue)}>"

    @property
    def queued(self) -> int:
        return len(self._queue)

    def submit(self, item: Any, priority: int = 0) -> None:
        """Queue ``item``; it runs as soon as a slot is free and nothing more urgent waits."""
        heapq.heappush(self._queue, (-priority, next(self._seq), item))
        self._pump()

    def release(self) -> None:
        """An item handed to the threads has finished (called on the loop)."""
        self.running -= 1
        self._pump()

    def _pump(self) -> None:
        while self._queue and self.running < self.limit:
            _, _, item = heapq.heappop(self._queue)
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.nthreads, thread_name_prefix=f"antcolony-{self.name}"
                )
            self.running += 1
            self._executor.submit(self._run, item)

    def shutdown(self) -> None:
        """Stop the threads; queued items are dropped, running ones finish on their own."""
        self._queue.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
