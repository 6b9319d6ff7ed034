"""Critical-path-first dispatch: of the CPU kernels waiting for a worker thread, the one with the
longest path still to run after it starts first, whatever order they were launched in."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import antcolony as ac
import antcolony.compat.v1 as tf
from antcolony.actors.launch_rank import launch_ranks
from antcolony.actors.runtime import get_runtime
from antcolony.actors.session_stats import worker_statistics
from tests.waiting import until, until_async

# one worker thread, and every expensive kernel (matmul) launched on it, whatever its size
ONE_THREAD = ac.SessionConfig(inter_op_threads=1, inline_threshold=0)
TRACE = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)


def _chain(x: ac.Tensor, w: ac.Tensor, length: int, name: str, head: str) -> ac.Tensor:
    """``length`` launched kernels in a row from ``x``; the first is named ``name``."""
    if head == "py_func":
        y = tf.py_func(lambda v: v @ np.eye(2, dtype=np.float32), [x], tf.float32, name=name)
        y.set_shape([2, 2])
    else:
        y = ac.matmul(x, w, name=name)
    for _ in range(length - 1):
        y = ac.matmul(y, w)
    return y


async def _head_order(short: int, long: int, long_first: bool, head: str) -> list[str]:
    """Which chain head started first, with both queued behind a kernel holding the only thread."""
    gate, started = threading.Event(), threading.Event()
    g = ac.Graph()
    with g.as_default():

        def hold() -> np.float32:
            started.set()
            gate.wait(10)
            return np.float32(1.0)

        blocker = tf.py_func(hold, [], tf.float32)
        x = ac.placeholder(ac.float32, [2, 2], name="x")
        w = ac.constant(np.eye(2, dtype=np.float32))
        order = [("long", long), ("short", short)] if long_first else [("short", short), ("long", long)]
        ends = [_chain(x, w, length, name, head) for name, length in order]
    feed = {x: np.ones((2, 2), np.float32)}
    async with ac.Session(g, config=ONE_THREAD) as sess:
        await sess.run(ends, feed)  # plans and warms the executor
        held = asyncio.ensure_future(sess.run(blocker))
        try:
            await until(started.is_set, "the blocker on the only CPU thread")
            meta = ac.RunMetadata()
            run = asyncio.ensure_future(sess.run(ends, feed, options=TRACE, run_metadata=meta))

            async def both_queued() -> bool:
                return (await worker_statistics(sess, "/cpu:0")).queued == 2

            await until_async(both_queued, "both chain heads queued behind the blocker")
        finally:
            gate.set()
        await held
        values = await run
    await get_runtime().shutdown()
    for value in values:
        np.testing.assert_array_equal(value, np.ones((2, 2), np.float32))  # x @ I ... @ I
    starts = {s.node_name: s.start_us for s in meta.step_stats if s.node_name in ("long", "short")}
    return sorted(starts, key=starts.__getitem__)


@settings(max_examples=12, deadline=None)
@given(
    short=st.integers(1, 3),
    extra=st.integers(1, 3),
    long_first=st.booleans(),
    head=st.sampled_from(["matmul", "py_func"]),
)
def test_the_head_of_the_longer_chain_starts_first(short, extra, long_first, head):
    # matmul heads are members of the partition's segment; py_func heads are node actors
    assert asyncio.run(_head_order(short, short + extra, long_first, head)) == ["long", "short"]


def _longest_from(node: int, succ: list[list[int]]) -> int:
    return 1 + max((_longest_from(s, succ) for s in succ[node]), default=0)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_ranks_are_the_longest_path_to_the_end_of_the_partition(data):
    n = data.draw(st.integers(1, 12))
    # a DAG: edges only from a lower to a higher index, some repeated (two inputs from one node)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
    edges = [(min(a, b), max(a, b)) for a, b in pairs if a != b]
    succ: list[list[int]] = [[] for _ in range(n)]
    out_edges: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    for src, dst in edges:
        succ[src].append(dst)
        out_edges[src].append((0, dst, len(out_edges[src])))
    # a back edge (a loop's NextIteration to its Merge) from the last node is left out
    back = [False] * n
    if n > 1:
        out_edges[n - 1].append((0, 0, 0))
        back[n - 1] = True
    assert launch_ranks(out_edges, back) == [_longest_from(i, succ) for i in range(n)]
