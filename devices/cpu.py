"""The CPU device worker: runs expensive kernels on a thread pool, highest rank first."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.devices.handoff import post
from antcolony.devices.launch import KernelDone, Launch
from antcolony.devices.thread_pool import PriorityPool

from .worker_stats import GetWorkerStatistics, WorkerStatistics

#: Threads for kernels that may wait, made as they are needed: as many waits as a program can have
#: at once (its queue runners' reads and its steps' dequeues), far beyond the cores; a thread that
#: waits costs no CPU.
BLOCKING_THREADS = 64


class CpuWorker(Actor):
    """Device worker for ``/device:CPU:0``.

    Receives ``Launch`` messages; runs at most ``threads`` kernels at once on its pool, and a
    thread that comes free takes the waiting launch of the highest ``rank`` (the node's
    critical-path rank, actors/launch_rank.py; FIFO within a rank), so a kernel on the step's
    longest remaining path starts before one near its end (an optimizer update) when both wait.
    Launches with priority > 0 (copies) run on a separate high-priority pool shared by all
    devices (MXNet's CPU priority workers), so they never wait behind long kernels. Launches of
    kind "blocking" (kernels that wait on other steps' work, ``KernelDef.waits``: a queue's
    dequeue, a reader) run on a pool of their own that grows a thread per waiting kernel: a wait
    never holds a compute thread, so two dequeues in one step cannot starve the queue runners'
    readers (with both compute threads waiting, a TF1 program reading two input queues hung). Completion is
    posted back to the loop with ``handoff.post`` as a ``KernelDone`` message to the launching
    node.
    """

    def __init__(self, threads: int, priority_threads: int = 4) -> None:
        self.threads = threads
        # Every launch is handed to the threads at once: a thread finishing a kernel takes the
        # next one without waiting for its completion to travel to the loop, and it takes the
        # highest-ranked of all those waiting (a bounded window would run the window's first
        # ones before a more urgent launch behind it).
        self.pool = PriorityPool("cpu", threads, self._execute, limit=sys.maxsize)
        self.priority_pool = PriorityPool("cpu-prio", max(1, priority_threads), self._execute)
        self.blocking_pool = PriorityPool("cpu-wait", BLOCKING_THREADS, self._execute, limit=sys.maxsize)
        self.completed = 0

    def on_start(self) -> None:
        self.loop = asyncio.get_running_loop()

    def on_receive(self, msg: Any) -> Any:
        if type(msg) is Launch:
            if msg.priority > 0:
                self.priority_pool.submit((self.priority_pool, msg), msg.priority)
            elif msg.kind == "blocking":
                self.blocking_pool.submit((self.blocking_pool, msg), msg.rank)
            else:
                self.pool.submit((self.pool, msg), msg.rank)
        elif type(msg) is GetWorkerStatistics:
            pools = (self.pool, self.priority_pool, self.blocking_pool)
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
        self.blocking_pool.shutdown()
