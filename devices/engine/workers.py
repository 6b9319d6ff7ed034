"""A worker pool: N threads fed from a priority queue kept on the event loop."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .var import _Op

logger = logging.getLogger(__name__)


class WorkerPool:
    """Runs synchronous op bodies on ``nthreads`` threads, higher priority first, FIFO within one.

    The queue and the running count live on the event loop; ``run`` is called on a worker thread
    with each op and must report completion back to the loop itself (the engine posts it with
    ``handoff.post`` and then calls ``release``).
    """

    def __init__(self, name: str, nthreads: int, run: Callable[[_Op], None]) -> None:
        self.name = name
        self.nthreads = nthreads
        self._run = run
        self._queue: list[tuple[int, int, _Op]] = []
        self._running = 0
        self._executor: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"<WorkerPool {self.name} threads={self.nthreads} running={self._running} queued={len(self._queue)}>"

    def submit(self, op: _Op) -> None:
        """Queue a runnable op; it starts as soon as a worker is free and nothing more urgent waits."""
        heapq.heappush(self._queue, (-op.priority, op.seq, op))
        self._pump()

    def release(self) -> None:
        """A worker finished its op (called on the loop)."""
        self._running -= 1
        self._pump()

    def _pump(self) -> None:
        while self._queue and self._running < self.nthreads:
            _, _, op = heapq.heappop(self._queue)
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.nthreads, thread_name_prefix=f"antcolony-engine-{self.name}")
            self._running += 1
            self._executor.submit(self._run, op)

    def shutdown(self) -> None:
        """Stop the threads; called once no op is queued or running, so nothing waits on them."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
