"""The thread substrate of device work: N threads taking the most urgent of the items handed to them.

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

    At most ``limit`` items are handed to the threads at once (default ``nthreads``); the rest wait in a queue kept on the event loop. Handed items wait in a priority
    queue the threads share, and a thread that comes free takes the most urgent one *then*: an
    urgent item handed after less urgent ones still starts first (the CPU worker hands over
    every launch, so its threads always take the highest-ranked kernel waiting). ``run`` is
    called on a worker thread and must report completion back to the loop itself
    (``devices.handoff.post``), where the owner then calls ``release``. Threads are created as
    items need them, up to ``nthreads``.

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
        self._queue: list[tuple[int, int, Any]] = []  # on the loop: beyond ``limit``
        self._seq = itertools.count()
        self._handed = 0  # handed to the threads and not released
        # One generation of threads shares: a wake-up token per handed item, the handed items
        # (a heap, under the lock: the threads pop it), and a one-item list they check before
        # each item, [True] once shut down.
        self._inbox: SimpleQueue[Any] = SimpleQueue()
        self._handed_heap: list[tuple[int, int, Any]] = []
        self._lock = threading.Lock()
        self._closed = [False]
        self._threads = 0

    def __repr__(self) -> str:
        return (
            f"<PriorityPool {self.name} threads={self.nthreads} running={self.running} queued={self.queued}>"
        )

    @property
    def queued(self) -> int:
        """Items not started yet (an estimate while threads are taking them)."""
        return len(self._queue) + len(self._handed_heap)

    @property
    def running(self) -> int:
        """Items a thread has taken and not released yet (an estimate, as ``queued``)."""
        return self._handed - len(self._handed_heap)

    def submit(self, item: Any, priority: int = 0) -> None:
        """Queue ``item``; it runs as soon as a thread is free and nothing more urgent waits."""
        entry = (-priority, next(self._seq), item)
        if self._handed < self.limit and not self._queue:
            self._hand(entry)
        else:
            heapq.heappush(self._queue, entry)
            self._pump()

    def release(self) -> None:
        """An item handed to the threads has finished (called on the loop)."""
        self._handed -= 1
        if self._queue:
            self._pump()

    def _pump(self) -> None:
        while self._queue and self._handed < self.limit:
            self._hand(heapq.heappop(self._queue))

    def _hand(self, entry: tuple[int, int, Any]) -> None:
        self._handed += 1
        with self._lock:
            heapq.heappush(self._handed_heap, entry)
        if self._threads < self.nthreads and self._threads < self._handed:
            self._start_thread()
        self._inbox.put(None)

    def _start_thread(self) -> None:
        thread = threading.Thread(
            target=_serve,
            args=(self._inbox, self._handed_heap, self._lock, self._closed, self._run, self.name),
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
        self._handed_heap, self._lock, self._handed = [], threading.Lock(), 0


def _serve(
    inbox: SimpleQueue[Any],
    handed: list[tuple[int, int, Any]],
    lock: threading.Lock,
    closed: list[bool],
    run: Callable[[Any], None],
    name: str,
) -> None:
    """A pool thread: for each token, runs the most urgent handed item, until told to stop;
    after a shutdown, items left are dropped."""
    get = inbox.get
    while True:
        if get() is _STOP or closed[0]:
            return
        with lock:
            item = heapq.heappop(handed)[2]
        try:
            run(item)
        except BaseException:
            # ``run`` reports its own item's errors; reaching here is a bug of the owner, and one
            # item must not take the thread (and the items queued behind it) down
            logger.exception("pool %s: an item failed outside its own error handling", name)
        del item
