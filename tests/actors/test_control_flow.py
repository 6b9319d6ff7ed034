"""cond and while_loop run by the executor: values against plain Python, dead tensors, frames,
parallel_iterations, long loops, and gradients checked by finite differences."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import Iterator

import numpy as np
import pytest

import antcolony as ac


async def _run(g: ac.Graph, fetches, feed=None, config=None):
    async with ac.Session(g, config=config) as sess:
        return await sess.run(fetches, feed)


@pytest.mark.parametrize("a,b", [(3.0, 1.0), (-2.0, 5.0), (0.5, -0.5), (-1.0, -4.0)])
async def test_nested_conds_match_python(a, b):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = ac.placeholder(ac.float32, [], name="y")
        out = ac.cond(
            x > 0.0,
            lambda: ac.cond(y > 0.0, lambda: x * y, lambda: x - y),
            lambda: ac.cond(y > x, lambda: y * 2.0 + x, lambda: ac.constant(7.0)),
        )

    def ref(a: float, b: float) -> float:
        if a > 0:
            return a * b if b > 0 else a - b
        return b * 2 + a if b > a else 7.0

    assert await _run(g, out, {x: a, y: b}) == pytest.approx(ref(a, b))


async def test_a_cond_with_tuples_and_variables_returns_the_taken_branch():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.array([1.0, 2.0], np.float32), name="v")
        p = ac.placeholder(ac.bool, [], name="p")
        pair = ac.cond(p, lambda: (v * 2.0, ac.reduce_sum(v)), lambda: (v - 1.0, ac.reduce_max(v)))
        init = v.initializer
    async with ac.Session(g) as sess:
        await sess.run(init)
        t = await sess.run(pair, {p: True})
        f = await sess.run(pair, {p: False})
    np.testing.assert_allclose(t[0], [2.0, 4.0])
    assert t[1] == 3.0
    np.testing.assert_allclose(f[0], [0.0, 1.0])
    assert f[1] == 2.0


async def test_fetching_a_tensor_of_the_untaken_branch_is_a_clear_error_and_the_session_stays_usable():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        _sw_false, sw_true = g.create_op("Switch", [x, x > 0.0], None, "sw").outputs
        on_true = ac.multiply(sw_true, 2.0, name="on_true")
    async with ac.Session(g) as sess:
        assert await sess.run(on_true, {x: 1.0}) == 2.0
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"on_true:0.*not taken"):
            await sess.run(on_true, {x: -1.0})
        assert await sess.run(on_true, {x: 3.0}) == 6.0


@pytest.mark.parametrize("n", [0, 1, 7])
async def test_while_loops_with_several_variables_match_python(n):
    g = ac.Graph()
    with g.as_default():
        limit = ac.placeholder(ac.int32, [], name="n")
        fib = ac.while_loop(
            lambda i, a, b: i < limit,
            lambda i, a, b: (i + 1, b, a + b),
            [ac.constant(0), ac.constant(0.0), ac.constant(1.0)],
        )
    i, a, b = await _run(g, fib, {limit: n})
    fa, fb = 0.0, 1.0
    for _ in range(n):
        fa, fb = fb, fa + fb
    assert (int(i), float(a), float(b)) == (n, fa, fb)


async def test_nested_loops_and_cond_inside_a_loop_match_python():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")

        def outer(i, s):
            inner = ac.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + x), [ac.constant(0), s])
            bump = ac.cond(i < 2, lambda: ac.constant(100.0), lambda: ac.constant(0.0))
            return i + 1, inner[1] + bump

        result = ac.while_loop(lambda i, s: i < 5, outer, [ac.constant(0), ac.constant(0.0)])
    _, s = await _run(g, result, {x: 1.5})
    expected = sum(i * 1.5 + (100.0 if i < 2 else 0.0) for i in range(5))
    assert float(s) == pytest.approx(expected)


async def test_a_loop_inside_an_untaken_branch_is_dead_and_the_taken_branch_wins():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        out = ac.cond(
            x > 0.0,
            lambda: ac.while_loop(lambda k, v: k < 3, lambda k, v: (k + 1, v * 2.0), [ac.constant(0), x])[1],
            lambda: x - 1.0,
        )
    assert await _run(g, out, {x: 1.5}) == 12.0
    assert await _run(g, out, {x: -1.5}) == -2.5


async def test_maximum_iterations_caps_a_loop():
    g = ac.Graph()
    with g.as_default():
        r = ac.while_loop(lambda k: k < 100, lambda k: k + 1, [ac.constant(0)], maximum_iterations=7)
    assert int(await _run(g, r)) == 7


@pytest.mark.parametrize(
    "iterations, recursion_limit",
    [
        (
            300,
            150,
        ),  # twice as many iterations as the lowered limit allows frames: recursing per iteration fails
        pytest.param(10_000, None, marks=pytest.mark.slow),  # ten times the default limit, at its default
    ],
)
async def test_many_iterations_run_without_recursion_and_free_their_state(iterations, recursion_limit):
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        r = ac.while_loop(
            lambda k, v: k < iterations,
            lambda k, v: (k + 1, v * 0.5 + 1.0),
            [ac.constant(0), ac.zeros([256], ac.float32)],
        )
        warm = ac.constant(0.0)
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=64 << 20)
    async with ac.Session(g, config=config) as sess:
        await sess.run(warm)  # devices and workers up before the limit is lowered
        with _recursion_limit(recursion_limit):
            async with asyncio.timeout(120):
                k, v = await sess.run(r)
        stats = sess.memory_stats("/gpu:0")
    assert int(k) == iterations
    np.testing.assert_allclose(v, np.full(256, 2.0), rtol=1e-6)
    # memory stayed flat: a handful of 1 KiB vectors alive at once, nothing left after the step
    assert stats.peak_bytes_in_use < 64 * 1024
    assert stats.bytes_in_use < 4096


@contextlib.contextmanager
def _recursion_limit(limit: int | None) -> Iterator[None]:
    old = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


async def test_parallel_iterations_bound_how_many_iterations_run_at_once():
    g = ac.Graph()
    with g.as_default():
        # each iteration's body launches one expensive kernel (a worker-thread matmul)
        m = ac.constant(np.eye(300, dtype=np.float32))
        out = ac.while_loop(
            lambda k, acc: k < 8,
            lambda k, acc: (k + 1, acc + ac.reduce_sum(ac.matmul(m, m))),
            [ac.constant(0), ac.constant(0.0)],
            parallel_iterations=1,
        )
    meta = ac.RunMetadata()
    config = ac.SessionConfig(inline_threshold=1000)
    async with ac.Session(g, config=config) as sess:
        _, acc = await sess.run(
            out, options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=meta
        )
    assert float(acc) == 8 * 300.0
    spans = sorted((s.start_us, s.end_us) for s in meta.step_stats if s.op_type == "MatMul")
    assert len(spans) == 8
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(spans))  # one iteration at a time


async def _value_and_numeric_grad(g, y, x, x0: float, eps: float = 1e-4):
    (gx,) = ac.gradients(y, [x])
    async with ac.Session(g) as sess:
        value, grad = await sess.run([y, gx], {x: x0})
        plus = await sess.run(y, {x: x0 + eps})
        minus = await sess.run(y, {x: x0 - eps})
    return float(value), float(grad), (float(plus) - float(minus)) / (2 * eps)


async def test_gradients_of_a_loop_match_finite_differences():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, [], name="x")
        y = ac.while_loop(lambda k, v: k < 4, lambda k, v: (k + 1, v * v * 0.5 + x), [ac.constant(0), x])[1]
        _, grad, numeric = await _value_and_numeric_grad(g, y, x, 0.7)
    assert grad == pytest.approx(numeric, rel=1e-5)


def _loop_inside_cond(x: ac.Tensor) -> ac.Tensor:
    return ac.cond(
        x > 0.0,
        lambda: ac.while_loop(lambda k, v: k < 3, lambda k, v: (k + 1, v * x + 1.0), [ac.constant(0), x])[1],
        lambda: ac.exp(x) * x,
    )


async def test_gradients_through_cond_and_a_loop_inside_a_cond_match_finite_differences():
    for x0 in (0.8, -0.6):
        g = ac.Graph()
        with g.as_default():
            x = ac.placeholder(ac.float64, [], name="x")
            y = _loop_inside_cond(x)
            _, grad, numeric = await _value_and_numeric_grad(g, y, x, x0)
        assert grad == pytest.approx(numeric, rel=1e-5), x0


async def test_gradients_of_nested_loops_with_an_invariant_match_finite_differences():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, [], name="x")
        w = ac.constant(0.9, ac.float64)

        def outer(i, s):
            inner = ac.while_loop(
                lambda j, t: j < 2, lambda j, t: (j + 1, t * w + x * x), [ac.constant(0), s]
            )
            return i + 1, inner[1]

        y = ac.while_loop(lambda i, s: i < 3, outer, [ac.constant(0), x])[1]
        _, grad, numeric = await _value_and_numeric_grad(g, y, x, 0.4)
    assert grad == pytest.approx(numeric, rel=1e-5)


async def test_concurrent_runs_of_a_loop_stay_independent():
    g = ac.Graph()
    with g.as_default():
        n = ac.placeholder(ac.int32, [], name="n")
        r = ac.while_loop(
            lambda k, s: k < n,
            lambda k, s: (k + 1, s + ac.cast(k, ac.float32)),
            [ac.constant(0), ac.constant(0.0)],
        )
    async with ac.Session(g) as sess:
        results = await asyncio.gather(*[sess.run(r[1], {n: k}) for k in range(20)])
    assert [float(v) for v in results] == [float(sum(range(k))) for k in range(20)]


async def test_fetching_a_tensor_built_inside_the_untaken_cond_branch_names_it():
    g = ac.Graph()
    inside: dict[str, ac.Tensor] = {}
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")

        def true_fn():
            inside["t"] = ac.multiply(x, 3.0, name="tripled")
            return inside["t"]

        out = ac.cond(x > 0.0, true_fn, lambda: x - 1.0)
    async with ac.Session(g) as sess:
        assert await sess.run([out, inside["t"]], {x: 2.0}) == [6.0, 6.0]
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"tripled:0.*not taken"):
            await sess.run([out, inside["t"]], {x: -2.0})
        assert await sess.run(out, {x: -2.0}) == -3.0
