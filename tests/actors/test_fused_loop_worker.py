"""Fused loops run on the CPU worker (actors/fused_loop.py): a loop holding a kernel that may
leave the event loop (an expensive kernel on inputs of unknown or large static shape) runs as
one launch on the worker, and loops keeping state in per-run handles (TensorArrays, the
accumulators of loop gradients) are fused too. Results against the unfused executor (equal,
element by element: the same kernels run on the same values), the fused node's record naming a
worker thread, an inner failure naming its op, and a step timeout stopping a long run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import antcolony as ac

from .test_fused_loop import _same

TRACE = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)


async def _run(g: ac.Graph, fetches: Any, fuse: bool, init: Any = None) -> tuple[Any, ac.RunMetadata]:
    """Values of a plain run and the metadata of a traced one, which must fetch the same values."""
    feed = None
    async with ac.Session(g, config=ac.SessionConfig(fuse_loops=fuse)) as sess:
        if init is not None:
            await sess.run(init)
        out = await sess.run(fetches, feed)
        md = ac.RunMetadata()
        _same(await sess.run(fetches, feed, options=TRACE, run_metadata=md), out)
    return out, md


def _fused_records(md: ac.RunMetadata) -> list[Any]:
    return [s for s in md.step_stats if s.op_type == "FusedLoop"]


def _matmul_loop(trips: Any) -> Any:
    """A loop multiplying by a matrix of unknown static shape: its MatMul may be large."""
    m = ac.placeholder_with_default(np.eye(2) * 2.0, [None, None], name="m")
    return ac.while_loop(lambda k, v: k < trips, lambda k, v: (k + 1, ac.matmul(v, m)), [ac.constant(0), m])


async def test_an_expensive_loop_runs_fused_on_the_cpu_worker_with_the_unfused_values():
    g = ac.Graph()
    with g.as_default():
        result = _matmul_loop(3)
    fused, md = await _run(g, result, fuse=True)
    plain, md_plain = await _run(g, result, fuse=False)
    _same(fused, plain)
    np.testing.assert_array_equal(fused[1], np.eye(2) * 16.0)
    records = _fused_records(md)
    assert len(records) == 1 and records[0].worker.startswith("antcolony-cpu")
    assert [s.node_name for s in md.step_stats].count("while/MatMul") == 3  # inner kernels traced
    assert not _fused_records(md_plain)


def _lstm_training_graph(batch_known: bool) -> tuple[ac.Graph, list[Any], Any]:
    """A 2-layer LSTM over a dynamic_rnn (TensorArrays in its loop) and its gradients (a backprop
    loop of accumulator pops and TensorArray writes). With the batch unknown when planning, the
    cells' MatMuls may be large: both loops then run on the worker, else inline."""
    g = ac.Graph()
    with g.as_default():
        rng = np.random.default_rng(3)
        value = rng.standard_normal((4, 6, 5)).astype(np.float32)
        x = ac.constant(value) if batch_known else ac.placeholder_with_default(value, [None, 6, 5])
        cells = ac.nn.rnn_cell.MultiRNNCell([ac.nn.rnn_cell.BasicLSTMCell(7) for _ in range(2)])
        with ac.variable_scope("rnn", initializer=ac.random_uniform_initializer(-0.3, 0.3, seed=2)):
            outputs, state = ac.nn.dynamic_rnn(cells, x, dtype=ac.float32)
        loss = ac.reduce_sum(outputs * outputs) + ac.reduce_sum(state[1].c)
        weights = ac.trainable_variables()
        grads = ac.gradients(loss, [x, *weights])
        init = ac.global_variables_initializer()
    return g, [loss, *grads], init


@pytest.mark.parametrize("batch_known", [True, False])
async def test_a_dynamic_rnn_and_its_gradient_loop_run_fused_with_the_unfused_values(batch_known):
    g, fetches, init = _lstm_training_graph(batch_known)
    fused, md = await _run(g, fetches, fuse=True, init=init)
    plain, md_plain = await _run(g, fetches, fuse=False, init=init)
    _same(fused, plain)
    records = _fused_records(md)
    # the forward loop and its backprop loop; inline, a record per chunk of iterations
    assert {r.node_name for r in records} == {"rnn/rnn/while/fused_loop", "gradients/while_grad/fused_loop"}
    on_worker = {r.worker.startswith("antcolony-cpu") for r in records}
    assert on_worker == {not batch_known}
    assert not _fused_records(md_plain)


async def test_a_tensor_array_loop_of_cheap_ops_runs_fused_inline():
    g = ac.Graph()
    with g.as_default():
        ta = ac.TensorArray(ac.float32, size=4)
        _, ta = ac.while_loop(
            lambda i, t: i < 4, lambda i, t: (i + 1, t.write(i, ac.cast(i, ac.float32) * 2.0)), [0, ta]
        )
        stacked = ta.stack()
    fused, md = await _run(g, stacked, fuse=True)
    np.testing.assert_array_equal(fused, np.array([0.0, 2.0, 4.0, 6.0], dtype=np.float32))
    records = _fused_records(md)
    assert len(records) == 1 and records[0].worker == "inline"


async def test_an_inner_op_failing_on_the_worker_fails_the_step_naming_it_and_the_session_stays_usable():
    g = ac.Graph()
    with g.as_default():
        n = ac.placeholder(ac.int32, [], name="n")
        m = ac.placeholder_with_default(np.eye(2), [None, None], name="m")
        table = ac.constant(np.array([1.0, 2.0, 3.0]))
        result = ac.while_loop(
            lambda i, v, s: i < n,
            lambda i, v, s: (i + 1, ac.matmul(v, m), s + ac.gather(table, i, name="lookup")),
            [ac.constant(0), m, ac.constant(0.0, ac.float64)],
        )
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"lookup") as info:
            await sess.run(result, {n: 5})
        assert info.value.op is not None and info.value.op.name.endswith("/lookup")
        got = await sess.run(result, {n: 3})
    assert int(got[0]) == 3 and float(got[2]) == 6.0


async def test_a_step_timeout_stops_a_long_loop_on_the_worker_and_the_worker_goes_on():
    g = ac.Graph()
    with g.as_default():
        trips = ac.placeholder(ac.int32, [], name="trips")
        result = _matmul_loop(trips)
    m = g.get_tensor_by_name("m:0")
    # one worker thread: the second step's loop queues behind the first one's until it stops
    async with ac.Session(g, config=ac.SessionConfig(inter_op_threads=1)) as sess:
        with pytest.raises(ac.errors.DeadlineExceededError):
            await sess.run(result, {trips: 2**31 - 1, m: np.eye(2)}, options=ac.RunOptions(timeout_in_ms=50))
        k, v = await sess.run(result, {trips: 2}, options=ac.RunOptions(timeout_in_ms=5000))
    assert int(k) == 2
    np.testing.assert_array_equal(v, np.eye(2) * 8.0)
