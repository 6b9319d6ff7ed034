"""The thread substrate of device work: N threads fed from a priority queue kept on the loop.

The CPU worker's kernel pools and the dependency engine's pools are all ``PriorityPool``s, so
"run on a thread, highest priority first, report back to the loop" is written once. GPU streams
are in-order queues of their own (devices/backends).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

logger = logging.getLogger(__name__)

_STOP: Any = object()


class PriorityPool:
    """Runs ``run(item)`` on ``nthreads`` threads, higher priority first, FIFO within one.

    The queue and the running count live on the event loop. At most ``limit`` items are handed
    to the threads at once (default ``nthreads``; more keeps a thread that finishes from idling
    while its completion travels to the loop). ``run`` is called on a worker thread and must
    report completion back to the loop itself (``devices.handoff.post``), where the owner then
    calls ``release``. Threads are created as items need them, up to ``nthreads``.

    The threads are daemons, fed by a queue of their own (not a ``ThreadPoolExecutor``, whose
    threads the interpreter joins at exit): a kernel still running when the program ends (a
    ``py_func`` sleeping when Ctrl-C interrupts the blocking ``Session.run`` waiting for it) is
    abandoned with its thread, as TF1 abandons it, instead of holding the exit until it returns.
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
        # the threads' inbox, and a one-item list they check before each item: [True] once shut
        # down (each generation of threads has its own pair)
        self._inbox: SimpleQueue[Any] = SimpleQueue()
        self._closed = [False]
        self._threads = 0

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
            self.running += 1
            if self._threads < self.nthreads and self._threads < self.running:
                self._start_thread()
            self._inbox.put(item)

    def _start_thread(self) -> None:
        thread = threading.Thread(
            target=_serve,
            args=(self._inbox, self._closed, self._run, self.name),
            name=f"antcolony-{self.name}_{self._threads}",
            daemon=True,
        )
        self._threads += 1
        thread.start()

    def shutdown(self) -> None:
        """Stop the threads; queued items are dropped, running ones finish on their own."""
        self._queue.clear()
        self._closed[0] = True
        for _ in range(self._threads):
            self._inbox.put(_STOP)
        self._inbox, self._closed, self._threads = SimpleQueue(), [False], 0


def _serve(inbox: SimpleQueue[Any], closed: list[bool], run: Callable[[Any], None], name: str) -> None:
    """A pool thread: runs items until told to stop; after a shutdown, items left are dropped."""
    get = inbox.get
    while True:
        item = get()
        if item is _STOP or closed[0]:
            return
        try:
            run(item)
        except BaseException:
            # ``run`` reports its own item's errors; reaching here is a bug of the owner, and one
            # item must not take the thread (and the items queued behind it) down
            logger.exception("pool %s: an item failed outside its own error handling", name)
        del item
