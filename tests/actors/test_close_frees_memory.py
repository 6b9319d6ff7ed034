"""Closing a session with steps in flight frees every byte those steps held on the device."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref

import numpy as np

import antcolony as ac
from antcolony.actors.actor import Actor
from antcolony.actors.runtime import get_runtime

MiB = 1 << 20


def _slow_gpu_graph(size: int = 512, depth: int = 40) -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [size, size], name="x")
        with ac.device("/gpu:0"):
            m = ac.constant(np.eye(size, dtype=np.float32))
            y = x
            for _ in range(depth):
                y = ac.matmul(y, m)
            out = ac.reduce_sum(y)
    return g, x, out


async def _bytes_in_use_settles(sess: ac.Session, target: int, within: float) -> int:
    deadline = time.monotonic() + within
    while True:
        now = sess.memory_stats("/gpu:0").bytes_in_use
        if now == target or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.01)


async def test_close_with_runs_in_flight_returns_device_memory_to_baseline():
    g, x, out = _slow_gpu_graph()
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=512 * MiB)
    sess = ac.Session(g, config=config)
    feed = {x: np.ones((512, 512), np.float32)}
    await sess.run(out, feed)
    baseline = sess.memory_stats("/gpu:0").bytes_in_use  # the constant bound to the executor
    runs = [asyncio.ensure_future(sess.run(out, feed)) for _ in range(10)]
    deadline = time.monotonic() + 10
    while sess.memory_stats("/gpu:0").bytes_in_use <= baseline and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    assert sess.memory_stats("/gpu:0").bytes_in_use > baseline, "the steps never reached the GPU"
    await sess.close()
    results = await asyncio.gather(*runs, return_exceptions=True)
    assert all(isinstance(r, ac.errors.CancelledError) for r in results), results
    # kernels already on the stream finish; their results must be dropped, not parked; and the
    # closed session's executors let go of the constant they bound, though `results` holds
    # the runs' errors (whose tracebacks reach the executors): nothing is left on the device
    assert await _bytes_in_use_settles(sess, 0, within=5.0) == 0


async def test_undelivered_messages_keep_a_description_not_the_payload():
    class Sink(Actor):
        def on_receive(self, msg: object) -> None:
            pass

    runtime = get_runtime()
    ref = runtime.spawn(Sink, name="sink")
    await ref.stop()
    payload = np.ones(1 << 20, np.uint8)
    alive = weakref.ref(payload)

    class Result:
        def __init__(self, value: object) -> None:
            self.value = value

    ref.tell(Result(payload))
    del payload
    gc.collect()
    assert alive() is None, "a dead letter kept its payload alive"
    assert runtime.dead_letters[-1] == ("sink", "Result")
