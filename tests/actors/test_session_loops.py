"""A Session belongs to the event loop it first ran on: another loop, in this thread or another,
gets a clear error rather than a step delivered to actors whose loop it is not running on.

These tests run their own loops (plain functions, not pytest-asyncio's): each case first runs
the session where it attached, so the next run takes Session.run's fast path."""

from __future__ import annotations

import asyncio
import threading

import pytest

import antcolony as ac
from antcolony.errors import SessionClosedError


def _graph() -> tuple[ac.Graph, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        c = ac.constant(3.0, name="c")
    return g, c


async def _run(sess: ac.Session, fetch: ac.Tensor) -> float:
    # bounded: a step delivered to actors of a loop that does not run would never end
    return float(await asyncio.wait_for(sess.run(fetch), 5))


def test_a_session_run_from_a_second_loop_in_the_same_thread_names_the_mistake():
    g, c = _graph()
    sess = ac.Session(g)
    assert asyncio.run(_run(sess, c)) == 3.0
    loop = asyncio.new_event_loop()  # the first loop's runtime is still open, but not running
    try:
        with pytest.raises(SessionClosedError, match="another event loop"):
            loop.run_until_complete(_run(sess, c))
    finally:
        loop.close()


def test_a_session_run_from_another_threads_loop_names_the_mistake_while_its_own_loop_runs():
    g, c = _graph()
    sess = ac.Session(g)
    ran, stop = threading.Event(), threading.Event()
    first: list[float] = []

    async def own_loop() -> None:
        first.append(await _run(sess, c))
        ran.set()
        while not stop.is_set():
            await asyncio.sleep(0.005)
        await sess.close()

    owner = threading.Thread(target=asyncio.run, args=(own_loop(),))
    owner.start()
    try:
        assert ran.wait(30), "the session's own loop did not run its first step"
        for _ in range(2):  # a refused run leaves nothing that lets the next one through
            with pytest.raises(SessionClosedError, match="another event loop"):
                asyncio.run(_run(sess, c))
    finally:
        stop.set()
        owner.join(30)
    assert first == [3.0]
