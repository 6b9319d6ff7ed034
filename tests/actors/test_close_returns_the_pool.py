"""Closing the runtime's last open session hands its GPU pools' free memory back to the device
when ``close`` returns (issue 27: a job that closed its sessions holds no device memory, and
other processes, or another runtime of this one, see the device free)."""

from __future__ import annotations

import numpy as np

import antcolony as ac

MiB = 1 << 20


def _gpu_graph() -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [256, 256], name="x")
        with ac.device("/gpu:0"):
            out = ac.reduce_sum(ac.matmul(x, x))
    return g, x, out


async def test_the_pool_stays_while_a_session_is_open_and_is_handed_back_when_the_last_closes():
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB)
    g, x, out = _gpu_graph()
    feed = {x: np.ones((256, 256), np.float32)}
    first, second = ac.Session(g, config=config), ac.Session(g, config=config)
    assert await first.run(out, feed) == 256.0**3
    assert await second.run(out, feed) == 256.0**3
    await first.close()
    open_stats = second.memory_stats("/gpu:0")
    assert open_stats.pool_bytes > 0, open_stats  # the process's pool serves the open session
    await second.close()
    closed_stats = second.memory_stats("/gpu:0")
    assert closed_stats.bytes_in_use == 0 and closed_stats.pool_bytes == 0, closed_stats
    async with ac.Session(g, config=config) as third:  # the pool grows again for a new session
        assert await third.run(out, feed) == 256.0**3
        assert third.memory_stats("/gpu:0").pool_bytes > 0
