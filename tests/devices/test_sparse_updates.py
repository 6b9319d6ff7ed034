"""Sparse training steps through the public API: an embedding table's SGD step updates the
looked-up rows in place (it allocates nothing of the table's size, host or simulated GPU, and
leaves the other rows as they were), and in-place updates never change a value a reader still
holds. Storage is judged by allocations, not by addresses of fetched values (a fetch may be a
copy)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np

import antcolony as ac

MiB = 1 << 20
ROWS, DIM, BATCH, LR = 200_000, 128, 256, 0.1
TABLE_BYTES = ROWS * DIM * 4


def _embedding_model(device: str | None = None) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        table = ac.Variable(ac.random_uniform([ROWS, DIM]), name="table")
        ids = ac.placeholder(ac.int32, [BATCH], name="ids")
        target = ac.placeholder(ac.float32, [BATCH, DIM], name="target")
        e = ac.nn.embedding_lookup(table, ids)
        loss = ac.reduce_sum(ac.square(e - target))
        train = ac.train.GradientDescentOptimizer(LR).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"table": table, "ids": ids, "target": target, "train": train, "init": init}


def _batch(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, ROWS, BATCH).astype(np.int32)
    ids[:8] = ids[8]  # one id nine times: its rows add up
    return ids, rng.standard_normal((BATCH, DIM)).astype(np.float32)


def _expected(before: np.ndarray, ids: np.ndarray, target: np.ndarray) -> np.ndarray:
    after = before.copy()
    np.subtract.at(after, ids, LR * 2.0 * (before[ids] - target))
    return after


def _peak_bytes_of(run: Any) -> Any:
    """(what ``await run()`` returned, the peak bytes numpy allocated meanwhile)."""

    async def measured() -> tuple[Any, int]:
        tracemalloc.start()
        try:
            out = await run()
            return out, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    return measured()


async def test_an_sgd_step_on_a_200k_row_table_updates_the_looked_up_rows_in_place():
    g, t = _embedding_model()
    ids, target = _batch(1)
    feed = {t["ids"]: ids, t["target"]: target}
    async with ac.Session(g) as sess:
        await sess.run(t["init"])
        await sess.run(t["train"], feed)  # the first step builds the executor
        before = np.array(await sess.run(t["table"]))
        _, peak = await _peak_bytes_of(lambda: sess.run(t["train"], feed))
        after = await sess.run(t["table"])
    assert peak < TABLE_BYTES // 50, f"the step allocated {peak} bytes at its peak (table: {TABLE_BYTES})"
    untouched = np.ones(ROWS, bool)
    untouched[ids] = False
    np.testing.assert_array_equal(after[untouched], before[untouched])
    np.testing.assert_allclose(after, _expected(before, ids, target), rtol=1e-5, atol=1e-6)


async def test_on_a_simulated_gpu_the_step_allocates_no_table_sized_buffer():
    g, t = _embedding_model("/gpu:0")
    ids, target = _batch(2)
    feed = {t["ids"]: ids, t["target"]: target}
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=512 * MiB)
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        await sess.run(t["train"], feed)
        before = await sess.run(t["table"])
        expected = _expected(before, ids, target)
        del before
        in_use = sess.memory_stats("/gpu:0").bytes_in_use
        sess.reset_memory_peak("/gpu:0")
        await sess.run(t["train"], feed)
        stats = sess.memory_stats("/gpu:0")
        after = await sess.run(t["table"])
    assert stats.window_peak_bytes_in_use - in_use < TABLE_BYTES // 50, (
        f"the step's peak rose {stats.window_peak_bytes_in_use - in_use} bytes above what was in use"
    )
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-6)


async def test_a_fetched_value_is_not_changed_by_later_in_place_updates():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.zeros((4, 3), np.float32), name="v")
        w = ac.Variable(np.ones((4, 3), np.float32), name="w")
        ids = ac.placeholder(ac.int32, [None])
        loss = ac.reduce_sum(ac.gather(v, ids)) + ac.reduce_sum(w * w)
        train = ac.train.AdamOptimizer(0.5).minimize(loss)
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        held_v, held_w = await sess.run([v, w])
        await sess.run(train, {ids: [1, 1, 2]})
        now_v, now_w = await sess.run([v, w])
    np.testing.assert_array_equal(held_v, np.zeros((4, 3)))
    np.testing.assert_array_equal(held_w, np.ones((4, 3)))
    assert not np.array_equal(now_v, held_v) and not np.array_equal(now_w, held_w)


async def test_scatter_updates_leave_other_rows_alone_and_allocate_no_variable_sized_buffer():
    rows = 100_000
    initial = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(initial, name="v")
        up = ac.scatter_add(v, [4, 1, 4], np.ones((3, 8), np.float32))
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        await sess.run(up.op)  # the first run builds the executor
        _, peak = await _peak_bytes_of(lambda: sess.run(up.op))
        after = await sess.run(v)
    assert peak < initial.nbytes // 50, (
        f"the scatter allocated {peak} bytes at its peak ({initial.nbytes} held)"
    )
    expected = initial.copy()
    expected[1] += 2
    expected[4] += 4
    np.testing.assert_array_equal(after, expected)
