"""Kernels touching variables in a bulk segment (segment_plan.always_inline): they run when the
dependency engine gives them their variables at once, or wait for the grant; what a user sees
is what one actor per node gives."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.engine import get_engine
from antcolony.errors import InvalidArgumentError


def _adam_model() -> tuple[ac.Graph, dict, list, list]:
    rng = np.random.default_rng(3)
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, 5], name="x")
        y = ac.placeholder(ac.int64, [None], name="y")
        w = ac.Variable(rng.standard_normal((5, 4)).astype(np.float32), name="w")
        b = ac.Variable(np.zeros(4, np.float32), name="b")
        logits = ac.nn.bias_add(ac.matmul(x, w), b)
        loss = ac.reduce_mean(ac.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = ac.train.AdamOptimizer(0.05).minimize(loss)
        init = ac.global_variables_initializer()
    feed = {x: rng.standard_normal((8, 5)).astype(np.float32), y: rng.integers(0, 4, 8)}
    return g, feed, [loss, train, init], [w, b]


@pytest.mark.parametrize("engine", ["per_device", "naive"])
def test_adam_steps_give_the_same_weights_with_and_without_segments(engine: str) -> None:
    g, feed, (loss, train, init), weights = _adam_model()

    async def train_steps(segments: bool) -> list[np.ndarray]:
        config = ac.SessionConfig(bulk_segments=segments, engine=engine)
        async with ac.Session(g, config=config) as sess:
            await sess.run(init)
            for _ in range(5):
                await sess.run([loss, train], feed)
            return await sess.run(weights)

    with_segments = ac.run(train_steps(True))
    without = ac.run(train_steps(False))
    for got, expected in zip(with_segments, without):
        np.testing.assert_array_equal(got, expected)


def _counter() -> tuple[ac.Graph, ac.Tensor, ac.Operation, ac.Variable]:
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.float64(0.0), name="v")
        # a Mul feeding the update, so the segment has more than one member
        inc = ac.assign_add(v, ac.multiply(np.float64(1.0), 1.0))
        init = ac.global_variables_initializer()
    return g, inc, init, v


async def test_an_update_whose_variable_is_held_waits_for_the_grant_then_runs_once() -> None:
    g, inc, init, v = _counter()
    async with ac.Session(g) as sess:
        await sess.run(init)
        await sess.run(inc)  # builds the executor: 1.0
        var = sess._resources.engine_vars["v"]
        engine = get_engine()
        held = engine.hold((), (var,))
        assert held is not None
        step = asyncio.ensure_future(sess.run(inc))
        for _ in range(10):
            await asyncio.sleep(0)
        assert not step.done()  # the update waits for the write held above
        engine.release(held)
        assert await asyncio.wait_for(step, 5) == 2.0
        assert await sess.run(v) == 2.0


async def test_concurrent_updates_of_one_variable_all_apply() -> None:
    g, inc, init, v = _counter()
    async with ac.Session(g) as sess:
        await sess.run(init)
        got = await asyncio.wait_for(asyncio.gather(*(sess.run(inc) for _ in range(20))), 10)
        assert sorted(got) == [float(k) for k in range(1, 21)]
        assert await sess.run(v) == 20.0


async def test_a_failing_update_names_its_node_and_leaves_the_variable_usable() -> None:
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(np.zeros(3), name="v")
        value = ac.placeholder(ac.float64, [None], name="value")
        put = ac.assign(v, ac.multiply(value, 1.0), validate_shape=True, name="put")
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        with pytest.raises(InvalidArgumentError, match="put"):
            await sess.run(put, {value: np.ones(4)})
        np.testing.assert_array_equal(await sess.run(put, {value: np.ones(3)}), np.ones(3))
