"""Steps of cheap CPU nodes end within the ``session.run`` call that starts them, with their
values or their error; either way what the step held (its feeds, its error's frames) is freed by
reference counting alone, as soon as the caller lets go, and leaves no cycle for the garbage
collector. (The GPU cases, steps that end later, are in test_failed_steps_free_by_refcount.py.)"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import antcolony as ac


def _earlier_threads_ended(within: float = 5.0) -> None:
    """Wait for threads of earlier tests' runtimes (pool workers stopping after their shutdown) to
    end: a Thread object dropped while the collector is off is a cycle (its excepthook closure,
    its locks) that the assertions below would count as this test's."""
    # Threads that live on (the blocking face's loop and its devices, kept for the process) never
    # end here: wait for the set of threads to stay the same for a while, not for it to empty.
    deadline = time.monotonic() + within
    seen, stable_since = set(threading.enumerate()), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - stable_since < 0.25:
        time.sleep(0.01)
        now = set(threading.enumerate())
        if now != seen:
            seen, stable_since = now, time.monotonic()


@pytest.fixture
def no_gc() -> Iterator[None]:
    _earlier_threads_ended()
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _failing(kind: str) -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        v = ac.placeholder(ac.float32, [None], name="v")
        shaped = ac.reshape(v, [-1, 7])
        out = ac.reduce_sum(shaped) if kind == "segment" else shaped
    return g, v, out


# "segment": a bulk segment fails and the step ends within the call that started it;
# "node": a lone node actor fails and the step ends a message later.
@pytest.mark.parametrize("kind", ["segment", "node"])
async def test_a_failed_step_frees_its_feeds_and_leaves_no_cycle(kind: str, no_gc: None) -> None:
    g, v, out = _failing(kind)
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="Reshape"):
            await sess.run(out, {v: np.ones(10, np.float32)})  # builds the executor
        fed = np.ones(10, np.float32)
        alive = weakref.ref(fed)
        for _ in range(20):
            with pytest.raises(ac.errors.InvalidArgumentError, match="Reshape"):
                await sess.run(out, {v: fed})
        del fed
        for _ in range(3):
            await asyncio.sleep(0)  # the nodes' abort messages are handled
        assert alive() is None, "the failed steps still hold their feed"
        assert gc.collect() == 0
        # and the session still runs
        assert (
            float(await sess.run(ac.reduce_sum(v) if kind == "node" else out, {v: np.ones(7, np.float32)}))
            == 7.0
        )


async def test_steps_that_end_inline_leave_nothing_for_the_garbage_collector(no_gc: None) -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [3], name="x")
        y = ac.reduce_sum(x * 2.0 + 1.0)
        c = ac.constant(5.0)
    async with ac.Session(g) as sess:
        fed = np.arange(3, dtype=np.float32)
        await sess.run([y, c], {x: fed})
        await sess.run(c)
        gc.collect()
        for _ in range(200):
            assert float(await sess.run(y, {x: fed})) == 9.0
            assert float(await sess.run(c)) == 5.0
            assert [float(a) for a in await sess.run([c, y], {x: fed})] == [5.0, 9.0]
        assert gc.collect() == 0
