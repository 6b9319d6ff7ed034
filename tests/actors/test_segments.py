"""Bulk segments (SessionConfig.bulk_segments): a partition's plain CPU nodes run in one actor.

What a user sees must not change: the same values as with one actor per node and as numpy, a
failing node named in the error, a step_stats record per node, expensive kernels still on the
CPU worker above the inline threshold, and a long graph never holding the event loop."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.errors import InvalidArgumentError
from tests.waiting import LoopTurns

SHAPE = (3, 3)
_BINARY = {"add": (ac.add, np.add), "mul": (ac.multiply, np.multiply), "matmul": (ac.matmul, np.matmul)}
_UNARY = {"neg": (ac.negative, np.negative), "tanh": (ac.nn.tanh, np.tanh), "sum0": (None, None)}


def _config(segments: bool, threshold: int = 32768) -> ac.SessionConfig:
    return ac.SessionConfig(bulk_segments=segments, inline_threshold=threshold)


def _build(spec: list[tuple[str, int, int, bool]]) -> tuple[ac.Graph, list, list]:
    g = ac.Graph()
    with g.as_default():
        ins = [ac.placeholder(ac.float64, SHAPE, name=f"in{i}") for i in range(2)]
        out: list = list(ins)
        for name, a, b, ordered in spec:
            x, y = out[a % len(out)], out[b % len(out)]
            # ``ordered``: a control edge from the previous node as well (not from a placeholder,
            # which a control edge would require to run, fed or not)
            deps = [out[-1].op] if ordered and len(out) > len(ins) else []
            with ac.control_dependencies(deps):
                if name == "sum0":
                    # reduce then broadcast back: a two-output-free way to mix axes
                    out.append(ac.reduce_sum(x, axis=0, keepdims=True) + x)
                elif name in _BINARY:
                    out.append(_BINARY[name][0](x, y))
                else:
                    out.append(_UNARY[name][0](x))
    return g, ins, out


def _numpy(spec: list[tuple[str, int, int, bool]], values: list[np.ndarray]) -> list[np.ndarray]:
    out = list(values)
    for name, a, b, _ in spec:
        x, y = out[a % len(out)], out[b % len(out)]
        if name == "sum0":
            out.append(x.sum(axis=0, keepdims=True) + x)
        elif name in _BINARY:
            out.append(_BINARY[name][1](x, y))
        else:
            out.append(_UNARY[name][1](x))
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=st.lists(
        st.tuples(
            st.sampled_from(sorted({**_BINARY, **_UNARY})),
            st.integers(0, 1000),
            st.integers(0, 1000),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    ),
    fetch_mask=st.integers(1, 2**30),
    threshold=st.sampled_from([0, 32768]),
    seed=st.integers(0, 1000),
)
def test_segments_give_what_node_actors_and_numpy_give(spec, fetch_mask, threshold, seed):
    g, ins, out = _build(spec)
    fetch_ids = [i for i in range(len(out)) if fetch_mask >> (i % 30) & 1] or [len(out) - 1]
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1, 1, SHAPE) for _ in ins]
    expected = _numpy(spec, values)

    async def run(segments: bool) -> list:
        async with ac.Session(g, config=_config(segments, threshold)) as sess:
            feed = dict(zip(ins, values))
            fetches = [out[i] for i in fetch_ids]
            # concurrent steps share the segment: its per-step state must keep them apart
            return await asyncio.gather(*(sess.run(fetches, feed) for _ in range(3)))

    for segments in (True, False):
        for got in ac.run(run(segments)):
            for i, value in zip(fetch_ids, got):
                np.testing.assert_allclose(value, expected[i], rtol=1e-12, atol=1e-12)


def _chain(n: int) -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        h = x
        for _ in range(n):
            h = ac.add(h, 1.0)
    return g, x, h


@pytest.mark.parametrize("threshold", [32768, 0], ids=["inline", "launched"])
async def test_a_failing_member_names_its_node_and_later_steps_run(threshold):
    # threshold 0: the matmul is launched on the CPU worker and fails there (its KernelDone)
    g = ac.Graph()
    with g.as_default():
        a = ac.placeholder(ac.float32, None, name="a")
        b = ac.placeholder(ac.float32, None, name="b")
        y = ac.matmul(ac.negative(a), b, name="the_matmul") * 2.0
    async with ac.Session(g, config=_config(True, threshold)) as sess:
        with pytest.raises(InvalidArgumentError, match="the_matmul"):
            await sess.run(y, {a: np.ones((2, 3)), b: np.ones((2, 3))})
        got = await sess.run(y, {a: np.ones((2, 3)), b: np.ones((3, 1))})
    np.testing.assert_allclose(got, np.full((2, 1), -6.0))


async def test_every_member_has_its_own_step_stats_record():
    g, x, h = _chain(50)
    meta = ac.RunMetadata()
    async with ac.Session(g, config=_config(True)) as sess:
        got = await sess.run(
            h, {x: 0.0}, options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=meta
        )
    assert got == 50.0
    adds = [s for s in meta.step_stats if s.op_type == "Add"]
    assert len(adds) == 50 and len({s.node_name for s in adds}) == 50
    assert all(s.end_us >= s.start_us for s in adds)


async def test_an_expensive_member_above_the_threshold_runs_on_the_cpu_worker():
    g = ac.Graph()
    with g.as_default():
        a = ac.placeholder(ac.float32, [64, 64], name="a")
        y = ac.matmul(ac.negative(a), a, name="big") + 1.0
    meta = ac.RunMetadata()
    value = np.eye(64, dtype=np.float32)
    async with ac.Session(g, config=_config(True, threshold=100)) as sess:
        got = await sess.run(
            y, {a: value}, options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=meta
        )
    np.testing.assert_allclose(got, -np.eye(64) + 1.0)
    (mm,) = [s for s in meta.step_stats if s.node_name == "big"]
    (neg,) = [s for s in meta.step_stats if s.op_type == "Neg"]
    assert neg.worker == "inline" and mm.worker != "inline", (neg.worker, mm.worker)


@pytest.mark.parametrize("segments", [True, False], ids=["segment", "node_actors"])
async def test_add_n_runs_inline_up_to_eight_times_the_threshold(segments):
    # AddN is one pass over its inputs: 200 input elements stay inline under a threshold of 100
    # (a matmul of the same inputs is launched), 1800 do not
    g = ac.Graph()
    with g.as_default():
        a = ac.placeholder(ac.float32, [10, 10], name="a")
        b = ac.placeholder(ac.float32, [30, 30], name="b")
        small = ac.add_n([a, a], name="small")
        mm = ac.matmul(a, a, name="mm")
        large = ac.add_n([b, b], name="large")
    meta = ac.RunMetadata()
    av, bv = np.arange(100, dtype=np.float32).reshape(10, 10), np.ones((30, 30), np.float32)
    async with ac.Session(g, config=_config(segments, threshold=100)) as sess:
        got = await sess.run(
            [small, mm, large],
            {a: av, b: bv},
            options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE),
            run_metadata=meta,
        )
    np.testing.assert_array_equal(got[0], av + av)
    np.testing.assert_allclose(got[1], av @ av)
    np.testing.assert_array_equal(got[2], bv + bv)
    workers = {s.node_name: s.worker for s in meta.step_stats}
    assert workers["small"] == "inline", workers
    assert workers["mm"] != "inline" and workers["large"] != "inline", workers


async def test_a_long_segment_lets_other_tasks_run_during_the_step():
    g, x, h = _chain(5000)
    async with ac.Session(g, config=_config(True)) as sess:
        await sess.run(h, {x: 0.0})  # builds the executor
        async with LoopTurns() as turns:
            before = turns.count
            assert await sess.run(h, {x: 0.0}) == 5000.0
            during = turns.count - before
    # 5000 members at most 512 per turn: the loop turned between the segment's turns
    assert during >= 3
