"""A simulated GPU's pool through the public API: it does not fragment where TF's single region
fits, and it gives back what the job no longer needs."""

from __future__ import annotations

import asyncio
import time

import numpy as np

import antcolony as ac

MiB = 1 << 20


def _config(**kw: object) -> ac.SessionConfig:
    return ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB, vmem=False, **kw)


async def test_two_80_MiB_variables_fed_through_80_MiB_copies_fit_a_256_MiB_gpu_without_vmem():
    n = 80 * MiB // 4
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [n])
        with ac.device("/gpu:0"):
            a = ac.Variable(ac.zeros([n]), name="a")
            b = ac.Variable(ac.zeros([n]), name="b")
            set_a = ac.assign(a, ac.identity(x))  # the feed's 80 MiB copy, then the variable
            set_b = ac.assign(b, ac.identity(x))
        total = ac.reduce_sum(a) + ac.reduce_sum(b)  # on the host: no temporaries on the GPU
    feed = np.ones(n, np.float32)
    async with ac.Session(g, config=_config()) as sess:
        await sess.run(set_a.op, {x: feed})
        await sess.run(set_b.op, {x: feed})
        assert await sess.run(total) == 2.0 * n
        stats = sess.memory_stats("/gpu:0")
    assert stats.bytes_in_use >= 160 * MiB and stats.num_host_fallbacks == 0


async def test_a_pool_above_the_jobs_recent_peak_is_handed_back_while_the_session_runs():
    g = ac.Graph()
    with g.as_default():
        big = ac.placeholder(ac.float32, [None])
        with ac.device("/gpu:0"):
            v = ac.Variable(ac.ones([MiB // 4]), name="small")
            grow = ac.reduce_sum(ac.identity(big) * 2.0)  # 64 MiB of temporaries, once
            step = ac.reduce_sum(v * 2.0)
    async with ac.Session(g, config=_config()) as sess:
        await sess.run(v.initializer)
        await sess.run(grow, {big: np.ones(16 * MiB, np.float32)})
        grown = sess.memory_stats("/gpu:0").pool_bytes
        assert grown >= 128 * MiB
        deadline = time.monotonic() + 60
        while sess.memory_stats("/gpu:0").pool_bytes >= grown:
            assert time.monotonic() < deadline, "the pool was never trimmed"
            assert await sess.run(step) == MiB // 2  # small steps: the job's peak is now ~2 MiB
            await asyncio.sleep(0.05)
        stats = sess.memory_stats("/gpu:0")
    assert stats.pool_bytes <= 16 * MiB, stats  # the recent peak plus the slack, not 128 MiB
