"""The public statistics records: what a session holds and what its device workers are doing."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf
from antcolony.actors.runtime import get_runtime
from antcolony.actors.session_stats import worker_statistics
from antcolony.devices.backends.sim import SimBackend
from antcolony.devices.gpu import GpuWorker
from antcolony.devices.worker_stats import GetWorkerStatistics
from tests.waiting import until, until_async

SIM1 = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1)


async def test_session_statistics_count_executors_runs_and_plans_and_are_frozen():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        with ac.device("/gpu:0"):
            y = x * 2.0
        z = y + 1.0
    async with ac.Session(g, config=SIM1) as sess:
        empty = sess.statistics()
        assert (empty.executors, empty.executor_actors, empty.runs_in_flight, empty.closed) == (
            0,
            0,
            0,
            False,
        )
        assert await sess.run(z, {x: 1.0}) == 3.0
        assert await sess.run(z, {x: 2.0}) == 5.0
        stats = sess.statistics()
        # one key, partitioned into a host and a GPU executor; nothing left in flight or queued
        assert (stats.executors, stats.executor_actors, stats.executor_actors_alive) == (1, 2, 2)
        assert (stats.runs_in_flight, stats.executor_mailbox_size, stats.fetch_plans) == (0, 0, 1)
        await sess.run(y, {x: 1.0})
        assert sess.statistics().executors == 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            stats.executors = 0  # type: ignore[misc]
    closed = sess.statistics()
    assert (closed.executors, closed.runs_in_flight, closed.closed) == (0, 0, True)


async def test_a_blocked_run_is_in_flight_until_it_returns():
    gate = threading.Event()
    g = ac.Graph()
    with g.as_default():
        blocked = tf.py_func(lambda: (gate.wait(10), np.float32(7.0))[1], [], tf.float32)
    async with ac.Session(g) as sess:
        run = asyncio.ensure_future(sess.run(blocked))
        try:
            await until(lambda: sess.statistics().runs_in_flight == 1, "the run in flight")
            await asyncio.sleep(0)
            assert not run.done() and sess.statistics().runs_in_flight == 1
        finally:
            gate.set()
        assert await run == 7.0
        assert sess.statistics().runs_in_flight == 0


async def test_worker_statistics_count_launches_in_flight_and_completed_per_device():
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        m = ac.constant(np.eye(64, dtype=np.float32))
        out = ac.reduce_sum(ac.matmul(ac.matmul(m, m), m))
    async with ac.Session(g, config=SIM1) as sess:
        before = await worker_statistics(sess, "/gpu:0")
        assert before.device == "/device:GPU:0" and before.in_flight == before.queued == 0
        assert await sess.run(out) == 64.0
        after = await worker_statistics(sess, "/gpu:0")
        assert after.completed >= before.completed + 3  # two matmuls and the sum, at least
        assert (after.in_flight, after.queued, after.holding) == (0, 0, False)
        cpu = await worker_statistics(sess, "/cpu:0")
        assert cpu.device == "/device:CPU:0" and cpu.in_flight == cpu.queued == 0
        with pytest.raises(ac.errors.InvalidArgumentError, match="/gpu:7"):
            await worker_statistics(sess, "/gpu:7")


async def test_cpu_worker_statistics_show_a_running_kernel_and_the_ones_queued_behind_it():
    gate = threading.Event()
    started = threading.Event()
    g = ac.Graph()
    with g.as_default():

        def slow() -> np.float32:
            started.set()
            gate.wait(10)
            return np.float32(1.0)

        out = tf.py_func(slow, [], tf.float32)
    async with ac.Session(g) as sess:
        run = asyncio.ensure_future(sess.run(out))
        try:
            await until(started.is_set, "the kernel on a CPU thread")
            stats = await until_async(lambda: _with_in_flight(sess), "a launch in flight on the CPU worker")
            assert stats.in_flight >= 1
        finally:
            gate.set()
        assert await run == 1.0
        done = await until_async(lambda: _with_in_flight(sess, 0), "the CPU worker idle again")
        assert done.completed >= 1


async def _with_in_flight(sess: ac.Session, n: int | None = None):
    stats = await worker_statistics(sess, "/cpu:0")
    ok = stats.in_flight >= 1 if n is None else stats.in_flight == n
    return stats if ok else None


async def test_worker_statistics_count_the_messages_waiting_behind_the_ask():
    worker = get_runtime().spawn(GpuWorker, SimBackend(1, 1 << 30), 0, 1, 1)
    reply = worker.ask(GetWorkerStatistics())
    for _ in range(3):  # sent after the ask: still in the mailbox when it is answered
        worker.tell(GetWorkerStatistics())
    stats = await reply
    assert (stats.mailbox_size, stats.queued, stats.in_flight, stats.completed) == (3, 0, 0, 0)
    assert (await worker.ask(GetWorkerStatistics())).mailbox_size == 0
