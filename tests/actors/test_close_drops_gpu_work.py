"""Closing a session drops its steps' GPU launches still queued and waits for the ones already
running (issue 27, item 2): when ``close`` returns, the device holds none of its memory and has
none of its work queued, so another session's work runs at once."""

from __future__ import annotations

import asyncio

import numpy as np

import antcolony as ac
from antcolony.actors.session_stats import worker_statistics
from tests.waiting import until

MiB = 1 << 20
SIZE = 2048


def _matmul_chain(links: int = 6) -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [SIZE, SIZE], name="x")
        with ac.device("/gpu:0"):
            m = ac.constant(np.eye(SIZE, dtype=np.float32) * 0.5)
            y = x
            for _ in range(links):
                y = ac.matmul(y, m)
            out = ac.reduce_sum(y)
    return g, x, out


async def test_close_drops_queued_launches_and_returns_with_the_device_free():
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=1024 * MiB)
    g, x, out = _matmul_chain()
    sess = ac.Session(g, config=config)
    feed = {x: np.ones((SIZE, SIZE), np.float32)}
    runs = [asyncio.ensure_future(sess.run(out, feed)) for _ in range(10)]
    # every run's chain is on the GPU: 60 matmuls of about a second each on this machine
    await until(lambda: sess.memory_stats("/gpu:0").bytes_in_use > 64 * MiB, "the runs reached the GPU")
    await sess.close()
    in_use = sess.memory_stats("/gpu:0").bytes_in_use
    other_g = ac.Graph()
    with other_g.as_default(), ac.device("/gpu:0"):
        small = ac.reduce_sum(ac.constant(np.arange(4, dtype=np.float32)) * 2.0)
    async with ac.Session(other_g, config=config) as other:
        stats = await worker_statistics(other, "/gpu:0")
        assert await other.run(small) == 12.0
    results = await asyncio.gather(*runs, return_exceptions=True)
    assert all(isinstance(r, ac.errors.CancelledError) for r in results), results
    assert in_use == 0, f"{in_use} bytes still in use on the GPU when close returned"
    assert stats.queued == 0 and stats.in_flight == 0, stats
