"""The CPU device worker: runs expensive kernels on a thread pool, highest priority first."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.devices.handoff import post
from antcolony.devices.launch import KernelDone, Launch
from antcolony.devices.thread_pool import PriorityPool

from .worker_stats import GetWorkerStatistics, WorkerStatistics


class CpuWorker(Actor):
    """Device worker for ``/device:CPU:0``.

    Receives ``Launch`` messages; keeps at most ``threads`` kernels running on its pool and queues
    the rest by priority (higher first, FIFO within a priority). Launches with priority > 0 run on
    a separate high-priority pool shared by all devices (MXNet's CPU priority workers), so they
    never wait behind long kernels. Completion is posted back to the loop with
    ``handoff.post`` as a ``KernelDone`` message to the launching node.
    """

    def __init__(self, threads: int, priority_threads: int = 4) -> None:
        self.threads = threads
        # Launches handed to the threads at once: twice the threads, so a thread finishing a
        # kernel finds the next one queued instead of idling while its completion travels to the
        # loop; launches beyond the window wait in the pool's priority queue.
        self.pool = PriorityPool("cpu", threads, self._execute, limit=2 * threads)
        self.priority_pool = PriorityPool("cpu-prio", max(1, priority_threads), self._execute)
        self.completed = 0

    def on_start(self) -> None:
        self.loop = asyncio.get_running_loop()

    def on_receive(self, msg: Any) -> Any:
        if type(msg) is Launch:
            pool = self.priority_pool if msg.priority > 0 else self.pool
            pool.submit((pool, msg), msg.priority)
        elif type(msg) is GetWorkerStatistics:
            pools = (self.pool, self.priority_pool)
            return WorkerStatistics(
                "/device:CPU:0",
                sum(p.queued for p in pools),
                sum(p.running for p in pools),
                self.completed,
                False,
                self.ref.mailbox_size,
            )
        return None

    def _execute(self, job: tuple[PriorityPool, Launch]) -> None:
        # Runs on a pool thread: never touch actor state here, only post back to the loop.
        pool, launch = job
        start = time.perf_counter()
        inputs, launch.inputs = launch.inputs, None  # type: ignore[assignment]  # the thread drops them
        cell: list[Any] = []
        err = None
        try:
            cell.append(launch.compute(*inputs))
        except Exception as exc:
            err = exc
        del inputs  # freed before the completion is posted
        # The output rides in ``cell``, emptied on the loop, so this thread keeps no reference.
        meta = (launch.step, err, start, time.perf_counter(), threading.current_thread().name)
        post(self.loop, "a CPU kernel", self._finish, pool, launch.reply_to, cell, meta)
        del err, meta  # no cycle error -> traceback -> this frame -> error (see sim.py's _execute)

    def _finish(self, pool: PriorityPool, reply_to: Any, cell: list[Any], meta: tuple[Any, ...]) -> None:
        step, err, start, end, worker = meta
        pool.release()
        self.completed += 1
        reply_to.direct(KernelDone(step, cell.pop() if cell else None, err, start, end, worker))

    def on_stop(self) -> None:
        self.pool.shutdown()
        self.priority_pool.shutdown()
