"""On the CUDA backend (a stand-in ``cupy``: kernels run as numpy on the stream's thread,
completion through events synchronized by the stream's waiter thread), a step past its deadline
drops its launches still queued on the stream's thread: they are never enqueued on the device
(no event recorded and synchronized for them), and the GPU worker ends idle."""

from __future__ import annotations

import asyncio
import sys

import numpy as np
import pytest

import antcolony as ac
from antcolony.actors.session_stats import worker_statistics
from tests.devices.test_backends import fake_cupy
from tests.waiting import until_async

SIZE = 2048
LINKS = 24


async def _queued(sess: ac.Session) -> int:
    stats = await worker_statistics(sess, "/gpu:0")
    return int(stats.queued + stats.in_flight)


async def test_a_step_past_its_deadline_drops_its_launches_queued_on_a_cuda_stream(monkeypatch):
    cupy = fake_cupy(devices=1)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [SIZE, SIZE], name="x")
        with ac.device("/gpu:0"):
            w = ac.Variable(np.eye(SIZE, dtype=np.float32) * 0.5, name="w")
            y = x
            for _ in range(LINKS):
                y = ac.matmul(y, w)
            out = ac.reduce_sum(y)
        init = ac.global_variables_initializer()
    async with ac.Session(g, config=ac.SessionConfig(gpu_backend="cuda")) as sess:
        await sess.run(init)
        feed = {x: np.ones((SIZE, SIZE), np.float32)}
        run = asyncio.ensure_future(sess.run(out, feed, options=ac.RunOptions(timeout_in_ms=1500)))

        async def chain_queued() -> bool:
            return await _queued(sess) >= LINKS // 2

        await until_async(chain_queued, "the chain queued on the GPU", 60)
        with pytest.raises(ac.errors.DeadlineExceededError):
            await run
        syncs = cupy.calls["event_syncs"]
        at_abort = len(syncs)

        async def idle() -> bool:
            return await _queued(sess) == 0

        await until_async(idle, "the GPU worker idle", 120)
        # a launch enqueued on the device is one event synchronized; the drop's own point is one
        ran = len(syncs) - at_abort
        assert ran < LINKS // 2, f"{ran} events synchronized after the deadline: the chain kept running"
        # the session still runs the chain, to the value numpy gives
        x2 = np.full((SIZE, SIZE), 2.0**-10, np.float32)
        got = await sess.run(out, {x: x2})
        assert got == pytest.approx(float(x2.sum()) * 0.5**LINKS, rel=1e-5)
