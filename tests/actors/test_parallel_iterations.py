"""``parallel_iterations`` of 1 and more run loops with several loop variables, invariants and
their gradients to numpy's results (with 1, an iteration's first loop variable could finish it
alone, and the others' values were lost: the Exits never fired)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import antcolony as ac

PARALLEL = [1, 2, 3, 10]


async def _run(g: ac.Graph, fetches: object, feed: dict, fuse: bool) -> object:
    async with ac.Session(g, config=ac.SessionConfig(fuse_loops=fuse)) as sess:
        return await asyncio.wait_for(sess.run(fetches, feed), 30)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("parallel", PARALLEL)
async def test_two_loop_variables_and_an_invariant(parallel: int, fuse: bool) -> None:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [3])
        n = ac.placeholder(ac.int32, [])
        k = ac.constant(2.0)
        i, h = ac.while_loop(
            lambda i, h: i < n, lambda i, h: (i + 1, h * k + 1.0), (0, x), parallel_iterations=parallel
        )
        (dx,) = ac.gradients(ac.reduce_sum(h), [x])
    x0 = np.array([1.0, -2.0, 0.5], np.float32)
    out_i, out_h, out_dx = await _run(g, [i, h, dx], {x: x0, n: 4}, fuse)
    expected = x0
    for _ in range(4):
        expected = expected * 2.0 + 1.0
    assert out_i == 4
    np.testing.assert_allclose(out_h, expected)
    np.testing.assert_allclose(out_dx, np.full(3, 16.0))


@pytest.mark.parametrize("parallel", PARALLEL)
async def test_a_matmul_recurrence_and_its_weight_gradient(parallel: int) -> None:
    rng = np.random.default_rng(parallel)
    w0 = (rng.standard_normal((4, 4)) / 2).astype(np.float64)
    x0 = rng.standard_normal((2, 4)).astype(np.float64)
    g = ac.Graph()
    with g.as_default():
        w = ac.constant(w0)
        x = ac.placeholder(ac.float64, [2, 4])
        _, h, acc = ac.while_loop(
            lambda i, h, acc: i < 3,
            lambda i, h, acc: (i + 1, ac.tanh(ac.matmul(h, w)), acc + ac.reduce_sum(h)),
            (0, x, ac.constant(0.0, ac.float64)),
            parallel_iterations=parallel,
        )
        loss = ac.reduce_sum(h) + acc
        dw, dx = ac.gradients(loss, [w, x])
    out_loss, out_dw, out_dx = await _run(g, [loss, dw, dx], {x: x0}, False)
    # numpy: forward, then backward through the three steps
    hs, acc0 = [x0], 0.0
    for _ in range(3):
        acc0 += hs[-1].sum()
        hs.append(np.tanh(hs[-1] @ w0))
    np.testing.assert_allclose(out_loss, hs[-1].sum() + acc0, rtol=1e-10)
    gh, gw = np.ones_like(x0), np.zeros_like(w0)
    for t in range(3, 0, -1):
        pre = gh * (1 - hs[t] ** 2)
        gw += hs[t - 1].T @ pre
        gh = pre @ w0.T + 1.0  # the acc term's gradient reaches h_{t-1} too
    np.testing.assert_allclose(out_dw, gw, rtol=1e-9)
    np.testing.assert_allclose(out_dx, gh, rtol=1e-9)
