"""The CPU device worker: runs expensive kernels on a thread pool, highest priority first."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.devices.launch import KernelDone, Launch

from .worker_stats import GetWorkerStatistics, WorkerStatistics

logger = logging.getLogger(__name__)


class CpuWorker(Actor):
    """Device worker for ``/device:CPU:0``.

    Receives ``Launch`` messages; keeps at most ``threads`` kernels running on its pool and queues
    the rest by priority (higher first, FIFO within a priority). Launches with priority > 0 run on
    a separate high-priority pool shared by all devices (MXNet's CPU priority workers), so they
    never wait behind long kernels. Completion is posted back to the loop with
    ``call_soon_threadsafe`` as a ``KernelDone`` message to the launching node.
    """

    def __init__(self, threads: int, priority_threads: int = 4) -> None:
        self.threads = threads
        # Launches handed to the pool at once: twice the threads, so a thread finishing a kernel
        # finds the next one queued instead of idling while its completion travels to the loop;
        # launches beyond the window wait in the priority queue.
        self.window = 2 * threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="antcolony-cpu")
        self.priority_pool = ThreadPoolExecutor(max(1, priority_threads), thread_name_prefix="antcolony-cpu-prio")
        self.queue: list[tuple[int, int, Launch]] = []
        self.running = 0
        self.seq = itertools.count()
        self.priority_running = 0
        self.completed = 0

    def on_start(self) -> None:
        self.loop = asyncio.get_running_loop()

    def on_receive(self, msg: Any) -> Any:
        if type(msg) is Launch:
            if msg.priority > 0:
                self.priority_running += 1
                self.priority_pool.submit(self._execute, msg, False)
                return None
            heapq.heappush(self.queue, (-msg.priority, next(self.seq), msg))
        elif msg == "finished":
            self.running -= 1
        elif type(msg) is GetWorkerStatistics:
            return WorkerStatistics("/device:CPU:0", len(self.queue), self.running + self.priority_running,
                                    self.completed, False, self.ref.mailbox_size)
        self._dispatch()
        return None

    def _dispatch(self) -> None:
        while self.queue and self.running < self.window:
            _, _, launch = heapq.heappop(self.queue)
            self.running += 1
            self.pool.submit(self._execute, launch, True)

    def _execute(self, launch: Launch, counted: bool) -> None:
        # Runs on a pool thread: never touch actor state here, only post back to the loop.
        start = time.perf_counter()
        # Drops the message's reference; Launch (actors/messages.py, in the core rewrite) types it as a list.
        inputs, launch.inputs = launch.inputs, None  # type: ignore[assignment]
        cell: list[Any] = []
        err = None
        try:
            cell.append(launch.compute(*inputs))
        except Exception as exc:
            err = exc
        del inputs  # freed before the completion is posted
        # The output rides in ``cell``, emptied on the loop, so this thread keeps no reference.
        meta = (launch.step, err, start, time.perf_counter(), threading.current_thread().name)
        try:
            self.loop.call_soon_threadsafe(self._finish, launch.reply_to, cell, meta, counted)
        except RuntimeError:
            logger.debug("event loop closed before a CPU kernel finished; result dropped")

    def _finish(self, reply_to: Any, cell: list[Any], meta: tuple[Any, ...], counted: bool) -> None:
        step, err, start, end, worker = meta
        reply_to.tell(KernelDone(step, cell.pop() if cell else None, err, start, end, worker))
        self.completed += 1
        if counted:
            self.ref.tell("finished")
        else:
            self.priority_running -= 1

    def on_stop(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.priority_pool.shutdown(wait=False, cancel_futures=True)
