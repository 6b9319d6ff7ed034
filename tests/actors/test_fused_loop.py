"""Fused loops (SessionConfig.fuse_loops): a while loop of cheap stateless CPU ops runs as one
node. Results against plain Python/numpy and against the unfused executor, dead loops, errors
naming the inner op, a long loop that lets other tasks run, and loops that must not be fused
(loops run fused on the CPU worker: test_fused_loop_worker.py).

Whether a loop was fused is seen in a traced run: the fused node leaves a "FusedLoop" record."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime

TRACE = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)
SIM = dict(gpu_backend="sim", sim_gpu_count=1)


async def _traced(
    g: ac.Graph, fetches: Any, feed: Any = None, fuse: bool = True
) -> tuple[Any, ac.RunMetadata]:
    """The fetched values of a plain run, and the metadata of a traced run, which must fetch the
    same values (a traced fused loop runs through another interpreter)."""
    async with ac.Session(g, config=ac.SessionConfig(fuse_loops=fuse, **SIM)) as sess:
        out = await sess.run(fetches, feed)
        md = ac.RunMetadata()
        _same(await sess.run(fetches, feed, options=TRACE, run_metadata=md), out)
    return out, md


def _fused(md: ac.RunMetadata) -> bool:
    return any(s.op_type == "FusedLoop" for s in md.step_stats)


def _same(a: Any, b: Any) -> None:
    """Equal values and dtypes, element by element (structures of arrays and scalars)."""
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(a, b)


def _counter_graph() -> tuple[ac.Graph, Any, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        limit = ac.placeholder(ac.int32, [], name="limit")
        x = ac.placeholder(ac.float32, [], name="x")
        result = ac.while_loop(
            lambda i, a: ac.less(i, limit),
            lambda i, a: (ac.add(i, 1), ac.add(ac.multiply(a, 0.5), x)),
            [ac.constant(0), ac.constant(0.0)],
        )
    return g, result, limit, x


@pytest.mark.parametrize("n", [0, 1, 5, 300])
async def test_a_counter_and_an_accumulator_match_numpy_and_the_unfused_executor(n):
    g, result, limit, x = _counter_graph()
    feed = {limit: n, x: 1.25}
    fused, md = await _traced(g, result, feed)
    plain, md_plain = await _traced(g, result, feed, fuse=False)
    a = np.float32(0.0)
    for _ in range(n):
        a = a * np.float32(0.5) + np.float32(1.25)
    _same(fused, [np.int32(n), a])
    _same(fused, plain)
    assert _fused(md) and not _fused(md_plain)


async def test_loop_invariants_of_several_dtypes_and_shapes_reach_every_iteration():
    g = ac.Graph()
    with g.as_default():
        v = ac.placeholder(ac.float64, [3], name="v")
        step = ac.placeholder(ac.int64, [], name="step")
        scale = ac.constant(np.array([1.0, -2.0, 0.5]))
        result = ac.while_loop(
            lambda k, acc, total: k < 40,
            lambda k, acc, total: (k + step, acc * 0.5 + v * scale, total + k),
            [ac.constant(np.int64(0)), ac.zeros([3], ac.float64), ac.constant(np.int64(0))],
        )
    vv = np.array([0.5, 1.5, -3.0])
    got, md = await _traced(g, result, {v: vv, step: 3})
    k, acc, total = np.int64(0), np.zeros(3), np.int64(0)
    while k < 40:
        k, acc, total = k + np.int64(3), acc * 0.5 + vv * np.array([1.0, -2.0, 0.5]), total + k
    _same(got, [k, acc, total])
    assert _fused(md)


async def test_a_zero_iteration_loop_returns_its_inputs_with_their_dtypes():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        result = ac.while_loop(lambda i, y: i > 0, lambda i, y: (i - 1, y * 2.0), [ac.constant(0), x])
    got, md = await _traced(g, result, {x: np.array([1.5, -2.0], np.float32)})
    _same(got, [np.int32(0), np.array([1.5, -2.0], np.float32)])
    assert _fused(md)


async def test_a_loop_on_an_untaken_branch_is_dead_and_the_taken_branch_wins():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        loop = ac.while_loop(lambda k, v: k < 3, lambda k, v: (k + 1, v * 2.0), [ac.constant(0), x])
        out = ac.cond(x > 0.0, lambda: loop[1] + 0.0, lambda: x - 1.0)
        # the loop itself is outside the cond here; inside it, it is entered from a dead Switch
        inner = ac.cond(
            x > 0.0,
            lambda: ac.while_loop(lambda k, v: k < 3, lambda k, v: (k + 1, v * 2.0), [ac.constant(0), x])[1],
            lambda: x - 1.0,
        )
    for value, want in ((1.5, 12.0), (-1.5, -2.5)):
        got, md = await _traced(g, [out, inner], {x: value})
        assert [float(v) for v in got] == [want, want]
        assert _fused(md)


@pytest.mark.parametrize("in_cond", [False, True])
@pytest.mark.parametrize("traced", [False, True])
async def test_an_inner_op_that_raises_fails_the_step_naming_it_and_the_session_stays_usable(in_cond, traced):
    g = ac.Graph()
    with g.as_default():
        n = ac.placeholder(ac.int32, [], name="n")
        table = ac.constant(np.array([1.0, 2.0, 3.0]))

        def body(i: Any, s: Any) -> Any:
            if not in_cond:
                return i + 1, s + ac.gather(table, i, name="lookup")
            return i + 1, ac.cond(i >= 0, lambda: s + ac.gather(table, i, name="lookup"), lambda: s)

        result = ac.while_loop(lambda i, s: i < n, body, [ac.constant(0), ac.constant(0.0, ac.float64)])
    options = TRACE if traced else None
    async with ac.Session(g) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"lookup") as info:
            await sess.run(result, {n: 5}, options=options)
        assert info.value.op is not None and info.value.op.name.endswith("/lookup")
        _same(await sess.run(result, {n: 3}, options=options), [np.int32(3), np.float64(6.0)])


async def test_a_long_loop_lets_other_tasks_run_and_can_be_aborted_between_chunks():
    iterations = 200_000
    g, result, limit, x = _counter_graph()
    ticks = 0

    async def ticker(done: asyncio.Event) -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    async with ac.Session(g) as sess:
        _, md = None, ac.RunMetadata()
        await sess.run(result, {limit: 2, x: 1.0}, options=TRACE, run_metadata=md)
        assert _fused(md)  # else 200k iterations would take seconds of messages
        done = asyncio.Event()
        task = asyncio.create_task(ticker(done))
        i, _ = await sess.run(result, {limit: iterations, x: 1.0})
        done.set()
        await task
        assert int(i) == iterations
        assert ticks >= 20  # the loop yielded to the event loop all along (about once per ms)
        with pytest.raises(ac.errors.DeadlineExceededError):
            await sess.run(result, {limit: 2**31 - 1, x: 1.0}, options=ac.RunOptions(timeout_in_ms=50))
        _same(await sess.run(result, {limit: 1, x: 1.0}), [np.int32(1), np.float32(1.0)])


async def test_loops_in_a_loop_sequential_loops_and_loops_feeding_a_gpu_run_fused():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, [], name="x")

        def outer(i, s):
            _, t = ac.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + x), [ac.constant(0), s])
            return i + 1, t

        _, s = ac.while_loop(lambda i, s: i < 4, outer, [ac.constant(0), ac.constant(0.0, ac.float64)])
        _, s2 = ac.while_loop(lambda k, v: k < 2, lambda k, v: (k + 1, v * 3.0), [ac.constant(0), s])
        with ac.device("/gpu:0"):
            on_gpu = s2 * 2.0
            gpu_invariant = x + 1.0
        _, s3 = ac.while_loop(
            lambda k, v: k < 3, lambda k, v: (k + 1, v + gpu_invariant), [ac.constant(0), s2]
        )
        with ac.control_dependencies([s3]):
            after = ac.identity(x)
    got, md = await _traced(g, [s, s2, on_gpu, s3, after], {x: 0.5})
    want_s = sum(i * 0.5 for i in range(4))
    want = [want_s, want_s * 9, want_s * 18, want_s * 9 + 3 * 1.5, 0.5]
    assert [float(v) for v in got] == pytest.approx(want)
    assert sum(s.op_type == "FusedLoop" for s in md.step_stats) >= 3  # inner (per outer iteration), s2, s3
    plain, _ = await _traced(g, [s, s2, on_gpu, s3, after], {x: 0.5}, fuse=False)
    _same(got, plain)


async def test_a_traced_fused_loop_records_its_inner_ops_and_itself():
    g, result, limit, x = _counter_graph()
    _, md = await _traced(g, result, {limit: 4, x: 1.0})
    names = [s.node_name for s in md.step_stats]
    assert names.count("while/Less") == 5 and names.count("while/Mul") == 4
    assert any(s.op_type == "FusedLoop" and s.node_name.startswith("while") for s in md.step_stats)
    assert json.loads(md.chrome_trace())["traceEvents"]


async def test_concurrent_runs_of_a_fused_loop_stay_independent():
    g, result, limit, x = _counter_graph()
    async with ac.Session(g) as sess:
        trips = [0, 3000, 7, 1500]
        got = await asyncio.gather(*(sess.run(result, {limit: n, x: 1.0}) for n in trips))
    assert [int(i) for i, _ in got] == trips


def _random_uniform_loop() -> Any:
    return ac.while_loop(
        lambda k, v: k < 5, lambda k, v: (k + 1, v + ac.random_uniform([], seed=1)), [ac.constant(0), 0.0]
    )[1]


def _variable_loop() -> Any:
    """A loop writing a variable each iteration (reading it once, outside, is fusable)."""
    w = ac.Variable(2.0, name="w")
    return ac.while_loop(
        lambda k, v: k < 5, lambda k, v: (k + 1, v + ac.assign_add(w, 1.0)), [ac.constant(0), 0.0]
    )[1], w


@pytest.mark.parametrize("kind", ["variable", "random", "gpu"])
async def test_stateful_and_gpu_loops_are_not_fused_and_still_right(kind):
    g = ac.Graph()
    with g.as_default():
        init = None
        if kind == "variable":
            out, w = _variable_loop()
            init = w.initializer
            check = lambda v: float(v) == 3.0 + 4.0 + 5.0 + 6.0 + 7.0  # noqa: E731
        elif kind == "random":
            out = _random_uniform_loop()
            check = lambda v: 0.0 <= float(v) <= 5.0  # noqa: E731
        else:
            with ac.device("/gpu:0"):
                out = ac.while_loop(lambda k, v: k < 5, lambda k, v: (k + 1, v * 2.0), [ac.constant(0), 1.0])[
                    1
                ]
            check = lambda v: float(v) == 32.0  # noqa: E731
    async with ac.Session(g, config=ac.SessionConfig(**SIM)) as sess:
        if init is not None:
            await sess.run(init)
        md = ac.RunMetadata()
        value = await sess.run(out, options=TRACE, run_metadata=md)
    assert check(value)
    assert not _fused(md)


async def test_expensive_kernels_on_small_static_shapes_are_fused():
    g = ac.Graph()
    with g.as_default():
        m = ac.constant(np.array([[0.5, 0.25], [0.0, 1.0]]))
        result = ac.while_loop(
            lambda k, v, s: k < 4,
            lambda k, v, s: (k + 1, ac.matmul(v, m), s + ac.reduce_sum(v)),
            [ac.constant(0), ac.constant(np.eye(2)), ac.constant(0.0, ac.float64)],
        )
    got, md = await _traced(g, result)
    v, s = np.eye(2), 0.0
    for _ in range(4):
        v, s = v @ np.array([[0.5, 0.25], [0.0, 1.0]]), s + v.sum()
    np.testing.assert_allclose(got[1], v)
    assert float(got[2]) == pytest.approx(s)
    assert _fused(md)


async def test_fusion_is_on_by_default_and_off_by_config_or_environment(monkeypatch):
    assert ac.SessionConfig().fuse_loops is True
    monkeypatch.setenv("ANTCOLONY_FUSE_LOOPS", "0")
    assert ac.SessionConfig().fuse_loops is False
    assert ac.SessionConfig(fuse_loops=True).fuse_loops is True
    with pytest.raises(ac.errors.ConfigError, match="fuse_loops"):
        ac.SessionConfig(fuse_loops="yes")


# -- property: fused and unfused loops agree on random small bodies ----------------------------
# An expression over the loop variables a, b and the invariant c:
#   ("var", 0 | 1) | ("inv",) | ("const", x) | ("bin", op, e, e)
#   | ("where", e, e, e, e): e3 if e1 < e2 else e4  | ("cond", e, t, e, e): e2 if e1 > t else e3
_BIN = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
_leaf = st.one_of(
    st.tuples(st.just("var"), st.integers(0, 1)),
    st.just(("inv",)),
    st.tuples(st.just("const"), st.sampled_from([-1.5, -0.5, 0.25, 1.0, 2.0])),
)


def _compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(sorted(_BIN)), inner, inner),
        st.tuples(st.just("where"), inner, inner, inner, inner),
        st.tuples(st.just("cond"), inner, st.sampled_from([-1.0, 0.0, 0.5]), inner, inner),
    )


_expr = st.recursive(_leaf, _compound, max_leaves=6)


def _graph_expr(e: Any, vs: list[Any], c: Any, dtype: Any) -> Any:
    kind = e[0]
    if kind == "var":
        return vs[e[1]]
    if kind == "inv":
        return c
    if kind == "const":
        return ac.constant(e[1], dtype)
    if kind == "bin":
        return getattr(ac, e[1])(_graph_expr(e[2], vs, c, dtype), _graph_expr(e[3], vs, c, dtype))
    if kind == "where":
        a, b, x, y = (_graph_expr(s, vs, c, dtype) for s in e[1:])
        return ac.where(ac.less(a, b), x, y)
    pivot = _graph_expr(e[1], vs, c, dtype)
    return ac.cond(
        pivot > e[2],
        lambda: _graph_expr(e[3], vs, c, dtype) * 1.0,
        lambda: _graph_expr(e[4], vs, c, dtype) * 1.0,
    )


def _numpy_expr(e: Any, vs: list[Any], c: Any, dtype: Any) -> Any:
    kind = e[0]
    if kind == "var":
        return vs[e[1]]
    if kind == "inv":
        return c
    if kind == "const":
        return dtype.type(e[1])
    if kind == "bin":
        return _BIN[e[1]](_numpy_expr(e[2], vs, c, dtype), _numpy_expr(e[3], vs, c, dtype))
    if kind == "where":
        a, b, x, y = (_numpy_expr(s, vs, c, dtype) for s in e[1:])
        return x if a < b else y
    return _numpy_expr(e[3] if _numpy_expr(e[1], vs, c, dtype) > e[2] else e[4], vs, c, dtype)


def _clip(x: Any, lib: Any) -> Any:
    """Bounded loop variables: no overflow whatever the body."""
    return lib.minimum(lib.maximum(x, -1000.0), 1000.0)


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as r:
        yield r
        r.run(get_runtime(r.get_loop()).shutdown())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    exprs=st.tuples(_expr, _expr),
    trips=st.integers(0, 6),
    dtype=st.sampled_from([np.float32, np.float64]),
    start=st.tuples(st.sampled_from([-2.0, 0.0, 0.75]), st.sampled_from([-0.5, 1.0, 3.0])),
    c0=st.sampled_from([-1.0, 0.5, 2.0]),
)
def test_random_loop_bodies_give_the_same_values_fused_and_unfused(runner, exprs, trips, dtype, start, c0):
    dt = np.dtype(dtype)
    g = ac.Graph()
    with g.as_default():
        n = ac.placeholder(ac.int32, [], name="n")
        c = ac.placeholder(dt, [], name="c")
        result = ac.while_loop(
            lambda i, a, b: i < n,
            lambda i, a, b: (i + 1, *(_clip(_graph_expr(e, [a, b], c, dt), ac) for e in exprs)),
            [ac.constant(0), ac.constant(start[0], dt), ac.constant(start[1], dt)],
        )
    feed = {n: trips, c: c0}
    fused, md = runner.run(_traced(g, result, feed))
    plain, md_plain = runner.run(_traced(g, result, feed, fuse=False))
    _same(fused, plain)
    assert _fused(md) and not _fused(md_plain)
    vs = [dt.type(start[0]), dt.type(start[1])]
    for _ in range(trips):
        vs = [_clip(_numpy_expr(e, vs, dt.type(c0), dt), np) for e in exprs]
    np.testing.assert_allclose([float(v) for v in fused[1:]], [float(v) for v in vs], rtol=1e-5)
