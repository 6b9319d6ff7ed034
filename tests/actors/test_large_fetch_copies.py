"""Fetched arrays larger than ``LARGE_COPY_BYTES`` are copied on a CPU worker thread, not on the
event loop (issue 27): they are still the caller's own (writable, sharing memory with no
variable, feed or other fetch, equal to what numpy computes), beside small fetches copied on the
loop, and a step ended by a deadline or ``close`` while its copies run ends as such."""

from __future__ import annotations

import asyncio

import numpy as np

import antcolony as ac
from antcolony.actors.fetch_ownership import LARGE_COPY_BYTES

# float32 elements: one just above the threshold, one at it (copied on the loop)
LARGE = LARGE_COPY_BYTES // 4 + 1
AT = LARGE_COPY_BYTES // 4


def _graph():
    g = ac.Graph()
    with g.as_default():
        big = ac.Variable(np.arange(LARGE, dtype=np.float32), name="big")
        edge = ac.Variable(np.arange(AT, dtype=np.float32) * 2, name="edge")
        small = ac.Variable(np.ones(3, np.float32), name="small")
        x = ac.placeholder(ac.float32, [LARGE], name="x")
        fetches = {
            "big": big,
            "big_again": ac.identity(big),
            "edge": edge,
            "small": small,
            "fed": ac.identity(x),
            "sum": big + x,
        }
        init = ac.global_variables_initializer()
    return g, x, fetches, init


def _expected(xv: np.ndarray) -> dict[str, np.ndarray]:
    big = np.arange(LARGE, dtype=np.float32)
    return {
        "big": big,
        "big_again": big,
        "edge": np.arange(AT, dtype=np.float32) * 2,
        "small": np.ones(3, np.float32),
        "fed": xv,
        "sum": big + xv,
    }


async def test_large_fetches_are_the_callers_own_arrays():
    g, x, fetches, init = _graph()
    xv = np.full(LARGE, 0.5, np.float32)
    async with ac.Session(g) as sess:
        await sess.run(init)
        for _ in range(3):  # the executor is cached after the first run: the same holds later
            got = await sess.run(fetches, {x: xv})
            want = _expected(xv)
            for name, value in got.items():
                np.testing.assert_array_equal(value, want[name], err_msg=name)
                assert value.flags.writeable, name
                assert not np.shares_memory(value, xv), name
            arrays = list(got.values())
            for i, a in enumerate(arrays):
                for b in arrays[i + 1 :]:
                    assert not np.shares_memory(a, b)
            for value in arrays:
                value[...] = 7.0  # scribbling over every fetch changes no variable and no feed
        np.testing.assert_array_equal(xv, np.full(LARGE, 0.5, np.float32))
        again = await sess.run(fetches, {x: xv})
        for name, value in again.items():
            np.testing.assert_array_equal(value, _expected(xv)[name], err_msg=name)


def test_large_fetches_on_the_blocking_face_are_the_callers_own():
    import antcolony.compat.v1 as tf

    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(LARGE, dtype=np.float32))
        init = tf.global_variables_initializer()
        with tf.Session(graph=g) as sess:
            sess.run(init)
            a = sess.run(w)
            a[:] = 7.0
            np.testing.assert_array_equal(sess.run(w), np.arange(LARGE, dtype=np.float32))


async def test_close_while_large_fetches_are_copied_ends_every_run():
    g, x, fetches, init = _graph()
    xv = np.full(LARGE, 0.25, np.float32)
    sess = ac.Session(g)
    await sess.run(init)
    runs = [asyncio.ensure_future(sess.run(fetches, {x: xv})) for _ in range(16)]
    await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
    await sess.close()
    results = await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 60)
    finished = [r for r in results if isinstance(r, dict)]
    assert finished, "at least the first run returned"
    for r in results:
        if isinstance(r, dict):
            for name, value in r.items():
                np.testing.assert_array_equal(value, _expected(xv)[name], err_msg=name)
        else:
            assert isinstance(r, ac.errors.CancelledError), r


async def test_a_deadline_during_large_copies_is_a_deadline_or_a_result():
    g, x, fetches, init = _graph()
    xv = np.full(LARGE, 0.125, np.float32)
    async with ac.Session(g) as sess:
        await sess.run(init)
        options = ac.RunOptions(timeout_in_ms=1)
        runs = [sess.run(fetches, {x: xv}, options=options) for _ in range(8)]
        results = await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 60)
        for r in results:
            if isinstance(r, dict):
                for name, value in r.items():
                    np.testing.assert_array_equal(value, _expected(xv)[name], err_msg=name)
            else:
                assert isinstance(r, ac.errors.DeadlineExceededError), r
        # the session is usable afterwards
        got = await sess.run(fetches["big"])
        np.testing.assert_array_equal(got, np.arange(LARGE, dtype=np.float32))
